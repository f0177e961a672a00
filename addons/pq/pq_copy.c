/*
 * Where it sits: wk_pq_copy_out(query) -> describe (a plan, src/pg/plan.c) -> COPY bytes from
 * PQgetCopyData -> src/pg/copy.c's header and tuple splitting -> the plan -> the caller's row
 * function with the decoded C row.
 *
 * Binary COPY out through libpq: the query is described first (its column types and names
 * make a decode plan in the binary format), then `COPY (query) TO STDOUT (FORMAT binary)`
 * streams tuples that wk_pg_copy_row splits and the caller's function decodes through the
 * plan. Data is read with PQgetCopyData in non-blocking mode and poll(), so a silent server
 * ends the copy at the connection's deadline; memory stays bounded by the largest tuple (a
 * tuple that arrives whole in one CopyData message, as the server sends them, is decoded in
 * place without a copy).
 */
#include <stdio.h>
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"

/* Keeps m as the connection's message (wk_pq_conn_message), truncated to fit. */
static void copy_message(wk_pq_conn *c, const char *m)
{
    snprintf(c->message, sizeof c->message, "%s", m);
}

/* The copy is given up at its deadline or idle limit: cancelled and drained. */
static wk_status copy_timed_out(wk_pq_conn *c, wk_error *err)
{
    (void)wk__pq_abandon(c);
    copy_message(c, c->broken ? "COPY timed out and the server did not answer the cancel "
                                "request; the connection was given up"
                              : "COPY timed out (cancelled)");
    return wk__pg_fail(err, WK_ERR_IO, 0, "the COPY timed out");
}

/* Reads the results left after a copy ended, keeping the first error. Each wait is bounded
 * as the copy's are: a server that stops before its CommandComplete has the copy given up. */
static wk_status finish_results(wk_pq_conn *c, wk_error *err)
{
    wk_status st = WK_OK;
    for (;;) {
        if (!wk__pq_await_ready(c, wk__pq_deadline(c))) {
            wk_status t = copy_timed_out(c, st == WK_OK ? err : NULL);
            return st == WK_OK ? t : st;
        }
        PGresult *r = PQgetResult(c->pg);
        if (r == NULL) {
            break;
        }
        ExecStatusType s = PQresultStatus(r);
        if (s == PGRES_COPY_OUT || s == PGRES_COPY_IN) {
            PQclear(r);
            break; /* still copying: the caller broke off */
        }
        if (st == WK_OK && s != PGRES_COMMAND_OK) {
            st = wk__pq_take_error(c, r, "the COPY failed", err);
        }
        PQclear(r);
    }
    return st;
}

/* Describes `query` and builds its binary plan. Binary COPY carries no column types, hence the
 * describe (unnamed prepare) first; and since COPY has one format for the whole stream, a
 * column type without a binary decoder (aclitem, extension types) is refused here, by name,
 * before anything runs. */
static wk_status describe(wk_pq_conn *c, const char *query, const wk_pg_kind *kinds,
                          const size_t *offsets, wk_pg_plan **plan, wk_error *err)
{
    PGresult *r = NULL, *failed = NULL;
    wk_status st = wk__pq_prepare_describe(c, query, NULL, 0, &r, &failed, err);
    PQclear(failed);
    if (st != WK_OK) {
        return st;
    }
    int n = PQnfields(r);
    if (n == 0) {
        PQclear(r);
        return wk__pg_fail(err, WK_ERR_ARG, 0, "COPY out needs a query that returns rows");
    }
    (void)wk__pq_catalog_load_columns(c, r); /* types the connect left out (table row types) */
    wk_pg_plan_col *cols = calloc((size_t)n, sizeof *cols);
    if (cols == NULL) {
        PQclear(r);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the plan");
    }
    for (int i = 0; i < n; i++) {
        cols[i].name = PQfname(r, i);
        cols[i].oid = PQftype(r, i);
        cols[i].format = WK_PG_BINARY;
        cols[i].kind = kinds != NULL ? kinds[i] : WK_PG_KIND_EVENTS;
        cols[i].offset = offsets != NULL ? offsets[i] : 0;
    }
    st = wk_pg_plan_build(c->reg, cols, (size_t)n, NULL, plan, err);
    if (st == WK_ERR_NOT_FOUND) {
        size_t i = err != NULL ? err->offset : 0;
        snprintf(c->message, sizeof c->message,
                 "column %zu (%s, type OID %u) has no binary decoder for binary COPY", i + 1,
                 i < (size_t)n ? PQfname(r, (int)i) : "?", i < (size_t)n ? PQftype(r, (int)i) : 0);
    }
    free(cols);
    PQclear(r);
    return st;
}

