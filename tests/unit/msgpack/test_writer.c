/* The MessagePack writer: every format of the spec in its shortest form, the sizeof twins,
 * fixed buffers, sticky errors and the event sink (including unknown-count containers). */
#include "wirekit/msgpack.h"
#include "wk_test.h"

/* Runs `body` on a fresh writer over a growable buffer and compares with `hex`. */
#define EXPECT_WRITES(hex, body)                                                          \
    do {                                                                                  \
        wk_buf b_;                                                                        \
        wk_buf_init(&b_, NULL, 0);                                                        \
        wk_mp_writer w_;                                                                  \
        wk_mp_writer_init(&w_, &b_);                                                      \
        wk_mp_writer *w = &w_;                                                            \
        body;                                                                             \
        wk_status st_ = wk_mp_writer_finish(&w_, NULL);                                   \
        uint8_t want_[256];                                                               \
        size_t wn_ = wk_test_hex(hex, want_, sizeof want_);                               \
        bool ok_ = st_ == WK_OK && b_.len == wn_ && memcmp(b_.data, want_, wn_) == 0;     \
        if (!ok_) {                                                                       \
            wk_test_dump_diff(b_.data, b_.len, want_, wn_);                               \
        }                                                                                 \
        wk_buf_free(&b_);                                                                 \
        CHECK_MSG(ok_, "%s: expected %s", #body, hex);                                    \
    } while (0)

WK_TEST(test_msgpack_writes_nil_bool)
{
    EXPECT_WRITES("c0", wk_mp_writer_nil(w));
    EXPECT_WRITES("c2", wk_mp_writer_bool(w, false));
    EXPECT_WRITES("c3", wk_mp_writer_bool(w, true));
}

WK_TEST(test_msgpack_writes_unsigned_in_shortest_form)
{
    EXPECT_WRITES("00", wk_mp_writer_uint(w, 0));
    EXPECT_WRITES("7f", wk_mp_writer_uint(w, 127));
    EXPECT_WRITES("cc80", wk_mp_writer_uint(w, 128));
    EXPECT_WRITES("ccff", wk_mp_writer_uint(w, 255));
    EXPECT_WRITES("cd0100", wk_mp_writer_uint(w, 256));
    EXPECT_WRITES("cdffff", wk_mp_writer_uint(w, 65535));
    EXPECT_WRITES("ce00010000", wk_mp_writer_uint(w, 65536));
    EXPECT_WRITES("ceffffffff", wk_mp_writer_uint(w, 4294967295u));
    EXPECT_WRITES("cf0000000100000000", wk_mp_writer_uint(w, 4294967296u));
    EXPECT_WRITES("cfffffffffffffffff", wk_mp_writer_uint(w, UINT64_MAX));
}

WK_TEST(test_msgpack_writes_signed_in_shortest_form)
{
    EXPECT_WRITES("05", wk_mp_writer_int(w, 5));
    EXPECT_WRITES("ccc8", wk_mp_writer_int(w, 200));
    EXPECT_WRITES("ff", wk_mp_writer_int(w, -1));
    EXPECT_WRITES("e0", wk_mp_writer_int(w, -32));
    EXPECT_WRITES("d0df", wk_mp_writer_int(w, -33));
    EXPECT_WRITES("d080", wk_mp_writer_int(w, -128));
    EXPECT_WRITES("d1ff7f", wk_mp_writer_int(w, -129));
    EXPECT_WRITES("d18000", wk_mp_writer_int(w, -32768));
    EXPECT_WRITES("d2ffff7fff", wk_mp_writer_int(w, -32769));
    EXPECT_WRITES("d280000000", wk_mp_writer_int(w, INT32_MIN));
    EXPECT_WRITES("d3ffffffff7fffffff", wk_mp_writer_int(w, (int64_t)INT32_MIN - 1));
    EXPECT_WRITES("d38000000000000000", wk_mp_writer_int(w, INT64_MIN));
}

WK_TEST(test_msgpack_writes_floats)
{
    EXPECT_WRITES("ca3fc00000", wk_mp_writer_float(w, 1.5f));
    EXPECT_WRITES("cb3ff8000000000000", wk_mp_writer_double(w, 1.5));
    EXPECT_WRITES("cb8000000000000000", wk_mp_writer_double(w, -0.0));
}

WK_TEST(test_msgpack_writes_every_str_width)
{
    static char s[70000];
    memset(s, 'x', sizeof s);
    EXPECT_WRITES("a0", wk_mp_writer_str(w, "", 0));
    EXPECT_WRITES("a3616263", wk_mp_writer_str(w, "abc", 3));
    EXPECT_WRITES("d920", { wk_mp_writer_str_header(w, 32); });
    /* fixstr up to 31, str8 from 32, str16 from 256, str32 from 65536 */
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    size_t lens[] = {31, 32, 255, 256, 65535, 65536};
    size_t hdr[] = {1, 2, 2, 3, 3, 5};
    uint8_t tag[] = {0xbf, 0xd9, 0xd9, 0xda, 0xda, 0xdb};
    for (size_t i = 0; i < 6; i++) {
        wk_buf_clear(&b);
        wk_mp_writer w;
        wk_mp_writer_init(&w, &b);
        wk_mp_writer_str(&w, s, lens[i]);
        CHECK_OK(wk_mp_writer_finish(&w, NULL));
        CHECK_EQ(b.len, hdr[i] + lens[i]);
        CHECK_EQ(b.data[0], tag[i]);
        CHECK_EQ(wk_mp_sizeof_str((uint32_t)lens[i]), b.len);
    }
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_writes_every_bin_width)
{
    static uint8_t d[70000];
    EXPECT_WRITES("c400", wk_mp_writer_bin(w, d, 0));
    EXPECT_WRITES("c4020102", wk_mp_writer_bin(w, "\x01\x02", 2));
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    size_t lens[] = {255, 256, 65535, 65536};
    size_t hdr[] = {2, 3, 3, 5};
    uint8_t tag[] = {0xc4, 0xc5, 0xc5, 0xc6};
    for (size_t i = 0; i < 4; i++) {
        wk_buf_clear(&b);
        wk_mp_writer w;
        wk_mp_writer_init(&w, &b);
        wk_mp_writer_bin(&w, d, lens[i]);
        CHECK_OK(wk_mp_writer_finish(&w, NULL));
        CHECK_EQ(b.len, hdr[i] + lens[i]);
        CHECK_EQ(b.data[0], tag[i]);
        CHECK_EQ(wk_mp_sizeof_bin((uint32_t)lens[i]), b.len);
    }
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_writes_container_headers)
{
    EXPECT_WRITES("90", wk_mp_writer_begin_array(w, 0));
    EXPECT_WRITES("9f", wk_mp_writer_begin_array(w, 15));
    EXPECT_WRITES("dc0010", wk_mp_writer_begin_array(w, 16));
    EXPECT_WRITES("dcffff", wk_mp_writer_begin_array(w, 65535));
    EXPECT_WRITES("dd00010000", wk_mp_writer_begin_array(w, 65536));
    EXPECT_WRITES("80", wk_mp_writer_begin_map(w, 0));
    EXPECT_WRITES("8f", wk_mp_writer_begin_map(w, 15));
    EXPECT_WRITES("de0010", wk_mp_writer_begin_map(w, 16));
    EXPECT_WRITES("df00010000", wk_mp_writer_begin_map(w, 65536));
    CHECK_EQ(wk_mp_sizeof_array(15), 1);
    CHECK_EQ(wk_mp_sizeof_array(16), 3);
    CHECK_EQ(wk_mp_sizeof_map(65536), 5);
}

WK_TEST(test_msgpack_writes_every_ext_width)
{
    static uint8_t d[70000];
    EXPECT_WRITES("d40510", wk_mp_writer_ext(w, 5, "\x10", 1));
    EXPECT_WRITES("d5051011", wk_mp_writer_ext(w, 5, "\x10\x11", 2));
    EXPECT_WRITES("d6ff00000001", wk_mp_writer_ext(w, -1, "\x00\x00\x00\x01", 4));
    EXPECT_WRITES("d7010000000000000000", wk_mp_writer_ext(w, 1, d, 8));
    EXPECT_WRITES("d80100000000000000000000000000000000", wk_mp_writer_ext(w, 1, d, 16));
    EXPECT_WRITES("c70006", wk_mp_writer_ext(w, 6, d, 0));
    EXPECT_WRITES("c70307000000", wk_mp_writer_ext(w, 7, d, 3));
    EXPECT_WRITES("c8010000", { wk_mp_writer_ext_header(w, 0, 256); });
    EXPECT_WRITES("c90001000002", { wk_mp_writer_ext_header(w, 2, 65536); });
    CHECK_EQ(wk_mp_sizeof_ext(16), 18);
    CHECK_EQ(wk_mp_sizeof_ext(3), 6);
    CHECK_EQ(wk_mp_sizeof_ext_header(65536), 6);
}

WK_TEST(test_msgpack_writes_timestamps_in_shortest_form)
{
    EXPECT_WRITES("d6ff00000000", wk_mp_writer_timestamp(w, 0, 0));
    EXPECT_WRITES("d6ffffffffff", wk_mp_writer_timestamp(w, 4294967295, 0));
    EXPECT_WRITES("d7ff0000000400000000", wk_mp_writer_timestamp(w, 0, 1));
    EXPECT_WRITES("d7ff0000000100000000", wk_mp_writer_timestamp(w, 4294967296, 0));
    EXPECT_WRITES("d7ffee6b27ffffffffff", wk_mp_writer_timestamp(w, 17179869183, 999999999));
    EXPECT_WRITES("c70cff000000000000000400000000", wk_mp_writer_timestamp(w, 17179869184, 0));
    EXPECT_WRITES("c70cff00000000ffffffffffffffff", wk_mp_writer_timestamp(w, -1, 0));
    CHECK_EQ(wk_mp_sizeof_timestamp(0, 0), 6);
    CHECK_EQ(wk_mp_sizeof_timestamp(0, 1), 10);
    CHECK_EQ(wk_mp_sizeof_timestamp(-1, 0), 15);
}

WK_TEST(test_msgpack_rejects_timestamp_nanoseconds_out_of_range)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_timestamp(&w, 1, 1000000000u);
    wk_error err;
    CHECK_STATUS(wk_mp_writer_finish(&w, &err), WK_ERR_RANGE);
    CHECK_EQ(b.len, 0);
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_sizeof_matches_written_integers)
{
    int64_t samples[] = {0, 1, 127, 128, 255, 256, 65535, 65536, 4294967295LL, 4294967296LL,
                         INT64_MAX, -1, -32, -33, -128, -129, -32768, -32769, INT32_MIN,
                         (int64_t)INT32_MIN - 1, INT64_MIN};
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        uint8_t buf[9];
        size_t n = (size_t)(wk_mp_encode_int(buf, samples[i]) - buf);
        CHECK_EQ(n, wk_mp_sizeof_int(samples[i]));
        if (samples[i] >= 0) {
            CHECK_EQ((size_t)(wk_mp_encode_uint(buf, (uint64_t)samples[i]) - buf),
                     wk_mp_sizeof_uint((uint64_t)samples[i]));
        }
    }
}

