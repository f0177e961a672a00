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
 *
 * Flow: bytes -> these steps -> the loops that include this header: the event reader
 * (reader.c), the tree parser (decode.c, decode_loop.h), the validator (validate.c), the
 * fused schema decoder (schema_json_dec.c), the number conversions (json_number.c) and the
 * writer's UTF-8 check (writer.c). Each step returns the position after what it read, or
 * NULL with a wk__json_fail filled (status, static message, position): the callers report
 * the lexer's failure as it is, so every path words an error the same way.
 *
 * Contents, in order: the SIMD level (wk__json_simd, decided in simd.c); failures
 * (wk__json_fail and the helpers that fill it); literals and the grammar's small steps; the
 * byte classes and vectors; the wide scans (lex_scan.h, once per instance); short plain
 * strings; escapes (wk__json_escape, _unescape, _check_escapes); numbers (the eight-digit
 * word steps, wk__json_number and its wrappers, the small-integer fast paths).
 */
#ifndef WK_JSON_LEX_H
#define WK_JSON_LEX_H

#include <string.h>

#include "core/kernel_interface.h"
#include "core/number_interface.h"
#include "wirekit/core.h"
#include "wirekit/utf8.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* An AVX2 instance of the wide scans exists where the compiler can target AVX2 per function
 * (x86-64, GCC or clang); which instance runs is chosen at run time (wk__json_simd). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define WK__JSON_HAVE_AVX2 1
#define WK__JSON_AVX2_FN __attribute__((target("avx2")))
#include <immintrin.h>

#include "core/utf8_avx2_interface.h"
#else
#define WK__JSON_HAVE_AVX2 0
#endif

/* The instruction sets of the lexer's instances. */
enum { WK__JSON_SIMD_BASE = 1, WK__JSON_SIMD_AVX2 = 2 };

/* The instance chosen for the process, 0 until decided (simd.c). */
extern int wk__json_simd_level;

/* Decides the instance for the process and returns it (simd.c). */
int wk__json_simd_decide(void);

/* The instance to run: WK__JSON_SIMD_AVX2 when the CPU (and OS) have AVX2 and the library has
 * the instance, else WK__JSON_SIMD_BASE; the environment variable WK_JSON_SIMD=base forces the
 * baseline (tests, comparisons). Decided once per process; then one load and one compare,
 * inline (a call is a measurable share of the fused schema decoder's instructions per
 * record: wirekit bench --suite schema --callgrind). */
static inline int wk__json_simd(void)
{
    int level = __atomic_load_n(&wk__json_simd_level, __ATOMIC_RELAXED);
    return WK__LIKELY(level != 0) ? level : wk__json_simd_decide();
}

/* Forces the instance for the calls that follow (tests of each path in one process): a level
 * above what the machine has is lowered to it; 0 goes back to the automatic choice. */
void wk__json_simd_force(int level);

/* The lexer's hot helpers are inlined into each parser loop even at -O2, where GCC otherwise
 * keeps wk__json_scan_string out of line, which costs the parser several percent more
 * instructions on twitter.json (wirekit bench --suite json --callgrind). */
#if defined(__GNUC__)
#define WK__JSON_HOT static inline __attribute__((always_inline))
#else
#define WK__JSON_HOT static inline
#endif

/* Keeps a parser loop instance a function of its own (one per instruction set, chosen by a
 * dispatcher that would otherwise absorb both). */
#if defined(__GNUC__)
#define WK__NOINLINE __attribute__((noinline))
#else
#define WK__NOINLINE
#endif

/* A lexer failure: status, static message, where. */
typedef struct wk__json_fail {
    wk_status st;       /* WK_OK until a step fails */
    const char *msg;    /* static */
    const uint8_t *at;  /* the byte the failure is reported at */
} wk__json_fail;

/* Fills f (st, static msg, where) and returns NULL, so a lexer step fails with
 * `return wk__json_failed(...)`. */
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

