/*
 * Grammar builder and compiler for the text codec.
 *
 * Where it sits: a caller (mediatype/mt_grammar.c, or a user of wirekit/text.h) builds a
 * grammar here -> wk_text_compile -> an immutable wk_text_program -> text_parse.c matches
 * input against it and fills capture slots -> text_print.c prints captures back through the
 * same grammar -> text_describe.c renders it as an ABNF-like description.
 *
 * Constructors append nodes to growable arrays and return handles; a failed constructor
 * (bad argument, out of memory, or a 0 handle passed in) returns 0 and marks the builder,
 * so callers can compose freely and check once at wk_text_compile(). Compiling copies the
 * arrays into one immutable block, computes every node's nesting depth in one forward pass
 * (children precede parents) and precomputes the "expected ..." message of each node so that
 * parse errors need no formatting at run time.
 */
#include <string.h>

#include "text/text_internal.h"

/* Public (wirekit/text.h): an empty builder; NULL when out of memory. */
wk_text_builder *wk_text_builder_new(const wk_allocator *alloc)
{
    wk_text_builder *b = wk_alloc(alloc, sizeof *b);
    if (b == NULL) {
        return NULL;
    }
    memset(b, 0, sizeof *b);
    b->alloc = alloc;
    return b;
}

/* Public: frees the builder's arrays (a compiled program does not depend on them). */
void wk_text_builder_free(wk_text_builder *b)
{
    if (b == NULL) {
        return;
    }
    wk_free(b->alloc, b->nodes, b->capnodes * sizeof *b->nodes);
    wk_free(b->alloc, b->kids, b->capkids * sizeof *b->kids);
    wk_free(b->alloc, b->sets, b->capsets * sizeof *b->sets);
    wk_free(b->alloc, b->strs, b->capstrs);
    wk_free(b->alloc, b, sizeof *b);
}

/* Grows an array so that `need` elements fit. */
static bool grow(wk_text_builder *b, void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) {
        return true;
    }
    size_t ncap = *cap < 16 ? 16 : *cap;
    while (ncap < need) {
        if (!wk_size_mul(ncap, 2, &ncap)) {
            return false;
        }
    }
    size_t old_bytes, new_bytes;
    if (!wk_size_mul(*cap, elem, &old_bytes) || !wk_size_mul(ncap, elem, &new_bytes) ||
        new_bytes > UINT32_MAX) {
        return false;
    }
    void *p = wk_realloc(b->alloc, *arr, old_bytes, new_bytes);
    if (p == NULL) {
        return false;
    }
    *arr = p;
    *cap = ncap;
    return true;
}

/* Marks the builder failed and returns the 0 handle every constructor then propagates. */
static wk_text_node fail(wk_text_builder *b)
{
    b->failed = true;
    return 0;
}

/* Appends a NUL-terminated copy of s[0..len) to the string pool; returns offset + 1, or 0. */
static uint32_t add_str(wk_text_builder *b, const char *s, size_t len)
{
    size_t need;
    if (!wk_size_add(b->nstrs, len + 1, &need) ||
        !grow(b, (void **)&b->strs, &b->capstrs, need, 1)) {
        return 0;
    }
    memcpy(b->strs + b->nstrs, s, len);
    b->strs[b->nstrs + len] = '\0';
    uint32_t ref = (uint32_t)b->nstrs + 1;
    b->nstrs = need;
    return ref;
}

/* Appends a node and returns its handle; index 0 is reserved (the failure handle), so the
 * first call also creates it. */
static wk_text_node add_node(wk_text_builder *b, const wk__text_node *n)
{
    if (b->nnodes == 0) {
        if (!grow(b, (void **)&b->nodes, &b->capnodes, 1, sizeof *b->nodes)) {
            return fail(b);
        }
        memset(&b->nodes[0], 0, sizeof b->nodes[0]);
        b->nnodes = 1;
    }
    if (b->nnodes >= UINT32_MAX - 1 ||
        !grow(b, (void **)&b->nodes, &b->capnodes, b->nnodes + 1, sizeof *b->nodes)) {
        return fail(b);
    }
    b->nodes[b->nnodes] = *n;
    return (wk_text_node)b->nnodes++;
}

