/*
 * Example: the read path of a webhook gateway. Users live in PostgreSQL (username, password,
 * a nullable age, enabled, and a jsonb `metadata` map of anything); the service reads them
 * through the entity cache: the memory tier, then Redis, then PostgreSQL on a miss.
 *
 * The parts: a wk_pq_pool (connections shared by the service's threads, reconnected when
 * they die), a wk_pq_loader (the cache's loader: runs the SELECT the schema implies over the
 * table, the id as $1, and decodes the row into the struct; no row is cached as "not
 * found"), and a wk_cache with
 * Redis as its shared tier. The output shows each answer as JSON and as the MessagePack the
 * cache stores (read back as JSON): the numbers in metadata stay numbers in both, whichever
 * tier answered, and a NULL age stays null.
 *
 * Needs wirekit-pq and wirekit-redis, and the servers named by WK_PG_DSN and WK_REDIS_URL
 * (without them it exits 77, skipped). It makes a table of its own and drops it at the end.
 * Run: WK_PG_DSN='host=127.0.0.1 dbname=postgres' WK_REDIS_URL=redis://127.0.0.1:6379 ./gateway
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep: the example builds alone with -std=c11 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <wirekit/pq.h>
#include <wirekit/redis.h>
#include <wirekit/wirekit.h>

typedef struct user {
    char *username;
    char *password;
    int32_t age;
    bool has_age; /* false: age is SQL NULL */
    bool enabled;
    wk_value metadata; /* the jsonb column, as a tree */
} user;

WK_SCHEMA_DEFINE_STATIC(user_schema, user, "user", 1,
                        WK_FIELD(user, username, "username", WK_SK_STR, WK_REQUIRED),
                        WK_FIELD(user, password, "password", WK_SK_STR, WK_NULLABLE),
                        WK_FIELD_NULLABLE(user, age, has_age, "age", WK_SK_I32, 0),
                        WK_FIELD(user, enabled, "enabled", WK_SK_BOOL, 0),
                        WK_FIELD(user, metadata, "metadata", WK_SK_VALUE, 0));

/* Runs one statement of the example's set-up on a pooled connection. */
static int run(wk_pq_pool *pool, const char *sql)
{
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    PGresult *r = NULL;
    wk_status st = wk_pq_pool_acquire(pool, 0, &c, &err);
    if (st == WK_OK) {
        st = wk_pq_exec(c, sql, NULL, 0, &r, &err);
    }
    if (st != WK_OK) {
        fprintf(stderr, "gateway: %s: %s\n", sql, c != NULL ? wk_pq_conn_message(c) : err.msg);
    }
    PQclear(r);
    wk_pq_pool_release(pool, c);
    return st == WK_OK ? 0 : 1;
}

/* Gets user `id` through the cache and prints where it came from, as JSON and as the
 * MessagePack the cache holds. */
static int show(wk_cache *cache, wk_pq_loader *loader, const char *id)
{
    wk_cache_stats s0, s1;
    wk_cache_get_stats(cache, &s0);
    wk_cache_entry *ref = NULL;
    wk_error err = {0};
    wk_status st = wk_cache_get(cache, &user_schema, id, strlen(id), wk_pq_loader_load, loader,
                                &ref, &err);
    wk_cache_get_stats(cache, &s1);
    const char *from = s1.loads > s0.loads                 ? "PostgreSQL"
                       : s1.local_hits > s0.local_hits   ? "the memory tier"
                       : s1.shared_hits > s0.shared_hits ? "Redis"
                                                         : "?";
    if (st == WK_ERR_NOT_FOUND) {
        printf("user %s: not found (from %s)\n", id, from);
        return 0;
    }
    if (st != WK_OK) {
        fprintf(stderr, "gateway: user %s: %s (%s)\n", id, err.msg, wk_status_str(st));
        return 1;
    }
    wk_buf json, back;
    wk_buf_init(&json, NULL, 0);
    wk_buf_init(&back, NULL, 0);
    size_t mp_len = 0;
    const uint8_t *mp = wk_cache_entry_bytes(ref, &mp_len);
    st = wk_schema_encode_json(&user_schema, wk_cache_entry_object(ref), &json, &err);
    if (st == WK_OK) {
        st = wk_json_from_msgpack(mp, mp_len, NULL, 0, &back, &err);
    }
    if (st == WK_OK) {
        printf("user %s from %s:\n  JSON        %.*s\n  MessagePack %.*s (%zu bytes)\n", id, from,
               (int)json.len, (const char *)json.data, (int)back.len, (const char *)back.data,
               mp_len);
    }
    wk_buf_free(&json);
    wk_buf_free(&back);
    wk_cache_entry_unref(ref);
    return st == WK_OK ? 0 : 1;
}

