/*
 * Composite types (records). Decode: binary (record_send: field count, then per field
 * its type OID, length or -1, bytes) and text (record_out: `(a,"b c",)`, empty for NULL,
 * quotes doubled inside quoted fields). To PostgreSQL's text output (TEXT kind), each field
 * rendered by its own type's decoder, found in the decoder's registry -- one O(1) lookup per
 * field, since a composite's field types are only known once the catalog has been read. To
 * events (and so value trees), as row_to_json does: a map keyed by field name (a catalog
 * composite's attribute names; f1, f2, ... for an anonymous record), each field decoded where
 * it lies by its type's EVENTS decoder, so the work is linear in the value's size at any
 * depth (the text output doubles its quoting per level; the objects never build it). Encode
 * (catalog composites, from PostgreSQL text input): the literal is split as record_in does
 * (quotes with "" and backslash escapes, an empty unquoted field is NULL) and each field
 * encoded in binary by its type's text encoder; a field type without one makes the whole
 * value WK_ERR_UNSUPPORTED (sent as text). The row policy's COPY in (row_in.c) writes
 * composites from objects itself, through the attribute accessors at the end of this file.
 *
 * Where it sits: a row's bytes -> plan (plan.c) or row description (row.c) -> the record
 * codec (builtins.c lists the anonymous one; addons/pq/pq_catalog.c copies it for each
 * catalog composite with a wk_pg_composite) -> dec_text / dec_events here -> each field's own
 * decoder from the registry -> text / a map of events / a value tree.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pg/pg_interface.h"

/* messages name the limits by their numbers: kept in step here */
_Static_assert(WK_PG_MAX_RECORD_DEPTH == 100u, "a message below says 100 levels");

/* A record literal or a binary record with more fields than this is refused. */
#define MAX_FIELDS 1664 /* PostgreSQL's MaxTupleAttributeNumber */

/* A catalog composite: its attributes' types and names, in one arena. */
struct wk_pg_composite {
    size_t natts;
    wk_pg_oid *types;
    wk_slice *names; /* the attribute names: the keys of the record's objects */
    wk_arena arena;  /* names and types */
};

/* Public (wirekit/pg.h): a composite from the catalog's attribute names and types (the lists
 * pq_catalog.c reads), copied into the composite's arena. */
wk_status wk_pg_composite_new(const char *names, size_t nlen, const char *types, size_t tlen,
                               wk_pg_composite **out, wk_error *err)
{
    *out = NULL;
    wk_pg_composite *c = calloc(1, sizeof *c);
    if (c == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a composite type");
    }
    wk_arena_init(&c->arena, NULL, 0);
    wk_pg_array a;
    wk_status st = wk__pg_array_parse(WK_PG_TEXT, 0, (const uint8_t *)types, tlen, &a, err);
    if (st == WK_OK && a.ndim > 1) {
        st = wk__pg_fail(err, WK_ERR_SYNTAX, 0, "attribute type list must be one-dimensional");
    }
    if (st == WK_OK && a.nitems > MAX_FIELDS) {
        st = wk__pg_fail(err, WK_ERR_LIMIT, 0, "composite type has too many fields");
    }
    if (st == WK_OK) {
        c->natts = a.nitems;
        c->types = wk_arena_alloc(&c->arena, (a.nitems + 1) * sizeof(wk_pg_oid), 4);
        if (c->types == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a composite type");
        }
    }
    wk_pg_array_iter it;
    wk_pg_array_iter_init(&it, &a, &c->arena);
    for (size_t i = 0; st == WK_OK && i < c->natts; i++) {
        const uint8_t *p;
        size_t n;
        bool isn;
        int64_t v = 0;
        st = wk_pg_array_next(&it, &p, &n, &isn, err);
        if (st == WK_OK && (isn || !wk__pg_parse_int(p, n, 0, UINT32_MAX, &v))) {
            st = wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid attribute type list");
        }
        if (st == WK_OK) {
            c->types[i] = (wk_pg_oid)v;
        }
    }
    /* the names, one per type (the catalog query aggregates both in attnum order) */
    wk_pg_array na;
    if (st == WK_OK) {
        st = wk__pg_array_parse(WK_PG_TEXT, 0, (const uint8_t *)names, nlen, &na, err);
    }
    if (st == WK_OK && na.nitems != c->natts) {
        st = wk__pg_fail(err, WK_ERR_SYNTAX, 0, "attribute names and types differ in number");
    }
    if (st == WK_OK) {
        c->names = wk_arena_alloc(&c->arena, (c->natts + 1) * sizeof(wk_slice), 8);
        if (c->names == NULL) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a composite type");
        }
    }
    wk_pg_array_iter_init(&it, &na, &c->arena);
    for (size_t i = 0; st == WK_OK && i < c->natts; i++) {
        const uint8_t *p;
        size_t n;
        bool isn;
        st = wk_pg_array_next(&it, &p, &n, &isn, err);
        if (st == WK_OK && isn) {
            st = wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid attribute name list");
        }
        if (st == WK_OK) {
            char *name = wk_arena_strndup(&c->arena, p, n);
            c->names[i].ptr = name;
            c->names[i].len = n;
            st = name != NULL ? WK_OK
                              : wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a composite");
        }
    }
    if (st != WK_OK) {
        wk_pg_composite_free(c);
        return st;
    }
    *out = c;
    return WK_OK;
}

