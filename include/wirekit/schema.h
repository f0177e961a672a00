/*
 * Schemas: static descriptors of C structs, encoded to and decoded from any wire format.
 *
 * A descriptor lists, for each field of a struct, its wire name, its offset, its kind and its
 * flags. It is declared with the macros below in a few lines next to the struct; no code
 * generator is involved. One descriptor serves every format: encoding writes events to any
 * wk_sink (MessagePack, JSON writers), decoding reads events from any wk_source. A fused
 * MessagePack path (wk_schema_encode_mp / wk_schema_decode_mp) skips the event vtables and
 * gives byte-identical results, and so does the fused JSON path (wk_schema_encode_json /
 * wk_schema_decode_json).
 *
 *     typedef struct user {
 *         char *username;
 *         char *password;
 *         int32_t age;
 *         bool enabled;
 *         wk_value metadata;          // free-form: wirekit's map[string]any
 *     } user;
 *
 *     WK_SCHEMA_DEFINE(user_schema, user, "user", 1,
 *         WK_FIELD(user, username, "username", WK_SK_STR, WK_REQUIRED),
 *         WK_FIELD(user, password, "password", WK_SK_STR, 0),
 *         WK_FIELD(user, age, "age", WK_SK_I32, 0),
 *         WK_FIELD(user, enabled, "enabled", WK_SK_BOOL, 0),
 *         WK_FIELD(user, metadata, "metadata", WK_SK_VALUE, WK_OMITEMPTY));
 *
 * A field that must keep NULL apart from zero (a SQL NULL age, a JSON null) names a `bool`
 * presence member beside it with WK_FIELD_NULLABLE:
 *
 *         int32_t age; bool has_age;
 *         WK_FIELD_NULLABLE(user, age, has_age, "age", WK_SK_I32, 0),
 *
 * Wire shape: a struct is a map whose keys are the field names, written in declaration order;
 * integers take their shortest form (the writer's job: the schema emits non-negative values as
 * unsigned events). Decoding accepts any key order: each key is first compared with the next
 * expected field, then looked up in a hash index built once per descriptor (never a linear
 * scan of names). Unknown keys are skipped; missing fields keep whatever the caller put in
 * the object (its defaults); a missing WK_REQUIRED field fails.
 *
 * Every descriptor also has a version (used by the entity cache in its keys) and a
 * fingerprint of its wire shape (names, kinds, order, flags, nested shapes);
 * wk_schema_guard() lets a test fail when the shape changes but the version does not.
 *
 * Thread-safety: descriptors are immutable and may be shared by any number of threads. The
 * lookup index is built by wk_schema_prepare (on the caller's allocator) or on first use (on
 * the decode options' allocator, else libc) and published atomically.
 */
#ifndef WIREKIT_SCHEMA_H
#define WIREKIT_SCHEMA_H

#include <stddef.h>

#include "arena.h"
#include "buffer.h"
#include "event.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Field kinds. The C type each kind expects is given after it. */
typedef enum wk_schema_kind {
    WK_SK_BOOL = 1,  /**< bool */
    WK_SK_I8,        /**< int8_t */
    WK_SK_I16,       /**< int16_t */
    WK_SK_I32,       /**< int32_t */
    WK_SK_I64,       /**< int64_t */
    WK_SK_U8,        /**< uint8_t */
    WK_SK_U16,       /**< uint16_t */
    WK_SK_U32,       /**< uint32_t */
    WK_SK_U64,       /**< uint64_t */
    WK_SK_F32,       /**< float */
    WK_SK_F64,       /**< double */
    WK_SK_STR,       /**< char *: NUL-terminated UTF-8, may be NULL */
    WK_SK_STRBUF,    /**< char[N]: at most N-1 bytes plus a NUL */
    WK_SK_BYTES,     /**< wk_slice: pointer + length */
    WK_SK_TIMESTAMP, /**< wk_timestamp: seconds + nanoseconds */
    WK_SK_VALUE,     /**< wk_value: any free-form value (map[string]any) */
    WK_SK_STRUCT,    /**< a nested struct, inline, with its own descriptor */
    WK_SK_ARRAY      /**< T *items + size_t count (two members), elements of any kind */
} wk_schema_kind;

