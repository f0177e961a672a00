/*
 * The rest of PostgreSQL 15's built-in types, read as the server's own text output.
 *
 * Each type here is a renderer from its binary wire form (the *_send layout) to its text
 * output (the *_out rules, under the session settings the glue sets), plus, where the input
 * syntax is simple enough to parse exactly, a parser from text input to the binary form used
 * for binary parameters. Values in the text format pass through unchanged (they are the
 * server's output already; only UTF-8 is checked). Decodes go to PostgreSQL text, events (a
 * string) or a value tree; encodes take PostgreSQL text. A type without a parser encodes in
 * the text format only: its binary encoder returns WK_ERR_UNSUPPORTED, and the glue then sends
 * that parameter as text. Types with no binary output at all (aclitem) or whose binary form is
 * not rendered here (tsquery, pg_node_tree and the statistics types) are text-only codecs, so
 * that the glue asks for text results when one of them is in a result.
 *
 * Every renderer checks each length and count against the bytes present before reading, and
 * rejects bytes left over.
 */
#include <math.h>

#include "pg/pg_interface.h"
#include "wirekit/utf8.h"

#define K(x) WK_PG_KIND_MASK(WK_PG_KIND_##x)


static wk_status full(wk_error *err, size_t at)
{
    return wk__pg_fail(err, WK_ERR_NOMEM, at, "out of memory for the text output");
}

/* ---- the generic functions every rendered codec uses ---- */

wk_status wk__pg_r_text(const wk__pg_rtype *t, const wk_pg_decoder *d, const uint8_t *p,
                        size_t n, void *out, wk_arena *arena, wk_error *err)
{
    (void)arena;
    wk_buf *b = out;
    if (d->format == WK_PG_TEXT) {
        size_t bad;
        if (n != 0 && !wk_utf8_valid(p, n, &bad)) {
            return wk__pg_fail(err, WK_ERR_UTF8, bad, "text value is not valid UTF-8");
        }
        return wk_buf_append(b, p, n) == WK_OK ? WK_OK : full(err, 0);
    }
    return t->render(d, p, n, b, err);
}

wk_status wk__pg_r_events(const wk__pg_rtype *t, const wk_pg_decoder *d, const uint8_t *p,
                          size_t n, void *out, wk_arena *arena, wk_error *err)
{
    const wk_pg_events *ev = out;
    wk_buf local;
    wk_buf *scratch = ev->scratch;
    if (scratch == NULL) {
        wk_buf_init(&local, NULL, 0);
        scratch = &local;
    }
    wk_buf_clear(scratch);
    wk_pg_decoder td = *d;
    td.kind = WK_PG_KIND_TEXT;
    wk_status st = wk__pg_r_text(t, &td, p, n, scratch, arena, err);
    if (st == WK_OK) {
        wk_event x;
        x.type = WK_EV_STR;
        x.f32 = false;
        x.v.str.ptr = scratch->data != NULL ? (const char *)scratch->data : "";
        x.v.str.len = scratch->len;
        st = ev->sink->event(ev->sink->self, &x);
        if (st != WK_OK) {
            wk__pg_fail(err, st, 0, "the event sink failed");
        }
    }
    if (scratch == &local) {
        wk_buf_free(&local);
    }
    return st;
}

wk_status wk__pg_r_encode(const wk__pg_rtype *t, const wk_pg_encoder *e, const void *in,
                          wk_buf *out, wk_error *err)
{
    const wk_slice *s = in;
    const uint8_t *p = (const uint8_t *)s->ptr;
    size_t bad;
    if (s->len != 0 && !wk_utf8_valid(p, s->len, &bad)) {
        return wk__pg_fail(err, WK_ERR_UTF8, bad, "text input is not valid UTF-8");
    }
    if (e->format == WK_PG_TEXT) {
        return wk_buf_append(out, p, s->len) == WK_OK ? WK_OK : full(err, 0);
    }
    if (t->parse == NULL) {
        return wk__pg_fail(err, WK_ERR_UNSUPPORTED, 0,
                           "this type is sent in the text format only");
    }
    size_t start = out->len;
    wk_status st = t->parse(e, p, s->len, out, err);
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}

/* The misc codecs keep their wk__pg_rtype in codec->data. */
static wk_status misc_dec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                               wk_arena *arena, wk_error *err)
{
    return wk__pg_r_text(d->codec->data, d, p, n, out, arena, err);
}

static wk_status misc_dec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                                 wk_arena *arena, wk_error *err)
{
    return wk__pg_r_events(d->codec->data, d, p, n, out, arena, err);
}

