/*
 * Correctly rounded number parsing: the JSON lexer (and so both parsers) must give exactly
 * strtod's double in the "C" locale for every number text. Random mantissas of 1 to 40
 * digits over the whole exponent range, exact halfway points between neighbouring doubles
 * (and a hair above and below them, also beyond 800 digits), subnormals, overflow and
 * underflow, and each tier of the converter on its own. Also the lexer's word-at-a-time fast
 * paths against its byte-at-a-time ones on every truncation: integer digits, UTF-8 runs.
 */
#include <math.h>
#include <stdlib.h>

#include "formats/json/lex.h"
#include "json_test_util.h"

static uint64_t rng_state = 0x243f6a8885a308d3ull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t bits_of(double d)
{
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}

/* Lexes `text` (a complete JSON number) and returns the double, or NAN bits on failure. */
static bool lex_double(const char *text, size_t len, double *out)
{
    wk__json_num num = {0, {0}};
    wk__json_fail f;
    const uint8_t *p = (const uint8_t *)text;
    const uint8_t *e = wk__json_lex_number(p, p + len, false, &num, &f);
    if (e != p + len) {
        return false;
    }
    switch (num.kind) {
    case WK__NUM_DOUBLE:
        *out = num.v.d;
        return true;
    case WK__NUM_UINT:
        *out = (double)num.v.u;
        return true;
    case WK__NUM_INT:
        *out = (double)num.v.i;
        return true;
    default:
        return false;
    }
}

#define CHECK_PARSES_LIKE_STRTOD(text, len)                                               \
    do {                                                                                  \
        double wk__got;                                                                   \
        double wk__want = strtod((text), NULL);                                           \
        CHECK_MSG(lex_double((text), (len), &wk__got), "'%.80s' not lexed", (text));      \
        CHECK_MSG(bits_of(wk__got) == bits_of(wk__want), "'%.200s': got %.17g, want %.17g", \
                  (text), wk__got, wk__want);                                            \
    } while (0)

WK_TEST(test_json_numbers_match_strtod_on_known_hard_cases)
{
    static const char *cases[] = {
        "0", "-0", "0.0", "-0.0", "1", "1.5", "0.1", "0.3", "1e23", "8.98846567431158e307",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
        "1e308", "1e309", "1e400", "-1e400", "2.2250738585072011e-308",
        "2.2250738585072012e-308", "2.2250738585072014e-308", "4.9406564584124654e-324",
        "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-324", "1e-400",
        "9007199254740993", "9007199254740992.5", "9007199254740993.0000000000000000001",
        "18446744073709551616", "123456789012345678901234567890", "0.000001", "1e-7",
        "7.2057594037927933e16", "3.0517578125e-05", "2.9802322387695312e-08",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126",
        "100000000000000000000000", "0.1e-320", "123e-10000000", "123123e100000",
        "0e99999999999999999999", "1e-99999999999999999999", "1e99999999999999999999",
        "0.4e00669999999999999999999999999999999999999999999999999999999999999999999999999",
        "6.631236846766476e-316", "3.2378839133029012e+283", "1.2345678901234567890e-300",
        "4.4501477170144023e-308", "2.2250738585072012e-308",
        "9.999999999999999999999999e-1", "7.0e-10", "1234567890123456789e-20",
        "179769313486231580793728971405303415079934132710037826936173778980444968292764"
        "750946649017977587207096330286416692887910946555547851940402630657488671505820"
        "681908902000708383676273854845817711531764475730270069855571366959622842914819"
        "860834936475292719074168444365510704342711559699508093042880177904174497791.9999",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_PARSES_LIKE_STRTOD(cases[i], strlen(cases[i]));
    }
}

WK_TEST(test_json_numbers_match_strtod_on_random_decimals)
{
    long count = getenv("WK_NUM_COUNT") != NULL ? strtol(getenv("WK_NUM_COUNT"), NULL, 10)
                                                : 1000000;
    char text[128];
    for (long i = 0; i < count; i++) {
        int nd = (int)(rng() % 40) + 1;
        int point = (int)(rng() % (uint64_t)(nd + 1));
        int e = (int)(rng() % 700) - 350;
        char *p = text;
        if (rng() & 1) {
            *p++ = '-';
        }
        /* first digit nonzero unless it is the only integer digit */
        for (int d = 0; d < nd; d++) {
            if (d == point && d != 0) {
                *p++ = '.';
            }
            int dig = (int)(rng() % 10);
            if (d == 0 && dig == 0 && point != 1) {
                dig = 1;
            }
            *p++ = (char)('0' + dig);
        }
        if (rng() % 4 != 0) {
            p += snprintf(p, 16, "e%d", e);
        }
        *p = 0;
        CHECK_PARSES_LIKE_STRTOD(text, (size_t)(p - text));
    }
}

