/*
 * numeric: binary layout as numeric_send, text output with every digit and the display scale,
 * specials (NaN and +/-Infinity with PostgreSQL 15's dscale), conversions, hostile bytes.
 */
#include <math.h>
#include <stdlib.h>

#include "pg_test_util.h"
#include "wk_test.h"

static const char *const canon[][2] = {
    {"0", "0"},
    {"0.000", "0.000"},
    {"-0.0", "0.0"},
    {"1.50", "1.50"},
    {"123456789.123", "123456789.123"},
    {"1e-20", "0.00000000000000000001"},
    {"0.00012", "0.00012"},
    {"-99999999999999999999999999999999.99999", "-99999999999999999999999999999999.99999"},
    {"1.5e3", "1500"},
    {"12345678901234567890", "12345678901234567890"},
    {"10000", "10000"},
    {"0.0001", "0.0001"},
    {" +7 ", "7"},
    {"NaN", "NaN"},
    {"Infinity", "Infinity"},
    {"-inf", "-Infinity"},
};

WK_TEST(test_pg_numeric_round_trips_postgresql_text)
{
    char why[256];
    for (size_t i = 0; i < sizeof canon / sizeof canon[0]; i++) {
        CHECK_MSG(pgt_roundtrip(WK_PG_OID_NUMERIC, canon[i][0], canon[i][1], why, sizeof why),
                  "%s", why);
    }
}

WK_TEST(test_pg_numeric_binary_matches_numeric_send)
{
    /* Byte strings captured from PostgreSQL 15's numeric_send. */
    static const char *const pairs[][2] = {
        {"1.50", "000200000000000200011388"},
        {"0.000", "0000000000000003"},
        {"NaN", "00000000c0000000"},
        {"-Infinity", "00000000f0000020"},
        {"123456789.123", "0004000200000003000109291a8504ce"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        uint8_t want[64];
        size_t wn = wk_test_hex(pairs[i][1], want, sizeof want);
        const char *text;
        CHECK_OK(pgt_to_text(WK_PG_OID_NUMERIC, WK_PG_BINARY, want, wn, &text, NULL));
        CHECK_STR(text, pairs[i][0]);
        if (strcmp(pairs[i][0], "-Infinity") != 0) {
            const uint8_t *b;
            size_t n;
            CHECK_OK(pgt_from_text(WK_PG_OID_NUMERIC, WK_PG_BINARY, pairs[i][0], &b, &n, NULL));
            CHECK_MEM(b, n, want, wn);
        }
    }
}

WK_TEST(test_pg_numeric_converts_exactly_to_int64_and_double)
{
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    wk_pg_numeric num;
    int64_t i;
    CHECK_OK(wk_pg_numeric_parse("-9223372036854775808", 20, &a, &num, NULL));
    CHECK_OK(wk_pg_numeric_to_i64(&num, &i));
    CHECK(i == INT64_MIN);
    CHECK_OK(wk_pg_numeric_parse("9223372036854775808", 19, &a, &num, NULL));
    CHECK_STATUS(wk_pg_numeric_to_i64(&num, &i), WK_ERR_RANGE);
    CHECK_OK(wk_pg_numeric_parse("12.000", 6, &a, &num, NULL));
    CHECK_OK(wk_pg_numeric_to_i64(&num, &i));
    CHECK_EQ(i, 12);
    CHECK_OK(wk_pg_numeric_parse("12.5", 4, &a, &num, NULL));
    CHECK_STATUS(wk_pg_numeric_to_i64(&num, &i), WK_ERR_RANGE);
    CHECK_OK(wk_pg_numeric_parse("NaN", 3, &a, &num, NULL));
    CHECK_STATUS(wk_pg_numeric_to_i64(&num, &i), WK_ERR_RANGE);
    double d;
    CHECK_OK(wk_pg_numeric_parse("0.1", 3, &a, &num, NULL));
    CHECK_OK(wk_pg_numeric_to_double(&num, &d));
    CHECK(d == 0.1);
    CHECK_OK(wk_pg_numeric_parse("-1e300", 6, &a, &num, NULL));
    CHECK_OK(wk_pg_numeric_to_double(&num, &d));
    CHECK(d == -1e300);
    uint16_t store[WK_PG_NUMERIC_I64_DIGITS];
    wk_pg_numeric_from_i64(INT64_MIN, store, &num);
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    CHECK_OK(wk_pg_numeric_format(&num, &b));
    CHECK_MEM(b.data, b.len, "-9223372036854775808", 20);
    wk_buf_clear(&b);
    wk_pg_numeric_from_i64(100000000, store, &num);
    CHECK_EQ(num.ndigits, 1);
    CHECK_EQ(num.weight, 2);
    CHECK_OK(wk_pg_numeric_format(&num, &b));
    CHECK_MEM(b.data, b.len, "100000000", 9);
    wk_buf_clear(&b);
    CHECK_OK(wk_pg_numeric_from_double(0.1, &a, &num, NULL));
    CHECK_OK(wk_pg_numeric_format(&num, &b));
    CHECK_MEM(b.data, b.len, "0.1", 3);
    wk_buf_clear(&b);
    CHECK_OK(wk_pg_numeric_from_double(-1.5e-7, &a, &num, NULL));
    CHECK_OK(wk_pg_numeric_format(&num, &b));
    CHECK_MEM(b.data, b.len, "-0.00000015", 11);
    wk_buf_free(&b);
    wk_arena_free(&a);
}

WK_TEST(test_pg_numeric_decodes_into_i64_and_f64_kinds)
{
    const uint8_t *bin;
    size_t n;
    CHECK_OK(pgt_from_text(WK_PG_OID_NUMERIC, WK_PG_BINARY, "-42", &bin, &n, NULL));
    uint8_t copy[64];
    memcpy(copy, bin, n);
    const wk_pg_decoder *d =
        wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_NUMERIC, WK_PG_BINARY, WK_PG_KIND_I64);
    int64_t i = 0;
    CHECK_OK(wk_pg_decode(d, copy, n, &i, NULL, NULL)); /* no arena needed */
    CHECK_EQ(i, -42);
    d = wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_NUMERIC, WK_PG_BINARY, WK_PG_KIND_NUMERIC);
    wk_pg_numeric num;
    CHECK_STATUS(wk_pg_decode(d, copy, n, &num, NULL, NULL), WK_ERR_ARG);
}

