/*
 * Shortest-digit printing (src/core/dtoa.c) checked against glibc's correctly rounded printf
 * and strtod/strtof: every output reads back to the same bits, no decimal one digit shorter
 * does, and when printf's nearest decimal of the same length reads back, the digits are the
 * same (closest wins). Millions of random bit patterns, plus powers of two (asymmetric
 * rounding intervals), subnormals and short decimals that must come back as typed.
 * WK_DTOA_EXHAUSTIVE=1 in the environment checks every float (minutes).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/dtoa_interface.h"
#include "wk_test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double from_bits(uint64_t b)
{
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static uint64_t to_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}
static float from_bits32(uint32_t b)
{
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static uint32_t to_bits32(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* Reads "digits e exp" back as |v| (double or float). */
static bool reads_back(const char *digits, int n, int e, double v, bool f32)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*se%d", n, digits, e);
    if (f32) {
        return to_bits32(strtof(buf, NULL)) == to_bits32(fabsf((float)v));
    }
    return to_bits(strtod(buf, NULL)) == to_bits(fabs(v));
}

/* printf's nearest decimal of `n` significant digits: digits into out (n chars), returns the
 * exponent of the last digit. */
static int nearest_digits(double v, int n, char *out)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*e", n - 1, fabs(v));
    int j = 0;
    const char *p = buf;
    for (; *p != 'e'; p++) {
        if (*p != '.') {
            out[j++] = *p;
        }
    }
    return (int)strtol(p + 1, NULL, 10) - (n - 1);
}

/* Adds `delta` (+1/-1) to the decimal integer digits[0..n); false when the length changes. */
static bool bump(char *d, int n, int delta)
{
    for (int i = n - 1; i >= 0; i--) {
        int c = d[i] - '0' + delta;
        if (c >= 0 && c <= 9) {
            d[i] = (char)('0' + c);
            return d[0] != '0';
        }
        d[i] = delta > 0 ? '0' : '9';
    }
    return false;
}

/* Returns NULL when `v` is printed correctly, or what is wrong. */
static const char *check_one(double v, bool f32)
{
    char digits[17];
    int e;
    int n = f32 ? wk__ftoa_shortest((float)v, digits, &e) : wk__dtoa_shortest(v, digits, &e);
    if (n < 1 || n > (f32 ? 9 : 17)) {
        return "digit count out of range";
    }
    if (v == 0) {
        return (n == 1 && digits[0] == '0' && e == 0) ? NULL : "zero not printed as 0";
    }
    if (digits[0] == '0' || digits[n - 1] == '0') {
        return "leading or trailing zero";
    }
    if (!reads_back(digits, n, e, v, f32)) {
        return "does not read back";
    }
    if (n > 1) {
        char shorter[20];
        int se = nearest_digits(v, n - 1, shorter);
        for (int delta = -1; delta <= 1; delta++) {
            char cand[20];
            memcpy(cand, shorter, (size_t)(n - 1));
            if (delta != 0 && !bump(cand, n - 1, delta)) {
                continue;
            }
            if (reads_back(cand, n - 1, se, v, f32)) {
                return "a shorter decimal reads back";
            }
        }
    }
    char near[20];
    int ne = nearest_digits(v, n, near);
    if (reads_back(near, n, ne, v, f32) && (memcmp(near, digits, (size_t)n) != 0 || ne != e)) {
        return "not the closest decimal of its length";
    }
    return NULL;
}

#define CHECK_PRINTS(v, f32)                                                              \
    do {                                                                                  \
        const char *wk__why = check_one((v), (f32));                                      \
        CHECK_MSG(wk__why == NULL, "%s: %.17g (%s)", wk__why, (double)(v),              \
                  (f32) ? "float" : "double");                                           \
    } while (0)

