/*
 * Suite "pg", part 3 (needs WK_PG_DSN): decode a 100,000-row result of mixed types into the
 * same C row struct three ways -- wirekit's plan over the binary result, libpqtypes' PQgetf
 * with a prepared spec over the same binary result, and libpq's text result with
 * strtol/strtod -- and compare a checksum of every decoded value. Only decoding is timed; the
 * results are fetched once beforehand.
 *
 * A second case decodes a result of the types read as PostgreSQL text (geometry, ranges,
 * multiranges, macaddr, pg_lsn, bit strings, xid8) from the binary result into their text
 * output, against copying the same text out of libpq's text result; the two outputs must be
 * byte-identical (their checksums are compared).
 *
 * The numeric column starts at 1.01: libpqtypes 1.5.1 fails on binary numerics below 1
 * ("out buffer is too small" for 0.01), so smaller values would leave it nothing to decode.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <libpqtypes.h>

#include "bench.h"
#include "wirekit/pq.h"

#define ROWS 100000

static const char query[] =
    "SELECT i::int4 AS id, (i::int8 * 1000003) AS big, (i * 0.25)::float8 AS f, "
    "(1 + i / 100.0)::numeric(12,2) AS price, 'name-' || i AS name, "
    "timestamptz '2000-01-01 00:00:00+00' + i * interval '1 second' "
    "  + (i % 1000) * interval '1 millisecond' AS at, "
    "(i % 3 = 0) AS flag FROM generate_series(1, %d) AS i";

typedef struct row {
    int32_t id;
    int64_t big;
    double f;
    double price;
    wk_slice name;
    int64_t at; /* microseconds since 2000-01-01 UTC */
    bool flag;
} row;

static uint64_t row_sum(const row *r)
{
    uint64_t s = (uint64_t)r->id + (uint64_t)r->big + (uint64_t)(int64_t)(r->f * 4) +
                 (uint64_t)llround(r->price * 100) + r->name.len + (uint64_t)r->at + r->flag;
    if (r->name.len > 0) {
        s += (uint8_t)r->name.ptr[r->name.len - 1];
    }
    return s;
}

typedef struct ctx {
    const wk_pg_plan *plan;
    PGresult *bin;
    PGresult *text;
    int rows;
} ctx;

static uint64_t run_wirekit(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < c->rows; i++) {
            row r;
            bool nulls[7];
            if (wk_pq_decode_row(c->plan, c->bin, i, &r, nulls, NULL, NULL) != WK_OK) {
                return 0;
            }
            sum += row_sum(&r);
        }
    }
    return sum;
}

static uint64_t run_pqtypes(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < c->rows; i++) {
            PGint4 id;
            PGint8 big;
            PGfloat8 f;
            PGnumeric num;
            PGtext name;
            PGtimestamp ts;
            PGbool flag;
            if (!PQgetf(c->bin, i, "@wk_row", 0, &id, 1, &big, 2, &f, 3, &num, 4, &name, 5, &ts,
                        6, &flag)) {
                fprintf(stderr, "PQgetf: %s\n", PQgeterror());
                return 0;
            }
            row r;
            r.id = id;
            r.big = big;
            r.f = f;
            r.price = strtod(num, NULL);
            r.name.ptr = name;
            r.name.len = strlen(name);
            r.at = (ts.epoch - INT64_C(946684800)) * 1000000 + ts.time.usec;
            r.flag = flag != 0;
            sum += row_sum(&r);
        }
    }
    return sum;
}

/* "2000-01-01 00:00:01.001+00" (TimeZone=UTC) -> microseconds since 2000-01-01. */
static int64_t parse_ts(const char *s)
{
    char *e;
    long y = strtol(s, &e, 10), mo = strtol(e + 1, &e, 10), d = strtol(e + 1, &e, 10);
    long h = strtol(e + 1, &e, 10), mi = strtol(e + 1, &e, 10), sec = strtol(e + 1, &e, 10);
    long us = 0;
    if (*e == '.') {
        char *f = e + 1;
        us = strtol(f, &e, 10);
        for (long n = e - f; n < 6; n++) {
            us *= 10;
        }
    }
    /* days_from_civil (Howard Hinnant), relative to 2000-01-01 */
    y -= mo <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long days = era * 146097 + doe - 719468 - 10957;
    return ((int64_t)days * 86400 + h * 3600 + mi * 60 + sec) * 1000000 + us;
}