static wk_status misc_enc_text(const wk_pg_encoder *e, const void *in, wk_buf *out,
                               wk_error *err)
{
    return wk__pg_r_encode(e->codec->data, e, in, out, err);
}

/* ---- small helpers ---- */

static wk_status need(size_t n, size_t want, const char *msg, wk_error *err)
{
    if (n < want) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, msg);
    }
    return WK_OK;
}

static wk_status exact(size_t n, size_t want, const char *msg, wk_error *err)
{
    if (n != want) {
        return wk__pg_fail(err, n < want ? WK_ERR_TRUNCATED : WK_ERR_TRAILING,
                           n < want ? n : want, msg);
    }
    return WK_OK;
}

static wk_status put_u64(wk_buf *b, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    return wk_buf_append(b, tmp + i, sizeof tmp - i);
}

static wk_status put_f8(wk_buf *b, const uint8_t *p)
{
    uint64_t u = wk__pg_be64(p);
    double v;
    memcpy(&v, &u, 8);
    return wk__pg_put_float(b, v, false);
}

static bool is_space(uint8_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* Trims ASCII spaces from both ends of s[0..*n); returns the new start. */
static const uint8_t *trim(const uint8_t *s, size_t *n)
{
    while (*n > 0 && is_space(s[0])) {
        s++;
        (*n)--;
    }
    while (*n > 0 && is_space(s[*n - 1])) {
        (*n)--;
    }
    return s;
}

/* Unsigned decimal filling all of s[0..n) (spaces around allowed), at most `max`. */
static bool parse_u64(const uint8_t *s, size_t n, uint64_t max, uint64_t *out)
{
    s = trim(s, &n);
    if (n == 0) {
        return false;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned dg = (unsigned)(s[i] - '0');
        if (dg > 9 || v > (max - dg) / 10) {
            return false;
        }
        v = v * 10 + dg;
    }
    *out = v;
    return true;
}

static int hexval(uint8_t c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    c = (uint8_t)(c | 0x20);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static wk_status bad_input(wk_error *err, size_t at, const char *msg)
{
    return wk__pg_fail(err, WK_ERR_SYNTAX, at, msg);
}

static wk_status put_be(wk_buf *out, uint64_t v, size_t bytes)
{
    uint8_t t[8];
    for (size_t i = 0; i < bytes; i++) {
        t[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
    }
    return wk_buf_append(out, t, bytes);
}

/* ---- xid, cid (uint32), xid8 (uint64) ---- */

static wk_status r_u32(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)d;
    wk_status st = exact(n, 4, "this binary value must be 4 bytes", err);
    if (st == WK_OK && put_u64(out, wk__pg_be32(p)) != WK_OK) {
        st = full(err, 0);
    }
    return st;
}

static wk_status r_u64(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)d;
    wk_status st = exact(n, 8, "binary xid8 must be 8 bytes", err);
    if (st == WK_OK && put_u64(out, wk__pg_be64(p)) != WK_OK) {
        st = full(err, 0);
    }
    return st;
}

static wk_status p_u32(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)e;
    uint64_t v;
    if (!parse_u64(s, n, UINT32_MAX, &v)) {
        return bad_input(err, 0, "expected an unsigned 32-bit number (an OID for reg types)");
    }
    return put_be(out, v, 4) == WK_OK ? WK_OK : full(err, 0);
}

static wk_status p_u64(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)e;
    uint64_t v;
    if (!parse_u64(s, n, UINT64_MAX, &v)) {
        return bad_input(err, 0, "expected an unsigned 64-bit number");
    }
    return put_be(out, v, 8) == WK_OK ? WK_OK : full(err, 0);
}

/* ---- tid: (block, offset) ---- */

static wk_status r_tid(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)d;
    wk_status st = exact(n, 6, "binary tid must be 6 bytes", err);
    if (st != WK_OK) {
        return st;
    }
    if (wk_buf_push(out, '(') != WK_OK || put_u64(out, wk__pg_be32(p)) != WK_OK ||
        wk_buf_push(out, ',') != WK_OK || put_u64(out, wk__pg_be16(p + 4)) != WK_OK ||
        wk_buf_push(out, ')') != WK_OK) {
        return full(err, 0);
    }
    return WK_OK;
}

