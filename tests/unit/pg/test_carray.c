/*
 * wk_pg_decode_array (arrays straight into C arrays): its one-pass text path must give exactly
 * what the general path gives (array parser + iterator + the element type's own decoder), on
 * random literals mixing plain numbers with every shape the pass hands over (quotes, spaces,
 * NULLs, decorations, nesting, out-of-range and non-plain numbers), plus the contract's errors.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pg_test_util.h"
#include "pg/pg_oracle.h"
#include "wk_test.h"
#include "wirekit/arena.h"

typedef struct etype {
    wk_pg_oid arr;
    wk_pg_kind kind;
    size_t size;
} etype;

static const etype types[] = {
    {WK_PG_OID_INT2_ARRAY, WK_PG_KIND_I16, 2},   {WK_PG_OID_INT4_ARRAY, WK_PG_KIND_I32, 4},
    {WK_PG_OID_INT8_ARRAY, WK_PG_KIND_I64, 8},   {WK_PG_OID_FLOAT4_ARRAY, WK_PG_KIND_F32, 4},
    {WK_PG_OID_FLOAT8_ARRAY, WK_PG_KIND_F64, 8}, {WK_PG_OID_INT4_ARRAY, WK_PG_KIND_I64, 8},
    {WK_PG_OID_INT2_ARRAY, WK_PG_KIND_I32, 4},   {WK_PG_OID_FLOAT4_ARRAY, WK_PG_KIND_F64, 8},
};

/* The reference: parse, iterate, decode each element with the registry's element decoder. */
static wk_status reference(const etype *t, wk_pg_format f, const uint8_t *p, size_t n,
                           uint8_t *out, bool *nulls, bool with_nulls, size_t cap,
                           size_t *count, wk_arena *arena)
{
    const wk_pg_decoder *ad =
        wk_pg_registry_find_decoder(pgt_reg(), t->arr, f, WK_PG_KIND_ARRAY);
    wk_pg_array a;
    wk_status st = wk_pg_decode(ad, p, n, &a, arena, NULL);
    if (st != WK_OK) {
        return st;
    }
    if (a.ndim > 1) {
        return WK_ERR_TYPE;
    }
    *count = a.nitems;
    if (a.nitems > cap) {
        return WK_ERR_LIMIT;
    }
    const wk_pg_decoder *ed = wk_pg_registry_find_decoder(pgt_reg(), a.elem_oid, f, t->kind);
    wk_pg_array_iter it;
    wk_pg_array_iter_init(&it, &a, arena);
    for (size_t k = 0; k < a.nitems; k++) {
        const uint8_t *ep;
        size_t en;
        bool isn;
        st = wk_pg_array_next(&it, &ep, &en, &isn, NULL);
        if (st != WK_OK) {
            return st;
        }
        if (isn && !with_nulls) {
            return WK_ERR_TYPE;
        }
        nulls[k] = isn;
        memset(out + k * t->size, 0, t->size);
        if (!isn) {
            st = wk_pg_decode(ed, ep, en, out + k * t->size, arena, NULL);
            if (st != WK_OK) {
                return st;
            }
        }
    }
    return WK_OK;
}

static const char *const tokens[] = {
    "0",      "-0",     "007",     "+5",      " 5",      "5 ",      "NULL",   "null",
    "\"12\"", "1e3",    "1.5",     "-2.25",   "NaN",     "Infinity", "-inf",  "",
    "abc",    "1 2",    "32767",   "32768",   "-32768",  "-32769",  "2147483647",
    "2147483648", "-2147483648", "-2147483649", "9223372036854775807",
    "123456789012345678", "1234567890123456789", "99999999999999999999",
    "3.141592653589793", "1e-400", "1e400", "0.1", ".5", "5.", "-", "1\\2", "{1}", "\"\"",
    "340282346638528859811704183484516925440", "3.4028236e38", "1.17549435e-38",
    "0.000001", "123456.789", "4.35", "2.2250738585072014e-308",
};

