/*
 * The geometric types, PostgreSQL's geo_ops.c: point, lseg, path, box, polygon, line, circle,
 * read as the server's text output.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> a codec below -> rendered.c -> r_geo ->
 * text / a string event / a value tree; text input -> p_geo -> the *_recv binary layout.
 * Coordinates are float8 and print as float8out does (extra_float_digits as the glue sets it),
 * through float.c's wk__pg_put_float.
 */
#include "pg/pg_codec.h"

/* The most points a path or polygon's byte length can describe (16 bytes a point). */
#define GEO_MAX_POINTS (INT32_MAX / 16)

/* Appends "(x,y)" of the two float8 at p[0..16). */
static wk_status put_pair(wk_buf *b, const uint8_t *p)
{
    if (wk_buf_push(b, '(') != WK_OK || wk__pg_put_f8(b, p) != WK_OK ||
        wk_buf_push(b, ',') != WK_OK || wk__pg_put_f8(b, p + 8) != WK_OK ||
        wk_buf_push(b, ')') != WK_OK) {
        return WK_ERR_NOMEM;
    }
    return WK_OK;
}

/* Appends npts points from p, comma-separated. */
static wk_status put_points(wk_buf *b, const uint8_t *p, size_t npts)
{
    for (size_t i = 0; i < npts; i++) {
        if ((i > 0 && wk_buf_push(b, ',') != WK_OK) || put_pair(b, p + 16 * i) != WK_OK) {
            return WK_ERR_NOMEM;
        }
    }
    return WK_OK;
}

/* The *_out of each geometric type from its *_send layout (float8 fields, big-endian):
 * point (x,y); lseg [(x1,y1),(x2,y2)]; box (x1,y1),(x2,y2); line {A,B,C}; circle <(x,y),r>;
 * path: closed byte, int32 count, points -> ((..)) closed or [(..)] open; polygon: count,
 * points -> ((..)). The codec's first OID says which type. Counts must match the bytes. */
static wk_status r_geo(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    wk_pg_oid oid = d->codec->oids[0];
    wk_status st = WK_OK;
    switch (oid) {
    case 600: /* point */
        st = wk__pg_exact(n, 16, "binary point must be 16 bytes", err);
        if (st == WK_OK && put_pair(out, p) != WK_OK) {
            st = wk__pg_nomem(err, 0);
        }
        return st;
    case 601: /* lseg */
    case 603: /* box */
        st = wk__pg_exact(n, 32, "binary lseg/box must be 32 bytes", err);
        if (st != WK_OK) {
            return st;
        }
        if ((oid == 601 && wk_buf_push(out, '[') != WK_OK) || put_points(out, p, 2) != WK_OK ||
            (oid == 601 && wk_buf_push(out, ']') != WK_OK)) {
            return wk__pg_nomem(err, 0);
        }
        return WK_OK;
    case 628: /* line {A,B,C} */
    case 718: /* circle <(x,y),r> */
        st = wk__pg_exact(n, 24, "binary line/circle must be 24 bytes", err);
        if (st != WK_OK) {
            return st;
        }
        if (oid == 628) {
            if (wk_buf_push(out, '{') != WK_OK || wk__pg_put_f8(out, p) != WK_OK ||
                wk_buf_push(out, ',') != WK_OK || wk__pg_put_f8(out, p + 8) != WK_OK ||
                wk_buf_push(out, ',') != WK_OK || wk__pg_put_f8(out, p + 16) != WK_OK ||
                wk_buf_push(out, '}') != WK_OK) {
                return wk__pg_nomem(err, 0);
            }
        } else if (wk_buf_push(out, '<') != WK_OK || put_pair(out, p) != WK_OK ||
                   wk_buf_push(out, ',') != WK_OK || wk__pg_put_f8(out, p + 16) != WK_OK ||
                   wk_buf_push(out, '>') != WK_OK) {
            return wk__pg_nomem(err, 0);
        }
        return WK_OK;
    default: break;
    }
    /* path: closed byte, count, points; polygon: count, points */
    size_t head = oid == 602 ? 5 : 4;
    st = wk__pg_need(n, head, "binary path/polygon header is truncated", err);
    if (st != WK_OK) {
        return st;
    }
    bool closed = oid == 604 || p[0] != 0;
    int32_t npts = (int32_t)wk__pg_be32(p + head - 4);
    if (npts < 0 || npts > GEO_MAX_POINTS || (size_t)npts != (n - head) / 16 ||
        (n - head) % 16 != 0 || (oid == 604 && npts == 0) || (oid == 602 && npts == 0)) {
        return wk__pg_bad_input(err, head - 4, "invalid number of points");
    }
    if (wk_buf_push(out, closed ? '(' : '[') != WK_OK ||
        put_points(out, p + head, (size_t)npts) != WK_OK ||
        wk_buf_push(out, closed ? ')' : ']') != WK_OK) {
        return wk__pg_nomem(err, 0);
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
        if (wk__pg_is_space(c) || strchr("()[]<>{},", c) != NULL || c == 0) {
            i++;
            continue;
        }
        size_t st = i;
        while (i < n && !wk__pg_is_space(s[i]) && s[i] != 0 && strchr("()[]<>{},", s[i]) == NULL) {
            i++;
        }
        double v;
        if (!wk__pg_parse_float(s + st, i - st, false, &v)) {
            wk__pg_bad_input(err, st, "invalid number in a geometric value");
            return -1;
        }
        uint64_t u;
        memcpy(&u, &v, 8);
        uint8_t b[8];
        wk__pg_put64(b, u);
        if (wk_buf_append(nums, b, 8) != WK_OK) {
            wk__pg_nomem(err, st);
            return -1;
        }
        count++;
    }
    return count;
}

