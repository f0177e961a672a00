/*
 * Hostile streams for both unpackers: count and length bombs, a header declaring 4 GB then
 * the end of input, depth bombs, a million tiny values, an endless string. Each must end in
 * a clean error (or all its values) with the memory the unpacker takes, counted by a test
 * allocator, bounded by the buffer cap and never by what a header declares.
 */
#include <stdlib.h>

#include "split.h"
#include "wirekit/wirekit.h"
#include "wk_test.h"

#define CAP ((size_t)1 << 20)
#define PIECE 4096

/* Feeds `head` then `fill` bytes of `byte` in PIECE chunks (total `total` bytes, 0 = no
 * end), then finishes. Returns the final status (the first that is not OK/AGAIN) and counts
 * the values taken out. */
static wk_status mp_feed_pattern(wk_mp_unpacker *u, const uint8_t *head, size_t hlen,
                                 uint8_t byte, size_t total, size_t *values)
{
    uint8_t chunk[PIECE];
    size_t sent = 0;
    *values = 0;
    wk_status st;
    if (hlen > 0) {
        st = wk_mp_unpacker_feed(u, head, hlen);
        if (st != WK_OK) {
            return st;
        }
        goto drain;
    }
    for (;;) {
        if (sent >= total) {
            wk_mp_unpacker_finish(u);
        } else {
            size_t n = total - sent < PIECE ? total - sent : PIECE;
            memset(chunk, byte, n);
            st = wk_mp_unpacker_feed(u, chunk, n);
            if (st != WK_OK) {
                return st;
            }
            sent += n;
        }
    drain:
        for (;;) {
            const uint8_t *d;
            size_t n;
            st = wk_mp_unpacker_next(u, &d, &n, NULL);
            if (st == WK_OK) {
                (*values)++;
                continue;
            }
            if (st == WK_ERR_AGAIN && !u->f.finished) {
                break;
            }
            return st;
        }
    }
}

WK_TEST(test_mp_unpacker_count_bomb_hits_the_cap_not_the_header)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.alloc = &ta.a};
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, &o, CAP);
    static const uint8_t head[] = {0xdd, 0xff, 0xff, 0xff, 0xff}; /* array of 4G-1 */
    size_t values;
    wk_status st = mp_feed_pattern(&u, head, sizeof head, 0x01, 8 * CAP, &values);
    CHECK_STATUS(st, WK_ERR_LIMIT);
    CHECK_EQ(values, 0);
    wk_error e;
    wk_mp_unpacker_error(&u, &e);
    CHECK_EQ(e.offset, 0);
    CHECK_MSG(ta.peak_bytes <= CAP + 4096, "peak %zu", ta.peak_bytes);
    wk_mp_unpacker_free(&u);
    CHECK_EQ(ta.live_bytes, 0);
}

WK_TEST(test_mp_unpacker_4gb_string_header_then_end_is_truncated_at_its_offset)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.alloc = &ta.a};
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, &o, CAP);
    static const uint8_t in[] = {0x01, 0x02, 0xdb, 0xff, 0xff, 0xff, 0xff, 'a', 'b'};
    for (size_t i = 0; i < sizeof in; i++) { /* one byte at a time */
        CHECK_OK(wk_mp_unpacker_feed(&u, in + i, 1));
        const uint8_t *d;
        size_t n;
        while (wk_mp_unpacker_next(&u, &d, &n, NULL) == WK_OK) {
        }
    }
    wk_mp_unpacker_finish(&u);
    const uint8_t *d;
    size_t n;
    CHECK_STATUS(wk_mp_unpacker_next(&u, &d, &n, NULL), WK_ERR_TRUNCATED);
    wk_error e;
    wk_mp_unpacker_error(&u, &e);
    CHECK_EQ(e.offset, 2);
    CHECK_STR(e.msg, "string length exceeds the remaining input");
    CHECK_MSG(ta.peak_bytes <= 8192, "peak %zu", ta.peak_bytes);
    wk_mp_unpacker_free(&u);
}

