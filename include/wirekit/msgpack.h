/*
 * MessagePack (https://github.com/msgpack/msgpack/blob/master/spec.md): writer, reader,
 * validate-only scan, skip, and the fused value-tree paths.
 *
 * Writer: the hot calls are static inline, msgpuck-style. The writer keeps a cursor `pos` and
 * `lim`, the bound below which 32 bytes fit, so a write of at most 32 bytes (every scalar,
 * header and fixstr) is one compare of `pos` against `lim` and a few stores; only growth,
 * the last 31 bytes of a buffer and errors leave the inline path. Errors are sticky (mpack-style): after the first
 * failure every call is a no-op and wk_mp_writer_finish() reports it. Integers, strings,
 * containers and timestamps are always written in their shortest form. `out->len` is brought
 * up to date by wk_mp_writer_finish() (or wk_mp_writer_flush()).
 *
 * Reader: a zero-copy cursor over `(ptr, len)` that yields wk_events (see event.h). It checks
 * every declared length and count against the bytes that remain before using it, rejects
 * 0xc1, checks timestamp extensions, limits nesting without recursion and can check strings
 * for UTF-8. There is no separate validation pass: reading is validating.
 */
#ifndef WIREKIT_MSGPACK_H
#define WIREKIT_MSGPACK_H

#include <string.h>

#include "buffer.h"
#include "event.h"
#include "value.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The hot inline writers and encoders are always inlined: at -O2 GCC otherwise leaves the
 * larger ones (wk_mp_writer_str, wk_mp_writer_int) out of line in a caller writing many fields,
 * which doubles the instructions of a small record. */
#if defined(__GNUC__)
#define WK__MP_HOT static inline __attribute__((always_inline))
#else
#define WK__MP_HOT static inline
#endif

/** Default nesting limit of readers, scans and tree decoders. */
#define WK_MP_DEFAULT_MAX_DEPTH 512u
/** The MessagePack extension type of timestamps. */
#define WK_MP_EXT_TIMESTAMP (-1)

/* ==== writer ================================================================================ */

/* An open container of the event sink (internal to the writer). */
/** An open container of the event sink (internal to the writer). */
typedef struct wk_mp_frame {
    size_t header;     /**< offset of the container's header in the output */
    uint64_t seen;     /**< elements written so far (keys and values count separately) */
    uint64_t declared; /**< elements declared (2n for maps), UINT64_MAX when unknown */
    uint8_t is_map; /**< the container is a map */
    uint8_t wide;   /**< a header inside was left in the widest form, for the outermost
                         container's close to shorten (internal) */
} wk_mp_frame;

#define WK_MP_WRITER_INLINE_FRAMES 8 /**< containers the event sink tracks without allocating */

/**
 * The MessagePack writer; lives on the caller's stack or heap, made by wk_mp_writer_init.
 * Contract of the inline calls in this header (part of the ABI of this major version): they
 * read and write `pos`, `lim`, `out`, `status`, `msg`, `err_offset`, and `depth`, `frames`,
 * `frames_cap`, `finished` (wk_mp_writer_init/finish); nothing else. Callers read none of the fields (use
 * wk_mp_writer_size and wk_mp_writer_finish) and must not copy a writer in use.
 */
typedef struct wk_mp_writer {
    uint8_t *pos;     /**< next output byte, inside out->data */
    uintptr_t lim;    /**< capacity end - 31 (so pos < lim while >= 32 bytes fit); 0 when there
                       * is no buffer or an error is latched, which sends every write to the
                       * slow path */
    wk_buf *out;      /**< where bytes go; out->len is synced by flush/finish */
    wk_status status; /**< first error, sticky */
    const char *msg;  /**< static message of the first error */
    size_t err_offset; /**< offset of the first error */
    /** Event-sink state (used only through wk_mp_writer_sink). */
    wk_mp_frame *frames; /**< NULL = inline_frames */
    uint32_t depth; /**< open containers */
    uint32_t frames_cap; /**< capacity of `frames` */
    bool finished; /**< wk_mp_writer_finish() was called */
    wk_mp_frame inline_frames[WK_MP_WRITER_INLINE_FRAMES]; /**< the first frames, no allocation */
} wk_mp_writer;

/** What wk_mp_writer_grow hands back: the new cursor and end, or on failure the unchanged
 *  cursor, `status` and a static message. Part of the ABI of the inline writer calls. */
typedef struct wk_mp_grown {
    uint8_t *pos;      /**< the cursor (new, or unchanged on failure) */
    uint8_t *end;      /**< the end of the room */
    const char *msg;   /**< static message on failure */
    wk_status status;  /**< WK_OK or the failure */
} wk_mp_grown;

/** The inline writer calls' slow path (ABI; callers use the wk_mp_writer_* calls): syncs
 *  `out->len` to `pos` and makes room for `n` more bytes. Takes no
 *  writer pointer on purpose: when no out-of-line call sees the writer's address, the
 *  compiler keeps `pos`/`lim` in registers across a run of inlined writes (a byte store into
 *  the buffer cannot alias a writer whose address never escaped). */
WK_API wk_mp_grown wk_mp_writer_grow(wk_buf *out, uint8_t *pos, size_t n);
/** Frees the event sink's heap container stack (called by the inline wk_mp_writer_finish;
 *  ABI, not for direct use). */
WK_API void wk_mp_writer_free_frames(wk_buf *out, wk_mp_frame *frames, uint32_t cap);

/** Bytes a small write may take with only the `pos < lim` check. */
#define WK__MP_SLACK 32u

