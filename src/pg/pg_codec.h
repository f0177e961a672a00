/*
 * What the type-family files of src/pg/ share to build their codecs; internal to src/pg/.
 *
 * Where it sits: every built-in PostgreSQL type lives in one file per type family, as
 * PostgreSQL's own src/backend/utils/adt has them (int.c, float.c, numeric.c, varlena.c,
 * bool.c, uuid.c, json.c, inet.c, mac.c, geo_ops.c, varbit.c, tsvector.c, tsquery.c, xid.c,
 * tid.c, pg_lsn.c, cash.c, xml.c, regproc.c; date/time in datetime.c, arrays in array.c,
 * composites in record.c, ranges in range.c). Each family file defines its wk_pg_codec objects; builtins.c
 * lists them, in registration order, for wk_pg_builtin_codecs(); the registry (registry.c)
 * keys them by name and OID. This header holds the macros that spell a codec's function table,
 * the codec objects the list needs, and the small byte helpers the rendered types share.
 */
#ifndef WK_PG_CODEC_H
#define WK_PG_CODEC_H

#include "pg/pg_interface.h"

/* ---- spelling a codec ---- */

/* The bit of one C kind in a codec's decode_kinds / encode_kinds / native_kinds mask. */
#define K(x) WK_PG_KIND_MASK(WK_PG_KIND_##x)
/* The kinds every table-driven codec decodes: PostgreSQL text, a value tree, events. */
#define GEN_DEC_KINDS (K(TEXT) | K(VALUE) | K(EVENTS))
/* The generic conversions of codec_generic.c, short for the tables below. */
#define CV wk__pg_dec_convert
#define EC wk__pg_enc_convert
/* A decode row (one format) of a table-driven codec: the generic TEXT / VALUE / EVENTS
 * functions plus the codec's own kinds given as designated initializers. */
#define DEC_ROW(...)                                                                          \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = wk__pg_dec_text, [WK_PG_KIND_VALUE] = wk__pg_dec_value,           \
        [WK_PG_KIND_EVENTS] = wk__pg_dec_events, __VA_ARGS__                                  \
    }
/* An encode row: PostgreSQL text input through the type's parser, plus the codec's kinds. */
#define ENC_ROW(...)                                                                          \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = wk__pg_enc_text, __VA_ARGS__                                      \
    }
/* An OID list, and its element count. */
#define OIDS(name, ...) static const wk_pg_oid name[] = {__VA_ARGS__}
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Codecs whose C kinds are views or structs share one shape: decode and encode `kind` through
 * the generic conversions, both formats; `native` says whether `kind` is the type's natural
 * kind (the one a schema field of that type gets by default). */
#define SIMPLE_CODEC(var, name, oids, aoids, kind, native, type)                              \
    const wk_pg_codec var = {                                                                 \
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

/* A fixed-size binary encoder: reserves `bytes`, copies the C value out of `in` (which may be
 * unaligned) and stores it big-endian with `store`. Returns WK_ERR_LIMIT when the buffer cannot
 * grow. builtins.c recognises these functions by address (wk__pg_fixed_bin_width) so that
 * array encoders can write a whole element run in one pass. */
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

/* ---- rendered codecs (see wk__pg_rtype in pg_interface.h) ---- */

/* The decode and encode rows of a rendered codec: TEXT and EVENTS through the codec's
 * wk__pg_rtype (kept in codec->data), VALUE through the generic tree builder. */
wk_status wk__pg_rdec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                           wk_arena *arena, wk_error *err);
wk_status wk__pg_rdec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                             wk_arena *arena, wk_error *err);
wk_status wk__pg_renc_text(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err);
#define R_DEC                                                                                 \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = wk__pg_rdec_text, [WK_PG_KIND_VALUE] = wk__pg_dec_value,          \
        [WK_PG_KIND_EVENTS] = wk__pg_rdec_events                                              \
    }
#define R_ENC                                                                                 \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = wk__pg_renc_text                                                  \
    }
