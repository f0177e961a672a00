/*
 * ABNF rendering of a compiled program, for documentation.
 *
 * Where it sits: a program compiled by text_build.c -> wk_text_describe here -> ABNF text
 * in the caller's buffer, for documentation (docs/design.md shows the media type grammar).
 *
 * Named rules and named captures become ABNF rules, defined once each in the order they are
 * first referenced (a small worklist, no recursion over rules). Within a rule the expression
 * is rendered recursively, bounded by the program's static depth. ABNF has no lookahead, end
 * of input or captures, so those appear as prose values (<...>) and comments.
 */
#include <stdio.h>
#include <string.h>

#include "text/text_internal.h"

/* One rendering: the output, the sticky buffer status, the worklist of rules still to
 * define, and which nodes were already queued. */
typedef struct dstate {
    const wk_text_program *p;
    wk_buf *out;
    wk_status st;
    uint32_t todo[256]; /* rules referenced and not yet defined */
    size_t ntodo;
    uint8_t seen[1]; /* flexible: one byte per node, allocated with the state */
} dstate;

/* Appends unless the buffer already failed (the status is checked once, at the end). */
static void put(dstate *d, const char *s, size_t n)
{
    if (d->st == WK_OK) {
        d->st = wk_buf_append(d->out, s, n);
    }
}

/* put() of a C string. */
static void puts_(dstate *d, const char *s)
{
    put(d, s, strlen(s));
}

/* Two upper-case hex digits, as ABNF's %xHH. */
static void put_hex(dstate *d, unsigned c)
{
    char tmp[8];
    int n = snprintf(tmp, sizeof tmp, "%02X", c);
    put(d, tmp, (size_t)n);
}

/* A rule name: letters, digits and '-', other bytes become '-'. */
static void put_name(dstate *d, const char *name)
{
    for (; *name != '\0'; name++) {
        char c = *name;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        put(d, ok ? name : "-", 1);
    }
}

/* Writes a reference to rule i and queues its definition the first time (the worklist has
 * room for 256; rules past that are referenced but not defined). */
static void refer(dstate *d, uint32_t i)
{
    put_name(d, wk__text_str(d->p, d->p->nodes[i].name));
    if (!d->seen[i] && d->ntodo < sizeof d->todo / sizeof d->todo[0]) {
        d->seen[i] = 1;
        d->todo[d->ntodo++] = i;
    }
}

/* A byte set as ABNF alternatives of %xHH values and %xHH-HH ranges, runs merged. */
static void put_set(dstate *d, const wk_text_byteset *s)
{
    bool first = true;
    for (unsigned c = 0; c < 256;) {
        if (!wk_text_byteset_has(s, (uint8_t)c)) {
            c++;
            continue;
        }
        unsigned hi = c;
        while (hi + 1 < 256 && wk_text_byteset_has(s, (uint8_t)(hi + 1))) {
            hi++;
        }
        puts_(d, first ? "%x" : " / %x");
        put_hex(d, c);
        if (hi != c) {
            puts_(d, "-");
            put_hex(d, hi);
        }
        first = false;
        c = hi + 1;
    }
}

static void expr(dstate *d, uint32_t i, bool top, int prec);

/* Renders node i as an ABNF expression; `top` at a rule's right-hand side, `prec` the
 * binding of the context, so parentheses appear only where ABNF needs them. Named nodes
 * below the top are references.
 * prec: 0 = alternation allowed bare, 1 = inside a sequence, 2 = operand of a
 * repetition. */