WK_TEST(test_json_numbers_match_strtod_on_random_doubles_printed_17_digits)
{
    long count = getenv("WK_NUM_COUNT") != NULL ? strtol(getenv("WK_NUM_COUNT"), NULL, 10)
                                                : 1000000;
    char text[64];
    for (long i = 0; i < count; i++) {
        uint64_t b = rng();
        double d;
        memcpy(&d, &b, 8);
        if (!isfinite(d)) {
            continue;
        }
        int n = snprintf(text, sizeof text, "%.*e", (int)(rng() % 17) + 1, d);
        CHECK_PARSES_LIKE_STRTOD(text, (size_t)n);
    }
}

/* Exact decimal expansion of the midpoint between d and its upper neighbour (a long double
 * holds it exactly: 54 significant bits). */
static int midpoint_text(double d, char *out, size_t cap)
{
    long double m = ((long double)d + (long double)nextafter(d, INFINITY)) / 2;
    return snprintf(out, cap, "%.1100Le", m);
}

/* Strips trailing zeros of the mantissa part of "d.ddddde±x". */
static size_t strip_zeros(char *s)
{
    char *e = strchr(s, 'e');
    char *q = e;
    while (q[-1] == '0') {
        q--;
    }
    memmove(q, e, strlen(e) + 1);
    return strlen(s);
}

WK_TEST(test_json_numbers_round_halfway_cases_to_even)
{
    static char text[1300];
    static char alt[1400];
    for (int i = 0; i < 20000; i++) {
        uint64_t b = rng() & 0x7fefffffffffffffull;
        if (i % 4 == 0) {
            b &= 0x000fffffffffffffull; /* subnormal */
        } else if (i % 4 == 1) {
            b = (b & 0x800fffffffffffffull) | ((uint64_t)(rng() % 120 + 1000) << 52);
        }
        double d;
        memcpy(&d, &b, 8);
        midpoint_text(d, text, sizeof text);
        size_t n = strip_zeros(text);
        CHECK_PARSES_LIKE_STRTOD(text, n);
        /* A hair above: a nonzero digit far beyond the 800 kept ones. */
        char *e = strchr(text, 'e');
        size_t mant = (size_t)(e - text);
        memcpy(alt, text, mant);
        size_t k = mant;
        while (k < 1000) {
            alt[k++] = '0';
        }
        alt[k++] = '1';
        memcpy(alt + k, e, strlen(e) + 1);
        CHECK_PARSES_LIKE_STRTOD(alt, strlen(alt));
        /* A hair below: last digit minus one (it is a 5). */
        text[mant - 1] = '4';
        CHECK_PARSES_LIKE_STRTOD(text, n);
    }
}

WK_TEST(test_json_number_tiers_agree_with_each_other)
{
    /* Eisel-Lemire, when it answers, equals the exact fallback. */
    char text[64];
    int answered = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t w = rng() >> (rng() % 64);
        int q = (int)(rng() % 700) - 350;
        double el;
        int n = snprintf(text, sizeof text, "%llue%d", (unsigned long long)w, q);
        double slow = wk__decimal_to_double(text, (size_t)n);
        if (wk__eisel_lemire(w, q, &el)) {
            answered++;
            CHECK_MSG(bits_of(el) == bits_of(slow), "%s: eisel-lemire %.17g, exact %.17g",
                      text, el, slow);
        }
        CHECK_MSG(bits_of(slow) == bits_of(strtod(text, NULL)), "%s: exact path wrong", text);
    }
    CHECK(answered > 150000);
}

WK_TEST(test_json_numbers_do_not_depend_on_the_locale)
{
    /* The lexer never calls strtod; a comma locale changes nothing. Checked by value. */
    double d;
    CHECK(lex_double("1.5", 3, &d));
    CHECK(d == 1.5);
    CHECK(lex_double("-2.25e1", 7, &d));
    CHECK(d == -22.5);
}

