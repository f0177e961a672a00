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

enum mode { RAW, TREE, EVENTS };

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
            wk_arena_reset(&arena);
            if (mode == RAW) {
                st = wk_mp_unpacker_next(&u, &vd, &vl, &voff);
            } else if (mode == TREE) {
                st = wk_mp_unpacker_next_value(&u, &arena, &tree);
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
            if (mode == TREE) {
                wk_value *want = NULL;
                wk_arena_reset(&ref_arena);
                wk_mp_decode_value(d + rv->off, rv->len, o, &ref_arena, &want, NULL, NULL);
                if (tree == NULL || want == NULL || !wk_value_equal(tree, want, NULL)) {
                    wk__test_fail(__FILE__, __LINE__, "%s: tree %zu differs", what, k);
                    goto out;
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

static void property_run(uint64_t seed, int rounds, bool strict)
{
    split_rng r = {seed};
    wk_read_opts o = {0};
    if (strict) {
        o.flags = WK_READ_STRICT_UTF8;
    }
    for (int round = 0; round < rounds; round++) {
        wk_buf data;
        wk_buf_init(&data, NULL, 0);
        gen_stream(&data, &r, 1 + split_below(&r, 12), strict);
        o.max_depth = split_below(&r, 4) == 0 ? (uint32_t)(1 + split_below(&r, 4)) : 0;
        result ref;
        reference(data.data, data.len, &o, &ref);
        for (int kind = 0; kind < 4; kind++) {
            size_t *sizes;
            size_t count = split_plan(&r, data.len, kind, 1 + split_below(&r, 300), &sizes);
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
    property_run(0x9e3779b97f4a7c15ull, 600, false);
}

WK_TEST(test_mp_unpacker_matches_buffer_reader_with_strict_utf8)
{
    property_run(0x2545f4914f6cdd1dull, 300, true);
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
