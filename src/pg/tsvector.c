/*
 * tsvector, PostgreSQL's tsvector.c: a sorted list of lexemes with positions and weights,
 * rendered as tsvectorout does: 'lexeme':1A,2 'other':3.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> r_tsvector ->
 * text / a string event / a value tree. No parser: tsvectorin's syntax (quoting, weights,
 * sorting and merging duplicates) is left to the server, so tsvector parameters go as text.
 */
#include "pg/pg_codec.h"
#include "wirekit/utf8.h"

/* tsvectorout of tsvectorsend's layout: int32 lexeme count, then per lexeme its UTF-8 text,
 * a NUL, a uint16 position count and that many uint16 positions (low 14 bits the position,
 * high 2 the weight: 3 = A, 2 = B, 1 = C, 0 = D, which prints nothing). Quotes and
 * backslashes inside a lexeme are doubled. */
static wk_status r_tsvector(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                            wk_error *err)
{
    (void)d;
    wk_status st = wk__pg_need(n, 4, "binary tsvector needs a count", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t count = (int32_t)wk__pg_be32(p);
    if (count < 0 || (size_t)count > (n - 4) / 3) {
        return wk__pg_bad_input(err, 0, "invalid tsvector lexeme count");
    }
    size_t pos = 4;
    for (int32_t i = 0; i < count; i++) {
        const uint8_t *z = memchr(p + pos, 0, n - pos);
        if (z == NULL) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "unterminated tsvector lexeme");
        }
        size_t len = (size_t)(z - (p + pos)), bad;
        if (len == 0 || !wk_utf8_valid(p + pos, len, &bad)) {
            return wk__pg_bad_input(err, pos, "invalid tsvector lexeme");
        }
        if ((i > 0 && wk_buf_push(out, ' ') != WK_OK) || wk_buf_push(out, '\'') != WK_OK) {
            return wk__pg_nomem(err, pos);
        }
        for (size_t k = 0; k < len; k++) {
            uint8_t c = p[pos + k];
            if ((c == '\'' || c == '\\') && wk_buf_push(out, c) != WK_OK) {
                return wk__pg_nomem(err, pos);
            }
            if (wk_buf_push(out, c) != WK_OK) {
                return wk__pg_nomem(err, pos);
            }
        }
        if (wk_buf_push(out, '\'') != WK_OK) {
            return wk__pg_nomem(err, pos);
        }
        pos += len + 1;
        if (n - pos < 2) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "tsvector position count missing");
        }
        uint16_t npos = wk__pg_be16(p + pos);
        pos += 2;
        if ((size_t)npos * 2 > n - pos) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "tsvector positions truncated");
        }
        for (uint16_t k = 0; k < npos; k++) {
            uint16_t wp = wk__pg_be16(p + pos + 2 * (size_t)k);
            static const char weight[4] = {0, 'C', 'B', 'A'};
            if (wk_buf_push(out, k == 0 ? ':' : ',') != WK_OK ||
                wk__pg_put_u64(out, wp & 0x3FFFu) != WK_OK ||
                (weight[wp >> 14] != 0 && wk_buf_push(out, (uint8_t)weight[wp >> 14]) != WK_OK)) {
                return wk__pg_nomem(err, pos);
            }
        }
        pos += (size_t)npos * 2;
    }
    if (pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the tsvector");
    }
    return WK_OK;
}

static const wk__pg_rtype rt_tsvector = {r_tsvector, NULL};

R_OIDS(c_tsvector, 3614);
R_AOIDS(c_tsvector, 3643);
const wk_pg_codec wk__pg_codec_tsvector =
    RC("tsvector", &rt_tsvector, WK_PG_BOTH_FORMATS, c_tsvector);