/* Public: frees the composite and its arena; NULL is a no-op. */
void wk_pg_composite_free(wk_pg_composite *c)
{
    if (c != NULL) {
        wk_arena_free(&c->arena);
        free(c);
    }
}

/* record_out's rule: a field is quoted when empty or holding '"', '\', '(', ')', ',' or
 * whitespace. */
static bool needs_quotes(const uint8_t *s, size_t n)
{
    if (n == 0) {
        return true;
    }
    for (size_t i = 0; i < n; i++) {
        uint8_t ch = s[i];
        if (ch == '"' || ch == '\\' || ch == '(' || ch == ')' || ch == ',' || ch == ' ' ||
            ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f') {
            return true;
        }
    }
    return false;
}

/* Renders out->data[start..len) quoted as record_out does, when needed. */
static wk_status quote_field(wk_buf *out, size_t start)
{
    size_t n = out->len - start;
    if (!needs_quotes(out->data + start, n)) {
        return WK_OK;
    }
    size_t extra = 2;
    for (size_t i = start; i < out->len; i++) {
        extra += out->data[i] == '"' || out->data[i] == '\\';
    }
    wk_status st = wk_buf_reserve(out, extra);
    if (st != WK_OK) {
        return st;
    }
    uint8_t *b = out->data + start;
    size_t w = n + extra;
    b[--w] = '"';
    for (size_t r = n; r-- > 0;) {
        b[--w] = b[r];
        if (b[r] == '"' || b[r] == '\\') {
            b[--w] = b[r];
        }
    }
    b[0] = '"';
    out->len += extra;
    return WK_OK;
}

/* Appends one field's text (type, format as sent) through the registry's TEXT decoder of
 * its type, quoted as record_out quotes it. */
static wk_status field_text(const wk_pg_decoder *d, wk_pg_oid type, wk_pg_format f,
                            const uint8_t *p, size_t n, wk_buf *out, wk_arena *arena,
                            wk_error *err)
{
    const wk_pg_decoder *fd =
        d->reg != NULL ? wk_pg_registry_find_decoder(d->reg, type, f, WK_PG_KIND_TEXT) : NULL;
    if (fd == NULL) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, 0, "no decoder for a composite field's type");
    }
    size_t start = out->len;
    wk_status st = wk__pg_decode_part(fd, p, n, out, arena, err);
    return st == WK_OK ? quote_field(out, start) : st;
}

/* record_send's field count at p[0..4), checked against the bytes present (each field takes
 * at least 8) and against a catalog composite's attributes. */
