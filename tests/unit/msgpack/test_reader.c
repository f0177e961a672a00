/* The MessagePack reader: every format decodes to the right event, containers close with
 * WK_EV_END, streams end with WK_ERR_EOF, skip and the one-shot scans agree with it. */
#include "wirekit/msgpack.h"
#include "wk_test.h"

/* Reads the single value in `hex` and returns its first event in *ev. */
static wk_status read_one(const char *hex, uint8_t *buf, wk_event *ev)
{
    size_t n = wk_test_hex(hex, buf, 128);
    wk_mp_reader r;
    wk_mp_reader_init(&r, buf, n, NULL);
    wk_status st = wk_mp_reader_next(&r, ev);
    wk_mp_reader_free(&r);
    return st;
}

WK_TEST(test_msgpack_reads_every_integer_width_as_the_same_number)
{
    const char *forms[] = {"05", "cc05", "cd0005", "ce00000005", "cf0000000000000005", "d005",
                           "d10005", "d200000005", "d30000000000000005"};
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        uint8_t buf[128];
        wk_event ev;
        CHECK_OK(read_one(forms[i], buf, &ev));
        CHECK_EQ(ev.type, WK_EV_UINT);
        CHECK_EQ(ev.v.u, 5);
    }
    const char *neg[] = {"fb", "d0fb", "d1fffb", "d2fffffffb", "d3fffffffffffffffb"};
    for (size_t i = 0; i < sizeof neg / sizeof neg[0]; i++) {
        uint8_t buf[128];
        wk_event ev;
        CHECK_OK(read_one(neg[i], buf, &ev));
        CHECK_EQ(ev.type, WK_EV_INT);
        CHECK_EQ(ev.v.i, -5);
    }
    uint8_t buf[128];
    wk_event ev;
    CHECK_OK(read_one("cfffffffffffffffff", buf, &ev));
    CHECK(ev.type == WK_EV_UINT && ev.v.u == UINT64_MAX);
    CHECK_OK(read_one("d38000000000000000", buf, &ev));
    CHECK(ev.type == WK_EV_INT && ev.v.i == INT64_MIN);
}

WK_TEST(test_msgpack_reads_scalars)
{
    uint8_t buf[128];
    wk_event ev;
    CHECK_OK(read_one("c0", buf, &ev));
    CHECK_EQ(ev.type, WK_EV_NIL);
    CHECK_OK(read_one("c3", buf, &ev));
    CHECK(ev.type == WK_EV_BOOL && ev.v.b);
    CHECK_OK(read_one("c2", buf, &ev));
    CHECK(ev.type == WK_EV_BOOL && !ev.v.b);
    CHECK_OK(read_one("ca3fc00000", buf, &ev));
    CHECK(ev.type == WK_EV_FLOAT && ev.f32 && ev.v.f == 1.5);
    CHECK_OK(read_one("cb3ff8000000000000", buf, &ev));
    CHECK(ev.type == WK_EV_FLOAT && !ev.f32 && ev.v.f == 1.5);
    const char *strs[] = {"a3616263", "d903616263", "da0003616263", "db00000003616263"};
    for (size_t i = 0; i < 4; i++) {
        CHECK_OK(read_one(strs[i], buf, &ev));
        CHECK_EQ(ev.type, WK_EV_STR);
        CHECK_MEM(ev.v.str.ptr, ev.v.str.len, "abc", 3);
    }
    const char *bins[] = {"c4026162", "c500026162", "c6000000026162"};
    for (size_t i = 0; i < 3; i++) {
        CHECK_OK(read_one(bins[i], buf, &ev));
        CHECK_EQ(ev.type, WK_EV_BIN);
        CHECK_MEM(ev.v.str.ptr, ev.v.str.len, "ab", 2);
    }
}

WK_TEST(test_msgpack_reads_every_ext_width)
{
    const char *forms[] = {"d40701", "d5070102", "d60701020304", "d7070102030405060708",
                           "d80701020304050607080910111213141516", "c70307010203",
                           "c80003070102 03", "c900000003070102 03"};
    uint32_t lens[] = {1, 2, 4, 8, 16, 3, 3, 3};
    for (size_t i = 0; i < 8; i++) {
        uint8_t buf[128];
        wk_event ev;
        CHECK_OK(read_one(forms[i], buf, &ev));
        CHECK_EQ(ev.type, WK_EV_EXT);
        CHECK_EQ(ev.v.ext.type, 7);
        CHECK_EQ(ev.v.ext.len, lens[i]);
        CHECK_EQ(ev.v.ext.ptr[0], 1);
    }
}

