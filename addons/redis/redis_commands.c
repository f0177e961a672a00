/*
 * The Redis store's commands, the entries of the wk_cache_store a cache is given: fetch (the
 * multi-get, in redis_mget.c, with the values copied out), store (put or fill), invalidate
 * and remove; and wk__redis_run_on(), which runs a short pipeline about one key on its
 * server and follows cluster redirects, for these and for redis_admin.c. In the flow (cache
 * -> store command -> topology -> pool -> transport -> RESP) each command routes its key
 * (redis_cluster.c), checks a connection out, pipelines its commands on it under one
 * deadline and gives the connection back, broken when anything but an error reply failed.
 * The cache's writes (fill, put, invalidate) take the feed's connection to the server
 * instead while tracking is up (redis_feed.c: tracked with NOLOOP, so they are not pushed
 * back to this process); remove, the admin calls and every read take pooled ones.
 *
 * Writes are ordered for correctness when Redis refuses them: a put or an invalidation
 * deletes the key first (DEL is allowed at maxmemory), then writes the value or tombstone,
 * then publishes, so a refused write leaves no old value behind. Every write publishes,
 * whether or not this store subscribes. The trade-off is three commands per write instead of
 * one (in one round trip, pipelined), for a store that never serves a stale value after a
 * write it refused. An error reply (`-ERR`, `-OOM`) keeps the connection and is reported
 * with which command was refused.
 */
#include <stdio.h>
#include <string.h>

#include "redis/redis_internal.h"

/* `fetch`: the values copied into vals[i] (the cache uses r_fetch_each instead). */
typedef struct copy_ctx {
    wk_buf *vals;
    bool *found;
} copy_ctx;

/* The `take` of r_fetch: appends the value to vals[i] and marks it found. */
static wk_status copy_value(void *ctx, size_t i, const uint8_t *bytes, size_t len)
{
    copy_ctx *cc = ctx;
    wk_status st = wk_buf_append(&cc->vals[i], bytes, len);
    cc->found[i] = st == WK_OK;
    return st;
}

/* `fetch`: wk__redis_fetch_each() with every value copied out; found[i] false for a miss. */
static wk_status r_fetch(void *self, size_t n, const wk_slice *keys, wk_buf *vals,
                         bool *found, wk_error *err)
{
    for (size_t i = 0; i < n; i++) {
        found[i] = false;
    }
    copy_ctx cc = {vals, found};
    return wk__redis_fetch_each(self, n, keys, copy_value, &cc, err);
}

/* A connection for one attempt: the feed's to `v` when `lend` and it can be lent (*f set),
 * else a pooled one; read_reply() and put_back() undo either. */
static wk__rconn *take(wk_redis_store *s, wk__rsrv *v, bool lend, int64_t deadline,
                       wk__rfeedc **f, wk_error *err)
{
    *f = lend ? wk__redis_feed_lend(s, v) : NULL;
    return *f != NULL ? (*f)->c : wk__redis_checkout(s, v, deadline, err);
}

static wk_status read_reply(wk_redis_store *s, wk__rconn *c, wk__rfeedc *f, int64_t deadline,
                            wk_error *err)
{
    return f != NULL ? wk__redis_feed_read(s, f, deadline, err)
                     : wk__rconn_read(c, &s->cfg.lim, deadline, err);
}

static void put_back(wk_redis_store *s, wk__rsrv *v, wk__rconn *c, wk__rfeedc *f, bool broken)
{
    if (f != NULL) {
        if (broken) {
            wk__redis_note_failed(s, &v->ep);
        }
        wk__redis_feed_return(s, f, broken);
    } else {
        wk__redis_give_back(s, v, c, broken);
    }
}

/* The contract is in redis_internal.h. Every attempt takes its connection anew: a redirect
 * names another server, and the pipeline is sent again whole there (ASKING before each
 * command after -ASK). */
