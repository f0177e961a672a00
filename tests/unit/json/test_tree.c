/*
 * The fused JSON parser (wk_json_decode_value) against the generic path (wk_value_decode over a
 * wk_json_reader): the same tree for every document and option, including the two corpus
 * files, escaped strings, raw numbers and copied strings. Plus parse -> write -> parse
 * idempotence on the corpus.
 */
#include "json_test_util.h"

static void check_same_tree(const char *json, size_t len, unsigned flags)
{
    wk_read_opts ro = {.flags = flags, .max_depth = 0};
    wk_arena a1, a2;
    wk_arena_init(&a1, NULL, 0);
    wk_arena_init(&a2, NULL, 0);
    wk_value *fused = NULL, *generic = NULL;
    wk_error e1, e2;
    wk_status s1 = wk_json_decode_value(json, len, &ro, &a1, &fused, NULL, &e1);

    wk_json_reader r;
    wk_json_reader_init(&r, json, len, &ro, &a2);
    wk_source src;
    wk_json_reader_source(&r, &src);
    wk_read_opts vo = {.flags = (flags & WK_READ_COPY_STRINGS) ? WK_READ_COPY_STRINGS : 0u, .max_depth = 0};
    wk_status s2 = wk_value_decode(&src, &vo, &a2, &generic, &e2);
    if (s2 == WK_OK) {
        wk_event ev;
        s2 = wk_json_reader_next(&r, &ev); /* the trailing-content check */
        s2 = s2 == WK_ERR_EOF ? WK_OK : s2;
    }
    CHECK_MSG(s1 == s2, "fused %s, generic %s on '%.40s'", wk_status_str(s1),
              wk_status_str(s2), json);
    if (s1 == WK_OK) {
        CHECK_MSG(wk_value_equal(fused, generic, NULL), "trees differ on '%.40s'", json);
    }
    wk_json_reader_free(&r);
    wk_arena_free(&a1);
    wk_arena_free(&a2);
}

WK_TEST(test_json_fused_decode_matches_generic_value_decode)
{
    static const char *docs[] = {
        "null", "true", "0", "-1", "1.5", "1e400", "\"s\"", "\"e\\u00e9\\n\"", "[]", "{}",
        "[1,[2,[3,[4]]],{\"a\":{\"b\":[]}}]", "{\"a\":1,\"a\":2}",
        "{\"k\\\"ey\":\"v\\\\al\",\"n\":-9223372036854775808,\"u\":18446744073709551615}",
        "[0.1,-0,123456789012345678901234567890,2.5e-324]", "[1,", "{\"a\"}", "[1] 2",
    };
    static const unsigned flags[] = {0, WK_JSON_READ_RAW_NUMBERS, WK_READ_COPY_STRINGS};
    for (size_t f = 0; f < 3; f++) {
        for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
            check_same_tree(docs[i], strlen(docs[i]), flags[f]);
            if (wk__test_failed()) {
                return;
            }
        }
    }
}

WK_TEST(test_json_fused_decode_matches_generic_on_the_corpus)
{
    static const char *files[] = {"simdjson/jsonexamples/twitter.json",
                                  "simdjson/jsonexamples/citm_catalog.json"};
    for (int i = 0; i < 2; i++) {
        size_t n;
        uint8_t *data = wk_test_read_file(wk_test_node_module(files[i]), &n);
        CHECK(data != NULL);
        check_same_tree((const char *)data, n, 0);
        check_same_tree((const char *)data, n, WK_READ_COPY_STRINGS);
        free(data);
    }
}

WK_TEST(test_json_copy_strings_leaves_no_pointer_into_the_input)
{
    char doc[] = "{\"key\":[\"value\",\"esc\\t\"]}";
    wk_read_opts ro = {.flags = WK_READ_COPY_STRINGS, .max_depth = 0};
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_value *v;
    CHECK_OK(wk_json_decode_value(doc, strlen(doc), &ro, &a, &v, NULL, NULL));
    memset(doc, 'x', strlen(doc));
    CHECK_MEM(v->u.pairs[0].key.u.str, v->u.pairs[0].key.len, "key", 3);
    CHECK(v->u.pairs[0].key.u.str[3] == '\0');
    CHECK_MEM(v->u.pairs[0].val.u.items[0].u.str, 5, "value", 5);
    CHECK_MEM(v->u.pairs[0].val.u.items[1].u.str, 4, "esc\t", 4);
    wk_arena_free(&a);
}

WK_TEST(test_json_corpus_parse_write_parse_is_stable)
{
    static const char *files[] = {"simdjson/jsonexamples/twitter.json",
                                  "simdjson/jsonexamples/citm_catalog.json"};
    for (int i = 0; i < 2; i++) {
        size_t n;
        uint8_t *data = wk_test_read_file(wk_test_node_module(files[i]), &n);
        CHECK(data != NULL);
        wk_arena a;
        wk_arena_init(&a, NULL, 0);
        wk_value *v1, *v2;
        CHECK_OK(wk_json_decode_value(data, n, NULL, &a, &v1, NULL, NULL));
        wk_buf c1, c2;
        wk_buf_init(&c1, NULL, 0);
        wk_buf_init(&c2, NULL, 0);
        CHECK_OK(wk_json_encode_value(v1, NULL, &c1, NULL));
        CHECK(c1.len < n);
        CHECK_OK(wk_json_decode_value(c1.data, c1.len, NULL, &a, &v2, NULL, NULL));
        CHECK(wk_value_equal(v1, v2, NULL));
        CHECK_OK(wk_json_encode_value(v2, NULL, &c2, NULL));
        CHECK_MEM(c1.data, c1.len, c2.data, c2.len);
        wk_buf_free(&c1);
        wk_buf_free(&c2);
        wk_arena_free(&a);
        free(data);
    }
}
