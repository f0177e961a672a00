/*
 * Query parameters encoded by wirekit for libpq: each wk_pq_param goes through the
 * connection's registry into one growing buffer (binary, except text-only types and TEXT
 * parameters the server is to infer, which go as text), and its type, format, length and
 * offset are recorded for PQsendQueryParams / PQsendQueryPrepared. Offsets, not pointers,
 * because the buffer may move while it grows; the pointers are made once it is complete.
 * Where it sits: the caller's wk_pq_param list (C kind + value, or text) -> param_encoder
 * picks the registry's encoder (src/pg/registry.c) -> the family codec's encoder writes the
 * bytes -> the arrays libpq's PQsend* calls take.
 * Shared by the one-statement path (pq_conn.c), the non-blocking query (pq_async.c) and
 * pipelines (pq_pipeline*.c); the last two keep their arrays in a wk__pq_param_arrays.
 */
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"

/* The encoder for parameter `p` (NULL: none, or text sent as it is when *as_text is set). */
static const wk_pg_encoder *param_encoder(const wk_pq_conn *conn, const wk_pq_param *p,
                                          bool *as_text)
{
    const wk_pg_encoder *e = NULL;
    *as_text = p->kind == WK_PG_KIND_TEXT && p->oid == 0;
    if (*as_text) {
        return NULL;
    }
    if (p->oid != 0) {
        e = wk_pg_registry_find_encoder_for(conn->reg, p->oid, WK_PG_BINARY, p->kind);
    } else if (p->kind == WK_PG_KIND_ARRAY) {
        const wk_pg_array_in *a = p->value;
        e = a != NULL ? wk_pg_registry_find_array_encoder(conn->reg, WK_PG_BINARY, a->elem_kind)
                      : NULL;
    } else {
        e = wk_pg_registry_find_encoder(conn->reg, WK_PG_BINARY, p->kind);
    }
    if (e == NULL && p->kind == WK_PG_KIND_TEXT && p->oid != 0 &&
        wk_pg_registry_find_encoder_for(conn->reg, p->oid, WK_PG_TEXT, p->kind) != NULL) {
        *as_text = true; /* a text-only type (aclitem, tsquery, ...) */
    }
    return e;
}

/* Appends a TEXT parameter's slice as a C string (libpq reads text parameters up to NUL). */
static wk_status append_text(wk_buf *buf, const wk_slice *s, size_t i, wk_error *err)
{
    wk_status st = wk_buf_append(buf, s->ptr, s->len);
    if (st == WK_OK) {
        st = wk_buf_push(buf, 0);
    }
    return st == WK_OK ? WK_OK : wk__pg_fail(err, st, i, "out of memory for parameters");
}

/* Contract in pq_internal.h: every parameter encoded (a NULL value as SQL NULL, offs SIZE_MAX),
 * its type OID the encoder's (or the caller's, for NULLs and inferred text); WK_ERR_NOT_FOUND
 * names the parameter without an encoder. */
wk_status wk__pq_encode_params(const wk_pq_conn *conn, const wk_pq_param *params, size_t n,
                               wk_buf *buf, Oid *types, int *fmts, int *lens, size_t *offs,
                               wk_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const wk_pq_param *p = &params[i];
        bool as_text = false;
        const wk_pg_encoder *e = param_encoder(conn, p, &as_text);
        if (!as_text && e == NULL && !(p->value == NULL && p->oid != 0)) {
            return wk__pg_fail(err, WK_ERR_NOT_FOUND, i, "no encoder for a parameter's kind");
        }
        types[i] = e != NULL ? e->oid : p->oid;
        fmts[i] = (int)(as_text ? WK_PG_TEXT : WK_PG_BINARY);
        if (p->value == NULL) {
            lens[i] = -1;
            offs[i] = SIZE_MAX;
            continue;
        }
        size_t at = buf->len;
        offs[i] = at;
        wk_status st = WK_OK;
        if (as_text) {
            st = append_text(buf, p->value, i, err);
        } else {
            st = wk_pg_encode(e, p->value, buf, err);
            if (st == WK_ERR_UNSUPPORTED && p->kind == WK_PG_KIND_TEXT) {
                /* a type whose text input wirekit does not parse goes as text */
                buf->len = at;
                as_text = true;
                fmts[i] = (int)WK_PG_TEXT;
                st = append_text(buf, p->value, i, err);
            }
        }
        if (st != WK_OK) {
            buf->len = at;
            return st;
        }
        size_t len = buf->len - at - (as_text ? 1 : 0);
        if (len > INT32_MAX) {
            return wk__pg_fail(err, WK_ERR_LIMIT, i, "parameter longer than 2 GiB");
        }
        lens[i] = (int)len;
    }
    return WK_OK;
}

/* Contract in pq_internal.h: the value pointers, made once the buffer stops moving. */
void wk__pq_param_values(const wk_buf *buf, const size_t *offs, size_t n, const char **vals)
{
    for (size_t i = 0; i < n; i++) {
        /* An empty value must not be a NULL pointer: libpq would send SQL NULL. */
        vals[i] = offs[i] == SIZE_MAX ? NULL
                  : buf->data == NULL ? ""
                                      : (const char *)buf->data + offs[i];
    }
}

/* Contract in pq_internal.h: binary results (1) unless a column's type has no binary decoder
 * in the registry; libpq takes one result format for the whole result, so one such column
 * makes it text (0). */
int wk__pq_described_format(const wk_pq_conn *c, const PGresult *desc)
{
    for (int i = 0; i < PQnfields(desc); i++) {
        if (wk_pg_registry_find_decoder(c->reg, PQftype(desc, i), WK_PG_BINARY,
                                        WK_PG_KIND_EVENTS) == NULL) {
            return 0; /* a type without a binary decoder: the whole result in text */
        }
    }
    return 1;
}

/* Contract in pq_internal.h: grows all four arrays to at least `need` entries, doubling. */
wk_status wk__pq_param_arrays_reserve(wk__pq_param_arrays *a, size_t need, wk_error *err)
{
    if (a->cap != 0 && need <= a->cap) {
        return WK_OK;
    }
    size_t cap = a->cap == 0 ? 16 : a->cap;
    while (cap < need) {
        cap *= 2;
    }
    /* each array grows from the same old capacity, which changes only when all four grew */
    Oid *types = realloc(a->types, cap * sizeof *types);
    a->types = types != NULL ? types : a->types;
    int *fmts = realloc(a->fmts, cap * sizeof *fmts);
    a->fmts = fmts != NULL ? fmts : a->fmts;
    int *lens = realloc(a->lens, cap * sizeof *lens);
    a->lens = lens != NULL ? lens : a->lens;
    size_t *offs = realloc(a->offs, cap * sizeof *offs);
    a->offs = offs != NULL ? offs : a->offs;
    if (types == NULL || fmts == NULL || lens == NULL || offs == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for parameters");
    }
    a->cap = cap;
    return WK_OK;
}

/* Contract in pq_internal.h: frees the four arrays and zeroes the struct for reuse. */
void wk__pq_param_arrays_free(wk__pq_param_arrays *a)
{
    free(a->types);
    free(a->fmts);
    free(a->lens);
    free(a->offs);
    memset(a, 0, sizeof *a);
}
