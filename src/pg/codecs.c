/*
 * The built-in codecs: one static, immutable wk_pg_codec per PostgreSQL type family, with its
 * metadata (OIDs, array OIDs, formats, kinds, rank) and its function tables.
 *
 * The combinations a driver hits on every row (integers, floats, bool, text, timestamps in
 * their natural C kinds, both formats) have direct functions here: a length check and a load,
 * or a hand parser, with no table indirection. Everything else points at the generic,
 * table-driven functions of codec_generic.c.
 */
#include "pg/pg_interface.h"
#include "wirekit/utf8.h"

#define K(x) WK_PG_KIND_MASK(WK_PG_KIND_##x)
#define GEN_DEC_KINDS (K(TEXT) | K(VALUE) | K(EVENTS))
#define CV wk__pg_dec_convert
#define EC wk__pg_enc_convert
#define DEC_ROW(...)                                                                          \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = wk__pg_dec_text, [WK_PG_KIND_VALUE] = wk__pg_dec_value,           \
        [WK_PG_KIND_EVENTS] = wk__pg_dec_events, __VA_ARGS__                                  \
    }
#define ENC_ROW(...)                                                                          \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = wk__pg_enc_text, __VA_ARGS__                                      \
    }

/* ---- fast decoders ---- */

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

static wk_status text_str(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                          wk_arena *a, wk_error *err)
{
    (void)d;
    (void)a;
    size_t bad;
    if (n != 0 && !wk_utf8_valid(p, n, &bad)) {
        return wk__pg_fail(err, WK_ERR_UTF8, bad, "text value is not valid UTF-8");
    }
    wk_slice *s = out;
    s->ptr = (const char *)p;
    s->len = n;
    return WK_OK;
}

wk__pg_fast_form wk__pg_text_fast_form(wk_pg_decode_fn fn)
{
    if (fn == int2_text_i16) {
        return WK__PG_FAST_I16;
    }
    if (fn == int4_text_i32) {
        return WK__PG_FAST_I32;
    }
    if (fn == int8_text_i64) {
        return WK__PG_FAST_I64;
    }
    if (fn == f4_text_f32) {
        return WK__PG_FAST_F32;
    }
    return fn == f8_text_f64 ? WK__PG_FAST_F64 : WK__PG_FAST_NONE;
}

/* Types whose natural kind is one native integer: read through the type table, store. */
#define FAST_NATIVE(name, type, ctype)                                                        \
    static wk_status name(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,      \
                          wk_arena *a, wk_error *err)                                         \
    {                                                                                         \
        wk__pg_native v;                                                                      \
        wk_status st = d->format == WK_PG_BINARY ? type.read_bin(p, n, &v, a, err)            \
                                                 : type.read_text(p, n, &v, a, err);          \
        if (st == WK_OK) {                                                                    \
            *(ctype *)out = (ctype)v.i;                                                       \
        }                                                                                     \
        return st;                                                                            \
    }

FAST_NATIVE(ts_i64, wk__pg_type_timestamp, int64_t)
FAST_NATIVE(tstz_i64, wk__pg_type_timestamptz, int64_t)
FAST_NATIVE(date_i32, wk__pg_type_date, int32_t)

/* ---- fast encoders ---- */

#define FAST_ENC_BIN(name, ctype, bytes, store)                                               \
    static wk_status name(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err) \
    {                                                                                         \
        (void)e;                                                                              \
        if (wk_buf_reserve(out, bytes) != WK_OK) {                                            \
            return wk__pg_fail(err, WK_ERR_LIMIT, out->len, "output buffer is full");         \
        }                                                                                     \
        ctype v;                                                                              \
        memcpy(&v, in, sizeof v);                                                             \
        store(out->data + out->len, v);                                                       \
        out->len += bytes;                                                                    \
        return WK_OK;                                                                         \
    }

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
static inline void stbool(uint8_t *p, bool v)
{
    p[0] = v ? 1 : 0;
}

FAST_ENC_BIN(enc_bin_i16, int16_t, 2, st16)
FAST_ENC_BIN(enc_bin_i32, int32_t, 4, st32)
FAST_ENC_BIN(enc_bin_i64, int64_t, 8, st64)
FAST_ENC_BIN(enc_bin_u32, uint32_t, 4, stu32)
FAST_ENC_BIN(enc_bin_f32, float, 4, stf4)
FAST_ENC_BIN(enc_bin_f64, double, 8, stf8)
FAST_ENC_BIN(enc_bin_bool, bool, 1, stbool)

