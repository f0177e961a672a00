/*
 * libpq connections and queries: keep the connection's registry snapshot (made when it
 * connected, pq_connect.c), and run queries whose parameters are encoded by wirekit (binary)
 * and whose results come back in binary.
 *
 * Parameter bytes are encoded into one buffer per call and sliced afterwards (the buffer may
 * move while it grows), so a query costs a handful of allocations whatever its parameters.
 *
 * Where it sits: wk_pq_exec(sql, params) -> pq_params.c encodes each parameter with the
 * registry's encoder -> PQsendQueryParams / the prepared-statement cache (pq_stmt_cache.c) ->
 * wk__pq_wait here (pq_wait.c's poll and cancel) -> the PGresult, whose rows the caller
 * decodes through a plan (pq_rows.c -> src/pg/plan.c).
 *
 * Queries are sent asynchronously and their results awaited with poll() against a deadline
 * when the connection has a timeout: the server's statement_timeout ends a slow query, and the
 * client-side deadline also ends a wait on a server that does not answer at all (a stopped
 * backend): the query is cancelled, and if even the cancel gets no answer the connection is
 * given up.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"
#include "wirekit/pq.h"

/* Reads results until the query is done or `deadline` passes (true: done). A lost
 * connection is done too: PQgetResult then hands over libpq's error result. Output libpq
 * still holds (non-blocking mode) is flushed first. */
static bool collect(wk_pq_conn *c, int64_t deadline, PGresult **res)
{
    for (;;) {
        if (PQflush(c->pg) > 0 && !wk__pq_poll(c, true, deadline)) {
            return false;
        }
        (void)PQconsumeInput(c->pg); /* on failure the connection is bad and not busy */
        while (!PQisBusy(c->pg)) {
            PGresult *r = PQgetResult(c->pg);
            if (r == NULL) {
                return true;
            }
            wk__pq_keep_result(res, r);
            if (PQstatus(c->pg) == CONNECTION_BAD) {
                return true; /* nothing more will come */
            }
        }
        if (!wk__pq_poll(c, false, deadline)) {
            return false;
        }
    }
}

/* wk__pq_cancel_wait's wait: the query's results, into *res. */
static bool collected(wk_pq_conn *c, int64_t until, void *res)
{
    return collect(c, until, res);
}

/* Contract in pq_internal.h: the query's last result; past the deadline the query is
 * cancelled and, without an answer in the grace period, the connection is given up. */
wk_status wk__pq_wait(wk_pq_conn *c, PGresult **res, wk_error *err)
{
    *res = NULL;
    if (collect(c, wk__pq_deadline(c), res)) {
        if (*res == NULL && PQstatus(c->pg) == CONNECTION_BAD) {
            return wk__pq_take_error(c, NULL, "the connection was lost", err);
        }
        if (*res == NULL) {
            wk__pq_set_message(c, PQerrorMessage(c->pg));
            return wk__pg_fail(err, WK_ERR_IO, 0, "the query returned no result");
        }
        return WK_OK;
    }
    /* Past the deadline: ask the server to cancel, and give it its grace (asking again
     * meanwhile: a cancel that reached the backend before the query did is ignored). */
    wk__pq_cancelling k = {0};
    bool done = wk__pq_cancel_wait(c, &k, collected, res);
    PQclear(*res);
    *res = NULL;
    if (!done) {
        c->broken = true;
        wk__pq_set_message(c, "query timed out and the server did not answer the cancel "
                              "request; the connection was given up");
    } else {
        wk__pq_set_message(c, "query timed out (cancelled)");
    }
    return wk__pg_fail(err, WK_ERR_IO, 0, "the query timed out");
}

/* Contract in pq_internal.h: a simple-protocol statement, waited for as wk__pq_wait waits. */
wk_status wk__pq_run(wk_pq_conn *c, const char *sql, PGresult **res, wk_error *err)
{
    *res = NULL;
    if (c->broken) {
        wk__pq_set_message(c, "the connection was given up after a timeout");
        return wk__pg_fail(err, WK_ERR_IO, 0, "the connection is unusable after a timeout");
    }
    if (PQsendQuery(c->pg, sql) == 0) {
        wk__pq_set_message(c, PQerrorMessage(c->pg));
        return wk__pg_fail(err, WK_ERR_IO, 0, "cannot send the query");
    }
    return wk__pq_wait(c, res, err);
}

