/*
 * The JSON event reader and the fused tree parser on their own: events and their order,
 * strings (escapes, surrogates, UTF-8, zero-copy views), numbers through the reader, limits,
 * truncation, trailing content, byte order marks, error offsets. Every rejection is checked
 * on both parsers, which must agree.
 */
#include "json_test_util.h"

static wk_status both(const char *json, size_t len, unsigned flags, wk_error *err)
{
    wk_error e2;
    wk_status a = json_read_all(json, len, flags, 0, err);
    wk_status b = json_decode_status(json, len, flags, 0, &e2);
    if (a != b) {
        fprintf(stderr, "    reader says %s, decoder says %s on '%.*s'\n", wk_status_str(a),
                wk_status_str(b), (int)(len > 60 ? 60 : len), json);
        return (wk_status)-1;
    }
    return a;
}

#define CHECK_REJECTS(json, want)                                                         \
    do {                                                                                  \
        wk_error e;                                                                       \
        CHECK_STATUS(both((json), sizeof(json) - 1, 0, &e), (want));                      \
    } while (0)

#define CHECK_REENCODES(json, want)                                                       \
    do {                                                                                  \
        wk_buf o;                                                                         \
        wk_error e;                                                                       \
        wk_status s = json_reencode((json), sizeof(json) - 1, 0, &o, &e);                 \
        CHECK_MSG(s == WK_OK, "'%s': %s at %zu", (json), e.msg, e.offset);                \
        CHECK_MEM(o.data, o.len, (want), strlen(want));                                   \
        wk_buf_free(&o);                                                                  \
    } while (0)

WK_TEST(test_json_reader_emits_events_in_document_order)
{
    const char *doc = " {\"a\" : [1, -2, 3.5, true, false, null, \"x\"], \"b\": {}} ";
    wk_json_reader r;
    wk_json_reader_init(&r, doc, strlen(doc), NULL, NULL);
    static const wk_event_type want[] = {
        WK_EV_MAP,  WK_EV_STR,  WK_EV_ARRAY, WK_EV_UINT, WK_EV_INT, WK_EV_FLOAT, WK_EV_BOOL,
        WK_EV_BOOL, WK_EV_NIL,  WK_EV_STR,   WK_EV_END,  WK_EV_STR, WK_EV_MAP,   WK_EV_END,
        WK_EV_END};
    wk_event ev;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        CHECK_OK(wk_json_reader_next(&r, &ev));
        CHECK_MSG(ev.type == want[i], "event %zu: type %d, want %d", i, ev.type, want[i]);
        if (ev.type == WK_EV_MAP || ev.type == WK_EV_ARRAY) {
            CHECK(ev.v.count == WK_COUNT_UNKNOWN);
        }
        if (i == 4) {
            CHECK_EQ(ev.v.i, -2);
        }
        if (i == 5) {
            CHECK(ev.v.f == 3.5);
        }
    }
    CHECK_STATUS(wk_json_reader_next(&r, &ev), WK_ERR_EOF);
    CHECK_STATUS(wk_json_reader_next(&r, &ev), WK_ERR_EOF);
    wk_json_reader_free(&r);
}

WK_TEST(test_json_reader_returns_unescaped_strings_as_views_into_the_input)
{
    const char *doc = "[\"plain\", \"esc\\n\"]";
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_json_reader r;
    wk_json_reader_init(&r, doc, strlen(doc), NULL, &arena);
    wk_event ev;
    CHECK_OK(wk_json_reader_next(&r, &ev));
    CHECK_OK(wk_json_reader_next(&r, &ev));
    CHECK(ev.v.str.ptr == doc + 2);
    CHECK_EQ(ev.v.str.len, 5);
    CHECK_OK(wk_json_reader_next(&r, &ev));
    CHECK(ev.v.str.ptr < doc || ev.v.str.ptr >= doc + strlen(doc));
    CHECK_MEM(ev.v.str.ptr, ev.v.str.len, "esc\n", 4);
    wk_json_reader_free(&r);
    wk_arena_free(&arena);
}