/* Starts `COPY (query) TO STDOUT (FORMAT binary)` and waits for the CopyOutResponse. */
static wk_status start_copy(wk_pq_conn *c, const char *query, wk_error *err)
{
    size_t qn = strlen(query);
    while (qn > 0 && (query[qn - 1] == ';' || query[qn - 1] == ' ' || query[qn - 1] == '\n' ||
                      query[qn - 1] == '\t' || query[qn - 1] == '\r')) {
        qn--;
    }
    static const char pre[] = "COPY (", post[] = "\n) TO STDOUT (FORMAT binary)";
    char *sql = malloc(sizeof pre + qn + sizeof post);
    if (sql == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the COPY statement");
    }
    memcpy(sql, pre, sizeof pre - 1);
    memcpy(sql + sizeof pre - 1, query, qn);
    memcpy(sql + sizeof pre - 1 + qn, post, sizeof post);
    int ok = PQsendQuery(c->pg, sql);
    free(sql);
    if (!ok) {
        return wk__pq_take_error(c, NULL, "cannot send the COPY", err);
    }
    int64_t deadline = wk__pq_deadline(c);
    for (;;) {
        if (PQconsumeInput(c->pg) == 0) {
            return wk__pq_take_error(c, NULL, "the connection was lost", err);
        }
        while (!PQisBusy(c->pg)) {
            PGresult *r = PQgetResult(c->pg);
            if (r == NULL) {
                return wk__pq_take_error(c, NULL, "the COPY returned no result", err);
            }
            if (PQresultStatus(r) == PGRES_COPY_OUT) {
                PQclear(r);
                return WK_OK;
            }
            wk_status st = wk__pq_take_error(c, r, "the COPY failed", err);
            PQclear(r);
            (void)finish_results(c, NULL);
            return st;
        }
        if (!wk__pq_poll(c, false, deadline)) {
            return copy_timed_out(c, err);
        }
    }
}

typedef struct copy_state {
    const wk_pg_plan *plan;
    size_t ncols;
    const uint8_t **vals;
    int *lens;
    bool header;  /* header read */
    bool trailer; /* trailer read */
    uint64_t rows;
    uint64_t offset; /* stream offset of the bytes not yet consumed */
    wk_pq_copy_row_fn fn;
    void *ctx;
} copy_state;

/* The field cap of wk_pq_set_max_value_bytes when none was set: PostgreSQL's own limit. */
#define DEFAULT_MAX_FIELD ((size_t)1 << 30)

/* A complete tuple's fields against the cap (libpq held its message whole: the cap then says
 * what is handed on). */
static wk_status check_fields(wk_pq_conn *c, const copy_state *s, wk_error *err)
{
    size_t cap = c->max_value != 0 ? c->max_value : DEFAULT_MAX_FIELD;
    for (size_t i = 0; i < s->ncols; i++) {
        if (s->lens[i] > 0 && (size_t)s->lens[i] > cap) {
            snprintf(c->message, sizeof c->message,
                     "row %llu: a COPY field of %d bytes is larger than the cap of %zu bytes",
                     (unsigned long long)s->rows + 1, s->lens[i], cap);
            return wk__pg_fail(err, WK_ERR_LIMIT, i, "a COPY field larger than the cap on a value");
        }
    }
    return WK_OK;
}

