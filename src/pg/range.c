/*
 * Ranges and multiranges, generic over their element type (the built-in six of each here;
 * range types found in the catalog get the same functions with their own description).
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> a range codec (the built-in twelve at the
 * end of this file, listed by builtins.c, or a catalog copy made by addons/pq/pq_catalog.c)
 * -> rendered.c's generic functions with range_rt / multirange_rt -> render_range here -> the
 * element type's decoder from the registry -> text / a string event / a value tree; text input
 * -> parse_range -> the element type's TEXT encoder -> the binary form for a parameter.
 *
 * Binary range (range_send): a flags byte (empty, lower/upper inclusive, lower/upper
 * infinite), then each finite bound as a length word and the element's binary value. Binary
 * multirange: a range count, then each range as a length word and a binary range. Text
 * output is range_out's: "empty", or a bracket, the bounds in the element's text output
 * (quoted with '"' when empty or holding '"', '\', '(', ')', '[', ']', ',' or a space; '"' and
 * '\' doubled inside), a comma and the closing bracket; multiranges are "{r1,r2}". Elements are
 * decoded and encoded by the element type's codec found in the decoder's registry, so a range
 * over any type the registry knows works. Text input is parsed as range_in does (quotes,
 * backslash escapes, empty bound = infinite) to send binary parameters.
 */
#include "pg/pg_interface.h"

#define K(x) WK_PG_KIND_MASK(WK_PG_KIND_##x)

/* range_send's flags byte (RANGE_EMPTY, RANGE_LB_INC, ... in rangetypes.h). */
#define R_EMPTY 0x01u
#define R_LB_INC 0x02u
#define R_UB_INC 0x04u
#define R_LB_INF 0x08u
#define R_UB_INF 0x10u

/* The element type of a range codec (its wk_pg_range_type); 0 for the unfilled template. */
static wk_pg_oid elem_of(const wk_pg_codec *c)
{
    const wk_pg_range_type *t = c->data;
    return t != NULL ? t->subtype : 0;
}

/* The error of a full output buffer at byte `at`. */
static wk_status oom(wk_error *err, size_t at)
{
    return wk__pg_fail(err, WK_ERR_NOMEM, at, "out of memory for the range text");
}

/* range_out's rule for quoting a bound: empty, or holding '"', '\', '(', ')', '[', ']', ','
 * or a space. */
static bool needs_quotes(const uint8_t *s, size_t n)
{
    if (n == 0) {
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c == '"' || c == '\\' || c == '(' || c == ')' || c == '[' || c == ']' || c == ',' ||
            c == ' ' || (c >= '\t' && c <= '\r')) {
            return true;
        }
    }
    return false;
}

