/*
 * Nullable fields through the entity cache: an entity whose nullable age is NULL (and one
 * whose age is a present 0) comes back the same from the loader's first answer, from the
 * memory tier, and from Redis read by a second cache that never loads, with the MessagePack
 * and the JSON serializer; a free-form map's numbers stay numbers on the way. The memory-tier
 * test needs no server; the Redis test uses WK_REDIS_URL (scripts/servers.sh) and is skipped
 * without it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "wirekit/cache.h"
#include "wirekit/json.h"
#include "wirekit/redis.h"
#include "wk_test.h"

typedef struct member {
    char *username;
    int32_t age;
    bool has_age;
    double score;
    bool has_score;
    wk_value metadata;
} member;

WK_SCHEMA_DEFINE_STATIC(member_schema, member, "member", 1,
    WK_FIELD(member, username, "username", WK_SK_STR, WK_REQUIRED),
    WK_FIELD_NULLABLE(member, age, has_age, "age", WK_SK_I32, 0),
    WK_FIELD_NULLABLE(member, score, has_score, "score", WK_SK_F64, WK_OMITEMPTY),
    WK_FIELD(member, metadata, "metadata", WK_SK_VALUE, 0));

/* The loader: id "null" has a NULL age and score, "zero" a present age 0 and score 0.0; both
 * carry a map with an integer and a float. Counts its calls. */
static int loads;

static wk_status load_member(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                             void *obj, wk_arena *arena, wk_error *err)
{
    (void)ctx;
    (void)s;
    loads++;
    member *m = obj;
    m->username = wk_arena_strndup(arena, id, id_len);
    bool zero = id_len == 4 && memcmp(id, "zero", 4) == 0;
    m->age = zero ? 0 : 77; /* 77 behind a false presence member must not come back */
    m->has_age = zero;
    m->score = 0.0;
    m->has_score = zero;
    static const char doc[] = "{\"int\":10,\"score\":99.5}";
    wk_value *v = NULL;
    wk_status st = wk_json_decode_value(doc, sizeof doc - 1, NULL, arena, &v, NULL, err);
    if (st == WK_OK) {
        m->metadata = *v;
    }
    return st;
}

/* A loader that must not run (the entity is expected from a tier). */
static wk_status no_load(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                         void *obj, wk_arena *arena, wk_error *err)
{
    (void)ctx;
    (void)s;
    (void)id;
    (void)id_len;
    (void)obj;
    (void)arena;
    return wk_error_set(err, WK_ERR_STATE, 0, "the loader ran: no tier had the entity");
}

/* Checks the member the cache gives for `id` ("null" or "zero") through `loader`. */
static void check_member(wk_cache *c, const char *id, wk_cache_loader loader)
{
    wk_cache_entry *e = NULL;
    wk_error err = {0};
    wk_status st = wk_cache_get(c, &member_schema, id, strlen(id), loader, NULL, &e, &err);
    CHECK_MSG(st == WK_OK, "get %s: %s", id, err.msg != NULL ? err.msg : wk_status_str(st));
    const member *m = wk_cache_entry_object(e);
    bool zero = strcmp(id, "zero") == 0;
    CHECK_STR(m->username, id);
    CHECK(m->has_age == zero);
    CHECK_EQ(m->age, 0);
    CHECK(m->has_score == zero);
    CHECK(m->score == 0.0);
    CHECK_EQ(m->metadata.type, WK_VAL_MAP);
    CHECK_EQ(m->metadata.len, 2);
    CHECK(m->metadata.u.pairs[0].val.type == WK_VAL_UINT && m->metadata.u.pairs[0].val.u.u == 10);
    CHECK(m->metadata.u.pairs[1].val.type == WK_VAL_FLOAT &&
          m->metadata.u.pairs[1].val.u.f == 99.5);
    wk_cache_entry_unref(e);
}

WK_TEST(test_cache_nullable_field_stays_null_in_the_memory_tier)
{
    const wk_serializer *sers[2] = {wk_serializer_msgpack(), wk_serializer_json()};
    for (int i = 0; i < 2; i++) {
        wk_cache_config cfg = {0};
        cfg.serializer = sers[i];
        wk_cache *c = NULL;
        CHECK_OK(wk_cache_new(&cfg, &c, NULL));
        loads = 0;
        check_member(c, "null", load_member); /* the load, encoded and decoded back */
        check_member(c, "zero", load_member);
        check_member(c, "null", no_load); /* memory-tier hits */
        check_member(c, "zero", no_load);
        CHECK_EQ(loads, 2);
        wk_cache_free(c);
        if (wk__test_failed()) {
            return;
        }
    }
}

WK_TEST(test_cache_nullable_field_stays_null_through_redis)
{
    const char *url = getenv("WK_REDIS_URL");
    if (url == NULL) {
        SKIP("WK_REDIS_URL is not set (run scripts/servers.sh start)");
    }
    const wk_serializer *sers[2] = {wk_serializer_msgpack(), wk_serializer_json()};
    for (int i = 0; i < 2; i++) {
        char ns[48];
        snprintf(ns, sizeof ns, "wknull%ld-%d", (long)getpid(), i);
        wk_redis_store *stores[2] = {NULL, NULL};
        wk_cache *caches[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++) {
            wk_redis_opts o = {0};
            o.url = url;
            o.connect_timeout_ms = 5000;
            o.command_timeout_ms = 5000;
            o.channel = ns;
            CHECK_OK(wk_redis_store_new(&o, &stores[k], NULL));
            wk_cache_config cfg = {0};
            cfg.ns = ns;
            cfg.serializer = sers[i];
            cfg.store = wk_redis_store_iface(stores[k]);
            CHECK_OK(wk_cache_new(&cfg, &caches[k], NULL));
            /* the cache uses the shared tier once the invalidation feed is up */
            for (int t = 0; t < 500 && !wk_redis_store_feed_up(stores[k]); t++) {
                usleep(10 * 1000);
            }
            CHECK(wk_redis_store_feed_up(stores[k]));
        }
        loads = 0;
        /* the first cache loads and writes Redis; the second reads Redis only */
        check_member(caches[0], "null", load_member);
        check_member(caches[0], "zero", load_member);
        check_member(caches[1], "null", no_load);
        check_member(caches[1], "zero", no_load);
        check_member(caches[1], "null", no_load);
        CHECK_EQ(loads, 2);
        for (int k = 0; k < 2; k++) {
            wk_cache_free(caches[k]);
            wk_redis_store_free(stores[k]);
        }
        if (wk__test_failed()) {
            return;
        }
    }
}
