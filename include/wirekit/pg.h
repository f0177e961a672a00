/*
 * PostgreSQL value codecs, their registry and per-result decode plans (no libpq needed).
 *
 * A codec is a set of pure functions over byte slices, one per (wire format, C kind), plus
 * metadata: the type OIDs it handles (and their array OIDs), the formats, the C kinds it
 * decodes into and encodes from, the kinds it is the default PostgreSQL type for, and a
 * preference rank. A registry is built once from a codec list into an immutable table, so
 * that "which function decodes OID x in format f into kind k" is a direct index (built-in
 * OIDs) or a hash probe with a full-key compare (other OIDs), never a scan. Adding codecs
 * makes a new snapshot; the old one stays valid for whoever holds it. A decode plan resolves
 * every column of a result once, so rows decode with no lookups at all.
 *
 * The slow, obvious answer (ask every codec in turn) is kept as an internal oracle and the
 * tests compare it with the table for every key.
 *
 * Values land in a C representation the caller picks (wk_pg_kind): integers, doubles,
 * wk_pg_numeric, microseconds since 2000-01-01, views into the input, an array header with an
 * element iterator, PostgreSQL's own text output, a wk_value tree, or events to a wk_sink.
 * Every decoder checks lengths and counts against the bytes present before reading them.
 */
#ifndef WIREKIT_PG_H
#define WIREKIT_PG_H

#include "arena.h"
#include "buffer.h"
#include "event.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A PostgreSQL type OID. */
typedef uint32_t wk_pg_oid;

/** Wire format of a value: PostgreSQL's format codes. */
typedef enum wk_pg_format { WK_PG_TEXT = 0, WK_PG_BINARY = 1 } wk_pg_format;

#define WK_PG_FORMAT_MASK(f) (1u << (unsigned)(f)) /**< the bit of format `f` (wk_pg_format) in a mask */
#define WK_PG_BOTH_FORMATS (WK_PG_FORMAT_MASK(WK_PG_TEXT) | WK_PG_FORMAT_MASK(WK_PG_BINARY)) /**< text and binary */

/** Maximum number of array dimensions (PostgreSQL's MAXDIM). */
#define WK_PG_MAXDIM 6

/* OIDs of the built-in types (pg_type.oid), scalars then arrays. */
enum {
    WK_PG_OID_BOOL = 16,
    WK_PG_OID_BYTEA = 17,
    WK_PG_OID_CHAR = 18,
    WK_PG_OID_NAME = 19,
    WK_PG_OID_INT8 = 20,
    WK_PG_OID_INT2 = 21,
    WK_PG_OID_INT4 = 23,
    WK_PG_OID_TEXT = 25,
    WK_PG_OID_OID = 26,
    WK_PG_OID_JSON = 114,
    WK_PG_OID_CIDR = 650,
    WK_PG_OID_FLOAT4 = 700,
    WK_PG_OID_FLOAT8 = 701,
    WK_PG_OID_INET = 869,
    WK_PG_OID_BPCHAR = 1042,
    WK_PG_OID_VARCHAR = 1043,
    WK_PG_OID_DATE = 1082,
    WK_PG_OID_TIME = 1083,
    WK_PG_OID_TIMESTAMP = 1114,
    WK_PG_OID_TIMESTAMPTZ = 1184,
    WK_PG_OID_INTERVAL = 1186,
    WK_PG_OID_TIMETZ = 1266,
    WK_PG_OID_NUMERIC = 1700,
    WK_PG_OID_UUID = 2950,
    WK_PG_OID_JSONB = 3802,

    WK_PG_OID_JSON_ARRAY = 199,
    WK_PG_OID_CIDR_ARRAY = 651,
    WK_PG_OID_BOOL_ARRAY = 1000,
    WK_PG_OID_BYTEA_ARRAY = 1001,
    WK_PG_OID_CHAR_ARRAY = 1002,
    WK_PG_OID_NAME_ARRAY = 1003,
    WK_PG_OID_INT2_ARRAY = 1005,
    WK_PG_OID_INT4_ARRAY = 1007,
    WK_PG_OID_TEXT_ARRAY = 1009,
    WK_PG_OID_BPCHAR_ARRAY = 1014,
    WK_PG_OID_VARCHAR_ARRAY = 1015,
    WK_PG_OID_INT8_ARRAY = 1016,
    WK_PG_OID_FLOAT4_ARRAY = 1021,
    WK_PG_OID_FLOAT8_ARRAY = 1022,
    WK_PG_OID_OID_ARRAY = 1028,
    WK_PG_OID_INET_ARRAY = 1041,
    WK_PG_OID_TIMESTAMP_ARRAY = 1115,
    WK_PG_OID_DATE_ARRAY = 1182,
    WK_PG_OID_TIME_ARRAY = 1183,
    WK_PG_OID_TIMESTAMPTZ_ARRAY = 1185,
    WK_PG_OID_INTERVAL_ARRAY = 1187,
    WK_PG_OID_NUMERIC_ARRAY = 1231,
    WK_PG_OID_TIMETZ_ARRAY = 1270,
    WK_PG_OID_UUID_ARRAY = 2951,
    WK_PG_OID_JSONB_ARRAY = 3807
};

/**
 * The C representation a value is decoded into or encoded from. The comment names the C
 * type that `out` (decode) or `in` (encode) points to.
 */