WK_TEST(test_json_reader_decodes_every_escape)
{
    CHECK_REENCODES("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\u00e9\\u20ac\"",
                    "\"\\\"\\\\/\\b\\f\\n\\r\\tA\xc3\xa9\xe2\x82\xac\"");
    CHECK_REENCODES("\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"");
    CHECK_REENCODES("\"\\uD834\\uDD1E\"", "\"\xf0\x9d\x84\x9e\"");
    CHECK_REENCODES("\"\\u0000\"", "\"\\u0000\"");
    CHECK_REENCODES("\"\\u001F\"", "\"\\u001f\"");
}

WK_TEST(test_json_reader_rejects_lone_surrogates)
{
    CHECK_REJECTS("\"\\ud800\"", WK_ERR_UTF8);
    CHECK_REJECTS("\"\\udc00\"", WK_ERR_UTF8);
    CHECK_REJECTS("\"\\ud800\\u0041\"", WK_ERR_UTF8);
    CHECK_REJECTS("\"\\ud800\\ud800\"", WK_ERR_UTF8);
    CHECK_REJECTS("\"\\ud800x\"", WK_ERR_UTF8);
    CHECK_REJECTS("[\"\\uDFAA\"]", WK_ERR_UTF8);
}

WK_TEST(test_json_reader_rejects_invalid_escapes)
{
    CHECK_REJECTS("\"\\x41\"", WK_ERR_SYNTAX);
    CHECK_REJECTS("\"\\u12\"", WK_ERR_SYNTAX);
    CHECK_REJECTS("\"\\u12G4\"", WK_ERR_SYNTAX);
    CHECK_REJECTS("\"\\U0041\"", WK_ERR_SYNTAX);
    CHECK_REJECTS("\"\\'\"", WK_ERR_SYNTAX);
    CHECK_REJECTS("\"\\\"", WK_ERR_TRUNCATED);
    CHECK_REJECTS("\"\\", WK_ERR_TRUNCATED);
    CHECK_REJECTS("\"a\tb\"", WK_ERR_SYNTAX);
    CHECK_REJECTS("\"a\nb\"", WK_ERR_SYNTAX);
}

WK_TEST(test_json_reader_rejects_invalid_utf8_byte_exact)
{
    /* The inputs the npm copy of JSONTestSuite replaced with U+FFFD, byte for byte. */
    static const struct {
        const char *name;
        const char *bytes;
        wk_status want;
    } cases[] = {
        {"n_array_a_invalid_utf8", "[a\xe5]", WK_ERR_SYNTAX},
        {"n_array_invalid_utf8", "[\xff]", WK_ERR_SYNTAX},
        {"n_number_invalid-utf-8-in-bigger-int", "[123\xe5]", WK_ERR_SYNTAX},
        {"n_number_invalid-utf-8-in-exponent", "[1e1\xe5]", WK_ERR_SYNTAX},
        {"n_number_invalid-utf-8-in-int", "[0\xe5]\n", WK_ERR_SYNTAX},
        {"n_number_real_with_invalid_utf8_after_e", "[1e\xe5]", WK_ERR_SYNTAX},
        {"n_object_lone_continuation_byte_in_key_and_trailing_comma", "{\"\xb9\":\"0\",}",
         WK_ERR_UTF8},
        {"n_string_invalid-utf-8-in-escape", "[\"\\u\xe5\"]", WK_ERR_UTF8},
        {"n_string_invalid_utf8_after_escape", "[\"\\\xe5\"]", WK_ERR_SYNTAX},
        {"n_structure_incomplete_UTF8_BOM", "\xef\xbb{}", WK_ERR_SYNTAX},
        {"n_structure_lone-invalid-utf-8", "\xe5", WK_ERR_SYNTAX},
        {"n_structure_single_eacute", "\xe9", WK_ERR_SYNTAX},
        {"n_structure_UTF8_BOM_no_data", "\xef\xbb\xbf", WK_ERR_SYNTAX},
        {"i_string_invalid_utf-8", "[\"\xff\"]", WK_ERR_UTF8},
        {"i_string_iso_latin_1", "[\"\xe9\"]", WK_ERR_UTF8},
        {"i_string_lone_utf8_continuation_byte", "[\"\x81\"]", WK_ERR_UTF8},
        {"i_string_not_in_unicode_range", "[\"\xf4\xbf\xbf\xbf\"]", WK_ERR_UTF8},
        {"i_string_overlong_sequence_2_bytes", "[\"\xc0\xaf\"]", WK_ERR_UTF8},
        {"i_string_overlong_sequence_6_bytes", "[\"\xfc\x83\xbf\xbf\xbf\xbf\"]", WK_ERR_UTF8},
        {"i_string_overlong_sequence_6_bytes_null", "[\"\xfc\x80\x80\x80\x80\x80\"]",
         WK_ERR_UTF8},
        {"i_string_truncated-utf-8", "[\"\xe0\xff\"]", WK_ERR_UTF8},
        {"i_string_UTF-8_invalid_sequence", "[\"\xe6\x97\xa5\xd1\x88\xfa\"]", WK_ERR_UTF8},
        {"i_string_UTF8_surrogate_U+D800", "[\"\xed\xa0\x80\"]", WK_ERR_UTF8},
        {"i_string_utf16BE_no_BOM", "\x00[\x00\"\x00\xe9\x00\"\x00]", WK_ERR_SYNTAX},
        {"i_string_utf16LE_no_BOM", "[\x00\"\x00\xe9\x00\"\x00]\x00", WK_ERR_SYNTAX},
        {"i_string_UTF-16LE_with_BOM", "\xff\xfe[\x00\"\x00\xe9\x00\"\x00]\x00", WK_ERR_SYNTAX},
        {"i_structure_UTF-8_BOM_empty_object", "\xef\xbb\xbf{}", WK_ERR_SYNTAX},
    };
    static const size_t lens[] = {4, 3, 6, 6, 5, 5, 12, 7, 6, 4, 1, 1, 3, 5, 5, 5, 8, 6, 10, 10,
                                  6, 10, 7, 10, 10, 12, 5};
    CHECK_EQ(sizeof lens / sizeof lens[0], sizeof cases / sizeof cases[0]);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wk_error e;
        wk_status st = both(cases[i].bytes, lens[i], 0, &e);
        CHECK_MSG(st == cases[i].want, "%s: got %s, want %s", cases[i].name, wk_status_str(st),
                  wk_status_str(cases[i].want));
    }
    /* The BOM is accepted when asked for. */
    wk_error e;
    CHECK_OK(both("\xef\xbb\xbf{}", 5, WK_JSON_READ_ALLOW_BOM, &e));
    /* Valid multi-byte UTF-8 of every length passes. */
    CHECK_OK(both("[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xf4\x8f\xbf\xbf\"]", 17, 0, &e));
}