/* Renders one binary range p[0..n) whose elements are `elem` into `out`. */
static wk_status render_range(const wk_pg_registry *reg, wk_pg_oid elem, const uint8_t *p,
                              size_t n, wk_buf *out, wk_error *err)
{
    if (n < 1) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, 0, "binary range needs a flags byte");
    }
    unsigned flags = p[0];
    if (flags & R_EMPTY) {
        if (n != 1) {
            return wk__pg_fail(err, WK_ERR_TRAILING, 1, "bytes left after an empty range");
        }
        return wk_buf_append(out, "empty", 5) == WK_OK ? WK_OK : oom(err, 0);
    }
    const wk_pg_decoder *ed =
        reg != NULL ? wk_pg_registry_find_decoder(reg, elem, WK_PG_BINARY, WK_PG_KIND_TEXT)
                    : NULL;
    if (ed == NULL) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, 0, "no text decoder for the range's element");
    }
    if (wk_buf_push(out, (flags & R_LB_INC) ? '[' : '(') != WK_OK) {
        return oom(err, 0);
    }
    size_t pos = 1;
    wk_status st = WK_OK;
    for (int b = 0; b < 2 && st == WK_OK; b++) {
        if (b == 1 && wk_buf_push(out, ',') != WK_OK) {
            st = oom(err, pos);
            break;
        }
        if (flags & (b == 0 ? R_LB_INF : R_UB_INF)) {
            continue;
        }
        if (n - pos < 4) {
            st = wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "range bound length missing");
            break;
        }
        int32_t len = (int32_t)wk__pg_be32(p + pos);
        pos += 4;
        if (len < 0 || (size_t)len > n - pos) {
            st = wk__pg_fail(err, WK_ERR_TRUNCATED, pos - 4, "range bound goes past the end");
            break;
        }
        /* render in place, then quote in place when range_out would */
        size_t at = out->len;
        st = wk__pg_decode_part(ed, p + pos, (size_t)len, out, NULL, err);
        if (st != WK_OK) {
            if (err != NULL) {
                err->offset += pos;
            }
            break;
        }
        pos += (size_t)len;
        size_t vlen = out->len - at;
        if (needs_quotes(out->data + at, vlen)) {
            size_t extra = 2;
            for (size_t i = 0; i < vlen; i++) {
                extra += out->data[at + i] == '"' || out->data[at + i] == '\\';
            }
            if (wk_buf_reserve(out, extra) != WK_OK) {
                st = oom(err, pos);
                break;
            }
            uint8_t *v = out->data + at;
            size_t w = vlen + extra; /* write backwards from the new end */
            v[--w] = '"';
            for (size_t i = vlen; i-- > 0;) {
                v[--w] = v[i];
                if (v[i] == '"' || v[i] == '\\') {
                    v[--w] = v[i];
                }
            }
            v[--w] = '"';
            out->len += extra;
        }
    }
    if (st == WK_OK && pos != n) {
        st = wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the range");
    }
    if (st == WK_OK && wk_buf_push(out, (flags & R_UB_INC) ? ']' : ')') != WK_OK) {
        st = oom(err, pos);
    }
    return st;
}

/* The range renderer: render_range over the codec's element type, through the decoder's
 * registry. */
static wk_status r_range(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                         wk_error *err)
{
    return render_range(d->reg, elem_of(d->codec), p, n, out, err);
}

/* multirange_out of multirange_send's layout: int32 count, then per range a length word and a
 * binary range; rendered "{r1,r2}", each range checked against what remains. */
static wk_status r_multirange(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                              wk_error *err)
{
    if (n < 4) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, 0, "binary multirange needs a count");
    }
    int32_t count = (int32_t)wk__pg_be32(p);
    if (count < 0 || (size_t)count > (n - 4) / 5) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid multirange count");
    }
    if (wk_buf_push(out, '{') != WK_OK) {
        return oom(err, 0);
    }
    size_t pos = 4;
    for (int32_t i = 0; i < count; i++) {
        if (n - pos < 4) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos, "multirange range length missing");
        }
        int32_t len = (int32_t)wk__pg_be32(p + pos);
        pos += 4;
        if (len < 0 || (size_t)len > n - pos) {
            return wk__pg_fail(err, WK_ERR_TRUNCATED, pos - 4, "range goes past the end");
        }
        if (i > 0 && wk_buf_push(out, ',') != WK_OK) {
            return oom(err, pos);
        }
        wk_status st = render_range(d->reg, elem_of(d->codec), p + pos, (size_t)len, out, err);
        if (st != WK_OK) {
            if (err != NULL) {
                err->offset += pos;
            }
            return st;
        }
        pos += (size_t)len;
    }
    if (pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the multirange");
    }
    return wk_buf_push(out, '}') == WK_OK ? WK_OK : oom(err, pos);
}

/* ---- text input ---- */