/* Field flags. */
#define WK_OMITEMPTY 0x01u /**< encode: leave the field out when it is zero/false/NULL/""/empty */
#define WK_REQUIRED 0x02u  /**< decode: fail when the key is missing */
#define WK_NULLABLE 0x04u  /**< nil <-> NULL pointer (str, bytes, array); nil accepted and
                              ignored on decode for the other kinds (unless WK_PRESENCE) */
/** The field has a presence member (set by WK_FIELD_NULLABLE, not by hand): a `bool` that is
 *  false when the field is NULL (nil, JSON null, SQL NULL) and true when it holds a value. */
#define WK_PRESENCE 0x08u

/** A point in time: seconds since the Unix epoch and nanoseconds (< 1e9). */
typedef struct wk_timestamp {
    int64_t sec; /**< seconds since the Unix epoch */
    uint32_t nsec; /**< nanoseconds, below 1e9 */
} wk_timestamp;

/** The C layout of an array nested directly in an array (WK_ELEM_ARRAY). */
typedef struct wk_schema_array {
    void *ptr; /**< the items */
    size_t count; /**< their count */
} wk_schema_array;

typedef struct wk_schema wk_schema;

/** The type of a field or array element. */
typedef struct wk_schema_type {
    uint8_t kind;                       /**< wk_schema_kind */
    uint32_t size;                      /**< sizeof one C object of this kind (array stride) */
    const wk_schema *schema;            /**< WK_SK_STRUCT: the nested descriptor */
    const struct wk_schema_type *elem;  /**< WK_SK_ARRAY: the element type */
} wk_schema_type;

/** One field of a schema descriptor (made by the WK_FIELD... macros). */
typedef struct wk_schema_field {
    const char *name;      /**< wire name */
    uint32_t name_len; /**< length of `name` */
    uint32_t offset;       /**< offsetof the member (WK_SK_ARRAY: of the items pointer) */
    uint32_t count_offset; /**< WK_SK_ARRAY: offsetof the size_t count member */
    uint32_t flags;        /**< WK_OMITEMPTY | WK_REQUIRED | WK_NULLABLE | WK_PRESENCE */
    wk_schema_type type; /**< the field's type */
    uint32_t presence_offset; /**< WK_PRESENCE: offsetof the `bool` presence member */
} wk_schema_field;

/** Lazily built lookup state of a descriptor (opaque; owned by the descriptor). */
typedef struct wk_schema_rt {
    void *index; /**< internal: the key index */
} wk_schema_rt;

/** Root kinds: a struct described by fields, or a free-form wk_value document. */
#define WK_SCHEMA_ROOT_STRUCT 0u
#define WK_SCHEMA_ROOT_VALUE 1u /**< root kind: a free-form wk_value document */

/** A schema descriptor: a struct's fields, or a free-form value root. Declare with
 * WK_SCHEMA_DEFINE; the fields are read-only. */
struct wk_schema {
    const char *name;  /**< entity name (cache keys) */
    uint32_t version;  /**< bump when the wire shape changes */
    uint32_t root;     /**< WK_SCHEMA_ROOT_* */
    uint32_t size;     /**< sizeof the C object */
    const wk_schema_field *fields; /**< the fields, in wire order */
    uint32_t nfields; /**< entries in `fields` */
    wk_schema_rt *rt; /**< lazily built lookup state */
};

/* ---- declaring descriptors ---------------------------------------------------------------- */

/* Compile-time check used by the field macros: evaluates to 0, or fails to compile (negative
 * array size) when `cond` is false. */
#define WK__CHECK(cond) (0 * sizeof(char[(cond) ? 1 : -1]))
#define WK__MSIZE(T, m) sizeof(((T *)0)->m)
#define WK__NAME(name) ("" name ""), (uint32_t)(sizeof("" name "") - 1)

/* sizeof the C object a kind expects (0 for kinds whose size comes from elsewhere). */
#define WK__KSIZE(k)                                                                        \
    ((k) == WK_SK_BOOL                                                                       \
         ? sizeof(bool)                                                                      \
         : (k) == WK_SK_I8 || (k) == WK_SK_U8                                                \
               ? 1u                                                                          \
               : (k) == WK_SK_I16 || (k) == WK_SK_U16                                        \
                     ? 2u                                                                    \
                     : (k) == WK_SK_I32 || (k) == WK_SK_U32 || (k) == WK_SK_F32              \
                           ? 4u                                                              \
                           : (k) == WK_SK_I64 || (k) == WK_SK_U64 || (k) == WK_SK_F64        \
                                 ? 8u                                                        \
                                 : (k) == WK_SK_STR                                          \
                                       ? sizeof(char *)                                      \
                                       : (k) == WK_SK_BYTES                                  \
                                             ? sizeof(wk_slice)                              \
                                             : (k) == WK_SK_TIMESTAMP                        \
                                                   ? sizeof(wk_timestamp)                    \
                                                   : (k) == WK_SK_VALUE ? sizeof(wk_value)   \
                                                                        : 0u)

