/*
 * The fused JSON parser: bytes straight into a wk_value tree, no events in between.
 * Flow: bytes -> lexer (lex.h, lex_scan.h) -> this parser's loop (decode_loop.h) -> nodes on a
 * scratch stack -> the caller's arena. Entry: wk_json_decode_value (wirekit/json.h).
 *
 * Values are written in place into a scratch stack of 16-byte nodes; when a container
 * closes, its children (a map's as key, value, key, value: the wk_pair layout) are copied
 * into the arena in one memcpy and replaced on the stack by the container's node. Each node
 * is thus written once and copied once, the arena gets one allocation per container, and
 * nesting is an explicit frame stack (no recursion). The lexer is lex.h, shared with the event
 * reader, so this gives the same tree as wk_value_decode over a wk_json_reader (tested).
 * Trade-off: a scratch stack as large as the widest open containers combined. Both stacks
 * are core/kernel_interface.h's: on the C stack first, then on the options' allocator, else
 * the arena's.
 *
 * This is the one tree builder that does not instantiate the value module's loop
 * (value/value_build_interface.h): its grammar is written straight into the loop (no event
 * between the lexer and the node), as the event form costs well over half again the
 * instructions (compare wk_value_decode over the JSON reader with this parser on
 * twitter.json: wirekit bench --suite json --callgrind; docs/benchmarks.md). It shares the
 * lexer, the number parser and the stacks. The loop is decode_loop.h, the body of
 * json_decode_tree() and json_decode_tree_avx2() below (one per instance of the lexer's wide
 * scans); the entry point picks the one wk__json_simd() chose for the process.
 */
#include <string.h>

#include "formats/json/lex.h"
#include "wirekit/json.h"

#define INLINE_VALUES 256
#define INLINE_FRAMES 64

/* One open container of the parse. */
typedef struct frame {
    uint32_t start; /* index of the container's node on the value stack */
    bool object;    /* an object (its children are key, value, ...) or an array */
} frame;

/* The two stacks (core/kernel_interface.h): values in place, and one frame per open container. The
 * depths and counts live in locals of the parser loop. */
typedef struct parser {
    wk__stack vs;
    wk__stack fs;
} parser;

/* Grows the value stack, whose first n nodes are in use, and points *vs at its (maybe moved)
 * memory. Returns false when out of memory (the stack is then as it was). */
static bool grow_values(parser *ps, size_t n, wk_value **vs)
{
    if (!wk__stack_grow(&ps->vs, n, 0)) {
        return false;
    }
    *vs = ps->vs.mem;
    return true;
}

/* wk_arena_alloc(a, size, 16) with its bump inline (one allocation per container). */
static inline void *arena_take16(wk_arena *a, size_t size)
{
    uintptr_t p = ((uintptr_t)a->cur + 15u) & ~(uintptr_t)15u;
    if (WK__LIKELY(a->cur != NULL && p <= (uintptr_t)a->end &&
                   size <= (size_t)((uintptr_t)a->end - p))) {
        a->cur = (uint8_t *)p + size;
        return (void *)p;
    }
    return wk_arena_alloc(a, size, 16);
}

/* Copies the count children of a closing container from the scratch stack to the arena. The
 * nodes were stored a moment ago, a number's as two 8-byte stores: a wider load (libc's
 * 32-byte moves for a pair like canada.json's [x, y]) cannot take its bytes from those
 * stores in flight and waits for them to reach the cache (store-to-load forwarding fails;
 * that load was about 5% of canada's parse time). A few nodes go word by word instead, each
 * 8-byte load inside one earlier store; the empty asm keeps GCC from widening the loop into
 * vector moves. Longer runs were stored long before and go through memcpy. */
static inline void copy_kids(wk_value *dst, const wk_value *src, size_t count)
{
    if (count <= 4) {
        uint64_t *d = (uint64_t *)(void *)dst;
        const uint64_t *s = (const uint64_t *)(const void *)src;
        for (size_t i = 0; i < 2 * count; i++) {
            uint64_t w;
            memcpy(&w, s + i, sizeof w);
            __asm__("" : "+r"(w));
            memcpy(d + i, &w, sizeof w);
        }
        return;
    }
    memcpy(dst, src, count * sizeof(wk_value));
}

