/*
 * The integer types, PostgreSQL's int.c, int8.c and oid.c: int2, int4, int8 and oid in both
 * wire formats, int2vector and oidvector (read as text), and the integer text helpers the
 * other type files share.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the codecs below. The combinations a driver
 * hits on every row (each type in its natural C kind, both formats) are direct functions here:
 * a length check and a load, or a hand parser, with no table indirection; array_c.c inlines
 * the text ones for array elements (builtins.c tells which by address). Every other kind goes
 * through codec_generic.c, which calls the wk__pg_type tables defined here.
 *
 * Binary forms are fixed-size big-endian words, so a length check is the whole validation.
 * Text is parsed by hand (no strtol: inputs are byte slices, not C strings) with overflow
 * checks against the destination type, accepting the surrounding spaces PostgreSQL accepts.
 */
#include "pg/pg_codec.h"

/* ---- shared helpers ---- */

/* Contract in pg_interface.h; digits are produced backwards into a stack buffer, then
 * copied after the padding. */
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

/* Contract in pg_interface.h; INT64_MIN is negated as an unsigned value. */
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

/* Contract in pg_interface.h. The magnitude is accumulated unsigned against the bound of
 * its sign, so INT64_MIN parses without overflow. */
bool wk__pg_parse_int(const uint8_t *s, size_t n, int64_t min, int64_t max, int64_t *out)
{
    size_t i = 0;
    while (i < n && wk__pg_is_space(s[i])) {
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
    while (i < n && wk__pg_is_space(s[i])) {
        i++;
    }
    if (i != n) {
        return false;
    }
    *out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
    return true;
}

/* ---- integers ---- */

/* The text reader of every integer type: wk__pg_parse_int within [min, max], `bad` as the
 * message on failure. */
static wk_status int_text(const uint8_t *p, size_t n, int64_t min, int64_t max, int64_t *out,
                          wk_error *err, const char *bad)
{
    if (!wk__pg_parse_int(p, n, min, max, out)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, bad);
    }
    return WK_OK;
}

/* int2recv: 2 bytes, big-endian, signed. */
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
/* int2in. */
static wk_status int2_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return int_text(p, n, INT16_MIN, INT16_MAX, &v->i, err,
                    "invalid input syntax or out of range for type smallint");
}
/* int2send of native .i (already range-checked by the caller). */
static wk_status int2_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[2];
    wk__pg_put16(b, (uint16_t)v->i);
    return wk_buf_append(out, b, 2);
}

/* int4recv: 4 bytes, big-endian, signed. */
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
/* int4in. */
static wk_status int4_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return int_text(p, n, INT32_MIN, INT32_MAX, &v->i, err,
                    "invalid input syntax or out of range for type integer");
}
/* int4send; also oidsend (the low 32 bits are the same bytes). */
static wk_status int4_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[4];
    wk__pg_put32(b, (uint32_t)v->i);
    return wk_buf_append(out, b, 4);
}

/* int8recv: 8 bytes, big-endian, signed. */
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
/* int8in. */
static wk_status int8_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return int_text(p, n, INT64_MIN, INT64_MAX, &v->i, err,
                    "invalid input syntax or out of range for type bigint");
}
/* int8send. */
static wk_status int8_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[8];
    wk__pg_put64(b, (uint64_t)v->i);
    return wk_buf_append(out, b, 8);
}

/* int2out / int4out / int8out / oidout: plain decimal. */
static wk_status int_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk__pg_put_i64(out, v->i);
}

/* oidrecv: 4 bytes, big-endian, unsigned. */
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
/* oidin. */
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

/* The operations tables, with the range a C value must fit when encoded. */
const wk__pg_type wk__pg_type_int2 = {WK__PG_CLASS_INT, int2_read_bin, int2_read_text,
                                      int2_write_bin, int_write_text, INT16_MIN, INT16_MAX};
const wk__pg_type wk__pg_type_int4 = {WK__PG_CLASS_INT, int4_read_bin, int4_read_text,
                                      int4_write_bin, int_write_text, INT32_MIN, INT32_MAX};
const wk__pg_type wk__pg_type_int8 = {WK__PG_CLASS_INT, int8_read_bin, int8_read_text,
                                      int8_write_bin, int_write_text, INT64_MIN, INT64_MAX};
const wk__pg_type wk__pg_type_oid = {WK__PG_CLASS_INT, oid_read_bin, oid_read_text,
                                     int4_write_bin, int_write_text, 0, UINT32_MAX};

/* ---- direct decoders and encoders ---- */

