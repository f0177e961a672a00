/*
 * The out-of-line half of core/kernel_interface.h: growing an inline-then-heap stack (the
 * frame and scratch stacks of the tree builders, the validator's bit stack, the equality
 * walk). Kept out of line because it runs only for deep or wide input; the callers' loops
 * stay small.
 * Flow: the stack users' loops -> wk__stack_grow (on the caller's allocator).
 */
#include "core/kernel_interface.h"

/* Doubles the stack's capacity (at most max entries when max != 0), its first `used`
 * entries kept: the inline memory is copied to the heap on the first growth, the heap block
 * reallocated after. False on overflow, at max, or when out of memory (s is then unchanged). */
bool wk__stack_grow(wk__stack *s, size_t used, size_t max)
{
    size_t ncap;
    size_t nbytes;
    if (!wk_size_mul(s->cap, 2, &ncap)) {
        return false;
    }
    if (max != 0 && ncap > max) {
        ncap = max;
    }
    if (ncap <= s->cap || !wk_size_mul(ncap, s->elem, &nbytes)) {
        return false;
    }
    /* the first growth leaves the inline memory (the caller's, on its C stack) for the heap */
    void *n;
    if (s->mem == s->inline_mem) {
        n = wk_alloc(s->alloc, nbytes);
        if (n != NULL) {
            memcpy(n, s->mem, used * s->elem);
        }
    } else {
        n = wk_realloc(s->alloc, s->mem, s->cap * s->elem, nbytes);
    }
    if (n == NULL) {
        return false;
    }
    s->mem = n;
    s->cap = ncap;
    return true;
}
