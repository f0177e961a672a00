/*
 * The JSON lexer shared by the event reader (reader.c) and the fused tree parser (decode.c):
 * whitespace, string scanning and unescaping, numbers, literals. Everything is static inline
 * so each parser gets its own specialised copy; the two must accept exactly the same inputs,
 * and a test compares their trees.
 *
 * Strings are scanned 16 bytes at a time with SSE2 (any x86-64) for the bytes that need a
 * look: '"', '\\', control characters and non-ASCII (checked as UTF-8 on the spot), and a
 * byte-table loop elsewhere. Escapes are decoded in a second pass over the escaped strings
 * only, once their length is known, so the destination is allocated exactly once.
 */
#ifndef WK_JSON_LEX_H
#define WK_JSON_LEX_H

#include <string.h>

#include "core/kernel.h"
#include "core/number.h"
#include "wirekit/core.h"
#include "wirekit/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* A lexer failure: status, static message, where. */
typedef struct wk__json_fail {
    wk_status st;
    const char *msg;
    const uint8_t *at;
} wk__json_fail;

static inline const uint8_t *wk__json_failed(wk__json_fail *f, wk_status st, const char *msg,
                                             const uint8_t *at)
{
    f->st = st;
    f->msg = msg;
    f->at = at;
    return NULL;
}

/* 1 for ' ', '\t', '\n', '\r'. */
static inline bool wk__json_is_ws(uint8_t c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

static inline const uint8_t *wk__json_skip_ws(const uint8_t *p, const uint8_t *end)
{
    while (p < end && *p <= ' ' && wk__json_is_ws(*p)) {
        p++;
        /* Indentation: skip runs of spaces eight at a time. */
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if (w != 0x2020202020202020ull) {
                break;
            }
            p += 8;
        }
    }
    return p;
}

/* Validates one UTF-8 sequence starting at p (p[0] >= 0x80) that must end before `end`.
 * Returns the position after it, or NULL. */
static inline const uint8_t *wk__json_utf8_one(const uint8_t *p, const uint8_t *end)
{
    uint8_t c = p[0];
    size_t left = (size_t)(end - p);
    if (c >= 0xC2 && c <= 0xDF) {
        if (left >= 2 && (p[1] & 0xC0) == 0x80) {
            return p + 2;
        }
        return NULL;
    }
    if (c >= 0xE0 && c <= 0xEF) {
        uint8_t lo = c == 0xE0 ? 0xA0 : 0x80;
        uint8_t hi = c == 0xED ? 0x9F : 0xBF;
        if (left >= 3 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80) {
            return p + 3;
        }
        return NULL;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        uint8_t lo = c == 0xF0 ? 0x90 : 0x80;
        uint8_t hi = c == 0xF4 ? 0x8F : 0xBF;
        if (left >= 4 && p[1] >= lo && p[1] <= hi && (p[2] & 0xC0) == 0x80 &&
            (p[3] & 0xC0) == 0x80) {
            return p + 4;
        }
        return NULL;
    }
    return NULL;
}

/* Non-zero for bytes a string scan must stop at: '"', '\\', < 0x20, >= 0x80. */
static const uint8_t wk__json_str_stop[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* First byte at or after p that a string scan must look at, or `end`. */
static inline const uint8_t *wk__json_scan_plain(const uint8_t *p, const uint8_t *end)
{
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i bslash = _mm_set1_epi8('\\');
    const __m128i space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* Signed compare: bytes >= 0x80 are negative, so they count as "< 0x20" too. */
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                                 _mm_cmplt_epi8(x, space));
        unsigned mask = (unsigned)_mm_movemask_epi8(m);
        if (mask != 0) {
            return p + __builtin_ctz(mask);
        }
        p += 16;
    }
#endif
    while (p < end && wk__json_str_stop[*p] == 0) {
        p++;
    }
    return p;
}

/*
 * Scans a string body starting after the opening quote. Returns the position of the closing
 * quote; *esc is the first backslash or NULL when there is none. Checks UTF-8 and control
 * characters (escapes are checked when decoded). NULL on failure (f filled).
 */