static wk_status bin_count(const wk_pg_composite *c, const uint8_t *p, size_t n, int32_t *nf,
                           wk_error *err)
{
    if (n < 4) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, n, "binary record needs a field count");
    }
    *nf = (int32_t)wk__pg_be32(p);
    if (*nf < 0 || *nf > MAX_FIELDS || (size_t)*nf * 8 > n - 4) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid field count in binary record");
    }
    if (c != NULL && (size_t)*nf != c->natts) {
        return wk__pg_fail(err, WK_ERR_TYPE, 0, "binary record has the wrong number of fields");
    }
    return WK_OK;
}

/* Field i's header at p[*pos..n): its type OID (a catalog composite's attribute type) and its
 * length (-1 = NULL, else within the bytes left); *pos moves past the header. */
static wk_status bin_field(const wk_pg_composite *c, int32_t i, const uint8_t *p, size_t n,
                           size_t *pos, wk_pg_oid *type, int32_t *len, wk_error *err)
{
    if (n - *pos < 8) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, *pos, "binary record field is truncated");
    }
    *type = wk__pg_be32(p + *pos);
    *len = (int32_t)wk__pg_be32(p + *pos + 4);
    *pos += 8;
    if (c != NULL && *type != c->types[i]) {
        return wk__pg_fail(err, WK_ERR_TYPE, *pos - 8, "wrong type in binary record field");
    }
    if (*len != -1 && (*len < 0 || (size_t)*len > n - *pos)) {
        return wk__pg_fail(err, WK_ERR_TRUNCATED, *pos - 4,
                           "binary record field length goes past the end");
    }
    return WK_OK;
}

/* record_out of record_send's layout: int32 field count, then per field its type OID, a length
 * word (-1 = NULL, printed as nothing) and the bytes; each length checked against what
 * remains. A catalog composite also checks the count and types against its attributes. */
static wk_status render_bin(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                            wk_arena *arena, wk_error *err)
{
    const wk_pg_composite *c = d->codec->data;
    int32_t nf = 0;
    wk_status st = bin_count(c, p, n, &nf, err);
    if (st != WK_OK) {
        return st;
    }
    size_t pos = 4;
    st = wk_buf_push(out, '(');
    for (int32_t i = 0; i < nf && st == WK_OK; i++) {
        wk_pg_oid type = 0;
        int32_t len = 0;
        st = bin_field(c, i, p, n, &pos, &type, &len, err);
        if (st != WK_OK) {
            return st;
        }
        if (i > 0) {
            st = wk_buf_push(out, ',');
        }
        if (len == -1 || st != WK_OK) {
            continue;
        }
        st = field_text(d, type, WK_PG_BINARY, p + pos, (size_t)len, out, arena, err);
        pos += (size_t)len;
    }
    if (st == WK_OK && pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the last record field");
    }
    return st == WK_OK ? wk_buf_push(out, ')') : st;
}

/* Splits the next field of a text record p[0..n) (record_out's syntax, parentheses checked by
 * the caller) starting at *i: unquotes it into `field` (quotes with "" and backslash escapes)
 * and leaves *i at the comma or the closing parenthesis. *present is false for an empty
 * unquoted field (NULL). */
static wk_status next_text_field(const uint8_t *p, size_t n, size_t *i, wk_buf *field,
                                 bool *present, wk_error *err)
{
    size_t k = *i;
    wk_status st = WK_OK;
    wk_buf_clear(field);
    *present = false;
    while (k < n - 1 && p[k] != ',' && st == WK_OK) {
        *present = true;
        if (p[k] == '"') {
            k++;
            for (;;) {
                if (k >= n - 1) {
                    *i = k;
                    return wk__pg_fail(err, WK_ERR_SYNTAX, k, "unterminated quote in record");
                }
                if (p[k] == '"' && k + 1 < n - 1 && p[k + 1] == '"') {
                    st = wk_buf_push(field, '"');
                    k += 2;
                } else if (p[k] == '"') {
                    k++;
                    break;
                } else if (p[k] == '\\' && k + 1 < n - 1) {
                    st = wk_buf_push(field, p[k + 1]);
                    k += 2;
                } else {
                    st = wk_buf_push(field, p[k]);
                    k++;
                }
                if (st != WK_OK) {
                    break;
                }
            }
        } else if (p[k] == '\\' && k + 1 < n - 1) {
            st = wk_buf_push(field, p[k + 1]);
            k += 2;
        } else {
            st = wk_buf_push(field, p[k]);
            k++;
        }
    }
    *i = k;
    return st;
}

