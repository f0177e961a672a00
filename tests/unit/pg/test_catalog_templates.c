/*
 * The codec templates for catalog types, as a program outside the core uses them (wirekit-pq's
 * catalog loader does exactly this): wk_pg_composite_new on well-formed and hostile type
 * lists, a composite codec copied from wk_pg_composite_codec() with a database's OID and
 * added to a registry, records decoded through it (binary and text, fields typed by the
 * description, wrong shapes rejected), and the hstore template copied the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirekit/msgpack.h"
#include "wirekit/pg.h"
#include "wk_test.h"

WK_TEST(test_pg_composite_new_accepts_type_lists)
{
    wk_pg_composite *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pg_composite_new("{id,name}", 9, "{23,25}", 7, &c, &err));
    CHECK(c != NULL);
    wk_pg_composite_free(c);
    CHECK_OK(wk_pg_composite_new("{}", 2, "{}", 2, &c, &err)); /* a type with no columns */
    wk_pg_composite_free(c);
    wk_pg_composite_free(NULL); /* no-op */
}

WK_TEST(test_pg_composite_new_rejects_hostile_type_lists)
{
    static const char *const bad[] = {
        "",      "{",     "{23",       "23,25}", "{23,x}",      "{-1}",
        "{NULL}", "{23,,25}", "{4294967296}", "{\"23\"x}", "{{23},{25}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wk_pg_composite *c = (wk_pg_composite *)&c; /* must be reset to NULL */
        wk_error err = {0};
        wk_status st = wk_pg_composite_new("{}", 2, bad[i], strlen(bad[i]), &c, &err);
        CHECK_MSG(st != WK_OK && c == NULL && err.msg != NULL,
                  "type list '%s': status %s, out %p", bad[i], wk_status_str(st), (void *)c);
    }
    /* More attributes than PostgreSQL allows (1664): a limit error, not an allocation. */
    size_t n = 1665;
    char *big = malloc(n * 3 + 3);
    CHECK(big != NULL);
    size_t len = 0;
    big[len++] = '{';
    for (size_t i = 0; i < n; i++) {
        len += (size_t)snprintf(big + len, 4, i + 1 < n ? "23," : "23");
    }
    big[len++] = '}';
    wk_pg_composite *c = NULL;
    wk_error err = {0};
    CHECK_STATUS(wk_pg_composite_new("{}", 2, big, len, &c, &err), WK_ERR_LIMIT);
    CHECK(c == NULL);
    free(big);
}

/* A registry with the built-ins plus a composite type (OID 90001: int4, text) and hstore
 * (OID 90002), made from the public templates. */
typedef struct rig {
    wk_pg_composite *comp;
    wk_pg_codec rec, hs;
    wk_pg_oid rec_oid[1], hs_oid[1];
    wk_pg_registry *base, *reg;
} rig;

static bool rig_open(rig *r)
{
    memset(r, 0, sizeof *r);
    if (wk_pg_composite_new("{id,name}", 9, "{23,25}", 7, &r->comp, NULL) != WK_OK ||
        wk_pg_registry_new_default(NULL, &r->base, NULL) != WK_OK) {
        return false;
    }
    r->rec = *wk_pg_composite_codec();
    r->rec_oid[0] = 90001;
    r->rec.oids = r->rec_oid;
    r->rec.array_oids = NULL;
    r->rec.n_oids = 1;
    r->rec.native_kinds = 0;
    r->rec.data = r->comp;
    r->hs = *wk_pg_hstore_codec();
    r->hs_oid[0] = 90002;
    r->hs.oids = r->hs_oid;
    r->hs.array_oids = NULL;
    r->hs.n_oids = 1;
    r->hs.native_kinds = 0;
    const wk_pg_codec *list[2] = {&r->rec, &r->hs};
    return wk_pg_registry_add(r->base, list, 2, &r->reg, NULL) == WK_OK;
}

static void rig_close(rig *r)
{
    wk_pg_registry_unref(r->reg);
    wk_pg_registry_unref(r->base);
    wk_pg_composite_free(r->comp);
}

