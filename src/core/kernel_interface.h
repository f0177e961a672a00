/*
 * The kernel's small shared pieces (internal): the internal names of the branch hints and the
 * short overlapping copy (defined once, public, in core.h), the cursor copy, the cursor
 * advance by a predicted jump, and the inline-then-heap stack every explicit-stack walker
 * uses (tree builders, tree encoders, deep equality). Written once here so that each module instantiates them instead of keeping
 * its own copy. The stack starts in caller-provided storage (normally on the C stack) and
 * moves to the heap only for deep or wide input, always through the allocator the caller
 * passed down (an arena's, a buffer's, or a reader's), never libc behind its back.
 * Flow: every module's loops -> these inline pieces; the stack's growth is out of line in
 * core/kernel.c.
 */
#ifndef WK_CORE_KERNEL_H
#define WK_CORE_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "wirekit/core.h"

/* Branch hints and the short overlapping copy are public (core.h: WK_LIKELY, WK_UNLIKELY,
 * wk_copy_short), since the inline fast paths of msgpack.h use them too; these are their
 * internal spellings, one definition for both. */
#define WK__LIKELY(x) WK_LIKELY(x)
#define WK__UNLIKELY(x) WK_UNLIKELY(x)
#define wk__copy_short(dst, src, n) wk_copy_short((dst), (src), (n))

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

/** p + k for k < 32, reached by a jump on k (a table of 32 cases) rather than by adding k;
 *  void * as memchr's answer is, for const and mutable cursors alike. Where k comes out of a
 *  scan (a load, compares, a movemask, a count) or a length, adding it makes the next token's
 *  loads and stores wait for that whole chain; as a jump, the CPU predicts it (the lengths of
 *  keys, strings of one field and indentation repeat with the data's shape) and goes on at
 *  once, paying a mispredict only when the length changes. It gave the JSON parser a quarter
 *  of its time (issue 26; docs/design.md, "The kernel"). The empty asm in each case keeps the compiler from
 *  folding the table back into the add. */
#define WK__ADVANCE_CASE(K)                                                                     \
    case K:                                                                                     \
        __asm__("" : "+r"(q));                                                                  \
        return q + K;
static inline __attribute__((always_inline)) void *wk__advance(const void *p, unsigned k)
{
    uint8_t *q = (uint8_t *)(uintptr_t)p;
    switch (k & 31u) {
        WK__ADVANCE_CASE(0) WK__ADVANCE_CASE(1) WK__ADVANCE_CASE(2) WK__ADVANCE_CASE(3)
        WK__ADVANCE_CASE(4) WK__ADVANCE_CASE(5) WK__ADVANCE_CASE(6) WK__ADVANCE_CASE(7)
        WK__ADVANCE_CASE(8) WK__ADVANCE_CASE(9) WK__ADVANCE_CASE(10) WK__ADVANCE_CASE(11)
        WK__ADVANCE_CASE(12) WK__ADVANCE_CASE(13) WK__ADVANCE_CASE(14) WK__ADVANCE_CASE(15)
        WK__ADVANCE_CASE(16) WK__ADVANCE_CASE(17) WK__ADVANCE_CASE(18) WK__ADVANCE_CASE(19)
        WK__ADVANCE_CASE(20) WK__ADVANCE_CASE(21) WK__ADVANCE_CASE(22) WK__ADVANCE_CASE(23)
        WK__ADVANCE_CASE(24) WK__ADVANCE_CASE(25) WK__ADVANCE_CASE(26) WK__ADVANCE_CASE(27)
        WK__ADVANCE_CASE(28) WK__ADVANCE_CASE(29) WK__ADVANCE_CASE(30) WK__ADVANCE_CASE(31)
    }
    __builtin_unreachable();
}
#undef WK__ADVANCE_CASE

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
