/*
 * Every built-in type of the real PostgreSQL 15 server (WK_PG_DSN; skipped when unset),
 * enumerated from pg_type (typtype b, r, m; defined; in pg_catalog; not an array), with the
 * server as the oracle:
 * - a sample value and an array of it with a NULL, read in binary and in text, decode to the
 *   server's own text output (the reg* types in binary to their OID, as the wire carries);
 * - the sample encoded by wirekit as a binary parameter comes back as the same text
 *   (`SELECT $1::T::text`), for every type whose text input wirekit parses;
 * - a type that accepts no literal is recognised by the server's own refusal (SQLSTATE
 *   0A000), never by a list kept here; a type without a sample fails the test.
 */
#include <stdlib.h>

#include "pg_samples.h"
#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn;


static char *dup_n(const char *p, size_t n)
{
    char *s = malloc(n + 1);
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static bool is_reg(const char *name)
{
    return strncmp(name, "reg", 3) == 0;
}

/* The sample and an array of it with a NULL, in `format`; with `as_oid` the reg* types are
 * cast to their OID (what the binary format carries), for the oracle. */
static PGresult *select_sample(const char *type, const char *lit, int format, bool as_oid)
{
    PGconn *pg = wk_pq_pgconn(conn);
    char *q = PQescapeLiteral(pg, lit, strlen(lit));
    char sql[2048];
    snprintf(sql, sizeof sql, "SELECT %s::%s%s, array[%s::%s, NULL]%s", q, type,
             as_oid ? "::oid" : "", q, type, as_oid ? "::oid[]" : "");
    PQfreemem(q);
    return PQexecParams(pg, sql, 0, NULL, NULL, NULL, NULL, format);
}

static bool same(const wk_buf *b, const char *p, int n)
{
    return b->len == (size_t)n && (n == 0 || memcmp(b->data, p, (size_t)n) == 0);
}

WK_TEST(test_pg_types_every_builtin_type_decodes_to_the_servers_text)
{
    NEED_CONN();
    const wk_pg_registry *reg = wk_pq_registry(conn);
    PGresult *types = PQexec(wk_pq_pgconn(conn),
                             "SELECT t.oid, t.typname FROM pg_type t JOIN pg_namespace n ON "
                             "n.oid = t.typnamespace WHERE n.nspname = 'pg_catalog' AND "
                             "t.typtype IN ('b', 'r', 'm') AND t.typisdefined AND "
                             "t.typinput <> 'array_in'::regproc ORDER BY t.oid");
    CHECK(PQresultStatus(types) == PGRES_TUPLES_OK);
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    size_t compared = 0, no_literal = 0, text_only = 0, n_types = 0;
    for (int t = 0; t < PQntuples(types); t++) {
        const char *name = PQgetvalue(types, t, 1);
        n_types++;
        bool found = false;
        for (size_t s = 0; s < pg_type_nsamples; s++) {
            if (strcmp(pg_type_samples[s][0], name) != 0) {
                continue;
            }
            found = true;
            if (pg_type_samples[s][1] == NULL) {
                /* the server must refuse every literal of this type */
                char sql[256];
                snprintf(sql, sizeof sql, "SELECT ''::%s", name);
                PGresult *r = PQexec(wk_pq_pgconn(conn), sql);
                const char *state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
                CHECK_MSG(state != NULL && strcmp(state, "0A000") == 0,
                          "%s: the server accepts a literal: add a sample", name);
                PQclear(r);
                no_literal++;
                continue;
            }
            for (int format = 1; format >= 0; format--) {
                PGresult *r = select_sample(name, pg_type_samples[s][1], format, false);
                wk_pg_oid oid = (wk_pg_oid)strtoul(PQgetvalue(types, t, 0), NULL, 10);
                if (format == 1 &&
                    wk_pg_registry_find_decoder(reg, oid, WK_PG_BINARY, WK_PG_KIND_TEXT) ==
                        NULL) {
                    /* only types without a binary form wirekit reads may get here */
                    CHECK_MSG(
                        wk_pg_registry_find_decoder(reg, oid, WK_PG_TEXT, WK_PG_KIND_TEXT) !=
                            NULL,
                        "%s: no decoder in either format", name);
                    text_only++;
                    PQclear(r);
                    continue;
                }
                CHECK_MSG(PQresultStatus(r) == PGRES_TUPLES_OK, "%s '%s': %s", name,
                          pg_type_samples[s][1], PQresultErrorMessage(r));
                /* the oracle: the server's output functions, in a text-format result */
                PGresult *o =
                    select_sample(name, pg_type_samples[s][1], 0, format == 1 && is_reg(name));
                CHECK(PQresultStatus(o) == PGRES_TUPLES_OK);
                for (int col = 0; col < 2; col++) {
                    wk_pg_oid coid = PQftype(r, col);
                    const wk_pg_decoder *d = wk_pg_registry_find_decoder(
                        reg, coid, (wk_pg_format)format, WK_PG_KIND_TEXT);
                    CHECK_MSG(d != NULL, "%s: no %s decoder for oid %u", name,
                              format ? "binary" : "text", coid);
                    wk_buf_clear(&out);
                    wk_error err = {0};
                    wk_status st = wk_pg_decode(d, PQgetvalue(r, 0, col),
                                                (size_t)PQgetlength(r, 0, col), &out, &arena,
                                                &err);
                    CHECK_MSG(st == WK_OK, "%s '%s' col %d (%s): %s at %zu", name,
                              pg_type_samples[s][1], col, format ? "binary" : "text", err.msg,
                              err.offset);
                    const char *want = PQgetvalue(o, 0, col);
                    if (!same(&out, want, PQgetlength(o, 0, col))) {
                        char *got = dup_n((const char *)out.data, out.len);
                        wk__test_fail(__FILE__, __LINE__, "%s '%s' col %d (%s): got '%s', "
                                      "server says '%s'", name, pg_type_samples[s][1], col,
                                      format ? "binary" : "text", got, want);
                        free(got);
                        PQclear(r);
                        PQclear(o);
                        return;
                    }
                    compared++;
                }
                PQclear(r);
                PQclear(o);
            }
        }
        CHECK_MSG(found, "type %s has no sample in this test", name);
    }
    printf("    %zu types: %zu values compared, %zu without literals, %zu text-only runs\n",
           n_types, compared, no_literal, text_only);
    CHECK(n_types >= 80);
    PQclear(types);
    wk_buf_free(&out);
    wk_arena_free(&arena);
}

WK_TEST(test_pg_types_every_type_with_input_round_trips_as_a_binary_parameter)
{
    NEED_CONN();
    const wk_pg_registry *reg = wk_pq_registry(conn);
    PGconn *pg = wk_pq_pgconn(conn);
    size_t sent_binary = 0, text_only = 0;
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    for (size_t s = 0; s < pg_type_nsamples; s++) {
        const char *name = pg_type_samples[s][0], *lit = pg_type_samples[s][1];
        if (lit == NULL) {
            continue;
        }
        char sql[512];
        char *q = PQescapeLiteral(pg, lit, strlen(lit));
        /* reg* types travel as their OID in binary: the OID's text is their input then */
        const char *via = is_reg(name) ? "::oid" : "";
        snprintf(sql, sizeof sql, "SELECT %s::%s%s::text, '%s'::regtype::oid", q, name, via,
                 name);
        PQfreemem(q);
        PGresult *o = PQexec(pg, sql);
        CHECK_MSG(PQresultStatus(o) == PGRES_TUPLES_OK, "%s: %s", name, PQresultErrorMessage(o));
        char *want = dup_n(PQgetvalue(o, 0, 0), (size_t)PQgetlength(o, 0, 0));
        wk_pg_oid oid = (wk_pg_oid)strtoul(PQgetvalue(o, 0, 1), NULL, 10);
        PQclear(o);
        const wk_pg_encoder *e =
            wk_pg_registry_find_encoder_for(reg, oid, WK_PG_BINARY, WK_PG_KIND_TEXT);
        if (e == NULL) {
            /* text-only types: the text encoder must exist */
            CHECK_MSG(wk_pg_registry_find_encoder_for(reg, oid, WK_PG_TEXT, WK_PG_KIND_TEXT) !=
                          NULL,
                      "%s: no encoder", name);
            text_only++;
            free(want);
            continue;
        }
        /* the server's own text is the input: it is what a client echoes back */
        wk_slice in = {want, strlen(want)};
        wk_buf_clear(&out);
        wk_error err = {0};
        wk_status st = wk_pg_encode(e, &in, &out, &err);
        if (st == WK_ERR_UNSUPPORTED) {
            text_only++; /* no text parser for this type: the glue sends it as text */
            free(want);
            continue;
        }
        CHECK_MSG(st == WK_OK, "%s '%s': encode failed: %s", name, want, err.msg);
        snprintf(sql, sizeof sql, "SELECT $1::%s%s::text", name, via);
        Oid types[1] = {oid};
        const char *vals[1] = {out.data != NULL ? (const char *)out.data : ""};
        int lens[1] = {(int)out.len}, fmts[1] = {1};
        PGresult *r = PQexecParams(pg, sql, 1, types, vals, lens, fmts, 0);
        CHECK_MSG(PQresultStatus(r) == PGRES_TUPLES_OK, "%s '%s': %s", name, want,
                  PQresultErrorMessage(r));
        CHECK_MSG(strcmp(PQgetvalue(r, 0, 0), want) == 0, "%s: sent '%s', server read '%s'",
                  name, want, PQgetvalue(r, 0, 0));
        PQclear(r);
        free(want);
        sent_binary++;
    }
    printf("    %zu samples round-tripped in binary, %zu sent as text only\n", sent_binary,
           text_only);
    CHECK(sent_binary >= 60);
    wk_buf_free(&out);
}

/* Every column of row 0 of `res` through a TEXT plan of `c` equals `want`'s text columns. */
static void check_row_text(wk_pq_conn *c, PGresult *res, PGresult *want, const char *what)
{
    int n = PQnfields(res);
    wk_buf *bufs = malloc((size_t)n * sizeof *bufs);
    bool *nulls = calloc((size_t)n, sizeof *nulls);
    CHECK(bufs != NULL && nulls != NULL);
    wk_error err = {0};
    wk_status st = pg_test_decode_text_row(c, res, bufs, nulls, &err);
    char *bad = NULL;
    for (int i = 0; i < n && st == WK_OK && bad == NULL; i++) {
        if (!same(&bufs[i], PQgetvalue(want, 0, i), PQgetlength(want, 0, i))) {
            bad = dup_n((const char *)bufs[i].data, bufs[i].len);
            wk__test_fail(__FILE__, __LINE__, "%s: column %s: got '%s', server says '%s'", what,
                          PQfname(res, i), bad, PQgetvalue(want, 0, i));
        }
    }
    if (st != WK_OK) {
        wk__test_fail(__FILE__, __LINE__, "%s: %s (column %zu)", what, err.msg, err.offset);
    }
    free(bad);
    for (int i = 0; i < n; i++) {
        wk_buf_free(&bufs[i]);
    }
    free(bufs);
    free(nulls);
}

/* (Re)creates the temp table every_type: a column c_T and a_T (T[] with a NULL) per type
 * with a sample literal, one row. Returns the number of types. */
static int make_every_type(PGconn *pg)
{
    wk_buf create, insert;
    wk_buf_init(&create, NULL, 0);
    wk_buf_init(&insert, NULL, 0);
    wk_buf_append(&create, "CREATE TEMP TABLE every_type (", 30);
    wk_buf_append(&insert, "INSERT INTO every_type VALUES (", 31);
    int cols = 0;
    for (size_t s = 0; s < pg_type_nsamples; s++) {
        const char *type = pg_type_samples[s][0], *lit = pg_type_samples[s][1];
        if (lit == NULL || (s > 0 && strcmp(pg_type_samples[s - 1][0], type) == 0)) {
            continue; /* the first sample of each type with input */
        }
        char col[256];
        int n = snprintf(col, sizeof col, "%s\"c_%s\" %s, \"a_%s\" %s[]", cols ? ", " : "",
                         type, type, type, type);
        wk_buf_append(&create, col, (size_t)n);
        char *q = PQescapeLiteral(pg, lit, strlen(lit));
        size_t cap = 2 * strlen(q) + 128;
        char *val = malloc(cap);
        n = snprintf(val, cap, "%s%s::%s, array[%s::%s, NULL]", cols ? ", " : "", q, type, q,
                     type);
        wk_buf_append(&insert, val, (size_t)n);
        free(val);
        PQfreemem(q);
        cols++;
    }
    wk_buf_append(&create, ")", 2);
    wk_buf_append(&insert, ")", 2);
    bool ok = pg_test_exec(conn, "DROP TABLE IF EXISTS every_type") &&
              pg_test_exec(conn, (const char *)create.data) && pg_test_exec(conn, (const char *)insert.data);
    wk_buf_free(&create);
    wk_buf_free(&insert);
    return ok ? cols : -1;
}

WK_TEST(test_pg_types_a_table_with_a_column_of_every_type_reads_with_select_star)
{
    NEED_CONN();
    PGconn *pg = wk_pq_pgconn(conn);
    int cols = make_every_type(pg);
    CHECK(cols > 0);
    /* the oracle: the server's text of every column */
    PGresult *want = PQexec(pg, "SELECT * FROM every_type");
    CHECK(PQresultStatus(want) == PGRES_TUPLES_OK);
    PGresult *res = NULL;
    wk_error err = {0};
    /* aclitem (no binary output) is in the table: the result must come back in text */
    CHECK_OK(wk_pq_exec(conn, "SELECT * FROM every_type", NULL, 0, &res, &err));
    CHECK_EQ(PQfformat(res, 0), 0);
    check_row_text(conn, res, want, "select * (text fallback)");
    PQclear(res);
    PQclear(want);
    /* without the text-only types the same columns come back in binary */
    want = PQexec(pg, "SELECT c_point, a_point, c_int4range, a_int4range, c_tsvector, a_money, "
                      "c_xid8, a_regclass::oid[], c_bit, a_varbit, c_int4multirange FROM "
                      "every_type");
    CHECK(PQresultStatus(want) == PGRES_TUPLES_OK);
    CHECK_OK(wk_pq_exec(conn,
                        "SELECT c_point, a_point, c_int4range, a_int4range, c_tsvector, a_money, "
                        "c_xid8, a_regclass, c_bit, a_varbit, c_int4multirange FROM every_type",
                        NULL, 0, &res, &err));
    CHECK_EQ(PQfformat(res, 0), 1);
    check_row_text(conn, res, want, "select (binary)");
    printf("    %d types in one table\n", cols);
    PQclear(res);
    PQclear(want);
}

/* wk_pq_copy_out's row function for the every-type test: TEXT kinds into wk_bufs. */
typedef struct text_rows {
    wk_buf *bufs;
    bool *nulls;
    wk_arena arena;
    wk_value tree;
    int rows;
} text_rows;

static wk_status copy_text_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                               const int *lens, wk_error *err)
{
    text_rows *t = ctx;
    size_t n = wk_pg_plan_ncols(plan);
    for (size_t i = 0; i < n; i++) {
        wk_buf_clear(&t->bufs[i]);
    }
    t->rows++;
    wk_status st = wk_pg_plan_decode_row(plan, vals, lens, t->bufs, t->nulls, &t->arena, err);
    /* the same tuple as a value tree (a map of every column) */
    return st == WK_OK ? wk_pg_plan_value_row(plan, vals, lens, &t->arena, &t->tree, err) : st;
}

