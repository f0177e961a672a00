/*
 * Suite "pg", part 4 (needs WK_PG_DSN): a 100,000-row binary result of mixed types decoded
 * into a C struct three ways, interleaved: today's plan decode (wk_pq_decode_row into a row
 * struct of C kinds: the text column a view into the result, the timestamp as microseconds),
 * the same plus the glue a user writes to get a schema struct out of it (the name copied into
 * an arena as a NUL-terminated char *, the microseconds turned into a wk_timestamp), and
 * wk_pq_row_to_struct straight into the schema struct (which copies the name itself). The
 * plan decode is the baseline; the target is row-to-struct at most 1.1x its time.
 * Every side computes the same checksum of every value, compared before timing; only decoding
 * is timed (the result is fetched once beforehand); the arena is reset per row on the sides
 * that copy.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "wirekit/pq.h"

int wk_bench_pg_struct(wk_bench *b);

#define ROWS 100000

static const char query[] =
    "SELECT i::int4 AS id, (i::int8 * 1000003) AS big, (i * 0.25)::float8 AS f, "
    "(1 + i / 100.0)::numeric(12,2) AS price, 'name-' || i AS name, "
    "timestamptz '2000-01-01 00:00:00+00' + i * interval '1 second' "
    "  + (i % 1000) * interval '1 millisecond' AS at, "
    "(i % 3 = 0) AS flag FROM generate_series(1, %d) AS i";

/* The row struct of today's plan decode (C kinds). */
typedef struct prow {
    int32_t id;
    int64_t big;
    double f;
    double price;
    wk_slice name;
    int64_t at; /* microseconds since 2000-01-01 UTC */
    bool flag;
} prow;

/* The schema struct a service keeps (and caches). */
typedef struct srow {
    int32_t id;
    int64_t big;
    double f;
    double price;
    char *name;
    wk_timestamp at;
    bool flag;
} srow;

WK_SCHEMA_DEFINE_STATIC(srow_schema, srow, "srow", 1,
    WK_FIELD(srow, id, "id", WK_SK_I32, 0),
    WK_FIELD(srow, big, "big", WK_SK_I64, 0),
    WK_FIELD(srow, f, "f", WK_SK_F64, 0),
    WK_FIELD(srow, price, "price", WK_SK_F64, 0),
    WK_FIELD(srow, name, "name", WK_SK_STR, 0),
    WK_FIELD(srow, at, "at", WK_SK_TIMESTAMP, 0),
    WK_FIELD(srow, flag, "flag", WK_SK_BOOL, 0));

/* One checksum over a schema struct's values (every side ends with one). */
static uint64_t srow_sum(const srow *r)
{
    size_t len = strlen(r->name);
    uint64_t s = (uint64_t)r->id + (uint64_t)r->big + (uint64_t)(int64_t)(r->f * 4) +
                 (uint64_t)llround(r->price * 100) + len + (uint64_t)r->at.sec + r->at.nsec +
                 r->flag;
    if (len > 0) {
        s += (uint8_t)r->name[len - 1];
    }
    return s;
}

typedef struct ctx {
    const wk_pg_plan *plan;
    const wk_pq_struct_plan *splan;
    PGresult *bin;
    int rows;
    wk_arena arena;
} ctx;

/* The plan decode alone: the struct of C kinds (no copy), checksummed as the schema struct
 * would be (the name measured in place). */
static uint64_t run_plan(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < c->rows; i++) {
            prow r;
            bool nulls[7];
            if (wk_pq_decode_row(c->plan, c->bin, i, &r, nulls, NULL, NULL) != WK_OK) {
                return 0;
            }
            int64_t sec = r.at / 1000000;
            int64_t us = r.at % 1000000;
            sum += (uint64_t)r.id + (uint64_t)r.big + (uint64_t)(int64_t)(r.f * 4) +
                   (uint64_t)llround(r.price * 100) + r.name.len +
                   (uint64_t)(sec + 946684800) + (uint64_t)us * 1000u + r.flag;
            if (r.name.len > 0) {
                sum += (uint8_t)r.name.ptr[r.name.len - 1];
            }
        }
    }
    return sum;
}