wk_status wk__redis_run_on(wk_redis_store *s, wk__rsrv *v, int ncmd, const int *argc,
                           const char **argv, const size_t *lens, const char *const *msgs,
                           bool wait, bool lend, wk_error *err)
{
    wk__redis_maybe_refresh(s);
    int64_t deadline = wk__redis_now_ms() + s->cfg.command_ms;
    bool asking = false;
    char wn[16], wt[16];
    int wnl = snprintf(wn, sizeof wn, "%u", s->cfg.wait_replicas);
    uint32_t wms = s->cfg.command_ms > 20 ? s->cfg.command_ms / 2 : 10;
    int wtl = snprintf(wt, sizeof wt, "%u", wms);
    for (int attempt = 0; attempt < 3; attempt++) {
        wk__rfeedc *f = NULL;
        wk__rconn *c = take(s, v, lend, deadline, &f, err);
        if (c == NULL) {
            return WK_ERR_IO;
        }
        wk_status st = wk__rconn_append_cmds(c, ncmd, argc, argv, lens, asking, err);
        if (st == WK_OK && wait) {
            const char *wargv[3] = {"WAIT", wn, wt};
            size_t wlens[3] = {4, (size_t)wnl, (size_t)wtl};
            st = wk__rconn_append(c, 3, wargv, wlens, err);
        }
        if (st == WK_OK) {
            st = wk__rconn_flush(c, deadline, err);
        }
        if (st != WK_OK) {
            put_back(s, v, c, f, true);
            return st;
        }
        wk_status first = WK_OK;
        wk__rsrv *to = NULL;
        int kind = 0;
        for (int i = 0; i < ncmd + (wait ? 1 : 0); i++) {
            st = WK_OK;
            if (asking && i < ncmd) {
                st = read_reply(s, c, f, deadline, err);
            }
            if (st == WK_OK) {
                st = read_reply(s, c, f, deadline, err);
            }
            if (st != WK_OK) {
                put_back(s, v, c, f, true);
                return st;
            }
            const wk__rnode *r = &c->nodes[0];
            wk__rsrv *t = NULL;
            int k = s->cfg.mode == WK__MODE_CLUSTER ? wk__redis_redirect(s, c, r, v, &t) : 0;
            if (k != 0) {
                if (kind == 0) {
                    kind = k;
                    to = t;
                }
                continue;
            }
            if (i == ncmd) { /* WAIT */
                if (first == WK_OK && kind == 0 &&
                    (r->type != ':' || r->n < (int64_t)s->cfg.wait_replicas)) {
                    first = wk_error_set(err, WK_ERR_IO, 0,
                                         "redis: write not acknowledged by the replicas asked "
                                         "for (WAIT); it may be lost in a failover");
                }
            } else if (r->type == '-' && first == WK_OK) {
                first = wk_error_set(err, WK_ERR_IO, 0, wk__redis_refusal(c, r, msgs[i]));
                if (r->n >= 8 && memcmp(wk__rnode_str(c, r), "READONLY", 8) == 0) {
                    wk__redis_want_refresh(s); /* a demoted master: ask for the new one */
                }
            }
        }
        put_back(s, v, c, f, false);
        if (kind == 0) {
            return first;
        }
        v = to;
        asking = kind == 2;
    }
    return wk_error_set(err, WK_ERR_IO, 0, "redis: too many cluster redirects");
}

/* wk__redis_run_on() on the server of `key`; `wait` asks for WAIT only when the store was
 * configured with wait_replicas. */
static wk_status run(wk_redis_store *s, const char *key, size_t key_len, int ncmd,
                     const int *argc, const char **argv, const size_t *lens,
                     const char *const *msgs, bool wait, bool lend, wk_error *err)
{
    wk__redis_maybe_refresh(s);
    /* routed with the first map, not before it (the command's deadline bounds the wait) */
    if (wk__redis_await_map(s, wk__redis_now_ms() + s->cfg.command_ms, err) != WK_OK) {
        return WK_ERR_IO;
    }
    return wk__redis_run_on(s, wk__redis_route(s, key, key_len), ncmd, argc, argv, lens, msgs,
                  wait && s->cfg.wait_replicas > 0, lend, err);
}