/* Runs a statement of the session's (SET ...). */
static wk_status run_simple(wk_pq_conn *c, const char *sql, wk_error *err)
{
    PGresult *r = NULL;
    if (wk__pq_run(c, sql, &r, err) != WK_OK) {
        return WK_ERR_IO;
    }
    ExecStatusType s = PQresultStatus(r);
    wk_status st = WK_OK;
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
        st = wk__pq_take_error(c, r, "setting up the session failed", err);
    }
    PQclear(r);
    return st;
}

/* Public (wirekit/pq.h): closes the connection, drops its registry snapshot, its statement
 * cache and its last error; NULL is a no-op. */
WK_API void wk_pq_conn_free(wk_pq_conn *conn)
{
    if (conn == NULL) {
        return;
    }
    if (conn->pg != NULL) {
        PQfinish(conn->pg);
    }
    wk_pg_registry_unref(conn->reg);
    wk__pq_stmt_cache_free(conn);
    wk__pq_clear_error(conn);
    wk__pq_canceller_release(conn);
    free(conn);
}

/* Public: the server's statement_timeout and the client's own deadline, both timeout_ms. */
WK_API wk_status wk_pq_set_timeout(wk_pq_conn *conn, uint32_t timeout_ms, wk_error *err)
{
    char sql[64];
    snprintf(sql, sizeof sql, "SET statement_timeout = %u", timeout_ms);
    conn->timeout_ms = timeout_ms;
    return run_simple(conn, sql, err);
}

/* Public: the libpq connection, for calls wirekit does not wrap. */
WK_API PGconn *wk_pq_pgconn(const wk_pq_conn *conn)
{
    return conn->pg;
}

/* Public: the registry snapshot the connection decodes with (built-ins plus its catalog). */
WK_API const wk_pg_registry *wk_pq_registry(const wk_pq_conn *conn)
{
    return conn->reg;
}

/* Public: libpq's text of the last failure, NULL when there is none. */
WK_API const char *wk_pq_conn_message(const wk_pq_conn *conn)
{
    return conn->message;
}

/* Contract in pq_internal.h: the unnamed statement prepared and described. */
wk_status wk__pq_prepare_describe(wk_pq_conn *c, const char *sql, const Oid *types, size_t n,
                                  PGresult **desc, PGresult **failed, wk_error *err)
{
    PGresult *r = NULL;
    *desc = NULL;
    *failed = NULL;
    if (!PQsendPrepare(c->pg, "", sql, (int)n, types)) {
        return wk__pq_take_error(c, NULL, "cannot send the query", err);
    }
    wk_status st = wk__pq_wait(c, &r, err);
    if (st != WK_OK) {
        return st; /* timed out or lost: the message is set */
    }
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        *failed = r;
        return wk__pq_take_error(c, r, "the query failed", err);
    }
    PQclear(r);
    r = NULL;
    if (!PQsendDescribePrepared(c->pg, "")) {
        return wk__pq_take_error(c, NULL, "cannot send the query", err);
    }
    st = wk__pq_wait(c, &r, err);
    if (st != WK_OK) {
        return st;
    }
    if (PQresultStatus(r) != PGRES_COMMAND_OK) {
        *failed = r;
        return wk__pq_take_error(c, r, "describing the query failed", err);
    }
    *desc = r;
    return WK_OK;
}

/* The result format for `sql`: binary when every result column has a binary decoder in the
 * snapshot, else text. Describes the statement (prepared unnamed) the first time; then
 * *prepared is set and the caller runs the prepared statement. On a server error the failed
 * result is left in *res. */
static wk_status result_format(wk_pq_conn *c, const char *sql, const Oid *types, size_t n,
                               int *fmt, bool *prepared, PGresult **res, wk_error *err)
{
    uint64_t h = wk__pq_stmt_hash(sql, types, n); /* never 0: 0 marks empty slots */
    wk__pq_fmt_entry *e = &c->fmt_cache[h % WK__PQ_FMT_CACHE];
    *prepared = false;
    if (e->hash == h) {
        *fmt = e->format;
        return WK_OK;
    }
    PGresult *r = NULL;
    if (c->broken) {
        return wk__pg_fail(err, WK_ERR_IO, 0, "the connection is unusable after a timeout");
    }
    /* Unknown statement: prepare it unnamed and describe it, so that the result format can
     * follow its column types; the execute then reuses the unnamed statement. */
    wk_status st = wk__pq_prepare_describe(c, sql, types, n, &r, res, err);
    if (st != WK_OK) {
        return st;
    }
    /* Columns of types the connect left out (table row types) are loaded now; that query
     * replaced the unnamed statement, so the statement then goes with its text. */
    bool reloaded = wk__pq_catalog_load_columns(c, r);
    *fmt = wk__pq_described_format(c, r);
    PQclear(r);
    e->hash = h;
    e->format = *fmt;
    *prepared = !reloaded;
    return WK_OK;
}

