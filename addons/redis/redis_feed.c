/*
 * The Redis store's invalidation feed: one thread holds the feed's connections and hands
 * each invalidated key to every registered cache. Two sources feed it. wirekit's own writes
 * PUBLISH the key on the channel, which the first connection SUBSCRIBEs to. And, where the
 * server has it (Redis 6+, unless no_tracking), server-assisted invalidation: each
 * connection speaks RESP3 (HELLO 3) and turns on CLIENT TRACKING in broadcast mode (BCAST,
 * with the configured key prefixes), so the server pushes `invalidate` for every key under
 * them that any client changes: redis-cli DEL, SET, EXPIRE, an expiry, FLUSHDB (a null list:
 * every local copy goes), a program in another language. A server tracks only its own keys,
 * so in a Cluster the feed holds one connection per master, and it is up only while every
 * one of them is.
 *
 * Why BCAST rather than the default mode, where the server remembers each key a connection
 * read: the default mode needs every pooled command connection redirected to the feed's
 * client id (set again on every reconnect of either), tracks a key only once it was read
 * (a value this process put, never read, would go untracked) and costs the server a
 * tracking-table entry per key per process (tracking_table_max_keys evicts, with spurious
 * invalidations, past its cap). BCAST costs one prefix entry per connection and sends each
 * process every write under the prefix: the volume wirekit's PUBLISH already sends for its
 * own writes. bench/cache measures the local-hit cost both ways.
 *
 * This process's own writes must not come back: a load's fill (SET NX) pushed back as an
 * invalidation would drop the copy the load just left (and fence the load's own keep), so
 * every read after a miss would be a Redis round trip. Tracking is turned on with NOLOOP,
 * which spares a connection the pushes of its own writes, and the store's fills, puts and
 * invalidations are lent the feed's connection to their server (wk__redis_feed_lend; RESP3
 * runs any command on a subscribed connection), so a foreign write is still pushed, own
 * writes are not. The server keeps, per key and event-loop turn, the client that wrote it
 * last: a foreign write after an own one in the same turn is pushed; an own write after a
 * foreign one replaces what the foreign one wrote, and the writer's cache keeps what it
 * wrote itself. A put's PUBLISH still reaches the subscription, so the other caches of the
 * process that share the store hear it; on a single server or Sentinel it arrives on the
 * lent connection before PUBLISH's reply, that is before the put keeps its copy. A write
 * that finds no lendable connection (feed down, a redirect to a server without one) takes
 * a pooled connection, and its echo costs a dropped copy, never a stale one. While lent,
 * the writer reads the connection: pushes and the feed's pongs it meets are handled as the
 * feed thread would (the callbacks then run on the writer's thread).
 *
 * It waits with poll() on the sockets and a stop pipe, so closing the store never waits for
 * a timeout; while idle it sends PING on every connection every `heartbeat_ms` and declares
 * the feed lost when a round of pongs is not complete within the command timeout (a stalled
 * Redis looks like a dead one). Whenever the feed goes down or comes back, the caches are
 * told, since any message sent in between may have been missed; so is a change of master
 * (Sentinel after a failover) or of the cluster's masters, seen at each heartbeat: the feed
 * is opened again on the new ones. Each complete round of pongs also tells the caches until
 * when their local copies are known current (the ping's send time plus the heartbeat
 * bound): a process stopped for longer (SIGSTOP, a suspended VM) finds that bound passed
 * when it resumes, and reads from Redis until the feed has caught up.
 *
 * In the flow, this is the other direction from a cache miss. It sits beside the topology
 * (it asks redis_cluster.c for the masters and which server to subscribe on) and above the
 * pool (whose connect, with AUTH and SELECT, it uses; its connections are its own, not the
 * pool's: a subscribed connection can run no other command in RESP2).
 */
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
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
    s->fresh_until = until;
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
            /* The bound first: a cache told "up" alone would trust its copies without limit
             * until the next round of pongs, and a pause before that round would serve a copy
             * a buffered invalidation drops. */
            if (w->heard != NULL) {
                w->heard(w->ctx, s->fresh_until);
            }
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

void wk__redis_feed_init(wk_redis_store *s)
{
    for (uint32_t i = 0; i < WK__MAX_SRV; i++) {
        pthread_mutex_init(&s->feed[i].mu, NULL);
    }
}