/* A rendered codec named `name` over rtype `rt`, with OID lists v_o and v_a (see R_OIDS):
 * decodes to TEXT / VALUE / EVENTS and encodes from TEXT in `formats`. RCF gives the binary
 * rows explicitly (the text-only codec leaves them empty). */
#define RC(name, rt, formats, v) RCF(name, rt, formats, v, R_DEC, R_ENC)
#define RCF(name, rt, formats, v, bin_dec, bin_enc)                                           \
    {name,                                                                                    \
     v##_o,                                                                                   \
     v##_a,                                                                                   \
     sizeof v##_o / sizeof v##_o[0],                                                          \
     formats,                                                                                 \
     K(TEXT) | K(VALUE) | K(EVENTS),                                                          \
     K(TEXT),                                                                                 \
     0,                                                                                       \
     0,                                                                                       \
     {R_DEC, bin_dec},                                                                        \
     {R_ENC, bin_enc},                                                                        \
     rt}
/* The OIDs of a rendered codec and, parallel to them, their array OIDs (0 = none). */
#define R_OIDS(v, ...) static const wk_pg_oid v##_o[] = {__VA_ARGS__}
#define R_AOIDS(v, ...) static const wk_pg_oid v##_a[] = {__VA_ARGS__}

/* Renderers shared by more than one family (rendered.c): an unsigned 32-bit number (xid, cid
 * and the reg* OID types) and text whose binary form is the text itself (xml, refcursor). */
extern const wk__pg_rtype wk__pg_rt_u32, wk__pg_rt_plain;
/* The unsigned-number renderer and parser behind them, for any 4- or 8-byte field
 * (rendered.c). */
wk_status wk__pg_render_uint(const uint8_t *p, size_t n, size_t width, const char *msg,
                             wk_buf *out, wk_error *err);
wk_status wk__pg_parse_uint(const uint8_t *s, size_t n, size_t width, const char *msg,
                            wk_buf *out, wk_error *err);
/* Checks that p[skip..n) is UTF-8 and appends it; the error offset counts from p. */
wk_status wk__pg_put_utf8(const uint8_t *p, size_t n, size_t skip, wk_buf *out, wk_error *err);

/* ---- byte helpers of the renderers and parsers ---- */

/* The error of a renderer whose output buffer cannot grow. */
static inline wk_status wk__pg_nomem(wk_error *err, size_t at)
{
    return wk__pg_fail(err, WK_ERR_NOMEM, at, "out of memory for the text output");
}

/* WK_ERR_TRUNCATED unless at least `want` of the n bytes are present. */
static inline wk_status wk__pg_need(size_t n, size_t want, const char *msg, wk_error *err)
{
    if (n < want) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, msg);
    }
    return WK_OK;
}

/* A fixed-size value: WK_ERR_TRUNCATED when short, WK_ERR_TRAILING when long. */
static inline wk_status wk__pg_exact(size_t n, size_t want, const char *msg, wk_error *err)
{
    if (n != want) {
        return wk__pg_fail(err, n < want ? WK_ERR_TRUNCATED : WK_ERR_TRAILING,
                           n < want ? n : want, msg);
    }
    return WK_OK;
}

/* A syntax error in text input at byte `at`. */
static inline wk_status wk__pg_bad_input(wk_error *err, size_t at, const char *msg)
{
    return wk__pg_fail(err, WK_ERR_SYNTAX, at, msg);
}

/* Appends the decimal digits of v. */
static inline wk_status wk__pg_put_u64(wk_buf *b, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return wk_buf_append(b, tmp + i, sizeof tmp - i);
}

/* Appends the float8out text of the big-endian IEEE double at p[0..8). */
static inline wk_status wk__pg_put_f8(wk_buf *b, const uint8_t *p)
{
    uint64_t u = wk__pg_be64(p);
    double v;
    memcpy(&v, &u, 8);
    return wk__pg_put_float(b, v, false);
}

