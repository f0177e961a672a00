/*
 * The built-in codecs in registration order, for wk_pg_builtin_codecs(); and, until they can
 * join their type family in datetime.c, the date/time codecs.
 *
 * Where it sits: each type family file (int.c, float.c, varlena.c, geo_ops.c, ...; see
 * pg_codec.h) defines its immutable wk_pg_codec objects; this list gathers them; the registry
 * (registry.c) copies the list at creation and keys it by name and OID, and the plan
 * (plan.c) then picks a codec's function by (OID, format, kind) for every column. The order
 * of the list is the order of the registry's rows, which its name look-ups and the oracle
 * (pg_oracle.h) see, so new codecs go at the end of their group, not in between.
 *
 * The date/time codecs are here rather than in datetime.c only because that file is being
 * changed elsewhere at the moment; their type tables (wk__pg_type_date, ...) are datetime.c's.
 */
#include "pg/pg_codec.h"

/* ---- date and time ---- */

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

/* timestamp / timestamptz to int64 microseconds, date to int32 days, in either format. */
FAST_NATIVE(ts_i64, wk__pg_type_timestamp, int64_t)
FAST_NATIVE(tstz_i64, wk__pg_type_timestamptz, int64_t)
FAST_NATIVE(date_i32, wk__pg_type_date, int32_t)

/* timestamp_send / timestamptz_send of a C int64 (microseconds since 2000-01-01), refusing
 * what timestamp_recv would refuse so that the server never sees an out-of-range value. */
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

/* date decodes to DATE (days since 2000-01-01) through the direct reader above. */
static const wk_pg_codec c_date = {
    "date", o_date, a_date, N(o_date), WK_PG_BOTH_FORMATS, K(DATE) | GEN_DEC_KINDS,
    K(DATE) | K(TEXT), K(DATE), 0,
    {DEC_ROW([WK_PG_KIND_DATE] = date_i32), DEC_ROW([WK_PG_KIND_DATE] = date_i32)},
    {ENC_ROW([WK_PG_KIND_DATE] = EC), ENC_ROW([WK_PG_KIND_DATE] = EC)},
    &wk__pg_type_date};

static SIMPLE_CODEC(c_time, "time", o_time, a_time, TIME, true, wk__pg_type_time);

static SIMPLE_CODEC(c_timetz, "timetz", o_timetz, a_timetz, TIMETZ, true, wk__pg_type_timetz);

static SIMPLE_CODEC(c_interval, "interval", o_iv, a_iv, INTERVAL, true, wk__pg_type_interval);

/* timestamp is TIMESTAMP's natural type; timestamptz shares the kind (UTC microseconds) but
 * is not its default. */
static const wk_pg_codec c_ts = {
    "timestamp", o_ts, a_ts, N(o_ts), WK_PG_BOTH_FORMATS, K(TIMESTAMP) | GEN_DEC_KINDS,
    K(TIMESTAMP) | K(TEXT), K(TIMESTAMP), 0,
    {DEC_ROW([WK_PG_KIND_TIMESTAMP] = ts_i64), DEC_ROW([WK_PG_KIND_TIMESTAMP] = ts_i64)},
    {ENC_ROW([WK_PG_KIND_TIMESTAMP] = EC), ENC_ROW([WK_PG_KIND_TIMESTAMP] = enc_bin_ts)},
    &wk__pg_type_timestamp};

static const wk_pg_codec c_tstz = {
    "timestamptz", o_tstz, a_tstz, N(o_tstz), WK_PG_BOTH_FORMATS, K(TIMESTAMP) | GEN_DEC_KINDS,
    K(TIMESTAMP) | K(TEXT), 0, 0,
    {DEC_ROW([WK_PG_KIND_TIMESTAMP] = tstz_i64), DEC_ROW([WK_PG_KIND_TIMESTAMP] = tstz_i64)},
    {ENC_ROW([WK_PG_KIND_TIMESTAMP] = EC), ENC_ROW([WK_PG_KIND_TIMESTAMP] = enc_bin_ts)},
    &wk__pg_type_timestamptz};

/* ---- the list ---- */

