/*
 * Internal layout of text-codec builders and compiled programs.
 *
 * Nodes live in one array; a node's children are always created before it, so every child
 * index is smaller than its parent's. That makes cycles impossible and lets the compiler
 * compute nesting depth in one forward pass. A compiled program is a single allocation
 * holding the node array, the child-index array, the byte sets and a string pool.
 *
 * Where it sits: text_build.c writes this layout, text_parse.c, text_print.c and
 * text_describe.c read it; mediatype/mt_grammar.c is its main user inside wirekit.
 */
#ifndef WK_TEXT_INTERNAL_H
#define WK_TEXT_INTERNAL_H

#include "wirekit/text.h"

/* Node operators (0 is never a node: handle 0 is the builder's failure value). */
enum {
    WK__TOP_CLASS = 1,
    WK__TOP_LIT,
    WK__TOP_SEQ,
    WK__TOP_ALT,
    WK__TOP_REP,
    WK__TOP_CAPTURE,
    WK__TOP_AND,
    WK__TOP_NOT,
    WK__TOP_END
};

/* One grammar node; what a, b, min and max mean depends on op. `name` and `expect` are
 * string-pool references (offset + 1, 0 for none). */
typedef struct wk__text_node {
    uint8_t op;
    uint8_t flags;     /* CASELESS for literals, PRINT_LOWER for captures */
    uint8_t first;     /* classes: the smallest member byte (what the printer writes) */
    uint32_t a;        /* class: set index; lit: string offset; seq/alt: first kid; rep, capture,
                          and, not: child node */
    uint32_t b;        /* lit: length; seq/alt: kid count; capture: slot */
    uint32_t min, max; /* rep bounds */
    uint32_t name;     /* string offset + 1 of the rule / class / capture name, 0 = none */
    uint32_t expect;   /* string offset + 1 of "expected ..." (compiled programs only) */
} wk__text_node;

struct wk_text_builder {
    const wk_allocator *alloc;
    wk__text_node *nodes; /* nodes[0] is unused: handle 0 means "failed" */
    size_t nnodes, capnodes;
    uint32_t *kids;
    size_t nkids, capkids;
    wk_text_byteset *sets;
    size_t nsets, capsets;
    char *strs;
    size_t nstrs, capstrs;
    bool failed;
};

struct wk_text_program {
    const wk_allocator *alloc;
    size_t size; /* bytes of this allocation */
    const wk__text_node *nodes;
    size_t nnodes;
    const uint32_t *kids;
    const wk_text_byteset *sets;
    const char *strs;
    uint32_t root;
};

/* Matches node `node` of `p` against data[0..len) as a whole (no captures recorded).
 * Used by the printer to validate captured values against their sub-grammar. */
bool wk__text_match_whole(const wk_text_program *p, uint32_t node, const char *data, size_t len);

static inline const char *wk__text_str(const wk_text_program *p, uint32_t ref)
{
    return ref == 0 ? NULL : p->strs + (ref - 1);
}

#endif
