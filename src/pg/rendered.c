/*
 * The machinery of the rendered types: PostgreSQL types that wirekit reads as the server's own
 * text output rather than as a C struct.
 *
 * Where it sits: a row's bytes -> plan (plan.c) picks the codec by OID -> the codec's decode
 * row (R_DEC, pg_codec.h) -> wk__pg_r_text / wk__pg_r_events here -> the type family's
 * renderer (xid.c, geo_ops.c, tsvector.c, ...) -> text, a WK_EV_STR event, or a value tree
 * (codec_generic.c's builder over the events). Encoding runs the other way: text input ->
 * wk__pg_r_encode -> the family's parser -> the *_recv binary layout. range.c uses the same
 * three functions for ranges and multiranges.
 *
 * Each rendered family file holds a renderer from its binary wire form (the *_send layout) to
 * its text output (the *_out rules, under the session settings the glue sets) plus, where the
 * input syntax is simple enough to parse exactly, a parser from text input to the binary form
 * used for binary parameters. Values in the text format pass through unchanged (they are the
 * server's output already; only UTF-8 is checked). A type without a parser encodes in the text
 * format only: its binary encoder returns WK_ERR_UNSUPPORTED, and the glue then sends that
 * parameter as text. Every renderer checks each length and count against the bytes present
 * before reading, and rejects bytes left over.
 *
 * This file also holds the two renderers more than one family shares (an unsigned 32-bit
 * number; text that is its own binary form) and the text-only codec.
 */
#include <string.h>

#include "pg/pg_codec.h"
#include "wirekit/utf8.h"

/* ---- the generic functions every rendered codec uses ---- */

/* Decodes a rendered type to PostgreSQL text, appended to the wk_buf at `out`: a text-format
 * value is the server's output already and is only checked for UTF-8; a binary one goes
 * through t->render. */
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
        return wk_buf_append(b, p, n) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
    }
    return t->render(d, p, n, b, err);
}

/* Decodes a rendered type to one WK_EV_STR event holding its text output. The text is built
 * in ev->scratch (or a heap buffer freed before returning) and is only valid during the
 * sink's callback. */
wk_status wk__pg_r_events(const wk__pg_rtype *t, const wk_pg_decoder *d, const uint8_t *p,
                          size_t n, void *out, wk_arena *arena, wk_error *err)
{
    const wk_pg_events *ev = out;
    size_t cap = ev->max_text != 0 ? ev->max_text : WK_PG_MAX_TEXT_DEFAULT;
    wk_buf local;
    wk_buf *scratch = ev->scratch;
    if (scratch == NULL) {
        wk_buf_init(&local, NULL, cap);
        scratch = &local;
    }
    wk_buf_clear(scratch);
    /* The text of a range over composites over ranges can double per level: the cap bounds
     * what is held while it is rendered, not only what is handed on (a buffer that grew past
     * it for an earlier value keeps its room, but no more is allocated). */
    size_t saved_max = scratch->max;
    if (scratch->max > cap && scratch->cap <= cap) {
        scratch->max = cap;
    }
    wk_pg_decoder td = *d;
    td.kind = WK_PG_KIND_TEXT;
    wk_status st = wk__pg_r_text(t, &td, p, n, scratch, arena, err);
    /* a buffer that could not grow past the cap is the cap, whatever the renderer called it
     * ("out of memory"); the nesting budget keeps its own message */
    bool at_cap = scratch->max <= cap && scratch->cap > cap / 2;
    scratch->max = saved_max;
    if ((st == WK_OK && scratch->len > cap) ||
        ((st == WK_ERR_LIMIT || st == WK_ERR_NOMEM) && at_cap &&
         (err == NULL || err->msg == NULL || strstr(err->msg, "nested") == NULL))) {
        st = wk__pg_fail(err, WK_ERR_LIMIT, 0, "value text larger than the cap on a value's text");
    }
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

/* Encodes PostgreSQL text input (a wk_slice at `in`): the text format sends it as it is, the
 * binary format parses it with t->parse into the type's *_recv layout. On failure nothing is
 * left appended to `out`. WK_ERR_UNSUPPORTED when the type has no parser; the glue then
 * sends that parameter as text. */
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
        return wk_buf_append(out, p, s->len) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
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

/* ---- the codec-table entry points: the rtype lives in codec->data ---- */

/* R_DEC's TEXT entry: wk__pg_r_text with the codec's own rtype. */
wk_status wk__pg_rdec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                           wk_arena *arena, wk_error *err)
{
    return wk__pg_r_text(d->codec->data, d, p, n, out, arena, err);
}

