/*
 * The JSON types, PostgreSQL's json.c, jsonb.c and jsonpath.c: json and jsonb in both wire
 * formats, jsonpath read as its text.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the codecs below -> codec_generic.c's
 * generic functions over this file's wk__pg_type tables -> a string view, PostgreSQL text, a
 * value tree, or events; for events the embedded document itself is replayed (codec_generic.c
 * runs the JSON reader over it, class WK__PG_CLASS_JSON), so a json column becomes the nested
 * value rather than a string. jsonpath goes through rendered.c.
 */
#include "pg/pg_codec.h"
#include "wirekit/json.h"

/* json: its text in both formats (json_recv / json_send are the text). */
const wk__pg_type wk__pg_type_json = {WK__PG_CLASS_JSON, wk__pg_text_read, wk__pg_text_read,
                                      wk__pg_text_write, wk__pg_text_write, 0, 0};

/* jsonb_recv's layout: version byte 1, then the JSON text; error offsets count the
 * version byte. */
static wk_status jsonb_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    if (n < 1) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, 0, "binary jsonb needs a version byte");
    }
    if (p[0] != 1) {
        return wk__pg_fail(err, WK_ERR_UNSUPPORTED, 0, "unsupported jsonb version number");
    }
    wk_status st = wk__pg_text_read(p + 1, n - 1, v, a, err);
    if (st != WK_OK && err != NULL) {
        err->offset += 1;
    }
    return st;
}

/* jsonb_send: version 1, then the text. */
static wk_status jsonb_write_bin(const wk__pg_native *v, wk_buf *out)
{
    wk_status st = wk_buf_push(out, 1);
    return st == WK_OK ? wk_buf_append(out, v->s.ptr, v->s.len) : st;
}

/* jsonb: text as json; the server normalises it (key order, spacing) on input. */
const wk__pg_type wk__pg_type_jsonb = {WK__PG_CLASS_JSON, jsonb_read_bin, wk__pg_text_read,
                                       jsonb_write_bin, wk__pg_text_write, 0, 0};

/* ---- jsonpath: version byte 1, then the text ---- */

/* jsonpath_send's layout to jsonpath_out's text: only version 1 is known. */
static wk_status r_jsonpath(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                            wk_error *err)
{
    (void)d;
    if (n < 1 || p[0] != 1) {
        return wk__pg_bad_input(err, 0, "unsupported jsonpath version");
    }
    return wk__pg_put_utf8(p, n, 1, out, err);
}

/* jsonpath_recv's layout: the version byte, then the text for the server to parse. */
static wk_status p_jsonpath(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                            wk_error *err)
{
    (void)e;
    if (wk_buf_push(out, 1) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    return wk_buf_append(out, s, n) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

static const wk__pg_rtype rt_jsonpath = {r_jsonpath, p_jsonpath};

/* ---- the codecs ---- */

OIDS(o_json, WK_PG_OID_JSON);
OIDS(a_json, WK_PG_OID_JSON_ARRAY);
OIDS(o_jsonb, WK_PG_OID_JSONB);
OIDS(a_jsonb, WK_PG_OID_JSONB_ARRAY);

/* A value tree as a parameter (WK_PG_KIND_VALUE): its JSON text, after jsonb's version byte
 * in binary. Numbers go as the tree holds them (a WK_VAL_RAWNUM keeps its exact digits). */
static wk_status enc_value(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    size_t start = out->len;
    bool jsonb = e->codec->data == &wk__pg_type_jsonb;
    if (e->format == WK_PG_BINARY && jsonb && wk_buf_push(out, 1) != WK_OK) {
        return wk__pg_nomem(err, 0);
    }
    wk_status st = wk_json_encode_value(in, NULL, out, err);
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}

/* Both decode to STR (the document's text) without being STR's natural type, and encode
 * from STR (the text), TEXT and a value tree. */
#define JSON_CODEC(var, name, oids, aoids, type)                                              \
    const wk_pg_codec var = {name,                                                            \
                             oids,                                                            \
                             aoids,                                                           \
                             N(oids),                                                         \
                             WK_PG_BOTH_FORMATS,                                              \
                             K(STR) | GEN_DEC_KINDS,                                          \
                             K(STR) | K(TEXT) | K(VALUE),                                     \
                             0,                                                               \
                             0,                                                               \
                             {DEC_ROW([WK_PG_KIND_STR] = CV), DEC_ROW([WK_PG_KIND_STR] = CV)}, \
                             {ENC_ROW([WK_PG_KIND_STR] = EC, [WK_PG_KIND_VALUE] = enc_value), \
                              ENC_ROW([WK_PG_KIND_STR] = EC, [WK_PG_KIND_VALUE] = enc_value)}, \
                             &type}
JSON_CODEC(wk__pg_codec_json, "json", o_json, a_json, wk__pg_type_json);
JSON_CODEC(wk__pg_codec_jsonb, "jsonb", o_jsonb, a_jsonb, wk__pg_type_jsonb);

R_OIDS(c_jsonpath, 4072);
R_AOIDS(c_jsonpath, 4073);
const wk_pg_codec wk__pg_codec_jsonpath =
    RC("jsonpath", &rt_jsonpath, WK_PG_BOTH_FORMATS, c_jsonpath);
