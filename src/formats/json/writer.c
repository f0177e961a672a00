/*
 * The JSON writer: an event sink (wk_json_writer) and a direct tree walker
 * (wk_json_encode_value) that share every byte-level helper below, so both print the same
 * text for the same data.
 *
 * Strings are copied in runs: the SSE2 scan from lex.h finds the next byte that needs a look
 * ('"', '\\', control, non-ASCII); runs are memcpy'd, non-ASCII is checked as UTF-8 and
 * copied as is, and only '"', '\\' and controls are escaped (as \n, \t, ... or \u00XX).
 * Doubles use the shortest round-trip digits (dtoa.c); float32 sources use the float's own
 * shortest digits. Values JSON cannot express are mapped (docs/formats.md): binary as a
 * base64 string, ext as {"ext":type,"data":"<base64>"}, timestamps as RFC 3339 strings,
 * scalar map keys as the string of their JSON text.
 *
 * Flow: events (any source, through wk_json_writer_sink) or typed calls -> the event writer
 * (frames: separators, keys, indentation) -> the byte printers -> JSON text in the caller's
 * wk_buf; or a tree -> wk_json_encode_value's walk -> the same printers.
 *
 * Contents, in order:
 *   byte printers      put, put_byte; strings (swar_special, load_upto8, put_escape, the
 *                      put_string_* family, copy_words, put_str_node); numbers (fmt_u64,
 *                      fmt_i64, fmt_double; the word printers are dtoa_interface.h's);
 *                      put_base64,
 *                      put_timestamp, put_scalar, put_key, put_ext, put_newline_indent
 *   event writer       latch; open_slot/close_slot/top_done (what goes around an item);
 *                      write_item; the out-of-line halves of the inline calls of json.h
 *                      (wk_json_writer_*_slow); wk_json_writer_event and the sink adapter
 *   tree writer        put_node, encode_compact (compact, raw cursor), wk_json_encode_value
 *                      (pretty, checked helpers)
 *   schema printers    wk__json_put_* (json_put.h), for schema_json_enc.c
 */
#include <string.h>

#include "core/dtoa_interface.h"
#include "formats/json/json_put.h"
#include "formats/json/lex.h"
#include "wirekit/json.h"

/* Frame bits of the event writer. */
#define F_OBJECT WK__JW_OBJECT
#define F_ITEMS WK__JW_ITEMS /* at least one element written */
#define F_VALUE WK__JW_VALUE /* object: a key was written, its value is next */

/* Why a write failed: the status and a static message, latched by the event writer
 * (latch) or reported by the tree walker (wk_error_set). */
typedef struct wfail {
    wk_status st;
    const char *msg;
} wfail;

/* Fills f and returns st: the one way a helper below fails. */
static wk_status wfailed(wfail *f, wk_status st, const char *msg)
{
    f->st = st;
    f->msg = msg;
    return st;
}

/* Appends s[0..n) to b; WK_OK, or the buffer's status (its limit, out of memory) in f. */
static wk_status put(wk_buf *b, const void *s, size_t n, wfail *f)
{
    wk_status st = wk_buf_append(b, s, n);
    return st == WK_OK ? WK_OK : wfailed(f, st, "output buffer full");
}

/* Appends the byte c to b, as put(). */
static wk_status put_byte(wk_buf *b, uint8_t c, wfail *f)
{
    wk_status st = wk_buf_push(b, c);
    return st == WK_OK ? WK_OK : wfailed(f, st, "output buffer full");
}

static const char HEX[] = "0123456789abcdef";

/* High bit set in each byte of x that a string writer must look at: < 0x20, '"', '\\',
 * >= 0x80. Borrows can only mark bytes above a real match, so the lowest mark is exact. */
static inline uint64_t swar_special(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ull;
    const uint64_t high = 0x8080808080808080ull;
    uint64_t q = x ^ (ones * '"');
    uint64_t bs = x ^ (ones * '\\');
    return (((x - ones * 0x20) & ~x) | ((q - ones) & ~q) | ((bs - ones) & ~bs) | x) & high;
}

#define STR_SLACK 16 /* output room beyond the string, for whole-word stores */

/* The next min(left, 8) bytes at p as a little-endian word, the missing bytes filled with
 * spaces (which need no look); never reads outside p[0..left). */
static inline uint64_t load_upto8(const uint8_t *p, size_t left)
{
    uint64_t x;
    if (left >= 8) {
        memcpy(&x, p, 8);
        return x;
    }
    if (left >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + left - 4, 4);
        x = (uint64_t)lo | ((uint64_t)hi << ((left - 4) * 8));
    } else {
        x = (uint64_t)p[0] | ((uint64_t)p[left / 2] << (left / 2 * 8)) |
            ((uint64_t)p[left - 1] << ((left - 1) * 8));
    }
    return x | (0x2020202020202020ull << (left * 8));
}

/* Writes one escape for byte c at d; returns the new end. */
static inline uint8_t *put_escape(uint8_t *d, uint8_t c)
{
    *d++ = '\\';
    switch (c) {
    case '"':
    case '\\':
        *d++ = c;
        break;
    case '\b':
        *d++ = 'b';
        break;
    case '\f':
        *d++ = 'f';
        break;
    case '\n':
        *d++ = 'n';
        break;
    case '\r':
        *d++ = 'r';
        break;
    case '\t':
        *d++ = 't';
        break;
    default:
        memcpy(d, "u00", 3);
        d[3] = (uint8_t)HEX[c >> 4];
        d[4] = (uint8_t)HEX[c & 15];
        d += 5;
        break;
    }
    return d;
}

/* The string's bytes p[0..end) and its closing quote for when the output cannot take the
 * slack (a nearly full fixed buffer): one byte at a time, each checked against the room left. */
static wk_status put_string_rest_exact(wk_buf *b, const uint8_t *p, const uint8_t *end,
                                       wfail *f)
{
    uint8_t esc[8];
    wk_status st = WK_OK;
    /* a UTF-8 sequence is checked and appended whole, a byte that needs it is escaped, any
     * other is appended: each through the buffer's checked calls, so a fixed buffer fills to
     * its last byte and then fails */
    while (st == WK_OK && p < end) {
        uint8_t c = *p;
        if (c >= 0x80) {
            const uint8_t *nx = wk__json_utf8_one(p, end);
            if (nx == NULL) {
                return wfailed(f, WK_ERR_UTF8, "string is not valid UTF-8");
            }
            st = wk_buf_append(b, p, (size_t)(nx - p));
            p = nx;
        } else if (wk__json_str_stop[c]) {
            st = wk_buf_append(b, esc, (size_t)(put_escape(esc, c) - esc));
            p++;
        } else {
            st = wk_buf_push(b, c);
            p++;
        }
    }
    if (st == WK_OK) {
        st = wk_buf_push(b, '"');
    }
    return st == WK_OK ? WK_OK : wfailed(f, st, "output buffer full");
}