WK_TEST(test_msgpack_reads_timestamps_of_all_three_forms)
{
    uint8_t buf[128];
    wk_event ev;
    CHECK_OK(read_one("d6ff5a4af6a5", buf, &ev));
    CHECK(ev.type == WK_EV_TIMESTAMP && ev.v.ts.sec == 1514862245 && ev.v.ts.nsec == 0);
    CHECK_OK(read_one("d7ffa1dcd7c85a4af6a5", buf, &ev));
    CHECK(ev.type == WK_EV_TIMESTAMP && ev.v.ts.sec == 1514862245 &&
          ev.v.ts.nsec == 678901234);
    CHECK_OK(read_one("c70cff3b9ac9ffffffffff7c55817f", buf, &ev));
    CHECK(ev.type == WK_EV_TIMESTAMP && ev.v.ts.sec == -2208988801LL &&
          ev.v.ts.nsec == 999999999);
}

WK_TEST(test_msgpack_rejects_bad_timestamps)
{
    uint8_t buf[128];
    wk_event ev;
    /* 64-bit form with nanoseconds 1e9 (0x3b9aca00 << 2 in the top 30 bits). */
    CHECK_STATUS(read_one("d7ffee6b280000000000", buf, &ev), WK_ERR_SYNTAX);
    /* 96-bit form with nanoseconds 0xffffffff */
    CHECK_STATUS(read_one("c70cffffffffff0000000000000000", buf, &ev), WK_ERR_SYNTAX);
    /* wrong lengths */
    CHECK_STATUS(read_one("d4ff00", buf, &ev), WK_ERR_SYNTAX);
    CHECK_STATUS(read_one("c705ff0000000000", buf, &ev), WK_ERR_SYNTAX);
    CHECK_STATUS(read_one("d8ff00000000000000000000000000000000", buf, &ev), WK_ERR_SYNTAX);
}

WK_TEST(test_msgpack_rejects_c1)
{
    uint8_t buf[128];
    wk_event ev;
    CHECK_STATUS(read_one("c1", buf, &ev), WK_ERR_SYNTAX);
    size_t n = wk_test_hex("92 01 c1", buf, sizeof buf);
    wk_error err;
    CHECK_STATUS(wk_mp_check(buf, n, NULL, NULL, &err), WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 2);
}

/* Collects the event types of a whole stream as letters: n b u i f s B [ { ] e t. */
static wk_status event_string(const uint8_t *p, size_t n, char *out, size_t cap,
                              const wk_read_opts *opts, wk_error *err)
{
    wk_mp_reader r;
    wk_mp_reader_init(&r, p, n, opts);
    size_t k = 0;
    for (;;) {
        wk_event ev;
        wk_status st = wk_mp_reader_next(&r, &ev);
        if (st != WK_OK) {
            out[k] = '\0';
            wk_mp_reader_error(&r, err);
            wk_mp_reader_free(&r);
            return st == WK_ERR_EOF ? WK_OK : st;
        }
        static const char letters[] = "nbiufsB[{]etr";
        if (k + 1 < cap) {
            out[k++] = letters[ev.type];
        }
    }
}

WK_TEST(test_msgpack_reader_closes_containers_with_end_events)
{
    uint8_t buf[64];
    size_t n = wk_test_hex("82 a161 90 a162 92 80 c0   01", buf, sizeof buf);
    char evs[64];
    CHECK_OK(event_string(buf, n, evs, sizeof evs, NULL, NULL));
    CHECK_STR(evs, "{s[]s[{]n]]u");
}

WK_TEST(test_msgpack_reader_reports_eof_repeatedly_and_errors_sticky)
{
    uint8_t buf[8] = {0x01};
    wk_mp_reader r;
    wk_event ev;
    wk_mp_reader_init(&r, buf, 1, NULL);
    CHECK_OK(wk_mp_reader_next(&r, &ev));
    CHECK_STATUS(wk_mp_reader_next(&r, &ev), WK_ERR_EOF);
    CHECK_STATUS(wk_mp_reader_next(&r, &ev), WK_ERR_EOF);
    buf[0] = 0xc1;
    wk_mp_reader_init(&r, buf, 1, NULL);
    CHECK_STATUS(wk_mp_reader_next(&r, &ev), WK_ERR_SYNTAX);
    CHECK_STATUS(wk_mp_reader_next(&r, &ev), WK_ERR_SYNTAX);
    wk_error err;
    CHECK_STATUS(wk_mp_reader_error(&r, &err), WK_ERR_SYNTAX); /* getters return the code */
    CHECK_STATUS(wk_mp_reader_error(&r, NULL), WK_ERR_SYNTAX);
    CHECK_EQ(err.code, WK_ERR_SYNTAX);
    CHECK_EQ(err.offset, 0);
    CHECK(strstr(err.msg, "0xc1") != NULL);
}

