/*
 * The network address types, PostgreSQL's network.c: inet and cidr, in both wire formats, as
 * a wk_pg_inet (family, netmask bits, the cidr flag, 4 or 16 address bytes).
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the inet or cidr codec (end of this file)
 * -> codec_generic.c's generic functions -> this file's readers and writers -> a wk_pg_inet,
 * PostgreSQL text, an event (the text) or a value. macaddr and macaddr8 are in mac.c.
 *
 * Binary: family (2 = IPv4, 3 = IPv6), netmask bits, is_cidr flag, address length, address,
 * checked as network_recv does (family, bits, length, and for cidr no bits right of the
 * mask). Text output follows PostgreSQL's inet_net_ntop: all four IPv4 octets; IPv6 with the
 * longest run (first on ties) of two or more zero groups compressed and an embedded IPv4
 * tail for ::a.b.c.d and ::ffff:a.b.c.d; "/bits" unless it is the full length (always for
 * cidr). Text input takes full dotted IPv4 or any IPv6 form, with an optional /bits.
 */
#include "pg/pg_codec.h"

#define PGSQL_AF_INET 2
#define PGSQL_AF_INET6 3

/* The address bytes of a wk_pg_inet family (4 or 6). */
static size_t addr_len(uint8_t family)
{
    return family == 4 ? 4 : 16;
}

/* True when no bit right of the mask is set (PostgreSQL's addressOK). */
static bool mask_ok(const wk_pg_inet *v)
{
    size_t len = addr_len(v->family);
    for (unsigned i = 0; i < (unsigned)len; i++) {
        unsigned bits = v->bits;
        unsigned keep = bits >= (i + 1) * 8 ? 8 : (bits > i * 8 ? bits - i * 8 : 0);
        uint8_t mask = (uint8_t)(keep == 8 ? 0 : (0xFFu >> keep));
        if ((v->addr[i] & mask) != 0) {
            return false;
        }
    }
    return true;
}

/* network_recv for inet (cidr false) or cidr (true): the header fields are checked before
 * the address is read, and a cidr must have no bits set right of its mask. */
static wk_status read_bin(const uint8_t *p, size_t n, wk__pg_native *v, bool cidr,
                          wk_error *err)
{
    if (n < 4) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, "binary inet header needs 4 bytes");
    }
    wk_pg_inet *a = &v->inet;
    memset(a, 0, sizeof *a);
    if (p[0] != PGSQL_AF_INET && p[0] != PGSQL_AF_INET6) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid address family in binary inet");
    }
    a->family = p[0] == PGSQL_AF_INET ? 4 : 6;
    if (p[1] > (a->family == 4 ? 32 : 128)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 1, "invalid bits in binary inet");
    }
    a->bits = p[1];
    /* p[2], the sender's is_cidr byte, is ignored as network_recv ignores it: the column's
     * type (the cidr argument) decides. */
    if (p[3] != addr_len(a->family)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 3, "invalid address length in binary inet");
    }
    if (n != 4 + (size_t)p[3]) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 4, "binary inet length does not match");
    }
    memcpy(a->addr, p + 4, p[3]);
    a->cidr = cidr;
    if (cidr && !mask_ok(a)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 4, "cidr value has bits set right of the mask");
    }
    return WK_OK;
}

/* inet_recv. */
static wk_status inet_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    return read_bin(p, n, v, false, err);
}

/* cidr_recv. */
static wk_status cidr_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    return read_bin(p, n, v, true, err);
}

/* network_send of the native value; the is_cidr byte comes from the value's own flag. */
static wk_status write_bin(const wk__pg_native *v, wk_buf *out)
{
    const wk_pg_inet *a = &v->inet;
    uint8_t b[20];
    size_t len = addr_len(a->family);
    b[0] = a->family == 4 ? PGSQL_AF_INET : PGSQL_AF_INET6;
    b[1] = a->bits;
    b[2] = a->cidr ? 1 : 0;
    b[3] = (uint8_t)len;
    memcpy(b + 4, a->addr, len);
    return wk_buf_append(out, b, 4 + len);
}

/* Lower-case digits: inet_net_ntop prints IPv6 groups in lower case. */
static const char hexd[] = "0123456789abcdef";

/* One IPv6 group in hex without leading zeros into o; returns the length. */
static size_t fmt_hex16(char *o, unsigned w)
{
    char t[4];
    size_t n = 0;
    do {
        t[n++] = hexd[w & 15];
        w >>= 4;
    } while (w != 0);
    for (size_t i = 0; i < n; i++) {
        o[i] = t[n - 1 - i];
    }
    return n;
}

/* A dotted quad into o; returns the length. */
static size_t fmt_v4(char *o, const uint8_t *a)
{
    size_t n = 0;
    for (int i = 0; i < 4; i++) {
        if (i > 0) {
            o[n++] = '.';
        }
        n += wk__pg_fmt_uint_pad(o + n, a[i], 1);
    }
    return n;
}

