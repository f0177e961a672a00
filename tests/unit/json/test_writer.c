/*
 * The JSON writer: compact and pretty layout, string escaping, numbers, the mapping of values
 * JSON has no form for (binary, ext, timestamps, non-string keys), errors (NaN, bad UTF-8,
 * container keys, unbalanced events, full buffers), and the tree walker printing exactly
 * what the event writer prints.
 */
#include <math.h>

#include "json_test_util.h"

static wk_event ev_of(wk_event_type t)
{
    wk_event e;
    memset(&e, 0, sizeof e);
    e.type = t;
    return e;
}
static wk_event ev_u(uint64_t u)
{
    wk_event e = ev_of(WK_EV_UINT);
    e.v.u = u;
    return e;
}
static wk_event ev_i(int64_t i)
{
    wk_event e = ev_of(WK_EV_INT);
    e.v.i = i;
    return e;
}
static wk_event ev_f(double f, bool f32)
{
    wk_event e = ev_of(WK_EV_FLOAT);
    e.v.f = f;
    e.f32 = f32;
    return e;
}
static wk_event ev_s(const char *s, size_t n, wk_event_type t)
{
    wk_event e = ev_of(t);
    e.v.str.ptr = s;
    e.v.str.len = n;
    return e;
}
static wk_event ev_c(wk_event_type t)
{
    wk_event e = ev_of(t);
    e.v.count = WK_COUNT_UNKNOWN;
    return e;
}

/* Writes events and returns the writer's final status; out must be freed. */
static wk_status write_events(const wk_event *evs, size_t n, unsigned flags, wk_buf *out)
{
    wk_json_write_opts wo = {flags, 0};
    wk_json_writer w;
    wk_buf_init(out, NULL, 0);
    wk_json_writer_init(&w, out, &wo);
    for (size_t i = 0; i < n; i++) {
        wk_status st = wk_json_writer_event(&w, &evs[i]);
        if (st != WK_OK) {
            return st;
        }
    }
    return wk_json_writer_finish(&w, NULL);
}

#define CHECK_WRITES(evs, flags, want)                                                    \
    do {                                                                                  \
        wk_buf o;                                                                         \
        CHECK_OK(write_events((evs), sizeof(evs) / sizeof((evs)[0]), (flags), &o));       \
        CHECK_MEM(o.data, o.len, (want), strlen(want));                                   \
        wk_buf_free(&o);                                                                  \
    } while (0)

static const char SEED[] = "{\"username\":\"root\",\"password\":\"secret\",\"age\":20,"
                           "\"enabled\":true,\"metadata\":{\"hello\":\"world\",\"int\":10}}";

WK_TEST(test_json_writer_writes_the_seed_record_in_101_bytes)
{
    wk_event evs[] = {ev_c(WK_EV_MAP),
                      ev_s("username", 8, WK_EV_STR), ev_s("root", 4, WK_EV_STR),
                      ev_s("password", 8, WK_EV_STR), ev_s("secret", 6, WK_EV_STR),
                      ev_s("age", 3, WK_EV_STR), ev_u(20),
                      ev_s("enabled", 7, WK_EV_STR), ev_of(WK_EV_BOOL),
                      ev_s("metadata", 8, WK_EV_STR), ev_c(WK_EV_MAP),
                      ev_s("hello", 5, WK_EV_STR), ev_s("world", 5, WK_EV_STR),
                      ev_s("int", 3, WK_EV_STR), ev_u(10), ev_of(WK_EV_END),
                      ev_of(WK_EV_END)};
    evs[8].v.b = true;
    CHECK_EQ(strlen(SEED), 101);
    CHECK_WRITES(evs, 0, SEED);
}

