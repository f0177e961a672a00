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


/* ---- the inline fast paths (json.h) against their out-of-line halves -------------------- */

typedef struct typed_out {
    const char *s;
    size_t n;
    int64_t i;
    bool b;
} typed_out;

/* Inline call `kind` (begin_map, key, str, int, bool, end), or its out-of-line half. */
static wk_status inline_call(wk_json_reader *r, int kind, bool slow, typed_out *o)
{
    switch (kind) {
    case 0:
        return slow ? wk_json_reader_begin_map_slow(r) : wk_json_reader_begin_map(r);
    case 1:
        return slow ? wk_json_reader_key_slow(r, &o->s, &o->n)
                    : wk_json_reader_key(r, &o->s, &o->n);
    case 2:
        return slow ? wk_json_reader_str_slow(r, &o->s, &o->n)
                    : wk_json_reader_str(r, &o->s, &o->n);
    case 3:
        return slow ? wk_json_reader_int_slow(r, &o->i) : wk_json_reader_int(r, &o->i);
    case 4:
        return slow ? wk_json_reader_bool_slow(r, &o->b) : wk_json_reader_bool(r, &o->b);
    default:
        return slow ? wk_json_reader_end_slow(r) : wk_json_reader_end(r);
    }
}

/* The two readers are at the same point: cursor, state, nesting (bits too), values, error
 * (code, offset and message). */
static void check_same_reader(const wk_json_reader *a, const wk_json_reader *b)
{
    CHECK_EQ(a->p - a->start, b->p - b->start);
    CHECK_EQ(a->state, b->state);
    CHECK_EQ(a->depth, b->depth);
    CHECK_EQ(a->values, b->values);
    CHECK_EQ(a->err.code, b->err.code);
    CHECK_EQ(a->err.offset, b->err.offset);
    CHECK(a->err.msg == b->err.msg);
    for (uint32_t d = 0; d < a->depth && d < 512; d++) {
        CHECK_EQ((a->stack[d >> 6] >> (d & 63)) & 1, (b->stack[d >> 6] >> (d & 63)) & 1);
    }
    /* a latched error is always the failed state (the inline paths test only the state) */
    CHECK_EQ(a->err.code != WK_OK, a->state == WK__JR_FAILED);
}

/* Walks doc[0..len) with the inline calls on one reader and their out-of-line halves on
 * another, call by call: at each step the six kinds in a rotating order until one reads
 * (wrong types and ENDs must consume nothing, alike), next() when none does; every status,
 * value and the whole reader state must agree. Adds the number of calls compared to
 * `*calls`. */
static void check_inline_matches_slow(const void *doc, size_t len, unsigned flags,
                                      uint32_t max_depth, size_t *calls)
{
    wk_read_opts o = {.flags = flags, .max_depth = max_depth};
    wk_json_reader a, b;
    wk_json_reader_init(&a, doc, len, &o, NULL);
    wk_json_reader_init(&b, doc, len, &o, NULL);
    for (unsigned step = 0;; step++) {
        bool moved = false;
        bool done = false;
        for (int j = 0; j < 6 && !moved && !done; j++) {
            int kind = (int)((step * 5 + (unsigned)j) % 6);
            typed_out oa = {NULL, 0, 0, false}, ob = {NULL, 0, 0, false};
            wk_status sa = inline_call(&a, kind, false, &oa);
            wk_status sb = inline_call(&b, kind, true, &ob);
            ++*calls;
            CHECK_STATUS(sa, sb);
            check_same_reader(&a, &b);
            if (sa == WK_OK) {
                CHECK_MEM(oa.s, oa.n, ob.s, ob.n);
                CHECK_EQ(oa.i, ob.i);
                CHECK_EQ(oa.b, ob.b);
                moved = true;
            } else if (sa != WK_ERR_TYPE && sa != WK_ERR_STATE && sa != WK_ERR_RANGE) {
                done = true; /* EOF or a latched error */
            }
        }
        if (done) {
            break;
        }
        if (!moved) {
            wk_event ea, eb;
            wk_status sa = wk_json_reader_next(&a, &ea);
            wk_status sb = wk_json_reader_next(&b, &eb);
            CHECK_STATUS(sa, sb);
            check_same_reader(&a, &b);
            if (sa != WK_OK) {
                break;
            }
            CHECK_EQ(ea.type, eb.type);
        }
    }
    wk_json_reader_free(&a);
    wk_json_reader_free(&b);
}

/* Around the fast paths' edges: keys and strings of 14 to 17 bytes (the 16-byte step),
 * escapes and bytes that need a look at each place, bad UTF-8, integers at the 18-digit step
 * and the int64 edges, leading zeros, literals cut short, whitespace, depth. */