/* Decodes `p[0..n)` of type `oid` to PostgreSQL text into `out` (cleared first). */
static wk_status to_text(const rig *r, wk_pg_oid oid, wk_pg_format f, const void *p, size_t n,
                         wk_buf *out, wk_error *err)
{
    const wk_pg_decoder *d = wk_pg_registry_find_decoder(r->reg, oid, f, WK_PG_KIND_TEXT);
    if (d == NULL) {
        return WK_ERR_NOT_FOUND;
    }
    out->len = 0;
    return wk_pg_decode(d, p, n, out, NULL, err);
}

WK_TEST(test_pg_composite_template_decodes_typed_records)
{
    rig r;
    CHECK(rig_open(&r));
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_error err = {0};
    /* binary record_send: 2 fields; int4 42; text "a b" */
    static const uint8_t bin[] = {0, 0, 0, 2, 0, 0, 0, 23, 0, 0, 0, 4, 0, 0, 0, 42,
                                  0, 0, 0, 25, 0, 0, 0, 3, 'a', ' ', 'b'};
    CHECK_OK(to_text(&r, 90001, WK_PG_BINARY, bin, sizeof bin, &out, &err));
    CHECK_MEM(out.data, out.len, "(42,\"a b\")", 10);
    /* text record_out, NULL second field */
    CHECK_OK(to_text(&r, 90001, WK_PG_TEXT, "(7,)", 4, &out, &err));
    CHECK_MEM(out.data, out.len, "(7,)", 4);
    /* the description is enforced: a field of another type, a wrong field count */
    uint8_t wrong[sizeof bin];
    memcpy(wrong, bin, sizeof bin);
    wrong[7] = 20; /* int8 instead of int4 */
    CHECK_STATUS(to_text(&r, 90001, WK_PG_BINARY, wrong, sizeof wrong, &out, &err), WK_ERR_TYPE);
    CHECK_EQ(err.offset, 4);
    CHECK_STATUS(to_text(&r, 90001, WK_PG_TEXT, "(1,x,y)", 7, &out, &err), WK_ERR_SYNTAX);
    /* truncated binary input at every length: an error, never a read past the end */
    for (size_t n = 0; n < sizeof bin; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        CHECK(cut != NULL);
        memcpy(cut, bin, n);
        wk_status st = to_text(&r, 90001, WK_PG_BINARY, cut, n, &out, &err);
        free(cut);
        CHECK_MSG(st != WK_OK, "a record cut to %zu bytes decoded", n);
    }
    wk_buf_free(&out);
    rig_close(&r);
}

WK_TEST(test_pg_hstore_template_decodes_under_the_database_oid)
{
    rig r;
    CHECK(rig_open(&r));
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_error err = {0};
    /* binary hstore: 1 pair, key "k", value "v" */
    static const uint8_t bin[] = {0, 0, 0, 1, 0, 0, 0, 1, 'k', 0, 0, 0, 1, 'v'};
    CHECK_OK(to_text(&r, 90002, WK_PG_BINARY, bin, sizeof bin, &out, &err));
    CHECK_MEM(out.data, out.len, "\"k\"=>\"v\"", 8);
    /* the template's placeholder OID 0 is not a type the registry answers for */
    CHECK(wk_pg_registry_find_decoder(r.reg, 0, WK_PG_BINARY, WK_PG_KIND_TEXT) == NULL);
    wk_buf_free(&out);
    rig_close(&r);
}

/* ---- issue 29: a type that contains itself ----------------------------------------------- */

/* A registry where range type 70000 has itself as its subtype (what a hostile server's
 * catalog can say), and range 70002 has its own array type 70003 as its subtype. */
typedef struct self_range {
    wk_pg_codec r1, r2;
    wk_pg_oid o1[1], a1[1], o2[1], a2[1];
    wk_pg_range_type t1, t2;
    wk_pg_registry *base, *reg;
} self_range;

