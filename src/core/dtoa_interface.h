/*
 * Shortest round-tripping decimal digits of doubles and floats (internal, shared with the
 * PostgreSQL codecs, which format float4/float8 exactly as PostgreSQL does from these digits).
 *
 * The algorithm is Schubfach (R. Giulietti, "The Schubfach way to render doubles", 2020),
 * written from the paper: a 126-bit multiplication gives the decimal interval that rounds
 * back to the input (one product for a regular value, three bounds when that one is too close
 * to call), and the shortest decimal in it is picked, the closest to the input when several
 * have that length, the one with an even last digit on an exact tie. The float twin uses the
 * float's own rounding interval, so it gives the shortest digits that round-trip through
 * strtof (PostgreSQL's float4 output), not those of the value widened to double.
 * Flow: writers of number text (the JSON writers, the PostgreSQL float codecs) -> this
 * interface -> core/dtoa.c.
 */
#ifndef WK_CORE_DTOA_H
#define WK_CORE_DTOA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/** "00" "01" ... "99": two decimal digits per entry (shared by every integer printer). */
extern const char wk__digits2[201];
/** 10^1 .. 10^19 at [1..19], 0 at [0] (so that 0 has one digit): wk__fmt_u64's digit count. */
extern const uint64_t wk__pow10_u64[20];

/** Writes u in decimal at d (up to 20 bytes, no NUL) and returns the length: the one integer
 *  printer of the library (JSON numbers, the shortest digits of a double). */
static inline size_t wk__fmt_u64(uint64_t u, char *d)
{
    /* the digit count first (from the bit length, corrected by one compare), then the
     * digits stored backwards straight into d, two at a time: no scratch copy */
    unsigned bits = 64u - (unsigned)__builtin_clzll(u | 1u);
    size_t n = ((bits * 1233u) >> 12) + 1u;
    n -= u < wk__pow10_u64[n - 1];
    char *p = d + n;
    while (u >= 100) {
        uint64_t r = u % 100;
        u /= 100;
        p -= 2;
        memcpy(p, wk__digits2 + 2 * r, 2);
    }
    if (u >= 10) {
        memcpy(p - 2, wk__digits2 + 2 * u, 2);
    } else {
        p[-1] = (char)('0' + u);
    }
    return n;
}

/** The eight decimal digits of v < 10^8 as ASCII in a word, the first digit in the lowest
 *  byte: the two halves of four digits side by side, then pairs, then digits, each split by a
 *  multiply-shift reciprocal (exact for these ranges). No loop: the digits do not wait on
 *  each other, as a divide-by-100 loop's do. */
static inline uint64_t wk__digits8(uint32_t v)
{
    uint64_t merged = v / 10000u | (uint64_t)(v % 10000u) << 32;
    uint64_t hundreds = ((merged * 10486u) >> 20) & (0x7Full << 32 | 0x7Full);
    uint64_t pairs = hundreds | (merged - hundreds * 100u) << 16;
    uint64_t tens = ((pairs * 103u) >> 10) & (0xFull << 48 | 0xFull << 32 | 0xFull << 16 | 0xFull);
    uint64_t digits = tens | (pairs - tens * 10u) << 8;
    return digits + 0x3030303030303030ull;
}

/** Stores the word x at d, its lowest byte first. */
static inline void wk__store_le64(uint8_t *d, uint64_t x)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    memcpy(d, &x, 8);
}

/* The integer printers are always inlined: GCC kept wk__fmt_u64_room out of the JSON writer,
 * and the call took 4% of citm_catalog's and twitter's stringify (one process, two builds
 * alternated). */
#if defined(__GNUC__)
#define WK__FMT_INLINE static inline __attribute__((always_inline))
#else
#define WK__FMT_INLINE static inline
#endif

/** v < 10^8 in decimal at d (one whole-word store: 8 bytes of room); returns the length. */
WK__FMT_INLINE size_t wk__fmt_u27_room(uint32_t v, uint8_t *d)
{
    if (v < 100) {
        if (v < 10) {
            *d = (uint8_t)('0' + v);
            return 1;
        }
        memcpy(d, wk__digits2 + 2 * v, 2);
        return 2;
    }
    unsigned bits = 32u - (unsigned)__builtin_clz(v);
    size_t n = ((bits * 1233u) >> 12) + 1u;
    n -= v < wk__pow10_u64[n - 1];
    wk__store_le64(d, wk__digits8(v) >> (8 * (8 - n)));
    return n;
}

/** Writes u in decimal at d, which has 24 bytes of room: whole-word stores may write past the
 *  digits (never past d + 20). Returns the number of digits. Up to three words of
 *  wk__digits8, the leading group first. */
WK__FMT_INLINE size_t wk__fmt_u64_room(uint64_t u, uint8_t *d)
{
    if (u < 100000000u) {
        return wk__fmt_u27_room((uint32_t)u, d);
    }
    if (u < 10000000000000000u) {
        uint64_t hi = u / 100000000u;
        size_t n = wk__fmt_u27_room((uint32_t)hi, d);
        wk__store_le64(d + n, wk__digits8((uint32_t)(u - hi * 100000000u)));
        return n + 8;
    }
    uint64_t hi = u / 10000000000000000u; /* at most 1844 */
    uint64_t lo = u - hi * 10000000000000000u;
    uint64_t mid = lo / 100000000u;
    size_t n = wk__fmt_u27_room((uint32_t)hi, d);
    wk__store_le64(d + n, wk__digits8((uint32_t)mid));
    wk__store_le64(d + n + 8, wk__digits8((uint32_t)(lo - mid * 100000000u)));
    return n + 16;
}

/**
 * Writes the shortest decimal digits of |v| that read back (strtod, round to nearest) as |v|.
 * |v| == D * 10^(*exp10), where D is the integer spelled by digits[0..n) (no leading or
 * trailing zero, no NUL terminator) and n, the return value, is 1..17. Zero gives "0" and
 * *exp10 == 0. The sign is ignored (the caller prints it from signbit(v)). `v` must be finite:
 * NaN or an infinity returns 0 and writes nothing. Thread-safe, no allocation.
 */
int wk__dtoa_shortest(double v, char digits[17], int *exp10);

/** Like wk__dtoa_shortest for a float: the shortest digits (1..9) that read back through
 *  strtof as |v|. */
int wk__ftoa_shortest(float v, char digits[9], int *exp10);

/** The room wk__dtoa_json and wk__ftoa_json need at `out`: the longest text is 25 bytes
 *  ("-0.0000012345678901234567"), and whole-word stores may write past the text, never past
 *  this. */
#define WK__DTOA_JSON_MAX 32

/**
 * Prints finite `v` as JSON number text into `out` (WK__DTOA_JSON_MAX bytes of room, no NUL
 * written; the bytes after the text within that room may be overwritten) and returns its
 * length. The text always reads back as a float, never an integer:
 * plain decimal notation with at least one fractional digit ("1.0", "-0.0", "0.001",
 * "123456.789") when the decimal exponent is in [-6, 21), otherwise scientific notation with
 * one leading digit ("1e21", "1.5e-7", "5e-324"; exponent without '+'). The digits are those
 * of wk__dtoa_shortest. NaN and infinities return 0 (the caller decides).
 */
size_t wk__dtoa_json(double v, char *out);

/** Like wk__dtoa_json with the digits of wk__ftoa_shortest (for float32 sources). */
size_t wk__ftoa_json(float v, char *out);

#endif