/* The plan decode and the hand-written glue into the schema struct. */
static uint64_t run_plan_glue(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < c->rows; i++) {
            prow r;
            bool nulls[7];
            wk_arena_reset(&c->arena);
            if (wk_pq_decode_row(c->plan, c->bin, i, &r, nulls, NULL, NULL) != WK_OK) {
                return 0;
            }
            srow s;
            s.id = r.id;
            s.big = r.big;
            s.f = r.f;
            s.price = r.price;
            s.name = wk_arena_strndup(&c->arena, r.name.ptr, r.name.len);
            s.at.sec = r.at / 1000000 + 946684800;
            s.at.nsec = (uint32_t)(r.at % 1000000) * 1000u;
            s.flag = r.flag;
            if (s.name == NULL) {
                return 0;
            }
            sum += srow_sum(&s);
        }
    }
    return sum;
}

/* wk_pq_row_to_struct. */
static uint64_t run_struct(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < c->rows; i++) {
            srow s;
            wk_arena_reset(&c->arena);
            if (wk_pq_row_to_struct(c->splan, c->bin, i, &s, &c->arena, NULL) != WK_OK) {
                return 0;
            }
            sum += srow_sum(&s);
        }
    }
    return sum;
}

int wk_bench_pg_struct(wk_bench *b)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL) {
        wk_bench_say(b, "pg row into struct: skipped (WK_PG_DSN is not set; start a server "
                        "with scripts/servers.sh start)");
        return 0;
    }
    int rows = wk_bench_quick(b) ? 2000 : ROWS;
    char sql[1024];
    snprintf(sql, sizeof sql, query, rows);
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    if (wk_pq_connect(dsn, NULL, &conn, &err) != WK_OK) {
        wk_bench_fail(b, "pg row into struct: cannot connect: %s", wk_pq_conn_message(conn));
        wk_pq_conn_free(conn);
        return 1;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    c.rows = rows;
    wk_arena_init(&c.arena, NULL, 0);
    c.bin = PQexecParams(wk_pq_pgconn(conn), sql, 0, NULL, NULL, NULL, NULL, 1);
    static const wk_pg_kind kinds[7] = {WK_PG_KIND_I32, WK_PG_KIND_I64, WK_PG_KIND_F64,
                                        WK_PG_KIND_F64, WK_PG_KIND_STR, WK_PG_KIND_TIMESTAMP,
                                        WK_PG_KIND_BOOL};
    static const size_t offs[7] = {offsetof(prow, id),    offsetof(prow, big),
                                   offsetof(prow, f),     offsetof(prow, price),
                                   offsetof(prow, name),  offsetof(prow, at),
                                   offsetof(prow, flag)};
    wk_pg_plan *plan = NULL;
    wk_pq_struct_plan *splan = NULL;
    wk_schema_error serr;
    int rc = 0;
    if (PQresultStatus(c.bin) != PGRES_TUPLES_OK || PQntuples(c.bin) != rows ||
        wk_pq_plan(conn, c.bin, kinds, offs, &plan, &err) != WK_OK ||
        wk_pq_struct_plan_new(conn, c.bin, &srow_schema, 0, &splan, &serr) != WK_OK) {
        wk_bench_fail(b, "pg row into struct: setup failed: %s",
                      PQerrorMessage(wk_pq_pgconn(conn)));
        rc = 1;
    } else {
        c.plan = plan;
        c.splan = splan;
        uint64_t p = run_plan(&c, 1), g = run_plan_glue(&c, 1), s = run_struct(&c, 1);
        if (p == 0 || p != g || p != s) {
            wk_bench_fail(b, "pg row into struct: checksums differ (plan %llu, plan + glue "
                             "%llu, row to struct %llu)",
                          (unsigned long long)p, (unsigned long long)g, (unsigned long long)s);
            rc = 1;
        }
        uint64_t it = wk_bench_quick(b) ? 1 : 0;
        const char *cn = "row into struct 100k rows x 7 cols";
        wk_bench_spec s1 = {cn, "plan decode", run_plan, &c, it, 0,
                            "wk_pq_decode_row: C kinds, the text a view (baseline)",
                            WK_BENCH_BASELINE};
        wk_bench_spec s2 = {cn, "plan + glue", run_plan_glue, &c, it, 0,
                            "wk_pq_decode_row, then the name copied and the time converted by "
                            "hand",
                            0};
        wk_bench_spec s3 = {cn, "row to struct", run_struct, &c, it, 0,
                            "wk_pq_row_to_struct into the schema struct (name copied)", 0};
        wk_bench_add(b, &s1);
        wk_bench_add(b, &s2);
        wk_bench_add(b, &s3);
        wk_bench_flush(b);
    }
    wk_pq_struct_plan_free(splan);
    wk_pg_plan_free(plan);
    PQclear(c.bin);
    wk_arena_free(&c.arena);
    wk_pq_conn_free(conn);
    return rc;
}
