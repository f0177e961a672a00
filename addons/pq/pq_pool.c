/*
 * A pool of PostgreSQL connections shared by the threads of a service: N slots, each holding
 * at most one wk_pq_conn, handed out one thread at a time (wk_pq_pool_acquire) and given back
 * (wk_pq_pool_release).
 *
 * Design: one mutex and one condition variable guard the slots; nothing slow runs under the
 * mutex. A thread marks a slot busy under it, then checks, connects or closes the slot's
 * connection outside it: the slot is its own until released, so a connect that takes seconds
 * never holds up the threads that use the other slots.
 *
 * Health: a connection is checked each time it is handed out. Its socket is polled without
 * waiting (a backend that was terminated, or a server that shut down, has sent its FATAL
 * report and closed: the socket is readable), and a connection idle for longer than
 * `health_check_ms` makes a round trip (an empty query) first, which also finds a peer that
 * vanished without closing. A dead connection is closed and its slot connected again at once,
 * so that after a server restart the first request does not see the old, dead connection.
 * A connection given back broken (lost, given up after a timeout) or inside a transaction is
 * closed rather than kept.
 *
 * Reconnect: a fresh wk_pq_conn, so its registry snapshot (the catalog is read again: a
 * restarted or restored server may have other type OIDs), its result-format cache and its
 * prepared-statement cache all start empty and are rebuilt on use; nothing from the old
 * session is trusted. A slot whose connect failed waits before its next attempt, twice as
 * long each time from `backoff_min_ms` up to `backoff_max_ms`, so that a server that is down
 * is not flooded; an acquire that would have to wait past its own deadline for that fails at
 * once with the last connect error (WK_ERR_CONNECT), and one whose deadline allows it waits
 * and tries, so that once the server is back requests succeed again without failing first.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"
#include "wirekit/pq.h"

#define DEFAULT_SIZE 4
#define MAX_SIZE 1024
/* The pool's default deadlines: no connect and no query of a pooled connection waits forever
 * on a server that stopped answering (a service thread must come back). */
#define DEFAULT_CONNECT_MS 10000
#define DEFAULT_QUERY_MS 30000
#define DEFAULT_ACQUIRE_MS 5000
#define DEFAULT_HEALTH_MS 30000
#define DEFAULT_BACKOFF_MIN_MS 50
#define DEFAULT_BACKOFF_MAX_MS 2000
/* The round trip of a health check waits at most this long (or the query deadline, when
 * shorter): a healthy server answers an empty query at once. */
#define PING_MS 5000

typedef struct slot {
    wk_pq_conn *conn;   /* NULL: not connected */
    bool busy;          /* handed out, or being checked or connected by a thread */
    int64_t idle_since; /* when it was given back (monotonic ms) */
    int64_t retry_at;   /* no connect attempt before this (after a failed one) */
    uint32_t backoff;   /* the wait after the next failed attempt */
} slot;

struct wk_pq_pool {
    pthread_mutex_t mu;
    pthread_cond_t freed; /* a slot was given back, or its backoff changed */
    char *dsn;
    wk_pg_registry *base;
    wk_pq_pool_opts o; /* with the defaults filled in */
    slot *slots;
    char last_error[512]; /* the last failed connect's message */
    wk_pq_pool_stats stats;
};

/* A value, or its default when 0. */
static uint32_t or_default(uint32_t v, uint32_t def)
{
    return v != 0 ? v : def;
}

/* Public (wirekit/pq.h): copies the options with their defaults; connects nothing yet but
 * the first slot, so that a wrong DSN or password is reported here (the pool is handed out
 * all the same, as a failed wk_pq_connect hands out its connection). */