typedef enum wk_pg_kind {
    WK_PG_KIND_BOOL = 0,   /**< bool */
    WK_PG_KIND_I16,        /**< int16_t */
    WK_PG_KIND_I32,        /**< int32_t */
    WK_PG_KIND_I64,        /**< int64_t */
    WK_PG_KIND_U32,        /**< uint32_t (oid) */
    WK_PG_KIND_F32,        /**< float */
    WK_PG_KIND_F64,        /**< double */
    WK_PG_KIND_NUMERIC,    /**< wk_pg_numeric (digits in the arena when decoded) */
    WK_PG_KIND_STR,        /**< wk_slice: text (view into the input where possible) */
    WK_PG_KIND_BYTES,      /**< wk_slice: raw bytes (bytea) */
    WK_PG_KIND_UUID,       /**< wk_pg_uuid */
    WK_PG_KIND_DATE,       /**< int32_t days since 2000-01-01; INT32_MIN/MAX = -/+infinity */
    WK_PG_KIND_TIME,       /**< int64_t microseconds since midnight */
    WK_PG_KIND_TIMETZ,     /**< wk_pg_timetz */
    WK_PG_KIND_TIMESTAMP,  /**< int64_t microseconds since 2000-01-01 00:00 (UTC for
                              timestamptz); INT64_MIN/MAX = -/+infinity */
    WK_PG_KIND_INTERVAL,   /**< wk_pg_interval */
    WK_PG_KIND_INET,       /**< wk_pg_inet */
    WK_PG_KIND_ARRAY,      /**< decode: wk_pg_array; encode: wk_pg_array_in */
    WK_PG_KIND_TEXT,       /**< decode: wk_buf, PostgreSQL's text output is appended;
                              encode: wk_slice holding PostgreSQL text input */
    WK_PG_KIND_VALUE,      /**< decode: wk_value (nodes and copies in the arena; json/jsonb
                              numbers as WK_VAL_INT/UINT when integers within 64 bits, else
                              WK_VAL_FLOAT when finite, else WK_VAL_RAWNUM; numerics as
                              WK_VAL_RAWNUM, exact; for the exact text of every json number,
                              decode json/jsonb as STR and read it with
                              WK_JSON_READ_RAW_NUMBERS); encode (json, jsonb): a wk_value,
                              sent as its JSON text */
    WK_PG_KIND_EVENTS,     /**< decode: wk_pg_events, the value is written as events */
    WK_PG_KIND_COUNT
} wk_pg_kind;

#define WK_PG_KIND_MASK(k) (1u << (unsigned)(k)) /**< the bit of kind `k` in a mask */

/** A UUID: its 16 bytes in network order. */
typedef struct wk_pg_uuid {
    uint8_t b[16]; /**< the bytes */
} wk_pg_uuid;

/** time with time zone: microseconds since midnight and the UTC offset in seconds, east
 *  positive (+05:30 is 19800; PostgreSQL stores the opposite sign internally). */
typedef struct wk_pg_timetz {
    int64_t usec; /**< microseconds since midnight */
    int32_t offset_sec; /**< UTC offset in seconds, east positive */
} wk_pg_timetz;

/** interval: PostgreSQL's three independent fields. */
typedef struct wk_pg_interval {
    int64_t usec; /**< microseconds */
    int32_t days; /**< days */
    int32_t months; /**< months */
} wk_pg_interval;

/** inet / cidr: family 4 or 6, netmask bits, address bytes (4 or 16 used). */
typedef struct wk_pg_inet {
    uint8_t family; /**< 4 or 6 */
    uint8_t bits; /**< netmask length */
    bool cidr; /**< cidr (true) or inet (false) */
    uint8_t addr[16]; /**< address bytes (4 or 16 used) */
} wk_pg_inet;

/* Numeric signs, as on the wire. */
#define WK_PG_NUMERIC_POS 0x0000u /**< positive */
#define WK_PG_NUMERIC_NEG 0x4000u /**< negative */
#define WK_PG_NUMERIC_NAN 0xC000u /**< NaN */
#define WK_PG_NUMERIC_PINF 0xD000u /**< +Infinity */
#define WK_PG_NUMERIC_NINF 0xF000u /**< -Infinity */
/** Largest display scale PostgreSQL accepts (NUMERIC_DSCALE_MAX). */
#define WK_PG_NUMERIC_DSCALE_MAX 0x3FFF

/**
 * numeric, exactly as PostgreSQL holds it: value = sum(digits[i] * 10000^(weight - i)),
 * each digit 0..9999, `dscale` decimal places displayed. NaN and +/-Infinity are signs with no
 * digits. `digits` points into the arena (decode) or caller memory (encode).
 */
typedef struct wk_pg_numeric {
    uint16_t sign; /**< WK_PG_NUMERIC_* sign or special value */
    int16_t weight; /**< weight of the first digit, in base-10000 digits */
    uint16_t dscale; /**< display scale: digits after the decimal point */
    uint16_t ndigits; /**< base-10000 digits in `digits` */
    const uint16_t *digits; /**< the base-10000 digits, most significant first */
} wk_pg_numeric;

/**
 * A decoded array header. Elements are read with wk_pg_array_iter. For the binary format
 * `data` points at the first element's length word; for text it is the whole literal. The
 * decoder has already checked every dimension and element, so iteration cannot go past the
 * input.
 */
typedef struct wk_pg_array {
    wk_pg_format format; /**< TEXT or BINARY: what `data` holds */
    wk_pg_oid elem_oid;   /**< element type */
    int ndim;             /**< 0 for an empty array */
    bool has_nulls; /**< some element is NULL */
    uint32_t nitems;      /**< product of dims */
    int32_t dims[WK_PG_MAXDIM]; /**< length of each dimension */
    int32_t lbounds[WK_PG_MAXDIM]; /**< lower bound of each dimension */
    const uint8_t *data; /**< the elements (see above) */
    size_t len; /**< bytes at `data` */
    unsigned internal; /**< decoder's notes for the iterator; do not change */
} wk_pg_array;

/** Element iterator over a decoded array (row-major order). */
typedef struct wk_pg_array_iter {
    const wk_pg_array *arr; /**< the array */
    size_t pos; /**< internal: read position */
    uint32_t index; /**< index of the next element */
    wk_arena *arena; /**< where escaped text elements are unquoted; may be NULL */
} wk_pg_array_iter;

/** An array to encode: `nitems` (product of dims) values of `elem_kind`'s C type stored
 *  contiguously at `elems`; `nulls` (may be NULL) marks NULL elements. */
