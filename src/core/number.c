/*
 * The kernel's decimal-to-binary conversion (see number_interface.h): the whole-slice parser shared
 * by JSON and PostgreSQL text (wk__text_to_double), the table of the Eisel-Lemire tier (whose
 * step is inline in number_interface.h), and the slow tier, the big-decimal fallback,
 * parameterised by the target format so that float gets its own single rounding.
 *
 * Eisel-Lemire: D. Lemire, "Number Parsing at a Gigabyte per Second", 2021 (its derivation
 * from the error bound is beside wk__eisel_lemire). The fallback keeps up to 800 decimal
 * digits (enough for every double; a flag remembers nonzero digits dropped beyond) and shifts
 * the decimal by powers of two until it lies in [1/2, 1), then takes 53 bits and rounds half
 * to even.
 * Flow: number text (the JSON lexer's digits, PostgreSQL text) -> wk__digits_to_double or
 * wk__text_to_double (number_interface.h) -> the tiers here -> a correctly rounded double.
 */
#include "core/number_interface.h"

#include <math.h>
#include <string.h>

#include "core/pow5_table.h"

/* ---- big-decimal fallback ---------------------------------------------------------------- */

#define DEC_DIGITS 800
#define MAX_SHIFT 60

typedef struct decimal {
    uint8_t d[DEC_DIGITS]; /* digit values 0..9, most significant first */
    int nd;                /* digits used */
    int dp;                /* decimal point: value = 0.d[0..nd) * 10^dp */
    bool trunc;            /* nonzero digits were dropped beyond d[DEC_DIGITS - 1] */
} decimal;

/* Drops trailing zero digits (a zero value gets dp 0). */
static void trim(decimal *a)
{
    while (a->nd > 0 && a->d[a->nd - 1] == 0) {
        a->nd--;
    }
    if (a->nd == 0) {
        a->dp = 0;
    }
}

/* a *= 2^k, k <= MAX_SHIFT: digit by digit from the right, carrying. */
static void left_shift(decimal *a, unsigned k)
{
    /* the digits are written right to left into tmp, which has room for the k-bit carry's
     * extra digits at the left (2^MAX_SHIFT < 10^20) */
    uint8_t tmp[DEC_DIGITS + 20];
    int w = DEC_DIGITS + 20;
    uint64_t n = 0;
    for (int r = a->nd - 1; r >= 0; r--) {
        n += (uint64_t)a->d[r] << k;
        uint64_t quo = n / 10;
        tmp[--w] = (uint8_t)(n - 10 * quo);
        n = quo;
    }
    while (n > 0) {
        uint64_t quo = n / 10;
        tmp[--w] = (uint8_t)(n - 10 * quo);
        n = quo;
    }
    /* the point moves by the digits gained; digits beyond DEC_DIGITS are dropped, noting
     * whether any was nonzero (for the rounding of a "half") */
    int total = DEC_DIGITS + 20 - w;
    a->dp += total - a->nd;
    if (total > DEC_DIGITS) {
        for (int i = DEC_DIGITS; i < total; i++) {
            if (tmp[w + i] != 0) {
                a->trunc = true;
            }
        }
        total = DEC_DIGITS;
    }
    memcpy(a->d, tmp + w, (size_t)total);
    a->nd = total;
    trim(a);
}

/* a /= 2^k, k <= MAX_SHIFT: long division from the left. */
static void right_shift(decimal *a, unsigned k)
{
    /* read digits until the running remainder n reaches 2^k: that is where the quotient's
     * first digit comes from (a value below 2^k ends as zero) */
    int r = 0;
    int w = 0;
    uint64_t n = 0;
    for (; (n >> k) == 0; r++) {
        if (r >= a->nd) {
            if (n == 0) {
                a->nd = 0;
                a->dp = 0;
                return;
            }
            while ((n >> k) == 0) {
                n *= 10;
                r++;
            }
            break;
        }
        n = n * 10 + a->d[r];
    }
    /* then one quotient digit per input digit, and the remainder's digits after them */
    a->dp -= r - 1;
    uint64_t mask = (1ull << k) - 1;
    for (; r < a->nd; r++) {
        uint64_t dig = n >> k;
        n &= mask;
        a->d[w++] = (uint8_t)dig;
        n = n * 10 + a->d[r];
    }
    while (n > 0) {
        uint64_t dig = n >> k;
        n &= mask;
        if (w < DEC_DIGITS) {
            a->d[w++] = (uint8_t)dig;
        } else if (dig > 0) {
            a->trunc = true;
        }
        n *= 10;
    }
    a->nd = w;
    trim(a);
}

