/*
 * The kernel's whole-slice number parser (core/number_interface.h), which the PostgreSQL float
 * codecs and the interval/numeric conversions call instead of strtod/strtof: the same double as
 * strtod and the same float as strtof in the "C" locale for random texts, for exact float rounding
 * midpoints and a hair off them (where rounding through a double would go wrong), over- and
 * underflow reported through `nonzero`, and every malformed shape refused.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/number_interface.h"
#include "wk_test.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Random decimal text: optional sign, 1..28 digits with an optional point, optional exponent. */
static size_t random_text(char *t)
{
    size_t n = 0;
    uint64_t r = rng();
    if (r % 3 == 0) {
        t[n++] = r % 2 ? '-' : '+';
    }
    int digits = 1 + (int)(rng() % 28);
    int point = (int)(rng() % (uint64_t)(digits + 2)) - 1;
    for (int i = 0; i < digits; i++) {
        if (i == point) {
            t[n++] = '.';
        }
        t[n++] = (char)('0' + rng() % 10);
    }
    if (rng() % 2) {
        n += (size_t)snprintf(t + n, 16, "e%d", (int)(rng() % 100) - 60);
    }
    t[n] = '\0';
    return n;
}

WK_TEST(test_number_text_matches_strtod_and_strtof_on_random_texts)
{
    char t[64];
    for (int i = 0; i < 200000; i++) {
        size_t n = random_text(t);
        double d, f;
        CHECK_MSG(wk__text_to_double(t, n, false, &d, NULL), "rejected %s", t);
        CHECK_MSG(wk__text_to_double(t, n, true, &f, NULL), "rejected %s", t);
        double want_d = strtod(t, NULL);
        float want_f = strtof(t, NULL);
        CHECK_MSG(memcmp(&d, &want_d, 8) == 0, "%s: double %a, strtod %a", t, d, want_d);
        float got_f = (float)f;
        CHECK_MSG((double)got_f == f, "%s: float result %a is not a float", t, f);
        CHECK_MSG(memcmp(&got_f, &want_f, 4) == 0, "%s: float %a, strtof %a", t, (double)got_f,
                  (double)want_f);
    }
}

WK_TEST(test_number_float_rounds_once_at_exact_midpoints)
{
    char t[400];
    int checked = 0;
    for (int i = 0; i < 20000; i++) {
        uint32_t bits = (uint32_t)rng() & 0x7f7fffffu; /* finite, below the largest binade */
        float lo;
        memcpy(&lo, &bits, 4);
        float hi = nextafterf(lo, INFINITY);
        double mid = ((double)lo + (double)hi) / 2; /* exact: 25 bits */
        for (int k = 0; k < 3; k++) {
            /* k == 0: the midpoint exactly (glibc prints it exactly with enough digits);
             * 1 and 2: with a digit appended below the last one, above the midpoint; and a
             * midpoint minus a hair. */
            int n = snprintf(t, sizeof t, "%.120e", mid);
            if (k > 0) {
                char *e = strchr(t, 'e');
                char exp[16];
                snprintf(exp, sizeof exp, "%s", e);
                n = (int)(e - t);
                if (k == 1) {
                    n += snprintf(t + n, sizeof t - (size_t)n, "1%s", exp);
                } else {
                    double below = nextafter(mid, 0);
                    n = snprintf(t, sizeof t, "%.120e", below);
                }
            }
            double f;
            CHECK(wk__text_to_double(t, (size_t)n, true, &f, NULL));
            float want = strtof(t, NULL);
            float got = (float)f;
            CHECK_MSG(memcmp(&got, &want, 4) == 0, "%s: float %a, strtof %a", t, (double)got,
                      (double)want);
            checked++;
        }
    }
    CHECK_EQ(checked, 60000);
}

WK_TEST(test_number_short_midpoint_texts_take_the_exact_path)
{
    /* 16777217 = 2^24 + 1 is the midpoint between the floats 2^24 and 2^24 + 2: a tie that
     * goes to even (2^24); one more digit beyond decides upwards. Both are exact doubles, so
     * the cheap path sees a midpoint and must hand over to the exact float conversion. */
    double f;
    CHECK(wk__text_to_double("16777217", 8, true, &f, NULL));
    CHECK(f == 16777216.0);
    CHECK(wk__text_to_double("16777217.000000001", 18, true, &f, NULL));
    CHECK(f == 16777218.0);
    CHECK(wk__text_to_double("16777219", 8, true, &f, NULL));
    CHECK(f == 16777220.0);
}

WK_TEST(test_number_reports_overflow_and_underflow)
{
    double d;
    bool nz = false;
    CHECK(wk__text_to_double("1e400", 5, false, &d, &nz));
    CHECK(isinf(d) && nz);
    CHECK(wk__text_to_double("1e39", 4, true, &d, &nz));
    CHECK(isinf(d) && nz);
    CHECK(wk__text_to_double("1e-400", 6, false, &d, &nz));
    CHECK(d == 0 && nz);
    CHECK(wk__text_to_double("1e-50", 5, true, &d, &nz));
    CHECK(d == 0 && nz);
    CHECK(wk__text_to_double("-0.000e7", 8, false, &d, &nz));
    CHECK(d == 0 && signbit(d) && !nz);
    CHECK(wk__text_to_double("1e-40", 5, true, &d, &nz));
    CHECK(d > 0 && (float)d == strtof("1e-40", NULL));
}

WK_TEST(test_number_rejects_malformed_text)
{
    static const char *bad[] = {"",   "+",   "-",    ".",   "e5",  "1e",   "1e+", "1e-",
                                "--1", "1.2.3", " 1", "1 ", "nan", "inf", "0x10", "1,5",
                                "1e5x", "+.e1", "1..", ".e"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double d = 42;
        CHECK_MSG(!wk__text_to_double(bad[i], strlen(bad[i]), false, &d, NULL), "accepted '%s'",
                  bad[i]);
        CHECK(d == 42);
    }
    static const char *good[] = {"1.", ".5", "+1", "-0", "00012", "1E5", "1e+05", "9e-0"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        double d;
        CHECK_MSG(wk__text_to_double(good[i], strlen(good[i]), false, &d, NULL),
                  "rejected '%s'", good[i]);
        CHECK(d == strtod(good[i], NULL));
    }
}