/* An IPv6 address into o as inet_net_ntop writes it (see the top of the file); returns the
 * length (at most 45). */
static size_t fmt_v6(char *o, const uint8_t *a)
{
    unsigned w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (unsigned)a[2 * i] << 8 | a[2 * i + 1];
    }
    /* The longest run of zero groups (the first of equal runs: only a strictly longer run
     * replaces it), as inet_net_ntop picks the one to compress. */
    int best = -1, bestlen = 0, cur = -1, curlen = 0;
    for (int i = 0; i < 8; i++) {
        if (w[i] == 0) {
            if (cur == -1) {
                cur = i;
                curlen = 1;
            } else {
                curlen++;
            }
        } else if (cur != -1) {
            if (best == -1 || curlen > bestlen) {
                best = cur;
                bestlen = curlen;
            }
            cur = -1;
        }
    }
    if (cur != -1 && (best == -1 || curlen > bestlen)) {
        best = cur;
        bestlen = curlen;
    }
    if (best != -1 && bestlen < 2) {
        best = -1; /* a single zero group is printed as "0", not compressed */
    }
    size_t n = 0;
    for (int i = 0; i < 8; i++) {
        if (best != -1 && i >= best && i < best + bestlen) {
            if (i == best) {
                o[n++] = ':';
            }
            continue;
        }
        if (i != 0) {
            o[n++] = ':';
        }
        /* ::a.b.c.d (IPv4-compatible) and ::ffff:a.b.c.d (IPv4-mapped) print their last 32
         * bits as a dotted quad */
        if (i == 6 && best == 0 && (bestlen == 6 || (bestlen == 5 && w[5] == 0xffff))) {
            n += fmt_v4(o + n, a + 12);
            return n;
        }
        n += fmt_hex16(o + n, w[i]);
    }
    if (best != -1 && best + bestlen == 8) {
        o[n++] = ':'; /* a run at the end needs the second colon of "::" */
    }
    return n;
}

/* inet_out / cidr_out: the address, then "/bits" for a cidr or a partial mask. */
static wk_status write_text(const wk__pg_native *v, wk_buf *out)
{
    const wk_pg_inet *a = &v->inet;
    char t[64];
    size_t n = a->family == 4 ? fmt_v4(t, a->addr) : fmt_v6(t, a->addr);
    unsigned full = a->family == 4 ? 32 : 128;
    if (a->cidr || a->bits != full) {
        t[n++] = '/';
        n += wk__pg_fmt_uint_pad(t + n, a->bits, 1);
    }
    return wk_buf_append(out, t, n);
}

/* Dotted quad at p[i..]; advances *i. */
static bool parse_v4(const uint8_t *p, size_t n, size_t *i, uint8_t out[4])
{
    for (int k = 0; k < 4; k++) {
        if (k > 0) {
            if (*i >= n || p[*i] != '.') {
                return false;
            }
            (*i)++;
        }
        unsigned v = 0;
        int d = 0;
        while (*i < n && p[*i] >= '0' && p[*i] <= '9' && d < 3) {
            v = v * 10 + (unsigned)(p[*i] - '0');
            (*i)++;
            d++;
        }
        if (d == 0 || v > 255) {
            return false;
        }
        out[k] = (uint8_t)v;
    }
    return true;
}

/* An IPv6 address at p[*i..] up to '/' or the end: groups of 1 to 4 hex digits, at most one
 * "::" gap, an optional dotted-quad tail; advances *i. False on any malformed form. */
static bool parse_v6(const uint8_t *p, size_t n, size_t *i, uint8_t out[16])
{
    /* Groups are read into a[] in order; `gap` is the group index where "::" stood, and the
     * groups after it are moved to the end once their count is known. */
    uint8_t a[16] = {0};
    int ng = 0, gap = -1;
    if (*i + 1 < n && p[*i] == ':' && p[*i + 1] == ':') {
        gap = 0;
        *i += 2;
    }
    while (*i < n && p[*i] != '/' && ng < 8) {
        size_t st = *i;
        unsigned w = 0;
        int d = 0;
        while (*i < n && wk__pg_hexval(p[*i]) >= 0 && d < 4) {
            w = w << 4 | (unsigned)wk__pg_hexval(p[*i]);
            (*i)++;
            d++;
        }
        if (*i < n && p[*i] == '.' && ng <= 6) {
            /* what looked like a hex group is the start of a dotted-quad tail: re-read it */
            *i = st;
            if (!parse_v4(p, n, i, a + 2 * ng)) {
                return false;
            }
            ng += 2;
            break;
        }
        if (d == 0) {
            return false;
        }
        a[2 * ng] = (uint8_t)(w >> 8);
        a[2 * ng + 1] = (uint8_t)w;
        ng++;
        if (*i < n && p[*i] == ':') {
            if (*i + 1 < n && p[*i + 1] == ':') {
                if (gap >= 0) {
                    return false;
                }
                gap = ng;
                *i += 2;
            } else {
                (*i)++;
                if (*i >= n || p[*i] == '/') {
                    return false;
                }
            }
        } else {
            break;
        }
    }
    /* without "::" all eight groups must be there; with it, it stands for at least one */
    if (gap < 0 && ng != 8) {
        return false;
    }
    if (gap >= 0 && ng > 7) {
        return false;
    }
    memset(out, 0, 16);
    if (gap < 0) {
        memcpy(out, a, 16);
    } else {
        memcpy(out, a, (size_t)gap * 2);
        int tail = ng - gap;
        memcpy(out + 16 - 2 * tail, a + 2 * gap, (size_t)tail * 2);
    }
    return true;
}