/* Contract in pq_internal.h: a small direct-mapped cache keyed by the statement hash; a
 * collision just costs another describe. */
bool wk__pq_fmt_cached(const wk_pq_conn *c, const char *sql, const Oid *types, size_t n,
                       int *fmt)
{
    uint64_t h = wk__pq_stmt_hash(sql, types, n);
    const wk__pq_fmt_entry *e = &c->fmt_cache[h % WK__PQ_FMT_CACHE];
    if (e->hash == h) {
        *fmt = e->format;
        return true;
    }
    return false;
}

/* Contract in pq_internal.h: overwrites the slot the hash maps to. */
void wk__pq_fmt_remember(wk_pq_conn *c, const char *sql, const Oid *types, size_t n, int fmt)
{
    uint64_t h = wk__pq_stmt_hash(sql, types, n);
    wk__pq_fmt_entry *e = &c->fmt_cache[h % WK__PQ_FMT_CACHE];
    e->hash = h;
    e->format = fmt;
}

#define SEND_ASYNC 0x100u /* run_query: send only (wk_pq_send), results via wk_pq_next */

/* wk_pq_exec and wk_pq_send: encodes the parameters, picks the result format, then runs the
 * statement and waits (flags 0) or sends it (SEND_ASYNC, plus the WK_PQ_SEND_* flags). */
static wk_status run_query(wk_pq_conn *conn, const char *sql, const wk_pq_param *params,
                           size_t n, PGresult **res, unsigned flags, wk_error *err)
{
    *res = NULL;
    if (n > 65535) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "PostgreSQL takes at most 65535 parameters");
    }
    if (wk__pq_async_in_flight(conn, "a query", err)) {
        return WK_ERR_STATE;
    }
    /* The parameter arrays live on the stack for up to 16 parameters, the common case; more
     * take one heap allocation each. */
    Oid types_s[16];
    int lens_s[16], fmts_s[16];
    size_t offs_s[16];
    const char *vals_s[16];
    Oid *types = types_s;
    int *lens = lens_s, *fmts = fmts_s;
    size_t *offs = offs_s;
    const char **vals = vals_s;
    if (n > 16) {
        types = malloc(n * sizeof *types);
        lens = malloc(n * sizeof *lens);
        fmts = malloc(n * sizeof *fmts);
        offs = malloc(n * sizeof *offs);
        vals = malloc(n * sizeof *vals);
    }
    wk_status st = WK_OK;
    if (types == NULL || lens == NULL || fmts == NULL || offs == NULL || vals == NULL) {
        st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for parameters");
    }
    wk_buf buf;
    wk_buf_init(&buf, NULL, 0);
    if (st == WK_OK) {
        st = wk__pq_encode_params(conn, params, n, &buf, types, fmts, lens, offs, err);
    }
    if (st == WK_OK) {
        wk__pq_param_values(&buf, offs, n, vals);
        int rfmt = 1;
        bool prepared = false;
        wk__pq_clear_error(conn);
        st = result_format(conn, sql, types, n, &rfmt, &prepared, res, err);
        /* A statement seen before (format cached) goes as PQsendQueryParams in one round
         * trip; one just prepared executes the unnamed statement. */
        if (st == WK_OK && (flags & SEND_ASYNC)) {
            int ok = prepared
                         ? PQsendQueryPrepared(conn->pg, "", (int)n, vals, lens, fmts, rfmt)
                         : PQsendQueryParams(conn->pg, sql, (int)n, types, vals, lens, fmts,
                                             rfmt);
            if (!ok) {
                st = wk__pq_take_error(conn, NULL, "sending the query failed", err);
            } else if ((flags & WK_PQ_SEND_SINGLE_ROW) && !PQsetSingleRowMode(conn->pg)) {
                st = wk__pg_fail(err, WK_ERR_STATE, 0, "single-row mode was refused");
            }
            conn->single_row_left = conn->single_row_left || (flags & WK_PQ_SEND_SINGLE_ROW);
        } else if (st == WK_OK) {
            int ok = prepared
                         ? PQsendQueryPrepared(conn->pg, "", (int)n, vals, lens, fmts, rfmt)
                         : PQsendQueryParams(conn->pg, sql, (int)n, types, vals, lens, fmts,
                                             rfmt);
            if (!ok) {
                st = wk__pq_take_error(conn, NULL, "cannot send the query", err);
            } else {
                st = wk__pq_wait(conn, res, err); /* within the connection's deadline */
            }
            ExecStatusType s = *res != NULL ? PQresultStatus(*res) : PGRES_FATAL_ERROR;
            if (st != WK_OK) {
                /* timed out or lost: the message is set */
            } else if (s != PGRES_TUPLES_OK && s != PGRES_COMMAND_OK) {
                st = wk__pq_take_error(conn, *res, "the query failed", err);
            } else {
                wk__pq_set_message(conn, "");
            }
        }
    }
    wk_buf_free(&buf);
    if (n > 16) {
        free(types);
        free(lens);
        free(fmts);
        free(offs);
        free(vals);
    }
    return st;
}