/* put_string for when the output cannot take the slack: the whole string checked per byte. */
static wk_status put_string_exact(wk_buf *b, const uint8_t *s, size_t n, wfail *f)
{
    wk_status st = wk_buf_push(b, '"');
    return st == WK_OK ? put_string_rest_exact(b, s, s + n, f)
                       : wfailed(f, st, "output buffer full");
}

/*
 * Writes s[0..n) as a JSON string. Plain bytes are copied a word at a time (16 with SSE2, 8
 * with SWAR for the tail) into room reserved with some slack, so every store is a whole
 * word; non-ASCII runs are validated as UTF-8 and copied in one go.
 */
/* Kept out of line so that the short-string path of its callers stays small. */
__attribute__((noinline)) static wk_status put_string_fix(wk_buf *b, const uint8_t *s,
                                                          size_t n, uint8_t pre, uint8_t post,
                                                          wfail *f)
{
    size_t need;
    if (!wk_size_add(n, 4 + STR_SLACK, &need)) {
        return wfailed(f, WK_ERR_LIMIT, "output buffer full");
    }
    wk_status st = wk_buf_reserve(b, need);
    if (st != WK_OK) {
        /* no room for the slack: byte by byte */
        st = pre != 0 ? put_byte(b, pre, f) : WK_OK;
        if (st == WK_OK) {
            st = put_string_exact(b, s, n, f);
        }
        if (st == WK_OK && post != 0) {
            st = put_byte(b, post, f);
        }
        return st;
    }
    uint8_t *d = b->data + b->len;
    *d = pre;
    d += pre != 0;
    *d++ = '"';
    const uint8_t *p = s;
    const uint8_t *end = s + n;
    /* Runs: 16 bytes at a time (SSE2), then 8 (SWAR), each stored before it is looked at
     * (the reserved slack takes the overshoot); at the first byte that needs a look the
     * cursors stop there and `special` decides: UTF-8 is checked and copied as it is, the
     * others are escaped. */
    for (;;) {
        size_t left = (size_t)(end - p);
#if defined(__SSE2__)
        const __m128i quote = _mm_set1_epi8('"');
        const __m128i bslash = _mm_set1_epi8('\\');
        const __m128i space = _mm_set1_epi8(0x20);
        while (left >= 16) {
            __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
            _mm_storeu_si128((__m128i *)(void *)d, x);
            __m128i m = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(x, quote), _mm_cmpeq_epi8(x, bslash)),
                _mm_cmplt_epi8(x, space));
            unsigned mask = (unsigned)_mm_movemask_epi8(m);
            if (mask != 0) {
                unsigned k = (unsigned)__builtin_ctz(mask);
                p += k;
                d += k;
                left -= k;
                goto special;
            }
            p += 16;
            d += 16;
            left -= 16;
        }
#endif
        while (left > 0) {
            uint64_t x = load_upto8(p, left);
            memcpy(d, &x, 8);
            uint64_t m = swar_special(x);
            if (m != 0) {
                unsigned k = (unsigned)__builtin_ctzll(m) / 8;
                p += k;
                d += k;
                left -= k;
                goto special;
            }
            size_t k = left < 8 ? left : 8;
            p += k;
            d += k;
            left -= k;
        }
        break;
    special: {
        /* non-ASCII: the whole run of multi-byte sequences checked, then copied as it is */
        uint8_t c = *p;
        if (c >= 0x80) {
            const uint8_t *q = p;
            do {
                const uint8_t *nx = wk__json_utf8_one(q, end);
                if (nx == NULL) {
                    b->len = (size_t)(d - b->data);
                    return wfailed(f, WK_ERR_UTF8, "string is not valid UTF-8");
                }
                q = nx;
            } while (q < end && *q >= 0x80);
            memcpy(d, p, (size_t)(q - p));
            d += q - p;
            p = q;
            continue;
        }
        /* An escape: up to 6 bytes where 1 was reserved. */
        b->len = (size_t)(d - b->data);
        st = wk_buf_reserve(b, (size_t)(end - p) + 7 + STR_SLACK);
        if (st != WK_OK) {
            /* no room for the slack: the rest byte by byte, so a buffer of the exact size
             * still takes the string */
            st = put_string_rest_exact(b, p, end, f);
            return st == WK_OK && post != 0 ? put_byte(b, post, f) : st;
        }
        d = put_escape(b->data + b->len, c);
        p++;
    }
    }
    *d++ = '"';
    *d = post;
    d += post != 0;
    b->len = (size_t)(d - b->data);
    return WK_OK;
}

/* Writes s[0..n) as a JSON string. */
static inline wk_status put_string(wk_buf *b, const uint8_t *s, size_t n, wfail *f)
{
    return put_string_fix(b, s, n, 0, 0, f);
}

/* Copies n bytes from s to d in a few whole-word moves, some overlapping; reads only
 * s[0..n) and writes only d[0..n). */
static inline void copy_words(uint8_t *d, const uint8_t *s, size_t n)
{
    /* 16 bytes and more: 16-byte moves, the last one ending exactly at n (it may overlap
     * the one before); shorter: two moves of 8, 4 or 1 byte from both ends */
    if (n >= 16) {
#if defined(__SSE2__)
        const uint8_t *last = s + n - 16;
        uint8_t *dlast = d + n - 16;
        while (s < last) {
            _mm_storeu_si128((__m128i *)(void *)d,
                             _mm_loadu_si128((const __m128i *)(const void *)s));
            s += 16;
            d += 16;
        }
        _mm_storeu_si128((__m128i *)(void *)dlast,
                         _mm_loadu_si128((const __m128i *)(const void *)last));
#else
        memcpy(d, s, n);
#endif
        return;
    }
    if (n >= 8) {
        uint64_t a, z;
        memcpy(&a, s, 8);
        memcpy(&z, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &z, 8);
    } else if (n >= 4) {
        uint32_t a, z;
        memcpy(&a, s, 4);
        memcpy(&z, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &z, 4);
    } else if (n != 0) {
        d[0] = s[0];
        d[n >> 1] = s[n >> 1];
        d[n - 1] = s[n - 1];
    }
}

/* Writes a string node: a WK_VALF_PLAIN one (valid UTF-8, nothing to escape, as the parser
 * found it) is copied without a scan when the room is there; others go through put_string.
 * `pre` (0 for none) is written before the opening quote and `post` (0 for none) after the
 * closing one. */