/* The input of each geometric type: the numbers are read by geo_numbers (the delimiters are
 * not checked, only counted coordinates), then laid out as *_recv expects: 2, 4 or 3 floats
 * for point, lseg/box and line/circle; a count header (and the closed byte for a path, open
 * when the text starts with '[') before the pairs of a path or polygon. */
static wk_status p_geo(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    wk_pg_oid oid = e->codec->oids[0];
    s = wk__pg_trim(s, &n);
    wk_buf nums;
    wk_buf_init(&nums, NULL, 0);
    long c = geo_numbers(s, n, &nums, err);
    wk_status st = WK_OK;
    long want = oid == 600 ? 2 : oid == 601 || oid == 603 ? 4 : oid == 628 || oid == 718 ? 3 : 0;
    if (c < 0) {
        st = err != NULL ? err->code : WK_ERR_SYNTAX;
    } else if (want != 0 && c != want) {
        st = wk__pg_bad_input(err, 0, "wrong number of coordinates for the geometric type");
    } else if (want == 0 && (c == 0 || c % 2 != 0)) {
        st = wk__pg_bad_input(err, 0, "a path or polygon needs pairs of coordinates");
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
            st = wk__pg_nomem(err, 0);
        }
    }
    if (st == WK_OK && wk_buf_append(out, nums.data, nums.len) != WK_OK) {
        st = wk__pg_nomem(err, 0);
    }
    wk_buf_free(&nums);
    return st;
}

static const wk__pg_rtype rt_geo = {r_geo, p_geo};

R_OIDS(c_point, 600);
R_AOIDS(c_point, 1017);
const wk_pg_codec wk__pg_codec_point = RC("point", &rt_geo, WK_PG_BOTH_FORMATS, c_point);

R_OIDS(c_lseg, 601);
R_AOIDS(c_lseg, 1018);
const wk_pg_codec wk__pg_codec_lseg = RC("lseg", &rt_geo, WK_PG_BOTH_FORMATS, c_lseg);

R_OIDS(c_path, 602);
R_AOIDS(c_path, 1019);
const wk_pg_codec wk__pg_codec_path = RC("path", &rt_geo, WK_PG_BOTH_FORMATS, c_path);

R_OIDS(c_box, 603);
R_AOIDS(c_box, 1020); /* elements separated by ; (typdelim: array.c) */
const wk_pg_codec wk__pg_codec_box = RC("box", &rt_geo, WK_PG_BOTH_FORMATS, c_box);

R_OIDS(c_polygon, 604);
R_AOIDS(c_polygon, 1027);
const wk_pg_codec wk__pg_codec_polygon = RC("polygon", &rt_geo, WK_PG_BOTH_FORMATS, c_polygon);

R_OIDS(c_line, 628);
R_AOIDS(c_line, 629);
const wk_pg_codec wk__pg_codec_line = RC("line", &rt_geo, WK_PG_BOTH_FORMATS, c_line);

R_OIDS(c_circle, 718);
R_AOIDS(c_circle, 719);
const wk_pg_codec wk__pg_codec_circle = RC("circle", &rt_geo, WK_PG_BOTH_FORMATS, c_circle);
