/*
 * What comes back to a pipeline, read in order: libpq's events (a result, the end of a
 * query's results, a Sync), taken from the queue an event loop filled (pq_pipeline_step.c)
 * or else waited for on the socket, and the outcome each statement's result gives.
 *
 * The blocking wait, next_event(), polls the socket (pq_wait.c's wk__pq_poll) for reading
 * always and for writing while output is pending, flushing and consuming input on every
 * turn, so a server that writes results while the client is still sending can never
 * deadlock the two; it has no other blocking call. Past the deadline or the idle limit it
 * cancels the batch, and from then on every wait is the cancel's (its grace, pq_internal.h).
 *
 * A statement is OK only when its result arrived, FAILED only when the server's error report
 * (with a SQLSTATE) arrived; an error libpq makes up itself (a lost connection) ends the
 * reading and every statement not answered yet is UNKNOWN.
 */
#include "pq/pq_pipeline.h"

char wk__pq_sync_mark;

typedef enum ev { EV_RESULT, EV_END, EV_SYNC, EV_LOST } ev;

/* Contract in pq_pipeline.h: the first reason the batch was lost sticks, with libpq's text
 * (or msg) as the connection's message. */
void wk__pq_pipe_set_lost(wk_pq_pipeline *p, wk_status st, const char *msg)
{
    if (p->lost == WK_OK) {
        p->lost = st;
        wk__pq_set_message(p->c, msg != NULL ? msg : PQerrorMessage(p->c->pg));
    }
}

/* Contract in pq_pipeline.h: the cancel went unanswered: the connection is marked broken. */
void wk__pq_pipe_give_up(wk_pq_pipeline *p)
{
    p->c->broken = true;
    wk__pq_pipe_set_lost(p, WK_ERR_IO, "the pipeline timed out and the server did not answer "
                                       "the cancel request; the connection was given up");
}

/* Contract in pq_pipeline.h: a fresh deadline and idle limit from now (each outcome read
 * renews them, so the timeout bounds a wait, not the whole batch). */
void wk__pq_pipe_renew_deadline(wk_pq_pipeline *p)
{
    uint32_t t = p->c->timeout_ms;
    p->deadline = t != 0 ? wk__pq_now_ms() + t : INT64_MAX;
    wk__pq_idle_restart(p->c);
}

/* libpq's answers do not match what was sent: nothing read from here on can be trusted. */
static void mismatch(wk_pq_pipeline *p)
{
    p->c->broken = true;
    wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, "the server's answers did not match the pipeline's "
                                            "statements; the connection was given up");
}

/* An answer that should not be missing is: lost with the connection, else a mismatch. */
static void missing(wk_pq_pipeline *p)
{
    if (PQstatus(p->c->pg) == CONNECTION_BAD) {
        wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
    } else {
        mismatch(p);
    }
}

/* wk__pq_cancel_wait's wait in a pipeline: the server's next answer (or a broken
 * connection), flushing the batch's pending output meanwhile. */
static bool answered(wk_pq_conn *c, int64_t until, void *arg)
{
    (void)arg;
    return wk__pq_await_ready(c, until);
}

/* The next thing libpq has for the pipeline: a result, the end of a query's results (libpq's
 * NULL), a Sync, or EV_LOST when nothing more can come. Flushes pending output and consumes
 * input while it waits; past the deadline or the idle limit cancels the batch, and once it
 * is cancelled waits within the cancel's grace (wk__pq_cancel_wait). */
static ev next_event(wk_pq_pipeline *p, PGresult **r)
{
    wk_pq_conn *c = p->c;
    *r = NULL;
    if (p->lost != WK_OK) {
        return EV_LOST;
    }
    if (p->q_head < p->q_n) {
        *r = p->q[p->q_head++];
        if (*r == WK__PQ_SYNC_EV) {
            *r = NULL;
            return EV_SYNC;
        }
        return *r == NULL ? EV_END : EV_RESULT;
    }
    if (p->driven) {
        missing(p); /* a driven call runs only once its answers are queued */
        return EV_LOST;
    }
    for (;;) {
        if (p->flushing) {
            int f = PQflush(c->pg);
            if (f < 0) {
                wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
                return EV_LOST;
            }
            p->flushing = f == 1;
        }
        if (!PQisBusy(c->pg)) {
            *r = PQgetResult(c->pg);
            wk__pq_pipe_renew_deadline(p);
            if (*r == NULL) {
                return EV_END;
            }
            if (PQresultStatus(*r) == PGRES_PIPELINE_SYNC) {
                PQclear(*r);
                *r = NULL;
                return EV_SYNC;
            }
            return EV_RESULT;
        }
        if (PQstatus(c->pg) == CONNECTION_BAD) {
            wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, NULL);
            return EV_LOST;
        }
        if (p->cancel.sent || wk__pq_now_ms() >= p->deadline ||
            !wk__pq_poll(c, p->flushing, p->deadline)) {
            /* the running statement fails with 57014, the rest of the batch is aborted */
            p->cancelled = true;
            if (!wk__pq_cancel_wait(c, &p->cancel, answered, NULL)) {
                wk__pq_pipe_give_up(p);
                return EV_LOST;
            }
            continue;
        }
        (void)PQconsumeInput(c->pg); /* a failure shows as CONNECTION_BAD or a result */
    }
}

