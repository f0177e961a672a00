/*
 * The byte-string types, PostgreSQL's varlena.c, varchar.c, name.c, char.c and bytea's part of
 * varlena.c: text, varchar, bpchar, name and "unknown" (one codec), "char", bytea, and
 * refcursor (a name on the wire, read as its text). Both wire formats.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the codecs below -> the direct STR
 * functions here, or codec_generic.c's generic functions over this file's wk__pg_type tables
 * -> a view, PostgreSQL text, an event or a value. json.c reuses the text reader and writer.
 *
 * Strings decode as zero-copy views into the input after a UTF-8 check (the connection's
 * client_encoding is UTF8); only bytea's text forms (hex `\x..` and the escape format) need
 * the arena, because their bytes differ from the wire bytes.
 */
#include "pg/pg_codec.h"
#include "wirekit/utf8.h"

/* ---- text family ---- */

/* textrecv / textin (and varchar, bpchar, name, json's both forms): a zero-copy view of
 * the bytes after a UTF-8 check. Contract in pg_codec.h. */
wk_status wk__pg_text_read(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                           wk_error *err)
{
    (void)a;
    size_t bad;
    if (n != 0 && !wk_utf8_valid(p, n, &bad)) {
        return wk__pg_fail(err, WK_ERR_UTF8, bad, "text value is not valid UTF-8");
    }
    v->s.ptr = (const char *)p;
    v->s.len = n;
    return WK_OK;
}

/* textsend / textout: the bytes as they are. */
wk_status wk__pg_text_write(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_append(out, v->s.ptr, v->s.len);
}

const wk__pg_type wk__pg_type_text = {WK__PG_CLASS_STRING, wk__pg_text_read, wk__pg_text_read,
                                      wk__pg_text_write, wk__pg_text_write, 0, 0};

/* ---- "char": one byte; text output is empty for 0 and \ooo for bytes >= 0x80 ---- */

static const uint8_t all_bytes[256] = {
#define B4(x) x, x + 1, x + 2, x + 3
#define B16(x) B4(x), B4(x + 4), B4(x + 8), B4(x + 12)
#define B64(x) B16(x), B16(x + 16), B16(x + 32), B16(x + 48)
    B64(0), B64(64), B64(128), B64(192)
#undef B64
#undef B16
#undef B4
};

/* Points v at a static one-byte string holding c (a view that outlives any input). */
static void char_set(wk__pg_native *v, uint8_t c)
{
    v->s.ptr = (const char *)&all_bytes[c];
    v->s.len = c == 0 ? 0 : 1;
}

/* charrecv: one byte (or none, for the empty value). */
static wk_status char_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n > 1) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 1, "binary \"char\" must be at most 1 byte");
    }
    char_set(v, n == 1 ? p[0] : 0);
    return WK_OK;
}

/* An octal digit. */
static bool is_oct(uint8_t c)
{
    return c >= '0' && c <= '7';
}

/* charin: "\\ooo" is that byte in octal, else the first byte (none when empty). A longer
 * ASCII string is refused rather than cut, as charin would cut it; a non-ASCII one keeps its
 * first byte, as charin does. */
static wk_status char_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    if (n == 4 && p[0] == '\\' && is_oct(p[1]) && is_oct(p[2]) && is_oct(p[3]) && p[1] <= '3') {
        char_set(v, (uint8_t)((p[1] - '0') << 6 | (p[2] - '0') << 3 | (p[3] - '0')));
        return WK_OK;
    }
    if (n > 1 && p[0] < 0x80) {
        /* charin takes the first byte of any longer string; we refuse to drop bytes. */
        return wk__pg_fail(err, WK_ERR_SYNTAX, 1, "\"char\" text must be one byte or \\ooo");
    }
    char_set(v, n == 0 ? 0 : p[0]);
    return WK_OK;
}

/* charsend: the byte, none for 0. */
static wk_status char_write_bin(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_push(out, v->s.len == 0 ? 0 : (uint8_t)v->s.ptr[0]);
}