static size_t rnd_token(char *o, size_t cap, unsigned r)
{
    char b[64];
    int len;
    switch (r % 4) {
    case 0:
        len = snprintf(b, sizeof b, "%lld", (long long)(rand() % 200001) - 100000);
        break;
    case 1:
        len = snprintf(b, sizeof b, "%.17g", ((double)rand() / RAND_MAX - 0.5) * 1e6);
        break;
    case 2:
        len = snprintf(b, sizeof b, "%d.%0*d", rand() % 1000, 1 + rand() % 8, rand() % 10000);
        break;
    default:
        len = snprintf(b, sizeof b, "%s", tokens[(unsigned)rand() % (sizeof tokens /
                                                                       sizeof tokens[0])]);
        break;
    }
    size_t n = (size_t)len < cap ? (size_t)len : cap;
    memcpy(o, b, n);
    return n;
}

/* A random literal: mostly plain `{a,b,c}`, sometimes decorated, spaced or nested. */
static size_t rnd_literal(char *o, size_t cap)
{
    size_t n = 0;
    unsigned shape = (unsigned)rand() % 16;
    int count = rand() % 6;
    if (shape == 0) {
        n += (size_t)snprintf(o, cap, "[1:%d]=", count);
    }
    o[n++] = '{';
    for (int i = 0; i < count && n + 80 < cap; i++) {
        if (i > 0) {
            if (shape == 1) {
                o[n++] = ' ';
            }
            o[n++] = ',';
        }
        bool rare = rand() % 8 == 0;
        n += rnd_token(o + n, cap - n - 4, rare ? 3u : (unsigned)rand() % 3);
    }
    if (shape == 2) {
        o[n++] = '}';
    }
    o[n++] = '}';
    if (shape == 3 && n > 2) {
        n--; /* truncated */
    }
    return n;
}

static int compare_one(const etype *t, wk_pg_format f, const uint8_t *p, size_t n, size_t cap,
                       bool with_nulls, wk_arena *arena)
{
    uint8_t want[16 * 8], got[16 * 8];
    bool wnulls[16], gnulls[16];
    size_t wcount = 0;
    memset(want, 0, sizeof want);
    memset(got, 0, sizeof got);
    wk_status ws = reference(t, f, p, n, want, wnulls, with_nulls, cap, &wcount, arena);
    const wk_pg_decoder *ad = wk_pg_registry_find_decoder(pgt_reg(), t->arr, f, WK_PG_KIND_ARRAY);
    wk_pg_carray ca = {t->kind, got, with_nulls ? gnulls : NULL, cap, 0};
    wk_error err = {0};
    wk_status gs = wk_pg_decode_array(ad, p, n, &ca, arena, &err);
    /* The scan (oracle) decoder must agree too. */
    wk_pg_decoder sd;
    uint8_t got2[16 * 8];
    memset(got2, 0, sizeof got2);
    wk_pg_carray cb = {t->kind, got2, with_nulls ? gnulls : NULL, cap, 0};
    wk_status gs2 = wk__pg_registry_scan_decoder(pgt_reg(), t->arr, f, WK_PG_KIND_ARRAY, &sd)
                        ? wk_pg_decode_array(&sd, p, n, &cb, arena, NULL)
                        : WK_ERR_NOT_FOUND;
    if (gs != ws || gs2 != ws) {
        fprintf(stderr, "status %d / scan %d, want %d for %.*s (kind %d)\n", (int)gs, (int)gs2,
                (int)ws, (int)n, (const char *)p, (int)t->kind);
        return 0;
    }
    if (ws == WK_ERR_LIMIT && (ca.count != wcount)) {
        fprintf(stderr, "count %zu want %zu for %.*s\n", ca.count, wcount, (int)n,
                (const char *)p);
        return 0;
    }
    if (ws != WK_OK) {
        return 1;
    }
    if (ca.count != wcount || cb.count != wcount ||
        memcmp(got, want, wcount * t->size) != 0 || memcmp(got2, want, wcount * t->size) != 0 ||
        (with_nulls && memcmp(gnulls, wnulls, wcount) != 0)) {
        fprintf(stderr, "values differ for %.*s (kind %d)\n", (int)n, (const char *)p,
                (int)t->kind);
        return 0;
    }
    return 1;
}