WK_TEST(test_json_writer_pretty_prints_with_indentation)
{
    wk_event evs[] = {ev_c(WK_EV_MAP), ev_s("a", 1, WK_EV_STR), ev_c(WK_EV_ARRAY), ev_u(1),
                      ev_i(-2),        ev_c(WK_EV_ARRAY),       ev_of(WK_EV_END), ev_c(WK_EV_MAP),
                      ev_of(WK_EV_END), ev_of(WK_EV_END),       ev_s("b", 1, WK_EV_STR),
                      ev_of(WK_EV_NIL), ev_of(WK_EV_END)};
    CHECK_WRITES(evs, WK_JSON_WRITE_PRETTY,
                 "{\n  \"a\": [\n    1,\n    -2,\n    [],\n    {}\n  ],\n  \"b\": null\n}");
    CHECK_WRITES(evs, 0, "{\"a\":[1,-2,[],{}],\"b\":null}");
}

WK_TEST(test_json_writer_escapes_only_what_rfc8259_requires)
{
    const char s[] = "q\"b\\s/\b\f\n\r\t\x01\x1f\x7f \xc3\xa9\xf0\x9f\x98\x80";
    wk_event evs[] = {ev_s(s, sizeof s - 1, WK_EV_STR)};
    CHECK_WRITES(evs, 0, "\"q\\\"b\\\\s/\\b\\f\\n\\r\\t\\u0001\\u001f\x7f \xc3\xa9\xf0\x9f\x98\x80\"");
    /* Long plain runs with an escape in the middle (the SIMD path). */
    char longs[100];
    memset(longs, 'x', sizeof longs);
    longs[50] = '"';
    wk_event e2[] = {ev_s(longs, sizeof longs, WK_EV_STR)};
    wk_buf o;
    CHECK_OK(write_events(e2, 1, 0, &o));
    CHECK_EQ(o.len, 103);
    CHECK(memcmp(o.data + 50, "x\\\"x", 4) == 0);
    wk_buf_free(&o);
}

WK_TEST(test_json_writer_rejects_invalid_utf8)
{
    static const char *bad[] = {"\xff", "\xc0\xaf", "\xed\xa0\x80", "a\xe2\x82", "\xf4\x90\x80\x80"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wk_event evs[] = {ev_s(bad[i], strlen(bad[i]), WK_EV_STR)};
        wk_buf o;
        CHECK_STATUS(write_events(evs, 1, 0, &o), WK_ERR_UTF8);
        wk_buf_free(&o);
    }
}

WK_TEST(test_json_writer_prints_numbers_shortest)
{
    wk_event evs[] = {ev_c(WK_EV_ARRAY), ev_u(UINT64_MAX), ev_i(INT64_MIN), ev_f(0.1, false),
                      ev_f(1.0, false),  ev_f(-0.0, false), ev_f(1e21, false),
                      ev_f(1.5e-7, false), ev_f((double)0.1f, true), ev_f(5e-324, false),
                      ev_of(WK_EV_END)};
    CHECK_WRITES(evs, 0,
                 "[18446744073709551615,-9223372036854775808,0.1,1.0,-0.0,1e21,1.5e-7,0.1,"
                 "5e-324]");
}

WK_TEST(test_json_writer_rejects_nan_and_infinity_unless_asked)
{
    double bad[] = {NAN, INFINITY, -INFINITY};
    const char *text[] = {"NaN", "Infinity", "-Infinity"};
    for (int i = 0; i < 3; i++) {
        wk_event evs[] = {ev_f(bad[i], false)};
        wk_buf o;
        CHECK_STATUS(write_events(evs, 1, 0, &o), WK_ERR_RANGE);
        wk_buf_free(&o);
        CHECK_OK(write_events(evs, 1, WK_JSON_WRITE_NAN_INF, &o));
        CHECK_MEM(o.data, o.len, text[i], strlen(text[i]));
        wk_buf_free(&o);
    }
}

