/*
 * hstore (the contrib extension, found by name in the catalog), in both wire formats.
 *
 * Where it sits: the catalog loader (registry.c, addons/pq/pq_catalog.c) finds hstore's OIDs
 * in pg_type and copies the template codec at the end of this file with them; from then on a
 * row's bytes -> plan (plan.c) -> that codec -> codec_generic.c's generic functions -> this
 * file's readers and writers -> PostgreSQL text, a string event or a value.
 *
 * Binary (hstore_send): pair count, then per pair the key length and bytes and the value
 * length (-1 = NULL) and bytes; every length is checked against what remains. Text output is
 * hstore_out's: `"key"=>"value"` pairs joined by ", ", NULL unquoted, `"` and `\` escaped with
 * a backslash. Text input accepts that form plus unquoted words, as hstore_in does. The native
 * form is the binary layout (a view for binary input, built in the arena from text).
 */
#include "pg/pg_interface.h"

/* Walks hstore_send's layout once, checking every count and length against the bytes left
 * (a NULL length, -1, only for a value), so the writers can read it unchecked afterwards. */
static wk_status check_bin(const uint8_t *p, size_t n, wk_error *err)
{
    if (n < 4) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, "binary hstore needs a pair count");
    }
    int32_t count = (int32_t)wk__pg_be32(p);
    if (count < 0 || (size_t)count > (n - 4) / 8) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid pair count in binary hstore");
    }
    size_t pos = 4;
    for (int32_t i = 0; i < count; i++) {
        for (int kv = 0; kv < 2; kv++) {
            if (n - pos < 4) {
                return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "binary hstore is truncated");
            }
            int32_t len = (int32_t)wk__pg_be32(p + pos);
            pos += 4;
            if (len == -1 && kv == 1) {
                continue;
            }
            if (len < 0 || (size_t)len > n - pos) {
                return wk__pg_fail(err, WK_ERR_TRUNCATED, pos - 4,
                                   "hstore length goes past the end");
            }
            pos += (size_t)len;
        }
    }
    if (pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the last hstore pair");
    }
    return WK_OK;
}

/* hstore_recv: the checked binary layout, kept as a zero-copy view. */
static wk_status read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                          wk_error *err)
{
    (void)a;
    wk_status st = check_bin(p, n, err);
    if (st == WK_OK) {
        v->s.ptr = (const char *)p;
        v->s.len = n;
    }
    return st;
}

/* The blanks hstore_in skips between tokens. */
static bool hspace(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One key or value token at p[*i..] into `out`: quoted (backslash escapes) or a bare word;
 * *quoted says which, so the caller can tell a bare NULL from "NULL". False on an
 * unterminated quote, an empty word or a full buffer; advances *i. */
static bool token(const uint8_t *p, size_t n, size_t *i, wk_buf *out, bool *quoted)
{
    *quoted = false;
    if (*i < n && p[*i] == '"') {
        *quoted = true;
        (*i)++;
        while (*i < n && p[*i] != '"') {
            if (p[*i] == '\\' && *i + 1 < n) {
                (*i)++;
            }
            if (wk_buf_push(out, p[*i]) != WK_OK) {
                return false;
            }
            (*i)++;
        }
        if (*i >= n) {
            return false;
        }
        (*i)++;
        return true;
    }
    size_t st = *i;
    while (*i < n && !hspace(p[*i]) && p[*i] != ',' && p[*i] != '=' && p[*i] != '>') {
        if (p[*i] == '\\' && *i + 1 < n) {
            (*i)++;
        }
        if (wk_buf_push(out, p[*i]) != WK_OK) {
            return false;
        }
        (*i)++;
    }
    return *i > st;
}

/* hstore_in: pairs `key => value` separated by commas, keys and values quoted or bare words,
 * a bare NULL value being SQL NULL; the binary layout is built in a heap buffer and copied
 * into the arena (required) at the end, so the native value outlives the call. */
static wk_status read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                           wk_error *err)
{
    if (a == NULL) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "parsing hstore text needs an arena");
    }
    wk_buf b, tok;
    wk_buf_init(&b, NULL, 0);
    wk_buf_init(&tok, NULL, 0);
    uint8_t zero[4] = {0, 0, 0, 0};
    wk_status st = wk_buf_append(&b, zero, 4);
    uint32_t count = 0;
    size_t i = 0;
    while (st == WK_OK) {
        while (i < n && hspace(p[i])) {
            i++;
        }
        if (i == n) {
            break;
        }
        if (count > 0) {
            if (p[i] != ',') {
                st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "expected , between hstore pairs");
                break;
            }
            i++;
            while (i < n && hspace(p[i])) {
                i++;
            }
        }
        bool q;
        for (int kv = 0; kv < 2 && st == WK_OK; kv++) {
            wk_buf_clear(&tok);
            if (!token(p, n, &i, &tok, &q)) {
                st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid hstore key or value");
                break;
            }
            bool is_null = kv == 1 && !q && tok.len == 4 && (tok.data[0] | 0x20) == 'n' &&
                           (tok.data[1] | 0x20) == 'u' && (tok.data[2] | 0x20) == 'l' &&
                           (tok.data[3] | 0x20) == 'l';
            uint8_t len[4];
            wk__pg_put32(len, is_null ? UINT32_MAX : (uint32_t)tok.len);
            st = wk_buf_append(&b, len, 4);
            if (st == WK_OK && !is_null) {
                st = wk_buf_append(&b, tok.data, tok.len);
            }
            if (kv == 0 && st == WK_OK) {
                while (i < n && hspace(p[i])) {
                    i++;
                }
                if (n - i < 2 || p[i] != '=' || p[i + 1] != '>') {
                    st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "expected => in hstore");
                    break;
                }
                i += 2;
                while (i < n && hspace(p[i])) {
                    i++;
                }
            }
        }
        count++;
    }
    if (st == WK_OK) {
        wk__pg_put32(b.data, count);
        char *copy = wk_arena_strndup(a, b.data, b.len);
        if (copy == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for hstore");
        } else {
            v->s.ptr = copy;
            v->s.len = b.len;
        }
    } else if (err != NULL && err->msg == NULL) {
        wk__pg_fail(err, st, i, "out of memory for hstore");
    }
    wk_buf_free(&b);
    wk_buf_free(&tok);
    return st;
}

