/*
 * The validate-only JSON scanner (wk_json_validate): the fused parser's grammar with nothing
 * built. No node is written, no string is copied or unescaped (escapes are only checked),
 * no number is converted (its grammar is walked eight digits at a time), and the only state
 * is the depth and one bit per open container (object or array): 512 levels inline, deeper
 * ones on a stack of bits that grows through the options' allocator.
 *
 * It answers what wk_json_decode_value answers for the same bytes and options: the same
 * status, message and byte offset, checked in the same order (a string's UTF-8 and control
 * bytes before its escapes, as the parser scans a string before it unescapes it). Every
 * lexing step is lex.h's, shared with the parser and the event reader; the grammar loop is
 * decode.c's with the node building left out. What only a tree can run out of is not checked:
 * the arena, strings of 4 GiB or more and containers of 2^32 elements or more (json.h).
 */
#include <string.h>

#include "json/lex.h"
#include "wirekit/json.h"

#define INLINE_WORDS 8 /* 512 levels */

/* Bit i of the stack: is the container open at depth i an object? */
static inline bool level_is_object(const uint64_t *bits, size_t i)
{
    return (bits[i >> 6] >> (i & 63)) & 1;
}

/* The scalar at p (p < end, p[0] neither a bracket nor a quote): the position after it, or
 * NULL (f filled). Numbers, literals, and the NaN/Infinity extension. */
WK__JSON_HOT const uint8_t *scalar(const uint8_t *p, const uint8_t *end, unsigned flags,
                                   wk__json_fail *f)
{
    uint8_t c = *p;
    if (WK__LIKELY(c == '-' || wk__json_digit(c))) {
        if (WK__UNLIKELY(c == '-' && (flags & WK_JSON_READ_NAN_INF) && end - p > 1 &&
                         p[1] == 'I')) {
            return wk__json_word(p + 1, end, "Infinity", 8, f);
        }
        return wk__json_check_number(p, end, f);
    }
    if (c == 't' || c == 'f' || c == 'n') {
        return wk__json_literal(p, end, f);
    }
    if ((c == 'N' || c == 'I') && (flags & WK_JSON_READ_NAN_INF)) {
        return c == 'N' ? wk__json_word(p, end, "NaN", 3, f)
                        : wk__json_word(p, end, "Infinity", 8, f);
    }
    return wk__json_failed(f, WK_ERR_SYNTAX,
                           c == ']' || c == '}' ? "value expected before closing bracket"
                           : (c == 'N' || c == 'I')
                               ? "unexpected character (NaN/Infinity are not JSON)"
                               : "unexpected character where a value should start",
                           p);
}

/* The string whose opening quote is at p: the position after its closing quote, or NULL
 * (f filled). Short plain strings (most keys and values) in one step. */
WK__JSON_HOT const uint8_t *string(const uint8_t *p, const uint8_t *end, wk__json_fail *f)
{
    int k = wk__json_short_plain(p + 1, end);
    if (WK__LIKELY(k >= 0)) {
        return p + k + 2;
    }
    const uint8_t *esc;
    const uint8_t *close = wk__json_scan_string(p + 1 + (k == -2 ? 16 : 0), end, &esc, f);
    if (close == NULL || (WK__UNLIKELY(esc != NULL) && !wk__json_check_escapes(esc, close, f))) {
        return NULL;
    }
    return close + 1;
}

