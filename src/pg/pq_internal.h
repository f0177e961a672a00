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
};

/* Runs the catalog query and builds `*out` = base + the database's own types. */
wk_status wk__pq_load_catalog(wk_pq_conn *c, wk_pg_registry *base, wk_pg_registry **out,
                              wk_error *err);

#endif
