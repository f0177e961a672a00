/*
 * Entity cache behaviour with the local tier alone and over an in-memory shared tier
 * (fake_store): keys, hits and misses, negative caching, TTL, LRU bounds, single-flight,
 * invalidation (own and broadcast), shared-tier faults and corrupt entries, multi-get.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../schema/seed_user.h"
#include "fake_store.h"
#include "wk_test.h"

/* ---- a loader backed by a tiny "database" ---- */

typedef struct db {
    atomic_int calls;
    int age_base;          /* the record for id N has age age_base + N */
    int delay_ms;          /* sleep in each call */
    wk_status fail;        /* a status to return instead (0 = none) */
    bool block;            /* wait until `release` is set */
    atomic_bool released;
    atomic_int entered;
} db;

static wk_status db_load(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                         void *obj, wk_arena *arena, wk_error *err)
{
    db *d = ctx;
    (void)s;
    atomic_fetch_add(&d->calls, 1);
    atomic_fetch_add(&d->entered, 1);
    if (d->delay_ms > 0) {
        usleep((useconds_t)d->delay_ms * 1000);
    }
    while (d->block && !atomic_load(&d->released)) {
        usleep(1000);
    }
    if (d->fail != WK_OK) {
        return wk_error_set(err, d->fail, 0, "database says no");
    }
    if (id_len > 0 && id[0] == 'x') {
        return WK_ERR_NOT_FOUND;
    }
    seed_user *u = obj;
    u->username = wk_arena_strndup(arena, id, id_len);
    u->password = (char *)"pw";
    u->age = d->age_base + (int)strtol(u->username, NULL, 10); /* NUL-terminated copy of id */
    u->enabled = true;
    wk_value_set_nil(&u->metadata);
    return WK_OK;
}

static wk_cache *make_cache(const wk_cache_config *cfg)
{
    wk_cache *c = NULL;
    wk_error err;
    if (wk_cache_new(cfg, &c, &err) != WK_OK) {
        return NULL;
    }
    return c;
}

static int64_t get_age(wk_cache *c, const char *id, db *d, wk_status *st)
{
    wk_cache_entry *r = NULL;
    *st = wk_cache_get(c, &seed_user_schema, id, strlen(id), db_load, d, &r, NULL);
    if (*st != WK_OK) {
        return -1;
    }
    int64_t age = ((const seed_user *)wk_cache_entry_object(r))->age;
    wk_cache_entry_unref(r);
    return age;
}

WK_TEST(test_cache_key_is_namespace_entity_version_id)
{
    char buf[64];
    size_t n = wk_cache_key("app", &seed_user_schema, "42", 2, buf, sizeof buf);
    CHECK_STR(buf, "app:user:v1:42");
    CHECK_EQ(n, 14);
    CHECK_EQ(wk_cache_key("app", &seed_user_schema, "42", 2, buf, 10), 14);
    wk_cache *c = NULL;
    wk_cache_config cfg = {0};
    cfg.ns = "a:b";
    CHECK_STATUS(wk_cache_new(&cfg, &c, NULL), WK_ERR_ARG);
}

WK_SCHEMA_DEFINE_STATIC(v12345_schema, seed_user, "a rather long entity name", 12345,
    WK_FIELD(seed_user, username, "username", WK_SK_STR, 0));