WK_TEST(test_json_writer_maps_binary_ext_and_timestamps)
{
    wk_event ext = ev_of(WK_EV_EXT);
    ext.v.ext.type = 5;
    ext.v.ext.ptr = (const uint8_t *)"abcd";
    ext.v.ext.len = 4;
    wk_event ts1 = ev_of(WK_EV_TIMESTAMP);
    ts1.v.ts.sec = 0;
    wk_event ts2 = ev_of(WK_EV_TIMESTAMP);
    ts2.v.ts.sec = 951782400 + 86399; /* 2000-02-29T23:59:59 */
    ts2.v.ts.nsec = 120000000;
    wk_event ts3 = ev_of(WK_EV_TIMESTAMP);
    ts3.v.ts.sec = -62167219200ll; /* 0000-01-01 */
    ts3.v.ts.nsec = 1;
    wk_event evs[] = {ev_c(WK_EV_ARRAY),
                      ev_s("", 0, WK_EV_BIN),
                      ev_s("f", 1, WK_EV_BIN),
                      ev_s("fo", 2, WK_EV_BIN),
                      ev_s("foo", 3, WK_EV_BIN),
                      ev_s("foob", 4, WK_EV_BIN),
                      ext,
                      ts1,
                      ts2,
                      ts3,
                      ev_of(WK_EV_END)};
    CHECK_WRITES(evs, 0,
                 "[\"\",\"Zg==\",\"Zm8=\",\"Zm9v\",\"Zm9vYg==\",{\"ext\":5,\"data\":\"YWJjZA==\"},"
                 "\"1970-01-01T00:00:00Z\",\"2000-02-29T23:59:59.12Z\","
                 "\"0000-01-01T00:00:00.000000001Z\"]");
    wk_event far = ev_of(WK_EV_TIMESTAMP);
    far.v.ts.sec = 253402300800ll; /* year 10000 */
    wk_event e2[] = {far};
    wk_buf o;
    CHECK_STATUS(write_events(e2, 1, 0, &o), WK_ERR_RANGE);
    wk_buf_free(&o);
}

WK_TEST(test_json_writer_turns_scalar_keys_into_strings)
{
    wk_event evs[] = {ev_c(WK_EV_MAP), ev_u(1),          ev_u(2),        ev_i(-3),
                      ev_of(WK_EV_NIL), ev_of(WK_EV_NIL), ev_of(WK_EV_BOOL), ev_f(1.5, false),
                      ev_of(WK_EV_NIL), ev_s("ab", 2, WK_EV_BIN), ev_u(0), ev_of(WK_EV_END)};
    CHECK_WRITES(evs, 0, "{\"1\":2,\"-3\":null,\"null\":false,\"1.5\":null,\"YWI=\":0}");
    wk_event bad[] = {ev_c(WK_EV_MAP), ev_c(WK_EV_ARRAY)};
    wk_buf o;
    CHECK_STATUS(write_events(bad, 2, 0, &o), WK_ERR_TYPE);
    wk_buf_free(&o);
}

WK_TEST(test_json_writer_rejects_unbalanced_events)
{
    wk_buf o;
    wk_event end[] = {ev_of(WK_EV_END)};
    CHECK_STATUS(write_events(end, 1, 0, &o), WK_ERR_STATE);
    wk_buf_free(&o);
    wk_event open[] = {ev_c(WK_EV_ARRAY), ev_u(1)};
    CHECK_STATUS(write_events(open, 2, 0, &o), WK_ERR_STATE);
    wk_buf_free(&o);
    wk_event keyonly[] = {ev_c(WK_EV_MAP), ev_s("k", 1, WK_EV_STR), ev_of(WK_EV_END)};
    CHECK_STATUS(write_events(keyonly, 3, 0, &o), WK_ERR_STATE);
    wk_buf_free(&o);
    /* Too deep. */
    wk_json_writer w;
    wk_buf_init(&o, NULL, 0);
    wk_json_writer_init(&w, &o, NULL);
    wk_event arr = ev_c(WK_EV_ARRAY);
    wk_status st = WK_OK;
    for (int i = 0; i <= WK_JSON_WRITER_MAX_DEPTH && st == WK_OK; i++) {
        st = wk_json_writer_event(&w, &arr);
    }
    CHECK_STATUS(st, WK_ERR_DEPTH);
    wk_buf_free(&o);
}

