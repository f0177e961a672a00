/*
 * wk_value: the value tree, wirekit's answer to `map[string]any`.
 *
 * A node is 16 bytes: a type tag, a 32-bit length (string/binary bytes, array elements, map
 * pairs, or a timestamp's nanoseconds) and an 8-byte payload. Arrays and maps store their
 * children contiguously (maps as key/value pairs, keys of any type, order preserved,
 * duplicates kept), so walking a tree is a linear scan through arena memory. Every node and
 * child array lives in a caller arena; strings either point into the input (zero-copy) or are
 * copied into the arena (WK_READ_COPY_STRINGS), the caller's choice at decode time.
 *
 * Trees are built from any event source (wk_value_decode) and written to any sink
 * (wk_value_encode), so one tree type serves MessagePack, JSON and the PostgreSQL codecs.
 * A built tree is immutable by convention and safe to read from many threads.
 */
#ifndef WIREKIT_VALUE_H
#define WIREKIT_VALUE_H

#include "arena.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The type of a wk_value node. */
typedef enum wk_value_type {
    WK_VAL_NIL = 0,
    WK_VAL_BOOL,
    WK_VAL_INT,       /**< u.i; negative integers (decoders), or any int64 (builders) */
    WK_VAL_UINT,      /**< u.u; non-negative integers */
    WK_VAL_FLOAT,     /**< u.f; flag WK_VALF_F32 when the source was a float32 */
    WK_VAL_STR,       /**< u.str, len bytes of UTF-8 (not NUL-terminated unless copied) */
    WK_VAL_BIN,       /**< u.bin, len bytes */
    WK_VAL_ARRAY,     /**< u.items[0..len) */
    WK_VAL_MAP,       /**< u.pairs[0..len) */
    WK_VAL_EXT,       /**< u.bin, len bytes, ext_type */
    WK_VAL_TIMESTAMP, /**< u.i seconds since the Unix epoch, len nanoseconds (< 1e9) */
    WK_VAL_RAWNUM     /**< u.str, len bytes: a JSON number kept as its source text */
} wk_value_type;

/* Flags. */
#define WK_VALF_F32 0x01u    /**< WK_VAL_FLOAT: came from / meant for float32 */
#define WK_VALF_COPIED 0x02u /**< WK_VAL_STR/BIN/EXT: bytes live in the arena (NUL-terminated) */
/** WK_VAL_STR: the bytes are valid UTF-8 and hold no byte JSON must escape (`"`, `\`, below
 *  0x20). Set by wk_json_decode_value on strings without escapes; the JSON writers then copy
 *  the bytes without scanning them. Whoever sets it vouches for it (a wrong flag gives
 *  invalid JSON); clear it when changing the bytes. */
#define WK_VALF_PLAIN 0x04u

typedef struct wk_value wk_value;
typedef struct wk_pair wk_pair;

/** A node of the value tree: a type tag, a length and a payload (see the file description).
 * 16 bytes. */
struct wk_value {
    uint8_t type;    /**< wk_value_type */
    uint8_t flags;   /**< WK_VALF_* */
    int8_t ext_type; /**< WK_VAL_EXT only */
    uint8_t reserved; /**< zero */
    uint32_t len; /**< bytes (STR, BIN, EXT, RAWNUM), elements (ARRAY), pairs (MAP), or nanoseconds (TIMESTAMP) */
    union {
        bool b;
        int64_t i;
        uint64_t u;
        double f;
        const char *str;
        const uint8_t *bin;
        wk_value *items;
        wk_pair *pairs;
    } u; /**< the payload, by type */
};

/** One entry of a map: its key and its value. */
struct wk_pair {
    wk_value key; /**< the key (a string in JSON documents; any type in MessagePack) */
    wk_value val; /**< the value */
};


/**
 * Builds the tree of the next top-level value of `src` in `arena`.
 *
 * With WK_READ_COPY_STRINGS unset, strings point into the source's input, which must then
 * outlive the tree. Uses an explicit stack, never recursion; children are gathered in a
 * scratch buffer and copied into the arena once each container ends. Returns WK_OK (`*out`
 * set), WK_ERR_EOF when the source has no more values, WK_ERR_DEPTH, WK_ERR_NOMEM (arena or
 * cap exhausted), or the source's error; `err` gets the details with the byte offset.
 * On error the arena may hold partial allocations (reset or free it).
 */
