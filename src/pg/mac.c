/*
 * macaddr and macaddr8, PostgreSQL's mac.c and mac8.c: 6- and 8-byte hardware addresses,
 * rendered as lower-case hex pairs joined by ':'.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> the renderer
 * here -> text / a string event / a value tree; text input -> the parser here -> binary. The
 * codec's first OID (829 = macaddr) tells the two widths apart.
 */
#include "pg/pg_codec.h"

/* macaddr_out / macaddr8_out of the 6 or 8 raw bytes. */
static wk_status r_mac(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    size_t want = d->codec->oids[0] == 829 ? 6 : 8;
    wk_status st = wk__pg_exact(n, want, "binary macaddr has the wrong length", err);
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
    return wk_buf_append(out, t, o) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

/* Hex digits with ':', '-' or '.' separators (every form macaddr_in / macaddr8_in take is
 * such a string); 12 digits for macaddr, 12 (FF:FE inserted) or 16 for macaddr8. */
static wk_status p_mac(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    bool is8 = e->codec->oids[0] != 829;
    s = wk__pg_trim(s, &n);
    uint8_t b[8];
    size_t nd = 0;
    for (size_t i = 0; i < n; i++) {
        int h = wk__pg_hexval(s[i]);
        if (h < 0) {
            if (s[i] == ':' || s[i] == '-' || s[i] == '.') {
                continue;
            }
            return wk__pg_bad_input(err, i, "invalid input syntax for a MAC address");
        }
        if (nd >= 16) {
            return wk__pg_bad_input(err, i, "too many digits for a MAC address");
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
        return wk__pg_bad_input(err, 0, "wrong number of digits for a MAC address");
    }
    return wk_buf_append(out, b, nd / 2) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

static const wk__pg_rtype rt_mac = {r_mac, p_mac};

R_OIDS(c_macaddr, 829);
R_AOIDS(c_macaddr, 1040);
const wk_pg_codec wk__pg_codec_macaddr = RC("macaddr", &rt_mac, WK_PG_BOTH_FORMATS, c_macaddr);

R_OIDS(c_macaddr8, 774);
R_AOIDS(c_macaddr8, 775);
const wk_pg_codec wk__pg_codec_macaddr8 = RC("macaddr8", &rt_mac, WK_PG_BOTH_FORMATS, c_macaddr8);