typedef struct wk_pg_array_in {
    wk_pg_kind elem_kind; /**< C kind of each element */
    int ndim; /**< number of dimensions (1..WK_PG_MAXDIM; 0 for an empty array) */
    int32_t dims[WK_PG_MAXDIM]; /**< length of each dimension */
    int32_t lbounds[WK_PG_MAXDIM]; /**< lower bound of each dimension (0 = 1) */
    const void *elems; /**< the elements */
    const bool *nulls; /**< NULL flags, one per element, or NULL */
} wk_pg_array_in;

/* Flags of wk_pg_events. */
#define WK_PG_EV_RAW_FLOATS 0x01u /**< finite float4/float8 as WK_EV_RAWNUM (PostgreSQL text)
                                     instead of WK_EV_FLOAT: for textual writers (JSON) */
/** Flag of wk_pg_events: numbers inside json/jsonb values as WK_EV_UINT / WK_EV_INT (integers
 *  that fit 64 bits) or WK_EV_FLOAT (others: the nearest double, when finite and not an
 *  underflow to zero) instead of WK_EV_RAWNUM with their exact text, which binary writers
 *  (MessagePack) write as a string; a number beyond those stays WK_EV_RAWNUM. */
#define WK_PG_EV_JSON_NUMBERS 0x02u
/** Flag of wk_pg_events: finite numerics as WK_EV_UINT / WK_EV_INT when integral and within
 *  64 bits, else as WK_EV_FLOAT when the nearest double's shortest digits are the same number
 *  (2.50 -> 2.5; 0.1 -> 0.1), else WK_EV_RAWNUM with the exact text; for binary writers
 *  (MessagePack), which write WK_EV_RAWNUM as a string. Without it numerics are
 *  WK_EV_RAWNUM. */
#define WK_PG_EV_NUMERIC_NUMBERS 0x04u

/** Default cap on the text of one value rendered client-side (a record's text output, whose
 *  size can double per nesting level under PostgreSQL's quoting rules): 64 MiB. */
#define WK_PG_MAX_TEXT_DEFAULT ((size_t)64 << 20)

/** Values nested deeper than this are refused with WK_ERR_LIMIT: arrays, ranges, multiranges
 *  and records decode and encode their parts through the registry, so a type that contains
 *  itself (a range whose subtype is itself, from a hostile catalog) would otherwise recurse
 *  once per level of the value. One budget counts every nesting codec of one decode or encode
 *  (a record in an array in a range is three levels). */
#define WK_PG_MAX_NESTING 100u

/** The former name of WK_PG_MAX_NESTING, when only records counted. */
#define WK_PG_MAX_RECORD_DEPTH WK_PG_MAX_NESTING

/** Target of WK_PG_KIND_EVENTS decodes. `scratch` (may be NULL) is reused for number and
 *  text rendering; NULL makes the decoder use a small stack buffer and allocate when it is
 *  too small. `max_text` caps the text a value is rendered to before it becomes one string
 *  event (records); 0 means WK_PG_MAX_TEXT_DEFAULT. A value whose rendering would pass the
 *  cap fails with WK_ERR_LIMIT before the buffer grows beyond it. For WK_PG_KIND_TEXT
 *  decodes the cap is the output buffer's own `max`. */
typedef struct wk_pg_events {
    const wk_sink *sink; /**< where the value's events go */
    unsigned flags; /**< WK_PG_EV_* flags */
    wk_buf *scratch; /**< reusable scratch buffer, or NULL */
    size_t max_text; /**< cap on one value's rendered text, 0 = WK_PG_MAX_TEXT_DEFAULT */
} wk_pg_events;

typedef struct wk_pg_codec wk_pg_codec;
/** An immutable set of codecs with O(1) look-ups, reference-counted (opaque). */
typedef struct wk_pg_registry wk_pg_registry;
typedef struct wk_pg_decoder wk_pg_decoder;
typedef struct wk_pg_encoder wk_pg_encoder;

/**
 * Decodes the value `p[0..n)` into `out` (the kind's C type). `arena` receives memory that
 * must outlive the call (numeric digits, unescaped text, trees); NULL is allowed for kinds
 * that need none. Returns WK_OK or an error with `err` filled (offset within `p`).
 */
typedef wk_status (*wk_pg_decode_fn)(const wk_pg_decoder *d, const uint8_t *p, size_t n,
                                     void *out, wk_arena *arena, wk_error *err);
/** Appends the wire form of `*in` (the kind's C type) to `out`. */
typedef wk_status (*wk_pg_encode_fn)(const wk_pg_encoder *e, const void *in, wk_buf *out,
                                     wk_error *err);

/**
 * A codec: functions per (format, kind) plus the metadata the registry is built from. The
 * masks must agree with the function tables (a bit set exactly where a function is given);
 * the registry checks this. Codecs are immutable and must outlive every registry using them.
 */
struct wk_pg_codec {
    const char *name;            /**< type name, e.g. "int4" */
    const wk_pg_oid *oids;       /**< the type OIDs handled; oids[0] is the default for encodes */
    const wk_pg_oid *array_oids; /**< parallel to oids: array type OID, or 0; NULL = none */
    size_t n_oids; /**< entries in `oids` (and `array_oids`) */
    unsigned formats;            /**< WK_PG_FORMAT_MASK bits */
    uint32_t decode_kinds;       /**< WK_PG_KIND_MASK bits of kinds it decodes into */
    uint32_t encode_kinds;       /**< kinds it encodes from */
    uint32_t native_kinds;       /**< kinds whose default PostgreSQL type this codec is */
    int rank;                    /**< preference: the highest wins, the latest added on ties */
    wk_pg_decode_fn decode[2][WK_PG_KIND_COUNT]; /**< decoders by [format][kind], NULL where not supported */
    wk_pg_encode_fn encode[2][WK_PG_KIND_COUNT]; /**< encoders by [format][kind], NULL where not supported */
    const void *data;            /**< codec-private (e.g. enum labels) */
};