WK_TEST(test_pg_types_binary_copy_out_of_every_type_equals_the_servers_text)
{
    NEED_CONN();
    PGconn *pg = wk_pq_pgconn(conn);
    CHECK(make_every_type(pg) > 0);
    /* every column whose type has a binary decoder (the reg* types as their OID, which the
     * binary format carries) */
    PGresult *attrs = PQexec(pg, "SELECT attname, atttypid, format_type(atttypid, NULL) FROM "
                                 "pg_attribute WHERE attrelid = 'every_type'::regclass AND "
                                 "attnum > 0 ORDER BY attnum");
    CHECK(PQresultStatus(attrs) == PGRES_TUPLES_OK);
    wk_buf list;
    wk_buf_init(&list, NULL, 0);
    int ncols = 0, skipped = 0;
    for (int i = 0; i < PQntuples(attrs); i++) {
        wk_pg_oid oid = (wk_pg_oid)strtoul(PQgetvalue(attrs, i, 1), NULL, 10);
        if (wk_pg_registry_find_decoder(wk_pq_registry(conn), oid, WK_PG_BINARY,
                                        WK_PG_KIND_TEXT) == NULL) {
            skipped++;
            continue;
        }
        const char *name = PQgetvalue(attrs, i, 0);
        const char *type = PQgetvalue(attrs, i, 2);
        bool reg = strncmp(type, "reg", 3) == 0;
        bool arr = strstr(type, "[]") != NULL;
        char col[256];
        int n = snprintf(col, sizeof col, "%s\"%s\"%s", ncols ? ", " : "", name,
                         reg ? (arr ? "::oid[]" : "::oid") : "");
        wk_buf_append(&list, col, (size_t)n);
        ncols++;
    }
    PQclear(attrs);
    CHECK(ncols > 0);
    char *sql = malloc(list.len + 64);
    snprintf(sql, list.len + 64, "SELECT %.*s FROM every_type", (int)list.len,
             (const char *)list.data);
    wk_buf_free(&list);
    PGresult *want = PQexec(pg, sql);
    CHECK(PQresultStatus(want) == PGRES_TUPLES_OK);
    CHECK_EQ(PQnfields(want), ncols);

    text_rows t;
    memset(&t, 0, sizeof t);
    t.bufs = calloc((size_t)ncols, sizeof *t.bufs);
    t.nulls = calloc((size_t)ncols, sizeof *t.nulls);
    wk_pg_kind *kinds = malloc((size_t)ncols * sizeof *kinds);
    size_t *offs = malloc((size_t)ncols * sizeof *offs);
    for (int i = 0; i < ncols; i++) {
        kinds[i] = WK_PG_KIND_TEXT;
        offs[i] = (size_t)i * sizeof(wk_buf);
        wk_buf_init(&t.bufs[i], NULL, 0);
    }
    wk_arena_init(&t.arena, NULL, 0);
    wk_error err = {0};
    uint64_t rows = 0;
    wk_status st = wk_pq_copy_out(conn, sql, kinds, offs, copy_text_row, &t, &rows, &err);
    CHECK_MSG(st == WK_OK, "copy out: %s (%zu): %s", err.msg, err.offset,
              wk_pq_conn_message(conn));
    CHECK_EQ(rows, 1u);
    CHECK_EQ(t.rows, 1);
    CHECK_EQ(t.tree.type, WK_VAL_MAP);
    CHECK_EQ(t.tree.len, (uint32_t)ncols);
    for (int i = 0; i < ncols; i++) {
        bool null = PQgetisnull(want, 0, i) != 0;
        CHECK_MSG(t.nulls[i] == null, "column %s: NULL flag", PQfname(want, i));
        if (!null) {
            char *got = dup_n((const char *)t.bufs[i].data, t.bufs[i].len);
            bool eq = same(&t.bufs[i], PQgetvalue(want, 0, i), PQgetlength(want, 0, i));
            if (!eq) {
                wk__test_fail(__FILE__, __LINE__, "copy out column %s: got '%s', server says '%s'",
                              PQfname(want, i), got, PQgetvalue(want, 0, i));
            }
            free(got);
        }
    }
    printf("    %d columns through binary COPY (%d without a binary decoder left out)\n", ncols,
           skipped);
    for (int i = 0; i < ncols; i++) {
        wk_buf_free(&t.bufs[i]);
    }
    wk_arena_free(&t.arena);
    free(t.bufs);
    free(t.nulls);
    free(kinds);
    free(offs);
    free(sql);
    PQclear(want);
}

