/*
 * wirekit text codec: one grammar description gives a parser, a printer and ABNF docs.
 *
 * A grammar is built once from combinators (byte classes, literals, sequence, ordered choice,
 * bounded repetition, optional, lookahead, end of input, and captures into numbered slots) and
 * compiled into an immutable program. The program is a flat node array: the parser walks it
 * with backtracking (PEG semantics: alternatives are tried in order, the first match wins),
 * repetition is a loop and never recursion, and C recursion depth is bounded by the grammar's
 * static nesting (checked at compile time), never by the input. Parsing allocates nothing:
 * captures go into a caller array as views of the input. Printing runs the grammar the other
 * way, from a list of captures to bytes in canonical form (literals as written, uncaptured
 * repetitions at their minimum, captures optionally lowercased), validating every captured
 * value against its sub-grammar so that the output parses back to the same captures. The
 * printer writes nothing for lookahead and does not test it: a lookahead that constrains a
 * captured value belongs inside the capture, where the validation sees it.
 *
 * Thread-safety: a builder is single-threaded; a compiled program is immutable and may be
 * shared by any number of threads.
 */
#ifndef WIREKIT_TEXT_H
#define WIREKIT_TEXT_H

#include "buffer.h"
#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A set of byte values (bit b of w[b >> 6] is byte b). Build with the inline helpers. */
typedef struct wk_text_byteset {
    uint64_t w[4]; /**< bit b of w[b >> 6] is byte b */
} wk_text_byteset;

/** Adds bytes lo..hi (inclusive) to the set. */
static inline void wk_text_byteset_add_range(wk_text_byteset *s, uint8_t lo, uint8_t hi)
{
    for (unsigned c = lo; c <= hi; c++) {
        s->w[c >> 6] |= (uint64_t)1 << (c & 63);
    }
}
/** Adds every byte of the NUL-terminated string `chars` to the set. */
static inline void wk_text_byteset_add_chars(wk_text_byteset *s, const char *chars)
{
    for (; *chars != '\0'; chars++) {
        uint8_t c = (uint8_t)*chars;
        s->w[c >> 6] |= (uint64_t)1 << (c & 63);
    }
}
/** Removes every byte of the NUL-terminated string `chars` from the set. */
static inline void wk_text_byteset_remove_chars(wk_text_byteset *s, const char *chars)
{
    for (; *chars != '\0'; chars++) {
        uint8_t c = (uint8_t)*chars;
        s->w[c >> 6] &= ~((uint64_t)1 << (c & 63));
    }
}
/** True when byte `c` is in the set. */
static inline bool wk_text_byteset_has(const wk_text_byteset *s, uint8_t c)
{
    return (s->w[c >> 6] >> (c & 63)) & 1u;
}

/** A node handle inside a builder. 0 is never a valid node: a failed constructor returns 0,
 *  and any constructor given 0 returns 0, so errors surface once, at compile time. */
typedef uint32_t wk_text_node;

/** Repetition without an upper bound. */
#define WK_TEXT_UNBOUNDED UINT32_MAX
/** Literal flag: match ASCII letters case-insensitively (printing uses the text as given). */
#define WK_TEXT_CASELESS 0x1u
/** Capture flag: print the captured bytes with ASCII letters lowercased (the canonical form). */
#define WK_TEXT_PRINT_LOWER 0x1u
/** Deepest grammar nesting a program may have (bounds the interpreter's C recursion). */
#define WK_TEXT_MAX_DEPTH 48

/** A grammar under construction (opaque; wk_text_builder_new()). */
typedef struct wk_text_builder wk_text_builder;
/** A compiled grammar: immutable, shareable between threads (opaque). */
typedef struct wk_text_program wk_text_program;

/** One captured value: the slot it was captured into and its bytes. wk_text_parse() fills
 *  these with views of its input; wk_text_print() reads them from the caller. */
typedef struct wk_text_cap {
    uint32_t slot; /**< the capture slot */
    const char *ptr; /**< the bytes */
    size_t len; /**< their count */
} wk_text_cap;

/** Makes an empty grammar builder using `alloc` (NULL = libc). NULL when out of memory.
 *  Free with wk_text_builder_free() after compiling. */
WK_API wk_text_builder *wk_text_builder_new(const wk_allocator *alloc);

/** Frees a builder (NULL is a no-op). Programs compiled from it stay valid. */
WK_API void wk_text_builder_free(wk_text_builder *b);

/** One byte from `set`. `name` (copied) names the class in ABNF and in error messages
 *  ("expected <name>"); NULL gives the set as ABNF ranges. The smallest byte of the set is
 *  what the printer writes for an uncaptured occurrence. Returns 0 on an empty set or OOM. */
WK_API wk_text_node wk_text_class(wk_text_builder *b, const char *name, const wk_text_byteset *set);

/** The literal bytes `s[0..len)` (len >= 1); `flags` may hold WK_TEXT_CASELESS. */
WK_API wk_text_node wk_text_lit(wk_text_builder *b, const char *s, size_t len, unsigned flags);