/* Internal: the cursor bound of the one-compare check for writes of up to WK__MP_SLACK
 * bytes: `pos < lim` exactly when end - pos >= 32 (a real buffer never ends below address
 * 32). 0, which no cursor passes, when there is no buffer. */
WK__MP_HOT uintptr_t wk__mp_lim(const uint8_t *end)
{
    return end != NULL ? (uintptr_t)end - (WK__MP_SLACK - 1u) : 0u;
}

/**
 * Prepares `w` to append MessagePack to `out` (growable or fixed; existing contents are kept).
 * Allocates nothing. `out` must stay valid until wk_mp_writer_finish(); the caller must not
 * touch `out` in between except through the writer. (Inline: it only sets fields.)
 */
WK__MP_HOT void wk_mp_writer_init(wk_mp_writer *w, wk_buf *out)
{
    w->out = out;
    if (out->data != NULL) {
        w->pos = out->data + out->len;
        w->lim = wk__mp_lim(out->data + out->cap);
    } else {
        w->pos = NULL;
        w->lim = 0;
    }
    w->status = WK_OK;
    w->msg = NULL;
    w->err_offset = 0;
    w->frames = NULL;
    w->depth = 0;
    w->frames_cap = WK_MP_WRITER_INLINE_FRAMES;
    w->finished = false;
}

/**
 * Makes `sink` write events to `w` as MessagePack. Containers with a known count get their
 * header at once; WK_COUNT_UNKNOWN containers reserve five bytes, and the output ends with
 * the shortest header of each once the outermost container closes (until then a large one's
 * header may stand in its widest form; the cost is linear in the value's bytes).
 * WK_EV_RAWNUM is written as a str. A known count that does not match the elements given, an
 * END with nothing open, or an odd number of map elements latch WK_ERR_STATE. Nesting is limited to 65536 open containers (WK_ERR_DEPTH).
 * The sink lives as long as `w`.
 */
WK_API void wk_mp_writer_sink(wk_mp_writer *w, wk_sink *sink);

/** Bytes in `out` as the writer sees them (including what flush has not synced yet). */
WK__MP_HOT size_t wk_mp_writer_size(const wk_mp_writer *w)
{
    return w->pos == NULL ? w->out->len : (size_t)(w->pos - w->out->data);
}

/* Internal: latches an error inline (no call, so the writer's address does not escape). The
 * failed state sets lim = 0, so every later room check fails into the slow path, which
 * sees the status and writes nothing: the sticky error costs nothing on the fast path. */
static inline void wk__mp_latch(wk_mp_writer *w, wk_status code, const char *msg)
{
    if (w->status == WK_OK) {
        w->status = code;
        w->msg = msg;
        w->err_offset = wk_mp_writer_size(w);
        w->lim = 0;
    }
}

/**
 * Ends writing: syncs `out->len`, releases the sink's container stack and returns the first
 * error (WK_ERR_LIMIT when a fixed buffer or the cap was too small, WK_ERR_NOMEM, WK_ERR_RANGE
 * for a length above 2^32-1, WK_ERR_STATE for containers left open or a second finish), with
 * details in `err` (offset = output bytes written before the failure). On error `out`
 * holds a prefix of the intended output.
 */
static inline wk_status wk_mp_writer_finish(wk_mp_writer *w, wk_error *err)
{
    if (w->finished) {
        return wk_error_set(err, WK_ERR_STATE, wk_mp_writer_size(w), "writer already finished");
    }
    if (w->pos != NULL) {
        w->out->len = (size_t)(w->pos - w->out->data);
    }
    if (w->depth != 0) {
        wk__mp_latch(w, WK_ERR_STATE, "containers left open at the end of writing");
        w->depth = 0;
    }
    if (w->frames != NULL) {
        wk_mp_writer_free_frames(w->out, w->frames, w->frames_cap);
        w->frames = NULL;
    }
    w->finished = true;
    if (err == NULL) {
        return w->status;
    }
    if (w->status != WK_OK) {
        return wk_error_set(err, w->status, w->err_offset, w->msg);
    }
    return wk_error_set(err, WK_OK, w->out->len, NULL);
}

/** Syncs `out->len` with what has been written so far, without ending. Returns the status. */
WK_API wk_status wk_mp_writer_flush(wk_mp_writer *w);


/** Latches `code` with static message `msg` unless an error is already latched. */
WK_API void wk_mp_writer_fail(wk_mp_writer *w, wk_status code, const char *msg);

WK__MP_HOT uint8_t *wk__mp_store16(uint8_t *p, uint16_t v)
{
    v = __builtin_bswap16(v);
    memcpy(p, &v, 2);
    return p + 2;
}
WK__MP_HOT uint8_t *wk__mp_store32(uint8_t *p, uint32_t v)
{
    v = __builtin_bswap32(v);
    memcpy(p, &v, 4);
    return p + 4;
}
WK__MP_HOT uint8_t *wk__mp_store64(uint8_t *p, uint64_t v)
{
    v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
    return p + 8;
}

/** Internal: the inline writers' slow path: grows the buffer (no writer address escapes). */
static inline bool wk__mp_room_slow(wk_mp_writer *w, size_t n)
{
    if (w->status != WK_OK) {
        return false;
    }
    wk_mp_grown g = wk_mp_writer_grow(w->out, w->pos, n);
    if (g.status != WK_OK) {
        wk__mp_latch(w, g.status, g.msg);
        return false;
    }
    w->pos = g.pos;
    w->lim = wk__mp_lim(g.end);
    return true;
}

