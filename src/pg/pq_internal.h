/*
 * Internal state of wirekit-pq connections, shared by the pq_*.c files.
 */
#ifndef WK_PQ_INTERNAL_H
#define WK_PQ_INTERNAL_H

#include "wirekit/pq.h"

struct wk_pq_conn {
    PGconn *pg;
    wk_pg_registry *reg; /* the snapshot this connection started with */
    char message[512];   /* last libpq / server error */
    uint32_t timeout_ms; /* per-query deadline, 0 = none */
    bool broken;         /* a query overran its deadline and the server did not answer */
};

/* Sends `sql` (simple protocol; params when nparams > 0 is handled by the caller through
 * PQsendQueryParams) and waits for its last result within the connection's deadline. On a
 * timeout the query is cancelled; *res is NULL and WK_ERR_IO is returned. */
wk_status wk__pq_run(wk_pq_conn *c, const char *sql, PGresult **res, wk_error *err);

/* Waits for the result of a query already sent, within the connection's deadline. */
wk_status wk__pq_wait(wk_pq_conn *c, PGresult **res, wk_error *err);

/* Runs the catalog query and builds `*out` = base + the database's own types. */
wk_status wk__pq_load_catalog(wk_pq_conn *c, wk_pg_registry *base, wk_pg_registry **out,
                              wk_error *err);

#endif
