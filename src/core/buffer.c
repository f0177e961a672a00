/*
 * Growth path of wk_buf. Appends are inline in the header; this file only runs when the
 * buffer is full. Capacity doubles (at least 64 bytes) and is clamped to the cap, so a
 * buffer never holds more than `max` bytes however its writer is driven.
 */
#include "wirekit/buffer.h"

WK_API void wk_buf_init(wk_buf *b, const wk_allocator *alloc, size_t max)
{
    b->data = NULL;
    b->len = 0;
    b->cap = 0;
    b->max = max != 0 ? max : WK_BUF_DEFAULT_MAX;
    b->alloc = alloc;
    b->fixed = false;
}

WK_API void wk_buf_init_fixed(wk_buf *b, void *mem, size_t cap)
{
    b->data = mem;
    b->len = 0;
    b->cap = cap;
    b->max = cap;
    b->alloc = NULL;
    b->fixed = true;
}

WK_API void wk_buf_free(wk_buf *b)
{
    if (!b->fixed) {
        wk_free(b->alloc, b->data, b->cap);
        b->data = NULL;
        b->cap = 0;
    }
    b->len = 0;
}

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
