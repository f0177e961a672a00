/*
 * The row policy, rows to records: how one PostgreSQL row becomes one JSON or MessagePack
 * record (the mapping is the contract in wirekit/pg.h, "the row policy"). `wirekit pg query`,
 * `pg copy out`, the non-blocking and pipeline paths and logical replication all write rows
 * through here, so their bytes agree; row_in.c is the way back for COPY in.
 *
 * Where it sits: a column description (from a PGresult in addons/pq, a COPY plan, a
 * replication Relation message) -> wk_pg_rowdesc_new here, which resolves every column's
 * EVENTS decoder once and makes the unique record keys -> per row, each column's bytes ->
 * its decoder (the family codecs; records in record.c, arrays in array.c) -> events into the
 * caller's sink, or a JSON / MessagePack writer over the caller's buffer.
 *
 * The trade-off: a description holds scratch memory (rendering buffers, a per-row arena) so
 * that rows cost no allocation once they are warm; it is therefore used by one thread at a
 * time. The numbers rule of each format is a set of wk_pg_events flags handed down to every
 * nested decoder, so numbers inside arrays and records follow the same rule as columns.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pg/row_policy.h"
#include "wirekit/json.h"
#include "wirekit/msgpack.h"

/* ---- unique keys ---- */

/* A set of NUL-terminated strings (open addressing, FNV-1a), for the key rule: at most two
 * entries per column, so a table of a power of two >= 4n never fills. */
typedef struct key_set {
    const char **slot;
    size_t mask;
} key_set;

static size_t hash_str(const char *s)
{
    return wk__pg_row_key_hash(s, strlen(s));
}

static bool set_has(const key_set *ks, const char *s)
{
    for (size_t i = hash_str(s) & ks->mask;; i = (i + 1) & ks->mask) {
        if (ks->slot[i] == NULL) {
            return false;
        }
        if (strcmp(ks->slot[i], s) == 0) {
            return true;
        }
    }
}

static void set_add(key_set *ks, const char *s)
{
    size_t i = hash_str(s) & ks->mask;
    while (ks->slot[i] != NULL) {
        if (strcmp(ks->slot[i], s) == 0) {
            return;
        }
        i = (i + 1) & ks->mask;
    }
    ks->slot[i] = s;
}

/* The key rule: a column keeps its name unless an earlier column's key is that name; then it
 * takes the first `name_N` (N = 2, 3, ...) that is neither an earlier key nor any column's
 * name, so `a, a, a_2` become `a, a_3, a_2`. */
static wk_status make_keys(wk_pg_rowdesc *d, wk_error *err)
{
    size_t n = d->ncols, cap = 4;
    while (cap < 4 * n) {
        cap *= 2;
    }
    key_set names = {wk_arena_alloc(&d->mem, cap * sizeof(char *), sizeof(char *)), cap - 1};
    key_set keys = {wk_arena_alloc(&d->mem, cap * sizeof(char *), sizeof(char *)), cap - 1};
    if (names.slot == NULL || keys.slot == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the record keys");
    }
    memset(names.slot, 0, cap * sizeof(char *));
    memset(keys.slot, 0, cap * sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        set_add(&names, d->cols[i].col.name);
    }
    for (size_t i = 0; i < n; i++) {
        wk__pg_row_col *c = &d->cols[i];
        const char *name = c->col.name;
        size_t len = strlen(name);
        c->key = name;
        c->key_len = len;
        if (set_has(&keys, name)) {
            char *k = wk_arena_alloc(&d->mem, len + 24, 1);
            if (k == NULL) {
                return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the record keys");
            }
            memcpy(k, name, len);
            for (size_t suffix = 2;; suffix++) {
                snprintf(k + len, 24, "_%zu", suffix);
                if (!set_has(&keys, k) && !set_has(&names, k)) {
                    break;
                }
            }
            c->key = k;
            c->key_len = strlen(k);
        }
        set_add(&keys, c->key);
    }
    /* the index row_in.c finds a record's keys with: every key is unique, so no compare is
     * needed on insertion */
    d->kslot = wk_arena_alloc(&d->mem, cap * sizeof *d->kslot, sizeof *d->kslot);
    if (d->kslot == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the record keys");
    }
    memset(d->kslot, 0, cap * sizeof *d->kslot);
    d->kmask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        size_t h = wk__pg_row_key_hash(d->cols[i].key, d->cols[i].key_len) & d->kmask;
        while (d->kslot[h] != 0) {
            h = (h + 1) & d->kmask;
        }
        d->kslot[h] = (uint32_t)i + 1;
    }
    return WK_OK;
}

/* ---- the description ---- */

/* The json and jsonb codecs (and catalog copies of them, e.g. domains), not their arrays. */
static bool is_json_decoder(const wk_pg_decoder *dec)
{
    return dec != NULL && dec->elem_oid == 0 &&
           (strcmp(dec->codec->name, "json") == 0 || strcmp(dec->codec->name, "jsonb") == 0);
}