void wk__redis_feed_destroy(wk_redis_store *s)
{
    for (uint32_t i = 0; i < WK__MAX_SRV; i++) {
        pthread_mutex_destroy(&s->feed[i].mu);
    }
}

/* Closes the feed's connections (each under its lock: a writer may be using one). */
static void feed_close(wk_redis_store *s)
{
    uint32_t n = __atomic_load_n(&s->nfeed, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        wk__rfeedc *f = &s->feed[i];
        pthread_mutex_lock(&f->mu);
        f->lend = false;
        wk__rconn_free(f->c);
        f->c = NULL;
        f->srv = NULL;
        pthread_mutex_unlock(&f->mu);
    }
    __atomic_store_n(&s->nfeed, 0, __ATOMIC_RELEASE);
}

/* Sends one command and reads its reply before `deadline`: false when the connection
 * failed (then unusable); *refused when the server answered with an error. */
static bool ask_one(wk_redis_store *s, wk__rconn *c, int argc, const char *const *argv,
                    const size_t *lens, int64_t deadline, bool *refused, wk_error *err)
{
    if (wk__rconn_append(c, argc, argv, lens, err) != WK_OK ||
        wk__rconn_flush(c, deadline, err) != WK_OK ||
        wk__rconn_read(c, &s->cfg.lim, deadline, err) != WK_OK) {
        return false;
    }
    *refused = c->nodes[0].type == '-';
    return true;
}

/* HELLO 3, then CLIENT TRACKING ON BCAST NOLOOP [PREFIX p]...: *on tells whether the server
 * took both (Redis < 6 refuses HELLO, an ACL may refuse CLIENT; the connection then stays
 * RESP2, with the PUBLISH path alone). NOLOOP: a write made on this very connection is not
 * pushed back to it, which is why the store's writes are lent it (wk__redis_feed_lend): a
 * load's fill, a put or an invalidation no longer comes back as an invalidation that drops
 * the copy this process just left. False when the connection failed. */
static bool start_tracking(wk_redis_store *s, wk__rconn *c, bool *on, wk_error *err)
{
    *on = false;
    int64_t deadline = wk__redis_now_ms() + s->cfg.command_ms;
    const char *hello[2] = {"HELLO", "3"};
    size_t hello_lens[2] = {5, 1};
    bool refused = false;
    c->resp3 = true; /* HELLO 3's answer is a map */
    if (!ask_one(s, c, 2, hello, hello_lens, deadline, &refused, err)) {
        return false;
    }
    if (refused) {
        c->resp3 = false;
        return true;
    }
    const char *argv[5 + 2 * WK__TRACK_PREFIXES_MAX] = {"CLIENT", "TRACKING", "ON", "BCAST",
                                                        "NOLOOP"};
    size_t lens[5 + 2 * WK__TRACK_PREFIXES_MAX] = {6, 8, 2, 5, 6};
    int argc = 5;
    for (size_t i = 0; i < s->cfg.ntrack; i++) {
        argv[argc] = "PREFIX";
        lens[argc++] = 6;
        argv[argc] = s->cfg.track_prefix[i];
        lens[argc++] = strlen(s->cfg.track_prefix[i]);
    }
    if (!ask_one(s, c, argc, argv, lens, deadline, &refused, err)) {
        return false;
    }
    *on = !refused;
    return true;
}

/* Opens the feed: a connection to the server in use (or, in a cluster, the next known one),
 * and with tracking one more to every other master of a cluster, each tracking; then
 * SUBSCRIBE on the first. False with the feed closed when any step failed (a refresh is
 * asked for). No connection is lent before the feed is announced (run_feed). */
