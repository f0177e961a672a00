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