static inline wk_status put_str_node(wk_buf *b, const wk_value *v, uint8_t pre, uint8_t post,
                                     wfail *f)
{
    size_t n = v->len;
    if ((v->flags & WK_VALF_PLAIN) && b->cap - b->len >= 4 && n <= b->cap - b->len - 4) {
        uint8_t *d = b->data + b->len;
        *d = pre;
        d += pre != 0;
        *d++ = '"';
        copy_words(d, (const uint8_t *)v->u.str, n);
        d += n;
        *d++ = '"';
        *d = post;
        d += post != 0;
        b->len = (size_t)(d - b->data);
        return WK_OK;
    }
    return put_string_fix(b, (const uint8_t *)v->u.str, n, pre, post, f);
}

/* Writes u in decimal at d; returns the length. */
static inline size_t fmt_u64(uint64_t u, char *d)
{
    return wk__fmt_u64(u, d);
}

/* The decimal digits of u at d (room for 20), no NUL; returns their count. */
WK_API size_t wk_json_fmt_u64(uint64_t u, char *d)
{
    return fmt_u64(u, d);
}

/* The decimal text of i at d (room for 20: a sign and 19 digits), no NUL; returns its
 * length. INT64_MIN is negated as an unsigned value. */
static size_t fmt_i64(int64_t i, char *d)
{
    if (i < 0) {
        d[0] = '-';
        return 1 + fmt_u64(0 - (uint64_t)i, d + 1);
    }
    return fmt_u64((uint64_t)i, d);
}

/* Number text for a double into d (WK__DTOA_JSON_MAX bytes); 0 when not representable. */
static size_t fmt_double(double v, bool f32, unsigned flags, char *d)
{
    if (__builtin_isfinite(v)) {
        return f32 ? wk__ftoa_json((float)v, d) : wk__dtoa_json(v, d);
    }
    if (!(flags & WK_JSON_WRITE_NAN_INF)) {
        return 0;
    }
    const char *t = __builtin_isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity";
    size_t n = strlen(t);
    memcpy(d, t, n);
    return n;
}

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Writes s[0..n) as a quoted base64 string (RFC 4648, padded). */
static wk_status put_base64(wk_buf *b, const uint8_t *s, size_t n, wfail *f)
{
    size_t out = (n / 3 + (n % 3 != 0)) * 4 + 2;
    if (n > SIZE_MAX / 2 || wk_buf_reserve(b, out) != WK_OK) {
        return wfailed(f, WK_ERR_LIMIT, "output buffer full");
    }
    uint8_t *d = b->data + b->len;
    *d++ = '"';
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t x = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        d[0] = (uint8_t)B64[x >> 18];
        d[1] = (uint8_t)B64[(x >> 12) & 63];
        d[2] = (uint8_t)B64[(x >> 6) & 63];
        d[3] = (uint8_t)B64[x & 63];
        d += 4;
    }
    if (i < n) {
        uint32_t x = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
        d[0] = (uint8_t)B64[x >> 18];
        d[1] = (uint8_t)B64[(x >> 12) & 63];
        d[2] = i + 1 < n ? (uint8_t)B64[(x >> 6) & 63] : '=';
        d[3] = '=';
        d += 4;
    }
    *d++ = '"';
    b->len = (size_t)(d - b->data);
    return WK_OK;
}

/* Writes a timestamp as a quoted RFC 3339 UTC string, fraction without trailing zeros. */
static wk_status put_timestamp(wk_buf *b, int64_t sec, uint32_t nsec, wfail *f)
{
    if (sec < -62167219200ll || sec > 253402300799ll || nsec > 999999999u) {
        return wfailed(f, WK_ERR_RANGE, "timestamp outside years 0000-9999 (no RFC 3339 form)");
    }
    int64_t days = sec >= 0 ? sec / 86400 : (sec - 86399) / 86400;
    int64_t secs = sec - days * 86400;
    /* Civil date from days since 1970-01-01 (proleptic Gregorian, 400-year eras). */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t day = doy - (153 * mp + 2) / 5 + 1;
    int64_t month = mp < 10 ? mp + 3 : mp - 9;
    int64_t year = yoe + era * 400 + (month <= 2);
    char t[40];
    char *d = t;
    *d++ = '"';
    memcpy(d, wk__digits2 + 2 * (year / 100), 2);
    memcpy(d + 2, wk__digits2 + 2 * (year % 100), 2);
    d[4] = '-';
    memcpy(d + 5, wk__digits2 + 2 * month, 2);
    d[7] = '-';
    memcpy(d + 8, wk__digits2 + 2 * day, 2);
    d[10] = 'T';
    memcpy(d + 11, wk__digits2 + 2 * (secs / 3600), 2);
    d[13] = ':';
    memcpy(d + 14, wk__digits2 + 2 * (secs / 60 % 60), 2);
    d[16] = ':';
    memcpy(d + 17, wk__digits2 + 2 * (secs % 60), 2);
    d += 19;
    if (nsec != 0) {
        *d++ = '.';
        uint32_t div = 100000000;
        uint32_t rest = nsec;
        while (rest != 0) {
            *d++ = (char)('0' + rest / div);
            rest %= div;
            div /= 10;
        }
    }
    *d++ = 'Z';
    *d++ = '"';
    return put(b, t, (size_t)(d - t), f);
}

/* Writes a scalar event as a value; containers, END and ext are handled by the callers. */
static wk_status put_scalar(wk_buf *b, const wk_event *ev, unsigned flags, wfail *f)
{
    char t[WK__DTOA_JSON_MAX];
    size_t n;
    /* Values JSON has no form for are mapped (docs/formats.md): binary as a base64 string,
     * a timestamp as an RFC 3339 string; a raw number is written as its text, unchecked
     * (it came from a JSON reader). */
    switch (ev->type) {
    case WK_EV_NIL:
        return put(b, "null", 4, f);
    case WK_EV_BOOL:
        return ev->v.b ? put(b, "true", 4, f) : put(b, "false", 5, f);
    case WK_EV_INT:
        n = fmt_i64(ev->v.i, t);
        return put(b, t, n, f);
    case WK_EV_UINT:
        n = fmt_u64(ev->v.u, t);
        return put(b, t, n, f);
    case WK_EV_FLOAT:
        n = fmt_double(ev->v.f, ev->f32, flags, t);
        if (n == 0) {
            return wfailed(f, WK_ERR_RANGE, "NaN or infinity has no JSON form");
        }
        return put(b, t, n, f);
    case WK_EV_STR:
        return put_string(b, (const uint8_t *)ev->v.str.ptr, ev->v.str.len, f);
    case WK_EV_RAWNUM:
        return put(b, ev->v.str.ptr, ev->v.str.len, f);
    case WK_EV_BIN:
        return put_base64(b, (const uint8_t *)ev->v.str.ptr, ev->v.str.len, f);
    case WK_EV_TIMESTAMP:
        return put_timestamp(b, ev->v.ts.sec, ev->v.ts.nsec, f);
    default:
        return wfailed(f, WK_ERR_ARG, "unknown event type");
    }
}