/* Public (wirekit/pg.h). Everything but the scratch buffers lives in one arena. */
WK_API wk_status wk_pg_rowdesc_new(const wk_pg_registry *reg, const wk_pg_row_col *cols,
                                   size_t n, const wk_pg_row_opts *opts,
                                   const wk_allocator *alloc, wk_pg_rowdesc **out,
                                   wk_error *err)
{
    *out = NULL;
    if (reg == NULL || (cols == NULL && n > 0)) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "a row description needs a registry and columns");
    }
    if (n > UINT32_MAX / 4) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "too many columns");
    }
    wk_pg_rowdesc *d = wk_alloc(alloc, sizeof *d);
    if (d == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a row description");
    }
    memset(d, 0, sizeof *d);
    d->alloc = alloc;
    if (opts != NULL) {
        d->opts = *opts;
    }
    if (d->opts.format == WK_PG_ROW_JSON) {
        d->evflags = WK_PG_EV_RAW_FLOATS; /* JSON: every number with PostgreSQL's digits */
    } else if (!(d->opts.flags & WK_PG_ROW_EXACT_NUMBERS)) {
        d->evflags = WK_PG_EV_JSON_NUMBERS | WK_PG_EV_NUMERIC_NUMBERS;
    }
    d->ncols = n;
    d->failed_col = SIZE_MAX;
    d->unknown_key = SIZE_MAX;
    wk_arena_init(&d->mem, alloc, 0);
    wk_arena_init(&d->rowmem, alloc, 0);
    wk_buf_init(&d->scratch, alloc, 0);
    wk_buf_init(&d->cell, alloc, 0);
    wk_buf_init(&d->enc, alloc, 0);
    wk_status st = WK_OK;
    d->cols = wk_arena_alloc(&d->mem, (n + 1) * sizeof *d->cols, 8);
    d->offs = wk_arena_alloc(&d->mem, 2 * (n + 1) * sizeof *d->offs, 8);
    if (d->cols == NULL || d->offs == NULL) {
        st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a row description");
    }
    for (size_t i = 0; i < n && st == WK_OK; i++) {
        wk__pg_row_col *c = &d->cols[i];
        memset(c, 0, sizeof *c);
        c->col = cols[i];
        if (cols[i].name == NULL) {
            st = wk__pg_fail(err, WK_ERR_ARG, i, "a column without a name");
            break;
        }
        c->col.name = wk_arena_strndup(&d->mem, cols[i].name, strlen(cols[i].name));
        if (c->col.name == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, i, "out of memory for a row description");
            break;
        }
        c->ev = wk_pg_registry_find_decoder(reg, c->col.oid, c->col.format, WK_PG_KIND_EVENTS);
        if (c->ev == NULL && c->col.format == WK_PG_TEXT) {
            /* a type no codec knows, in text: its text is all there is */
            c->ev = wk_pg_registry_find_decoder(reg, WK_PG_OID_TEXT, WK_PG_TEXT,
                                                WK_PG_KIND_EVENTS);
        }
        if (c->ev == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOT_FOUND, i, "no decoder for a column's type");
            break;
        }
        c->is_json = is_json_decoder(c->ev);
        if (c->is_json) {
            c->txt = wk_pg_registry_find_decoder(reg, c->ev->oid, c->col.format,
                                                 WK_PG_KIND_TEXT);
        }
    }
    if (st == WK_OK) {
        st = make_keys(d, err);
    }
    if (st != WK_OK) {
        wk_pg_rowdesc_free(d);
        return st;
    }
    d->reg = wk_pg_registry_ref((wk_pg_registry *)reg);
    *out = d;
    return WK_OK;
}

/* Public: NULL is a no-op. */
WK_API void wk_pg_rowdesc_free(wk_pg_rowdesc *d)
{
    if (d == NULL) {
        return;
    }
    wk_pg_registry_unref(d->reg);
    wk_arena_free(&d->mem);
    wk_arena_free(&d->rowmem);
    wk_buf_free(&d->scratch);
    wk_buf_free(&d->cell);
    wk_buf_free(&d->enc);
    wk_free(d->alloc, d, sizeof *d);
}

/* Public: the column count. */
WK_API size_t wk_pg_rowdesc_ncols(const wk_pg_rowdesc *d)
{
    return d->ncols;
}

/* Public: column col as given, NULL past the end. */
WK_API const wk_pg_row_col *wk_pg_rowdesc_col(const wk_pg_rowdesc *d, size_t col)
{
    return col < d->ncols ? &d->cols[col].col : NULL;
}

/* Public: column col's record key, NULL past the end. */
WK_API const char *wk_pg_rowdesc_key(const wk_pg_rowdesc *d, size_t col)
{
    return col < d->ncols ? d->cols[col].key : NULL;
}

