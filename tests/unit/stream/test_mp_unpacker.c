/*
 * Differential tests of the incremental MessagePack unpacker against the buffer readers:
 * random streams of random values (some corrupted or cut short), split into random chunks,
 * 1-byte chunks and one chunk, must give exactly the values (bytes, offsets, trees, events),
 * the final status, message and error offset that wk_mp_check / wk_mp_decode_value /
 * wk_mp_reader give on the whole buffer. Plus the API's contract cases.
 */
#include <stdlib.h>

#include "split.h"
#include "wirekit/wirekit.h"
#include "wk_test.h"

/* ---- random streams ------------------------------------------------------------------- */

static void gen_value(wk_mp_writer *w, split_rng *r, int depth, bool bad_utf8)
{
    size_t kind = split_below(r, depth < 6 ? 14 : 11);
    char s[300];
    switch (kind) {
    case 0: wk_mp_writer_nil(w); break;
    case 1: wk_mp_writer_bool(w, split_below(r, 2) != 0); break;
    case 2: wk_mp_writer_int(w, -(int64_t)(split_next(r) >> split_below(r, 64))); break;
    case 3: wk_mp_writer_uint(w, split_next(r) >> split_below(r, 64)); break;
    case 4: wk_mp_writer_double(w, (double)(int64_t)split_next(r) / 7.0); break;
    case 5: wk_mp_writer_float(w, (float)split_below(r, 1000) / 8.0f); break;
    case 6:
    case 7: {
        size_t n = split_below(r, split_below(r, 8) == 0 ? sizeof s : 40);
        for (size_t i = 0; i < n; i++) {
            s[i] = (char)('a' + split_below(r, 26));
        }
        if (bad_utf8 && n > 0 && split_below(r, 4) == 0) {
            s[split_below(r, n)] = (char)0xff;
        }
        wk_mp_writer_str(w, s, n);
        break;
    }
    case 8: {
        size_t n = split_below(r, 64);
        for (size_t i = 0; i < n; i++) {
            s[i] = (char)split_next(r);
        }
        wk_mp_writer_bin(w, s, n);
        break;
    }
    case 9:
        if (split_below(r, 2) == 0) {
            wk_mp_writer_timestamp(w, (int64_t)(split_next(r) >> 30) - 1000,
                                   (uint32_t)split_below(r, 1000000000));
        } else {
            wk_mp_writer_ext(w, (int8_t)split_below(r, 100), s, split_below(r, 20));
        }
        break;
    case 10: {
        /* a long string now and then (str 16) */
        static char big[70000];
        memset(big, 'x', sizeof big);
        wk_mp_writer_str(w, big, 300 + split_below(r, split_below(r, 4) == 0 ? 69000 : 500));
        break;
    }
    case 11:
    case 12: {
        uint32_t n = (uint32_t)split_below(r, 6);
        wk_mp_writer_begin_array(w, n);
        for (uint32_t i = 0; i < n; i++) {
            gen_value(w, r, depth + 1, bad_utf8);
        }
        break;
    }
    default: {
        uint32_t n = (uint32_t)split_below(r, 5);
        wk_mp_writer_begin_map(w, n);
        for (uint32_t i = 0; i < n; i++) {
            wk_mp_writer_str(w, "key", 1 + split_below(r, 3));
            gen_value(w, r, depth + 1, bad_utf8);
        }
        break;
    }
    }
}

/* A stream of `count` values, then maybe a corruption. */
static void gen_stream(wk_buf *out, split_rng *r, size_t count, bool bad_utf8)
{
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    for (size_t i = 0; i < count; i++) {
        gen_value(&w, r, 0, bad_utf8);
    }
    wk_mp_writer_finish(&w, NULL);
    if (out->len == 0) {
        return;
    }
    size_t at = split_below(r, out->len);
    switch (split_below(r, 8)) {
    case 0: out->len = at; break;                        /* cut short */
    case 1: out->data[at] = 0xc1; break;                 /* never-used byte */
    case 2: out->data[at] = (uint8_t)split_next(r); break; /* any byte */
    case 3:
        if (out->len - at >= 5) { /* a count bomb */
            memcpy(out->data + at, "\xdd\xff\xff\xff\xf0", 5);
        }
        break;
    case 4:
        if (out->len - at >= 5) { /* a length bomb */
            memcpy(out->data + at, "\xdb\x7f\xff\xff\xff", 5);
        }
        break;
    default: break;
    }
}

/* ---- the reference: the buffer readers on the whole input --------------------------- */

typedef struct rec {
    size_t off, len;
} rec;

typedef struct result {
    rec *v;
    size_t n;
    wk_status final; /* WK_ERR_EOF or the error */
    size_t err_off;
    const char *msg;
} result;

static void reference(const uint8_t *d, size_t len, const wk_read_opts *o, result *res)
{
    res->v = malloc((len + 1) * sizeof(rec));
    res->n = 0;
    size_t off = 0;
    res->final = WK_ERR_EOF;
    res->err_off = 0;
    res->msg = "";
    while (off < len) {
        size_t sz = 0;
        wk_error e;
        wk_status st = wk_mp_check(d + off, len - off, o, &sz, &e);
        if (st != WK_OK) {
            res->final = st;
            res->err_off = off + e.offset;
            res->msg = e.msg;
            return;
        }
        res->v[res->n].off = off;
        res->v[res->n].len = sz;
        res->n++;
        off += sz;
    }
}