/* Writes a scalar as an object key: strings as they are, other scalars as the string of
 * their JSON text; containers and ext cannot be keys. */
static wk_status put_key(wk_buf *b, const wk_event *ev, unsigned flags, wfail *f)
{
    /* strings, binary (base64) and timestamps (RFC 3339) are strings already; numbers, bools
     * and nil are quoted; containers and ext cannot be keys. A failed key leaves nothing. */
    switch (ev->type) {
    case WK_EV_STR:
    case WK_EV_BIN:
    case WK_EV_TIMESTAMP:
        return put_scalar(b, ev, flags, f);
    case WK_EV_ARRAY:
    case WK_EV_MAP:
    case WK_EV_EXT:
        return wfailed(f, WK_ERR_TYPE, "map key is an array, map or ext (JSON keys are strings)");
    default: {
        size_t mark = b->len;
        wk_status st = put_byte(b, '"', f);
        if (st == WK_OK) {
            st = put_scalar(b, ev, flags, f);
        }
        if (st == WK_OK) {
            st = put_byte(b, '"', f);
        }
        if (st != WK_OK) {
            b->len = mark;
        }
        return st;
    }
    }
}

/* An ext event as {"ext":type,"data":"<base64>"} (docs/formats.md). */
static wk_status put_ext(wk_buf *b, const wk_event *ev, wfail *f)
{
    char t[40];
    memcpy(t, "{\"ext\":", 7);
    size_t n = 7 + fmt_i64(ev->v.ext.type, t + 7);
    memcpy(t + n, ",\"data\":", 8);
    n += 8;
    wk_status st = put(b, t, n, f);
    if (st == WK_OK) {
        st = put_base64(b, ev->v.ext.ptr, ev->v.ext.len, f);
    }
    if (st == WK_OK) {
        st = put_byte(b, '}', f);
    }
    return st;
}

/* Pretty output: a newline and depth * indent spaces, in one reservation. */
static wk_status put_newline_indent(wk_buf *b, size_t depth, uint32_t indent, wfail *f)
{
    size_t n = depth * indent + 1;
    if (wk_buf_reserve(b, n) != WK_OK) {
        return wfailed(f, WK_ERR_LIMIT, "output buffer full");
    }
    b->data[b->len] = '\n';
    memset(b->data + b->len + 1, ' ', n - 1);
    b->len += n;
    return WK_OK;
}

/* ---- event writer ------------------------------------------------------------------------ */

/* Latches f as the writer's error (at the output's length) and stops the frame, so every
 * later call returns it at once; returns the status. */
static wk_status latch(wk_json_writer *w, const wfail *f)
{
    w->err.code = f->st;
    w->err.msg = f->msg;
    w->err.offset = w->out->len;
    w->frame[w->depth] |= WK__JW_STOP;
    return f->st;
}

/* What open_slot found the next item to be: a value, an object's key (which must be
 * printed as a string), or nothing (the failure is in f). */
enum { SLOT_VALUE, SLOT_KEY, SLOT_FAIL };

/* Writes what goes before the next item (',' and indentation, or the newline between
 * top-level values) and says whether the item is an object key. */
static inline int open_slot(wk_json_writer *w, wfail *f)
{
    wk_buf *b = w->out;
    if (w->depth == 0) {
        if (w->values > 0 && !(w->flags & WK_JSON_WRITE_NEWLINE) &&
            put_byte(b, '\n', f) != WK_OK) {
            return SLOT_FAIL;
        }
        return SLOT_VALUE;
    }
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if ((v & (F_OBJECT | F_VALUE)) == (F_OBJECT | F_VALUE)) {
        *fr = (uint8_t)(v & ~F_VALUE); /* the value of a key: no separator */
        return SLOT_VALUE;
    }
    if ((v & F_ITEMS) && put_byte(b, ',', f) != WK_OK) {
        return SLOT_FAIL;
    }
    if ((w->flags & WK_JSON_WRITE_PRETTY) &&
        put_newline_indent(b, w->depth, w->indent, f) != WK_OK) {
        return SLOT_FAIL;
    }
    if (v & F_OBJECT) {
        *fr = (uint8_t)(v | F_ITEMS | F_VALUE);
        return SLOT_KEY;
    }
    *fr = (uint8_t)(v | F_ITEMS);
    return SLOT_VALUE;
}

/* A value (scalar or container) ended at the top level. */
static wk_status top_done(wk_json_writer *w, wfail *f)
{
    w->values++;
    if (w->flags & WK_JSON_WRITE_NEWLINE) {
        return put_byte(w->out, '\n', f);
    }
    return WK_OK;
}

/* After an item: the ':' after a key, or the end of a top-level value. */
static inline wk_status close_slot(wk_json_writer *w, int slot, wfail *f)
{
    if (slot == SLOT_KEY) {
        return (w->flags & WK_JSON_WRITE_PRETTY) ? put(w->out, ": ", 2, f)
                                                  : put_byte(w->out, ':', f);
    }
    return w->depth == 0 ? top_done(w, f) : WK_OK;
}

/* Any scalar or ext event, in whatever slot comes next (the general path). */
static wk_status write_item(wk_json_writer *w, const wk_event *ev)
{
    if (w->err.code != WK_OK) {
        return w->err.code;
    }
    wfail f = {WK_OK, NULL};
    int slot = open_slot(w, &f);
    if (slot == SLOT_FAIL) {
        return latch(w, &f);
    }
    wk_status st;
    if (slot == SLOT_KEY) {
        st = put_key(w->out, ev, w->flags, &f);
    } else if (ev->type == WK_EV_EXT) {
        st = put_ext(w->out, ev, &f);
    } else {
        st = put_scalar(w->out, ev, w->flags, &f);
    }
    if (st == WK_OK) {
        st = close_slot(w, slot, &f);
    }
    return st == WK_OK ? WK_OK : latch(w, &f);
}

/* Compact output inside a container: the separator byte before the next item and the one
 * after it (':' after a key), updating the frame. Returns false when the general path
 * (pretty output, top level, a failed writer) must be taken. */
