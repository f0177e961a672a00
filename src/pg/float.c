/*
 * float4 / float8 text: PostgreSQL 15's output (shortest round-trip digits, fixed notation for
 * decimal exponents in [-4, 15) (float8) or [-4, 6) (float4), otherwise `d.ddde+XX` with at
 * least two exponent digits) and input (float8in: NaN, Infinity, inf, decimal with exponent).
 * The shortest digits come from the JSON module's Schubfach (json/dtoa.h).
 *
 * Parsing takes a fast exact path (Clinger: at most 19 digits, mantissa below 2^53, power of
 * ten up to 22, one correctly rounded multiply or divide) and falls back to strtod/strtof on
 * a bounded stack copy for everything else.
 */
#include <math.h>
#include <stdlib.h>

#include "pg/pg_internal.h"

#include "json/dtoa.h"
#include "json/number.h"

int wk__pg_shortest(double v, bool f32, char digits[20], int *exp10)
{
    int e;
    int len = f32 ? wk__ftoa_shortest((float)v, digits, &e) : wk__dtoa_shortest(v, digits, &e);
    /* dtoa gives |v| = D * 10^e with D the integer of the digits; we want the exponent of
     * the first digit. */
    *exp10 = e + len - 1;
    return len;
}

wk_status wk__pg_put_float(wk_buf *b, double v, bool f32)
{
    if (isnan(v)) {
        return wk_buf_append(b, "NaN", 3);
    }
    if (isinf(v)) {
        return v > 0 ? wk_buf_append(b, "Infinity", 8) : wk_buf_append(b, "-Infinity", 9);
    }
    char out[48];
    size_t o = 0;
    if (signbit(v)) {
        out[o++] = '-';
    }
    if (v == 0) {
        out[o++] = '0';
        return wk_buf_append(b, out, o);
    }
    char d[20];
    int e;
    int len = wk__pg_shortest(v, f32, d, &e);
    int hi = f32 ? 6 : 15;
    if (e >= -4 && e < hi) {
        if (e < 0) {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = 0; i < -e - 1; i++) {
                out[o++] = '0';
            }
            memcpy(out + o, d, (size_t)len);
            o += (size_t)len;
        } else if (e >= len - 1) {
            memcpy(out + o, d, (size_t)len);
            o += (size_t)len;
            for (int i = 0; i < e - len + 1; i++) {
                out[o++] = '0';
            }
        } else {
            memcpy(out + o, d, (size_t)e + 1);
            o += (size_t)e + 1;
            out[o++] = '.';
            memcpy(out + o, d + e + 1, (size_t)(len - e - 1));
            o += (size_t)(len - e - 1);
        }
    } else {
        out[o++] = d[0];
        if (len > 1) {
            out[o++] = '.';
            memcpy(out + o, d + 1, (size_t)len - 1);
            o += (size_t)len - 1;
        }
        out[o++] = 'e';
        out[o++] = e < 0 ? '-' : '+';
        o += wk__pg_fmt_uint_pad(out + o, (uint64_t)(e < 0 ? -e : e), 2);
    }
    return wk_buf_append(b, out, o);
}

static bool ieq(const uint8_t *s, size_t n, const char *w)
{
    if (strlen(w) != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c >= 'A' && c <= 'Z') {
            c = (uint8_t)(c + 32);
        }
        if (c != (uint8_t)w[i]) {
            return false;
        }
    }
    return true;
}

static bool fspace(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static const double pow10_exact[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The common shape: [-]digits[.digits], at most 19 significant digits in total, no leading
 * zeros beyond one, no exponent. Returns false (nothing written) when the text has any other
 * shape, so that the full parser decides. */
static bool parse_plain(const uint8_t *s, size_t n, double *out)
{
    size_t i = 0;
    bool neg = n > 0 && s[0] == '-';
    i = neg ? 1 : 0;
    uint64_t mant = 0;
    size_t start = i;
    while (i < n && (unsigned)(s[i] - '0') < 10) {
        mant = mant * 10 + (unsigned)(s[i] - '0');
        i++;
    }
    size_t intd = i - start;
    int scale = 0;
    size_t fracd = 0;
    if (i < n && s[i] == '.') {
        i++;
        size_t fs = i;
        while (i < n && (unsigned)(s[i] - '0') < 10) {
            mant = mant * 10 + (unsigned)(s[i] - '0');
            i++;
        }
        fracd = i - fs;
        scale = -(int)fracd;
    }
    if (i != n || intd + fracd == 0 || intd + fracd > 19 || mant >= ((uint64_t)1 << 53) ||
        scale < -22) {
        return false;
    }
    double d = scale < 0 ? (double)mant / pow10_exact[-scale] : (double)mant;
    *out = neg ? -d : d;
    return true;
}

bool wk__pg_parse_float(const uint8_t *s, size_t n, bool f32, double *out)
{
    if (parse_plain(s, n, out)) {
        return true;
    }
    while (n > 0 && fspace(s[0])) {
        s++;
        n--;
    }
    while (n > 0 && fspace(s[n - 1])) {
        n--;
    }
    if (n == 0) {
        return false;
    }
    bool neg = s[0] == '-';
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (n - i >= 3 && (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') {
        if (ieq(s, n, "nan")) {
            *out = NAN;
            return true;
        }
        if (ieq(s + i, n - i, "infinity") || ieq(s + i, n - i, "inf")) {
            *out = neg ? -INFINITY : INFINITY;
            return true;
        }
        return false;
    }
    /* Validate the syntax and try the exact fast path at the same time. */
    uint64_t mant = 0;
    int ndig = 0, scale = 0;
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
        i++;
        bool eneg = false;
        if (i < n && (s[i] == '-' || s[i] == '+')) {
            eneg = s[i] == '-';
            i++;
        }
        if (i == n) {
            return false;
        }
        int ev = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
            if (ev < 100000) {
                ev = ev * 10 + (s[i] - '0');
            }
        }
        scale += eneg ? -ev : ev;
    }
    if (i != n) {
        return false;
    }
    if (exact && mant < ((uint64_t)1 << 53) && scale >= -22 && scale <= 22) {
        double d = (double)mant;
        d = scale < 0 ? d / pow10_exact[-scale] : d * pow10_exact[scale];
        *out = neg ? -d : d;
        return true;
    }
    if (mant == 0 && exact) {
        *out = neg ? -0.0 : 0.0;
        return true;
    }
    /* Slow path. float8: the JSON module's correctly rounded, locale-free conversion of any
     * length. float4: strtof on a NUL-terminated copy (rounding a correctly rounded double to
     * float could round twice); its decimal point follows LC_NUMERIC, "C" unless the
     * application changed it. */
    size_t body = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    double d;
    if (!f32) {
        d = wk__decimal_to_double((const char *)s + body, n - body);
        d = neg ? -d : d;
    } else {
        char tmp[512];
        if (n >= sizeof tmp) {
            return false;
        }
        memcpy(tmp, s, n);
        tmp[n] = '\0';
        d = (double)strtof(tmp, NULL);
    }
    if (isinf(d) || (d == 0 && mant != 0)) {
        return false; /* overflow or underflow to zero: out of range, as float8in/float4in */
    }
    *out = d;
    return true;
}
