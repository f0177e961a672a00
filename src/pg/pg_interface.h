/*
 * Internal pieces shared by the PostgreSQL codec files, and the part of src/pg the add-ons
 * (addons/pq) may use.
 *
 * Where it sits: every file of src/pg includes it; pg_codec.h adds what the type-family files
 * share to build codecs. The flow it serves: a row's bytes -> plan (plan.c) -> a codec from
 * the registry (registry.c) -> a direct function of the type's family file or a generic one
 * (codec_generic.c, rendered.c) over the type's operations table below -> the caller's C
 * kind, PostgreSQL text, events or a value tree.
 *
 * Every built-in type has a small operations table (wk__pg_type): read the binary or text
 * wire form into a native union, write the native value back in either form, and say how it
 * maps to events. Hot (type, format, kind) combinations get their own direct functions; the
 * rest go through generic functions driven by this table, which keeps the number of
 * hand-written functions linear in the number of types instead of types x formats x kinds.
 */
#ifndef WK_PG_INTERNAL_H
#define WK_PG_INTERNAL_H

#include <string.h>

#include "wirekit/pg.h"

/* ---- byte order ---- */
/* One load or store plus a byte swap on little-endian GCC/clang; byte by byte elsewhere. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WK__PG_BSWAP 1
#endif
static inline uint16_t wk__pg_be16(const uint8_t *p)
{
    return (uint16_t)((unsigned)p[0] << 8 | p[1]);
}
static inline uint32_t wk__pg_be32(const uint8_t *p)
{
#ifdef WK__PG_BSWAP
    uint32_t v;
    memcpy(&v, p, 4);
    return __builtin_bswap32(v);
#else
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
#endif
}
static inline uint64_t wk__pg_be64(const uint8_t *p)
{
#ifdef WK__PG_BSWAP
    uint64_t v;
    memcpy(&v, p, 8);
    return __builtin_bswap64(v);
#else
    return (uint64_t)wk__pg_be32(p) << 32 | wk__pg_be32(p + 4);
#endif
}
static inline void wk__pg_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}
static inline void wk__pg_put32(uint8_t *p, uint32_t v)
{
#ifdef WK__PG_BSWAP
    v = __builtin_bswap32(v);
    memcpy(p, &v, 4);
#else
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
#endif
}
static inline void wk__pg_put64(uint8_t *p, uint64_t v)
{
#ifdef WK__PG_BSWAP
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
#else
    wk__pg_put32(p, (uint32_t)(v >> 32));
    wk__pg_put32(p + 4, (uint32_t)v);
#endif
}

/* Fills err (when given) with st, the byte offset and a static message; returns st, so a
 * failure is one `return wk__pg_fail(...)`. */
static inline wk_status wk__pg_fail(wk_error *err, wk_status st, size_t off, const char *msg)
{
    if (err != NULL) {
        err->code = st;
        err->offset = off;
        err->msg = msg;
    }
    return st;
}

/* ---- the nesting budget ---- */
/* Nesting codecs (arrays, ranges, multiranges, records) decode and encode their parts with the
 * parts' own codecs, found in the registry, which may lead back to the same codec: a range
 * whose subtype is itself, from a hostile catalog or a caller's registry, recurses once per
 * level of a value that nests as deep as its bytes allow. One budget bounds every such
 * recursion of a decode or encode together: WK_PG_MAX_NESTING levels, counted per thread (the
 * codec signatures have no room for a depth, and a thread runs one top-level call at a time;
 * the count is back at 0 when it returns). Every part decoded or encoded by a nesting codec
 * goes through these two. */
extern _Thread_local unsigned wk__pg_nesting;

static inline wk_status wk__pg_nest_fail(wk_error *err)
{
    return wk__pg_fail(err, WK_ERR_LIMIT, 0,
                       "value nested deeper than WK_PG_MAX_NESTING (arrays, ranges, records)");
}