static wk_status p_tid(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)e;
    s = trim(s, &n);
    size_t comma = 0;
    while (comma < n && s[comma] != ',') {
        comma++;
    }
    uint64_t blk, off;
    if (n < 5 || s[0] != '(' || s[n - 1] != ')' || comma >= n ||
        !parse_u64(s + 1, comma - 1, UINT32_MAX, &blk) ||
        !parse_u64(s + comma + 1, n - comma - 2, UINT16_MAX, &off)) {
        return bad_input(err, 0, "invalid input syntax for type tid");
    }
    if (put_be(out, blk, 4) != WK_OK || put_be(out, off, 2) != WK_OK) {
        return full(err, 0);
    }
    return WK_OK;
}

/* ---- int2vector, oidvector: a one-dimensional array on the wire, space-separated text ---- */

static wk_status r_vector(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                          wk_error *err)
{
    bool is_oid = d->codec->oids[0] == 30;
    wk_status st = need(n, 12, "binary vector header is truncated", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t ndim = (int32_t)wk__pg_be32(p);
    uint32_t flags = wk__pg_be32(p + 4);
    uint32_t elem = wk__pg_be32(p + 8);
    if (ndim < 0 || ndim > 1 || flags != 0 || elem != (is_oid ? 26u : 21u)) {
        return bad_input(err, 0, "invalid vector header");
    }
    size_t pos = 12;
    uint32_t count = 0;
    if (ndim == 1) {
        st = need(n, 20, "binary vector dimension is truncated", err);
        if (st != WK_OK) {
            return st;
        }
        int32_t dim = (int32_t)wk__pg_be32(p + 12);
        if (dim < 0 || (size_t)dim > (n - 20) / (is_oid ? 8u : 6u)) {
            return bad_input(err, 12, "invalid vector length");
        }
        count = (uint32_t)dim;
        pos = 20;
    }
    size_t width = is_oid ? 4 : 2;
    for (uint32_t i = 0; i < count; i++) {
        if (n - pos < 4 + width || wk__pg_be32(p + pos) != width) {
            return bad_input(err, pos, "invalid vector element");
        }
        pos += 4;
        int64_t v = is_oid ? (int64_t)wk__pg_be32(p + pos) : (int16_t)wk__pg_be16(p + pos);
        pos += width;
        if ((i > 0 && wk_buf_push(out, ' ') != WK_OK) || wk__pg_put_i64(out, v) != WK_OK) {
            return full(err, pos);
        }
    }
    if (pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the vector");
    }
    return WK_OK;
}

static wk_status p_vector(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                          wk_error *err)
{
    bool is_oid = e->codec->oids[0] == 30;
    size_t head = out->len;
    uint8_t h[20] = {0};
    wk__pg_put32(h + 8, is_oid ? 26u : 21u);
    if (wk_buf_append(out, h, 20) != WK_OK) {
        return full(err, 0);
    }
    uint32_t count = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && is_space(s[i])) {
            i++;
        }
        if (i == n) {
            break;
        }
        size_t st = i;
        while (i < n && !is_space(s[i])) {
            i++;
        }
        int64_t v;
        if (!wk__pg_parse_int(s + st, i - st, is_oid ? 0 : INT16_MIN,
                              is_oid ? UINT32_MAX : INT16_MAX, &v)) {
            return bad_input(err, st, "invalid vector element");
        }
        if (put_be(out, is_oid ? 4 : 2, 4) != WK_OK ||
            put_be(out, (uint64_t)v, is_oid ? 4 : 2) != WK_OK) {
            return full(err, st);
        }
        count++;
    }
    if (count == 0) {
        /* int2vectorrecv / oidvectorrecv refuse the empty array the server itself sends */
        out->len = head;
        return wk__pg_fail(err, WK_ERR_UNSUPPORTED, 0,
                           "an empty vector is only accepted as text by the server");
    }
    wk__pg_put32(out->data + head, 1);
    wk__pg_put32(out->data + head + 12, count);
    wk__pg_put32(out->data + head + 16, 0);
    return WK_OK;
}

/* ---- text-like: xml, refcursor (binary = text); jsonpath (version byte 1, then text) ---- */

static wk_status r_plain(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                         wk_error *err)
{
    size_t skip = 0;
    if (d->codec->oids[0] == 4072) {
        if (n < 1 || p[0] != 1) {
            return bad_input(err, 0, "unsupported jsonpath version");
        }
        skip = 1;
    }
    size_t bad;
    if (n > skip && !wk_utf8_valid(p + skip, n - skip, &bad)) {
        return wk__pg_fail(err, WK_ERR_UTF8, skip + bad, "value is not valid UTF-8");
    }
    return wk_buf_append(out, p + skip, n - skip) == WK_OK ? WK_OK : full(err, 0);
}