WK_TEST(test_cache_key_matches_the_format_for_every_length)
{
    /* Keys are built with inline copies; compare with the format over many lengths. */
    static const char letters[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    const wk_schema *schemas[2] = {&seed_user_schema, &v12345_schema};
    char ns[65], id[48], got[160], want[160];
    size_t cases = 0;
    for (size_t nl = 1; nl <= 64; nl++) {
        memcpy(ns, letters, nl);
        ns[nl] = '\0';
        for (size_t il = 0; il < sizeof id; il++) {
            memcpy(id, letters + 10, il);
            for (int k = 0; k < 2; k++) {
                int wn = snprintf(want, sizeof want, "%s:%s:v%u:%.*s", ns, schemas[k]->name,
                                  (unsigned)schemas[k]->version, (int)il, id);
                size_t n = wk_cache_key(ns, schemas[k], id, il, got, sizeof got);
                CHECK_EQ(n, (size_t)wn);
                CHECK_STR(got, want);
                cases++;
            }
        }
    }
    CHECK(cases > 0);
}

WK_TEST(test_cache_stores_under_the_same_key_with_a_64_byte_namespace)
{
    fake_store f;
    fake_store_init(&f);
    wk_cache_config cfg = {0};
    cfg.ns = "0123456789012345678901234567890123456789012345678901234567890123";
    cfg.store = &f.store;
    wk_cache *c = make_cache(&cfg);
    CHECK(c != NULL);
    db d = {0};
    wk_status st;
    CHECK_EQ(get_age(c, "1234567890", &d, &st), 1234567890);
    CHECK_OK(st);
    char key[160];
    wk_cache_key(cfg.ns, &seed_user_schema, "1234567890", 10, key, sizeof key);
    size_t len = 0;
    CHECK(fake_store_get_raw(&f, key, &len) != NULL && len > 0);
    wk_cache_free(c);
    fake_store_free(&f);
}

WK_TEST(test_cache_miss_loads_once_then_hits)
{
    wk_cache *c = make_cache(NULL);
    CHECK(c != NULL);
    db d = {0};
    d.age_base = 100;
    wk_cache_entry *r = NULL;
    CHECK_OK(wk_cache_get(c, &seed_user_schema, "7", 1, db_load, &d, &r, NULL));
    const seed_user *u = wk_cache_entry_object(r);
    CHECK_STR(u->username, "7");
    CHECK_EQ(u->age, 107);
    CHECK_STR(wk_cache_entry_key(r), "wk:user:v1:7");
    size_t len;
    const uint8_t *bytes = wk_cache_entry_bytes(r, &len);
    CHECK(len > 0 && bytes[0] == 0x85); /* a MessagePack map of 5 */
    wk_cache_entry *r2 = NULL;
    CHECK_OK(wk_cache_get(c, &seed_user_schema, "7", 1, db_load, &d, &r2, NULL));
    CHECK(r2 == r); /* the same immutable entry */
    wk_cache_entry_unref(r);
    wk_cache_entry_unref(r2);
    CHECK_EQ(atomic_load(&d.calls), 1);
    wk_cache_stats st;
    wk_cache_get_stats(c, &st);
    CHECK_EQ(st.local_hits, 1);
    CHECK_EQ(st.local_misses, 1);
    CHECK_EQ(st.loads, 1);
    CHECK_EQ(st.local_entries, 1);
    CHECK(st.local_bytes > len);
    wk_cache_free(c);
}

WK_TEST(test_cache_references_outlive_eviction_invalidation_and_destroy)
{
    wk_cache_config cfg = {0};
    cfg.max_entries = 1;
    cfg.shards = 1;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_cache_entry *r = NULL;
    CHECK_OK(wk_cache_get(c, &seed_user_schema, "1", 1, db_load, &d, &r, NULL));
    wk_status st;
    get_age(c, "2", &d, &st); /* evicts "1" */
    CHECK_OK(wk_cache_invalidate(c, &seed_user_schema, "2", 1, NULL));
    wk_cache_free(c);
    CHECK_STR(((const seed_user *)wk_cache_entry_object(r))->username, "1");
    wk_cache_entry_unref(r);
}

WK_TEST(test_cache_peek_borrows_live_entries_only_inside_a_pinned_section)
{
    wk_cache_config cfg = {0};
    cfg.max_entries = 1;
    cfg.shards = 1;
    cfg.negative_ttl_ms = 60000;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_status st;
    CHECK_EQ(get_age(c, "1", &d, &st), 1);
    CHECK(wk_cache_peek(c, &seed_user_schema, "1", 1) == NULL); /* not pinned */
    CHECK(wk_cache_pin(c));
    CHECK(wk_cache_pin(c)); /* nested */
    const wk_cache_entry *b = wk_cache_peek(c, &seed_user_schema, "1", 1);
    CHECK(b != NULL);
    CHECK_STR(wk_cache_entry_key(b), "wk:user:v1:1");
    CHECK(wk_cache_peek(c, &seed_user_schema, "2", 1) == NULL); /* absent: no load */
    CHECK_EQ(atomic_load(&d.calls), 1);
    wk_cache_unpin(c); /* the outer section still holds */
    /* evict "1" and retire many more entries than a reclaim waits for: the borrowed entry
     * must stay readable (ASan would see a free) */
    char id[16];
    for (int i = 2; i < 60; i++) {
        snprintf(id, sizeof id, "%d", i);
        CHECK_EQ(get_age(c, id, &d, &st), i);
    }
    CHECK_OK(wk_cache_invalidate(c, &seed_user_schema, "59", 2, NULL));
    CHECK(wk_cache_peek(c, &seed_user_schema, "1", 1) == NULL);
    CHECK(wk_cache_peek(c, &seed_user_schema, "59", 2) == NULL);
    CHECK_STR(((const seed_user *)wk_cache_entry_object(b))->username, "1");
    get_age(c, "x1", &d, &st); /* a cached "not found" is not borrowed */
    CHECK_STATUS(st, WK_ERR_NOT_FOUND);
    CHECK(wk_cache_peek(c, &seed_user_schema, "x1", 2) == NULL);
    wk_cache_unpin(c);
    CHECK(wk_cache_peek(c, &seed_user_schema, "x1", 2) == NULL);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.local_hits, 1); /* the peek of "1"; the peeks that returned NULL count nothing */
    wk_cache_free(c);
}