static inline const uint8_t *wk__json_scan_string(const uint8_t *p, const uint8_t *end,
                                                  const uint8_t **esc, wk__json_fail *f)
{
    *esc = NULL;
    for (;;) {
        p = wk__json_scan_plain(p, end);
        if (WK__UNLIKELY(p == end)) {
            return wk__json_failed(f, WK_ERR_TRUNCATED, "unterminated string", p);
        }
        uint8_t c = *p;
        if (WK__LIKELY(c == '"')) {
            return p;
        }
        if (c >= 0x80) {
            do {
                const uint8_t *n = wk__json_utf8_one(p, end);
                if (n == NULL) {
                    return wk__json_failed(f, WK_ERR_UTF8, "invalid UTF-8 in string", p);
                }
                p = n;
            } while (p < end && *p >= 0x80);
            continue;
        }
        if (c == '\\') {
            if (*esc == NULL) {
                *esc = p;
            }
            if (end - p < 2) {
                return wk__json_failed(f, WK_ERR_TRUNCATED, "unterminated string", end);
            }
            p += 2; /* the escaped byte is checked by wk__json_unescape */
            continue;
        }
        return wk__json_failed(f, WK_ERR_SYNTAX, "control character in string (must be escaped)",
                               p);
    }
}

static inline int wk__json_hex4(const uint8_t *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = p[i];
        int d;
        if (c >= '0' && c <= '9') {
            d = c - '0';
        } else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') {
            d = (c | 0x20) - 'a' + 10;
        } else {
            return -1;
        }
        v = v * 16 + d;
    }
    return v;
}

/*
 * Decodes the escaped string body s[0..close) (first backslash at esc) into dst, which has
 * room for (close - s) bytes: no escape decodes to more bytes than it takes. Returns the
 * decoded length, or (size_t)-1 on failure (f filled): a bad escape, a lone surrogate.
 */