WK_TEST(test_mp_unpacker_4gb_bin_header_with_data_hits_the_cap)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.alloc = &ta.a};
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, &o, CAP);
    static const uint8_t head[] = {0x07, 0xc6, 0xff, 0xff, 0xff, 0xff};
    size_t values;
    CHECK_STATUS(mp_feed_pattern(&u, head, sizeof head, 'z', 4 * CAP, &values), WK_ERR_LIMIT);
    CHECK_EQ(values, 1);
    wk_error e;
    wk_mp_unpacker_error(&u, &e);
    CHECK_EQ(e.offset, 1);
    CHECK_MSG(ta.peak_bytes <= CAP + 4096, "peak %zu", ta.peak_bytes);
    wk_mp_unpacker_free(&u);
}

WK_TEST(test_mp_unpacker_depth_bomb_is_a_depth_error_with_the_checkers_offset)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.alloc = &ta.a};
    size_t total = 200000;
    uint8_t *all = malloc(total);
    memset(all, 0x91, total); /* [[[[... */
    wk_error want;
    CHECK_STATUS(wk_mp_check(all, total, NULL, NULL, &want), WK_ERR_DEPTH);
    free(all);
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, &o, CAP);
    size_t values;
    CHECK_STATUS(mp_feed_pattern(&u, NULL, 0, 0x91, total, &values), WK_ERR_DEPTH);
    wk_error e;
    wk_mp_unpacker_error(&u, &e);
    CHECK_EQ(e.offset, want.offset);
    CHECK_STR(e.msg, want.msg);
    CHECK_MSG(ta.peak_bytes <= 64 * 1024, "peak %zu", ta.peak_bytes);
    wk_mp_unpacker_free(&u);
}

WK_TEST(test_mp_unpacker_million_tiny_values_in_place_allocate_nothing)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.alloc = &ta.a};
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, &o, CAP);
    size_t values;
    CHECK_STATUS(mp_feed_pattern(&u, NULL, 0, 0x2a, 1000000, &values), WK_ERR_EOF);
    CHECK_EQ(values, 1000000);
    CHECK_EQ(ta.allocs, 0);
    CHECK_EQ(wk_mp_unpacker_offset(&u), 1000000);
    wk_mp_unpacker_free(&u);
}

WK_TEST(test_mp_unpacker_million_values_fed_byte_by_byte_stay_small)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.alloc = &ta.a};
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, &o, CAP);
    static const uint8_t v[] = {0x92, 0xa2, 'h', 'i', 0xcd, 0x12, 0x34}; /* ["hi", 4660] */
    size_t values = 0;
    for (size_t i = 0; i < 1000000 * sizeof v; i++) {
        CHECK_OK(wk_mp_unpacker_feed(&u, v + i % sizeof v, 1));
        const uint8_t *d;
        size_t n;
        wk_status st;
        while ((st = wk_mp_unpacker_next(&u, &d, &n, NULL)) == WK_OK) {
            CHECK(n == sizeof v && memcmp(d, v, n) == 0);
            values++;
        }
        CHECK_STATUS(st, WK_ERR_AGAIN);
    }
    CHECK_EQ(values, 1000000);
    CHECK_MSG(ta.peak_bytes <= 8192, "peak %zu", ta.peak_bytes);
    wk_mp_unpacker_free(&u);
}

WK_TEST(test_mp_unpacker_out_of_memory_is_a_clean_error)
{
    static const uint8_t in[] = {0x92, 0xa2, 'h', 'i', 0x01};
    for (size_t fail = 1; fail <= 2; fail++) {
        wk_test_alloc ta;
        wk_test_alloc_init(&ta);
        ta.fail_at = fail;
        wk_read_opts o = {.alloc = &ta.a};
        wk_mp_unpacker u;
        wk_mp_unpacker_init(&u, &o, CAP);
        wk_status st = WK_OK;
        for (size_t i = 0; i < sizeof in && st != WK_ERR_NOMEM; i++) {
            st = wk_mp_unpacker_feed(&u, in + i, 1);
            const uint8_t *d;
            size_t n;
            if (st == WK_OK) {
                while ((st = wk_mp_unpacker_next(&u, &d, &n, NULL)) == WK_OK) {
                }
            }
        }
        CHECK_STATUS(st, WK_ERR_NOMEM);
        wk_mp_unpacker_free(&u);
        CHECK_EQ(ta.live_bytes, 0);
    }
}

