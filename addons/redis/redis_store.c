/*
 * The Redis store object: what wk_redis_store_new() builds and wk_redis_store_free() takes
 * apart, and the wk_cache_store it hands to caches. Building goes up the layers once: the
 * options become a config (redis_url.c) and, for TLS, a context with the certificates read
 * (redis_tls.c), the first server and its pool are made
 * (redis_pool.c; the slot map too in a cluster), the command entries are bound
 * (redis_commands.c) and the subscriber thread is started (redis_feed.c). No connection is
 * made here: the first command and the subscriber connect, so a store can be created while
 * Redis is down. In the flow of a cache miss the store is only the entry point: the cache
 * calls iface.fetch_each, which is redis_mget.c's (or, asynchronously, iface.fetch_async:
 * redis_async.c's I/O thread, started by the first such get; none in a cluster).
 *
 * The trade-off is lazy connection against early failure: a bad URL or option fails here
 * (WK_ERR_ARG), but an unreachable or misconfigured server (wrong password, wrong database)
 * is only reported by the first command or by wk_redis_store_ping(). Freeing stops the
 * asynchronous reader first (every get still pending answered with WK_ERR_IO), then the
 * subscriber (a byte on its stop pipe, then a join), so no callback runs on a cache
 * after it.
 */
#include <string.h>
#include <unistd.h>

#include "redis/redis_internal.h"

WK_API wk_status wk_redis_store_new(const wk_redis_opts *opts, wk_redis_store **out,
                                     wk_error *err)
{
    static const wk_redis_opts defaults;
    if (opts == NULL) {
        opts = &defaults;
    }
    *out = NULL;
    wk_redis_store *s = wk_alloc(opts->alloc, sizeof *s);
    if (s == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    memset(s, 0, sizeof *s);
    s->alloc = opts->alloc;
    pthread_mutex_init(&s->topo_mu, NULL);
    pthread_mutex_init(&s->refresh_mu, NULL);
    pthread_mutex_init(&s->wmu, NULL);
    wk__redis_feed_init(s);
    wk__redis_async_init(s);
    s->stop_pipe[0] = s->stop_pipe[1] = -1;
    s->refresh_after_ms = INT64_MAX;
    wk_status st = wk__redis_config_parse(&s->cfg, opts, s->alloc, err);
    if (st != WK_OK) {
        wk_redis_store_free(s);
        return st;
    }
    /* the certificates and key are read now, so a bad file fails here and not per connect */
    if (s->cfg.tls) {
        st = wk__rtls_ctx_new(opts, &s->tls_ctx, err);
        if (st != WK_OK) {
            wk_redis_store_free(s);
            return st;
        }
    }
    /* server 0: the single server, the first seed node, or (sentinel) a placeholder until
     * the sentinels name the master: the first sentinel, refused as a data node by the
     * refresh that runs before the first command */
    s->srv[0] = wk__redis_srv_new(s->alloc,
                                  s->cfg.mode == WK__MODE_SINGLE ? &s->cfg.ep : &s->cfg.seeds[0],
                                  s->cfg.pool_max);
    if (s->srv[0] != NULL) {
        s->nsrv = 1;
    }
    if (s->cfg.mode == WK__MODE_CLUSTER) {
        s->slots = wk_alloc(s->alloc, WK__SLOTS * sizeof *s->slots);
        if (s->slots != NULL) {
            memset(s->slots, 0, WK__SLOTS * sizeof *s->slots); /* server 0 until mapped */
        }
    }
    if (s->srv[0] == NULL || (s->cfg.mode == WK__MODE_CLUSTER && s->slots == NULL)) {
        wk_redis_store_free(s);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    if (s->cfg.mode != WK__MODE_SINGLE) {
        s->refresh_after_ms = 0; /* the first command finds the topology */
    }
    wk__redis_commands_bind(&s->iface);
    s->iface.watch = s->cfg.subscribe ? wk__redis_watch : NULL;
    s->iface.self = s;
    /* a cluster's gets route by slot and follow redirects: the cache's workers run them on
     * the synchronous path (fetch_each) */
    s->iface.fetch_async = s->cfg.mode == WK__MODE_CLUSTER ? NULL : wk__redis_fetch_async;
    if (s->cfg.subscribe) {
        if (pipe(s->stop_pipe) != 0 ||
            pthread_create(&s->thread, NULL, wk__redis_feed_main, s) != 0) {
            wk_redis_store_free(s);
            return wk_error_set(err, WK_ERR_IO, 0, "redis: cannot start the subscriber");
        }
        s->thread_started = true;
    }
    *out = s;
    return WK_OK;
}

WK_API const wk_cache_store *wk_redis_store_iface(wk_redis_store *s)
{
    return &s->iface;
}

WK_API void wk_redis_store_free(wk_redis_store *s)
{
    if (s == NULL) {
        return;
    }
    wk__redis_async_stop(s); /* every asynchronous get answered, its thread joined */
    if (s->thread_started) {
        ssize_t w = write(s->stop_pipe[1], "x", 1);
        (void)w;
        pthread_join(s->thread, NULL);
    }
    if (s->stop_pipe[0] >= 0) {
        close(s->stop_pipe[0]);
        close(s->stop_pipe[1]);
    }
    for (uint32_t i = 0; i < s->nsrv; i++) {
        wk__redis_srv_free(s->alloc, s->srv[i]);
    }
    if (s->slots != NULL) {
        wk_free(s->alloc, s->slots, WK__SLOTS * sizeof *s->slots);
    }
    wk__redis_config_free(&s->cfg, s->alloc);
    wk__rtls_ctx_free(s->tls_ctx);
    wk_free(s->alloc, (void *)s->watchers, s->watch_cap * sizeof *s->watchers);
    pthread_mutex_destroy(&s->topo_mu);
    pthread_mutex_destroy(&s->refresh_mu);
    pthread_mutex_destroy(&s->wmu);
    wk__redis_feed_destroy(s);
    wk_free(s->alloc, s, sizeof *s);
}
