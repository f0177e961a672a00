/*
 * bit and bit varying, PostgreSQL's varbit.c: rendered as a string of '0' and '1'.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> r_bits -> text
 * / a string event / a value tree; text input -> p_bits -> the bit_recv binary layout. The
 * declared length of bit(n) is the server's to check: the parser sends the bits it is given.
 */
#include "pg/pg_codec.h"

/* bit_out of bit_send's layout: int32 bit length, then ceil(len/8) bytes, first bit in the
 * high bit of the first byte. The byte count must match the length exactly. */
static wk_status r_bits(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                        wk_error *err)
{
    (void)d;
    wk_status st = wk__pg_need(n, 4, "binary bit string needs a length", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t bits = (int32_t)wk__pg_be32(p);
    if (bits < 0 || ((size_t)bits + 7) / 8 != n - 4) {
        return wk__pg_bad_input(err, 0, "bit length does not match the bytes present");
    }
    if (wk_buf_reserve(out, (size_t)bits) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    for (int32_t i = 0; i < bits; i++) {
        out->data[out->len++] = (p[4 + i / 8] >> (7 - i % 8) & 1) ? '1' : '0';
    }
    return WK_OK;
}

/* bit_in: binary digits, or hex digits after a leading 'x'/'X' ('b'/'B' marks binary
 * explicitly), to the bit_recv layout; unused low bits of the last byte are zero. */
static wk_status p_bits(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                        wk_error *err)
{
    (void)e;
    bool hex = false;
    size_t i = 0;
    if (n > 0 && (s[0] == 'x' || s[0] == 'X')) {
        hex = true;
        i = 1;
    } else if (n > 0 && (s[0] == 'b' || s[0] == 'B')) {
        i = 1;
    }
    size_t nbits = (n - i) * (hex ? 4 : 1);
    if (nbits > (size_t)INT32_MAX - 7) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "bit string too long");
    }
    size_t head = out->len;
    if (wk__pg_put_be(out, nbits, 4) != WK_OK || wk_buf_reserve(out, (nbits + 7) / 8) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    uint8_t *b = out->data + out->len;
    memset(b, 0, (nbits + 7) / 8);
    size_t bit = 0;
    for (; i < n; i++) {
        int v = hex ? wk__pg_hexval(s[i]) : s[i] == '0' ? 0 : s[i] == '1' ? 1 : -1;
        if (v < 0) {
            out->len = head;
            return wk__pg_bad_input(err, i, "invalid digit in a bit string");
        }
        for (int k = hex ? 3 : 0; k >= 0; k--, bit++) {
            if (v >> k & 1) {
                b[bit / 8] = (uint8_t)(b[bit / 8] | 0x80 >> (bit % 8));
            }
        }
    }
    out->len += (nbits + 7) / 8;
    return WK_OK;
}

static const wk__pg_rtype rt_bits = {r_bits, p_bits};

/* bit (1560) and varbit (1562) share the layout. */
R_OIDS(c_bit, 1560, 1562);
R_AOIDS(c_bit, 1561, 1563);
const wk_pg_codec wk__pg_codec_bit = RC("bit", &rt_bits, WK_PG_BOTH_FORMATS, c_bit);
