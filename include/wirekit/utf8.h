/*
 * UTF-8 validation (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF) with an
 * ASCII fast path that checks eight bytes at a time.
 */
#ifndef WIREKIT_UTF8_H
#define WIREKIT_UTF8_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Returns true when `s[0..len)` is valid UTF-8. When it is not and `bad_offset` is not NULL,
 *  stores the offset of the first byte of the first invalid sequence. Thread-safe. */
WK_API bool wk_utf8_valid(const void *s, size_t len, size_t *bad_offset);

/** Encodes code point `cp` (<= 0x10FFFF, not a surrogate) into `out` (room for 4 bytes).
 *  Returns the number of bytes written, or 0 when `cp` is not a scalar value. */
WK_API size_t wk_utf8_encode(uint32_t cp, uint8_t out[4]);

#ifdef __cplusplus
}
#endif
#endif
