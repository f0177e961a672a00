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
 * The loop is json/validate_loop.h, instantiated here once per instance of the lexer's wide
 * scans (baseline, AVX2) like the parser's, as json_validate_doc() and
 * json_validate_doc_avx2(); the entry point runs the one wk__json_simd() chose for the
 * process. Flow: bytes -> lexer (lex.h, lex_scan.h) -> this loop -> a status and an offset.
 */
#include <string.h>

#include "formats/json/lex.h"
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
    return wk__json_not_a_value(p, f);
}

/* json_validate_doc(): the validate loop (validate_loop.h, its body) over the baseline wide
 * scans, with its always-inlined string step string() (string_avx2() in the AVX2 instance);
 * returns as wk_json_validate. Out of line, so the two instances do not inline into
 * the dispatching entry point. */
#define WK__VALIDATE(name) name
#define WK__VALIDATE_HOT WK__JSON_HOT
#include "formats/json/validate_loop.h"
static WK__NOINLINE wk_status json_validate_doc(const void *data, size_t len,
                                                const wk_read_opts *opts, size_t *consumed,
                                                wk_error *err)
{
#define WK__VALIDATE_BODY
#include "formats/json/validate_loop.h"
#undef WK__VALIDATE_BODY
}
#undef WK__VALIDATE
#undef WK__VALIDATE_HOT

#if WK__JSON_HAVE_AVX2
/* json_validate_doc_avx2(): json_validate_doc() compiled for AVX2 over the lexer's AVX2 wide
 * scans; the same contract. */
#define WK__VALIDATE(name) name##_avx2
#define WK__VALIDATE_HOT WK__JSON_HOT WK__JSON_AVX2_FN
#include "formats/json/validate_loop.h"
static WK__NOINLINE WK__JSON_AVX2_FN wk_status json_validate_doc_avx2(
    const void *data, size_t len, const wk_read_opts *opts, size_t *consumed, wk_error *err)
{
#define WK__VALIDATE_BODY
#include "formats/json/validate_loop.h"
#undef WK__VALIDATE_BODY
}
#undef WK__VALIDATE
#undef WK__VALIDATE_HOT
#endif

/* The instance wk__json_simd() chose for the process (the AVX2 one when the CPU has it). */
WK_API wk_status wk_json_validate(const void *data, size_t len, const wk_read_opts *opts,
                                  size_t *consumed, wk_error *err)
{
#if WK__JSON_HAVE_AVX2
    if (wk__json_simd() == WK__JSON_SIMD_AVX2) {
        return json_validate_doc_avx2(data, len, opts, consumed, err);
    }
#endif
    return json_validate_doc(data, len, opts, consumed, err);
}