/* TREE_IN_PLACE: wk_mp_unpacker_next_value_in_place, the arena scribbled over only after a
 * value is handed out (between calls that return WK_ERR_AGAIN it is the unpacker's). */
enum mode { RAW, TREE, TREE_IN_PLACE, EVENTS };

/* Resets `a` and writes garbage over its memory, as a caller that reuses its arena between
 * calls does: a tree the unpacker keeps in it across calls would be destroyed. */
static void scribble(wk_arena *a)
{
    wk_arena_reset(a);
    if (a->cur != NULL && a->end > a->cur) {
        size_t room = (size_t)(a->end - a->cur);
        memset(wk_arena_alloc(a, room, 1), 0xa5, room);
        wk_arena_reset(a);
    }
}

/* Re-encodes the events of d[0..n) (one value) through the writer sink. */
static void reencode_ref(const uint8_t *d, size_t n, const wk_read_opts *o, wk_buf *out)
{
    wk_mp_reader r;
    wk_source src;
    wk_mp_writer w;
    wk_sink sink;
    out->len = 0;
    wk_mp_reader_init(&r, d, n, o);
    wk_mp_reader_source(&r, &src);
    wk_mp_writer_init(&w, out);
    wk_mp_writer_sink(&w, &sink);
    wk_transcode(&src, &sink, NULL);
    wk_mp_writer_finish(&w, NULL);
    wk_mp_reader_free(&r);
}

/* Runs the unpacker over the split input and compares with `ref`. Returns false (after
 * reporting) on the first difference. */
static bool run_and_compare(const uint8_t *d, size_t len, size_t *sizes, size_t count,
                            const wk_read_opts *o, size_t cap, enum mode mode,
                            const result *ref, const char *what)
{
    wk_mp_unpacker u;
    split_feeder fd;
    wk_arena arena, ref_arena;
    wk_buf got_ev, want_ev;
    wk_buf_init(&got_ev, NULL, 0);
    wk_buf_init(&want_ev, NULL, 0);
    wk_arena_init(&arena, NULL, 0);
    wk_arena_init(&ref_arena, NULL, 0);
    wk_mp_unpacker_init(&u, o, cap);
    split_feeder_init(&fd, d, len, sizes, count);
    size_t k = 0;
    bool ok = false;
    wk_status st;
    for (;;) {
        size_t n;
        const uint8_t *c = split_feeder_next(&fd, &n);
        if (c == NULL) {
            wk_mp_unpacker_finish(&u);
        } else if (wk_mp_unpacker_feed(&u, c, n) != WK_OK) {
            st = wk_mp_unpacker_error(&u, NULL);
            goto done;
        }
        for (;;) {
            const uint8_t *vd = NULL;
            size_t vl = 0;
            uint64_t voff = 0;
            wk_value *tree = NULL;
            if (mode != TREE_IN_PLACE) {
                scribble(&arena);
            }
            if (mode == RAW) {
                st = wk_mp_unpacker_next(&u, &vd, &vl, &voff);
            } else if (mode == TREE) {
                st = wk_mp_unpacker_next_value(&u, &arena, &tree);
            } else if (mode == TREE_IN_PLACE) {
                st = wk_mp_unpacker_next_value_in_place(&u, &arena, &tree);
            } else {
                wk_mp_writer w;
                wk_sink sink;
                got_ev.len = 0;
                wk_mp_writer_init(&w, &got_ev);
                wk_mp_writer_sink(&w, &sink);
                st = wk_mp_unpacker_next_events(&u, &sink);
                wk_mp_writer_finish(&w, NULL);
            }
            if (st == WK_ERR_AGAIN && c != NULL) {
                break;
            }
            if (st != WK_OK) {
                goto done;
            }
            if (k == ref->n) {
                wk__test_fail(__FILE__, __LINE__, "%s: value %zu beyond the reference", what, k);
                goto out;
            }
            const rec *rv = &ref->v[k];
            if (mode == RAW && (voff != rv->off || vl != rv->len ||
                                memcmp(vd, d + rv->off, vl) != 0)) {
                wk__test_fail(__FILE__, __LINE__, "%s: value %zu at %llu+%zu, want %zu+%zu",
                              what, k, (unsigned long long)voff, vl, rv->off, rv->len);
                goto out;
            }
            if (mode == TREE || mode == TREE_IN_PLACE) {
                wk_value *want = NULL;
                wk_arena_reset(&ref_arena);
                wk_mp_decode_value(d + rv->off, rv->len, o, &ref_arena, &want, NULL, NULL);
                if (tree == NULL || want == NULL || !wk_value_equal(tree, want, NULL)) {
                    wk__test_fail(__FILE__, __LINE__, "%s: tree %zu differs", what, k);
                    goto out;
                }
                if (mode == TREE_IN_PLACE) {
                    scribble(&arena); /* the arena is the caller's again */
                }
            }
            if (mode == EVENTS) {
                reencode_ref(d + rv->off, rv->len, o, &want_ev);
                if (got_ev.len != want_ev.len ||
                    memcmp(got_ev.data, want_ev.data, got_ev.len) != 0) {
                    wk__test_fail(__FILE__, __LINE__, "%s: events of value %zu differ", what, k);
                    goto out;
                }
            }
            k++;
        }
    }
done:
    if (k != ref->n || st != ref->final) {
        wk__test_fail(__FILE__, __LINE__, "%s: %zu values then %s, want %zu then %s", what, k,
                      wk_status_str(st), ref->n, wk_status_str(ref->final));
        goto out;
    }
    if (st != WK_ERR_EOF) {
        wk_error e;
        wk_mp_unpacker_error(&u, &e);
        if (e.code != st || e.offset != ref->err_off || strcmp(e.msg, ref->msg) != 0) {
            wk__test_fail(__FILE__, __LINE__, "%s: error at %zu \"%s\", want at %zu \"%s\"",
                          what, e.offset, e.msg, ref->err_off, ref->msg);
            goto out;
        }
        /* sticky */
        const uint8_t *vd;
        size_t vl;
        if (wk_mp_unpacker_next(&u, &vd, &vl, NULL) != st) {
            wk__test_fail(__FILE__, __LINE__, "%s: error is not sticky", what);
            goto out;
        }
    }
    ok = true;
out:
    split_feeder_free(&fd);
    wk_mp_unpacker_free(&u);
    wk_arena_free(&arena);
    wk_arena_free(&ref_arena);
    wk_buf_free(&got_ev);
    wk_buf_free(&want_ev);
    return ok;
}

