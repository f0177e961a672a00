/*
 * bool, int2, int4, int8 and oid in both wire formats, plus the integer text helpers the
 * other type files share.
 *
 * Binary forms are fixed-size big-endian words, so a length check is the whole validation.
 * Text is parsed by hand (no strtol: inputs are byte slices, not C strings) with overflow
 * checks against the destination type, accepting the surrounding spaces PostgreSQL accepts.
 */
#include "pg/pg_interface.h"

/* ---- shared helpers ---- */

size_t wk__pg_fmt_uint_pad(char *out, uint64_t v, int width)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    size_t len = 0;
    for (int i = (int)n; i < width; i++) {
        out[len++] = '0';
    }
    while (n > 0) {
        out[len++] = tmp[--n];
    }
    return len;
}

wk_status wk__pg_put_i64(wk_buf *b, int64_t v)
{
    char tmp[24];
    size_t len = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        tmp[len++] = '-';
        u = 0 - u;
    }
    len += wk__pg_fmt_uint_pad(tmp + len, u, 1);
    return wk_buf_append(b, tmp, len);
}

static bool is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

bool wk__pg_parse_int(const uint8_t *s, size_t n, int64_t min, int64_t max, int64_t *out)
{
    size_t i = 0;
    while (i < n && is_space(s[i])) {
        i++;
    }
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    size_t start = i;
    uint64_t acc = 0;
    /* Limit: |min| for negatives, max for positives (as unsigned magnitudes). */
    uint64_t limit = neg ? (min < 0 ? (uint64_t)0 - (uint64_t)min : 0) : (uint64_t)max;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > limit || acc > (limit - d) / 10) { /* d > limit: "-1" with min 0 */
            return false;
        }
        acc = acc * 10 + d;
        i++;
    }
    if (i == start) {
        return false;
    }
    while (i < n && is_space(s[i])) {
        i++;
    }
    if (i != n) {
        return false;
    }
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return true;
}

/* ---- bool ---- */

static wk_status bool_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 1) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary bool must be 1 byte");
    }
    v->b = p[0] != 0; /* as boolrecv: any non-zero byte is true */
    return WK_OK;
}

static bool word_is(const uint8_t *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    if (n == 0 || n > wl) {
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

static wk_status bool_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    while (n > 0 && is_space(p[0])) {
        p++;
        n--;
    }
    while (n > 0 && is_space(p[n - 1])) {
        n--;
    }
    /* boolin: any unique prefix of true/false/yes/no, "on"/"off" with at least two letters. */
    if (word_is(p, n, "true") || word_is(p, n, "yes") || (n >= 2 && word_is(p, n, "on")) ||
        (n == 1 && p[0] == '1')) {
        v->b = true;
        return WK_OK;
    }
    if (word_is(p, n, "false") || word_is(p, n, "no") || (n >= 2 && word_is(p, n, "off")) ||
        (n == 1 && p[0] == '0')) {
        v->b = false;
        return WK_OK;
    }
    return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type boolean");
}

static wk_status bool_write_bin(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_push(out, v->b ? 1 : 0);
}

static wk_status bool_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_push(out, v->b ? 't' : 'f');
}

const wk__pg_type wk__pg_type_bool = {WK__PG_CLASS_BOOL, bool_read_bin, bool_read_text,
                                      bool_write_bin, bool_write_text, 0, 0};

/* ---- integers ---- */

static wk_status int_text(const uint8_t *p, size_t n, int64_t min, int64_t max, int64_t *out,
                          wk_error *err, const char *bad)
{
    if (!wk__pg_parse_int(p, n, min, max, out)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, bad);
    }
    return WK_OK;
}

static wk_status int2_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 2) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary int2 must be 2 bytes");
    }
    v->i = (int16_t)wk__pg_be16(p);
    return WK_OK;
}
static wk_status int2_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return int_text(p, n, INT16_MIN, INT16_MAX, &v->i, err,
                    "invalid input syntax or out of range for type smallint");
}
static wk_status int2_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[2];
    wk__pg_put16(b, (uint16_t)v->i);
    return wk_buf_append(out, b, 2);
}

