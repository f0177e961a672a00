/*
 * The text-codec parser: a backtracking interpreter over a compiled program (PEG semantics).
 *
 * Where it sits: a program compiled by text_build.c -> wk_text_parse here over the caller's
 * bytes -> capture slots (offset, length, slot number) the caller reads or hands to
 * text_print.c; mediatype/mt_grammar.c uses it for the grammar-driven media type parser.
 *
 * match() recurses over the grammar tree, never over the input: repetition is a loop, and the
 * recursion depth is bounded by the program's static nesting (WK_TEXT_MAX_DEPTH, checked at
 * compile time). A failed branch restores the position and the capture count, which is all
 * the state there is, so backtracking costs nothing but the re-scan. A repetition of a plain
 * byte class, the common case, runs as a tight loop. For errors, the parser remembers the
 * farthest position where a terminal failed and what that terminal expected.
 */
#include <string.h>

#include "text/text_internal.h"

/* One parse: the program and input, the position, the captures so far, and the farthest
 * failure (for the error message). */
typedef struct pstate {
    const wk_text_program *p;
    const uint8_t *s;
    size_t len;
    size_t pos;
    wk_text_cap *caps; /* NULL: do not record captures */
    size_t max_caps;
    size_t ncaps;
    bool overflow;
    unsigned in_pred; /* inside a lookahead: failures are not reported */
    uint32_t ctx;     /* innermost named rule or capture being matched */
    size_t far;
    uint32_t far_node;
    bool far_exact; /* far_node is a literal or end of input: the most precise report */
} pstate;

/* Records a failure of terminal `node` at the current position if it is the farthest yet.
 * Literals and end of input report themselves; a byte class reports the rule it is part of
 * ("expected subtype" reads better than "expected tchar"). At equal positions, the first
 * precise report wins. */
static void failed_at(pstate *st, uint32_t node)
{
    if (st->in_pred != 0) {
        return;
    }
    uint8_t op = st->p->nodes[node].op;
    bool exact = op == WK__TOP_LIT || op == WK__TOP_END;
    uint32_t what = exact || st->ctx == 0 ? node : st->ctx;
    if (st->far_node == 0 || st->pos > st->far || (st->pos == st->far && exact && !st->far_exact)) {
        st->far = st->pos;
        st->far_node = what;
        st->far_exact = exact;
    }
}

/* ASCII lower case, for caseless literals. */
static inline uint8_t lower(uint8_t c)
{
    return (uint8_t)(c >= 'A' && c <= 'Z' ? c + 32 : c);
}

static bool match_node(pstate *st, uint32_t i);

/* Matches node i at st->pos, advancing it on success. A named node becomes the context that
 * byte-class failures inside it are reported as; the previous context is restored after. */
static bool match(pstate *st, uint32_t i)
{
    const wk__text_node *n = &st->p->nodes[i];
    if (n->name == 0 || n->op == WK__TOP_CLASS) {
        return match_node(st, i);
    }
    uint32_t ctx = st->ctx;
    st->ctx = i;
    bool ok = match_node(st, i);
    st->ctx = ctx;
    return ok;
}

/* The matcher proper, one case per operator. On failure st->pos and st->ncaps are left as
 * they were on entry (a sequence restores them itself), so a choice simply tries the next
 * alternative. */
