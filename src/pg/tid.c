/*
 * tid, PostgreSQL's tid.c: a tuple's physical address (block number, line pointer offset),
 * rendered "(block,offset)".
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> the renderer
 * here -> text / a string event / a value tree; text input -> the parser here -> binary.
 */
#include "pg/pg_codec.h"

/* tidout of tidsend's 6 bytes: uint32 block, uint16 offset. */
static wk_status r_tid(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)d;
    wk_status st = wk__pg_exact(n, 6, "binary tid must be 6 bytes", err);
    if (st != WK_OK) {
        return st;
    }
    if (wk_buf_push(out, '(') != WK_OK || wk__pg_put_u64(out, wk__pg_be32(p)) != WK_OK ||
        wk_buf_push(out, ',') != WK_OK || wk__pg_put_u64(out, wk__pg_be16(p + 4)) != WK_OK ||
        wk_buf_push(out, ')') != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    return WK_OK;
}

/* tidin: "(block,offset)" with unsigned decimals in range, to the 6-byte layout. */
static wk_status p_tid(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)e;
    s = wk__pg_trim(s, &n);
    size_t comma = 0;
    while (comma < n && s[comma] != ',') {
        comma++;
    }
    uint64_t blk, off;
    if (n < 5 || s[0] != '(' || s[n - 1] != ')' || comma >= n ||
        !wk__pg_parse_u64(s + 1, comma - 1, UINT32_MAX, &blk) ||
        !wk__pg_parse_u64(s + comma + 1, n - comma - 2, UINT16_MAX, &off)) {
        return wk__pg_bad_input(err, 0, "invalid input syntax for type tid");
    }
    if (wk__pg_put_be(out, blk, 4) != WK_OK || wk__pg_put_be(out, off, 2) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    return WK_OK;
}

static const wk__pg_rtype rt_tid = {r_tid, p_tid};

R_OIDS(c_tid, 27);
R_AOIDS(c_tid, 1010);
const wk_pg_codec wk__pg_codec_tid = RC("tid", &rt_tid, WK_PG_BOTH_FORMATS, c_tid);