static inline wk_status wk__pg_decode_part(const wk_pg_decoder *d, const uint8_t *p, size_t n,
                                           void *out, wk_arena *arena, wk_error *err)
{
    if (wk__pg_nesting >= WK_PG_MAX_NESTING) {
        return wk__pg_nest_fail(err); /* at the part's start; the caller adds its place */
    }
    wk__pg_nesting++;
    wk_status st = wk_pg_decode(d, p, n, out, arena, err);
    wk__pg_nesting--;
    return st;
}

static inline wk_status wk__pg_encode_part(const wk_pg_encoder *e, const void *in, wk_buf *out,
                                           wk_error *err)
{
    if (wk__pg_nesting >= WK_PG_MAX_NESTING) {
        return wk__pg_nest_fail(err);
    }
    wk__pg_nesting++;
    wk_status st = wk_pg_encode(e, in, out, err);
    wk__pg_nesting--;
    return st;
}

/* Sends one event to `sink`: a string s[0..n) (WK_EV_STR), a container header of `count`
 * (WK_EV_MAP, WK_EV_ARRAY), or WK_EV_NIL / WK_EV_END; returns the sink's status. */
static inline wk_status wk__pg_event(const wk_sink *sink, wk_event_type t, const char *s,
                                     size_t n, uint32_t count)
{
    wk_event x;
    x.type = t;
    x.f32 = false;
    if (t == WK_EV_STR) {
        x.v.str.ptr = s;
        x.v.str.len = n;
    } else {
        x.v.count = count;
    }
    return sink->event(sink->self, &x);
}

/* Appends n bytes, the inline way; returns the status of the buffer. */
static inline wk_status wk__pg_put(wk_buf *b, const void *p, size_t n)
{
    return wk_buf_append(b, p, n);
}

/* ---- the native union every built-in type reads into ---- */
typedef union wk__pg_native {
    bool b;
    int64_t i;   /* int2/int4/int8/oid, date (days), time, timestamp(tz) */
    double f8;
    float f4;
    wk_pg_numeric num;
    wk_slice s; /* text types, json, jsonb (text part), bytea, "char" */
    wk_pg_uuid uuid;
    wk_pg_timetz timetz;
    wk_pg_interval iv;
    wk_pg_inet inet;
} wk__pg_native;

/* How a type's values map to events (and so to JSON / MessagePack / wk_value). */
typedef enum wk__pg_class {
    WK__PG_CLASS_BOOL,    /* WK_EV_BOOL */
    WK__PG_CLASS_INT,     /* WK_EV_INT / WK_EV_UINT (native .i) */
    WK__PG_CLASS_FLOAT4,  /* finite: WK_EV_FLOAT (f32) or RAWNUM; else a string */
    WK__PG_CLASS_FLOAT8,
    WK__PG_CLASS_NUMERIC, /* finite: WK_EV_RAWNUM; else a string */
    WK__PG_CLASS_JSON,    /* the embedded JSON value */
    WK__PG_CLASS_STRING   /* PostgreSQL's text output as WK_EV_STR */
} wk__pg_class;

/* A type's operations table: how its values map to events, its four conversions between the
 * wire forms and the native union, and for integers the range a C value must fit. Readers
 * validate as the server's *_recv / *_in do and may keep views into the input (or copies in
 * the arena `a`); writers append to `out` and fail only when it cannot grow. */
typedef struct wk__pg_type {
    wk__pg_class cls;
    wk_status (*read_bin)(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                          wk_error *err);
    wk_status (*read_text)(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                           wk_error *err);
    wk_status (*write_bin)(const wk__pg_native *v, wk_buf *out);
    wk_status (*write_text)(const wk__pg_native *v, wk_buf *out);
    int64_t min, max; /* WK__PG_CLASS_INT: the range of the type */
} wk__pg_type;