/* Feeds `in` in chunks of `piece` bytes and takes trees out until an error or EOF (with
 * wk_mp_unpacker_next_value_in_place when `in_place`). */
static wk_status mp_trees(wk_mp_unpacker *u, const uint8_t *in, size_t len, size_t piece,
                          wk_arena *arena, bool in_place, size_t *trees)
{
    size_t pos = 0;
    *trees = 0;
    for (;;) {
        if (pos == len) {
            wk_mp_unpacker_finish(u);
        } else {
            size_t n = len - pos < piece ? len - pos : piece;
            wk_status st = wk_mp_unpacker_feed(u, in + pos, n);
            if (st != WK_OK) {
                return st;
            }
            pos += n;
        }
        wk_status st;
        wk_value *v;
        while ((st = in_place ? wk_mp_unpacker_next_value_in_place(u, arena, &v)
                              : wk_mp_unpacker_next_value(u, arena, &v)) == WK_OK) {
            (*trees)++;
            wk_arena_reset(arena);
        }
        if (st != WK_ERR_AGAIN || u->f.finished) {
            return st;
        }
    }
}

static void trees_count_bomb_allocates_by_bytes_present(bool in_place)
{
    /* an array declaring 4G-1 elements, then 2 MB of ones in 4 KiB chunks, as trees: the
     * paused tree allocates nothing for the count; the buffer stops at the cap */
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.alloc = &ta.a};
    size_t len = 2 * CAP;
    uint8_t *in = malloc(len);
    memset(in, 0x01, len);
    memcpy(in + 1, "\xdd\xff\xff\xff\xff", 5);
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, &o, CAP);
    wk_arena arena;
    wk_arena_init(&arena, &ta.a, 0);
    size_t trees;
    CHECK_STATUS(mp_trees(&u, in, len, PIECE, &arena, in_place, &trees), WK_ERR_LIMIT);
    CHECK_EQ(trees, 1);
    wk_error e;
    wk_mp_unpacker_error(&u, &e);
    CHECK_EQ(e.offset, 1);
    CHECK_MSG(ta.peak_bytes <= CAP + 64 * 1024, "peak %zu", ta.peak_bytes);
    wk_mp_unpacker_free(&u);
    wk_arena_free(&arena);
    CHECK_EQ(ta.live_bytes, 0);
    free(in);
}

WK_TEST(test_mp_unpacker_tree_count_bomb_allocates_by_bytes_present)
{
    trees_count_bomb_allocates_by_bytes_present(false);
    trees_count_bomb_allocates_by_bytes_present(true);
}

static void trees_depth_bomb_is_the_checkers_depth_error(bool in_place)
{
    size_t total = 100000;
    uint8_t *in = malloc(total);
    memset(in, 0x91, total); /* [[[[... */
    wk_error want;
    CHECK_STATUS(wk_mp_check(in, total, NULL, NULL, &want), WK_ERR_DEPTH);
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, NULL, CAP);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    size_t trees;
    CHECK_STATUS(mp_trees(&u, in, total, 100, &arena, in_place, &trees), WK_ERR_DEPTH);
    wk_error e;
    wk_mp_unpacker_error(&u, &e);
    CHECK_EQ(e.offset, want.offset);
    CHECK_STR(e.msg, want.msg);
    wk_mp_unpacker_free(&u);
    wk_arena_free(&arena);
    free(in);
}