WK_TEST(test_json_reader_rejects_structural_errors_at_the_right_offset)
{
    static const struct {
        const char *json;
        wk_status want;
        size_t offset;
    } cases[] = {
        {"[1,]", WK_ERR_SYNTAX, 3},     {"{\"a\":1,}", WK_ERR_SYNTAX, 7},
        {"[1 2]", WK_ERR_SYNTAX, 3},    {"{\"a\" 1}", WK_ERR_SYNTAX, 5},
        {"{1:2}", WK_ERR_SYNTAX, 1},    {"[}", WK_ERR_SYNTAX, 1},
        {"{]", WK_ERR_SYNTAX, 1},       {"[01]", WK_ERR_SYNTAX, 1},
        {"[1.]", WK_ERR_SYNTAX, 3},     {"[.5]", WK_ERR_SYNTAX, 1},
        {"[1e]", WK_ERR_SYNTAX, 3},     {"[+1]", WK_ERR_SYNTAX, 1},
        {"[-]", WK_ERR_SYNTAX, 1},      {"[tru]", WK_ERR_SYNTAX, 1},
        {"[NaN]", WK_ERR_SYNTAX, 1},    {"[Infinity]", WK_ERR_SYNTAX, 1},
        {"1 2", WK_ERR_TRAILING, 2},    {"{} x", WK_ERR_TRAILING, 3},
        {"", WK_ERR_TRUNCATED, 0},      {"  ", WK_ERR_TRUNCATED, 2},
        {"[", WK_ERR_TRUNCATED, 1},     {"{\"a\":", WK_ERR_TRUNCATED, 5},
        {"[\"abc", WK_ERR_TRUNCATED, 5}, {"-", WK_ERR_TRUNCATED, 1},
        {"[0x10]", WK_ERR_SYNTAX, 2},   {"['a']", WK_ERR_SYNTAX, 1},
        {"[1,,2]", WK_ERR_SYNTAX, 3},   {"\x7f", WK_ERR_SYNTAX, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wk_error e;
        wk_status st = both(cases[i].json, strlen(cases[i].json), 0, &e);
        CHECK_MSG(st == cases[i].want && e.offset == cases[i].offset,
                  "'%s': got %s at %zu, want %s at %zu", cases[i].json, wk_status_str(st),
                  e.offset, wk_status_str(cases[i].want), cases[i].offset);
        CHECK(e.msg != NULL);
    }
}

WK_TEST(test_json_reader_rejects_every_truncation_of_a_document)
{
    const char *doc = "{\"a\":[1,2.5e3,-7,\"x\\n\\u00e9\",true,false,null,{\"b\":[]}],\"c\":\"d\"}";
    size_t n = strlen(doc);
    wk_error e;
    CHECK_OK(both(doc, n, 0, &e));
    for (size_t i = 0; i < n; i++) {
        wk_status st = both(doc, i, 0, &e);
        CHECK_MSG(st == WK_ERR_TRUNCATED, "prefix of %zu bytes: %s", i, wk_status_str(st));
    }
}

WK_TEST(test_json_reader_limits_depth_without_recursion)
{
    size_t n = 1000000;
    char *bomb = malloc(n);
    CHECK(bomb != NULL);
    memset(bomb, '[', n);
    wk_error e;
    wk_status st = both(bomb, n, 0, &e);
    CHECK_STATUS(st, WK_ERR_DEPTH);
    CHECK_EQ(e.offset, 512);
    memset(bomb, '{', 1);
    free(bomb);

    /* Exactly the limit passes, one more fails; a raised limit works beyond 512. */
    char doc[2 * 3000];
    for (size_t d = 511; d <= 2001; d += 1490) {
        for (size_t i = 0; i < d; i++) {
            doc[i] = '[';
            doc[2 * d - 1 - i] = ']';
        }
        CHECK_OK(json_read_all(doc, 2 * d, 0, (uint32_t)d, &e));
        CHECK_OK(json_decode_status(doc, 2 * d, 0, (uint32_t)d, &e));
        CHECK_STATUS(json_read_all(doc, 2 * d, 0, (uint32_t)d - 1, &e), WK_ERR_DEPTH);
        CHECK_STATUS(json_decode_status(doc, 2 * d, 0, (uint32_t)d - 1, &e), WK_ERR_DEPTH);
    }
    CHECK_STATUS(json_read_all(doc, 2 * 2001, 0, 0, &e), WK_ERR_DEPTH);
}

WK_TEST(test_json_reader_reads_several_values_when_asked)
{
    const char *doc = "1 {\"a\":2}\n[3]\r\n\"x\" ";
    wk_buf o;
    wk_error e;
    CHECK_OK(json_reencode(doc, strlen(doc), WK_JSON_READ_MULTI, &o, &e));
    CHECK_MEM(o.data, o.len, "1\n{\"a\":2}\n[3]\n\"x\"", 17);
    wk_buf_free(&o);
    CHECK_OK(json_read_all("", 0, WK_JSON_READ_MULTI, 0, &e));
    CHECK_STATUS(json_read_all("[1][2]", 6, WK_JSON_READ_MULTI, 0, &e), WK_ERR_SYNTAX);
    CHECK_STATUS(json_read_all("1 2", 3, 0, 0, &e), WK_ERR_TRAILING);
    CHECK_OK(json_read_all("1 2", 3, WK_JSON_READ_ALLOW_TRAILING, 0, &e));
    CHECK_OK(json_read_all("[1] x", 5, WK_JSON_READ_ALLOW_TRAILING, 0, &e));
}

WK_TEST(test_json_decode_reports_consumed_bytes_with_trailing_allowed)
{
    wk_read_opts ro = {.flags = WK_JSON_READ_ALLOW_TRAILING, .max_depth = 0};
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v;
    size_t used = 0;
    CHECK_OK(wk_json_decode_value("[1, 2]  {}", 10, &ro, &a, &v, &used, NULL));
    CHECK_EQ(used, 8);
    CHECK_EQ(v->type, WK_VAL_ARRAY);
    CHECK_EQ(v->len, 2);
    CHECK_EQ(v->u.items[1].u.u, 2);
    wk_arena_free(&a);
}

WK_TEST(test_json_reader_keeps_duplicate_keys_in_order)
{
    CHECK_REENCODES("{\"a\":1,\"a\":2,\"b\":3,\"a\":4}", "{\"a\":1,\"a\":2,\"b\":3,\"a\":4}");
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v;
    CHECK_OK(wk_json_decode_value("{\"a\":1,\"a\":2}", 13, NULL, &a, &v, NULL, NULL));
    CHECK_EQ(v->type, WK_VAL_MAP);
    CHECK_EQ(v->len, 2);
    CHECK_EQ(v->u.pairs[0].val.u.u, 1);
    CHECK_EQ(v->u.pairs[1].val.u.u, 2);
    wk_arena_free(&a);
}

WK_TEST(test_json_reader_keeps_raw_number_text_when_asked)
{
    const char *doc = "[1.50, -0, 123456789012345678901234567890, 1e400]";
    wk_read_opts ro = {.flags = WK_JSON_READ_RAW_NUMBERS, .max_depth = 0};
    wk_json_reader r;
    wk_json_reader_init(&r, doc, strlen(doc), &ro, NULL);
    wk_event ev;
    static const char *want[] = {"1.50", "-0", "123456789012345678901234567890", "1e400"};
    CHECK_OK(wk_json_reader_next(&r, &ev));
    for (int i = 0; i < 4; i++) {
        CHECK_OK(wk_json_reader_next(&r, &ev));
        CHECK_EQ(ev.type, WK_EV_RAWNUM);
        CHECK_MEM(ev.v.str.ptr, ev.v.str.len, want[i], strlen(want[i]));
    }
    wk_json_reader_free(&r);
    wk_buf o;
    wk_error e;
    CHECK_OK(json_reencode(doc, strlen(doc), WK_JSON_READ_RAW_NUMBERS, &o, &e));
    CHECK_MEM(o.data, o.len, "[1.50,-0,123456789012345678901234567890,1e400]", 46);
    wk_buf_free(&o);
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v;
    CHECK_OK(wk_json_decode_value(doc, strlen(doc), &ro, &a, &v, NULL, NULL));
    CHECK_EQ(v->u.items[2].type, WK_VAL_RAWNUM);
    CHECK_MEM(v->u.items[2].u.str, v->u.items[2].len, want[2], strlen(want[2]));
    wk_arena_free(&a);
}

WK_TEST(test_json_reader_maps_integers_and_floats)
{
    static const struct {
        const char *json;
        wk_event_type type;
        uint64_t bits; /* u, i as bits, or double bits */
    } cases[] = {
        {"0", WK_EV_UINT, 0},
        {"9223372036854775807", WK_EV_UINT, 9223372036854775807ull},
        {"18446744073709551615", WK_EV_UINT, 18446744073709551615ull},
        {"-1", WK_EV_INT, (uint64_t)-1},
        {"-9223372036854775808", WK_EV_INT, 0x8000000000000000ull},
        {"-9223372036854775809", WK_EV_FLOAT, 0xc3e0000000000000ull},
        {"18446744073709551616", WK_EV_FLOAT, 0x43f0000000000000ull},
        {"-0", WK_EV_FLOAT, 0x8000000000000000ull},
        {"-0.0", WK_EV_FLOAT, 0x8000000000000000ull},
        {"1.0", WK_EV_FLOAT, 0x3ff0000000000000ull},
        {"1e2", WK_EV_FLOAT, 0x4059000000000000ull},
        {"1e400", WK_EV_FLOAT, 0x7ff0000000000000ull},
        {"-1e400", WK_EV_FLOAT, 0xfff0000000000000ull},
        {"1e-400", WK_EV_FLOAT, 0},
        {"4.9406564584124654e-324", WK_EV_FLOAT, 1},
        {"2.4703282292062328e-324", WK_EV_FLOAT, 1},
        {"2.4703282292062327e-324", WK_EV_FLOAT, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wk_json_reader r;
        wk_json_reader_init(&r, cases[i].json, strlen(cases[i].json), NULL, NULL);
        wk_event ev;
        CHECK_OK(wk_json_reader_next(&r, &ev));
        uint64_t bits = ev.v.u;
        CHECK_MSG(ev.type == cases[i].type && bits == cases[i].bits,
                  "%s: type %d bits %016llx", cases[i].json, ev.type, (unsigned long long)bits);
        wk_json_reader_free(&r);
    }
}

WK_TEST(test_json_reader_accepts_nan_and_infinity_only_when_asked)
{
    const char *doc = "[NaN, Infinity, -Infinity]";
    wk_error e;
    CHECK_STATUS(both(doc, strlen(doc), 0, &e), WK_ERR_SYNTAX);
    CHECK_OK(both(doc, strlen(doc), WK_JSON_READ_NAN_INF, &e));
    CHECK_STATUS(both("[-Inf]", 6, WK_JSON_READ_NAN_INF, &e), WK_ERR_SYNTAX);
    CHECK_STATUS(both("[-Inf", 5, WK_JSON_READ_NAN_INF, &e), WK_ERR_TRUNCATED);
    CHECK_STATUS(both("[Na", 3, WK_JSON_READ_NAN_INF, &e), WK_ERR_TRUNCATED);
    CHECK_STATUS(both("[Infinitx]", 10, WK_JSON_READ_NAN_INF, &e), WK_ERR_SYNTAX);
}

WK_TEST(test_json_reader_handles_huge_strings)
{
    size_t n = 16u << 20;
    char *doc = malloc(n + 2);
    CHECK(doc != NULL);
    doc[0] = '"';
    for (size_t i = 1; i <= n; i++) {
        doc[i] = (char)('a' + i % 26);
    }
    doc[n + 1] = '"';
    wk_error e;
    CHECK_OK(both(doc, n + 2, 0, &e));
    doc[n / 2] = '\\';
    doc[n / 2 + 1] = 'n';
    CHECK_OK(both(doc, n + 2, 0, &e));
    CHECK_STATUS(both(doc, n + 1, 0, &e), WK_ERR_TRUNCATED);
    free(doc);
}

WK_TEST(test_json_line_col_counts_lines_and_bytes)
{
    const char *doc = "{\n  \"a\": x\n}";
    wk_error e;
    CHECK_STATUS(json_read_all(doc, strlen(doc), 0, 0, &e), WK_ERR_SYNTAX);
    size_t line, col;
    wk_json_line_col(doc, strlen(doc), e.offset, &line, &col);
    CHECK_EQ(line, 2);
    CHECK_EQ(col, 8);
    wk_json_line_col(doc, strlen(doc), 0, &line, &col);
    CHECK_EQ(line, 1);
    CHECK_EQ(col, 1);
}

WK_TEST(test_json_reader_uses_scratch_without_arena_and_frees_it)
{
    wk_test_alloc ta;
    wk_test_alloc_init(&ta);
    const char *doc = "[\"a\\nb\", \"c\\td\"]";
    wk_json_reader r;
    wk_read_opts ro = {.alloc = &ta.a};
    wk_json_reader_init(&r, doc, strlen(doc), &ro, NULL);
    wk_event ev;
    CHECK_OK(wk_json_reader_next(&r, &ev));
    CHECK_OK(wk_json_reader_next(&r, &ev));
    CHECK_MEM(ev.v.str.ptr, ev.v.str.len, "a\nb", 3);
    CHECK_OK(wk_json_reader_next(&r, &ev));
    CHECK_MEM(ev.v.str.ptr, ev.v.str.len, "c\td", 3);
    wk_json_reader_free(&r);
    CHECK(ta.allocs > 0);
    CHECK_EQ(ta.live_bytes, 0);
}

WK_TEST(test_json_decode_frees_scratch_and_fails_cleanly_without_memory)
{
    /* A wide document needs the heap stack; every allocation failure is reported. */
    wk_buf doc;
    wk_buf_init(&doc, NULL, 0);
    CHECK_OK(wk_buf_push(&doc, '['));
    for (int i = 0; i < 2000; i++) {
        CHECK_OK(wk_buf_append(&doc, i ? ",[1,\"x\"]" : "[1,\"x\"]", i ? 8 : 7));
    }
    CHECK_OK(wk_buf_push(&doc, ']'));
    for (size_t fail_at = 1; fail_at < 6; fail_at++) {
        wk_test_alloc ta;
        wk_test_alloc_init(&ta);
        ta.fail_at = fail_at;
        wk_arena a;
        wk_arena_init(&a, &ta.a, 0);
        wk_value *v;
        wk_read_opts ro = {.alloc = &ta.a};
        wk_status st = wk_json_decode_value(doc.data, doc.len, &ro, &a, &v, NULL, NULL);
        CHECK(st == WK_OK || st == WK_ERR_NOMEM);
        wk_arena_free(&a);
        CHECK_EQ(ta.live_bytes, 0);
    }
    wk_buf_free(&doc);
}