static bool self_range_make(self_range *s)
{
    memset(s, 0, sizeof *s);
    if (wk_pg_registry_new_default(NULL, &s->base, NULL) != WK_OK) {
        return false;
    }
    s->r1 = *wk_pg_range_codec(false);
    s->o1[0] = 70000;
    s->a1[0] = 70001;
    s->t1.subtype = 70000;
    s->r2 = s->r1;
    s->o2[0] = 70002;
    s->a2[0] = 70003;
    s->t2.subtype = 70003;
    s->r1.oids = s->o1;
    s->r1.array_oids = s->a1;
    s->r1.n_oids = 1;
    s->r1.data = &s->t1;
    s->r2.oids = s->o2;
    s->r2.array_oids = s->a2;
    s->r2.n_oids = 1;
    s->r2.data = &s->t2;
    const wk_pg_codec *list[2] = {&s->r1, &s->r2};
    return wk_pg_registry_add(s->base, list, 2, &s->reg, NULL) == WK_OK;
}

static void self_range_free(self_range *s)
{
    wk_pg_registry_unref(s->reg);
    wk_pg_registry_unref(s->base);
}

/* `levels` ranges, each the lower bound of the one around it (5 bytes a level: a flags byte
 * and the bound's length), the innermost empty. */
static uint8_t *nested_self_range(size_t levels, size_t *len)
{
    size_t n = levels * 5 + 1;
    uint8_t *p = malloc(n);
    if (p == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < levels; i++) {
        size_t rest = n - i * 5 - 5;
        p[i * 5] = 0x02 | 0x10; /* lower bound inclusive, upper bound infinite */
        p[i * 5 + 1] = (uint8_t)(rest >> 24);
        p[i * 5 + 2] = (uint8_t)(rest >> 16);
        p[i * 5 + 3] = (uint8_t)(rest >> 8);
        p[i * 5 + 4] = (uint8_t)rest;
    }
    p[n - 1] = 0x01; /* empty */
    *len = n;
    return p;
}

static wk_status decode_as(const wk_pg_registry *reg, wk_pg_oid oid, wk_pg_kind kind,
                           const uint8_t *p, size_t n, wk_error *err, wk_buf *text)
{
    const wk_pg_decoder *d = wk_pg_registry_find_decoder(reg, oid, WK_PG_BINARY, kind);
    if (d == NULL) {
        return WK_ERR_NOT_FOUND;
    }
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_buf b;
    wk_buf_init(&b, NULL, 1u << 20); /* a range's text doubles per level (quoting) */
    wk_buf mp;
    wk_buf_init(&mp, NULL, 0);
    wk_mp_writer w;
    wk_mp_writer_init(&w, &mp);
    wk_sink sink;
    wk_mp_writer_sink(&w, &sink);
    wk_pg_events ev = {&sink, 0, NULL, 1u << 20};
    wk_value *v = NULL;
    void *out = kind == WK_PG_KIND_TEXT ? (void *)&b : kind == WK_PG_KIND_EVENTS ? (void *)&ev
                                                                               : (void *)&v;
    wk_status st = wk_pg_decode(d, p, n, out, &arena, err);
    if (text != NULL && kind == WK_PG_KIND_TEXT && st == WK_OK) {
        wk_buf_append(text, b.data, b.len);
    }
    wk_mp_writer_finish(&w, NULL);
    wk_buf_free(&mp);
    wk_buf_free(&b);
    wk_arena_free(&arena);
    return st;
}

