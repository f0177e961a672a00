/*
 * Arrays: text literal syntax (quoting, escapes, NULL, bounds decoration, up to 6 dimensions),
 * binary layout, iteration, encoding from C arrays, events, and hostile headers.
 */
#include <stdlib.h>

#include "pg_test_util.h"
#include "wk_test.h"

static const struct {
    wk_pg_oid oid;
    const char *in, *want;
} canon[] = {
    {WK_PG_OID_INT4_ARRAY, "{1,2,3}", "{1,2,3}"},
    {WK_PG_OID_INT4_ARRAY, " { 1 , NULL ,3 } ", "{1,NULL,3}"},
    {WK_PG_OID_INT4_ARRAY, "{}", "{}"},
    {WK_PG_OID_INT4_ARRAY, "{1,NULL,3}", "{1,NULL,3}"},
    {WK_PG_OID_TEXT_ARRAY, "{a,nulL,NULLx,b}", "{a,NULL,NULLx,b}"},
    {WK_PG_OID_TEXT_ARRAY, "{x}", "{x}"},
    {WK_PG_OID_INT4_ARRAY, "[0:1][2:3]={{1,2},{3,4}}", "[0:1][2:3]={{1,2},{3,4}}"},
    {WK_PG_OID_INT4_ARRAY, "[1:2]={5,6}", "{5,6}"},
    {WK_PG_OID_INT4_ARRAY, "[-3:-2]={5,6}", "[-3:-2]={5,6}"},
    {WK_PG_OID_INT4_ARRAY, "{{{{{{1}}}}}}", "{{{{{{1}}}}}}"},
    {WK_PG_OID_INT2_ARRAY, "{{1,2,3},{4,5,6}}", "{{1,2,3},{4,5,6}}"},
    {WK_PG_OID_TEXT_ARRAY, "{\"a b\",NULL,\"NULL\",\"\",\"x\\\\\\\"y\"}",
     "{\"a b\",NULL,\"NULL\",\"\",\"x\\\\\\\"y\"}"},
    {WK_PG_OID_TEXT_ARRAY, "{\"{}\",\"a,b\",\" x\"}", "{\"{}\",\"a,b\",\" x\"}"},
    {WK_PG_OID_TEXT_ARRAY, "{a\\,b, c d ,null}", "{\"a,b\",\"c d\",NULL}"},
    {WK_PG_OID_TEXT_ARRAY, "{\"a\tb\"}", "{\"a\tb\"}"},
    {WK_PG_OID_TEXT_ARRAY, "{é,ü}", "{é,ü}"},
    {WK_PG_OID_BYTEA_ARRAY, "{\"\\\\x5c783031\"}", "{\"\\\\x5c783031\"}"},
    {WK_PG_OID_FLOAT8_ARRAY, "{1e100,NaN,-0,0.5}", "{1e+100,NaN,-0,0.5}"},
    {WK_PG_OID_NUMERIC_ARRAY, "{1.50,NaN,-3}", "{1.50,NaN,-3}"},
    {WK_PG_OID_TIMESTAMP_ARRAY, "{\"2000-01-01 00:00:00\",infinity}",
     "{\"2000-01-01 00:00:00\",infinity}"},
    {WK_PG_OID_DATE_ARRAY, "{2000-01-01,\"0001-01-01 BC\"}", "{2000-01-01,\"0001-01-01 BC\"}"},
    {WK_PG_OID_BOOL_ARRAY, "{t,f,NULL}", "{t,f,NULL}"},
    {WK_PG_OID_UUID_ARRAY, "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
     "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}"},
    {WK_PG_OID_INET_ARRAY, "{::1,10.0.0.1/8}", "{::1,10.0.0.1/8}"},
    {WK_PG_OID_INTERVAL_ARRAY, "{\"1 day\",00:00:00}", "{\"1 day\",00:00:00}"},
    {WK_PG_OID_JSONB_ARRAY, "{\"{\\\"a\\\": 1}\"}", "{\"{\\\"a\\\": 1}\"}"},
    {WK_PG_OID_CHAR_ARRAY, "{a,\"\"}", "{a,\"\"}"},
};

WK_TEST(test_pg_arrays_round_trip_text_literals_in_both_formats)
{
    char why[512];
    for (size_t i = 0; i < sizeof canon / sizeof canon[0]; i++) {
        CHECK_MSG(pgt_roundtrip(canon[i].oid, canon[i].in, canon[i].want, why, sizeof why), "%s",
                  why);
    }
}