/* The seed record of SEEDS.md section 3: exactly 72 bytes. */
WK_TEST(test_msgpack_seed_record_is_72_bytes)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_begin_map(&w, 5);
    wk_mp_writer_str(&w, "username", 8);
    wk_mp_writer_str(&w, "root", 4);
    wk_mp_writer_str(&w, "password", 8);
    wk_mp_writer_str(&w, "secret", 6);
    wk_mp_writer_str(&w, "age", 3);
    wk_mp_writer_uint(&w, 20);
    wk_mp_writer_str(&w, "enabled", 7);
    wk_mp_writer_bool(&w, true);
    wk_mp_writer_str(&w, "metadata", 8);
    wk_mp_writer_begin_map(&w, 2);
    wk_mp_writer_str(&w, "hello", 5);
    wk_mp_writer_str(&w, "world", 5);
    wk_mp_writer_str(&w, "int", 3);
    wk_mp_writer_uint(&w, 10);
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_EQ(b.len, 72);
    uint8_t want[72];
    CHECK_EQ(wk_test_hex("85a8757365726e616d65a4726f6f74a870617373776f7264a6736563726574a3616765"
                         "14a7656e61626c6564c3a86d657461646174618" "2a568656c6c6fa5776f726c64a3"
                         "696e740a",
                         want, sizeof want),
             72);
    CHECK_MEM(b.data, b.len, want, 72);
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_fixed_buffer_overflow_is_sticky)
{
    uint8_t mem[4];
    wk_buf b;
    wk_buf_init_fixed(&b, mem, sizeof mem);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_uint(&w, 1);
    wk_mp_writer_uint(&w, 300);        /* exactly fills the buffer */
    wk_mp_writer_str(&w, "hello", 5); /* does not fit */
    wk_mp_writer_nil(&w);              /* no-op after the error */
    wk_error err;
    CHECK_STATUS(wk_mp_writer_finish(&w, &err), WK_ERR_LIMIT);
    CHECK_EQ(err.offset, 4);
    CHECK_EQ(b.len, 4);
    CHECK_MEM(mem, 4, "\x01\xcd\x01\x2c", 4);
}