WK_TEST(test_pg_carray_fast_path_equals_general_path_on_random_literals)
{
    srand(12345);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    int fails = 0, cases = 0;
    for (int i = 0; i < 40000 && fails < 5; i++) {
        char lit[1024];
        size_t n = rnd_literal(lit, sizeof lit);
        const etype *t = &types[(unsigned)rand() % (sizeof types / sizeof types[0])];
        size_t cap = rand() % 5 == 0 ? (size_t)(rand() % 4) : 16;
        fails += !compare_one(t, WK_PG_TEXT, (const uint8_t *)lit, n, cap, rand() % 2 == 0,
                              &arena);
        cases++;
        /* The same value in binary (when PostgreSQL text input accepts it). */
        const uint8_t *bin;
        size_t bn;
        if (i % 8 == 0 && pgt_from_text(t->arr, WK_PG_BINARY, lit, &bin, &bn, NULL) == WK_OK) {
            uint8_t copy[2048];
            memcpy(copy, bin, bn);
            fails += !compare_one(t, WK_PG_BINARY, copy, bn, 16, true, &arena);
            cases++;
        }
        wk_arena_reset(&arena);
    }
    wk_arena_free(&arena);
    CHECK_MSG(fails == 0, "%d of %d cases differ", fails, cases);
}

WK_TEST(test_pg_carray_decodes_plain_and_hard_literals)
{
    const wk_pg_decoder *d =
        wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_INT4_ARRAY, WK_PG_TEXT, WK_PG_KIND_ARRAY);
    int32_t v[4];
    bool nulls[4];
    wk_pg_carray ca = {WK_PG_KIND_I32, v, nulls, 4, 0};
    CHECK_OK(wk_pg_decode_array(d, "{100,-200,300}", 14, &ca, NULL, NULL));
    CHECK(ca.count == 3 && v[0] == 100 && v[1] == -200 && v[2] == 300 && !nulls[1]);
    const char *hard = " { 7 , NULL , \"8\" } ";
    CHECK_OK(wk_pg_decode_array(d, hard, strlen(hard), &ca, NULL, NULL));
    CHECK(ca.count == 3 && v[0] == 7 && nulls[1] && v[1] == 0 && v[2] == 8);
    CHECK_OK(wk_pg_decode_array(d, "{}", 2, &ca, NULL, NULL));
    CHECK(ca.count == 0);
    const wk_pg_decoder *f8 = wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_FLOAT8_ARRAY,
                                                          WK_PG_TEXT, WK_PG_KIND_ARRAY);
    double dv[4];
    wk_pg_carray cd = {WK_PG_KIND_F64, dv, NULL, 4, 0};
    CHECK_OK(wk_pg_decode_array(f8, "{1.5,2.5,3.5}", 13, &cd, NULL, NULL));
    CHECK(cd.count == 3 && dv[0] == 1.5 && dv[2] == 3.5);
}

WK_TEST(test_pg_carray_reports_nulls_dimensions_capacity_and_bad_elements)
{
    const wk_pg_decoder *d =
        wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_INT2_ARRAY, WK_PG_TEXT, WK_PG_KIND_ARRAY);
    int16_t v[2];
    wk_pg_carray ca = {WK_PG_KIND_I16, v, NULL, 2, 0};
    wk_error err = {0};
    CHECK_STATUS(wk_pg_decode_array(d, "{1,NULL}", 8, &ca, NULL, &err), WK_ERR_TYPE);
    CHECK_STATUS(wk_pg_decode_array(d, "{{1},{2}}", 9, &ca, NULL, &err), WK_ERR_TYPE);
    CHECK_STATUS(wk_pg_decode_array(d, "{1,2,3}", 7, &ca, NULL, &err), WK_ERR_LIMIT);
    CHECK(ca.count == 3);
    CHECK_STATUS(wk_pg_decode_array(d, "{1,40000}", 9, &ca, NULL, &err), WK_ERR_SYNTAX);
    CHECK(err.offset == 3);
    CHECK_STATUS(wk_pg_decode_array(d, "{1,2", 4, &ca, NULL, &err), WK_ERR_TRUNCATED);
    wk_pg_carray bad = {WK_PG_KIND_ARRAY, v, NULL, 2, 0};
    CHECK_STATUS(wk_pg_decode_array(d, "{1}", 3, &bad, NULL, &err), WK_ERR_ARG);
    const wk_pg_decoder *scalar =
        wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_INT2, WK_PG_TEXT, WK_PG_KIND_I16);
    CHECK_STATUS(wk_pg_decode_array(scalar, "{1}", 3, &ca, NULL, &err), WK_ERR_ARG);
    wk_pg_carray uu = {WK_PG_KIND_UUID, v, NULL, 0, 0};
    CHECK_STATUS(wk_pg_decode_array(d, "{1}", 3, &uu, NULL, &err), WK_ERR_NOT_FOUND);
}