/* The whitespace range_in skips around a literal. */
static bool rspace(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* One bound of range_in: a quoted or bare string up to ',' / ')' / ']'. *inf when empty. */
static bool parse_bound(const uint8_t *s, size_t n, size_t *i, wk_buf *tok, bool *inf)
{
    wk_buf_clear(tok);
    bool any = false;
    while (*i < n) {
        uint8_t c = s[*i];
        if (c == ',' || c == ')' || c == ']') {
            break;
        }
        if (c == '"') {
            any = true;
            (*i)++;
            for (;;) {
                if (*i >= n) {
                    return false;
                }
                c = s[*i];
                if (c == '"') {
                    if (*i + 1 < n && s[*i + 1] == '"') {
                        (*i)++;
                    } else {
                        break;
                    }
                } else if (c == '\\') {
                    if (++*i >= n) {
                        return false;
                    }
                    c = s[*i];
                }
                if (wk_buf_push(tok, c) != WK_OK) {
                    return false;
                }
                (*i)++;
            }
            (*i)++;
            continue;
        }
        if (c == '\\') {
            if (++*i >= n) {
                return false;
            }
            c = s[*i];
        }
        any = true;
        if (wk_buf_push(tok, c) != WK_OK) {
            return false;
        }
        (*i)++;
    }
    *inf = !any;
    return true;
}

/* range_in's syntax ("empty", or [ or (, two bounds, ] or )) to range_recv's layout: each
 * finite bound is encoded with the element type's TEXT encoder, so it is validated by that
 * type; the flags byte follows the brackets and empty bounds. */
static wk_status parse_range(const wk_pg_registry *reg, wk_pg_oid elem, const uint8_t *s,
                             size_t n, wk_buf *out, wk_error *err)
{
    size_t i = 0;
    while (i < n && rspace(s[i])) {
        i++;
    }
    while (n > i && rspace(s[n - 1])) {
        n--;
    }
    if (n - i == 5) {
        static const char e[] = "empty";
        size_t k = 0;
        while (k < 5 && (s[i + k] | 0x20) == e[k]) {
            k++;
        }
        if (k == 5) {
            return wk_buf_push(out, R_EMPTY) == WK_OK ? WK_OK : oom(err, i);
        }
    }
    if (i >= n || (s[i] != '[' && s[i] != '(') || (s[n - 1] != ']' && s[n - 1] != ')')) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "malformed range literal");
    }
    const wk_pg_encoder *ee =
        reg != NULL
            ? wk_pg_registry_find_encoder_for(reg, elem, WK_PG_BINARY, WK_PG_KIND_TEXT)
            : NULL;
    if (ee == NULL) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, 0, "no text encoder for the range's element");
    }
    unsigned flags = s[i] == '[' ? R_LB_INC : 0;
    if (s[n - 1] == ']') {
        flags |= R_UB_INC;
    }
    i++;
    size_t head = out->len;
    wk_status st = wk_buf_push(out, 0) == WK_OK ? WK_OK : oom(err, i);
    wk_buf tok;
    wk_buf_init(&tok, NULL, 0);
    for (int b = 0; b < 2 && st == WK_OK; b++) {
        bool inf;
        if (!parse_bound(s, n, &i, &tok, &inf) || i >= n ||
            (b == 0 ? s[i] != ',' : i != n - 1)) {
            st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "malformed range literal");
            break;
        }
        i++;
        if (inf) {
            flags = (flags | (b == 0 ? R_LB_INF : R_UB_INF)) & ~(b == 0 ? R_LB_INC : R_UB_INC);
            continue;
        }
        size_t at = out->len;
        uint8_t z[4] = {0, 0, 0, 0};
        st = wk_buf_append(out, z, 4) == WK_OK ? WK_OK : oom(err, i);
        wk_slice v = {tok.data != NULL ? (const char *)tok.data : "", tok.len};
        if (st == WK_OK) {
            st = wk__pg_encode_part(ee, &v, out, err);
        }
        if (st == WK_OK) {
            wk__pg_put32(out->data + at, (uint32_t)(out->len - at - 4));
        }
    }
    wk_buf_free(&tok);
    if (st == WK_OK) {
        out->data[head] = (uint8_t)flags;
    }
    return st;
}

/* The range parser: parse_range over the codec's element type. */
static wk_status p_range(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                         wk_error *err)
{
    return parse_range(e->reg, elem_of(e->codec), s, n, out, err);
}