/* The word[0..n) at p (p <= end), as every literal is read: the position after it, or NULL
 * (f filled): "invalid literal" at p where the bytes differ, WK_ERR_TRUNCATED at `end` when
 * the input ends inside it. */
static inline const uint8_t *wk__json_word(const uint8_t *p, const uint8_t *end, const char *word,
                                           size_t n, wk__json_fail *f)
{
    size_t left = (size_t)(end - p);
    if (memcmp(p, word, left < n ? left : n) != 0) {
        return wk__json_failed(f, WK_ERR_SYNTAX, "invalid literal", p);
    }
    if (left < n) {
        return wk__json_failed(f, WK_ERR_TRUNCATED, "input ends inside a literal", end);
    }
    return p + n;
}

/* The literal true, false or null at p (p < end, p[0] is 't', 'f' or 'n'): one word compare
 * while five bytes are left (no libc call), else wk__json_word. */
WK__JSON_HOT const uint8_t *wk__json_literal(const uint8_t *p, const uint8_t *end,
                                             wk__json_fail *f)
{
    uint8_t c = p[0];
    if (WK__LIKELY(end - p >= 5)) {
        uint32_t w4 = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
                      (uint32_t)p[3] << 24;
        bool ok = c == 't'   ? w4 == 0x65757274u
                  : c == 'n' ? w4 == 0x6c6c756eu
                             : w4 == 0x736c6166u && p[4] == 'e';
        if (WK__UNLIKELY(!ok)) {
            return wk__json_failed(f, WK_ERR_SYNTAX, "invalid literal", p);
        }
        return p + (c == 'f' ? 5 : 4);
    }
    return c == 't' ? wk__json_word(p, end, "true", 4, f)
           : c == 'n' ? wk__json_word(p, end, "null", 4, f)
                      : wk__json_word(p, end, "false", 5, f);
}
/* The grammar's failures, written once for the tree parser (decode_loop.h) and the
 * validator (validate_loop.h), which must report the same status, message and offset:
 * each fills f and returns NULL, so that a step reads `return wk__json_...(..., f);`. */

/* The byte at p cannot start a value. */
static inline const uint8_t *wk__json_not_a_value(const uint8_t *p, wk__json_fail *f)
{
    uint8_t c = *p;
    return wk__json_failed(f, WK_ERR_SYNTAX,
                           c == ']' || c == '}' ? "value expected before closing bracket"
                           : (c == 'N' || c == 'I')
                               ? "unexpected character (NaN/Infinity are not JSON)"
                               : "unexpected character where a value should start",
                           p);
}

/* The input ends (p == end) inside an open object or array. */
static inline const uint8_t *wk__json_ends_inside(bool object, const uint8_t *p,
                                                  wk__json_fail *f)
{
    return wk__json_failed(f, WK_ERR_TRUNCATED,
                           object ? "input ends inside an object" : "input ends inside an array",
                           p);
}

/* The byte at p after a value in an open container is neither ',' nor its closing bracket. */
static inline const uint8_t *wk__json_no_separator(bool object, const uint8_t *p,
                                                   wk__json_fail *f)
{
    return wk__json_failed(f, WK_ERR_SYNTAX,
                           object ? "',' or '}' expected in object"
                                  : "',' or ']' expected in array",
                           p);
}

/* After an array's ',' and its whitespace: p when a value can start there, else NULL. */
static inline const uint8_t *wk__json_array_item(const uint8_t *p, const uint8_t *end,
                                                 wk__json_fail *f)
{
    if (WK__UNLIKELY(p == end)) {
        return wk__json_ends_inside(false, p, f);
    }
    if (WK__UNLIKELY(*p == ']')) {
        return wk__json_failed(f, WK_ERR_SYNTAX, "trailing comma in array", p);
    }
    return p;
}

/* Where an object's key is due (after '{' or ',' and their whitespace): p when a string
 * starts there, else NULL. */