WK_TEST(test_dtoa_prints_known_values)
{
    static const struct {
        double v;
        const char *digits;
        int e;
    } cases[] = {
        {0.0, "0", 0},
        {1.0, "1", 0},
        {0.1, "1", -1},
        {0.3, "3", -1},
        {123.456, "123456", -3},
        {1e23, "1", 23},
        {5e-324, "5", -324},
        {1e-323, "1", -323},
        {2.2250738585072014e-308, "22250738585072014", -324},
        {1.7976931348623157e308, "17976931348623157", 292},
        {9007199254740992.0, "9007199254740992", 0},
        {4.35, "435", -2},
        {1e21, "1", 21},
        {-2.5, "25", -1},
        {100.0, "1", 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char digits[17];
        int e;
        int n = wk__dtoa_shortest(cases[i].v, digits, &e);
        CHECK_MSG(n == (int)strlen(cases[i].digits) && memcmp(digits, cases[i].digits,
                                                              (size_t)n) == 0 &&
                      e == cases[i].e,
                  "%.17g: got %.*s e%d, want %s e%d", cases[i].v, n, digits, e,
                  cases[i].digits, cases[i].e);
    }
}

WK_TEST(test_dtoa_rejects_non_finite)
{
    char digits[17];
    int e = 7;
    CHECK_EQ(wk__dtoa_shortest(NAN, digits, &e), 0);
    CHECK_EQ(wk__dtoa_shortest(-INFINITY, digits, &e), 0);
    CHECK_EQ(wk__ftoa_shortest(INFINITY, digits, &e), 0);
    char out[WK__DTOA_JSON_MAX];
    CHECK_EQ(wk__dtoa_json(NAN, out), 0);
}

WK_TEST(test_ftoa_prints_known_values)
{
    static const struct {
        float v;
        const char *digits;
        int e;
    } cases[] = {
        {0.1f, "1", -1},      {1.0f, "1", 0},         {3.4028235e38f, "34028235", 31},
        {1e-45f, "1", -45},   {1.17549435e-38f, "11754944", -45}, {16777216.0f, "16777216", 0},
        {0.3f, "3", -1},      {123.456f, "123456", -3},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char digits[9];
        int e;
        int n = wk__ftoa_shortest(cases[i].v, digits, &e);
        CHECK_MSG(n == (int)strlen(cases[i].digits) && memcmp(digits, cases[i].digits,
                                                              (size_t)n) == 0 &&
                      e == cases[i].e,
                  "%.9g: got %.*s e%d, want %s e%d", (double)cases[i].v, n, digits, e,
                  cases[i].digits, cases[i].e);
    }
}

WK_TEST(test_dtoa_json_text_reads_back_as_float)
{
    static const struct {
        double v;
        const char *text;
    } cases[] = {
        {0.0, "0.0"},       {-0.0, "-0.0"},           {1.0, "1.0"},
        {-1.5, "-1.5"},     {0.001, "0.001"},         {1e-6, "0.000001"},
        {1e-7, "1e-7"},     {1.5e-7, "1.5e-7"},       {123456.789, "123456.789"},
        {1e20, "100000000000000000000.0"},            {1e21, "1e21"},
        {1.2345e22, "1.2345e22"},                     {5e-324, "5e-324"},
        {1.7976931348623157e308, "1.7976931348623157e308"},
        {-2.2250738585072014e-308, "-2.2250738585072014e-308"},
        {0.30000000000000004, "0.30000000000000004"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char out[WK__DTOA_JSON_MAX];
        size_t n = wk__dtoa_json(cases[i].v, out);
        CHECK_MSG(n == strlen(cases[i].text) && memcmp(out, cases[i].text, n) == 0,
                  "%.17g: got '%.*s', want '%s'", cases[i].v, (int)n, out, cases[i].text);
    }
    char out[WK__DTOA_JSON_MAX];
    size_t n = wk__ftoa_json(0.1f, out);
    CHECK_MEM(out, n, "0.1", 3);
}

WK_TEST(test_dtoa_shortest_on_random_doubles)
{
    long count = getenv("WK_DTOA_COUNT") != NULL ? strtol(getenv("WK_DTOA_COUNT"), NULL, 10)
                                                 : 2000000;
    for (long i = 0; i < count; i++) {
        double v = from_bits(rng());
        if (!isfinite(v)) {
            continue;
        }
        CHECK_PRINTS(v, false);
    }
}

WK_TEST(test_dtoa_shortest_on_powers_of_two_and_subnormals)
{
    for (int k = -1074; k <= 1023; k++) {
        CHECK_PRINTS(ldexp(1.0, k), false);
        CHECK_PRINTS(nextafter(ldexp(1.0, k), 0.0), false);
        CHECK_PRINTS(nextafter(ldexp(1.0, k), INFINITY), false);
    }
    for (uint64_t t = 1; t < 200000; t++) {
        CHECK_PRINTS(from_bits(t), false);
        CHECK_PRINTS(from_bits((1ull << 52) - t), false);
    }
}

WK_TEST(test_dtoa_short_decimals_come_back_as_typed)
{
    for (int i = 0; i < 300000; i++) {
        uint64_t m = rng() % 10000000 + 1;
        while (m % 10 == 0) {
            m /= 10;
        }
        int e = (int)(rng() % 600) - 320;
        char text[40];
        snprintf(text, sizeof text, "%llue%d", (unsigned long long)m, e);
        double v = strtod(text, NULL);
        if (v == 0 || !isfinite(v) || v < 2.3e-308) {
            continue; /* out of range or subnormal (fewer digits may suffice) */
        }
        char digits[17];
        int de;
        int n = wk__dtoa_shortest(v, digits, &de);
        char got[40];
        snprintf(got, sizeof got, "%.*se%d", n, digits, de);
        CHECK_MSG(strcmp(got, text) == 0, "%s printed as %s", text, got);
    }
}

WK_TEST(test_ftoa_shortest_on_random_and_subnormal_floats)
{
    long count = getenv("WK_DTOA_COUNT") != NULL ? strtol(getenv("WK_DTOA_COUNT"), NULL, 10)
                                                 : 2000000;
    for (long i = 0; i < count; i++) {
        float v = from_bits32((uint32_t)rng());
        if (!isfinite(v)) {
            continue;
        }
        CHECK_PRINTS(v, true);
    }
    for (uint32_t t = 1; t < (1u << 23); t += 7) {
        CHECK_PRINTS(from_bits32(t), true);
    }
    for (int k = -149; k <= 127; k++) {
        CHECK_PRINTS(ldexpf(1.0f, k), true);
        CHECK_PRINTS(nextafterf(ldexpf(1.0f, k), 0.0f), true);
    }
}

WK_TEST(test_ftoa_shortest_on_every_float)
{
    if (getenv("WK_DTOA_EXHAUSTIVE") == NULL) {
        SKIP("set WK_DTOA_EXHAUSTIVE=1 to check all 2^32 floats");
    }
    for (uint64_t b = 0; b < (1ull << 31); b++) {
        float v = from_bits32((uint32_t)b);
        if (!isfinite(v)) {
            continue;
        }
        CHECK_PRINTS(v, true);
    }
}

/* The JSON layout of digits[0..n) * 10^e spelled out byte by byte: the reference that
 * wk__dtoa_json's word stores and fixed-size moves must give (dtoa_interface.h's rule). */
static size_t layout_reference(bool neg, const char *digits, int n, int e, char *out)
{
    size_t k = 0;
    if (neg) {
        out[k++] = '-';
    }
    int pos = n + e;
    int x = pos - 1;
    if (x >= -6 && x < 21) {
        if (pos <= 0) {
            out[k++] = '0';
            out[k++] = '.';
            for (int i = 0; i < -pos; i++) {
                out[k++] = '0';
            }
            for (int i = 0; i < n; i++) {
                out[k++] = digits[i];
            }
        } else {
            for (int i = 0; i < pos; i++) {
                out[k++] = i < n ? digits[i] : '0';
            }
            out[k++] = '.';
            if (pos < n) {
                for (int i = pos; i < n; i++) {
                    out[k++] = digits[i];
                }
            } else {
                out[k++] = '0';
            }
        }
        return k;
    }
    out[k++] = digits[0];
    if (n > 1) {
        out[k++] = '.';
        for (int i = 1; i < n; i++) {
            out[k++] = digits[i];
        }
    }
    k += (size_t)snprintf(out + k, 8, "e%d", x);
    return k;
}

/* One value through wk__dtoa_json into a heap block of exactly WK__DTOA_JSON_MAX bytes (the
 * ASan build catches a store past the room), compared with the reference layout. */
static bool json_layout_matches(double v)
{
    char digits[17];
    int e;
    int n = wk__dtoa_shortest(v, digits, &e);
    char want[64];
    size_t wn = layout_reference(signbit(v) != 0, digits, n, e, want);
    char *out = malloc(WK__DTOA_JSON_MAX);
    if (out == NULL) {
        return false;
    }
    size_t got = wk__dtoa_json(v, out);
    bool ok = got == wn && memcmp(out, want, wn) == 0;
    if (!ok) {
        fprintf(stderr, "%.17g: got '%.*s', want '%.*s'\n", v, (int)got, out, (int)wn, want);
    }
    free(out);
    return ok;
}

WK_TEST(test_dtoa_json_layout_in_every_case_stays_in_its_room)
{
    /* each layout at its edges: 0.000ddd with 17 digits, a fraction after 1 to 16 integer
     * digits, integers with up to 20 zeros before ".0", and scientific notation */
    static const double edges[] = {
        -0.0000012345678901234567, 0.000001, 0.0000099999999999999991, 0.1, 0.12345678901234566,
        1.2345678901234567,        12.345678901234567, 123456789.01234567, 1234567890123456.8,
        123456789012345.67,        12345678901234568.0, 1e20, 1.2345e20, 99999999999999991611392.0,
        -1e-7,                     1e21, 1.7976931348623157e308, 5e-324, -2.2250738585072014e-308,
        100.0,                     1e16, 123.0, 9007199254740993.0,
        /* the short layout's edges (the point within the first 8 digits, or before them) */
        1.0, 0.5, 99999999.0, 12345678.5, 99999999.999999985, 100000000.5, 0.0000010000000000000002,
        -0.00000099999999999999995, 1.7, 10000000.0, 65.613616999999977, -65.625,
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
        CHECK(json_layout_matches(edges[i]));
    }
    /* random significands at every decimal magnitude the plain layouts cover, and random bit
     * patterns */
    for (int mag = -8; mag <= 23; mag++) {
        for (int i = 0; i < 2000; i++) {
            double v = (double)(rng() >> 11) / 9007199254740992.0 * pow(10.0, mag);
            if (i & 1) {
                v = -v;
            }
            if (i % 7 == 0) {
                v = round(v); /* integers: the zero-filled layout */
            }
            CHECK(json_layout_matches(v));
        }
    }
    for (int i = 0; i < 200000; i++) {
        double v = from_bits(rng());
        if (isfinite(v)) {
            CHECK(json_layout_matches(v));
        }
    }
}
