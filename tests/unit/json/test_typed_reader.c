/*
 * The typed reads (wk_json_reader_key, _str, _int, ...) against the event reader: the same
 * values, statuses and error offsets on valid, malformed and truncated documents, wrong-type
 * calls that consume nothing, and the seed record read by hand.
 */
#include <math.h>
#include <string.h>

#include "json_test_util.h"

typedef struct walk {
    uint8_t object[600];   /* per open container: 1 = object */
    uint8_t after_key[600]; /* object: its key was read, the value is next */
    int depth;
} walk;

static bool key_due(const walk *k)
{
    return k->depth > 0 && k->object[k->depth - 1] && !k->after_key[k->depth - 1];
}

/* Reads the event `e` (just read by the reference reader) from `b` with typed calls: first a
 * call of the wrong type, which must consume nothing, then the right one. */
static void typed_read(wk_json_reader *b, const wk_event *e, bool key_pos)
{
    const char *s = NULL;
    size_t n = 0;
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
    bool bo = false;
    switch (e->type) {
    case WK_EV_STR:
        if (key_pos) {
            CHECK_STATUS(wk_json_reader_int(b, &i), WK_ERR_TYPE);
            CHECK_OK(wk_json_reader_key(b, &s, &n));
        } else {
            CHECK_STATUS(wk_json_reader_key(b, &s, &n), WK_ERR_STATE);
            CHECK_STATUS(wk_json_reader_double(b, &d), WK_ERR_TYPE);
            CHECK_OK(wk_json_reader_str(b, &s, &n));
        }
        CHECK_MEM(s, n, e->v.str.ptr, e->v.str.len);
        break;
    case WK_EV_UINT:
        CHECK_STATUS(wk_json_reader_str(b, &s, &n), WK_ERR_TYPE);
        if (e->v.u > (uint64_t)INT64_MAX) {
            CHECK_STATUS(wk_json_reader_int(b, &i), WK_ERR_RANGE);
        }
        CHECK_OK(wk_json_reader_uint(b, &u));
        CHECK_EQ(u, e->v.u);
        break;
    case WK_EV_INT:
        CHECK_STATUS(wk_json_reader_uint(b, &u), WK_ERR_RANGE);
        CHECK_OK(wk_json_reader_int(b, &i));
        CHECK_EQ(i, e->v.i);
        break;
    case WK_EV_FLOAT:
        CHECK_STATUS(wk_json_reader_int(b, &i), WK_ERR_TYPE);
        CHECK_STATUS(wk_json_reader_uint(b, &u), WK_ERR_TYPE);
        CHECK_OK(wk_json_reader_double(b, &d));
        CHECK(memcmp(&d, &e->v.f, sizeof d) == 0 || (isnan(d) && isnan(e->v.f)));
        break;
    case WK_EV_BOOL:
        CHECK_STATUS(wk_json_reader_nil(b), WK_ERR_TYPE);
        CHECK_OK(wk_json_reader_bool(b, &bo));
        CHECK_EQ(bo, e->v.b);
        break;
    case WK_EV_NIL:
        CHECK_STATUS(wk_json_reader_bool(b, &bo), WK_ERR_TYPE);
        CHECK_OK(wk_json_reader_nil(b));
        break;
    case WK_EV_MAP:
        CHECK_STATUS(wk_json_reader_begin_array(b), WK_ERR_TYPE);
        CHECK_OK(wk_json_reader_begin_map(b));
        break;
    case WK_EV_ARRAY:
        CHECK_STATUS(wk_json_reader_begin_map(b), WK_ERR_TYPE);
        CHECK_OK(wk_json_reader_begin_array(b));
        break;
    case WK_EV_END:
        /* the END is not consumed by a typed read (nor by skip); wk_json_reader_end is */
        if (key_pos) {
            CHECK_STATUS(wk_json_reader_key(b, &s, &n), WK_ERR_STATE);
        } else {
            CHECK_STATUS(wk_json_reader_int(b, &i), WK_ERR_STATE);
        }
        CHECK_STATUS(wk_json_reader_skip(b), WK_ERR_STATE);
        CHECK_OK(wk_json_reader_end(b));
        break;
    default: { /* raw numbers: the typed calls refuse them; next() reads them */
        CHECK_STATUS(wk_json_reader_int(b, &i), WK_ERR_TYPE);
        CHECK_STATUS(wk_json_reader_double(b, &d), WK_ERR_TYPE);
        wk_event g;
        CHECK_OK(wk_json_reader_next(b, &g));
        CHECK_EQ(g.type, e->type);
        CHECK_MEM(g.v.str.ptr, g.v.str.len, e->v.str.ptr, e->v.str.len);
        break;
    }
    }
}