static bool match_node(pstate *st, uint32_t i)
{
    const wk__text_node *n = &st->p->nodes[i];
    switch (n->op) {
    case WK__TOP_CLASS:
        if (st->pos < st->len && wk_text_byteset_has(&st->p->sets[n->a], st->s[st->pos])) {
            st->pos++;
            return true;
        }
        failed_at(st, i);
        return false;
    case WK__TOP_LIT: {
        const uint8_t *lit = (const uint8_t *)st->p->strs + n->a;
        if (st->len - st->pos < n->b) {
            failed_at(st, i);
            return false;
        }
        const uint8_t *s = st->s + st->pos;
        if (n->flags & WK_TEXT_CASELESS) {
            for (uint32_t k = 0; k < n->b; k++) {
                if (lower(s[k]) != lower(lit[k])) {
                    failed_at(st, i);
                    return false;
                }
            }
        } else if (memcmp(s, lit, n->b) != 0) {
            failed_at(st, i);
            return false;
        }
        st->pos += n->b;
        return true;
    }
    case WK__TOP_SEQ: {
        size_t pos = st->pos, nc = st->ncaps;
        for (uint32_t k = 0; k < n->b; k++) {
            if (!match(st, st->p->kids[n->a + k])) {
                st->pos = pos;
                st->ncaps = nc;
                return false;
            }
        }
        return true;
    }
    case WK__TOP_ALT:
        /* Ordered choice: the first alternative that matches wins, with no retry of the
         * others if what follows fails (PEG, not regular-expression, semantics). An overflow
         * of the capture array stops the search: no alternative could record its captures. */
        for (uint32_t k = 0; k < n->b && !st->overflow; k++) {
            if (match(st, st->p->kids[n->a + k])) {
                return true;
            }
        }
        return false;
    case WK__TOP_REP: {
        const wk__text_node *c = &st->p->nodes[n->a];
        uint32_t count = 0;
        if (c->op == WK__TOP_CLASS) {
            /* A repeated byte class, the commonest node: one loop over the bytes, no calls. */
            const wk_text_byteset *set = &st->p->sets[c->a];
            size_t pos = st->pos;
            while (count < n->max && pos < st->len && wk_text_byteset_has(set, st->s[pos])) {
                pos++;
                count++;
            }
            if (count < n->min) {
                /* report the failure where the run stopped, the byte that did not fit */
                size_t start = st->pos;
                st->pos = pos;
                failed_at(st, n->a);
                st->pos = start;
                return false;
            }
            st->pos = pos;
            return true;
        }
        /* Greedy, without giving back: as many iterations as match, then the minimum checked. */
        size_t start = st->pos, nc = st->ncaps;
        while (count < n->max && !st->overflow) {
            size_t before = st->pos;
            if (!match(st, n->a)) {
                break;
            }
            count++;
            if (st->pos == before) {
                break; /* no progress: further iterations would match the same nothing */
            }
        }
        if (count < n->min || st->overflow) {
            st->pos = start;
            st->ncaps = nc;
            return false;
        }
        return true;
    }
    case WK__TOP_CAPTURE: {
        /* The slot is reserved before the inner match, so captures nested inside come after
         * their parent, in the order they open. */
        size_t start = st->pos, idx = st->ncaps;
        if (st->caps != NULL) {
            if (idx >= st->max_caps) {
                st->overflow = true;
                return false;
            }
            st->ncaps++;
        }
        if (!match(st, n->a)) {
            st->ncaps = idx;
            return false;
        }
        if (st->caps != NULL) {
            st->caps[idx].slot = n->b;
            st->caps[idx].ptr = (const char *)st->s + start;
            st->caps[idx].len = st->pos - start;
        }
        return true;
    }
    case WK__TOP_AND:
    case WK__TOP_NOT: {
        size_t pos = st->pos, nc = st->ncaps;
        wk_text_cap *caps = st->caps;
        st->caps = NULL; /* lookahead never records */
        st->in_pred++;
        bool ok = match(st, n->a);
        st->in_pred--;
        st->caps = caps;
        st->pos = pos;
        st->ncaps = nc;
        if (n->op == WK__TOP_NOT) {
            ok = !ok;
        }
        if (!ok) {
            failed_at(st, n->op == WK__TOP_AND ? n->a : i);
        }
        return ok;
    }
    case WK__TOP_END:
        if (st->pos == st->len) {
            return true;
        }
        failed_at(st, i);
        return false;
    default: return false;
    }
}

/* Public (wirekit/text.h): the whole input must match. A match that stops early is
 * WK_ERR_TRAILING at the farthest failure when one is beyond where it stopped (the most
 * useful place to point at), else at the stop. */
wk_status wk_text_parse(const wk_text_program *p, const void *data, size_t len, wk_text_cap *caps,
                        size_t max_caps, size_t *ncaps, wk_error *err)
{
    if (ncaps != NULL) {
        *ncaps = 0;
    }
    if (p == NULL || (data == NULL && len != 0) || (caps == NULL && max_caps != 0)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no program, input or capture array given");
    }
    wk_text_cap none; /* with max_caps 0 any capture overflows */
    pstate st = {.p = p,
                 .s = data != NULL ? data : (const uint8_t *)"",
                 .len = len,
                 .caps = caps != NULL ? caps : &none,
                 .max_caps = max_caps};
    bool ok = match(&st, p->root);
    if (st.overflow) {
        return wk_error_set(err, WK_ERR_LIMIT, st.pos, "more captures than the array holds");
    }
    if (ok && st.pos == len) {
        if (ncaps != NULL) {
            *ncaps = st.ncaps;
        }
        return WK_OK;
    }
    if (ok) {
        if (st.far_node != 0 && st.far >= st.pos) {
            return wk_error_set(err, WK_ERR_TRAILING, st.far,
                                wk__text_str(p, p->nodes[st.far_node].expect));
        }
        return wk_error_set(err, WK_ERR_TRAILING, st.pos, "expected end of input");
    }
    return wk_error_set(err, WK_ERR_SYNTAX, st.far,
                        st.far_node != 0 ? wk__text_str(p, p->nodes[st.far_node].expect)
                                         : "input does not match the grammar");
}

/* Contract in text_internal.h: node alone matches all of data, no captures recorded. */
bool wk__text_match_whole(const wk_text_program *p, uint32_t node, const char *data, size_t len)
{
    pstate st = {.p = p, .s = (const uint8_t *)(data != NULL ? data : ""), .len = len};
    return match(&st, node) && st.pos == len;
}
