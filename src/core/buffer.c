/*
 * Growth path of wk_buf. Appends are inline in the header; this file only runs when the
 * buffer is full. Capacity doubles (at least 64 bytes) and is clamped to the cap, so a
 * buffer never holds more than `max` bytes however its writer is driven.
 * Flow: the writers' inline appends (wirekit/buffer.h) -> wk_buf_grow here when full -> the
 * caller's allocator.
 */
#include "wirekit/buffer.h"

/* An empty growable buffer on alloc (NULL: libc), never above max bytes (0: the default);
 * nothing is allocated until the first append. */
WK_API void wk_buf_init(wk_buf *b, const wk_allocator *alloc, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max != 0 ? max : WK_BUF_DEFAULT_MAX;
    b->alloc = alloc;
    b->fixed = false;
}

/* A buffer over the caller's mem[0..cap), which never grows (WK_ERR_LIMIT when full) and is
 * never freed by the buffer. */
WK_API void wk_buf_init_fixed(wk_buf *b, void *mem, size_t cap)
{
    b->data = mem;
    b->len = 0;
    b->cap = cap;
    b->max = cap;
    b->alloc = NULL;
    b->fixed = true;
}

/* Frees a growable buffer's memory and empties it (a fixed one is only emptied). */
WK_API void wk_buf_free(wk_buf *b)
{
    if (!b->fixed) {
        wk_free(b->alloc, b->data, b->cap);
        b->data = NULL;
        b->cap = 0;
    }
    b->len = 0;
}

/* Room for extra more bytes: WK_OK, WK_ERR_LIMIT when that would pass the cap (or a fixed
 * buffer is full), WK_ERR_NOMEM when the allocator refuses (the buffer is then unchanged). */
WK_API wk_status wk_buf_grow(wk_buf *b, size_t extra)
{
    size_t need;
    if (!wk_size_add(b->len, extra, &need) || need > b->max) {
        return WK_ERR_LIMIT;
    }
    if (need <= b->cap) {
        return WK_OK;
    }
    if (b->fixed) {
        return WK_ERR_LIMIT;
    }
    /* doubling from 64 bytes, clamped to the cap, so appends cost amortized O(1) and the
     * buffer never holds more than max */
    size_t cap = b->cap < 32 ? 64 : b->cap;
    while (cap < need) {
        cap = cap > b->max / 2 ? b->max : cap * 2;
    }
    if (cap > b->max) {
        cap = b->max;
    }
    uint8_t *p = wk_realloc(b->alloc, b->data, b->cap, cap);
    if (p == NULL) {
        return WK_ERR_NOMEM;
    }
    b->data = p;
    b->cap = cap;
    return WK_OK;
}

/* Hands the bytes to the caller (*len, *cap when not NULL; free them with the buffer's
 * allocator and cap) and leaves the buffer empty; a fixed buffer's memory stays the caller's
 * anyway. */
WK_API uint8_t *wk_buf_detach(wk_buf *b, size_t *len, size_t *cap)
{
    uint8_t *p = b->data;
    if (len != NULL) {
        *len = b->len;
    }
    if (cap != NULL) {
        *cap = b->cap;
    }
    if (!b->fixed) {
        b->data = NULL;
        b->cap = 0;
    }
    b->len = 0;
    return p;
}