/* The operations of the built-in types (one per type file). */
extern const wk__pg_type wk__pg_type_bool, wk__pg_type_int2, wk__pg_type_int4, wk__pg_type_int8,
    wk__pg_type_oid, wk__pg_type_float4, wk__pg_type_float8, wk__pg_type_numeric,
    wk__pg_type_text, wk__pg_type_char, wk__pg_type_bytea, wk__pg_type_uuid, wk__pg_type_json,
    wk__pg_type_jsonb, wk__pg_type_date, wk__pg_type_time, wk__pg_type_timetz,
    wk__pg_type_timestamp, wk__pg_type_timestamptz, wk__pg_type_interval, wk__pg_type_inet,
    wk__pg_type_cidr;

/* Reads the value in `format` through the type's table. */
static inline wk_status wk__pg_read(const wk__pg_type *t, wk_pg_format f, const uint8_t *p,
                                    size_t n, wk__pg_native *v, wk_arena *a, wk_error *err)
{
    return f == WK_PG_BINARY ? t->read_bin(p, n, v, a, err) : t->read_text(p, n, v, a, err);
}

/* ---- generic codec functions (codec_generic.c), driven by codec->data (a wk__pg_type) ---- */
/* To PostgreSQL text (a wk_buf at out), to a value tree (a wk_value, nodes in arena), to
 * events (a wk_pg_events at out). */
wk_status wk__pg_dec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                          wk_arena *arena, wk_error *err);
wk_status wk__pg_dec_value(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                           wk_arena *arena, wk_error *err);
wk_status wk__pg_dec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                            wk_arena *arena, wk_error *err);
/* Reads the native value, then stores it as d->kind (widening int2 -> I64, numeric -> F64,
 * views for strings, ...). */
wk_status wk__pg_dec_convert(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                             wk_arena *arena, wk_error *err);
/* From PostgreSQL text input (a wk_slice at in), and from the encoder's C kind. */
wk_status wk__pg_enc_text(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err);
wk_status wk__pg_enc_convert(const wk_pg_encoder *e, const void *in, wk_buf *out,
                             wk_error *err);

/* Emits a native value as events (class-driven). `scratch` is used for rendering. */
wk_status wk__pg_emit_native(const wk__pg_type *t, const wk__pg_native *v,
                             const wk_pg_events *ev, wk_buf *scratch, wk_error *err);

/* ---- arrays (array.c) ---- */
/* PostgreSQL's MaxArraySize: the most elements an array may hold. */
#define WK__PG_MAX_ARRAY_SIZE 134217727
/* The hand-written text decoders (int.c, float.c) that array_c.c may inline for elements. */
typedef enum wk__pg_fast_form {
    WK__PG_FAST_NONE = 0,
    WK__PG_FAST_I16, /* int2_text_i16 */
    WK__PG_FAST_I32, /* int4_text_i32 */
    WK__PG_FAST_I64, /* int8_text_i64 */
    WK__PG_FAST_F32, /* f4_text_f32 */
    WK__PG_FAST_F64  /* f8_text_f64 */
} wk__pg_fast_form;
/* Which of those `fn` is (WK__PG_FAST_NONE for any other function). */
wk__pg_fast_form wk__pg_text_fast_form(wk_pg_decode_fn fn);
/* The byte width (2, 4 or 8) when `fn` is one of the fixed-size binary encoders that store
 * the value's bit pattern big-endian (int2/int4/int8/oid/float4/float8), else 0. Both are
 * answered by builtins.c. */
size_t wk__pg_fixed_bin_width(wk_pg_encode_fn fn);
/* The array functions (array.c) every array type's registry row uses, by [format][kind]. */
extern const wk_pg_decode_fn wk__pg_array_dec[2][WK_PG_KIND_COUNT];
extern const wk_pg_encode_fn wk__pg_array_enc[2][WK_PG_KIND_COUNT];
/* Array kinds a codec gets: element codec's kinds filtered. */
uint32_t wk__pg_array_decode_kinds(const wk_pg_codec *elem);
uint32_t wk__pg_array_encode_kinds(const wk_pg_codec *elem);
/* Parses an array (either format) into a header, checking every element. */
wk_status wk__pg_array_parse(wk_pg_format f, wk_pg_oid elem_oid, const uint8_t *p, size_t n,
                             wk_pg_array *out, wk_error *err);

