/*
 * The Redis store's connections: the table of servers the store knows (added, never removed),
 * each with a bounded pool of connections, and how a new connection is made ready (AUTH,
 * CLIENT SETNAME, SELECT, pipelined in one round trip, on every connect, so a reconnect
 * restores the session by itself). In the flow of a cache miss (store get -> topology ->
 * pool -> transport -> RESP) this is where a command gets its connection: an idle one, a new
 * one while the pool has room, or a wait for one to come back, bounded by the command's
 * deadline.
 *
 * The circuit breaker lives here too: a connection that fails (reset, timed out, malformed
 * or oversized reply) is dropped and its server marked down for `retry_ms`, during which
 * wk__redis_take() fails at once without touching the network. The trade-off: one failure
 * makes every caller fall back to its loader for retry_ms, even if the server was back a
 * moment later, in exchange for a dead or stalled Redis costing callers the timeout once
 * rather than on every call. Marking down also asks the topology layer for a refresh, by a
 * flag (refresh_after_ms) it reads, not by a call, so this file stays below it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "redis/redis_internal.h"

wk__rsrv *wk__redis_srv_new(const wk_allocator *alloc, const wk__rendpoint *ep, size_t max)
{
    wk__rsrv *v = wk_alloc(alloc, sizeof *v);
    if (v == NULL) {
        return NULL;
    }
    memset(v, 0, sizeof *v);
    v->idle = wk_alloc(alloc, max * sizeof *v->idle);
    if (v->idle == NULL) {
        wk_free(alloc, v, sizeof *v);
        return NULL;
    }
    memset(v->idle, 0, max * sizeof *v->idle);
    v->ep = *ep;
    v->max = max;
    pthread_mutex_init(&v->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&v->cv, &ca);
    pthread_condattr_destroy(&ca);
    return v;
}

void wk__redis_srv_free(const wk_allocator *alloc, wk__rsrv *v)
{
    if (v == NULL) {
        return;
    }
    for (size_t i = 0; i < v->nidle; i++) {
        wk__rconn_free(v->idle[i]);
    }
    wk_free(alloc, v->idle, v->max * sizeof *v->idle);
    pthread_mutex_destroy(&v->mu);
    pthread_cond_destroy(&v->cv);
    wk_free(alloc, v, sizeof *v);
}

wk__rsrv *wk__redis_srv_locked(wk_redis_store *s, const wk__rendpoint *ep)
{
    uint32_t n = __atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        const wk__rendpoint *e = &s->srv[i]->ep;
        if (e->port == ep->port && e->is_unix == ep->is_unix && strcmp(e->host, ep->host) == 0) {
            return s->srv[i];
        }
    }
    if (n == WK__MAX_SRV) {
        return NULL;
    }
    wk__rsrv *v = wk__redis_srv_new(s->alloc, ep, s->cfg.pool_max);
    if (v == NULL) {
        return NULL;
    }
    s->srv[n] = v;
    __atomic_store_n(&s->nsrv, n + 1, __ATOMIC_RELEASE);
    return v;
}

uint32_t wk__redis_srv_index(wk_redis_store *s, const wk__rsrv *v)
{
    uint32_t n = __atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        if (s->srv[i] == v) {
            return i;
        }
    }
    return 0;
}

wk__rsrv *wk__redis_srv(wk_redis_store *s, const char *host, size_t host_len, int port,
                        bool is_unix)
{
    wk__rendpoint ep;
    memset(&ep, 0, sizeof ep);
    if (host_len >= sizeof ep.host || port < 0 || port > 65535) {
        return NULL;
    }
    memcpy(ep.host, host, host_len);
    ep.port = port;
    ep.is_unix = is_unix;
    pthread_mutex_lock(&s->topo_mu);
    wk__rsrv *v = wk__redis_srv_locked(s, &ep);
    pthread_mutex_unlock(&s->topo_mu);
    return v;
}

void wk__redis_want_refresh(wk_redis_store *s)
{
    if (s->cfg.mode == WK__MODE_SINGLE) {
        return;
    }
    int64_t want = wk__redis_now_ms();
    int64_t cur = __atomic_load_n(&s->refresh_after_ms, __ATOMIC_RELAXED);
    while (cur > want &&
           !__atomic_compare_exchange_n(&s->refresh_after_ms, &cur, want, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
}

/* AUTH, CLIENT SETNAME and SELECT, pipelined, on a new connection. */
static wk_status handshake(wk_redis_store *s, wk__rconn *c, wk_error *err)
{
    const char *argv[9];
    size_t lens[9];
    int argc[3];
    const char *msgs[3];
    int ncmd = 0, at = 0;
    char db[16];
    if (s->cfg.has_pass) {
        argv[at] = "AUTH";
        lens[at++] = 4;
        argc[ncmd] = 2;
        if (s->cfg.user[0] != '\0') {
            argv[at] = s->cfg.user;
            lens[at++] = strlen(s->cfg.user);
            argc[ncmd] = 3;
        }
        argv[at] = s->cfg.pass;
        lens[at++] = strlen(s->cfg.pass);
        msgs[ncmd++] = "redis: AUTH refused (does the server have a password or this ACL user? "
                       "Redis < 6 knows no user names)";
    }
    if (s->cfg.name[0] != '\0') {
        argv[at] = "CLIENT";
        lens[at++] = 6;
        argv[at] = "SETNAME";
        lens[at++] = 7;
        argv[at] = s->cfg.name;
        lens[at++] = strlen(s->cfg.name);
        argc[ncmd] = 3;
        msgs[ncmd++] = "redis: CLIENT SETNAME refused (spaces in the client name?)";
    }
    if (s->cfg.db != 0) {
        int dn = snprintf(db, sizeof db, "%u", s->cfg.db);
        argv[at] = "SELECT";
        lens[at++] = 6;
        argv[at] = db;
        lens[at++] = (size_t)dn;
        argc[ncmd] = 2;
        msgs[ncmd++] = "redis: SELECT refused (database number out of range, or a cluster?)";
    }
    if (ncmd == 0) {
        return WK_OK;
    }
    int64_t deadline = wk__redis_now_ms() + s->cfg.command_ms;
    at = 0;
    for (int i = 0; i < ncmd; i++) {
        if (wk__rconn_append(c, argc[i], argv + at, lens + at, err) != WK_OK) {
            return WK_ERR_IO;
        }
        at += argc[i];
    }
    wk_status st = wk__rconn_flush(c, deadline, err);
    wk_status first = WK_OK;
    for (int i = 0; i < ncmd && st == WK_OK; i++) {
        st = wk__rconn_read(c, &s->cfg.lim, deadline, err);
        if (st == WK_OK && first == WK_OK && c->nodes[0].type == '-') {
            first = wk_error_set(err, WK_ERR_IO, 0, wk__redis_refusal(c, &c->nodes[0], msgs[i]));
        }
    }
    return st != WK_OK ? st : first;
}

