/*
 * Non-blocking queries for event loops: a query is a small state machine over libpq's
 * asynchronous calls (prepare, describe, then execute in single-row mode) that the caller's
 * loop advances with wk_pq_async_step whenever the socket is ready or the deadline comes.
 * Each step flushes, consumes what the socket has, and turns every complete result into an
 * action: a row goes through the plan (built from the first row's columns) to the caller's
 * function, the end of one protocol step sends the next, an error is kept as the outcome.
 *
 * Where it sits: wk_pq_async_start -> PQsendPrepare / PQsendDescribePrepared / PQsendQueryPrepared
 * (rows in single-row mode) -> the caller's loop calls wk_pq_async_step on readiness -> each
 * PGresult row -> the decode plan (src/pg/plan.c, over pq_rows.c's gathering) -> the caller's
 * row handler. Deadlines and cancels go through pq_wait.c.
 *
 * The first failure is sticky: a row function's refusal, a plan that cannot be built, a
 * passed deadline or the idle limit (no socket event for the connection's idle_ms, seen by a
 * look at the socket each step makes) cancel the query and the rest of its rows are dropped,
 * the outcome being reported once the server has ended it (or when it does not within the
 * cancel's grace, pq_internal.h, with the connection given up). Nothing blocks: the cancel
 * request goes out on pq_wait.c's helper thread.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"
#include "pq/pq_stmt_cache.h"

/* The protocol step in flight: prepare, describe (for the result formats), execute. */
typedef enum phase { PH_PREPARE, PH_DESCRIBE, PH_EXECUTE, PH_DONE } phase;

/* One query in flight: what the later steps need (SQL, encoded parameters), the plan built
 * from the first row, the sticky outcome, and the deadline and cancel state. */
struct wk_pq_async {
    wk_pq_conn *conn;
    char *sql;
    /* the encoded parameters, kept for the execute step */
    size_t n;
    wk__pq_param_arrays prm;
    const char **vals;
    wk_buf buf;
    phase ph;
    int rfmt;
    wk_pq_row_handler rows_to;
    wk_pg_plan *plan;
    uint64_t rows;
    wk_status status;   /* the first failure, WK_OK */
    wk_error err;       /* its detail */
    bool stop;          /* drop rows and send no further step (a failure or a cancel) */
    bool timed_out;
    bool write_pending; /* libpq holds data to send */
    int64_t deadline;   /* INT64_MAX: none */
    wk__pq_cancelling cancel; /* the cancel request, repeated until the grace ends */
    char command[64];
};

/* Keeps the first failure. */
static void fail(wk_pq_async *q, wk_status st, const wk_error *e)
{
    if (q->status == WK_OK) {
        q->status = st;
        if (e != NULL) {
            q->err = *e;
        }
    }
    q->stop = true;
}

/* Contract in pq_internal.h. */
bool wk__pq_async_in_flight(wk_pq_conn *c, const char *what, wk_error *err)
{
    if (c->async == NULL) {
        return false;
    }
    snprintf(c->message, sizeof c->message,
             "%s cannot start while a non-blocking query (wk_pq_async_start) is in flight on "
             "the connection: step it to its end or free it first",
             what);
    wk__pg_fail(err, WK_ERR_STATE, 0, "a non-blocking query is in flight on the connection");
    return true;
}

/* The query has ended: the connection is back in blocking mode for the blocking calls, and
 * free for another query or a pipeline. */
static void finish(wk_pq_async *q)
{
    if (q->conn->async == q) {
        q->conn->async = NULL;
    }
    q->ph = PH_DONE;
    q->write_pending = false;
    /* a cancel request still out could reach the next query: wait for it, within the grace */
    bool settled = q->conn->broken || wk__pq_cancel_settle(q->conn, &q->cancel);
    if (q->timed_out) { /* whatever the server said after the cancel */
        wk__pq_set_message(q->conn, settled ? "query timed out (cancelled)"
                                            : "query timed out and the server did not answer "
                                              "the cancel request; the connection was given up");
        q->status = WK_ERR_IO;
        memset(&q->err, 0, sizeof q->err);
        wk__pg_fail(&q->err, WK_ERR_IO, 0, "the query timed out");
    } else if (!settled) {
        wk__pq_set_message(q->conn, "the server did not answer the cancel request; the "
                                    "connection was given up");
    } else if (q->status == WK_OK) {
        wk__pq_set_message(q->conn, "");
    }
    if (PQstatus(q->conn->pg) != CONNECTION_BAD) {
        (void)PQsetnonblocking(q->conn->pg, 0);
    }
}

