/*
 * numeric, PostgreSQL's numeric.c: the exact decimal, kept exactly as PostgreSQL holds it
 * (base-10000 digits, weight, sign, display scale), in both wire formats, with conversions to
 * and from decimal text, int64 and double.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the numeric codec (end of this file) ->
 * codec_generic.c's generic functions -> this file's reader into a wk_pg_numeric -> the
 * caller's NUMERIC, I64 or F64, PostgreSQL text, or a RAWNUM event (the digits as text, so a
 * JSON or MessagePack consumer loses none). The public wk_pg_numeric_* functions
 * (wirekit/pg.h) are the same conversions for callers holding a wk_pg_numeric.
 *
 * The binary form is validated as numeric_recv does (length, sign, dscale, every digit below
 * 10000). Text is parsed the way set_var_from_str does: decimal digits are regrouped into
 * base-10000 digits by their decimal weight, then leading and trailing zero groups are
 * stripped. Output follows get_str_from_var: the integer part, then exactly dscale digits.
 * Digits live in the caller's arena; nothing is allocated beyond what the input justifies.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/number_interface.h"
#include "pg/pg_codec.h"

#define NBASE 10000
#define DEC_DIGITS 4
#define NUMERIC_MAX_EXP 1000 /* NUMERIC_MAX_PRECISION: PostgreSQL's exponent limit */

/* NaN, +Infinity or -Infinity: the signs that carry no digits. */
static bool is_special(uint16_t sign)
{
    return sign == WK_PG_NUMERIC_NAN || sign == WK_PG_NUMERIC_PINF ||
           sign == WK_PG_NUMERIC_NINF;
}

/* numeric_recv: int16 ndigits, weight, sign, dscale, then the digits. The digits are copied
 * into the arena (required unless the value has none) so the result outlives the input. */
static wk_status numeric_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                  wk_error *err)
{
    if (n < 8) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, "binary numeric header needs 8 bytes");
    }
    uint16_t nd = wk__pg_be16(p);
    wk_pg_numeric *num = &v->num;
    num->weight = (int16_t)wk__pg_be16(p + 2);
    num->sign = wk__pg_be16(p + 4);
    num->dscale = wk__pg_be16(p + 6);
    if ((size_t)nd * 2 != n - 8) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0,
                           "binary numeric digit count does not match its length");
    }
    if (num->sign != WK_PG_NUMERIC_POS && num->sign != WK_PG_NUMERIC_NEG &&
        !is_special(num->sign)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 4, "invalid sign in binary numeric");
    }
    if (num->dscale > WK_PG_NUMERIC_DSCALE_MAX) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 6, "invalid scale in binary numeric");
    }
    for (size_t i = 0; i < nd; i++) {
        if (wk__pg_be16(p + 8 + 2 * i) >= NBASE) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, 8 + 2 * i, "invalid digit in binary numeric");
        }
    }
    if (is_special(num->sign) || nd == 0) {
        num->ndigits = 0;
        num->digits = NULL;
        return WK_OK;
    }
    if (a == NULL) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "decoding numeric digits needs an arena");
    }
    uint16_t *d = wk_arena_alloc(a, (size_t)nd * 2, 2);
    if (d == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for numeric digits");
    }
    for (size_t i = 0; i < nd; i++) {
        d[i] = wk__pg_be16(p + 8 + 2 * i);
    }
    num->ndigits = nd;
    num->digits = d;
    return WK_OK;
}

/* numeric_send of the native value; specials are sent with no digits. */
static wk_status numeric_write_bin(const wk__pg_native *v, wk_buf *out)
{
    const wk_pg_numeric *num = &v->num;
    uint16_t nd = is_special(num->sign) ? 0 : num->ndigits;
    wk_status st = wk_buf_reserve(out, 8 + (size_t)nd * 2);
    if (st != WK_OK) {
        return st;
    }
    uint8_t *q = out->data + out->len;
    wk__pg_put16(q, nd);
    wk__pg_put16(q + 2, (uint16_t)num->weight);
    wk__pg_put16(q + 4, num->sign);
    wk__pg_put16(q + 6, num->dscale);
    for (size_t i = 0; i < nd; i++) {
        wk__pg_put16(q + 8 + 2 * i, num->digits[i]);
    }
    out->len += 8 + (size_t)nd * 2;
    return WK_OK;
}