/* Public: where the last failure stopped. */
WK_API size_t wk_pg_row_column(const wk_pg_rowdesc *d)
{
    return d->failed_col;
}

/* Public: the record pair the last wk_pg_row_parse found no column for. */
WK_API size_t wk_pg_row_unknown_key(const wk_pg_rowdesc *d)
{
    return d->unknown_key;
}

/* ---- rows ---- */

/* One event; a failure takes the writer's latched error when it has one. */
static wk_status send_ev(const wk_sink *sink, wk_event_type t, const char *s, size_t n,
                         uint32_t count, wk_error *err)
{
    wk_status st = wk__pg_event(sink, t, s, n, count);
    if (st != WK_OK && err != NULL) {
        if (sink->error == NULL || sink->error(sink->self, err) == WK_OK) {
            wk__pg_fail(err, st, 0, "the record writer failed");
        }
    }
    return st;
}

/* One column's value (not NULL) as events. */
static wk_status emit_value(wk_pg_rowdesc *d, const wk__pg_row_col *c, const uint8_t *p,
                            size_t n, const wk_pg_events *ev, wk_error *err)
{
    if ((d->opts.flags & WK_PG_ROW_ARRAYS) && c->is_json && c->txt != NULL) {
        /* arrays have no key to leave out: a json value is its text, so null stays apart */
        wk_buf_clear(&d->cell);
        wk_status st = wk_pg_decode(c->txt, p, n, &d->cell, &d->rowmem, err);
        if (st != WK_OK) {
            return st;
        }
        return send_ev(ev->sink, WK_EV_STR,
                       d->cell.data != NULL ? (const char *)d->cell.data : "", d->cell.len, 0,
                       err);
    }
    return wk_pg_decode(c->ev, p, n, (void *)ev, &d->rowmem, err);
}

/* Public (wirekit/pg.h): the row's events; see the mapping there. */
WK_API wk_status wk_pg_row_emit(wk_pg_rowdesc *d, const uint8_t *const *vals, const int *lens,
                                const wk_sink *sink, wk_error *err)
{
    bool arrays = (d->opts.flags & WK_PG_ROW_ARRAYS) != 0;
    d->failed_col = SIZE_MAX;
    wk_arena_reset(&d->rowmem);
    if (err != NULL) {
        err->msg = NULL;
        err->code = WK_OK;
        err->offset = 0;
    }
    uint32_t count = 0;
    for (size_t i = 0; i < d->ncols; i++) {
        count += arrays || !(d->cols[i].is_json && lens[i] < 0);
    }
    wk_status st = send_ev(sink, arrays ? WK_EV_ARRAY : WK_EV_MAP, NULL, 0, count, err);
    wk_pg_events ev = {sink, d->evflags, &d->scratch, d->opts.max_text};
    for (size_t i = 0; i < d->ncols && st == WK_OK; i++) {
        const wk__pg_row_col *c = &d->cols[i];
        if (!arrays && c->is_json && lens[i] < 0) {
            continue; /* SQL NULL in a json column: the key is left out */
        }
        if (!arrays) {
            st = send_ev(sink, WK_EV_STR, c->key, c->key_len, 0, err);
        }
        if (st == WK_OK) {
            st = lens[i] < 0 ? send_ev(sink, WK_EV_NIL, NULL, 0, 0, err)
                             : emit_value(d, c, vals[i], (size_t)lens[i], &ev, err);
        }
        if (st != WK_OK) {
            d->failed_col = i;
        }
    }
    if (st == WK_OK) {
        st = send_ev(sink, WK_EV_END, NULL, 0, 0, err);
    }
    if (st != WK_OK && err != NULL && err->msg == NULL) {
        wk__pg_fail(err, st, 0, wk_status_str(st));
    }
    return st;
}

/* Public: the record through a writer of the description's format over `out`, whole or not
 * at all. */
WK_API wk_status wk_pg_row_append(wk_pg_rowdesc *d, const uint8_t *const *vals,
                                  const int *lens, wk_buf *out, wk_error *err)
{
    size_t start = out->len;
    wk_sink sink;
    wk_status st;
    if (d->opts.format == WK_PG_ROW_MSGPACK) {
        wk_mp_writer mw;
        wk_mp_writer_init(&mw, out);
        wk_mp_writer_sink(&mw, &sink);
        st = wk_pg_row_emit(d, vals, lens, &sink, err);
        wk_status fst = wk_mp_writer_finish(&mw, st == WK_OK ? err : NULL);
        st = st == WK_OK ? fst : st;
    } else {
        static const wk_json_write_opts jopts = {WK_JSON_WRITE_NEWLINE, 0};
        wk_json_writer jw;
        wk_json_writer_init(&jw, out, &jopts);
        wk_json_writer_sink(&jw, &sink);
        st = wk_pg_row_emit(d, vals, lens, &sink, err);
        if (st == WK_OK) {
            st = wk_json_writer_finish(&jw, err);
        }
    }
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}
