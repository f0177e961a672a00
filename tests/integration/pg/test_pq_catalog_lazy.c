/*
 * The catalog's lazy part against the shared PostgreSQL 15 (WK_PG_DSN; skipped when unset):
 * a table's row type that no column uses is not read at connect (a database of many tables
 * costs nothing), and is loaded, with what it depends on, when a statement whose column has
 * it is described; a table row type some column uses is read at connect. See
 * addons/pq/pq_catalog.c and docs/limits.md.
 */
#include <stdlib.h>
#include <string.h>

#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn;

/* The row type OID of table `name`, 0 when the query fails. */
static wk_pg_oid row_type_of(const char *name)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT oid FROM pg_type WHERE typname = '%s'", name);
    long v = pg_test_count(conn, sql);
    return v > 0 ? (wk_pg_oid)v : 0;
}

WK_TEST(test_pq_catalog_lazy_table_row_types_load_when_described)
{
    NEED_CONN();
    CHECK(pg_test_exec(conn, "DROP TABLE IF EXISTS lazy_user, lazy_inner, lazy_alone; "
                             "CREATE TABLE lazy_alone (a int, b text); "
                             "INSERT INTO lazy_alone VALUES (1, 'x'); "
                             "CREATE TABLE lazy_inner (c int); "
                             "CREATE TABLE lazy_user (i lazy_inner)"));
    wk_pg_oid alone = row_type_of("lazy_alone"), inner = row_type_of("lazy_inner");
    CHECK(alone != 0 && inner != 0);
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_connect(getenv("WK_PG_DSN"), NULL, &c, &err));
    bool is_array = false;
    /* a row type a column uses is there from the start; one nobody uses is not */
    bool inner_at_connect = wk_pg_registry_codec_for(wk_pq_registry(c), inner, &is_array) != NULL;
    bool alone_at_connect = wk_pg_registry_codec_for(wk_pq_registry(c), alone, &is_array) != NULL;
    /* a whole-row reference with a parameter: described first, the type loaded then */
    int32_t one = 1;
    wk_pq_param p = {WK_PG_KIND_I32, &one, 0};
    PGresult *res = NULL;
    wk_status st = wk_pq_exec(c, "SELECT t FROM lazy_alone t WHERE a = $1", &p, 1, &res, &err);
    bool alone_after = wk_pg_registry_codec_for(wk_pq_registry(c), alone, &is_array) != NULL;
    int fmt = res != NULL && PQntuples(res) == 1 ? PQfformat(res, 0) : -1;
    wk_buf text;
    wk_buf_init(&text, NULL, 0);
    bool null = true;
    wk_status dst = res != NULL ? pg_test_decode_text_row(c, res, &text, &null, &err) : st;
    PQclear(res);
    wk_pq_conn_free(c);
    (void)pg_test_exec(conn, "DROP TABLE IF EXISTS lazy_user, lazy_inner, lazy_alone");
    CHECK(inner_at_connect);
    CHECK(!alone_at_connect);
    CHECK_OK(st);
    CHECK(alone_after);
    CHECK_EQ(fmt, 1); /* binary: the loaded codec decodes it */
    CHECK_OK(dst);
    CHECK(!null);
    CHECK_MEM(text.data, text.len, "(1,x)", 5);
    wk_buf_free(&text);
}
