/*
 * Waiting on a libpq connection within its deadline: the clock, poll() on the socket for
 * reading and writing, flushing what libpq holds in non-blocking mode, the cancel request,
 * and the wait for a query's last result that every blocking call of wirekit-pq goes through.
 *
 * A deadline is an absolute time on the monotonic clock in milliseconds (INT64_MAX: none).
 * The client-side deadline ends a wait on a server that does not answer at all (a stopped
 * backend, a lock the server-side statement_timeout does not cover): the query is cancelled,
 * and if even the cancel gets no answer within one more second the connection is given up
 * (`broken`), so that no later call waits on it again.
 */
#include <errno.h>
#include <poll.h>
#include <time.h>

#include "pg/pg_internal.h"
#include "pg/pq_internal.h"

int64_t wk__pq_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t wk__pq_deadline(const wk_pq_conn *c)
{
    return c->timeout_ms != 0 ? wk__pq_now_ms() + c->timeout_ms : INT64_MAX;
}

bool wk__pq_poll(wk_pq_conn *c, bool want_write, int64_t deadline)
{
    int64_t left = deadline == INT64_MAX ? 60000 : deadline - wk__pq_now_ms();
    if (left <= 0) {
        return false;
    }
    struct pollfd p = {PQsocket(c->pg), (short)(POLLIN | (want_write ? POLLOUT : 0)), 0};
    if (poll(&p, 1, (int)(left > 60000 ? 60000 : left)) < 0 && errno != EINTR) {
        return true; /* the next libpq call reports the failure */
    }
    return true;
}

wk_status wk__pq_flush(wk_pq_conn *c, int64_t deadline, wk_error *err)
{
    for (;;) {
        int f = PQflush(c->pg);
        if (f == 0) {
            return WK_OK;
        }
        if (f < 0) {
            return wk__pq_take_error(c, NULL, "the connection was lost", err);
        }
        /* libpq reads what the server sends while it cannot write (no deadlock) */
        if (!wk__pq_poll(c, true, deadline)) {
            return wk__pg_fail(err, WK_ERR_IO, 0, "the server did not take the data in time");
        }
        if (PQconsumeInput(c->pg) == 0) {
            return wk__pq_take_error(c, NULL, "the connection was lost", err);
        }
    }
}

void wk__pq_cancel(wk_pq_conn *c)
{
    PGcancel *cancel = PQgetCancel(c->pg);
    char ebuf[256];
    if (cancel != NULL) {
        (void)PQcancel(cancel, ebuf, (int)sizeof ebuf);
        PQfreeCancel(cancel);
    }
}

bool wk__pq_await_ready(wk_pq_conn *c, int64_t deadline)
{
    for (;;) {
        int f = PQflush(c->pg);
        if (PQconsumeInput(c->pg) == 0 || !PQisBusy(c->pg)) {
            return true; /* ready, or the connection is bad (and so not busy) */
        }
        if (!wk__pq_poll(c, f > 0, deadline)) {
            return false;
        }
    }
}

bool wk__pq_abandon(wk_pq_conn *c)
{
    wk__pq_cancel(c);
    int64_t deadline = wk__pq_now_ms() + 1000;
    bool copying = true; /* try reading data first; PQgetCopyData says when not copying */
    for (;;) {
        if (copying) {
            char *buf = NULL;
            int n = PQgetCopyData(c->pg, &buf, 1);
            if (buf != NULL) {
                PQfreemem(buf);
            }
            if (n > 0) {
                continue;
            }
            if (n < 0) {
                copying = false; /* over, or not copying (yet): read the results */
                continue;
            }
        } else if (!PQisBusy(c->pg)) {
            PGresult *r = PQgetResult(c->pg);
            if (r == NULL) {
                return true; /* the connection is idle again */
            }
            ExecStatusType s = PQresultStatus(r);
            PQclear(r);
            copying = s == PGRES_COPY_OUT;
            /* CopyFail, queued behind any data still held: the server fails the COPY. Not
             * queued (libpq's buffer is full): flush and wait first. */
            if (s != PGRES_COPY_IN || PQputCopyEnd(c->pg, "cancelled by the client") == 1) {
                continue;
            }
        }
        int f = PQflush(c->pg);
        if (f < 0 || !wk__pq_poll(c, f > 0, deadline) || PQconsumeInput(c->pg) == 0) {
            c->broken = true;
            return false;
        }
    }
}

/* Reads results until the query is done or `deadline` passes (true: done). A lost
 * connection is done too: PQgetResult then hands over libpq's error result. */
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
            /* Keep the last result, as PQexec does (an error result wins). */
            if (*res != NULL && PQresultStatus(*res) == PGRES_FATAL_ERROR) {
                PQclear(r);
            } else {
                PQclear(*res);
                *res = r;
            }
            if (PQstatus(c->pg) == CONNECTION_BAD) {
                return true; /* nothing more will come */
            }
        }
        if (!wk__pq_poll(c, false, deadline)) {
            return false;
        }
    }
}

wk_status wk__pq_wait(wk_pq_conn *c, PGresult **res, wk_error *err)
{
    *res = NULL;
    if (collect(c, wk__pq_deadline(c), res)) {
        if (*res == NULL) {
            if (PQstatus(c->pg) == CONNECTION_BAD) {
                return wk__pq_take_error(c, NULL, "the connection was lost", err);
            }
            wk__pq_set_message(c, PQerrorMessage(c->pg));
            return wk__pg_fail(err, WK_ERR_IO, 0, "the query returned no result");
        }
        return WK_OK;
    }
    /* Past the deadline: ask the server to cancel, and give it one more second. */
    wk__pq_cancel(c);
    bool done = collect(c, wk__pq_now_ms() + 1000, res);
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