static bool feed_open(wk_redis_store *s, wk_error *err)
{
    s->feed_tracking = false;
    s->feed_subscribed = false;
    if (s->cfg.mode != WK__MODE_SINGLE &&
        wk__redis_refresh(s, !__atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE), err) != WK_OK) {
        return false;
    }
    wk__rsrv *want[WK__MAX_SRV];
    uint32_t nwant;
    if (s->cfg.mode == WK__MODE_CLUSTER) {
        nwant = wk__redis_masters(s, want);
        if (!s->cfg.tracking) {
            /* PUBLISH in a cluster reaches every node over the cluster bus: any node will
             * do for the subscription alone; after a failure, the next one */
            uint32_t n = __atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE);
            want[0] = s->srv[s->feed_rr++ % n];
            nwant = 1;
        }
    } else {
        want[0] = s->srv[__atomic_load_n(&s->master, __ATOMIC_ACQUIRE)];
        nwant = 1;
    }
    bool all_track = s->cfg.tracking;
    for (uint32_t i = 0; i < nwant; i++) {
        wk__rconn *c = wk__redis_connect(s, &want[i]->ep, false, err);
        bool on = false;
        if (c == NULL || (s->cfg.tracking && !start_tracking(s, c, &on, err))) {
            wk__rconn_free(c);
            feed_close(s);
            wk__redis_want_refresh(s);
            return false;
        }
        all_track = all_track && on;
        wk__rfeedc *f = &s->feed[i];
        pthread_mutex_lock(&f->mu);
        f->c = c;
        f->srv = want[i];
        f->ponged = true;
        f->owed = 0;
        f->lend = false;
        pthread_mutex_unlock(&f->mu);
        __atomic_store_n(&s->nfeed, i + 1, __ATOMIC_RELEASE);
    }
    s->feed_tracking = all_track;
    const char *argv[2] = {"SUBSCRIBE", s->cfg.channel};
    size_t lens[2] = {9, s->cfg.channel_len};
    if (wk__rconn_append(s->feed[0].c, 2, argv, lens, err) != WK_OK ||
        wk__rconn_flush(s->feed[0].c, wk__redis_now_ms() + s->cfg.command_ms, err) != WK_OK) {
        feed_close(s);
        return false;
    }
    return true;
}

/* True while the topology is the one the feed was opened on: the same master (sentinel
 * after a failover names another), the same masters of a cluster when it tracks them. */
static bool feed_current(wk_redis_store *s)
{
    uint32_t nf = __atomic_load_n(&s->nfeed, __ATOMIC_ACQUIRE);
    if (s->cfg.mode == WK__MODE_SENTINEL) {
        return s->srv[__atomic_load_n(&s->master, __ATOMIC_ACQUIRE)] == s->feed[0].srv;
    }
    if (s->cfg.mode != WK__MODE_CLUSTER || !s->cfg.tracking) {
        return true;
    }
    wk__rsrv *now[WK__MAX_SRV];
    uint32_t n = wk__redis_masters(s, now);
    if (n != nf) {
        return false;
    }
    for (uint32_t i = 0; i < n; i++) {
        bool found = false;
        for (uint32_t j = 0; j < nf && !found; j++) {
            found = s->feed[j].srv == now[i];
        }
        if (!found) {
            return false;
        }
    }
    return true;
}

/* Hands the keys of an invalidation to every watcher; a null list (FLUSHDB, FLUSHALL, or the
 * server dropping its tracking table) drops every local copy, as a feed reset does. */
static void deliver_invalidation(wk_redis_store *s, const wk__rconn *c, size_t at)
{
    const wk__rnode *r = c->nodes;
    if (r[at].type == '$' && r[at].n < 0) {
        set_feed(s, false);
        set_feed(s, true);
        return;
    }
    if (r[at].type != '*' || r[at].n < 0) {
        return;
    }
    pthread_mutex_lock(&s->wmu);
    for (size_t k = at + 1; k < c->nnodes; k++) {
        if (r[k].type != '$' || r[k].n < 0) {
            continue;
        }
        for (size_t i = 0; i < s->nwatch; i++) {
            s->watchers[i]->invalidated(s->watchers[i]->ctx, wk__rnode_str(c, &r[k]),
                                        (size_t)r[k].n);
        }
    }
    pthread_mutex_unlock(&s->wmu);
}

/* Handles one reply or push on feed connection i (its lock held, by the feed thread or a
 * writer); false when it is not what we expect. A pong settles one PING owed. */