size_t wk__pg_fixed_bin_width(wk_pg_encode_fn fn)
{
    if (fn == enc_bin_i64 || fn == enc_bin_f64) {
        return 8;
    }
    if (fn == enc_bin_i32 || fn == enc_bin_f32 || fn == enc_bin_u32) {
        return 4;
    }
    return fn == enc_bin_i16 ? 2 : 0;
}

static wk_status enc_bin_ts(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    (void)e;
    int64_t v;
    memcpy(&v, in, 8);
    /* timestamp_recv's range: 4713 BC .. 294276 AD, or an infinity. */
    if (v != INT64_MIN && v != INT64_MAX &&
        (v < INT64_C(-211813488000000000) || v >= INT64_C(9223371331200000000))) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "timestamp out of range");
    }
    if (wk_buf_reserve(out, 8) != WK_OK) {
        return wk__pg_fail(err, WK_ERR_LIMIT, out->len, "output buffer is full");
    }
    wk__pg_put64(out->data + out->len, (uint64_t)v);
    out->len += 8;
    return WK_OK;
}

static wk_status enc_str(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    (void)e;
    const wk_slice *s = in;
    if (wk_buf_append(out, s->ptr, s->len) != WK_OK) {
        return wk__pg_fail(err, WK_ERR_LIMIT, out->len, "output buffer is full");
    }
    return WK_OK;
}

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

/* ---- the table ---- */

#define OIDS(name, ...) static const wk_pg_oid name[] = {__VA_ARGS__}
#define N(a) (sizeof(a) / sizeof((a)[0]))

OIDS(o_bool, WK_PG_OID_BOOL);
OIDS(a_bool, WK_PG_OID_BOOL_ARRAY);
OIDS(o_int2, WK_PG_OID_INT2);
OIDS(a_int2, WK_PG_OID_INT2_ARRAY);
OIDS(o_int4, WK_PG_OID_INT4);
OIDS(a_int4, WK_PG_OID_INT4_ARRAY);
OIDS(o_int8, WK_PG_OID_INT8);
OIDS(a_int8, WK_PG_OID_INT8_ARRAY);
OIDS(o_oid, WK_PG_OID_OID);
OIDS(a_oid, WK_PG_OID_OID_ARRAY);
OIDS(o_f4, WK_PG_OID_FLOAT4);
OIDS(a_f4, WK_PG_OID_FLOAT4_ARRAY);
OIDS(o_f8, WK_PG_OID_FLOAT8);
OIDS(a_f8, WK_PG_OID_FLOAT8_ARRAY);
OIDS(o_num, WK_PG_OID_NUMERIC);
OIDS(a_num, WK_PG_OID_NUMERIC_ARRAY);
/* 705 is "unknown": untyped literals (e.g. inside ROW()) are sent as their text. */
OIDS(o_text, WK_PG_OID_TEXT, WK_PG_OID_VARCHAR, WK_PG_OID_BPCHAR, WK_PG_OID_NAME, 705);
OIDS(a_text, WK_PG_OID_TEXT_ARRAY, WK_PG_OID_VARCHAR_ARRAY, WK_PG_OID_BPCHAR_ARRAY,
     WK_PG_OID_NAME_ARRAY, 0);
OIDS(o_char, WK_PG_OID_CHAR);
OIDS(a_char, WK_PG_OID_CHAR_ARRAY);
OIDS(o_bytea, WK_PG_OID_BYTEA);
OIDS(a_bytea, WK_PG_OID_BYTEA_ARRAY);
OIDS(o_uuid, WK_PG_OID_UUID);
OIDS(a_uuid, WK_PG_OID_UUID_ARRAY);
OIDS(o_json, WK_PG_OID_JSON);
OIDS(a_json, WK_PG_OID_JSON_ARRAY);
OIDS(o_jsonb, WK_PG_OID_JSONB);
OIDS(a_jsonb, WK_PG_OID_JSONB_ARRAY);
OIDS(o_date, WK_PG_OID_DATE);
OIDS(a_date, WK_PG_OID_DATE_ARRAY);
OIDS(o_time, WK_PG_OID_TIME);
OIDS(a_time, WK_PG_OID_TIME_ARRAY);
OIDS(o_timetz, WK_PG_OID_TIMETZ);
OIDS(a_timetz, WK_PG_OID_TIMETZ_ARRAY);
OIDS(o_ts, WK_PG_OID_TIMESTAMP);
OIDS(a_ts, WK_PG_OID_TIMESTAMP_ARRAY);
OIDS(o_tstz, WK_PG_OID_TIMESTAMPTZ);
OIDS(a_tstz, WK_PG_OID_TIMESTAMPTZ_ARRAY);
OIDS(o_iv, WK_PG_OID_INTERVAL);
OIDS(a_iv, WK_PG_OID_INTERVAL_ARRAY);
OIDS(o_inet, WK_PG_OID_INET);
OIDS(a_inet, WK_PG_OID_INET_ARRAY);
OIDS(o_cidr, WK_PG_OID_CIDR);
OIDS(a_cidr, WK_PG_OID_CIDR_ARRAY);