WK_API wk_status wk_pq_pool_new(const wk_pq_pool_opts *opts, wk_pq_pool **out, wk_error *err)
{
    *out = NULL;
    wk_pq_pool_opts o = {0};
    if (opts != NULL) {
        o = *opts;
    }
    if (o.size > MAX_SIZE) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "a pool holds at most 1024 connections");
    }
    o.size = o.size != 0 ? o.size : DEFAULT_SIZE;
    o.connect_timeout_ms = or_default(o.connect_timeout_ms, DEFAULT_CONNECT_MS);
    o.query_timeout_ms = or_default(o.query_timeout_ms, DEFAULT_QUERY_MS);
    o.acquire_timeout_ms = or_default(o.acquire_timeout_ms, DEFAULT_ACQUIRE_MS);
    o.health_check_ms = or_default(o.health_check_ms, DEFAULT_HEALTH_MS);
    o.backoff_min_ms = or_default(o.backoff_min_ms, DEFAULT_BACKOFF_MIN_MS);
    o.backoff_max_ms = or_default(o.backoff_max_ms, DEFAULT_BACKOFF_MAX_MS);
    if (o.backoff_max_ms < o.backoff_min_ms) {
        o.backoff_max_ms = o.backoff_min_ms;
    }
    wk_pq_pool *p = calloc(1, sizeof *p);
    const char *dsn = o.dsn != NULL ? o.dsn : "";
    if (p != NULL) {
        p->slots = calloc(o.size, sizeof *p->slots);
        p->dsn = malloc(strlen(dsn) + 1);
    }
    if (p == NULL || p->slots == NULL || p->dsn == NULL) {
        if (p != NULL) {
            free(p->slots);
            free(p->dsn);
        }
        free(p);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the pool");
    }
    memcpy(p->dsn, dsn, strlen(dsn) + 1);
    o.dsn = p->dsn;
    o.base = NULL; /* kept as p->base, with a reference */
    p->o = o;
    p->stats.size = o.size;
    wk_status st = WK_OK;
    if (opts != NULL && opts->base != NULL) {
        p->base = wk_pg_registry_ref((wk_pg_registry *)opts->base);
    } else {
        /* one built-in registry for every connection's snapshot, not one per connect */
        st = wk_pg_registry_new_default(NULL, &p->base, err);
    }
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->freed, &ca);
    pthread_condattr_destroy(&ca);
    for (size_t i = 0; i < o.size; i++) {
        p->slots[i].backoff = o.backoff_min_ms;
    }
    if (st != WK_OK) {
        wk_pq_pool_free(p);
        return st;
    }
    wk_pq_conn *c = NULL;
    st = wk_pq_pool_acquire(p, 0, &c, err);
    wk_pq_pool_release(p, c);
    if (st == WK_ERR_NOMEM) {
        wk_pq_pool_free(p);
        return st;
    }
    *out = p; /* also after a failed first connect: its message, and a pool that retries */
    return st;
}

/* Public: closes every connection; none may be checked out. NULL is a no-op. */
WK_API void wk_pq_pool_free(wk_pq_pool *p)
{
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; i < p->o.size; i++) {
        wk_pq_conn_free(p->slots[i].conn);
    }
    pthread_cond_destroy(&p->freed);
    pthread_mutex_destroy(&p->mu);
    wk_pg_registry_unref(p->base);
    free(p->slots);
    free(p->dsn);
    free(p);
}

/* Waits on the condition variable until `until` (monotonic ms); false once it has passed. */
static bool wait_until(wk_pq_pool *p, int64_t until)
{
    if (wk__pq_now_ms() >= until) {
        return false;
    }
    struct timespec ts = {(time_t)(until / 1000), (long)(until % 1000) * 1000000L};
    (void)pthread_cond_timedwait(&p->freed, &p->mu, &ts);
    return true;
}

/* The free slot to take: a connected one, the most recently given back first (its backend's
 * caches are warm and the idle ones age out of use), else the unconnected one that may try
 * soonest; for a fresh connection, an unconnected one that may try now comes first (no live
 * connection is closed for nothing). -1 when every slot is busy. */
static long pick(const wk_pq_pool *p, bool fresh)
{
    if (fresh) {
        int64_t now = wk__pq_now_ms();
        for (size_t i = 0; i < p->o.size; i++) {
            const slot *s = &p->slots[i];
            if (!s->busy && s->conn == NULL && s->retry_at <= now) {
                return (long)i;
            }
        }
    }
    long best = -1;
    for (size_t i = 0; i < p->o.size; i++) {
        const slot *s = &p->slots[i];
        if (s->busy) {
            continue;
        }
        if (best < 0) {
            best = (long)i;
            continue;
        }
        const slot *b = &p->slots[best];
        if (s->conn != NULL && (b->conn == NULL || s->idle_since > b->idle_since)) {
            best = (long)i;
        } else if (s->conn == NULL && b->conn == NULL && s->retry_at < b->retry_at) {
            best = (long)i;
        }
    }
    return best;
}

/* Whether a connection just taken out may serve a request: not lost or given up, nothing
 * unexpected waiting on its socket (the FATAL report and EOF of a terminated backend), and,
 * after a long idle spell, answering a round trip. */