/** True when `n` more bytes fit, growing the buffer if needed. */
WK__MP_HOT bool wk__mp_room(wk_mp_writer *w, size_t n)
{
    /* While pos < lim the capacity ends at lim + 31. */
    uintptr_t p = (uintptr_t)w->pos;
    return WK_LIKELY(p < w->lim && n <= w->lim + (WK__MP_SLACK - 1u) - p) ||
           wk__mp_room_slow(w, n);
}
/** Room for a write of at most WK__MP_SLACK bytes whose real size is `exact`: the fast path
 *  is one compare; only when that fails does the slow path ask for the `exact` size, so a
 *  fixed buffer is still filled to the last byte. */
#define WK__MP_SMALL(w, exact)                                                            \
    (WK_LIKELY((uintptr_t)(w)->pos < (w)->lim) || wk__mp_room_slow((w), (exact)))

/* Encoders of one value into `p`, which has room; return the new end. Shortest forms. */
/** Encodes an unsigned integer in its shortest form into `p`; returns the new end. */
WK__MP_HOT uint8_t *wk_mp_encode_uint(uint8_t *p, uint64_t u)
{
    if (u <= 0x7f) {
        *p = (uint8_t)u;
        return p + 1;
    }
    if (u <= 0xff) {
        p[0] = 0xcc;
        p[1] = (uint8_t)u;
        return p + 2;
    }
    if (u <= 0xffff) {
        *p = 0xcd;
        return wk__mp_store16(p + 1, (uint16_t)u);
    }
    if (u <= 0xffffffffu) {
        *p = 0xce;
        return wk__mp_store32(p + 1, (uint32_t)u);
    }
    *p = 0xcf;
    return wk__mp_store64(p + 1, u);
}

/** Encodes a signed integer in its shortest form (non-negative ones as unsigned). */
WK__MP_HOT uint8_t *wk_mp_encode_int(uint8_t *p, int64_t i)
{
    if (i >= 0) {
        return wk_mp_encode_uint(p, (uint64_t)i);
    }
    if (i >= -32) {
        *p = (uint8_t)(0xe0 | (uint8_t)(i + 32));
        return p + 1;
    }
    if (i >= INT8_MIN) {
        p[0] = 0xd0;
        p[1] = (uint8_t)(int8_t)i;
        return p + 2;
    }
    if (i >= INT16_MIN) {
        *p = 0xd1;
        return wk__mp_store16(p + 1, (uint16_t)(int16_t)i);
    }
    if (i >= INT32_MIN) {
        *p = 0xd2;
        return wk__mp_store32(p + 1, (uint32_t)(int32_t)i);
    }
    *p = 0xd3;
    return wk__mp_store64(p + 1, (uint64_t)i);
}

/* Header of a str/bin/array/map of `n` (tag bytes: fix base or 0 when none, 8/16/32). */
WK__MP_HOT uint8_t *wk__mp_encode_header(uint8_t *p, uint32_t n, uint32_t fixmax,
                                            uint8_t fixbase, uint8_t t8, uint8_t t16,
                                            uint8_t t32)
{
    if (n <= fixmax) {
        *p = (uint8_t)(fixbase | n);
        return p + 1;
    }
    if (t8 != 0 && n <= 0xff) {
        p[0] = t8;
        p[1] = (uint8_t)n;
        return p + 2;
    }
    if (n <= 0xffff) {
        *p = t16;
        return wk__mp_store16(p + 1, (uint16_t)n);
    }
    *p = t32;
    return wk__mp_store32(p + 1, n);
}

/** Encodes the header of a str of `len` bytes (fixstr, str8, str16 or str32). */
WK__MP_HOT uint8_t *wk_mp_encode_str_header(uint8_t *p, uint32_t len)
{
    return wk__mp_encode_header(p, len, 31, 0xa0, 0xd9, 0xda, 0xdb);
}
/** Encodes the header of a bin of `len` bytes (bin8, bin16 or bin32). */
WK__MP_HOT uint8_t *wk_mp_encode_bin_header(uint8_t *p, uint32_t len)
{
    if (len <= 0xff) {
        p[0] = 0xc4;
        p[1] = (uint8_t)len;
        return p + 2;
    }
    if (len <= 0xffff) {
        *p = 0xc5;
        return wk__mp_store16(p + 1, (uint16_t)len);
    }
    *p = 0xc6;
    return wk__mp_store32(p + 1, len);
}
/** Encodes the header of an array of `n` elements. */
WK__MP_HOT uint8_t *wk_mp_encode_array_header(uint8_t *p, uint32_t n)
{
    return wk__mp_encode_header(p, n, 15, 0x90, 0, 0xdc, 0xdd);
}
/** Encodes the header of a map of `n` key/value pairs. */
WK__MP_HOT uint8_t *wk_mp_encode_map_header(uint8_t *p, uint32_t n)
{
    return wk__mp_encode_header(p, n, 15, 0x80, 0, 0xde, 0xdf);
}

/* ---- sizes (msgpuck-style twins of the writers) ---- */

