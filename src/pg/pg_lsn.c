/*
 * pg_lsn, PostgreSQL's pg_lsn.c: a write-ahead-log position, rendered "%X/%X" (upper-case hex
 * of the high and low 32 bits).
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> the renderer
 * here -> text / a string event / a value tree; text input -> the parser here -> binary.
 */
#include "pg/pg_codec.h"

/* Appends v in upper-case hex without leading zeros ("0" for 0), as pg_lsn_out's %X. */
static wk_status put_hex32(wk_buf *b, uint32_t v)
{
    char t[8];
    size_t i = sizeof t;
    do {
        t[--i] = "0123456789ABCDEF"[v & 15];
        v >>= 4;
    } while (v != 0);
    return wk_buf_append(b, t + i, sizeof t - i);
}

/* pg_lsn_out of pg_lsn_send's 8 bytes. */
static wk_status r_lsn(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)d;
    wk_status st = wk__pg_exact(n, 8, "binary pg_lsn must be 8 bytes", err);
    if (st != WK_OK) {
        return st;
    }
    uint64_t v = wk__pg_be64(p);
    if (put_hex32(out, (uint32_t)(v >> 32)) != WK_OK || wk_buf_push(out, '/') != WK_OK ||
        put_hex32(out, (uint32_t)v) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    return WK_OK;
}

/* 1 to 8 hex digits (either case) filling s[0..n) into *out; false otherwise. */
static bool parse_hex32(const uint8_t *s, size_t n, uint32_t *out)
{
    if (n == 0 || n > 8) {
        return false;
    }
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int h = wk__pg_hexval(s[i]);
        if (h < 0) {
            return false;
        }
        v = v << 4 | (uint32_t)h;
    }
    *out = v;
    return true;
}

/* pg_lsn_in: "hi/lo", each 1 to 8 hex digits, to 8 big-endian bytes. */
static wk_status p_lsn(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)e;
    s = wk__pg_trim(s, &n);
    size_t slash = 0;
    while (slash < n && s[slash] != '/') {
        slash++;
    }
    uint32_t hi, lo;
    if (slash >= n || !parse_hex32(s, slash, &hi) ||
        !parse_hex32(s + slash + 1, n - slash - 1, &lo)) {
        return wk__pg_bad_input(err, 0, "invalid input syntax for type pg_lsn");
    }
    return wk__pg_put_be(out, (uint64_t)hi << 32 | lo, 8) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

static const wk__pg_rtype rt_lsn = {r_lsn, p_lsn};

R_OIDS(c_lsn, 3220);
R_AOIDS(c_lsn, 3221);
const wk_pg_codec wk__pg_codec_pg_lsn = RC("pg_lsn", &rt_lsn, WK_PG_BOTH_FORMATS, c_lsn);