/* `values` values per stream at most; chunks of 1..`piece` bytes (kinds 0 and 3). */
static void property_run(uint64_t seed, int rounds, bool strict, size_t values, size_t piece,
                         uint32_t flags)
{
    split_rng r = {seed};
    wk_read_opts o = {0};
    o.flags = flags;
    if (strict) {
        o.flags |= WK_READ_STRICT_UTF8;
    }
    for (int round = 0; round < rounds; round++) {
        wk_buf data;
        wk_buf_init(&data, NULL, 0);
        gen_stream(&data, &r, 1 + split_below(&r, values), strict);
        o.max_depth = split_below(&r, 4) == 0 ? (uint32_t)(1 + split_below(&r, 4)) : 0;
        result ref;
        reference(data.data, data.len, &o, &ref);
        for (int kind = 0; kind < 4; kind++) {
            size_t *sizes;
            size_t count = split_plan(&r, data.len, kind, 1 + split_below(&r, piece), &sizes);
            for (int mode = RAW; mode <= EVENTS; mode++) {
                char what[96];
                snprintf(what, sizeof what, "seed %llu round %d split %d mode %d",
                         (unsigned long long)seed, round, kind, mode);
                if (!run_and_compare(data.data, data.len, sizes, count, &o, 0,
                                     (enum mode)mode, &ref, what)) {
                    free(sizes);
                    free(ref.v);
                    wk_buf_free(&data);
                    return;
                }
            }
            free(sizes);
        }
        free(ref.v);
        wk_buf_free(&data);
    }
}

WK_TEST(test_mp_unpacker_matches_buffer_reader_on_random_splits)
{
    property_run(0x9e3779b97f4a7c15ull, 600, false, 12, 300, 0);
}

WK_TEST(test_mp_unpacker_matches_buffer_reader_with_strict_utf8)
{
    property_run(0x2545f4914f6cdd1dull, 300, true, 12, 300, 0);
}

/* Chunks of up to 4 KiB over longer streams: trees cut by chunk ends are built as they
 * arrive (chunks under 64 bytes, the 1-byte pieces of split kinds 1 and 3, switch a value to
 * framing mid-way), with strings copied or not. */
WK_TEST(test_mp_unpacker_matches_buffer_reader_on_large_chunks)
{
    property_run(0x853c49e6748fea9bull, 150, false, 60, 4096, 0);
    property_run(0xda3e39cb94b95bdbull, 60, true, 60, 1024, WK_READ_COPY_STRINGS);
}

/* ---- contract cases ------------------------------------------------------------------- */

WK_TEST(test_mp_unpacker_hands_out_values_in_place_when_whole_in_a_chunk)
{
    const uint8_t in[] = {0x93, 1, 2, 3, 0xa3, 'a', 'b', 'c', 0xc0};
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, NULL, 0);
    CHECK_OK(wk_mp_unpacker_feed(&u, in, sizeof in));
    const uint8_t *d;
    size_t n;
    uint64_t off;
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, &off));
    CHECK(d == in && n == 4 && off == 0);
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, &off));
    CHECK(d == in + 4 && n == 4 && off == 4);
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, &off));
    CHECK(d == in + 8 && n == 1);
    CHECK_STATUS(wk_mp_unpacker_next(&u, &d, &n, &off), WK_ERR_AGAIN);
    CHECK_EQ(wk_mp_unpacker_buffered(&u), 0);
    wk_mp_unpacker_finish(&u);
    CHECK_STATUS(wk_mp_unpacker_next(&u, &d, &n, &off), WK_ERR_EOF);
    CHECK_STATUS(wk_mp_unpacker_next(&u, &d, &n, &off), WK_ERR_EOF);
    wk_mp_unpacker_free(&u);
}

