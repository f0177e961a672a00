/*
 * Waiting on a libpq connection within its deadline: poll() on the socket for reading and
 * writing, flushing what libpq holds in non-blocking mode, waiting for a result to be ready,
 * giving a query or COPY up (cancel, then drain within the grace), and the cancel every path
 * shares (wk__pq_cancel_begin/tick/wait, its rule in pq_internal.h; the request itself on a
 * helper thread). The wait for a query's last result (wk__pq_wait) is in pq_conn.c.
 *
 * A deadline is an absolute time on the monotonic clock in milliseconds (INT64_MAX: none).
 * The client-side deadline ends a wait on a server that does not answer at all (a stopped
 * backend, a lock the server-side statement_timeout does not cover): the query is cancelled,
 * and if even the cancel gets no answer within its grace the connection is given up
 * (`broken`), so that no later call waits on it again. Every wait that sees the socket ready
 * records it (c->heard_ms): the cancel's grace and the event-loop paths' idle limit count
 * from it.
 *
 * Where it sits: below every blocking path of the glue (pq_conn.c's wk__pq_wait, pq_copy*.c,
 * the pipeline readers) and beside the event-loop paths (pq_async.c, pq_pipeline_step.c,
 * which use the cancel functions but never poll here).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"

/* Contract in pq_internal.h: now + the connection's timeout, INT64_MAX without one. */
int64_t wk__pq_deadline(const wk_pq_conn *c)
{
    return c->timeout_ms != 0 ? wk__pq_now_ms() + c->timeout_ms : INT64_MAX;
}

/* Contract in pq_internal.h: poll() until the socket is ready or the wait ends: at the
 * deadline, or after the connection's idle limit without an event (a server that neither
 * sends nor takes anything). Without either it returns after a minute (so that a clock jump
 * cannot wait forever; the caller polls again). A poll error is left for the next libpq call
 * to report. */
bool wk__pq_poll(wk_pq_conn *c, bool want_write, int64_t deadline)
{
    int64_t until = deadline;
    if (c->idle_ms != 0 && wk__pq_now_ms() + c->idle_ms < until) {
        until = wk__pq_now_ms() + c->idle_ms;
    }
    struct pollfd p = {PQsocket(c->pg), (short)(POLLIN | (want_write ? POLLOUT : 0)), 0};
    for (;;) {
        int64_t left = until == INT64_MAX ? 60000 : until - wk__pq_now_ms();
        if (left <= 0) {
            return false;
        }
        int rc = poll(&p, 1, (int)(left > 60000 ? 60000 : left));
        if (rc > 0) {
            c->heard_ms = wk__pq_now_ms();
        }
        if (rc != 0 || until == INT64_MAX) {
            return true; /* ready, an error for libpq to report, or a minute without limit */
        }
    }
}

/* Contract in pq_internal.h: PQflush until libpq holds nothing, polling for writability. */
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

/* Contract in pq_internal.h: consumes input until PQisBusy says a result is complete (true)
 * or the deadline passes (false). */
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

/* Contract in pq_internal.h: a poll() that does not wait. */
bool wk__pq_look(wk_pq_conn *c, bool want_write)
{
    struct pollfd p = {PQsocket(c->pg), (short)(POLLIN | (want_write ? POLLOUT : 0)), 0};
    if (poll(&p, 1, 0) > 0) {
        c->heard_ms = wk__pq_now_ms();
        return true;
    }
    return false;
}

/* The cancel helper's state, shared by the connection and the request out (each holds a
 * reference), under its mutex: whether a request is out (a connection never has two), and
 * the condition its end is signalled on (wk__pq_cancel_settle waits for it). */
struct wk__pq_canceller {
    pthread_mutex_t mu;
    pthread_cond_t done;
    int refs;
    bool busy;
};

static void canceller_unref(struct wk__pq_canceller *x)
{
    pthread_mutex_lock(&x->mu);
    bool last = --x->refs == 0;
    pthread_mutex_unlock(&x->mu);
    if (last) {
        pthread_cond_destroy(&x->done);
        pthread_mutex_destroy(&x->mu);
        free(x);
    }
}

/* The connection's helper state, made on its first cancel (NULL: no memory). */
static struct wk__pq_canceller *canceller_of(wk_pq_conn *c)
{
    if (c->canceller == NULL) {
        struct wk__pq_canceller *x = calloc(1, sizeof *x);
        pthread_condattr_t ca;
        if (x == NULL || pthread_condattr_init(&ca) != 0) {
            free(x);
            return NULL;
        }
        (void)pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        bool ok = pthread_cond_init(&x->done, &ca) == 0;
        pthread_condattr_destroy(&ca);
        if (!ok || pthread_mutex_init(&x->mu, NULL) != 0) {
            if (ok) {
                pthread_cond_destroy(&x->done);
            }
            free(x);
            return NULL;
        }
        x->refs = 1;
        c->canceller = x;
    }
    return c->canceller;
}