WK_TEST(test_pg_range_whose_subtype_is_itself_stops_at_the_nesting_limit)
{
    self_range s;
    CHECK(self_range_make(&s));
    size_t n = 0;
    uint8_t *deep = nested_self_range(100000, &n); /* 500 KB */
    CHECK(deep != NULL);
    wk_pg_kind kinds[3] = {WK_PG_KIND_TEXT, WK_PG_KIND_EVENTS, WK_PG_KIND_VALUE};
    for (int k = 0; k < 3; k++) {
        wk_error err = {0};
        CHECK_STATUS(decode_as(s.reg, 70000, kinds[k], deep, n, &err, NULL), WK_ERR_LIMIT);
        CHECK(err.msg != NULL && strstr(err.msg, "nested deeper") != NULL);
        /* at the range the budget ran out on: the 101st, 5 bytes a level */
        CHECK_EQ(err.offset, (WK_PG_MAX_NESTING + 1) * 5);
    }
    free(deep);
    /* A few levels decode, to PostgreSQL's text (each level quotes the one inside, so the
     * text doubles per level). At the limit the budget holds (the text outgrows the 1 MiB
     * cap instead, which is another error); one more level is the nesting error. The
     * budget is back at 0 after each decode. */
    wk_error err = {0};
    deep = nested_self_range(3, &n);
    CHECK(deep != NULL);
    wk_buf text;
    wk_buf_init(&text, NULL, 0);
    CHECK_OK(decode_as(s.reg, 70000, WK_PG_KIND_TEXT, deep, n, &err, &text));
    /* ranges 0..2 around an empty one: range_out quotes a bound holding '[' and doubles '"' */
    CHECK_MSG(text.len == 20 && memcmp(text.data, "[\"[\"\"[empty,)\"\",)\",)", 20) == 0, "%.*s", (int)text.len,
              (const char *)text.data);
    wk_buf_free(&text);
    free(deep);
    for (int round = 0; round < 2; round++) {
        deep = nested_self_range(WK_PG_MAX_NESTING, &n);
        CHECK(deep != NULL);
        err.msg = NULL;
        wk_status st = decode_as(s.reg, 70000, WK_PG_KIND_TEXT, deep, n, &err, NULL);
        CHECK(st != WK_OK && err.msg != NULL && strstr(err.msg, "nested deeper") == NULL);
        free(deep);
        deep = nested_self_range(WK_PG_MAX_NESTING + 1, &n);
        CHECK(deep != NULL);
        CHECK_STATUS(decode_as(s.reg, 70000, WK_PG_KIND_EVENTS, deep, n, &err, NULL),
                     WK_ERR_LIMIT);
        CHECK(err.msg != NULL && strstr(err.msg, "nested deeper") != NULL);
        free(deep);
    }
    self_range_free(&s);
}

/* A range of its own array type: range, array, range, ... (an array of one element whose
 * element is the next range); 29 bytes a level. */
WK_TEST(test_pg_range_over_its_own_array_type_stops_at_the_nesting_limit)
{
    self_range s;
    CHECK(self_range_make(&s));
    size_t levels = 20000;
    size_t lvl = 5 + 24; /* range header; array header with one dim and the element length */
    size_t n = levels * lvl + 1;
    uint8_t *p = malloc(n);
    CHECK(p != NULL);
    for (size_t i = 0; i < levels; i++) {
        uint8_t *q = p + i * lvl;
        uint32_t rest = (uint32_t)(n - i * lvl - 5);
        q[0] = 0x02 | 0x10;
        uint8_t w[24] = {0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0x11, 0x72, /* ndim, flags, elem 70002 */
                         0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0}; /* dim 1, lbound 1, length */
        uint32_t elen = rest - 24;
        w[20] = (uint8_t)(elen >> 24);
        w[21] = (uint8_t)(elen >> 16);
        w[22] = (uint8_t)(elen >> 8);
        w[23] = (uint8_t)elen;
        q[1] = (uint8_t)(rest >> 24);
        q[2] = (uint8_t)(rest >> 16);
        q[3] = (uint8_t)(rest >> 8);
        q[4] = (uint8_t)rest;
        memcpy(q + 5, w, 24);
    }
    p[n - 1] = 0x01;
    wk_pg_kind kinds[3] = {WK_PG_KIND_TEXT, WK_PG_KIND_EVENTS, WK_PG_KIND_VALUE};
    for (int k = 0; k < 3; k++) {
        wk_error err = {0};
        CHECK_STATUS(decode_as(s.reg, 70002, kinds[k], p, n, &err, NULL), WK_ERR_LIMIT);
        CHECK(err.msg != NULL && strstr(err.msg, "nested deeper") != NULL);
    }
    free(p);
    self_range_free(&s);
}