/* A binary integer decoder to its natural C kind: the length check is the whole validation. */
#define FAST_BIN_INT(name, ctype, bytes, load, msg)                                           \
    static wk_status name(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,      \
                          wk_arena *a, wk_error *err)                                         \
    {                                                                                         \
        (void)d;                                                                              \
        (void)a;                                                                              \
        if (n != (bytes)) {                                                                   \
            return wk__pg_fail(err, WK_ERR_SYNTAX, 0, msg);                                   \
        }                                                                                     \
        *(ctype *)out = (ctype)load(p);                                                       \
        return WK_OK;                                                                         \
    }

/* The binary decoders of int2 / int4 / int8 / oid into int16_t / int32_t / int64_t / uint32_t. */
FAST_BIN_INT(int2_bin_i16, int16_t, 2, wk__pg_be16, "binary int2 must be 2 bytes")
FAST_BIN_INT(int4_bin_i32, int32_t, 4, wk__pg_be32, "binary int4 must be 4 bytes")
FAST_BIN_INT(int8_bin_i64, int64_t, 8, wk__pg_be64, "binary int8 must be 8 bytes")
FAST_BIN_INT(oid_bin_u32, uint32_t, 4, wk__pg_be32, "binary oid must be 4 bytes")

/* Text integers: a tight loop for the common shape (optional '-', 1..18 digits), the
 * general parser (spaces, '+', overflow checks) for anything else. */
#define FAST_TEXT_INT(name, ctype, lo, hi, msg)                                               \
    static wk_status name(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,      \
                          wk_arena *a, wk_error *err)                                         \
    {                                                                                         \
        (void)d;                                                                              \
        (void)a;                                                                              \
        size_t i = n > 0 && p[0] == '-' ? 1 : 0;                                              \
        if (n > i && n - i <= 18) {                                                           \
            int64_t v = 0;                                                                    \
            size_t j = i;                                                                     \
            for (; j < n && (unsigned)(p[j] - '0') < 10; j++) {                               \
                v = v * 10 + (p[j] - '0');                                                    \
            }                                                                                 \
            if (j == n) {                                                                     \
                v = i ? -v : v;                                                               \
                if (v >= (lo) && v <= (hi)) {                                                 \
                    *(ctype *)out = (ctype)v;                                                 \
                    return WK_OK;                                                             \
                }                                                                             \
                return wk__pg_fail(err, WK_ERR_SYNTAX, 0, msg);                               \
            }                                                                                 \
        }                                                                                     \
        int64_t v;                                                                            \
        if (!wk__pg_parse_int(p, n, (lo), (hi), &v)) {                                        \
            return wk__pg_fail(err, WK_ERR_SYNTAX, 0, msg);                                   \
        }                                                                                     \
        *(ctype *)out = (ctype)v;                                                             \
        return WK_OK;                                                                         \
    }

FAST_TEXT_INT(int2_text_i16, int16_t, INT16_MIN, INT16_MAX,
              "invalid input syntax or out of range for type smallint")
FAST_TEXT_INT(int4_text_i32, int32_t, INT32_MIN, INT32_MAX,
              "invalid input syntax or out of range for type integer")
FAST_TEXT_INT(int8_text_i64, int64_t, INT64_MIN, INT64_MAX,
              "invalid input syntax or out of range for type bigint")

/* Big-endian stores of each C integer, for FAST_ENC_BIN. */
static inline void st16(uint8_t *p, int16_t v)
{
    wk__pg_put16(p, (uint16_t)v);
}
static inline void st32(uint8_t *p, int32_t v)
{
    wk__pg_put32(p, (uint32_t)v);
}
static inline void st64(uint8_t *p, int64_t v)
{
    wk__pg_put64(p, (uint64_t)v);
}
static inline void stu32(uint8_t *p, uint32_t v)
{
    wk__pg_put32(p, v);
}

/* int2send / int4send / int8send / oidsend of the C integer; builtins.c recognises them. */
FAST_ENC_BIN(enc_bin_i16, int16_t, 2, st16)
FAST_ENC_BIN(enc_bin_i32, int32_t, 4, st32)
FAST_ENC_BIN(enc_bin_i64, int64_t, 8, st64)
FAST_ENC_BIN(enc_bin_u32, uint32_t, 4, stu32)

/* int2out / int4out / int8out of a C integer, without the native union. */
#define FAST_ENC_TEXT_INT(name, ctype)                                                        \
    static wk_status name(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err) \
    {                                                                                         \
        (void)e;                                                                              \
        ctype v;                                                                              \
        memcpy(&v, in, sizeof v);                                                             \
        if (wk__pg_put_i64(out, (int64_t)v) != WK_OK) {                                       \
            return wk__pg_fail(err, WK_ERR_LIMIT, out->len, "output buffer is full");         \
        }                                                                                     \
        return WK_OK;                                                                         \
    }