/* A text-format record: split as record_in does, each field re-rendered through its type's
 * decoder when the composite's types are known (so nested values come out canonical), else
 * passed through. */
static wk_status render_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                             wk_arena *arena, wk_error *err)
{
    const wk_pg_composite *c = d->codec->data;
    if (n < 2 || p[0] != '(' || p[n - 1] != ')') {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "record value must be in parentheses");
    }
    if (c == NULL) {
        /* An anonymous record: without field types the server's text is the output. */
        return wk_buf_append(out, p, n);
    }
    wk_buf field;
    wk_buf_init(&field, NULL, 0);
    wk_status st = wk_buf_push(out, '(');
    size_t i = 1, k = 0;
    for (; st == WK_OK; k++) {
        if (k >= c->natts) {
            st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "too many fields in record value");
            break;
        }
        bool present = false;
        st = next_text_field(p, n, &i, &field, &present, err);
        if (st != WK_OK) {
            break;
        }
        if (k > 0) {
            st = wk_buf_push(out, ',');
        }
        if (st == WK_OK && present) {
            st = field_text(d, c->types[k], WK_PG_TEXT, field.data, field.len, out, arena, err);
        }
        if (i >= n - 1) {
            break;
        }
        i++; /* the comma */
    }
    wk_buf_free(&field);
    if (st == WK_OK && k + 1 != c->natts) {
        st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "too few fields in record value");
    }
    return st == WK_OK ? wk_buf_push(out, ')') : st;
}

/* The TEXT-kind decoder of both formats, depth-limited (see record_depth). */
static wk_status dec_text(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                          wk_arena *arena, wk_error *err)
{
    /* records nest through the registry (a field of type record is decoded by this decoder
     * again): each field goes through the nesting budget (field_text) */
    wk_status st = d->format == WK_PG_BINARY ? render_bin(d, p, n, out, arena, err)
                                             : render_text(d, p, n, out, arena, err);
    if ((st == WK_ERR_LIMIT || st == WK_ERR_NOMEM) && err != NULL && err->msg == NULL) {
        wk__pg_fail(err, st, 0,
                    st == WK_ERR_LIMIT ? "record text larger than the cap on a value's text"
                                       : "out of memory for record text");
    }
    return st;
}

/* ---- records as objects (events, and so value trees) ---- */

/* One event to the caller's sink; a sink failure without a message gets one. */
static wk_status send_ev(const wk_pg_events *ev, wk_event_type t, const char *s, size_t len,
                         uint32_t count, wk_error *err)
{
    wk_status st = wk__pg_event(ev->sink, t, s, len, count);
    if (st != WK_OK && err != NULL && err->msg == NULL) {
        wk__pg_fail(err, st, 0, "the event sink failed");
    }
    return st;
}

/* The key of field i: the catalog composite's attribute name, or row_to_json's f1, f2, ... for
 * an anonymous record. */
static wk_status send_key(const wk_pg_events *ev, const wk_pg_composite *c, size_t i,
                          wk_error *err)
{
    if (c != NULL) {
        return send_ev(ev, WK_EV_STR, c->names[i].ptr, c->names[i].len, 0, err);
    }
    /* the first keys spelled out: a row of anonymous records names them on every row */
    static const char *const small[9] = {"f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9"};
    if (i < 9) {
        return send_ev(ev, WK_EV_STR, small[i], 2, 0, err);
    }
    char key[16];
    int len = snprintf(key, sizeof key, "f%zu", i + 1);
    return send_ev(ev, WK_EV_STR, key, (size_t)len, 0, err);
}