/* a *= 2^k (k of either sign), in steps of at most MAX_SHIFT bits. */
static void shift(decimal *a, int k)
{
    if (a->nd == 0) {
        return;
    }
    while (k > MAX_SHIFT) {
        left_shift(a, MAX_SHIFT);
        k -= MAX_SHIFT;
    }
    if (k > 0) {
        left_shift(a, (unsigned)k);
    }
    while (k < -MAX_SHIFT) {
        right_shift(a, MAX_SHIFT);
        k += MAX_SHIFT;
    }
    if (k < 0) {
        right_shift(a, (unsigned)-k);
    }
}

/* Whether the integer part, cut after nd digits, rounds up (half to even; a dropped nonzero
 * tail makes a "half" more than half). */
static bool should_round_up(const decimal *a, int nd)
{
    if (nd < 0 || nd >= a->nd) {
        return false;
    }
    if (a->d[nd] == 5 && nd + 1 == a->nd) {
        if (a->trunc) {
            return true;
        }
        return nd > 0 && (a->d[nd - 1] & 1) != 0;
    }
    return a->d[nd] >= 5;
}

/* The integer part of a, rounded half to even (should_round_up); UINT64_MAX when it has more
 * than 20 digits (the caller's shifts keep it below 2^54). */
static uint64_t rounded_integer(const decimal *a)
{
    if (a->dp > 20) {
        return UINT64_MAX;
    }
    uint64_t n = 0;
    int i = 0;
    for (; i < a->dp && i < a->nd; i++) {
        n = n * 10 + a->d[i];
    }
    for (; i < a->dp; i++) {
        n *= 10;
    }
    if (should_round_up(a, a->dp)) {
        n++;
    }
    return n;
}

/* The binary layout of the target: fraction bits and exponent bias (double 52/1023, float
 * 23/127); the biased exponent field is all ones at 2 * bias + 1. */
typedef struct bin_format {
    int mbits;
    int bias;
} bin_format;

/* |a| rounded to the nearest value of format f (ties to even), as its bits without the sign. */
static uint64_t decimal_to_bits(decimal *a, bin_format f)
{
    static const int powtab[] = {1, 3, 6, 9, 13, 16, 19, 23, 26};
    const int emax = 2 * f.bias + 1;
    uint64_t mant;
    int exp;
    if (a->nd == 0 || a->dp < -330) {
        return 0;
    }
    if (a->dp > 310) {
        goto overflow;
    }
    /* Scale by powers of two into [1/2, 1). */
    exp = 0;
    while (a->dp > 0) {
        int n = a->dp >= 9 ? 27 : powtab[a->dp];
        shift(a, -n);
        exp += n;
    }
    while (a->dp < 0 || (a->dp == 0 && a->d[0] < 5)) {
        int n = -a->dp >= 9 ? 27 : powtab[-a->dp];
        shift(a, n);
        exp -= n;
    }
    exp--; /* now value = [1, 2) * 2^exp */
    if (exp < 1 - f.bias) {
        int n = 1 - f.bias - exp; /* subnormal: fewer bits */
        shift(a, -n);
        exp += n;
    }
    if (exp + f.bias >= emax) {
        goto overflow;
    }
    shift(a, f.mbits + 1);
    mant = rounded_integer(a);
    if (mant == (2ull << f.mbits)) {
        mant >>= 1;
        exp++;
        if (exp + f.bias >= emax) {
            goto overflow;
        }
    }
    if ((mant & (1ull << f.mbits)) == 0) {
        exp = -f.bias;
    }
    return (mant & ((1ull << f.mbits) - 1)) | ((uint64_t)((exp + f.bias) & emax) << f.mbits);
overflow:
    return (uint64_t)emax << f.mbits;
}

/* The exponent after an 'e' at s[i..n): an optional sign, then digits (saturating at 10^15,
 * far beyond any exponent that can change a result). Returns the index after the digits and
 * sets *e; the caller checks that digits were there if its grammar needs them. */
static size_t read_exponent(const char *s, size_t i, size_t n, int64_t *e)
{
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        i++;
    }
    int64_t v = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        if (v < 1000000000000000ll) {
            v = v * 10 + (s[i] - '0');
        }
    }
    *e = neg ? -v : v;
    return i;
}

/* Reads checked decimal text into `a`; returns whether it had a leading '-'. */
static bool parse_decimal(decimal *a, const char *s, size_t len)
{
    a->nd = 0;
    a->trunc = false;
    int64_t dp = 0; /* 64-bit: a number may have more than 2^31 digits */
    size_t i = 0;
    bool neg = false;
    if (i < len && s[i] == '-') {
        neg = true;
        i++;
    }
    /* the digits: leading zeros skipped (after the point they lower dp), up to DEC_DIGITS
     * kept, a nonzero one beyond noted in trunc */
    bool point = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c == '.') {
            point = true;
            continue;
        }
        if (c < '0' || c > '9') {
            break;
        }
        if (a->nd == 0 && c == '0') {
            if (point) {
                dp--;
            }
            continue;
        }
        if (!point) {
            dp++;
        }
        if (a->nd < DEC_DIGITS) {
            a->d[a->nd++] = (uint8_t)(c - '0');
        } else if (c != '0') {
            a->trunc = true;
        }
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int64_t e;
        read_exponent(s, i + 1, len, &e);
        dp += e;
    }
    /* Beyond +-10^6 the result is 0 or infinity whatever the digits (decimal_to_double
     * checks dp > 310 and dp < -330), so the clamp cannot change it. */
    a->dp = dp > 1000000 ? 1000000 : dp < -1000000 ? -1000000 : (int)dp;
    trim(a);
    return neg;
}