WK_TEST(test_json_writer_separates_top_level_values_by_newlines)
{
    wk_event evs[] = {ev_u(1), ev_c(WK_EV_ARRAY), ev_of(WK_EV_END), ev_s("x", 1, WK_EV_STR)};
    CHECK_WRITES(evs, 0, "1\n[]\n\"x\"");
    CHECK_WRITES(evs, WK_JSON_WRITE_NEWLINE, "1\n[]\n\"x\"\n");
}

WK_TEST(test_json_writer_fills_a_fixed_buffer_to_the_last_byte)
{
    char mem[101];
    wk_buf o;
    wk_buf_init_fixed(&o, mem, sizeof mem);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v;
    CHECK_OK(wk_json_decode_value(SEED, 101, NULL, &a, &v, NULL, NULL));
    CHECK_OK(wk_json_encode_value(v, NULL, &o, NULL));
    CHECK_MEM(mem, o.len, SEED, 101);
    /* An escape and a two-byte character into exactly 7 bytes, then one byte short. */
    for (size_t cap = 7; cap >= 6; cap--) {
        char esc[7];
        wk_buf_init_fixed(&o, esc, cap);
        wk_json_writer w;
        wk_json_writer_init(&w, &o, NULL);
        wk_event e = ev_s("a\n\xc3\xa9", 4, WK_EV_STR);
        CHECK_STATUS(wk_json_writer_event(&w, &e), cap == 7 ? WK_OK : WK_ERR_LIMIT);
        if (cap == 7) {
            CHECK_MEM(esc, o.len, "\"a\\n\xc3\xa9\"", 7);
        }
    }
    wk_arena_free(&a);
}

WK_TEST(test_json_writer_fails_cleanly_on_a_full_fixed_buffer)
{
    uint8_t mem[50];
    for (size_t cap = 0; cap <= 50; cap += 7) {
        wk_buf o;
        wk_buf_init_fixed(&o, mem, cap);
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        wk_value *v;
        CHECK_OK(wk_json_decode_value(SEED, 101, NULL, &a, &v, NULL, NULL));
        wk_error e;
        CHECK_STATUS(wk_json_encode_value(v, NULL, &o, &e), WK_ERR_LIMIT);
        CHECK(o.len <= cap);
        wk_arena_free(&a);
    }
}

/* Tree walker and event writer give the same bytes, compact and pretty. */
static void check_tree_writer_matches(const char *json, size_t len)
{
    for (int pretty = 0; pretty < 2; pretty++) {
        wk_json_write_opts wo = {pretty ? WK_JSON_WRITE_PRETTY : 0, 0};
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        wk_value *v;
        CHECK_OK(wk_json_decode_value(json, len, NULL, &a, &v, NULL, NULL));
        wk_buf direct, events;
        wk_buf_init(&direct, NULL, 0);
        wk_buf_init(&events, NULL, 0);
        CHECK_OK(wk_json_encode_value(v, &wo, &direct, NULL));
        wk_json_writer w;
        wk_json_writer_init(&w, &events, &wo);
        wk_sink sink;
        wk_json_writer_sink(&w, &sink);
        CHECK_OK(wk_value_encode(v, NULL, &sink, NULL));
        CHECK_OK(wk_json_writer_finish(&w, NULL));
        CHECK_MEM(direct.data, direct.len, events.data, events.len);
        wk_buf_free(&direct);
        wk_buf_free(&events);
        wk_arena_free(&a);
    }
}

