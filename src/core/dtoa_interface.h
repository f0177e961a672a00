/*
 * Shortest round-tripping decimal digits of doubles and floats (internal, shared with the
 * PostgreSQL codecs, which format float4/float8 exactly as PostgreSQL does from these digits).
 *
 * The algorithm is Schubfach (R. Giulietti, "The Schubfach way to render doubles", 2020),
 * written from the paper: one 126-bit multiplication per bound gives the decimal interval that
 * rounds back to the input, and the shortest decimal in it is picked, the closest to the input
 * when several have that length, the one with an even last digit on an exact tie. The float
 * twin uses the float's own rounding interval, so it gives the shortest digits that round-trip
 * through strtof (PostgreSQL's float4 output), not those of the value widened to double.
 * Flow: writers of number text (the JSON writers, the PostgreSQL float codecs) -> this
 * interface -> core/dtoa.c.
 */
#ifndef WK_CORE_DTOA_H
#define WK_CORE_DTOA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** "00" "01" ... "99": two decimal digits per entry (shared by every integer printer). */
extern const char wk__digits2[201];
/** 10^1 .. 10^19 at [1..19], 0 at [0] (so that 0 has one digit): wk__fmt_u64's digit count. */
extern const uint64_t wk__pow10_u64[20];

/** Writes u in decimal at d (up to 20 bytes, no NUL) and returns the length: the one integer
 *  printer of the library (JSON numbers, the shortest digits of a double). */
static inline size_t wk__fmt_u64(uint64_t u, char *d)
{
    /* the digit count first (from the bit length, corrected by one compare), then the
     * digits stored backwards straight into d, two at a time: no scratch copy */
    unsigned bits = 64u - (unsigned)__builtin_clzll(u | 1u);
    size_t n = ((bits * 1233u) >> 12) + 1u;
    n -= u < wk__pow10_u64[n - 1];
    char *p = d + n;
    while (u >= 100) {
        uint64_t r = u % 100;
        u /= 100;
        p -= 2;
        memcpy(p, wk__digits2 + 2 * r, 2);
    }
    if (u >= 10) {
        memcpy(p - 2, wk__digits2 + 2 * u, 2);
    } else {
        p[-1] = (char)('0' + u);
    }
    return n;
}

/**
 * Writes the shortest decimal digits of |v| that read back (strtod, round to nearest) as |v|.
 * |v| == D * 10^(*exp10), where D is the integer spelled by digits[0..n) (no leading or
 * trailing zero, no NUL terminator) and n, the return value, is 1..17. Zero gives "0" and
 * *exp10 == 0. The sign is ignored (the caller prints it from signbit(v)). `v` must be finite:
 * NaN or an infinity returns 0 and writes nothing. Thread-safe, no allocation.
 */
int wk__dtoa_shortest(double v, char digits[17], int *exp10);

/** Like wk__dtoa_shortest for a float: the shortest digits (1..9) that read back through
 *  strtof as |v|. */
int wk__ftoa_shortest(float v, char digits[9], int *exp10);

/** Longest text wk__dtoa_json and wk__ftoa_json write: "-1.2345678901234567e-308". */
#define WK__DTOA_JSON_MAX 32

/**
 * Prints finite `v` as JSON number text into `out` (WK__DTOA_JSON_MAX bytes of room, no NUL
 * written) and returns its length. The text always reads back as a float, never an integer:
 * plain decimal notation with at least one fractional digit ("1.0", "-0.0", "0.001",
 * "123456.789") when the decimal exponent is in [-6, 21), otherwise scientific notation with
 * one leading digit ("1e21", "1.5e-7", "5e-324"; exponent without '+'). The digits are those
 * of wk__dtoa_shortest. NaN and infinities return 0 (the caller decides).
 */
size_t wk__dtoa_json(double v, char *out);

/** Like wk__dtoa_json with the digits of wk__ftoa_shortest (for float32 sources). */
size_t wk__ftoa_json(float v, char *out);

#endif