static wk_status int4_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 4) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary int4 must be 4 bytes");
    }
    v->i = (int32_t)wk__pg_be32(p);
    return WK_OK;
}
static wk_status int4_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return int_text(p, n, INT32_MIN, INT32_MAX, &v->i, err,
                    "invalid input syntax or out of range for type integer");
}
static wk_status int4_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[4];
    wk__pg_put32(b, (uint32_t)v->i);
    return wk_buf_append(out, b, 4);
}

static wk_status int8_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 8) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary int8 must be 8 bytes");
    }
    v->i = (int64_t)wk__pg_be64(p);
    return WK_OK;
}
static wk_status int8_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return int_text(p, n, INT64_MIN, INT64_MAX, &v->i, err,
                    "invalid input syntax or out of range for type bigint");
}
static wk_status int8_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[8];
    wk__pg_put64(b, (uint64_t)v->i);
    return wk_buf_append(out, b, 8);
}

static wk_status int_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk__pg_put_i64(out, v->i);
}

static wk_status oid_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                              wk_error *err)
{
    (void)a;
    if (n != 4) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary oid must be 4 bytes");
    }
    v->i = (int64_t)wk__pg_be32(p);
    return WK_OK;
}
static wk_status oid_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    /* oidin accepts -2147483648..4294967295 and wraps negatives, as strtoul does. */
    int64_t x;
    wk_status st = int_text(p, n, INT32_MIN, UINT32_MAX, &x, err,
                            "invalid input syntax or out of range for type oid");
    if (st == WK_OK) {
        v->i = (int64_t)(uint32_t)x;
    }
    return st;
}

const wk__pg_type wk__pg_type_int2 = {WK__PG_CLASS_INT, int2_read_bin, int2_read_text,
                                      int2_write_bin, int_write_text, INT16_MIN, INT16_MAX};
const wk__pg_type wk__pg_type_int4 = {WK__PG_CLASS_INT, int4_read_bin, int4_read_text,
                                      int4_write_bin, int_write_text, INT32_MIN, INT32_MAX};
const wk__pg_type wk__pg_type_int8 = {WK__PG_CLASS_INT, int8_read_bin, int8_read_text,
                                      int8_write_bin, int_write_text, INT64_MIN, INT64_MAX};
const wk__pg_type wk__pg_type_oid = {WK__PG_CLASS_INT, oid_read_bin, oid_read_text,
                                     int4_write_bin, int_write_text, 0, UINT32_MAX};

/* ---- float4 / float8 ---- */

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
static wk_status f4_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint32_t u;
    memcpy(&u, &v->f4, 4);
    uint8_t b[4];
    wk__pg_put32(b, u);
    return wk_buf_append(out, b, 4);
}
static wk_status f4_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk__pg_put_float(out, (double)v->f4, true);
}

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
static wk_status f8_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                              wk_error *err)
{
    (void)a;
    if (!wk__pg_parse_float(p, n, false, &v->f8)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type double");
    }
    return WK_OK;
}
static wk_status f8_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint64_t u;
    memcpy(&u, &v->f8, 8);
    uint8_t b[8];
    wk__pg_put64(b, u);
    return wk_buf_append(out, b, 8);
}
static wk_status f8_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk__pg_put_float(out, v->f8, false);
}

const wk__pg_type wk__pg_type_float4 = {WK__PG_CLASS_FLOAT4, f4_read_bin, f4_read_text,
                                        f4_write_bin, f4_write_text, 0, 0};
const wk__pg_type wk__pg_type_float8 = {WK__PG_CLASS_FLOAT8, f8_read_bin, f8_read_text,
                                        f8_write_bin, f8_write_text, 0, 0};
