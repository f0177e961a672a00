/*
 * UTF-8 checked 32 bytes at a time with AVX2, by the lookup method of Keiser and Lemire
 * ("Validating UTF-8 in less than one instruction per byte", 2021): each byte and the one
 * before it index three 16-entry tables by nibble, whose AND says what the pair can be wrong
 * as (too short, too long, overlong, surrogate, above U+10FFFF, two continuations); a byte two
 * or three after a lead of three or four bytes must be a continuation, the one case the pair
 * tables leave open. The same sequences are valid as in core/utf8.c (RFC 3629, Table 3-7 of
 * the Unicode standard): tests/unit/json/test_simd.c compares the JSON string scan built on it
 * with the byte-at-a-time one on every four bytes from a set of each UTF-8 edge, at each offset
 * around a 32-byte step, and on random text.
 * Flow: the JSON lexer's AVX2 string scan (json/lex_scan.h) -> wk__utf8_errors_avx2 -> a
 * nonzero byte at each byte that ends a bad pair or a bad continuation.
 */
#ifndef WK_CORE_UTF8_AVX2_INTERFACE_H
#define WK_CORE_UTF8_AVX2_INTERFACE_H

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

/* What a byte pair (the byte before, this byte) can be wrong as: one bit per case. */
enum {
    WK__U8_TOO_SHORT = 1 << 0,      /* a lead byte followed by a lead or ASCII byte */
    WK__U8_TOO_LONG = 1 << 1,       /* ASCII followed by a continuation byte */
    WK__U8_OVERLONG_3 = 1 << 2,     /* E0 80..9F */
    WK__U8_TOO_LARGE = 1 << 3,      /* F4 90..BF; F5..FF 90..BF */
    WK__U8_SURROGATE = 1 << 4,      /* ED A0..BF */
    WK__U8_OVERLONG_2 = 1 << 5,     /* C0 or C1 first */
    WK__U8_TOO_LARGE_1000 = 1 << 6, /* F5..FF 80..8F */
    WK__U8_OVERLONG_4 = 1 << 6,     /* F0 80..8F (shares the bit: the lead's nibble decides) */
    WK__U8_TWO_CONTS = 1 << 7,      /* two continuation bytes: right only as a 3rd or 4th byte */
    WK__U8_CARRY = WK__U8_TOO_SHORT | WK__U8_TOO_LONG | WK__U8_TWO_CONTS,
};

/* A 16-entry table of the classes above (one per nibble), in both 128-bit lanes. */
#define WK__U8_T(x) ((char)(unsigned char)(x))
#define WK__U8_TABLE(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)                              \
    _mm256_setr_epi8(WK__U8_T(a), WK__U8_T(b), WK__U8_T(c), WK__U8_T(d), WK__U8_T(e),             \
                     WK__U8_T(f), WK__U8_T(g), WK__U8_T(h), WK__U8_T(i), WK__U8_T(j),             \
                     WK__U8_T(k), WK__U8_T(l), WK__U8_T(m), WK__U8_T(n), WK__U8_T(o),             \
                     WK__U8_T(p), WK__U8_T(a), WK__U8_T(b), WK__U8_T(c), WK__U8_T(d),             \
                     WK__U8_T(e), WK__U8_T(f), WK__U8_T(g), WK__U8_T(h), WK__U8_T(i),             \
                     WK__U8_T(j), WK__U8_T(k), WK__U8_T(l), WK__U8_T(m), WK__U8_T(n),             \
                     WK__U8_T(o), WK__U8_T(p))

/* The errors of the 32 bytes `in`, given the 32 before them in `prev` (zeros when `in` starts
 * a sequence): a nonzero byte where a bad sequence shows, at its second byte or later (a lead
 * cut short shows at the byte after it). Sequences still open at the end of `in` are not
 * errors here: the next call (with `in` as its `prev`) or the caller's end check sees them. */
