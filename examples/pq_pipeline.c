/*
 * Example: many statements in one round trip with a pipeline, then a batch where one fails.
 *
 * wk_pq_pipeline_add queues a statement with its parameters (encoded by wirekit, binary);
 * wk_pq_pipeline_next sends the whole batch on its first call and hands back each
 * statement's outcome in order; wk_pq_pipeline_end says whether the batch committed (a batch
 * is one transaction). The statements are prepared once per connection and reused by later
 * batches. When a statement fails, the server skips the rest: they come back ABORTED.
 * Needs libpq and wirekit-pq; the connection string comes from WK_PG_DSN (without it the
 * example exits 77, skipped).
 * Run: WK_PG_DSN='host=127.0.0.1 dbname=postgres' ./pq_pipeline
 */
#include <stdio.h>
#include <stdlib.h>

#include <wirekit/pq.h>
#include <wirekit/wirekit.h>

/* Queues INSERTs of ids first..last, then a SELECT of their sum; runs the batch and prints
 * what became of each statement that did not simply succeed. Returns the batch's status. */
static wk_status insert_batch(wk_pq_conn *conn, int32_t first, int32_t last, int64_t *sum)
{
    wk_pq_pipeline *p = NULL;
    wk_error err = {0};
    wk_status st = wk_pq_pipeline_begin(conn, &p, &err);
    if (st != WK_OK) {
        return st;
    }
    for (int32_t id = first; id <= last; id++) {
        wk_slice name = {"item", 4};
        wk_pq_param params[] = {{WK_PG_KIND_I32, &id, 0}, {WK_PG_KIND_STR, &name, 0}};
        wk_pq_pipeline_add(p, "INSERT INTO items VALUES ($1, $2)", params, 2, &err);
    }
    wk_pq_pipeline_add(p, "SELECT sum(id) FROM items", NULL, 0, &err);
    wk_pq_stmt_result r;
    size_t skipped = 0;
    wk_pq_stmt_state last_state = WK_PQ_STMT_OK;
    while (wk_pq_pipeline_next(p, &r, &err) == WK_OK) {
        if (r.state == WK_PQ_STMT_OK && PQntuples(r.res) == 1) {
            /* the SELECT: decode its one column through a plan */
            wk_pg_plan *plan = NULL;
            wk_pg_kind kind = WK_PG_KIND_I64;
            if (wk_pq_plan(conn, r.res, &kind, NULL, &plan, &err) == WK_OK) {
                wk_pq_decode_row(plan, r.res, 0, sum, NULL, NULL, &err);
            }
            wk_pg_plan_free(plan);
        } else if (r.state == WK_PQ_STMT_FAILED) {
            printf("  statement %zu failed: %s (SQLSTATE %s)\n", r.index, r.error->message,
                   r.error->sqlstate);
        } else if (r.state != WK_PQ_STMT_OK) {
            skipped++; /* ABORTED (or UNKNOWN, had the connection broken) */
            last_state = r.state;
        }
    }
    if (skipped > 0) {
        printf("  %zu more statements: %s\n", skipped, wk_pq_stmt_state_str(last_state));
    }
    return wk_pq_pipeline_end(p, &err);
}

int main(void)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL || *dsn == '\0') {
        printf("pq_pipeline: WK_PG_DSN is not set; skipped\n");
        return 77;
    }
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    if (wk_pq_connect(dsn, NULL, &conn, &err) != WK_OK) {
        fprintf(stderr, "pq_pipeline: %s\n", conn != NULL ? wk_pq_conn_message(conn) : err.msg);
        wk_pq_conn_free(conn);
        return 1;
    }
    PQclear(PQexec(wk_pq_pgconn(conn), "CREATE TEMP TABLE items (id int PRIMARY KEY, name "
                                       "text)"));

    /* 1,000 inserts and a SELECT: one round trip (two the first time: the statements are
     * prepared first) */
    int64_t sum = 0;
    wk_status st = insert_batch(conn, 1, 1000, &sum);
    printf("batch 1: %s, sum %lld\n", wk_status_str(st), (long long)sum);
    int rc = st == WK_OK && sum == 500500 ? 0 : 1;

    /* ids 901..1100: id 901 exists, so that INSERT fails (23505) and every later statement
     * is aborted; the batch is one transaction, so nothing of it stays */
    sum = 0;
    st = insert_batch(conn, 901, 1100, &sum);
    printf("batch 2: %s (%s)\n", wk_status_str(st), wk_pq_last_error(conn)->sqlstate);
    rc |= st == WK_ERR_SERVER ? 0 : 1;

    wk_pq_stmt_cache_stats cs;
    wk_pq_get_stmt_cache_stats(conn, &cs);
    printf("prepared statements: %zu, cache hits %llu, misses %llu\n", cs.size,
           (unsigned long long)cs.hits, (unsigned long long)cs.misses);
    wk_pq_conn_free(conn);
    return rc;
}
