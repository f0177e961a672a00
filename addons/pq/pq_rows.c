/*
 * Rows of a libpq result through a decode plan: the plan is built once from the result's
 *
 * Where it sits: a PGresult (pq_conn.c, pq_async.c, a pipeline) -> wk_pq_plan here -> the
 * plan (src/pg/plan.c) -> per row wk__pq_gather's slices -> wk_pg_plan_decode_row /
 * emit_row / value_row -> a C struct, events or a value tree.
 * column descriptions (type OID, format, name); each row then hands the column byte slices
 * libpq holds to the plan, which decodes them with no lookups.
 */
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"
#include "wirekit/pq.h"

/* Public (wirekit/pq.h): a plan over res's columns (type, format and name from libpq) with the
 * caller's C kinds and struct offsets (kinds NULL: EVENTS and VALUE only). */
WK_API wk_status wk_pq_plan(const wk_pq_conn *conn, const PGresult *res, const wk_pg_kind *kinds,
                            const size_t *offsets, wk_pg_plan **out, wk_error *err)
{
    int n = PQnfields(res);
    wk_pg_plan_col stack[32];
    wk_pg_plan_col *cols = n <= 32 ? stack : malloc((size_t)n * sizeof *cols);
    if (cols == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the plan");
    }
    for (int i = 0; i < n; i++) {
        cols[i].name = PQfname(res, i);
        cols[i].oid = PQftype(res, i);
        cols[i].format = PQfformat(res, i) == 1 ? WK_PG_BINARY : WK_PG_TEXT;
        cols[i].kind = kinds != NULL ? kinds[i] : WK_PG_KIND_EVENTS;
        cols[i].offset = offsets != NULL ? offsets[i] : 0;
        wk_pg_kind k = cols[i].kind;
        if (cols[i].format == WK_PG_TEXT &&
            (k == WK_PG_KIND_TEXT || k == WK_PG_KIND_STR || k == WK_PG_KIND_VALUE ||
             k == WK_PG_KIND_EVENTS) &&
            wk_pg_registry_find_decoder(conn->reg, cols[i].oid, WK_PG_TEXT, k) == NULL) {
            cols[i].oid = WK_PG_OID_TEXT; /* a type no codec knows: its text as it is */
        }
    }
    wk_status st = wk_pg_plan_build(conn->reg, cols, (size_t)n, NULL, out, err);
    if (cols != stack) {
        free(cols);
    }
    return st;
}

/* Contract in pq_internal.h: row's value pointers and lengths (-1 for NULL) from libpq, in a
 * stack array for narrow results, on the heap for wide ones. */
wk_status wk__pq_gather(const wk_pg_plan *plan, const PGresult *res, int row,
                        wk__pq_slices *s, wk_error *err)
{
    return wk__pq_gather_n(wk_pg_plan_ncols(plan), res, row, s, err);
}

/* Contract in pq_internal.h: the slices of `n` columns (n must be res's column count). */
wk_status wk__pq_gather_n(size_t n, const PGresult *res, int row, wk__pq_slices *s,
                          wk_error *err)
{
    if ((int)n != PQnfields(res) || row < 0 || row >= PQntuples(res)) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "row or plan does not match the result");
    }
    s->vals = s->vals_s;
    s->lens = s->lens_s;
    if (n > 64) {
        s->vals = malloc(n * sizeof *s->vals);
        s->lens = malloc(n * sizeof *s->lens);
        if (s->vals == NULL || s->lens == NULL) {
            free(s->vals);
            free(s->lens);
            return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a row");
        }
    }
    for (size_t i = 0; i < n; i++) {
        int c = (int)i;
        if (PQgetisnull(res, row, c)) {
            s->lens[i] = -1;
            s->vals[i] = NULL;
        } else {
            s->vals[i] = (const uint8_t *)PQgetvalue(res, row, c);
            s->lens[i] = PQgetlength(res, row, c);
        }
    }
    return WK_OK;
}

/* Contract in pq_internal.h: frees the heap arrays of a wide row. */
void wk__pq_slices_release(wk__pq_slices *s)
{
    if (s->vals != s->vals_s) {
        free(s->vals);
        free(s->lens);
    }
}

/* Public: row decoded into dst through the plan (nulls flagged when given). */
WK_API wk_status wk_pq_decode_row(const wk_pg_plan *plan, const PGresult *res, int row,
                                  void *dst, bool *nulls, wk_arena *arena, wk_error *err)
{
    wk__pq_slices s;
    wk_status st = wk__pq_gather(plan, res, row, &s, err);
    if (st == WK_OK) {
        st = wk_pg_plan_decode_row(plan, s.vals, s.lens, dst, nulls, arena, err);
        wk__pq_slices_release(&s);
    }
    return st;
}

/* Public: row as one map of events through the plan. */
WK_API wk_status wk_pq_emit_row(const wk_pg_plan *plan, const PGresult *res, int row,
                                const wk_pg_events *ev, wk_error *err)
{
    wk__pq_slices s;
    wk_status st = wk__pq_gather(plan, res, row, &s, err);
    if (st == WK_OK) {
        st = wk_pg_plan_emit_row(plan, s.vals, s.lens, ev, err);
        wk__pq_slices_release(&s);
    }
    return st;
}

/* Public: row as a map value in arena through the plan. */
WK_API wk_status wk_pq_value_row(const wk_pg_plan *plan, const PGresult *res, int row,
                                 wk_arena *arena, wk_value *out, wk_error *err)
{
    wk__pq_slices s;
    wk_status st = wk__pq_gather(plan, res, row, &s, err);
    if (st == WK_OK) {
        st = wk_pg_plan_value_row(plan, s.vals, s.lens, arena, out, err);
        wk__pq_slices_release(&s);
    }
    return st;
}

/* Public (wirekit/pq.h): the row policy's description of res's columns, each column's name,
 * type, typmod and format from libpq. */
WK_API wk_status wk_pq_rowdesc_new(wk_pq_conn *conn, const PGresult *res,
                                   const wk_pg_row_opts *opts, wk_pg_rowdesc **out,
                                   wk_error *err)
{
    *out = NULL;
    (void)wk__pq_catalog_load_columns(conn, res); /* types the connect left out */
    int n = PQnfields(res);
    wk_pg_row_col stack[32];
    wk_pg_row_col *cols = n <= 32 ? stack : malloc((size_t)n * sizeof *cols);
    if (cols == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a row description");
    }
    for (int i = 0; i < n; i++) {
        cols[i].name = PQfname(res, i);
        cols[i].oid = PQftype(res, i);
        cols[i].typmod = PQfmod(res, i);
        cols[i].format = PQfformat(res, i) == 1 ? WK_PG_BINARY : WK_PG_TEXT;
    }
    wk_status st = wk_pg_rowdesc_new(conn->reg, cols, (size_t)n, opts, NULL, out, err);
    if (cols != stack) {
        free(cols);
    }
    return st;
}

/* Public: row `row` of res as one record appended to out (whole or nothing). */
WK_API wk_status wk_pq_row_append(wk_pg_rowdesc *d, const PGresult *res, int row, wk_buf *out,
                                  wk_error *err)
{
    wk__pq_slices s;
    wk_status st = wk__pq_gather_n(wk_pg_rowdesc_ncols(d), res, row, &s, err);
    if (st == WK_OK) {
        st = wk_pg_row_append(d, s.vals, s.lens, out, err);
        wk__pq_slices_release(&s);
    }
    return st;
}