static inline const uint8_t *wk__json_key_start(const uint8_t *p, const uint8_t *end,
                                                wk__json_fail *f)
{
    if (WK__UNLIKELY(p == end)) {
        return wk__json_ends_inside(true, p, f);
    }
    if (WK__UNLIKELY(*p != '"')) {
        return wk__json_failed(f, WK_ERR_SYNTAX,
                               *p == '}' ? "trailing comma in object"
                                         : "object key must be a string",
                               p);
    }
    return p;
}


/* Validates one UTF-8 sequence starting at p (p[0] >= 0x80) that must end before `end`.
 * Returns the position after it, or NULL. */
static inline const uint8_t *wk__json_utf8_one(const uint8_t *p, const uint8_t *end)
{
    uint8_t c = p[0];
    size_t left = (size_t)(end - p);
    /* by the lead byte, with the second byte's range narrowed as in core/utf8.c: no
     * overlongs (E0, F0), no surrogates (ED), nothing above U+10FFFF (F4) */
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

/* The bytes the short-string step compares with ('"', '\\', and 0x20 for the control bytes),
 * in memory (simd.c): in code compiled for AVX2, GCC 12 builds a constant vector of equal
 * bytes from a general register (three instructions per constant per short string), where a
 * compare can read it from memory; it cannot when the value is out of sight. The loops of the
 * wide scans keep their constants in registers and are left as they are (memory constants
 * measured dearer there: wirekit bench --suite json --callgrind). */
enum { WK__JSON_VQUOTE, WK__JSON_VBSLASH, WK__JSON_VSPACE };
extern const uint8_t wk__json_vbytes[3][32] __attribute__((aligned(32)));
#if defined(__SSE2__)
#define WK__JSON_V16(i) _mm_load_si128((const __m128i *)(const void *)wk__json_vbytes[i])
#endif

/* The wide scans (lex_scan.h): the baseline instance under the plain names, and on
 * x86-64 with GCC or clang an AVX2 instance under name_avx2, for code compiled for AVX2 (the
 * parser loops instantiated with WK__JSON_AVX2_FN, chosen at run time by wk__json_simd()).
 * The instances, for grep (their definitions are lex_scan.h's WK__LEX(name)):
 *   wk__json_skip_ws_run, wk__json_skip_ws, wk__json_skip_ws_indent, wk__json_utf8_run3,
 *   wk__json_utf8_run, wk__json_scan_plain, wk__json_scan_string, wk__json_doc_start,
 *   wk__json_colon, wk__json_doc_end, and the same names with _avx2. */
#define WK__LEX(name) name
#define WK__LEX_FN static inline
#define WK__LEX_HOT WK__JSON_HOT
#define WK__LEX_AVX2 0
#include "formats/json/lex_scan.h"
#undef WK__LEX
#undef WK__LEX_FN
#undef WK__LEX_HOT
#undef WK__LEX_AVX2

#if WK__JSON_HAVE_AVX2
#define WK__LEX(name) name##_avx2
#define WK__LEX_FN static inline WK__JSON_AVX2_FN
#define WK__LEX_HOT WK__JSON_HOT WK__JSON_AVX2_FN
#define WK__LEX_AVX2 1
#include "formats/json/lex_scan.h"
#undef WK__LEX
#undef WK__LEX_FN
#undef WK__LEX_HOT
#undef WK__LEX_AVX2
#endif

/* The length of the plain string body at s (after the opening quote) when its closing
 * quote is within the next 16 bytes and nothing before it needs a look (escapes, controls,
 * non-ASCII); otherwise -2 when none of those 16 bytes needs a look (a longer plain start:
 * wk__json_scan_string may resume 16 bytes on), -1 else (it decides from s). One 16-byte
 * step, no loop: the fast path of short keys and values. Reads no further than `end`. */
WK__JSON_HOT int wk__json_short_plain(const uint8_t *s, const uint8_t *end)
{
    /* fewer than 16 bytes left: byte by byte, never past end */
    if (end - s < 16) {
        for (const uint8_t *q = s; q < end; q++) {
            if (wk__json_str_stop[*q]) {
                return *q == '"' ? (int)(q - s) : -1;
            }
        }
        return -1;
    }
#if defined(__SSE2__)
    /* one 16-byte step: the first byte that needs a look decides (a quote: the string ends
     * there; anything else: the general scan) */
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)s);
    __m128i quote = _mm_cmpeq_epi8(x, WK__JSON_V16(WK__JSON_VQUOTE));
    __m128i m = _mm_or_si128(_mm_or_si128(quote, _mm_cmpeq_epi8(x, WK__JSON_V16(WK__JSON_VBSLASH))),
                             _mm_cmplt_epi8(x, WK__JSON_V16(WK__JSON_VSPACE)));
    unsigned mask = (unsigned)_mm_movemask_epi8(m);
    if (mask == 0) {
        return -2;
    }
    unsigned k = (unsigned)__builtin_ctz(mask);
    /* whether the first stop is the quote, from the compare rather than a load at s + k */
    if (((unsigned)_mm_movemask_epi8(quote) >> k) & 1u) {
        return (int)k;
    }
