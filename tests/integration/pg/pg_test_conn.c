/*
 * The shared test server's connection, set-up helpers and text decoding (pg_test_conn.h).
 */
#include "pg_test_conn.h"

#include <stdio.h>

wk_pq_conn *pg_test_connect(wk_pq_conn **conn)
{
    if (*conn == NULL && getenv("WK_PG_DSN") != NULL) {
        wk_error err = {0};
        if (wk_pq_connect(getenv("WK_PG_DSN"), NULL, conn, &err) != WK_OK) {
            fprintf(stderr, "connect: %s: %s\n", err.msg,
                    *conn != NULL ? wk_pq_conn_message(*conn) : "");
            wk_pq_conn_free(*conn);
            *conn = NULL;
        }
    }
    return *conn;
}

bool pg_test_exec(wk_pq_conn *c, const char *sql)
{
    PGresult *r = PQexec(wk_pq_pgconn(c), sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok) {
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    }
    PQclear(r);
    return ok;
}

long pg_test_count(wk_pq_conn *c, const char *sql)
{
    PGresult *r = PQexec(wk_pq_pgconn(c), sql);
    long n = PQresultStatus(r) == PGRES_TUPLES_OK ? strtol(PQgetvalue(r, 0, 0), NULL, 10) : -1;
    PQclear(r);
    return n;
}

wk_status pg_test_decode_text_row(wk_pq_conn *c, const PGresult *res, wk_buf *cols, bool *nulls,
                                  wk_error *err)
{
    size_t n = (size_t)PQnfields(res);
    wk_pg_kind *kinds = malloc((n + 1) * sizeof *kinds);
    size_t *offs = malloc((n + 1) * sizeof *offs);
    for (size_t i = 0; i < n; i++) {
        wk_buf_init(&cols[i], NULL, 0);
        nulls[i] = false;
        if (kinds != NULL && offs != NULL) {
            kinds[i] = WK_PG_KIND_TEXT;
            offs[i] = i * sizeof(wk_buf);
        }
    }
    wk_status st = WK_ERR_NOMEM;
    wk_pg_plan *plan = NULL;
    if (kinds != NULL && offs != NULL) {
        st = wk_pq_plan(c, res, kinds, offs, &plan, err);
    }
    if (st == WK_OK) {
        wk_arena arena; /* escaped text array elements are unescaped into it */
        wk_arena_init(&arena, NULL, 0);
        st = wk_pq_decode_row(plan, res, 0, cols, nulls, &arena, err);
        wk_arena_free(&arena);
    }
    wk_pg_plan_free(plan);
    free(kinds);
    free(offs);
    return st;
}