/* Sends the statement for phase `ph` and flushes what fits. */
static bool send_phase(wk_pq_async *q, phase ph)
{
    PGconn *pg = q->conn->pg;
    int ok;
    if (ph == PH_PREPARE) {
        ok = PQsendPrepare(pg, "", q->sql, (int)q->n, q->prm.types);
    } else if (ph == PH_DESCRIBE) {
        ok = PQsendDescribePrepared(pg, "");
    } else {
        /* after a describe the unnamed statement is prepared; else the text goes along */
        const wk__pq_param_arrays *a = &q->prm;
        ok = (q->ph == PH_DESCRIBE ? PQsendQueryPrepared(pg, "", (int)q->n, q->vals, a->lens,
                                                         a->fmts, q->rfmt)
                                   : PQsendQueryParams(pg, q->sql, (int)q->n, a->types, q->vals,
                                                       a->lens, a->fmts, q->rfmt)) &&
             PQsetSingleRowMode(pg);
        q->conn->single_row_left = true;
    }
    if (!ok) {
        wk_error e = {0};
        fail(q, wk__pq_take_error(q->conn, NULL, "sending the query failed", &e), &e);
        return false;
    }
    q->ph = ph;
    int f = PQflush(pg);
    q->write_pending = f > 0;
    return f >= 0;
}

/* One row (a PGRES_SINGLE_TUPLE result) through the plan to the row function. */
static void hand_over(wk_pq_async *q, const PGresult *r)
{
    wk_error e = {0};
    wk_status st = WK_OK;
    if (q->plan == NULL) {
        st = wk_pq_plan(q->conn, r, q->rows_to.kinds, q->rows_to.offsets, &q->plan, &e);
        if (st == WK_ERR_NOT_FOUND) {
            snprintf(q->conn->message, sizeof q->conn->message,
                     "column %zu (%s, type OID %u) has no decoder for its kind", e.offset + 1,
                     PQfname(r, (int)e.offset), PQftype(r, (int)e.offset));
        }
    }
    if (st == WK_OK && q->rows_to.fn != NULL) {
        wk__pq_slices s;
        st = wk__pq_gather(q->plan, r, 0, &s, &e);
        if (st == WK_OK) {
            st = q->rows_to.fn(q->rows_to.ctx, q->plan, s.vals, s.lens, &e);
            wk__pq_slices_release(&s);
        }
    }
    if (st == WK_OK) {
        q->rows++;
    } else {
        fail(q, st, &e);
        wk__pq_cancel_begin(q->conn, &q->cancel);
    }
}

/* Acts on one result of the current phase. */
static void take(wk_pq_async *q, PGresult *r)
{
    ExecStatusType s = PQresultStatus(r);
    if (s == PGRES_FATAL_ERROR || s == PGRES_BAD_RESPONSE || s == PGRES_NONFATAL_ERROR) {
        wk_error e = {0};
        wk_status st = wk__pq_take_error(q->conn, r, "the query failed", &e);
        if (q->status == WK_OK && !q->timed_out) {
            fail(q, st, &e);
        }
        q->stop = true;
        return;
    }
    if (s == PGRES_COPY_IN || s == PGRES_COPY_OUT || s == PGRES_COPY_BOTH) {
        wk_error e = {0};
        wk__pg_fail(&e, WK_ERR_ARG, 0, "a COPY cannot run as a non-blocking query");
        wk__pq_set_message(q->conn, "a COPY cannot run as a non-blocking query");
        fail(q, WK_ERR_ARG, &e);
        (void)wk__pq_abandon(q->conn); /* ends the COPY (blocking, within the cancel's grace) */
        return;
    }
    if (q->ph == PH_DESCRIBE && s == PGRES_COMMAND_OK) {
        q->rfmt = wk__pq_described_format(q->conn, r);
        wk__pq_fmt_remember(q->conn, q->sql, q->prm.types, q->n, q->rfmt);
    } else if (q->ph == PH_EXECUTE && s == PGRES_SINGLE_TUPLE) {
        if (!q->stop) {
            hand_over(q, r);
        }
    } else if (q->ph == PH_EXECUTE && (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK)) {
        snprintf(q->command, sizeof q->command, "%s", PQcmdStatus(r));
    }
}

/* The current phase's results are complete: on to the next, or the end. */
static void advance(wk_pq_async *q)
{
    if (q->stop || q->ph == PH_EXECUTE) {
        finish(q);
    } else if (!send_phase(q, q->ph == PH_PREPARE ? PH_DESCRIBE : PH_EXECUTE)) {
        finish(q);
    }
}