static wk_status p_plain(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                         wk_error *err)
{
    if (e->codec->oids[0] == 4072 && wk_buf_push(out, 1) != WK_OK) {
        return full(err, 0);
    }
    return wk_buf_append(out, s, n) == WK_OK ? WK_OK : full(err, 0);
}

/* ---- pg_lsn: %X/%X ---- */

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

static wk_status r_lsn(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)d;
    wk_status st = exact(n, 8, "binary pg_lsn must be 8 bytes", err);
    if (st != WK_OK) {
        return st;
    }
    uint64_t v = wk__pg_be64(p);
    if (put_hex32(out, (uint32_t)(v >> 32)) != WK_OK || wk_buf_push(out, '/') != WK_OK ||
        put_hex32(out, (uint32_t)v) != WK_OK) {
        return full(err, 0);
    }
    return WK_OK;
}

static bool parse_hex32(const uint8_t *s, size_t n, uint32_t *out)
{
    if (n == 0 || n > 8) {
        return false;
    }
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int h = hexval(s[i]);
        if (h < 0) {
            return false;
        }
        v = v << 4 | (uint32_t)h;
    }
    *out = v;
    return true;
}

static wk_status p_lsn(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)e;
    s = trim(s, &n);
    size_t slash = 0;
    while (slash < n && s[slash] != '/') {
        slash++;
    }
    uint32_t hi, lo;
    if (slash >= n || !parse_hex32(s, slash, &hi) ||
        !parse_hex32(s + slash + 1, n - slash - 1, &lo)) {
        return bad_input(err, 0, "invalid input syntax for type pg_lsn");
    }
    return put_be(out, (uint64_t)hi << 32 | lo, 8) == WK_OK ? WK_OK : full(err, 0);
}

/* ---- macaddr (6 bytes), macaddr8 (8 bytes): lower-case hex pairs joined by ':' ---- */

static wk_status r_mac(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    size_t want = d->codec->oids[0] == 829 ? 6 : 8;
    wk_status st = exact(n, want, "binary macaddr has the wrong length", err);
    if (st != WK_OK) {
        return st;
    }
    char t[24];
    size_t o = 0;
    for (size_t i = 0; i < want; i++) {
        if (i > 0) {
            t[o++] = ':';
        }
        t[o++] = "0123456789abcdef"[p[i] >> 4];
        t[o++] = "0123456789abcdef"[p[i] & 15];
    }
    return wk_buf_append(out, t, o) == WK_OK ? WK_OK : full(err, 0);
}

/* Hex digits with ':', '-' or '.' separators (every form macaddr_in / macaddr8_in take is
 * such a string); 12 digits for macaddr, 12 (FF:FE inserted) or 16 for macaddr8. */
static wk_status p_mac(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    bool is8 = e->codec->oids[0] != 829;
    s = trim(s, &n);
    uint8_t b[8];
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        int h = hexval(s[i]);
        if (h < 0) {
            if (s[i] == ':' || s[i] == '-' || s[i] == '.') {
                continue;
            }
            return bad_input(err, i, "invalid input syntax for a MAC address");
        }
        if (nd >= 16) {
            return bad_input(err, i, "too many digits for a MAC address");
        }
        if (nd % 2 == 0) {
            b[nd / 2] = (uint8_t)(h << 4);
        } else {
            b[nd / 2] = (uint8_t)(b[nd / 2] | h);
        }
        nd++;
    }
    if (nd == 12 && is8) {
        memmove(b + 5, b + 3, 3);
        b[3] = 0xFF;
        b[4] = 0xFE;
        nd = 16;
    }
    if (nd != (is8 ? 16u : 12u)) {
        return bad_input(err, 0, "wrong number of digits for a MAC address");
    }
    return wk_buf_append(out, b, nd / 2) == WK_OK ? WK_OK : full(err, 0);
}

/* ---- money: int64 cents; cash_out under lc_monetary = C ("-$1,234.56") ---- */

static wk_status r_money(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                         wk_error *err)
{
    (void)d;
    wk_status st = exact(n, 8, "binary money must be 8 bytes", err);
    if (st != WK_OK) {
        return st;
    }
    int64_t v = (int64_t)wk__pg_be64(p);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char t[40];
    size_t i = sizeof t;
    int digits = 0;
    /* two fraction digits, then groups of three separated by ',' */
    do {
        if (digits == 2) {
            t[--i] = '.';
        } else if (digits > 2 && (digits - 2) % 3 == 0) {
            t[--i] = ',';
        }
        t[--i] = (char)('0' + u % 10);
        u /= 10;
        digits++;
    } while (u != 0 || digits < 3);
    t[--i] = '$';
    if (v < 0) {
        t[--i] = '-';
    }
    return wk_buf_append(out, t + i, sizeof t - i) == WK_OK ? WK_OK : full(err, 0);
}