/* The integer part is read eight digits a word at a time when eight bytes of input are left,
 * byte by byte otherwise: every prefix of these numbers, alone (short input: the byte loop)
 * and inside an array followed by more digits (the word path, with the non-digit anywhere in
 * the word), gives the same node, whose value is strtoull's / strtod's. */
WK_TEST(test_json_integer_word_path_agrees_with_the_byte_path_on_every_prefix)
{
    static const char *nums[] = {"1234567890123456789012", "-98765432109876543210",
                                 "10000000", "90000000000000000009", "7", "-0",
                                 "123456789.125e3", "18446744073709551615",
                                 "18446744073709551616", "-9223372036854775808",
                                 "-65.613616999999977", "0.000123456789012345678901",
                                 "3.14159265358979323846264338", "1.23456789012e-5",
                                 "98765.4321098765432109876e300"};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0] && !wk__test_failed(); i++) {
        size_t n = strlen(nums[i]);
        for (size_t l = 1; l <= n; l++) {
            char alone[64], inside[96];
            memcpy(alone, nums[i], l);
            alone[l] = '\0';
            snprintf(inside, sizeof inside, "[%s,12345678]", alone);
            wk_arena a;
            wk_arena_init(&a, NULL, 0);
            wk_value *v1 = NULL, *v2 = NULL;
            wk_status s1 = wk_json_decode_value(alone, l, NULL, &a, &v1, NULL, NULL);
            wk_status s2 = wk_json_decode_value(inside, strlen(inside), NULL, &a, &v2, NULL, NULL);
            char last = alone[l - 1];
            bool valid = last >= '0' && last <= '9';
            CHECK_MSG((s1 == WK_OK) == valid && (s2 == WK_OK) == valid, "'%s': %s / %s", alone,
                      wk_status_str(s1), wk_status_str(s2));
            if (valid && s1 == WK_OK && s2 == WK_OK) {
                const wk_value *x = &v2->u.items[0];
                CHECK_MSG(wk_value_equal(v1, x, NULL), "'%s': the two paths differ", alone);
                if (v1->type == WK_VAL_UINT) {
                    CHECK(v1->u.u == strtoull(alone, NULL, 10));
                } else if (v1->type == WK_VAL_INT) {
                    CHECK(v1->u.i == strtoll(alone, NULL, 10));
                } else {
                    CHECK(v1->type == WK_VAL_FLOAT && v1->u.f == strtod(alone, NULL));
                }
            }
            wk_arena_free(&a);
        }
    }
}

/* The word integer path (wk__json_word_int) against the lexer: on random integers of 0 to
 * 22 digits, with and without '-' and leading zeros, followed by each byte that can and
 * cannot continue a number, in a buffer that ends 0 to 24 bytes after the digits (allocated
 * to size, so ASan sees any read past the end). Where it answers it gives the lexer's end,
 * kind and value; it must answer for plain integers of up to 15 digits with 16 bytes of
 * input from the first digit, the case it is there for. */
WK_TEST(test_json_word_int_agrees_with_the_lexer)
{
    static const char follow[] = ",]} \n.eE0x-+";
    for (int iter = 0; iter < 40000 && !wk__test_failed(); iter++) {
        uint64_t r = rng();
        char text[64];
        size_t n = 0;
        bool neg = r & 1;
        if (neg) {
            text[n++] = '-';
        }
        size_t digits = (size_t)((r >> 1) % 23);
        bool lead_zero = ((r >> 6) & 7) == 0;
        for (size_t i = 0; i < digits; i++) {
            uint64_t d = rng() % 10;
            text[n++] = (char)('0' + (i == 0 && !lead_zero && digits > 1 && d == 0 ? 1 : d));
        }
        if (digits > 0 && lead_zero) {
            text[neg] = '0';
        }
        if (((r >> 9) & 15) == 0) {
            /* near the edges: 2^63, 2^64, 10^19 */
            static const char *const edge[] = {"9223372036854775808", "9223372036854775809",
                                               "18446744073709551615", "9999999999999999999",
                                               "1000000000000000000", "0"};
            const char *e = edge[(r >> 13) % 6];
            n = (size_t)neg;
            memcpy(text + n, e, strlen(e));
            n += strlen(e);
            digits = strlen(e);
        }
        if (!neg && digits == 0) {
            continue; /* not a number: both take text that starts with '-' or a digit */
        }
        char after = follow[(r >> 16) % (sizeof follow - 1)];
        text[n++] = after;
        size_t tail = (size_t)((r >> 24) % 25);
        for (size_t i = 0; i < tail; i++) {
            text[n++] = '7';
        }
        size_t len = n - (tail == 0 && (r >> 32) % 2 ? 1 : 0); /* sometimes no byte after */
        uint8_t *buf = malloc(len);
        CHECK(buf != NULL);
        memcpy(buf, text, len);
        wk__json_num fast = {-1, {0}}, slow = {-1, {0}};
        wk__json_fail f;
        const uint8_t *e1 = wk__json_word_int(buf, buf + len, &fast);
        const uint8_t *e2 = wk__json_lex_number(buf, buf + len, false, &slow, &f);
        if (e1 != NULL) {
            CHECK_MSG(e1 == e2 && fast.kind == slow.kind && fast.v.u == slow.v.u,
                      "'%.*s': word path %d %llu at %td, lexer %d %llu at %td", (int)len, text,
                      fast.kind, (unsigned long long)fast.v.u, e1 - buf, slow.kind,
                      (unsigned long long)slow.v.u, e2 != NULL ? e2 - buf : -1);
        }
        bool ends = after != '.' && after != 'e' && after != 'E' && !(after >= '0' && after <= '9');
        bool plain = digits >= 1 && digits <= 15 && (digits == 1 || text[neg] != '0') && ends &&
                     (slow.kind == WK__NUM_UINT || slow.kind == WK__NUM_INT) &&
                     len >= (size_t)neg + 16;
        CHECK_MSG(!plain || e1 != NULL, "'%.*s': the word path gave up", (int)len, text);
        free(buf);
    }
}