/* Public (wirekit/pg.h): get_str_from_var's text. The length is known up front, so the text is
 * written in place into one reservation. */
WK_API wk_status wk_pg_numeric_format(const wk_pg_numeric *num, wk_buf *out)
{
    switch (num->sign) {
    case WK_PG_NUMERIC_NAN: return wk_buf_append(out, "NaN", 3);
    case WK_PG_NUMERIC_PINF: return wk_buf_append(out, "Infinity", 8);
    case WK_PG_NUMERIC_NINF: return wk_buf_append(out, "-Infinity", 9);
    default: break;
    }
    /* The most the text can take: every integer group's four digits, the scale, a sign, the
     * point, and one group of slack because the fraction is written four digits at a time and
     * cut back to dscale afterwards. */
    size_t intdigits = num->weight >= 0 ? ((size_t)num->weight + 1) * DEC_DIGITS : 1;
    size_t cap = intdigits + (size_t)num->dscale + DEC_DIGITS + 3;
    wk_status st = wk_buf_reserve(out, cap);
    if (st != WK_OK) {
        return st;
    }
    char *q = (char *)out->data + out->len;
    char *start = q;
    if (num->sign == WK_PG_NUMERIC_NEG) {
        *q++ = '-';
    }
    int d;
    if (num->weight < 0) {
        *q++ = '0';
        d = num->weight + 1;
    } else {
        for (d = 0; d <= num->weight; d++) {
            unsigned dig = d < num->ndigits ? num->digits[d] : 0;
            if (d == 0) {
                /* the first group without leading zeros, every later one as four digits */
                q += wk__pg_fmt_uint_pad(q, dig, 1);
            } else {
                q += wk__pg_fmt_uint_pad(q, dig, 4);
            }
        }
    }
    if (num->dscale > 0) {
        *q++ = '.';
        char *endp = q + num->dscale;
        /* groups past ndigits are zeros; the last group may overrun endp, which is why the
         * reservation has a group of slack */
        for (int i = 0; q < endp; d++, i++) {
            unsigned dig = (d >= 0 && d < num->ndigits) ? num->digits[d] : 0;
            q += wk__pg_fmt_uint_pad(q, dig, 4);
        }
        q = endp;
    }
    out->len += (size_t)(q - start);
    return WK_OK;
}

/* numeric_out. */
static wk_status numeric_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk_pg_numeric_format(&v->num, out);
}

/* Public (wirekit/pg.h): numeric_in's syntax (spaces, sign, digits, point, exponent, NaN,
 * [+-]Infinity/inf), digits in `arena`. The decimal digits are not copied first: their
 * positions are found, then regrouped straight into base-10000 digits. */