static const wk_pg_codec c_bool = {
    "bool", o_bool, a_bool, N(o_bool), WK_PG_BOTH_FORMATS, K(BOOL) | GEN_DEC_KINDS,
    K(BOOL) | K(TEXT), K(BOOL), 0,
    {DEC_ROW([WK_PG_KIND_BOOL] = CV), DEC_ROW([WK_PG_KIND_BOOL] = CV)},
    {ENC_ROW([WK_PG_KIND_BOOL] = EC), ENC_ROW([WK_PG_KIND_BOOL] = enc_bin_bool)},
    &wk__pg_type_bool};

static const wk_pg_codec c_int2 = {
    "int2", o_int2, a_int2, N(o_int2), WK_PG_BOTH_FORMATS,
    K(I16) | K(I32) | K(I64) | K(F64) | GEN_DEC_KINDS, K(I16) | K(TEXT), K(I16), 0,
    {DEC_ROW([WK_PG_KIND_I16] = int2_text_i16, [WK_PG_KIND_I32] = CV, [WK_PG_KIND_I64] = CV,
             [WK_PG_KIND_F64] = CV),
     DEC_ROW([WK_PG_KIND_I16] = int2_bin_i16, [WK_PG_KIND_I32] = CV, [WK_PG_KIND_I64] = CV,
             [WK_PG_KIND_F64] = CV)},
    {ENC_ROW([WK_PG_KIND_I16] = enc_text_i16), ENC_ROW([WK_PG_KIND_I16] = enc_bin_i16)},
    &wk__pg_type_int2};

static const wk_pg_codec c_int4 = {
    "int4", o_int4, a_int4, N(o_int4), WK_PG_BOTH_FORMATS,
    K(I32) | K(I64) | K(F64) | GEN_DEC_KINDS, K(I16) | K(I32) | K(TEXT), K(I32), 0,
    {DEC_ROW([WK_PG_KIND_I32] = int4_text_i32, [WK_PG_KIND_I64] = CV, [WK_PG_KIND_F64] = CV),
     DEC_ROW([WK_PG_KIND_I32] = int4_bin_i32, [WK_PG_KIND_I64] = CV, [WK_PG_KIND_F64] = CV)},
    {ENC_ROW([WK_PG_KIND_I16] = EC, [WK_PG_KIND_I32] = enc_text_i32),
     ENC_ROW([WK_PG_KIND_I16] = EC, [WK_PG_KIND_I32] = enc_bin_i32)},
    &wk__pg_type_int4};

static const wk_pg_codec c_int8 = {
    "int8", o_int8, a_int8, N(o_int8), WK_PG_BOTH_FORMATS, K(I64) | GEN_DEC_KINDS,
    K(I16) | K(I32) | K(I64) | K(TEXT), K(I64), 0,
    {DEC_ROW([WK_PG_KIND_I64] = int8_text_i64), DEC_ROW([WK_PG_KIND_I64] = int8_bin_i64)},
    {ENC_ROW([WK_PG_KIND_I16] = EC, [WK_PG_KIND_I32] = EC, [WK_PG_KIND_I64] = enc_text_i64),
     ENC_ROW([WK_PG_KIND_I16] = EC, [WK_PG_KIND_I32] = EC, [WK_PG_KIND_I64] = enc_bin_i64)},
    &wk__pg_type_int8};