/* charout: the byte, \\ooo for bytes >= 0x80, nothing for 0. */
static wk_status char_write_text(const wk__pg_native *v, wk_buf *out)
{
    if (v->s.len == 0) {
        return WK_OK;
    }
    uint8_t c = (uint8_t)v->s.ptr[0];
    if (c < 0x80) {
        return wk_buf_push(out, c);
    }
    char t[4] = {'\\', (char)('0' + (c >> 6)), (char)('0' + ((c >> 3) & 7)),
                 (char)('0' + (c & 7))};
    return wk_buf_append(out, t, 4);
}

const wk__pg_type wk__pg_type_char = {WK__PG_CLASS_STRING, char_read_bin, char_read_text,
                                      char_write_bin, char_write_text, 0, 0};

/* ---- bytea ---- */

/* bytearecv: the bytes, as a zero-copy view. */
static wk_status bytea_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    (void)err;
    v->s.ptr = (const char *)p;
    v->s.len = n;
    return WK_OK;
}

/* byteain: "\\x" hex (spaces between pairs allowed) or the escape format (\\\\ and
 * \\ooo); the decoded bytes go to the arena. */
static wk_status bytea_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                 wk_error *err)
{
    if (n >= 2 && p[0] == '\\' && p[1] == 'x') {
        /* Hex format; whitespace between digit pairs is allowed, as byteain does. */
        if (a == NULL) {
            return wk__pg_fail(err, WK_ERR_ARG, 0, "decoding text bytea needs an arena");
        }
        /* at most one byte per two digits: the output is sized from the input, no growth */
        uint8_t *o = wk_arena_alloc(a, (n - 2) / 2 + 1, 1);
        if (o == NULL) {
            return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for bytea");
        }
        size_t k = 0;
        for (size_t i = 2; i < n;) {
            if (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r') {
                i++;
                continue;
            }
            int hi = wk__pg_hexval(p[i]);
            if (hi < 0) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid hexadecimal digit in bytea");
            }
            if (i + 1 >= n) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i, "odd number of hex digits in bytea");
            }
            int lo = wk__pg_hexval(p[i + 1]);
            if (lo < 0) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i + 1,
                                   "invalid hexadecimal digit in bytea");
            }
            o[k++] = (uint8_t)(hi << 4 | lo);
            i += 2;
        }
        v->s.ptr = (const char *)o;
        v->s.len = k;
        return WK_OK;
    }
    /* Escape format: \\ is a backslash, \ooo an octal byte, anything else itself. */
    if (memchr(p, '\\', n) == NULL) { /* no escapes: the wire bytes are the value, a view */
        v->s.ptr = (const char *)p;
        v->s.len = n;
        return WK_OK;
    }
    if (a == NULL) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "decoding text bytea needs an arena");
    }
    uint8_t *o = wk_arena_alloc(a, n, 1);
    if (o == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for bytea");
    }
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        if (p[i] != '\\') {
            o[k++] = p[i++];
        } else if (i + 1 < n && p[i + 1] == '\\') {
            o[k++] = '\\';
            i += 2;
        } else if (i + 3 < n && p[i + 1] >= '0' && p[i + 1] <= '3' && is_oct(p[i + 2]) &&
                   is_oct(p[i + 3])) {
            o[k++] = (uint8_t)((p[i + 1] - '0') << 6 | (p[i + 2] - '0') << 3 | (p[i + 3] - '0'));
            i += 4;
        } else {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type bytea");
        }
    }
    v->s.ptr = (const char *)o;
    v->s.len = k;
    return WK_OK;
}

static const char hexdig[] = "0123456789abcdef";

