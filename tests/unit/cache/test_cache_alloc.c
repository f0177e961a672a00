/*
 * The entity cache allocates only through the allocator it is given: a cache made with a
 * counting wk_allocator serves get, get_many, put and invalidate, and every byte it took is
 * back when it is freed. This executable is linked with --wrap=malloc/calloc/realloc/
 * aligned_alloc, so every libc allocation made by the statically linked library is counted
 * too and must be zero while the cache works.
 */
#include <stdlib.h>
#include <string.h>

#include "../schema/seed_user.h"
#include "wk_test.h"
#include "wirekit/cache.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);

static size_t libc_allocs;

void *__wrap_malloc(size_t n)
{
    libc_allocs++;
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    libc_allocs++;
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    libc_allocs++;
    return __real_realloc(p, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    libc_allocs++;
    return __real_aligned_alloc(align, n);
}

/* A counting allocator over the real libc calls (so that it is not counted as libc use). */
typedef struct counting {
    wk_allocator a;
    size_t allocs, live_bytes, attempts, fail_at;
} counting;

static void *c_malloc(void *ctx, size_t n)
{
    counting *t = ctx;
    if (++t->attempts == t->fail_at) {
        return NULL;
    }
    void *p = __real_malloc(n);
    if (p != NULL) {
        t->allocs++;
        t->live_bytes += n;
    }
    return p;
}

static void *c_realloc(void *ctx, void *p, size_t old, size_t n)
{
    counting *t = ctx;
    if (++t->attempts == t->fail_at) {
        return NULL;
    }
    void *q = __real_realloc(p, n);
    if (q != NULL) {
        t->allocs++;
        t->live_bytes = t->live_bytes - old + n;
    }
    return q;
}

static void c_free(void *ctx, void *p, size_t n)
{
    counting *t = ctx;
    if (p != NULL) {
        t->live_bytes -= n;
        free(p);
    }
}

static void counting_init(counting *t)
{
    memset(t, 0, sizeof *t);
    t->a.malloc = c_malloc;
    t->a.realloc = c_realloc;
    t->a.free = c_free;
    t->a.ctx = t;
}

static wk_status load_user(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                           void *obj, wk_arena *arena, wk_error *err)
{
    (void)ctx;
    (void)s;
    (void)err;
    if (id_len > 0 && id[0] == 'x') {
        return WK_ERR_NOT_FOUND;
    }
    seed_user *u = obj;
    u->username = wk_arena_strndup(arena, id, id_len);
    u->password = (char *)"pw";
    u->age = (int)id_len;
    u->enabled = true;
    wk_value_set_nil(&u->metadata);
    return u->username != NULL ? WK_OK : WK_ERR_NOMEM;
}

WK_TEST(test_cache_allocates_only_through_its_allocator)
{
    CHECK_OK(wk_schema_prepare(&seed_user_schema, NULL, NULL)); /* the descriptor's index: once */
    counting ta;
    counting_init(&ta);
    size_t before = libc_allocs;
    wk_cache_config cfg = {.alloc = &ta.a, .negative_ttl_ms = 1000};
    wk_cache *c = NULL;
    CHECK_OK(wk_cache_new(&cfg, &c, NULL));
    wk_slice ids[5] = {{"1", 1}, {"22", 2}, {"x", 1}, {"333", 3}, {"1", 1}};
    wk_cache_entry *refs[5];
    wk_status sts[5];
    CHECK_OK(wk_cache_get_many(c, &seed_user_schema, 5, ids, load_user, NULL, refs, sts, NULL));
    CHECK_STATUS(sts[2], WK_ERR_NOT_FOUND);
    CHECK_OK(sts[3]);
    const seed_user *u = wk_cache_entry_object(refs[3]);
    CHECK_MEM(u->username, strlen(u->username), "333", 3);
    for (size_t i = 0; i < 5; i++) {
        wk_cache_entry_unref(refs[i]);
    }
    /* the same again: now local hits */
    CHECK_OK(wk_cache_get_many(c, &seed_user_schema, 5, ids, load_user, NULL, refs, sts, NULL));
    for (size_t i = 0; i < 5; i++) {
        wk_cache_entry_unref(refs[i]);
    }
    wk_cache_entry *one = NULL;
    CHECK_OK(wk_cache_get(c, &seed_user_schema, "4444", 4, load_user, NULL, &one, NULL));
    seed_user put = *(const seed_user *)wk_cache_entry_object(one);
    put.age = 99;
    CHECK_OK(wk_cache_put(c, &seed_user_schema, "4444", 4, &put, 0, NULL));
    wk_cache_entry_unref(one);
    CHECK_OK(wk_cache_invalidate(c, &seed_user_schema, "22", 2, NULL));
    CHECK_EQ(libc_allocs - before, 0); /* not one libc allocation by the cache */
    CHECK(ta.allocs > 5);
    wk_cache_free(c);
    CHECK_EQ(ta.live_bytes, 0);
    CHECK_EQ(libc_allocs - before, 0);
}

WK_TEST(test_cache_get_many_reports_nomem_from_its_allocator)
{
    CHECK_OK(wk_schema_prepare(&seed_user_schema, NULL, NULL));
    for (size_t fail_at = 1; fail_at < 12; fail_at++) {
        counting ta;
        counting_init(&ta);
        wk_cache_config cfg = {.alloc = &ta.a, .shards = 1};
        wk_cache *c = NULL;
        if (wk_cache_new(&cfg, &c, NULL) != WK_OK) {
            continue;
        }
        ta.fail_at = ta.attempts + fail_at;
        wk_slice ids[3] = {{"1", 1}, {"2", 1}, {"3", 1}};
        wk_cache_entry *refs[3] = {NULL, NULL, NULL};
        wk_status sts[3] = {WK_OK, WK_OK, WK_OK};
        wk_status st = wk_cache_get_many(c, &seed_user_schema, 3, ids, load_user, NULL, refs,
                                         sts, NULL);
        CHECK(st == WK_OK || st == WK_ERR_NOMEM);
        for (size_t i = 0; i < 3; i++) { /* ids that did load hold a reference */
            CHECK(sts[i] == WK_OK || sts[i] == WK_ERR_NOMEM);
            CHECK(refs[i] == NULL || sts[i] == WK_OK);
            wk_cache_entry_unref(refs[i]);
        }
        wk_cache_free(c);
        CHECK_EQ(ta.live_bytes, 0);
    }
}
