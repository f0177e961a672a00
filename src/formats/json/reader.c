/*
 * The JSON event reader: a cursor over the input that yields one event per call
 * (wk_json_reader_next) and so plugs into anything that takes a wk_source.
 *
 * State is a small enum plus one bit per open container (object or array), so nesting costs
 * no recursion and 512 levels fit inline; deeper limits allocate the bit stack once. Strings
 * without escapes are views into the input; escaped ones are decoded into the caller's arena
 * (or a scratch buffer reused by the next call). The lexer is shared with the fused tree
 * parser (lex.h), so both accept exactly the same language.
 * Flow: bytes -> the lexer (lex.h, lex_scan.h) -> this reader's step (reader_step, with
 * next_general for everything unusual) -> one event per call -> the caller, or through
 * wk_source any sink (a writer, a tree builder, the schema decoder); the typed reads
 * (wk_json_reader_key, _int, ...) take the same path without an event where they can.
 */
#include <string.h>

#include "formats/json/lex.h"
#include "formats/json/reader_run.h"
#include "wirekit/json.h"

/* The states are json.h's WK__JR_* values (the inline typed reads test them). */
enum {
    ST_TOP = WK__JR_TOP,             /* a top-level value may start */
    ST_VALUE = WK__JR_VALUE,         /* a key's value must start (after ':'; after ',' in an
                                      * array the general step reads the value at once, so
                                      * this state is always in an object) */
    ST_ARR_FIRST = WK__JR_ARR_FIRST, /* after '[' */
    ST_OBJ_FIRST = WK__JR_OBJ_FIRST, /* after '{' */
    ST_AFTER_OBJ = WK__JR_AFTER_OBJ, /* after a value inside an object */
    ST_AFTER_ARR = WK__JR_AFTER_ARR, /* after a value inside an array (the two: no look at
                                      * the nesting stack) */
    ST_DONE = WK__JR_DONE,           /* input used up */
    ST_FAILED = WK__JR_FAILED        /* an error is latched (r->err): next() returns it
                                      * without another look */
};


/* wk_json_reader_init (json.h, inline) with a byte order mark at the start of the input:
 * skipped when allowed, else latched as the first error. */
WK_API void wk_json_reader_init_bom(wk_json_reader *r)
{
    if (r->flags & WK_JSON_READ_ALLOW_BOM) {
        r->p += 3;
    } else {
        r->err.code = WK_ERR_SYNTAX;
        r->err.offset = 0;
        r->err.msg = "byte order mark before JSON (not allowed by default)";
        r->state = ST_FAILED;
    }
}

/* Frees what r allocated (the scratch buffer, a nesting stack beyond 512 levels); r may be
 * initialized again. Views into the input stay valid; scratch strings do not. */
WK_API void wk_json_reader_free_slow(wk_json_reader *r)
{
    if (r->scratch.data != NULL) {
        wk_buf_free(&r->scratch);
    }
    if (r->stack != r->inline_stack) {
        wk_free(r->alloc, r->stack, ((size_t)r->max_depth / 64 + 1) * sizeof(uint64_t));
    }
    r->stack = r->inline_stack;
}

/* Whitespace before a token: none in one compare inline, the lexer's skip out of line (its
 * wide steps would otherwise take registers from next()'s common path). */
__attribute__((noinline)) static const uint8_t *skip_ws_slow(const uint8_t *p, const uint8_t *end)
{
    return wk__json_skip_ws(p, end);
}

/* The first byte at or after p that is not whitespace (or end). */
WK__JSON_HOT const uint8_t *skip_ws(const uint8_t *p, const uint8_t *end)
{
    if (WK__LIKELY(p < end && *p > ' ')) {
        return p;
    }
    return skip_ws_slow(p, end);
}

/* Latches the error (st, the static msg, the offset of `at`) and returns st; every later
 * call returns it without another look (ST_FAILED). */
static wk_status fail(wk_json_reader *r, wk_status st, const char *msg, const uint8_t *at)
{
    r->err.code = st;
    r->err.msg = msg;
    r->err.offset = (size_t)(at - r->start);
    r->state = ST_FAILED;
    return st;
}

/* fail() with what the lexer reported in f. */
static wk_status fail_lex(wk_json_reader *r, const wk__json_fail *f)
{
    return fail(r, f->st, f->msg, f->at);
}

static wk_status push_slow(wk_json_reader *r, bool object);

/* Opens a container: one bit on the nesting stack. Inline while the inline stack has room. */
WK__JSON_HOT wk_status push(wk_json_reader *r, bool object)
{
    uint32_t d = r->depth;
    if (WK__LIKELY(d < 512 && d < r->max_depth)) {
        uint64_t bit = 1ull << (d & 63);
        if (object) {
            r->stack[d >> 6] |= bit;
        } else {
            r->stack[d >> 6] &= ~bit;
        }
        r->depth = d + 1;
        return WK_OK;
    }
    return push_slow(r, object);
}

/* push() at 512 levels and deeper, or at the limit. */
__attribute__((noinline)) static wk_status push_slow(wk_json_reader *r, bool object)
{
    if (r->depth >= r->max_depth) {
        return fail(r, WK_ERR_DEPTH, "nesting deeper than the limit", r->p);
    }
    /* the first level past the inline 512: a heap stack for every level the limit allows,
     * allocated once (the limit is known), the inline bits copied into it */
    uint32_t d = r->depth;
    if (d >= 512 && r->stack == r->inline_stack) {
        size_t words = (size_t)r->max_depth / 64 + 1;
        uint64_t *s = wk_alloc(r->alloc, words * sizeof(uint64_t));
        if (s == NULL) {
            return fail(r, WK_ERR_NOMEM, "out of memory for the nesting stack", r->p);
        }
        memcpy(s, r->inline_stack, sizeof r->inline_stack);
        r->stack = s;
    }
    uint64_t bit = 1ull << (d & 63);
    if (object) {
        r->stack[d >> 6] |= bit;
    } else {
        r->stack[d >> 6] &= ~bit;
    }
    r->depth = d + 1;
    return WK_OK;
}