/* ---- geometry ---- */

#define GEO_MAX_POINTS (INT32_MAX / 16)

static wk_status put_pair(wk_buf *b, const uint8_t *p)
{
    if (wk_buf_push(b, '(') != WK_OK || put_f8(b, p) != WK_OK || wk_buf_push(b, ',') != WK_OK ||
        put_f8(b, p + 8) != WK_OK || wk_buf_push(b, ')') != WK_OK) {
        return WK_ERR_NOMEM;
    }
    return WK_OK;
}

static wk_status put_points(wk_buf *b, const uint8_t *p, size_t npts)
{
    for (size_t i = 0; i < npts; i++) {
        if ((i > 0 && wk_buf_push(b, ',') != WK_OK) || put_pair(b, p + 16 * i) != WK_OK) {
            return WK_ERR_NOMEM;
        }
    }
    return WK_OK;
}

static wk_status r_geo(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    wk_pg_oid oid = d->codec->oids[0];
    wk_status st = WK_OK;
    switch (oid) {
    case 600: /* point */
        st = exact(n, 16, "binary point must be 16 bytes", err);
        if (st == WK_OK && put_pair(out, p) != WK_OK) {
            st = full(err, 0);
        }
        return st;
    case 601: /* lseg */
    case 603: /* box */
        st = exact(n, 32, "binary lseg/box must be 32 bytes", err);
        if (st != WK_OK) {
            return st;
        }
        if ((oid == 601 && wk_buf_push(out, '[') != WK_OK) || put_points(out, p, 2) != WK_OK ||
            (oid == 601 && wk_buf_push(out, ']') != WK_OK)) {
            return full(err, 0);
        }
        return WK_OK;
    case 628: /* line {A,B,C} */
    case 718: /* circle <(x,y),r> */
        st = exact(n, 24, "binary line/circle must be 24 bytes", err);
        if (st != WK_OK) {
            return st;
        }
        if (oid == 628) {
            if (wk_buf_push(out, '{') != WK_OK || put_f8(out, p) != WK_OK ||
                wk_buf_push(out, ',') != WK_OK || put_f8(out, p + 8) != WK_OK ||
                wk_buf_push(out, ',') != WK_OK || put_f8(out, p + 16) != WK_OK ||
                wk_buf_push(out, '}') != WK_OK) {
                return full(err, 0);
            }
        } else if (wk_buf_push(out, '<') != WK_OK || put_pair(out, p) != WK_OK ||
                   wk_buf_push(out, ',') != WK_OK || put_f8(out, p + 16) != WK_OK ||
                   wk_buf_push(out, '>') != WK_OK) {
            return full(err, 0);
        }
        return WK_OK;
    default: break;
    }
    /* path: closed byte, count, points; polygon: count, points */
    size_t head = oid == 602 ? 5 : 4;
    st = need(n, head, "binary path/polygon header is truncated", err);
    if (st != WK_OK) {
        return st;
    }
    bool closed = oid == 604 || p[0] != 0;
    int32_t npts = (int32_t)wk__pg_be32(p + head - 4);
    if (npts < 0 || npts > GEO_MAX_POINTS || (size_t)npts != (n - head) / 16 ||
        (n - head) % 16 != 0 || (oid == 604 && npts == 0) || (oid == 602 && npts == 0)) {
        return bad_input(err, head - 4, "invalid number of points");
    }
    if (wk_buf_push(out, closed ? '(' : '[') != WK_OK ||
        put_points(out, p + head, (size_t)npts) != WK_OK ||
        wk_buf_push(out, closed ? ')' : ']') != WK_OK) {
        return full(err, 0);
    }
    return WK_OK;
}

/* Reads the numbers of a geometric literal: every run of bytes that is not a delimiter
 * ("()[]<>{},") or space must be a float. Returns the count, or -1 on a bad token. */
static long geo_numbers(const uint8_t *s, size_t n, wk_buf *nums, wk_error *err)
{
    long count = 0;
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (is_space(c) || strchr("()[]<>{},", c) != NULL || c == 0) {
            i++;
            continue;
        }
        size_t st = i;
        while (i < n && !is_space(s[i]) && s[i] != 0 && strchr("()[]<>{},", s[i]) == NULL) {
            i++;
        }
        double v;
        if (!wk__pg_parse_float(s + st, i - st, false, &v)) {
            bad_input(err, st, "invalid number in a geometric value");
            return -1;
        }
        uint64_t u;
        memcpy(&u, &v, 8);
        uint8_t b[8];
        wk__pg_put64(b, u);
        if (wk_buf_append(nums, b, 8) != WK_OK) {
            full(err, st);
            return -1;
        }
        count++;
    }
    return count;
}