WK_TEST(test_json_tree_writer_matches_event_writer)
{
    static const char *docs[] = {
        SEED, "[]", "{}", "[[],{},[{}]]", "\"\\u0001\\\"x\"", "-1.5e-300",
        "{\"a\":{\"b\":{\"c\":[1,2,{\"d\":null}]}},\"e\":[true,false]}",
        /* the integer printer's word paths: each digit count, both sides of 10^8 and 10^16 */
        "[0,9,10,99,100,12345678,99999999,100000000,100000001,123456789,1000000000000000,"
        "9999999999999999,10000000000000000,12345678901234567,18446744073709551615,-1,-10,"
        "-99999999,-100000000,-9999999999999999,-10000000000000000,-9223372036854775808]",
        /* runs of doubles in arrays (the walker's run loop), broken by other children */
        "[[1.5,-0.25],[-65.613616999999977,44.5,1e300,\"x\",3.25,0.001],[0.1,7,0.2,[]],"
        "{\"a\":[1.5,2.5],\"b\":1.25},[5e-324,-0.0,100.0,123456789.5]]",
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        check_tree_writer_matches(docs[i], strlen(docs[i]));
        if (wk__test_failed()) {
            return;
        }
    }
    static const char *files[] = {"simdjson/jsonexamples/twitter.json",
                                  "simdjson/jsonexamples/citm_catalog.json",
                                  "simdjson/jsonexamples/canada.json"};
    for (int i = 0; i < 3; i++) {
        size_t n;
        uint8_t *data = wk_test_read_file(wk_test_node_module(files[i]), &n);
        CHECK(data != NULL);
        check_tree_writer_matches((const char *)data, n);
        free(data);
    }
}

WK_TEST(test_json_writer_typed_calls_write_what_events_write)
{
    for (int pretty = 0; pretty < 2; pretty++) {
        wk_json_write_opts wo = {pretty ? WK_JSON_WRITE_PRETTY : 0u, 0};
        wk_buf o;
        wk_buf_init(&o, NULL, 0);
        wk_json_writer w;
        wk_json_writer_init(&w, &o, &wo);
        CHECK_OK(wk_json_writer_begin_map(&w));
        CHECK_OK(wk_json_writer_key(&w, "username", 8));
        CHECK_OK(wk_json_writer_str(&w, "root", 4));
        CHECK_OK(wk_json_writer_key(&w, "password", 8));
        CHECK_OK(wk_json_writer_str(&w, "secret", 6));
        CHECK_OK(wk_json_writer_key(&w, "age", 3));
        CHECK_OK(wk_json_writer_int(&w, 20));
        CHECK_OK(wk_json_writer_key(&w, "enabled", 7));
        CHECK_OK(wk_json_writer_bool(&w, true));
        CHECK_OK(wk_json_writer_key(&w, "metadata", 8));
        CHECK_OK(wk_json_writer_begin_map(&w));
        CHECK_OK(wk_json_writer_key(&w, "hello", 5));
        CHECK_OK(wk_json_writer_str(&w, "world", 5));
        CHECK_OK(wk_json_writer_key(&w, "int", 3));
        CHECK_OK(wk_json_writer_uint(&w, 10));
        CHECK_OK(wk_json_writer_end(&w));
        CHECK_OK(wk_json_writer_end(&w));
        CHECK_OK(wk_json_writer_finish(&w, NULL));
        /* The same through events (decode then encode). */
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        wk_value *v;
        CHECK_OK(wk_json_decode_value(SEED, 101, NULL, &a, &v, NULL, NULL));
        wk_buf o2;
        wk_buf_init(&o2, NULL, 0);
        CHECK_OK(wk_json_encode_value(v, &wo, &o2, NULL));
        CHECK_MEM(o.data, o.len, o2.data, o2.len);
        if (!pretty) {
            CHECK_MEM(o.data, o.len, SEED, 101);
        }
        wk_buf_free(&o);
        wk_buf_free(&o2);
        wk_arena_free(&a);
    }
    wk_buf o;
    wk_buf_init(&o, NULL, 0);
    wk_json_writer w;
    wk_json_writer_init(&w, &o, NULL);
    CHECK_STATUS(wk_json_writer_key(&w, "k", 1), WK_ERR_STATE);
    CHECK_STATUS(wk_json_writer_nil(&w), WK_ERR_STATE); /* sticky */
    wk_json_writer_init(&w, &o, NULL);
    CHECK_OK(wk_json_writer_begin_array(&w));
    CHECK_OK(wk_json_writer_double(&w, 0.5));
    CHECK_OK(wk_json_writer_int(&w, -3));
    CHECK_OK(wk_json_writer_nil(&w));
    CHECK_STATUS(wk_json_writer_key(&w, "k", 1), WK_ERR_STATE);
    wk_buf_free(&o);
}

