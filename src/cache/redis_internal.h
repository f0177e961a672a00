/*
 * Internals of the Redis store (wirekit-redis): the store object shared by the command pool
 * (redis_store.c) and the invalidation feed (redis_feed.c).
 */
#ifndef WK_REDIS_INTERNAL_H
#define WK_REDIS_INTERNAL_H

#include <hiredis/hiredis.h>
#include <pthread.h>

#include "wirekit/redis.h"

#define WK_REDIS_MAX_WATCH 64

struct wk_redis_store {
    const wk_allocator *alloc; /* the store's own memory (NULL = libc) */
    char host[256];
    int port;
    unsigned db;
    char channel[128];
    size_t channel_len;
    uint32_t connect_ms;
    uint32_t command_ms;
    uint32_t retry_ms;
    uint32_t heartbeat_ms;
    /* command pool */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    redisContext **idle;
    size_t nidle;
    size_t open;     /* connections in use or idle */
    size_t max;
    int64_t down_until_ms; /* atomic: fail fast until then */
    /* feed */
    bool subscribe;
    pthread_t thread;
    bool thread_started;
    int stop_pipe[2];
    pthread_mutex_t wmu;   /* watchers and feed state */
    const wk_cache_watch *watchers[WK_REDIS_MAX_WATCH];
    size_t nwatch;
    bool feed_up;
    wk_cache_store iface;
};

int64_t wk__redis_now_ms(void);

/** Connects with the store's timeouts (and SELECTs its database). NULL with `err` set. */
redisContext *wk__redis_connect(wk_redis_store *s, wk_error *err);

/** The subscriber thread's body (redis_feed.c). */
void *wk__redis_feed_main(void *arg);

/** Registers or unregisters a watcher (redis_feed.c). */
void wk__redis_watch(void *self, const wk_cache_watch *w, bool enable);

#endif