WK_TEST(test_mp_unpacker_tree_depth_bomb_is_the_checkers_depth_error)
{
    trees_depth_bomb_is_the_checkers_depth_error(false);
    trees_depth_bomb_is_the_checkers_depth_error(true);
}

static void trees_out_of_memory_at_every_allocation_is_clean(bool in_place)
{
    /* values cut by 100-byte chunks: the gather buffer, the tree state, its node block, the
     * container list and the frames each fail in turn */
    wk_buf data;
    wk_buf_init(&data, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &data);
    for (int i = 0; i < 6; i++) {
        wk_mp_writer_begin_array(&w, 40);
        for (int j = 0; j < 40; j++) {
            wk_mp_writer_begin_map(&w, 1);
            wk_mp_writer_str(&w, "key", 3);
            wk_mp_writer_uint(&w, (uint64_t)(i * j));
        }
    }
    wk_mp_writer_finish(&w, NULL);
    bool failed_once = false;
    for (size_t fail = 1; fail <= 40; fail++) {
        wk_test_alloc ta;
        wk_test_alloc_init(&ta);
        ta.fail_at = fail;
        wk_read_opts o = {.alloc = &ta.a};
        wk_mp_unpacker u;
        wk_mp_unpacker_init(&u, &o, CAP);
        wk_arena arena;
        wk_arena_init(&arena, NULL, 0);
        size_t trees;
        wk_status st = mp_trees(&u, data.data, data.len, 100, &arena, in_place, &trees);
        if (st == WK_ERR_EOF) {
            CHECK_EQ(trees, 6);
        } else {
            CHECK_STATUS(st, WK_ERR_NOMEM);
            failed_once = true;
        }
        wk_mp_unpacker_free(&u);
        wk_arena_free(&arena);
        CHECK_EQ(ta.live_bytes, 0);
    }
    CHECK(failed_once);
    wk_buf_free(&data);
}

WK_TEST(test_mp_unpacker_tree_out_of_memory_at_every_allocation_is_clean)
{
    trees_out_of_memory_at_every_allocation_is_clean(false);
    trees_out_of_memory_at_every_allocation_is_clean(true);
}

/* ---- JSON ------------------------------------------------------------------------------ */

typedef struct ev_count {
    size_t events, values;
    uint32_t depth;
} ev_count;

static wk_status count_event(void *self, const wk_event *ev)
{
    ev_count *c = self;
    c->events++;
    c->depth += ev->type == WK_EV_ARRAY || ev->type == WK_EV_MAP;
    c->depth -= ev->type == WK_EV_END;
    return WK_OK;
}

static wk_status count_error(const void *self, wk_error *err)
{
    (void)self;
    return wk_error_set(err, WK_OK, 0, NULL);
}

/* Feeds `head`, then `total` bytes of `unit` repeated in PIECE-byte chunks, taking values out
 * (raw spans, or events when `events` is not NULL: it counts them); *values gets the count of
 * values taken out. Returns the final status. */
static wk_status json_feed(wk_json_unpacker *u, const char *head, const char *unit,
                           size_t total, size_t *values, ev_count *events)
{
    uint8_t chunk[PIECE];
    size_t ulen = strlen(unit);
    size_t sent = 0;
    size_t k = 0;
    *values = 0;
    wk_status st;
    bool head_done = head == NULL;
    for (;;) {
        if (!head_done) {
            st = wk_json_unpacker_feed(u, head, strlen(head));
            head_done = true;
        } else if (sent >= total) {
            wk_json_unpacker_finish(u);
            st = WK_OK;
        } else {
            size_t n = total - sent < PIECE ? total - sent : PIECE;
            for (size_t i = 0; i < n; i++) {
                chunk[i] = (uint8_t)unit[k++ % ulen];
            }
            st = wk_json_unpacker_feed(u, chunk, n);
            sent += n;
        }
        if (st != WK_OK) {
            return st;
        }
        for (;;) {
            const uint8_t *d;
            size_t n;
            if (events != NULL) {
                wk_sink sink = {count_event, count_error, events};
                st = wk_json_unpacker_next_events(u, &sink);
            } else {
                st = wk_json_unpacker_next(u, &d, &n, NULL);
            }
            if (st == WK_OK) {
                (*values)++;
                continue;
            }
            if (st == WK_ERR_AGAIN && !u->f.finished) {
                break;
            }
            return st;
        }
    }
}

