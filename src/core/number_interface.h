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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** w * 10^q rounded to the nearest double (ties to even), or false when the 128-bit product
 *  cannot decide (then use wk__decimal_to_double). w == 0 gives 0. */
bool wk__eisel_lemire(uint64_t w, int q, double *out);

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
 * left out of w (more than 19 significant digits).
 */
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