/** A field of a scalar-like kind (bool, integers, floats, WK_SK_STR, WK_SK_BYTES,
 *  WK_SK_TIMESTAMP, WK_SK_VALUE). Fails to compile when the member's size does not match the
 *  kind. `name` must be a string literal. */
#define WK_FIELD(T, member, name, kind, flags)                                              \
    {WK__NAME(name),                                                                         \
     (uint32_t)(offsetof(T, member) +                                                        \
                WK__CHECK(WK__KSIZE(kind) != 0 && WK__MSIZE(T, member) == WK__KSIZE(kind))), \
     0, (flags), {(kind), (uint32_t)WK__MSIZE(T, member), NULL, NULL}, 0}

/**
 * A nullable field of a scalar-like kind (as WK_FIELD, but not WK_SK_VALUE, whose own nil is
 * its NULL): `present` names a `bool` member of T that says whether the field holds a value.
 * Encoding writes nil (MessagePack) or null (JSON) when `present` is false, whatever the
 * member holds, and the member's value otherwise; with WK_OMITEMPTY a NULL field is left out
 * and a present one is always written (a present 0 is a value, not "empty"). Decoding sets
 * `present` false and zeroes the member on nil, and sets it true on any other value; a key
 * that is absent leaves both as the caller put them. wk_pq_row_to_struct maps SQL NULL to
 * false, wk_pq_struct_params binds false as SQL NULL. The flags get WK_NULLABLE | WK_PRESENCE,
 * which the fingerprint sees. Fails to compile when `present` is not a bool-sized member.
 *
 *     typedef struct user { int32_t age; bool has_age; } user;
 *     WK_FIELD_NULLABLE(user, age, has_age, "age", WK_SK_I32, 0)
 */
#define WK_FIELD_NULLABLE(T, member, present, name, kind, flags)                            \
    {WK__NAME(name),                                                                         \
     (uint32_t)(offsetof(T, member) +                                                        \
                WK__CHECK(WK__KSIZE(kind) != 0 && (kind) != WK_SK_VALUE &&                   \
                          WK__MSIZE(T, member) == WK__KSIZE(kind) &&                         \
                          WK__MSIZE(T, present) == sizeof(bool))),                           \
     0, (flags) | WK_NULLABLE | WK_PRESENCE,                                                 \
     {(kind), (uint32_t)WK__MSIZE(T, member), NULL, NULL}, (uint32_t)offsetof(T, present)}

/** A `char member[N]` field. */
#define WK_FIELD_STRBUF(T, member, name, flags)                                             \
    {WK__NAME(name),                                                                         \
     (uint32_t)(offsetof(T, member) + WK__CHECK(WK__MSIZE(T, member) >= 1)), 0, (flags),     \
     {WK_SK_STRBUF, (uint32_t)WK__MSIZE(T, member), NULL, NULL}, 0}

/** A nested struct member of C type `ST` described by `schema_ptr`. */
#define WK_FIELD_STRUCT(T, member, name, ST, schema_ptr, flags)                             \
    {WK__NAME(name),                                                                         \
     (uint32_t)(offsetof(T, member) + WK__CHECK(WK__MSIZE(T, member) == sizeof(ST))), 0,     \
     (flags), {WK_SK_STRUCT, (uint32_t)sizeof(ST), (schema_ptr), NULL}, 0}

/** An array: `items_member` points to `count_member` (size_t) elements of type `elem_type`
 *  (a `const wk_schema_type *`, e.g. WK_ELEM(WK_SK_I32)). Decoded arrays live in the arena. */
#define WK_FIELD_ARRAY(T, items_member, count_member, name, elem_type, flags)               \
    {WK__NAME(name),                                                                         \
     (uint32_t)(offsetof(T, items_member) +                                                  \
                WK__CHECK(WK__MSIZE(T, items_member) == sizeof(void *) &&                    \
                          WK__MSIZE(T, count_member) == sizeof(size_t))),                    \
     (uint32_t)offsetof(T, count_member), (flags),                                           \
     {WK_SK_ARRAY, (uint32_t)sizeof(wk_schema_array), NULL, (elem_type)}, 0}

