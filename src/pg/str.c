/*
 * Byte-string types: text, varchar, bpchar, name (one codec), "char", bytea, uuid, json and
 * jsonb (version byte 1), in both wire formats.
 *
 * Strings decode as zero-copy views into the input after a UTF-8 check (the connection's
 * client_encoding is UTF8); only bytea's text forms (hex `\x..` and the escape format) need
 * the arena, because their bytes differ from the wire bytes.
 */
#include "pg/pg_interface.h"
#include "wirekit/utf8.h"

/* ---- text family ---- */

static wk_status text_read(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
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

static wk_status text_write(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_append(out, v->s.ptr, v->s.len);
}

const wk__pg_type wk__pg_type_text = {WK__PG_CLASS_STRING, text_read, text_read, text_write,
                                      text_write, 0, 0};

/* ---- json / jsonb ---- */

const wk__pg_type wk__pg_type_json = {WK__PG_CLASS_JSON, text_read, text_read, text_write,
                                      text_write, 0, 0};

static wk_status jsonb_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    if (n < 1) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, 0, "binary jsonb needs a version byte");
    }
    if (p[0] != 1) {
        return wk__pg_fail(err, WK_ERR_UNSUPPORTED, 0, "unsupported jsonb version number");
    }
    wk_status st = text_read(p + 1, n - 1, v, a, err);
    if (st != WK_OK && err != NULL) {
        err->offset += 1;
    }
    return st;
}

static wk_status jsonb_write_bin(const wk__pg_native *v, wk_buf *out)
{
    wk_status st = wk_buf_push(out, 1);
    return st == WK_OK ? wk_buf_append(out, v->s.ptr, v->s.len) : st;
}

const wk__pg_type wk__pg_type_jsonb = {WK__PG_CLASS_JSON, jsonb_read_bin, text_read,
                                       jsonb_write_bin, text_write, 0, 0};

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

static void char_set(wk__pg_native *v, uint8_t c)
{
    v->s.ptr = (const char *)&all_bytes[c];
    v->s.len = c == 0 ? 0 : 1;
}

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

static bool is_oct(uint8_t c)
{
    return c >= '0' && c <= '7';
}

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

static wk_status char_write_bin(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_push(out, v->s.len == 0 ? 0 : (uint8_t)v->s.ptr[0]);
}

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

static wk_status bytea_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    (void)err;
    v->s.ptr = (const char *)p;
    v->s.len = n;
    return WK_OK;
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = (uint8_t)(c | 0x20);
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

static wk_status bytea_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                 wk_error *err)
{
    if (n >= 2 && p[0] == '\\' && p[1] == 'x') {
        /* Hex format; whitespace between digit pairs is allowed, as byteain does. */
        if (a == NULL) {
            return wk__pg_fail(err, WK_ERR_ARG, 0, "decoding text bytea needs an arena");
        }
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
            int hi = hexval(p[i]);
            if (hi < 0) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid hexadecimal digit in bytea");
            }
            if (i + 1 >= n) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, i, "odd number of hex digits in bytea");
            }
            int lo = hexval(p[i + 1]);
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
    if (memchr(p, '\\', n) == NULL) {
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
                                       text_write, bytea_write_text, 0, 0};

/* ---- uuid ---- */

static wk_status uuid_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 16) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary uuid must be 16 bytes");
    }
    memcpy(v->uuid.b, p, 16);
    return WK_OK;
}

static wk_status uuid_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    /* string_to_uuid: optional braces, an optional hyphen after any group of four digits. */
    size_t i = 0, end = n;
    bool braces = n > 0 && p[0] == '{';
    if (braces) {
        if (n < 2 || p[n - 1] != '}') {
            return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type uuid");
        }
        i = 1;
        end = n - 1;
    }
    for (int k = 0; k < 16; k++) {
        if (i + 2 > end) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type uuid");
        }
        int hi = hexval(p[i]), lo = hexval(p[i + 1]);
        if (hi < 0 || lo < 0) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type uuid");
        }
        v->uuid.b[k] = (uint8_t)(hi << 4 | lo);
        i += 2;
        if (k % 2 == 1 && k < 15 && i < end && p[i] == '-') {
            i++;
        }
    }
    if (i != end) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type uuid");
    }
    return WK_OK;
}

static wk_status uuid_write_bin(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_append(out, v->uuid.b, 16);
}

static wk_status uuid_write_text(const wk__pg_native *v, wk_buf *out)
{
    char t[36];
    size_t o = 0;
    for (int k = 0; k < 16; k++) {
        if (k == 4 || k == 6 || k == 8 || k == 10) {
            t[o++] = '-';
        }
        t[o++] = hexdig[v->uuid.b[k] >> 4];
        t[o++] = hexdig[v->uuid.b[k] & 15];
    }
    return wk_buf_append(out, t, o);
}

const wk__pg_type wk__pg_type_uuid = {WK__PG_CLASS_STRING, uuid_read_bin, uuid_read_text,
                                      uuid_write_bin, uuid_write_text, 0, 0};