WK_TEST(test_pg_arrays_binary_layout_matches_array_send)
{
    /* '[0:1]={1,NULL}'::int[] from PostgreSQL 15's array_send. */
    uint8_t want[64];
    size_t wn = wk_test_hex("00000001000000010000001700000002000000000000000400000001ffffffff",
                            want, sizeof want);
    const char *text;
    CHECK_OK(pgt_to_text(WK_PG_OID_INT4_ARRAY, WK_PG_BINARY, want, wn, &text, NULL));
    CHECK_STR(text, "[0:1]={1,NULL}");
    const uint8_t *b;
    size_t n;
    CHECK_OK(pgt_from_text(WK_PG_OID_INT4_ARRAY, WK_PG_BINARY, "[0:1]={1,NULL}", &b, &n, NULL));
    CHECK_MEM(b, n, want, wn);
}

WK_TEST(test_pg_arrays_iterate_elements_and_decode_them)
{
    const char *lit = "[2:3][1:2]={{1,-2},{NULL,\"4\"}}";
    wk_pg_array a;
    CHECK_OK(pgt_decode(WK_PG_OID_INT4_ARRAY, WK_PG_TEXT, WK_PG_KIND_ARRAY, lit, strlen(lit), &a,
                        NULL));
    CHECK_EQ(a.ndim, 2);
    CHECK_EQ(a.nitems, 4);
    CHECK_EQ(a.lbounds[0], 2);
    CHECK_EQ(a.dims[1], 2);
    CHECK(a.has_nulls);
    CHECK_EQ(a.elem_oid, WK_PG_OID_INT4);
    const wk_pg_decoder *ed =
        wk_pg_registry_find_decoder(pgt_reg(), a.elem_oid, a.format, WK_PG_KIND_I32);
    wk_pg_array_iter it;
    wk_pg_array_iter_init(&it, &a, NULL);
    int32_t got[4] = {0};
    bool nulls[4] = {false};
    for (int i = 0; i < 4; i++) {
        const uint8_t *p;
        size_t n;
        CHECK_OK(wk_pg_array_next(&it, &p, &n, &nulls[i], NULL));
        if (!nulls[i]) {
            CHECK_OK(wk_pg_decode(ed, p, n, &got[i], NULL, NULL));
        }
    }
    const uint8_t *p;
    size_t n;
    bool isn;
    CHECK_STATUS(wk_pg_array_next(&it, &p, &n, &isn, NULL), WK_ERR_EOF);
    CHECK_EQ(got[0], 1);
    CHECK_EQ(got[1], -2);
    CHECK(nulls[2]);
    CHECK_EQ(got[3], 4);
}

WK_TEST(test_pg_arrays_escaped_text_elements_need_an_arena)
{
    const char *lit = "{\"a\\\"b\"}";
    wk_pg_array a;
    CHECK_OK(pgt_decode(WK_PG_OID_TEXT_ARRAY, WK_PG_TEXT, WK_PG_KIND_ARRAY, lit, strlen(lit), &a,
                        NULL));
    wk_pg_array_iter it;
    const uint8_t *p;
    size_t n;
    bool isn;
    wk_pg_array_iter_init(&it, &a, NULL);
    CHECK_STATUS(wk_pg_array_next(&it, &p, &n, &isn, NULL), WK_ERR_ARG);
    wk_arena ar;
    wk_arena_init(&ar, NULL, 0);
    wk_pg_array_iter_init(&it, &a, &ar);
    CHECK_OK(wk_pg_array_next(&it, &p, &n, &isn, NULL));
    CHECK_MEM(p, n, "a\"b", 3);
    wk_arena_free(&ar);
}

