/*
 * Deep equality of two trees, walked side by side with an explicit stack
 * (core/kernel_interface.h: 64 levels on the C stack, then the caller's allocator; if that
 * allocation fails the trees are reported unequal). Numbers compare exactly: floats bitwise,
 * and an INT equals a UINT holding the same non-negative number, since builders and decoders
 * may disagree on which of the two a 5 is.
 * Flow: two trees (from any decoder or by hand) -> this walk -> equal or not (the callers
 * are tests and applications that compare decoded data).
 */
#include <string.h>

#include "core/kernel_interface.h"
#include "wirekit/value.h"

#define INLINE_FRAMES 64

/* One pair of open containers of the walk: their next children and how many are left. */
typedef struct qframe {
    const wk_value *a;
    const wk_value *b;
    uint64_t left;
} qframe;

/* An INT or UINT node as magnitude bits and sign (an INT's two's complement bits, so equal
 * numbers give equal pairs); false for any other node. */
static bool int_like(const wk_value *v, uint64_t *u, bool *neg)
{
    if (v->type == WK_VAL_UINT) {
        *u = v->u.u;
        *neg = false;
        return true;
    }
    if (v->type == WK_VAL_INT) {
        *neg = v->u.i < 0;
        *u = (uint64_t)v->u.i;
        return true;
    }
    return false;
}

/* Compares two nodes, not their children. */
static bool node_equal(const wk_value *a, const wk_value *b)
{
    uint64_t ua;
    uint64_t ub;
    bool na;
    bool nb;
    /* integers compare by value whichever of INT and UINT holds them */
    if (int_like(a, &ua, &na) && int_like(b, &ub, &nb)) {
        return ua == ub && na == nb;
    }
    if (a->type != b->type) {
        return false;
    }
    /* the payload of each type: floats bitwise (so NaN equals the same NaN and 0.0 differs
     * from -0.0), bytes by content, containers by length here (children by the walk) */
    switch ((wk_value_type)a->type) {
    case WK_VAL_NIL: return true;
    case WK_VAL_BOOL: return a->u.b == b->u.b;
    case WK_VAL_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof(double)) == 0;
    case WK_VAL_EXT:
        if (a->ext_type != b->ext_type) {
            return false;
        }
        /* fall through */
    case WK_VAL_STR:
    case WK_VAL_BIN:
    case WK_VAL_RAWNUM:
        return a->len == b->len && (a->len == 0 || memcmp(a->u.str, b->u.str, a->len) == 0);
    case WK_VAL_TIMESTAMP: return a->u.i == b->u.i && a->len == b->len;
    case WK_VAL_ARRAY:
    case WK_VAL_MAP: return a->len == b->len;
    default: return false;
    }
}

/* Do the trees a and b hold the same values, map pairs in the same order? Walked side by
 * side; false also when the stack for deep trees cannot be allocated. */
WK_API bool wk_value_equal(const wk_value *a, const wk_value *b, const wk_allocator *alloc)
{
    qframe inline_frames[INLINE_FRAMES];
    wk__stack fs;
    wk__stack_init(&fs, inline_frames, INLINE_FRAMES, sizeof(qframe), alloc);
    qframe *frames = inline_frames;
    size_t depth = 0;
    bool eq = true;
    /* Each turn compares the pair (a, b); equal non-empty containers push a frame over both
     * child arrays (the same length, node_equal checked it); then on to the next pair of
     * the innermost frame that has one left. */
    for (;;) {
        if (!node_equal(a, b)) {
            eq = false;
            break;
        }
        if ((a->type == WK_VAL_ARRAY || a->type == WK_VAL_MAP) && a->len != 0) {
            if (depth == fs.cap) {
                if (!wk__stack_grow(&fs, depth, 0)) {
                    eq = false;
                    break;
                }
                frames = fs.mem;
            }
            frames[depth].a = a->u.items;
            frames[depth].b = b->u.items;
            frames[depth].left = a->type == WK_VAL_MAP ? 2 * (uint64_t)a->len : a->len;
            depth++;
        }
        while (depth > 0 && frames[depth - 1].left == 0) {
            depth--;
        }
        if (depth == 0) {
            break;
        }
        frames[depth - 1].left--;
        a = frames[depth - 1].a++;
        b = frames[depth - 1].b++;
    }
    wk__stack_free(&fs);
    return eq;
}