static inline bool compact_slot(wk_json_writer *w, uint8_t *pre, uint8_t *post, bool *key)
{
    if (w->depth == 0 || (w->flags & WK_JSON_WRITE_PRETTY) || w->err.code != WK_OK) {
        return false;
    }
    uint8_t *fr = &w->frame[w->depth];
    uint8_t v = *fr;
    if ((v & (F_OBJECT | F_VALUE)) == (F_OBJECT | F_VALUE)) {
        *fr = (uint8_t)(v & ~F_VALUE);
        *pre = 0;
        *post = 0;
        *key = false;
        return true;
    }
    *pre = (v & F_ITEMS) ? ',' : 0;
    *key = (v & F_OBJECT) != 0;
    *post = *key ? ':' : 0;
    *fr = (uint8_t)(v | F_ITEMS | (*key ? F_VALUE : 0));
    return true;
}

/* wk_json_writer_str beyond its fast path. */
__attribute__((noinline)) static wk_status str_general(wk_json_writer *w, const char *s,
                                                       size_t n)
{
    uint8_t pre, post;
    bool key;
    wfail f = {WK_OK, NULL};
    if (compact_slot(w, &pre, &post, &key)) {
        wk_buf *b = w->out;
        if (put_string_fix(b, (const uint8_t *)s, n, pre, post, &f) != WK_OK) {
            return latch(w, &f);
        }
        return WK_OK;
    }
    if (w->err.code != WK_OK) {
        return w->err.code;
    }
    int slot = open_slot(w, &f);
    if (slot == SLOT_FAIL || put_string(w->out, (const uint8_t *)s, n, &f) != WK_OK ||
        close_slot(w, slot, &f) != WK_OK) {
        return latch(w, &f);
    }
    return WK_OK;
}

/* The out-of-line half of wk_json_writer_str (wirekit/json.h has the inline fast path):
 * the string as a value or a key, with every check. */
WK_API wk_status wk_json_writer_str_slow(wk_json_writer *w, const char *s, size_t n)
{
    return str_general(w, s, n);
}

/* The out-of-line half of wk_json_writer_key: WK_ERR_STATE (latched) when no key is due,
 * else the string as the object's next key. */
WK_API wk_status wk_json_writer_key_slow(wk_json_writer *w, const char *s, size_t n)
{
    if (w->err.code != WK_OK) {
        return w->err.code;
    }
    if (w->depth == 0 ||
        (w->frame[w->depth] & (F_OBJECT | F_VALUE)) != F_OBJECT) {
        wfail f = {WK_OK, NULL};
        wfailed(&f, WK_ERR_STATE, "key written where no object key is due");
        return latch(w, &f);
    }
    return str_general(w, s, n);
}

/* Integers: the digits go straight into the buffer when it is not a key. */
static wk_status write_integer(wk_json_writer *w, const wk_event *ev)
{
    if (w->err.code != WK_OK) {
        return w->err.code;
    }
    wfail f = {WK_OK, NULL};
    int slot = open_slot(w, &f);
    if (slot != SLOT_VALUE) {
        if (slot == SLOT_FAIL) {
            return latch(w, &f);
        }
        wk_status st = put_key(w->out, ev, w->flags, &f);
        if (st == WK_OK) {
            st = close_slot(w, slot, &f);
        }
        return st == WK_OK ? WK_OK : latch(w, &f);
    }
    char t[24];
    size_t n = ev->type == WK_EV_UINT ? fmt_u64(ev->v.u, t) : fmt_i64(ev->v.i, t);
    if (put(w->out, t, n, &f) != WK_OK || close_slot(w, slot, &f) != WK_OK) {
        return latch(w, &f);
    }
    return WK_OK;
}

/* Integers in compact output: separator and digits in one reservation. */
static inline wk_status write_integer_fast(wk_json_writer *w, const wk_event *ev)
{
    uint8_t pre, post;
    bool key;
    wk_buf *b = w->out;
    if (!compact_slot(w, &pre, &post, &key)) {
        return write_integer(w, ev);
    }
    if (key || b->cap - b->len < 24) {
        /* A key, or little room: the same bytes through checked appends (the frame has
         * moved on already, so the general writer must not run). */
        wfail f = {WK_OK, NULL};
        wk_status st = pre != 0 ? put_byte(b, pre, &f) : WK_OK;
        if (st == WK_OK) {
            st = key ? put_key(b, ev, w->flags, &f) : put_scalar(b, ev, w->flags, &f);
        }
        if (st == WK_OK && post != 0) {
            st = put_byte(b, post, &f);
        }
        return st == WK_OK ? WK_OK : latch(w, &f);
    }
    char *d = (char *)b->data + b->len;
    *d = (char)pre;
    d += pre != 0;
    d += ev->type == WK_EV_UINT ? fmt_u64(ev->v.u, d) : fmt_i64(ev->v.i, d);
    b->len = (size_t)((uint8_t *)d - b->data);
    return WK_OK;
}

/* The out-of-line halves of wk_json_writer_int, _uint: an integer event. */
WK_API wk_status wk_json_writer_int_slow(wk_json_writer *w, int64_t i)
{
    wk_event ev;
    ev.type = WK_EV_INT;
    ev.v.i = i;
    return write_integer_fast(w, &ev);
}

WK_API wk_status wk_json_writer_uint_slow(wk_json_writer *w, uint64_t u)
{
    wk_event ev;
    ev.type = WK_EV_UINT;
    ev.v.u = u;
    return write_integer_fast(w, &ev);
}

/* A double with its shortest round-trip digits; NaN and infinities fail unless
 * WK_JSON_WRITE_NAN_INF (then NaN, Infinity, -Infinity). */
WK_API wk_status wk_json_writer_double(wk_json_writer *w, double d)
{
    wk_event ev;
    ev.type = WK_EV_FLOAT;
    ev.f32 = false;
    ev.v.f = d;
    return write_item(w, &ev);
}

/* The out-of-line halves of wk_json_writer_bool, _nil. */
WK_API wk_status wk_json_writer_bool_slow(wk_json_writer *w, bool b)
{
    wk_event ev;
    ev.type = WK_EV_BOOL;
    ev.v.b = b;
    return write_item(w, &ev);
}

WK_API wk_status wk_json_writer_nil_slow(wk_json_writer *w)
{
    wk_event ev;
    ev.type = WK_EV_NIL;
    return write_item(w, &ev);
}

/* The out-of-line half of wk_json_writer_begin_map, _array: opens an object or array where
 * a value is due (WK_ERR_TYPE as a key, WK_ERR_DEPTH past the writer's limit; latched). */
