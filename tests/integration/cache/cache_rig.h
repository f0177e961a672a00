/*
 * The client side of the cache integration tests: a Redis store and a cache on it, opened
 * together, then the wait for the store's invalidation feed (a cache trusts its local tier
 * only once the feed is up, so a test that starts before it would see stale reads).
 */
#ifndef CACHE_RIG_H
#define CACHE_RIG_H

#include <stdbool.h>
#include <stdint.h>

#include "wirekit/redis.h"

typedef struct cache_rig {
    wk_redis_store *store;
    wk_cache *cache;
} cache_rig;

/** The options the tests share: `url`, connect and command timeouts `timeout_ms`, the
 *  breaker's `retry_ms`, a 200 ms heartbeat; the rest zero (the library's defaults). */
wk_redis_opts cache_rig_opts(const char *url, uint32_t timeout_ms, uint32_t retry_ms);
/** Opens a store with `o` and a cache on it with `cfg` (its store is set here), then waits up
 *  to `wait_ms` for the feed. False when a step fails or the feed is not up in time;
 *  cache_rig_close frees what was opened either way. */
bool cache_rig_open(cache_rig *g, const wk_redis_opts *o, wk_cache_config cfg, int wait_ms);
/** Frees the cache, then its store. */
void cache_rig_close(cache_rig *g);

#endif