WK_TEST(test_cache_not_found_is_cached_only_with_negative_ttl)
{
    wk_cache *c = make_cache(NULL);
    db d = {0};
    wk_status st;
    get_age(c, "x1", &d, &st);
    CHECK_STATUS(st, WK_ERR_NOT_FOUND);
    get_age(c, "x1", &d, &st);
    CHECK_STATUS(st, WK_ERR_NOT_FOUND);
    CHECK_EQ(atomic_load(&d.calls), 2);
    wk_cache_free(c);

    wk_cache_config cfg = {0};
    cfg.negative_ttl_ms = 60000;
    c = make_cache(&cfg);
    atomic_store(&d.calls, 0);
    get_age(c, "x1", &d, &st);
    CHECK_STATUS(st, WK_ERR_NOT_FOUND);
    get_age(c, "x1", &d, &st);
    CHECK_STATUS(st, WK_ERR_NOT_FOUND);
    CHECK_EQ(atomic_load(&d.calls), 1);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.negative_hits, 2);
    CHECK_EQ(s.load_not_found, 1);
    wk_cache_free(c);
}

WK_TEST(test_cache_loader_errors_are_returned_and_not_cached)
{
    wk_cache *c = make_cache(NULL);
    db d = {0};
    d.fail = WK_ERR_IO;
    wk_cache_entry *r = NULL;
    wk_error err;
    CHECK_STATUS(wk_cache_get(c, &seed_user_schema, "1", 1, db_load, &d, &r, &err), WK_ERR_IO);
    CHECK_STR(err.msg, "database says no");
    CHECK(r == NULL);
    d.fail = WK_OK;
    wk_status st;
    CHECK_EQ(get_age(c, "1", &d, &st), 1);
    CHECK_EQ(atomic_load(&d.calls), 2);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.load_errors, 1);
    CHECK_STATUS(wk_cache_get(c, &seed_user_schema, "9", 1, NULL, NULL, &r, NULL),
                 WK_ERR_NOT_FOUND);
    wk_cache_free(c);
}

WK_TEST(test_cache_invalidate_and_put_replace_the_local_copy)
{
    wk_cache *c = make_cache(NULL);
    db d = {0};
    wk_status st;
    CHECK_EQ(get_age(c, "5", &d, &st), 5);
    d.age_base = 1000;
    CHECK_EQ(get_age(c, "5", &d, &st), 5); /* cached */
    CHECK_OK(wk_cache_invalidate(c, &seed_user_schema, "5", 1, NULL));
    CHECK_EQ(get_age(c, "5", &d, &st), 1005);
    seed_user u;
    memset(&u, 0, sizeof u);
    u.username = (char *)"put";
    u.age = 77;
    CHECK_OK(wk_cache_put(c, &seed_user_schema, "5", 1, &u, 0, NULL));
    CHECK_EQ(get_age(c, "5", &d, &st), 77);
    CHECK_EQ(atomic_load(&d.calls), 2);
    wk_cache_free(c);
}