static const char *const EDGE_DOCS[] = {
    "{\"aaaaaaaaaaaaaa\":1,\"bbbbbbbbbbbbbbb\":2,\"cccccccccccccccc\":3,\"ddddddddddddddddd\":4}",
    "{\"k\":\"aaaaaaaaaaaaaa\",\"k\":\"bbbbbbbbbbbbbbb\",\"k\":\"cccccccccccccccc\","
    "\"k\":\"ddddddddddddddddd\",\"k\":\"\"}",
    "{\"a\\\"b\":\"c\\u0041d\",\"e\\n\":\"\\\\\",\"aaaaaaaaaaaaaaa\\t\":\"bbbbbbbbbbbbbbbb\\/\"}",
    "{\"k\":\"\xc3\xa9\",\"\xc3\xa9\":\"x\",\"k\":\"ab\xe2\x82\xac\"}",
    "{\"k\":\"\xc3\"}",
    "{\"\xff\":1}",
    "{\"k\":\"ab\xe2\x82\"}",
    "{\"k\":\"a\tb\"}",
    "{\"k\x01\":1}",
    "{\"k\":\"\xed\xa0\x80\"}",
    "{\"a\":999999999999999999,\"b\":1000000000000000000,\"c\":9223372036854775807,"
    "\"d\":9223372036854775808,\"e\":-9223372036854775808,\"f\":-9223372036854775809,"
    "\"g\":18446744073709551615,\"h\":18446744073709551616,\"i\":123456789012345678}",
    "{\"a\":0,\"b\":00,\"c\":01,\"d\":-0,\"e\":-1,\"f\":1.5,\"g\":1e5,\"h\":1E5,\"i\":2x}",
    "{\"a\":0.,\"b\":-,\"c\":1e,\"d\":0e1,\"e\":10}",
    "{\"a\":true,\"b\":false,\"c\":null,\"d\":tru,\"e\":1}",
    "{\"a\":truex,\"b\":falsey}",
    "{\"a\":fals}",
    "{\"a\":\"x\",\"b\":1,\"c\":true,\"d\":{},\"e\":[],\"f\":null,\"g\":1.5,\"h\":\"y\"}",
    "{ \"a\" : 1 , \"b\" : \"x\" , \"c\" : true , \"d\" : { \"e\" : 2 } }",
    "{\"a\" :1,\"b\": 2,\"c\"\n:3,\"d\":\t4}",
    "{\"a\":{\"b\":{\"c\":[1,{\"d\":true,\"e\":\"f\"}],\"g\":{}}},\"h\":[{\"i\":1},{\"j\":2}]}",
    "[{\"a\":1},{\"b\":\"c\"},[true,false],\"s\",12,{}]",
    "{\"a\":1}}",
    "{\"a\":1]",
    "[1}",
    "{\"a\":1,\"b\"}",
    "{\"a\":1 \"b\":2}",
    "{\"a\"::1}",
    "{\"a\":1,,\"b\":2}",
    "{\"a\":{\"b\":{\"c\":{\"d\":{\"e\":{}}}}}}",
    "{}{}",
    "\xef\xbb\xbf{\"a\":1}",
};

WK_TEST(test_json_typed_inline_paths_match_the_library)
{
    static const unsigned FLAGS[] = {0, WK_JSON_READ_MULTI, WK_JSON_READ_RAW_NUMBERS,
                                     WK_JSON_READ_ALLOW_BOM | WK_JSON_READ_NAN_INF};
    char buf[512];
    size_t calls = 0;
    for (size_t set = 0; set < 2; set++) {
        const char *const *docs = set == 0 ? DOCS : EDGE_DOCS;
        size_t ndocs = set == 0 ? sizeof DOCS / sizeof DOCS[0]
                                : sizeof EDGE_DOCS / sizeof EDGE_DOCS[0];
        for (size_t i = 0; i < ndocs; i++) {
            size_t len = strlen(docs[i]);
            CHECK(len + 24 <= sizeof buf);
            /* the document, then with whitespace after it: the last tokens both near the end
             * of the input (the one-by-one steps) and with 16 bytes after them */
            for (int pad = 0; pad < 2; pad++) {
                size_t total = len + (pad ? 24 : 0);
                memcpy(buf, docs[i], len);
                memset(buf + len, ' ', total - len);
                /* every prefix, in an exact-size heap block (a read past the end traps under
                 * ASan) */
                for (size_t n = 0; n <= total; n++) {
                    char *heap = malloc(n != 0 ? n : 1);
                    CHECK(heap != NULL);
                    memcpy(heap, buf, n);
                    for (size_t f = 0; f < sizeof FLAGS / sizeof FLAGS[0]; f++) {
                        check_inline_matches_slow(heap, n, FLAGS[f], 0, &calls);
                    }
                    check_inline_matches_slow(heap, n, 0, 3, &calls); /* a depth limit */
                    free(heap);
                }
            }
        }
    }
    CHECK(calls > 100000);
}

WK_TEST(test_json_typed_inline_paths_match_the_library_on_the_corpus)
{
    size_t len;
    uint8_t *data =
        wk_test_read_file(wk_test_node_module("simdjson/jsonexamples/twitter.json"), &len);
    CHECK(data != NULL);
    size_t calls = 0;
    check_inline_matches_slow(data, len, 0, 0, &calls);
    CHECK(calls > 10000);
    free(data);
}