/* A mix of every fixed-size form and strings around the 32-byte fast-check slack. After
 * each call, marks[] gets the writer's size (the value boundaries). */
#define MARK(call)                                                                        \
    do {                                                                                  \
        call;                                                                             \
        marks[n++] = wk_mp_writer_size(w);                                                \
    } while (0)
static size_t write_mix(wk_mp_writer *w, size_t *marks)
{
    size_t n = 0;
    MARK(wk_mp_writer_begin_map(w, 5));
    MARK(wk_mp_writer_str(w, "a key of thirty-one bytes, fixs", 31));
    MARK(wk_mp_writer_uint(w, 70000));
    MARK(wk_mp_writer_str(w, "k", 1));
    MARK(wk_mp_writer_double(w, 1.5));
    MARK(wk_mp_writer_str(w, "a string of forty bytes, a str8 header..", 40));
    MARK(wk_mp_writer_begin_array(w, 20));
    for (int i = 0; i < 20; i++) {
        MARK(wk_mp_writer_int(w, -1000 * i));
    }
    MARK(wk_mp_writer_bin(w, "\x01\x02\x03", 3));
    MARK(wk_mp_writer_bool(w, true));
    MARK(wk_mp_writer_nil(w));
    MARK(wk_mp_writer_float(w, 2.0f));
    MARK(wk_mp_writer_ext(w, 5, "abc", 3));
    MARK(wk_mp_writer_timestamp(w, -1, 5));
    MARK(wk_mp_writer_str(w, "", 0));
    return n;
}