/* The calling thread's last failed server (wk_redis_store_failed_server): which store, so
 * that another store's failure is not reported, and where. */
static __thread const wk_redis_store *failed_store;
static __thread wk__rendpoint failed_ep;

void wk__redis_note_failed(const wk_redis_store *s, const wk__rendpoint *ep)
{
    failed_store = s;
    failed_ep = *ep;
}

WK_API size_t wk_redis_store_failed_server(wk_redis_store *s, char *out, size_t cap)
{
    if (cap == 0) {
        return 0;
    }
    int n = 0;
    if (failed_store == s && failed_ep.is_unix) {
        n = snprintf(out, cap, "%s", failed_ep.host);
    } else if (failed_store == s && strchr(failed_ep.host, ':') != NULL) {
        n = snprintf(out, cap, "[%s]:%d", failed_ep.host, failed_ep.port); /* IPv6 */
    } else if (failed_store == s) {
        n = snprintf(out, cap, "%s:%d", failed_ep.host, failed_ep.port);
    } else {
        out[0] = '\0';
    }
    return n < 0 ? 0 : (size_t)n >= cap ? cap - 1 : (size_t)n;
}

wk__rconn *wk__redis_connect(wk_redis_store *s, const wk__rendpoint *ep, bool bare,
                             wk_error *err)
{
    wk__rconn *c = wk__rt_open(ep, s->cfg.connect_ms, s->cfg.tls ? s->tls_ctx : NULL,
                               s->cfg.tls_sni, s->alloc, err);
    if (c != NULL && !bare && handshake(s, c, err) != WK_OK) {
        wk__rconn_free(c);
        c = NULL;
    }
    if (c == NULL) {
        wk__redis_note_failed(s, ep);
    }
    return c;
}

/* Fails `v` fast for retry_ms and asks for a topology refresh: a dead master may have been
 * replaced. */
void wk__redis_mark_down(wk_redis_store *s, wk__rsrv *v)
{
    __atomic_store_n(&v->down_until_ms, wk__redis_now_ms() + s->cfg.retry_ms, __ATOMIC_RELEASE);
    wk__redis_want_refresh(s);
}

wk__rconn *wk__redis_take(wk_redis_store *s, wk__rsrv *v, int64_t deadline, wk_error *err)
{
    if (wk__redis_now_ms() < __atomic_load_n(&v->down_until_ms, __ATOMIC_ACQUIRE)) {
        wk__redis_note_failed(s, &v->ep);
        wk_error_set(err, WK_ERR_IO, 0,
                     "redis: unavailable (a recent command failed; retrying soon)");
        return NULL;
    }
    pthread_mutex_lock(&v->mu);
    while (v->nidle == 0 && v->open == v->max) {
        struct timespec ts = {(time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000L};
        if (wk__redis_now_ms() >= deadline ||
            pthread_cond_timedwait(&v->cv, &v->mu, &ts) == ETIMEDOUT) {
            if (v->nidle == 0 && v->open == v->max) {
                pthread_mutex_unlock(&v->mu);
                wk_error_set(err, WK_ERR_IO, 0,
                             "redis: timed out waiting for a pooled connection");
                return NULL;
            }
        }
    }
    if (v->nidle > 0) {
        wk__rconn *c = v->idle[--v->nidle];
        pthread_mutex_unlock(&v->mu);
        return c;
    }
    v->open++;
    pthread_mutex_unlock(&v->mu);
    wk__rconn *c = wk__redis_connect(s, &v->ep, false, err);
    if (c == NULL) {
        pthread_mutex_lock(&v->mu);
        v->open--;
        pthread_cond_signal(&v->cv);
        pthread_mutex_unlock(&v->mu);
        wk__redis_mark_down(s, v);
    }
    return c;
}

void wk__redis_give_back(wk_redis_store *s, wk__rsrv *v, wk__rconn *c, bool broken)
{
    if (broken) {
        wk__rconn_free(c);
        wk__redis_note_failed(s, &v->ep);
        wk__redis_mark_down(s, v);
    }
    pthread_mutex_lock(&v->mu);
    if (broken) {
        v->open--;
    } else {
        v->idle[v->nidle++] = c;
    }
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&v->mu);
}