WK_API wk_status wk_json_writer_begin_slow(wk_json_writer *w, bool object)
{
    if (w->err.code != WK_OK) {
        return w->err.code;
    }
    wfail f = {WK_OK, NULL};
    int slot = open_slot(w, &f);
    if (slot == SLOT_KEY) {
        wfailed(&f, WK_ERR_TYPE, "map key is an array, map or ext (JSON keys are strings)");
    } else if (slot == SLOT_VALUE && w->depth >= WK_JSON_WRITER_MAX_DEPTH) {
        wfailed(&f, WK_ERR_DEPTH, "nesting deeper than the writer's limit");
    } else if (slot == SLOT_VALUE) {
        w->frame[++w->depth] = (uint8_t)((object ? F_OBJECT : 0) |
                                         ((w->flags & WK_JSON_WRITE_PRETTY) ? WK__JW_STOP : 0));
        if (put_byte(w->out, object ? '{' : '[', &f) == WK_OK) {
            return WK_OK;
        }
    }
    return latch(w, &f);
}

/* The out-of-line half of wk_json_writer_end: closes the innermost container (WK_ERR_STATE,
 * latched, when none is open or an object's key has no value yet), on its own line in pretty
 * output; the top-level value done, what follows it (top_done). */
WK_API wk_status wk_json_writer_end_slow(wk_json_writer *w)
{
    if (w->err.code != WK_OK) {
        return w->err.code;
    }
    wfail f = {WK_OK, NULL};
    if (w->depth == 0) {
        wfailed(&f, WK_ERR_STATE, "END event with no open array or map");
        return latch(w, &f);
    }
    uint8_t fr = w->frame[w->depth];
    if (fr & F_VALUE) {
        wfailed(&f, WK_ERR_STATE, "map ended after a key, before its value");
        return latch(w, &f);
    }
    /* pretty output: a non-empty container closes on its own line at its parent's indent */
    w->depth--;
    wk_status st = WK_OK;
    if ((w->flags & WK_JSON_WRITE_PRETTY) && (fr & F_ITEMS)) {
        st = put_newline_indent(w->out, w->depth, w->indent, &f);
    }
    if (st == WK_OK) {
        st = put_byte(w->out, (fr & F_OBJECT) ? '}' : ']', &f);
    }
    if (st == WK_OK && w->depth == 0) {
        st = top_done(w, &f);
    }
    return st == WK_OK ? WK_OK : latch(w, &f);
}

/* One event of any type, dispatched to the typed calls (their inline fast paths included);
 * the other types (float, bin, ext, timestamp, raw number) through write_item. */
WK_API wk_status wk_json_writer_event(wk_json_writer *w, const wk_event *ev)
{
    switch (ev->type) {
    case WK_EV_STR:
        return wk_json_writer_str(w, ev->v.str.ptr, ev->v.str.len);
    case WK_EV_INT:
        return wk_json_writer_int(w, ev->v.i);
    case WK_EV_UINT:
        return wk_json_writer_uint(w, ev->v.u);
    case WK_EV_BOOL:
        return wk_json_writer_bool(w, ev->v.b);
    case WK_EV_NIL:
        return wk_json_writer_nil(w);
    case WK_EV_ARRAY:
        return wk_json_writer_begin_array(w);
    case WK_EV_MAP:
        return wk_json_writer_begin_map(w);
    case WK_EV_END:
        return wk_json_writer_end(w);
    default:
        return write_item(w, ev);
    }
}

/* The wk_sink adapter: self is the wk_json_writer (wk_json_writer_sink). */
static wk_status sink_event(void *self, const wk_event *ev)
{
    return wk_json_writer_event(self, ev);
}

static wk_status sink_error(const void *self, wk_error *err)
{
    *err = ((const wk_json_writer *)self)->err;
    return err->code;
}

/* Fills sink so that its events go to w; w must outlive it. */
WK_API void wk_json_writer_sink(wk_json_writer *w, wk_sink *sink)
{
    sink->event = sink_event;
    sink->error = sink_error;
    sink->self = w;
}

/* The out-of-line half of wk_json_writer_finish: WK_ERR_STATE (latched) when a container
 * is still open; the writer's error, if any, into err. */
WK_API wk_status wk_json_writer_finish_slow(wk_json_writer *w, wk_error *err)
{
    if (w->err.code == WK_OK && w->depth != 0) {
        w->frame[w->depth] |= WK__JW_STOP;
        w->err.code = WK_ERR_STATE;
        w->err.msg = "an array or map was left open";
        w->err.offset = w->out->len;
    }
    if (err != NULL) {
        *err = w->err;
    }
    return w->err.code;
}

/* ---- tree writer ------------------------------------------------------------------------- */

/* A scalar value node (fast paths for the common types). */
static inline wk_status put_node(wk_buf *b, const wk_value *v, unsigned flags, wfail *f)
{
    char t[24];
    switch ((wk_value_type)v->type) {
    case WK_VAL_STR:
        return put_str_node(b, v, 0, 0, f);
    case WK_VAL_UINT:
        if (b->cap - b->len >= 20) {
            b->len += fmt_u64(v->u.u, (char *)b->data + b->len);
            return WK_OK;
        }
        return put(b, t, fmt_u64(v->u.u, t), f);
    case WK_VAL_INT:
        return put(b, t, fmt_i64(v->u.i, t), f);
    default: {
        /* the other types through their event form, so a node prints as the event writer
         * prints the same event */
        wk_event ev;
        if (!wk_value_event(v, &ev)) {
            return wfailed(f, WK_ERR_ARG, "value of unknown type in the tree");
        }
        if (ev.type == WK_EV_EXT) {
            return put_ext(b, &ev, f);
        }
        return put_scalar(b, &ev, flags, f);
    }
    }
}

/* A container being written by the pretty walker: the node and its next child's index. */
typedef struct wframe {
    const wk_value *node;
    uint32_t i;
} wframe;

/* A container being written by the compact walker: the next child and the end. */
typedef struct cframe {
    const wk_value *it;
    const wk_value *end;
    uint8_t close; /* '}' (a map: it walks key, value, key, value) or ']' */
} cframe;

/* A finite double node (a float32 one by its flag) at the raw cursor d, after the separator
 * `sep` (0: none): the cursor after it. The caller has checked the room (1 +
 * WK__DTOA_JSON_MAX) and that the value is finite. */
static inline uint8_t *put_finite_float(uint8_t *d, uint8_t sep, const wk_value *v)
{
    *d = sep;
    d += sep != 0;
    return d + ((v->flags & WK_VALF_F32) != 0 ? wk__ftoa_json((float)v->u.f, (char *)d)
                                               : wk__dtoa_json(v->u.f, (char *)d));
}