/* The next query's result, or NULL once lost. */
PGresult *wk__pq_pipe_read_result(wk_pq_pipeline *p)
{
    PGresult *r = NULL;
    switch (next_event(p, &r)) {
    case EV_RESULT: return r;
    case EV_END: missing(p); return NULL;
    case EV_SYNC: mismatch(p); return NULL;
    case EV_LOST: return NULL;
    }
    return NULL;
}

/* Reads the end of a query's results (false: lost). */
bool wk__pq_pipe_read_end(wk_pq_pipeline *p)
{
    PGresult *r = NULL;
    ev e = next_event(p, &r);
    PQclear(r);
    if (e != EV_END && e != EV_LOST) {
        mismatch(p);
    }
    return e == EV_END;
}

/* A result libpq made up itself (no SQLSTATE from the server) while the connection broke. */
static bool from_libpq(const PGresult *r)
{
    return PQresultErrorField(r, PG_DIAG_SQLSTATE) == NULL;
}

/* Reads up to a Sync (false: lost). An error before it is the commit's (a deferred
 * constraint, a serialization failure): the batch failed although its statements ran. */
bool wk__pq_pipe_read_sync(wk_pq_pipeline *p)
{
    for (;;) {
        PGresult *r = NULL;
        ev e = next_event(p, &r);
        if (e == EV_RESULT && PQresultStatus(r) == PGRES_FATAL_ERROR && !from_libpq(r)) {
            (void)wk__pq_take_error(p->c, r, "the pipeline's commit failed", NULL);
            p->failed = true;
        } else if (e == EV_RESULT) {
            mismatch(p);
        }
        PQclear(r);
        if (e != EV_RESULT && e != EV_END) {
            return e == EV_SYNC;
        }
    }
}

/* What the result of a statement says about it. */
static wk_pq_stmt_state classify(wk_pq_pipeline *p, const wk__pq_pipe_stmt *s, PGresult *r)
{
    switch (PQresultStatus(r)) {
    case PGRES_TUPLES_OK:
    case PGRES_COMMAND_OK:
    case PGRES_EMPTY_QUERY: return WK_PQ_STMT_OK;
    case PGRES_PIPELINE_ABORTED: return WK_PQ_STMT_ABORTED;
    case PGRES_FATAL_ERROR:
    case PGRES_NONFATAL_ERROR:
    case PGRES_BAD_RESPONSE:
        if (from_libpq(r)) {
            wk__pq_pipe_set_lost(p, WK_ERR_CONNECT, PQresultErrorMessage(r));
            return WK_PQ_STMT_UNKNOWN;
        }
        (void)wk__pq_take_error(p->c, r, "a statement of the pipeline failed", NULL);
        p->failed = true;
        if (s->slot >= 0 && p->sc->slots[s->slot].batch == p->batch) {
            /* its prepared statement is gone (26000) or stale (0A000: "cached plan must
             * not change result type"): prepare it afresh next time */
            const char *state = p->c->last.sqlstate;
            if (strcmp(state, "26000") == 0 || strcmp(state, "0A000") == 0) {
                wk__pq_stmt_forget(p->sc, s->slot, state[0] == '0');
            }
        }
        return WK_PQ_STMT_FAILED;
    default:
        /* COPY and the like cannot run in a pipeline: the protocol state is unknown */
        mismatch(p);
        return WK_PQ_STMT_UNKNOWN;
    }
}

/* The next statement's outcome (wk_pq_pipeline_next, and wk_pq_pipeline_step once its
 * answers are queued). */
wk_status wk__pq_pipe_next_outcome(wk_pq_pipeline *p, wk_pq_stmt_result *out)
{
    memset(out, 0, sizeof *out);
    if (p->state == WK__PQ_PIPE_ADDING) {
        wk__pq_pipe_start(p);
    }
    PQclear(p->cur);
    p->cur = NULL;
    if (p->next >= p->n) {
        return WK_ERR_EOF;
    }
    const wk__pq_pipe_stmt *s = &p->stmts[p->next];
    out->index = p->next++;
    out->state = WK_PQ_STMT_UNKNOWN;
    if (p->need_end) {
        p->need_end = false;
        (void)wk__pq_pipe_read_end(p);
    }
    PGresult *r = wk__pq_pipe_read_result(p);
    if (r == NULL) {
        return WK_OK; /* lost: UNKNOWN */
    }
    out->state = classify(p, s, r);
    p->need_end = true;
    if (out->state == WK_PQ_STMT_OK || out->state == WK_PQ_STMT_FAILED) {
        p->cur = r;
        out->res = r;
        out->error = out->state == WK_PQ_STMT_FAILED ? wk_pq_last_error(p->c) : NULL;
    } else {
        PQclear(r);
    }
    return WK_OK;
}