WK_TEST(test_mp_unpacker_refuses_a_feed_before_the_chunk_is_used_up)
{
    const uint8_t in[] = {1, 2};
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, NULL, 0);
    CHECK_OK(wk_mp_unpacker_feed(&u, in, sizeof in));
    CHECK_STATUS(wk_mp_unpacker_feed(&u, in, sizeof in), WK_ERR_STATE);
    const uint8_t *d;
    size_t n;
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, NULL));
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, NULL));
    CHECK_STATUS(wk_mp_unpacker_next(&u, &d, &n, NULL), WK_ERR_AGAIN);
    CHECK_OK(wk_mp_unpacker_feed(&u, in, 1));
    wk_mp_unpacker_finish(&u);
    CHECK_STATUS(wk_mp_unpacker_feed(&u, in, 1), WK_ERR_STATE);
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, NULL));
    CHECK_STATUS(wk_mp_unpacker_next(&u, &d, &n, NULL), WK_ERR_EOF);
    wk_mp_unpacker_free(&u);
}

WK_TEST(test_mp_unpacker_gives_back_bytes_appended_past_a_value)
{
    /* a str 8 of 10 bytes cut after its header, then the rest and two more values in one
     * chunk: the str comes from the buffer, the next values from the chunk in place */
    uint8_t a[] = {0xd9, 10};
    uint8_t b[] = {'0', '1', '2', '3', '4', '5', '6', '7', '8', '9', 0x05, 0x06};
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, NULL, 0);
    const uint8_t *d;
    size_t n;
    uint64_t off;
    CHECK_OK(wk_mp_unpacker_feed(&u, a, sizeof a));
    CHECK_STATUS(wk_mp_unpacker_next(&u, &d, &n, &off), WK_ERR_AGAIN);
    CHECK_EQ(wk_mp_unpacker_buffered(&u), 2);
    CHECK_OK(wk_mp_unpacker_feed(&u, b, sizeof b));
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, &off));
    CHECK(n == 12 && off == 0 && d[0] == 0xd9 && d[11] == '9');
    CHECK_EQ(wk_mp_unpacker_offset(&u), 12);
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, &off));
    CHECK(d == b + 10 && n == 1 && off == 12);
    CHECK_OK(wk_mp_unpacker_next(&u, &d, &n, &off));
    CHECK(d == b + 11 && off == 13);
    CHECK_STATUS(wk_mp_unpacker_next(&u, &d, &n, &off), WK_ERR_AGAIN);
    wk_mp_unpacker_free(&u);
}

/* ---- the pausing tree build: a value cut at every byte ---------------------------------- */

/* A value nested `depth` deep (maps and arrays in turn), with short and long strings, binary
 * data and numbers at every level. */
static void gen_nested(wk_mp_writer *w, int depth)
{
    static char text[400];
    memset(text, 'q', sizeof text);
    wk_mp_writer_begin_map(w, 3);
    wk_mp_writer_str(w, "name", 4);
    wk_mp_writer_str(w, text, 20 + (size_t)depth * 7);
    wk_mp_writer_str(w, "items", 5);
    wk_mp_writer_begin_array(w, 4);
    wk_mp_writer_uint(w, (uint64_t)depth * 1000003u);
    wk_mp_writer_double(w, depth / 3.0);
    if (depth > 0) {
        gen_nested(w, depth - 1);
    } else {
        wk_mp_writer_str(w, text, sizeof text); /* str 16 */
    }
    wk_mp_writer_begin_map(w, 0);
    wk_mp_writer_bin(w, "bin", 3);
    wk_mp_writer_bin(w, text, 9);
}

/* A value nested `levels` deep, maps and arrays in turn, a few short scalars beside each
 * level: deep rather than large (8 to 12 bytes a level). */
static void gen_deep(wk_mp_writer *w, int levels)
{
    for (int i = 0; i < levels; i++) {
        if (i % 2 == 0) {
            wk_mp_writer_begin_map(w, 2);
            wk_mp_writer_str(w, "s", 1);
            wk_mp_writer_str(w, "abcdef", (size_t)(i % 7));
            wk_mp_writer_uint(w, (uint64_t)i * 300u); /* a non-string key */
        } else {
            wk_mp_writer_begin_array(w, 3);
            wk_mp_writer_int(w, -(int64_t)i);
            wk_mp_writer_nil(w);
        }
    }
    wk_mp_writer_double(w, 0.5);
}

/* How trees_match takes the trees out. */
enum take {
    TAKE_FREE,            /* wk_mp_unpacker_next_value: the arena scribbled before each call */
    TAKE_IN_PLACE,        /* wk_mp_unpacker_next_value_in_place: scribbled after each value */
    TAKE_IN_PLACE_AT_CUR  /* the same, and each tree's root must be where the arena's free
                           * room began (built there, never copied; the arena must have room
                           * for every value in the region it has) */
};

