/*
 * JSON <-> MessagePack transcoding without a tree: integer and float mapping, JSON Lines
 * (several values each way), the non-JSON MessagePack values, errors from either side, and
 * the corpus round trip JSON -> MessagePack -> JSON, byte-identical to the compact form of
 * the input (which, for the two corpus files, is the input minus insignificant whitespace).
 */
#include <stdlib.h>

#include "json_test_util.h"
#include "wirekit/msgpack.h"

static size_t hex(const char *h, uint8_t *out)
{
    return wk_test_hex(h, out, 256);
}

#define CHECK_TO_MP(json, want_hex)                                                       \
    do {                                                                                  \
        wk_read_opts ro = {.flags = WK_JSON_READ_MULTI, .max_depth = 0};                                   \
        wk_buf o;                                                                         \
        wk_buf_init(&o, NULL, 0);                                                         \
        CHECK_OK(wk_json_to_msgpack((json), strlen(json), &ro, &o, NULL));                \
        uint8_t want[256];                                                                \
        size_t wn = hex((want_hex), want);                                                \
        CHECK_MEM(o.data, o.len, want, wn);                                               \
        wk_buf_free(&o);                                                                  \
    } while (0)

WK_TEST(test_json_to_msgpack_uses_shortest_integers_and_float64)
{
    CHECK_TO_MP("[0, 127, 128, -1, -33, 65536, 18446744073709551615, -9223372036854775808]",
                "98 00 7f cc80 ff d0df ce00010000 cfffffffffffffffff d38000000000000000");
    CHECK_TO_MP("[1.0, 1e2, -0, 0.5]",
                "94 cb3ff0000000000000 cb4059000000000000 cb8000000000000000 cb3fe0000000000000");
    CHECK_TO_MP("{\"a\":true,\"b\":[null,\"x\"]}", "82 a161 c3 a162 92 c0 a178");
}

WK_TEST(test_json_to_msgpack_writes_one_value_per_json_line)
{
    CHECK_TO_MP("1\n\"a\"\n{}\n[]\n", "01 a161 80 90");
    CHECK_TO_MP("", "");
}

WK_TEST(test_json_seed_record_transcodes_to_72_bytes)
{
    const char seed[] = "{\"username\":\"root\",\"password\":\"secret\",\"age\":20,"
                        "\"enabled\":true,\"metadata\":{\"hello\":\"world\",\"int\":10}}";
    wk_buf mp, back;
    wk_buf_init(&mp, NULL, 0);
    wk_buf_init(&back, NULL, 0);
    CHECK_OK(wk_json_to_msgpack(seed, sizeof seed - 1, NULL, &mp, NULL));
    CHECK_EQ(mp.len, 72);
    CHECK_OK(wk_json_from_msgpack(mp.data, mp.len, NULL, 0, &back, NULL));
    CHECK_MEM(back.data, back.len, seed, sizeof seed - 1);
    wk_buf_free(&mp);
    wk_buf_free(&back);
}

WK_TEST(test_msgpack_to_json_maps_values_json_lacks)
{
    uint8_t mp[256];
    /* [bin "ab", ext 5 "xy", timestamp32 0, float32 0.1, {1: 2}], then a second value 7 */
    size_t n = hex("95 c4026162 d5057879 d6ff00000000 ca3dcccccd 810102 07", mp);
    wk_buf o;
    wk_buf_init(&o, NULL, 0);
    wk_json_write_opts wo = {WK_JSON_WRITE_NEWLINE, 0};
    CHECK_OK(wk_json_from_msgpack(mp, n, &wo, 0, &o, NULL));
    const char *want = "[\"YWI=\",{\"ext\":5,\"data\":\"eHk=\"},\"1970-01-01T00:00:00Z\",0.1,"
                       "{\"1\":2}]\n7\n";
    CHECK_MEM(o.data, o.len, want, strlen(want));
    wk_buf_free(&o);
}

