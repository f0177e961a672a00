/*
 * float4 / float8 text: PostgreSQL 15's output (shortest round-trip digits, fixed notation for
 * decimal exponents in [-4, 15) (float8) or [-4, 6) (float4), otherwise `d.ddde+XX` with at
 * least two exponent digits) and input (float8in: NaN, Infinity, inf, decimal with exponent).
 * The shortest digits come from the kernel's Schubfach (core/dtoa_interface.h).
 *
 * Parsing trims PostgreSQL's blanks and reads its special names here; the number itself goes to the
 * kernel's locale-free parser (core/number_interface.h: Clinger's exact path, Eisel-Lemire, then
 * the exact big-decimal fallback), which rounds float4 once, straight to float.
 */
#include <math.h>

#include "pg/pg_interface.h"

#include "core/dtoa_interface.h"
#include "core/number_interface.h"

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

bool wk__pg_parse_float(const uint8_t *s, size_t n, bool f32, double *out)
{
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
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (n - i >= 3 && (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') {
        if (ieq(s, n, "nan")) {
            *out = NAN;
            return true;
        }
        if (ieq(s + i, n - i, "infinity") || ieq(s + i, n - i, "inf")) {
            *out = s[0] == '-' ? -INFINITY : INFINITY;
            return true;
        }
        return false;
    }
    double d;
    bool nonzero;
    if (!wk__text_to_double((const char *)s, n, f32, &d, &nonzero)) {
        return false;
    }
    if (isinf(d) || (d == 0 && nonzero)) {
        return false; /* overflow or underflow to zero: out of range, as float8in/float4in */
    }
    *out = d;
    return true;
}
