/*
 * tsquery, PostgreSQL's tsquery.c: a tree of lexemes (with weights and a prefix mark) joined
 * by ! (not), & (and), | (or) and <-> / <N> (followed by), rendered as tsqueryout does:
 * 'fat' & ( 'rat' | !'cat' ) <-> 'x':*AB.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> r_tsquery ->
 * text / a string event / a value tree; text input -> p_tsquery -> tsquerysend's layout for a
 * binary parameter or COPY in.
 *
 * Binary (tsquerysend): an int32 item count, then the items in prefix order, each operator
 * followed by its right operand's items and then its left operand's: a value is a type byte
 * 1, a weight bitmap byte (8 = A, 4 = B, 2 = C, 1 = D), a prefix byte and the lexeme's UTF-8
 * text with a NUL; an operator is a type byte 2, the operator (1 not, 2 and, 3 or, 4 phrase)
 * and, for a phrase, an int16 distance. Both directions walk an array of the items with an
 * explicit stack, never C recursion, in time and memory linear in the value however deep the
 * tree is.
 */
#include <stdlib.h>

#include "pg/pg_codec.h"
#include "wirekit/utf8.h"

#define QI_VAL 1
#define OP_NOT 1
#define OP_AND 2
#define OP_OR 3
#define OP_PHRASE 4
#define MAX_DISTANCE 16384 /* tsquery.c's MAXENTRYPOS */

/* tsquery.c's tsearch_op_priority, indexed by operator: not binds tightest, or loosest. */
static const int priority[5] = {0, 4, 2, 1, 3};

/* One item of the tree. */
typedef struct ts_item {
    uint8_t op;        /* 0 for a value, else the operator */
    uint8_t weight;    /* a value's weight bitmap */
    uint8_t prefix;    /* a value's prefix mark */
    uint16_t distance; /* a phrase's distance */
    uint32_t left;     /* a binary operator's left operand (its right one is the next item) */
    size_t at, len;    /* a value's lexeme: p[at..at+len) in the binary, or in the lexeme text */
} ts_item;

/* A task of the renderer's explicit stack: render item `i` under a parent of priority `pp`
 * (the right operand of a phrase when `rphrase`), or write an operator or a closing
 * parenthesis. */
typedef struct ts_task {
    uint32_t i;
    int8_t pp;
    uint8_t kind; /* T_ITEM, T_OP, T_CLOSE */
    bool rphrase;
} ts_task;

enum { T_ITEM, T_OP, T_CLOSE };

/* Reads the items of tsquerysend's layout into items[0..count) and checks that they make one
 * tree: every operator has its operands, and nothing follows the last. */
static wk_status read_items(const uint8_t *p, size_t n, ts_item *items, uint32_t count,
                            wk_error *err)
{
    size_t pos = 4;
    uint64_t need = 1; /* operands still wanted */
    for (uint32_t k = 0; k < count; k++) {
        ts_item *it = &items[k];
        memset(it, 0, sizeof *it);
        if (need == 0) {
            return wk__pg_fail(err, WK_ERR_TRAILING, pos, "tsquery items after the whole tree");
        }
        if (n - pos < 2) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "tsquery item truncated");
        }
        uint8_t type = p[pos];
        if (type == QI_VAL) {
            if (n - pos < 4) {
                return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "tsquery operand truncated");
            }
            it->weight = p[pos + 1];
            it->prefix = p[pos + 2];
            if (it->weight > 0xF || it->prefix > 1) {
                return wk__pg_bad_input(err, pos, "invalid tsquery weight or prefix mark");
            }
            it->at = pos + 3;
            const uint8_t *z = memchr(p + it->at, 0, n - it->at);
            if (z == NULL) {
                return wk__pg_fail(err, WK_ERR_TRUNCATED, it->at, "unterminated tsquery lexeme");
            }
            it->len = (size_t)(z - (p + it->at));
            size_t bad;
            if (!wk_utf8_valid(p + it->at, it->len, &bad)) {
                return wk__pg_bad_input(err, it->at + bad, "invalid UTF-8 in a tsquery lexeme");
            }
            pos = it->at + it->len + 1;
            need--;
        } else if (type == 2) {
            it->op = p[pos + 1];
            if (it->op < OP_NOT || it->op > OP_PHRASE) {
                return wk__pg_bad_input(err, pos + 1, "unknown tsquery operator");
            }
            pos += 2;
            if (it->op == OP_PHRASE) {
                if (n - pos < 2) {
                    return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "tsquery distance truncated");
                }
                int16_t dist = (int16_t)wk__pg_be16(p + pos);
                if (dist < 0 || dist > MAX_DISTANCE) {
                    return wk__pg_bad_input(err, pos, "tsquery distance out of range");
                }
                it->distance = (uint16_t)dist;
                pos += 2;
            }
            need += it->op == OP_NOT ? 0u : 1u;
        } else {
            return wk__pg_bad_input(err, pos, "unknown tsquery item type");
        }
    }
    if (need != 0) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "tsquery operator without its operands");
    }
    if (pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the tsquery");
    }
    /* each operator's left operand starts where its right one ends: ends from the back */
    uint32_t *end = malloc((size_t)count * sizeof *end);
    if (end == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the tsquery");
    }
    for (uint32_t k = count; k-- > 0;) {
        ts_item *it = &items[k];
        if (it->op == 0) {
            end[k] = k + 1;
        } else if (it->op == OP_NOT) {
            end[k] = end[k + 1];
        } else {
            it->left = end[k + 1];
            end[k] = end[it->left];
        }
    }
    free(end);
    return WK_OK;
}