/* One field's value as events, through its type's EVENTS decoder (nesting budget counted). */
static wk_status field_events(const wk_pg_decoder *d, wk_pg_oid type, wk_pg_format f,
                              const uint8_t *p, size_t n, const wk_pg_events *ev,
                              wk_arena *arena, wk_error *err)
{
    const wk_pg_decoder *fd =
        d->reg != NULL ? wk_pg_registry_find_decoder(d->reg, type, f, WK_PG_KIND_EVENTS) : NULL;
    if (fd == NULL) {
        return wk__pg_fail(err, WK_ERR_NOT_FOUND, 0, "no decoder for a composite field's type");
    }
    return wk__pg_decode_part(fd, p, n, (void *)ev, arena, err);
}

/* record_send's layout as a map of field name -> value, each field decoded where it lies:
 * one pass over the bytes, whatever the nesting (no text is built, so nothing doubles). */
static wk_status events_bin(const wk_pg_decoder *d, const uint8_t *p, size_t n,
                            const wk_pg_events *ev, wk_arena *arena, wk_error *err)
{
    const wk_pg_composite *c = d->codec->data;
    int32_t nf = 0;
    wk_status st = bin_count(c, p, n, &nf, err);
    if (st != WK_OK) {
        return st;
    }
    size_t pos = 4;
    st = send_ev(ev, WK_EV_MAP, NULL, 0, (uint32_t)nf, err);
    for (int32_t i = 0; i < nf && st == WK_OK; i++) {
        wk_pg_oid type = 0;
        int32_t len = 0;
        st = bin_field(c, i, p, n, &pos, &type, &len, err);
        st = st == WK_OK ? send_key(ev, c, (size_t)i, err) : st;
        if (st == WK_OK && len == -1) {
            st = send_ev(ev, WK_EV_NIL, NULL, 0, 0, err);
        } else if (st == WK_OK) {
            st = field_events(d, type, WK_PG_BINARY, p + pos, (size_t)len, ev, arena, err);
            if (st != WK_OK && err != NULL) {
                err->offset += pos;
            }
            pos += (size_t)len;
        }
    }
    if (st == WK_OK && pos != n) {
        return wk__pg_fail(err, WK_ERR_TRAILING, pos, "bytes left after the last record field");
    }
    return st == WK_OK ? send_ev(ev, WK_EV_END, NULL, 0, 0, err) : st;
}

/* A text record as a map: fields split as record_in does; a catalog composite's fields are
 * decoded by their types, an anonymous record's are strings (the text says no more). Each
 * level unquotes its fields once into a buffer of its own, which is smaller than its input,
 * so the work is linear in the size of the text. */