/* Element types for WK_FIELD_ARRAY (file-scope compound literals: static storage). */
/** The element type `kind` (a scalar-like kind) for WK_FIELD_ARRAY. */
#define WK_ELEM(kind) (&(const wk_schema_type){(kind), (uint32_t)WK__KSIZE(kind), NULL, NULL})
/** A `char[n]` element type for WK_FIELD_ARRAY. */
#define WK_ELEM_STRBUF(n) (&(const wk_schema_type){WK_SK_STRBUF, (uint32_t)(n), NULL, NULL})
/** A nested struct element of C type `ST` described by `schema_ptr`, for WK_FIELD_ARRAY. */
#define WK_ELEM_STRUCT(ST, schema_ptr)                                                      \
    (&(const wk_schema_type){WK_SK_STRUCT, (uint32_t)sizeof(ST), (schema_ptr), NULL})
/** Array of arrays: each element is a wk_schema_array whose items have type `elem_type`. */
#define WK_ELEM_ARRAY(elem_type)                                                            \
    (&(const wk_schema_type){WK_SK_ARRAY, (uint32_t)sizeof(wk_schema_array), NULL, (elem_type)})

/** Defines `const wk_schema var` describing C struct `T`, entity `name`, `version`, with the
 *  given WK_FIELD... entries. Use at file scope. WK_SCHEMA_DEFINE_STATIC gives it internal
 *  linkage. A descriptor that refers to itself (a tree) needs a prior
 *  `extern const wk_schema var;`. */