#else
    for (int k = 0; k < 16; k++) {
        if (wk__json_str_stop[s[k]]) {
            return s[k] == '"' ? k : -1;
        }
    }
    return -2;
#endif
    return -1;
}


/* The value of the four hex digits at p (either case), or -1 when one is not a hex digit. */
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
 * Decodes the escape at p (p[0] is '\\' and p[1] is before `close`, the end of the string
 * body): returns the position after it, with its code point in *cp (a surrogate pair gives
 * one), or NULL on failure (f filled): a bad escape, a lone surrogate. The one definition of
 * JSON's escapes: wk__json_unescape writes what it returns, wk__json_check_escapes only looks.
 */
static inline const uint8_t *wk__json_escape(const uint8_t *p, const uint8_t *close, uint32_t *cp,
                                             wk__json_fail *f)
{
    /* the byte each one-letter escape stands for; 0: not one ('u', or not an escape) */
    static const uint8_t simple[128] = {['"'] = '"',  ['\\'] = '\\', ['/'] = '/',  ['b'] = '\b',
                                        ['f'] = '\f', ['n'] = '\n',  ['r'] = '\r', ['t'] = '\t'};
    uint8_t c = p[1];
    if (c < 128 && simple[c] != 0) {
        *cp = simple[c];
        return p + 2;
    }
    if (c != 'u') {
        return wk__json_failed(f, WK_ERR_SYNTAX, "invalid escape in string", p);
    }
    int u = close - p >= 6 ? wk__json_hex4(p + 2) : -1;
    if (u < 0) {
        return wk__json_failed(f, WK_ERR_SYNTAX, "invalid \\u escape (needs four hex digits)", p);
    }
    if (u < 0xD800 || u > 0xDFFF) {
        *cp = (uint32_t)u;
        return p + 6;
    }
    int lo = -1;
    if (u <= 0xDBFF && close - p >= 12 && p[6] == '\\' && p[7] == 'u') {
        lo = wk__json_hex4(p + 8);
    }
    if (lo < 0xDC00 || lo > 0xDFFF) {
        return wk__json_failed(f, WK_ERR_UTF8, "lone surrogate in \\u escape", p);
    }
    *cp = 0x10000u + ((uint32_t)(u - 0xD800) << 10) + (uint32_t)(lo - 0xDC00);
    return p + 12;
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
        uint32_t cp;
        p = wk__json_escape(p, close, &cp, f);
        if (p == NULL) {
            return (size_t)-1;
        }
        if (cp < 0x80) {
            *d++ = (uint8_t)cp;
        } else {
            d += wk_utf8_encode(cp, d);
        }
    }
    return (size_t)(d - dst);
}

/* Checks the escapes of a string body that ends at `close`, from its first backslash at esc,
 * as wk__json_unescape decodes them (same failures), writing nothing. */