/* wk__json_number_short (the tree parser's digit-at-a-time path) against the lexer: integer
 * parts and fractions of 0 to 22 digits, leading zeros, "-0", exponents, the 2^63 / 2^64 /
 * 10^19 edges, 17-19 digit halfway points and the smallest normal double's digits, each
 * followed by one byte and enough bytes that the short path may read (an exact-size heap
 * block); where it answers, the same kind, value bits and end, and it answers every plain
 * number of up to 19 digits. */
WK_TEST(test_json_number_short_agrees_with_the_lexer)
{
    static const char follow[] = ",]} \n.eE0x-+";
    static const char *const edge[] = {
        "9223372036854775808",   "9223372036854775809", "18446744073709551615",
        "9999999999999999999",   "1000000000000000000", "0",
        "-0",                    "-0.0",                "0.0000000000000000001",
        "9007199254740993",      "9007199254740992.5",  "0.1234567890123456789",
        "2.2250738585072011",    "2.2250738585072014",  "4.9406564584124654",
        "1.7976931348623157",    "1.7976931348623159",  "-65.613616999999977",
        "0.30000000000000004",   "9.999999999999999",   "123456789.0123456789",
        "1234567890.123456789",  "1.5",                 "0.5000000000000000555"};
    for (int iter = 0; iter < 60000 && !wk__test_failed(); iter++) {
        uint64_t r = rng();
        char text[128];
        size_t n = 0;
        bool neg = r & 1;
        if (neg) {
            text[n++] = '-';
        }
        size_t idig = (size_t)((r >> 1) % 23);
        size_t fdig = (size_t)((r >> 6) % 23);
        bool lead_zero = ((r >> 11) & 7) == 0;
        for (size_t i = 0; i < idig; i++) {
            uint64_t d = rng() % 10;
            text[n++] = (char)('0' + (i == 0 && !lead_zero && idig > 1 && d == 0 ? 1 : d));
        }
        if (idig > 0 && lead_zero) {
            text[neg] = '0';
        }
        if (((r >> 14) & 3) != 0) {
            text[n++] = '.';
            for (size_t i = 0; i < fdig; i++) {
                text[n++] = (char)('0' + rng() % 10);
            }
        }
        if (((r >> 16) & 7) == 0) {
            const char *e = edge[(r >> 19) % (sizeof edge / sizeof edge[0])];
            n = 0;
            memcpy(text, e, strlen(e));
            n = strlen(e);
            neg = text[0] == '-';
        }
        if (n == 0 || (n == 1 && neg)) {
            continue;
        }
        if (((r >> 24) & 15) == 0) {
            text[n++] = (r >> 28) & 1 ? 'e' : 'E';
            n += (size_t)snprintf(text + n, 8, "%d", (int)((r >> 29) % 700) - 350);
        }
        text[n++] = follow[(r >> 40) % (sizeof follow - 1)];
        size_t body = n;
        while (n < body + WK__JSON_SHORT_NUM_READ + 1) {
            text[n++] = ' ';
        }
        uint8_t *buf = malloc(n);
        CHECK(buf != NULL);
        memcpy(buf, text, n);
        wk__json_num fast = {-1, {0}}, slow = {-1, {0}};
        wk__json_fail f;
        const uint8_t *e1 = wk__json_number_short(buf, &fast);
        const uint8_t *e2 = wk__json_lex_number(buf, buf + n, false, &slow, &f);
        if (e1 != NULL) {
            CHECK_MSG(e1 == e2 && fast.kind == slow.kind && fast.v.u == slow.v.u,
                      "'%.*s': short path %d %llx at %td, lexer %d %llx at %td", (int)body,
                      text, fast.kind, (unsigned long long)fast.v.u, e1 - buf, slow.kind,
                      (unsigned long long)slow.v.u, e2 != NULL ? e2 - buf : -1);
        }
        /* plain: the lexer took it all, no exponent, at most 19 digits, not "-0" */
        size_t digits = 0;
        bool expo = false;
        for (size_t i = 0; e2 != NULL && buf + i < e2; i++) {
            digits += text[i] >= '0' && text[i] <= '9';
            expo |= text[i] == 'e' || text[i] == 'E';
        }
        bool minus_zero = slow.kind == WK__NUM_DOUBLE && neg && slow.v.u == (1ull << 63) &&
                          memchr(text, '.', body) == NULL;
        bool plain = e2 != NULL && !expo && digits <= 19 && !minus_zero &&
                     !(slow.kind == WK__NUM_DOUBLE && memchr(text, '.', (size_t)(e2 - buf)) == NULL);
        CHECK_MSG(!plain || e1 != NULL, "'%.*s': the short path gave up", (int)body, text);
        free(buf);
    }
}