/* One value as tsqueryout writes it: quoted, ' and \ doubled, then :*ABCD as marked. */
static wk_status put_value(const ts_item *it, const uint8_t *text, wk_buf *out)
{
    wk_status st = wk_buf_push(out, '\'');
    for (size_t k = 0; k < it->len && st == WK_OK; k++) {
        uint8_t c = text[it->at + k];
        st = (c == '\'' || c == '\\') ? wk_buf_push(out, c) : WK_OK;
        st = st == WK_OK ? wk_buf_push(out, c) : st;
    }
    st = st == WK_OK ? wk_buf_push(out, '\'') : st;
    if (st == WK_OK && (it->weight != 0 || it->prefix)) {
        char m[6];
        size_t k = 0;
        m[k++] = ':';
        if (it->prefix) {
            m[k++] = '*';
        }
        static const char letters[4] = {'A', 'B', 'C', 'D'};
        for (int b = 0; b < 4; b++) {
            if (it->weight & (8u >> b)) {
                m[k++] = letters[b];
            }
        }
        st = wk_buf_append(out, m, k);
    }
    return st;
}

/* tsqueryout of tsquerysend's layout: infix, in parentheses where the parent binds tighter
 * (or as the right operand of a phrase, whose order matters), as tsquery.c's infix(). */
