/*
 * The prepared statements of a connection's pipelines, cached by statement text and
 * parameter types (pq_stmt_cache.c), as the pipelines (pq_pipeline*.c) use them.
 */
#ifndef WK_PQ_STMT_CACHE_H
#define WK_PQ_STMT_CACHE_H

#include "pq/pq_internal.h"

#define WK__PQ_STMT_NAME 24

/* One cached statement. A slot is free when sql is NULL. */
typedef struct wk__pq_stmt {
    uint64_t hash;     /* of the text and parameter types */
    char *sql;         /* the text, then the parameter types (one allocation) */
    const Oid *types;  /* into the same block */
    size_t ntypes;
    uint64_t last_use; /* LRU tick */
    uint64_t batch;    /* the pipeline that last used it: not evicted while it runs */
    char name[WK__PQ_STMT_NAME]; /* "wk_s<n>", never reused on the connection */
    int format;        /* result format decided when it was described */
    bool ready;        /* prepared and described on the server */
} wk__pq_stmt;

typedef struct wk__pq_stmt_cache {
    wk__pq_stmt *slots;
    size_t cap, size;
    size_t last; /* the slot found or taken last (tried first) */
    uint64_t tick, next_id, batches;
    uint64_t hits, misses, evictions;
    char (*drop)[WK__PQ_STMT_NAME]; /* evicted names to DEALLOCATE with the next pipeline */
    size_t ndrop, drop_cap;
    bool open; /* a pipeline is running on the connection */
} wk__pq_stmt_cache;

/* The connection's cache, created on first use with the default capacity (NULL: no memory). */
wk__pq_stmt_cache *wk__pq_stmts(wk_pq_conn *c);

/* Finds the statement for (sql, types) or takes a slot for it (a free one, else the least
 * recently used one not used by `batch`, which is evicted and queued for DEALLOCATE).
 * *slot is its index, or -1 when every slot serves `batch` (or the capacity is 0): the
 * statement then goes unprepared. *hit tells whether it was prepared already. */
wk_status wk__pq_stmt_acquire(wk__pq_stmt_cache *sc, const char *sql, const Oid *types,
                              size_t n, uint64_t batch, long *slot, bool *hit, wk_error *err);

/* Forgets a slot; with `drop` and a statement the server has, queues its DEALLOCATE. */
void wk__pq_stmt_forget(wk__pq_stmt_cache *sc, long slot, bool drop);

#endif