FAST_ENC_TEXT_INT(enc_text_i16, int16_t)
FAST_ENC_TEXT_INT(enc_text_i32, int32_t)
FAST_ENC_TEXT_INT(enc_text_i64, int64_t)

/* ---- the codecs ---- */

OIDS(o_int2, WK_PG_OID_INT2);
OIDS(a_int2, WK_PG_OID_INT2_ARRAY);
OIDS(o_int4, WK_PG_OID_INT4);
OIDS(a_int4, WK_PG_OID_INT4_ARRAY);
OIDS(o_int8, WK_PG_OID_INT8);
OIDS(a_int8, WK_PG_OID_INT8_ARRAY);
OIDS(o_oid, WK_PG_OID_OID);
OIDS(a_oid, WK_PG_OID_OID_ARRAY);

/* Each decodes to its own width and the wider integer kinds (int2 and int4 also to F64, which
 * holds them exactly) and encodes from its width and the narrower ones. */
const wk_pg_codec wk__pg_codec_int2 = {
    "int2", o_int2, a_int2, N(o_int2), WK_PG_BOTH_FORMATS,
    K(I16) | K(I32) | K(I64) | K(F64) | GEN_DEC_KINDS, K(I16) | K(TEXT), K(I16), 0,
    {DEC_ROW([WK_PG_KIND_I16] = int2_text_i16, [WK_PG_KIND_I32] = CV, [WK_PG_KIND_I64] = CV,
             [WK_PG_KIND_F64] = CV),
     DEC_ROW([WK_PG_KIND_I16] = int2_bin_i16, [WK_PG_KIND_I32] = CV, [WK_PG_KIND_I64] = CV,
             [WK_PG_KIND_F64] = CV)},
    {ENC_ROW([WK_PG_KIND_I16] = enc_text_i16), ENC_ROW([WK_PG_KIND_I16] = enc_bin_i16)},
    &wk__pg_type_int2};

const wk_pg_codec wk__pg_codec_int4 = {
    "int4", o_int4, a_int4, N(o_int4), WK_PG_BOTH_FORMATS,
    K(I32) | K(I64) | K(F64) | GEN_DEC_KINDS, K(I16) | K(I32) | K(TEXT), K(I32), 0,
    {DEC_ROW([WK_PG_KIND_I32] = int4_text_i32, [WK_PG_KIND_I64] = CV, [WK_PG_KIND_F64] = CV),
     DEC_ROW([WK_PG_KIND_I32] = int4_bin_i32, [WK_PG_KIND_I64] = CV, [WK_PG_KIND_F64] = CV)},
    {ENC_ROW([WK_PG_KIND_I16] = EC, [WK_PG_KIND_I32] = enc_text_i32),
     ENC_ROW([WK_PG_KIND_I16] = EC, [WK_PG_KIND_I32] = enc_bin_i32)},
    &wk__pg_type_int4};

const wk_pg_codec wk__pg_codec_int8 = {
    "int8", o_int8, a_int8, N(o_int8), WK_PG_BOTH_FORMATS, K(I64) | GEN_DEC_KINDS,
    K(I16) | K(I32) | K(I64) | K(TEXT), K(I64), 0,
    {DEC_ROW([WK_PG_KIND_I64] = int8_text_i64), DEC_ROW([WK_PG_KIND_I64] = int8_bin_i64)},
    {ENC_ROW([WK_PG_KIND_I16] = EC, [WK_PG_KIND_I32] = EC, [WK_PG_KIND_I64] = enc_text_i64),
     ENC_ROW([WK_PG_KIND_I16] = EC, [WK_PG_KIND_I32] = EC, [WK_PG_KIND_I64] = enc_bin_i64)},
    &wk__pg_type_int8};

const wk_pg_codec wk__pg_codec_oid = {
    "oid", o_oid, a_oid, N(o_oid), WK_PG_BOTH_FORMATS, K(U32) | K(I64) | GEN_DEC_KINDS,
    K(U32) | K(TEXT), K(U32), 0,
    {DEC_ROW([WK_PG_KIND_U32] = CV, [WK_PG_KIND_I64] = CV),
     DEC_ROW([WK_PG_KIND_U32] = oid_bin_u32, [WK_PG_KIND_I64] = CV)},
    {ENC_ROW([WK_PG_KIND_U32] = EC), ENC_ROW([WK_PG_KIND_U32] = enc_bin_u32)},
    &wk__pg_type_oid};

