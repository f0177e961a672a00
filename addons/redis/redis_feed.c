/*
 * The Redis store's invalidation feed: one thread holds a SUBSCRIBE connection and hands each
 * published key to every registered cache. It waits with poll() on the socket and a stop
 * pipe, so closing the store never waits for a timeout; while idle it sends PING every
 * `heartbeat_ms` and declares the feed lost when no pong comes back within the command
 * timeout (a stalled Redis looks like a dead one). Whenever the feed goes down or comes back,
 * the caches are told, since any message sent in between may have been missed. Each pong
 * also tells them until when their local copies are known current (the ping's send time plus
 * the heartbeat bound): a process stopped for longer (SIGSTOP, a long GC-like pause, a
 * suspended VM) finds that bound passed when it resumes, and reads from Redis until the
 * feed has caught up, instead of serving a copy the buffered messages would have dropped.
 *
 * In the flow, this is the other direction from a cache miss: a put or invalidation
 * (redis_commands.c) PUBLISHes the key, and this thread, on its own connection (not from the
 * pool: a subscribed connection can run no other command), hands it to the watching caches,
 * which drop their local copies. It sits beside the topology (it asks redis_cluster.c which
 * server to subscribe on) and above the pool (whose connect, with AUTH and SELECT, it uses).
 * The trade-off is a PING every heartbeat_ms per store, in exchange for a bound on how stale
 * a local copy can be, and a lost feed noticed within heartbeat_ms + command_timeout_ms.
 */
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "redis/redis_internal.h"

/* Records whether the subscription is live and, when that changes, tells every watcher
 * (under wmu, so a watcher registering meanwhile is told once, by one side or the other). */
static void set_feed(wk_redis_store *s, bool up)
{
    pthread_mutex_lock(&s->wmu);
    if (s->feed_up != up) {
        s->feed_up = up;
        for (size_t i = 0; i < s->nwatch; i++) {
            s->watchers[i]->feed(s->watchers[i]->ctx, up);
        }
    }
    pthread_mutex_unlock(&s->wmu);
}

/* Everything published before `sent_ms` has been delivered: tell the watchers how long
 * their local copies may be trusted without hearing from the feed again. */
static void set_fresh(wk_redis_store *s, int64_t sent_ms)
{
    int64_t until = sent_ms + (int64_t)s->cfg.heartbeat_ms + (int64_t)s->cfg.command_ms;
    pthread_mutex_lock(&s->wmu);
    for (size_t i = 0; i < s->nwatch; i++) {
        if (s->watchers[i]->heard != NULL) {
            s->watchers[i]->heard(s->watchers[i]->ctx, until);
        }
    }
    pthread_mutex_unlock(&s->wmu);
}

void wk__redis_watch(void *self, const wk_cache_watch *w, bool enable)
{
    wk_redis_store *s = self;
    pthread_mutex_lock(&s->wmu);
    if (enable) {
        if (s->nwatch == s->watch_cap) {
            /* Any number of caches may share a store (the list grows); if it cannot grow the
             * cache is never told the feed is up, so it safely keeps its local tier off. */
            size_t cap = s->watch_cap < 8 ? 8 : s->watch_cap * 2;
            const wk_cache_watch **ws = wk_realloc(s->alloc, (void *)s->watchers,
                                                  s->watch_cap * sizeof *ws, cap * sizeof *ws);
            if (ws == NULL) {
                pthread_mutex_unlock(&s->wmu);
                return;
            }
            s->watchers = ws;
            s->watch_cap = cap;
        }
        s->watchers[s->nwatch++] = w;
        if (s->feed_up) {
            w->feed(w->ctx, true);
        }
    } else {
        for (size_t i = 0; i < s->nwatch; i++) {
            if (s->watchers[i] == w) {
                s->watchers[i] = s->watchers[--s->nwatch];
                break;
            }
        }
    }
    pthread_mutex_unlock(&s->wmu);
}

/* Waits up to `ms` for the stop pipe; true when the store is closing. */
static bool wait_stop(wk_redis_store *s, int ms)
{
    struct pollfd p = {s->stop_pipe[0], POLLIN, 0};
    return poll(&p, 1, ms) > 0;
}