WK_TEST(test_msgpack_fixed_buffer_of_every_size_keeps_a_prefix_of_whole_values)
{
    size_t marks[64];
    size_t fmarks[64];
    wk_buf g;
    wk_buf_init(&g, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &g);
    size_t nm = write_mix(&w, marks);
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_EQ(marks[nm - 1], g.len);
    CHECK(g.len > 64);
    uint8_t mem[256];
    CHECK(g.len <= sizeof mem);
    for (size_t cap = 0; cap <= g.len; cap++) {
        wk_buf f;
        wk_buf_init_fixed(&f, mem, cap);
        wk_mp_writer_init(&w, &f);
        write_mix(&w, fmarks);
        wk_error err;
        wk_status st = wk_mp_writer_finish(&w, &err);
        if (cap == g.len) {
            CHECK_OK(st);
            CHECK_MEM(mem, f.len, g.data, g.len);
            continue;
        }
        CHECK_STATUS(st, WK_ERR_LIMIT);
        /* Every value that fit was written: the output is the longest prefix of whole values
         * not longer than the buffer, and the error offset is its size. */
        size_t want = 0;
        for (size_t i = 0; i < nm && marks[i] <= cap; i++) {
            want = marks[i];
        }
        CHECK_MSG(f.len == want, "cap %zu: wrote %zu bytes, want %zu", cap, f.len, want);
        CHECK_EQ(err.offset, want);
        CHECK(memcmp(mem, g.data, f.len) == 0);
    }
    wk_buf_free(&g);
}