/* Exact decimal -> double (number_interface.h): the big-decimal shifts of decimal_to_bits,
 * the sign applied to the bits. */
double wk__decimal_to_double(const char *s, size_t len)
{
    decimal a;
    bool neg = parse_decimal(&a, s, len);
    uint64_t bits = decimal_to_bits(&a, (bin_format){52, 1023}) | (uint64_t)neg << 63;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

float wk__decimal_to_float(const char *s, size_t len)
{
    decimal a;
    bool neg = parse_decimal(&a, s, len);
    uint32_t bits = (uint32_t)decimal_to_bits(&a, (bin_format){23, 127}) | (uint32_t)neg << 31;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Whether rounding the correctly rounded double d to float gives the correctly rounded float of
 * the exact value d came from. Only a d that sits exactly on a float rounding midpoint (the 29
 * bits below the float's last bit are 1000...0) can round the wrong way, and only normal
 * floats have their last bit there. */
static bool float_safe(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return (bits & 0x1fffffffull) != 0x10000000ull && fabs(d) >= 0x1p-126;
}

/* strtod/strtof without NUL, copy or locale (number_interface.h): the grammar checked here,
 * then the tiers: exact small cases, Eisel-Lemire, the exact decimal path. */
bool wk__text_to_double(const char *s, size_t n, bool f32, double *out, bool *nonzero)
{
    size_t i = 0;
    bool neg = false;
    if (n > 0 && (s[0] == '-' || s[0] == '+')) {
        neg = s[0] == '-';
        i = 1;
    }
    /* The grammar, gathering the first 19 significant digits as mant * 10^scale (exact
     * says no nonzero digit was dropped); leading zeros are not significant. */
    size_t body = i;
    uint64_t mant = 0;
    int ndig = 0;
    int64_t scale = 0; /* 64-bit: a text may hold more than 2^31 digits */
    bool any = false, exact = true;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
        any = true;
        if (mant == 0 && s[i] == '0') {
            continue;
        }
        if (ndig < 19) {
            mant = mant * 10 + (unsigned)(s[i] - '0');
            ndig++;
        } else {
            exact = false;
            scale++;
        }
    }
    if (i < n && s[i] == '.') {
        i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            any = true;
            if (mant == 0 && s[i] == '0') {
                scale--;
                continue;
            }
            if (ndig < 19) {
                mant = mant * 10 + (unsigned)(s[i] - '0');
                ndig++;
                scale--;
            } else {
                exact = false;
            }
        }
    }
    if (!any) {
        return false;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1 < n && (s[i + 1] == '+' || s[i + 1] == '-') ? i + 2 : i + 1;
        int64_t e;
        i = read_exponent(s, i + 1, n, &e);
        if (i == j) {
            return false; /* no exponent digits */
        }
        scale += e;
    }
    if (i != n) {
        return false;
    }
    if (nonzero != NULL) {
        *nonzero = mant != 0;
    }
    /* The tiers, cheapest first: zero; an exact mantissa and power of ten that are both
     * exact doubles (one correctly rounded operation); Eisel-Lemire; the exact decimal
     * path. For a float the double is rounded again only when that cannot round twice the
     * wrong way (float_safe), else the decimal path rounds straight to float. */
    double d;
    if (mant == 0) {
        d = 0.0; /* every digit was zero (the first nonzero one always enters mant) */
    } else if (exact && mant < ((uint64_t)1 << 53) && scale >= -22 && scale <= 22) {
        d = (double)mant;
        d = scale < 0 ? d / wk__exact_pow10[-scale] : d * wk__exact_pow10[scale];
        if (f32 && !float_safe(d)) {
            d = (double)wk__decimal_to_float(s + body, n - body);
        } else if (f32) {
            d = (double)(float)d;
        }
    } else if (exact && wk__eisel_lemire(mant, scale > 400 ? 400 : scale < -400 ? -400 : (int)scale,
                                         &d) &&
               (!f32 || float_safe(d))) {
        d = f32 ? (double)(float)d : d;
    } else {
        d = f32 ? (double)wk__decimal_to_float(s + body, n - body)
                : wk__decimal_to_double(s + body, n - body);
    }
    *out = neg ? -d : d;
    return true;
}