static bool healthy(wk_pq_pool *p, slot *s, int64_t now, bool *pinged)
{
    wk_pq_conn *c = s->conn;
    *pinged = false;
    if (c->broken || PQstatus(c->pg) != CONNECTION_OK) {
        return false;
    }
    /* Input on an idle connection is a notice or the end of the session: a terminated
     * backend's FATAL report, then EOF, which libpq notices on a read after the one that
     * took the report; so read while there is input (a few reads at most). */
    struct pollfd pfd = {PQsocket(c->pg), POLLIN, 0};
    for (int i = 0; i < 8 && poll(&pfd, 1, 0) > 0; i++) {
        if (PQconsumeInput(c->pg) == 0 || PQstatus(c->pg) != CONNECTION_OK) {
            return false;
        }
    }
    if (now - s->idle_since < (int64_t)p->o.health_check_ms) {
        return true;
    }
    *pinged = true;
    uint32_t keep = c->timeout_ms;
    c->timeout_ms = keep != 0 && keep < PING_MS ? keep : PING_MS;
    PGresult *r = NULL;
    wk_status st = wk__pq_run(c, "", &r, NULL);
    bool ok = st == WK_OK && PQresultStatus(r) == PGRES_EMPTY_QUERY;
    PQclear(r);
    c->timeout_ms = keep;
    return ok && !c->broken;
}

/* Hands the slot back: free again, its waiters woken. Under the mutex. */
static void give_back(wk_pq_pool *p, slot *s, int64_t now)
{
    s->busy = false;
    s->idle_since = now;
    p->stats.busy--;
    pthread_cond_broadcast(&p->freed);
}

/* One connection as the pool makes them: wk_pq_connect_limits bounds the connect (socket and
 * set-up) by connect_timeout_ms and gives the connection the pool's idle limit (and the
 * keepalives that go with it), then the per-query deadline becomes query_timeout_ms (one more
 * round trip: SET statement_timeout). */
static wk_status connect_one(wk_pq_pool *p, wk_pq_conn **c, wk_error *err)
{
    wk_pq_limits lim = {0, p->o.connect_timeout_ms, p->o.idle_ms};
    wk_status st = wk_pq_connect_limits(p->dsn, p->base, &lim, c, err);
    if (st == WK_OK) {
        st = wk_pq_set_timeout(*c, p->o.query_timeout_ms, err);
        if (st != WK_OK) {
            /* a set-up that failed, as wk_pq_pool_acquire reports it */
            st = PQstatus((*c)->pg) != CONNECTION_OK
                     ? wk__pg_fail(err, WK_ERR_CONNECT, 0, "the connection was lost while set up")
                     : wk__pg_fail(err, WK_ERR_SERVER, 0, "setting the query deadline failed");
        }
    }
    return st;
}

/* Connects the busy slot `s` (outside the mutex). On failure the slot goes back with its
 * backoff doubled and the error is the connect's. */
static wk_status connect_slot(wk_pq_pool *p, slot *s, wk_pq_conn **out, wk_error *err)
{
    wk_pq_conn *c = NULL;
    wk_error e = {0};
    wk_status st = connect_one(p, &c, &e);
    int64_t now = wk__pq_now_ms();
    pthread_mutex_lock(&p->mu);
    if (st == WK_OK) {
        s->conn = c;
        s->backoff = p->o.backoff_min_ms;
        s->retry_at = 0;
        p->stats.connects++;
        p->stats.open++;
        pthread_mutex_unlock(&p->mu);
        *out = c;
        return WK_OK;
    }
    snprintf(p->last_error, sizeof p->last_error, "%s",
             c != NULL && wk_pq_conn_message(c)[0] != '\0' ? wk_pq_conn_message(c) : e.msg);
    p->stats.connect_failures++;
    s->retry_at = now + s->backoff;
    s->backoff = s->backoff >= p->o.backoff_max_ms / 2 ? p->o.backoff_max_ms : s->backoff * 2;
    give_back(p, s, now);
    pthread_mutex_unlock(&p->mu);
    wk_pq_conn_free(c);
    if (err != NULL) {
        *err = e;
    }
    return st;
}

/* A healthy connection within the deadline (see the file comment for the steps); with
 * `fresh`, one connected for this call: an idle connection taken is closed and its slot
 * connected again. */