/* hstore_send: the native value is the binary layout already. */
static wk_status write_bin(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_append(out, v->s.ptr, v->s.len);
}

/* Appends s in double quotes, '"' and '\' escaped with a backslash. */
static wk_status put_quoted(wk_buf *out, const uint8_t *s, size_t n)
{
    wk_status st = wk_buf_push(out, '"');
    for (size_t i = 0; i < n && st == WK_OK; i++) {
        if (s[i] == '"' || s[i] == '\\') {
            st = wk_buf_push(out, '\\');
        }
        if (st == WK_OK) {
            st = wk_buf_push(out, s[i]);
        }
    }
    return st == WK_OK ? wk_buf_push(out, '"') : st;
}

/* hstore_out of the (checked) binary layout. */
static wk_status write_text(const wk__pg_native *v, wk_buf *out)
{
    const uint8_t *p = (const uint8_t *)v->s.ptr;
    uint32_t count = wk__pg_be32(p);
    size_t pos = 4;
    wk_status st = WK_OK;
    for (uint32_t i = 0; i < count && st == WK_OK; i++) {
        if (i > 0) {
            st = wk_buf_append(out, ", ", 2);
        }
        uint32_t kl = wk__pg_be32(p + pos);
        pos += 4;
        if (st == WK_OK) {
            st = put_quoted(out, p + pos, kl);
        }
        pos += kl;
        if (st == WK_OK) {
            st = wk_buf_append(out, "=>", 2);
        }
        int32_t vl = (int32_t)wk__pg_be32(p + pos);
        pos += 4;
        if (st == WK_OK) {
            st = vl < 0 ? wk_buf_append(out, "NULL", 4) : put_quoted(out, p + pos, (size_t)vl);
        }
        pos += vl < 0 ? 0 : (size_t)vl;
    }
    return st;
}

static const wk__pg_type hstore_type = {WK__PG_CLASS_STRING, read_bin, read_text, write_bin,
                                        write_text, 0, 0};

static const wk_pg_oid hstore_placeholder[1] = {0};

#define K(x) WK_PG_KIND_MASK(WK_PG_KIND_##x)
/* A template: the catalog loader copies it with the database's hstore OIDs. */
const wk_pg_codec wk__pg_hstore_codec = {
    "hstore",
    hstore_placeholder,
    NULL,
    1,
    WK_PG_BOTH_FORMATS,
    K(TEXT) | K(VALUE) | K(EVENTS),
    K(TEXT),
    0,
    0,
    {{[WK_PG_KIND_TEXT] = wk__pg_dec_text,
      [WK_PG_KIND_VALUE] = wk__pg_dec_value,
      [WK_PG_KIND_EVENTS] = wk__pg_dec_events},
     {[WK_PG_KIND_TEXT] = wk__pg_dec_text,
      [WK_PG_KIND_VALUE] = wk__pg_dec_value,
      [WK_PG_KIND_EVENTS] = wk__pg_dec_events}},
    {{[WK_PG_KIND_TEXT] = wk__pg_enc_text}, {[WK_PG_KIND_TEXT] = wk__pg_enc_text}},
    &hstore_type};

/* Public (wirekit/pg.h): the template, for callers that register hstore themselves. */
const wk_pg_codec *wk_pg_hstore_codec(void)
{
    return &wk__pg_hstore_codec;
}