static bool handle(wk_redis_store *s, uint32_t i)
{
    wk__rfeedc *f = &s->feed[i];
    const wk__rconn *c = f->c;
    const wk__rnode *r = c->nodes;
    bool pong = r[0].type == '+' && wk__rnode_is(c, &r[0], "PONG"); /* RESP3, any state */
    if (!pong && c->nnodes >= 2 && r[0].type == '*' && r[0].n >= 1) {
        pong = wk__rnode_is(c, &r[1], "pong"); /* RESP2, subscribed: ["pong", ""] */
    }
    if (pong) {
        f->owed -= f->owed > 0;
        f->ponged = f->owed == 0;
        return true;
    }
    if (c->nnodes < 2 || (r[0].type != '*' && r[0].type != '>') || r[0].n < 1) {
        return false;
    }
    if (r[0].type == '>' && wk__rnode_is(c, &r[1], "invalidate") && r[0].n == 2 &&
        c->nnodes >= 3) {
        deliver_invalidation(s, c, 2);
        return true;
    }
    if (r[0].n < 3 || c->nnodes < 4 || r[1].type != '$') {
        return false;
    }
    if (i == 0 && wk__rnode_is(c, &r[1], "subscribe")) {
        s->feed_subscribed = true;
        return true;
    }
    if (wk__rnode_is(c, &r[1], "message") && r[3].type == '$' && r[3].n >= 0) {
        pthread_mutex_lock(&s->wmu);
        for (size_t w = 0; w < s->nwatch; w++) {
            s->watchers[w]->invalidated(s->watchers[w]->ctx, wk__rnode_str(c, &r[3]),
                                        (size_t)r[3].n);
        }
        pthread_mutex_unlock(&s->wmu);
        return true;
    }
    return true; /* other pub/sub notices are harmless */
}

/* Reads and handles what connection i holds now (buffered, or on the socket), its lock
 * held; false when it failed or sent what the feed does not expect. */
static bool drain(wk_redis_store *s, uint32_t i)
{
    wk_error err;
    bool got = true;
    while (got) {
        if (wk__rconn_try_read(s->feed[i].c, &s->cfg.lim, &got, &err) != WK_OK ||
            (got && !handle(s, i))) {
            return false;
        }
    }
    return true;
}