static wk_status json_feed_pattern(wk_json_unpacker *u, const char *head, const char *unit,
                                   size_t total, size_t *values)
{
    return json_feed(u, head, unit, total, values, NULL);
}

WK_TEST(test_json_unpacker_endless_string_hits_the_cap)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI, .alloc = &ta.a};
    wk_json_unpacker u;
    wk_json_unpacker_init(&u, &o, CAP);
    size_t values;
    CHECK_STATUS(json_feed_pattern(&u, "1\n\"", "abc", 10 * CAP, &values), WK_ERR_LIMIT);
    CHECK_EQ(values, 1);
    wk_error e;
    uint64_t line, col;
    wk_json_unpacker_error(&u, &e, &line, &col);
    CHECK_EQ(e.offset, 2);
    CHECK_EQ(line, 2); /* the string's own line and column, as for every other JSON error */
    CHECK_EQ(col, 1);
    CHECK_MSG(ta.peak_bytes <= CAP + 4096, "peak %zu", ta.peak_bytes);
    wk_json_unpacker_free(&u);
}

WK_TEST(test_json_unpacker_huge_array_hits_the_cap)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI, .alloc = &ta.a};
    wk_json_unpacker u;
    wk_json_unpacker_init(&u, &o, CAP);
    size_t values;
    CHECK_STATUS(json_feed_pattern(&u, "[", "1,", 10 * CAP, &values), WK_ERR_LIMIT);
    CHECK_EQ(values, 0);
    CHECK_MSG(ta.peak_bytes <= CAP + 4096, "peak %zu", ta.peak_bytes);
    wk_json_unpacker_free(&u);
}

WK_TEST(test_json_unpacker_depth_bomb_is_the_readers_depth_error)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI, .alloc = &ta.a};
    wk_json_unpacker u;
    wk_json_unpacker_init(&u, &o, CAP);
    size_t values;
    CHECK_STATUS(json_feed_pattern(&u, NULL, "[", 4 * CAP, &values), WK_ERR_DEPTH);
    wk_error e;
    wk_json_unpacker_error(&u, &e, NULL, NULL);
    char big[600];
    memset(big, '[', sizeof big);
    wk_json_reader r;
    wk_json_reader_init(&r, big, sizeof big, &o, NULL);
    wk_event ev;
    while (wk_json_reader_next(&r, &ev) == WK_OK) {
    }
    wk_error want;
    CHECK_STATUS(wk_json_reader_error(&r, &want), WK_ERR_DEPTH);
    wk_json_reader_free(&r);
    CHECK_EQ(e.offset, want.offset);
    CHECK_STR(e.msg, want.msg);
    CHECK_MSG(ta.peak_bytes <= 64 * 1024, "peak %zu", ta.peak_bytes);
    wk_json_unpacker_free(&u);
}

WK_TEST(test_json_unpacker_million_tiny_values)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI, .alloc = &ta.a};
    wk_json_unpacker u;
    wk_json_unpacker_init(&u, &o, CAP);
    size_t values;
    /* 4096 is a multiple of 4, so "7,\n" style cuts land everywhere over the run */
    CHECK_STATUS(json_feed_pattern(&u, NULL, "7\n{}\n", 5 * 1000000, &values), WK_ERR_EOF);
    CHECK_EQ(values, 2000000);
    CHECK_MSG(ta.peak_bytes <= 8192, "peak %zu", ta.peak_bytes);
    wk_json_unpacker_free(&u);
}

/* ---- JSON events: read straight from the chunks, only a cut token is gathered ---------- */