/** A resolved decoder: call it with wk_pg_decode(). Lives as long as its registry. */
struct wk_pg_decoder {
    wk_pg_decode_fn fn; /**< the decode function */
    const wk_pg_codec *codec; /**< the codec it comes from */
    const wk_pg_decoder *elem;  /**< arrays (TEXT, VALUE, EVENTS kinds): element decoder */
    const wk_pg_registry *reg;  /**< the registry it was resolved in (NULL from the scan) */
    wk_pg_oid oid; /**< the type it decodes */
    wk_pg_oid elem_oid;        /**< arrays: element OID, else 0 */
    uint8_t format; /**< wk_pg_format of the input */
    uint8_t kind; /**< wk_pg_kind of the output */
};

/** A resolved encoder: call it with wk_pg_encode(). `oid` is the type to declare. */
struct wk_pg_encoder {
    wk_pg_encode_fn fn; /**< the encode function */
    const wk_pg_codec *codec; /**< the codec it comes from */
    const wk_pg_registry *reg; /**< arrays: where element encoders are looked up */
    wk_pg_oid oid; /**< the type to declare for the parameter */
    wk_pg_oid elem_oid; /**< arrays: element OID, else 0 */
    uint8_t format; /**< wk_pg_format of the output */
    uint8_t kind; /**< wk_pg_kind of the input */
};

/** Decodes `p[0..n)` with decoder `d` into `out` (the decoder's kind's C type); see
 * wk_pg_decode_fn. */
static inline wk_status wk_pg_decode(const wk_pg_decoder *d, const void *p, size_t n, void *out,
                                     wk_arena *arena, wk_error *err)
{
    return d->fn(d, (const uint8_t *)p, n, out, arena, err);
}

/** Encodes `*in` (the encoder's kind's C type) with encoder `e`, appending to `out`; see
 * wk_pg_encode_fn. */
static inline wk_status wk_pg_encode(const wk_pg_encoder *e, const void *in, wk_buf *out,
                                     wk_error *err)
{
    return e->fn(e, in, out, err);
}

/** Size in bytes of the C type of `kind` (used to step through wk_pg_array_in elements);
 *  0 for kinds that are not element values (TEXT, VALUE, EVENTS). */
WK_API size_t wk_pg_kind_size(wk_pg_kind kind);
/** Static name of a kind ("i32", "timestamp", ...). */
WK_API const char *wk_pg_kind_name(wk_pg_kind kind);

/* ---- the built-in codecs ------------------------------------------------------------- */

/** The built-in codecs (every base, range and multirange type of PostgreSQL 15's pg_catalog
 *  and their arrays; those outside the OID enum decode to PostgreSQL text, events and trees
 *  and encode from text), in registration order. */
WK_API const wk_pg_codec *const *wk_pg_builtin_codecs(size_t *n);

/* ---- codec templates for catalog types ------------------------------------------------ */
/*
 * Types whose OIDs differ per database (extensions such as hstore, user-defined composite
 * types) cannot be built-in codecs. These templates are what a catalog loader (wirekit-pq's
 * wk_pq_load_catalog, or your own) copies, setting `oids`, `array_oids` and `n_oids` to the
 * database's values (and, for composites, `data` to a wk_pg_composite), before adding the
 * copy to a registry with wk_pg_registry_add.
 */

/** The hstore template: decodes (text and binary) to PostgreSQL's text output, events
 *  (a map of string keys to string-or-nil values) and trees; encodes from text. Its `oids`
 *  hold one placeholder 0: copy it and set the database's hstore OID. */
WK_API const wk_pg_codec *wk_pg_hstore_codec(void);

/** A composite (row) type description: its attribute type OIDs, so each field is decoded by
 *  its own type's decoder. Made by wk_pg_composite_new, freed by wk_pg_composite_free. */
typedef struct wk_pg_composite wk_pg_composite;

/**
 * Builds a composite description from PostgreSQL text arrays as the catalog returns them:
 * `names[0..nlen)` the attribute names (e.g. `{id,name}`; accepted for the catalog query's
 * shape, not kept: values decode to the row's text output) and `types[0..tlen)` the attribute
 * type OIDs (e.g. `{23,25}`). At most 1664 attributes (PostgreSQL's limit). Returns WK_OK and
 * `*out`, or WK_ERR_SYNTAX (a malformed type list), WK_ERR_LIMIT, WK_ERR_NOMEM, with `*out`
 * NULL.
 */
WK_API wk_status wk_pg_composite_new(const char *names, size_t nlen, const char *types,
                                     size_t tlen, wk_pg_composite **out, wk_error *err);
/** Frees a composite description (NULL is a no-op). Free it only after every registry whose
 *  codec points at it is gone. */
WK_API void wk_pg_composite_free(wk_pg_composite *c);

/** The composite template: decodes the text and binary record formats to the row's text
 *  output, events and trees; encodes from text (binary: the literal is split as record_in
 *  does and each field encoded by its type's text encoder; WK_ERR_UNSUPPORTED when a field's
 *  type has none, or for anonymous records). Its `oids` hold the anonymous `record` OID
 *  (2249): copy it, set the composite type's OIDs and set `data` to a wk_pg_composite
 *  describing its fields; the template itself (data NULL) decodes anonymous records. */
WK_API const wk_pg_codec *wk_pg_composite_codec(void);

/** What a range or multirange codec needs to know about its type: the subtype (element) OID.
 *  The element is decoded and encoded by the subtype's codec found in the registry at call
 *  time. Must outlive the codec that points at it. */
typedef struct wk_pg_range_type {
    wk_pg_oid subtype; /**< the element type's OID */
} wk_pg_range_type;

/**
 * The range (multirange = false) or multirange template: decodes both formats to PostgreSQL's
 * text output (range_out / multirange_out), events (a string) and trees; encodes from text
 * (binary: the literal is parsed as range_in does and each bound encoded by the subtype's
 * codec). Copy it, set `oids` / `array_oids` / `n_oids` to the type's OIDs and `data` to a
 * wk_pg_range_type, then add the copy with wk_pg_registry_add. The built-in ranges and
 * multiranges are such copies.
 */