/* Public: run_query without flags: the result is complete (or an error) when it returns. */
WK_API wk_status wk_pq_exec(wk_pq_conn *conn, const char *sql, const wk_pq_param *params,
                            size_t n, PGresult **res, wk_error *err)
{
    return run_query(conn, sql, params, n, res, 0, err);
}

/* Public: sends without waiting (simple protocol, or extended with wirekit-encoded
 * parameters), optionally in single-row mode; results come through wk_pq_next. */
WK_API wk_status wk_pq_send(wk_pq_conn *conn, const char *sql, const wk_pq_param *params,
                            size_t n, unsigned flags, wk_error *err)
{
    wk__pq_clear_error(conn);
    if (flags & WK_PQ_SEND_SIMPLE) {
        if (n != 0) {
            return wk__pg_fail(err, WK_ERR_ARG, 0, "the simple protocol takes no parameters");
        }
        if (wk__pq_async_in_flight(conn, "a query", err)) {
            return WK_ERR_STATE;
        }
        if (!PQsendQuery(conn->pg, sql)) {
            return wk__pq_take_error(conn, NULL, "sending the query failed", err);
        }
        conn->single_row_left = conn->single_row_left || (flags & WK_PQ_SEND_SINGLE_ROW);
        if ((flags & WK_PQ_SEND_SINGLE_ROW) && !PQsetSingleRowMode(conn->pg)) {
            return wk__pg_fail(err, WK_ERR_STATE, 0, "single-row mode was refused");
        }
        return WK_OK;
    }
    PGresult *failed = NULL;
    wk_status st = run_query(conn, sql, params, n, &failed, flags | SEND_ASYNC, err);
    PQclear(failed); /* a describe failure: wk_pq_last_error has its fields */
    const wk_pq_error *e = st == WK_ERR_SERVER ? wk_pq_last_error(conn) : NULL;
    if ((flags & WK_PQ_SEND_SIMPLE_IF_MANY) && n == 0 && e != NULL &&
        strcmp(e->sqlstate, "42601") == 0 && strstr(e->message, "multiple commands") != NULL) {
        /* several statements cannot be prepared as one: they go as psql -c sends them */
        return wk_pq_send(conn, sql, NULL, 0, (flags & WK_PQ_SEND_SINGLE_ROW) | WK_PQ_SEND_SIMPLE,
                          err);
    }
    return st;
}

/* Public: the next result of a query sent with wk_pq_send, WK_ERR_EOF after the last; an
 * error result becomes the status with its detail kept (wk_pq_last_error). The wait for each
 * result is bounded by the connection's deadline and idle limit (PQgetResult alone would
 * block in poll() without a limit): past them the query is given up (cancelled and drained,
 * or the connection marked broken) and WK_ERR_IO returned, after which the query is over. */
WK_API wk_status wk_pq_next(wk_pq_conn *conn, PGresult **res, wk_error *err)
{
    *res = NULL;
    if (conn->broken) {
        return WK_ERR_EOF; /* given up: the call that gave it up reported why */
    }
    if (!wk__pq_await_ready(conn, wk__pq_deadline(conn))) {
        bool answered = wk__pq_abandon(conn);
        wk__pq_set_message(conn, answered ? "query timed out (cancelled)"
                                          : "query timed out and the server did not answer "
                                            "the cancel request; the connection was given up");
        return wk__pg_fail(err, WK_ERR_IO, 0, "the query timed out");
    }
    *res = PQgetResult(conn->pg); /* ready: does not block */
    if (*res == NULL) {
        if (PQstatus(conn->pg) == CONNECTION_BAD && wk_pq_last_error(conn) == NULL) {
            return wk__pq_take_error(conn, NULL, "the connection was lost", err);
        }
        return WK_ERR_EOF;
    }
    switch (PQresultStatus(*res)) {
    case PGRES_SINGLE_TUPLE:
    case PGRES_TUPLES_OK:
    case PGRES_COMMAND_OK:
    case PGRES_EMPTY_QUERY: return WK_OK;
    default: return wk__pq_take_error(conn, *res, "the query failed", err);
    }
}