static const wk_pg_codec c_oid = {
    "oid", o_oid, a_oid, N(o_oid), WK_PG_BOTH_FORMATS, K(U32) | K(I64) | GEN_DEC_KINDS,
    K(U32) | K(TEXT), K(U32), 0,
    {DEC_ROW([WK_PG_KIND_U32] = CV, [WK_PG_KIND_I64] = CV),
     DEC_ROW([WK_PG_KIND_U32] = oid_bin_u32, [WK_PG_KIND_I64] = CV)},
    {ENC_ROW([WK_PG_KIND_U32] = EC), ENC_ROW([WK_PG_KIND_U32] = enc_bin_u32)},
    &wk__pg_type_oid};

static const wk_pg_codec c_float4 = {
    "float4", o_f4, a_f4, N(o_f4), WK_PG_BOTH_FORMATS, K(F32) | K(F64) | GEN_DEC_KINDS,
    K(F32) | K(TEXT), K(F32), 0,
    {DEC_ROW([WK_PG_KIND_F32] = f4_text_f32, [WK_PG_KIND_F64] = CV),
     DEC_ROW([WK_PG_KIND_F32] = f4_bin_f32, [WK_PG_KIND_F64] = CV)},
    {ENC_ROW([WK_PG_KIND_F32] = EC), ENC_ROW([WK_PG_KIND_F32] = enc_bin_f32)},
    &wk__pg_type_float4};

static const wk_pg_codec c_float8 = {
    "float8", o_f8, a_f8, N(o_f8), WK_PG_BOTH_FORMATS, K(F64) | GEN_DEC_KINDS,
    K(F32) | K(F64) | K(TEXT), K(F64), 0,
    {DEC_ROW([WK_PG_KIND_F64] = f8_text_f64), DEC_ROW([WK_PG_KIND_F64] = f8_bin_f64)},
    {ENC_ROW([WK_PG_KIND_F32] = EC, [WK_PG_KIND_F64] = EC),
     ENC_ROW([WK_PG_KIND_F32] = EC, [WK_PG_KIND_F64] = enc_bin_f64)},
    &wk__pg_type_float8};

static const wk_pg_codec c_numeric = {
    "numeric", o_num, a_num, N(o_num), WK_PG_BOTH_FORMATS,
    K(NUMERIC) | K(I64) | K(F64) | GEN_DEC_KINDS, K(NUMERIC) | K(I64) | K(F64) | K(TEXT),
    K(NUMERIC), 0,
    {DEC_ROW([WK_PG_KIND_NUMERIC] = CV, [WK_PG_KIND_I64] = CV, [WK_PG_KIND_F64] = CV),
     DEC_ROW([WK_PG_KIND_NUMERIC] = CV, [WK_PG_KIND_I64] = CV, [WK_PG_KIND_F64] = CV)},
    {ENC_ROW([WK_PG_KIND_NUMERIC] = EC, [WK_PG_KIND_I64] = EC, [WK_PG_KIND_F64] = EC),
     ENC_ROW([WK_PG_KIND_NUMERIC] = EC, [WK_PG_KIND_I64] = EC, [WK_PG_KIND_F64] = EC)},
    &wk__pg_type_numeric};

static const wk_pg_codec c_text = {
    "text", o_text, a_text, N(o_text), WK_PG_BOTH_FORMATS, K(STR) | GEN_DEC_KINDS,
    K(STR) | K(TEXT), K(STR), 0,
    {DEC_ROW([WK_PG_KIND_STR] = text_str), DEC_ROW([WK_PG_KIND_STR] = text_str)},
    {ENC_ROW([WK_PG_KIND_STR] = enc_str), ENC_ROW([WK_PG_KIND_STR] = enc_str)},
    &wk__pg_type_text};

