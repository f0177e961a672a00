/*
 * tsvector, PostgreSQL's tsvector.c: a sorted list of lexemes with positions and weights,
 * rendered as tsvectorout does: 'lexeme':1A,2 'other':3.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> r_tsvector ->
 * text / a string event / a value tree. Encoding parses tsvectorin's syntax (lexemes bare
 * or in quotes with '' and backslash escapes, positions 1..16383 with weights A-D) into
 * tsvectorsend's layout in the order given; tsvectorrecv sorts lexemes itself and refuses
 * positions out of order, as the server's text input would have merged them.
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

static bool tspace(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* One lexeme's positions after ':' (digits, an optional weight letter, ','-separated) as
 * uint16 words appended to `out`; *count gets how many. */
static wk_status ts_positions(const uint8_t *s, size_t n, size_t *i, wk_buf *out,
                              uint16_t *count, wk_error *err)
{
    size_t k = *i;
    *count = 0;
    for (;;) {
        uint32_t v = 0;
        size_t start = k;
        while (k < n && s[k] >= '0' && s[k] <= '9') {
            v = v > 16383 ? v : v * 10 + (uint32_t)(s[k] - '0');
            k++;
        }
        if (k == start || v == 0) {
            return wk__pg_bad_input(err, k, "invalid tsvector position");
        }
        v = v > 16383 ? 16383 : v; /* tsvectorin's MAXENTRYPOS - 1 */
        uint32_t w = 0;
        if (k < n) {
            switch (s[k] | 0x20) {
            case 'a': w = 3; k++; break;
            case 'b': w = 2; k++; break;
            case 'c': w = 1; k++; break;
            case 'd': k++; break;
            default: break;
            }
        }
        uint8_t b[2];
        wk__pg_put16(b, (uint16_t)(w << 14 | v));
        if (*count == UINT16_MAX || wk_buf_append(out, b, 2) != WK_OK) {
            return wk__pg_nomem(err, k);
        }
        (*count)++;
        if (k < n && s[k] == ',') {
            k++;
            continue;
        }
        *i = k;
        return WK_OK;
    }
}

/* tsvectorin's syntax to tsvectorsend's layout. */
static wk_status p_tsvector(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                            wk_error *err)
{
    (void)e;
    size_t at = out->len, i = 0;
    uint32_t count = 0;
    uint8_t b[4] = {0, 0, 0, 0};
    if (wk_buf_append(out, b, 4) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    for (;;) {
        while (i < n && tspace(s[i])) {
            i++;
        }
        if (i == n) {
            break;
        }
        size_t lex = out->len;
        bool quoted = s[i] == '\'';
        i += quoted;
        while (i < n) {
            uint8_t c = s[i];
            if (quoted && c == '\'' && i + 1 < n && s[i + 1] == '\'') {
                i += 2;
            } else if (quoted && c == '\'') {
                quoted = false;
                i++;
                break;
            } else if (!quoted && (tspace(c) || c == ':')) {
                break;
            } else if (c == '\\' && i + 1 < n) {
                c = s[i + 1];
                i += 2;
            } else {
                i++;
            }
            if (wk_buf_push(out, c) != WK_OK) {
                return wk__pg_nomem(err, i);
            }
        }
        size_t bad;
        if (quoted || out->len == lex || !wk_utf8_valid(out->data + lex, out->len - lex, &bad)) {
            return wk__pg_bad_input(err, i, "invalid tsvector lexeme");
        }
        uint8_t z[3] = {0, 0, 0}; /* the NUL, then the position count */
        size_t npos_at = out->len + 1;
        if (wk_buf_append(out, z, 3) != WK_OK) {
            return wk__pg_nomem(err, i);
        }
        uint16_t npos = 0;
        if (i < n && s[i] == ':') {
            i++;
            wk_status st = ts_positions(s, n, &i, out, &npos, err);
            if (st != WK_OK) {
                return st;
            }
        }
        wk__pg_put16(out->data + npos_at, npos);
        count++;
    }
    wk__pg_put32(out->data + at, count);
    return WK_OK;
}

static const wk__pg_rtype rt_tsvector = {r_tsvector, p_tsvector};

R_OIDS(c_tsvector, 3614);
R_AOIDS(c_tsvector, 3643);
const wk_pg_codec wk__pg_codec_tsvector =
    RC("tsvector", &rt_tsvector, WK_PG_BOTH_FORMATS, c_tsvector);