/*
 * The compact (not pretty) tree walker. It writes through a raw cursor `d` into the room the
 * buffer already has: each node asks for its worst case (a plain string: its length plus the
 * quotes and separator; a number: 24 bytes; a bracket or comma: 1) and is written with plain
 * stores when that much is there. Otherwise the cursor is handed back to `out` and the node
 * goes through the checked helpers (put_byte, put_str_node, put_node), which grow the buffer or
 * fill a fixed one to its last byte, so the output is the same as theirs byte for byte.
 */
static wk_status encode_compact(const wk_value *v, unsigned flags, wk_buf *out, wk_error *err)
{
    cframe stack[WK_JSON_WRITER_MAX_DEPTH]; /* the ancestors of the open container */
    size_t depth = 0;                        /* open containers */
    const wk_value *it = NULL;               /* the open container's next child */
    const wk_value *fend = NULL;             /* and its end */
    uint8_t close = 0;                       /* and its closing bracket */
    wfail f = {WK_OK, NULL};
    const wk_value *cur = v;
    const wk_value *key = NULL; /* the key of cur when cur is a map value */
    uint8_t *d;
    uint8_t *lim;
    uint8_t sep = 0; /* ',' before cur unless it is the first child (0) */

#define ROOM(n) ((size_t)(lim - d) >= (n))
#define SYNC() (out->len = d != NULL ? (size_t)(d - out->data) : out->len)
#define RELOAD()                                                                            \
    (d = out->data != NULL ? out->data + out->len : NULL,                                    \
     lim = out->data != NULL ? out->data + out->cap : NULL)
    RELOAD();

enter:
    /* cur: a value to write in full, after `sep` and (in a map) `key` and ':'. A plain
     * string key is copied in place; any other key goes through put_str_node or put_key
     * (scalar keys as the string of their JSON text). */
    if (key != NULL) {
        size_t kn = key->len;
        if (WK__LIKELY(key->type == WK_VAL_STR && (key->flags & WK_VALF_PLAIN) && ROOM(4) &&
                       kn <= (size_t)(lim - d) - 4)) {
            *d = sep;
            d += sep != 0;
            *d++ = '"';
            copy_words(d, (const uint8_t *)key->u.str, kn);
            d += kn;
            *d++ = '"';
            *d++ = ':';
        } else {
            SYNC();
            wk_status st;
            if (key->type == WK_VAL_STR) {
                st = put_str_node(out, key, sep, ':', &f);
            } else {
                wk_event kev;
                st = sep != 0 ? put_byte(out, sep, &f) : WK_OK;
                if (st == WK_OK) {
                    st = wk_value_event(key, &kev)
                             ? put_key(out, &kev, flags, &f)
                             : wfailed(&f, WK_ERR_ARG, "value of unknown type in the tree");
                }
                if (st == WK_OK) {
                    st = put_byte(out, ':', &f);
                }
            }
            if (st != WK_OK) {
                goto fail;
            }
            RELOAD();
        }
        sep = 0;
        key = NULL;
    }
    /* the value itself: a container opens (its children follow at `next`), a scalar is
     * written whole, each with plain stores when the room is there, else through `slow` */
    switch ((wk_value_type)cur->type) {
    case WK_VAL_ARRAY:
    case WK_VAL_MAP: {
        uint8_t open = cur->type == WK_VAL_MAP ? '{' : '[';
        if (depth >= WK_JSON_WRITER_MAX_DEPTH) {
            wfailed(&f, WK_ERR_DEPTH, "nesting deeper than the writer's limit");
            goto fail;
        }
        if (WK__LIKELY(ROOM(2))) {
            *d = sep;
            d += sep != 0;
            *d++ = open;
        } else {
            SYNC();
            if ((sep != 0 && put_byte(out, sep, &f) != WK_OK) ||
                put_byte(out, open, &f) != WK_OK) {
                goto fail;
            }
            RELOAD();
        }
        /* the open container lives in it/fend/close; the stack keeps its ancestors */
        if (depth != 0) {
            stack[depth - 1].it = it;
            stack[depth - 1].end = fend;
            stack[depth - 1].close = close;
        }
        depth++;
        /* the same pointer for u.pairs: a wk_pair is two wk_value */
        it = cur->u.items;
        size_t nitems = cur->type == WK_VAL_MAP ? 2 * (size_t)cur->len : cur->len;
        fend = nitems != 0 ? cur->u.items + nitems : it; /* an empty container may hold NULL */
        close = (uint8_t)(open + 2); /* '{' + 2 == '}', '[' + 2 == ']' */
        sep = 0;
        /* an array that starts with a run of finite doubles (coordinates, vectors): the run
         * is written here, as the FLOAT case below writes each, without the per-node
         * dispatch; the first child that is not one (or too little room) goes on at `next` */
        if (close == ']') {
            while (it != fend && it->type == WK_VAL_FLOAT &&
                   WK__LIKELY(ROOM(1 + WK__DTOA_JSON_MAX) && __builtin_isfinite(it->u.f))) {
                d = put_finite_float(d, sep, it);
                sep = ',';
                it++;
            }
        }
        goto next;
    }
    case WK_VAL_STR: {
        /* a string the parser marked plain (nothing to escape) is copied as it is */
        size_t n = cur->len;
        if (WK__LIKELY((cur->flags & WK_VALF_PLAIN) && ROOM(3) && n <= (size_t)(lim - d) - 3)) {
            *d = sep;
            d += sep != 0;
            *d++ = '"';
            copy_words(d, (const uint8_t *)cur->u.str, n);
            d += n;
            *d++ = '"';
            break;
        }
        SYNC();
        if (put_str_node(out, cur, sep, 0, &f) != WK_OK) {
            goto fail;
        }
        RELOAD();
        break;
    }
    case WK_VAL_UINT:
        if (WK__LIKELY(ROOM(24))) {
            *d = sep;
            d += sep != 0;
            d += wk__fmt_u64_room(cur->u.u, d);
            break;
        }
        goto slow;
    case WK_VAL_INT:
        if (WK__LIKELY(ROOM(24))) {
            *d = sep;
            d += sep != 0;
            if (cur->u.i < 0) {
                *d++ = '-';
                d += wk__fmt_u64_room(0 - (uint64_t)cur->u.i, d);
            } else {
                d += wk__fmt_u64_room((uint64_t)cur->u.i, d);
            }
            break;
        }
        goto slow;
    case WK_VAL_FLOAT:
        /* finite doubles print straight at the cursor (NaN and infinities, an error or the
         * extension's words, take the checked path) */
        if (WK__LIKELY(ROOM(1 + WK__DTOA_JSON_MAX) && __builtin_isfinite(cur->u.f))) {
            d = put_finite_float(d, sep, cur);
            break;
        }
        goto slow;
    case WK_VAL_BOOL:
    case WK_VAL_NIL:
        if (WK__LIKELY(ROOM(8))) {
            *d = sep;
            d += sep != 0;
            if (cur->type == WK_VAL_NIL) {
                memcpy(d, "null", 4);
                d += 4;
            } else if (cur->u.b) {
                memcpy(d, "true", 4);
                d += 4;
            } else {
                memcpy(d, "false", 5);
                d += 5;
            }
            break;
        }
        goto slow;
    default:
    slow:
        /* NaN and infinities, binary, ext, timestamps, raw numbers, or too little room: the
         * checked helpers, the cursor synced to the buffer around them */
        SYNC();
        if ((sep != 0 && put_byte(out, sep, &f) != WK_OK) || put_node(out, cur, flags, &f) != WK_OK) {
            goto fail;
        }
        RELOAD();
        break;
    }
    sep = ',';
    key = NULL;

next:
    /* the next child of the open container (a map's as key then value), or its closing
     * bracket and back to its parent; the root written, the walk is done */
    while (depth > 0) {
        if (it != fend) {
            if (close == '}') {
                key = it;
                cur = it + 1;
                it += 2;
            } else {
                cur = it++;
            }
            goto enter;
        }
        if (WK__LIKELY(ROOM(1))) {
            *d++ = close;
        } else {
            SYNC();
            if (put_byte(out, close, &f) != WK_OK) {
                goto fail;
            }
            RELOAD();
        }
        depth--;
        if (depth != 0) {
            it = stack[depth - 1].it;
            fend = stack[depth - 1].end;
            close = stack[depth - 1].close;
        }
        sep = ',';
    }
    SYNC();
    return WK_OK;

fail:
    SYNC();
    return wk_error_set(err, f.st, out->len, f.msg);
#undef ROOM
#undef SYNC
#undef RELOAD
}