static void expr(dstate *d, uint32_t i, bool top, int prec)
{
    const wk__text_node *n = &d->p->nodes[i];
    if (!top && n->name != 0) {
        refer(d, i);
        return;
    }
    switch (n->op) {
    case WK__TOP_CLASS: {
        const wk_text_byteset *s = &d->p->sets[n->a];
        unsigned ranges = 0;
        for (unsigned c = 0; c < 256; c++) {
            bool in = wk_text_byteset_has(s, (uint8_t)c);
            ranges += in && (c == 0 || !wk_text_byteset_has(s, (uint8_t)(c - 1)));
        }
        bool paren = prec > 0 && ranges > 1;
        puts_(d, paren ? "( " : "");
        put_set(d, s);
        puts_(d, paren ? " )" : "");
        break;
    }
    case WK__TOP_LIT: {
        const char *s = d->p->strs + n->a;
        bool printable = true, letters = false;
        for (uint32_t k = 0; k < n->b; k++) {
            unsigned char c = (unsigned char)s[k];
            printable = printable && c >= 0x20 && c < 0x7F && c != '"';
            letters = letters || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        }
        if (printable) {
            puts_(d, letters && !(n->flags & WK_TEXT_CASELESS) ? "%s\"" : "\"");
            put(d, s, n->b);
            puts_(d, "\"");
        } else {
            puts_(d, "%x");
            for (uint32_t k = 0; k < n->b; k++) {
                if (k != 0) {
                    puts_(d, ".");
                }
                put_hex(d, (unsigned char)s[k]);
            }
        }
        break;
    }
    case WK__TOP_SEQ:
    case WK__TOP_ALT: {
        bool alt = n->op == WK__TOP_ALT;
        bool paren = alt ? prec > 0 : prec > 1;
        puts_(d, paren ? "( " : "");
        for (uint32_t k = 0; k < n->b; k++) {
            if (k != 0) {
                puts_(d, alt ? " / " : " ");
            }
            expr(d, d->p->kids[n->a + k], false, alt ? 0 : 1);
        }
        puts_(d, paren ? " )" : "");
        break;
    }
    case WK__TOP_REP:
        if (n->min == 0 && n->max == 1) {
            puts_(d, "[ ");
            expr(d, n->a, false, 0);
            puts_(d, " ]");
            break;
        } else {
            char tmp[32];
            int len;
            if (n->min == n->max) {
                len = snprintf(tmp, sizeof tmp, "%u", n->min);
            } else if (n->max == WK_TEXT_UNBOUNDED) {
                len = n->min == 0 ? snprintf(tmp, sizeof tmp, "*")
                                  : snprintf(tmp, sizeof tmp, "%u*", n->min);
            } else {
                len = n->min == 0 ? snprintf(tmp, sizeof tmp, "*%u", n->max)
                                  : snprintf(tmp, sizeof tmp, "%u*%u", n->min, n->max);
            }
            put(d, tmp, (size_t)len);
            expr(d, n->a, false, 2);
        }
        break;
    case WK__TOP_CAPTURE: expr(d, n->a, false, prec); break;
    case WK__TOP_AND:
    case WK__TOP_NOT:
        puts_(d, n->op == WK__TOP_AND ? "<followed by: " : "<not followed by: ");
        expr(d, n->a, false, 0);
        puts_(d, ">");
        break;
    case WK__TOP_END: puts_(d, "<end of input>"); break;
    default: break;
    }
}

/* Writes `name = expression`, with a comment for a capture's slot. */
static void define(dstate *d, const char *name, uint32_t i)
{
    put_name(d, name);
    puts_(d, " = ");
    expr(d, i, true, 0);
    const wk__text_node *n = &d->p->nodes[i];
    if (n->op == WK__TOP_CAPTURE) {
        char tmp[64];
        int len = snprintf(tmp, sizeof tmp, "  ; captured into slot %u%s", n->b,
                           (n->flags & WK_TEXT_PRINT_LOWER) ? ", printed in lower case" : "");
        put(d, tmp, (size_t)len);
    }
    puts_(d, "\n");
}

/* Public (wirekit/text.h): the root rule first (named root_name, its own name, or
 * "grammar"), then every rule it references, each once. */
wk_status wk_text_describe(const wk_text_program *p, const char *root_name, wk_buf *out)
{
    if (p == NULL || out == NULL) {
        return WK_ERR_ARG;
    }
    size_t size = sizeof(dstate) + p->nnodes;
    dstate *d = wk_alloc(p->alloc, size);
    if (d == NULL) {
        return WK_ERR_NOMEM;
    }
    memset(d, 0, size);
    d->p = p;
    d->out = out;
    d->st = WK_OK;
    d->seen[p->root] = 1;
    const char *rn = root_name != NULL ? root_name : wk__text_str(p, p->nodes[p->root].name);
    define(d, rn != NULL ? rn : "grammar", p->root);
    for (size_t k = 0; k < d->ntodo; k++) {
        uint32_t i = d->todo[k];
        define(d, wk__text_str(p, p->nodes[i].name), i);
    }
    wk_status st = d->st;
    wk_free(p->alloc, d, size);
    return st;
}