static wk_status p_geo(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    wk_pg_oid oid = e->codec->oids[0];
    s = trim(s, &n);
    wk_buf nums;
    wk_buf_init(&nums, NULL, 0);
    long c = geo_numbers(s, n, &nums, err);
    wk_status st = WK_OK;
    long want = oid == 600 ? 2 : oid == 601 || oid == 603 ? 4 : oid == 628 || oid == 718 ? 3 : 0;
    if (c < 0) {
        st = err != NULL ? err->code : WK_ERR_SYNTAX;
    } else if (want != 0 && c != want) {
        st = bad_input(err, 0, "wrong number of coordinates for the geometric type");
    } else if (want == 0 && (c == 0 || c % 2 != 0)) {
        st = bad_input(err, 0, "a path or polygon needs pairs of coordinates");
    }
    if (st == WK_OK && want == 0) {
        uint8_t h[5];
        size_t hl = 0;
        if (oid == 602) {
            h[hl++] = n > 0 && s[0] == '[' ? 0 : 1;
        }
        wk__pg_put32(h + hl, (uint32_t)(c / 2));
        hl += 4;
        if (wk_buf_append(out, h, hl) != WK_OK) {
            st = full(err, 0);
        }
    }
    if (st == WK_OK && wk_buf_append(out, nums.data, nums.len) != WK_OK) {
        st = full(err, 0);
    }
    wk_buf_free(&nums);
    return st;
}

/* ---- bit, varbit: bit length, then the bits, first bit in the high bit ---- */