WK_TEST(test_msgpack_capped_growable_buffer_is_filled_to_its_cap)
{
    /* The writer asks a growable buffer for 32 bytes of slack at a time; a cap closer than
     * that must still be reachable byte by byte. */
    for (size_t max = 1; max <= 40; max++) {
        wk_buf b;
        wk_buf_init(&b, NULL, max);
        wk_mp_writer w;
        wk_mp_writer_init(&w, &b);
        for (size_t i = 0; i < max; i++) {
            wk_mp_writer_nil(&w);
        }
        CHECK_OK(wk_mp_writer_flush(&w));
        CHECK_EQ(b.len, max);
        wk_mp_writer_nil(&w);
        wk_error err;
        CHECK_STATUS(wk_mp_writer_finish(&w, &err), WK_ERR_LIMIT);
        CHECK_EQ(err.offset, max);
        CHECK_EQ(b.len, max);
        wk_buf_free(&b);
    }
}

WK_TEST(test_msgpack_writer_appends_to_existing_contents)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    CHECK_OK(wk_buf_append(&b, "\x92", 1));
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_nil(&w);
    wk_mp_writer_nil(&w);
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_MEM(b.data, b.len, "\x92\xc0\xc0", 3);
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_writer_finish_twice_is_a_state_error)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_STATUS(wk_mp_writer_finish(&w, NULL), WK_ERR_STATE);
    wk_buf_free(&b);
}

static wk_status send(const wk_sink *s, wk_event_type t, uint32_t count)
{
    wk_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = t;
    ev.v.count = count;
    return s->event(s->self, &ev);
}

static wk_status send_uint(const wk_sink *s, uint64_t u)
{
    wk_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = WK_EV_UINT;
    ev.v.u = u;
    return s->event(s->self, &ev);
}