/* Writes the tree v as JSON text into out (wirekit/json.h): compact output through
 * encode_compact, pretty output (indent clamped to 1..16) by the walk below. On failure out
 * holds what was written so far and err says what failed. */
WK_API wk_status wk_json_encode_value(const wk_value *v, const wk_json_write_opts *opts,
                                      wk_buf *out, wk_error *err)
{
    unsigned flags = opts != NULL ? opts->flags : 0;
    uint32_t indent = opts != NULL && opts->indent != 0 ? opts->indent : 2;
    indent = indent > 16 ? 16 : indent;
    const bool pretty = (flags & WK_JSON_WRITE_PRETTY) != 0;
    if (!pretty) {
        return encode_compact(v, flags, out, err);
    }
    /* The pretty walk: every child on its own line, indented by depth * indent; "key": value
     * with a space after the colon; an empty container stays "[]" or "{}". Through the
     * checked helpers only (pretty output is not the fast path). */
    wframe stack[WK_JSON_WRITER_MAX_DEPTH];
    size_t depth = 0;
    wfail f = {WK_OK, NULL};
    wk_status st;
    const wk_value *cur = v;

enter:
    /* cur: a value to write in full. */
    if (cur->type == WK_VAL_ARRAY || cur->type == WK_VAL_MAP) {
        if (depth >= WK_JSON_WRITER_MAX_DEPTH) {
            wfailed(&f, WK_ERR_DEPTH, "nesting deeper than the writer's limit");
            goto fail;
        }
        if (put_byte(out, cur->type == WK_VAL_MAP ? '{' : '[', &f) != WK_OK) {
            goto fail;
        }
        stack[depth].node = cur;
        stack[depth].i = 0;
        depth++;
        goto next;
    }
    if (put_node(out, cur, flags, &f) != WK_OK) {
        goto fail;
    }

next:
    /* the innermost container's next child (after ',' and its line), or its close on a line
     * of its own */
    while (depth > 0) {
        wframe *fr = &stack[depth - 1];
        const wk_value *node = fr->node;
        if (fr->i == node->len) {
            depth--;
            if (pretty && node->len != 0 && put_newline_indent(out, depth, indent, &f) != WK_OK) {
                goto fail;
            }
            if (put_byte(out, node->type == WK_VAL_MAP ? '}' : ']', &f) != WK_OK) {
                goto fail;
            }
            continue;
        }
        uint32_t i = fr->i++;
        if (i != 0 && put_byte(out, ',', &f) != WK_OK) {
            goto fail;
        }
        if (pretty && put_newline_indent(out, depth, indent, &f) != WK_OK) {
            goto fail;
        }
        if (node->type == WK_VAL_ARRAY) {
            cur = &node->u.items[i];
        } else {
            const wk_pair *pr = &node->u.pairs[i];
            if (pr->key.type == WK_VAL_STR && !pretty) {
                st = put_str_node(out, &pr->key, 0, ':', &f);
            } else {
                if (pr->key.type == WK_VAL_STR) {
                    st = put_str_node(out, &pr->key, 0, 0, &f);
                } else {
                    wk_event kev;
                    st = wk_value_event(&pr->key, &kev)
                             ? put_key(out, &kev, flags, &f)
                             : wfailed(&f, WK_ERR_ARG, "value of unknown type in the tree");
                }
                if (st == WK_OK) {
                    st = pretty ? put(out, ": ", 2, &f) : put_byte(out, ':', &f);
                }
            }
            if (st != WK_OK) {
                goto fail;
            }
            cur = &pr->val;
        }
        goto enter;
    }
    return WK_OK;

fail:
    return wk_error_set(err, f.st, out->len, f.msg);
}

/* ---- printers for the fused schema encoder (json_put.h) ---------------------------------- */

/* The printers of the fused schema encoder (json_put.h has the contracts): the writer's own
 * helpers without the latch. */
wk_status wk__json_put_string(wk_buf *b, const void *s, size_t n)
{
    wfail f = {WK_OK, NULL};
    return put_string(b, s, n, &f);
}

wk_status wk__json_put_base64(wk_buf *b, const void *s, size_t n)
{
    wfail f = {WK_OK, NULL};
    return put_base64(b, s, n, &f);
}

wk_status wk__json_put_timestamp(wk_buf *b, int64_t sec, uint32_t nsec)
{
    wfail f = {WK_OK, NULL};
    return put_timestamp(b, sec, nsec, &f);
}