wk__rfeedc *wk__redis_feed_lend(wk_redis_store *s, const wk__rsrv *v)
{
    if (!__atomic_load_n(&s->tracking_up, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    uint32_t n = __atomic_load_n(&s->nfeed, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        wk__rfeedc *f = &s->feed[i];
        pthread_mutex_lock(&f->mu);
        if (f->lend && f->c != NULL && f->srv == v) {
            return f;
        }
        pthread_mutex_unlock(&f->mu);
    }
    return NULL;
}

wk_status wk__redis_feed_read(wk_redis_store *s, wk__rfeedc *f, int64_t deadline,
                              wk_error *err)
{
    uint32_t i = (uint32_t)(f - s->feed);
    for (;;) {
        wk_status st = wk__rconn_read(f->c, &s->cfg.lim, deadline, err);
        if (st != WK_OK) {
            return st;
        }
        const wk__rnode *r = f->c->nodes;
        /* pushes are the feed's, and so are the pongs of PINGs sent before the writer's
         * commands (the lock orders them); the first other reply is the writer's */
        if (r[0].type != '>' && f->owed == 0) {
            return WK_OK;
        }
        if (!handle(s, i)) {
            return wk_error_set(err, WK_ERR_IO, 0,
                                "redis: unexpected reply on the invalidation feed");
        }
    }
}

void wk__redis_feed_return(wk_redis_store *s, wk__rfeedc *f, bool broken)
{
    /* what came behind the writer's replies would wait in the buffer, unseen by poll() */
    if (broken || !drain(s, (uint32_t)(f - s->feed))) {
        f->lend = false;
        shutdown(f->c->fd, SHUT_RDWR); /* the feed thread's next read fails: a reset */
    }
    pthread_mutex_unlock(&f->mu);
}

/* Sends PING on every connection of the feed. */
static bool ping_all(wk_redis_store *s, int64_t now, wk_error *err)
{
    const char *ping[1] = {"PING"};
    size_t plen[1] = {4};
    uint32_t n = __atomic_load_n(&s->nfeed, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        wk__rfeedc *f = &s->feed[i];
        pthread_mutex_lock(&f->mu);
        bool ok = wk__rconn_append(f->c, 1, ping, plen, err) == WK_OK &&
                  wk__rconn_flush(f->c, now + s->cfg.command_ms, err) == WK_OK;
        f->owed++;
        f->ponged = false;
        pthread_mutex_unlock(&f->mu);
        if (!ok) {
            return false;
        }
    }
    return true;
}

/* True when every connection answered its last PING. */
static bool all_ponged(wk_redis_store *s)
{
    uint32_t n = __atomic_load_n(&s->nfeed, __ATOMIC_ACQUIRE);
    bool round = true;
    for (uint32_t i = 0; i < n && round; i++) {
        pthread_mutex_lock(&s->feed[i].mu);
        round = s->feed[i].ponged;
        pthread_mutex_unlock(&s->feed[i].mu);
    }
    return round;
}

/* One life of the feed: returns when it breaks (false) or the store closes (true). The feed
 * is up from the subscription's confirmation (every tracking connection was set up before
 * it) until then; each round of pongs from every connection proves everything sent before
 * that round's PING was delivered. Each connection is read under its lock, as a writer it
 * is lent to may be reading it too. */
static bool run_feed(wk_redis_store *s)
{
    uint32_t n = __atomic_load_n(&s->nfeed, __ATOMIC_ACQUIRE);
    int64_t ping_sent = wk__redis_now_ms();
    int64_t last_round = ping_sent; /* every connection answered (or: the feed opened) */
    int64_t last_ping = ping_sent;
    bool announced = false;
    wk_error err;
    for (;;) {
        for (uint32_t i = 0; i < n; i++) {
            pthread_mutex_lock(&s->feed[i].mu);
            bool ok = drain(s, i);
            pthread_mutex_unlock(&s->feed[i].mu);
            if (!ok) {
                return false;
            }
        }
        if (s->feed_subscribed && !announced) {
            announced = true;
            __atomic_store_n(&s->tracking_up, s->feed_tracking, __ATOMIC_RELEASE);
            for (uint32_t i = 0; i < n && s->feed_tracking; i++) {
                pthread_mutex_lock(&s->feed[i].mu);
                s->feed[i].lend = true;
                pthread_mutex_unlock(&s->feed[i].mu);
            }
            last_round = wk__redis_now_ms();
            set_fresh(s, ping_sent);
            set_feed(s, true);
        }
        bool round = s->feed_subscribed && all_ponged(s);
        int64_t now = wk__redis_now_ms();
        if (round && last_round < ping_sent) {
            last_round = now;
            set_fresh(s, ping_sent);
        }
        if (now - last_round > (int64_t)s->cfg.heartbeat_ms + s->cfg.command_ms) {
            return false; /* no pong (or no subscribe confirmation) in time */
        }
        if (s->feed_subscribed && round && now - last_ping >= (int64_t)s->cfg.heartbeat_ms) {
            if (!feed_current(s) || !ping_all(s, now, &err)) {
                return false; /* a new master: open the feed on it (a reset) */
            }
            last_ping = now;
            ping_sent = now;
            continue;
        }
        struct pollfd p[WK__MAX_SRV + 1];
        for (uint32_t i = 0; i < n; i++) {
            p[i].fd = s->feed[i].c->fd; /* the feed thread alone closes or replaces it */
            p[i].events = POLLIN;
            p[i].revents = 0;
        }
        p[n].fd = s->stop_pipe[0];
        p[n].events = POLLIN;
        p[n].revents = 0;
        int64_t wait = (int64_t)s->cfg.heartbeat_ms - (now - last_ping);
        if (wait < 10) {
            wait = 10;
        }
        if (poll(p, n + 1, (int)wait) < 0) {
            continue;
        }
        if ((p[n].revents & POLLIN) != 0) {
            return true;
        }
    }
}

void *wk__redis_feed_main(void *arg)
{
    wk_redis_store *s = arg;
    for (;;) {
        wk_error err;
        if (feed_open(s, &err)) {
            bool stop = run_feed(s);
            __atomic_store_n(&s->tracking_up, false, __ATOMIC_RELEASE);
            feed_close(s);
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

WK_API bool wk_redis_store_tracking(wk_redis_store *s)
{
    return __atomic_load_n(&s->tracking_up, __ATOMIC_ACQUIRE) && wk_redis_store_feed_up(s);
}

WK_API bool wk_redis_store_feed_up(wk_redis_store *s)
{
    pthread_mutex_lock(&s->wmu);
    bool up = s->feed_up;
    pthread_mutex_unlock(&s->wmu);
    return up;
}