/* One value written at the top level, where the inline paths never run (the reference). */
static wk_status top_level_str(const char *s, size_t n, wk_buf *o)
{
    wk_json_writer w;
    wk_json_writer_init(&w, o, NULL);
    return wk_json_writer_str(&w, s, n);
}

/* Strings of every short length, with and without bytes that need a look, inside an array
 * and as keys (the inline paths) give the top-level (out-of-line) bytes and statuses. */
WK_TEST(test_json_writer_inline_strings_match_the_general_path)
{
    static const char pool[] = "abcdefghij\"klmnop\\qrst\x01uvw\xc3\xa9xyz0123456789\xff"
                               "ABCDEFGHIJKLMNOPQRSTUV";
    const size_t plen = sizeof pool - 1;
    size_t checked = 0;
    for (size_t n = 0; n <= 20; n++) {
        for (size_t off = 0; off + n <= plen; off++) {
            const char *s = pool + off;
            wk_buf ref, o, want;
            wk_buf_init(&ref, NULL, 0);
            wk_buf_init(&o, NULL, 0);
            wk_buf_init(&want, NULL, 0);
            wk_status rst = top_level_str(s, n, &ref);
            wk_json_writer w;
            wk_json_writer_init(&w, &o, NULL);
            CHECK_OK(wk_json_writer_begin_array(&w));
            CHECK_STATUS(wk_json_writer_str(&w, s, n), rst);
            if (rst == WK_OK) {
                CHECK_OK(wk_json_writer_str(&w, s, n));
                CHECK_OK(wk_json_writer_end(&w));
                CHECK_OK(wk_json_writer_finish(&w, NULL));
                CHECK_OK(wk_buf_append(&want, "[", 1));
                CHECK_OK(wk_buf_append(&want, ref.data, ref.len));
                CHECK_OK(wk_buf_append(&want, ",", 1));
                CHECK_OK(wk_buf_append(&want, ref.data, ref.len));
                CHECK_OK(wk_buf_append(&want, "]", 1));
                CHECK_MEM(o.data, o.len, want.data, want.len);
            } else {
                CHECK_STATUS(wk_json_writer_nil(&w), rst); /* latched */
            }
            /* As keys. */
            wk_buf_clear(&o);
            wk_json_writer_init(&w, &o, NULL);
            CHECK_OK(wk_json_writer_begin_map(&w));
            CHECK_STATUS(wk_json_writer_key(&w, s, n), rst);
            if (rst == WK_OK) {
                CHECK_OK(wk_json_writer_int(&w, -7));
                CHECK_OK(wk_json_writer_key(&w, s, n));
                CHECK_OK(wk_json_writer_nil(&w));
                CHECK_OK(wk_json_writer_end(&w));
                CHECK_OK(wk_json_writer_finish(&w, NULL));
                wk_buf_clear(&want);
                CHECK_OK(wk_buf_append(&want, "{", 1));
                CHECK_OK(wk_buf_append(&want, ref.data, ref.len));
                CHECK_OK(wk_buf_append(&want, ":-7,", 4));
                CHECK_OK(wk_buf_append(&want, ref.data, ref.len));
                CHECK_OK(wk_buf_append(&want, ":null}", 6));
                CHECK_MEM(o.data, o.len, want.data, want.len);
            }
            checked++;
            wk_buf_free(&ref);
            wk_buf_free(&o);
            wk_buf_free(&want);
        }
    }
    CHECK(checked > 1000);
}

/* Integers around the inline cut-offs (one digit, two, more, the extremes) match the
 * top-level (out-of-line) printing, as values and next to the other typed calls. */
