/*
 * A change as one record: the envelope (lsn, xid, commit_time, op, table) written as events,
 * and the row images through the library's row policy (wk_pg_rowdesc, wirekit/pg.h), the
 * same mapping `wirekit pg query` prints rows with, so each value reads as it prints there.
 *
 * A row image may lack columns: a key-only old row holds the replica identity's columns, an
 * update leaves out TOASTed values it did not change. A row description is built for the
 * columns present, in their wire formats, and kept per table and side (new, old) until a row
 * comes with another shape; an ordinary stream builds two per table and reuses them for every
 * row. The commit time is rendered once per transaction.
 */
#include <stdlib.h>
#include <string.h>

#include "pg/pg_interface.h"
#include "pq/pq_repl_internal.h"
#include "wirekit/json.h"
#include "wirekit/msgpack.h"

/* The shape of a row image into `mask`: per column 0 (left out), 't' or 'b'. A key-only old
 * row leaves out the columns outside the key; NULL keeps the stream's format. */
static void row_mask(const wk_pq_changes *s, const wk__repl_rel *r, const wk_pq_value *row,
                     bool key_only, char *mask)
{
    char usual = s->binary ? 'b' : 't';
    for (size_t i = 0; i < r->pub.ncols; i++) {
        wk_pq_value_kind k = row[i].kind;
        if (k == WK_PQ_VALUE_UNCHANGED || (key_only && !r->cols[i].key)) {
            mask[i] = 0;
        } else {
            mask[i] = k == WK_PQ_VALUE_BINARY ? 'b' : k == WK_PQ_VALUE_TEXT ? 't' : usual;
        }
    }
}

/* The row description for `mask` on side `sh`, built when the shape or options changed. */
static wk_status shape_for(wk_pq_changes *s, wk__repl_rel *r, wk__repl_shape *sh,
                           const char *mask, const wk_pg_row_opts *opts, wk_error *err)
{
    size_t n = r->pub.ncols;
    if (sh->desc != NULL && memcmp(sh->mask, mask, n) == 0 && sh->opts.format == opts->format &&
        sh->opts.flags == opts->flags && sh->opts.max_text == opts->max_text) {
        return WK_OK;
    }
    wk_pg_rowdesc_free(sh->desc);
    sh->desc = NULL;
    if (sh->mask == NULL) {
        sh->mask = malloc(n + 1);
        sh->cols = malloc((n + 1) * sizeof *sh->cols);
        if (sh->mask == NULL || sh->cols == NULL) {
            return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
        }
    }
    wk_pg_row_col *cols = malloc((n + 1) * sizeof *cols);
    if (cols == NULL) {
        return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
    }
    sh->n = 0;
    for (size_t i = 0; i < n; i++) {
        if (mask[i] == 0) {
            continue;
        }
        cols[sh->n].name = r->cols[i].name;
        cols[sh->n].oid = r->cols[i].oid;
        cols[sh->n].typmod = r->cols[i].typmod;
        cols[sh->n].format = mask[i] == 'b' ? WK_PG_BINARY : WK_PG_TEXT;
        sh->cols[sh->n++] = i;
    }
    wk_status st = wk_pg_rowdesc_new(s->reg, cols, sh->n, opts, NULL, &sh->desc,
                                     err);
    if (st != WK_OK) {
        size_t at = err != NULL && err->offset < sh->n ? sh->cols[err->offset] : 0;
        snprintf(s->message, sizeof s->message, "column \"%s\" of %s: %s",
                 n > 0 ? r->cols[at].name : "", r->pub.qualified,
                 err != NULL && err->msg != NULL ? err->msg : wk_status_str(st));
        free(cols);
        return st;
    }
    memcpy(sh->mask, mask, n);
    sh->opts = *opts;
    free(cols);
    return WK_OK;
}

/* Room for the row policy's argument arrays. */
static wk_status reserve_args(wk_pq_changes *s, size_t n, wk_error *err)
{
    if (n <= s->pv_cap && s->pv != NULL) {
        return WK_OK;
    }
    size_t cap = n < 64 ? 64 : n;
    const uint8_t **pv = realloc(s->pv, cap * sizeof *pv);
    if (pv != NULL) {
        s->pv = pv;
    }
    int *pl = pv != NULL ? realloc(s->pl, cap * sizeof *pl) : NULL;
    if (pl == NULL) {
        return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
    }
    s->pl = pl;
    s->pv_cap = cap;
    return WK_OK;
}