/* Is the innermost open container (r->depth > 0) an object? */
static bool top_is_object(const wk_json_reader *r)
{
    uint32_t d = r->depth - 1;
    return (r->stack[d >> 6] >> (d & 63)) & 1;
}

/* A value (scalar or whole container) just ended. */
static void value_done(wk_json_reader *r)
{
    if (r->depth == 0) {
        r->values++;
        r->state = ST_TOP;
    } else {
        r->state = top_is_object(r) ? ST_AFTER_OBJ : ST_AFTER_ARR;
    }
}

static wk_status read_string_slow(wk_json_reader *r, wk_event *ev, size_t plain);

/* wk__json_short_plain's answer k for a string that is not short and plain: how many bytes of
 * it are known plain (16 for -2), so a scan may start after them. */
static inline size_t known_plain(int k)
{
    return k == -2 ? 16 : 0;
}

/* A short plain key at q (q[0] is its '"') with its ':' right after it: the position after the
 * ':', or NULL (anything else), with *k wk__json_short_plain's answer either way. The quote is
 * reached by the predicted jump, so the ':' and the value need not wait for the scan. */
WK__JSON_HOT const uint8_t *short_key(const uint8_t *q, const uint8_t *end, int *k)
{
    *k = wk__json_short_plain(q + 1, end);
    if (*k < 0) {
        return NULL;
    }
    const uint8_t *close = wk__advance(q + 1, (unsigned)*k);
    return end - close > 1 && close[1] == ':' ? close + 2 : NULL;
}

/* A string starts at r->p. Fast path: a short plain string (most keys and short values). */
static inline wk_status read_string(wk_json_reader *r, wk_event *ev)
{
    const uint8_t *s = r->p + 1;
    int k = wk__json_short_plain(s, r->end);
    if (k >= 0) {
        ev->type = WK_EV_STR;
        ev->v.str.ptr = (const char *)s;
        ev->v.str.len = (size_t)k;
        r->p = wk__advance(s + 1, (unsigned)k);
        return WK_OK;
    }
    return read_string_slow(r, ev, known_plain(k));
}

/* Any string: long, escaped, non-ASCII, near the end of the input. Its first `plain` bytes
 * are known to need no look (so they are inside the input). */
__attribute__((noinline)) static wk_status read_string_slow(wk_json_reader *r, wk_event *ev,
                                                            size_t plain)
{
    const uint8_t *s = r->p + 1;
    const uint8_t *esc;
    wk__json_fail f = {WK_OK, NULL, NULL};
    const uint8_t *close = wk__json_scan_string(s + plain, r->end, &esc, &f);
    if (close == NULL) {
        return fail_lex(r, &f);
    }
    ev->type = WK_EV_STR;
    /* no escape: a view into the input; else unescaped into the arena (the caller's, valid
     * as long as it) or the scratch buffer (valid until the next call). The unescaped form
     * is never longer than the escaped one, so the string's length is the room needed. */
    if (esc == NULL) {
        ev->v.str.ptr = (const char *)s;
        ev->v.str.len = (size_t)(close - s);
    } else {
        size_t cap = (size_t)(close - s);
        uint8_t *dst;
        if (r->arena != NULL) {
            dst = wk_arena_alloc(r->arena, cap, 1);
        } else {
            wk_buf_clear(&r->scratch);
            dst = wk_buf_reserve(&r->scratch, cap + 1) == WK_OK ? r->scratch.data : NULL;
        }
        if (dst == NULL) {
            return fail(r, WK_ERR_NOMEM, "out of memory for an escaped string", r->p);
        }
        size_t n = wk__json_unescape(s, esc, close, dst, &f);
        if (n == (size_t)-1) {
            return fail_lex(r, &f);
        }
        ev->v.str.ptr = (const char *)dst;
        ev->v.str.len = n;
    }
    r->p = close + 1;
    return WK_OK;
}

/* The literal word[0..n) (true, false, null) at r->p, consumed; else a syntax error, or
 * WK_ERR_TRUNCATED when the input ends inside a correct prefix of it. */
static wk_status read_literal(wk_json_reader *r, const char *word, size_t n)
{
    size_t left = (size_t)(r->end - r->p);
    if (left >= 4 && n == 4) {
        uint32_t a, b;
        memcpy(&a, r->p, 4);
        memcpy(&b, word, 4);
        if (a == b) {
            r->p += 4;
            return WK_OK;
        }
    }
    size_t cmp = left < n ? left : n;
    if (memcmp(r->p, word, cmp) != 0) {
        return fail(r, WK_ERR_SYNTAX, "invalid literal", r->p);
    }
    if (left < n) {
        return fail(r, WK_ERR_TRUNCATED, "input ends inside a literal", r->end);
    }
    r->p += n;
    return WK_OK;
}

/* A value other than a container or a string at r->p: a number, a literal, or not a value.
 * Out of line, so the number lexer's registers do not weigh on next()'s common path. */