WK_TEST(test_msgpack_skip_passes_over_whole_values)
{
    uint8_t buf[64];
    size_t n = wk_test_hex("93 82 a161 91 01 a162 c0 05 a3 616263", buf, sizeof buf);
    wk_mp_reader r;
    wk_mp_reader_init(&r, buf, n, NULL);
    wk_event ev;
    CHECK_OK(wk_mp_reader_next(&r, &ev));
    CHECK_EQ(ev.type, WK_EV_ARRAY);
    CHECK_OK(wk_mp_reader_skip(&r)); /* the map */
    CHECK_OK(wk_mp_reader_next(&r, &ev));
    CHECK(ev.type == WK_EV_UINT && ev.v.u == 5);
    CHECK_OK(wk_mp_reader_skip(&r)); /* "abc" */
    CHECK_STATUS(wk_mp_reader_skip(&r), WK_ERR_STATE); /* the END is next */
    CHECK_OK(wk_mp_reader_next(&r, &ev));
    CHECK_EQ(ev.type, WK_EV_END);
    CHECK_STATUS(wk_mp_reader_skip(&r), WK_ERR_EOF);
}

WK_TEST(test_msgpack_check_reports_value_size_and_validate_counts_values)
{
    uint8_t buf[64];
    size_t n = wk_test_hex("92 01 02 c0 a161", buf, sizeof buf);
    size_t size = 0;
    CHECK_OK(wk_mp_check(buf, n, NULL, &size, NULL));
    CHECK_EQ(size, 3);
    size_t count = 0;
    CHECK_OK(wk_mp_validate(buf, n, NULL, &count, NULL));
    CHECK_EQ(count, 3);
    CHECK_STATUS(wk_mp_check(buf, 0, NULL, NULL, NULL), WK_ERR_TRUNCATED);
    CHECK_OK(wk_mp_validate(buf, 0, NULL, &count, NULL));
    CHECK_EQ(count, 0);
}

WK_TEST(test_msgpack_reader_round_trips_through_writer_sink)
{
    uint8_t buf[128];
    size_t n = wk_test_hex("85 a8757365726e616d65 a4726f6f74 a3616765 14 a16e c0 a166 cb3ff8000000000000"
                           " a178 93 d6ff00000001 c70307616263 c4020102",
                           buf, sizeof buf);
    wk_mp_reader r;
    wk_mp_reader_init(&r, buf, n, NULL);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &out);
    wk_sink sink;
    wk_mp_writer_sink(&w, &sink);
    CHECK_OK(wk_transcode(&src, &sink, NULL));
    CHECK_OK(wk_mp_writer_finish(&w, NULL));
    CHECK_MEM(out.data, out.len, buf, n);
    wk_buf_free(&out);
}

WK_TEST(test_msgpack_typed_reads_decode_every_width_and_refuse_other_types)
{
    uint8_t buf[128];
    size_t n = wk_test_hex("95 a161 d903626364 d1fc18 cd0100 c3 c0", buf, sizeof buf);
    CHECK(n != (size_t)-1);
    wk_mp_reader r;
    wk_mp_reader_init(&r, buf, n, NULL);
    uint32_t count = 0;
    CHECK_OK(wk_mp_reader_begin_array(&r, &count));
    CHECK_EQ(count, 5);
    const char *s;
    size_t len;
    CHECK_OK(wk_mp_reader_str(&r, &s, &len));
    CHECK_MEM(s, len, "a", 1);
    int64_t i;
    CHECK_STATUS(wk_mp_reader_int(&r, &i), WK_ERR_TYPE); /* a str is next: nothing consumed */
    CHECK_OK(wk_mp_reader_str(&r, &s, &len));            /* str8 through the slow path */
    CHECK_MEM(s, len, "bcd", 3);
    uint64_t u;
    CHECK_STATUS(wk_mp_reader_uint(&r, &u), WK_ERR_RANGE); /* -1000 is not unsigned */
    CHECK_OK(wk_mp_reader_int(&r, &i));
    CHECK_EQ(i, -1000);
    CHECK_OK(wk_mp_reader_uint(&r, &u));
    CHECK_EQ(u, 256);
    bool b = false;
    CHECK_STATUS(wk_mp_reader_end(&r), WK_ERR_STATE); /* one element left */
    CHECK_OK(wk_mp_reader_bool(&r, &b));
    CHECK(b);
    CHECK_STATUS(wk_mp_reader_nil(&r), WK_ERR_STATE); /* the array is complete */
    CHECK_OK(wk_mp_reader_end(&r));
    CHECK_OK(wk_mp_reader_nil(&r)); /* a second top-level value */
    CHECK_STATUS(wk_mp_reader_nil(&r), WK_ERR_EOF);
    CHECK_STATUS(wk_mp_reader_end(&r), WK_ERR_STATE);
}