/* One row image as a record of the row policy, to `sink`. */
static wk_status emit_row(wk_pq_changes *s, wk__repl_rel *r, wk__repl_shape *sh,
                          const wk_pq_value *row, bool key_only, const wk_pg_row_opts *opts,
                          const wk_sink *sink, wk_error *err)
{
    char stack[256];
    size_t n = r->pub.ncols;
    char *mask = n <= sizeof stack ? stack : malloc(n);
    if (mask == NULL) {
        return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
    }
    row_mask(s, r, row, key_only, mask);
    wk_status st = shape_for(s, r, sh, mask, opts, err);
    if (mask != stack) {
        free(mask);
    }
    if (st == WK_OK) {
        st = reserve_args(s, sh->n, err);
    }
    for (size_t j = 0; j < sh->n && st == WK_OK; j++) {
        const wk_pq_value *v = &row[sh->cols[j]];
        bool null = v->kind == WK_PQ_VALUE_NULL;
        if (!null && v->len > INT32_MAX) {
            return wk__repl_fail(s, WK_ERR_LIMIT, err, "a value over 2 GiB", "a value over 2 GiB");
        }
        s->pv[j] = null ? NULL : v->ptr;
        s->pl[j] = null ? -1 : (int)v->len;
    }
    if (st == WK_OK) {
        st = wk_pg_row_emit(sh->desc, s->pv, s->pl, sink, err);
        if (st != WK_OK) {
            size_t c = wk_pg_row_column(sh->desc);
            snprintf(s->message, sizeof s->message, "%s, column \"%s\": %s", r->pub.qualified,
                     c < sh->n ? r->cols[sh->cols[c]].name : "?",
                     err != NULL && err->msg != NULL ? err->msg : wk_status_str(st));
        }
    }
    return st;
}

static wk_status ev_str(const wk_sink *k, const char *p, size_t n)
{
    wk_event e;
    memset(&e, 0, sizeof e);
    e.type = WK_EV_STR;
    e.v.str.ptr = p;
    e.v.str.len = n;
    return k->event(k->self, &e);
}

static wk_status ev_count(const wk_sink *k, wk_event_type t, uint32_t count)
{
    wk_event e;
    memset(&e, 0, sizeof e);
    e.type = t;
    e.v.count = count;
    return k->event(k->self, &e);
}

/* The commit time as a timestamptz prints, rendered once per transaction. */
static wk_status commit_time_text(wk_pq_changes *s, int64_t t, wk_slice *out, wk_error *err)
{
    if (s->time_text.len == 0 || s->time_of_text != t) {
        const wk_pg_decoder *d = wk_pg_registry_find_decoder(s->reg, 1184,
                                                             WK_PG_BINARY, WK_PG_KIND_TEXT);
        uint8_t be[8];
        wk__pg_put64(be, (uint64_t)t);
        wk_buf_clear(&s->time_text);
        wk_status st = d != NULL ? wk_pg_decode(d, be, 8, &s->time_text, NULL, err)
                                 : wk__pg_fail(err, WK_ERR_NOT_FOUND, 0, "no timestamptz codec");
        if (st != WK_OK) {
            return st;
        }
        s->time_of_text = t;
    }
    out->ptr = (const char *)s->time_text.data;
    out->len = s->time_text.len;
    return WK_OK;
}