__attribute__((noinline)) static wk_status read_scalar(wk_json_reader *r, wk_event *ev)
{
    const uint8_t *at = r->p;
    uint8_t c = *at;
    wk_status st;
    switch (c) {
    case 't': /* true, false, null: the lexer's literal check */
    case 'f':
    case 'n': {
        wk__json_fail f = {WK_OK, NULL, NULL};
        const uint8_t *e = wk__json_literal(r->p, r->end, &f);
        if (e == NULL) {
            return fail_lex(r, &f);
        }
        r->p = e;
        ev->type = c == 'n' ? WK_EV_NIL : WK_EV_BOOL;
        ev->v.b = c == 't';
        st = WK_OK;
        break;
    }
    case 'N': /* NaN and Infinity: only with the extension flag */
    case 'I':
        if (!(r->flags & WK_JSON_READ_NAN_INF)) {
            return fail(r, WK_ERR_SYNTAX, "unexpected character (NaN/Infinity are not JSON)",
                        r->p);
        }
        st = c == 'N' ? read_literal(r, "NaN", 3) : read_literal(r, "Infinity", 8);
        ev->type = WK_EV_FLOAT;
        ev->f32 = false;
        ev->v.f = c == 'N' ? __builtin_nan("") : __builtin_inf();
        break;
    default:
        if (c == '-' || wk__json_digit(c)) {
            if (c == '-' && (r->flags & WK_JSON_READ_NAN_INF) && r->end - r->p > 1 &&
                r->p[1] == 'I') {
                r->p++;
                st = read_literal(r, "Infinity", 8);
                ev->type = WK_EV_FLOAT;
                ev->f32 = false;
                ev->v.f = -__builtin_inf();
                break;
            }
            /* a number: the lexer's rule (lex.h), as an integer when it fits, else a
             * correctly rounded double, or its text with WK_JSON_READ_RAW_NUMBERS */
            wk__json_num num = {0}; /* zeroed: GCC 12 -O2 cannot see every kind sets v */
            wk__json_fail f = {WK_OK, NULL, NULL};
            const uint8_t *e = wk__json_lex_number(r->p, r->end,
                                                   (r->flags & WK_JSON_READ_RAW_NUMBERS) != 0,
                                                   &num, &f);
            if (e == NULL) {
                return fail_lex(r, &f);
            }
            if (WK__UNLIKELY(e == r->end) && (r->flags & WK__JSON_READ_MORE)) {
                return WK_ERR_AGAIN; /* the number may go on in the next chunk */
            }
            switch (num.kind) {
            case WK__NUM_UINT:
                ev->type = WK_EV_UINT;
                ev->v.u = num.v.u;
                break;
            case WK__NUM_INT:
                ev->type = WK_EV_INT;
                ev->v.i = num.v.i;
                break;
            case WK__NUM_DOUBLE:
                ev->type = WK_EV_FLOAT;
                ev->f32 = false;
                ev->v.f = num.v.d;
                break;
            default:
                ev->type = WK_EV_RAWNUM;
                ev->v.str.ptr = (const char *)r->p;
                ev->v.str.len = (size_t)(e - r->p);
                break;
            }
            r->p = e;
            st = WK_OK;
            break;
        }
        if (c == ']' || c == '}') {
            return fail(r, WK_ERR_SYNTAX, "value expected before closing bracket", r->p);
        }
        return fail(r, WK_ERR_SYNTAX, "unexpected character where a value should start", r->p);
    }
    if (st != WK_OK) {
        return st;
    }
    if (WK__UNLIKELY(r->p == r->end) && (r->flags & WK__JSON_READ_MORE) &&
        ev->type == WK_EV_FLOAT) {
        r->p = at; /* NaN, Infinity, -Infinity: held back as a number is */
        return WK_ERR_AGAIN;
    }
    value_done(r);
    return WK_OK;
}

/* A value starts at r->p (whitespace skipped, not at the end). Inlined into next(), its
 * one call site there (containers and short plain strings stay on the inlined path); the
 * typed reads call the out-of-line copy, read_value. */
WK__JSON_HOT wk_status read_value_inl(wk_json_reader *r, wk_event *ev)
{
    uint8_t c = *r->p;
    if (c == '"') {
        wk_status st = read_string(r, ev);
        if (st != WK_OK) {
            return st;
        }
        value_done(r);
        return WK_OK;
    }
    if (c == '{' || c == '[') {
        wk_status st = push(r, c == '{');
        if (st != WK_OK) {
            return st;
        }
        r->p++;
        ev->type = c == '{' ? WK_EV_MAP : WK_EV_ARRAY;
        ev->v.count = WK_COUNT_UNKNOWN;
        r->state = c == '{' ? ST_OBJ_FIRST : ST_ARR_FIRST;
        return WK_OK;
    }
    return read_scalar(r, ev);
}

/* read_value_inl out of line: for the typed reads and value_fast's slow cases. */
__attribute__((noinline)) static wk_status read_value(wk_json_reader *r, wk_event *ev)
{
    return read_value_inl(r, ev);
}

/* An object key starts at r->p (whitespace skipped). Reads it and the ':' after it. */
WK__JSON_HOT wk_status read_key(wk_json_reader *r, wk_event *ev)
{
    if (r->p == r->end) {
        return fail(r, WK_ERR_TRUNCATED, "input ends inside an object", r->p);
    }
    if (*r->p != '"') {
        return fail(r, WK_ERR_SYNTAX,
                    *r->p == '}' ? "trailing comma in object" : "object key must be a string",
                    r->p);
    }
    /* the key is read as any string (an event of type WK_EV_STR), then whitespace and the
     * ':'; the key's value is then due (ST_VALUE) */
    wk_status st = read_string(r, ev);
    if (st != WK_OK) {
        return st;
    }
    r->p = skip_ws(r->p, r->end);
    if (r->p == r->end) {
        return fail(r, WK_ERR_TRUNCATED, "input ends after an object key", r->p);
    }
    if (*r->p != ':') {
        return fail(r, WK_ERR_SYNTAX, "':' expected after object key", r->p);
    }
    r->p++;
    r->state = ST_VALUE;
    return WK_OK;
}