/* Typed call number `kind` (0-9), whatever it reads. */
static wk_status typed_call(wk_json_reader *r, int kind)
{
    const char *s;
    size_t n;
    int64_t i;
    uint64_t u;
    double d;
    bool b;
    switch (kind) {
    case 0:
        return wk_json_reader_int(r, &i);
    case 1:
        return wk_json_reader_uint(r, &u);
    case 2:
        return wk_json_reader_double(r, &d);
    case 3:
        return wk_json_reader_str(r, &s, &n);
    case 4:
        return wk_json_reader_bool(r, &b);
    case 5:
        return wk_json_reader_nil(r);
    case 6:
        return wk_json_reader_begin_map(r);
    case 7:
        return wk_json_reader_begin_array(r);
    case 8:
        return wk_json_reader_skip(r);
    default: {
        wk_status st = wk_json_reader_key(r, &s, &n);
        return st == WK_ERR_STATE ? wk_json_reader_skip(r) : st;
    }
    }
}

/* Walks `doc` with next() and with typed calls side by side; `*final` (may be NULL) gets
 * the final status. */
static void check_typed_matches_events(const void *doc, size_t len, unsigned flags,
                                       wk_status *final)
{
    wk_read_opts o = {.flags = flags, .max_depth = 0};
    wk_json_reader a, b;
    wk_json_reader_init(&a, doc, len, &o, NULL);
    wk_json_reader_init(&b, doc, len, &o, NULL);
    static walk k;
    k.depth = 0;
    wk_status sa;
    size_t events = 0;
    for (;;) {
        wk_event e;
        bool key_pos = key_due(&k);
        sa = wk_json_reader_next(&a, &e);
        if (sa != WK_OK) {
            /* Every typed call, on a reader brought to the same point, meets the same end or
             * error (the fast paths must not accept what next() rejects). */
            for (int kind = 0; kind < 10; kind++) {
                wk_json_reader c;
                wk_json_reader_init(&c, doc, len, &o, NULL);
                wk_event ce;
                for (size_t j = 0; j < events; j++) {
                    CHECK_OK(wk_json_reader_next(&c, &ce));
                }
                CHECK_STATUS(typed_call(&c, kind), sa);
                wk_error ec, ea2;
                wk_json_reader_error(&c, &ec);
                wk_json_reader_error(&a, &ea2);
                CHECK_EQ(ec.offset, ea2.offset);
                wk_json_reader_free(&c);
            }
            bool bo;
            CHECK_STATUS(wk_json_reader_bool(&b, &bo), sa);
            CHECK_STATUS(wk_json_reader_skip(&b), sa);
            wk_error ea, eb;
            wk_json_reader_error(&a, &ea);
            wk_json_reader_error(&b, &eb);
            CHECK_EQ(ea.code, eb.code);
            CHECK_EQ(ea.offset, eb.offset);
            break;
        }
        typed_read(&b, &e, key_pos);
        events++;
        CHECK_EQ(wk_json_reader_offset(&a), wk_json_reader_offset(&b));
        if (e.type == WK_EV_MAP || e.type == WK_EV_ARRAY) {
            if (k.depth > 0) {
                k.after_key[k.depth - 1] = 0;
            }
            if (k.depth < (int)sizeof k.object) {
                k.object[k.depth] = e.type == WK_EV_MAP;
                k.after_key[k.depth] = 0;
            }
            k.depth++;
        } else if (e.type == WK_EV_END) {
            k.depth--;
        } else if (k.depth > 0 && k.object[k.depth - 1]) {
            k.after_key[k.depth - 1] = key_pos;
        }
    }
    wk_json_reader_free(&a);
    wk_json_reader_free(&b);
    if (final != NULL) {
        *final = sa;
    }
}