/* The whole record, to `sink`. */
static wk_status emit_change(wk_pq_changes *s, const wk_pq_change *ch, wk__repl_rel *r,
                             const wk_pg_row_opts *opts, const wk_sink *k, wk_error *err)
{
    static const char *const ops[] = {"", "insert", "update", "delete", "truncate"};
    char lsn[32];
    size_t lsn_len = wk_pq_lsn_format(ch->lsn, lsn);
    wk_slice when;
    wk_status st = commit_time_text(s, ch->commit_time, &when, err);
    uint32_t count = 5u + (ch->new_row != NULL) + (ch->old_row != NULL);
    st = st == WK_OK ? ev_count(k, WK_EV_MAP, count) : st;
    st = st == WK_OK ? ev_str(k, "lsn", 3) : st;
    st = st == WK_OK ? ev_str(k, lsn, lsn_len) : st;
    st = st == WK_OK ? ev_str(k, "xid", 3) : st;
    if (st == WK_OK) {
        wk_event e;
        memset(&e, 0, sizeof e);
        e.type = WK_EV_UINT;
        e.v.u = ch->xid;
        st = k->event(k->self, &e);
    }
    st = st == WK_OK ? ev_str(k, "commit_time", 11) : st;
    st = st == WK_OK ? ev_str(k, when.ptr, when.len) : st;
    st = st == WK_OK ? ev_str(k, "op", 2) : st;
    st = st == WK_OK ? ev_str(k, ops[ch->op], strlen(ops[ch->op])) : st;
    st = st == WK_OK ? ev_str(k, "table", 5) : st;
    st = st == WK_OK ? ev_str(k, r->pub.qualified, strlen(r->pub.qualified)) : st;
    if (st == WK_OK && ch->new_row != NULL) {
        st = ev_str(k, "new", 3);
        st = st == WK_OK ? emit_row(s, r, &r->shape_new, ch->new_row, false, opts, k, err) : st;
    }
    if (st == WK_OK && ch->old_row != NULL) {
        st = ev_str(k, "old", 3);
        st = st == WK_OK ? emit_row(s, r, &r->shape_old, ch->old_row, ch->old_is_key, opts, k,
                                    err)
                         : st;
    }
    return st == WK_OK ? ev_count(k, WK_EV_END, 0) : st;
}

/* Public: see wirekit/pq_changes.h. */
WK_API wk_status wk_pq_changes_append(wk_pq_changes *s, const wk_pq_change *ch,
                                      const wk_pq_change_opts *opts, wk_buf *out,
                                      wk_error *err)
{
    wk_pg_row_opts zero = {WK_PG_ROW_JSON, 0, 0};
    opts = opts != NULL ? opts : &zero;
    wk__repl_rel *r = ch->table != NULL ? wk__repl_rel_find(s, ch->table->relid) : NULL;
    if (ch->op == WK_PQ_CHANGE_COMMIT || r == NULL || &r->pub != ch->table) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "not a row change of this stream");
    }
    size_t start = out->len; /* whole or nothing */
    wk_sink k;
    wk_status st;
    wk_error werr = {WK_OK, 0, NULL};
    if (opts->format == WK_PG_ROW_MSGPACK) {
        wk_mp_writer w;
        wk_mp_writer_init(&w, out);
        wk_mp_writer_sink(&w, &k);
        st = emit_change(s, ch, r, opts, &k, err);
        wk_status fst = wk_mp_writer_finish(&w, &werr);
        st = st == WK_OK ? fst : st;
    } else {
        wk_json_write_opts jo = {WK_JSON_WRITE_NEWLINE, 0};
        wk_json_writer w;
        wk_json_writer_init(&w, out, &jo);
        wk_json_writer_sink(&w, &k);
        st = emit_change(s, ch, r, opts, &k, err);
        wk_status fst = wk_json_writer_finish(&w, &werr);
        st = st == WK_OK ? fst : st;
    }
    if (st != WK_OK) {
        if (err != NULL && err->code == WK_OK) {
            *err = werr;
        }
        out->len = start;
    }
    return st;
}

/* Public: see wirekit/pq_changes.h. */
WK_API wk_status wk_pq_changes_value_text(wk_pq_changes *s, const wk_pq_change *ch,
                                          const wk_pq_value *row, size_t col, wk_buf *out,
                                          wk_error *err)
{
    wk__repl_rel *r = ch->table != NULL ? wk__repl_rel_find(s, ch->table->relid) : NULL;
    if (r == NULL || row == NULL || col >= r->pub.ncols ||
        (row[col].kind != WK_PQ_VALUE_TEXT && row[col].kind != WK_PQ_VALUE_BINARY)) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, col, "no such value in the row");
    }
    const wk_pg_decoder *d = row[col].kind == WK_PQ_VALUE_BINARY ? r->text[col]
                                                                  : r->text_fmt[col];
    if (d == NULL) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, col, "the column's type has no text decoder");
    }
    return wk_pg_decode(d, row[col].ptr, row[col].len, out, NULL, err);
}