WK_TEST(test_pg_numeric_rejects_hostile_binary)
{
    static const struct {
        const char *hex;
        wk_status want;
    } bad[] = {
        {"00020000000000020001", WK_ERR_SYNTAX},       /* 2 digits announced, 1 present */
        {"0001000000000000000100", WK_ERR_SYNTAX},     /* odd trailing byte */
        {"00010000800000000001", WK_ERR_SYNTAX},       /* invalid sign */
        {"00010000000040000001", WK_ERR_SYNTAX},       /* dscale above 0x3FFF */
        {"00010000000000002710", WK_ERR_SYNTAX},       /* digit 10000 */
        {"000100000000", WK_ERR_TRUNCATED},            /* header cut */
        {"ffff000000000000", WK_ERR_SYNTAX},           /* 65535 digits, none present */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint8_t buf[64];
        size_t n = wk_test_hex(bad[i].hex, buf, sizeof buf);
        uint8_t *exact = malloc(n);
        memcpy(exact, buf, n);
        const char *text;
        wk_error err = {0};
        wk_status st = pgt_to_text(WK_PG_OID_NUMERIC, WK_PG_BINARY, exact, n, &text, &err);
        free(exact);
        CHECK_MSG(st == bad[i].want, "case %zu: got %s", i, wk_status_str(st));
        CHECK(err.msg != NULL);
    }
}

WK_TEST(test_pg_numeric_rejects_invalid_text)
{
    static const char *const bad[] = {"", "-", "1.2.3", "1e", "abc", "1e1001", "--1", ".", "1 2"};
    wk_arena a;
    wk_arena_init(&a, NULL, 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wk_pg_numeric num;
        wk_error err = {0};
        wk_status st = wk_pg_numeric_parse(bad[i], strlen(bad[i]), &a, &num, &err);
        CHECK_MSG(st != WK_OK && err.msg != NULL, "'%s' was accepted", bad[i]);
    }
    wk_arena_free(&a);
}