WK_TEST(test_pg_arrays_encode_c_arrays_in_both_formats)
{
    int64_t v[6] = {1, -2, 3, 4, 5, 6};
    bool nulls[6] = {false, false, true, false, false, false};
    wk_pg_array_in in;
    wk_pg_array_in_1d(&in, WK_PG_KIND_I64, v, 6, nulls);
    in.ndim = 2;
    in.dims[0] = 2;
    in.dims[1] = 3;
    in.lbounds[0] = 1;
    in.lbounds[1] = 0;
    for (int f = 0; f < 2; f++) {
        const wk_pg_encoder *e =
            wk_pg_registry_find_array_encoder(pgt_reg(), (wk_pg_format)f, WK_PG_KIND_I64);
        CHECK(e != NULL);
        CHECK_EQ(e->oid, WK_PG_OID_INT8_ARRAY);
        wk_buf b;
        wk_buf_init(&b, NULL, 0);
        CHECK_OK(wk_pg_encode(e, &in, &b, NULL));
        const char *text;
        CHECK_OK(pgt_to_text(WK_PG_OID_INT8_ARRAY, (wk_pg_format)f, b.data, b.len, &text, NULL));
        CHECK_STR(text, "[1:2][0:2]={{1,-2,NULL},{4,5,6}}");
        wk_buf_free(&b);
    }
    double d[2] = {0.5, 1e300};
    wk_pg_array_in_1d(&in, WK_PG_KIND_F64, d, 2, NULL);
    const wk_pg_encoder *e =
        wk_pg_registry_find_array_encoder(pgt_reg(), WK_PG_TEXT, WK_PG_KIND_F64);
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    CHECK_OK(wk_pg_encode(e, &in, &b, NULL));
    CHECK_MEM(b.data, b.len, "{0.5,1e+300}", 12);
    wk_buf_clear(&b);
    wk_slice s[2] = {{"a b", 3}, {"q\"", 2}};
    wk_pg_array_in_1d(&in, WK_PG_KIND_STR, s, 2, NULL);
    e = wk_pg_registry_find_array_encoder(pgt_reg(), WK_PG_TEXT, WK_PG_KIND_STR);
    CHECK_OK(wk_pg_encode(e, &in, &b, NULL));
    CHECK_MEM(b.data, b.len, "{\"a b\",\"q\\\"\"}", 13);
    wk_buf_clear(&b);
    wk_pg_array_in_1d(&in, WK_PG_KIND_STR, NULL, 0, NULL);
    CHECK_OK(wk_pg_encode(e, &in, &b, NULL));
    CHECK_MEM(b.data, b.len, "{}", 2);
    wk_buf_free(&b);
}

typedef struct evrec {
    char out[256];
    size_t n;
} evrec;

static wk_status ev_text(void *self, const wk_event *ev)
{
    evrec *r = self;
    char tmp[64];
    int k = 0;
    switch (ev->type) {
    case WK_EV_ARRAY: k = snprintf(tmp, sizeof tmp, "["); break;
    case WK_EV_END: k = snprintf(tmp, sizeof tmp, "]"); break;
    case WK_EV_NIL: k = snprintf(tmp, sizeof tmp, "nil "); break;
    case WK_EV_UINT: k = snprintf(tmp, sizeof tmp, "%llu ", (unsigned long long)ev->v.u); break;
    case WK_EV_INT: k = snprintf(tmp, sizeof tmp, "%lld ", (long long)ev->v.i); break;
    case WK_EV_STR:
        k = snprintf(tmp, sizeof tmp, "'%.*s' ", (int)ev->v.str.len, ev->v.str.ptr);
        break;
    default: k = snprintf(tmp, sizeof tmp, "? "); break;
    }
    if (r->n + (size_t)k >= sizeof r->out) {
        return WK_ERR_LIMIT;
    }
    memcpy(r->out + r->n, tmp, (size_t)k);
    r->n += (size_t)k;
    r->out[r->n] = 0;
    return WK_OK;
}

static wk_status ev_err(const void *self, wk_error *err)
{
    (void)self;
    err->code = WK_ERR_LIMIT;
    return err->code;
}