/* Appends the low `bytes` bytes of v, most significant first (a binary field). */
static inline wk_status wk__pg_put_be(wk_buf *out, uint64_t v, size_t bytes)
{
    uint8_t t[8];
    for (size_t i = 0; i < bytes; i++) {
        t[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
    }
    return wk_buf_append(out, t, bytes);
}

/* The ASCII spaces PostgreSQL's input functions skip (isspace in the C locale). */
static inline bool wk__pg_is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Trims ASCII spaces from both ends of s[0..*n); returns the new start. */
static inline const uint8_t *wk__pg_trim(const uint8_t *s, size_t *n)
{
    while (*n > 0 && wk__pg_is_space(s[0])) {
        s++;
        (*n)--;
    }
    while (*n > 0 && wk__pg_is_space(s[*n - 1])) {
        (*n)--;
    }
    return s;
}

/* Unsigned decimal filling all of s[0..n) (spaces around allowed), at most `max`; false on
 * an empty field, a non-digit or overflow. */
static inline bool wk__pg_parse_u64(const uint8_t *s, size_t n, uint64_t max, uint64_t *out)
{
    s = wk__pg_trim(s, &n);
    if (n == 0) {
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned dg = (unsigned)(s[i] - '0');
        if (dg > 9 || v > (max - dg) / 10) {
            return false;
        }
        v = v * 10 + dg;
    }
    *out = v;
    return true;
}

/* True when s[0..n) equals the first n bytes of the lower-case word w (at least n long),
 * ASCII case ignored. */
static inline bool wk__pg_prefix_ieq(const uint8_t *s, size_t n, const char *w)
{
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

/* True when s[0..n) is exactly the lower-case word w, ASCII case ignored (the special
 * spellings float8in and numeric_in accept: "NaN", "Infinity", "inf"). */
static inline bool wk__pg_word_ieq(const uint8_t *s, size_t n, const char *w)
{
    return strlen(w) == n && wk__pg_prefix_ieq(s, n, w);
}

/* The value of one hex digit (either case), or -1. */
static inline int wk__pg_hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = (uint8_t)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* ---- the codec objects builtins.c lists ---- */

extern const wk_pg_codec wk__pg_codec_bool, wk__pg_codec_int2, wk__pg_codec_int4,
    wk__pg_codec_int8, wk__pg_codec_oid, wk__pg_codec_float4, wk__pg_codec_float8,
    wk__pg_codec_numeric, wk__pg_codec_text, wk__pg_codec_char, wk__pg_codec_bytea,
    wk__pg_codec_uuid, wk__pg_codec_json, wk__pg_codec_jsonb, wk__pg_codec_inet,
    wk__pg_codec_cidr;
/* The rendered ones. */
extern const wk_pg_codec wk__pg_codec_xid, wk__pg_codec_xid8, wk__pg_codec_tid,
    wk__pg_codec_int2vector, wk__pg_codec_oidvector, wk__pg_codec_reg, wk__pg_codec_xml,
    wk__pg_codec_refcursor, wk__pg_codec_jsonpath, wk__pg_codec_pg_lsn, wk__pg_codec_macaddr,
    wk__pg_codec_macaddr8, wk__pg_codec_money, wk__pg_codec_point, wk__pg_codec_lseg,
    wk__pg_codec_path, wk__pg_codec_box, wk__pg_codec_polygon, wk__pg_codec_line,
    wk__pg_codec_circle, wk__pg_codec_bit, wk__pg_codec_pg_snapshot, wk__pg_codec_tsvector, wk__pg_codec_tsquery,
    wk__pg_codec_textonly;
/* Shared by varlena.c (text) and json.c: the text-family reader (a UTF-8-checked view) and
 * writer (the bytes as they are). */
wk_status wk__pg_text_read(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                           wk_error *err);
wk_status wk__pg_text_write(const wk__pg_native *v, wk_buf *out);

#endif