WK_API const wk_pg_codec *wk_pg_range_codec(bool multirange);

/* ---- the registry -------------------------------------------------------------------- */

/**
 * Builds an immutable registry from `codecs[0..n)` (later codecs win rank ties). `alloc`
 * NULL means libc. The registry starts with one reference. Returns WK_OK, WK_ERR_ARG (a codec
 * whose masks disagree with its functions, or no OIDs), WK_ERR_NOMEM.
 */
WK_API wk_status wk_pg_registry_build(const wk_pg_codec *const *codecs, size_t n,
                                      const wk_allocator *alloc, wk_pg_registry **out,
                                      wk_error *err);

/** Builds a registry of the built-in codecs. */
WK_API wk_status wk_pg_registry_new_default(const wk_allocator *alloc, wk_pg_registry **out,
                                            wk_error *err);

/**
 * Copy-on-write addition: builds a new snapshot holding `base`'s codecs followed by
 * `codecs[0..n)`. `base` is not changed and stays valid. The new registry starts with one
 * reference; it uses base's allocator.
 */
WK_API wk_status wk_pg_registry_add(const wk_pg_registry *base, const wk_pg_codec *const *codecs,
                                    size_t n, wk_pg_registry **out, wk_error *err);

/**
 * Makes `reg` own `mem`: `release(mem)` is called when the registry is freed. Used by codec
 * factories (catalog types) whose codecs live as long as the snapshot. Returns WK_OK or
 * WK_ERR_NOMEM (then `mem` is not adopted). Not thread-safe: call it before sharing `reg`.
 */
WK_API wk_status wk_pg_registry_adopt(wk_pg_registry *reg, void *mem, void (*release)(void *mem));

/** Takes a reference (atomic). Returns `reg`. */
WK_API wk_pg_registry *wk_pg_registry_ref(wk_pg_registry *reg);
/** Drops a reference; the last one frees the registry. NULL is a no-op. */
WK_API void wk_pg_registry_unref(wk_pg_registry *reg);

/** The decoder for (oid, format, kind), or NULL. O(1); thread-safe (read-only). */
WK_API const wk_pg_decoder *wk_pg_registry_find_decoder(const wk_pg_registry *reg, wk_pg_oid oid,
                                                        wk_pg_format format, wk_pg_kind kind);
/** The encoder that writes `kind` as PostgreSQL type `oid` in `format`, or NULL. O(1). */
WK_API const wk_pg_encoder *wk_pg_registry_find_encoder_for(const wk_pg_registry *reg,
                                                            wk_pg_oid oid, wk_pg_format format,
                                                            wk_pg_kind kind);
/** The encoder of `kind`'s default PostgreSQL type in `format` (for WK_PG_KIND_ARRAY use
 *  wk_pg_registry_find_array_encoder), or NULL. O(1). */
WK_API const wk_pg_encoder *wk_pg_registry_find_encoder(const wk_pg_registry *reg,
                                                        wk_pg_format format, wk_pg_kind kind);
/** The encoder of arrays of `elem_kind`'s default type (e.g. I64 -> int8[]), or NULL. O(1). */
WK_API const wk_pg_encoder *wk_pg_registry_find_array_encoder(const wk_pg_registry *reg,
                                                              wk_pg_format format,
                                                              wk_pg_kind elem_kind);

/** The codec registered for `oid` (scalar or array type), or NULL; sets `*is_array`. */
WK_API const wk_pg_codec *wk_pg_registry_codec_for(const wk_pg_registry *reg, wk_pg_oid oid,
                                                   bool *is_array);
/** Element OID of array type `oid`, or 0 when `oid` is not a registered array type. */
WK_API wk_pg_oid wk_pg_registry_elem_oid(const wk_pg_registry *reg, wk_pg_oid oid);
/** The codecs of the snapshot in registration order. */
WK_API const wk_pg_codec *const *wk_pg_registry_codecs(const wk_pg_registry *reg, size_t *n);

/* ---- publishing snapshots ------------------------------------------------------------ */

/**
 * A cell publishes the current registry snapshot to many threads. Readers call
 * wk_pg_registry_cell_acquire (an atomic load and increment, never a lock) and keep that
 * snapshot as long as they like; writers add codecs, which publishes a new snapshot. The cell
 * keeps every snapshot it published alive until wk_pg_registry_cell_free, so an acquire can
 * never race with a free. Writers serialise among themselves with a mutex.
 */
typedef struct wk_pg_registry_cell wk_pg_registry_cell;

/** Makes a cell publishing `initial` (the cell takes over the caller's reference). */
WK_API wk_status wk_pg_registry_cell_new(wk_pg_registry *initial, wk_pg_registry_cell **out);
/** The current snapshot with a reference taken: release it with wk_pg_registry_unref. */
WK_API wk_pg_registry *wk_pg_registry_cell_acquire(wk_pg_registry_cell *cell);
/** Publishes current + codecs as the new snapshot. Thread-safe. */
WK_API wk_status wk_pg_registry_cell_add(wk_pg_registry_cell *cell,
                                         const wk_pg_codec *const *codecs, size_t n,
                                         wk_error *err);
/** Drops the cell's references. Snapshots acquired by readers stay valid until released. */
WK_API void wk_pg_registry_cell_free(wk_pg_registry_cell *cell);

/* ---- arrays -------------------------------------------------------------------------- */

/** Starts iterating `a`. `arena` (may be NULL) receives unquoted copies of text elements that
 *  contain backslash escapes; without it such elements fail with WK_ERR_ARG. */
WK_API void wk_pg_array_iter_init(wk_pg_array_iter *it, const wk_pg_array *a, wk_arena *arena);
/** Gives the next element's bytes (`*is_null` for NULL). Returns WK_ERR_EOF after the last. */
WK_API wk_status wk_pg_array_next(wk_pg_array_iter *it, const uint8_t **p, size_t *n,
                                  bool *is_null, wk_error *err);
