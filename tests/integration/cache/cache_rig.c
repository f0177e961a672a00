/*
 * The cache integration tests' store-and-cache rig (cache_rig.h).
 */
#include "cache_rig.h"

#include "redis_server.h"

wk_redis_opts cache_rig_opts(const char *url, uint32_t timeout_ms, uint32_t retry_ms)
{
    wk_redis_opts o = {0};
    o.url = url;
    o.connect_timeout_ms = timeout_ms;
    o.command_timeout_ms = timeout_ms;
    o.retry_ms = retry_ms;
    o.heartbeat_ms = 200;
    return o;
}

bool cache_rig_open(cache_rig *g, const wk_redis_opts *o, wk_cache_config cfg, int wait_ms)
{
    g->store = NULL;
    g->cache = NULL;
    if (wk_redis_store_new(o, &g->store, NULL) != WK_OK) {
        return false;
    }
    cfg.store = wk_redis_store_iface(g->store);
    if (wk_cache_new(&cfg, &g->cache, NULL) != WK_OK) {
        return false;
    }
    for (int waited = 0; waited < wait_ms && !wk_redis_store_feed_up(g->store); waited += 10) {
        rs_sleep_ms(10);
    }
    return wk_redis_store_feed_up(g->store);
}

void cache_rig_close(cache_rig *g)
{
    wk_cache_free(g->cache);
    wk_redis_store_free(g->store);
    g->cache = NULL;
    g->store = NULL;
}