/* Frees the query's own memory (the connection is the caller's). */
static void release(wk_pq_async *q)
{
    wk_pg_plan_free(q->plan);
    wk__pq_param_arrays_free(&q->prm);
    free(q->vals);
    wk_buf_free(&q->buf);
    free(q->sql);
    free(q);
}

/* Encodes the parameters into arrays the query keeps until its execute step is sent. */
static wk_status encode(wk_pq_async *q, const wk_pq_param *params, size_t n, wk_error *err)
{
    if (n > 65535) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "PostgreSQL takes at most 65535 parameters");
    }
    q->n = n;
    q->vals = malloc((n > 0 ? n : 1) * sizeof *q->vals);
    if (q->vals == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for parameters");
    }
    wk_status st = wk__pq_param_arrays_encode(&q->prm, 0, q->conn, params, n, &q->buf, err);
    if (st == WK_OK) {
        wk__pq_param_values(&q->buf, q->prm.offs, n, q->vals);
    }
    return st;
}

/* The query's final status, with its detail copied to err. */
static wk_status outcome(const wk_pq_async *q, wk_error *err)
{
    if (err != NULL && q->status != WK_OK) {
        *err = q->err;
    }
    return q->status;
}

/* Public (wirekit/pq.h): refuses a broken connection or one with a query already in progress,
 * encodes the parameters (kept for the execute step) and sends the prepare; nothing blocks.
 * *out is the caller's to free. */
WK_API wk_status wk_pq_async_start(wk_pq_conn *conn, const char *sql, const wk_pq_param *params,
                                   size_t n, const wk_pq_row_handler *rows, wk_pq_async **out,
                                   wk_error *err)
{
    *out = NULL;
    if (conn == NULL || sql == NULL || (n > 0 && params == NULL)) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "wk_pq_async_start needs a connection and SQL");
    }
    if (conn->broken) {
        wk__pq_set_message(conn, "the connection was given up after a timeout");
        return wk__pg_fail(err, WK_ERR_IO, 0, "the connection is unusable after a timeout");
    }
    if (wk__pq_async_in_flight(conn, "another non-blocking query", err)) {
        return WK_ERR_STATE;
    }
    if (conn->stmts != NULL && conn->stmts->open) {
        wk__pq_set_message(conn, "a non-blocking query cannot start while a pipeline is open on "
                                 "the connection");
        return wk__pg_fail(err, WK_ERR_STATE, 0, "a pipeline is open on the connection");
    }
    if (PQstatus(conn->pg) == CONNECTION_OK && PQtransactionStatus(conn->pg) == PQTRANS_ACTIVE) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "another query is in progress");
    }
    wk__pq_clear_error(conn);
    wk_pq_async *q = calloc(1, sizeof *q);
    size_t len = strlen(sql);
    char *copy = q != NULL ? malloc(len + 1) : NULL;
    if (copy == NULL) {
        free(q);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the query");
    }
    memcpy(copy, sql, len + 1);
    q->sql = copy;
    q->conn = conn;
    wk_buf_init(&q->buf, NULL, 0);
    if (rows != NULL) {
        q->rows_to = *rows;
    }
    wk_status st = encode(q, params, n, err);
    if (st != WK_OK) {
        release(q);
        return st;
    }
    q->deadline = wk__pq_deadline(conn);
    wk__pq_idle_restart(conn);
    q->rfmt = 1;
    bool known = wk__pq_fmt_cached(conn, sql, q->prm.types, n, &q->rfmt);
    q->ph = PH_PREPARE;
    if (PQsetnonblocking(conn->pg, 1) != 0 ||
        !send_phase(q, known ? PH_EXECUTE : PH_PREPARE)) {
        if (q->status == WK_OK) {
            wk_error e = {0};
            fail(q, wk__pq_take_error(conn, NULL, "sending the query failed", &e), &e);
        }
        st = outcome(q, err);
        q->ph = PH_DONE;
        if (PQstatus(conn->pg) != CONNECTION_BAD) {
            (void)PQsetnonblocking(conn->pg, 0);
        }
        wk_pq_async_free(q);
        return st;
    }
    conn->async = q;
    *out = q;
    return WK_OK;
}

/* Public: the socket to wait on (libpq's). */
WK_API int wk_pq_async_socket(const wk_pq_async *q)
{
    return PQsocket(q->conn->pg);
}