static inline bool wk__json_check_escapes(const uint8_t *esc, const uint8_t *close,
                                          wk__json_fail *f)
{
    const uint8_t *p = esc;
    do {
        uint32_t cp;
        p = wk__json_escape(p, close, &cp, f);
        if (p == NULL) {
            return false;
        }
        p = p < close ? memchr(p, '\\', (size_t)(close - p)) : NULL;
    } while (p != NULL);
    return true;
}

/* A lexed number: a non-negative integer that fits 64 bits (WK__NUM_UINT), a negative one
 * (WK__NUM_INT), anything else as the nearest double (WK__NUM_DOUBLE), or, with raw numbers
 * or when only checked, no value (WK__NUM_RAW: the caller keeps the text). */
enum { WK__NUM_UINT, WK__NUM_INT, WK__NUM_DOUBLE, WK__NUM_RAW };
typedef struct wk__json_num {
    int kind; /* a WK__NUM_* */
    union {
        uint64_t u; /* WK__NUM_UINT */
        int64_t i;  /* WK__NUM_INT */
        double d;   /* WK__NUM_DOUBLE */
    } v;
} wk__json_num;

/* An ASCII decimal digit? (one compare: c - '0' wraps for bytes below '0') */
static inline bool wk__json_digit(uint8_t c)
{
    return (uint8_t)(c - '0') < 10;
}


/* How many of the eight bytes of x (little-endian: the first byte lowest) are decimal digits
 * before the first one that is not: a byte is a digit when its high nibble is 3 before and
 * after adding 6. A carry out of a non-digit byte only changes bytes after it. */
static inline unsigned wk__json_digits8_count(uint64_t x)
{
    const uint64_t hi = 0xF0F0F0F0F0F0F0F0ull;
    const uint64_t threes = 0x3030303030303030ull;
    uint64_t other = ((x & hi) ^ threes) | (((x + 0x0606060606060606ull) & hi) ^ threes);
    return other != 0 ? (unsigned)__builtin_ctzll(other) / 8 : 8;
}

/* The value of the eight ASCII digits in x (the first digit in the lowest byte): pairs, then
 * quadruples, then the whole, in three multiplications. */
static inline uint64_t wk__json_digits8_value(uint64_t x)
{
    x -= 0x3030303030303030ull;
    x = x * 10 + (x >> 8);
    x = (((x & 0x000000FF000000FFull) * (100 + (1000000ull << 32))) +
         (((x >> 16) & 0x000000FF000000FFull) * (1 + (10000ull << 32)))) >>
        32;
    return x;
}

/* The digits of the word x (p[0] lowest) before its first other byte, k of them (k < 8),
 * moved to the top with '0's below: the same value for wk__json_digits8_value. */
static inline uint64_t wk__json_digits8_top(uint64_t x, unsigned k)
{
    return (x << (8 * (8 - k))) | (0x3030303030303030ull >> (8 * k));
}

/* 10^k for k = 0..8. */
static const uint64_t wk__json_pow10_8[9] = {1,      10,      100,      1000,     10000,
                                             100000, 1000000, 10000000, 100000000};