/* The end of the range literal starting at s[i] (one past its closing bracket), or 0. */
static size_t range_end(const uint8_t *s, size_t n, size_t i)
{
    if (n - i >= 5 && (s[i] | 0x20) == 'e') {
        return i + 5;
    }
    bool q = false;
    for (size_t k = i + 1; k < n; k++) {
        if (s[k] == '\\') {
            k++;
        } else if (s[k] == '"') {
            q = !q;
        } else if (!q && (s[k] == ']' || s[k] == ')')) {
            return k + 1;
        }
    }
    return 0;
}

/* multirange_in: "{" ranges separated by commas "}" to the binary layout, each range through
 * parse_range; the count is patched in at the end. */
static wk_status p_multirange(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                              wk_error *err)
{
    size_t i = 0;
    while (i < n && rspace(s[i])) {
        i++;
    }
    if (i >= n || s[i] != '{') {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "malformed multirange literal");
    }
    i++;
    size_t head = out->len;
    uint8_t z[4] = {0, 0, 0, 0};
    if (wk_buf_append(out, z, 4) != WK_OK) {
        return oom(err, i);
    }
    uint32_t count = 0;
    for (;;) {
        while (i < n && rspace(s[i])) {
            i++;
        }
        if (i < n && s[i] == '}' && count == 0) {
            i++;
            break;
        }
        size_t end = i < n ? range_end(s, n, i) : 0;
        if (end == 0) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, i, "malformed multirange literal");
        }
        size_t at = out->len;
        if (wk_buf_append(out, z, 4) != WK_OK) {
            return oom(err, i);
        }
        wk_status st = parse_range(e->reg, elem_of(e->codec), s + i, end - i, out, err);
        if (st != WK_OK) {
            if (err != NULL) {
                err->offset += i;
            }
            return st;
        }
        wk__pg_put32(out->data + at, (uint32_t)(out->len - at - 4));
        count++;
        i = end;
        while (i < n && rspace(s[i])) {
            i++;
        }
        if (i < n && s[i] == ',') {
            i++;
            continue;
        }
        if (i < n && s[i] == '}') {
            i++;
            break;
        }
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "expected , or } in a multirange");
    }
    while (i < n && rspace(s[i])) {
        i++;
    }
    if (i != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, i, "text after the multirange");
    }
    wk__pg_put32(out->data + head, count);
    return WK_OK;
}

/* ---- codecs ---- */

/* The two renderers, and the codec entry points that pass them to rendered.c (a range codec's
 * data is its wk_pg_range_type, not an rtype, so the shared entry points do not fit). */
static const wk__pg_rtype range_rt = {r_range, p_range};
static const wk__pg_rtype multirange_rt = {r_multirange, p_multirange};

/* TEXT decoder of the range codecs. */
static wk_status range_dec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                                wk_arena *arena, wk_error *err)
{
    return wk__pg_r_text(&range_rt, d, p, n, out, arena, err);
}
/* EVENTS decoder of the range codecs. */
static wk_status range_dec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                                  wk_arena *arena, wk_error *err)
{
    return wk__pg_r_events(&range_rt, d, p, n, out, arena, err);
}
/* TEXT encoder of the range codecs. */
static wk_status range_enc_text(const wk_pg_encoder *e, const void *in, wk_buf *out,
                                wk_error *err)
{
    return wk__pg_r_encode(&range_rt, e, in, out, err);
}
/* TEXT decoder of the multirange codecs. */
static wk_status mrange_dec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                                 wk_arena *arena, wk_error *err)
{
    return wk__pg_r_text(&multirange_rt, d, p, n, out, arena, err);
}
/* EVENTS decoder of the multirange codecs. */
static wk_status mrange_dec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n,
                                   void *out, wk_arena *arena, wk_error *err)
{
    return wk__pg_r_events(&multirange_rt, d, p, n, out, arena, err);
}
/* TEXT encoder of the multirange codecs. */
static wk_status mrange_enc_text(const wk_pg_encoder *e, const void *in, wk_buf *out,
                                 wk_error *err)
{
    return wk__pg_r_encode(&multirange_rt, e, in, out, err);
}