WK_API wk_status wk_pg_numeric_parse(const char *s, size_t len, wk_arena *arena,
                                     wk_pg_numeric *out, wk_error *err)
{
    const uint8_t *p = (const uint8_t *)s;
    size_t i = 0, n = len;
    while (i < n && wk__pg_is_space(p[i])) {
        i++;
    }
    while (n > i && wk__pg_is_space(p[n - 1])) {
        n--;
    }
    memset(out, 0, sizeof *out);
    if (wk__pg_word_ieq(p + i, n - i, "nan")) {
        out->sign = WK_PG_NUMERIC_NAN;
        return WK_OK;
    }
    bool neg = false;
    if (i < n && (p[i] == '+' || p[i] == '-')) {
        neg = p[i] == '-';
        i++;
    }
    if (wk__pg_word_ieq(p + i, n - i, "infinity") ||
        wk__pg_word_ieq(p + i, n - i, "inf")) {
        out->sign = neg ? WK_PG_NUMERIC_NINF : WK_PG_NUMERIC_PINF;
        out->dscale = 0;
        return WK_OK;
    }
    /* First pass: syntax, digit counts, exponent. */
    size_t first = i, ndec = 0, before = 0;
    bool point = false;
    for (; i < n; i++) {
        if (p[i] >= '0' && p[i] <= '9') {
            ndec++;
            if (!point) {
                before++;
            }
        } else if (p[i] == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (ndec == 0) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type numeric");
    }
    size_t digits_end = i;
    /* The exponent is bounded while it is read, so a long run of exponent digits can neither
     * overflow nor cost more than a few iterations past the limit. */
    long exp10 = 0;
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        bool eneg = false;
        if (i < n && (p[i] == '+' || p[i] == '-')) {
            eneg = p[i] == '-';
            i++;
        }
        size_t es = i;
        for (; i < n && p[i] >= '0' && p[i] <= '9'; i++) {
            exp10 = exp10 * 10 + (p[i] - '0');
            if (exp10 > NUMERIC_MAX_EXP) {
                return wk__pg_fail(err, WK_ERR_RANGE, es, "numeric exponent out of range");
            }
        }
        if (i == es) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid exponent in numeric");
        }
        if (eneg) {
            exp10 = -exp10;
        }
    }
    if (i != n) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type numeric");
    }
    /* dweight: the decimal exponent of the first digit; dscale: the digits after the point
     * once the exponent has moved it (never negative: "1e3" has scale 0, as in PostgreSQL). */
    long dweight = (long)before - 1 + exp10;
    long dscale = (long)(ndec - before) - exp10;
    if (dscale < 0) {
        dscale = 0;
    }
    if (dscale > WK_PG_NUMERIC_DSCALE_MAX) {
        return wk__pg_fail(err, WK_ERR_RANGE, first, "numeric scale out of range");
    }
    /* The base-10000 weight of the group holding the first digit (floor division for negative
     * dweights), and how many decimal places that group has before the first digit, so that
     * every later digit lands at a fixed position: digit k goes to group (offset + k) / 4. */
    long weight;
    if (dweight >= 0) {
        weight = (dweight + 1 + DEC_DIGITS - 1) / DEC_DIGITS - 1;
    } else {
        weight = -((-dweight - 1) / DEC_DIGITS + 1);
    }
    long offset = (weight + 1) * DEC_DIGITS - (dweight + 1);
    size_t ngroups = (ndec + (size_t)offset + DEC_DIGITS - 1) / DEC_DIGITS;
    uint16_t *dig = NULL;
    if (ngroups > 0) {
        if (arena == NULL) {
            return wk__pg_fail(err, WK_ERR_ARG, 0, "parsing numeric digits needs an arena");
        }
        dig = wk_arena_alloc(arena, ngroups * 2, 2);
        if (dig == NULL) {
            return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for numeric digits");
        }
        memset(dig, 0, ngroups * 2);
    }
    /* Second pass: each decimal digit added into its group at its place value. */
    size_t pos = (size_t)offset; /* decimal position within the grouped digits */
    for (size_t j = first; j < digits_end; j++) {
        if (p[j] == '.') {
            continue;
        }
        static const uint16_t mul[4] = {1000, 100, 10, 1};
        dig[pos / 4] = (uint16_t)(dig[pos / 4] + (unsigned)(p[j] - '0') * mul[pos % 4]);
        pos++;
    }
    /* Strip leading and trailing zero groups. */
    size_t lo = 0, hi = ngroups;
    while (lo < hi && dig[lo] == 0) {
        lo++;
        weight--;
    }
    while (hi > lo && dig[hi - 1] == 0) {
        hi--;
    }
    if (lo == hi) {
        /* zero: PostgreSQL's canonical form has no digits, weight 0 and a positive sign */
        weight = 0;
        neg = false;
    }
    if (weight > INT16_MAX || weight < INT16_MIN) {
        return wk__pg_fail(err, WK_ERR_RANGE, first, "value overflows numeric format");
    }
    out->sign = neg ? WK_PG_NUMERIC_NEG : WK_PG_NUMERIC_POS;
    out->weight = (int16_t)weight;
    out->dscale = (uint16_t)dscale;
    out->ndigits = (uint16_t)(hi - lo);
    out->digits = lo < hi ? dig + lo : NULL;
    if (hi - lo > UINT16_MAX) {
        return wk__pg_fail(err, WK_ERR_RANGE, first, "numeric has too many digits");
    }
    return WK_OK;
}