/** Bytes wk_mp_writer_uint(u) writes. */
WK__MP_HOT size_t wk_mp_sizeof_uint(uint64_t u)
{
    return u <= 0x7f ? 1 : u <= 0xff ? 2 : u <= 0xffff ? 3 : u <= 0xffffffffu ? 5 : 9;
}
/** Bytes wk_mp_writer_int(i) writes. */
WK__MP_HOT size_t wk_mp_sizeof_int(int64_t i)
{
    if (i >= 0) {
        return wk_mp_sizeof_uint((uint64_t)i);
    }
    return i >= -32 ? 1 : i >= INT8_MIN ? 2 : i >= INT16_MIN ? 3 : i >= INT32_MIN ? 5 : 9;
}
/** Bytes of a nil (1). */
WK__MP_HOT size_t wk_mp_sizeof_nil(void)
{
    return 1;
}
/** Bytes of a bool (1). */
WK__MP_HOT size_t wk_mp_sizeof_bool(void)
{
    return 1;
}
/** Bytes of a float32 (5). */
WK__MP_HOT size_t wk_mp_sizeof_float(void)
{
    return 5;
}
/** Bytes of a float64 (9). */
WK__MP_HOT size_t wk_mp_sizeof_double(void)
{
    return 9;
}
/** Header bytes of a str of `len` bytes (add `len` for the whole value). */
WK__MP_HOT size_t wk_mp_sizeof_str_header(uint32_t len)
{
    return len <= 31 ? 1 : len <= 0xff ? 2 : len <= 0xffff ? 3 : 5;
}
/** Bytes wk_mp_writer_str(s, len) writes (header + data). */
WK__MP_HOT size_t wk_mp_sizeof_str(uint32_t len)
{
    return wk_mp_sizeof_str_header(len) + len;
}
/** Bytes of the header of a bin of `len` bytes. */
WK__MP_HOT size_t wk_mp_sizeof_bin_header(uint32_t len)
{
    return len <= 0xff ? 2 : len <= 0xffff ? 3 : 5;
}
/** Bytes of a whole bin of `len` bytes. */
WK__MP_HOT size_t wk_mp_sizeof_bin(uint32_t len)
{
    return wk_mp_sizeof_bin_header(len) + len;
}
/** Header bytes of an array of `n` elements. */
WK__MP_HOT size_t wk_mp_sizeof_array(uint32_t n)
{
    return n <= 15 ? 1 : n <= 0xffff ? 3 : 5;
}
/** Header bytes of a map of `n` pairs. */
WK__MP_HOT size_t wk_mp_sizeof_map(uint32_t n)
{
    return n <= 15 ? 1 : n <= 0xffff ? 3 : 5;
}
/** Header bytes of an extension of `len` data bytes (add `len` for the whole value). */
WK__MP_HOT size_t wk_mp_sizeof_ext_header(uint32_t len)
{
    if (len == 1 || len == 2 || len == 4 || len == 8 || len == 16) {
        return 2;
    }
    return len <= 0xff ? 3 : len <= 0xffff ? 4 : 6;
}
/** Bytes of a whole ext of `len` data bytes. */
WK__MP_HOT size_t wk_mp_sizeof_ext(uint32_t len)
{
    return wk_mp_sizeof_ext_header(len) + len;
}
/** Bytes wk_mp_writer_timestamp(sec, nsec) writes: 6, 10 or 15. */
WK__MP_HOT size_t wk_mp_sizeof_timestamp(int64_t sec, uint32_t nsec)
{
    if (sec >= 0 && (uint64_t)sec >> 34 == 0) {
        return (nsec == 0 && (uint64_t)sec >> 32 == 0) ? 6 : 10;
    }
    return 15;
}

/** Encodes nil into `p`; returns the new end. */
WK__MP_HOT uint8_t *wk_mp_encode_nil(uint8_t *p)
{
    *p = 0xc0;
    return p + 1;
}
/** Encodes a bool into `p`; returns the new end. */
WK__MP_HOT uint8_t *wk_mp_encode_bool(uint8_t *p, bool b)
{
    *p = b ? 0xc3 : 0xc2;
    return p + 1;
}
/** Header and bytes of a str; needs wk_mp_sizeof_str(len) bytes of room. */
WK__MP_HOT uint8_t *wk_mp_encode_str(uint8_t *p, const char *s, uint32_t len)
{
    p = wk_mp_encode_str_header(p, len);
    memcpy(p, s, len);
    return p + len;
}
/** Encodes a float64 into `p`; returns the new end. */
WK__MP_HOT uint8_t *wk_mp_encode_double(uint8_t *p, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    *p = 0xcb;
    return wk__mp_store64(p + 1, bits);
}

/* ---- pre-sized writing (msgpuck-style): reserve once, encode with wk_mp_encode_*, commit ---- */

/**
 * Makes room for `n` bytes and returns the cursor to write them at with the wk_mp_encode_*
 * functions (size them with the wk_mp_sizeof_* twins), or NULL once the writer has failed.
 * Hand the advanced cursor back with wk_mp_writer_commit(); it must not pass cursor + n.
 */
WK__MP_HOT uint8_t *wk_mp_writer_ensure(wk_mp_writer *w, size_t n)
{
    return wk__mp_room(w, n) ? w->pos : NULL;
}
/** Ends a pre-sized write started by wk_mp_writer_ensure(). */
WK__MP_HOT void wk_mp_writer_commit(wk_mp_writer *w, uint8_t *p)
{
    w->pos = p;
}

/* ---- writers (sticky error: a no-op once the writer has failed) ---- */