WK_TEST(test_pg_types_unknown_and_text_only_types_come_back_as_text)
{
    NEED_CONN();
    PGconn *pg = wk_pq_pgconn(conn);
    /* types created after this connection took its snapshot are unknown to it */
    CHECK(pg_test_exec(conn, "CREATE EXTENSION IF NOT EXISTS citext"));
    CHECK(pg_test_exec(conn, "DROP TYPE IF EXISTS wk_floatrange CASCADE"));
    CHECK(pg_test_exec(conn, "CREATE TYPE wk_floatrange AS RANGE (subtype = float8)"));
    CHECK(pg_test_exec(conn, "DROP TYPE IF EXISTS wk_textrange CASCADE"));
    CHECK(pg_test_exec(conn, "CREATE TYPE wk_textrange AS RANGE (subtype = text, "
                  "multirange_type_name = wk_textmultirange)"));
    static const char sql[] =
        "SELECT 'AbC'::citext AS c, array['x'::citext, NULL] AS ca, "
        "'[1.5,2.25)'::wk_floatrange AS fr, 'wirekit=r/wirekit'::aclitem AS acl, "
        "array['wirekit=r/wirekit'::aclitem] AS acla, 'a & b'::tsquery AS q, '((0,0),(1,1))'::box AS bx, "
        "array['(1,1),(0,0)'::box, '(2,2),(1,1)'] AS bxa";
    PGresult *want = PQexec(pg, sql);
    CHECK(PQresultStatus(want) == PGRES_TUPLES_OK);
    PGresult *res = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_exec(conn, sql, NULL, 0, &res, &err));
    CHECK_EQ(PQfformat(res, 0), 0);
    check_row_text(conn, res, want, "unknown types");
    PQclear(res);
    /* a new connection finds the range type in the catalog and reads it in binary */
    wk_pq_conn *fresh = NULL;
    CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &fresh, &err));
    static const char rq[] =
        "SELECT '[1.5,2.25)'::wk_floatrange, 'empty'::wk_floatrange, "
        "array['(,3]'::wk_floatrange], E'[\"a\\\\\"b\",\"x y\")'::wk_textrange, "
        "E'{[\"\",a), (\"(\",\")\"]}'::wk_textmultirange";
    PGresult *w2 = PQexec(pg, rq);
    CHECK_MSG(PQresultStatus(w2) == PGRES_TUPLES_OK, "%s", PQresultErrorMessage(w2));
    CHECK_OK(wk_pq_exec(fresh, rq, NULL, 0, &res, &err));
    CHECK_EQ(PQfformat(res, 0), 1);
    check_row_text(fresh, res, w2, "catalog range");
    PQclear(res);
    PQclear(w2);
    /* and its values go as binary parameters */
    wk_slice in = {"[1.5,2.25]", 10};
    PGresult *o = PQexec(pg, "SELECT 'wk_floatrange'::regtype::oid");
    wk_pq_param p = {WK_PG_KIND_TEXT, &in, (wk_pg_oid)strtoul(PQgetvalue(o, 0, 0), NULL, 10)};
    PQclear(o);
    CHECK_OK(wk_pq_exec(fresh, "SELECT $1::text", &p, 1, &res, &err));
    CHECK(strcmp(PQgetvalue(res, 0, 0), "[1.5,2.25]") == 0);
    PQclear(res);
    /* a text-only type as a parameter goes as text */
    wk_slice acl = {"wirekit=r/wirekit", 17};
    wk_pq_param pa = {WK_PG_KIND_TEXT, &acl, 1033};
    CHECK_OK(wk_pq_exec(fresh, "SELECT $1::text", &pa, 1, &res, &err));
    CHECK(strcmp(PQgetvalue(res, 0, 0), "wirekit=r/wirekit") == 0);
    PQclear(res);
    wk_pq_conn_free(fresh);
    PQclear(want);
    CHECK(pg_test_exec(conn, "DROP TYPE wk_floatrange CASCADE"));
    CHECK(pg_test_exec(conn, "DROP TYPE wk_textrange CASCADE"));
}