WK_TEST(test_pg_arrays_emit_nested_event_arrays)
{
    const uint8_t *b;
    size_t n;
    CHECK_OK(pgt_from_text(WK_PG_OID_INT4_ARRAY, WK_PG_BINARY, "[0:1][1:2]={{1,NULL},{-3,4}}",
                           &b, &n, NULL));
    uint8_t copy[256];
    memcpy(copy, b, n);
    evrec r = {{0}, 0};
    wk_sink sink = {ev_text, ev_err, &r};
    wk_pg_events ev = {&sink, 0, NULL, 0};
    CHECK_OK(pgt_decode(WK_PG_OID_INT4_ARRAY, WK_PG_BINARY, WK_PG_KIND_EVENTS, copy, n, &ev, NULL));
    CHECK_STR(r.out, "[[1 nil ][-3 4 ]]");
    r.n = 0;
    const char *lit = "{}";
    CHECK_OK(pgt_decode(WK_PG_OID_TEXT_ARRAY, WK_PG_TEXT, WK_PG_KIND_EVENTS, lit, 2, &ev, NULL));
    CHECK_STR(r.out, "[]");
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    const wk_pg_decoder *d =
        wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_INT4_ARRAY, WK_PG_BINARY, WK_PG_KIND_VALUE);
    wk_value v;
    CHECK_OK(wk_pg_decode(d, copy, n, &v, &a, NULL));
    CHECK_EQ(v.type, WK_VAL_ARRAY);
    CHECK_EQ(v.len, 2);
    CHECK_EQ(v.u.items[1].u.items[0].type, WK_VAL_INT);
    CHECK_EQ(v.u.items[1].u.items[0].u.i, -3);
    CHECK_EQ(v.u.items[0].u.items[1].type, WK_VAL_NIL);
    wk_arena_free(&a);
}

static const struct {
    const char *hex;
    wk_status want;
} bad_bin[] = {
    {"0000000100000000000000", WK_ERR_TRUNCATED},                 /* short header */
    {"ffffffff0000000000000017", WK_ERR_SYNTAX},                   /* ndim -1 */
    {"000000070000000000000017", WK_ERR_SYNTAX},                   /* ndim 7 */
    {"000000010000000200000017", WK_ERR_SYNTAX},                   /* flags 2 */
    {"000000010000000000000019", WK_ERR_TYPE},                     /* element type text */
    {"0000000100000000000000170000000100", WK_ERR_TRUNCATED},     /* dims cut */
    {"00000001000000000000001700000002000000010000000400000001", WK_ERR_TRUNCATED},
    {"000000010000000000000017ffffffff00000001", WK_ERR_SYNTAX},   /* negative dim */
    {"0000000100000000000000170000000100000001000000ff00000001", WK_ERR_TRUNCATED},
    {"0000000100000000000000170000000100000001fffffffe", WK_ERR_TRUNCATED},
    {"00000001000000000000001700000001000000010000000400000001ff", WK_ERR_TRAILING},
    /* 3 dims of 65536: product overflows 2^32 and PostgreSQL's limit */
    {"000000030000000000000017000100000000000100010000000000010001000000000001",
     WK_ERR_LIMIT},
    /* dims 1 with lower bound INT32_MAX and dim 2: upper bound overflows */
    {"000000010000000000000017000000027fffffff", WK_ERR_RANGE},
    /* a million elements announced in 24 bytes */
    {"000000010000000000000017000f424000000001", WK_ERR_TRUNCATED},
};

WK_TEST(test_pg_arrays_reject_hostile_binary_headers)
{
    for (size_t i = 0; i < sizeof bad_bin / sizeof bad_bin[0]; i++) {
        uint8_t buf[128];
        size_t n = wk_test_hex(bad_bin[i].hex, buf, sizeof buf);
        CHECK(n != (size_t)-1);
        uint8_t *exact = malloc(n);
        memcpy(exact, buf, n);
        wk_pg_array a;
        wk_error err = {0};
        wk_status st =
            pgt_decode(WK_PG_OID_INT4_ARRAY, WK_PG_BINARY, WK_PG_KIND_ARRAY, exact, n, &a, &err);
        free(exact);
        CHECK_MSG(st == bad_bin[i].want, "case %zu: got %s (%s), want %s", i, wk_status_str(st),
                  err.msg ? err.msg : "", wk_status_str(bad_bin[i].want));
        CHECK(err.msg != NULL);
    }
}