/* read_key out of line: key_fast's slow case, so that read_key is inlined only into
 * next_general. */
__attribute__((noinline)) static wk_status read_key_call(wk_json_reader *r, wk_event *ev)
{
    return read_key(r, ev);
}

/* The closing bracket at r->p: consumed, the container's WK_EV_END in *ev, and the state of
 * what may follow it. */
static wk_status close_container(wk_json_reader *r, wk_event *ev)
{
    r->p++;
    r->depth--;
    ev->type = WK_EV_END;
    value_done(r);
    return WK_OK;
}

/* The event reader's general step: any input, every check and message. The states are
 * tested most frequent first rather than through a jump table, and each of read_value,
 * read_key and close_container has one call site, so they are inlined once. */
__attribute__((noinline)) static wk_status next_general(wk_json_reader *r, wk_event *ev)
{
    uint32_t state = r->state;
    const uint8_t *end = r->end;
    /* after a value inside a container: a ',' and the next key or element, or the closing
     * bracket of that container (a trailing comma is an error) */
    if (WK__LIKELY(state == ST_AFTER_OBJ || state == ST_AFTER_ARR)) {
        bool object = state == ST_AFTER_OBJ;
        const uint8_t *p = skip_ws(r->p, end);
        r->p = p;
        if (p == end) {
            return fail(r, WK_ERR_TRUNCATED,
                        object ? "input ends inside an object" : "input ends inside an array",
                        p);
        }
        uint8_t c = *p;
        if (c == ',') {
            p = skip_ws(p + 1, end);
            r->p = p;
            if (object) {
                goto key;
            }
            if (p == end) {
                return fail(r, WK_ERR_TRUNCATED, "input ends inside an array", p);
            }
            if (*p == ']') {
                return fail(r, WK_ERR_SYNTAX, "trailing comma in array", p);
            }
            goto value;
        }
        if (c == (object ? '}' : ']')) {
            goto close;
        }
        return fail(r, WK_ERR_SYNTAX,
                    object ? "',' or '}' expected in object" : "',' or ']' expected in array", p);
    }
    /* after a key's ':': its value */
    if (WK__LIKELY(state == ST_VALUE)) {
        const uint8_t *p = skip_ws(r->p, end);
        r->p = p;
        if (p == end) {
            return fail(r, WK_ERR_TRUNCATED, "input ends where a value should start", p);
        }
        goto value;
    }
    /* just inside '{' or '[': the first key or element, or an empty container's close */
    if (state == ST_OBJ_FIRST) {
        const uint8_t *p = skip_ws(r->p, end);
        r->p = p;
        if (p < end && *p == '}') {
            goto close;
        }
        goto key;
    }
    if (state == ST_ARR_FIRST) {
        const uint8_t *p = skip_ws(r->p, end);
        r->p = p;
        if (p == end) {
            return fail(r, WK_ERR_TRUNCATED, "input ends inside an array", p);
        }
        if (*p == ']') {
            goto close;
        }
        goto value;
    }
    /* at the top level: the first value; after it, the end of the input (WK_ERR_EOF, or
     * WK_ERR_TRAILING for anything but whitespace) unless WK_JSON_READ_MULTI reads a stream
     * of values, which must then be separated by whitespace */
    if (state == ST_TOP) {
        const uint8_t *before = r->p;
        const uint8_t *p = skip_ws(before, end);
        r->p = p;
        if (r->values > 0 && (r->flags & WK_JSON_READ_MULTI) && p == before && p != end) {
            return fail(r, WK_ERR_SYNTAX, "top-level values must be separated by whitespace", p);
        }
        if (r->values > 0 && !(r->flags & WK_JSON_READ_MULTI)) {
            r->state = ST_DONE;
            if (!(r->flags & WK_JSON_READ_ALLOW_TRAILING) && p != end) {
                return fail(r, WK_ERR_TRAILING, "content after the JSON value", p);
            }
            return WK_ERR_EOF;
        }
        if (p == end) {
            if (r->values == 0 && !(r->flags & WK_JSON_READ_MULTI)) {
                return fail(r, WK_ERR_TRUNCATED, "no JSON value in the input", p);
            }
            r->state = ST_DONE;
            return WK_ERR_EOF;
        }
        goto value;
    }
    if (state == ST_FAILED) {
        return r->err.code;
    }
    r->p = skip_ws(r->p, end); /* ST_DONE: as before, the cursor passes whitespace */
    return WK_ERR_EOF;
    /* the three ways on, each with this one call site so that they are inlined once */
value:
    return read_value_inl(r, ev);
key:
    return read_key(r, ev);
close:
    return close_container(r, ev);
}

/* A string value at r->p beyond read_string's fast path, then the value's end. */
__attribute__((noinline)) static wk_status string_value_slow(wk_json_reader *r, wk_event *ev,
                                                             size_t plain)
{
    wk_status st = read_string_slow(r, ev, plain);
    if (st == WK_OK) {
        value_done(r);
    }
    return st;
}

/* The value at p (no whitespace before it, p < end), read as next_general reads it: a short
 * plain string, a container, an integer or a literal inline, anything else by a tail call
 * (r->p = p first). `after` is the state after a scalar: the value is inside a container of
 * that kind (a constant at each call site), or at the top level, where only containers come
 * here. */
