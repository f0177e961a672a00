/*
 * float4 and float8, PostgreSQL's float.c, in both wire formats.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the float4 / float8 codecs (end of this
 * file) -> the direct F32 / F64 functions here, or codec_generic.c's generic functions over
 * this file's wk__pg_type tables -> a C float or double, PostgreSQL text, an event (a float,
 * or a string for NaN and the infinities) or a value. The text helpers are shared: geo_ops.c
 * prints coordinates with wk__pg_put_float, array_c.c parses elements with wk__pg_parse_float.
 *
 * Their text: PostgreSQL 15's output (shortest round-trip digits, fixed notation for
 * decimal exponents in [-4, 15) (float8) or [-4, 6) (float4), otherwise `d.ddde+XX` with at
 * least two exponent digits) and input (float8in: NaN, Infinity, inf, decimal with exponent).
 * The shortest digits come from the kernel's Schubfach (core/dtoa_interface.h).
 *
 * Parsing trims PostgreSQL's blanks and reads its special names here; the number itself goes to the
 * kernel's locale-free parser (core/number_interface.h: Clinger's exact path, Eisel-Lemire, then
 * the exact big-decimal fallback), which rounds float4 once, straight to float.
 */
#include <math.h>

#include "pg/pg_codec.h"

#include "core/dtoa_interface.h"
#include "core/number_interface.h"

/* Contract in pg_interface.h. */
int wk__pg_shortest(double v, bool f32, char digits[20], int *exp10)
{
    int e;
    int len = f32 ? wk__ftoa_shortest((float)v, digits, &e) : wk__dtoa_shortest(v, digits, &e);
    /* dtoa gives |v| = D * 10^e with D the integer of the digits; we want the exponent of
     * the first digit. */
    *exp10 = e + len - 1;
    return len;
}

/* Contract in pg_interface.h: the shortest digits that read back to v (extra_float_digits
 * 1, the PostgreSQL 12+ default), in fixed notation for decimal exponents in [-4, 15) (float8)
 * or [-4, 6) (float4), else d.ddde+XX. */
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

/* Contract in pg_interface.h: a value that overflows, or underflows to zero from non-zero
 * digits, is refused, as float8in / float4in refuse it ("out of range"). */
bool wk__pg_parse_float(const uint8_t *s, size_t n, bool f32, double *out)
{
    while (n > 0 && wk__pg_is_space(s[0])) {
        s++;
        n--;
    }
    while (n > 0 && wk__pg_is_space(s[n - 1])) {
        n--;
    }
    if (n == 0) {
        return false;
    }
    size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
    if (n - i >= 3 && (s[i] | 0x20) >= 'a' && (s[i] | 0x20) <= 'z') {
        if (wk__pg_word_ieq(s, n, "nan")) {
            *out = NAN;
            return true;
        }
        if (wk__pg_word_ieq(s + i, n - i, "infinity") ||
            wk__pg_word_ieq(s + i, n - i, "inf")) {
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

/* ---- the operations of float4 and float8 ---- */

/* float4recv: the IEEE single's bits, big-endian. */
static wk_status f4_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                             wk_error *err)
{
    (void)a;
    if (n != 4) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary float4 must be 4 bytes");
    }
    uint32_t u = wk__pg_be32(p);
    memcpy(&v->f4, &u, 4);
    return WK_OK;
}
/* float4in: parsed as float8in would, rounded once to float. */
static wk_status f4_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                              wk_error *err)
{
    (void)a;
    double d;
    if (!wk__pg_parse_float(p, n, true, &d)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type real");
    }
    v->f4 = (float)d;
    return WK_OK;
}
/* float4send. */
static wk_status f4_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint32_t u;
    memcpy(&u, &v->f4, 4);
    uint8_t b[4];
    wk__pg_put32(b, u);
    return wk_buf_append(out, b, 4);
}
/* float4out. */
static wk_status f4_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk__pg_put_float(out, (double)v->f4, true);
}

/* float8recv: the IEEE double's bits, big-endian. */
static wk_status f8_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                             wk_error *err)
{
    (void)a;
    if (n != 8) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary float8 must be 8 bytes");
    }
    uint64_t u = wk__pg_be64(p);
    memcpy(&v->f8, &u, 8);
    return WK_OK;
}
/* float8in. */
static wk_status f8_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                              wk_error *err)
{
    (void)a;
    if (!wk__pg_parse_float(p, n, false, &v->f8)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type double");
    }
    return WK_OK;
}
/* float8send. */
static wk_status f8_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint64_t u;
    memcpy(&u, &v->f8, 8);
    uint8_t b[8];
    wk__pg_put64(b, u);
    return wk_buf_append(out, b, 8);
}
/* float8out. */
static wk_status f8_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk__pg_put_float(out, v->f8, false);
}