WK_TEST(test_cache_entries_expire_after_their_ttl)
{
    wk_cache_config cfg = {0};
    cfg.local_ttl_ms = 40;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_status st;
    get_age(c, "1", &d, &st);
    get_age(c, "1", &d, &st);
    CHECK_EQ(atomic_load(&d.calls), 1);
    usleep(80 * 1000);
    get_age(c, "1", &d, &st);
    CHECK_EQ(atomic_load(&d.calls), 2);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.expirations, 1);
    wk_cache_free(c);
}

WK_TEST(test_cache_local_tier_evicts_least_recently_used)
{
    wk_cache_config cfg = {0};
    cfg.max_entries = 3;
    cfg.shards = 1;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_status st;
    get_age(c, "0", &d, &st);
    get_age(c, "1", &d, &st);
    get_age(c, "2", &d, &st);
    get_age(c, "0", &d, &st); /* "1" is now the least recently used */
    get_age(c, "3", &d, &st); /* evicts "1" */
    CHECK_EQ(atomic_load(&d.calls), 4);
    get_age(c, "0", &d, &st);
    get_age(c, "2", &d, &st);
    get_age(c, "3", &d, &st);
    CHECK_EQ(atomic_load(&d.calls), 4);
    get_age(c, "1", &d, &st);
    CHECK_EQ(atomic_load(&d.calls), 5);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.evictions, 2);
    CHECK_EQ(s.local_entries, 3);
    wk_cache_free(c);
}

WK_TEST(test_cache_local_tier_is_bounded_by_bytes)
{
    wk_cache_config cfg = {0};
    cfg.max_bytes = 2000;
    cfg.shards = 1;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_status st;
    char id[16];
    for (int i = 0; i < 50; i++) {
        snprintf(id, sizeof id, "%d", i);
        get_age(c, id, &d, &st);
    }
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK(s.local_bytes <= 2000);
    CHECK(s.local_entries > 0 && s.local_entries < 50);
    CHECK_EQ(s.evictions, 50 - s.local_entries);
    wk_cache_free(c);
}

/* ---- concurrency ---- */

typedef struct stampede {
    wk_cache *c;
    db *d;
    pthread_barrier_t *go;
    const char *id;
    int64_t age;
    wk_status st;
} stampede;

static void *stampede_thread(void *arg)
{
    stampede *s = arg;
    pthread_barrier_wait(s->go);
    s->age = get_age(s->c, s->id, s->d, &s->st);
    return NULL;
}

WK_TEST(test_cache_stampede_of_64_threads_calls_the_loader_once)
{
    wk_cache *c = make_cache(NULL);
    db d = {0};
    d.delay_ms = 50;
    d.age_base = 3;
    enum { N = 64 };
    pthread_t th[N];
    stampede args[N];
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, N);
    for (int i = 0; i < N; i++) {
        args[i] = (stampede){c, &d, &go, "11", 0, WK_OK};
        pthread_create(&th[i], NULL, stampede_thread, &args[i]);
    }
    for (int i = 0; i < N; i++) {
        pthread_join(th[i], NULL);
    }
    pthread_barrier_destroy(&go);
    CHECK_EQ(atomic_load(&d.calls), 1);
    for (int i = 0; i < N; i++) {
        CHECK_OK(args[i].st);
        CHECK_EQ(args[i].age, 14);
    }
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.flight_waits + s.local_hits, N - 1);
    wk_cache_free(c);
}

static void *blocked_get(void *arg)
{
    stampede *s = arg;
    s->age = get_age(s->c, s->id, s->d, &s->st);
    return NULL;
}

WK_TEST(test_cache_a_slow_load_never_holds_up_other_keys)
{
    wk_cache_config cfg = {0};
    cfg.shards = 1; /* same shard: only the single-flight record may make them wait */
    wk_cache *c = make_cache(&cfg);
    db slow = {0};
    slow.block = true;
    stampede a = {c, &slow, NULL, "1", 0, WK_OK};
    pthread_t t;
    pthread_create(&t, NULL, blocked_get, &a);
    while (atomic_load(&slow.entered) == 0) {
        usleep(1000);
    }
    db fast = {0};
    wk_status st;
    CHECK_EQ(get_age(c, "2", &fast, &st), 2); /* completes while "1" is still loading */
    CHECK_EQ(atomic_load(&slow.calls), 1);
    atomic_store(&slow.released, true);
    pthread_join(t, NULL);
    CHECK_OK(a.st);
    wk_cache_free(c);
}

