/*
 * wk_mt_parse(): a vector fast path for the common shape of a Content-Type value, then the
 * general scanner (mt_parse.c) for everything else.
 *
 * Where it sits: the entry point of media type parsing (wirekit/mediatype.h) -> the fast path
 * here, or mt_parse.c's general scanner -> a wk_media_type for mt_serialize.c to render.
 *
 * The common shape is `type/subtype` followed by `;name=value` or `; name=value` parameters,
 * every part a non-empty run of letters, digits, '-', '.', '+' or '_', 8 to 63 bytes in all, no
 * parameter name repeated. SSE2 classifies 16 bytes at a time into a bit mask of the bytes
 * outside that alphabet; the parser then walks the mask's set bits (the delimiters) instead of
 * the bytes, hashes the essence for the well-known lookup, and writes only the fields a parse
 * defines (not the parameter array beyond nparams, nor the lowercase essence buffer unless it
 * is needed). Any surprise (another byte, whitespace elsewhere, an empty part, a trailing
 * ';', a duplicate name) hands the whole input to the general scanner, so the fast path only
 * ever answers for inputs whose result is simple to state; tests hold the two equal field for
 * field. Without SSE2 every input goes to the general scanner.
 */
#include "mediatype/mt_internal.h"

/* The fast path needs SSE2 and GCC/clang builtins (ctz); elsewhere it compiles away. */
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#define WK_MT_FAST 1
#endif

#ifdef WK_MT_FAST
/* Bit i of *special: byte i of the 16 in x is outside the fast alphabet. Bit i of *upper: it
 * is A-Z. A range test is one add that moves the range to the bottom of the signed bytes and
 * one signed compare. */
static inline void classify16(__m128i x, uint32_t *special, uint32_t *upper)
{
    __m128i lo = _mm_or_si128(x, _mm_set1_epi8(0x20));
    /* a-z after folding: 0x61..0x7A moved to -128..-103 */
    __m128i letter = _mm_cmpgt_epi8(_mm_set1_epi8(-102), _mm_add_epi8(lo, _mm_set1_epi8(0x1F)));
    /* '-' '.' '/' 0-9: 0x2D..0x39 moved to -128..-116; then '/' taken out */
    __m128i dig = _mm_cmpgt_epi8(_mm_set1_epi8(-115), _mm_add_epi8(x, _mm_set1_epi8(0x53)));
    dig = _mm_andnot_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('/')), dig);
    __m128i more = _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('+')),
                                _mm_cmpeq_epi8(x, _mm_set1_epi8('_')));
    __m128i safe = _mm_or_si128(_mm_or_si128(letter, dig), more);
    *special = (uint32_t)_mm_movemask_epi8(safe) ^ 0xFFFFu;
    *upper = (uint32_t)_mm_movemask_epi8(_mm_andnot_si128(_mm_cmpeq_epi8(x, lo), letter));
}

/* The masks of s[0..len), 8 <= len <= 63. Overlapping loads classify a byte the same way
 * twice, so ORing their masks is exact. */
static inline void classify(const uint8_t *s, size_t len, uint64_t *special, uint64_t *upper)
{
    uint32_t a, b;
    if (len < 16) {
        __m128i x = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)s),
                                       _mm_loadl_epi64((const __m128i *)(s + len - 8)));
        classify16(x, &a, &b);
        *special = (a & 0xFFu) | (uint64_t)(a >> 8) << (len - 8);
        *upper = (b & 0xFFu) | (uint64_t)(b >> 8) << (len - 8);
        return;
    }
    uint64_t sp = 0, up = 0;
    size_t off = 0;
    for (; off + 16 <= len; off += 16) {
        classify16(_mm_loadu_si128((const __m128i *)(s + off)), &a, &b);
        sp |= (uint64_t)a << off;
        up |= (uint64_t)b << off;
    }
    if (off < len) {
        classify16(_mm_loadu_si128((const __m128i *)(s + len - 16)), &a, &b);
        sp |= (uint64_t)a << (len - 16);
        up |= (uint64_t)b << (len - 16);
    }
    *special = sp;
    *upper = up;
}

/* Bits [from, to) of a 64-bit mask; to < 64. */
static inline uint64_t span(size_t from, size_t to)
{
    return ((1ull << to) - 1) & ~((1ull << from) - 1);
}