static inline __attribute__((always_inline, target("avx2"))) __m256i
wk__utf8_errors_avx2(__m256i in, __m256i prev)
{
    enum {
        A = WK__U8_CARRY | WK__U8_TOO_LARGE | WK__U8_TOO_LARGE_1000, /* leads F4 up in byte 1 */
        C3 = WK__U8_TOO_LONG | WK__U8_OVERLONG_2 | WK__U8_TWO_CONTS, /* any continuation */
    };
    const __m256i byte_1_high = WK__U8_TABLE(
        WK__U8_TOO_LONG, WK__U8_TOO_LONG, WK__U8_TOO_LONG, WK__U8_TOO_LONG, WK__U8_TOO_LONG,
        WK__U8_TOO_LONG, WK__U8_TOO_LONG, WK__U8_TOO_LONG, WK__U8_TWO_CONTS, WK__U8_TWO_CONTS,
        WK__U8_TWO_CONTS, WK__U8_TWO_CONTS, WK__U8_TOO_SHORT | WK__U8_OVERLONG_2, WK__U8_TOO_SHORT,
        WK__U8_TOO_SHORT | WK__U8_OVERLONG_3 | WK__U8_SURROGATE,
        WK__U8_TOO_SHORT | WK__U8_TOO_LARGE | WK__U8_TOO_LARGE_1000 | WK__U8_OVERLONG_4);
    const __m256i byte_1_low = WK__U8_TABLE(
        WK__U8_CARRY | WK__U8_OVERLONG_3 | WK__U8_OVERLONG_2 | WK__U8_OVERLONG_4,
        WK__U8_CARRY | WK__U8_OVERLONG_2, WK__U8_CARRY, WK__U8_CARRY,
        WK__U8_CARRY | WK__U8_TOO_LARGE, A, A, A, A, A, A, A, A, A | WK__U8_SURROGATE, A, A);
    const __m256i byte_2_high = WK__U8_TABLE(
        WK__U8_TOO_SHORT, WK__U8_TOO_SHORT, WK__U8_TOO_SHORT, WK__U8_TOO_SHORT, WK__U8_TOO_SHORT,
        WK__U8_TOO_SHORT, WK__U8_TOO_SHORT, WK__U8_TOO_SHORT,
        C3 | WK__U8_OVERLONG_3 | WK__U8_TOO_LARGE_1000 | WK__U8_OVERLONG_4,
        C3 | WK__U8_OVERLONG_3 | WK__U8_TOO_LARGE, C3 | WK__U8_SURROGATE | WK__U8_TOO_LARGE,
        C3 | WK__U8_SURROGATE | WK__U8_TOO_LARGE, WK__U8_TOO_SHORT, WK__U8_TOO_SHORT,
        WK__U8_TOO_SHORT, WK__U8_TOO_SHORT);
    const __m256i nibble = _mm256_set1_epi8(0x0f);
    __m256i before = _mm256_permute2x128_si256(prev, in, 0x21); /* prev's high lane, in's low */
    __m256i prev1 = _mm256_alignr_epi8(in, before, 15);
    __m256i prev2 = _mm256_alignr_epi8(in, before, 14);
    __m256i prev3 = _mm256_alignr_epi8(in, before, 13);
    __m256i special = _mm256_and_si256(
        _mm256_and_si256(
            _mm256_shuffle_epi8(byte_1_high,
                                _mm256_and_si256(_mm256_srli_epi16(prev1, 4), nibble)),
            _mm256_shuffle_epi8(byte_1_low, _mm256_and_si256(prev1, nibble))),
        _mm256_shuffle_epi8(byte_2_high, _mm256_and_si256(_mm256_srli_epi16(in, 4), nibble)));
    /* two after a lead of 3 or 4 bytes (E0 up), or three after a lead of 4 (F0 up): the sign
     * bit of the saturated difference */
    __m256i third = _mm256_subs_epu8(prev2, _mm256_set1_epi8((char)(0xe0 - 0x80)));
    __m256i fourth = _mm256_subs_epu8(prev3, _mm256_set1_epi8((char)(0xf0 - 0x80)));
    __m256i must = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8((char)0x80));
    return _mm256_xor_si256(must, special);
}

#undef WK__U8_TABLE
#undef WK__U8_T

#endif
#endif