/** Fills a 1-D wk_pg_array_in (lower bound 1) over `n` elements. */
WK_API void wk_pg_array_in_1d(wk_pg_array_in *a, wk_pg_kind elem_kind, const void *elems,
                              size_t n, const bool *nulls);

/** A caller's C array that wk_pg_decode_array fills. */
typedef struct wk_pg_carray {
    wk_pg_kind elem_kind; /**< C kind of each element: a scalar kind (not ARRAY/TEXT/VALUE/EVENTS) */
    void *elems;          /**< room for `cap` elements of elem_kind */
    bool *nulls;          /**< NULL: a NULL element is WK_ERR_TYPE; else one flag per element */
    size_t cap; /**< room at `elems` and `nulls`, in elements */
    size_t count;         /**< out: the number of elements (also set on WK_ERR_LIMIT) */
} wk_pg_carray;

/**
 * Decodes a one-dimensional (or empty) array value straight into `out->elems`, element i at
 * index i. `d` is an array decoder (any kind) from the registry or the scan; each element is
 * decoded by the array's element codec into out->elem_kind, exactly as that codec's decoder
 * would decode it alone. Text `{1,2,3}`-shaped literals of int2/int4/int8/float4/float8 into
 * their natural kinds are read in one pass; everything else goes through the general parser.
 * NULL elements zero their slot and set out->nulls[i] (or fail with WK_ERR_TYPE when `nulls` is
 * NULL). Escaped text elements are unescaped into `arena` (may be NULL otherwise).
 * Statuses: the parser's and the element decoder's (err->offset is the byte in the value),
 * WK_ERR_TYPE (more than one dimension), WK_ERR_LIMIT (more than out->cap elements; out->count
 * holds the number needed), WK_ERR_NOT_FOUND (the element codec cannot decode into
 * elem_kind), WK_ERR_ARG (not an array decoder). On error the elements are unspecified.
 * Thread-safe; reads only `d`.
 */
WK_API wk_status wk_pg_decode_array(const wk_pg_decoder *d, const void *p, size_t n,
                                    wk_pg_carray *out, wk_arena *arena, wk_error *err);

/* ---- numeric helpers ----------------------------------------------------------------- */

/** Digits needed to hold any int64 (wk_pg_numeric_from_i64's storage). */
#define WK_PG_NUMERIC_I64_DIGITS 5

/** Parses decimal text (`[+-]digits[.digits][e[+-]digits]`, NaN, [+-]Infinity) into `out`,
 *  digits in `arena`. dscale is the number of digits after the point (after the exponent is
 *  applied). WK_ERR_SYNTAX, WK_ERR_RANGE (beyond PostgreSQL's limits), WK_ERR_NOMEM. */
WK_API wk_status wk_pg_numeric_parse(const char *s, size_t len, wk_arena *arena,
                                     wk_pg_numeric *out, wk_error *err);
/** Appends PostgreSQL's text output of `num` (every digit, dscale places). */
WK_API wk_status wk_pg_numeric_format(const wk_pg_numeric *num, wk_buf *out);
/** Exact conversion to int64: WK_ERR_RANGE when `num` has a non-zero fraction, is out of
 *  range, NaN or infinite. */
WK_API wk_status wk_pg_numeric_to_i64(const wk_pg_numeric *num, int64_t *out);
/** `v` as a numeric with dscale 0, digits stored in `storage`. */
WK_API void wk_pg_numeric_from_i64(int64_t v, uint16_t storage[WK_PG_NUMERIC_I64_DIGITS],
                                   wk_pg_numeric *out);
/** Nearest double (correctly rounded); NaN and infinities map to their doubles. */
WK_API wk_status wk_pg_numeric_to_double(const wk_pg_numeric *num, double *out);
/** The shortest decimal that converts back to `v` exactly (digits in `arena`); NaN and
 *  infinities map to the numeric specials. */
WK_API wk_status wk_pg_numeric_from_double(double v, wk_arena *arena, wk_pg_numeric *out,
                                           wk_error *err);

/* ---- decode plans -------------------------------------------------------------------- */

/** One result column of a plan. */
typedef struct wk_pg_plan_col {
    const char *name;   /**< column name (copied into the plan) */
    wk_pg_oid oid;      /**< type of the column */
    wk_pg_format format; /**< wire format of the column */
    wk_pg_kind kind;    /**< C kind to decode into */
    size_t offset;      /**< wk_pg_plan_decode_row: offset of the field in the row struct */
} wk_pg_plan_col;

/** A decode plan: one resolved decoder per result column (opaque). */
typedef struct wk_pg_plan wk_pg_plan;

/**
 * Resolves a decoder for every column once. Returns WK_ERR_NOT_FOUND (err->offset = column
 * index) when a column's (oid, format, kind) has no decoder, WK_ERR_NOMEM. The plan holds a
 * reference on `reg`. Free with wk_pg_plan_free. Thread-safe to use from many threads.
 */
WK_API wk_status wk_pg_plan_build(const wk_pg_registry *reg, const wk_pg_plan_col *cols, size_t n,
                                  const wk_allocator *alloc, wk_pg_plan **out, wk_error *err);
/** Frees a plan and drops its registry reference. NULL is a no-op. */
WK_API void wk_pg_plan_free(wk_pg_plan *plan);
/** The number of columns of a plan. */
WK_API size_t wk_pg_plan_ncols(const wk_pg_plan *plan);
/** The decoder of column `col` (NULL past the last column). */
WK_API const wk_pg_decoder *wk_pg_plan_decoder(const wk_pg_plan *plan, size_t col);

/**
 * Decodes one row: column i's bytes are `vals[i][0..lens[i])`, lens[i] < 0 for NULL. Each
 * value is written at `row + cols[i].offset`; `nulls` (may be NULL) gets the NULL flags (a
 * NULL column leaves its field untouched). No lookups happen. On error err->offset is the
 * byte offset inside the failing column's value and the status is the decoder's.
 */
