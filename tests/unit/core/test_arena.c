/* wk_arena: alignment, large requests, the cap, reset, caller buffers; wk_pool. */
#include "wirekit/arena.h"
#include "wk_test.h"

WK_TEST(test_arena_aligns_and_separates_allocations)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    uint8_t *p = wk_arena_alloc(&a, 3, 1);
    uint64_t *q = wk_arena_alloc(&a, sizeof(uint64_t), 8);
    CHECK(p != NULL && q != NULL);
    CHECK(((uintptr_t)q % 8) == 0);
    CHECK((uint8_t *)q >= p + 3);
    *q = 42;
    memset(p, 0xAB, 3);
    CHECK_EQ(*q, 42);
    wk_arena_free(&a);
}

WK_TEST(test_arena_serves_requests_larger_than_a_chunk)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    void *small = wk_arena_alloc(&a, 16, 8);
    uint8_t *big = wk_arena_alloc(&a, 5u << 20, 16);
    void *small2 = wk_arena_alloc(&a, 16, 8);
    CHECK(small != NULL && big != NULL && small2 != NULL);
    memset(big, 1, 5u << 20);
    CHECK(wk_arena_footprint(&a) >= (5u << 20));
    wk_arena_free(&a);
    CHECK_EQ(wk_arena_footprint(&a), 0);
}

WK_TEST(test_arena_cap_stops_growth)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 64 * 1024);
    size_t got = 0;
    while (wk_arena_alloc(&a, 1000, 1) != NULL) {
        got += 1000;
        CHECK(got < 128 * 1024);
    }
    CHECK(wk_arena_footprint(&a) <= 64 * 1024);
    CHECK(wk_arena_alloc(&a, SIZE_MAX - 8, 1) == NULL);
    wk_arena_free(&a);
}

WK_TEST(test_arena_reset_reuses_memory_without_leaks)
{
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    wk_arena a;
    wk_arena_init(&a, &t.a, 0);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 1000; i++) {
            CHECK(wk_arena_alloc(&a, 100, 8) != NULL);
        }
        wk_arena_reset(&a);
    }
    size_t allocs = t.allocs;
    CHECK(wk_arena_alloc(&a, 100, 8) != NULL);
    CHECK_EQ(t.allocs, allocs); /* served from the kept chunk */
    wk_arena_free(&a);
    CHECK_EQ(t.live_bytes, 0);
}

WK_TEST(test_arena_uses_caller_buffer_first)
{
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    uint8_t mem[256];
    wk_arena a;
    wk_arena_init_buf(&a, mem, sizeof mem, &t.a, 0);
    uint8_t *p = wk_arena_alloc(&a, 100, 1);
    CHECK(p >= mem && p + 100 <= mem + sizeof mem);
    CHECK_EQ(t.allocs, 0);
    CHECK(wk_arena_alloc(&a, 200, 1) != NULL);
    CHECK_EQ(t.allocs, 1);
    wk_arena_reset(&a);
    CHECK_EQ(t.live_bytes, 0);
    wk_arena_free(&a);
}

WK_TEST(test_arena_strndup_terminates)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    char *s = wk_arena_strndup(&a, "hello world", 5);
    CHECK_STR(s, "hello");
    wk_arena_free(&a);
}

WK_TEST(test_pool_allocator_never_exceeds_its_buffer)
{
    uint8_t mem[128];
    wk_pool pool;
    wk_allocator al;
    wk_pool_init(&pool, mem, sizeof mem, &al);
    void *p = wk_alloc(&al, 40);
    CHECK(p != NULL && ((uintptr_t)p % 16) == 0);
    p = wk_realloc(&al, p, 40, 80); /* last block grows in place */
    CHECK(p != NULL);
    CHECK(wk_alloc(&al, 100) == NULL);
    wk_free(&al, p, 80);
    CHECK(wk_alloc(&al, 100) != NULL);
}

WK_TEST(test_arena_reset_coalesces_chunks_so_reuse_allocates_nothing)
{
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    wk_arena a;
    wk_arena_init(&a, &t.a, 0);
    for (int i = 0; i < 2000; i++) {
        CHECK(wk_arena_alloc(&a, 100, 8) != NULL); /* spans several chunks */
    }
    wk_arena_reset(&a);
    size_t allocs = t.allocs;
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 2000; i++) {
            CHECK(wk_arena_alloc(&a, 100, 8) != NULL);
        }
        wk_arena_reset(&a);
    }
    CHECK_EQ(t.allocs, allocs);
    wk_arena_free(&a);
    CHECK_EQ(t.live_bytes, 0);
}
