/*
 * The text-codec printer: runs a program backwards, from captures to canonical text.
 *
 * Where it sits: a program compiled by text_build.c + capture slots (from text_parse.c, or
 * built by the caller, as mediatype/mt_grammar.c does for serialization) -> wk_text_print
 * here -> canonical text appended to the caller's buffer.
 *
 * Literals print as written, an uncaptured byte class prints its smallest member, and a
 * repetition prints as many iterations as consume captures (at least its minimum); lookahead
 * prints nothing, and end of input prints only once every capture is used. A choice prints
 * its first alternative that prints, so grammars list the alternatives that need captures
 * before those that do not. Every captured value is checked against its sub-grammar before it
 * is written, which is what makes parse(print(x)) == x hold. A failed branch truncates the
 * output back to where it began, so nothing partial is ever left behind.
 */
#include <string.h>

#include "text/text_internal.h"

/* One print: the program, the captures and the next one to use, the output. */
typedef struct prstate {
    const wk_text_program *p;
    const wk_text_cap *caps;
    size_t ncaps;
    size_t cur; /* next capture to print */
    size_t far; /* index of the capture furthest reached, for the error */
    wk_buf *out;
    wk_status st; /* buffer failure: sticky, stops everything */
} prstate;

/* Appends to the output; a buffer failure sticks in ps->st and stops the print. */
static bool emit(prstate *ps, const void *p, size_t n)
{
    wk_status st = wk_buf_append(ps->out, p, n);
    if (st != WK_OK) {
        ps->st = st;
        return false;
    }
    return true;
}

/* Prints node i, consuming captures in order; false (output truncated back by the caller's
 * branch) when the node cannot print with the captures left. */
static bool print_node(prstate *ps, uint32_t i)
{
    const wk__text_node *n = &ps->p->nodes[i];
    if (ps->st != WK_OK) {
        return false;
    }
    switch (n->op) {
    case WK__TOP_CLASS: return emit(ps, &n->first, 1); /* its smallest member */
    case WK__TOP_LIT: return emit(ps, ps->p->strs + n->a, n->b);
    case WK__TOP_SEQ: {
        size_t len = ps->out->len, cur = ps->cur;
        for (uint32_t k = 0; k < n->b; k++) {
            if (!print_node(ps, ps->p->kids[n->a + k])) {
                ps->out->len = len;
                ps->cur = cur;
                return false;
            }
        }
        return true;
    }
    case WK__TOP_ALT:
        /* The first alternative that prints (each failed one has truncated its output). */
        for (uint32_t k = 0; k < n->b; k++) {
            if (print_node(ps, ps->p->kids[n->a + k])) {
                return true;
            }
            if (ps->st != WK_OK) {
                return false;
            }
        }
        return false;
    case WK__TOP_REP: {
        /* As many iterations as consume captures, at least the minimum: an iteration past the
         * minimum that uses no capture would print grammar text nobody asked for. */
        size_t start_len = ps->out->len, start_cur = ps->cur;
        uint32_t count = 0;
        while (count < n->max) {
            size_t len = ps->out->len, cur = ps->cur;
            if (!print_node(ps, n->a)) {
                ps->out->len = len;
                ps->cur = cur;
                break;
            }
            if (ps->cur == cur && count >= n->min) {
                ps->out->len = len; /* optional and nothing to say: leave it out */
                break;
            }
            count++;
        }
        if (count < n->min || ps->st != WK_OK) {
            ps->out->len = start_len;
            ps->cur = start_cur;
            return false;
        }
        return true;
    }
    case WK__TOP_CAPTURE: {
        /* The next capture must be for this slot and must itself match the captured
         * sub-grammar, or the printed text would not parse back to the same captures. */
        if (ps->cur > ps->far) {
            ps->far = ps->cur;
        }
        if (ps->cur >= ps->ncaps || ps->caps[ps->cur].slot != n->b) {
            return false;
        }
        const wk_text_cap *c = &ps->caps[ps->cur];
        if ((c->ptr == NULL && c->len != 0) || !wk__text_match_whole(ps->p, n->a, c->ptr, c->len)) {
            return false;
        }
        size_t at = ps->out->len;
        if (!emit(ps, c->ptr, c->len)) {
            return false;
        }
        if (n->flags & WK_TEXT_PRINT_LOWER) {
            for (size_t k = 0; k < c->len; k++) {
                uint8_t ch = ps->out->data[at + k];
                if (ch >= 'A' && ch <= 'Z') {
                    ps->out->data[at + k] = (uint8_t)(ch + 32);
                }
            }
        }
        ps->cur++;
        return true;
    }
    case WK__TOP_AND:
    case WK__TOP_NOT: return true; /* lookahead consumes nothing, so prints nothing */
    case WK__TOP_END: return ps->cur == ps->ncaps; /* the end only once every capture is used */
    default: return false;
    }
}

/* Public (wirekit/text.h): every capture must be used, in order; on any failure the output is
 * back at its length on entry. WK_ERR_ARG points at the capture that did not fit. */
wk_status wk_text_print(const wk_text_program *p, const wk_text_cap *caps, size_t ncaps,
                        wk_buf *out, wk_error *err)
{
    if (p == NULL || out == NULL || (caps == NULL && ncaps != 0)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no program, captures or buffer given");
    }
    prstate ps = {.p = p, .caps = caps, .ncaps = ncaps, .out = out, .st = WK_OK};
    size_t len = out->len;
    bool ok = print_node(&ps, p->root);
    if (ps.st != WK_OK) {
        out->len = len;
        return wk_error_set(err, ps.st, len, "output buffer is full");
    }
    if (!ok || ps.cur != ncaps) {
        out->len = len;
        size_t at = ok ? ps.cur : ps.far;
        return wk_error_set(err, WK_ERR_ARG, at,
                            at >= ncaps ? "the grammar needs more captures than were given"
                                        : "a capture does not fit the grammar at this place");
    }
    return WK_OK;
}
