/*
 * The catalog loader (wk__pq_catalog_build in addons/pq/pq_catalog.c) on catalog answers a
 * hostile or broken server could send, made with libpq's own result constructors (no server
 * needed): a type claiming a built-in OID (an enum as OID 23) or a built-in array OID, a type
 * claiming an OID below FirstNormalObjectId, two rows claiming one OID. Built-in types keep
 * their codecs; the database's own types are still added.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pq/pq_internal.h"
#include "wirekit/pg.h"
#include "wk_test.h"

typedef struct cat_row {
    const char *oid, *name, *kind, *basetype, *array;
} cat_row;

static PGresult *catalog_result(const cat_row *rows, size_t n)
{
    PGresult *r = PQmakeEmptyPGresult(NULL, PGRES_TUPLES_OK);
    if (r == NULL) {
        return NULL;
    }
    static const char *const names[8] = {"oid",   "typname", "typtype", "typbasetype",
                                         "typarray", "attnames", "atttypes", "rngsubtype"};
    PGresAttDesc atts[8];
    memset(atts, 0, sizeof atts);
    for (int i = 0; i < 8; i++) {
        atts[i].name = (char *)names[i];
        atts[i].typid = 25;
        atts[i].typlen = -1;
        atts[i].atttypmod = -1;
    }
    if (!PQsetResultAttrs(r, 8, atts)) {
        PQclear(r);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *v[5] = {rows[i].oid, rows[i].name, rows[i].kind, rows[i].basetype,
                            rows[i].array};
        for (int c = 0; c < 5; c++) {
            if (!PQsetvalue(r, (int)i, c, (char *)v[c], (int)strlen(v[c]))) {
                PQclear(r);
                return NULL;
            }
        }
        for (int c = 5; c < 8; c++) {
            if (!PQsetvalue(r, (int)i, c, NULL, -1)) {
                PQclear(r);
                return NULL;
            }
        }
    }
    return r;
}

WK_TEST(test_pq_catalog_types_never_replace_built_in_oids)
{
    static const cat_row rows[] = {
        {"23", "evil", "e", "0", "0"},          /* an enum claiming int4 */
        {"16390", "mood", "e", "0", "1007"},    /* its array claiming int4[] */
        {"16391", "fine", "e", "0", "16392"},   /* a database's own enum and its array */
        {"16391", "again", "e", "0", "0"},      /* the same OID twice: the first stays */
        {"16393", "taken", "e", "0", "16392"},  /* an array OID another type has */
        {"12000", "system", "e", "0", "0"},     /* below FirstNormalObjectId */
        {"16394", "dom", "d", "23", "1007"},    /* a domain over int4, array claiming int4[] */
    };
    PGresult *res = catalog_result(rows, sizeof rows / sizeof rows[0]);
    CHECK(res != NULL);
    wk_pg_registry *base = NULL, *reg = NULL;
    CHECK_OK(wk_pg_registry_new_default(NULL, &base, NULL));
    wk_error err = {0};
    CHECK_OK(wk__pq_catalog_build(NULL, base, res, &reg, &err));
    bool is_array = false;
    /* int4 and int4[] are the built-in codecs still */
    const wk_pg_codec *c = wk_pg_registry_codec_for(reg, 23, &is_array);
    CHECK(c != NULL && strcmp(c->name, "int4") == 0 && !is_array);
    c = wk_pg_registry_codec_for(reg, 1007, &is_array);
    CHECK(c != NULL && strcmp(c->name, "int4") == 0 && is_array);
    const wk_pg_decoder *d = wk_pg_registry_find_decoder(reg, 23, WK_PG_BINARY, WK_PG_KIND_TEXT);
    CHECK(d != NULL);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    static const uint8_t seven[4] = {0, 0, 0, 7};
    CHECK_OK(wk_pg_decode(d, seven, 4, &out, NULL, &err));
    CHECK(out.len == 1 && out.data[0] == '7');
    wk_buf_free(&out);
    /* the database's own types are there; claims on taken OIDs are not */
    c = wk_pg_registry_codec_for(reg, 16390, &is_array);
    CHECK(c != NULL && strcmp(c->name, "text") == 0 && !is_array);
    c = wk_pg_registry_codec_for(reg, 16391, &is_array);
    CHECK(c != NULL && strcmp(c->name, "text") == 0 && !is_array);
    c = wk_pg_registry_codec_for(reg, 16392, &is_array);
    CHECK(c != NULL && is_array);
    c = wk_pg_registry_codec_for(reg, 16393, &is_array);
    CHECK(c != NULL && !is_array);
    CHECK(wk_pg_registry_codec_for(reg, 12000, &is_array) == NULL);
    c = wk_pg_registry_codec_for(reg, 16394, &is_array);
    CHECK(c != NULL && strcmp(c->name, "int4") == 0 && !is_array);
    size_t nb = 0, nr = 0;
    wk_pg_registry_codecs(base, &nb);
    wk_pg_registry_codecs(reg, &nr);
    CHECK_EQ(nr - nb, 4); /* mood, fine, taken, dom */
    wk_pg_registry_unref(reg);
    wk_pg_registry_unref(base);
    PQclear(res);
}