/* Handles one reply on the subscribed connection; false when it is not what we expect. */
static bool handle(wk_redis_store *s, const wk__rconn *c, int64_t ping_sent, int64_t *last_pong,
                   bool *subscribed)
{
    const wk__rnode *r = c->nodes;
    if (c->nnodes < 2 || r[0].type != '*' || r[0].n < 1) {
        return false;
    }
    if (wk__rnode_is(c, &r[1], "pong")) {
        /* In subscribed mode PING answers ["pong", ""]. */
        *last_pong = wk__redis_now_ms();
        set_fresh(s, ping_sent);
        return true;
    }
    if (r[0].n < 3 || c->nnodes < 4 || r[1].type != '$') {
        return false;
    }
    if (wk__rnode_is(c, &r[1], "subscribe")) {
        *subscribed = true;
        *last_pong = wk__redis_now_ms();
        set_fresh(s, ping_sent);
        set_feed(s, true);
        return true;
    }
    if (wk__rnode_is(c, &r[1], "message") && r[3].type == '$' && r[3].n >= 0) {
        pthread_mutex_lock(&s->wmu);
        for (size_t i = 0; i < s->nwatch; i++) {
            s->watchers[i]->invalidated(s->watchers[i]->ctx, wk__rnode_str(c, &r[3]),
                                        (size_t)r[3].n);
        }
        pthread_mutex_unlock(&s->wmu);
        return true;
    }
    return true; /* other pub/sub notices are harmless */
}

/* One subscription: returns when it breaks (false) or the store closes (true). */
static bool run_subscription(wk_redis_store *s, wk__rconn *c)
{
    const char *argv[2] = {"SUBSCRIBE", s->cfg.channel};
    size_t lens[2] = {9, s->cfg.channel_len};
    wk_error err;
    int64_t ping_sent = wk__redis_now_ms();
    if (wk__rconn_append(c, 2, argv, lens, &err) != WK_OK ||
        wk__rconn_flush(c, ping_sent + s->cfg.command_ms, &err) != WK_OK) {
        return false;
    }
    bool subscribed = false;
    int64_t last_pong = ping_sent;
    int64_t last_ping = ping_sent;
    for (;;) {
        bool got = true;
        while (got) {
            if (wk__rconn_try_read(c, &s->cfg.lim, &got, &err) != WK_OK) {
                return false;
            }
            if (got && !handle(s, c, ping_sent, &last_pong, &subscribed)) {
                return false;
            }
        }
        int64_t now = wk__redis_now_ms();
        if (now - last_pong > (int64_t)s->cfg.heartbeat_ms + s->cfg.command_ms) {
            return false; /* no pong (or no subscribe confirmation) in time */
        }
        if (subscribed && now - last_ping >= (int64_t)s->cfg.heartbeat_ms) {
            const char *ping[1] = {"PING"};
            size_t plen[1] = {4};
            if (wk__rconn_append(c, 1, ping, plen, &err) != WK_OK ||
                wk__rconn_flush(c, now + s->cfg.command_ms, &err) != WK_OK) {
                return false;
            }
            last_ping = now;
            ping_sent = now;
            continue;
        }
        struct pollfd p[2] = {{c->fd, POLLIN, 0}, {s->stop_pipe[0], POLLIN, 0}};
        int64_t wait = (int64_t)s->cfg.heartbeat_ms - (now - last_ping);
        if (wait < 10) {
            wait = 10;
        }
        if (poll(p, 2, (int)wait) < 0) {
            continue;
        }
        if ((p[1].revents & POLLIN) != 0) {
            return true;
        }
    }
}

/* A connection for the subscriber: the server in use, or in a cluster the next known one
 * (after a failure, the next). NULL with `err` set, a topology refresh asked for. */
static wk__rconn *connect_feed(wk_redis_store *s, wk_error *err)
{
    if (s->cfg.mode != WK__MODE_SINGLE &&
        wk__redis_refresh(s, !__atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE), err) != WK_OK) {
        return NULL;
    }
    wk__rsrv *v;
    if (s->cfg.mode == WK__MODE_CLUSTER) {
        /* PUBLISH in a cluster reaches every node over the cluster bus: any node will do;
         * after a failure, the next one */
        uint32_t n = __atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE);
        v = s->srv[s->feed_rr++ % n];
    } else {
        v = s->srv[__atomic_load_n(&s->master, __ATOMIC_ACQUIRE)];
    }
    wk__rconn *c = wk__redis_connect(s, &v->ep, false, err);
    if (c == NULL) {
        wk__redis_want_refresh(s);
    }
    return c;
}

void *wk__redis_feed_main(void *arg)
{
    wk_redis_store *s = arg;
    for (;;) {
        wk_error err;
        wk__rconn *c = connect_feed(s, &err);
        bool stop;
        if (c != NULL) {
            stop = run_subscription(s, c);
            wk__rconn_free(c);
            set_feed(s, false);
            if (stop) {
                return NULL;
            }
        }
        if (wait_stop(s, (int)s->cfg.retry_ms / 4 + 1)) {
            return NULL;
        }
    }
}

WK_API bool wk_redis_store_feed_up(wk_redis_store *s)
{
    pthread_mutex_lock(&s->wmu);
    bool up = s->feed_up;
    pthread_mutex_unlock(&s->wmu);
    return up;
}