/* Consumes complete items of p[0..n); *used gets what was consumed. */
static wk_status consume(wk_pq_conn *c, copy_state *s, const uint8_t *p, size_t n, size_t *used,
                         wk_error *err)
{
    size_t pos = 0;
    wk_status st = WK_OK;
    while (pos < n) {
        size_t u = 0;
        if (s->trailer) {
            st = wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes after the COPY trailer");
            break;
        }
        if (!s->header) {
            st = wk_pg_copy_header(p + pos, n - pos, &u, err);
            if (st == WK_OK) {
                s->header = true;
            }
        } else {
            st = wk_pg_copy_row(p + pos, n - pos, s->ncols, s->vals, s->lens, &u, err);
            if (st == WK_ERR_EOF) {
                s->trailer = true;
                st = WK_OK;
            } else if (st == WK_OK) {
                st = check_fields(c, s, err);
                st = st == WK_OK ? s->fn(s->ctx, s->plan, s->vals, s->lens, err) : st;
                if (st == WK_OK) {
                    s->rows++;
                } else {
                    break; /* the caller's status and err */
                }
            }
        }
        if (st == WK_ERR_AGAIN) {
            st = WK_OK;
            break;
        }
        if (st != WK_OK) {
            if (err != NULL) {
                err->offset += (size_t)s->offset + pos;
            }
            snprintf(c->message, sizeof c->message, "malformed binary COPY data at byte %llu",
                     (unsigned long long)(s->offset + pos));
            break;
        }
        pos += u;
    }
    *used = pos;
    s->offset += pos;
    return st;
}

/* Checks the incomplete tuple at p[0..n) (what waits for more CopyData) against the field
 * cap: a field whose declared length is over it fails now, before its bytes are gathered,
 * so what is held stays below the cap plus one chunk. Walks the length words only. */
static wk_status check_pending(wk_pq_conn *c, const copy_state *s, const uint8_t *p, size_t n,
                               wk_error *err)
{
    size_t cap = c->max_value != 0 ? c->max_value : DEFAULT_MAX_FIELD;
    size_t pos = s->header ? 2 : 15; /* past the field count, or the header extension length */
    if (!s->header && n < 19) {
        return WK_OK;
    }
    for (size_t f = 0; pos + 4 <= n && f <= s->ncols; f++) {
        int32_t len = (int32_t)wk__pg_be32(p + pos);
        if (len > 0 && (size_t)len > cap) {
            snprintf(c->message, sizeof c->message,
                     "a COPY %s of %ld bytes is larger than the cap of %zu bytes",
                     s->header ? "field" : "header extension", (long)len, cap);
            return wk__pg_fail(err, WK_ERR_LIMIT, (size_t)s->offset + pos,
                               "a COPY field larger than the cap on a value");
        }
        if (!s->header || len < 0) {
            pos += 4;
            if (!s->header) {
                break;
            }
            continue;
        }
        pos += 4 + (size_t)len;
    }
    return WK_OK;
}

/* Public (wirekit/pq.h): the cap on one COPY out field while it is received. */
WK_API wk_status wk_pq_set_max_value_bytes(wk_pq_conn *conn, size_t max_bytes)
{
    conn->max_value = max_bytes;
    return WK_OK;
}

/* Public (wirekit/pq.h): the whole COPY in one call: describe, start, stream every tuple to
 * fn (a non-OK return stops the copy and is returned), then read the final results; *rows
 * counts the tuples handed to fn. */