static wk_status events_text(const wk_pg_decoder *d, const uint8_t *p, size_t n,
                             const wk_pg_events *ev, wk_arena *arena, wk_error *err)
{
    const wk_pg_composite *c = d->codec->data;
    if (n < 2 || p[0] != '(' || p[n - 1] != ')') {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "record value must be in parentheses");
    }
    /* count the fields first: a map announces its size */
    size_t nf = 0, i = 1;
    wk_buf field;
    wk_buf_init(&field, NULL, 0);
    wk_status st = WK_OK;
    for (;;) {
        bool present = false;
        st = next_text_field(p, n, &i, &field, &present, err);
        if (st != WK_OK) {
            wk_buf_free(&field);
            return st;
        }
        nf++;
        if (i >= n - 1) {
            break;
        }
        i++;
    }
    if (n == 2) {
        nf = c != NULL ? c->natts : 0; /* "()" : a record without fields */
    }
    if (nf > MAX_FIELDS || (c != NULL && nf != c->natts)) {
        wk_buf_free(&field);
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "wrong number of fields in record value");
    }
    st = send_ev(ev, WK_EV_MAP, NULL, 0, (uint32_t)nf, err);
    i = 1;
    for (size_t k = 0; k < nf && st == WK_OK; k++) {
        bool present = false;
        size_t at = i;
        st = next_text_field(p, n, &i, &field, &present, err);
        st = st == WK_OK ? send_key(ev, c, k, err) : st;
        if (st == WK_OK && !present) {
            st = send_ev(ev, WK_EV_NIL, NULL, 0, 0, err);
        } else if (st == WK_OK && c == NULL) {
            st = send_ev(ev, WK_EV_STR, field.data != NULL ? (const char *)field.data : "",
                         field.len, 0, err);
        } else if (st == WK_OK) {
            st = field_events(d, c->types[k], WK_PG_TEXT, field.data, field.len, ev, arena,
                              err);
            if (st != WK_OK && err != NULL) {
                err->offset = at; /* unquoted bytes do not map back one to one */
            }
        }
        i++; /* the comma */
    }
    wk_buf_free(&field);
    return st == WK_OK ? send_ev(ev, WK_EV_END, NULL, 0, 0, err) : st;
}

/* The EVENTS-kind decoder: the record as a map keyed by field name, as row_to_json. */
static wk_status dec_events(const wk_pg_decoder *d, const uint8_t *p, size_t n, void *out,
                            wk_arena *arena, wk_error *err)
{
    const wk_pg_events *ev = out;
    if (err != NULL) {
        err->msg = NULL;
    }
    return d->format == WK_PG_BINARY ? events_bin(d, p, n, ev, arena, err)
                                     : events_text(d, p, n, ev, arena, err);
}

/* Internal (pg_interface.h): a composite's attributes, for the row policy's COPY in. */
size_t wk__pg_composite_natts(const wk_pg_composite *c)
{
    return c->natts;
}

wk_pg_oid wk__pg_composite_type(const wk_pg_composite *c, size_t i)
{
    return c->types[i];
}

wk_slice wk__pg_composite_name(const wk_pg_composite *c, size_t i)
{
    return c->names[i];
}

/* ---- encoding from text ---- */