static uint64_t run_text(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < c->rows; i++) {
            row r;
            r.id = (int32_t)strtol(PQgetvalue(c->text, i, 0), NULL, 10);
            r.big = strtoll(PQgetvalue(c->text, i, 1), NULL, 10);
            r.f = strtod(PQgetvalue(c->text, i, 2), NULL);
            r.price = strtod(PQgetvalue(c->text, i, 3), NULL);
            r.name.ptr = PQgetvalue(c->text, i, 4);
            r.name.len = (size_t)PQgetlength(c->text, i, 4);
            r.at = parse_ts(PQgetvalue(c->text, i, 5));
            r.flag = PQgetvalue(c->text, i, 6)[0] == 't';
            sum += row_sum(&r);
        }
    }
    return sum;
}

/* ---- the rendered types ---- */

#define NEW_COLS 8
static const char query_new[] =
    "SELECT point(i, i * 0.5) AS p, int4range(i, i + 10) AS r, "
    "int4multirange(int4range(i, i + 2), int4range(i + 5, i + 9)) AS mr, "
    "('08:00:2b:01:02:' || lpad(to_hex(i %% 256), 2, '0'))::macaddr AS mac, "
    "(to_hex(i) || '/' || to_hex(i * 7))::pg_lsn AS lsn, i::bit(20)::varbit AS bits, "
    "i::text::xid8 AS x, circle(point(i, 0), i) AS c FROM generate_series(1, %d) AS i";

typedef struct ctx_new {
    const wk_pg_plan *plan;
    PGresult *bin;
    PGresult *text;
    int rows;
    wk_buf cols[NEW_COLS];
} ctx_new;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211u;
    }
    return h;
}

static uint64_t run_new_wirekit(void *arg, uint64_t iters)
{
    ctx_new *c = arg;
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < c->rows; i++) {
            bool nulls[NEW_COLS];
            for (int k = 0; k < NEW_COLS; k++) {
                wk_buf_clear(&c->cols[k]);
            }
            if (wk_pq_decode_row(c->plan, c->bin, i, c->cols, nulls, NULL, NULL) != WK_OK) {
                return 0;
            }
            for (int k = 0; k < NEW_COLS; k++) {
                sum += fnv(1469598103934665603u, c->cols[k].data, c->cols[k].len);
            }
        }
    }
    return sum;
}

static uint64_t run_new_text(void *arg, uint64_t iters)
{
    ctx_new *c = arg;
    uint64_t sum = 0;
    for (uint64_t it = 0; it < iters; it++) {
        for (int i = 0; i < c->rows; i++) {
            for (int k = 0; k < NEW_COLS; k++) {
                wk_buf_clear(&c->cols[k]);
                if (wk_buf_append(&c->cols[k], PQgetvalue(c->text, i, k),
                                  (size_t)PQgetlength(c->text, i, k)) != WK_OK) {
                    return 0;
                }
                sum += fnv(1469598103934665603u, c->cols[k].data, c->cols[k].len);
            }
        }
    }
    return sum;
}

static int bench_new_types(wk_bench *b, wk_pq_conn *conn, int rows)
{
    char sql[1024];
    snprintf(sql, sizeof sql, query_new, rows);
    PGconn *pg = wk_pq_pgconn(conn);
    ctx_new c;
    memset(&c, 0, sizeof c);
    c.rows = rows;
    c.bin = PQexecParams(pg, sql, 0, NULL, NULL, NULL, NULL, 1);
    c.text = PQexecParams(pg, sql, 0, NULL, NULL, NULL, NULL, 0);
    wk_pg_kind kinds[NEW_COLS];
    size_t offs[NEW_COLS];
    for (int k = 0; k < NEW_COLS; k++) {
        kinds[k] = WK_PG_KIND_TEXT;
        offs[k] = (size_t)k * sizeof(wk_buf);
        wk_buf_init(&c.cols[k], NULL, 0);
    }
    wk_pg_plan *plan = NULL;
    wk_error err = {0};
    int rc = 0;
    if (PQresultStatus(c.bin) != PGRES_TUPLES_OK || PQresultStatus(c.text) != PGRES_TUPLES_OK ||
        PQntuples(c.bin) != rows || wk_pq_plan(conn, c.bin, kinds, offs, &plan, &err) != WK_OK) {
        wk_bench_fail(b, "pg result decode (new types): setup failed: %s %s",
                      PQerrorMessage(pg), err.msg != NULL ? err.msg : "");
        rc = 1;
    } else {
        c.plan = plan;
        uint64_t a = run_new_wirekit(&c, 1), t = run_new_text(&c, 1);
        if (a == 0 || a != t) {
            wk_bench_fail(b, "pg result decode (new types): outputs differ (wirekit %llu, "
                             "libpq text %llu)",
                          (unsigned long long)a, (unsigned long long)t);
            rc = 1;
        }
        uint64_t it = wk_bench_quick(b) ? 1 : 0;
        const char *cn = "result 100k rows x 8 text-rendered types";
        wk_bench_spec s1 = {cn, "wirekit", run_new_wirekit, &c, it, 0,
                            "binary result rendered to PostgreSQL text"};
        wk_bench_spec s2 = {cn, "libpq text", run_new_text, &c, it, 0,
                            "text result, copied out"};
        wk_bench_run(b, &s1);
        wk_bench_run(b, &s2);
    }
    wk_pg_plan_free(plan);
    for (int k = 0; k < NEW_COLS; k++) {
        wk_buf_free(&c.cols[k]);
    }
    PQclear(c.bin);
    PQclear(c.text);
    return rc;
}