WK_API wk_status wk_pg_plan_decode_row(const wk_pg_plan *plan, const uint8_t *const *vals,
                                       const int *lens, void *row, bool *nulls, wk_arena *arena,
                                       wk_error *err);
/** Writes one row as a map of column name -> value events (the plan's kinds are ignored:
 *  each column goes through its EVENTS decoder). */
WK_API wk_status wk_pg_plan_emit_row(const wk_pg_plan *plan, const uint8_t *const *vals,
                                     const int *lens, const wk_pg_events *ev, wk_error *err);
/** Builds one row as a wk_value map (column name -> value) in `arena`. */
WK_API wk_status wk_pg_plan_value_row(const wk_pg_plan *plan, const uint8_t *const *vals,
                                      const int *lens, wk_arena *arena, wk_value *out,
                                      wk_error *err);

/* ---- the row policy (row.c, row_in.c) ----------------------------------------------- */
/*
 * How a PostgreSQL row becomes one JSON or MessagePack record, and back: the one mapping that
 * `wirekit pg query`, `pg copy out`, `pg copy in`, the non-blocking and pipeline paths and
 * logical replication share. A row description is built once per result set from the columns
 * (names, type OIDs, typmods, wire formats: from a PGresult, a COPY plan or a replication
 * Relation message); each row is then one call taking each column's bytes.
 *
 * The mapping (objects):
 * - keys are the column names; a name seen before gets `_2`, `_3`, ... (the first suffix not
 *   taken by another column), so every key of a record is unique; `pg copy in` reads keys as
 *   column names as they are;
 * - SQL NULL is `null`, except in a json/jsonb column, where the key is left out: there `null`
 *   is always the JSON value null, so a round trip restores each (inside arrays and records
 *   both print as null, as row_to_json does);
 * - bool -> true/false; integers -> integers; finite float4/float8 -> numbers (JSON: PostgreSQL's
 *   digits; MessagePack: float32/float64); NaN and infinities -> strings;
 * - numeric -> JSON: a number with exactly PostgreSQL's digits; MessagePack: an integer when it
 *   is integral and fits int64/uint64, else a float64 when that double's shortest digits are
 *   the same number (2.50 -> 2.5), else the exact text as a string (WK_PG_ROW_EXACT_NUMBERS:
 *   always the string);
 * - json/jsonb -> the embedded value; MessagePack: its integers that fit 64 bits as integers,
 *   other numbers as float64 when finite, the exact text as a string beyond that
 *   (WK_PG_ROW_EXACT_NUMBERS: every number as its text);
 * - arrays -> nested arrays (every dimension; box[] elements are separated by ';');
 * - composite and record values -> nested objects keyed by field name, as row_to_json (an
 *   anonymous record's fields are f1, f2, ...), decoded from the binary form in time and
 *   memory linear in the value's size at any depth up to WK_PG_MAX_NESTING;
 * - everything else -> a string holding PostgreSQL's text output (DateStyle=ISO, ...).
 * With WK_PG_ROW_ARRAYS a record is an array in column order, and a json/jsonb value is a
 * string holding its JSON text (SQL NULL is null).
 */

/** The record format of the row policy. */
typedef enum wk_pg_row_format {
    WK_PG_ROW_JSON = 0,   /**< JSON: numbers keep PostgreSQL's digits */
    WK_PG_ROW_MSGPACK = 1 /**< MessagePack: numbers as MessagePack numbers (see above) */
} wk_pg_row_format;

/** wk_pg_row_opts flag: records are arrays in column order instead of objects. */
#define WK_PG_ROW_ARRAYS 0x01u
/** wk_pg_row_opts flag: MessagePack keeps numerics and numbers inside json/jsonb as strings of
 *  their exact text. */
#define WK_PG_ROW_EXACT_NUMBERS 0x02u

/** Options of a row description. A zeroed struct is JSON objects with the default cap. */
typedef struct wk_pg_row_opts {
    wk_pg_row_format format; /**< JSON or MessagePack */
    unsigned flags;          /**< WK_PG_ROW_* flags */
    size_t max_text;         /**< cap on one value's rendered text, 0 = WK_PG_MAX_TEXT_DEFAULT */
} wk_pg_row_opts;

/** One column of a row description. */
typedef struct wk_pg_row_col {
    const char *name;    /**< the column name (NUL-terminated; copied) */
    wk_pg_oid oid;       /**< its type */
    int32_t typmod;      /**< its type modifier (-1: none), as PQfmod and pgoutput give it */
    wk_pg_format format; /**< the wire format its values come in */
} wk_pg_row_col;

/** A row description: the columns resolved once, the record keys, the scratch memory rows are
 *  rendered in (opaque). Used by one thread at a time. */
typedef struct wk_pg_rowdesc wk_pg_rowdesc;

/**
 * Builds a row description for `cols[0..n)` (n may be 0): resolves each column's decoder in
 * `reg` (the description holds a reference) and makes the unique record keys. A column whose
 * type `reg` does not know is read as text when its format is text. `opts` NULL means zeroed
 * options; `alloc` NULL means libc. Returns WK_OK, WK_ERR_NOT_FOUND (a binary column of a type
 * without a binary decoder: err->offset is its index), WK_ERR_ARG (`reg` NULL, `cols` NULL
 * with n > 0, a NULL name), WK_ERR_NOMEM. `*out` is NULL on error. Free with
 * wk_pg_rowdesc_free.
 */
WK_API wk_status wk_pg_rowdesc_new(const wk_pg_registry *reg, const wk_pg_row_col *cols,
                                   size_t n, const wk_pg_row_opts *opts,
                                   const wk_allocator *alloc, wk_pg_rowdesc **out,
                                   wk_error *err);

/** A row description for a plan's columns (wk_pq_copy_out's callback gets one): their names,
 *  types and formats, typmods -1. Same statuses as wk_pg_rowdesc_new. */