/* inet_in (cidr false) / cidr_in: an address, spaces around allowed, then an optional
 * "/bits" (the full length when absent); for cidr no bit may be set right of the mask. */
static wk_status read_text(const uint8_t *p, size_t n, wk__pg_native *v, bool cidr,
                           wk_error *err)
{
    wk_pg_inet *a = &v->inet;
    memset(a, 0, sizeof *a);
    while (n > 0 && p[n - 1] == ' ') {
        n--;
    }
    size_t i = 0;
    while (i < n && p[i] == ' ') {
        i++;
    }
    bool v6 = memchr(p + i, ':', n - i) != NULL;
    bool ok = v6 ? parse_v6(p, n, &i, a->addr) : parse_v4(p, n, &i, a->addr);
    if (!ok) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type inet");
    }
    a->family = v6 ? 6 : 4;
    unsigned full = v6 ? 128 : 32;
    a->bits = (uint8_t)(full == 128 ? 128 : 32);
    if (i < n && p[i] == '/') {
        i++;
        unsigned b = 0;
        int d = 0;
        while (i < n && p[i] >= '0' && p[i] <= '9' && d < 3) {
            b = b * 10 + (unsigned)(p[i] - '0');
            i++;
            d++;
        }
        if (d == 0 || b > full) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid netmask in inet");
        }
        a->bits = (uint8_t)b;
    }
    if (i != n) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "invalid input syntax for type inet");
    }
    a->cidr = cidr;
    if (cidr && !mask_ok(a)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "cidr value has bits set right of the mask");
    }
    return WK_OK;
}

/* inet_in. */
static wk_status inet_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return read_text(p, n, v, false, err);
}

/* cidr_in. */
static wk_status cidr_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return read_text(p, n, v, true, err);
}

/* inet_out: printed as inet whatever the value's flag, so "/bits" only for a partial mask. */
static wk_status inet_write_text(const wk__pg_native *v, wk_buf *out)
{
    wk__pg_native t = *v;
    t.inet.cidr = false;
    return write_text(&t, out);
}

/* cidr_out: always "/bits". */
static wk_status cidr_write_text(const wk__pg_native *v, wk_buf *out)
{
    wk__pg_native t = *v;
    t.inet.cidr = true;
    return write_text(&t, out);
}

/* inet_send: the cidr flag is forced off. */
static wk_status inet_write_bin(const wk__pg_native *v, wk_buf *out)
{
    wk__pg_native t = *v;
    t.inet.cidr = false;
    return write_bin(&t, out);
}

/* cidr_send: the cidr flag is forced on. */
static wk_status cidr_write_bin(const wk__pg_native *v, wk_buf *out)
{
    wk__pg_native t = *v;
    t.inet.cidr = true;
    return write_bin(&t, out);
}

const wk__pg_type wk__pg_type_inet = {WK__PG_CLASS_STRING, inet_read_bin, inet_read_text,
                                      inet_write_bin, inet_write_text, 0, 0};
const wk__pg_type wk__pg_type_cidr = {WK__PG_CLASS_STRING, cidr_read_bin, cidr_read_text,
                                      cidr_write_bin, cidr_write_text, 0, 0};

/* ---- the codecs ---- */

OIDS(o_inet, WK_PG_OID_INET);
OIDS(a_inet, WK_PG_OID_INET_ARRAY);
OIDS(o_cidr, WK_PG_OID_CIDR);
OIDS(a_cidr, WK_PG_OID_CIDR_ARRAY);

/* Both decode to wk_pg_inet; inet is that kind's natural type, so a schema field of kind INET
 * defaults to inet. */
SIMPLE_CODEC(wk__pg_codec_inet, "inet", o_inet, a_inet, INET, true, wk__pg_type_inet);
SIMPLE_CODEC(wk__pg_codec_cidr, "cidr", o_cidr, a_cidr, INET, false, wk__pg_type_cidr);