typedef struct events_run {
    wk_status st;
    size_t values;
    ev_count c;
    wk_error err;
    uint64_t line, col;
    size_t peak;
} events_run;

/* json_feed taking events, on a JSON Lines unpacker with the CAP and a counting allocator. */
static void run_events(const char *head, const char *unit, size_t total, events_run *run)
{
    memset(run, 0, sizeof *run);
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_read_opts o = {.flags = WK_JSON_READ_MULTI, .alloc = &ta.a};
    wk_json_unpacker u;
    wk_json_unpacker_init(&u, &o, CAP);
    run->st = json_feed(&u, head, unit, total, &run->values, &run->c);
    wk_json_unpacker_error(&u, &run->err, &run->line, &run->col);
    run->peak = ta.peak_bytes;
    wk_json_unpacker_free(&u);
    CHECK_EQ(ta.live_bytes, 0);
}

WK_TEST(test_json_events_endless_string_hits_the_cap_at_the_strings_offset)
{
    events_run r;
    run_events("1\n\"", "abc", 10 * CAP, &r);
    CHECK_STATUS(r.st, WK_ERR_LIMIT);
    CHECK_EQ(r.values, 1);
    CHECK_EQ(r.c.events, 1);
    CHECK_EQ(r.err.offset, 2);
    CHECK_EQ(r.line, 2);
    CHECK_EQ(r.col, 1);
    CHECK_MSG(r.peak <= CAP + 4096, "peak %zu", r.peak);
}

WK_TEST(test_json_events_whitespace_flood_between_values_is_not_gathered)
{
    events_run r;
    run_events("[1]", " \n\t", 30 * CAP, &r);
    CHECK_STATUS(r.st, WK_ERR_EOF);
    CHECK_EQ(r.values, 1);
    CHECK_MSG(r.peak <= 8192, "peak %zu", r.peak);
}

WK_TEST(test_json_events_huge_array_streams_in_little_memory)
{
    /* events need no whole value: an array ten times the cap goes through, its events sent
     * as its chunks come, and ends as the reader ends it (truncated, no closing bracket) */
    events_run r;
    run_events("[", "1,", 10 * CAP, &r);
    CHECK_STATUS(r.st, WK_ERR_TRUNCATED);
    CHECK_EQ(r.values, 0);
    CHECK_EQ(r.c.events, 1 + 10 * CAP / 2);
    CHECK_EQ(r.c.depth, 1);
    CHECK_EQ(r.err.offset, 1 + 10 * CAP);
    CHECK_MSG(r.peak <= 8192, "peak %zu", r.peak);
}

WK_TEST(test_json_events_whitespace_flood_after_a_comma_hits_the_cap)
{
    /* a reader call starts at the comma, so the whitespace after it is gathered with it (the
     * same cap as for a whole value in the other takes) */
    events_run r;
    run_events("[1,", " \n\t", 30 * CAP, &r);
    CHECK_STATUS(r.st, WK_ERR_LIMIT);
    CHECK_EQ(r.c.events, 2);
    CHECK_MSG(r.peak <= CAP + 4096, "peak %zu", r.peak);
}

WK_TEST(test_json_events_depth_bomb_is_the_readers_depth_error)
{
    events_run r;
    run_events(NULL, "[", 4 * CAP, &r);
    CHECK_STATUS(r.st, WK_ERR_DEPTH);
    CHECK_EQ(r.err.offset, WK_JSON_DEFAULT_MAX_DEPTH);
    CHECK_EQ(r.c.events, WK_JSON_DEFAULT_MAX_DEPTH);
}

WK_TEST(test_json_events_million_tiny_values_fed_in_place)
{
    events_run r;
    run_events(NULL, "7\n{}\n", 5 * 1000000, &r);
    CHECK_STATUS(r.st, WK_ERR_EOF);
    CHECK_EQ(r.values, 2000000);
    CHECK_EQ(r.c.events, 3000000);
    CHECK_MSG(r.peak <= 8192, "peak %zu", r.peak);
}