/* Public: read always while running, write too while libpq holds unsent data; 0 when done. */
WK_API unsigned wk_pq_async_wants(const wk_pq_async *q)
{
    if (q->ph == PH_DONE) {
        return 0;
    }
    return WK_PQ_WANT_READ | (q->write_pending ? WK_PQ_WANT_WRITE : 0u);
}

/* Public: milliseconds until the next step is due (the deadline or the idle limit, or the
 * cancel's next repeat or the end of its grace), -1 for none, 0 when overdue or done. */
WK_API int wk_pq_async_timeout_ms(const wk_pq_async *q)
{
    if (q->ph == PH_DONE) {
        return 0;
    }
    int64_t idle = wk__pq_idle_until(q->conn);
    int64_t until = q->cancel.sent        ? wk__pq_cancel_due(q->conn, &q->cancel)
                    : idle < q->deadline ? idle
                                         : q->deadline;
    if (until == INT64_MAX) {
        return -1;
    }
    int64_t left = until - wk__pq_now_ms();
    return left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left;
}

/* Public: a new deadline from now (0 = none). */
WK_API void wk_pq_async_set_timeout(wk_pq_async *q, uint32_t timeout_ms)
{
    q->deadline = timeout_ms != 0 ? wk__pq_now_ms() + timeout_ms : INT64_MAX;
}

/* Public: flushes, consumes what the socket has and handles every complete result; returns
 * WK_ERR_AGAIN until the query has ended, then its outcome. A passed deadline or idle limit
 * starts the cancel here. */
WK_API wk_status wk_pq_async_step(wk_pq_async *q, wk_error *err)
{
    if (q->ph == PH_DONE) {
        return outcome(q, err);
    }
    PGconn *pg = q->conn->pg;
    wk__pq_step_look(q->conn, q->cancel.sent, q->write_pending);
    int f = PQflush(pg);
    q->write_pending = f > 0;
    /* on failure the connection is bad, not busy, and PQgetResult hands over the error */
    (void)PQconsumeInput(pg);
    while (q->ph != PH_DONE && !PQisBusy(pg)) {
        PGresult *r = PQgetResult(pg);
        if (r == NULL) {
            advance(q);
            continue;
        }
        take(q, r);
        PQclear(r);
    }
    if (q->ph == PH_DONE) {
        return outcome(q, err);
    }
    if (q->cancel.sent && wk__pq_cancel_tick(q->conn, &q->cancel) < 0) {
        /* the server answers neither the query nor the cancel: give the connection up */
        q->conn->broken = true;
        bool timed_out = q->timed_out;
        finish(q);
        wk__pq_set_message(q->conn, timed_out ? "query timed out and the server did not answer "
                                                "the cancel request; the connection was given up"
                                              : "the server did not answer the cancel request; "
                                                "the connection was given up");
        if (!timed_out) {
            memset(&q->err, 0, sizeof q->err);
            q->status = WK_ERR_IO;
            wk__pg_fail(&q->err, WK_ERR_IO, 0, "the server did not answer the cancel request");
        }
        return outcome(q, err);
    }
    int64_t now = wk__pq_now_ms();
    if (!q->cancel.sent && (now >= q->deadline || now >= wk__pq_idle_until(q->conn))) {
        q->timed_out = true;
        q->stop = true;
        wk__pq_cancel_begin(q->conn, &q->cancel);
    }
    return WK_ERR_AGAIN;
}

/* Public: asks the server to cancel; the outcome arrives through later steps. */
WK_API wk_status wk_pq_async_cancel(wk_pq_async *q, wk_error *err)
{
    if (q->ph == PH_DONE) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "the query has ended");
    }
    wk__pq_cancel_begin(q->conn, &q->cancel);
    return WK_OK;
}

/* Public: the rows handed to the row handler so far. */
WK_API uint64_t wk_pq_async_rows(const wk_pq_async *q)
{
    return q->rows;
}

/* Public: the command tag of the finished statement ("SELECT 3"), "" before. */
WK_API const char *wk_pq_async_command(const wk_pq_async *q)
{
    return q->command;
}

/* Public: a query still running is abandoned first (its results drained or the connection
 * given up, pq_wait.c), so the connection is usable, or marked broken, afterwards. */
WK_API void wk_pq_async_free(wk_pq_async *q)
{
    if (q == NULL) {
        return;
    }
    if (q->ph != PH_DONE) {
        (void)wk__pq_abandon(q->conn);
        finish(q);
    }
    release(q);
}
