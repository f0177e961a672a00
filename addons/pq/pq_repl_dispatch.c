/*
 * What each pgoutput message does to a change stream: Begin and Commit frame a transaction
 * (its commit is confirmed once the callback has handled it), Relation messages describe a
 * table (kept sorted by OID, replaced whole when the server describes it anew, so that a
 * table altered while streaming is read with its new columns from the next change on), and
 * Insert, Update, Delete and Truncate become wk_pq_change values for the callback. Inside a
 * Stream Start/Stop block every message goes to its transaction's buffer instead
 * (pq_repl_spill.c) and comes back through the same handlers at its Stream Commit, Relation
 * messages included: they describe the table as that transaction saw it.
 *
 * Type messages matter only for a type made after the stream opened: the registry snapshot
 * of the catalog connection holds the database's own types as they were then, so an unknown
 * one has the catalog read again (pq_repl_stream.c) and the table descriptions rebound.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg_interface.h"
#include "pq/pq_repl_internal.h"

/* Internal: see pq_repl_internal.h. */
wk_status wk__repl_fail(wk_pq_changes *s, wk_status st, wk_error *err, const char *what,
                        const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->message, sizeof s->message, fmt, ap);
    va_end(ap);
    return wk__pg_fail(err, st, 0, what);
}

static void shape_free(wk__repl_shape *sh)
{
    wk_pg_rowdesc_free(sh->desc);
    free(sh->mask);
    free(sh->cols);
    memset(sh, 0, sizeof *sh);
}

static void rel_free(wk__repl_rel *r)
{
    if (r == NULL) {
        return;
    }
    shape_free(&r->shape_new);
    shape_free(&r->shape_old);
    free(r->cols);
    free(r->strings);
    free(r->text);
    free(r->text_fmt);
    free(r);
}

