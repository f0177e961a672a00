/*
 * Query parameters for libpq: each wk_pq_param is encoded by the connection's snapshot into
 * the arrays PQsendQueryParams takes (types, values, lengths, formats), binary except TEXT
 * parameters the server must infer or whose text input wirekit does not parse. All values
 * share one buffer, sliced once encoding is done (the buffer moves while it grows), so a query
 * costs a handful of allocations whatever its parameters; up to 16 parameters need none for
 * the arrays. The blocking, sending and non-blocking query paths all encode through here.
 */
#include <stdlib.h>

#include "pg/pg_internal.h"
#include "pg/pq_internal.h"

void wk__pq_params_free(wk__pq_params *p)
{
    if (p->types != p->types_s) {
        free(p->types);
        free(p->lens);
        free(p->fmts);
        free(p->offs);
        free(p->vals);
    }
    wk_buf_free(&p->buf);
    p->types = NULL;
    p->n = 0;
}

/* Encodes parameter i into p->buf; *text_fmt says it went in the text format (a C string). */
static wk_status encode_one(const wk_pq_conn *conn, const wk_pq_param *prm, size_t i,
                            wk__pq_params *p, wk_error *err)
{
    const wk_pg_encoder *e;
    bool text_unknown = prm->kind == WK_PG_KIND_TEXT && prm->oid == 0;
    wk_pg_format f = text_unknown ? WK_PG_TEXT : WK_PG_BINARY;
    if (text_unknown) {
        e = NULL;
    } else if (prm->oid != 0) {
        e = wk_pg_registry_find_encoder_for(conn->reg, prm->oid, f, prm->kind);
    } else if (prm->kind == WK_PG_KIND_ARRAY) {
        const wk_pg_array_in *a = prm->value;
        e = a != NULL ? wk_pg_registry_find_array_encoder(conn->reg, f, a->elem_kind) : NULL;
    } else {
        e = wk_pg_registry_find_encoder(conn->reg, f, prm->kind);
    }
    if (!text_unknown && e == NULL && prm->kind == WK_PG_KIND_TEXT && prm->oid != 0 &&
        wk_pg_registry_find_encoder_for(conn->reg, prm->oid, WK_PG_TEXT, prm->kind) != NULL) {
        text_unknown = true; /* a text-only type (aclitem, tsquery, ...) */
        f = WK_PG_TEXT;
    }
    if (!text_unknown && e == NULL && !(prm->value == NULL && prm->oid != 0)) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, i, "no encoder for a parameter's kind");
    }
    p->types[i] = e != NULL ? e->oid : prm->oid;
    p->fmts[i] = (int)f;
    if (prm->value == NULL) {
        p->lens[i] = -1;
        p->offs[i] = SIZE_MAX;
        return WK_OK;
    }
    wk_buf *buf = &p->buf;
    p->offs[i] = buf->len;
    wk_status st;
    if (!text_unknown && prm->kind == WK_PG_KIND_TEXT && e != NULL) {
        /* a type whose text input wirekit does not parse goes as text */
        st = wk_pg_encode(e, prm->value, buf, err);
        if (st == WK_ERR_UNSUPPORTED) {
            buf->len = p->offs[i];
            text_unknown = true;
            p->fmts[i] = (int)WK_PG_TEXT;
        } else if (st != WK_OK) {
            buf->len = p->offs[i];
            return st;
        }
    }
    if (text_unknown) {
        const wk_slice *s = prm->value;
        st = wk_buf_append(buf, s->ptr, s->len);
        if (st == WK_OK) {
            st = wk_buf_push(buf, 0); /* text parameters are C strings for libpq */
        }
        if (st != WK_OK) {
            return wk__pg_fail(err, st, i, "out of memory for parameters");
        }
    } else if (!(prm->kind == WK_PG_KIND_TEXT && e != NULL)) {
        st = wk_pg_encode(e, prm->value, buf, err);
        if (st != WK_OK) {
            return st;
        }
    }
    size_t len = buf->len - p->offs[i] - (text_unknown ? 1 : 0);
    if (len > INT32_MAX) {
        return wk__pg_fail(err, WK_ERR_LIMIT, i, "parameter longer than 2 GiB");
    }
    p->lens[i] = (int)len;
    return WK_OK;
}

wk_status wk__pq_params_encode(const wk_pq_conn *conn, const wk_pq_param *params, size_t n,
                               wk__pq_params *p, wk_error *err)
{
    memset(p, 0, offsetof(wk__pq_params, types_s));
    wk_buf_init(&p->buf, NULL, 0);
    if (n > 65535) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "PostgreSQL takes at most 65535 parameters");
    }
    p->types = p->types_s;
    p->lens = p->lens_s;
    p->fmts = p->fmts_s;
    p->offs = p->offs_s;
    p->vals = p->vals_s;
    if (n > WK__PQ_PARAMS_INLINE) {
        p->types = malloc(n * sizeof *p->types);
        p->lens = malloc(n * sizeof *p->lens);
        p->fmts = malloc(n * sizeof *p->fmts);
        p->offs = malloc(n * sizeof *p->offs);
        p->vals = malloc(n * sizeof *p->vals);
        if (p->types == NULL || p->lens == NULL || p->fmts == NULL || p->offs == NULL ||
            p->vals == NULL) {
            wk__pq_params_free(p);
            return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for parameters");
        }
    }
    p->n = n;
    for (size_t i = 0; i < n; i++) {
        wk_status st = encode_one(conn, &params[i], i, p, err);
        if (st != WK_OK) {
            wk__pq_params_free(p);
            return st;
        }
    }
    for (size_t i = 0; i < n; i++) {
        /* An empty value must not be a NULL pointer: libpq would send SQL NULL. */
        p->vals[i] = p->offs[i] == SIZE_MAX ? NULL
                     : p->buf.data == NULL  ? ""
                                            : (const char *)p->buf.data + p->offs[i];
    }
    return WK_OK;
}

int wk__pq_params_send(wk_pq_conn *conn, const char *sql, const wk__pq_params *p,
                       bool prepared, int result_format)
{
    return prepared ? PQsendQueryPrepared(conn->pg, "", (int)p->n, p->vals, p->lens, p->fmts,
                                          result_format)
                    : PQsendQueryParams(conn->pg, sql, (int)p->n, p->types, p->vals, p->lens,
                                        p->fmts, result_format);
}