/* Runs `sql` expecting a server error; checks SQLSTATE and that the psql-style rendering
 * equals libpq's own message for the result (which is what psql prints). */
static void check_error(const char *sql, const char *state, wk_status want_st)
{
    PGresult *r = NULL;
    wk_error err = {0};
    wk_status st = wk_pq_exec(conn, sql, NULL, 0, &r, &err);
    CHECK_MSG(st == want_st, "%s: status %s", sql, wk_status_str(st));
    const wk_pq_error *e = wk_pq_last_error(conn);
    CHECK(e != NULL);
    CHECK_MSG(strcmp(e->sqlstate, state) == 0, "%s: SQLSTATE %s, want %s", sql, e->sqlstate,
              state);
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    CHECK_OK(wk_pq_error_format(e, sql, &b));
    /* libpq renders the same fields with the statement text it sent */
    PGresult *lr = PQexec(wk_pq_pgconn(conn), sql);
    const char *libpq = PQresultErrorMessage(lr);
    CHECK_MSG(same(&b, libpq, (int)strlen(libpq)), "%s: got\n%.*s\nlibpq says\n%s", sql,
              (int)b.len, (const char *)b.data, libpq);
    PQclear(lr);
    PQclear(r);
    wk_buf_free(&b);
}

WK_TEST(test_pg_types_server_errors_carry_sqlstate_and_print_like_psql)
{
    NEED_CONN();
    check_error("SELECT 1/0", "22012", WK_ERR_SERVER);
    if (wk__test_failed()) {
        return;
    }
    check_error("selec 1", "42601", WK_ERR_SERVER);
    CHECK_EQ(wk_pq_last_error(conn)->position, 1);
    check_error("SELECT 1,\n  2 FROM FROM", "42601", WK_ERR_SERVER);
    check_error("SELECT 1,\r\n\t2 FROM\tFROM", "42601", WK_ERR_SERVER);
    check_error("SELECT 'a long line to cut' AS aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, "
                "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb, ccccccccccccccccccccccccccccccccccc "
                "frm x WHERE y = 1 AND z = 2 AND w = 3 AND v = 4 AND u = 5",
                "42601", WK_ERR_SERVER);
    check_error("SELECT 'short' frm x WHERE aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa = 1",
                "42601", WK_ERR_SERVER);
    check_error("SELECT nosuchcolumn", "42703", WK_ERR_SERVER);
    CHECK(pg_test_exec(conn, "CREATE TEMP TABLE uq (id int PRIMARY KEY)"));
    CHECK(pg_test_exec(conn, "INSERT INTO uq VALUES (1)"));
    check_error("INSERT INTO uq VALUES (1)", "23505", WK_ERR_SERVER);
    CHECK(wk_pq_last_error(conn)->detail != NULL &&
          strstr(wk_pq_last_error(conn)->detail, "already exists") != NULL);
    /* success clears the last error */
    PGresult *r = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_exec(conn, "SELECT 1", NULL, 0, &r, &err));
    CHECK(wk_pq_last_error(conn) == NULL);
    PQclear(r);
}