WK_API wk_status wk_json_validate(const void *data, size_t len, const wk_read_opts *opts,
                                  size_t *consumed, wk_error *err)
{
    unsigned flags = opts != NULL ? opts->flags : 0;
    size_t max_depth =
        opts != NULL && opts->max_depth != 0 ? opts->max_depth : WK_JSON_DEFAULT_MAX_DEPTH;
    const uint8_t *start = data;
    const uint8_t *p = start;
    const uint8_t *end = len != 0 ? start + len : start; /* no offset on a NULL `data` */
    wk__json_fail f = {WK_OK, NULL, NULL};
    uint64_t inline_bits[INLINE_WORDS];
    wk__stack stack;
    wk__stack_init(&stack, inline_bits, INLINE_WORDS, sizeof(uint64_t),
                   opts != NULL ? opts->alloc : NULL);
    uint64_t *bits = inline_bits;
    size_t depth = 0;
    bool object = false; /* the innermost open container is an object */
    uint8_t c;

    if (len >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) {
        if (!(flags & WK_JSON_READ_ALLOW_BOM)) {
            wk__json_failed(&f, WK_ERR_SYNTAX,
                            "byte order mark before JSON (not allowed by default)", p);
            goto fail;
        }
        p += 3;
    }
    p = wk__json_skip_ws(p, end);
    if (p == end) {
        wk__json_failed(&f, WK_ERR_TRUNCATED, "no JSON value in the input", p);
        goto fail;
    }

    c = *p;
    if (c != '{' && c != '[') {
        /* a scalar document: the loop below only sees values inside containers */
        p = c == '"' ? string(p, end, &f) : scalar(p, end, flags, &f);
        if (p == NULL) {
            goto fail;
        }
        goto done;
    }
    goto open;

value:
    /* p is at the first byte of a value inside a container (not at the end). */
    c = *p;
    if (c == '"') {
        p = string(p, end, &f);
        if (p == NULL) {
            goto fail;
        }
        goto after_value;
    }
    if (c != '{' && c != '[') {
        p = scalar(p, end, flags, &f);
        if (p == NULL) {
            goto fail;
        }
        goto after_value;
    }

open:
    /* p is at '{' or '['. */
    if (depth >= max_depth) {
        wk__json_failed(&f, WK_ERR_DEPTH, "nesting deeper than the limit", p);
        goto fail;
    }
    if (WK__UNLIKELY((depth >> 6) == stack.cap)) {
        if (!wk__stack_grow(&stack, stack.cap, max_depth / 64 + 1)) {
            wk__json_failed(&f, WK_ERR_NOMEM, "out of memory for the nesting stack", p);
            goto fail;
        }
        bits = stack.mem;
    }
    object = c == '{';
    {
        uint64_t bit = 1ull << (depth & 63);
        bits[depth >> 6] = object ? bits[depth >> 6] | bit : bits[depth >> 6] & ~bit;
    }
    depth++;
    p = wk__json_skip_ws_indent(p + 1, end);
    if (WK__UNLIKELY(p == end)) {
        wk__json_failed(&f, WK_ERR_TRUNCATED,
                        object ? "input ends inside an object" : "input ends inside an array", p);
        goto fail;
    }
    if (*p == (object ? '}' : ']')) {
        p++;
        goto close; /* empty */
    }
    if (object) {
        goto key;
    }
    goto value;

after_value:
    /* inside a container (depth >= 1): a ',' or the closing bracket is due; a ',' right after
     * the value is the common case and skips the whitespace step */
    if (WK__LIKELY(p < end && *p == ',')) {
        goto comma;
    }
    p = wk__json_skip_ws_indent(p, end);
    if (WK__UNLIKELY(p == end)) {
        wk__json_failed(&f, WK_ERR_TRUNCATED,
                        object ? "input ends inside an object" : "input ends inside an array", p);
        goto fail;
    }
    c = *p;
    if (c == ',') {
    comma:
        p = wk__json_skip_ws_indent(p + 1, end);
        if (object) {
            goto key;
        }
        if (WK__UNLIKELY(p == end)) {
            wk__json_failed(&f, WK_ERR_TRUNCATED, "input ends inside an array", p);
            goto fail;
        }
        if (WK__UNLIKELY(*p == ']')) {
            wk__json_failed(&f, WK_ERR_SYNTAX, "trailing comma in array", p);
            goto fail;
        }
        goto value;
    }
    if (c != (object ? '}' : ']')) {
        wk__json_failed(&f, WK_ERR_SYNTAX,
                        object ? "',' or '}' expected in object" : "',' or ']' expected in array",
                        p);
        goto fail;
    }
    p++;

close:
    /* The container at depth - 1 has just closed. */
    depth--;
    if (depth == 0) {
        goto done;
    }
    object = level_is_object(bits, depth - 1);
    goto after_value;

key:
    if (WK__UNLIKELY(p == end)) {
        wk__json_failed(&f, WK_ERR_TRUNCATED, "input ends inside an object", p);
        goto fail;
    }
    if (WK__UNLIKELY(*p != '"')) {
        wk__json_failed(&f, WK_ERR_SYNTAX,
                        *p == '}' ? "trailing comma in object" : "object key must be a string", p);
        goto fail;
    }
    p = string(p, end, &f);
    if (p == NULL) {
        goto fail;
    }
    if (WK__LIKELY(end - p > 2 && *p == ':')) {
        /* ':' and at most one space before the value (compact and indented text) without the
         * whitespace step; p stays before `end` */
        p += 1 + (p[1] == ' ');
        if (WK__LIKELY(*p > ' ')) {
            goto value;
        }
    } else if (WK__LIKELY(p < end && *p == ':')) {
        p++;
    } else {
        p = wk__json_skip_ws(p, end);
        if (p == end) {
            wk__json_failed(&f, WK_ERR_TRUNCATED, "input ends after an object key", p);
            goto fail;
        }
        if (*p != ':') {
            wk__json_failed(&f, WK_ERR_SYNTAX, "':' expected after object key", p);
            goto fail;
        }
        p++;
    }
    p = wk__json_skip_ws(p, end);
    if (WK__UNLIKELY(p == end)) {
        wk__json_failed(&f, WK_ERR_TRUNCATED, "input ends where a value should start", p);
        goto fail;
    }
    goto value;

done:
    p = wk__json_skip_ws(p, end);
    if (p != end && !(flags & (WK_JSON_READ_ALLOW_TRAILING | WK_JSON_READ_MULTI))) {
        wk__json_failed(&f, WK_ERR_TRAILING, "content after the JSON value", p);
        goto fail;
    }
    wk__stack_free(&stack);
    if (consumed != NULL) {
        *consumed = (size_t)(p - start);
    }
    return wk_error_set(err, WK_OK, (size_t)(p - start), NULL);

fail:
    wk__stack_free(&stack);
    return wk_error_set(err, f.st, (size_t)(f.at - start), f.msg);
}