/* The decode and encode rows of a range or multirange codec. */
#define DEC(pre)                                                                              \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = pre##_dec_text, [WK_PG_KIND_VALUE] = wk__pg_dec_value,            \
        [WK_PG_KIND_EVENTS] = pre##_dec_events                                                \
    }
#define ENC(pre)                                                                              \
    {                                                                                         \
        [WK_PG_KIND_TEXT] = pre##_enc_text                                                    \
    }

/* The templates' OID list until a copy gets its own. */
static const wk_pg_oid placeholder[1] = {3831}; /* anyrange: replaced by the copy's OIDs */

/* A range or multirange codec over `data` (a wk_pg_range_type naming the element type). */
#define TEMPLATE(name, pre, data)                                                             \
    {name,                                                                                    \
     placeholder,                                                                             \
     NULL,                                                                                    \
     1,                                                                                       \
     WK_PG_BOTH_FORMATS,                                                                      \
     K(TEXT) | K(VALUE) | K(EVENTS),                                                          \
     K(TEXT),                                                                                 \
     0,                                                                                       \
     0,                                                                                       \
     {DEC(pre), DEC(pre)},                                                                    \
     {ENC(pre), ENC(pre)},                                                                    \
     data}

static const wk_pg_codec range_template = TEMPLATE("range", range, NULL);
static const wk_pg_codec multirange_template = TEMPLATE("multirange", mrange, NULL);

/* Public (wirekit/pg.h): the template catalog loaders copy for a range (or multirange) type
 * found in pg_range. */
WK_API const wk_pg_codec *wk_pg_range_codec(bool multirange)
{
    return multirange ? &multirange_template : &range_template;
}

#define RANGE(v, oid, arr, elem_oid)                                                          \
    static const wk_pg_oid v##_o[1] = {oid};                                                  \
    static const wk_pg_oid v##_a[1] = {arr};                                                  \
    static const wk_pg_range_type v##_d = {elem_oid}
#define RC(name, v, pre)                                                                      \
    {name,                                                                                    \
     v##_o,                                                                                   \
     v##_a,                                                                                   \
     1,                                                                                       \
     WK_PG_BOTH_FORMATS,                                                                      \
     K(TEXT) | K(VALUE) | K(EVENTS),                                                          \
     K(TEXT),                                                                                 \
     0,                                                                                       \
     0,                                                                                       \
     {DEC(pre), DEC(pre)},                                                                    \
     {ENC(pre), ENC(pre)},                                                                    \
     &v##_d}

RANGE(int4r, 3904, 3905, 23);
RANGE(numr, 3906, 3907, 1700);
RANGE(tsr, 3908, 3909, 1114);
RANGE(tstzr, 3910, 3911, 1184);
RANGE(dater, 3912, 3913, 1082);
RANGE(int8r, 3926, 3927, 20);
RANGE(int4m, 4451, 6150, 23);
RANGE(numm, 4532, 6151, 1700);
RANGE(tsm, 4533, 6152, 1114);
RANGE(tstzm, 4534, 6153, 1184);
RANGE(datem, 4535, 6155, 1082);
RANGE(int8m, 4536, 6157, 20);

const wk_pg_codec wk__pg_ranges[WK__PG_N_RANGES] = {
    RC("int4range", int4r, range),       RC("numrange", numr, range),
    RC("tsrange", tsr, range),           RC("tstzrange", tstzr, range),
    RC("daterange", dater, range),       RC("int8range", int8r, range),
    RC("int4multirange", int4m, mrange), RC("nummultirange", numm, mrange),
    RC("tsmultirange", tsm, mrange),     RC("tstzmultirange", tstzm, mrange),
    RC("datemultirange", datem, mrange), RC("int8multirange", int8m, mrange)};