#define WK__SCHEMA(link, var, T, ename, ver, ...)                                           \
    static const wk_schema_field var##__fields[] = {__VA_ARGS__};                           \
    static wk_schema_rt var##__rt;                                                          \
    link const wk_schema var = {(ename), (ver), WK_SCHEMA_ROOT_STRUCT, (uint32_t)sizeof(T),  \
                                var##__fields,                                              \
                                (uint32_t)(sizeof(var##__fields) / sizeof(var##__fields[0])), \
                                &var##__rt}
/** Defines `const wk_schema var` (external linkage); see above. */
#define WK_SCHEMA_DEFINE(var, T, name, version, ...)                                        \
    WK__SCHEMA(, var, T, name, version, __VA_ARGS__)
/** Defines `static const wk_schema var`; see above. */
#define WK_SCHEMA_DEFINE_STATIC(var, T, name, version, ...)                                 \
    WK__SCHEMA(static, var, T, name, version, __VA_ARGS__)

/** Defines a descriptor for free-form documents: the C object is a `wk_value`, written and
 *  read as it is (any shape). The entity cache uses it for schemaless entries. */
#define WK_SCHEMA_DEFINE_VALUE(var, name, version)                                          \
    static wk_schema_rt var##__rt;                                                          \
    const wk_schema var = {(name), (version), WK_SCHEMA_ROOT_VALUE,                           \
                           (uint32_t)sizeof(wk_value), NULL, 0, &var##__rt}

/* ---- checking and fingerprinting ---------------------------------------------------------- */

/**
 * Validates `s` and every descriptor it nests, and builds their lookup indexes (otherwise
 * built on first use). Checks: known kinds, members inside the struct, unique non-empty
 * names, at most 64 required fields per struct, at most 4096 fields, nested descriptors
 * present. Returns WK_OK, WK_ERR_ARG (the message says what is wrong with which field) or
 * WK_ERR_NOMEM. Thread-safe; idempotent. The indexes come from `alloc` (NULL = libc; it must
 * outlive them) and are freed only by wk_schema_unprepare(). Without this call, the first
 * encode or decode builds them: a decode on its options' `alloc`, an encode (which takes no
 * allocator) on libc; a program that must make no libc call prepares its descriptors first.
 */
WK_API wk_status wk_schema_prepare(const wk_schema *s, const wk_allocator *alloc, wk_error *err);

/** Frees the lookup index of `s` (not of nested descriptors). Only for descriptors that are
 *  not static (built at run time) and no longer used by any thread. */
WK_API void wk_schema_unprepare(const wk_schema *s);

/**
 * A 64-bit fingerprint of the wire shape of `s`: root kind, and for each field in order its
 * name, kind, flags, fixed string size and, recursively, nested struct and element shapes.
 * Offsets, C sizes, the entity name and the version do not take part. Stable across runs and
 * machines (FNV-1a 64). Thread-safe.
 */
WK_API uint64_t wk_schema_fingerprint(const wk_schema *s);

/**
 * The version guard for tests: compares the descriptor with a recorded (version, fingerprint)
 * pair kept in the test. Returns WK_OK when both match. Returns WK_ERR_STATE with the message
 * "schema shape changed but its version was not bumped" when the fingerprint differs and the
 * version does not, and "schema version changed: record the new version and fingerprint"
 * when the version differs (so the record always follows the descriptor).
 */
WK_API wk_status wk_schema_guard(const wk_schema *s, uint32_t recorded_version,
                                 uint64_t recorded_fingerprint, wk_error *err);

/* ---- encoding and decoding ---------------------------------------------------------------- */

/** Longest field path kept in a decode error ("metadata.tags[3].name"); longer paths are cut
 *  with "...". */
#define WK_SCHEMA_PATH_MAX 128

/** A decode error: the usual code, byte offset and static message, plus the path of the field
 *  that failed ("" for the root). wk_schema_error_format() renders
 *  "metadata.int: expected string (at byte 57)". */
typedef struct wk_schema_error {
    wk_error base; /**< code, offset and message */
    char path[WK_SCHEMA_PATH_MAX]; /**< the failing field's path, NUL-terminated */
} wk_schema_error;

/** Decode options; zero-initialised options are the defaults. */
#define WK_SCHEMA_REJECT_UNKNOWN 0x01u /**< an unknown key is an error instead of skipped */

/** Decode options; zero-initialised options are the defaults. */
typedef struct wk_schema_opts {
    unsigned flags;     /**< WK_SCHEMA_* */
    uint32_t max_depth; /**< nesting limit for structs, arrays and wk_values; 0 = 64; at most 256 */
    /** Allocator of the descriptor indexes when this call is the first use of a descriptor
     *  nobody prepared (see wk_schema_prepare: it must outlive the indexes); NULL = libc. */
    const wk_allocator *alloc;
} wk_schema_opts;

/**
 * Writes `obj` (a `T *` for the struct `s` describes, or a `wk_value *` for a value
 * descriptor) to `sink` as events: a map of the present fields in declaration order, nested
 * structs as maps, arrays as arrays, wk_values as they are. Omitted: WK_OMITEMPTY fields that
 * are empty. NULL strings are written as nil when WK_NULLABLE, else as "". Non-negative
 * integers are emitted as WK_EV_UINT, negative ones as WK_EV_INT.
 * Returns WK_OK, WK_ERR_ARG (NULL array with a count, a length that does not fit 32 bits),
 * WK_ERR_DEPTH (data nested deeper than 256, e.g. a cycle), or the sink's error (`err` filled
 * from the sink). Never recurses in C. Thread-safe for distinct sinks.
 */
WK_API wk_status wk_schema_encode(const wk_schema *s, const void *obj, const wk_sink *sink,
                                  wk_error *err);

/**
 * Reads the next value of `src` into `obj`, which the caller has initialised with defaults
 * (e.g. zeroed): fields whose keys are absent keep their values. Strings, bytes, arrays and
 * wk_values are allocated in `arena` (strings NUL-terminated) and never point into the input.
 * Integers of any wire width are accepted when they fit the field (else WK_ERR_RANGE);
 * floats accept integers; a string containing a NUL byte is rejected. `opts` may be NULL.
 * Returns WK_OK, WK_ERR_TYPE ("expected string", ...), WK_ERR_RANGE, WK_ERR_NOT_FOUND
 * ("missing required field"), WK_ERR_DEPTH, WK_ERR_NOMEM, WK_ERR_EOF (no value at all), the
 * source's error, or WK_ERR_ARG (invalid descriptor). `err` (may be NULL) gets the code,
 * offset, message and field path. On error `obj` may be partly written; the arena may hold
 * partial allocations. Never recurses in C.
 */
WK_API wk_status wk_schema_decode(const wk_schema *s, const wk_source *src, void *obj,
                                  wk_arena *arena, const wk_schema_opts *opts,
                                  wk_schema_error *err);

/** Renders `e` as "path: message (at byte N)" (or without "path: " at the root) into
 *  `buf[0..cap)`, always NUL-terminated when cap > 0. Returns the length it needed. */
WK_API size_t wk_schema_error_format(const wk_schema_error *e, char *buf, size_t cap);

/**
 * The fused MessagePack encoder: appends `obj` to `out` exactly as wk_schema_encode through
 * the MessagePack writer would (byte-identical; a test compares them), without event
 * dispatch. On error `out` keeps its previous length. Returns WK_OK, WK_ERR_ARG,
 * WK_ERR_DEPTH, WK_ERR_LIMIT or WK_ERR_NOMEM (from the buffer).
 */
WK_API wk_status wk_schema_encode_mp(const wk_schema *s, const void *obj, wk_buf *out,
                                     wk_error *err);

/**
 * The fused MessagePack decoder: decodes one MessagePack value from `data[0..len)` into `obj`
 * with the same results and errors as wk_schema_decode over a MessagePack reader, and fails
 * with WK_ERR_TRAILING when bytes are left over.
 */
WK_API wk_status wk_schema_decode_mp(const wk_schema *s, const void *data, size_t len,
                                     void *obj, wk_arena *arena, const wk_schema_opts *opts,
                                     wk_schema_error *err);

/**
 * The fused JSON encoder: appends `obj` to `out` as compact JSON, exactly as wk_schema_encode
 * into a wk_json_writer with default options would (byte-identical; tests compare them),
 * without event dispatch. On error `out` keeps its previous length. Returns WK_OK or that
 * path's status: WK_ERR_ARG, WK_ERR_DEPTH, WK_ERR_RANGE (NaN or infinity, a timestamp outside
 * years 0000-9999), WK_ERR_UTF8 (a string that is not UTF-8), WK_ERR_TYPE (a wk_value map key
 * that is a container), WK_ERR_LIMIT or WK_ERR_NOMEM (from the buffer). Thread-safe.
 */
WK_API wk_status wk_schema_encode_json(const wk_schema *s, const void *obj, wk_buf *out,
                                       wk_error *err);

/**
 * The fused JSON decoder: decodes one JSON value (RFC 8259, whitespace around it allowed)
 * from `data[0..len)` into `obj` with the same results and errors (status, message, offset,
 * field path) as wk_schema_decode over a wk_json_reader with default options, followed by a
 * check that nothing but whitespace is left (WK_ERR_TRAILING otherwise). Strings of wk_value
 * fields that had no escape are marked WK_VALF_PLAIN, as wk_json_decode_value marks them.
 * Input the fast path does not take (an error, an unknown or escaped key, a struct with
 * nested structs or arrays) is decoded again by the generic path, so the arena may then hold
 * a first partial copy too (bounded by a small multiple of the input): with a capped arena,
 * WK_ERR_NOMEM can come sooner than on the generic path alone. Thread-safe.
 */
WK_API wk_status wk_schema_decode_json(const wk_schema *s, const void *data, size_t len,
                                       void *obj, wk_arena *arena, const wk_schema_opts *opts,
                                       wk_schema_error *err);

/* ---- serializers -------------------------------------------------------------------------- */

/**
 * A serializer: one wire format for whole objects, chosen at run time (e.g. by the entity
 * cache or a command-line flag). `encode` appends the object to `out`; `decode` reads exactly
 * one value from `data[0..len)` (trailing bytes are an error). Both follow the contracts of
 * wk_schema_encode / wk_schema_decode. Serializers are static and thread-safe.
 */
typedef struct wk_serializer {
    const char *name; /**< "msgpack", "json" */
    /** Appends `obj` to `out` (as wk_schema_encode would through this format's writer). */
    wk_status (*encode)(const wk_schema *s, const void *obj, wk_buf *out, wk_error *err);
    /** Decodes exactly one value from `data[0..len)` into `obj` (as wk_schema_decode). */
    wk_status (*decode)(const wk_schema *s, const void *data, size_t len, void *obj,
                        wk_arena *arena, const wk_schema_opts *opts, wk_schema_error *err);
} wk_serializer;

/** The MessagePack serializer (fused fast paths). Never NULL. */
WK_API const wk_serializer *wk_serializer_msgpack(void);
/** The JSON serializer (compact JSON, UTF-8; the fused paths above). Never NULL. */
WK_API const wk_serializer *wk_serializer_json(void);
/** Finds a serializer by name ("msgpack", "json"); NULL when unknown. */
WK_API const wk_serializer *wk_serializer_find(const char *name);

#ifdef __cplusplus
}
#endif
#include "schema_mp_fold.h" /* the folded wk_schema_encode_mp */

#endif