/* Makes *v a string node for the body s[0..close) (first escape at esc, or NULL): pointing
 * into the input when it has no escape and `copy` is off, else a NUL-terminated copy in the
 * arena (unescaped). Returns false with f filled when the string is too long, out of memory,
 * or has a bad escape. */
static inline bool make_string(wk_value *v, const uint8_t *s, const uint8_t *esc,
                               const uint8_t *close, bool copy, wk_arena *arena,
                               wk__json_fail *f)
{
    size_t len = (size_t)(close - s);
    if (WK__UNLIKELY(len > UINT32_MAX)) {
        wk__json_failed(f, WK_ERR_RANGE, "string longer than 4 GiB", s);
        return false;
    }
    if (WK__LIKELY(esc == NULL && !copy)) {
        /* no escape: the lexer saw no '"', '\\' nor control byte, and checked the UTF-8;
         * the node in two stores */
        wk_value t = {.type = WK_VAL_STR, .flags = WK_VALF_PLAIN, .len = (uint32_t)len};
        t.u.str = (const char *)s;
        *v = t;
        return true;
    }
    v->type = WK_VAL_STR;
    v->ext_type = 0;
    v->reserved = 0;
    uint8_t *dst = wk_arena_alloc(arena, len + 1, 1);
    if (dst == NULL) {
        wk__json_failed(f, WK_ERR_NOMEM, "out of memory (arena) for a string", s);
        return false;
    }
    v->flags = WK_VALF_COPIED;
    if (esc == NULL) {
        memcpy(dst, s, len);
        v->flags = WK_VALF_COPIED | WK_VALF_PLAIN;
    } else {
        len = wk__json_unescape(s, esc, close, dst, f);
        if (len == (size_t)-1) {
            return false;
        }
    }
    dst[len] = 0;
    v->len = (uint32_t)len;
    v->u.str = (const char *)dst;
    return true;
}

/* json_decode_tree(): parses the one JSON document in data[0..len) into a tree in `arena`
 * (*out, and *consumed the bytes read) with the baseline wide scans; on failure returns the
 * status with err filled and *out untouched. Its body is decode_loop.h. Out of line, so
 * the two instances do not inline into the dispatching entry point. */
static WK__NOINLINE wk_status json_decode_tree(const void *data, size_t len,
                                               const wk_read_opts *opts, wk_arena *arena,
                                               wk_value **out, size_t *consumed, wk_error *err)
{
#define WK__DECODE(name) name
#include "formats/json/decode_loop.h"
#undef WK__DECODE
}

#if WK__JSON_HAVE_AVX2
/* json_decode_tree_avx2(): json_decode_tree() compiled for AVX2 over the lexer's AVX2 wide
 * scans (name_avx2 in lex_scan.h); the same contract. Its body is decode_loop.h. */
static WK__NOINLINE WK__JSON_AVX2_FN wk_status json_decode_tree_avx2(
    const void *data, size_t len, const wk_read_opts *opts, wk_arena *arena, wk_value **out,
    size_t *consumed, wk_error *err)
{
#define WK__DECODE(name) name##_avx2
#include "formats/json/decode_loop.h"
#undef WK__DECODE
}
#endif

/* The instance wk__json_simd() chose for the process (the AVX2 one when the CPU has it). */
WK_API wk_status wk_json_decode_value(const void *data, size_t len, const wk_read_opts *opts,
                                      wk_arena *arena, wk_value **out, size_t *consumed,
                                      wk_error *err)
{
#if WK__JSON_HAVE_AVX2
    if (wk__json_simd() == WK__JSON_SIMD_AVX2) {
        return json_decode_tree_avx2(data, len, opts, arena, out, consumed, err);
    }
#endif
    return json_decode_tree(data, len, opts, arena, out, consumed, err);
}