/* A handle this builder made (0, the failure handle, is not). */
static bool valid(const wk_text_builder *b, wk_text_node n)
{
    return n != 0 && n < b->nnodes;
}

/* Public: a node matching one byte of `set` (copied), named for error messages. */
wk_text_node wk_text_class(wk_text_builder *b, const char *name, const wk_text_byteset *set)
{
    if (b == NULL || set == NULL) {
        return b == NULL ? 0 : fail(b);
    }
    int first = -1;
    for (int c = 255; c >= 0; c--) {
        if (wk_text_byteset_has(set, (uint8_t)c)) {
            first = c;
        }
    }
    if (first < 0 || !grow(b, (void **)&b->sets, &b->capsets, b->nsets + 1, sizeof *b->sets)) {
        return fail(b);
    }
    wk__text_node n = {.op = WK__TOP_CLASS, .a = (uint32_t)b->nsets, .first = (uint8_t)first};
    if (name != NULL && (n.name = add_str(b, name, strlen(name))) == 0) {
        return fail(b);
    }
    b->sets[b->nsets++] = *set;
    return add_node(b, &n);
}

/* Public: a node matching s[0..len) exactly (WK_TEXT_CASELESS: ASCII case ignored). */
wk_text_node wk_text_lit(wk_text_builder *b, const char *s, size_t len, unsigned flags)
{
    if (b == NULL) {
        return 0;
    }
    if (s == NULL || len == 0 || len > UINT32_MAX / 2) {
        return fail(b);
    }
    uint32_t ref = add_str(b, s, len);
    if (ref == 0) {
        return fail(b);
    }
    wk__text_node n = {.op = WK__TOP_LIT,
                       .a = ref - 1,
                       .b = (uint32_t)len,
                       .flags = (uint8_t)(flags & WK_TEXT_CASELESS)};
    return add_node(b, &n);
}

/* A sequence or alternation of n valid items (their handles copied into the kids array); a
 * single item is returned as it is, with no node. */
static wk_text_node list(wk_text_builder *b, uint8_t op, size_t n, const wk_text_node *items)
{
    if (b == NULL) {
        return 0;
    }
    if (items == NULL || n == 0 || n > UINT32_MAX / 2) {
        return fail(b);
    }
    for (size_t i = 0; i < n; i++) {
        if (!valid(b, items[i])) {
            return fail(b);
        }
    }
    if (n == 1) {
        return items[0];
    }
    size_t need;
    if (!wk_size_add(b->nkids, n, &need) || need > UINT32_MAX ||
        !grow(b, (void **)&b->kids, &b->capkids, need, sizeof *b->kids)) {
        return fail(b);
    }
    memcpy(b->kids + b->nkids, items, n * sizeof *items);
    wk__text_node node = {.op = op, .a = (uint32_t)b->nkids, .b = (uint32_t)n};
    b->nkids = need;
    return add_node(b, &node);
}

/* Public: the items one after the other. */
wk_text_node wk_text_seq(wk_text_builder *b, size_t n, const wk_text_node *items)
{
    return list(b, WK__TOP_SEQ, n, items);
}

/* Public: the first item that matches (ordered choice, as in a PEG). */
wk_text_node wk_text_alt(wk_text_builder *b, size_t n, const wk_text_node *items)
{
    return list(b, WK__TOP_ALT, n, items);
}

/* A one-child node of op (AND, NOT). */
static wk_text_node wrap(wk_text_builder *b, uint8_t op, wk_text_node item)
{
    if (b == NULL) {
        return 0;
    }
    if (!valid(b, item)) {
        return fail(b);
    }
    wk__text_node n = {.op = op, .a = item};
    return add_node(b, &n);
}

/* Public: item repeated min..max times, greedily (max UINT32_MAX for unbounded). */
wk_text_node wk_text_rep(wk_text_builder *b, wk_text_node item, uint32_t min, uint32_t max)
{
    if (b == NULL) {
        return 0;
    }
    if (!valid(b, item) || min > max || max == 0) {
        return fail(b);
    }
    wk__text_node n = {.op = WK__TOP_REP, .a = item, .min = min, .max = max};
    return add_node(b, &n);
}