static wk_status r_bits(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                        wk_error *err)
{
    (void)d;
    wk_status st = need(n, 4, "binary bit string needs a length", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t bits = (int32_t)wk__pg_be32(p);
    if (bits < 0 || ((size_t)bits + 7) / 8 != n - 4) {
        return bad_input(err, 0, "bit length does not match the bytes present");
    }
    if (wk_buf_reserve(out, (size_t)bits) != WK_OK) {
        return full(err, 0);
    }
    for (int32_t i = 0; i < bits; i++) {
        out->data[out->len++] = (p[4 + i / 8] >> (7 - i % 8) & 1) ? '1' : '0';
    }
    return WK_OK;
}

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
    if (put_be(out, nbits, 4) != WK_OK || wk_buf_reserve(out, (nbits + 7) / 8) != WK_OK) {
        return full(err, 0);
    }
    uint8_t *b = out->data + out->len;
    memset(b, 0, (nbits + 7) / 8);
    size_t bit = 0;
    for (; i < n; i++) {
        int v = hex ? hexval(s[i]) : s[i] == '0' ? 0 : s[i] == '1' ? 1 : -1;
        if (v < 0) {
            out->len = head;
            return bad_input(err, i, "invalid digit in a bit string");
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

/* ---- txid_snapshot, pg_snapshot: nxip, xmin, xmax, xips -> "xmin:xmax:xip,xip" ---- */

static wk_status r_snap(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                        wk_error *err)
{
    (void)d;
    wk_status st = need(n, 20, "binary snapshot is truncated", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t nxip = (int32_t)wk__pg_be32(p);
    if (nxip < 0 || (size_t)nxip != (n - 20) / 8 || (n - 20) % 8 != 0) {
        return bad_input(err, 0, "invalid snapshot count");
    }
    if (put_u64(out, wk__pg_be64(p + 4)) != WK_OK || wk_buf_push(out, ':') != WK_OK ||
        put_u64(out, wk__pg_be64(p + 12)) != WK_OK || wk_buf_push(out, ':') != WK_OK) {
        return full(err, 0);
    }
    for (int32_t i = 0; i < nxip; i++) {
        if ((i > 0 && wk_buf_push(out, ',') != WK_OK) ||
            put_u64(out, wk__pg_be64(p + 20 + 8 * (size_t)i)) != WK_OK) {
            return full(err, 0);
        }
    }
    return WK_OK;
}

static wk_status p_snap(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                        wk_error *err)
{
    (void)e;
    s = trim(s, &n);
    size_t c1 = 0, c2;
    while (c1 < n && s[c1] != ':') {
        c1++;
    }
    c2 = c1 + 1;
    while (c2 < n && s[c2] != ':') {
        c2++;
    }
    uint64_t xmin, xmax;
    if (c2 >= n || !parse_u64(s, c1, UINT64_MAX, &xmin) ||
        !parse_u64(s + c1 + 1, c2 - c1 - 1, UINT64_MAX, &xmax)) {
        return bad_input(err, 0, "invalid input syntax for a snapshot");
    }
    size_t head = out->len;
    if (put_be(out, 0, 4) != WK_OK || put_be(out, xmin, 8) != WK_OK ||
        put_be(out, xmax, 8) != WK_OK) {
        return full(err, 0);
    }
    uint32_t count = 0;
    size_t i = c2 + 1;
    while (i < n) {
        size_t st = i;
        while (i < n && s[i] != ',') {
            i++;
        }
        uint64_t x;
        if (!parse_u64(s + st, i - st, UINT64_MAX, &x)) {
            out->len = head;
            return bad_input(err, st, "invalid transaction id in a snapshot");
        }
        if (put_be(out, x, 8) != WK_OK) {
            return full(err, st);
        }
        count++;
        i++;
    }
    wk__pg_put32(out->data + head, count);
    return WK_OK;
}

/* ---- tsvector: count, then per lexeme its text, NUL, position count, positions ---- */

static wk_status r_tsvector(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                            wk_error *err)
{
    (void)d;
    wk_status st = need(n, 4, "binary tsvector needs a count", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t count = (int32_t)wk__pg_be32(p);
    if (count < 0 || (size_t)count > (n - 4) / 3) {
        return bad_input(err, 0, "invalid tsvector lexeme count");
    }
    size_t pos = 4;
    for (int32_t i = 0; i < count; i++) {
        const uint8_t *z = memchr(p + pos, 0, n - pos);
        if (z == NULL) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "unterminated tsvector lexeme");
        }
        size_t len = (size_t)(z - (p + pos)), bad;
        if (len == 0 || !wk_utf8_valid(p + pos, len, &bad)) {
            return bad_input(err, pos, "invalid tsvector lexeme");
        }
        if ((i > 0 && wk_buf_push(out, ' ') != WK_OK) || wk_buf_push(out, '\'') != WK_OK) {
            return full(err, pos);
        }
        for (size_t k = 0; k < len; k++) {
            uint8_t c = p[pos + k];
            if ((c == '\'' || c == '\\') && wk_buf_push(out, c) != WK_OK) {
                return full(err, pos);
            }
            if (wk_buf_push(out, c) != WK_OK) {
                return full(err, pos);
            }
        }
        if (wk_buf_push(out, '\'') != WK_OK) {
            return full(err, pos);
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
                put_u64(out, wp & 0x3FFFu) != WK_OK ||
                (weight[wp >> 14] != 0 && wk_buf_push(out, (uint8_t)weight[wp >> 14]) != WK_OK)) {
                return full(err, pos);
            }
        }
        pos += (size_t)npos * 2;
    }
    if (pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the tsvector");
    }
    return WK_OK;
}

/* ---- the codecs ---- */

#define RT(name, render, parse) static const wk__pg_rtype name = {render, parse}
RT(rt_u32, r_u32, p_u32);
RT(rt_u64, r_u64, p_u64);
RT(rt_tid, r_tid, p_tid);
RT(rt_vector, r_vector, p_vector);
RT(rt_plain, r_plain, p_plain);
RT(rt_lsn, r_lsn, p_lsn);
RT(rt_mac, r_mac, p_mac);
RT(rt_money, r_money, NULL);
RT(rt_geo, r_geo, p_geo);
RT(rt_bits, r_bits, p_bits);
RT(rt_snap, r_snap, p_snap);
RT(rt_tsvector, r_tsvector, NULL);

#define R_DEC                                                                                 \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = misc_dec_text, [WK_PG_KIND_VALUE] = wk__pg_dec_value,             \
        [WK_PG_KIND_EVENTS] = misc_dec_events                                                 \
    }
#define R_ENC                                                                                 \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = misc_enc_text                                                     \
    }

#define RC(name, rt, formats, v) RCF(name, rt, formats, v, R_DEC, R_ENC)
#define RCF(name, rt, formats, v, bin_dec, bin_enc)                                           \
    {name,                                                                                    \
     v##_o,                                                                                   \
     v##_a,                                                                                   \
     sizeof v##_o / sizeof v##_o[0],                                                          \
     formats,                                                                                 \
     K(TEXT) | K(VALUE) | K(EVENTS),                                                          \
     K(TEXT),                                                                                 \
     0,                                                                                       \
     0,                                                                                       \
     {R_DEC, bin_dec},                                                                        \
     {R_ENC, bin_enc},                                                                        \
     rt}