static inline size_t wk__json_unescape(const uint8_t *s, const uint8_t *esc, const uint8_t *close,
                                       uint8_t *dst, wk__json_fail *f)
{
    size_t n = (size_t)(esc - s);
    memcpy(dst, s, n);
    uint8_t *d = dst + n;
    const uint8_t *p = esc;
    while (p < close) {
        if (*p != '\\') {
            const uint8_t *q = memchr(p, '\\', (size_t)(close - p));
            if (q == NULL) {
                q = close;
            }
            memcpy(d, p, (size_t)(q - p));
            d += q - p;
            p = q;
            continue;
        }
        uint8_t c = p[1];
        switch (c) {
        case '"':
        case '\\':
        case '/':
            *d++ = c;
            p += 2;
            continue;
        case 'b':
            *d++ = '\b';
            p += 2;
            continue;
        case 'f':
            *d++ = '\f';
            p += 2;
            continue;
        case 'n':
            *d++ = '\n';
            p += 2;
            continue;
        case 'r':
            *d++ = '\r';
            p += 2;
            continue;
        case 't':
            *d++ = '\t';
            p += 2;
            continue;
        case 'u':
            break;
        default:
            wk__json_failed(f, WK_ERR_SYNTAX, "invalid escape in string", p);
            return (size_t)-1;
        }
        int cp = close - p >= 6 ? wk__json_hex4(p + 2) : -1;
        if (cp < 0) {
            wk__json_failed(f, WK_ERR_SYNTAX, "invalid \\u escape (needs four hex digits)", p);
            return (size_t)-1;
        }
        const uint8_t *at = p;
        p += 6;
        if (cp >= 0xD800 && cp <= 0xDFFF) {
            int lo = -1;
            if (cp <= 0xDBFF && close - p >= 6 && p[0] == '\\' && p[1] == 'u') {
                lo = wk__json_hex4(p + 2);
            }
            if (lo < 0xDC00 || lo > 0xDFFF) {
                wk__json_failed(f, WK_ERR_UTF8, "lone surrogate in \\u escape", at);
                return (size_t)-1;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            p += 6;
        }
        d += wk_utf8_encode((uint32_t)cp, d);
    }
    return (size_t)(d - dst);
}

/* A lexed number. */
enum { WK__NUM_UINT, WK__NUM_INT, WK__NUM_DOUBLE, WK__NUM_RAW };
typedef struct wk__json_num {
    int kind;
    union {
        uint64_t u;
        int64_t i;
        double d;
    } v;
} wk__json_num;

static inline bool wk__json_digit(uint8_t c)
{
    return (uint8_t)(c - '0') < 10;
}

/*
 * Lexes a number at p (p[0] is '-' or a digit). With `raw` only the grammar is checked and
 * kind is WK__NUM_RAW (the text is [p, return)). Returns the position after the number or
 * NULL (f filled).
 */
static inline const uint8_t *wk__json_lex_number(const uint8_t *p, const uint8_t *end, bool raw,
                                                 wk__json_num *out, wk__json_fail *f)
{
    const uint8_t *s = p;
    bool neg = false;
    if (*p == '-') {
        neg = true;
        p++;
        if (p == end) {
            return wk__json_failed(f, WK_ERR_TRUNCATED, "number ends after '-'", p);
        }
    }
    uint64_t w = 0;
    int nd = 0;      /* significant digits in w */
    int64_t q = 0;   /* decimal exponent of w */
    bool trunc = false;
    const uint8_t *int_start = p;
    if (*p == '0') {
        p++;
        if (p < end && wk__json_digit(*p)) {
            return wk__json_failed(f, WK_ERR_SYNTAX, "leading zero in number", s);
        }
    } else if (WK__LIKELY(wk__json_digit(*p))) {
        do {
            uint8_t dgt = (uint8_t)(*p - '0');
            if (WK__LIKELY(nd < 19)) {
                w = w * 10 + dgt;
                nd++;
            } else {
                trunc |= dgt != 0;
                q++;
            }
            p++;
        } while (p < end && wk__json_digit(*p));
    } else {
        return wk__json_failed(f, WK_ERR_SYNTAX, "invalid number", s);
    }
    size_t int_digits = (size_t)(p - int_start);
    bool is_int = true;
    if (p < end && *p == '.') {
        is_int = false;
        p++;
        if (p == end) {
            return wk__json_failed(f, WK_ERR_TRUNCATED, "number ends after '.'", p);
        }
        if (!wk__json_digit(*p)) {
            return wk__json_failed(f, WK_ERR_SYNTAX, "digit expected after '.' in number", p);
        }
        do {
            uint8_t dgt = (uint8_t)(*p - '0');
            if (w == 0 && dgt == 0) {
                q--;
            } else if (nd < 19) {
                w = w * 10 + dgt;
                nd++;
                q--;
            } else {
                trunc |= dgt != 0;
            }
            p++;
        } while (p < end && wk__json_digit(*p));
    }
    if (p < end && (*p | 0x20) == 'e') {
        is_int = false;
        p++;
        bool eneg = false;
        if (p < end && (*p == '+' || *p == '-')) {
            eneg = *p == '-';
            p++;
        }
        if (p == end) {
            return wk__json_failed(f, WK_ERR_TRUNCATED, "number ends in its exponent", p);
        }
        if (!wk__json_digit(*p)) {
            return wk__json_failed(f, WK_ERR_SYNTAX, "digit expected in exponent", p);
        }
        int64_t e = 0;
        do {
            if (e < 1000000000000000ll) {
                e = e * 10 + (*p - '0');
            }
            p++;
        } while (p < end && wk__json_digit(*p));
        q += eneg ? -e : e;
    }
    if (raw) {
        out->kind = WK__NUM_RAW;
        return p;
    }
    if (is_int) {
        if (int_digits == 20 && !neg) {
            /* 20 digits may still fit uint64: redo exactly. */
            uint64_t v = 0;
            bool ovf = false;
            for (const uint8_t *c = int_start; c < p; c++) {
                ovf |= __builtin_mul_overflow(v, 10, &v);
                ovf |= __builtin_add_overflow(v, (uint64_t)(*c - '0'), &v);
            }
            if (!ovf) {
                out->kind = WK__NUM_UINT;
                out->v.u = v;
                return p;
            }
        } else if (int_digits <= 19) {
            if (!neg) {
                out->kind = WK__NUM_UINT;
                out->v.u = w;
                return p;
            }
            if (w != 0 && w <= (1ull << 63)) {
                out->kind = WK__NUM_INT;
                out->v.i = (int64_t)(0 - w);
                return p;
            }
            /* "-0" is a float (-0.0); below INT64_MIN too */
        }
    }
    out->kind = WK__NUM_DOUBLE;
    if (q < -100000) {
        q = -100000; /* w < 10^19: anything below 10^-99981 is zero already */
    } else if (q > 100000) {
        q = 100000;
    }
    out->v.d = wk__digits_to_double(w, (int)q, neg, trunc, (const char *)s, (size_t)(p - s));
    return p;
}

#endif