WK_TEST(test_msgpack_typed_reads_latch_malformed_input)
{
    uint8_t buf[] = {0x81, 0xa5, 'a', 'b'}; /* fixstr of 5 with 2 bytes left */
    wk_mp_reader r;
    wk_mp_reader_init(&r, buf, sizeof buf, NULL);
    uint32_t n;
    CHECK_OK(wk_mp_reader_begin_map(&r, &n));
    const char *s;
    size_t len;
    CHECK_STATUS(wk_mp_reader_str(&r, &s, &len), WK_ERR_TRUNCATED);
    CHECK_STATUS(wk_mp_reader_str(&r, &s, &len), WK_ERR_TRUNCATED); /* sticky */
    wk_event ev;
    CHECK_STATUS(wk_mp_reader_next(&r, &ev), WK_ERR_TRUNCATED);
    wk_error err;
    wk_mp_reader_error(&r, &err);
    CHECK_EQ(err.offset, 1);
    /* strict UTF-8 goes through the checked path even for fixstr */
    uint8_t bad[] = {0xa1, 0xff};
    wk_read_opts opts = {.flags = WK_READ_STRICT_UTF8};
    wk_mp_reader_init(&r, bad, sizeof bad, &opts);
    CHECK_STATUS(wk_mp_reader_str(&r, &s, &len), WK_ERR_UTF8);
}

WK_TEST(test_msgpack_typed_container_reads_check_counts_depth_and_deep_stacks)
{
    wk_mp_reader r;
    uint32_t n;
    /* fixmap of 2 pairs needs 4 more bytes; 3 remain: refused, nothing consumed */
    uint8_t shortmap[] = {0x82, 0x01, 0x02, 0x03};
    wk_mp_reader_init(&r, shortmap, sizeof shortmap, NULL);
    CHECK_STATUS(wk_mp_reader_begin_map(&r, &n), WK_ERR_TRUNCATED);
    uint8_t shortarr[] = {0x93, 0x01, 0x02};
    wk_mp_reader_init(&r, shortarr, sizeof shortarr, NULL);
    CHECK_STATUS(wk_mp_reader_begin_array(&r, &n), WK_ERR_TRUNCATED);
    /* exactly enough bytes: accepted */
    uint8_t okmap[] = {0x82, 0x01, 0x02, 0x03, 0x04};
    wk_mp_reader_init(&r, okmap, sizeof okmap, NULL);
    CHECK_OK(wk_mp_reader_begin_map(&r, &n));
    CHECK_EQ(n, 2);
    /* the depth limit holds for the inline path too */
    uint8_t nest[80];
    memset(nest, 0x91, sizeof nest);
    nest[sizeof nest - 1] = 0xc0;
    wk_read_opts o2 = {.max_depth = 2};
    wk_mp_reader_init(&r, nest, sizeof nest, &o2);
    CHECK_OK(wk_mp_reader_begin_array(&r, &n));
    CHECK_OK(wk_mp_reader_begin_array(&r, &n));
    CHECK_STATUS(wk_mp_reader_begin_array(&r, &n), WK_ERR_DEPTH);
    CHECK_STATUS(wk_mp_reader_end(&r), WK_ERR_DEPTH); /* latched: no inline close either */
    /* 79 nested arrays: past the 32 inline slots onto the heap stack and back, closing each
     * level in order */
    wk_mp_reader_init(&r, nest, sizeof nest, NULL);
    for (size_t i = 0; i + 1 < sizeof nest; i++) {
        CHECK_OK(wk_mp_reader_begin_array(&r, &n));
        CHECK_EQ(n, 1);
    }
    CHECK_OK(wk_mp_reader_nil(&r));
    for (size_t i = 0; i + 1 < sizeof nest; i++) {
        CHECK_STATUS(wk_mp_reader_nil(&r), WK_ERR_STATE);
        CHECK_OK(wk_mp_reader_end(&r));
    }
    CHECK_STATUS(wk_mp_reader_end(&r), WK_ERR_STATE); /* nothing open */
    CHECK_STATUS(wk_mp_reader_nil(&r), WK_ERR_EOF);
    wk_mp_reader_free(&r);
}