int wk_bench_pg_result(wk_bench *b)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL) {
        wk_bench_say(b, "pg result decode: skipped (WK_PG_DSN is not set; start a server with "
                        "scripts/servers.sh start)");
        return 0;
    }
    int rows = wk_bench_quick(b) ? 2000 : ROWS;
    char sql[1024];
    snprintf(sql, sizeof sql, query, rows);
    wk_pq_conn *conn = NULL;
    wk_error err = {0};
    if (wk_pq_connect(dsn, NULL, &conn, &err) != WK_OK) {
        wk_bench_fail(b, "pg result decode: cannot connect: %s", wk_pq_conn_message(conn));
        wk_pq_conn_free(conn);
        return 1;
    }
    PGconn *pg = wk_pq_pgconn(conn);
    PQinitTypes(pg);
    /* Prepared specs are copied into results when they are created: prepare first. */
    int prepared =
        PQspecPrepare(pg, "wk_row", "%int4 %int8 %float8 %numeric %text %timestamptz %bool", 0);
    ctx c = {NULL, NULL, NULL, rows};
    c.bin = PQexecParams(pg, sql, 0, NULL, NULL, NULL, NULL, 1);
    c.text = PQexecParams(pg, sql, 0, NULL, NULL, NULL, NULL, 0);
    int rc = 0;
    wk_pg_plan *plan = NULL;
    static const wk_pg_kind kinds[7] = {WK_PG_KIND_I32, WK_PG_KIND_I64, WK_PG_KIND_F64,
                                        WK_PG_KIND_F64, WK_PG_KIND_STR, WK_PG_KIND_TIMESTAMP,
                                        WK_PG_KIND_BOOL};
    static const size_t offs[7] = {offsetof(row, id),   offsetof(row, big),
                                   offsetof(row, f),    offsetof(row, price),
                                   offsetof(row, name), offsetof(row, at),
                                   offsetof(row, flag)};
    if (PQresultStatus(c.bin) != PGRES_TUPLES_OK || PQresultStatus(c.text) != PGRES_TUPLES_OK ||
        PQntuples(c.bin) != rows || !prepared ||
        wk_pq_plan(conn, c.bin, kinds, offs, &plan, &err) != WK_OK) {
        wk_bench_fail(b, "pg result decode: setup failed: %s %s", PQerrorMessage(pg),
                      PQgeterror());
        rc = 1;
    } else {
        c.plan = plan;
        uint64_t a = run_wirekit(&c, 1), p = run_pqtypes(&c, 1), t = run_text(&c, 1);
        if (a == 0 || a != p || a != t) {
            wk_bench_fail(b, "pg result decode: checksums differ (wirekit %llu, libpqtypes "
                             "%llu, libpq text %llu)",
                          (unsigned long long)a, (unsigned long long)p, (unsigned long long)t);
            rc = 1;
        }
        uint64_t it = wk_bench_quick(b) ? 1 : 0;
        const char *cn = "result 100k rows x 7 cols";
        wk_bench_spec s1 = {cn, "wirekit", run_wirekit, &c, it, 0,
                            "binary result, plan built once", 0};
        wk_bench_spec s2 = {cn, "libpqtypes", run_pqtypes, &c, it, 0,
                            "binary result, PQgetf with a prepared spec", 0};
        wk_bench_spec s3 = {cn, "libpq text", run_text, &c, it, 0,
                            "text result, strtol/strtod", 0};
        wk_bench_peer(b, "libpqtypes", "libpqtypes: Debian shared library, distribution build "
                                       "(-O2)");
        wk_bench_peer(b, "libpq text", "libpq 15: Debian shared library, distribution build "
                                       "(-O2)");
        wk_bench_add(b, &s1);
        wk_bench_add(b, &s2);
        wk_bench_add(b, &s3);
        wk_bench_flush(b);
    }
    wk_pg_plan_free(plan);
    PQclear(c.bin);
    PQclear(c.text);
    if (rc == 0) {
        rc = bench_new_types(b, conn, rows);
    }
    wk_pq_conn_free(conn);
    return rc;
}
