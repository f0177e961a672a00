/*
 * wk_buf: a growable byte buffer with a hard cap, or a fixed caller buffer that fails cleanly.
 *
 * Writers append through the inline fast paths below; only growth calls into the library.
 * Growth doubles capacity up to `max` (the cap); an append past the cap, or past the end of a
 * fixed buffer, returns WK_ERR_LIMIT and leaves the contents as they were.
 */
#ifndef WIREKIT_BUFFER_H
#define WIREKIT_BUFFER_H

#include <string.h>

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Default cap of a growable buffer: 1 GiB. */
#define WK_BUF_DEFAULT_MAX ((size_t)1 << 30)

/** A byte buffer: `data[0..len)` holds the bytes, `cap` bytes are allocated; growable up to
 * `max`, or fixed over caller memory. Public fields: `data` and `len` (read them; `len` may
 * be lowered to truncate) and `cap` (read-only). The inline writers of msgpack.h and json.h
 * write `data`, `len` and `cap` through the documented growth calls only. */
typedef struct wk_buf {
    uint8_t *data; /**< the bytes (NULL until the first growth of an empty growable buffer) */
    size_t len; /**< bytes in use */
    size_t cap; /**< bytes allocated (or the fixed buffer's size) */
    size_t max;                /**< hard cap on `cap` */
    const wk_allocator *alloc; /**< NULL = libc */
    bool fixed;                /**< data belongs to the caller and never grows */
} wk_buf;

/** Makes an empty growable buffer. `alloc` NULL means libc; `max` 0 means WK_BUF_DEFAULT_MAX.
 *  Allocates nothing until the first append. Release with wk_buf_free(). */
WK_API void wk_buf_init(wk_buf *b, const wk_allocator *alloc, size_t max);

/** Makes a buffer over caller memory `mem[0..cap)` that never grows. wk_buf_free() is a no-op
 *  on it. */
WK_API void wk_buf_init_fixed(wk_buf *b, void *mem, size_t cap);

/** Releases a growable buffer's memory and empties it; a fixed buffer is only emptied. */
WK_API void wk_buf_free(wk_buf *b);

/** Ensures room for `extra` more bytes (slow path). Returns WK_OK, WK_ERR_LIMIT when the cap
 *  or fixed size would be exceeded, or WK_ERR_NOMEM. */
WK_API wk_status wk_buf_grow(wk_buf *b, size_t extra);

/** Hands the contents to the caller: returns the data pointer (allocated with the buffer's
 *  allocator, `*len` bytes, capacity `*cap`) and leaves the buffer empty. NULL when empty. */
WK_API uint8_t *wk_buf_detach(wk_buf *b, size_t *len, size_t *cap);

/** Ensures room for `extra` more bytes; inline when there is room already. */
static inline wk_status wk_buf_reserve(wk_buf *b, size_t extra)
{
    if (extra <= b->cap - b->len) {
        return WK_OK;
    }
    return wk_buf_grow(b, extra);
}

/** Appends `n` bytes. On error the buffer is unchanged. */
static inline wk_status wk_buf_append(wk_buf *b, const void *p, size_t n)
{
    wk_status st = wk_buf_reserve(b, n);
    if (st != WK_OK) {
        return st;
    }
    if (n != 0) {
        memcpy(b->data + b->len, p, n);
    }
    b->len += n;
    return WK_OK;
}

/** Appends one byte. */
static inline wk_status wk_buf_push(wk_buf *b, uint8_t byte)
{
    wk_status st = wk_buf_reserve(b, 1);
    if (st != WK_OK) {
        return st;
    }
    b->data[b->len++] = byte;
    return WK_OK;
}

/** Empties the buffer, keeping its memory. */
static inline void wk_buf_clear(wk_buf *b)
{
    b->len = 0;
}

#ifdef __cplusplus
}
#endif
#endif