int main(void)
{
    const char *dsn = getenv("WK_PG_DSN"), *url = getenv("WK_REDIS_URL");
    if (dsn == NULL || url == NULL) {
        printf("gateway: WK_PG_DSN or WK_REDIS_URL is not set; skipped\n");
        return 77;
    }
    /* The pool: 4 connections (the default), each with a 30 s query deadline. */
    wk_pq_pool_opts po = {0};
    po.dsn = dsn;
    wk_pq_pool *pool = NULL;
    wk_error err = {0};
    if (wk_pq_pool_new(&po, &pool, &err) != WK_OK) {
        char why[256] = "";
        if (pool != NULL) {
            wk_pq_pool_last_error(pool, why, sizeof why);
        }
        fprintf(stderr, "gateway: %s: %s: %s\n", dsn, err.msg, why);
        wk_pq_pool_free(pool);
        return 1;
    }
    /* A table of this run's own (a service has its table already). */
    char table[48], sql[512];
    snprintf(table, sizeof table, "gateway_users_%ld", (long)getpid());
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (id int8 PRIMARY KEY, username text NOT NULL, password text, "
             "age int4, enabled bool NOT NULL, metadata jsonb NOT NULL DEFAULT '{}')",
             table);
    int rc = run(pool, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s VALUES (1, 'root', 'hunter2', 20, true, "
             "'{\"hello\": \"world\", \"int\": 10, \"score\": 99.5}'), "
             "(2, 'guest', NULL, NULL, false, '{\"tags\": [1, 2.5]}')",
             table);
    rc |= run(pool, sql);

    /* The loader: the struct a row becomes, and the table it is read from by its "id" (the
     * statement is the one the schema implies: SELECT "username", ... WHERE id = $1). */
    wk_pq_loader_opts lo = {0};
    lo.pool = pool;
    lo.table = table;
    lo.schema = &user_schema;
    wk_pq_loader *loader = NULL;
    rc |= wk_pq_loader_new(&lo, &loader, &err) != WK_OK;

    /* The cache: the memory tier in front of Redis, "not found" kept for 5 s. */
    wk_redis_opts ro = {0};
    ro.url = url;
    wk_redis_store *store = NULL;
    if (rc == 0 && (wk_redis_store_new(&ro, &store, &err) != WK_OK ||
                    wk_redis_store_ping(store, &err) != WK_OK)) {
        fprintf(stderr, "gateway: %s: %s\n", url, err.msg);
        rc = 1;
    }
    /* The memory tier serves once the invalidation feed is up; wait for it (at most 2 s) so
     * that the output shows each tier. */
    for (int i = 0; rc == 0 && i < 200 && !wk_redis_store_feed_up(store); i++) {
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    }
    char ns[32];
    snprintf(ns, sizeof ns, "gateway%ld", (long)getpid());
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    cfg.store = store != NULL ? wk_redis_store_iface(store) : NULL;
    cfg.negative_ttl_ms = 5000;
    wk_cache *cache = NULL;
    if (rc == 0 && wk_cache_new(&cfg, &cache, &err) != WK_OK) {
        fprintf(stderr, "gateway: %s\n", err.msg);
        rc = 1;
    }
    if (rc == 0) {
        rc |= show(cache, loader, "1"); /* PostgreSQL, then kept in both tiers */
        rc |= show(cache, loader, "1"); /* the memory tier */
        wk_cache_clear_local(cache);    /* as another process would see it */
        rc |= show(cache, loader, "1"); /* Redis */
        rc |= show(cache, loader, "2"); /* a NULL age and password */
        rc |= show(cache, loader, "3"); /* no row: cached as not found */
        rc |= show(cache, loader, "3");
        static const char *const ids[] = {"1", "2", "3"};
        for (size_t i = 0; i < 3; i++) {
            wk_cache_invalidate(cache, &user_schema, ids[i], 1, NULL); /* leave Redis clean */
        }
    }
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", table);
    rc |= run(pool, sql);
    wk_cache_free(cache);
    wk_redis_store_free(store);
    wk_pq_loader_free(loader);
    wk_pq_pool_free(pool);
    return rc;
}
