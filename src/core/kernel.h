/*
 * The kernel's small shared pieces (internal): branch hints, the short overlapping copy, and
 * the inline-then-heap stack every explicit-stack walker uses (tree builders, tree encoders,
 * deep equality). Written once here so that each module instantiates them instead of keeping
 * its own copy. The stack starts in caller-provided storage (normally on the C stack) and
 * moves to the heap only for deep or wide input, always through the allocator the caller
 * passed down (an arena's, a buffer's, or a reader's), never libc behind its back.
 */
#ifndef WK_CORE_KERNEL_H
#define WK_CORE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wirekit/core.h"

/* Branch hints: the one set every module uses. */
#define WK__LIKELY(x) __builtin_expect(!!(x), 1)
#define WK__UNLIKELY(x) __builtin_expect(!!(x), 0)

/** Copies `n` <= 31 bytes with at most two overlapping moves of 16, 8 or 4 bytes, or three
 *  single bytes below 4 (cheaper than a memcpy call for the short keys and strings wire formats
 *  are made of; folds to plain stores when `n` is a constant). Larger `n`: use memcpy. */
static inline void wk__copy_short(void *dst, const void *src, size_t n)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *q = (const uint8_t *)src;
    if (n >= 8) {
        if (n >= 16) {
            memcpy(d, q, 16);
            memcpy(d + n - 16, q + n - 16, 16);
        } else {
            memcpy(d, q, 8);
            memcpy(d + n - 8, q + n - 8, 8);
        }
    } else if (n >= 4) {
        memcpy(d, q, 4);
        memcpy(d + n - 4, q + n - 4, 4);
    } else if (n != 0) {
        d[0] = q[0];
        d[n >> 1] = q[n >> 1];
        d[n - 1] = q[n - 1];
    }
}

/** Copies `n` bytes to `dst` (short runs without a library call) and returns dst + n: the
 *  cursor-advancing form the writers use for keys and strings. */
static inline void *wk__put_bytes(void *dst, const void *src, size_t n)
{
    if (n < 32) {
        wk__copy_short(dst, src, n);
    } else {
        memcpy(dst, src, n);
    }
    return (uint8_t *)dst + n;
}

/**
 * An inline-then-heap stack of fixed-size elements. `mem` is the storage in use (read it
 * again after every successful grow); `cap` counts elements. Callers keep the element count
 * themselves (usually a depth in a local), so the hot path is one compare against `cap`.
 */
typedef struct wk__stack {
    void *mem;
    size_t cap;
    size_t elem;
    void *inline_mem;
    const wk_allocator *alloc; /* NULL = the default (libc) allocator */
} wk__stack;

/** Starts `s` over `inline_mem` (room for `inline_cap` elements of `elem` bytes). */
static inline void wk__stack_init(wk__stack *s, void *inline_mem, size_t inline_cap, size_t elem,
                                  const wk_allocator *alloc)
{
    s->mem = inline_mem;
    s->cap = inline_cap;
    s->elem = elem;
    s->inline_mem = inline_mem;
    s->alloc = alloc;
}

/** Doubles the capacity (at most `max` elements; 0: no limit but size_t overflow), keeping
 *  the first `used` elements. False, `s` unchanged, when already at `max`, on overflow, or
 *  when the allocator fails. */
bool wk__stack_grow(wk__stack *s, size_t used, size_t max);

/** Frees the heap storage, if any (the inline storage is the caller's). */
static inline void wk__stack_free(wk__stack *s)
{
    if (s->mem != s->inline_mem) {
        wk_free(s->alloc, s->mem, s->cap * s->elem);
    }
}

#endif