/* Public: item zero or one time. */
wk_text_node wk_text_opt(wk_text_builder *b, wk_text_node item)
{
    return wk_text_rep(b, item, 0, 1);
}

/* Public: what item matches goes to capture slot `slot`; the name is copied. */
wk_text_node wk_text_capture(wk_text_builder *b, uint32_t slot, const char *name, wk_text_node item,
                             unsigned flags)
{
    if (b == NULL) {
        return 0;
    }
    if (!valid(b, item)) {
        return fail(b);
    }
    wk__text_node n = {.op = WK__TOP_CAPTURE,
                       .a = item,
                       .b = slot,
                       .flags = (uint8_t)(flags & WK_TEXT_PRINT_LOWER)};
    if (name != NULL && (n.name = add_str(b, name, strlen(name))) == 0) {
        return fail(b);
    }
    return add_node(b, &n);
}

/* Public: succeeds where item matches, consuming nothing (lookahead). */
wk_text_node wk_text_and(wk_text_builder *b, wk_text_node item)
{
    return wrap(b, WK__TOP_AND, item);
}

/* Public: succeeds where item does not match, consuming nothing. */
wk_text_node wk_text_not(wk_text_builder *b, wk_text_node item)
{
    return wrap(b, WK__TOP_NOT, item);
}

/* Public: matches only at the end of the input. */
wk_text_node wk_text_end(wk_text_builder *b)
{
    if (b == NULL) {
        return 0;
    }
    wk__text_node n = {.op = WK__TOP_END};
    return add_node(b, &n);
}

/* Public: gives item a rule name, used by error messages and wk_text_describe. */
wk_text_node wk_text_rule(wk_text_builder *b, const char *name, wk_text_node item)
{
    if (b == NULL) {
        return 0;
    }
    if (!valid(b, item) || name == NULL) {
        return fail(b);
    }
    /* A node already named (a shared rule, or a class) is wrapped in a one-item sequence
     * so that both names survive; otherwise the name is attached in place. */
    if (b->nodes[item].name != 0 && b->nodes[item].op != WK__TOP_CAPTURE) {
        wk__text_node n = {.op = WK__TOP_SEQ, .a = (uint32_t)b->nkids, .b = 1};
        if (!grow(b, (void **)&b->kids, &b->capkids, b->nkids + 1, sizeof *b->kids)) {
            return fail(b);
        }
        b->kids[b->nkids++] = item;
        item = add_node(b, &n);
        if (item == 0) {
            return 0;
        }
    }
    if (b->nodes[item].op == WK__TOP_CAPTURE) {
        /* Captures keep their slot name; the rule name goes on a wrapper. */
        wk__text_node n = {.op = WK__TOP_SEQ, .a = (uint32_t)b->nkids, .b = 1};
        if (!grow(b, (void **)&b->kids, &b->capkids, b->nkids + 1, sizeof *b->kids)) {
            return fail(b);
        }
        b->kids[b->nkids++] = item;
        item = add_node(b, &n);
        if (item == 0) {
            return 0;
        }
    }
    uint32_t ref = add_str(b, name, strlen(name));
    if (ref == 0) {
        return fail(b);
    }
    b->nodes[item].name = ref;
    return item;
}

/* ---- compile ---------------------------------------------------------------------------- */

/* Writes the "expected ..." text of node i into the builder's pool; returns its ref or 0. */
static uint32_t expect_text(wk_text_builder *b, size_t i)
{
    const wk__text_node *n = &b->nodes[i];
    char tmp[160];
    size_t len = 0;
    const char *name = n->name != 0 ? b->strs + n->name - 1 : NULL;
    if (n->op == WK__TOP_END) {
        name = "end of input";
    }
    if (name == NULL && n->op == WK__TOP_LIT) {
        size_t ll = n->b > 64 ? 64 : n->b;
        memcpy(tmp, "expected '", 10);
        memcpy(tmp + 10, b->strs + n->a, ll);
        len = 10 + ll;
        tmp[len++] = '\'';
    } else if (name == NULL && n->op == WK__TOP_NOT) {
        memcpy(tmp, "unexpected input", 16);
        len = 16;
    } else {
        if (name == NULL) {
            name = n->op == WK__TOP_CLASS ? "a byte of another class" : "valid input";
        }
        size_t nl = strlen(name);
        nl = nl > 140 ? 140 : nl;
        memcpy(tmp, "expected ", 9);
        memcpy(tmp + 9, name, nl);
        len = 9 + nl;
    }
    return add_str(b, tmp, len);
}