WK_TEST(test_pq_catalog_a_broken_attribute_list_names_the_type)
{
    static const cat_row rows[] = {
        {"16400", "broken_row", "c", "0", "0"},
    };
    PGresult *res = catalog_result(rows, 1);
    CHECK(res != NULL);
    /* the attribute types a broken server sends: not an OID list */
    CHECK(PQsetvalue(res, 0, 5, "{a,b}", 5));
    CHECK(PQsetvalue(res, 0, 6, "{23,x}", 6));
    wk_pg_registry *base = NULL, *reg = NULL;
    CHECK_OK(wk_pg_registry_new_default(NULL, &base, NULL));
    wk_pq_conn conn;
    memset(&conn, 0, sizeof conn);
    wk_error err = {0};
    wk_status st = wk__pq_catalog_build(&conn, base, res, &reg, &err);
    wk_pg_registry_unref(base);
    PQclear(res);
    CHECK(st != WK_OK);
    CHECK(reg == NULL);
    /* the message says which type of the catalog and what of it */
    CHECK_MSG(strstr(conn.message, "broken_row") != NULL && strstr(conn.message, "16400") != NULL &&
                  strstr(conn.message, "attribute") != NULL,
              "message: %s", conn.message);
}

/* A catalog of `n` enums with OIDs from `first` on. */
static PGresult *many_enums(unsigned first, size_t n)
{
    cat_row *rows = calloc(n, sizeof *rows);
    char (*oids)[16] = calloc(n, sizeof *oids);
    PGresult *res = NULL;
    if (rows != NULL && oids != NULL) {
        for (size_t i = 0; i < n; i++) {
            snprintf(oids[i], sizeof oids[i], "%u", first + (unsigned)i);
            rows[i] = (cat_row){oids[i], "e", "e", "0", "0"};
        }
        res = catalog_result(rows, n);
    }
    free(rows);
    free(oids);
    return res;
}

WK_TEST(test_pq_catalog_reads_are_capped_per_read_and_per_connection)
{
    /* a hostile catalog of far more types than any read takes */
    size_t n = (size_t)WK__PQ_CATALOG_EAGER_MAX * 25;
    PGresult *res = many_enums(20000, n);
    CHECK(res != NULL);
    wk_pg_registry *base = NULL, *reg = NULL;
    CHECK_OK(wk_pg_registry_new_default(NULL, &base, NULL));
    wk_pq_conn conn;
    memset(&conn, 0, sizeof conn);
    wk_error err = {0};
    CHECK_OK(wk__pq_catalog_build(&conn, base, res, &reg, &err));
    PQclear(res);
    size_t nb = 0, nr = 0;
    wk_pg_registry_codecs(base, &nb);
    wk_pg_registry_codecs(reg, &nr);
    CHECK_EQ(nr - nb, WK__PQ_CATALOG_EAGER_MAX);
    CHECK_EQ(conn.catalog_types, WK__PQ_CATALOG_EAGER_MAX);
    /* later reads (the lazy load) add until the connection's cap, then nothing */
    unsigned next = 20000u + (unsigned)n;
    for (int round = 0; round < 8; round++) {
        res = many_enums(next, WK__PQ_CATALOG_EAGER_MAX);
        CHECK(res != NULL);
        next += WK__PQ_CATALOG_EAGER_MAX;
        wk_pg_registry *more = NULL;
        wk_status st = wk__pq_catalog_build(&conn, reg, res, &more, &err);
        PQclear(res);
        CHECK_OK(st);
        wk_pg_registry_unref(reg);
        reg = more;
    }
    wk_pg_registry_codecs(reg, &nr);
    CHECK_EQ(nr - nb, WK__PQ_CATALOG_MAX);
    CHECK_EQ(conn.catalog_types, WK__PQ_CATALOG_MAX);
    wk_pg_registry_unref(reg);
    wk_pg_registry_unref(base);
}