/* Codecs whose C kinds are views or structs share one shape: decode and encode `kind`. */
#define SIMPLE_CODEC(var, name, oids, aoids, kind, native, type)                              \
    static const wk_pg_codec var = {                                                          \
        name,                                                                                 \
        oids,                                                                                 \
        aoids,                                                                                \
        N(oids),                                                                              \
        WK_PG_BOTH_FORMATS,                                                                   \
        K(kind) | GEN_DEC_KINDS,                                                              \
        K(kind) | K(TEXT),                                                                    \
        (native) ? K(kind) : 0,                                                               \
        0,                                                                                    \
        {DEC_ROW([WK_PG_KIND_##kind] = CV), DEC_ROW([WK_PG_KIND_##kind] = CV)},               \
        {ENC_ROW([WK_PG_KIND_##kind] = EC), ENC_ROW([WK_PG_KIND_##kind] = EC)},               \
        &type}

SIMPLE_CODEC(c_char, "char", o_char, a_char, STR, false, wk__pg_type_char);
SIMPLE_CODEC(c_bytea, "bytea", o_bytea, a_bytea, BYTES, true, wk__pg_type_bytea);
SIMPLE_CODEC(c_uuid, "uuid", o_uuid, a_uuid, UUID, true, wk__pg_type_uuid);
SIMPLE_CODEC(c_json, "json", o_json, a_json, STR, false, wk__pg_type_json);
SIMPLE_CODEC(c_jsonb, "jsonb", o_jsonb, a_jsonb, STR, false, wk__pg_type_jsonb);
static const wk_pg_codec c_date = {
    "date", o_date, a_date, N(o_date), WK_PG_BOTH_FORMATS, K(DATE) | GEN_DEC_KINDS,
    K(DATE) | K(TEXT), K(DATE), 0,
    {DEC_ROW([WK_PG_KIND_DATE] = date_i32), DEC_ROW([WK_PG_KIND_DATE] = date_i32)},
    {ENC_ROW([WK_PG_KIND_DATE] = EC), ENC_ROW([WK_PG_KIND_DATE] = EC)},
    &wk__pg_type_date};
SIMPLE_CODEC(c_time, "time", o_time, a_time, TIME, true, wk__pg_type_time);
SIMPLE_CODEC(c_timetz, "timetz", o_timetz, a_timetz, TIMETZ, true, wk__pg_type_timetz);
static const wk_pg_codec c_tstz = {
    "timestamptz", o_tstz, a_tstz, N(o_tstz), WK_PG_BOTH_FORMATS, K(TIMESTAMP) | GEN_DEC_KINDS,
    K(TIMESTAMP) | K(TEXT), 0, 0,
    {DEC_ROW([WK_PG_KIND_TIMESTAMP] = tstz_i64), DEC_ROW([WK_PG_KIND_TIMESTAMP] = tstz_i64)},
    {ENC_ROW([WK_PG_KIND_TIMESTAMP] = EC), ENC_ROW([WK_PG_KIND_TIMESTAMP] = enc_bin_ts)},
    &wk__pg_type_timestamptz};
SIMPLE_CODEC(c_interval, "interval", o_iv, a_iv, INTERVAL, true, wk__pg_type_interval);
SIMPLE_CODEC(c_inet, "inet", o_inet, a_inet, INET, true, wk__pg_type_inet);
SIMPLE_CODEC(c_cidr, "cidr", o_cidr, a_cidr, INET, false, wk__pg_type_cidr);

static const wk_pg_codec c_ts = {
    "timestamp", o_ts, a_ts, N(o_ts), WK_PG_BOTH_FORMATS, K(TIMESTAMP) | GEN_DEC_KINDS,
    K(TIMESTAMP) | K(TEXT), K(TIMESTAMP), 0,
    {DEC_ROW([WK_PG_KIND_TIMESTAMP] = ts_i64), DEC_ROW([WK_PG_KIND_TIMESTAMP] = ts_i64)},
    {ENC_ROW([WK_PG_KIND_TIMESTAMP] = EC), ENC_ROW([WK_PG_KIND_TIMESTAMP] = enc_bin_ts)},
    &wk__pg_type_timestamp};

static const wk_pg_codec *const builtins[] = {
    &c_bool, &c_int2,  &c_int4,  &c_int8,   &c_oid,    &c_float4, &c_float8,
    &c_numeric, &c_text, &c_char, &c_bytea, &c_uuid,  &c_json,   &c_jsonb,
    &c_date,  &c_time,  &c_timetz, &c_ts,    &c_tstz,   &c_interval, &c_inet, &c_cidr,
    &wk__pg_composite_codec,
#define M(i) &wk__pg_misc[i]
    M(0),  M(1),  M(2),  M(3),  M(4),  M(5),  M(6),  M(7),  M(8),  M(9),  M(10), M(11),
    M(12), M(13), M(14), M(15), M(16), M(17), M(18), M(19), M(20), M(21), M(22), M(23),
#define R(i) &wk__pg_ranges[i]
    R(0),  R(1),  R(2),  R(3),  R(4),  R(5),  R(6),  R(7),  R(8),  R(9),  R(10), R(11)};
_Static_assert(WK__PG_N_MISC == 24 && WK__PG_N_RANGES == 12, "list every rendered codec");

WK_API const wk_pg_codec *const *wk_pg_builtin_codecs(size_t *n)
{
    *n = N(builtins);
    return builtins;
}