/* Takes every value of `d` split into chunks `sizes` out as a tree (the arena scribbled over
 * as `take` says, or with `keep` kept whole and every tree compared again at the end, which
 * copied strings must survive), against the buffer decoder's trees. */
static bool trees_match(const uint8_t *d, size_t len, size_t *sizes, size_t count,
                        const wk_read_opts *o, wk_arena *arena, bool keep, enum take take,
                        const char *what)
{
    result ref;
    reference(d, len, o, &ref);
    wk_value **got = calloc(ref.n + 1, sizeof *got);
    wk_arena ref_arena;
    wk_arena_init(&ref_arena, NULL, 0);
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, o, 0);
    split_feeder fd;
    split_feeder_init(&fd, d, len, sizes, count);
    size_t k = 0;
    bool ok = false;
    wk_status st = WK_OK;
    uintptr_t start = ((uintptr_t)arena->cur + 7u) & ~(uintptr_t)7u; /* the next tree's */
    for (;;) {
        size_t n;
        const uint8_t *c = split_feeder_next(&fd, &n);
        if (c == NULL) {
            wk_mp_unpacker_finish(&u);
        } else if (wk_mp_unpacker_feed(&u, c, n) != WK_OK) {
            break;
        }
        for (;;) {
            if (!keep && take == TAKE_FREE) {
                scribble(arena);
            }
            wk_value *v = NULL;
            st = take == TAKE_FREE ? wk_mp_unpacker_next_value(&u, arena, &v)
                                   : wk_mp_unpacker_next_value_in_place(&u, arena, &v);
            if (st != WK_OK) {
                break;
            }
            if (take == TAKE_IN_PLACE_AT_CUR && (uintptr_t)v != start) {
                wk__test_fail(__FILE__, __LINE__, "%s: tree %zu was not built in place", what,
                              k);
                goto out;
            }
            wk_value *want = NULL;
            wk_arena_reset(&ref_arena);
            if (k == ref.n ||
                wk_mp_decode_value(d + ref.v[k].off, ref.v[k].len, o, &ref_arena, &want, NULL,
                                   NULL) != WK_OK ||
                !wk_value_equal(v, want, NULL)) {
                wk__test_fail(__FILE__, __LINE__, "%s: tree %zu differs", what, k);
                goto out;
            }
            got[k++] = v;
            if (!keep && take != TAKE_FREE) {
                scribble(arena);
            }
            start = ((uintptr_t)arena->cur + 7u) & ~(uintptr_t)7u;
        }
        if (st != WK_ERR_AGAIN || c == NULL) {
            break;
        }
    }
    if (st != WK_ERR_EOF || k != ref.n) {
        wk__test_fail(__FILE__, __LINE__, "%s: %zu trees then %s, want %zu then EOF", what, k,
                      wk_status_str(st), ref.n);
        goto out;
    }
    for (size_t i = 0; keep && i < k; i++) {
        wk_value *want = NULL;
        wk_arena_reset(&ref_arena);
        wk_mp_decode_value(d + ref.v[i].off, ref.v[i].len, o, &ref_arena, &want, NULL, NULL);
        if (!wk_value_equal(got[i], want, NULL)) {
            wk__test_fail(__FILE__, __LINE__, "%s: tree %zu changed after the stream", what, i);
            goto out;
        }
    }
    ok = true;
out:
    split_feeder_free(&fd);
    wk_mp_unpacker_free(&u);
    wk_arena_free(&ref_arena);
    free(got);
    free(ref.v);
    return ok;
}

/* Builds filler + nested value + filler; the fillers are one 2000-byte string each (values
 * have been large: the cut value is expected cut and built in the unpacker's block from its
 * start) or 80 one-byte values (values have been small: it is tried in the caller's arena
 * and its partial tree moves out at the chunk's end). */
static void gen_fillers(wk_buf *out, bool big)
{
    static char text[2000];
    memset(text, 'f', sizeof text);
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    if (big) {
        wk_mp_writer_str(&w, text, sizeof text);
    } else {
        for (int i = 0; i < 80; i++) {
            wk_mp_writer_uint(&w, (uint64_t)i);
        }
    }
    wk_mp_writer_finish(&w, NULL);
}

/* Fillers, the value (gen_nested 12 deep, or with `deep` gen_deep 80 levels), fillers. */
static void gen_cut_stream(wk_buf *out, bool big_fillers, bool deep, size_t *value_off,
                           size_t *value_end)
{
    gen_fillers(out, big_fillers);
    *value_off = out->len;
    wk_mp_writer w;
    wk_mp_writer_init(&w, out);
    if (deep) {
        gen_deep(&w, 80);
    } else {
        gen_nested(&w, 12);
    }
    wk_mp_writer_finish(&w, NULL);
    *value_end = out->len;
    gen_fillers(out, big_fillers);
}

/* Cuts the nested value at every byte (two chunks), and at every byte again followed by a
 * second cut a little or a lot later (three chunks: the tree pauses, moves into the caller's
 * arena when enough new bytes came and pauses again, or stays in the block; taken in place,
 * it stays in the arena). Arena kinds: 0 a heap arena, 1 a small caller buffer first, then
 * chunks, 2 a heap arena made one 1 MiB region first (trees taken in place must then be
 * built where the arena's room begins). */
