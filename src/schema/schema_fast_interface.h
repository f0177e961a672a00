/*
 * Helpers of the fused fast paths, MessagePack (schema_mp.c) and JSON (schema_json_enc.c,
 * schema_json_dec.c).
 * Encoders write with a cursor `o` straight into the output buffer, bounded by
 * out->data + out->cap, keeping at least the plan's `fixed` bytes of room (the bound of every
 * fixed-size part still to come), so only variable-size parts check for room. Decoders copy
 * strings into the arena with their NUL, short ones as whole words.
 */
#ifndef WK_SCHEMA_FAST_H
#define WK_SCHEMA_FAST_H

#include <string.h>

#include "core/kernel_interface.h"
#include "wirekit/arena.h"
#include "wirekit/buffer.h"
#include "wirekit/schema.h"

/** Syncs out->len to the cursor `o` (NULL: out->len is current), reserves `need` bytes and
 *  returns the cursor in the (maybe moved) buffer; NULL when the buffer cannot grow. */
uint8_t *wk__schema_buf_grow(wk_buf *out, uint8_t *o, size_t need);

#define WK__ENC_END(out) ((out)->data + (out)->cap)

/* The cursor at the end of `out` with `fixed` bytes of room reserved (the flat plans' start,
 * MessagePack and JSON); NULL when the buffer cannot grow. */
static inline __attribute__((always_inline)) uint8_t *wk__schema_enc_start(wk_buf *out,
                                                                      size_t fixed)
{
    if (WK__LIKELY(out->data != NULL && out->cap - out->len >= fixed)) {
        return out->data + out->len;
    }
    return wk__schema_buf_grow(out, NULL, fixed);
}

/* Makes room for `need` bytes at `o`, keeping `end` (a local) in step; leaves the function
 * with `fail` when the buffer cannot grow. */
#define WK__ENC_ENSURE(need, fail)                                                           \
    do {                                                                                     \
        if (WK__UNLIKELY((size_t)(end - o) < (need))) {                                     \
            o = wk__schema_buf_grow(out, o, (need));                                         \
            if (o == NULL) {                                                                 \
                return fail;                                                                 \
            }                                                                                \
            end = WK__ENC_END(out);                                                          \
        }                                                                                    \
    } while (0)

/* Copies `len` bytes of a string into the arena with a NUL (the bump inline). */
static inline char *wk__dec_strdup(wk_arena *a, const uint8_t *s, size_t len)
{
    char *d;
    if (WK__LIKELY(a->cur != NULL && (size_t)(a->end - a->cur) > len)) {
        d = (char *)a->cur;
        a->cur += len + 1;
    } else {
        d = wk_arena_alloc(a, len + 1, 1);
        if (d == NULL) {
            return NULL;
        }
    }
    wk__put_bytes(d, s, len);
    d[len] = '\0';
    return d;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define WK__DEC_LE 1
#else
#define WK__DEC_LE 0
#endif

/* True when `s[0..len)` holds a NUL byte (the memchr the general loop does). */
static inline bool wk__dec_has_nul(const uint8_t *s, size_t len)
{
    return memchr(s, 0, len) != NULL;
}

/* True when the word holds a zero byte. */
static inline bool wk__dec_word_has_zero(uint64_t w)
{
    return ((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull) != 0;
}

/* Copies the string `s[0..len)` into the arena with a NUL; with `check_nul`, NULL and *nul
 * set when it holds a NUL byte. Strings of up to 16 bytes are checked and copied as two
 * overlapping words inside the string (shorter than 8: one word ending at the string's end,
 * which needs 8 bytes of input before that end; `start` is the input's first byte), stored
 * into the arena when it has 17 bytes of room (bytes past the NUL land in its free space and
 * are overwritten by later allocations). NULL without *nul: out of arena. */
static inline char *wk__dec_copy_str(wk_arena *a, const uint8_t *s, size_t len,
                                 const uint8_t *start, bool check_nul, bool *nul)
{
#if WK__DEC_LE
    if (len <= 16 && a->cur != NULL && (size_t)(a->end - a->cur) >= 17 &&
        (len >= 8 || (size_t)(s + len - start) >= 8)) {
        char *d = (char *)a->cur;
        if (len >= 8) {
            uint64_t w0, w1;
            memcpy(&w0, s, 8);
            memcpy(&w1, s + len - 8, 8);
            if (check_nul && (wk__dec_word_has_zero(w0) || wk__dec_word_has_zero(w1))) {
                *nul = true;
                return NULL;
            }
            memcpy(d, &w0, 8);
            memcpy(d + len - 8, &w1, 8);
        } else if (len > 0) {
            uint64_t w;
            memcpy(&w, s + len - 8, 8);
            w >>= 8 * (8 - len);
            if (check_nul && wk__dec_word_has_zero(w | ~(uint64_t)0 << (8 * len))) {
                *nul = true;
                return NULL;
            }
            memcpy(d, &w, 8);
        }
        d[len] = '\0';
        a->cur += len + 1;
        return d;
    }
#else
    (void)start;
#endif
    if (check_nul && wk__dec_has_nul(s, len)) {
        *nul = true;
        return NULL;
    }
    return wk__dec_strdup(a, s, len);
}

/* Stores an integer into a member of integer kind `kind` (a wk_schema_kind) and C size
 * `size` when it fits, by the general loop's range rules: a negative value (`neg`: u holds
 * the int64 value's bits) only into a signed kind wide enough, a non-negative one up to the
 * kind's maximum. False when it does not fit. */
static inline bool wk__dec_int_store(uint8_t kind, uint32_t size, bool neg, uint64_t u,
                                     uint8_t *dst)
{
    /* the member's range from its kind and width: signed kinds (up to WK_SK_I64) hold
     * -2^(bits-1) .. 2^(bits-1)-1, unsigned ones 0 .. 2^bits-1; then a store of `size`
     * bytes (memcpy: no alignment assumed) */
    unsigned bits = 8u * size;
    if (neg) {
        int64_t i = (int64_t)u;
        if (kind > WK_SK_I64 || (bits < 64 && i < -((int64_t)1 << (bits - 1)))) {
            return false;
        }
    } else {
        uint64_t max = kind <= WK_SK_I64 ? ~(uint64_t)0 >> (65 - bits)
                                         : ~(uint64_t)0 >> (64 - bits);
        if (u > max) {
            return false;
        }
    }
    switch (size) {
    case 1: *dst = (uint8_t)u; break;
    case 2: {
        uint16_t v = (uint16_t)u;
        memcpy(dst, &v, 2);
        break;
    }
    case 4: {
        uint32_t v = (uint32_t)u;
        memcpy(dst, &v, 4);
        break;
    }
    default: memcpy(dst, &u, 8); break;
    }
    return true;
}

#endif
