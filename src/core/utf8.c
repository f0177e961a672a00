/*
 * UTF-8 validation per RFC 3629 (Table 3-7 of the Unicode standard). Pure ASCII runs are
 * skipped eight bytes at a time; multi-byte sequences are checked with the exact second-byte
 * ranges, which reject overlongs, surrogates and code points above U+10FFFF in one test.
 * Flow: MessagePack readers with WK_READ_STRICT_UTF8, the schema index's name checks, the
 * PostgreSQL text codecs -> wk_utf8_valid; escapes and conversions -> wk_utf8_encode.
 */
#include <string.h>

#include "wirekit/utf8.h"

/* Is s[0..len) well-formed UTF-8? When not, *bad_offset (may be NULL) is the offset of the
 * first byte of the first bad or cut-short sequence. */
WK_API bool wk_utf8_valid(const void *s, size_t len, size_t *bad_offset)
{
    if (len == 0) {
        return true; /* s may be NULL: no pointer arithmetic on it */
    }
    const uint8_t *p = s;
    const uint8_t *end = p + len;
    while (p < end) {
        /* ASCII fast path. */
        while (end - p >= 8) {
            uint64_t w;
            memcpy(&w, p, 8);
            if ((w & 0x8080808080808080ull) != 0) {
                break;
            }
            p += 8;
        }
        if (p == end) {
            break;
        }
        uint8_t c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        /* A lead byte gives the sequence's length n and the range [lo, hi] its second byte
         * must lie in (Table 3-7): E0 and F0 raise lo (no overlong forms), ED lowers hi (no
         * surrogates), F4 lowers hi (nothing above U+10FFFF); C0, C1 and F5..FF never lead. */
        size_t n;
        uint8_t lo = 0x80;
        uint8_t hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF) {
            n = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            n = 3;
            if (c == 0xE0) {
                lo = 0xA0;
            } else if (c == 0xED) {
                hi = 0x9F;
            }
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 4;
            if (c == 0xF0) {
                lo = 0x90;
            } else if (c == 0xF4) {
                hi = 0x8F;
            }
        } else {
            goto bad;
        }
        /* the sequence must be whole; its later bytes are plain continuation bytes */
        if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi) {
            goto bad;
        }
        for (size_t i = 2; i < n; i++) {
            if ((p[i] & 0xC0) != 0x80) {
                goto bad;
            }
        }
        p += n;
    }
    return true;
bad:
    if (bad_offset != NULL) {
        *bad_offset = (size_t)(p - (const uint8_t *)s);
    }
    return false;
}

/* The UTF-8 form of code point cp at out: its length (1 to 4), or 0 for a surrogate or a
 * value above U+10FFFF (nothing written). */
WK_API size_t wk_utf8_encode(uint32_t cp, uint8_t out[4])
{
    /* one to four bytes by the code point's range: the lead byte's marker bits and top
     * bits, then six bits per continuation byte */
    if (cp < 0x80) {
        out[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (uint8_t)(0xC0 | (cp >> 6));
        out[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= 0xD800 && cp <= 0xDFFF) {
        return 0;
    }
    if (cp < 0x10000) {
        out[0] = (uint8_t)(0xE0 | (cp >> 12));
        out[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp <= 0x10FFFF) {
        out[0] = (uint8_t)(0xF0 | (cp >> 18));
        out[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (uint8_t)(0x80 | (cp & 0x3F));
        return 4;
    }
    return 0;
}