WK_TEST(test_json_transcoding_reports_errors_from_either_side)
{
    wk_buf o;
    wk_buf_init(&o, NULL, 0);
    wk_error e;
    CHECK_STATUS(wk_json_to_msgpack("[1, 2", 5, NULL, &o, &e), WK_ERR_TRUNCATED);
    CHECK_EQ(e.offset, 5);
    wk_buf_clear(&o);
    uint8_t mp[16];
    size_t n = hex("92 01", mp); /* truncated array */
    CHECK_STATUS(wk_json_from_msgpack(mp, n, NULL, 0, &o, &e), WK_ERR_TRUNCATED);
    wk_buf_clear(&o);
    n = hex("81 9101 02", mp); /* array as a map key */
    CHECK_STATUS(wk_json_from_msgpack(mp, n, NULL, 0, &o, &e), WK_ERR_TYPE);
    wk_buf_clear(&o);
    n = hex("cb7ff8000000000000", mp); /* NaN */
    CHECK_STATUS(wk_json_from_msgpack(mp, n, NULL, 0, &o, &e), WK_ERR_RANGE);
    wk_buf_clear(&o);
    n = hex("a2c3a9 a2ff00", mp); /* valid then invalid UTF-8 str */
    CHECK_STATUS(wk_json_from_msgpack(mp, n, NULL, 0, &o, &e), WK_ERR_UTF8);
    /* the input offset of the bad byte; the value before it whole, nothing of the bad one */
    CHECK_EQ(e.offset, 4);
    CHECK_MEM(o.data, o.len, "\"\xc3\xa9\"", 4);
    wk_buf_clear(&o);
    n = hex("01 81a161 819101 02", mp); /* {"a": {[1]: 2}}: an array as a map key */
    CHECK_STATUS(wk_json_from_msgpack(mp, n, NULL, 0, &o, &e), WK_ERR_TYPE);
    CHECK_EQ(e.offset, 5);
    CHECK_MEM(o.data, o.len, "1", 1);
    wk_buf_free(&o);
}

/* The input without whitespace outside strings. */
static uint8_t *minify(const uint8_t *s, size_t n, size_t *out_len)
{
    uint8_t *m = malloc(n + 1);
    size_t j = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (in_str) {
            m[j++] = c;
            if (c == '\\') {
                m[j++] = s[++i];
            } else if (c == '"') {
                in_str = false;
            }
        } else if (c == '"') {
            in_str = true;
            m[j++] = c;
        } else if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
            m[j++] = c;
        }
    }
    *out_len = j;
    return m;
}

WK_TEST(test_json_corpus_round_trips_through_msgpack_byte_identical)
{
    static const char *files[] = {"simdjson/jsonexamples/twitter.json",
                                  "simdjson/jsonexamples/citm_catalog.json"};
    for (int i = 0; i < 2; i++) {
        size_t n;
        uint8_t *data = wk_test_read_file(wk_test_node_module(files[i]), &n);
        CHECK(data != NULL);
        /* The compact form of the input: parsed, then written compactly. */
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        wk_value *v;
        CHECK_OK(wk_json_decode_value(data, n, NULL, &a, &v, NULL, NULL));
        wk_buf compact, mp, back;
        wk_buf_init(&compact, NULL, 0);
        wk_buf_init(&mp, NULL, 0);
        wk_buf_init(&back, NULL, 0);
        CHECK_OK(wk_json_encode_value(v, NULL, &compact, NULL));
        /* Streaming both ways. */
        wk_read_opts ro = {.flags = WK_JSON_READ_MULTI, .max_depth = 0};
        CHECK_OK(wk_json_to_msgpack(data, n, &ro, &mp, NULL));
        CHECK_OK(wk_json_from_msgpack(mp.data, mp.len, NULL, 0, &back, NULL));
        CHECK_MEM(back.data, back.len, compact.data, compact.len);
        /* The tree paths agree with the streaming one. */
        wk_buf mp2;
        wk_buf_init(&mp2, NULL, 0);
        CHECK_OK(wk_mp_encode_value(v, &mp2, NULL));
        CHECK_MEM(mp2.data, mp2.len, mp.data, mp.len);
        /* For these files the compact form is exactly the input minus whitespace. */
        size_t mn;
        uint8_t *mini = minify(data, n, &mn);
        CHECK_MEM(compact.data, compact.len, mini, mn);
        free(mini);
        wk_buf_free(&compact);
        wk_buf_free(&mp);
        wk_buf_free(&mp2);
        wk_buf_free(&back);
        wk_arena_free(&a);
        free(data);
    }
}

WK_TEST(test_json_lines_round_trip_through_msgpack)
{
    const char *lines = "{\"a\":1}\n[1.5,\"x\"]\n\"s\"\nnull\n-7\n";
    wk_read_opts ro = {.flags = WK_JSON_READ_MULTI, .max_depth = 0};
    wk_json_write_opts wo = {WK_JSON_WRITE_NEWLINE, 0};
    wk_buf mp, back;
    wk_buf_init(&mp, NULL, 0);
    wk_buf_init(&back, NULL, 0);
    CHECK_OK(wk_json_to_msgpack(lines, strlen(lines), &ro, &mp, NULL));
    size_t count = 0;
    CHECK_OK(wk_mp_validate(mp.data, mp.len, NULL, &count, NULL));
    CHECK_EQ(count, 5);
    CHECK_OK(wk_json_from_msgpack(mp.data, mp.len, &wo, 0, &back, NULL));
    CHECK_MEM(back.data, back.len, lines, strlen(lines));
    wk_buf_free(&mp);
    wk_buf_free(&back);
}