/* numeric_in, into the native union. */
static wk_status numeric_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                   wk_error *err)
{
    return wk_pg_numeric_parse((const char *)p, n, a, &v->num, err);
}

/* Public (wirekit/pg.h): WK_ERR_RANGE for a special, a non-zero fraction or an overflow;
 * digits beyond ndigits are implicit zeros. */
WK_API wk_status wk_pg_numeric_to_i64(const wk_pg_numeric *num, int64_t *out)
{
    if (num->sign != WK_PG_NUMERIC_POS && num->sign != WK_PG_NUMERIC_NEG) {
        return WK_ERR_RANGE;
    }
    if (num->ndigits == 0) {
        *out = 0;
        return WK_OK;
    }
    for (int d = num->weight + 1; d < num->ndigits; d++) {
        if (d >= 0 && num->digits[d] != 0) {
            return WK_ERR_RANGE; /* a non-zero fraction digit */
        }
    }
    uint64_t acc = 0;
    uint64_t limit = num->sign == WK_PG_NUMERIC_NEG ? (uint64_t)INT64_MAX + 1 : INT64_MAX;
    for (int d = 0; d <= num->weight; d++) {
        unsigned dig = d < num->ndigits ? num->digits[d] : 0;
        if (acc > (limit - dig) / NBASE) {
            return WK_ERR_RANGE;
        }
        acc = acc * NBASE + dig;
    }
    *out = num->sign == WK_PG_NUMERIC_NEG ? (int64_t)(0 - acc) : (int64_t)acc;
    return WK_OK;
}

/* Public (wirekit/pg.h): the digits go to the caller's storage, trailing zero groups dropped
 * (the weight keeps the magnitude), as PostgreSQL's int64_to_numeric leaves them. */
WK_API void wk_pg_numeric_from_i64(int64_t v, uint16_t storage[WK_PG_NUMERIC_I64_DIGITS],
                                   wk_pg_numeric *out)
{
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    uint16_t tmp[WK_PG_NUMERIC_I64_DIGITS];
    int n = 0;
    while (u != 0) {
        tmp[n++] = (uint16_t)(u % NBASE);
        u /= NBASE;
    }
    int trail = 0;
    while (trail < n && tmp[trail] == 0) {
        trail++;
    }
    int nd = n - trail;
    for (int i = 0; i < nd; i++) {
        storage[i] = tmp[n - 1 - i];
    }
    out->sign = v < 0 ? WK_PG_NUMERIC_NEG : WK_PG_NUMERIC_POS;
    out->weight = (int16_t)(n == 0 ? 0 : n - 1);
    out->dscale = 0;
    out->ndigits = (uint16_t)nd;
    out->digits = storage;
}

/* Public (wirekit/pg.h): the nearest double, rounded once. */
WK_API wk_status wk_pg_numeric_to_double(const wk_pg_numeric *num, double *out)
{
    switch (num->sign) {
    case WK_PG_NUMERIC_NAN: *out = NAN; return WK_OK;
    case WK_PG_NUMERIC_PINF: *out = INFINITY; return WK_OK;
    case WK_PG_NUMERIC_NINF: *out = -INFINITY; return WK_OK;
    default: break;
    }
    /* Exact fast path: at most 4 base-10000 digits (16 decimal digits, below 2^53) scaled by
     * a power of ten up to 22: one correctly rounded multiply or divide. */
    if (num->ndigits <= 4) {
        uint64_t m = 0;
        for (int i = 0; i < num->ndigits; i++) {
            m = m * NBASE + num->digits[i];
        }
        int e = (num->weight - num->ndigits + 1) * DEC_DIGITS;
        if (m < ((uint64_t)1 << 53) && e >= -22 && e <= 22) {
            double d = e < 0 ? (double)m / wk__exact_pow10[-e] : (double)m * wk__exact_pow10[e];
            *out = num->sign == WK_PG_NUMERIC_NEG ? -d : d;
            return WK_OK;
        }
    }
    /* Render the significant digits only (no display scale) and let the kernel's parser
     * round once. */
    char stack[256];
    wk_buf b;
    wk_buf_init_fixed(&b, stack, sizeof stack);
    wk_pg_numeric t = *num;
    t.dscale = 0;
    int frac = (int)t.ndigits - 1 - t.weight;
    if (frac > 0) {
        t.dscale = (uint16_t)(frac * DEC_DIGITS);
    }
    wk_status st = wk_pg_numeric_format(&t, &b);
    if (st == WK_ERR_LIMIT) {
        wk_buf_init(&b, NULL, 0);
        st = wk_pg_numeric_format(&t, &b);
    }
    if (st == WK_OK) {
        *out = wk__decimal_to_double((const char *)b.data, b.len);
    }
    wk_buf_free(&b);
    return st;
}

