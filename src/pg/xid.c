/*
 * Transaction ids, PostgreSQL's xid.c and xid8funcs.c: xid and cid (32-bit), xid8 (64-bit),
 * and the snapshot types pg_snapshot and txid_snapshot, all read as the server's text output.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the codec below -> rendered.c's generic
 * functions -> the renderer here -> text / a string event / a value tree; text input -> the
 * parser here -> the *_recv binary layout for a binary parameter. xid and cid share the
 * unsigned 32-bit renderer of rendered.c with the reg* types.
 */
#include "pg/pg_codec.h"

/* ---- xid8: 8 bytes, unsigned decimal ---- */

/* xid8out: the 8-byte value in decimal. */
static wk_status r_u64(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)d;
    return wk__pg_render_uint(p, n, 8, "binary xid8 must be 8 bytes", out, err);
}

/* xid8in: an unsigned decimal that fits 64 bits, as 8 big-endian bytes. */
static wk_status p_u64(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)e;
    return wk__pg_parse_uint(s, n, 8, "expected an unsigned 64-bit number", out, err);
}

/* ---- txid_snapshot, pg_snapshot: nxip, xmin, xmax, xips -> "xmin:xmax:xip,xip" ---- */

/* pg_snapshot_out of the pg_snapshot_send layout: int32 nxip, int64 xmin, int64 xmax, then
 * nxip int64 in-progress ids; the count must match the bytes exactly. */
static wk_status r_snap(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                        wk_error *err)
{
    (void)d;
    wk_status st = wk__pg_need(n, 20, "binary snapshot is truncated", err);
    if (st != WK_OK) {
        return st;
    }
    int32_t nxip = (int32_t)wk__pg_be32(p);
    if (nxip < 0 || (size_t)nxip != (n - 20) / 8 || (n - 20) % 8 != 0) {
        return wk__pg_bad_input(err, 0, "invalid snapshot count");
    }
    if (wk__pg_put_u64(out, wk__pg_be64(p + 4)) != WK_OK || wk_buf_push(out, ':') != WK_OK ||
        wk__pg_put_u64(out, wk__pg_be64(p + 12)) != WK_OK || wk_buf_push(out, ':') != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    for (int32_t i = 0; i < nxip; i++) {
        if ((i > 0 && wk_buf_push(out, ',') != WK_OK) ||
            wk__pg_put_u64(out, wk__pg_be64(p + 20 + 8 * (size_t)i)) != WK_OK) {
            return wk__pg_nomem(err, 0);
        }
    }
    return WK_OK;
}

/* pg_snapshot_in's syntax "xmin:xmax:xip,..." to the binary layout; the count is patched in
 * once the ids are read. On a bad id nothing is left appended. */
static wk_status p_snap(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                        wk_error *err)
{
    (void)e;
    s = wk__pg_trim(s, &n);
    size_t c1 = 0, c2;
    while (c1 < n && s[c1] != ':') {
        c1++;
    }
    c2 = c1 + 1;
    while (c2 < n && s[c2] != ':') {
        c2++;
    }
    uint64_t xmin, xmax;
    if (c2 >= n || !wk__pg_parse_u64(s, c1, UINT64_MAX, &xmin) ||
        !wk__pg_parse_u64(s + c1 + 1, c2 - c1 - 1, UINT64_MAX, &xmax)) {
        return wk__pg_bad_input(err, 0, "invalid input syntax for a snapshot");
    }
    size_t head = out->len;
    if (wk__pg_put_be(out, 0, 4) != WK_OK || wk__pg_put_be(out, xmin, 8) != WK_OK ||
        wk__pg_put_be(out, xmax, 8) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    uint32_t count = 0;
    size_t i = c2 + 1;
    while (i < n) {
        size_t st = i;
        while (i < n && s[i] != ',') {
            i++;
        }
        uint64_t x;
        if (!wk__pg_parse_u64(s + st, i - st, UINT64_MAX, &x)) {
            out->len = head;
            return wk__pg_bad_input(err, st, "invalid transaction id in a snapshot");
        }
        if (wk__pg_put_be(out, x, 8) != WK_OK) {
            return wk__pg_nomem(err, st);
        }
        count++;
        i++;
    }
    wk__pg_put32(out->data + head, count);
    return WK_OK;
}

/* ---- the codecs ---- */

static const wk__pg_rtype rt_u64 = {r_u64, p_u64};
static const wk__pg_rtype rt_snap = {r_snap, p_snap};

/* xid (28) and cid (29): 32-bit. */
R_OIDS(c_xid, 28, 29);
R_AOIDS(c_xid, 1011, 1012);
const wk_pg_codec wk__pg_codec_xid = RC("xid", &wk__pg_rt_u32, WK_PG_BOTH_FORMATS, c_xid);

R_OIDS(c_xid8, 5069);
R_AOIDS(c_xid8, 271);
const wk_pg_codec wk__pg_codec_xid8 = RC("xid8", &rt_u64, WK_PG_BOTH_FORMATS, c_xid8);

/* pg_snapshot (5038) and the older txid_snapshot (2970) share the layout. */
R_OIDS(c_snap, 5038, 2970);
R_AOIDS(c_snap, 5039, 2949);
const wk_pg_codec wk__pg_codec_pg_snapshot =
    RC("pg_snapshot", &rt_snap, WK_PG_BOTH_FORMATS, c_snap);