WK_TEST(test_json_writer_inline_numbers_match_the_general_path)
{
    const int64_t ints[] = {0, 1, 9, 10, 11, 99, 100, 101, 12345, -1, -9, -10, -99, -100,
                            INT64_MAX, INT64_MIN};
    const uint64_t uints[] = {0, 9, 10, 99, 100, 1000000, UINT64_MAX};
    char t[64];
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
        wk_buf ref, o;
        wk_buf_init(&ref, NULL, 0);
        wk_buf_init(&o, NULL, 0);
        wk_json_writer w;
        wk_json_writer_init(&w, &ref, NULL);
        CHECK_OK(wk_json_writer_int(&w, ints[i]));
        wk_json_writer_init(&w, &o, NULL);
        CHECK_OK(wk_json_writer_begin_array(&w));
        CHECK_OK(wk_json_writer_int(&w, ints[i]));
        CHECK_OK(wk_json_writer_bool(&w, false));
        CHECK_OK(wk_json_writer_bool(&w, true));
        CHECK_OK(wk_json_writer_end(&w));
        int n = snprintf(t, sizeof t, "[%.*s,false,true]", (int)ref.len, (const char *)ref.data);
        CHECK_MEM(o.data, o.len, t, (size_t)n);
        n = snprintf(t, sizeof t, "%lld", (long long)ints[i]);
        CHECK_MEM(ref.data, ref.len, t, (size_t)n);
        wk_buf_free(&ref);
        wk_buf_free(&o);
    }
    for (size_t i = 0; i < sizeof uints / sizeof uints[0]; i++) {
        wk_buf o;
        wk_buf_init(&o, NULL, 0);
        wk_json_writer w;
        wk_json_writer_init(&w, &o, NULL);
        CHECK_OK(wk_json_writer_begin_map(&w));
        CHECK_OK(wk_json_writer_key(&w, "u", 1));
        CHECK_OK(wk_json_writer_uint(&w, uints[i]));
        CHECK_OK(wk_json_writer_end(&w));
        int n = snprintf(t, sizeof t, "{\"u\":%llu}", (unsigned long long)uints[i]);
        CHECK_MEM(o.data, o.len, t, (size_t)n);
        wk_buf_free(&o);
    }
}

/* The typed calls into every fixed buffer size: a prefix of the record and WK_ERR_LIMIT,
 * latched (every later call and finish report it), or the whole record when it fits. */
WK_TEST(test_json_writer_typed_calls_fail_cleanly_in_every_buffer_size)
{
    char mem[128];
    for (size_t cap = 0; cap <= sizeof mem; cap++) {
        wk_buf o;
        wk_buf_init_fixed(&o, mem, cap);
        wk_json_writer w;
        wk_json_writer_init(&w, &o, NULL);
        wk_status st[18];
        size_t k = 0;
        st[k++] = wk_json_writer_begin_map(&w);
        st[k++] = wk_json_writer_key(&w, "username", 8);
        st[k++] = wk_json_writer_str(&w, "root", 4);
        st[k++] = wk_json_writer_key(&w, "password", 8);
        st[k++] = wk_json_writer_str(&w, "secret", 6);
        st[k++] = wk_json_writer_key(&w, "age", 3);
        st[k++] = wk_json_writer_int(&w, 20);
        st[k++] = wk_json_writer_key(&w, "enabled", 7);
        st[k++] = wk_json_writer_bool(&w, true);
        st[k++] = wk_json_writer_key(&w, "metadata", 8);
        st[k++] = wk_json_writer_begin_map(&w);
        st[k++] = wk_json_writer_key(&w, "hello", 5);
        st[k++] = wk_json_writer_str(&w, "world", 5);
        st[k++] = wk_json_writer_key(&w, "int", 3);
        st[k++] = wk_json_writer_uint(&w, 10);
        st[k++] = wk_json_writer_end(&w);
        st[k++] = wk_json_writer_end(&w);
        wk_error e;
        st[k++] = wk_json_writer_finish(&w, &e);
        CHECK(o.len <= cap);
        CHECK_MEM(mem, o.len, SEED, o.len);
        if (cap >= 101) {
            for (size_t i = 0; i < k; i++) {
                CHECK_OK(st[i]);
            }
            CHECK_MEM(mem, o.len, SEED, 101);
        } else {
            size_t first = 0;
            while (first < k && st[first] == WK_OK) {
                first++;
            }
            CHECK(first < k);
            for (size_t i = first; i < k; i++) {
                CHECK_STATUS(st[i], WK_ERR_LIMIT);
            }
            CHECK_EQ(e.offset, o.len);
        }
    }
}