/* R_DEC's EVENTS entry: wk__pg_r_events with the codec's own rtype. */
wk_status wk__pg_rdec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                             wk_arena *arena, wk_error *err)
{
    return wk__pg_r_events(d->codec->data, d, p, n, out, arena, err);
}

/* R_ENC's TEXT entry: wk__pg_r_encode with the codec's own rtype. */
wk_status wk__pg_renc_text(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    return wk__pg_r_encode(e->codec->data, e, in, out, err);
}

/* ---- unsigned 32-bit: xid, cid (xid.c) and the reg* OID types (regproc.c) ---- */

/* An unsigned big-endian number of `width` (4 or 8) bytes in decimal; `msg` when the length
 * is not exactly width. */
wk_status wk__pg_render_uint(const uint8_t *p, size_t n, size_t width, const char *msg,
                             wk_buf *out, wk_error *err)
{
    wk_status st = wk__pg_exact(n, width, msg, err);
    if (st == WK_OK &&
        wk__pg_put_u64(out, width == 4 ? wk__pg_be32(p) : wk__pg_be64(p)) != WK_OK) {
        st = wk__pg_nomem(err, 0);
    }
    return st;
}

/* An unsigned decimal that fits `width` (4 or 8) bytes, spaces around allowed, as that many
 * big-endian bytes; `msg` as the syntax error. */
wk_status wk__pg_parse_uint(const uint8_t *s, size_t n, size_t width, const char *msg,
                            wk_buf *out, wk_error *err)
{
    uint64_t v;
    if (!wk__pg_parse_u64(s, n, width == 4 ? UINT32_MAX : UINT64_MAX, &v)) {
        return wk__pg_bad_input(err, 0, msg);
    }
    return wk__pg_put_be(out, v, width) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

/* xidout / cidout / the OID form of the reg* types: the 4-byte value in decimal. */
static wk_status r_u32(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)d;
    return wk__pg_render_uint(p, n, 4, "this binary value must be 4 bytes", out, err);
}

/* xidin-style input: an unsigned decimal that fits 32 bits, as 4 big-endian bytes. A reg*
 * type's name form ('pg_class'::regclass) needs the catalog, so only its OID is accepted. */
static wk_status p_u32(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                       wk_error *err)
{
    (void)e;
    return wk__pg_parse_uint(s, n, 4, "expected an unsigned 32-bit number (an OID for reg types)",
                             out, err);
}

const wk__pg_rtype wk__pg_rt_u32 = {r_u32, p_u32};

/* ---- text that is its own binary form: xml (xml.c), refcursor (varlena.c) ---- */

/* Contract in pg_codec.h: the UTF-8 check is the session's client_encoding made good. */
wk_status wk__pg_put_utf8(const uint8_t *p, size_t n, size_t skip, wk_buf *out, wk_error *err)
{
    size_t bad;
    if (n > skip && !wk_utf8_valid(p + skip, n - skip, &bad)) {
        return wk__pg_fail(err, WK_ERR_UTF8, skip + bad, "value is not valid UTF-8");
    }
    return wk_buf_append(out, p + skip, n - skip) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

/* xml_send / textsend: the binary form is the text, checked for UTF-8 (the session's
 * client_encoding). */
static wk_status r_plain(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                         wk_error *err)
{
    (void)d;
    return wk__pg_put_utf8(p, n, 0, out, err);
}

/* The binary parameter is the text itself (the server's *_recv parses it). */
static wk_status p_plain(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                         wk_error *err)
{
    (void)e;
    return wk_buf_append(out, s, n) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

const wk__pg_rtype wk__pg_rt_plain = {r_plain, p_plain};

/* ---- the text-only codec ---- */

/* Types with no binary output at all (aclitem) or whose binary form is not rendered here
 * (gtsvector, pg_node_tree and the statistics and BRIN summary types): one codec in
 * the text format only, so that the glue asks for text results when one of them is in a
 * result, and passes their text through. */
static const wk__pg_rtype rt_textonly = {NULL, NULL};
R_OIDS(c_textonly, 1033, 3642, 194, 3361, 3402, 5017, 4600, 4601);
R_AOIDS(c_textonly, 1034, 3644, 0, 0, 0, 0, 0, 0);
const wk_pg_codec wk__pg_codec_textonly =
    RCF("textonly", &rt_textonly, WK_PG_FORMAT_MASK(WK_PG_TEXT), c_textonly, {0}, {0});
