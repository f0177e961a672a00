/*
 * A downstream program of wirekit-pq: includes <wirekit/pq.h> (which includes libpq-fe.h, so
 * the build must carry libpq's include directory), calls the add-on, the core and libpq.
 * With WK_PG_DSN set it runs a binary-parameter query; without, it checks that a refused
 * connection comes back as WK_ERR_CONNECT with libpq's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wirekit/pq.h>
#include <wirekit/wirekit.h>

int main(void)
{
    if (PQlibVersion() <= 0 || wk_pg_hstore_codec() == NULL) {
        return 1;
    }
    const char *dsn = getenv("WK_PG_DSN");
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    if (dsn == NULL || *dsn == '\0') {
        /* port 1 on loopback: nothing listens there */
        wk_status st =
            wk_pq_connect("host=127.0.0.1 port=1 connect_timeout=2", NULL, &conn, &err);
        int ok = st == WK_ERR_CONNECT && conn != NULL && strlen(wk_pq_conn_message(conn)) > 0;
        wk_pq_conn_free(conn);
        if (!ok) {
            return 1;
        }
        printf("wirekit-pq ok (refused connection reported)\n");
        return 0;
    }
    if (wk_pq_connect(dsn, NULL, &conn, &err) != WK_OK) {
        fprintf(stderr, "connect: %s\n", conn ? wk_pq_conn_message(conn) : err.msg);
        wk_pq_conn_free(conn);
        return 1;
    }
    int32_t x = 41;
    wk_pq_param p = {.kind = WK_PG_KIND_I32, .value = &x};
    PGresult *res = NULL;
    int ok = wk_pq_exec(conn, "select $1::int4 + 1", &p, 1, &res, &err) == WK_OK &&
             PQntuples(res) == 1 && PQgetlength(res, 0, 0) == 4 &&
             memcmp(PQgetvalue(res, 0, 0), "\0\0\0\x2a", 4) == 0;
    PQclear(res);
    wk_pq_conn_free(conn);
    if (!ok) {
        return 1;
    }
    printf("wirekit-pq ok (query)\n");
    return 0;
}
