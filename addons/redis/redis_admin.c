/*
 * The Redis store's administrative calls, the public wk_redis_store_* functions beside the
 * cache interface: ping (is Redis reachable, with the reason when not), scan and count (the
 * keys under a prefix, by SCAN MATCH on every master, never KEYS) and pttl (a key's remaining
 * lifetime). They are what the CLI and operators use, not the cache, so they favour clear
 * answers over speed: ping clears the fail-fast marks and forces a topology refresh, so an
 * explicit check always goes to the network; a scan across cluster masters remembers the
 * keys it reported (redis_keyset.c) so that a key moving between masters is reported once,
 * at the cost of memory for the keys seen until the call returns.
 *
 * They sit at the top with the store object: each routes (redis_cluster.c), checks a
 * connection out of the pool and speaks RESP on it like a command, and ping runs through
 * redis_commands.c's wk__redis_run_on().
 */
#include <string.h>

#include "redis/redis_internal.h"

/* Every server's fail-fast mark cleared, the topology refreshed, then PING on the master in
 * use (the server of slot 0 in a cluster). */
WK_API wk_status wk_redis_store_ping(wk_redis_store *s, wk_error *err)
{
    /* an explicit check retries at once */
    uint32_t n = __atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        __atomic_store_n(&s->srv[i]->down_until_ms, 0, __ATOMIC_RELEASE);
    }
    if (s->cfg.mode != WK__MODE_SINGLE && wk__redis_refresh(s, true, err) != WK_OK) {
        return WK_ERR_IO;
    }
    const char *argv[1] = {"PING"};
    size_t lens[1] = {4};
    int argc[1] = {1};
    static const char *const msgs[1] = {"redis: PING answered with an error reply"};
    return wk__redis_run_on(s, wk__redis_route(s, "", 0), 1, argc, argv, lens, msgs, false, false,
                             err);
}

/* SCAN MATCH prefix* COUNT 1000 on each master in turn (the prefix's glob characters
 * escaped), until every cursor is back at 0 or `fn` says stop. */
WK_API wk_status wk_redis_store_scan(wk_redis_store *s, const char *prefix,
                                     wk_redis_key_fn fn, void *ctx, wk_error *err)
{
    size_t plen = strlen(prefix);
    char *pattern = wk_alloc(s->alloc, plen * 2 + 2);
    if (pattern == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    /* Escape glob characters so that the prefix matches literally. */
    size_t pn = 0;
    for (size_t i = 0; i < plen; i++) {
        if (strchr("*?[]\\", prefix[i]) != NULL) {
            pattern[pn++] = '\\';
        }
        pattern[pn++] = prefix[i];
    }
    pattern[pn++] = '*';
    if (s->cfg.mode != WK__MODE_SINGLE && !__atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE) &&
        wk__redis_refresh(s, true, err) != WK_OK) {
        wk_free(s->alloc, pattern, plen * 2 + 2);
        return WK_ERR_IO;
    }
    wk__redis_maybe_refresh(s);
    wk__rsrv *nodes[WK__MAX_SRV];
    uint32_t nn = wk__redis_masters(s, nodes);
    wk_status st = WK_OK;
    bool stop = false;
    /* across masters, a key that moves while the scan runs may be met twice */
    wk__keyset seen;
    wk__keyset_init(&seen, s->alloc);
    bool dedupe = nn > 1;
    for (uint32_t m = 0; m < nn && st == WK_OK && !stop; m++) {
        char cursor[32] = "0";
        do {
            const char *argv[6] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
            size_t lens[6] = {4, strlen(cursor), 5, pn, 5, 4};
            int argc[1] = {6};
            int64_t deadline = wk__redis_now_ms() + s->cfg.command_ms;
            wk__rconn *c = wk__redis_checkout(s, nodes[m], deadline, err);
            if (c == NULL) {
                st = WK_ERR_IO;
                break;
            }
            st = wk__rconn_append_cmds(c, 1, argc, argv, lens, false, err);
            if (st == WK_OK) {
                st = wk__rconn_flush(c, deadline, err);
            }
            if (st == WK_OK) {
                st = wk__rconn_read(c, &s->cfg.lim, deadline, err);
            }
            if (st != WK_OK) {
                wk__redis_give_back(s, nodes[m], c, true);
                break;
            }
            const wk__rnode *r = c->nodes;
            if (r[0].type == '-') {
                st = wk_error_set(
                    err, WK_ERR_IO, 0,
                    wk__redis_refusal(c, r, "redis: SCAN answered with an error reply"));
                wk__redis_give_back(s, nodes[m], c, false);
                break;
            }
            if (c->nnodes < 3 || r[0].type != '*' || r[0].n != 2 || r[1].type != '$' ||
                r[1].n < 0 || (size_t)r[1].n >= sizeof cursor || r[2].type != '*' ||
                c->nnodes != 3 + (size_t)(r[2].n > 0 ? r[2].n : 0)) {
                wk__redis_give_back(s, nodes[m], c, false);
                st = wk_error_set(err, WK_ERR_IO, 0, "redis: unexpected SCAN reply");
                break;
            }
            memcpy(cursor, wk__rnode_str(c, &r[1]), (size_t)r[1].n);
            cursor[r[1].n] = '\0';
            for (size_t k = 3; k < c->nnodes && !stop; k++) {
                if (r[k].type != '$' || r[k].n < 0) {
                    continue;
                }
                const char *key = wk__rnode_str(c, &r[k]);
                int fresh = dedupe ? wk__keyset_add(&seen, key, (size_t)r[k].n) : 1;
                if (fresh < 0) {
                    st = wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
                    stop = true;
                } else if (fresh > 0) {
                    stop = !fn(ctx, key, (size_t)r[k].n);
                }
            }
            wk__redis_give_back(s, nodes[m], c, false);
        } while (!stop && strcmp(cursor, "0") != 0);
    }
    wk__keyset_free(&seen);
    wk_free(s->alloc, pattern, plen * 2 + 2);
    return st;
}