WK__JSON_HOT wk_status value_fast(wk_json_reader *r, wk_event *ev, const uint8_t *p,
                                  const uint8_t *end, uint32_t after)
{
    uint8_t c = *p;
    /* a string: in one step when short and plain */
    if (c == '"') {
        int k = wk__json_short_plain(p + 1, end);
        if (k < 0) {
            r->p = p;
            return string_value_slow(r, ev, known_plain(k));
        }
        ev->type = WK_EV_STR;
        ev->v.str.ptr = (const char *)p + 1;
        ev->v.str.len = (size_t)k;
        r->p = wk__advance(p + 2, (unsigned)k);
        r->state = after;
        return WK_OK;
    }
    /* a container: one bit on the inline nesting stack (deeper ones: read_value) */
    uint32_t d = r->depth;
    if ((c == '{' || c == '[') && d < 512 && d < r->max_depth) {
        uint64_t bit = 1ull << (d & 63);
        if (c == '{') {
            r->stack[d >> 6] |= bit;
            ev->type = WK_EV_MAP;
            r->state = ST_OBJ_FIRST;
        } else {
            r->stack[d >> 6] &= ~bit;
            ev->type = WK_EV_ARRAY;
            r->state = ST_ARR_FIRST;
        }
        r->depth = d + 1;
        ev->v.count = WK_COUNT_UNKNOWN;
        r->p = p + 1;
        return WK_OK;
    }
    /* a short integer (wk__json_word_int: whole within the next 16 bytes), or a literal,
     * inline */
    if ((wk__json_digit(c) || c == '-') && !(r->flags & WK_JSON_READ_RAW_NUMBERS)) {
        wk__json_num num;
        const uint8_t *e = wk__json_word_int(p, end, &num);
        if (WK__LIKELY(e != NULL)) {
            ev->type = num.kind == WK__NUM_UINT ? WK_EV_UINT : WK_EV_INT;
            ev->v.u = num.v.u;
            r->p = e;
            r->state = after;
            return WK_OK;
        }
    } else if ((c == 't' || c == 'f' || c == 'n') && end - p >= 5) {
        wk__json_fail f;
        const uint8_t *e = wk__json_literal(p, end, &f);
        if (WK__LIKELY(e != NULL)) {
            ev->type = c == 'n' ? WK_EV_NIL : WK_EV_BOOL;
            ev->v.b = c == 't';
            r->p = e;
            r->state = after;
            return WK_OK;
        }
    }
    r->p = p;
    return c == '{' || c == '[' ? read_value(r, ev) : read_scalar(r, ev);
}

/* A key at r->p longer than the short path, whose first 16 bytes are plain: a plain key with
 * its ':' right after it here, anything else by read_key from the start. */
__attribute__((noinline)) static wk_status key_long(wk_json_reader *r, wk_event *ev)
{
    const uint8_t *s = r->p + 1;
    const uint8_t *esc;
    wk__json_fail f = {WK_OK, NULL, NULL};
    const uint8_t *close = wk__json_scan_string(s + 16, r->end, &esc, &f);
    if (close != NULL && esc == NULL && r->end - close > 1 && close[1] == ':') {
        ev->type = WK_EV_STR;
        ev->v.str.ptr = (const char *)s;
        ev->v.str.len = (size_t)(close - s);
        r->p = close + 2;
        r->state = ST_VALUE;
        return WK_OK;
    }
    return read_key(r, ev);
}

/* The key at p (p[0] is '"'), read as read_key reads it: a short plain key with its ':' right
 * after it inline, anything else by a tail call (r->p = p first). */
WK__JSON_HOT wk_status key_fast(wk_json_reader *r, wk_event *ev, const uint8_t *p,
                                const uint8_t *end)
{
    int k;
    const uint8_t *after = short_key(p, end, &k);
    if (after != NULL) {
        ev->type = WK_EV_STR;
        ev->v.str.ptr = (const char *)p + 1;
        ev->v.str.len = (size_t)k;
        r->p = after;
        r->state = ST_VALUE;
        return WK_OK;
    }
    r->p = p;
    return k == -2 ? key_long(r, ev) : read_key_call(r, ev);
}

/* The END of the container at p (p[0] is its closing bracket; d: the depth after it). */
WK__JSON_HOT wk_status close_fast(wk_json_reader *r, wk_event *ev, const uint8_t *p, uint32_t d)
{
    r->p = p + 1;
    r->depth = d;
    ev->type = WK_EV_END;
    value_done(r);
    return WK_OK;
}

/* The event reader's step. Compact input (no whitespace between tokens) in the common states
 * is read here without touching the reader before the event is whole; everything else, and
 * every failure, goes to next_general by a tail call from an unchanged reader. All calls here
 * are tail calls, so the common path saves no registers. A latched error is a state of its
 * own (ST_FAILED), so it needs no test here. */
WK__JSON_HOT wk_status reader_step(wk_json_reader *r, wk_event *ev)
{
    uint32_t state = r->state;
    const uint8_t *p = r->p;
    const uint8_t *end = r->end;
    /* the next byte is not whitespace: the compact forms, most frequent state first */
    if (WK__LIKELY(p < end && *p > ' ')) {
        uint8_t c = *p;
        if (WK__LIKELY(state == ST_AFTER_OBJ)) {
            if (c == ',' && end - p > 1 && p[1] == '"') {
                return key_fast(r, ev, p + 1, end);
            }
            if (c == '}') {
                return close_fast(r, ev, p, r->depth - 1);
            }
        } else if (WK__LIKELY(state == ST_VALUE)) {
            return value_fast(r, ev, p, end, ST_AFTER_OBJ);
        } else if (state == ST_AFTER_ARR) {
            if (c == ',' && end - p > 1 && p[1] > ' ' && p[1] != ']') {
                return value_fast(r, ev, p + 1, end, ST_AFTER_ARR);
            }
            if (c == ']') {
                return close_fast(r, ev, p, r->depth - 1);
            }
        } else if (state == ST_OBJ_FIRST) {
            if (c == '"') {
                return key_fast(r, ev, p, end);
            }
            if (c == '}') {
                return close_fast(r, ev, p, r->depth - 1);
            }
        } else if (state == ST_ARR_FIRST) {
            return c != ']' ? value_fast(r, ev, p, end, ST_AFTER_ARR)
                            : close_fast(r, ev, p, r->depth - 1);
        }
    } else if (state == ST_TOP && p < end && *p == '\n' && end - p > 1 &&
               (p[1] == '{' || p[1] == '[') && (r->flags & WK_JSON_READ_MULTI)) {
        return value_fast(r, ev, p + 1, end, ST_TOP); /* the next line of JSON Lines */
    }
    return next_general(r, ev);
}