WK_TEST(test_cache_load_overlapping_an_invalidation_is_not_kept)
{
    wk_cache *c = make_cache(NULL);
    db d = {0};
    d.block = true;
    stampede a = {c, &d, NULL, "4", 0, WK_OK};
    pthread_t t;
    pthread_create(&t, NULL, blocked_get, &a);
    while (atomic_load(&d.entered) == 0) {
        usleep(1000);
    }
    CHECK_OK(wk_cache_invalidate(c, &seed_user_schema, "4", 1, NULL)); /* acknowledged */
    atomic_store(&d.released, true);
    pthread_join(t, NULL);
    CHECK_EQ(a.age, 4); /* the caller that was waiting gets the loaded value */
    d.block = false;
    d.age_base = 500;
    wk_status st;
    CHECK_EQ(get_age(c, "4", &d, &st), 504); /* but it was not kept */
    wk_cache_free(c);
}

/* ---- over a shared tier ---- */

WK_TEST(test_cache_fills_the_shared_tier_and_a_second_process_hits_it)
{
    fake_store f;
    fake_store_init(&f);
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    wk_cache *a = make_cache(&cfg);
    wk_cache *b = make_cache(&cfg);
    db d = {0};
    wk_status st;
    CHECK_EQ(get_age(a, "8", &d, &st), 8);
    size_t len = 0;
    CHECK(fake_store_get_raw(&f, "wk:user:v1:8", &len) != NULL && len > 0);
    CHECK_EQ(get_age(b, "8", &d, &st), 8);
    CHECK_EQ(atomic_load(&d.calls), 1);
    wk_cache_stats s;
    wk_cache_get_stats(b, &s);
    CHECK_EQ(s.shared_hits, 1);
    CHECK_EQ(s.loads, 0);
    wk_cache_free(a);
    wk_cache_free(b);
    fake_store_free(&f);
}

WK_TEST(test_cache_invalidation_reaches_every_process)
{
    fake_store f;
    fake_store_init(&f);
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    wk_cache *a = make_cache(&cfg);
    wk_cache *b = make_cache(&cfg);
    db d = {0};
    wk_status st;
    get_age(a, "3", &d, &st);
    get_age(b, "3", &d, &st); /* both hold it locally now */
    d.age_base = 40;
    CHECK_OK(wk_cache_invalidate(a, &seed_user_schema, "3", 1, NULL));
    CHECK_EQ(get_age(b, "3", &d, &st), 43);
    CHECK_EQ(get_age(a, "3", &d, &st), 43);
    wk_cache_stats s;
    wk_cache_get_stats(b, &s);
    CHECK_EQ(s.invalidations, 1);
    /* A put in one process replaces the value everywhere. */
    seed_user u;
    memset(&u, 0, sizeof u);
    u.username = (char *)"p";
    u.age = 9;
    CHECK_OK(wk_cache_put(b, &seed_user_schema, "3", 1, &u, 0, NULL));
    CHECK_EQ(get_age(a, "3", &d, &st), 9);
    CHECK_EQ(get_age(b, "3", &d, &st), 9);
    wk_cache_free(a);
    wk_cache_free(b);
    fake_store_free(&f);
}

WK_TEST(test_cache_tombstone_keeps_an_old_load_out_of_the_shared_tier)
{
    fake_store f;
    fake_store_init(&f);
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    wk_cache *a = make_cache(&cfg);
    CHECK_OK(wk_cache_invalidate(a, &seed_user_schema, "6", 1, NULL));
    db d = {0};
    wk_status st;
    CHECK_EQ(get_age(a, "6", &d, &st), 6);
    size_t len = 0;
    const uint8_t *raw = fake_store_get_raw(&f, "wk:user:v1:6", &len);
    CHECK(raw != NULL && len == WK_CACHE_MARK_LEN &&
          memcmp(raw, WK_CACHE_TOMBSTONE_MARK, len) == 0);
    wk_cache_free(a);
    fake_store_free(&f);
}