/* Public (wirekit/text.h): checks the builder did not fail and root is valid, refuses
 * grammars nested deeper than WK_TEXT_MAX_DEPTH (the matcher recurses), then copies sets,
 * nodes, kids and strings into one block the program owns. The builder may be freed after. */
wk_status wk_text_compile(wk_text_builder *b, wk_text_node root, wk_text_program **out,
                          wk_error *err)
{
    if (out != NULL) {
        *out = NULL;
    }
    if (b == NULL || out == NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no builder or output given");
    }
    if (b->failed || !valid(b, root)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "a grammar node failed to build");
    }
    /* Depth in one forward pass: children always have smaller indices than parents. */
    uint8_t *depth = wk_alloc(b->alloc, b->nnodes);
    if (depth == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    unsigned maxd = 0;
    for (size_t i = 1; i < b->nnodes; i++) {
        const wk__text_node *n = &b->nodes[i];
        unsigned d = 0;
        switch (n->op) {
        case WK__TOP_SEQ:
        case WK__TOP_ALT:
            for (uint32_t k = 0; k < n->b; k++) {
                unsigned cd = depth[b->kids[n->a + k]];
                d = cd > d ? cd : d;
            }
            break;
        case WK__TOP_REP:
        case WK__TOP_CAPTURE:
        case WK__TOP_AND:
        case WK__TOP_NOT: d = depth[n->a]; break;
        default: break;
        }
        d = d + 1 > 255 ? 255 : d + 1;
        depth[i] = (uint8_t)d;
        if (i == root) {
            maxd = d;
        }
    }
    wk_free(b->alloc, depth, b->nnodes);
    if (maxd > WK_TEXT_MAX_DEPTH) {
        return wk_error_set(err, WK_ERR_DEPTH, 0, "grammar nested deeper than the limit");
    }
    for (size_t i = 1; i < b->nnodes; i++) {
        uint32_t e = expect_text(b, i);
        if (e == 0) {
            return wk_error_set(err, WK_ERR_NOMEM, 0, "out of memory");
        }
        b->nodes[i].expect = e;
    }
    size_t nodes_bytes = b->nnodes * sizeof *b->nodes;
    size_t kids_bytes = b->nkids * sizeof *b->kids;
    size_t sets_bytes = b->nsets * sizeof *b->sets;
    size_t head = (sizeof(wk_text_program) + 15) & ~(size_t)15;
    size_t total = head + sets_bytes + nodes_bytes + kids_bytes + b->nstrs + 1;
    uint8_t *mem = wk_alloc(b->alloc, total);
    if (mem == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    wk_text_program *p = (wk_text_program *)mem;
    uint8_t *cur = mem + head;
    /* Sets first (8-byte aligned), then nodes (4-byte fields), kids, strings. */
    if (sets_bytes != 0) {
        memcpy(cur, b->sets, sets_bytes);
    }
    p->sets = (const wk_text_byteset *)cur;
    cur += sets_bytes;
    memcpy(cur, b->nodes, nodes_bytes);
    p->nodes = (const wk__text_node *)cur;
    cur += nodes_bytes;
    if (kids_bytes != 0) {
        memcpy(cur, b->kids, kids_bytes);
    }
    p->kids = (const uint32_t *)cur;
    cur += kids_bytes;
    if (b->nstrs != 0) {
        memcpy(cur, b->strs, b->nstrs);
    }
    cur[b->nstrs] = '\0';
    p->strs = (const char *)cur;
    p->alloc = b->alloc;
    p->size = total;
    p->nnodes = b->nnodes;
    p->root = root;
    *out = p;
    return WK_OK;
}

/* Public: frees the program's one block; NULL is a no-op. */
void wk_text_program_free(wk_text_program *p)
{
    if (p != NULL) {
        wk_free(p->alloc, p, p->size);
    }
}