/* The whitespace record_in skips. */
static bool rspace(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* record_in's syntax to record_recv's layout for a catalog composite: each field's text
 * encoded by its type's TEXT encoder in binary, an empty unquoted field as NULL. */
static wk_status enc_bin(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                         wk_error *err)
{
    const wk_pg_composite *c = e->codec->data;
    if (c == NULL || e->reg == NULL) {
        return wk__pg_fail(err, WK_ERR_UNSUPPORTED, 0,
                           "an anonymous record is sent in the text format only");
    }
    size_t i = 0;
    while (i < n && rspace(s[i])) {
        i++;
    }
    while (n > i && rspace(s[n - 1])) {
        n--;
    }
    if (i >= n || s[i] != '(' || s[n - 1] != ')') {
        return wk__pg_fail(err, WK_ERR_SYNTAX, i, "malformed record literal");
    }
    i++;
    uint8_t w[8];
    wk__pg_put32(w, (uint32_t)c->natts);
    if (wk_buf_append(out, w, 4) != WK_OK) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a record");
    }
    wk_buf tok;
    wk_buf_init(&tok, NULL, 0);
    wk_status st = WK_OK;
    for (size_t f = 0; f < c->natts && st == WK_OK; f++) {
        if (f > 0) {
            if (i >= n - 1 || s[i] != ',') {
                st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "too few fields in a record literal");
                break;
            }
            i++;
        }
        wk_buf_clear(&tok);
        bool any = false, bad = false;
        while (i < n - 1 && s[i] != ',' && !bad) {
            any = true;
            if (s[i] == '"') {
                i++;
                for (;;) {
                    if (i >= n - 1) {
                        bad = true;
                        break;
                    }
                    if (s[i] == '"') {
                        if (s[i + 1] != '"') {
                            i++;
                            break;
                        }
                        i++;
                    } else if (s[i] == '\\') {
                        i++;
                    }
                    if (wk_buf_push(&tok, s[i]) != WK_OK) {
                        bad = true;
                        break;
                    }
                    i++;
                }
                continue;
            }
            if (s[i] == '\\' && i + 1 < n - 1) {
                i++;
            }
            if (wk_buf_push(&tok, s[i]) != WK_OK) {
                bad = true;
            }
            i++;
        }
        if (bad) {
            st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "malformed record field");
            break;
        }
        wk__pg_put32(w, c->types[f]);
        if (!any) {
            wk__pg_put32(w + 4, UINT32_MAX); /* NULL */
            st = wk_buf_append(out, w, 8) == WK_OK
                     ? WK_OK
                     : wk__pg_fail(err, WK_ERR_NOMEM, i, "out of memory for a record");
            continue;
        }
        const wk_pg_encoder *fe =
            wk_pg_registry_find_encoder_for(e->reg, c->types[f], WK_PG_BINARY, WK_PG_KIND_TEXT);
        if (fe == NULL) {
            st = wk__pg_fail(err, WK_ERR_UNSUPPORTED, i,
                             "a field type has no binary encoder: sent as text");
            break;
        }
        size_t at = out->len;
        if (wk_buf_append(out, w, 8) != WK_OK) {
            st = wk__pg_fail(err, WK_ERR_NOMEM, i, "out of memory for a record");
            break;
        }
        wk_slice v = {tok.data != NULL ? (const char *)tok.data : "", tok.len};
        st = wk__pg_encode_part(fe, &v, out, err);
        if (st == WK_OK) {
            wk__pg_put32(out->data + at + 4, (uint32_t)(out->len - at - 8));
        }
    }
    if (st == WK_OK && i != n - 1) {
        st = wk__pg_fail(err, WK_ERR_SYNTAX, i, "too many fields in a record literal");
    }
    wk_buf_free(&tok);
    return st;
}

/* The TEXT-kind encoder: text passes through; binary goes through enc_bin, with nothing left
 * appended on failure. */
static wk_status enc_text(const wk_pg_encoder *e, const void *in, wk_buf *out, wk_error *err)
{
    const wk_slice *v = in;
    const uint8_t *s = (const uint8_t *)v->ptr;
    if (e->format == WK_PG_TEXT) {
        return wk_buf_append(out, s, v->len) == WK_OK
                   ? WK_OK
                   : wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a record");
    }
    size_t start = out->len;
    wk_status st = enc_bin(e, s, v->len, out, err);
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}

/* The codec of the anonymous record type; catalog copies get their own OIDs and data. */
static const wk_pg_oid record_oid[1] = {2249}; /* "record": anonymous row values */

#define K(x) WK_PG_KIND_MASK(WK_PG_KIND_##x)
const wk_pg_codec wk__pg_composite_codec = {
    "record",
    record_oid,
    NULL,
    1,
    WK_PG_BOTH_FORMATS,
    K(TEXT) | K(VALUE) | K(EVENTS),
    K(TEXT),
    0,
    0,
    {{[WK_PG_KIND_TEXT] = dec_text,
      [WK_PG_KIND_VALUE] = wk__pg_dec_value,
      [WK_PG_KIND_EVENTS] = dec_events},
     {[WK_PG_KIND_TEXT] = dec_text,
      [WK_PG_KIND_VALUE] = wk__pg_dec_value,
      [WK_PG_KIND_EVENTS] = dec_events}},
    {{[WK_PG_KIND_TEXT] = enc_text}, {[WK_PG_KIND_TEXT] = enc_text}},
    NULL};

/* Public (wirekit/pg.h): the template, for callers that register composites themselves. */
const wk_pg_codec *wk_pg_composite_codec(void)
{
    return &wk__pg_composite_codec;
}