/* The eight bytes at p as one word, p[0] lowest (the digit helpers' order). */
static inline uint64_t wk__json_load8(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

/* The first byte at or after p (p <= end) that is not a decimal digit, or `end`: eight bytes
 * at a time while eight are left (never reading at or past `end`), then one at a time. */
static inline const uint8_t *wk__json_skip_digits(const uint8_t *p, const uint8_t *end)
{
    while (end - p >= 8) {
        unsigned k = wk__json_digits8_count(wk__json_load8(p));
        if (k < 8) {
            return wk__advance(p, k);
        }
        p += 8;
    }
    while (p < end && wk__json_digit(*p)) {
        p++;
    }
    return p;
}

/*
 * The number grammar at p (p[0] is '-' or a digit), written once for the lexer and the
 * validator: returns the position after the number or NULL (f filled). With `check` (a
 * constant wherever it is inlined) it only moves over the digits, eight at a time, and
 * converts nothing; with `raw` it converts nothing either and kind is WK__NUM_RAW (the text is
 * [p, return)); otherwise *out is the number, an integer when it fits int64/uint64.
 */
WK__JSON_HOT const uint8_t *wk__json_number(const uint8_t *p, const uint8_t *end, bool raw,
                                            bool check, wk__json_num *out, wk__json_fail *f)
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
    /* The value is gathered as w * 10^q: the first 19 significant digits in w (they fit
     * 64 bits), later ones only counted in q, with `trunc` noting a nonzero one dropped (the
     * converter then checks the neighbour too). `check` walks the grammar and keeps none. */
    uint64_t w = 0;
    int nd = 0;      /* significant digits in w */
    int64_t q = 0;   /* decimal exponent of w */
    bool trunc = false;
    const uint8_t *int_start = p;
    /* the integer part: a lone 0, or digits without a leading zero */
    if (*p == '0') {
        p++;
        if (p < end && wk__json_digit(*p)) {
            return wk__json_failed(f, WK_ERR_SYNTAX, "leading zero in number", s);
        }
    } else if (check && WK__LIKELY(wk__json_digit(*p))) {
        p = wk__json_skip_digits(p, end);
    } else if (WK__LIKELY(wk__json_digit(*p))) {
        if (end - p >= 8) {
            /* up to eight leading digits in one word (the eight bytes are inside the input) */
            uint64_t x = wk__json_load8(p);
            unsigned k = wk__json_digits8_count(x);
            if (k < 8) {
                x = wk__json_digits8_top(x, k);
            }
            w = wk__json_digits8_value(x);
            nd = (int)k;
            p += k;
        }
        while (p < end && wk__json_digit(*p)) {
            uint8_t dgt = (uint8_t)(*p - '0');
            if (WK__LIKELY(nd < 19)) {
                w = w * 10 + dgt;
                nd++;
            } else {
                trunc |= dgt != 0;
                q++;
            }
            p++;
        }
    } else {
        return wk__json_failed(f, WK_ERR_SYNTAX, "invalid number", s);
    }
    size_t int_digits = (size_t)(p - int_start);
    bool is_int = true;
    /* the fraction: at least one digit after '.'; leading zeros of a zero w only lower q */
    if (p < end && *p == '.') {
        is_int = false;
        p++;
        if (p == end) {
            return wk__json_failed(f, WK_ERR_TRUNCATED, "number ends after '.'", p);
        }
        if (!wk__json_digit(*p)) {
            return wk__json_failed(f, WK_ERR_SYNTAX, "digit expected after '.' in number", p);
        }
        if (check) {
            p = wk__json_skip_digits(p, end);
        } else {
            do {
                if (w != 0 && nd <= 11 && end - p >= 8) {
                    /* up to eight fraction digits in one word, while w keeps room for them */
                    uint64_t x = wk__json_load8(p);
                    unsigned k = wk__json_digits8_count(x); /* >= 1: *p is a digit */
                    if (k < 8) {
                        x = wk__json_digits8_top(x, k);
                    }
                    w = w * wk__json_pow10_8[k] + wk__json_digits8_value(x);
                    nd += (int)k;
                    q -= (int64_t)k;
                    p += k;
                    continue; /* to the loop's test */
                }
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
    }
    /* the exponent: 'e' or 'E', a sign, at least one digit; its value saturates far beyond
     * any double's range, so a huge exponent cannot overflow q */
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
        if (check) {
            p = wk__json_skip_digits(p, end);
        } else {
            int64_t e = 0;
            do {
                if (e < 1000000000000000ll) {
                    e = e * 10 + (*p - '0');
                }
                p++;
            } while (p < end && wk__json_digit(*p));
            q += eneg ? -e : e;
        }
    }
    if (raw || check) {
        out->kind = WK__NUM_RAW;
        return p;
    }
    /* An integer without fraction or exponent is WK__NUM_UINT or WK__NUM_INT when it fits
     * 64 bits (w is exact up to 19 digits; 20 digits are redone with overflow checks);
     * everything else is converted to the nearest double from w, q and the text. */
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

/* The most bytes wk__json_number_short reads from its number's first digit: 19 integer
 * digits and the byte after them, or up to 19 digits with a '.' among them and the byte
 * after the last. Its caller makes sure these are inside the input. */
#define WK__JSON_SHORT_NUM_READ 40

/* The decimal digits of s from s[i] on, while fewer than 19 are read, added one at a time
 * to *w (w = w * 10 + digit): the index of the first byte not taken (19 at most). Reads no
 * further than s[18]; the caller knows those bytes are inside the input. */
WK__JSON_HOT unsigned wk__json_digits19(const uint8_t *s, unsigned i, uint64_t *w)
{
    uint64_t x = *w;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 19
#endif
    for (; i < 19; i++) {
        unsigned d = (unsigned)(s[i] - '0');
        if (d > 9) {
            break;
        }
        x = x * 10 + d;
    }
    *w = x;
    return i;
}

/*
 * A number of at most 19 digits in all (integer part and fraction; no exponent) at p (p[0]
 * is '-' or a digit), read one digit at a time: the kind, value and end wk__json_number
 * gives it, or NULL for anything else (an exponent, more digits, a leading zero, "-0", a
 * malformed number: wk__json_number then reads it from p and reports every error). The
 * caller checks that WK__JSON_SHORT_NUM_READ bytes after the sign are inside the input, so
 * no step tests for the end. Why digits one by one (issue 26; yyjson's way): the branch on
 * each byte is predicted (numbers of one document have like lengths), so the CPU runs on to
 * the next token while the value is still being summed; a word-at-a-time count puts the
 * cursor behind a load, the compares and a count, and took more instructions for the
 * 17-digit doubles of canada.json. The value is w * 10^-(fraction digits) with w exact
 * (below 10^19), the same w and exponent wk__json_number gathers, so the double is the same.
 */
WK__JSON_HOT const uint8_t *wk__json_number_short(const uint8_t *p, wk__json_num *out)
{
    bool neg = *p == '-';
    const uint8_t *q = p + neg;
    unsigned d = (unsigned)(q[0] - '0');
    if (d > 9) {
        return NULL;
    }
    uint64_t w = d;
    unsigned i = 1; /* integer digits read */
    if (d == 0) {
        if (wk__json_digit(q[1])) {
            return NULL; /* a leading zero: the lexer's error */
        }
    } else {
        i = wk__json_digits19(q, 1, &w);
        if (i == 19 && wk__json_digit(q[19])) {
            return NULL; /* 20 digits or more */
        }
    }
    uint8_t c = q[i];
    if (c != '.') {
        if ((c | 0x20) == 'e') {
            return NULL;
        }
        if (!neg) {
            out->kind = WK__NUM_UINT;
            out->v.u = w;
            return q + i;
        }
        if (w == 0 || w > (1ull << 63)) {
            return NULL; /* "-0" is a float, and below INT64_MIN */
        }
        out->kind = WK__NUM_INT;
        out->v.i = (int64_t)(0 - w);
        return q + i;
    }
    /* the fraction: as many digits as leave the total at 19 at most (w stays below 10^19;
     * a longer one is left to the lexer) */
    const uint8_t *fr = q + i + 1;
    unsigned j = wk__json_digits19(fr, 0, &w); /* wraps only past 19 digits, refused below */
    if (j == 0 || i + j > 19 || wk__json_digit(fr[j]) || (fr[j] | 0x20) == 'e') {
        return NULL;
    }
    out->kind = WK__NUM_DOUBLE;
    out->v.d = wk__digits_to_double(w, -(int)j, neg, false, (const char *)p,
                                    (size_t)(fr + j - p));
    return fr + j;
}

/* Lexes a number at p (p[0] is '-' or a digit): wk__json_number converting (or, with `raw`,
 * giving its text). */
static inline const uint8_t *wk__json_lex_number(const uint8_t *p, const uint8_t *end, bool raw,
                                                 wk__json_num *out, wk__json_fail *f)
{
    return wk__json_number(p, end, raw, false, out, f);
}

/* Checks the number at p (p[0] is '-' or a digit) as wk__json_lex_number would read it, and
 * converts nothing: the position after it, or NULL (f filled, the lexer's failure). */
WK__JSON_HOT const uint8_t *wk__json_check_number(const uint8_t *p, const uint8_t *end,
                                                  wk__json_fail *f)
{
    wk__json_num unused;
    return wk__json_number(p, end, false, true, &unused, f);
}

/* A small non-negative integer at p: up to 18 digits, no leading zero, followed by a byte
 * (not the end of the input) that cannot continue a number. Returns the byte after the
 * digits with *v set, or NULL (wk__json_lex_number decides). The same value and end as
 * wk__json_lex_number gives such text, in fewer steps. */
static inline const uint8_t *wk__json_small_uint(const uint8_t *p, const uint8_t *end,
                                                 uint64_t *v)
{
    size_t left = (size_t)(end - p);
    const uint8_t *stop = p + (left < 18 ? left : 18); /* at most 18 digits */
    const uint8_t *q = p;
    uint64_t x = 0;
    while (q < stop && wk__json_digit(*q)) {
        x = x * 10 + (uint64_t)(*q - '0');
        q++;
    }
    if (q == end) {
        return NULL; /* a value cannot end the input: the general path reports it */
    }
    uint8_t c = *q;
    if (q == p || wk__json_digit(c) || c == '.' || (c | 0x20) == 'e' || (*p == '0' && q - p > 1)) {
        return NULL;
    }
    *v = x;
    return q;
}

/* How many decimal digits start the 16 bytes at p (16 when all are): one compare pair on
 * SSE2, two word counts elsewhere. */
static inline unsigned wk__json_digits16_count(const uint8_t *p)
{
#if defined(__SSE2__)
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i d = _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8('0' - 1)),
                              _mm_cmplt_epi8(x, _mm_set1_epi8('9' + 1)));
    return (unsigned)__builtin_ctz(~(unsigned)_mm_movemask_epi8(d));
#else
    unsigned n = wk__json_digits8_count(wk__json_load8(p));
    return n < 8 ? n : 8 + wk__json_digits8_count(wk__json_load8(p + 8));
#endif
}