/* The operations tables of the generic codec functions. */
const wk__pg_type wk__pg_type_float4 = {WK__PG_CLASS_FLOAT4, f4_read_bin, f4_read_text,
                                        f4_write_bin, f4_write_text, 0, 0};
const wk__pg_type wk__pg_type_float8 = {WK__PG_CLASS_FLOAT8, f8_read_bin, f8_read_text,
                                        f8_write_bin, f8_write_text, 0, 0};

/* ---- direct decoders and encoders ---- */

/* Binary float4 straight into a C float (bit copy, no rounding). */
static wk_status f4_bin_f32(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                            wk_arena *a, wk_error *err)
{
    (void)d;
    (void)a;
    if (n != 4) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary float4 must be 4 bytes");
    }
    uint32_t u = wk__pg_be32(p);
    memcpy(out, &u, 4);
    return WK_OK;
}

/* Binary float8 straight into a C double. */
static wk_status f8_bin_f64(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                            wk_arena *a, wk_error *err)
{
    (void)d;
    (void)a;
    if (n != 8) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary float8 must be 8 bytes");
    }
    uint64_t u = wk__pg_be64(p);
    memcpy(out, &u, 8);
    return WK_OK;
}

/* Text float4 into a C float; array_c.c inlines this one for elements. */
static wk_status f4_text_f32(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                             wk_arena *a, wk_error *err)
{
    (void)d;
    (void)a;
    double v;
    if (!wk__pg_parse_float(p, n, true, &v)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type real");
    }
    *(float *)out = (float)v;
    return WK_OK;
}

/* Text float8 into a C double; array_c.c inlines this one for elements. */
static wk_status f8_text_f64(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                             wk_arena *a, wk_error *err)
{
    (void)d;
    (void)a;
    if (!wk__pg_parse_float(p, n, false, out)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type double");
    }
    return WK_OK;
}

/* The IEEE bits of a C float / double, stored big-endian, for FAST_ENC_BIN. */
static inline void stf4(uint8_t *p, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    wk__pg_put32(p, u);
}
static inline void stf8(uint8_t *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    wk__pg_put64(p, u);
}
FAST_ENC_BIN(enc_bin_f32, float, 4, stf4)
FAST_ENC_BIN(enc_bin_f64, double, 8, stf8)

/* ---- the codecs ---- */

OIDS(o_f4, WK_PG_OID_FLOAT4);
OIDS(a_f4, WK_PG_OID_FLOAT4_ARRAY);
OIDS(o_f8, WK_PG_OID_FLOAT8);
OIDS(a_f8, WK_PG_OID_FLOAT8_ARRAY);

/* float4 decodes to F32 and F64 (exact widening); float8 to F64 only, and encodes from F32
 * as well. */
const wk_pg_codec wk__pg_codec_float4 = {
    "float4", o_f4, a_f4, N(o_f4), WK_PG_BOTH_FORMATS, K(F32) | K(F64) | GEN_DEC_KINDS,
    K(F32) | K(TEXT), K(F32), 0,
    {DEC_ROW([WK_PG_KIND_F32] = f4_text_f32, [WK_PG_KIND_F64] = CV),
     DEC_ROW([WK_PG_KIND_F32] = f4_bin_f32, [WK_PG_KIND_F64] = CV)},
    {ENC_ROW([WK_PG_KIND_F32] = EC), ENC_ROW([WK_PG_KIND_F32] = enc_bin_f32)},
    &wk__pg_type_float4};

const wk_pg_codec wk__pg_codec_float8 = {
    "float8", o_f8, a_f8, N(o_f8), WK_PG_BOTH_FORMATS, K(F64) | GEN_DEC_KINDS,
    K(F32) | K(F64) | K(TEXT), K(F64), 0,
    {DEC_ROW([WK_PG_KIND_F64] = f8_text_f64), DEC_ROW([WK_PG_KIND_F64] = f8_bin_f64)},
    {ENC_ROW([WK_PG_KIND_F32] = EC, [WK_PG_KIND_F64] = EC),
     ENC_ROW([WK_PG_KIND_F32] = EC, [WK_PG_KIND_F64] = enc_bin_f64)},
    &wk__pg_type_float8};