/** Writes nil. */
WK__MP_HOT void wk_mp_writer_nil(wk_mp_writer *w)
{
    if (WK__MP_SMALL(w, 1)) {
        uint8_t *p = w->pos;
        *p = 0xc0;
        w->pos = p + 1;
    }
}
/** Writes a bool. */
WK__MP_HOT void wk_mp_writer_bool(wk_mp_writer *w, bool b)
{
    if (WK__MP_SMALL(w, 1)) {
        uint8_t *p = w->pos;
        *p = b ? 0xc3 : 0xc2;
        w->pos = p + 1;
    }
}
/** Writes `u` in the shortest form (positive fixint, uint8/16/32/64). */
WK__MP_HOT void wk_mp_writer_uint(wk_mp_writer *w, uint64_t u)
{
    if (WK__MP_SMALL(w, wk_mp_sizeof_uint(u))) {
        w->pos = wk_mp_encode_uint(w->pos, u);
    }
}
/** Writes `i` in the shortest form; non-negative values use the unsigned forms (as every
 *  MessagePack implementation does), negative ones negative fixint or int8/16/32/64. */
WK__MP_HOT void wk_mp_writer_int(wk_mp_writer *w, int64_t i)
{
    if (WK__MP_SMALL(w, wk_mp_sizeof_int(i))) {
        w->pos = wk_mp_encode_int(w->pos, i);
    }
}
/** Writes a float32. */
WK__MP_HOT void wk_mp_writer_float(wk_mp_writer *w, float f)
{
    if (WK__MP_SMALL(w, 5)) {
        uint32_t bits;
        memcpy(&bits, &f, 4);
        uint8_t *p = w->pos;
        *p = 0xca;
        w->pos = wk__mp_store32(p + 1, bits);
    }
}
/** Writes a float64. */
WK__MP_HOT void wk_mp_writer_double(wk_mp_writer *w, double d)
{
    if (WK__MP_SMALL(w, 9)) {
        uint64_t bits;
        memcpy(&bits, &d, 8);
        uint8_t *p = w->pos;
        *p = 0xcb;
        w->pos = wk__mp_store64(p + 1, bits);
    }
}
/** Writes a str header for `len` bytes; the caller writes the bytes next (wk_mp_writer_raw).
 *  `len` above 2^32-1 latches WK_ERR_RANGE. */
WK__MP_HOT void wk_mp_writer_str_header(wk_mp_writer *w, size_t len)
{
    if (len > UINT32_MAX) {
        wk__mp_latch(w, WK_ERR_RANGE, "string longer than 2^32-1 bytes");
    } else if (WK__MP_SMALL(w, wk_mp_sizeof_str_header((uint32_t)len))) {
        w->pos = wk_mp_encode_str_header(w->pos, (uint32_t)len);
    }
}
/** Writes `len` bytes verbatim (pre-encoded MessagePack, or the data after a header). */
WK__MP_HOT void wk_mp_writer_raw(wk_mp_writer *w, const void *p, size_t len)
{
    if (len != 0 && wk__mp_room(w, len)) {
        uint8_t *d = w->pos;
        memcpy(d, p, len);
        w->pos = d + len;
    }
}
/** Writes the string `s[0..len)` (fixstr/str8/16/32), header and bytes in one go: when they
 *  do not fit, nothing of the value is written. The bytes are not checked for UTF-8. `len`
 *  above 2^32-1 latches WK_ERR_RANGE. */
WK__MP_HOT void wk_mp_writer_str(wk_mp_writer *w, const char *s, size_t len)
{
    /* A fixstr is at most 32 bytes: one compare for header and bytes. */
    uint8_t *p = w->pos;
    if (WK_LIKELY(len <= 31 && (uintptr_t)p < w->lim)) {
        *p = (uint8_t)(0xa0 | len);
        wk_copy_short(p + 1, s, len);
        w->pos = p + 1 + len;
        return;
    }
    if (len > UINT32_MAX || len > SIZE_MAX - 5) {
        wk__mp_latch(w, WK_ERR_RANGE, "string longer than 2^32-1 bytes");
    } else if (wk__mp_room(w, wk_mp_sizeof_str_header((uint32_t)len) + len)) {
        p = wk_mp_encode_str_header(w->pos, (uint32_t)len);
        if (len != 0) {
            memcpy(p, s, len);
        }
        w->pos = p + len;
    }
}
/** Writes a bin header for `len` bytes (bin8/16/32); the data follows with wk_mp_writer_raw. */
WK__MP_HOT void wk_mp_writer_bin_header(wk_mp_writer *w, size_t len)
{
    if (len > UINT32_MAX) {
        wk__mp_latch(w, WK_ERR_RANGE, "binary longer than 2^32-1 bytes");
    } else if (WK__MP_SMALL(w, wk_mp_sizeof_bin_header((uint32_t)len))) {
        w->pos = wk_mp_encode_bin_header(w->pos, (uint32_t)len);
    }
}
/** Writes binary data `p[0..len)` (bin8/16/32), header and bytes in one go. */
WK__MP_HOT void wk_mp_writer_bin(wk_mp_writer *w, const void *p, size_t len)
{
    if (len > UINT32_MAX || len > SIZE_MAX - 5) {
        wk__mp_latch(w, WK_ERR_RANGE, "binary longer than 2^32-1 bytes");
    } else if (wk__mp_room(w, wk_mp_sizeof_bin_header((uint32_t)len) + len)) {
        uint8_t *d = wk_mp_encode_bin_header(w->pos, (uint32_t)len);
        if (len != 0) {
            memcpy(d, p, len);
        }
        w->pos = d + len;
    }
}
/** Writes an array header of `n` elements; the elements follow. */
WK__MP_HOT void wk_mp_writer_begin_array(wk_mp_writer *w, uint32_t n)
{
    if (WK__MP_SMALL(w, wk_mp_sizeof_array(n))) {
        w->pos = wk_mp_encode_array_header(w->pos, n);
    }
}
/** Writes a map header of `n` key/value pairs; 2n values follow. */
WK__MP_HOT void wk_mp_writer_begin_map(wk_mp_writer *w, uint32_t n)
{
    if (WK__MP_SMALL(w, wk_mp_sizeof_map(n))) {
        w->pos = wk_mp_encode_map_header(w->pos, n);
    }
}
/** Writes an extension header (fixext1/2/4/8/16 when `len` fits, else ext8/16/32). */
WK_API void wk_mp_writer_ext_header(wk_mp_writer *w, int8_t type, size_t len);
/** Writes an extension value: type and `p[0..len)`. */
WK_API void wk_mp_writer_ext(wk_mp_writer *w, int8_t type, const void *p, size_t len);
/** Writes a timestamp (extension type -1) in the shortest of its 32/64/96-bit forms.
 *  `nsec` of 1e9 or more latches WK_ERR_RANGE. */