static wk_status r_tsquery(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                           wk_error *err)
{
    (void)d;
    wk_status st = wk__pg_need(n, 4, "binary tsquery needs an item count", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t count = (int32_t)wk__pg_be32(p);
    if (count < 0 || (size_t)count > (n - 4) / 2) {
        return wk__pg_bad_input(err, 0, "invalid tsquery item count");
    }
    if (count == 0) {
        return n == 4 ? WK_OK : wk__pg_fail(err, WK_ERR_TRAILING, 4, "bytes left after the tsquery");
    }
    ts_item *items = malloc((size_t)count * sizeof *items);
    /* at most three tasks wait per operator on the way down: its close, its operator and
     * one operand */
    ts_task *stack = malloc(((size_t)count * 3 + 1) * sizeof *stack);
    if (items == NULL || stack == NULL) {
        free(items);
        free(stack);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the tsquery");
    }
    st = read_items(p, n, items, (uint32_t)count, err);
    size_t top = 0;
    stack[top++] = (ts_task){0, -1, T_ITEM, false};
    while (st == WK_OK && top > 0) {
        ts_task t = stack[--top];
        const ts_item *it = &items[t.i];
        if (t.kind == T_CLOSE) {
            st = wk_buf_append(out, " )", 2);
        } else if (t.kind == T_OP) {
            if (it->op == OP_PHRASE && it->distance != 1) {
                st = wk_buf_append(out, " <", 2);
                st = st == WK_OK ? wk__pg_put_u64(out, it->distance) : st;
                st = st == WK_OK ? wk_buf_append(out, "> ", 2) : st;
            } else {
                st = wk_buf_append(out, it->op == OP_AND ? " & " : it->op == OP_OR ? " | "
                                                                                  : " <-> ",
                                   it->op == OP_PHRASE ? 5 : 3);
            }
        } else if (it->op == 0) {
            st = put_value(it, p, out);
        } else {
            int pr = priority[it->op];
            bool paren = pr < t.pp || (it->op == OP_PHRASE && t.rphrase);
            st = paren ? wk_buf_append(out, "( ", 2) : WK_OK;
            if (paren) {
                stack[top++] = (ts_task){t.i, 0, T_CLOSE, false};
            }
            if (it->op == OP_NOT) {
                st = st == WK_OK ? wk_buf_push(out, '!') : st;
                stack[top++] = (ts_task){t.i + 1, (int8_t)pr, T_ITEM, false};
            } else { /* left, the operator, right: pushed in reverse */
                stack[top++] = (ts_task){t.i + 1, (int8_t)pr, T_ITEM, it->op == OP_PHRASE};
                stack[top++] = (ts_task){t.i, 0, T_OP, false};
                stack[top++] = (ts_task){it->left, (int8_t)pr, T_ITEM, false};
            }
        }
        if (st != WK_OK) {
            st = wk__pg_nomem(err, 0); /* read_items passed: only the output can fail here */
        }
    }
    free(items);
    free(stack);
    return st;
}

/* ---- text input ---- */

static bool tspace(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* The characters that end a bare lexeme besides space and ':' (tsvector_parser.c's
 * ISOPERATOR). */
static bool tsoperator(uint8_t c)
{
    return c == '!' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<';
}

/* A parse in progress: the items made so far (values' lexemes unescaped into `lex`) and the
 * operand and operator stacks of the shunting-yard. */
typedef struct ts_parse {
    wk_buf items, lex, operands, operators;
    wk_error *err;
} ts_parse;

/* An operator on the stack: the operator, its distance, or 0 for an open parenthesis. */
typedef struct ts_pending {
    uint8_t op;
    uint16_t distance;
} ts_pending;

/* A new item appended; its index in *k. */
static bool add_item(ts_parse *ps, const ts_item *it, uint32_t *k)
{
    *k = (uint32_t)(ps->items.len / sizeof *it);
    return wk_buf_append(&ps->items, it, sizeof *it) == WK_OK &&
           wk_buf_append(&ps->operands, k, sizeof *k) == WK_OK;
}

/* The operator on top of the operator stack applied to its operands (popped; the operator
 * item takes their place). */
static wk_status apply(ts_parse *ps, size_t at)
{
    ps->operators.len -= sizeof(ts_pending);
    ts_pending o;
    memcpy(&o, ps->operators.data + ps->operators.len, sizeof o);
    size_t need = (o.op == OP_NOT ? 1 : 2) * sizeof(uint32_t);
    if (ps->operands.len < need) {
        return wk__pg_bad_input(ps->err, at, "syntax error in tsquery: an operand is missing");
    }
    uint32_t right, left = 0;
    ps->operands.len -= sizeof right;
    memcpy(&right, ps->operands.data + ps->operands.len, sizeof right);
    if (o.op != OP_NOT) {
        ps->operands.len -= sizeof left;
        memcpy(&left, ps->operands.data + ps->operands.len, sizeof left);
    }
    ts_item it;
    memset(&it, 0, sizeof it);
    it.op = o.op;
    it.distance = o.distance;
    it.left = left;
    it.at = right; /* an operator's right operand (not next to it until the output) */
    uint32_t k;
    return add_item(ps, &it, &k) ? WK_OK : wk__pg_nomem(ps->err, at);
}

/* Pops and applies the operators that bind at least as tightly as the binary operator `op`
 * (left associative, as tsquery.c's cleanOpStack; a ! is pushed without popping, so it is
 * right associative); op 0 pops to a parenthesis or the bottom. */
static wk_status clean(ts_parse *ps, uint8_t op, size_t at)
{
    while (ps->operators.len > 0) {
        ts_pending top;
        memcpy(&top, ps->operators.data + ps->operators.len - sizeof top, sizeof top);
        if (top.op == 0 || (op != 0 && priority[op] > priority[top.op])) {
            break;
        }
        wk_status st = apply(ps, at);
        if (st != WK_OK) {
            return st;
        }
    }
    return WK_OK;
}

/* One lexeme at s[*i..): quoted ('' and \ escapes) or bare (\ escapes, ended by space, ':'
 * or an operator character), then its :weights and * prefix mark. */
static wk_status lexeme(ts_parse *ps, const uint8_t *s, size_t n, size_t *i)
{
    size_t k = *i, start = ps->lex.len;
    bool quoted = s[k] == '\'';
    k += quoted;
    for (;;) {
        if (k == n) {
            if (quoted) {
                return wk__pg_bad_input(ps->err, k, "unterminated quoted tsquery lexeme");
            }
            break;
        }
        uint8_t c = s[k];
        if (quoted && c == '\'' && k + 1 < n && s[k + 1] == '\'') {
            k += 2;
        } else if (quoted && c == '\'') {
            k++;
            break;
        } else if (!quoted && (tspace(c) || c == ':' || tsoperator(c))) {
            break;
        } else if (c == '\\') {
            if (k + 1 == n) {
                return wk__pg_bad_input(ps->err, k, "a backslash at the end of a tsquery");
            }
            c = s[k + 1];
            k += 2;
        } else {
            k++;
        }
        if (c == 0) {
            return wk__pg_bad_input(ps->err, k, "a NUL in a tsquery lexeme");
        }
        if (wk_buf_push(&ps->lex, c) != WK_OK) {
            return wk__pg_nomem(ps->err, k);
        }
    }
    ts_item it;
    memset(&it, 0, sizeof it);
    it.at = start;
    it.len = ps->lex.len - start;
    size_t bad;
    if (it.len == 0 || !wk_utf8_valid(ps->lex.data + start, it.len, &bad)) {
        return wk__pg_bad_input(ps->err, *i, "invalid tsquery lexeme");
    }
    if (k < n && s[k] == ':') {
        for (k++; k < n; k++) {
            uint8_t c = s[k] | 0x20;
            if (s[k] == '*') {
                it.prefix = 1;
            } else if (c >= 'a' && c <= 'd') {
                it.weight |= (uint8_t)(8u >> (c - 'a'));
            } else {
                break;
            }
        }
    }
    *i = k;
    uint32_t idx;
    return add_item(ps, &it, &idx) ? WK_OK : wk__pg_nomem(ps->err, k);
}

/* A phrase operator at s[*i] ('<'): <-> (distance 1) or <N>, N from 0 to 16384. */
static wk_status phrase(ts_parse *ps, const uint8_t *s, size_t n, size_t *i, uint16_t *dist)
{
    size_t k = *i + 1;
    uint32_t v = 1;
    if (k < n && s[k] == '-') {
        k++;
    } else {
        size_t start = k;
        for (v = 0; k < n && s[k] >= '0' && s[k] <= '9'; k++) {
            v = v > MAX_DISTANCE ? v : v * 10 + (uint32_t)(s[k] - '0');
        }
        if (k == start) {
            return wk__pg_bad_input(ps->err, *i, "syntax error in tsquery: a bad phrase operator");
        }
        if (v > MAX_DISTANCE) {
            return wk__pg_fail(ps->err, WK_ERR_RANGE, start,
                               "a phrase distance must be between 0 and 16384");
        }
    }
    if (k == n || s[k] != '>') {
        return wk__pg_bad_input(ps->err, *i, "syntax error in tsquery: a bad phrase operator");
    }
    *i = k + 1;
    *dist = (uint16_t)v;
    return WK_OK;
}

/* The tree as tsquerysend's layout: each operator, then its right operand, then its left. */
static wk_status emit(ts_parse *ps, uint32_t root, wk_buf *out)
{
    const ts_item *items = (const ts_item *)ps->items.data;
    size_t count = ps->items.len / sizeof *items;
    uint8_t b[4];
    wk__pg_put32(b, (uint32_t)count);
    if (wk_buf_append(out, b, 4) != WK_OK) {
        return wk__pg_nomem(ps->err, 0);
    }
    /* the operand stack is free now: it holds the items still to write */
    ps->operands.len = 0;
    wk_status st = wk_buf_append(&ps->operands, &root, sizeof root);
    while (st == WK_OK && ps->operands.len > 0) {
        uint32_t k;
        ps->operands.len -= sizeof k;
        memcpy(&k, ps->operands.data + ps->operands.len, sizeof k);
        const ts_item *it = &items[k];
        if (it->op == 0) {
            uint8_t h[3] = {QI_VAL, it->weight, it->prefix};
            st = wk_buf_append(out, h, 3);
            st = st == WK_OK ? wk_buf_append(out, ps->lex.data + it->at, it->len) : st;
            st = st == WK_OK ? wk_buf_push(out, 0) : st;
            continue;
        }
        uint8_t h[4] = {2, it->op, 0, 0};
        wk__pg_put16(h + 2, it->distance);
        st = wk_buf_append(out, h, it->op == OP_PHRASE ? 4 : 2);
        uint32_t right = (uint32_t)it->at;
        if (st == WK_OK && it->op != OP_NOT) {
            st = wk_buf_append(&ps->operands, &it->left, sizeof it->left);
        }
        st = st == WK_OK ? wk_buf_append(&ps->operands, &right, sizeof right) : st;
    }
    return st == WK_OK ? WK_OK : wk__pg_nomem(ps->err, 0);
}

/* tsquery_in's syntax (operands quoted or bare, ! & | <-> <N> and parentheses, by priority:
 * not, phrase, and, or) to tsquerysend's layout. Blank input is the empty tsquery. */
static wk_status p_tsquery(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                           wk_error *err)
{
    (void)e;
    ts_parse ps;
    wk_buf_init(&ps.items, NULL, 0);
    wk_buf_init(&ps.lex, NULL, 0);
    wk_buf_init(&ps.operands, NULL, 0);
    wk_buf_init(&ps.operators, NULL, 0);
    ps.err = err;
    wk_status st = WK_OK;
    bool operand = true; /* an operand (or ! or '(') is expected */
    size_t i = 0;
    for (;;) {
        while (i < n && tspace(s[i])) {
            i++;
        }
        if (i == n) {
            break;
        }
        ts_pending o = {0, 0};
        uint8_t c = s[i];
        if (operand && (c == '!' || c == '(')) {
            o.op = c == '!' ? OP_NOT : 0;
            i++;
            st = wk_buf_append(&ps.operators, &o, sizeof o) == WK_OK ? WK_OK
                                                                      : wk__pg_nomem(err, i);
        } else if (operand && c != ')' && c != '&' && c != '|' && c != '<' && c != ':') {
            st = lexeme(&ps, s, n, &i);
            operand = false;
        } else if (!operand && c == ')') {
            st = clean(&ps, 0, i);
            if (st == WK_OK && ps.operators.len == 0) {
                st = wk__pg_bad_input(err, i, "syntax error in tsquery: an unopened ')'");
            }
            ps.operators.len -= st == WK_OK ? sizeof o : 0;
            i++;
        } else if (!operand && (c == '&' || c == '|' || c == '<')) {
            o.op = c == '&' ? OP_AND : c == '|' ? OP_OR : OP_PHRASE;
            o.distance = 0;
            if (c == '<') {
                st = phrase(&ps, s, n, &i, &o.distance);
            } else {
                i++;
            }
            st = st == WK_OK ? clean(&ps, o.op, i) : st;
            if (st == WK_OK && wk_buf_append(&ps.operators, &o, sizeof o) != WK_OK) {
                st = wk__pg_nomem(err, i);
            }
            operand = true;
        } else {
            st = wk__pg_bad_input(err, i, "syntax error in tsquery");
        }
        if (st != WK_OK) {
            break;
        }
    }
    bool blank = ps.items.len == 0 && ps.operators.len == 0;
    if (st == WK_OK && operand && !blank) {
        st = wk__pg_bad_input(err, i, "syntax error in tsquery: an operand is missing");
    }
    st = st == WK_OK ? clean(&ps, 0, i) : st;
    if (st == WK_OK && ps.operators.len > 0) {
        st = wk__pg_bad_input(err, i, "syntax error in tsquery: an unclosed '('");
    }
    if (st == WK_OK && blank) {
        uint8_t z[4] = {0, 0, 0, 0};
        st = wk_buf_append(out, z, 4) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
    } else if (st == WK_OK) {
        uint32_t root;
        memcpy(&root, ps.operands.data, sizeof root); /* one operand is left: the tree */
        st = emit(&ps, root, out);
    }
    wk_buf_free(&ps.items);
    wk_buf_free(&ps.lex);
    wk_buf_free(&ps.operands);
    wk_buf_free(&ps.operators);
    return st;
}

static const wk__pg_rtype rt_tsquery = {r_tsquery, p_tsquery};

R_OIDS(c_tsquery, 3615);
R_AOIDS(c_tsquery, 3645);
const wk_pg_codec wk__pg_codec_tsquery =
    RC("tsquery", &rt_tsquery, WK_PG_BOTH_FORMATS, c_tsquery);