/** The `n` nodes in order (n >= 1). */
WK_API wk_text_node wk_text_seq(wk_text_builder *b, size_t n, const wk_text_node *items);

/** Ordered choice: the first of the `n` alternatives that matches (n >= 1). */
WK_API wk_text_node wk_text_alt(wk_text_builder *b, size_t n, const wk_text_node *items);

/** `item` between `min` and `max` times (max may be WK_TEXT_UNBOUNDED), greedily; a failed
 *  iteration is undone. An iteration that consumes nothing ends the loop. */
WK_API wk_text_node wk_text_rep(wk_text_builder *b, wk_text_node item, uint32_t min, uint32_t max);

/** `item` or nothing (a repetition 0..1). */
WK_API wk_text_node wk_text_opt(wk_text_builder *b, wk_text_node item);

/** Matches `item` and records the bytes it spanned into capture slot `slot`, named `name`
 *  (copied; shown in ABNF). `flags` may hold WK_TEXT_PRINT_LOWER. */
WK_API wk_text_node wk_text_capture(wk_text_builder *b, uint32_t slot, const char *name,
                                    wk_text_node item, unsigned flags);

/** Lookahead: succeeds without consuming when `item` matches here (PEG `&item`). */
WK_API wk_text_node wk_text_and(wk_text_builder *b, wk_text_node item);

/** Negative lookahead: succeeds without consuming when `item` does not match (PEG `!item`). */
WK_API wk_text_node wk_text_not(wk_text_builder *b, wk_text_node item);

/** End of input. */
WK_API wk_text_node wk_text_end(wk_text_builder *b);

/** Names `item` as an ABNF rule `name` (copied) and returns it: wk_text_describe() prints
 *  the rule once and refers to it by name, and parse errors inside it say
 *  "expected <name>" when nothing more precise is known. */
WK_API wk_text_node wk_text_rule(wk_text_builder *b, const char *name, wk_text_node item);

/** Convenience: sequence / choice of the listed nodes. */
#define WK_TEXT_SEQ(b, ...)                                                                        \
    wk_text_seq((b), sizeof((wk_text_node[]){__VA_ARGS__}) / sizeof(wk_text_node),                 \
                (wk_text_node[]){__VA_ARGS__})
/** Convenience: a choice among the listed nodes (wk_text_alt). */
#define WK_TEXT_ALT(b, ...)                                                                        \
    wk_text_alt((b), sizeof((wk_text_node[]){__VA_ARGS__}) / sizeof(wk_text_node),                 \
                (wk_text_node[]){__VA_ARGS__})

/**
 * Compiles the grammar rooted at `root` into an immutable program (*out, allocated with the
 * builder's allocator; free with wk_text_program_free()). Returns WK_ERR_ARG when a node
 * failed to build (a 0 handle anywhere under root), WK_ERR_DEPTH when nesting exceeds
 * WK_TEXT_MAX_DEPTH, WK_ERR_NOMEM. The builder may be freed afterwards.
 */
WK_API wk_status wk_text_compile(wk_text_builder *b, wk_text_node root, wk_text_program **out,
                                 wk_error *err);

/** Frees a program (NULL is a no-op). */
WK_API void wk_text_program_free(wk_text_program *p);

/**
 * Parses `data[0..len)`, which must match the whole grammar. Captures are written in input
 * order to `caps[0..max_caps)`, as views of `data`, and their count to *ncaps. Allocates
 * nothing. Returns WK_OK; WK_ERR_SYNTAX with err->offset at the farthest byte the parser
 * reached and err->msg "expected <what>" (the message lives as long as the program);
 * WK_ERR_TRAILING when a prefix matched but bytes remained; WK_ERR_LIMIT when more than
 * `max_caps` captures would be needed. Thread-safe on a shared program.
 */
WK_API wk_status wk_text_parse(const wk_text_program *p, const void *data, size_t len,
                               wk_text_cap *caps, size_t max_caps, size_t *ncaps, wk_error *err);

/**
 * Prints the captures `caps[0..ncaps)` through the grammar, appending the canonical text to
 * `out`. Each capture must match its sub-grammar and appear where the grammar expects that
 * slot; every capture must be used. On failure `out` is restored to its previous length and
 * WK_ERR_ARG is returned with err->offset = the index of the first capture that did not fit;
 * WK_ERR_LIMIT / WK_ERR_NOMEM come from the buffer. Thread-safe on a shared program.
 */
WK_API wk_status wk_text_print(const wk_text_program *p, const wk_text_cap *caps, size_t ncaps,
                               wk_buf *out, wk_error *err);

/**
 * Appends the grammar as ABNF (RFC 5234, with RFC 7405 %s"" for case-sensitive literals) to
 * `out`: the root first as `name = ...`, then every named rule once. Lookahead, end of input
 * and captures, which ABNF lacks, are written as prose comments. Returns the buffer's status.
 */
WK_API wk_status wk_text_describe(const wk_text_program *p, const char *root_name, wk_buf *out);

#ifdef __cplusplus
}
#endif
#endif