/* A parse of at most 63 bytes has at most 15 parameters (each takes 4 bytes or more, the
 * essence 3), so the fast path never reaches the limit. */
_Static_assert(WK_MT_MAX_PARAMS >= 15, "the fast path assumes room for 15 parameters");

/* Parses the common shape into *mt and returns true, or returns false (having written only
 * fields the general scanner rewrites) when s[0..len) (8 <= len <= 63) is not of that shape.
 * The mask gets a sentinel bit at `len`, so every delimiter search finds a bit; a position
 * equal to len is the end of the input and is never read. */
static inline bool parse_fast(const uint8_t *s, size_t len, wk_media_type *mt)
{
    uint64_t sp, up;
    classify(s, len, &sp, &up);
    sp |= 1ull << len;
    size_t slash = (size_t)__builtin_ctzll(sp);
    if (slash == 0 || slash == len || s[slash] != '/') {
        return false;
    }
    sp &= sp - 1;
    size_t sub_end = (size_t)__builtin_ctzll(sp);
    if (sub_end == slash + 1) {
        return false;
    }
    unsigned canon = WK__MT_CANON_SEMI | WK__MT_CANON_SPACE;
    wk_mt_param *p = mt->params;
    size_t i = sub_end;
    while (i < len) {
        if (s[i] != ';') {
            return false;
        }
        sp &= sp - 1;
        i++;
        if (i < len && s[i] == ' ') { /* the next set bit is this space */
            sp &= sp - 1;
            i++;
            canon &= WK__MT_CANON_SPACE;
        } else {
            canon &= WK__MT_CANON_SEMI;
        }
        size_t eq = (size_t)__builtin_ctzll(sp);
        if (eq == i || eq == len || s[eq] != '=') {
            return false;
        }
        sp &= sp - 1;
        size_t ve = (size_t)__builtin_ctzll(sp);
        if (ve == eq + 1) {
            return false;
        }
        const char *name = (const char *)s + i;
        size_t nlen = eq - i;
        for (const wk_mt_param *q = mt->params; q != p; q++) {
            if (q->name.len == nlen && wk__mt_ieq(q->name.ptr, nlen, name, nlen)) {
                return false; /* a duplicate: the general scanner decides */
            }
        }
        p->name.ptr = name;
        p->name.len = nlen;
        p->value.ptr = (const char *)s + eq + 1;
        p->value.len = ve - eq - 1;
        p->quoted = 0;
        p->escaped = 0;
        p++;
        i = ve;
    }
    unsigned n = (unsigned)(p - mt->params);
    if (up != 0) { /* canonical only when every capital is inside a value */
        if (up & span(0, sub_end)) {
            canon = 0;
        }
        for (unsigned k = 0; k < n; k++) {
            size_t from = (size_t)(mt->params[k].name.ptr - (const char *)s);
            if (up & span(from, from + mt->params[k].name.len)) {
                canon = 0;
            }
        }
    }
    bool exact = false;
    uint16_t id = wk__mt_known_lookup_in((const char *)s, sub_end, len, &exact);
    mt->essence_len = sub_end;
    mt->type_len = slash;
    if (id != 0) {
        mt->essence_ptr = wk__mt_known[id].essence;
    } else if (up & span(0, sub_end)) {
        wk__mt_lower_copy(mt, (const char *)s, sub_end);
    } else {
        mt->essence_ptr = (const char *)s;
    }
    mt->id = id;
    mt->nparams = (uint8_t)n;
    mt->canonical = (uint8_t)canon;
    mt->input.ptr = (const char *)s;
    mt->input.len = len;
    mt->render_styles = 0;
    return true;
}
#endif

/* Public (wirekit/mediatype.h): the fast path takes 8..63 bytes (one unsigned compare) and
 * does not look at flags: the shape it accepts has one reading under every combination. */
wk_status wk_mt_parse(const void *data, size_t len, unsigned flags, wk_media_type *mt,
                      wk_error *err)
{
    if (mt == NULL || (data == NULL && len != 0)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "no input or output given");
    }
#ifdef WK_MT_FAST
    if (len - 8 <= 63 - 8 && parse_fast(data, len, mt)) {
        return WK_OK;
    }
#endif
    return wk__mt_parse_scan(data, len, flags, mt, err);
}
