/*
 * Example: the entity cache, with a loader, the in-process memory tier and Redis as the
 * shared tier.
 *
 * wk_cache_get looks in the memory tier, then in Redis, then calls the loader (the database,
 * in a real program) and stores what it returns in both tiers, under a key that carries the
 * schema's entity name and version. wk_cache_put / wk_cache_invalidate update Redis and
 * broadcast the key so that other processes drop their copies (and, on Redis 6+, the feed's
 * CLIENT TRACKING drops them when any other client writes the key). Needs wirekit-redis. The
 * server comes from WK_REDIS_URL (for example redis://127.0.0.1:6379, or rediss://... for TLS);
 * without it the example exits 77 (skipped).
 * Run: WK_REDIS_URL=redis://127.0.0.1:6379 ./cache_redis
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep: the example builds alone with -std=c11 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <wirekit/redis.h>
#include <wirekit/wirekit.h>

typedef struct account {
    char *owner;
    int64_t balance;
} account;

WK_SCHEMA_DEFINE_STATIC(account_schema, account, "account", 1,
                        WK_FIELD(account, owner, "owner", WK_SK_STR, WK_REQUIRED),
                        WK_FIELD(account, balance, "balance", WK_SK_I64, 0));

/* The loader: what the cache calls on a miss in both tiers. Here a fake "database" where
 * ids 1..100 exist; it counts its calls so the example can show when it ran. */
static wk_status load_account(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                              void *obj, wk_arena *arena, wk_error *err)
{
    (void)s;
    (*(int *)ctx)++;
    char buf[16];
    if (id_len == 0 || id_len >= sizeof buf) {
        return wk_error_set(err, WK_ERR_NOT_FOUND, 0, "no such account");
    }
    memcpy(buf, id, id_len);
    buf[id_len] = '\0';
    long n = strtol(buf, NULL, 10);
    if (n < 1 || n > 100) {
        return wk_error_set(err, WK_ERR_NOT_FOUND, 0, "no such account");
    }
    account *a = obj;
    char owner[32];
    int k = snprintf(owner, sizeof owner, "owner-%ld", n);
    a->owner = wk_arena_strndup(arena, owner, (size_t)k); /* memory that outlives the call */
    a->balance = n * 100;
    return a->owner != NULL ? WK_OK : WK_ERR_NOMEM;
}

/* Gets one account and prints where the answer came from. */
static int show(wk_cache *c, const char *id, int *loads)
{
    int before = *loads;
    wk_cache_stats s0, s1;
    wk_cache_get_stats(c, &s0);
    wk_cache_entry *ref = NULL;
    wk_error err = {0};
    wk_status st =
        wk_cache_get(c, &account_schema, id, strlen(id), load_account, loads, &ref, &err);
    wk_cache_get_stats(c, &s1);
    const char *from = *loads > before                   ? "the loader"
                       : s1.local_hits > s0.local_hits   ? "the memory tier"
                       : s1.shared_hits > s0.shared_hits ? "Redis"
                                                         : "?";
    if (st == WK_ERR_NOT_FOUND) {
        printf("get %-4s -> not found (from %s)\n", id, from);
        return 0;
    }
    if (st != WK_OK) {
        fprintf(stderr, "cache_redis: get %s: %s\n", id, err.msg);
        return 1;
    }
    const account *a = wk_cache_entry_object(ref);
    printf("get %-4s -> owner=%s balance=%lld (from %s; key %s)\n", id, a->owner,
           (long long)a->balance, from, wk_cache_entry_key(ref));
    wk_cache_entry_unref(ref); /* the object stays valid until its last reference goes */
    return 0;
}

int main(void)
{
    const char *url = getenv("WK_REDIS_URL");
    if (url == NULL || *url == '\0') {
        printf("cache_redis: WK_REDIS_URL is not set; skipped\n");
        return 77;
    }
    /* The shared tier. Connections are lazy, so check the server once. */
    wk_redis_opts ro = {0};
    ro.url = url;
    wk_redis_store *store = NULL;
    wk_error err = {0};
    if (wk_redis_store_new(&ro, &store, &err) != WK_OK ||
        wk_redis_store_ping(store, &err) != WK_OK) {
        fprintf(stderr, "cache_redis: %s: %s\n", url, err.msg);
        wk_redis_store_free(store);
        return 1;
    }
    /* The memory tier is only trusted while the invalidation feed (a Redis subscription, set
     * up by the store's own thread) is live: until then every get goes to Redis or the
     * loader. A service would start serving anyway; the example waits up to 2 s for it so
     * that its output shows each tier. */
    for (int i = 0; i < 200 && !wk_redis_store_feed_up(store); i++) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    printf("invalidation feed %s\n", wk_redis_store_feed_up(store) ? "up" : "not up yet");

    /* The cache: a namespace of its own per run (keys are ns:account:v1:<id>), negative
     * answers cached for 5 s, the rest default. */
    char ns[32];
    snprintf(ns, sizeof ns, "example%ld", (long)getpid());
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    cfg.store = wk_redis_store_iface(store);
    cfg.negative_ttl_ms = 5000;
    wk_cache *cache = NULL;
    if (wk_cache_new(&cfg, &cache, &err) != WK_OK) {
        fprintf(stderr, "cache_redis: %s\n", err.msg);
        wk_redis_store_free(store);
        return 1;
    }

    int loads = 0, rc = 0;
    rc |= show(cache, "42", &loads);  /* loader, then stored in both tiers */
    rc |= show(cache, "42", &loads);  /* memory tier */
    wk_cache_clear_local(cache);      /* as if another process asked */
    rc |= show(cache, "42", &loads);  /* Redis */
    rc |= show(cache, "999", &loads); /* loader says not found (cached for 5 s) */
    rc |= show(cache, "999", &loads); /* the negative entry */

    /* A write: both tiers updated, every other process told to drop its copy. */
    account changed = {"owner-renamed", 4300};
    if (wk_cache_put(cache, &account_schema, "42", 2, &changed, 0, &err) != WK_OK) {
        fprintf(stderr, "cache_redis: put: %s\n", err.msg);
        rc = 1;
    }
    wk_cache_clear_local(cache);
    rc |= show(cache, "42", &loads); /* Redis has the new value */

    /* Clean up what this run stored in Redis. */
    wk_cache_invalidate(cache, &account_schema, "42", 2, NULL);
    wk_cache_invalidate(cache, &account_schema, "999", 3, NULL);

    wk_cache_stats s;
    wk_cache_get_stats(cache, &s);
    printf("stats: local hits %llu, shared hits %llu, loads %llu, negative hits %llu\n",
           (unsigned long long)s.local_hits, (unsigned long long)s.shared_hits,
           (unsigned long long)s.loads, (unsigned long long)s.negative_hits);
    if (s.local_hits < 1 || s.shared_hits < 2 || loads != 2) {
        rc = 1;
    }
    wk_cache_free(cache);
    wk_redis_store_free(store);
    return rc;
}
