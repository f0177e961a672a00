/*
 * The shared test server's connection and set-up helpers (pg_test_conn.h).
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