WK_API wk_status wk_pg_rowdesc_from_plan(const wk_pg_plan *plan, const wk_pg_row_opts *opts,
                                         wk_pg_rowdesc **out, wk_error *err);

/** Frees a row description and drops its registry reference. NULL is a no-op. */
WK_API void wk_pg_rowdesc_free(wk_pg_rowdesc *d);

/** The number of columns of `d`. */
WK_API size_t wk_pg_rowdesc_ncols(const wk_pg_rowdesc *d);

/** Column `col` of `d` as given (its name copied), or NULL past the last column. */
WK_API const wk_pg_row_col *wk_pg_rowdesc_col(const wk_pg_rowdesc *d, size_t col);

/** The record key of column `col` (the name, or the name with its `_N` suffix), NUL-terminated
 *  and valid while `d` lives; NULL past the last column. */
WK_API const char *wk_pg_rowdesc_key(const wk_pg_rowdesc *d, size_t col);

/**
 * Writes one row as one record's events to `sink`: vals[i][0..lens[i]) is column i's value in
 * the column's format, lens[i] < 0 for SQL NULL. The events are those of the mapping above
 * (a map or, with WK_PG_ROW_ARRAYS, an array, then END). A failure stops at once, leaving
 * part of a record in the sink: use wk_pg_row_append for whole-or-nothing bytes. Returns
 * WK_OK, a decoder's status (err->offset is the byte in the value; wk_pg_row_column names
 * the column), WK_ERR_LIMIT (a value's text over the cap, a value nested deeper than
 * WK_PG_MAX_NESTING), or the sink's status.
 */
WK_API wk_status wk_pg_row_emit(wk_pg_rowdesc *d, const uint8_t *const *vals, const int *lens,
                                const wk_sink *sink, wk_error *err);

/**
 * Appends one row to `out` as one record: a JSON object (or array) and a newline, or one
 * MessagePack map (or array). Whole or nothing: on failure `out` is as it was. Same
 * arguments and statuses as wk_pg_row_emit.
 */
WK_API wk_status wk_pg_row_append(wk_pg_rowdesc *d, const uint8_t *const *vals,
                                  const int *lens, wk_buf *out, wk_error *err);

/** The index of the column the last failed wk_pg_row_emit, wk_pg_row_append or
 *  wk_pg_row_parse of `d` stopped at (its key: wk_pg_rowdesc_key), or SIZE_MAX. */
WK_API size_t wk_pg_row_column(const wk_pg_rowdesc *d);

/** The index of the pair (in `rec->u.pairs`) whose key the last wk_pg_row_parse of `d` found
 *  to be no column key, or SIZE_MAX. This tells a key that is no column apart from the other
 *  WK_ERR_NOT_FOUND of that call (a nested object's key that is no field of its composite
 *  type, a type without an encoder: those name their column through wk_pg_row_column). */
WK_API size_t wk_pg_row_unknown_key(const wk_pg_rowdesc *d);

/**
 * The inverse, for COPY in: turns record `rec` (a map as wk_pg_row_emit writes it, keys being
 * column keys; or, with WK_PG_ROW_ARRAYS, an array in column order) into each column's value
 * in the column's wire format: vals[i][0..lens[i]), lens[i] -1 for SQL NULL, valid until the
 * next call on `d`. A key left out is SQL NULL; `null` is SQL NULL, except in a json/jsonb
 * column, where it is the JSON value null. Scalars are read as PostgreSQL text input (numbers
 * as their digits, strings as they are, bytes as bytea hex), arrays as arrays of the column's
 * element type, objects as the column's composite type (by field name) or as the JSON of a
 * json/jsonb column, each encoded by the column type's codec; composites and arrays are
 * written in their binary form directly, in time linear in the record's size. Returns WK_OK,
 * WK_ERR_NOT_FOUND (a key that is no column: wk_pg_row_unknown_key is its pair; or an encoder's
 * NOT_FOUND, with wk_pg_row_column set), WK_ERR_TYPE (a value of the wrong shape for its
 * column), an encoder's status (wk_pg_row_column names the column; err->msg says why),
 * WK_ERR_LIMIT (nesting beyond WK_PG_MAX_NESTING), WK_ERR_NOMEM.
 */
WK_API wk_status wk_pg_row_parse(wk_pg_rowdesc *d, const wk_value *rec,
                                 const uint8_t **vals, int *lens, wk_error *err);

/* ---- binary COPY streams ----------------------------------------------------------------- */

/**
 * Reads the header of a binary COPY stream (`COPY ... (FORMAT binary)`) from `p[0..n)`:
 * signature, flags and the header extension, which is skipped. `*used` receives the header's
 * length. Returns WK_OK, WK_ERR_AGAIN (more bytes are needed; `*used` 0), WK_ERR_SYNTAX (not
 * the signature, a negative extension length), WK_ERR_UNSUPPORTED (a stream with OIDs or an
 * unknown critical flag); err->offset is the byte offset.
 */
WK_API wk_status wk_pg_copy_header(const uint8_t *p, size_t n, size_t *used, wk_error *err);

/**
 * Splits one tuple of a binary COPY stream at `p[0..n)` into its `ncols` fields: vals[i] and
 * lens[i] (-1 for NULL) point into `p`, ready for wk_pg_plan_decode_row, wk_pg_plan_emit_row
 * or wk_pg_plan_value_row with a plan whose columns are in the binary format. `*used`
 * receives the tuple's length. Returns WK_OK, WK_ERR_EOF at the trailer (`*used` 2),
 * WK_ERR_AGAIN (the tuple is not complete in `p`; at the end of the input that means a
 * truncated stream), WK_ERR_SYNTAX (a field count other than `ncols`, a length below -1);
 * err->offset is the byte offset inside the tuple.
 */
WK_API wk_status wk_pg_copy_row(const uint8_t *p, size_t n, size_t ncols, const uint8_t **vals,
                                int *lens, size_t *used, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