WK_TEST(test_cache_falls_back_to_the_loader_while_the_shared_tier_is_down)
{
    fake_store f;
    fake_store_init(&f);
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_status st;
    CHECK_EQ(get_age(c, "1", &d, &st), 1);
    fake_store_set_down(&f, true);
    d.age_base = 10; /* the truth changes while Redis is down */
    CHECK_EQ(get_age(c, "1", &d, &st), 11);
    CHECK_EQ(get_age(c, "1", &d, &st), 11); /* local tier bypassed: the loader answers */
    CHECK_EQ(atomic_load(&d.calls), 3);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.fallbacks, 2);
    CHECK(s.shared_errors >= 2);
    CHECK_EQ(s.local_entries, 0);
    fake_store_set_down(&f, false);
    CHECK_EQ(get_age(c, "2", &d, &st), 12);
    CHECK_EQ(get_age(c, "2", &d, &st), 12);
    CHECK_EQ(atomic_load(&d.calls), 4); /* recovered: cached again */
    wk_cache_free(c);
    fake_store_free(&f);
}

WK_TEST(test_cache_corrupt_shared_entry_is_left_in_place_by_a_read)
{
    /* another writer's value (another serializer, another program): a read never deletes it */
    fake_store f;
    fake_store_init(&f);
    fake_store_put_raw(&f, "wk:user:v1:2", "\x85\xa8garbage", 9);
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_status st;
    wk_cache_entry *r = NULL;
    wk_error err = {0};
    /* without a loader: not "not found", but the decode failure */
    st = wk_cache_get(c, &seed_user_schema, "2", 1, NULL, NULL, &r, &err);
    CHECK(st != WK_OK && st != WK_ERR_NOT_FOUND);
    CHECK(err.msg != NULL && strstr(err.msg, "cannot be decoded") != NULL);
    CHECK(r == NULL);
    wk_slice ids[1] = {{"2", 1}};
    wk_status sts[1];
    st = wk_cache_get_many(c, &seed_user_schema, 1, ids, NULL, NULL, &r, sts, &err);
    CHECK(st != WK_OK && sts[0] != WK_OK && sts[0] != WK_ERR_NOT_FOUND);
    /* with a loader: the loader's value, not stored over the other value */
    CHECK_EQ(get_age(c, "2", &d, &st), 2);
    CHECK_EQ(atomic_load(&d.calls), 1);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.corrupt, 3);
    CHECK_EQ(f.removes, 0);
    size_t len = 0;
    const uint8_t *raw = fake_store_get_raw(&f, "wk:user:v1:2", &len);
    CHECK(raw != NULL && len == 9 && memcmp(raw, "\x85\xa8garbage", 9) == 0);
    wk_cache_free(c);
    fake_store_free(&f);
}

WK_TEST(test_cache_corrupt_shared_entry_is_a_counted_miss_and_is_deleted_when_asked)
{
    fake_store f;
    fake_store_init(&f);
    fake_store_put_raw(&f, "wk:user:v1:2", "\x85\xa8garbage", 9);
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    cfg.flags = WK_CACHE_REMOVE_CORRUPT;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_status st;
    CHECK_EQ(get_age(c, "2", &d, &st), 2);
    wk_cache_stats s;
    wk_cache_get_stats(c, &s);
    CHECK_EQ(s.corrupt, 1);
    CHECK_EQ(f.removes, 1);
    size_t len = 0;
    const uint8_t *raw = fake_store_get_raw(&f, "wk:user:v1:2", &len);
    CHECK(raw != NULL && raw[0] == 0x85 && len > 9); /* refilled with the good value */
    wk_cache_free(c);
    fake_store_free(&f);
}

WK_TEST(test_cache_versions_never_share_entries)
{
    typedef struct user_v2 {
        char *username;
        int32_t age;
    } user_v2;
    WK_SCHEMA_DEFINE_STATIC(user_v2_schema, user_v2, "user", 2,
        WK_FIELD(user_v2, username, "username", WK_SK_STR, WK_REQUIRED),
        WK_FIELD(user_v2, age, "age", WK_SK_I32, 0));
    fake_store f;
    fake_store_init(&f);
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    wk_cache *c = make_cache(&cfg);
    db d = {0};
    wk_status st;
    get_age(c, "1", &d, &st);
    wk_cache_entry *r = NULL;
    CHECK_STATUS(wk_cache_get(c, &user_v2_schema, "1", 1, NULL, NULL, &r, NULL),
                 WK_ERR_NOT_FOUND);
    CHECK(fake_store_get_raw(&f, "wk:user:v1:1", &(size_t){0}) != NULL);
    wk_cache_free(c);
    fake_store_free(&f);
}