static void cut_everywhere(bool big_fillers, bool deep, uint32_t flags, int arena_kind,
                           enum take take)
{
    wk_buf data;
    wk_buf_init(&data, NULL, 0);
    size_t voff = 0;
    size_t vend = 0;
    gen_cut_stream(&data, big_fillers, deep, &voff, &vend);
    wk_read_opts o = {0};
    o.flags = flags;
    uint8_t small[256]; /* arena kind 1: a small caller buffer first, then chunks */
    wk_arena arena;
    if (arena_kind == 1) {
        wk_arena_init_buf(&arena, small, sizeof small, NULL, 0);
    } else {
        wk_arena_init(&arena, NULL, 0);
    }
    if (arena_kind == 2) {
        CHECK(wk_arena_alloc(&arena, (size_t)1 << 20, 8) != NULL);
        wk_arena_reset(&arena);
        take = take == TAKE_IN_PLACE ? TAKE_IN_PLACE_AT_CUR : take;
    }
    char what[128];
    for (size_t k = voff + 1; k < vend; k++) {
        size_t two[2] = {k, data.len - k};
        snprintf(what, sizeof what, "fillers %d flags %u arena %d take %d cut at %zu",
                 big_fillers, flags, arena_kind, take, k - voff);
        if (!trees_match(data.data, data.len, two, 2, &o, &arena, flags != 0, take, what)) {
            break;
        }
        size_t m = (k - voff) % 3 == 0 ? (k - voff) / 2 + 64 : 2 * (k - voff) + 64;
        if (k + m < vend) {
            size_t three[3] = {k, m, data.len - k - m};
            snprintf(what, sizeof what, "fillers %d flags %u arena %d take %d cuts at %zu and %zu",
                     big_fillers, flags, arena_kind, take, k - voff, k + m - voff);
            if (!trees_match(data.data, data.len, three, 3, &o, &arena, flags != 0, take,
                             what)) {
                break;
            }
        }
        if (flags != 0) {
            wk_arena_reset(&arena);
        }
    }
    wk_arena_free(&arena);
    wk_buf_free(&data);
}

WK_TEST(test_mp_unpacker_tree_cut_at_every_byte_of_a_nested_value_in_the_block)
{
    cut_everywhere(true, false, 0, 0, TAKE_FREE);
}

WK_TEST(test_mp_unpacker_tree_cut_at_every_byte_moves_out_of_the_callers_arena)
{
    cut_everywhere(false, false, 0, 0, TAKE_FREE);
}

WK_TEST(test_mp_unpacker_tree_cut_at_every_byte_with_copied_strings)
{
    cut_everywhere(false, false, WK_READ_COPY_STRINGS, 0, TAKE_FREE);
    cut_everywhere(true, false, WK_READ_COPY_STRINGS, 0, TAKE_FREE);
}

WK_TEST(test_mp_unpacker_tree_cut_at_every_byte_with_an_arena_that_starts_new_chunks)
{
    cut_everywhere(false, false, 0, 1, TAKE_FREE);
    cut_everywhere(true, false, 0, 1, TAKE_FREE);
}

WK_TEST(test_mp_unpacker_tree_in_place_cut_at_every_byte_stays_where_it_began)
{
    cut_everywhere(false, false, 0, 2, TAKE_IN_PLACE); /* tried on the chunk first */
    cut_everywhere(true, false, 0, 2, TAKE_IN_PLACE);  /* gathered first */
    cut_everywhere(false, false, WK_READ_COPY_STRINGS, 2, TAKE_IN_PLACE);
    cut_everywhere(true, false, WK_READ_COPY_STRINGS, 2, TAKE_IN_PLACE);
}

WK_TEST(test_mp_unpacker_tree_in_place_cut_at_every_byte_with_arenas_that_start_new_chunks)
{
    for (int kind = 0; kind < 2; kind++) {
        cut_everywhere(false, false, 0, kind, TAKE_IN_PLACE);
        cut_everywhere(true, false, 0, kind, TAKE_IN_PLACE);
        cut_everywhere(false, false, WK_READ_COPY_STRINGS, kind, TAKE_IN_PLACE);
    }
}

/* 80 levels (past the 64 frames the build keeps on the C stack: a pause keeps them on the
 * heap, a resume takes them over) cut at every byte, in the block, out of the caller's arena
 * and held in place: the same tree as the buffer decoder's. */
WK_TEST(test_mp_unpacker_tree_cut_at_every_byte_of_80_levels_of_nesting)
{
    cut_everywhere(true, true, 0, 0, TAKE_FREE);
    cut_everywhere(false, true, 0, 0, TAKE_FREE);
    cut_everywhere(false, true, WK_READ_COPY_STRINGS, 1, TAKE_FREE);
    cut_everywhere(false, true, 0, 2, TAKE_IN_PLACE);
    cut_everywhere(true, true, 0, 2, TAKE_IN_PLACE);
}