/* Binary search over the sorted table descriptions: the index of relid, or where it goes. */
static size_t rel_index(const wk_pq_changes *s, uint32_t relid)
{
    size_t lo = 0, hi = s->nrels;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->rels[mid]->pub.relid < relid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Internal: see pq_repl_internal.h. */
wk__repl_rel *wk__repl_rel_find(wk_pq_changes *s, uint32_t relid)
{
    size_t i = rel_index(s, relid);
    return i < s->nrels && s->rels[i]->pub.relid == relid ? s->rels[i] : NULL;
}

/* A Relation message: a new description of the table, replacing the old one. */
static wk_status rel_update(wk_pq_changes *s, const wk__pgo_msg *m, wk_error *err)
{
    /* pgoutput sends "" for pg_catalog */
    const char *nsp = m->nspname.len > 0 ? m->nspname.ptr : "pg_catalog";
    size_t nsplen = m->nspname.len > 0 ? m->nspname.len : strlen(nsp);
    /* schema, name and "schema.name", each with its NUL, then the column names, which with
     * their NULs lie within atts_len */
    size_t strings = 2 * (nsplen + m->name.len) + 4 + m->atts_len;
    wk__repl_rel *r = calloc(1, sizeof *r);
    if (r != NULL) {
        r->cols = calloc((size_t)m->natts + 1, sizeof *r->cols);
        r->text = calloc((size_t)m->natts + 1, sizeof *r->text);
        r->text_fmt = calloc((size_t)m->natts + 1, sizeof *r->text_fmt);
        r->strings = malloc(strings);
    }
    if (r == NULL || r->cols == NULL || r->text == NULL || r->text_fmt == NULL ||
        r->strings == NULL) {
        rel_free(r);
        return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
    }
    char *p = r->strings;
    r->pub.schema = p;
    memcpy(p, nsp, nsplen);
    p[nsplen] = '\0';
    p += nsplen + 1;
    r->pub.name = p;
    memcpy(p, m->name.ptr, m->name.len);
    p[m->name.len] = '\0';
    p += m->name.len + 1;
    r->pub.qualified = p;
    memcpy(p, nsp, nsplen);
    p[nsplen] = '.';
    memcpy(p + nsplen + 1, m->name.ptr, m->name.len);
    p[nsplen + 1 + m->name.len] = '\0';
    p += nsplen + m->name.len + 2;
    r->pub.relid = m->relid;
    r->pub.replica_identity = m->replident;
    r->pub.ncols = m->natts;
    r->pub.cols = r->cols;
    const wk_pg_registry *reg = s->reg;
    const wk_pg_decoder *as_text = wk_pg_registry_find_decoder(reg, 25, WK_PG_TEXT,
                                                               WK_PG_KIND_TEXT);
    size_t pos = 0;
    wk__pgo_att a;
    for (size_t i = 0; wk__pgo_relation_next(m, &pos, &a); i++) {
        r->cols[i].name = p;
        memcpy(p, a.name.ptr, a.name.len);
        p[a.name.len] = '\0';
        p += a.name.len + 1;
        r->cols[i].oid = a.typoid;
        r->cols[i].typmod = a.typmod;
        r->cols[i].key = a.key;
        r->text[i] = wk_pg_registry_find_decoder(reg, a.typoid, WK_PG_BINARY, WK_PG_KIND_TEXT);
        r->text_fmt[i] = wk_pg_registry_find_decoder(reg, a.typoid, WK_PG_TEXT, WK_PG_KIND_TEXT);
        if (r->text_fmt[i] == NULL) {
            r->text_fmt[i] = as_text; /* a type no codec knows stays its text */
        }
    }
    size_t at = rel_index(s, m->relid);
    if (at < s->nrels && s->rels[at]->pub.relid == m->relid) {
        rel_free(s->rels[at]);
        s->rels[at] = r;
        return WK_OK;
    }
    if (s->nrels == s->rels_cap) {
        if (s->rels_cap >= WK__REPL_MAX_RELATIONS) {
            rel_free(r);
            return wk__repl_fail(s, WK_ERR_LIMIT, err, "too many tables",
                                 "more than %u tables described", WK__REPL_MAX_RELATIONS);
        }
        size_t cap = s->rels_cap == 0 ? 16 : s->rels_cap * 2;
        wk__repl_rel **n = realloc(s->rels, cap * sizeof *n);
        if (n == NULL) {
            rel_free(r);
            return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
        }
        s->rels = n;
        s->rels_cap = cap;
    }
    memmove(s->rels + at + 1, s->rels + at, (s->nrels - at) * sizeof *s->rels);
    s->rels[at] = r;
    s->nrels++;
    return WK_OK;
}

/* Room for two row images of `ncols` values. */
static wk_status reserve_vals(wk_pq_changes *s, size_t ncols, wk_error *err)
{
    if (ncols <= s->vals_cap && s->vals_new != NULL) {
        return WK_OK;
    }
    size_t cap = ncols < 64 ? 64 : ncols;
    wk_pq_value *a = realloc(s->vals_new, cap * sizeof *a);
    if (a != NULL) {
        s->vals_new = a;
    }
    wk_pq_value *b = a != NULL ? realloc(s->vals_old, cap * sizeof *b) : NULL;
    if (b == NULL) {
        return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
    }
    s->vals_old = b;
    s->vals_cap = cap;
    return WK_OK;
}

/* Checks that a tuple has the table's column count and splits it. */
static wk_status take_tuple(wk_pq_changes *s, const wk__repl_rel *r, const wk__pgo_tuple *t,
                            wk_pq_value *vals, wk_error *err)
{
    if (t->ncols != r->pub.ncols) {
        return wk__repl_fail(s, WK_ERR_SYNTAX, err, "a row with another column count",
                             "a row of %s has %u columns, the table %zu", r->pub.qualified,
                             (unsigned)t->ncols, r->pub.ncols);
    }
    wk__pgo_tuple_values(t, vals);
    return WK_OK;
}

static wk_status call(wk_pq_changes *s, wk_pq_change *ch, wk_error *err)
{
    ch->xid = s->xid;
    ch->commit_lsn = s->commit_lsn;
    ch->commit_time = s->commit_time;
    ch->streamed = s->replaying;
    s->txn_changes = s->txn_changes || ch->op != WK_PQ_CHANGE_COMMIT;
    return s->fn(s->fn_ctx, ch, err);
}

/* Insert, Update, Delete: the change to the callback. */
static wk_status deliver_row(wk_pq_changes *s, const wk__pgo_msg *m, uint64_t lsn,
                             wk_error *err)
{
    wk__repl_rel *r = wk__repl_rel_find(s, m->relid);
    if (r == NULL) {
        return wk__repl_fail(s, WK_ERR_SYNTAX, err, "a change of an undescribed table",
                             "a change of table %u, which the server did not describe",
                             m->relid);
    }
    wk_status st = reserve_vals(s, r->pub.ncols, err);
    if (st != WK_OK) {
        return st;
    }
    wk_pq_change ch;
    memset(&ch, 0, sizeof ch);
    ch.op = m->type == WK__PGO_INSERT   ? WK_PQ_CHANGE_INSERT
            : m->type == WK__PGO_UPDATE ? WK_PQ_CHANGE_UPDATE
                                        : WK_PQ_CHANGE_DELETE;
    ch.lsn = lsn;
    ch.table = &r->pub;
    if (m->type != WK__PGO_DELETE) {
        st = take_tuple(s, r, &m->new_row, s->vals_new, err);
        ch.new_row = s->vals_new;
    }
    if (st == WK_OK && m->old_kind != 0) {
        st = take_tuple(s, r, &m->old_row, s->vals_old, err);
        ch.old_row = s->vals_old;
        ch.old_is_key = m->old_kind == 'K';
    }
    return st == WK_OK ? call(s, &ch, err) : st;
}

/* Truncate: one change per table. */
static wk_status deliver_truncate(wk_pq_changes *s, const wk__pgo_msg *m, uint64_t lsn,
                                  wk_error *err)
{
    wk_status st = WK_OK;
    for (uint32_t i = 0; i < m->nrels && st == WK_OK; i++) {
        uint32_t relid = wk__pg_be32(m->relids + 4 * (size_t)i);
        wk__repl_rel *r = wk__repl_rel_find(s, relid);
        if (r == NULL) {
            return wk__repl_fail(s, WK_ERR_SYNTAX, err, "a truncate of an undescribed table",
                                 "a truncate of table %u, which the server did not describe",
                                 relid);
        }
        wk_pq_change ch;
        memset(&ch, 0, sizeof ch);
        ch.op = WK_PQ_CHANGE_TRUNCATE;
        ch.lsn = lsn;
        ch.table = &r->pub;
        st = call(s, &ch, err);
    }
    return st;
}

/* A Type message: a type of the database's own, sent before the Relation that uses it. One
 * the registry snapshot does not know (made after the stream opened) has the catalog read
 * again; a type no codec knows even then is remembered, so it costs one refresh. */
static wk_status type_seen(wk_pq_changes *s, uint32_t oid, wk_error *err)
{
    if (s->sql == NULL ||
        wk_pg_registry_find_decoder(s->reg, oid, WK_PG_TEXT, WK_PG_KIND_EVENTS) != NULL) {
        return WK_OK;
    }
    for (size_t i = 0; i < s->nunknown; i++) {
        if (s->unknown[i] == oid) {
            return WK_OK;
        }
    }
    wk_status st = wk__repl_refresh_registry(s, err);
    if (st == WK_OK &&
        wk_pg_registry_find_decoder(s->reg, oid, WK_PG_TEXT, WK_PG_KIND_EVENTS) == NULL) {
        s->unknown[s->nunknown++ % WK__REPL_MAX_UNKNOWN] = oid;
        s->nunknown = s->nunknown > WK__REPL_MAX_UNKNOWN ? WK__REPL_MAX_UNKNOWN : s->nunknown;
    }
    return st;
}

/* Internal: see pq_repl_internal.h. */
void wk__repl_rebind(wk_pq_changes *s)
{
    const wk_pg_decoder *as_text = wk_pg_registry_find_decoder(s->reg, 25, WK_PG_TEXT,
                                                               WK_PG_KIND_TEXT);
    for (size_t i = 0; i < s->nrels; i++) {
        wk__repl_rel *r = s->rels[i];
        for (size_t c = 0; c < r->pub.ncols; c++) {
            wk_pg_oid oid = r->cols[c].oid;
            r->text[c] = wk_pg_registry_find_decoder(s->reg, oid, WK_PG_BINARY, WK_PG_KIND_TEXT);
            r->text_fmt[c] = wk_pg_registry_find_decoder(s->reg, oid, WK_PG_TEXT, WK_PG_KIND_TEXT);
            r->text_fmt[c] = r->text_fmt[c] != NULL ? r->text_fmt[c] : as_text;
        }
        shape_free(&r->shape_new); /* row descriptions are made again from the new snapshot */
        shape_free(&r->shape_old);
    }
}

/* What Relation, Type and the changes do, in a transaction sent whole or replayed. */
static wk_status handle(wk_pq_changes *s, const wk__pgo_msg *m, uint64_t lsn, wk_error *err)
{
    switch (m->type) {
    case WK__PGO_RELATION: return rel_update(s, m, err);
    case WK__PGO_INSERT:
    case WK__PGO_UPDATE:
    case WK__PGO_DELETE:
        if (!s->in_txn) {
            return wk__repl_fail(s, WK_ERR_SYNTAX, err, "a change outside a transaction",
                                 "a change outside a transaction");
        }
        return deliver_row(s, m, lsn, err);
    case WK__PGO_TRUNCATE:
        if (!s->in_txn) {
            return wk__repl_fail(s, WK_ERR_SYNTAX, err, "a change outside a transaction",
                                 "a truncate outside a transaction");
        }
        return deliver_truncate(s, m, lsn, err);
    case WK__PGO_TYPE: return type_seen(s, m->typoid, err);
    default: return WK_OK; /* Origin, Message: nothing to do */
    }
}

/* A buffered message of a streamed transaction, at its commit. */
static wk_status replay_one(wk_pq_changes *s, const uint8_t *msg, size_t n, uint64_t lsn,
                            wk_error *err)
{
    wk__pgo_msg m;
    wk_status st = wk__pgo_parse(msg, n, true, &m, err);
    return st == WK_OK ? handle(s, &m, lsn, err) : st;
}

/* The end of a transaction: the COMMIT callback when it had changes, then the position. */
static wk_status commit(wk_pq_changes *s, uint64_t end_lsn, wk_error *err)
{
    wk_status st = WK_OK;
    if (s->txn_changes) {
        wk_pq_change ch;
        memset(&ch, 0, sizeof ch);
        ch.op = WK_PQ_CHANGE_COMMIT;
        ch.lsn = end_lsn;
        st = call(s, &ch, err);
    }
    s->in_txn = false;
    s->txn_changes = false;
    if (st == WK_OK && end_lsn > s->confirmed) {
        s->confirmed = end_lsn;
    }
    return st;
}

/* Internal: see pq_repl_internal.h. */
wk_status wk__repl_dispatch(wk_pq_changes *s, const uint8_t *msg, size_t n, uint64_t lsn,
                            wk_error *err)
{
    wk__pgo_msg m;
    bool in_stream = s->cur_stream != NULL;
    wk_status st = wk__pgo_parse(msg, n, in_stream, &m, err);
    if (st != WK_OK) {
        snprintf(s->message, sizeof s->message, "malformed replication message (type '%c'): %s",
                 n > 0 && msg[0] >= 0x20 && msg[0] < 0x7f ? msg[0] : '?',
                 err != NULL && err->msg != NULL ? err->msg : wk_status_str(st));
        return st;
    }
    if (in_stream && wk__pgo_has_stream_xid(m.type)) {
        return wk__repl_txn_add(s, s->cur_stream, m.xid, msg, n, lsn, err);
    }
    switch (m.type) {
    case WK__PGO_BEGIN:
        s->in_txn = true;
        s->txn_changes = false;
        s->xid = m.xid;
        s->commit_lsn = m.lsn;
        s->commit_time = m.time;
        return WK_OK;
    case WK__PGO_COMMIT:
        if (!s->in_txn) {
            return wk__repl_fail(s, WK_ERR_SYNTAX, err, "a commit outside a transaction",
                                 "a commit outside a transaction");
        }
        return commit(s, m.end_lsn, err);
    case WK__PGO_STREAM_START:
        s->cur_stream = wk__repl_txn_get(s, m.xid, true, err, &st);
        return s->cur_stream != NULL ? WK_OK : st;
    case WK__PGO_STREAM_STOP:
        s->cur_stream = NULL;
        return WK_OK;
    case WK__PGO_STREAM_ABORT: {
        wk__repl_txn *t = wk__repl_txn_get(s, m.xid, false, err, &st);
        if (t != NULL) {
            wk__repl_txn_abort(s, t, m.subxid);
        }
        return WK_OK;
    }
    case WK__PGO_STREAM_COMMIT: {
        wk__repl_txn *t = wk__repl_txn_get(s, m.xid, false, err, &st);
        s->in_txn = true;
        s->txn_changes = false;
        s->xid = m.xid;
        s->commit_lsn = m.lsn;
        s->commit_time = m.time;
        if (t != NULL) {
            s->replaying = true;
            st = wk__repl_txn_replay(s, t, replay_one, err);
            s->replaying = false;
            wk__repl_txn_end(s, t);
        }
        return st == WK_OK ? commit(s, m.end_lsn, err) : st;
    }
    default: return handle(s, &m, lsn, err);
    }
}

/* Internal: see pq_repl_internal.h. */
void wk__repl_dispatch_free(wk_pq_changes *s)
{
    for (size_t i = 0; i < s->nrels; i++) {
        rel_free(s->rels[i]);
    }
    free(s->rels);
    s->rels = NULL;
    s->nrels = s->rels_cap = 0;
    for (size_t i = 0; i < WK__REPL_MAX_STREAMED; i++) {
        wk__repl_txn_end(s, &s->txns[i]);
    }
    free(s->vals_new);
    free(s->vals_old);
    s->vals_new = s->vals_old = NULL;
    s->vals_cap = 0;
}