WK_TEST(test_pg_arrays_reject_invalid_text_literals)
{
    static const char *const bad[] = {
        "",           "1,2",       "{1,2",       "{1,,2}",       "{,1}",        "{1,}",
        "{{1,2},{3}}", "{{1},2}",  "{1,{2}}",    "{1}}",         "{1} x",       "{\"a}",
        "{a\"b}",     "{{{{{{{1}}}}}}}",         "[1:2]={1}",    "[2:1]={1}",   "[1:2={1,2}",
        "[1:2]{1,2}", "{{}}",      "{1 2}",      "{\"a\" b}",    "[a:2]={1,2}", "{NULL,x}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = strlen(bad[i]);
        char *exact = malloc(n ? n : 1);
        memcpy(exact, bad[i], n);
        const char *text;
        wk_error err = {0};
        wk_status st = pgt_to_text(WK_PG_OID_INT4_ARRAY, WK_PG_TEXT, exact, n, &text, &err);
        free(exact);
        CHECK_MSG(st != WK_OK && err.msg != NULL, "'%s' was accepted", bad[i]);
    }
}

/* Issue 29: box arrays separate elements with ';' (box's typdelim), since a box's own text
 * holds commas; with ',' assumed, `{(2,2),(1,1);(4,4),(3,3)}` came out as one string. Box
 * decodes only (no encoder): text literals as the server sends them, and array_send's bytes. */
static void put_be64(uint8_t *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, 8);
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(u >> (56 - 8 * i));
    }
}

WK_TEST(test_pg_arrays_of_box_use_the_semicolon_delimiter)
{
    static const struct {
        const char *in, *want;
    } lits[] = {
        {"{(2,2),(1,1);(4,4),(3,3)}", "{(2,2),(1,1);(4,4),(3,3)}"},
        {"{{(1,1),(0,0);NULL};{\"(3,3),(2,2)\";(5,5),(4,4)}}",
         "{{(1,1),(0,0);NULL};{(3,3),(2,2);(5,5),(4,4)}}"},
        {"{}", "{}"},
    };
    for (size_t i = 0; i < sizeof lits / sizeof lits[0]; i++) {
        const char *text = NULL;
        wk_error err = {0};
        wk_status st = pgt_to_text(1020, WK_PG_TEXT, lits[i].in, strlen(lits[i].in), &text, &err);
        CHECK_MSG(st == WK_OK && strcmp(text, lits[i].want) == 0, "'%s': %s '%s' (%s)",
                  lits[i].in, wk_status_str(st), st == WK_OK ? text : "", err.msg ? err.msg : "");
    }
    /* two elements, in events, from text and from binary */
    const char *lit = "{(2,2),(1,1);(4,4),(3,3)}";
    evrec r = {{0}, 0};
    wk_sink sink = {ev_text, ev_err, &r};
    wk_pg_events ev = {&sink, 0, NULL, 0};
    CHECK_OK(pgt_decode(1020, WK_PG_TEXT, WK_PG_KIND_EVENTS, lit, strlen(lit), &ev, NULL));
    CHECK_STR(r.out, "['(2,2),(1,1)' '(4,4),(3,3)' ]");
    uint8_t bin[20 + 2 * 36] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x02, 0x5b, /* 1 dim, box */
                                0, 0, 0, 2, 0, 0, 0, 1};
    static const double corners[2][4] = {{2, 2, 1, 1}, {4, 4, 3, 3}};
    for (int e = 0; e < 2; e++) {
        uint8_t *q = bin + 20 + 36 * e;
        q[0] = q[1] = q[2] = 0;
        q[3] = 32;
        for (int k = 0; k < 4; k++) {
            put_be64(q + 4 + 8 * k, corners[e][k]);
        }
    }
    const char *text = NULL;
    CHECK_OK(pgt_to_text(1020, WK_PG_BINARY, bin, sizeof bin, &text, NULL));
    CHECK_STR(text, "{(2,2),(1,1);(4,4),(3,3)}");
    r.n = 0;
    CHECK_OK(pgt_decode(1020, WK_PG_BINARY, WK_PG_KIND_EVENTS, bin, sizeof bin, &ev, NULL));
    CHECK_STR(r.out, "['(2,2),(1,1)' '(4,4),(3,3)' ]");
    /* other types keep ',' (a ';' is element text) */
    CHECK_OK(pgt_to_text(WK_PG_OID_TEXT_ARRAY, WK_PG_TEXT, "{a;b,c}", 7, &text, NULL));
    CHECK_STR(text, "{a;b,c}");
    r.n = 0;
    CHECK_OK(pgt_decode(WK_PG_OID_TEXT_ARRAY, WK_PG_TEXT, WK_PG_KIND_EVENTS, "{a;b,c}", 7, &ev,
                        NULL));
    CHECK_STR(r.out, "['a;b' 'c' ]");
}