WK_TEST(test_msgpack_sink_backpatches_unknown_counts_to_shortest_header)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_sink s;
    wk_mp_writer_sink(&w, &s);
    /* [ {1: [1,2,...,20]}, [] ] with every count unknown */
    CHECK_OK(send(&s, WK_EV_ARRAY, WK_COUNT_UNKNOWN));
    CHECK_OK(send(&s, WK_EV_MAP, WK_COUNT_UNKNOWN));
    CHECK_OK(send_uint(&s, 1));
    CHECK_OK(send(&s, WK_EV_ARRAY, WK_COUNT_UNKNOWN));
    for (uint64_t i = 1; i <= 20; i++) {
        CHECK_OK(send_uint(&s, i));
    }
    CHECK_OK(send(&s, WK_EV_END, 0));
    CHECK_OK(send(&s, WK_EV_END, 0));
    CHECK_OK(send(&s, WK_EV_ARRAY, WK_COUNT_UNKNOWN));
    CHECK_OK(send(&s, WK_EV_END, 0));
    CHECK_OK(send(&s, WK_EV_END, 0));
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    uint8_t want[64];
    size_t n = wk_test_hex("92 81 01 dc0014 0102030405060708090a0b0c0d0e0f1011121314 90", want,
                           sizeof want);
    CHECK_MEM(b.data, b.len, want, n);
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_sink_backpatch_of_65536_elements_uses_array32)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_sink s;
    wk_mp_writer_sink(&w, &s);
    CHECK_OK(send(&s, WK_EV_ARRAY, WK_COUNT_UNKNOWN));
    for (int i = 0; i < 65536; i++) {
        CHECK_OK(send(&s, WK_EV_NIL, 0));
    }
    CHECK_OK(send(&s, WK_EV_END, 0));
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_EQ(b.len, 5 + 65536);
    CHECK_MEM(b.data, 5, "\xdd\x00\x01\x00\x00", 5);
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_sink_rejects_count_mismatch_and_stray_end)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_sink s;
    wk_mp_writer_sink(&w, &s);
    CHECK_OK(send(&s, WK_EV_ARRAY, 2));
    CHECK_OK(send(&s, WK_EV_NIL, 0));
    CHECK_STATUS(send(&s, WK_EV_END, 0), WK_ERR_STATE);
    CHECK_STATUS(wk_mp_writer_finish(&w, NULL), WK_ERR_STATE);

    wk_buf_clear(&b);
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_sink(&w, &s);
    CHECK_STATUS(send(&s, WK_EV_END, 0), WK_ERR_STATE);
    wk_mp_writer_finish(&w, NULL);

    wk_buf_clear(&b);
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_sink(&w, &s);
    CHECK_OK(send(&s, WK_EV_MAP, WK_COUNT_UNKNOWN));
    CHECK_OK(send(&s, WK_EV_NIL, 0));
    CHECK_STATUS(send(&s, WK_EV_END, 0), WK_ERR_STATE); /* key without value */
    wk_mp_writer_finish(&w, NULL);

    wk_buf_clear(&b);
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_sink(&w, &s);
    CHECK_OK(send(&s, WK_EV_ARRAY, 1));
    CHECK_OK(send(&s, WK_EV_NIL, 0));
    CHECK_STATUS(send(&s, WK_EV_NIL, 0), WK_ERR_STATE); /* more than declared */
    CHECK_STATUS(wk_mp_writer_finish(&w, NULL), WK_ERR_STATE);
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_sink_writes_rawnum_as_str_and_deep_unknown_nesting)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_sink s;
    wk_mp_writer_sink(&w, &s);
    for (int i = 0; i < 100; i++) {
        CHECK_OK(send(&s, WK_EV_ARRAY, WK_COUNT_UNKNOWN));
    }
    wk_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = WK_EV_RAWNUM;
    ev.v.str.ptr = "1.50";
    ev.v.str.len = 4;
    CHECK_OK(s.event(s.self, &ev));
    for (int i = 0; i < 100; i++) {
        CHECK_OK(send(&s, WK_EV_END, 0));
    }
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_EQ(b.len, 105);
    for (int i = 0; i < 100; i++) {
        CHECK_EQ(b.data[i], 0x91);
    }
    CHECK_MEM(b.data + 100, 5, "\xa4" "1.50", 5);
    wk_buf_free(&b);
}

WK_TEST(test_msgpack_writer_uses_caller_allocator_and_frees_everything)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    wk_buf b;
    wk_buf_init(&b, &ta.a, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_sink s;
    wk_mp_writer_sink(&w, &s);
    for (int i = 0; i < 40; i++) { /* deeper than the inline frames */
        CHECK_OK(send(&s, WK_EV_MAP, WK_COUNT_UNKNOWN));
        CHECK_OK(send_uint(&s, (uint64_t)i));
    }
    CHECK_OK(send(&s, WK_EV_NIL, 0));
    for (int i = 0; i < 40; i++) {
        CHECK_OK(send(&s, WK_EV_END, 0));
    }
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_EQ(b.len, 40 * 2 + 1);
    wk_buf_free(&b);
    CHECK_EQ(ta.live_bytes, 0);
    CHECK(ta.allocs > 1);
}

WK_TEST(test_msgpack_writer_reports_out_of_memory)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    ta.fail_at = 1;
    wk_buf b;
    wk_buf_init(&b, &ta.a, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &b);
    wk_mp_writer_nil(&w);
    CHECK_STATUS(wk_mp_writer_finish(&w, NULL), WK_ERR_NOMEM);
    wk_buf_free(&b);
}