/* Contract in pq_internal.h. */
void wk__pq_canceller_release(wk_pq_conn *c)
{
    if (c->canceller != NULL) {
        canceller_unref(c->canceller);
        c->canceller = NULL;
    }
}

/* One request on the helper thread: the PGcancel is its own (a copy of the server's address
 * and the cancel key), so the connection may be gone by the time PQcancel returns, or
 * PQcancel may never return. Its errors are ignored: the grace decides what happens next. */
typedef struct cancel_job {
    PGcancel *cancel;
    struct wk__pq_canceller *owner;
} cancel_job;

/* The request is over: no longer out, and whoever waits for it told. */
static void job_done(struct wk__pq_canceller *x)
{
    pthread_mutex_lock(&x->mu);
    x->busy = false;
    pthread_cond_broadcast(&x->done);
    pthread_mutex_unlock(&x->mu);
}

static void *run_cancel(void *arg)
{
    cancel_job *j = arg;
    char ebuf[256];
    (void)PQcancel(j->cancel, ebuf, (int)sizeof ebuf);
    PQfreeCancel(j->cancel);
    job_done(j->owner);
    canceller_unref(j->owner);
    free(j);
    return NULL;
}

/* Contract in pq_internal.h. */
bool wk__pq_cancel_out(const wk_pq_conn *c)
{
    struct wk__pq_canceller *x = c->canceller;
    if (x == NULL) {
        return false;
    }
    pthread_mutex_lock(&x->mu);
    bool busy = x->busy;
    pthread_mutex_unlock(&x->mu);
    return busy;
}

/* Hands one request to a detached helper thread, which takes no signal (the caller's
 * handlers run where they ran before): false when none went out (one is still out, or no
 * memory or thread). */
