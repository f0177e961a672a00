/*
 * Decimal text to double and float, correctly rounded and independent of the locale (internal,
 * the kernel's number parser: the JSON lexer and the PostgreSQL float/numeric/interval codecs
 * all call it; no module calls strtod/strtof). Three tiers, each exact where it answers:
 * Clinger's fast path (mantissa <= 2^53, |exponent| <= 22: one exact multiplication or
 * division), the Eisel-Lemire step (a 128-bit product with a table of powers of ten, which
 * declines when the bits it has cannot decide the rounding), and a big-decimal fallback
 * (binary shifts of an 800-digit decimal, the classic exact algorithm) for what remains:
 * subnormals, exact ties, mantissas longer than 19 digits whose truncation matters.
 * Independent of the locale; the same result as strtod in the "C" locale for every input.
 * Flow: the JSON lexer (formats/json/lex.h) and the PostgreSQL codecs (src/pg/) -> this
 * interface (its inline first tier, wk__digits_to_double) -> core/number.c.
 */
#ifndef WK_CORE_NUMBER_H
#define WK_CORE_NUMBER_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The table of Eisel-Lemire's 128-bit truncated powers of ten, q in [WK__POW5_QMIN,
 * WK__POW5_QMAX] (core/pow5_table.h, generated, defined once in number.c). */
#define WK__POW5_QMIN (-342)
#define WK__POW5_QMAX 308
extern const uint64_t wk__pow5_t[WK__POW5_QMAX - WK__POW5_QMIN + 1][2];

/** w * 10^q rounded to the nearest double (ties to even), or false when the 128-bit product
 *  cannot decide (then use wk__decimal_to_double). w == 0 gives 0. Inline: the number-heavy
 *  parse (canada.json) paid a call, a vzeroupper and four spills per number (issue 26). With w
 *  normalised to 64 bits and T the 128-bit truncation of 10^q, the top 128 bits of w*T are
 *  below the true product by less than two units of their last bit, so the 54 leading bits
 *  (53 + the rounding bit) are certain unless the bits under them are all ones (a carry could
 *  reach them); an exact tie cannot be told from "just above". Both cases decline, as do
 *  subnormals. */
static inline bool wk__eisel_lemire(uint64_t w, int q, double *out)
{
    if (w == 0 || q < WK__POW5_QMIN) {
        *out = 0.0; /* w < 2^64, so w * 10^-343 < 2^-1075: rounds to zero */
        return true;
    }
    if (q > WK__POW5_QMAX) {
        *out = HUGE_VAL; /* w >= 1, so w * 10^309 overflows */
        return true;
    }
    int lz = __builtin_clzll(w);
    uint64_t wn = w << lz;
    const uint64_t *t = wk__pow5_t[q - WK__POW5_QMIN];
    unsigned __int128 p = (unsigned __int128)wn * t[0];
    uint64_t hi = (uint64_t)(p >> 64);
    uint64_t lo = (uint64_t)p;
    if ((hi & 0x1ff) == 0x1ff) {
        uint64_t h2 = (uint64_t)(((unsigned __int128)wn * t[1]) >> 64);
        lo += h2;
        hi += lo < h2;
        if ((hi & 0x1ff) == 0x1ff && lo >= UINT64_MAX - 1) {
            return false; /* a carry from below could still change the rounding bit */
        }
    }
    int upper = (int)(hi >> 63);
    uint64_t mant = hi >> (upper + 9); /* 53 bits and the rounding bit */
    uint64_t below = hi & ((1ull << (upper + 9)) - 1);
    if ((mant & 1) != 0 && below == 0 && lo == 0) {
        return false; /* maybe an exact tie */
    }
    mant = (mant + 1) >> 1;
    int flog2 = (int)(((int64_t)q * 913124641741ll) >> 38); /* floor(log2(10^q)) */
    int e2 = upper + 11 + flog2 - lz;                       /* value = mant * 2^e2 */
    if (mant == (1ull << 53)) {
        mant >>= 1;
        e2++;
    }
    int biased = e2 + 52 + 1023;
    if (biased <= 0) {
        return false; /* subnormal: rounding at a different bit */
    }
    if (biased >= 2047) {
        *out = HUGE_VAL;
        return true;
    }
    uint64_t bits = (mant & ((1ull << 52) - 1)) | ((uint64_t)biased << 52);
    memcpy(out, &bits, sizeof bits);
    return true;
}

/** Decimal text (grammar already checked: -?digits?(.digits?)?([eE][+-]?digits)?, at least
 *  one digit; a leading '+' is not accepted) as the nearest double. Exact for any length and
 *  exponent (exponents beyond +-10^6 saturate, which cannot change the result). Slow: used
 *  when the fast tiers decline. */
double wk__decimal_to_double(const char *s, size_t len);

/** Like wk__decimal_to_double, rounded once straight to the nearest float (no double
 *  rounding through a double). */
float wk__decimal_to_float(const char *s, size_t len);

/**
 * A whole slice of decimal text, `[+-]?(digits(.digits?)?|.digits)([eE][+-]?digits)?` with
 * nothing before or after (no blanks, no "nan"/"inf": callers decide those), as the nearest
 * double (`f32` false) or the nearest float (`f32` true, returned widened to double, exactly).
 * What strtod/strtof do in the "C" locale, without a NUL terminator, a copy or a locale.
 * Returns false, writing nothing, when the text is not of that shape. Overflow gives an
 * infinity and underflow a zero; *nonzero says whether any significant digit was nonzero
 * (so callers can tell underflow from a written zero). May be NULL.
 */
bool wk__text_to_double(const char *s, size_t n, bool f32, double *out, bool *nonzero);

static const double wk__exact_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                           1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/**
 * The double nearest to (-1)^neg * w * 10^q, where w holds the first significant digits of
 * the number whose full text is s[0..len) and `truncated` says whether nonzero digits were
 * left out of w (more than 19 significant digits). Always inline (the JSON lexer is its one
 * caller): GCC kept it out of the AVX2 tree parser, and canada.json then paid a call, a
 * vzeroupper and the parser's spills per number.
 */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline double wk__digits_to_double(uint64_t w, int q, bool neg, bool truncated,
                                           const char *s, size_t len)
{
    double d;
    if (!truncated) {
        if (w <= (1ull << 53) && q >= -22 && q <= 22) {
            d = (double)w;
            d = q < 0 ? d / wk__exact_pow10[-q] : d * wk__exact_pow10[q];
            return neg ? -d : d;
        }
        if (wk__eisel_lemire(w, q, &d)) {
            return neg ? -d : d;
        }
    } else {
        double d2;
        if (wk__eisel_lemire(w, q, &d) && wk__eisel_lemire(w + 1, q, &d2) && d == d2) {
            return neg ? -d : d;
        }
    }
    return wk__decimal_to_double(s, len);
}

#endif