/* Binary 1-D arrays of fixed-size elements are written in one block: the bytes must be the
 * header plus, per element, its length word and the element encoder's own bytes. */
WK_TEST(test_pg_carray_binary_array_encode_block_equals_per_element_bytes)
{
    static const struct {
        wk_pg_kind kind;
        size_t size;
        wk_pg_oid elem;
    } ks[] = {{WK_PG_KIND_I16, 2, WK_PG_OID_INT2}, {WK_PG_KIND_I32, 4, WK_PG_OID_INT4},
              {WK_PG_KIND_I64, 8, WK_PG_OID_INT8}, {WK_PG_KIND_F32, 4, WK_PG_OID_FLOAT4},
              {WK_PG_KIND_F64, 8, WK_PG_OID_FLOAT8}};
    srand(777);
    for (int round = 0; round < 500; round++) {
        size_t ki = (size_t)rand() % 5;
        uint8_t elems[16 * 8];
        for (size_t i = 0; i < sizeof elems; i++) {
            elems[i] = (uint8_t)rand();
        }
        size_t n = 1 + (size_t)rand() % 16;
        const wk_pg_encoder *ae =
            wk_pg_registry_find_array_encoder(pgt_reg(), WK_PG_BINARY, ks[ki].kind);
        const wk_pg_encoder *ee = wk_pg_registry_find_encoder(pgt_reg(), WK_PG_BINARY, ks[ki].kind);
        CHECK(ae != NULL && ee != NULL && ee->oid == ks[ki].elem);
        wk_pg_array_in in;
        wk_pg_array_in_1d(&in, ks[ki].kind, elems, n, NULL);
        in.lbounds[0] = rand() % 3 - 1;
        wk_buf got, want;
        wk_buf_init(&got, NULL, 0);
        wk_buf_init(&want, NULL, 0);
        CHECK_OK(wk_buf_append(&got, "x", 1));
        CHECK_OK(wk_pg_encode(ae, &in, &got, NULL));
        uint8_t h[20] = {0, 0, 0, 1, 0, 0, 0, 0};
        h[8] = (uint8_t)(ks[ki].elem >> 24);
        h[9] = (uint8_t)(ks[ki].elem >> 16);
        h[10] = (uint8_t)(ks[ki].elem >> 8);
        h[11] = (uint8_t)ks[ki].elem;
        h[15] = (uint8_t)n;
        h[16] = h[17] = h[18] = in.lbounds[0] < 0 ? 0xff : 0;
        h[19] = (uint8_t)in.lbounds[0];
        CHECK_OK(wk_buf_append(&want, "x", 1));
        CHECK_OK(wk_buf_append(&want, h, 20));
        for (size_t i = 0; i < n; i++) {
            uint8_t len[4] = {0, 0, 0, (uint8_t)ks[ki].size};
            CHECK_OK(wk_buf_append(&want, len, 4));
            CHECK_OK(wk_pg_encode(ee, elems + i * ks[ki].size, &want, NULL));
        }
        CHECK_MEM(got.data, got.len, want.data, want.len);
        wk_buf_free(&got);
        wk_buf_free(&want);
    }
}