/* ---- int2vector, oidvector: a one-dimensional array on the wire, space-separated text ---- */

/* int2vectorout / oidvectorout of the array_send layout the server uses for both: ndim (0 or
 * 1), flags 0, element type 21/26, then (for ndim 1) length and lower bound, then per element
 * a 4-byte length that must equal the width and the value. Rendered space-separated. The
 * codec's first OID (30 = oidvector) says which. */
static wk_status r_vector(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                          wk_error *err)
{
    bool is_oid = d->codec->oids[0] == 30;
    wk_status st = wk__pg_need(n, 12, "binary vector header is truncated", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t ndim = (int32_t)wk__pg_be32(p);
    uint32_t flags = wk__pg_be32(p + 4);
    uint32_t elem = wk__pg_be32(p + 8);
    if (ndim < 0 || ndim > 1 || flags != 0 || elem != (is_oid ? 26u : 21u)) {
        return wk__pg_bad_input(err, 0, "invalid vector header");
    }
    size_t pos = 12;
    uint32_t count = 0;
    if (ndim == 1) {
        st = wk__pg_need(n, 20, "binary vector dimension is truncated", err);
        if (st != WK_OK) {
            return st;
        }
        int32_t dim = (int32_t)wk__pg_be32(p + 12);
        if (dim < 0 || (size_t)dim > (n - 20) / (is_oid ? 8u : 6u)) {
            return wk__pg_bad_input(err, 12, "invalid vector length");
        }
        count = (uint32_t)dim;
        pos = 20;
    }
    size_t width = is_oid ? 4 : 2;
    for (uint32_t i = 0; i < count; i++) {
        if (n - pos < 4 + width || wk__pg_be32(p + pos) != width) {
            return wk__pg_bad_input(err, pos, "invalid vector element");
        }
        pos += 4;
        int64_t v = is_oid ? (int64_t)wk__pg_be32(p + pos) : (int16_t)wk__pg_be16(p + pos);
        pos += width;
        if ((i > 0 && wk_buf_push(out, ' ') != WK_OK) || wk__pg_put_i64(out, v) != WK_OK) {
            return wk__pg_nomem(err, pos);
        }
    }
    if (pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the vector");
    }
    return WK_OK;
}

/* int2vectorin / oidvectorin: space-separated integers (any run of spaces) to that array
 * layout; the header's ndim and length are patched in once the elements are counted. */
static wk_status p_vector(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                          wk_error *err)
{
    bool is_oid = e->codec->oids[0] == 30;
    size_t head = out->len;
    uint8_t h[20] = {0};
    wk__pg_put32(h + 8, is_oid ? 26u : 21u);
    if (wk_buf_append(out, h, 20) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    uint32_t count = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && wk__pg_is_space(s[i])) {
            i++;
        }
        if (i == n) {
            break;
        }
        size_t st = i;
        while (i < n && !wk__pg_is_space(s[i])) {
            i++;
        }
        int64_t v;
        if (!wk__pg_parse_int(s + st, i - st, is_oid ? 0 : INT16_MIN,
                              is_oid ? UINT32_MAX : INT16_MAX, &v)) {
            return wk__pg_bad_input(err, st, "invalid vector element");
        }
        if (wk__pg_put_be(out, is_oid ? 4 : 2, 4) != WK_OK ||
            wk__pg_put_be(out, (uint64_t)v, is_oid ? 4 : 2) != WK_OK) {
            return wk__pg_nomem(err, st);
        }
        count++;
    }
    if (count == 0) {
        /* int2vectorrecv / oidvectorrecv refuse the empty array the server itself sends */
        out->len = head;
        return wk__pg_fail(err, WK_ERR_UNSUPPORTED, 0,
                           "an empty vector is only accepted as text by the server");
    }
    wk__pg_put32(out->data + head, 1);
    wk__pg_put32(out->data + head + 12, count);
    wk__pg_put32(out->data + head + 16, 0);
    return WK_OK;
}

static const wk__pg_rtype rt_vector = {r_vector, p_vector};

R_OIDS(c_vector, 22);
R_AOIDS(c_vector, 1006);
const wk_pg_codec wk__pg_codec_int2vector =
    RC("int2vector", &rt_vector, WK_PG_BOTH_FORMATS, c_vector);

R_OIDS(c_oidvector, 30);
R_AOIDS(c_oidvector, 1013);
const wk_pg_codec wk__pg_codec_oidvector =
    RC("oidvector", &rt_vector, WK_PG_BOTH_FORMATS, c_oidvector);