/* OIDs of each codec and, parallel to them, their array OIDs (0 = none). */
#define OIDS(v, ...) static const wk_pg_oid v##_o[] = {__VA_ARGS__}
#define AOIDS(v, ...) static const wk_pg_oid v##_a[] = {__VA_ARGS__}
#define BOTH WK_PG_BOTH_FORMATS

static const wk__pg_rtype rt_textonly = {NULL, NULL};

OIDS(c_xid, 28, 29);
AOIDS(c_xid, 1011, 1012);

OIDS(c_xid8, 5069);
AOIDS(c_xid8, 271);

OIDS(c_tid, 27);
AOIDS(c_tid, 1010);

OIDS(c_vector, 22);
AOIDS(c_vector, 1006);

OIDS(c_oidvector, 30);
AOIDS(c_oidvector, 1013);

OIDS(c_reg, 2205, 24, 2202, 2203, 2204, 2206, 3734, 3769, 4089, 4096, 4191);
AOIDS(c_reg, 2210, 1008, 2207, 2208, 2209, 2211, 3735, 3770, 4090, 4097, 4192);

OIDS(c_xml, 142);
AOIDS(c_xml, 143);

OIDS(c_refcursor, 1790);
AOIDS(c_refcursor, 2201);

OIDS(c_jsonpath, 4072);
AOIDS(c_jsonpath, 4073);

OIDS(c_lsn, 3220);
AOIDS(c_lsn, 3221);

OIDS(c_macaddr, 829);
AOIDS(c_macaddr, 1040);

OIDS(c_macaddr8, 774);
AOIDS(c_macaddr8, 775);

OIDS(c_money, 790);
AOIDS(c_money, 791);

OIDS(c_point, 600);
AOIDS(c_point, 1017);

OIDS(c_lseg, 601);
AOIDS(c_lseg, 1018);

OIDS(c_path, 602);
AOIDS(c_path, 1019);

OIDS(c_box, 603);
AOIDS(c_box, 1020); /* elements separated by ; (typdelim: array.c) */

OIDS(c_polygon, 604);
AOIDS(c_polygon, 1027);

OIDS(c_line, 628);
AOIDS(c_line, 629);

OIDS(c_circle, 718);
AOIDS(c_circle, 719);

OIDS(c_bit, 1560, 1562);
AOIDS(c_bit, 1561, 1563);

OIDS(c_snap, 5038, 2970);
AOIDS(c_snap, 5039, 2949);

OIDS(c_tsvector, 3614);
AOIDS(c_tsvector, 3643);

OIDS(c_textonly, 1033, 3615, 3642, 194, 3361, 3402, 5017, 4600, 4601);
AOIDS(c_textonly, 1034, 3645, 3644, 0, 0, 0, 0, 0, 0);

const wk_pg_codec wk__pg_misc[WK__PG_N_MISC] = {
    RC("xid", &rt_u32, BOTH, c_xid),
    RC("xid8", &rt_u64, BOTH, c_xid8),
    RC("tid", &rt_tid, BOTH, c_tid),
    RC("int2vector", &rt_vector, BOTH, c_vector),
    RC("oidvector", &rt_vector, BOTH, c_oidvector),
    RC("regclass", &rt_u32, BOTH, c_reg),
    RC("xml", &rt_plain, BOTH, c_xml),
    RC("refcursor", &rt_plain, BOTH, c_refcursor),
    RC("jsonpath", &rt_plain, BOTH, c_jsonpath),
    RC("pg_lsn", &rt_lsn, BOTH, c_lsn),
    RC("macaddr", &rt_mac, BOTH, c_macaddr),
    RC("macaddr8", &rt_mac, BOTH, c_macaddr8),
    RC("money", &rt_money, BOTH, c_money),
    RC("point", &rt_geo, BOTH, c_point),
    RC("lseg", &rt_geo, BOTH, c_lseg),
    RC("path", &rt_geo, BOTH, c_path),
    RC("box", &rt_geo, BOTH, c_box),
    RC("polygon", &rt_geo, BOTH, c_polygon),
    RC("line", &rt_geo, BOTH, c_line),
    RC("circle", &rt_geo, BOTH, c_circle),
    RC("bit", &rt_bits, BOTH, c_bit),
    RC("pg_snapshot", &rt_snap, BOTH, c_snap),
    RC("tsvector", &rt_tsvector, BOTH, c_tsvector),
    RCF("textonly", &rt_textonly, WK_PG_FORMAT_MASK(WK_PG_TEXT), c_textonly, {0}, {0})};