static bool send_request(wk_pq_conn *c)
{
    struct wk__pq_canceller *x = canceller_of(c);
    if (x == NULL || wk__pq_cancel_out(c)) {
        return false; /* the last one is still out: the server has not even closed it */
    }
    cancel_job *j = malloc(sizeof *j);
    PGcancel *cancel = j != NULL ? PQgetCancel(c->pg) : NULL;
    if (cancel == NULL) {
        free(j);
        return false;
    }
    j->cancel = cancel;
    j->owner = x;
    pthread_mutex_lock(&x->mu); /* only the connection's thread starts requests */
    x->busy = true;
    x->refs++;
    pthread_mutex_unlock(&x->mu);
    pthread_attr_t attr;
    sigset_t all, old;
    sigfillset(&all);
    pthread_t t;
    int rc = pthread_attr_init(&attr);
    if (rc == 0) {
        (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        (void)pthread_sigmask(SIG_SETMASK, &all, &old);
        rc = pthread_create(&t, &attr, run_cancel, j);
        (void)pthread_sigmask(SIG_SETMASK, &old, NULL);
        (void)pthread_attr_destroy(&attr);
    }
    if (rc != 0) {
        PQfreeCancel(cancel);
        free(j);
        job_done(x);
        canceller_unref(x);
        return false;
    }
    return true;
}

/* One request, and when the next is due. */
static void request(wk_pq_conn *c, wk__pq_cancelling *k)
{
    if (send_request(c)) {
        k->requests++;
    }
    k->again = wk__pq_now_ms() + WK__PQ_CANCEL_AGAIN_MS;
}

/* The end of the grace: GRACE after the first request or the last time the server was heard
 * from since, at most DRAIN after the first request. */
static int64_t grace_end(const wk_pq_conn *c, const wk__pq_cancelling *k)
{
    int64_t from = c->heard_ms > k->first ? c->heard_ms : k->first;
    int64_t g = from + WK__PQ_CANCEL_GRACE_MS;
    int64_t limit = k->first + WK__PQ_CANCEL_DRAIN_MS;
    return g < limit ? g : limit;
}

/* Contract in pq_internal.h: sends the first cancel request and starts the grace period;
 * later calls do nothing. */
/* Every path that cancels (the blocking wait, the non-blocking query, a pipeline at its
 * deadline, giving a query or COPY up) starts here, and the tick repeats the request until the
 * grace ends: a backend drops a cancel that arrives while it still waits for the command (seen
 * under ASan and load when a query is freed just after it was sent), so one request is not
 * enough. test_pq_cancel sends the first request to an idle backend on purpose. */
void wk__pq_cancel_begin(wk_pq_conn *c, wk__pq_cancelling *k)
{
    if (!k->sent) {
        k->sent = true;
        k->first = wk__pq_now_ms();
        request(c, k);
    }
}

/* Contract in pq_internal.h. */
int64_t wk__pq_cancel_due(const wk_pq_conn *c, const wk__pq_cancelling *k)
{
    int64_t g = grace_end(c, k);
    return k->again < g ? k->again : g;
}

/* Contract in pq_internal.h: repeats the request when it is due; returns when the next tick
 * is due, or -1 once the grace has ended and the socket has nothing. */
int64_t wk__pq_cancel_tick(wk_pq_conn *c, wk__pq_cancelling *k)
{
    int64_t now = wk__pq_now_ms();
    if (now >= grace_end(c, k) && (!wk__pq_look(c, false) || now >= grace_end(c, k))) {
        return -1; /* silent through the grace (or answering past DRAIN) */
    }
    if (now >= k->again) {
        /* the server ignores a cancel that reached the backend before the query did */
        request(c, k);
    }
    return wk__pq_cancel_due(c, k);
}

/* Contract in pq_internal.h: waits on the helper's condition until no request is out or the
 * grace ends. */
bool wk__pq_cancel_settle(wk_pq_conn *c, const wk__pq_cancelling *k)
{
    struct wk__pq_canceller *x = c->canceller;
    if (!k->sent || x == NULL) {
        return true;
    }
    int64_t until = grace_end(c, k);
    pthread_mutex_lock(&x->mu);
    while (x->busy && wk__pq_now_ms() < until) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        int64_t ns = (int64_t)ts.tv_nsec + (until - wk__pq_now_ms()) * 1000000;
        ts.tv_sec += (time_t)(ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
        (void)pthread_cond_timedwait(&x->done, &x->mu, &ts);
    }
    bool settled = !x->busy;
    pthread_mutex_unlock(&x->mu);
    if (!settled) {
        c->broken = true; /* the request may still reach a later query */
    }
    return settled;
}

/* Contract in pq_internal.h: cancels and waits, calling `ended` until it reports the query
 * over (true) or the grace ends (false). */
bool wk__pq_cancel_wait(wk_pq_conn *c, wk__pq_cancelling *k,
                        bool (*ended)(wk_pq_conn *c, int64_t until, void *arg), void *arg)
{
    wk__pq_cancel_begin(c, k);
    for (;;) {
        int64_t until = wk__pq_cancel_tick(c, k);
        if (until < 0) {
            return false;
        }
        if (ended(c, until, arg)) {
            return wk__pq_cancel_settle(c, k);
        }
    }
}

/* What is drained of a query or COPY given up. */
typedef struct drain {
    bool copying; /* try reading data first; PQgetCopyData says when not copying */
    bool failed;  /* the connection broke */
} drain;

/* Drains the query or COPY given up until the connection is idle (true; also when it broke,
 * with d->failed) or `until` passes (false). */
static bool drained(wk_pq_conn *c, int64_t until, void *arg)
{
    drain *d = arg;
    for (;;) {
        if (d->copying) {
            char *buf = NULL;
            int n = PQgetCopyData(c->pg, &buf, 1);
            if (buf != NULL) {
                PQfreemem(buf);
            }
            if (n > 0) {
                continue;
            }
            if (n < 0) {
                d->copying = false; /* over, or not copying (yet): read the results */
                continue;
            }
        } else if (!PQisBusy(c->pg)) {
            PGresult *r = PQgetResult(c->pg);
            if (r == NULL) {
                return true; /* the connection is idle again */
            }
            ExecStatusType s = PQresultStatus(r);
            PQclear(r);
            d->copying = s == PGRES_COPY_OUT;
            /* CopyFail, queued behind any data still held: the server fails the COPY. Not
             * queued (libpq's buffer is full): flush and wait first. */
            if (s != PGRES_COPY_IN || PQputCopyEnd(c->pg, "cancelled by the client") == 1) {
                continue;
            }
        }
        int f = PQflush(c->pg);
        if (f < 0) {
            d->failed = true;
            return true;
        }
        if (!wk__pq_poll(c, f > 0, until)) {
            return false;
        }
        if (PQconsumeInput(c->pg) == 0) {
            d->failed = true;
            return true;
        }
    }
}

/* Contract in pq_internal.h: a query or COPY nobody wants any more: cancelled and drained
 * until the connection is idle; false (and the connection marked broken) when that does not
 * happen within the grace. */
bool wk__pq_abandon(wk_pq_conn *c)
{
    wk__pq_cancelling k = {0};
    drain d = {true, false};
    if (!wk__pq_cancel_wait(c, &k, drained, &d) || d.failed) {
        c->broken = true;
        return false;
    }
    return true;
}
