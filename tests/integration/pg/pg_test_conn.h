/*
 * The shared PostgreSQL server of the integration tests (WK_PG_DSN, started by
 * scripts/servers.sh): a connection made on first use, the NEED_CONN() guard that skips a
 * test when no server is configured, two one-line helpers for set-up statements, and a row
 * decoded to text through a plan.
 */
#ifndef WK_PG_TEST_CONN_H
#define WK_PG_TEST_CONN_H

#include <stdlib.h>

#include "wirekit/pq.h"
#include "wk_test.h"

/* Connects *conn to WK_PG_DSN when it is NULL (saying why on stderr when that fails) and
 * returns it (NULL: no connection). */
wk_pq_conn *pg_test_connect(wk_pq_conn **conn);

/* Runs `sql` (several statements allowed) through libpq; false (and the error on stderr)
 * when it fails. */
bool pg_test_exec(wk_pq_conn *c, const char *sql);

/* The first column of the first row of `sql` as a number (-1 when it fails). */
long pg_test_count(wk_pq_conn *c, const char *sql);

/* Decodes row 0 of `res` through a plan of `c` that asks every column as TEXT: cols[i]
 * (initialised here, freed by the caller) gets column i's PostgreSQL text and nulls[i] says
 * whether it is NULL; both hold PQnfields(res) entries. The plan's or the decoder's status,
 * with `err` filled. */
wk_status pg_test_decode_text_row(wk_pq_conn *c, const PGresult *res, wk_buf *cols, bool *nulls,
                                  wk_error *err);

/* Skips the test without WK_PG_DSN, fails it when the test file's `conn` cannot connect. */
#define NEED_CONN()                                                                       \
    do {                                                                                  \
        if (getenv("WK_PG_DSN") == NULL) {                                                \
            SKIP("WK_PG_DSN is not set (run scripts/servers.sh start)");                  \
        }                                                                                 \
        CHECK_MSG(pg_test_connect(&conn) != NULL, "cannot connect to %s",                 \
                  getenv("WK_PG_DSN"));                                                   \
    } while (0)

#endif