/* The `fn` of wk_redis_store_count(): one more key. */
static bool count_one(void *ctx, const char *key, size_t len)
{
    (void)key;
    (void)len;
    (*(uint64_t *)ctx)++;
    return true;
}

WK_API wk_status wk_redis_store_count(wk_redis_store *s, const char *prefix, uint64_t *count,
                                      wk_error *err)
{
    *count = 0;
    return wk_redis_store_scan(s, prefix, count_one, count, err);
}

/* PTTL on the key's server, following MOVED and ASK twice at most. */
WK_API wk_status wk_redis_store_pttl(wk_redis_store *s, const char *key, int64_t *ms,
                                     wk_error *err)
{
    *ms = -2;
    size_t kl = strlen(key);
    wk__redis_maybe_refresh(s);
    if (wk__redis_await_map(s, wk__redis_now_ms() + s->cfg.command_ms, err) != WK_OK) {
        return WK_ERR_IO;
    }
    wk__rsrv *v = wk__redis_route(s, key, kl);
    bool asking = false;
    for (int attempt = 0; attempt < 3; attempt++) {
        int64_t deadline = wk__redis_now_ms() + s->cfg.command_ms;
        wk__rconn *c = wk__redis_checkout(s, v, deadline, err);
        if (c == NULL) {
            return WK_ERR_IO;
        }
        const char *argv[2] = {"PTTL", key};
        size_t lens[2] = {4, kl};
        int argc[1] = {2};
        wk_status st = wk__rconn_append_cmds(c, 1, argc, argv, lens, asking, err);
        if (st == WK_OK) {
            st = wk__rconn_flush(c, deadline, err);
        }
        if (st == WK_OK && asking) {
            st = wk__rconn_read(c, &s->cfg.lim, deadline, err);
        }
        if (st == WK_OK) {
            st = wk__rconn_read(c, &s->cfg.lim, deadline, err);
        }
        if (st != WK_OK) {
            wk__redis_give_back(s, v, c, true);
            return st;
        }
        const wk__rnode *r = c->nodes;
        wk__rsrv *to = NULL;
        int kind = s->cfg.mode == WK__MODE_CLUSTER ? wk__redis_redirect(s, c, r, v, &to) : 0;
        if (kind != 0) {
            wk__redis_give_back(s, v, c, false);
            v = to;
            asking = kind == 2;
            continue;
        }
        if (r->type == ':') {
            *ms = r->n;
        } else {
            st = wk_error_set(err, WK_ERR_IO, 0,
                              wk__redis_refusal(c, r, "redis: PTTL answered something else"));
        }
        wk__redis_give_back(s, v, c, false);
        return st;
    }
    return wk_error_set(err, WK_ERR_IO, 0, "redis: too many cluster redirects");
}