/* Public (wirekit/pg.h): float8_numeric's result: the shortest round-trip digits of v, parsed
 * as numeric text (digits in `arena`); NaN and the infinities map to the specials. */
WK_API wk_status wk_pg_numeric_from_double(double v, wk_arena *arena, wk_pg_numeric *out,
                                           wk_error *err)
{
    if (isnan(v)) {
        memset(out, 0, sizeof *out);
        out->sign = WK_PG_NUMERIC_NAN;
        return WK_OK;
    }
    if (isinf(v)) {
        memset(out, 0, sizeof *out);
        out->sign = v > 0 ? WK_PG_NUMERIC_PINF : WK_PG_NUMERIC_NINF;
        return WK_OK;
    }
    char text[48];
    size_t o = 0;
    if (v == 0) {
        text[o++] = '0';
    } else {
        char d[20];
        int e;
        int len = wk__pg_shortest(v, false, d, &e);
        if (v < 0) {
            text[o++] = '-';
        }
        text[o++] = d[0];
        text[o++] = '.';
        memcpy(text + o, d + 1, (size_t)len - 1);
        o += (size_t)len - 1;
        text[o++] = 'e';
        o += (size_t)snprintf(text + o, sizeof text - o, "%d", e);
    }
    return wk_pg_numeric_parse(text, o, arena, out, err);
}

const wk__pg_type wk__pg_type_numeric = {WK__PG_CLASS_NUMERIC, numeric_read_bin,
                                         numeric_read_text, numeric_write_bin,
                                         numeric_write_text, 0, 0};

/* ---- the codec ---- */

OIDS(o_num, WK_PG_OID_NUMERIC);
OIDS(a_num, WK_PG_OID_NUMERIC_ARRAY);

/* Every kind goes through the generic conversions: NUMERIC keeps PostgreSQL's digits (in the
 * caller's arena), I64 and F64 convert, failing with WK_ERR_RANGE when the value does not
 * fit (I64 also when it has a fraction). */
const wk_pg_codec wk__pg_codec_numeric = {
    "numeric", o_num, a_num, N(o_num), WK_PG_BOTH_FORMATS,
    K(NUMERIC) | K(I64) | K(F64) | GEN_DEC_KINDS, K(NUMERIC) | K(I64) | K(F64) | K(TEXT),
    K(NUMERIC), 0,
    {DEC_ROW([WK_PG_KIND_NUMERIC] = CV, [WK_PG_KIND_I64] = CV, [WK_PG_KIND_F64] = CV),
     DEC_ROW([WK_PG_KIND_NUMERIC] = CV, [WK_PG_KIND_I64] = CV, [WK_PG_KIND_F64] = CV)},
    {ENC_ROW([WK_PG_KIND_NUMERIC] = EC, [WK_PG_KIND_I64] = EC, [WK_PG_KIND_F64] = EC),
     ENC_ROW([WK_PG_KIND_NUMERIC] = EC, [WK_PG_KIND_I64] = EC, [WK_PG_KIND_F64] = EC)},
    &wk__pg_type_numeric};