static const char SEED[] = "{\"username\":\"root\",\"password\":\"secret\",\"age\":20,"
                           "\"enabled\":true,\"metadata\":{\"hello\":\"world\",\"int\":10}}";

static const char *const DOCS[] = {
    SEED,
    "[]",
    "{}",
    " { \"a\" : [ 1 , -2 , 3.5 , true , false , null , \"x\" ] , \"b\" : { } } ",
    "[0,-0,1e2,18446744073709551615,18446744073709551616,-9223372036854775808,"
    "-9223372036854775809,9223372036854775807,9223372036854775808,123456789012345678,"
    "1234567890123456789,0.5,1E+2,01]",
    "{\"esc\\\"aped\":\"a\\nb\\u00e9\",\"long key that is longer than sixteen\":"
    "\"long value that is longer than sixteen bytes\",\"\\u00e9\":\"\xc3\xa9\"}",
    "{\"k\":tru}",
    "{\"k\":fals}",
    "{\"k\" 1}",
    "{\"k\":1,}",
    "{,\"k\":1}",
    "[1,]",
    "[1 2]",
    "{\"a\":1}{\"b\":2}",
    "{\"a\":\"\x01\"}",
    "{\"a\":\"\xff\"}",
    "{\"a\":-}",
    "{\"a\":01}",
    "{\"a\":00,\"b\":0}",
    "{\"a\":0,\"b\":-0,\"c\":0.0,\"d\":1e1,\"e\":2E-1,\"f\":123456789012345678,"
    "\"g\":1234567890123456789,\"h\":12345678901234567890,\"i\":123456789012345678901}",
    "{\"t\":true,\"f\":false,\"n\":null,\"x\":truex}",
    "{\"a\":1.}",
    "{\"a\":[{\"b\":[[],{}]},[null]],\"c\":\"d\"}",
    "\"top\"",
    "42",
    "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    "{\"a\":{\"b\":{\"c\":{}}},\"d\":[{}]}",
};

WK_TEST(test_json_typed_reads_match_the_event_reader)
{
    size_t prefixes = 0;
    for (size_t i = 0; i < sizeof DOCS / sizeof DOCS[0]; i++) {
        size_t len = strlen(DOCS[i]);
        /* every prefix too: truncated input gives the same status at the same offset */
        for (size_t n = 0; n <= len; n++) {
            check_typed_matches_events(DOCS[i], n, 0, NULL);
            check_typed_matches_events(DOCS[i], n, WK_JSON_READ_MULTI, NULL);
            check_typed_matches_events(DOCS[i], n, WK_JSON_READ_RAW_NUMBERS, NULL);
            prefixes++;
        }
    }
    wk_status st;
    check_typed_matches_events(SEED, strlen(SEED), 0, &st);
    CHECK_EQ(st, WK_ERR_EOF);
    check_typed_matches_events(DOCS[6], strlen(DOCS[6]), 0, &st);
    CHECK_EQ(st, WK_ERR_SYNTAX);
    CHECK(prefixes > 500);
}

WK_TEST(test_json_typed_reads_match_the_event_reader_on_the_corpus)
{
    const char *files[] = {"simdjson/jsonexamples/twitter.json",
                           "simdjson/jsonexamples/citm_catalog.json"};
    for (size_t i = 0; i < 2; i++) {
        size_t len;
        uint8_t *data = wk_test_read_file(wk_test_node_module(files[i]), &len);
        CHECK(data != NULL);
        wk_status st;
        check_typed_matches_events(data, len, 0, &st);
        CHECK_EQ(st, WK_ERR_EOF);
        free(data);
    }
}

WK_TEST(test_json_typed_reads_respect_the_depth_limit)
{
    char deep[700];
    memset(deep, '[', sizeof deep);
    wk_read_opts o = {.flags = 0, .max_depth = 600};
    wk_json_reader r;
    wk_json_reader_init(&r, deep, sizeof deep, &o, NULL);
    wk_status st = WK_OK;
    size_t opened = 0;
    while ((st = wk_json_reader_begin_array(&r)) == WK_OK) {
        opened++;
    }
    CHECK_STATUS(st, WK_ERR_DEPTH);
    CHECK_EQ(opened, 600);
    wk_json_reader_free(&r);
    /* objects through the inline path: the default limit */
    char objs[5 * 600];
    for (size_t i = 0; i < 600; i++) {
        memcpy(objs + 5 * i, "{\"k\":", 5);
    }
    wk_json_reader_init(&r, objs, sizeof objs, NULL, NULL);
    const char *s;
    size_t n;
    opened = 0;
    while ((st = wk_json_reader_begin_map(&r)) == WK_OK) {
        opened++;
        CHECK_OK(wk_json_reader_key(&r, &s, &n));
    }
    CHECK_STATUS(st, WK_ERR_DEPTH);
    CHECK_EQ(opened, WK_JSON_DEFAULT_MAX_DEPTH);
    wk_json_reader_free(&r);
}

WK_TEST(test_json_typed_reads_walk_the_seed_record_and_skip_values)
{
    wk_json_reader r;
    wk_json_reader_init(&r, SEED, strlen(SEED), NULL, NULL);
    const char *s;
    size_t n;
    int64_t i;
    bool b;
    CHECK_OK(wk_json_reader_begin_map(&r));
    CHECK_OK(wk_json_reader_key(&r, &s, &n));
    CHECK_MEM(s, n, "username", 8);
    CHECK_STATUS(wk_json_reader_key(&r, &s, &n), WK_ERR_STATE); /* a value is due */
    CHECK_OK(wk_json_reader_skip(&r));
    CHECK_OK(wk_json_reader_key(&r, &s, &n));
    CHECK_OK(wk_json_reader_str(&r, &s, &n));
    CHECK_MEM(s, n, "secret", 6);
    CHECK_OK(wk_json_reader_key(&r, &s, &n));
    CHECK_OK(wk_json_reader_int(&r, &i));
    CHECK_EQ(i, 20);
    CHECK_OK(wk_json_reader_key(&r, &s, &n));
    CHECK_OK(wk_json_reader_bool(&r, &b));
    CHECK(b);
    CHECK_OK(wk_json_reader_key(&r, &s, &n));
    CHECK_MEM(s, n, "metadata", 8);
    CHECK_STATUS(wk_json_reader_end(&r), WK_ERR_STATE); /* a value is due, not the end */
    CHECK_OK(wk_json_reader_skip(&r)); /* the whole object */
    CHECK_STATUS(wk_json_reader_key(&r, &s, &n), WK_ERR_STATE); /* at '}': not consumed */
    CHECK_STATUS(wk_json_reader_key(&r, &s, &n), WK_ERR_STATE);
    CHECK_OK(wk_json_reader_end(&r));
    CHECK_STATUS(wk_json_reader_end(&r), WK_ERR_STATE); /* nothing open */
    CHECK_STATUS(wk_json_reader_key(&r, &s, &n), WK_ERR_STATE);
    CHECK_STATUS(wk_json_reader_skip(&r), WK_ERR_EOF);
    wk_json_reader_free(&r);
    /* a latched error is returned by every call */
    wk_json_reader_init(&r, "{\"a\":x}", 7, NULL, NULL);
    CHECK_OK(wk_json_reader_begin_map(&r));
    CHECK_OK(wk_json_reader_key(&r, &s, &n));
    CHECK_STATUS(wk_json_reader_int(&r, &i), WK_ERR_SYNTAX);
    CHECK_STATUS(wk_json_reader_str(&r, &s, &n), WK_ERR_SYNTAX);
    CHECK_STATUS(wk_json_reader_key(&r, &s, &n), WK_ERR_SYNTAX);
    CHECK_STATUS(wk_json_reader_begin_map(&r), WK_ERR_SYNTAX);
    wk_json_reader_free(&r);
}