WK_API wk_status wk_value_decode(const wk_source *src, const wk_read_opts *opts,
                                 wk_arena *arena, wk_value **out, wk_error *err);

/** Writes `v` to `sink` as events (depth-first, explicit stack: 64 levels on the C stack, the
 *  frames of deeper trees from `alloc`, NULL = libc). Returns WK_OK, WK_ERR_NOMEM (frames for
 *  a deeper tree), WK_ERR_ARG (a node of unknown type) or the sink's latched error. */
WK_API wk_status wk_value_encode(const wk_value *v, const wk_allocator *alloc,
                                 const wk_sink *sink, wk_error *err);

/** Fills `ev` with the event node `v` stands for: its scalar event, or for an array or map the
 *  opening event with its count (children and WK_EV_END are the caller's to walk). Returns
 *  false, leaving `ev` unspecified, when `v` has no valid type. Thread-safe. */
WK_API bool wk_value_event(const wk_value *v, wk_event *ev);

/** Deep equality: same types, same numbers (floats compared bitwise, so NaN equals itself and
 *  0.0 differs from -0.0), same bytes, same order. An INT and a UINT holding the same
 *  non-negative number are equal. The walk keeps 64 levels on the C stack and takes the
 *  frames of deeper trees from `alloc` (NULL = libc); when that fails it returns false. */
WK_API bool wk_value_equal(const wk_value *a, const wk_value *b, const wk_allocator *alloc);

/* ---- building trees by hand (all nodes live in the arena) ---- */

/** Makes `v` nil. */
WK_API void wk_value_set_nil(wk_value *v);
/** Makes `v` a bool. */
WK_API void wk_value_set_bool(wk_value *v, bool b);
/** Makes `v` an integer (stored as UINT when i >= 0, as decoders do). */
WK_API void wk_value_set_int(wk_value *v, int64_t i);
/** Makes `v` an unsigned integer. */
WK_API void wk_value_set_uint(wk_value *v, uint64_t u);
/** Makes `v` a float64. */
WK_API void wk_value_set_float(wk_value *v, double f);
/** Points `v` at `s[0..len)` (no copy). WK_ERR_RANGE when len does not fit 32 bits. */
WK_API wk_status wk_value_set_str(wk_value *v, const char *s, size_t len);
/** Copies `s[0..len)` into the arena. WK_ERR_NOMEM or WK_ERR_RANGE on failure. */
WK_API wk_status wk_value_set_str_copy(wk_value *v, wk_arena *a, const char *s, size_t len);
/** Points `v` at binary data `p[0..len)` (no copy). WK_ERR_RANGE when len does not fit 32
 *  bits. */
WK_API wk_status wk_value_set_bin(wk_value *v, const void *p, size_t len);
/** Points `v` at extension data `p[0..len)` of application type `type` (no copy).
 *  WK_ERR_RANGE when len does not fit 32 bits. */
WK_API wk_status wk_value_set_ext(wk_value *v, int8_t type, const void *p, size_t len);
/** Makes `v` a timestamp. WK_ERR_RANGE when nsec >= 1e9. */
WK_API wk_status wk_value_set_timestamp(wk_value *v, int64_t sec, uint32_t nsec);
/** Makes `v` an array of `n` NIL elements in the arena; fill `v->u.items[i]`. */
WK_API wk_status wk_value_set_array(wk_value *v, wk_arena *a, size_t n);
/** Makes `v` a map of `n` NIL/NIL pairs in the arena; fill `v->u.pairs[i]`. */
WK_API wk_status wk_value_set_map(wk_value *v, wk_arena *a, size_t n);

/** Returns the value of the first pair whose key is the string `key[0..len)`, or NULL.
 *  Linear in the map size. NULL when `map` is not a map. */
WK_API const wk_value *wk_value_map_get(const wk_value *map, const char *key, size_t len);

/** Static name of a value type ("nil", "bool", "int", ...). */
WK_API const char *wk_value_type_name(wk_value_type t);

#ifdef __cplusplus
}
#endif
#endif