/* The reference for wk__json_utf8_run: one sequence at a time with wk__json_utf8_one. */
static const uint8_t *utf8_run_slow(const uint8_t *p, const uint8_t *end)
{
    do {
        p = wk__json_utf8_one(p, end);
        if (p == NULL) {
            return NULL;
        }
    } while (p < end && *p >= 0x80);
    return p;
}

/* The word and SSE2 paths of the UTF-8 run check (three-byte groups of four, two- and
 * three-byte words) against the one-at-a-time check, on random mixes of valid sequences of
 * every length, overlongs, surrogates, stray bytes and ASCII, cut at every length into a
 * buffer of exactly that size (so ASan sees any read past the end). */
WK_TEST(test_json_utf8_run_matches_the_one_at_a_time_check_on_every_truncation)
{
    static const char *pieces[] = {
        "\xe6\x97\xa5", "\xe6\x9c\xac", "\xe3\x81\x82", "\xc3\xa9", "\xf0\x9f\x98\x80",
        "\xe0\xa0\x80", "\xed\x9f\xbf", "\xef\xbf\xbf", /* valid edges */
        "\xe0\x9f\xbf", "\xed\xa0\x80", "\xc0\xaf", "\xc1\xbf", "\xf5\x80\x80\x80",
        "\x80", "\xe6\x97", "\xe6\x97\x41", "\xc3", "A", "\xee\x80\x80", "\xdf\xbf"};
    const size_t np = sizeof pieces / sizeof pieces[0];
    for (int round = 0; round < 3000 && !wk__test_failed(); round++) {
        uint8_t text[96];
        size_t n = 0;
        text[n++] = 0xe6; /* starts a run: three-byte sequences mostly valid */
        text[n++] = 0x97;
        text[n++] = 0xa5;
        while (n < 80) {
            /* mostly valid CJK, so that the four-at-a-time path runs */
            size_t k = rng() % 4 != 0 ? rng() % 3 : rng() % np;
            size_t l = strlen(pieces[k]);
            memcpy(text + n, pieces[k], l);
            n += l;
        }
        for (size_t len = 1; len <= n; len++) {
            uint8_t *buf = malloc(len);
            CHECK(buf != NULL);
            memcpy(buf, text, len);
            const uint8_t *fast = wk__json_utf8_run(buf, buf + len);
            const uint8_t *slow = utf8_run_slow(buf, buf + len);
            CHECK_MSG(fast == slow, "round %d, length %zu: %td vs %td", round, len,
                      fast != NULL ? fast - buf : -1, slow != NULL ? slow - buf : -1);
            free(buf);
        }
    }
}