static const wk_pg_codec *const builtins[] = {
    /* the C-typed codecs */
    &wk__pg_codec_bool, &wk__pg_codec_int2, &wk__pg_codec_int4, &wk__pg_codec_int8,
    &wk__pg_codec_oid, &wk__pg_codec_float4, &wk__pg_codec_float8, &wk__pg_codec_numeric,
    &wk__pg_codec_text, &wk__pg_codec_char, &wk__pg_codec_bytea, &wk__pg_codec_uuid,
    &wk__pg_codec_json, &wk__pg_codec_jsonb, &c_date, &c_time, &c_timetz, &c_ts, &c_tstz,
    &c_interval, &wk__pg_codec_inet, &wk__pg_codec_cidr, &wk__pg_composite_codec,
    /* the rendered codecs */
    &wk__pg_codec_xid, &wk__pg_codec_xid8, &wk__pg_codec_tid, &wk__pg_codec_int2vector,
    &wk__pg_codec_oidvector, &wk__pg_codec_reg, &wk__pg_codec_xml, &wk__pg_codec_refcursor,
    &wk__pg_codec_jsonpath, &wk__pg_codec_pg_lsn, &wk__pg_codec_macaddr,
    &wk__pg_codec_macaddr8, &wk__pg_codec_money, &wk__pg_codec_point, &wk__pg_codec_lseg,
    &wk__pg_codec_path, &wk__pg_codec_box, &wk__pg_codec_polygon, &wk__pg_codec_line,
    &wk__pg_codec_circle, &wk__pg_codec_bit, &wk__pg_codec_pg_snapshot,
    &wk__pg_codec_tsvector, &wk__pg_codec_tsquery, &wk__pg_codec_textonly,
    /* ranges and multiranges (range.c) */
#define R(i) &wk__pg_ranges[i]
    R(0),  R(1),  R(2),  R(3),  R(4),  R(5),  R(6),  R(7),  R(8),  R(9),  R(10), R(11)};
#undef R
_Static_assert(WK__PG_N_RANGES == 12, "list every range codec");

/* Public (wirekit/pg.h): the list above; static, never freed. */
WK_API const wk_pg_codec *const *wk_pg_builtin_codecs(size_t *n)
{
    *n = N(builtins);
    return builtins;
}

/* ---- which functions are which, for array_c.c and array.c ---- */

/* Contract in pg_interface.h. The direct text decoders are static in int.c and float.c; their
 * codec tables are where they can be recognised. */
wk__pg_fast_form wk__pg_text_fast_form(wk_pg_decode_fn fn)
{
    if (fn == wk__pg_codec_int2.decode[WK_PG_TEXT][WK_PG_KIND_I16]) {
        return WK__PG_FAST_I16;
    }
    if (fn == wk__pg_codec_int4.decode[WK_PG_TEXT][WK_PG_KIND_I32]) {
        return WK__PG_FAST_I32;
    }
    if (fn == wk__pg_codec_int8.decode[WK_PG_TEXT][WK_PG_KIND_I64]) {
        return WK__PG_FAST_I64;
    }
    if (fn == wk__pg_codec_float4.decode[WK_PG_TEXT][WK_PG_KIND_F32]) {
        return WK__PG_FAST_F32;
    }
    return fn == wk__pg_codec_float8.decode[WK_PG_TEXT][WK_PG_KIND_F64] ? WK__PG_FAST_F64
                                                                          : WK__PG_FAST_NONE;
}

/* Contract in pg_interface.h: the FAST_ENC_BIN encoders of the fixed-width types, found in
 * their codecs' binary rows. */
size_t wk__pg_fixed_bin_width(wk_pg_encode_fn fn)
{
    if (fn == NULL) {
        return 0;
    }
    if (fn == wk__pg_codec_int8.encode[WK_PG_BINARY][WK_PG_KIND_I64] ||
        fn == wk__pg_codec_float8.encode[WK_PG_BINARY][WK_PG_KIND_F64]) {
        return 8;
    }
    if (fn == wk__pg_codec_int4.encode[WK_PG_BINARY][WK_PG_KIND_I32] ||
        fn == wk__pg_codec_float4.encode[WK_PG_BINARY][WK_PG_KIND_F32] ||
        fn == wk__pg_codec_oid.encode[WK_PG_BINARY][WK_PG_KIND_U32]) {
        return 4;
    }
    return fn == wk__pg_codec_int2.encode[WK_PG_BINARY][WK_PG_KIND_I16] ? 2 : 0;
}