WK_API void wk_mp_writer_timestamp(wk_mp_writer *w, int64_t sec, uint32_t nsec);

/**
 * Writes the whole value tree `v` (explicit stack, no recursion). Floats flagged WK_VALF_F32
 * become float32; WK_VAL_RAWNUM becomes a str; a timestamp with nsec >= 1e9 latches
 * WK_ERR_RANGE. Same bytes as wk_value_encode() into wk_mp_writer_sink(), faster.
 * May allocate (libc) for trees nested deeper than 64 levels; WK_ERR_NOMEM if that fails.
 */
WK_API void wk_mp_writer_value(wk_mp_writer *w, const wk_value *v);

/* ==== reader ================================================================================ */


#define WK_MP_READER_INLINE_DEPTH 32 /**< container depth the reader tracks without allocating */

/**
 * The MessagePack reader; lives on the caller's stack or heap, made by wk_mp_reader_init.
 * Contract of the inline typed reads in this header (ABI of this major version): they read
 * `pos`, `end`, `start`, `left`, `depth`, `fast_depth`, `strict_utf8` and `inline_rem`, and
 * write `pos`, `left`, `depth` and `inline_rem`; every other field is touched only out of
 * line. Callers read none of the fields (wk_mp_reader_offset, wk_mp_reader_error) and must
 * not copy a reader in use.
 */
typedef struct wk_mp_reader {
    const uint8_t *start; /**< first input byte */
    const uint8_t *pos; /**< next input byte */
    const uint8_t *end; /**< end of the input */
    uint64_t left;   /**< elements left in the innermost open container; UINT64_MAX at top */
    uint64_t *heap;  /**< saved `left` of each enclosing container when deeper than inline */
    uint32_t depth;  /**< open containers */
    uint32_t heap_cap; /**< capacity of `heap` */
    uint32_t max_depth; /**< nesting limit */
    uint32_t fast_depth; /**< depths below this open/close inline: min(32, max_depth) while the
                          * inline stack is in use, 0 with a heap stack or once failed */
    bool strict_utf8; /**< reject str values that are not UTF-8 */
    const wk_allocator *alloc; /**< allocator of `heap` */
    wk_status status; /**< latched error */
    const char *msg; /**< static message of the latched error */
    size_t err_offset; /**< offset of the latched error */
    uint64_t inline_rem[WK_MP_READER_INLINE_DEPTH]; /**< the first levels' `left`, no allocation */
} wk_mp_reader;

/**
 * Prepares `r` to read the MessagePack values in `data[0..len)` (a stream of zero or more
 * top-level values). Zero-copy: events point into `data`, which must outlive them. `opts`
 * NULL means defaults. Allocates nothing; nesting deeper than WK_MP_READER_INLINE_DEPTH takes
 * a stack from `opts->alloc`, released at WK_ERR_EOF, on error or by wk_mp_reader_free().
 * A reader must not be copied once in use. Not thread-safe (one reader per thread).
 */
WK_API void wk_mp_reader_init(wk_mp_reader *r, const void *data, size_t len,
                              const wk_read_opts *opts);

/**
 * Reads the next event. Containers yield WK_EV_ARRAY/WK_EV_MAP with their count, their
 * elements, then WK_EV_END. Extension type -1 yields WK_EV_TIMESTAMP (4, 8 or 12 bytes,
 * nanoseconds < 1e9, else WK_ERR_SYNTAX). Non-negative integers of any width yield
 * WK_EV_UINT, negative ones WK_EV_INT. Returns WK_OK, WK_ERR_EOF after the last top-level
 * value, or an error (WK_ERR_TRUNCATED, WK_ERR_SYNTAX, WK_ERR_DEPTH, WK_ERR_UTF8,
 * WK_ERR_NOMEM) that is latched: later calls return it again.
 */
WK_API wk_status wk_mp_reader_next(wk_mp_reader *r, wk_event *ev);

/**
 * Skips the next whole value (a container with everything inside it) without events,
 * validating it as wk_mp_reader_next would. If the next event would be a WK_EV_END, returns
 * WK_ERR_STATE without consuming it. Returns WK_OK, WK_ERR_EOF or the latched error.
 */
WK_API wk_status wk_mp_reader_skip(wk_mp_reader *r);

/* ---- typed reads: the fast way to read a known shape (schemas, hand-written decoders) ---- */