/* The compact tree walker writes through a raw cursor while the buffer has room and through
 * the checked helpers when it has not: into a fixed buffer of every size, the output is a
 * prefix of the full text and fails with WK_ERR_LIMIT exactly while the buffer is too short. */
WK_TEST(test_json_tree_writer_fast_and_slow_paths_agree_on_every_truncation)
{
    static const char doc[] =
        "{\"plain\":\"a string long enough for two sixteen-byte moves\",\"k\\\"ey\":[1,-2,"
        "18446744073709551615,-9223372036854775808,0,true,false,null,1.5,\"\",\"x\","
        "\"caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac\",\"tab\\tquote\\\"\",[],{},[[{\"a\":[]}]]],"
        "\"n\":{\"1234567\":\"12345678\",\"x\":\"123456789012345\"},"
        "\"d\":[-65.613616999999977,44.5,0.001,[2.5,-3.75],1e-7,1.5,\"s\"]}";
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v;
    CHECK_OK(wk_json_decode_value(doc, strlen(doc), NULL, &a, &v, NULL, NULL));
    wk_buf full;
    wk_buf_init(&full, NULL, 0);
    CHECK_OK(wk_json_encode_value(v, NULL, &full, NULL));
    check_tree_writer_matches(doc, strlen(doc));
    uint8_t mem[512];
    CHECK(full.len < sizeof mem);
    for (size_t cap = 0; cap <= full.len && !wk__test_failed(); cap++) {
        wk_buf o;
        wk_buf_init_fixed(&o, mem, cap);
        wk_status st = wk_json_encode_value(v, NULL, &o, NULL);
        CHECK_MSG(st == (cap < full.len ? WK_ERR_LIMIT : WK_OK), "cap %zu: %s", cap,
                  wk_status_str(st));
        CHECK(o.len <= cap);
        CHECK(memcmp(o.data != NULL ? o.data : mem, full.data, o.len) == 0);
        if (cap == full.len) {
            CHECK_MEM(o.data, o.len, full.data, full.len);
        }
    }
    wk_buf_free(&full);
    wk_arena_free(&a);
}

/* The parser marks strings it took without escapes as plain (the writer's bulk copy) and no
 * other: not an unescaped one, not a raw number. */
WK_TEST(test_json_parser_marks_plain_strings)
{
    static const char doc[] = "[\"abc\",\"a\\nb\",\"\xc3\xa9\",12345678901234567890123]";
    for (int copy = 0; copy < 2; copy++) {
        wk_read_opts ro = {.flags = WK_JSON_READ_RAW_NUMBERS | (copy ? WK_READ_COPY_STRINGS : 0u),
                           .max_depth = 0};
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        wk_value *v;
        CHECK_OK(wk_json_decode_value(doc, strlen(doc), &ro, &a, &v, NULL, NULL));
        CHECK(v->type == WK_VAL_ARRAY && v->len == 4);
        CHECK((v->u.items[0].flags & WK_VALF_PLAIN) != 0);
        CHECK((v->u.items[1].flags & WK_VALF_PLAIN) == 0);
        CHECK((v->u.items[2].flags & WK_VALF_PLAIN) != 0);
        CHECK(v->u.items[3].type == WK_VAL_RAWNUM);
        CHECK((v->u.items[3].flags & WK_VALF_PLAIN) == 0);
        wk_arena_free(&a);
    }
}