WK_TEST(test_mp_unpacker_tree_too_large_for_the_block_is_framed_and_decoded)
{
    /* an array of 3000 small integers (about 3 KB, 48 KB of nodes) cut by 512-byte chunks,
     * with a 16 KiB cap: the node block cannot hold it, framing takes over */
    wk_buf data;
    wk_buf_init(&data, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &data);
    wk_mp_writer_str(&w, "x", 1);
    wk_mp_writer_begin_array(&w, 3000);
    for (uint32_t i = 0; i < 3000; i++) {
        wk_mp_writer_uint(&w, i % 100);
    }
    wk_mp_writer_begin_map(&w, 1);
    wk_mp_writer_str(&w, "k", 1);
    wk_mp_writer_nil(&w);
    wk_mp_writer_finish(&w, NULL);
    size_t sizes[64];
    size_t count = 0;
    for (size_t at = 0; at < data.len; at += 512) {
        sizes[count++] = data.len - at < 512 ? data.len - at : 512;
    }
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, NULL, 16 << 10);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    split_feeder fd;
    split_feeder_init(&fd, data.data, data.len, sizes, count);
    size_t trees = 0;
    wk_status st = WK_OK;
    for (;;) {
        size_t n;
        const uint8_t *c = split_feeder_next(&fd, &n);
        if (c == NULL) {
            wk_mp_unpacker_finish(&u);
        } else {
            CHECK_OK(wk_mp_unpacker_feed(&u, c, n));
        }
        wk_value *v;
        while ((st = wk_mp_unpacker_next_value(&u, &arena, &v)) == WK_OK) {
            if (trees == 1) {
                CHECK(v->type == WK_VAL_ARRAY && v->len == 3000 && v->u.items[2999].u.u == 99);
            }
            trees++;
        }
        if (st != WK_ERR_AGAIN || c == NULL) {
            break;
        }
    }
    CHECK_STATUS(st, WK_ERR_EOF);
    CHECK_EQ(trees, 3);
    split_feeder_free(&fd);
    wk_mp_unpacker_free(&u);
    wk_arena_free(&arena);
    wk_buf_free(&data);
}

WK_TEST(test_mp_unpacker_tree_that_moves_into_a_chunk_of_its_own_is_not_adopted_from_it)
{
    /* An array of 1500 integers and a 20000-byte string, after a large value: the array's
     * 1501 children (24 KB of nodes) are in the block when the first chunk ends. The second
     * chunk brings more bytes than the value had, so the tree moves into the caller's arena,
     * whose 8 KiB buffer cannot hold it: the arena gives it a chunk of its own, and the
     * run's later nodes would not follow it. The chunk ends inside the string again: the tree
     * must not be moved back as if it were one region (framing takes over). Whether the old
     * code read out of bounds here depended on where malloc put the arena's chunks (the
     * fuzzer's input tree_move_in_dedicated_chunk found it); this checks the path's trees. */
    static char text[20000];
    memset(text, 's', sizeof text);
    wk_buf data;
    wk_buf_init(&data, NULL, 0);
    gen_fillers(&data, true);
    size_t voff = data.len;
    wk_mp_writer w;
    wk_mp_writer_init(&w, &data);
    wk_mp_writer_begin_array(&w, 1501);
    for (uint32_t i = 0; i < 1500; i++) {
        wk_mp_writer_uint(&w, i % 100);
    }
    wk_mp_writer_str(&w, text, sizeof text);
    wk_mp_writer_finish(&w, NULL);
    gen_fillers(&data, true);
    uint8_t small[8192];
    wk_arena arena;
    wk_arena_init_buf(&arena, small, sizeof small, NULL, 0);
    wk_read_opts o = {0};
    size_t sizes[3] = {voff + 1000, 1600, 0};
    sizes[2] = data.len - sizes[0] - sizes[1];
    CHECK(trees_match(data.data, data.len, sizes, 3, &o, &arena, false, TAKE_FREE, "own chunk"));
    wk_arena_free(&arena);
    wk_arena_init_buf(&arena, small, sizeof small, NULL, 0);
    CHECK(trees_match(data.data, data.len, sizes, 3, &o, &arena, false, TAKE_IN_PLACE,
                      "own chunk, in place"));
    wk_arena_free(&arena);
    wk_buf_free(&data);
}

/* ---- trees taken in place: the arena is the unpacker's while a value is paused ----------- */

/* An array of 200 small integers after two small values, cut 100 bytes in: the chunk holds
 * the small values and the array's start, so a tree taken in place pauses in the arena. */
static void gen_paused_array(wk_buf *data)
{
    wk_mp_writer w;
    wk_mp_writer_init(&w, data);
    wk_mp_writer_uint(&w, 1);
    wk_mp_writer_uint(&w, 2);
    wk_mp_writer_begin_array(&w, 200);
    for (uint32_t i = 0; i < 200; i++) {
        wk_mp_writer_uint(&w, i % 100);
    }
    wk_mp_writer_finish(&w, NULL);
}

/* Feeds the first 100 bytes of `data` and takes the two small values and the array's pause
 * in place. */