/* byteaout under bytea_output = hex: "\\x" and two lower-case digits a byte. */
static wk_status bytea_write_text(const wk__pg_native *v, wk_buf *out)
{
    size_t need;
    if (!wk_size_mul(v->s.len, 2, &need) || !wk_size_add(need, 2, &need)) {
        return WK_ERR_LIMIT;
    }
    wk_status st = wk_buf_reserve(out, need);
    if (st != WK_OK) {
        return st;
    }
    uint8_t *q = out->data + out->len;
    *q++ = '\\';
    *q++ = 'x';
    const uint8_t *s = (const uint8_t *)v->s.ptr;
    for (size_t i = 0; i < v->s.len; i++) {
        *q++ = (uint8_t)hexdig[s[i] >> 4];
        *q++ = (uint8_t)hexdig[s[i] & 15];
    }
    out->len += need;
    return WK_OK;
}

const wk__pg_type wk__pg_type_bytea = {WK__PG_CLASS_STRING, bytea_read_bin, bytea_read_text,
                                       wk__pg_text_write, bytea_write_text, 0, 0};

/* ---- direct functions ---- */

/* Text in either format straight into a wk_slice view of the input. */
static wk_status text_str(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                          wk_arena *a, wk_error *err)
{
    (void)d;
    (void)a;
    size_t bad;
    if (n != 0 && !wk_utf8_valid(p, n, &bad)) {
        return wk__pg_fail(err, WK_ERR_UTF8, bad, "text value is not valid UTF-8");
    }
    wk_slice *s = out;
    s->ptr = (const char *)p;
    s->len = n;
    return WK_OK;
}

/* A wk_slice's bytes as the text (either format: textsend is the bytes too). The caller's
 * bytes are trusted to be UTF-8, as the server will check them. */
static wk_status enc_str(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    (void)e;
    const wk_slice *s = in;
    if (wk_buf_append(out, s->ptr, s->len) != WK_OK) {
        return wk__pg_fail(err, WK_ERR_LIMIT, out->len, "output buffer is full");
    }
    return WK_OK;
}

/* ---- the codecs ---- */

/* 705 is "unknown": untyped literals (e.g. inside ROW()) are sent as their text. */
OIDS(o_text, WK_PG_OID_TEXT, WK_PG_OID_VARCHAR, WK_PG_OID_BPCHAR, WK_PG_OID_NAME, 705);
OIDS(a_text, WK_PG_OID_TEXT_ARRAY, WK_PG_OID_VARCHAR_ARRAY, WK_PG_OID_BPCHAR_ARRAY,
     WK_PG_OID_NAME_ARRAY, 0);
OIDS(o_char, WK_PG_OID_CHAR);
OIDS(a_char, WK_PG_OID_CHAR_ARRAY);
OIDS(o_bytea, WK_PG_OID_BYTEA);
OIDS(a_bytea, WK_PG_OID_BYTEA_ARRAY);

const wk_pg_codec wk__pg_codec_text = {
    "text", o_text, a_text, N(o_text), WK_PG_BOTH_FORMATS, K(STR) | GEN_DEC_KINDS,
    K(STR) | K(TEXT), K(STR), 0,
    {DEC_ROW([WK_PG_KIND_STR] = text_str), DEC_ROW([WK_PG_KIND_STR] = text_str)},
    {ENC_ROW([WK_PG_KIND_STR] = enc_str), ENC_ROW([WK_PG_KIND_STR] = enc_str)},
    &wk__pg_type_text};

/* "char" decodes to STR (a one-byte view) but is not STR's natural type; bytea is BYTES'. */
SIMPLE_CODEC(wk__pg_codec_char, "char", o_char, a_char, STR, false, wk__pg_type_char);
SIMPLE_CODEC(wk__pg_codec_bytea, "bytea", o_bytea, a_bytea, BYTES, true, wk__pg_type_bytea);

/* refcursor: a portal name; its binary form is its text. */
R_OIDS(c_refcursor, 1790);
R_AOIDS(c_refcursor, 2201);
const wk_pg_codec wk__pg_codec_refcursor =
    RC("refcursor", &wk__pg_rt_plain, WK_PG_BOTH_FORMATS, c_refcursor);