/*
 * Each wk_mp_reader_X reads the next value if it is an X, with the same checks as
 * wk_mp_reader_next. If the next value is of another type it returns WK_ERR_TYPE and consumes
 * nothing (the caller may read it another way); if the innermost container has no elements
 * left it returns WK_ERR_STATE (call wk_mp_reader_end); at the end of a top-level stream it
 * returns WK_ERR_EOF. Malformed input latches the error as wk_mp_reader_next does. The
 * common one-byte forms are decoded inline; every other form goes through one call.
 * wk_mp_reader_begin_map/array open the container: read its elements, then wk_mp_reader_end().
 */
/** The typed reads' out-of-line half (ABI; call the typed reads): reads the next event and
 *  returns WK_ERR_TYPE, consuming nothing, unless it has type `want`. */
WK_API wk_status wk_mp_reader_read_slow(wk_mp_reader *r, wk_event *ev, wk_event_type want);

/** Reads a str (any width) as a view into the input. */
WK__MP_HOT wk_status wk_mp_reader_str(wk_mp_reader *r, const char **s, size_t *len)
{
    const uint8_t *p = r->pos;
    if (__builtin_expect(r->left != 0 && p != r->end && !r->strict_utf8, 1)) {
        uint8_t b = *p;
        size_t n = b & 0x1fu;
        if ((b & 0xe0u) == 0xa0u && n < (size_t)(r->end - p)) {
            r->left--;
            r->pos = p + 1 + n;
            *s = (const char *)p + 1;
            *len = n;
            return WK_OK;
        }
    }
    wk_event ev;
    wk_status st = wk_mp_reader_read_slow(r, &ev, WK_EV_STR);
    if (st == WK_OK) {
        *s = ev.v.str.ptr;
        *len = ev.v.str.len;
    }
    return st;
}

/** Reads a bin (any width) as a view into the input. */
WK__MP_HOT wk_status wk_mp_reader_bin(wk_mp_reader *r, const void **data, size_t *len)
{
    wk_event ev;
    wk_status st = wk_mp_reader_read_slow(r, &ev, WK_EV_BIN);
    if (st == WK_OK) {
        *data = ev.v.str.ptr;
        *len = ev.v.str.len;
    }
    return st;
}

/** Reads an integer of any width that fits int64 (WK_ERR_RANGE for larger uint64 values,
 *  nothing consumed). */
WK__MP_HOT wk_status wk_mp_reader_int(wk_mp_reader *r, int64_t *out)
{
    const uint8_t *p = r->pos;
    if (__builtin_expect(r->left != 0 && p != r->end, 1)) {
        uint8_t b = *p;
        if ((b <= 0x7fu || b >= 0xe0u)) {
            r->left--;
            r->pos = p + 1;
            *out = (int8_t)b;
            return WK_OK;
        }
    }
    wk_event ev;
    wk_status st = wk_mp_reader_read_slow(r, &ev, WK_EV_INT);
    if (st == WK_OK) {
        *out = ev.v.i;
    }
    return st;
}

/** Reads a non-negative integer of any width (WK_ERR_RANGE for negative ones, nothing
 *  consumed). */
WK__MP_HOT wk_status wk_mp_reader_uint(wk_mp_reader *r, uint64_t *out)
{
    const uint8_t *p = r->pos;
    if (__builtin_expect(r->left != 0 && p != r->end, 1)) {
        uint8_t b = *p;
        if (b <= 0x7fu) {
            r->left--;
            r->pos = p + 1;
            *out = b;
            return WK_OK;
        }
    }
    wk_event ev;
    wk_status st = wk_mp_reader_read_slow(r, &ev, WK_EV_UINT);
    if (st == WK_OK) {
        *out = ev.v.u;
    }
    return st;
}

/** Reads a bool. */
WK__MP_HOT wk_status wk_mp_reader_bool(wk_mp_reader *r, bool *out)
{
    const uint8_t *p = r->pos;
    if (__builtin_expect(r->left != 0 && p != r->end, 1)) {
        uint8_t b = *p;
        if ((b == 0xc2u || b == 0xc3u)) {
            r->left--;
            r->pos = p + 1;
            *out = b == 0xc3u;
            return WK_OK;
        }
    }
    wk_event ev;
    wk_status st = wk_mp_reader_read_slow(r, &ev, WK_EV_BOOL);
    if (st == WK_OK) {
        *out = ev.v.b;
    }
    return st;
}

/** Reads nil. */
WK__MP_HOT wk_status wk_mp_reader_nil(wk_mp_reader *r)
{
    wk_event ev;
    return wk_mp_reader_read_slow(r, &ev, WK_EV_NIL);
}

/** Reads a float32 or float64 (integers are WK_ERR_TYPE). */
WK__MP_HOT wk_status wk_mp_reader_double(wk_mp_reader *r, double *out)
{
    wk_event ev;
    wk_status st = wk_mp_reader_read_slow(r, &ev, WK_EV_FLOAT);
    if (st == WK_OK) {
        *out = ev.v.f;
    }
    return st;
}

/** Opens a map (any width): `*n` pairs follow, 2n values; close it with wk_mp_reader_end. */
WK__MP_HOT wk_status wk_mp_reader_begin_map(wk_mp_reader *r, uint32_t *n)
{
    const uint8_t *p = r->pos;
    uint32_t d = r->depth;
    if (__builtin_expect(r->left != 0 && p != r->end && d < r->fast_depth, 1)) {
        uint8_t b = *p;
        uint32_t c = b & 0x0fu;
        /* fixmap whose 2c elements (a byte each at least) fit in what remains */
        if ((b & 0xf0u) == 0x80u && 2u * (size_t)c < (size_t)(r->end - p)) {
            r->inline_rem[d] = r->left - 1;
            r->depth = d + 1;
            r->left = 2u * (uint64_t)c;
            r->pos = p + 1;
            *n = c;
            return WK_OK;
        }
    }
    wk_event ev;
    wk_status st = wk_mp_reader_read_slow(r, &ev, WK_EV_MAP);
    if (st == WK_OK) {
        *n = ev.v.count;
    }
    return st;
}