WK_API wk_status wk_pq_copy_out(wk_pq_conn *conn, const char *query, const wk_pg_kind *kinds,
                                const size_t *offsets, wk_pq_copy_row_fn fn, void *ctx,
                                uint64_t *rows, wk_error *err)
{
    if (rows != NULL) {
        *rows = 0;
    }
    if (conn == NULL || query == NULL || fn == NULL) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "wk_pq_copy_out needs a connection, a query "
                                               "and a row function");
    }
    wk__pq_clear_error(conn);
    conn->message[0] = '\0';
    if (conn->broken) {
        copy_message(conn, "the connection was given up after a timeout");
        return wk__pg_fail(err, WK_ERR_IO, 0, "the connection is unusable after a timeout");
    }
    wk_pg_plan *plan = NULL;
    wk_status st = describe(conn, query, kinds, offsets, &plan, err);
    if (st != WK_OK) {
        return st;
    }
    copy_state s;
    memset(&s, 0, sizeof s);
    s.plan = plan;
    s.ncols = wk_pg_plan_ncols(plan);
    s.vals = malloc(s.ncols * sizeof *s.vals);
    s.lens = malloc(s.ncols * sizeof *s.lens);
    s.fn = fn;
    s.ctx = ctx;
    uint8_t *pend = NULL; /* bytes of an incomplete item */
    size_t npend = 0, cap = 0;
    if (s.vals == NULL || s.lens == NULL) {
        st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a row");
        goto done;
    }
    st = start_copy(conn, query, err);
    if (st != WK_OK) {
        goto done;
    }
    int64_t deadline = wk__pq_deadline(conn);
    for (;;) {
        char *buf = NULL;
        int n = PQgetCopyData(conn->pg, &buf, 1);
        if (n > 0) {
            size_t used = 0;
            if (npend == 0) {
                st = consume(conn, &s, (const uint8_t *)buf, (size_t)n, &used, err);
            }
            if (st == WK_OK && used < (size_t)n) {
                size_t add = (size_t)n - used;
                if (cap - npend < add) {
                    size_t ncap = cap == 0 ? 4096 : cap;
                    while (ncap - npend < add) {
                        ncap *= 2;
                    }
                    uint8_t *np = realloc(pend, ncap);
                    if (np == NULL) {
                        PQfreemem(buf);
                        st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a tuple");
                        (void)wk__pq_abandon(conn);
                        goto done;
                    }
                    pend = np;
                    cap = ncap;
                }
                memcpy(pend + npend, buf + used, add);
                npend += add;
                st = consume(conn, &s, pend, npend, &used, err);
                memmove(pend, pend + used, npend - used);
                npend -= used;
            }
            if (st == WK_OK && npend > 0) {
                st = check_pending(conn, &s, pend, npend, err);
            }
            PQfreemem(buf);
            if (st != WK_OK) {
                (void)wk__pq_abandon(conn);
                goto done;
            }
            deadline = wk__pq_deadline(conn);
            continue;
        }
        if (n == 0) {
            if (!wk__pq_poll(conn, false, deadline)) {
                st = copy_timed_out(conn, err);
                goto done;
            }
            if (PQconsumeInput(conn->pg) == 0) {
                st = wk__pq_take_error(conn, NULL, "the connection was lost during the COPY",
                                       err);
                (void)finish_results(conn, NULL);
                goto done;
            }
            continue;
        }
        /* -1: the copy is over (its status follows); -2: an error */
        st = finish_results(conn, err);
        if (st == WK_OK && n == -2) {
            st = wk__pq_take_error(conn, NULL, "the COPY failed", err);
        }
        if (st == WK_OK && (!s.trailer || npend != 0)) {
            copy_message(conn, "the binary COPY stream ended inside a tuple");
            st = wk__pg_fail(err, WK_ERR_TRUNCATED, (size_t)s.offset,
                             "the binary COPY stream ended early");
        }
        break;
    }
done:
    if (rows != NULL) {
        *rows = s.rows;
    }
    free(pend);
    free(s.vals);
    free(s.lens);
    wk_pg_plan_free(plan);
    return st;
}