/* `store`: a fill is one SET NX (it never overwrites a newer value); a put is DEL, SET,
 * PUBLISH. `ttl_ms` 0 is sent as 1 ms: PX needs a positive value. */
static wk_status r_store(void *self, const char *key, size_t key_len, const void *val,
                         size_t val_len, uint32_t ttl_ms, unsigned mode, wk_error *err)
{
    wk_redis_store *s = self;
    char ttl[16];
    int tn = snprintf(ttl, sizeof ttl, "%u", ttl_ms != 0 ? ttl_ms : 1);
    if (mode == WK_CACHE_STORE_FILL) {
        const char *argv[6] = {"SET", key, val, "PX", ttl, "NX"};
        size_t lens[6] = {3, key_len, val_len, 2, (size_t)tn, 2};
        int argc[1] = {6};
        static const char *const msgs[1] = {"redis: fill refused (SET NX)"};
        return run(s, key, key_len, 1, argc, argv, lens, msgs, false, true, err);
    }
    /* DEL first: if Redis refuses the SET (maxmemory with noeviction) the old value is gone
     * all the same. Then SET, then PUBLISH, always (a store without a subscriber still
     * broadcasts, so one-shot writers such as the CLI reach every reader). In a cluster,
     * PUBLISH reaches every node over the cluster bus. */
    const char *argv[10] = {"DEL", key, "SET",     key,            val,
                            "PX",  ttl, "PUBLISH", s->cfg.channel, key};
    size_t lens[10] = {3, key_len, 3, key_len, val_len,
                       2, (size_t)tn, 7, s->cfg.channel_len, key_len};
    int argc[3] = {2, 5, 3};
    static const char *const msgs[3] = {
        "redis: put failed: DEL refused (the old value may remain)",
        "redis: put failed: SET refused (out of memory?); the old value was deleted",
        "redis: put stored but PUBLISH refused (other processes were not told)"};
    return run(s, key, key_len, 3, argc, argv, lens, msgs, true, true, err);
}

/* `invalidate`: the value replaced by a tombstone for `tomb_ms`, so a fill racing with the
 * invalidation (SET NX) cannot bring the old value back, then broadcast. */
static wk_status r_invalidate(void *self, const char *key, size_t key_len, uint32_t tomb_ms,
                              wk_error *err)
{
    wk_redis_store *s = self;
    char ttl[16];
    int tn = snprintf(ttl, sizeof ttl, "%u", tomb_ms != 0 ? tomb_ms : 1);
    /* Delete first (DEL is allowed even at maxmemory), then fence with the tombstone, then
     * broadcast. A refused tombstone is reported, but the value is already gone. */
    const char *argv[10] = {"DEL", key, "SET", key, WK_CACHE_TOMBSTONE_MARK, "PX", ttl,
                            "PUBLISH", s->cfg.channel, key};
    size_t lens[10] = {3, key_len, 3, key_len, WK_CACHE_MARK_LEN, 2, (size_t)tn,
                       7, s->cfg.channel_len, key_len};
    int argc[3] = {2, 5, 3};
    static const char *const msgs[3] = {
        "redis: invalidation failed: DEL refused (the old value may remain)",
        "redis: invalidation not fenced: tombstone refused (out of memory?); the value was "
        "deleted",
        "redis: invalidation not broadcast: PUBLISH refused"};
    return run(s, key, key_len, 3, argc, argv, lens, msgs, true, true, err);
}

/* `remove`: DEL alone, no tombstone and no broadcast. */
static wk_status r_remove(void *self, const char *key, size_t key_len, wk_error *err)
{
    const char *argv[2] = {"DEL", key};
    size_t lens[2] = {3, key_len};
    int argc[1] = {2};
    static const char *const msgs[1] = {"redis: DEL refused"};
    return run(self, key, key_len, 1, argc, argv, lens, msgs, false, false, err);
}

void wk__redis_commands_bind(wk_cache_store *iface)
{
    iface->fetch = r_fetch;
    iface->fetch_each = wk__redis_fetch_each;
    iface->store = r_store;
    iface->invalidate = r_invalidate;
    iface->remove = r_remove;
}
