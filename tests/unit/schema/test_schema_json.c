/*
 * Schemas over JSON with the same descriptors: the seed record's exact 101 bytes, decoding in
 * any key order with whitespace, every field kind round-tripped (bytes as base64, timestamps
 * as RFC 3339), and errors with field paths ("metadata.int: expected string").
 */
#include "seed_user.h"
#include "test_shapes.h"
#include "wirekit/json.h"
#include "wk_test.h"

static const char seed_json[] = "{\"username\":\"root\",\"password\":\"secret\",\"age\":20,"
                                "\"enabled\":true,\"metadata\":{\"hello\":\"world\",\"int\":10}}";

WK_TEST(test_schema_json_seed_record_is_exactly_101_bytes)
{
    CHECK_EQ(sizeof seed_json - 1, 101);
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    CHECK_OK(wk_serializer_json()->encode(&seed_user_schema, &u, &out, NULL));
    CHECK_MEM(out.data, out.len, seed_json, sizeof seed_json - 1);
    wk_buf_free(&out);
}

WK_TEST(test_schema_json_decodes_with_any_key_order_and_whitespace)
{
    const char *doc = " {\n \"metadata\" : {\"int\": 10, \"hello\": \"w\\u00f6rld\"},\n"
                      " \"enabled\": true, \"extra\": [1, {\"x\": null}], \"age\": 20,\n"
                      " \"username\": \"ro\\\"ot\" } ";
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    wk_schema_error err;
    wk_status st = wk_serializer_json()->decode(&seed_user_schema, doc, strlen(doc), &u, &a,
                                                NULL, &err);
    CHECK_MSG(st == WK_OK, "%s: %s", err.path, err.base.msg);
    CHECK_STR(u.username, "ro\"ot");
    CHECK_EQ(u.age, 20);
    CHECK(u.enabled);
    CHECK(u.password == NULL);
    const wk_value *hello = wk_value_map_get(&u.metadata, "hello", 5);
    CHECK(hello != NULL);
    CHECK_MEM(hello->u.str, hello->len, "w\xc3\xb6rld", 6);
    wk_arena_free(&a);
}

WK_TEST(test_schema_json_round_trips_every_kind)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    everything e;
    fill_everything(&e, &a);
    const wk_serializer *js = wk_serializer_json();
    wk_buf j1, j2, m1, m2;
    wk_buf_init(&j1, NULL, 0);
    wk_buf_init(&j2, NULL, 0);
    wk_buf_init(&m1, NULL, 0);
    wk_buf_init(&m2, NULL, 0);
    CHECK_OK(js->encode(&everything_schema, &e, &j1, NULL));
    everything back;
    memset(&back, 0, sizeof back);
    wk_schema_error err;
    wk_status st = js->decode(&everything_schema, j1.data, j1.len, &back, &a, NULL, &err);
    CHECK_MSG(st == WK_OK, "%s: %s in %.*s", err.path, err.base.msg, (int)j1.len, j1.data);
    CHECK_OK(js->encode(&everything_schema, &back, &j2, NULL));
    CHECK_MEM(j2.data, j2.len, j1.data, j1.len);
    /* The same object as MessagePack, before and after its trip through JSON. */
    CHECK_OK(wk_schema_encode_mp(&everything_schema, &e, &m1, NULL));
    CHECK_OK(wk_schema_encode_mp(&everything_schema, &back, &m2, NULL));
    CHECK_MEM(m2.data, m2.len, m1.data, m1.len);
    CHECK(strstr((const char *)j1.data, "\"bytes\":\"AP8Q\"") != NULL);
    CHECK(strstr((const char *)j1.data, "\"ts\":\"2023-11-14T22:13:20.000000005Z\"") != NULL);
    wk_buf_free(&j1);
    wk_buf_free(&j2);
    wk_buf_free(&m1);
    wk_buf_free(&m2);
    wk_arena_free(&a);
}

typedef struct meta {
    char *hello;
    char *str_int;
} meta;
WK_SCHEMA_DEFINE_STATIC(meta_schema, meta, "meta", 1,
    WK_FIELD(meta, hello, "hello", WK_SK_STR, 0),
    WK_FIELD(meta, str_int, "int", WK_SK_STR, 0));
typedef struct typed_user {
    char *username;
    meta metadata;
} typed_user;
WK_SCHEMA_DEFINE_STATIC(typed_user_schema, typed_user, "typed_user", 1,
    WK_FIELD(typed_user, username, "username", WK_SK_STR, 0),
    WK_FIELD_STRUCT(typed_user, metadata, "metadata", meta, &meta_schema, 0));

WK_TEST(test_schema_json_type_mismatch_names_the_field_path)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    typed_user u;
    memset(&u, 0, sizeof u);
    wk_schema_error err;
    CHECK_STATUS(wk_serializer_json()->decode(&typed_user_schema, seed_json,
                                              sizeof seed_json - 1, &u, &a, NULL, &err),
                 WK_ERR_TYPE);
    char text[160];
    wk_schema_error_format(&err, text, sizeof text);
    CHECK_STR(text, "metadata.int: expected string (at byte 97)");
    wk_arena_free(&a);
}

WK_TEST(test_schema_json_rejects_trailing_content_and_bad_json)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    seed_user u;
    memset(&u, 0, sizeof u);
    wk_schema_error err;
    const wk_serializer *js = wk_serializer_find("json");
    CHECK(js == wk_serializer_json());
    const char *two = "{\"username\":\"a\"} {}";
    CHECK(js->decode(&seed_user_schema, two, strlen(two), &u, &a, NULL, &err) != WK_OK);
    const char *bad = "{\"username\":\"a\",}";
    CHECK_STATUS(js->decode(&seed_user_schema, bad, strlen(bad), &u, &a, NULL, &err),
                 WK_ERR_SYNTAX);
    const char *cut = "{\"username\":\"a\"";
    CHECK(js->decode(&seed_user_schema, cut, strlen(cut), &u, &a, NULL, &err) != WK_OK);
    const char *big = "{\"age\":1e999}";
    CHECK(js->decode(&seed_user_schema, big, strlen(big), &u, &a, NULL, &err) != WK_OK);
    wk_arena_free(&a);
}