/* The next event into *ev (wirekit/json.h): WK_OK, WK_ERR_EOF after the last value, or the
 * latched error. */
WK_API wk_status wk_json_reader_next(wk_json_reader *r, wk_event *ev)
{
    return reader_step(r, ev);
}

/* The stream unpacker's batch (reader_run.h has the contract): the step and the sink's call
 * in one loop, so the step stays inlined here. */
wk_status wk__json_reader_run(wk_json_reader *r, const wk_sink *sink, bool one, bool more,
                              wk__json_run *out)
{
    wk_status (*event)(void *, const wk_event *) = sink->event;
    void *self = sink->self;
    uint32_t stop = one ? UINT32_MAX : 0; /* the deepest nesting after which a run ends */
    wk_status st;
    if (more) {
        r->flags |= WK__JSON_READ_MORE;
    }
    /* one step and one sink call per turn; where each step started is kept, so that the
     * unpacker can undo a step that stopped at a cut token (out->save_*) */
    for (;;) {
        wk_event ev;
        const uint8_t *save_p = r->p;
        uint32_t save_state = r->state;
        st = reader_step(r, &ev);
        if (WK__UNLIKELY(st != WK_OK)) {
            out->save_p = save_p;
            out->save_state = save_state;
            break;
        }
        st = event(self, &ev);
        if (WK__UNLIKELY(st != WK_OK)) {
            out->sink_failed = true;
            break;
        }
        /* back at the top level: a whole value has been sent (with `one`, every event ends
         * the run) */
        if (r->depth <= stop) {
            break;
        }
    }
    r->flags &= ~WK__JSON_READ_MORE;
    return st;
}

/* The wk_source adapter: self is the wk_json_reader (wk_json_reader_source). */
static wk_status source_next(void *self, wk_event *ev)
{
    return wk_json_reader_next(self, ev);
}

static size_t source_offset(const void *self)
{
    return wk_json_reader_offset(self);
}

static wk_status source_error(const void *self, wk_error *err)
{
    return wk_json_reader_error(self, err);
}

/* Fills src so that it reads r's events; r must outlive src. */
WK_API void wk_json_reader_source(wk_json_reader *r, wk_source *src)
{
    src->next = source_next;
    src->offset = source_offset;
    src->error = source_error;
    src->self = r;
}

/* The latched error (WK_OK if none) into err, when not NULL; returns its status. */
WK_API wk_status wk_json_reader_error(const wk_json_reader *r, wk_error *err)
{
    if (err != NULL) {
        *err = r->err;
    }
    return r->err.code;
}

/* The byte offset of the next unread byte. */
WK_API size_t wk_json_reader_offset(const wk_json_reader *r)
{
    return (size_t)(r->p - r->start);
}

/* The 1-based line and column of byte `offset` (clamped to len) in data: for messages. */
WK_API void wk_json_line_col(const void *data, size_t len, size_t offset, size_t *line,
                             size_t *col)
{
    const uint8_t *s = data;
    if (offset > len) {
        offset = len;
    }
    size_t ln = 1;
    size_t last_nl = 0;
    bool seen = false;
    for (size_t i = 0; i < offset; i++) {
        if (s[i] == '\n') {
            ln++;
            last_nl = i;
            seen = true;
        }
    }
    *line = ln;
    *col = seen ? offset - last_nl : offset + 1;
}

/* ---- typed reads -------------------------------------------------------------------------- */

/* Where a typed read started, to put back a value of the wrong type. */
typedef struct rsave {
    const uint8_t *p;
    uint32_t state, depth, values;
} rsave;

/* Reads the next event for a typed call: WK_OK, WK_ERR_STATE at the END of the current
 * container (not consumed: wk_json_reader_end closes it), WK_ERR_EOF after the last
 * top-level value, or a latched error. Every typed call is defined as "read the event next()
 * would read" and falls back here from its fast path for compact input, so the fast paths
 * only have to be right, not complete; the tests walk documents (and every prefix) with
 * next() and the typed calls side by side, and try every typed call at every error. */
__attribute__((noinline)) static wk_status typed_next(wk_json_reader *r, wk_event *ev,
                                                      rsave *sv)
{
    if (r->err.code != WK_OK) {
        return r->err.code;
    }
    sv->p = r->p;
    sv->state = r->state;
    sv->depth = r->depth;
    sv->values = r->values;
    wk_status st;
    if (r->state == ST_VALUE && r->p < r->end && *r->p > ' ') {
        st = read_value(r, ev); /* what next() does here, without the state switch */
    } else {
        st = wk_json_reader_next(r, ev);
    }
    if (st == WK_OK && ev->type == WK_EV_END) {
        r->p = sv->p; /* put the END back (unread(), which is defined below) */
        r->state = sv->state;
        r->depth = sv->depth;
        r->values = sv->values;
        return WK_ERR_STATE;
    }
    return st;
}

/* Puts the value just read back (a typed call of the wrong type); returns `st`. A nesting
 * stack allocated on the way stays (it holds the same bits). */