/*
 * An integer at p (p[0] is '-' or a digit; raw numbers off) of at most 15 digits with no
 * fraction or exponent, counted in one 16-byte step and converted in one or two words of
 * eight: the kind, value and end that wk__json_lex_number gives it. Only while those 16
 * bytes lie inside the input, so the byte after the digits is there too and the number is
 * whole. Returns the byte after the digits, or NULL for anything else (the lexer then
 * decides, and reports every error).
 */
WK__JSON_HOT const uint8_t *wk__json_word_int(const uint8_t *p, const uint8_t *end,
                                              wk__json_num *out)
{
    bool neg = *p == '-';
    const uint8_t *q = p + neg;
    if (end - q < 16) {
        return NULL;
    }
    unsigned n = wk__json_digits16_count(q);
    if (n == 0 || n == 16 || (n > 1 && *q == '0') || q[n] == '.' || (q[n] | 0x20) == 'e') {
        return NULL; /* not a digit after '-', 16 digits or more, a leading zero, a float */
    }
    uint64_t w;
    if (n < 8) {
        w = wk__json_digits8_value(wk__json_digits8_top(wk__json_load8(q), n));
    } else {
        /* the first n - 8 digits, then the last eight */
        uint64_t hi = 0;
        if (n > 8) {
            hi = wk__json_digits8_value(wk__json_digits8_top(wk__json_load8(q), n - 8));
        }
        w = hi * 100000000u + wk__json_digits8_value(wk__json_load8(q + n - 8));
    }
    if (!neg) {
        out->kind = WK__NUM_UINT;
        out->v.u = w;
        return q + n;
    }
    if (w == 0) {
        return NULL; /* "-0" is a float */
    }
    out->kind = WK__NUM_INT;
    out->v.i = (int64_t)(0 - w);
    return q + n;
}

#endif