/* ---- shared formatting helpers ---- */
/* Appends the decimal form of v. */
wk_status wk__pg_put_i64(wk_buf *b, int64_t v);
/* Writes v zero-padded to at least `width` digits into out; returns the length. */
size_t wk__pg_fmt_uint_pad(char *out, uint64_t v, int width);
/* Parses an optionally signed decimal integer filling all of s[0..n); false on syntax error
 * or overflow of [min, max]. Leading/trailing ASCII spaces are accepted (as PostgreSQL). */
bool wk__pg_parse_int(const uint8_t *s, size_t n, int64_t min, int64_t max, int64_t *out);
/* Shortest round-trip digits of a finite non-zero |v| (float precision when `f32`):
 * digits[0..len) with the decimal exponent of the first digit in *exp10. */
int wk__pg_shortest(double v, bool f32, char digits[20], int *exp10);
/* Appends PostgreSQL's float4out / float8out text. */
wk_status wk__pg_put_float(wk_buf *b, double v, bool f32);
/* Parses float text like float8in/float4in (NaN, [+-]Infinity, inf, decimal, exponent). */
bool wk__pg_parse_float(const uint8_t *s, size_t n, bool f32, double *out);

/* Date/time helpers (datetime.c) used by other files. */
void wk__pg_j2date(int32_t jd, int *year, int *month, int *day);
int32_t wk__pg_date2j(int year, int month, int day);

/* ---- catalog types ---- */
/* The templates behind wk_pg_hstore_codec() (hstore.c) and wk_pg_composite_codec()
 * (record.c), as objects for static codec tables inside the core. */
extern const wk_pg_codec wk__pg_hstore_codec;
extern const wk_pg_codec wk__pg_composite_codec;

/* A catalog composite's attributes (record.c): their number, and field i's type and name
 * (valid as long as the composite). */
size_t wk__pg_composite_natts(const wk_pg_composite *c);
wk_pg_oid wk__pg_composite_type(const wk_pg_composite *c, size_t i);
wk_slice wk__pg_composite_name(const wk_pg_composite *c, size_t i);

/* Registry rows (registry.c) used by array encoders to reach element encoders. */
const wk_pg_encoder *wk__pg_elem_encoder(const wk_pg_encoder *e, wk_pg_kind kind);

/* ---- rendered types (rendered.c, the rendered families, range.c) ---- */
/* Types read as PostgreSQL text: the binary form is rendered into the server's text output,
 * the text form passes through (it is the server's output already); encoding parses text
 * into the binary form where `parse` is given. */
typedef struct wk__pg_rtype {
    /* Appends the text output of binary value p[0..n). `d` is the decoder (ranges reach
     * their element decoder through d->reg). */
    wk_status (*render)(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                        wk_error *err);
    /* Appends the binary form of text input s[0..n); NULL: binary encoding unsupported. */
    wk_status (*parse)(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err);
} wk__pg_rtype;
/* The codec functions of a rendered type `t`: decode to TEXT (a wk_buf) or EVENTS, encode
 * from TEXT (a wk_slice). */
wk_status wk__pg_r_text(const wk__pg_rtype *t, const wk_pg_decoder *d, const uint8_t *p,
                        size_t n, void *out, wk_arena *arena, wk_error *err);
wk_status wk__pg_r_events(const wk__pg_rtype *t, const wk_pg_decoder *d, const uint8_t *p,
                          size_t n, void *out, wk_arena *arena, wk_error *err);
wk_status wk__pg_r_encode(const wk__pg_rtype *t, const wk_pg_encoder *e, const void *in,
                          wk_buf *out, wk_error *err);
/* The range and multirange codecs (range.c), listed in builtins.c; the other rendered codecs
 * are declared in pg_codec.h. */
#define WK__PG_N_RANGES 12
extern const wk_pg_codec wk__pg_ranges[WK__PG_N_RANGES];

#endif