static wk_status unread(wk_json_reader *r, const rsave *sv, wk_status st)
{
    r->p = sv->p;
    r->state = sv->state;
    r->depth = sv->depth;
    r->values = sv->values;
    return st;
}

/* The next event, which must be of type `want`; otherwise nothing is consumed (WK_ERR_TYPE). */
static wk_status typed_expect(wk_json_reader *r, wk_event *ev, wk_event_type want)
{
    rsave sv;
    wk_status st = typed_next(r, ev, &sv);
    if (st == WK_OK && ev->type != want) {
        return unread(r, &sv, WK_ERR_TYPE);
    }
    return st;
}

/* The value of a key (state ST_VALUE, so inside an object) starts at r->p with byte c, no
 * whitespace before it: the fast paths below read it as read_value() + value_done() would. */
static inline bool value_next(const wk_json_reader *r, uint8_t c)
{
    return r->state == ST_VALUE && r->err.code == WK_OK && r->p < r->end && *r->p == c;
}

/* Typed read: the next value must be an object, opened (WK_ERR_TYPE otherwise, nothing
 * consumed). Compact input with room on the inline stack: the '{' read right here. */
WK_API wk_status wk_json_reader_begin_map_slow(wk_json_reader *r)
{
    const uint8_t *p = r->p;
    bool start = r->state == ST_VALUE || (r->state == ST_TOP && r->values == 0);
    if (start && r->err.code == WK_OK && p < r->end && *p == '{' && r->depth < 512 &&
        r->depth < r->max_depth) {
        uint32_t d = r->depth;
        r->stack[d >> 6] |= 1ull << (d & 63);
        r->depth = d + 1;
        r->p++;
        r->state = ST_OBJ_FIRST;
        return WK_OK;
    }
    wk_event ev;
    return typed_expect(r, &ev, WK_EV_MAP);
}

/* Typed read: the next value must be an array, opened (WK_ERR_TYPE otherwise). */
WK_API wk_status wk_json_reader_begin_array(wk_json_reader *r)
{
    wk_event ev;
    return typed_expect(r, &ev, WK_EV_ARRAY);
}

static wk_status key_slow(wk_json_reader *r, const char **s, size_t *n);

/* The '}' of the current object at r->p, read as next() reads it (close_container). */
static inline void ev_end_fast(wk_json_reader *r)
{
    r->p++;
    r->depth--;
    value_done(r);
}

/* Typed read: the next key of the current object into s[0..n) (a view into the input, or
 * the arena or scratch buffer when escaped); WK_ERR_STATE at its '}' or when no key is due. */
WK_API wk_status wk_json_reader_key_slow(wk_json_reader *r, const char **s, size_t *n)
{
    if (r->err.code != WK_OK) {
        return r->err.code;
    }
    bool due = r->state == ST_OBJ_FIRST || r->state == ST_AFTER_OBJ;
    if (!due) {
        return WK_ERR_STATE;
    }
    /* Fast path: compact input, a short plain key and its ':' (what next() does, minus the
     * general checks). */
    const uint8_t *p = r->p;
    const uint8_t *q = p + (r->state == ST_AFTER_OBJ);
    if (r->end - q >= 2 && (q == p || *p == ',') && *q == '"') {
        int k;
        const uint8_t *after = short_key(q, r->end, &k);
        if (after != NULL) {
            *s = (const char *)q + 1;
            *n = (size_t)k;
            r->p = after;
            r->state = ST_VALUE;
            return WK_OK;
        }
    }
    if (p < r->end && *p == '}') {
        return WK_ERR_STATE; /* the object's end: wk_json_reader_end consumes it */
    }
    return key_slow(r, s, n);
}

/* wk_json_reader_key beyond its fast path. */
__attribute__((noinline)) static wk_status key_slow(wk_json_reader *r, const char **s, size_t *n)
{
    const uint8_t *p = r->p;
    wk_event ev;
    wk_status st;
    if (r->state == ST_AFTER_OBJ && r->end - p >= 2 && p[0] == ',' && p[1] == '"') {
        r->p = p + 1; /* compact input: what next() does after the ',', minus the checks */
        st = read_key(r, &ev);
    } else {
        rsave sv;
        st = typed_next(r, &ev, &sv); /* WK_ERR_STATE at the '}', which stays unread */
    }
    if (st != WK_OK) {
        return st;
    }
    *s = ev.v.str.ptr;
    *n = ev.v.str.len;
    return WK_OK;
}

/* Typed read: closes the current container, which must have no element left (WK_ERR_STATE
 * otherwise, nothing consumed). */
WK_API wk_status wk_json_reader_end_slow(wk_json_reader *r)
{
    if (r->err.code != WK_OK) {
        return r->err.code;
    }
    if (r->depth == 0) {
        return WK_ERR_STATE;
    }
    const uint8_t *p = r->p;
    if ((r->state == ST_AFTER_OBJ || r->state == ST_AFTER_ARR || r->state == ST_OBJ_FIRST ||
         r->state == ST_ARR_FIRST) &&
        p < r->end && *p == (top_is_object(r) ? '}' : ']')) {
        ev_end_fast(r); /* compact input: the END right here, read as next() reads it */
        return WK_OK;
    }
    wk_event ev;
    rsave sv;
    wk_status st = typed_next(r, &ev, &sv);
    if (st == WK_ERR_STATE) {
        /* typed_next put the END back: read it for real */
        st = wk_json_reader_next(r, &ev);
        return st;
    }
    if (st == WK_OK) {
        return unread(r, &sv, WK_ERR_STATE); /* a value, not the end: elements remain */
    }
    return st;
}

/* Typed read: the next value must be a string, into s[0..n) as the key's; short plain
 * values of keys are taken in one step. */
