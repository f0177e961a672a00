/*
 * Example: a PostgreSQL query with binary parameters, its rows decoded into a C struct.
 *
 * wk_pq_exec encodes the parameters with wirekit's codecs (binary format) and asks for
 * binary results; a decode plan, built once per result shape, maps each column to a field of
 * the row struct (kind and offset), so a row is decoded with one call and no text parsing.
 * Needs libpq and wirekit-pq. The connection string comes from WK_PG_DSN (for example
 * "host=127.0.0.1 dbname=postgres"); without it the example exits 77 (skipped).
 * Run: WK_PG_DSN='host=127.0.0.1 dbname=postgres' ./pq_query
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <wirekit/pq.h>
#include <wirekit/wirekit.h>

/* One result row, as the application wants it. */
typedef struct row {
    int32_t id;
    wk_slice name;    /* text: a view into the PGresult (no copy) */
    double score;
    int64_t joined_us; /* timestamptz: microseconds since 2000-01-01 UTC */
} row;

int main(void)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL || *dsn == '\0') {
        printf("pq_query: WK_PG_DSN is not set; skipped\n");
        return 77;
    }
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    if (wk_pq_connect(dsn, NULL, &conn, &err) != WK_OK) {
        fprintf(stderr, "pq_query: %s\n", conn != NULL ? wk_pq_conn_message(conn) : err.msg);
        wk_pq_conn_free(conn);
        return 1;
    }

    /* Parameters: C values and their kinds; wirekit encodes them in binary. */
    int32_t count = 5;
    double factor = 1.5;
    wk_slice prefix = {"user-", 5};
    wk_pq_param params[] = {
        {WK_PG_KIND_I32, &count, 0},
        {WK_PG_KIND_F64, &factor, 0},
        {WK_PG_KIND_STR, &prefix, 0},
    };
    PGresult *res = NULL;
    if (wk_pq_exec(conn,
                   "SELECT g AS id, $3::text || g AS name, g * $2::float8 AS score,"
                   "       timestamptz '2024-01-01 00:00:00+00' + g * interval '1 day' AS joined"
                   "  FROM generate_series(1, $1::int4) AS g",
                   params, 3, &res, &err) != WK_OK) {
        fprintf(stderr, "pq_query: %s\n", wk_pq_conn_message(conn));
        PQclear(res);
        wk_pq_conn_free(conn);
        return 1;
    }

    /* The plan: column i -> kinds[i] at offsets[i] of `row`. */
    static const wk_pg_kind kinds[] = {WK_PG_KIND_I32, WK_PG_KIND_STR, WK_PG_KIND_F64,
                                       WK_PG_KIND_TIMESTAMP};
    static const size_t offsets[] = {offsetof(row, id), offsetof(row, name),
                                     offsetof(row, score), offsetof(row, joined_us)};
    wk_pg_plan *plan = NULL;
    if (wk_pq_plan(conn, res, kinds, offsets, &plan, &err) != WK_OK) {
        fprintf(stderr, "pq_query: plan: %s (column %zu)\n", err.msg, err.offset);
        PQclear(res);
        wk_pq_conn_free(conn);
        return 1;
    }
    int rc = 0;
    double total = 0;
    for (int i = 0; i < PQntuples(res); i++) {
        row r;
        bool nulls[4];
        if (wk_pq_decode_row(plan, res, i, &r, nulls, NULL, &err) != WK_OK) {
            fprintf(stderr, "pq_query: row %d: %s\n", i, err.msg);
            rc = 1;
            break;
        }
        printf("id=%d name=%.*s score=%.2f joined=%lld days after 2000-01-01\n", r.id,
               (int)r.name.len, r.name.ptr, r.score, (long long)(r.joined_us / 86400000000LL));
        total += r.score;
    }
    printf("%d rows, total score %.2f\n", PQntuples(res), total);
    /* 1.5 * (1 + 2 + 3 + 4 + 5) */
    if (rc == 0 && (PQntuples(res) != count || total != factor * count * (count + 1) / 2)) {
        rc = 1;
    }
    wk_pg_plan_free(plan);
    PQclear(res);
    wk_pq_conn_free(conn);
    return rc;
}