static wk_status acquire(wk_pq_pool *p, uint32_t timeout_ms, bool fresh, wk_pq_conn **out,
                         wk_error *err)
{
    *out = NULL;
    int64_t deadline = wk__pq_now_ms() + (timeout_ms != 0 ? timeout_ms : p->o.acquire_timeout_ms);
    bool waited = false;
    pthread_mutex_lock(&p->mu);
    p->stats.acquires++;
    for (;;) {
        long i = pick(p, fresh);
        int64_t now = wk__pq_now_ms();
        if (i < 0) {
            /* every connection is in use: wait for one to come back */
            if (!waited) {
                waited = true;
                p->stats.waits++;
            }
            if (!wait_until(p, deadline)) {
                pthread_mutex_unlock(&p->mu);
                return wk__pg_fail(err, WK_ERR_IO, 0,
                                   "no pooled connection became free within the deadline");
            }
            continue;
        }
        slot *s = &p->slots[i];
        if (s->conn == NULL && s->retry_at > now) {
            /* backing off after a failed connect: wait for it if the deadline allows */
            if (s->retry_at >= deadline) {
                pthread_mutex_unlock(&p->mu);
                return wk__pg_fail(err, WK_ERR_CONNECT, 0,
                                   "cannot connect to the PostgreSQL server (retrying later)");
            }
            (void)wait_until(p, s->retry_at);
            continue;
        }
        s->busy = true;
        p->stats.busy++;
        pthread_mutex_unlock(&p->mu);
        if (s->conn != NULL) {
            bool pinged = false;
            bool ok = !fresh && healthy(p, s, now, &pinged);
            if (ok && !pinged) {
                *out = s->conn; /* the common case: no second trip through the mutex */
                return WK_OK;
            }
            wk_pq_conn *dead = NULL;
            pthread_mutex_lock(&p->mu);
            p->stats.health_checks += pinged;
            if (ok) {
                pthread_mutex_unlock(&p->mu);
                *out = s->conn;
                return WK_OK;
            }
            dead = s->conn;
            s->conn = NULL;
            p->stats.open--;
            p->stats.discarded += !fresh;
            pthread_mutex_unlock(&p->mu);
            wk_pq_conn_free(dead); /* found dead (or replaced): connect again, no backoff */
        }
        return connect_slot(p, s, out, err);
    }
}

/* Public: any healthy connection. */
WK_API wk_status wk_pq_pool_acquire(wk_pq_pool *p, uint32_t timeout_ms, wk_pq_conn **out,
                                    wk_error *err)
{
    return acquire(p, timeout_ms, false, out, err);
}

/* Contract in pq_internal.h: a connection made for this call. */
wk_status wk__pq_pool_acquire_fresh(wk_pq_pool *p, uint32_t timeout_ms, wk_pq_conn **out,
                                    wk_error *err)
{
    return acquire(p, timeout_ms, true, out, err);
}

/* Public: the slot of `conn` becomes free; a broken connection, or one left in a
 * transaction or with a query running, is closed instead of kept. */
WK_API void wk_pq_pool_release(wk_pq_pool *p, wk_pq_conn *conn)
{
    if (p == NULL || conn == NULL) {
        return;
    }
    bool bad = conn->broken || PQstatus(conn->pg) != CONNECTION_OK ||
               PQtransactionStatus(conn->pg) != PQTRANS_IDLE;
    int64_t now = wk__pq_now_ms();
    bool ours = false;
    pthread_mutex_lock(&p->mu);
    for (size_t i = 0; i < p->o.size; i++) {
        slot *s = &p->slots[i];
        if (s->conn == conn && s->busy) {
            ours = true;
            if (bad) {
                s->conn = NULL;
                s->retry_at = 0; /* the next acquire connects it again */
                p->stats.open--;
                p->stats.discarded++;
            }
            give_back(p, s, now);
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    if (bad && ours) {
        wk_pq_conn_free(conn); /* never one the pool did not hand out */
    }
}

/* Public: the counters, read under the mutex (a consistent snapshot). */
WK_API void wk_pq_pool_get_stats(wk_pq_pool *p, wk_pq_pool_stats *out)
{
    pthread_mutex_lock(&p->mu);
    *out = p->stats;
    pthread_mutex_unlock(&p->mu);
}

/* Public: the last failed connect's message, truncated to `cap`. */
WK_API size_t wk_pq_pool_last_error(wk_pq_pool *p, char *buf, size_t cap)
{
    pthread_mutex_lock(&p->mu);
    size_t n = strlen(p->last_error);
    if (cap != 0) {
        size_t k = n < cap ? n : cap - 1;
        memcpy(buf, p->last_error, k);
        buf[k] = '\0';
    }
    pthread_mutex_unlock(&p->mu);
    return n;
}