WK_API wk_status wk_json_reader_str_slow(wk_json_reader *r, const char **s, size_t *n)
{
    if (value_next(r, '"')) {
        int k = wk__json_short_plain(r->p + 1, r->end);
        if (k >= 0) {
            *s = (const char *)r->p + 1;
            *n = (size_t)k;
            r->p = wk__advance(r->p + 2, (unsigned)k);
            r->state = ST_AFTER_OBJ; /* a key's value: inside an object */
            return WK_OK;
        }
    }
    wk_event ev;
    wk_status st = typed_expect(r, &ev, WK_EV_STR);
    if (st != WK_OK) {
        return st;
    }
    *s = ev.v.str.ptr;
    *n = ev.v.str.len;
    return WK_OK;
}

/* Fast path for a small non-negative integer value of a key (wk__json_small_uint); -1
 * otherwise. */
static inline int64_t small_uint(wk_json_reader *r)
{
    if (r->state != ST_VALUE || r->err.code != WK_OK || (r->flags & WK_JSON_READ_RAW_NUMBERS)) {
        return -1;
    }
    uint64_t v;
    const uint8_t *q = wk__json_small_uint(r->p, r->end, &v);
    if (q == NULL) {
        return -1;
    }
    r->p = q;
    r->state = ST_AFTER_OBJ; /* a key's value: inside an object */
    return (int64_t)v;
}

/* Typed read: the next value must be an integer that fits int64_t (WK_ERR_RANGE: an
 * integer that does not; WK_ERR_TYPE: not an integer; either way nothing consumed). */
WK_API wk_status wk_json_reader_int_slow(wk_json_reader *r, int64_t *v)
{
    int64_t u = small_uint(r);
    if (u >= 0) {
        *v = u;
        return WK_OK;
    }
    wk_event ev;
    rsave sv;
    wk_status st = typed_next(r, &ev, &sv);
    if (st != WK_OK) {
        return st;
    }
    if (ev.type == WK_EV_INT) {
        *v = ev.v.i;
    } else if (ev.type == WK_EV_UINT && ev.v.u <= (uint64_t)INT64_MAX) {
        *v = (int64_t)ev.v.u;
    } else {
        return unread(r, &sv, ev.type == WK_EV_UINT ? WK_ERR_RANGE : WK_ERR_TYPE);
    }
    return WK_OK;
}

/* Typed read: the next value must be a non-negative integer that fits uint64_t (WK_ERR_RANGE
 * for a negative one, WK_ERR_TYPE for another value; nothing consumed). */
WK_API wk_status wk_json_reader_uint(wk_json_reader *r, uint64_t *v)
{
    int64_t u = small_uint(r);
    if (u >= 0) {
        *v = (uint64_t)u;
        return WK_OK;
    }
    wk_event ev;
    rsave sv;
    wk_status st = typed_next(r, &ev, &sv);
    if (st != WK_OK) {
        return st;
    }
    if (ev.type != WK_EV_UINT) {
        return unread(r, &sv, ev.type == WK_EV_INT ? WK_ERR_RANGE : WK_ERR_TYPE);
    }
    *v = ev.v.u;
    return WK_OK;
}

/* Typed read: the next value must be a number; integers are converted (rounded when beyond
 * 2^53). WK_ERR_TYPE otherwise, nothing consumed. */
WK_API wk_status wk_json_reader_double(wk_json_reader *r, double *v)
{
    wk_event ev;
    rsave sv;
    wk_status st = typed_next(r, &ev, &sv);
    if (st != WK_OK) {
        return st;
    }
    if (ev.type == WK_EV_FLOAT) {
        *v = ev.v.f;
    } else if (ev.type == WK_EV_INT) {
        *v = (double)ev.v.i;
    } else if (ev.type == WK_EV_UINT) {
        *v = (double)ev.v.u;
    } else {
        return unread(r, &sv, WK_ERR_TYPE);
    }
    return WK_OK;
}

/* Typed read: the next value must be true or false (a key's value in one compare). */
WK_API wk_status wk_json_reader_bool_slow(wk_json_reader *r, bool *v)
{
    if (r->state == ST_VALUE && r->err.code == WK_OK && r->end - r->p >= 5) {
        if (memcmp(r->p, "true", 4) == 0) {
            *v = true;
            r->p += 4;
            r->state = ST_AFTER_OBJ; /* a key's value: inside an object */
            return WK_OK;
        }
        if (memcmp(r->p, "false", 5) == 0) {
            *v = false;
            r->p += 5;
            r->state = ST_AFTER_OBJ; /* a key's value: inside an object */
            return WK_OK;
        }
    }
    wk_event ev;
    wk_status st = typed_expect(r, &ev, WK_EV_BOOL);
    if (st != WK_OK) {
        return st;
    }
    *v = ev.v.b;
    return WK_OK;
}

/* Typed read: the next value must be null. */
WK_API wk_status wk_json_reader_nil(wk_json_reader *r)
{
    wk_event ev;
    return typed_expect(r, &ev, WK_EV_NIL);
}

/* Skips the next value, a whole container with everything in it (each event is still read
 * and checked). */
WK_API wk_status wk_json_reader_skip(wk_json_reader *r)
{
    wk_event ev;
    rsave sv;
    wk_status st = typed_next(r, &ev, &sv);
    if (st != WK_OK || (ev.type != WK_EV_MAP && ev.type != WK_EV_ARRAY)) {
        return st;
    }
    uint32_t base = r->depth - 1;
    while (r->depth > base) {
        st = wk_json_reader_next(r, &ev);
        if (st != WK_OK) {
            return st;
        }
    }
    return WK_OK;
}