/** Opens an array (any width): `*n` elements follow; close it with wk_mp_reader_end. */
WK__MP_HOT wk_status wk_mp_reader_begin_array(wk_mp_reader *r, uint32_t *n)
{
    const uint8_t *p = r->pos;
    uint32_t d = r->depth;
    if (__builtin_expect(r->left != 0 && p != r->end && d < r->fast_depth, 1)) {
        uint8_t b = *p;
        uint32_t c = b & 0x0fu;
        if ((b & 0xf0u) == 0x90u && (size_t)c < (size_t)(r->end - p)) {
            r->inline_rem[d] = r->left - 1;
            r->depth = d + 1;
            r->left = c;
            r->pos = p + 1;
            *n = c;
            return WK_OK;
        }
    }
    wk_event ev;
    wk_status st = wk_mp_reader_read_slow(r, &ev, WK_EV_ARRAY);
    if (st == WK_OK) {
        *n = ev.v.count;
    }
    return st;
}

/** wk_mp_reader_end's out-of-line half (ABI; call wk_mp_reader_end). */
WK_API wk_status wk_mp_reader_end_slow(wk_mp_reader *r);
/** Closes the innermost open container. WK_ERR_STATE (not latched, nothing changes) when
 *  elements remain or no container is open. */
WK__MP_HOT wk_status wk_mp_reader_end(wk_mp_reader *r)
{
    uint32_t d = r->depth - 1u; /* wraps when nothing is open, and fails the check */
    if (__builtin_expect(r->left == 0 && d < r->fast_depth, 1)) {
        r->left = r->inline_rem[d];
        r->depth = d;
        return WK_OK;
    }
    return wk_mp_reader_end_slow(r);
}

/** Copies the latched error (or WK_OK with the current offset) into `err` (may be NULL) and
 *  returns its code (WK_OK when none). */
WK_API wk_status wk_mp_reader_error(const wk_mp_reader *r, wk_error *err);

/** Byte offset of the next unread byte. */
WK__MP_HOT size_t wk_mp_reader_offset(const wk_mp_reader *r)
{
    return (size_t)(r->pos - r->start);
}

/** Releases the deep-nesting stack, if any. Needed only when stopping before WK_ERR_EOF or
 *  an error; harmless otherwise. The reader must not be used afterwards. */
WK_API void wk_mp_reader_free(wk_mp_reader *r);

/** Makes `src` read events from `r` (for wk_value_decode, wk_transcode, schemas). */
WK_API void wk_mp_reader_source(wk_mp_reader *r, wk_source *src);

/* ==== one-shot scans ======================================================================== */

/**
 * Validates one whole MessagePack value at the start of `data[0..len)` without building
 * anything (every check of the reader: lengths, 0xc1, timestamps, depth, optional UTF-8).
 * `*size` (when not NULL) gets the value's size in bytes; bytes after it are not looked at.
 * Returns WK_OK, WK_ERR_TRUNCATED (also for empty input), WK_ERR_SYNTAX, WK_ERR_DEPTH,
 * WK_ERR_UTF8 or WK_ERR_NOMEM (deep nesting stack). Thread-safe.
 */
WK_API wk_status wk_mp_check(const void *data, size_t len, const wk_read_opts *opts,
                             size_t *size, wk_error *err);

/**
 * Validates that `data[0..len)` is a sequence of zero or more whole values and nothing else.
 * `*count` (when not NULL) gets the number of top-level values. Same statuses as
 * wk_mp_check. Thread-safe.
 */
WK_API wk_status wk_mp_validate(const void *data, size_t len, const wk_read_opts *opts,
                                size_t *count, wk_error *err);

/** Static name of the format a value starting with `byte` has ("fixmap", "uint 16", "str 8",
 *  "(never used)" for 0xc1, ...). Thread-safe. */
WK_API const char *wk_mp_format_name(uint8_t byte);

/* ==== value tree, fused ===================================================================== */

/**
 * Decodes one MessagePack value at the start of `data[0..len)` straight into a tree in
 * `arena` (no events in between; children are allocated at once since MessagePack gives
 * counts up front, each count checked against the remaining bytes). The tree is identical to
 * wk_value_decode() over wk_mp_reader_source(). Without WK_READ_COPY_STRINGS, strings point
 * into `data`. `opts` as for wk_mp_reader_init (NULL = defaults).
 * `consumed` NULL means the value must fill `data` (else WK_ERR_TRAILING); otherwise it
 * gets the value's size. Returns WK_OK, the reader's statuses, WK_ERR_NOMEM (arena) or
 * WK_ERR_TRAILING; `err` gets the details. On error the arena may hold partial allocations.
 */
WK_API wk_status wk_mp_decode_value(const void *data, size_t len, const wk_read_opts *opts,
                                   wk_arena *arena, wk_value **out, size_t *consumed,
                                   wk_error *err);

/**
 * Encodes tree `v` as MessagePack, appended to `out`. Returns wk_mp_writer_finish()'s status.
 */
WK_API wk_status wk_mp_encode_value(const wk_value *v, wk_buf *out, wk_error *err);

#ifdef __cplusplus
}
#endif
#endif