WK_TEST(test_pg_types_connection_errors_are_not_query_errors)
{
    NEED_CONN();
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    /* nothing listens on port 1 */
    CHECK_STATUS(wk_pq_connect("host=127.0.0.1 port=1 connect_timeout=5", NULL, &c, &err),
                 WK_ERR_CONNECT);
    CHECK(wk_pq_last_error(c) != NULL && wk_pq_last_error(c)->sqlstate[0] == 0);
    wk_pq_conn_free(c);
    /* a dropped connection: the server ends the backend */
    CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &c, &err));
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", PQbackendPID(wk_pq_pgconn(c)));
    CHECK(pg_test_exec(conn, sql));
    PGresult *r = NULL;
    CHECK_STATUS(wk_pq_exec(c, "SELECT 1", NULL, 0, &r, &err), WK_ERR_CONNECT);
    const wk_pq_error *e = wk_pq_last_error(c);
    CHECK(e != NULL);
    /* the server says why (57P01 admin_shutdown) when its report arrived before the close */
    CHECK_MSG(e->sqlstate[0] == 0 || strcmp(e->sqlstate, "57P01") == 0, "SQLSTATE %s",
              e->sqlstate);
    PQclear(r);
    wk_pq_conn_free(c);
}

WK_TEST(test_pg_types_catalog_composites_encode_as_binary_parameters)
{
    NEED_CONN();
    PGconn *pg = wk_pq_pgconn(conn);
    CHECK(pg_test_exec(conn, "DROP TYPE IF EXISTS wk_comp CASCADE"));
    CHECK(pg_test_exec(conn, "CREATE TYPE wk_comp AS (a int4, b text, c point, d int4range, e text, "
                  "f numeric[])"));
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &c, &err));
    PGresult *o = PQexec(pg, "SELECT 'wk_comp'::regtype::oid");
    wk_pg_oid oid = (wk_pg_oid)strtoul(PQgetvalue(o, 0, 0), NULL, 10);
    PQclear(o);
    static const char *const lits[] = {
        "(1,\"x \"\"y\"\" \\\\z\",\"(1,2)\",\"[1,5)\",,\"{1.5,NULL}\")",
        "(,,,,,)",
        "(-7,\"\",\"(0.5,-1e+300)\",empty,\" \",{})",
    };
    for (size_t i = 0; i < sizeof lits / sizeof lits[0]; i++) {
        char sql[256];
        char *q = PQescapeLiteral(pg, lits[i], strlen(lits[i]));
        snprintf(sql, sizeof sql, "SELECT %s::wk_comp::text", q);
        PQfreemem(q);
        PGresult *w = PQexec(pg, sql);
        CHECK_MSG(PQresultStatus(w) == PGRES_TUPLES_OK, "%s", PQresultErrorMessage(w));
        const char *want = PQgetvalue(w, 0, 0);
        /* the encoder itself, binary: it must not fall back to text */
        const wk_pg_encoder *e = wk_pg_registry_find_encoder_for(wk_pq_registry(c), oid,
                                                                 WK_PG_BINARY, WK_PG_KIND_TEXT);
        CHECK(e != NULL);
        wk_buf b;
        wk_buf_init(&b, NULL, 0);
        wk_slice in = {lits[i], strlen(lits[i])};
        CHECK_MSG(wk_pg_encode(e, &in, &b, &err) == WK_OK, "%s: %s", lits[i], err.msg);
        wk_buf_free(&b);
        wk_pq_param p = {WK_PG_KIND_TEXT, &in, oid};
        PGresult *r = NULL;
        CHECK_OK(wk_pq_exec(c, "SELECT $1::text", &p, 1, &r, &err));
        CHECK_MSG(strcmp(PQgetvalue(r, 0, 0), want) == 0, "sent %s, server read %s, want %s",
                  lits[i], PQgetvalue(r, 0, 0), want);
        PQclear(r);
        PQclear(w);
    }
    /* a malformed literal is refused by wirekit, not sent */
    wk_slice bad = {"(1,2", 4};
    wk_pq_param p = {WK_PG_KIND_TEXT, &bad, oid};
    PGresult *r = NULL;
    CHECK_STATUS(wk_pq_exec(c, "SELECT $1::text", &p, 1, &r, &err), WK_ERR_SYNTAX);
    PQclear(r);
    wk_pq_conn_free(c);
    CHECK(pg_test_exec(conn, "DROP TYPE wk_comp CASCADE"));
}
