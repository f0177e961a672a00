/*
 * The pipelines' prepared-statement cache (addons/pq/pq_stmt_cache.c) without a server: a
 * connection struct with no libpq connection carries the cache, and the tests play the
 * pipeline's part (marking a statement prepared once the server would have said so). They
 * check the key (text and parameter types), least-recently-used eviction with the evicted
 * name queued for DEALLOCATE, slots of the running batch never evicted (the statement goes
 * unprepared instead), names never reused, capacity 0 and lowering the capacity.
 */
#include <stdlib.h>

#include "pq/pq_stmt_cache.h"
#include "wk_test.h"

/* Acquires `sql` with `types` for `batch`, as wk_pq_pipeline_add does, and marks it
 * prepared; returns its slot (-1: none). */
static long take(wk_pq_conn *c, const char *sql, const Oid *types, size_t n, uint64_t batch,
                 bool *hit)
{
    long slot = -2;
    bool h = false;
    if (wk__pq_stmt_acquire(wk__pq_stmts(c), sql, types, n, batch, &slot, &h, NULL) != WK_OK) {
        return -2;
    }
    if (slot >= 0) {
        wk__pq_stmts(c)->slots[slot].ready = true;
    }
    if (hit != NULL) {
        *hit = h;
    }
    return slot;
}

static unsigned long name_number(const wk_pq_conn *c, long slot)
{
    return strtoul(c->stmts->slots[slot].name + 4, NULL, 10);
}

WK_TEST(test_pq_stmt_cache_keys_on_text_and_parameter_types)
{
    wk_pq_conn c;
    memset(&c, 0, sizeof c);
    static const Oid i4[1] = {23}, i8[1] = {20};
    bool hit = true;
    long a = take(&c, "SELECT $1", i4, 1, 1, &hit);
    CHECK(a >= 0 && !hit);
    CHECK(strncmp(c.stmts->slots[a].name, "wk_s", 4) == 0);
    CHECK_EQ(take(&c, "SELECT $1", i4, 1, 2, &hit), a);
    CHECK(hit);
    long b = take(&c, "SELECT $1", i8, 1, 2, &hit); /* same text, another type */
    CHECK(b >= 0 && b != a && !hit);
    long d = take(&c, "SELECT $1 ", i4, 1, 2, &hit); /* another text */
    CHECK(d >= 0 && d != a && d != b && !hit);
    long e = take(&c, "SELECT 1", NULL, 0, 2, &hit);
    CHECK(e >= 0 && !hit);
    CHECK_EQ(take(&c, "SELECT 1", NULL, 0, 3, &hit), e);
    CHECK(hit);
    wk_pq_stmt_cache_stats s;
    wk_pq_get_stmt_cache_stats(&c, &s);
    CHECK_EQ(s.hits, 2u);
    CHECK_EQ(s.misses, 4u);
    CHECK_EQ(s.size, 4u);
    CHECK_EQ(s.capacity, 64u);
    CHECK_EQ(s.evictions, 0u);
    wk__pq_stmt_cache_free(&c);
}

WK_TEST(test_pq_stmt_cache_evicts_the_least_recently_used_and_queues_its_deallocate)
{
    wk_pq_conn c;
    memset(&c, 0, sizeof c);
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(&c, 3, NULL), WK_OK);
    long a = take(&c, "A", NULL, 0, 1, NULL), b = take(&c, "B", NULL, 0, 1, NULL),
         d = take(&c, "C", NULL, 0, 1, NULL);
    CHECK(a >= 0 && b >= 0 && d >= 0);
    char b_name[WK__PQ_STMT_NAME];
    memcpy(b_name, c.stmts->slots[b].name, sizeof b_name);
    unsigned long last = name_number(&c, d);
    CHECK_EQ(take(&c, "A", NULL, 0, 2, NULL), a); /* A used again: B is now the oldest */
    bool hit = true;
    long n = take(&c, "D", NULL, 0, 3, &hit);
    CHECK_EQ(n, b);
    CHECK(!hit);
    CHECK(strcmp(c.stmts->slots[n].sql, "D") == 0);
    CHECK(name_number(&c, n) > last); /* a new name, never the evicted one */
    CHECK_EQ(c.stmts->ndrop, 1u);
    CHECK(strcmp(c.stmts->drop[0], b_name) == 0);
    wk_pq_stmt_cache_stats s;
    wk_pq_get_stmt_cache_stats(&c, &s);
    CHECK_EQ(s.evictions, 1u);
    CHECK_EQ(s.size, 3u);
    wk__pq_stmt_cache_free(&c);
}

WK_TEST(test_pq_stmt_cache_never_evicts_a_statement_of_the_running_batch)
{
    wk_pq_conn c;
    memset(&c, 0, sizeof c);
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(&c, 2, NULL), WK_OK);
    CHECK(take(&c, "A", NULL, 0, 7, NULL) >= 0);
    CHECK(take(&c, "B", NULL, 0, 7, NULL) >= 0);
    /* both slots serve batch 7: a third statement of it goes unprepared */
    CHECK_EQ(take(&c, "C", NULL, 0, 7, NULL), -1);
    CHECK_EQ(c.stmts->ndrop, 0u);
    /* the next batch may evict */
    long s = take(&c, "C", NULL, 0, 8, NULL);
    CHECK(s >= 0);
    CHECK_EQ(c.stmts->ndrop, 1u);
    wk__pq_stmt_cache_free(&c);
}

WK_TEST(test_pq_stmt_cache_capacity_zero_and_lowering_the_capacity)
{
    wk_pq_conn c;
    memset(&c, 0, sizeof c);
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(&c, 4097, NULL), WK_ERR_LIMIT);
    for (int i = 0; i < 5; i++) {
        char sql[16];
        snprintf(sql, sizeof sql, "S%d", i);
        CHECK(take(&c, sql, NULL, 0, (uint64_t)i + 1, NULL) >= 0);
    }
    /* one taken but never prepared (its batch failed to prepare it): forgotten without a
     * DEALLOCATE */
    long np = -1;
    bool hit = false;
    CHECK_STATUS(wk__pq_stmt_acquire(wk__pq_stmts(&c), "never", NULL, 0, 9, &np, &hit, NULL),
                 WK_OK);
    wk__pq_stmt_forget(c.stmts, np, true);
    CHECK_EQ(c.stmts->ndrop, 0u);
    /* down to 2: the three least recently used go, each queued for DEALLOCATE */
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(&c, 2, NULL), WK_OK);
    CHECK_EQ(c.stmts->ndrop, 3u);
    CHECK(strcmp(c.stmts->slots[0].sql, "S3") == 0 || strcmp(c.stmts->slots[0].sql, "S4") == 0);
    CHECK_EQ(take(&c, "S4", NULL, 0, 10, &hit) >= 0, true);
    CHECK(hit);
    /* a pipeline open on the connection: the capacity cannot change */
    c.stmts->open = true;
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(&c, 8, NULL), WK_ERR_STATE);
    c.stmts->open = false;
    /* capacity 0: nothing kept, every statement unprepared */
    CHECK_STATUS(wk_pq_set_stmt_cache_capacity(&c, 0, NULL), WK_OK);
    CHECK_EQ(take(&c, "S4", NULL, 0, 11, NULL), -1);
    wk_pq_stmt_cache_stats s;
    wk_pq_get_stmt_cache_stats(&c, &s);
    CHECK_EQ(s.size, 0u);
    CHECK_EQ(s.capacity, 0u);
    CHECK_EQ(c.stmts->ndrop, 5u);
    wk__pq_stmt_cache_free(&c);
}