WK_TEST(test_cache_get_many_uses_each_tier_once)
{
    fake_store f;
    fake_store_init(&f);
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    wk_cache *a = make_cache(&cfg);
    wk_cache *b = make_cache(&cfg);
    db d = {0};
    wk_status st;
    get_age(a, "1", &d, &st); /* "1": in the shared tier */
    get_age(b, "2", &d, &st); /* "2": local in b (and shared) */
    unsigned fetches = f.fetches;
    wk_slice ids[4] = {{"1", 1}, {"2", 1}, {"3", 1}, {"x", 1}};
    wk_cache_entry *refs[4];
    wk_status sts[4];
    CHECK_OK(wk_cache_get_many(b, &seed_user_schema, 4, ids, db_load, &d, refs, sts, NULL));
    CHECK_EQ(f.fetches - fetches, 1); /* one round trip for "1", "3" and "x" */
    CHECK_OK(sts[0]);
    CHECK_OK(sts[1]);
    CHECK_OK(sts[2]);
    CHECK_STATUS(sts[3], WK_ERR_NOT_FOUND);
    CHECK_EQ(((const seed_user *)wk_cache_entry_object(refs[2]))->age, 3);
    for (int i = 0; i < 3; i++) {
        wk_cache_entry_unref(refs[i]);
    }
    CHECK(refs[3] == NULL);
    CHECK_EQ(atomic_load(&d.calls), 4); /* 1, 2, then 3 and x */
    wk_cache_free(a);
    wk_cache_free(b);
    fake_store_free(&f);
}

/* Gets over keys in every shared state, with the store's `fetch` or its `fetch_each`: one
 * multi-get, or (`single`) one wk_cache_get per key; `fail_after` makes fetch_each fail after
 * that many values. */
typedef struct many_result {
    wk_status sts[6];
    int64_t ages[6];
    int loads;
    wk_cache_stats stats;
    unsigned removes, stores, reentered;
    bool corrupt_left; /* the corrupt bytes still in the store */
} many_result;

static void many_over_states(bool in_place, bool single, unsigned fail_after, many_result *out)
{
    fake_store f;
    fake_store_init(&f);
    fake_store_in_place(&f, in_place);
    f.fail_after = fail_after;
    wk_cache_config cfg = {0};
    cfg.store = &f.store;
    cfg.negative_ttl_ms = 60000;
    cfg.flags = WK_CACHE_REMOVE_CORRUPT; /* the corrupt value is removed, then refilled */
    wk_cache *a = make_cache(&cfg);
    db d = {0};
    wk_status st;
    get_age(a, "1", &d, &st); /* "1" and "6": good values in the shared tier */
    get_age(a, "6", &d, &st);
    wk_cache_free(a);
    fake_store_put_raw(&f, "wk:user:v1:2", WK_CACHE_TOMBSTONE_MARK, WK_CACHE_MARK_LEN);
    fake_store_put_raw(&f, "wk:user:v1:3", WK_CACHE_NEGATIVE_MARK, WK_CACHE_MARK_LEN);
    fake_store_put_raw(&f, "wk:user:v1:4", "\x85\xa8garbage", 9); /* "5": absent */
    wk_cache *c = make_cache(&cfg);
    unsigned removes = f.removes, stores = f.stores;
    atomic_store(&d.calls, 0);
    wk_slice ids[6] = {{"1", 1}, {"2", 1}, {"3", 1}, {"4", 1}, {"5", 1}, {"6", 1}};
    wk_cache_entry *refs[6];
    if (single) {
        for (int i = 0; i < 6; i++) {
            refs[i] = NULL;
            out->sts[i] = wk_cache_get(c, &seed_user_schema, ids[i].ptr, ids[i].len, db_load, &d,
                                       &refs[i], NULL);
        }
    } else {
        (void)wk_cache_get_many(c, &seed_user_schema, 6, ids, db_load, &d, refs, out->sts, NULL);
    }
    for (int i = 0; i < 6; i++) {
        out->ages[i] = -1;
        if (out->sts[i] == WK_OK) {
            out->ages[i] = ((const seed_user *)wk_cache_entry_object(refs[i]))->age;
            wk_cache_entry_unref(refs[i]);
        }
    }
    out->loads = atomic_load(&d.calls);
    wk_cache_get_stats(c, &out->stats);
    out->removes = f.removes - removes;
    out->stores = f.stores - stores;
    out->reentered = f.reentered;
    size_t len = 0;
    const uint8_t *raw = fake_store_get_raw(&f, "wk:user:v1:4", &len);
    out->corrupt_left = raw != NULL && len == 9;
    wk_cache_free(c);
    fake_store_free(&f);
}

