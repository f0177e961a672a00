/*
 * The Redis store's invalidation feed: one thread holds a SUBSCRIBE connection and hands each
 * published key to every registered cache. It waits with poll() on the socket and a stop
 * pipe, so closing the store never waits for a timeout; while idle it sends PING every
 * `heartbeat_ms` and declares the feed lost when no pong comes back within the command
 * timeout (a stalled Redis looks like a dead one). Whenever the feed goes down or comes back,
 * the caches are told, since any message sent in between may have been missed.
 */
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "cache/redis_internal.h"

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

void wk__redis_watch(void *self, const wk_cache_watch *w, bool enable)
{
    wk_redis_store *s = self;
    pthread_mutex_lock(&s->wmu);
    if (enable) {
        if (s->nwatch < WK_REDIS_MAX_WATCH) {
            s->watchers[s->nwatch++] = w;
            if (s->feed_up) {
                w->feed(w->ctx, true);
            }
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

static bool is_pong(const redisReply *r)
{
    /* In subscribed mode PING answers ["pong", ""]. */
    return r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
           r->element[0]->type == REDIS_REPLY_STRING && r->element[0]->len == 4 &&
           memcmp(r->element[0]->str, "pong", 4) == 0;
}

/* Handles one reply on the subscribed connection; false when it is not what we expect. */
static bool handle(wk_redis_store *s, redisReply *r, int64_t *last_pong, bool *subscribed)
{
    if (is_pong(r)) {
        *last_pong = wk__redis_now_ms();
        return true;
    }
    if (r->type != REDIS_REPLY_ARRAY || r->elements < 3 ||
        r->element[0]->type != REDIS_REPLY_STRING) {
        return false;
    }
    const redisReply *kind = r->element[0];
    if (kind->len == 9 && memcmp(kind->str, "subscribe", 9) == 0) {
        *subscribed = true;
        *last_pong = wk__redis_now_ms();
        set_feed(s, true);
        return true;
    }
    if (kind->len == 7 && memcmp(kind->str, "message", 7) == 0 &&
        r->element[2]->type == REDIS_REPLY_STRING) {
        pthread_mutex_lock(&s->wmu);
        for (size_t i = 0; i < s->nwatch; i++) {
            s->watchers[i]->invalidated(s->watchers[i]->ctx, r->element[2]->str,
                                        r->element[2]->len);
        }
        pthread_mutex_unlock(&s->wmu);
        return true;
    }
    return true; /* other pub/sub notices are harmless */
}

/* One subscription: returns when it breaks (false) or the store closes (true). */
static bool run_subscription(wk_redis_store *s, redisContext *c)
{
    const char *argv[2] = {"SUBSCRIBE", s->channel};
    size_t lens[2] = {9, s->channel_len};
    if (redisAppendCommandArgv(c, 2, argv, lens) != REDIS_OK) {
        return false;
    }
    int done = 0;
    bool subscribed = false;
    int64_t last_pong = wk__redis_now_ms();
    int64_t last_ping = last_pong;
    for (;;) {
        while (!done) {
            if (redisBufferWrite(c, &done) != REDIS_OK) {
                return false;
            }
        }
        void *reply = NULL;
        while (redisGetReplyFromReader(c, &reply) == REDIS_OK && reply != NULL) {
            bool ok = handle(s, reply, &last_pong, &subscribed);
            freeReplyObject(reply);
            reply = NULL;
            if (!ok) {
                return false;
            }
        }
        if (c->err != 0) {
            return false;
        }
        int64_t now = wk__redis_now_ms();
        if (now - last_pong > (int64_t)s->heartbeat_ms + s->command_ms) {
            return false; /* no pong (or no subscribe confirmation) in time */
        }
        if (subscribed && now - last_ping >= (int64_t)s->heartbeat_ms) {
            const char *ping[1] = {"PING"};
            size_t plen[1] = {4};
            if (redisAppendCommandArgv(c, 1, ping, plen) != REDIS_OK) {
                return false;
            }
            last_ping = now;
            done = 0;
            continue;
        }
        struct pollfd p[2] = {{c->fd, POLLIN, 0}, {s->stop_pipe[0], POLLIN, 0}};
        int64_t wait = (int64_t)s->heartbeat_ms - (now - last_ping);
        if (wait < 10) {
            wait = 10;
        }
        if (poll(p, 2, (int)wait) < 0) {
            continue;
        }
        if ((p[1].revents & POLLIN) != 0) {
            return true;
        }
        if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
            if (redisBufferRead(c) != REDIS_OK) {
                return false;
            }
        }
    }
}

void *wk__redis_feed_main(void *arg)
{
    wk_redis_store *s = arg;
    for (;;) {
        wk_error err;
        redisContext *c = wk__redis_connect(s, &err);
        bool stop;
        if (c != NULL) {
            stop = run_subscription(s, c);
            redisFree(c);
            set_feed(s, false);
            if (stop) {
                return NULL;
            }
        }
        if (wait_stop(s, (int)s->retry_ms / 4 + 1)) {
            return NULL;
        }
    }
}