static bool pause_in_place(wk_mp_unpacker *u, const wk_buf *data, wk_arena *arena)
{
    wk_value *v;
    return wk_mp_unpacker_feed(u, data->data, 100) == WK_OK &&
           wk_mp_unpacker_next_value_in_place(u, arena, &v) == WK_OK &&
           wk_mp_unpacker_next_value_in_place(u, arena, &v) == WK_OK &&
           wk_mp_unpacker_next_value_in_place(u, arena, &v) == WK_ERR_AGAIN &&
           wk_mp_unpacker_feed(u, data->data + 100, data->len - 100) == WK_OK;
}

WK_TEST(test_mp_unpacker_in_place_refuses_an_arena_changed_while_a_value_is_paused)
{
    wk_buf data;
    wk_buf_init(&data, NULL, 0);
    gen_paused_array(&data);
    for (int change = 0; change < 3; change++) { /* reset, an allocation, another arena */
        wk_mp_unpacker u;
        wk_mp_unpacker_init(&u, NULL, 0);
        wk_arena arena, other;
        wk_arena_init(&arena, NULL, 0);
        wk_arena_init(&other, NULL, 0);
        CHECK(pause_in_place(&u, &data, &arena));
        if (change == 0) {
            wk_arena_reset(&arena);
        } else if (change == 1) {
            CHECK(wk_arena_alloc(&arena, 16, 8) != NULL);
        }
        wk_value *v;
        CHECK_STATUS(wk_mp_unpacker_next_value_in_place(&u, change == 2 ? &other : &arena, &v),
                     WK_ERR_STATE);
        wk_error e;
        CHECK_STATUS(wk_mp_unpacker_error(&u, &e), WK_ERR_STATE);
        CHECK_EQ(e.offset, 2); /* the array's start */
        CHECK_STR(e.msg, "the arena was changed while a value was paused in it");
        CHECK_STATUS(wk_mp_unpacker_next_value_in_place(&u, &arena, &v), WK_ERR_STATE);
        wk_mp_unpacker_free(&u);
        wk_arena_free(&arena);
        wk_arena_free(&other);
    }
    wk_buf_free(&data);
}

WK_TEST(test_mp_unpacker_in_place_refuses_an_arena_reset_and_refilled_to_the_same_point)
{
    /* Issue 29: the arena's pointers alone cannot tell these from an arena left alone: over
     * the same caller buffer, (0) reset and refilled to where it was, (1) freed and
     * initialised again over the same buffer and refilled the same way. */
    wk_buf data;
    wk_buf_init(&data, NULL, 0);
    gen_paused_array(&data);
    static uint8_t mem[1 << 16];
    for (int change = 0; change < 2; change++) {
        wk_mp_unpacker u;
        wk_mp_unpacker_init(&u, NULL, 0);
        wk_arena arena;
        wk_arena_init_buf(&arena, mem, sizeof mem, NULL, 0);
        CHECK(pause_in_place(&u, &data, &arena));
        uint8_t *cur = arena.cur;
        wk_arena_chunk *chunks = arena.chunks;
        size_t used = (size_t)(cur - mem);
        if (change == 0) {
            wk_arena_reset(&arena);
        } else {
            wk_arena_free(&arena);
            wk_arena_init_buf(&arena, mem, sizeof mem, NULL, 0);
        }
        uint8_t *refill = wk_arena_alloc(&arena, used, 1);
        CHECK(refill == mem);
        memset(refill, 0xa5, used); /* what a caller's next document leaves there */
        CHECK(arena.cur == cur && arena.chunks == chunks);
        wk_value *v;
        CHECK_STATUS(wk_mp_unpacker_next_value_in_place(&u, &arena, &v), WK_ERR_STATE);
        wk_error e;
        CHECK_STATUS(wk_mp_unpacker_error(&u, &e), WK_ERR_STATE);
        CHECK_EQ(e.offset, 2);
        CHECK_STR(e.msg, "the arena was changed while a value was paused in it");
        wk_mp_unpacker_free(&u);
        wk_arena_free(&arena);
    }
    wk_buf_free(&data);
}

WK_TEST(test_mp_unpacker_value_paused_in_place_can_be_taken_with_the_arena_free)
{
    /* a value paused by next_value_in_place, then taken by next_value after the arena was
     * scribbled over: decoded again from the gathered bytes, whole and right */
    wk_buf data;
    wk_buf_init(&data, NULL, 0);
    gen_paused_array(&data);
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, NULL, 0);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    CHECK(pause_in_place(&u, &data, &arena));
    scribble(&arena);
    wk_value *v;
    CHECK_OK(wk_mp_unpacker_next_value(&u, &arena, &v));
    CHECK(v->type == WK_VAL_ARRAY && v->len == 200);
    for (uint32_t i = 0; i < 200; i++) {
        CHECK(v->u.items[i].type == WK_VAL_UINT && v->u.items[i].u.u == i % 100);
    }
    CHECK_STATUS(wk_mp_unpacker_next_value_in_place(&u, &arena, &v), WK_ERR_AGAIN);
    wk_mp_unpacker_finish(&u);
    CHECK_STATUS(wk_mp_unpacker_next_value_in_place(&u, &arena, &v), WK_ERR_EOF);
    wk_mp_unpacker_free(&u);
    wk_arena_free(&arena);
    wk_buf_free(&data);
}