/* The answers, loads and counts over the states, the same through `fetch` and `fetch_each`. */
static void check_states_alike(bool single)
{
    many_result copy, place;
    many_over_states(false, single, 0, &copy);
    many_over_states(true, single, 0, &place);
    for (const many_result *r = &copy; r != NULL; r = r == &copy ? &place : NULL) {
        CHECK_OK(r->sts[0]);
        CHECK_EQ(r->ages[0], 1);             /* from the shared tier */
        CHECK_OK(r->sts[1]);                 /* tombstone: loaded */
        CHECK_STATUS(r->sts[2], WK_ERR_NOT_FOUND); /* negative mark: no load */
        CHECK_OK(r->sts[3]);                 /* corrupt: loaded, */
        CHECK(!r->corrupt_left);             /* removed (after the fetch: not from a take) */
        CHECK_OK(r->sts[4]);                 /* absent: loaded */
        CHECK_EQ(r->ages[5], 6);
        CHECK_EQ(r->loads, 3);
        CHECK_EQ(r->stats.shared_hits, 3); /* 1, 3 and 6 */
        CHECK_EQ(r->stats.corrupt, 1);
        CHECK_EQ(r->reentered, 0);
    }
    CHECK_EQ(copy.stats.shared_misses, place.stats.shared_misses);
    CHECK_EQ(copy.removes, place.removes);
    CHECK_EQ(copy.stores, place.stores);
}

WK_TEST(test_cache_get_in_place_fetch_answers_like_the_copying_fetch)
{
    check_states_alike(true);
}

WK_TEST(test_cache_get_many_in_place_fetch_answers_like_the_copying_fetch)
{
    check_states_alike(false);
    /* failing after the first value: it stands, the rest is loaded without filling */
    many_result part;
    many_over_states(true, false, 1, &part);
    CHECK_OK(part.sts[0]);
    CHECK_EQ(part.ages[0], 1);
    CHECK_EQ(part.stats.shared_hits, 1);
    CHECK_EQ(part.stats.shared_errors, 1);
    CHECK_OK(part.sts[1]);
    CHECK_OK(part.sts[2]); /* never reached the store: loaded */
    CHECK_EQ(part.ages[5], 6);
    CHECK_EQ(part.loads, 5);
    CHECK_EQ(part.stores, 0); /* the tier failed: nothing written back */
    CHECK_EQ(part.reentered, 0);
}

WK_TEST(test_cache_stores_free_form_documents)
{
    WK_SCHEMA_DEFINE_VALUE(doc_schema, "doc", 1);
    wk_cache *c = make_cache(NULL);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value v;
    CHECK_OK(wk_value_set_map(&v, &a, 1));
    wk_value_set_str(&v.u.pairs[0].key, "k", 1);
    wk_value_set_int(&v.u.pairs[0].val, -3);
    CHECK_OK(wk_cache_put(c, &doc_schema, "d", 1, &v, 0, NULL));
    wk_arena_free(&a);
    wk_cache_entry *r = NULL;
    CHECK_OK(wk_cache_get(c, &doc_schema, "d", 1, NULL, NULL, &r, NULL));
    const wk_value *got = wk_cache_entry_object(r);
    CHECK_EQ(got->type, WK_VAL_MAP);
    CHECK_EQ(wk_value_map_get(got, "k", 1)->u.i, -3);
    wk_cache_entry_unref(r);
    wk_cache_free(c);
}
