/*
 * The connection pool (wk_pq_pool_*) on the shared server (WK_PG_DSN): checkout up to N and
 * a deadline past it, a terminated backend replaced at checkout, a connection given back
 * inside a transaction closed, a connection idle past health_check_ms checked by a round
 * trip, a first connect that fails reported by wk_pq_pool_new, the prepared statements of a
 * reconnected connection prepared again; and the cache loader over it
 * (wk_pq_loader_load): a row into the struct, no row as a negative cache entry, more than one
 * row, a server error and another schema as errors that are not cached. The restart and
 * termination storm with threads is test_pq_pool_faults (a private server).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pg_test_conn.h"
#include "wirekit/cache.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn; /* the test's own connection, for terminating the pool's backends */

static wk_pq_pool *new_pool(size_t size, uint32_t health_ms)
{
    wk_pq_pool_opts o = {0};
    o.dsn = getenv("WK_PG_DSN");
    o.size = size;
    o.health_check_ms = health_ms;
    wk_pq_pool *p = NULL;
    wk_error err = {0};
    if (wk_pq_pool_new(&o, &p, &err) != WK_OK) {
        fprintf(stderr, "pool: %s\n", err.msg);
        wk_pq_pool_free(p);
        p = NULL;
    }
    return p;
}

/* The backend's answer to SELECT 1 on `c` (false on any failure). */
static bool answers(wk_pq_conn *c)
{
    PGresult *r = NULL;
    wk_status st = wk_pq_exec(c, "SELECT 1", NULL, 0, &r, NULL);
    bool ok = st == WK_OK && PQntuples(r) == 1;
    PQclear(r);
    return ok;
}

WK_TEST(test_pq_pool_hands_out_n_connections_then_times_out_until_one_is_given_back)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(2, 0);
    CHECK(p != NULL);
    wk_pq_conn *a = NULL, *b = NULL, *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &a, &err));
    CHECK_OK(wk_pq_pool_acquire(p, 0, &b, &err));
    CHECK(a != b && answers(a) && answers(b));
    CHECK(PQbackendPID(wk_pq_pgconn(a)) != PQbackendPID(wk_pq_pgconn(b)));
    CHECK_STATUS(wk_pq_pool_acquire(p, 100, &c, &err), WK_ERR_IO);
    CHECK(c == NULL);
    wk_pq_pool_release(p, b);
    CHECK_OK(wk_pq_pool_acquire(p, 100, &c, &err));
    CHECK(c == b); /* the same connection, kept */
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    CHECK_EQ(s.size, 2);
    CHECK_EQ(s.open, 2);
    CHECK_EQ(s.busy, 2);
    CHECK_EQ(s.connects, 2);
    CHECK_EQ(s.waits, 1);
    wk_pq_pool_release(p, a);
    wk_pq_pool_release(p, c);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_pool_replaces_a_terminated_backend_at_checkout)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(1, 0);
    CHECK(p != NULL);
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    int pid = PQbackendPID(wk_pq_pgconn(c));
    wk_pq_pool_release(p, c);
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d, 10000)", pid);
    CHECK(pg_test_exec(conn, sql)); /* waits (up to 10 s) until the backend is gone */
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    CHECK(PQbackendPID(wk_pq_pgconn(c)) != pid);
    CHECK(answers(c)); /* the first request after the kill succeeds */
    wk_pq_pool_release(p, c);
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    CHECK_EQ(s.discarded, 1);
    CHECK_EQ(s.connects, 2);
    CHECK_EQ(s.open, 1);
    wk_pq_pool_free(p);
}

/* Runs "SELECT $1::int4 + 1" in a one-statement pipeline (a prepared statement of the
 * connection's cache); the answer, or -1. */
static int pipelined(wk_pq_conn *c)
{
    wk_pq_pipeline *pl = NULL;
    int32_t v = 41;
    wk_pq_param prm = {WK_PG_KIND_I32, &v, 0};
    int got = -1;
    wk_pq_stmt_result r;
    if (wk_pq_pipeline_begin(c, &pl, NULL) != WK_OK) {
        return -1;
    }
    if (wk_pq_pipeline_add(pl, "SELECT $1::int4 + 1", &prm, 1, NULL) == WK_OK &&
        wk_pq_pipeline_next(pl, &r, NULL) == WK_OK && r.state == WK_PQ_STMT_OK &&
        PQntuples(r.res) == 1) {
        /* a prepared statement's result is binary (int4, big-endian), an unprepared one's
         * text */
        const unsigned char *b = (const unsigned char *)PQgetvalue(r.res, 0, 0);
        got = PQfformat(r.res, 0) == 1
                  ? (int)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3])
                  : (int)strtol((const char *)b, NULL, 10);
    }
    return wk_pq_pipeline_end(pl, NULL) == WK_OK ? got : -1;
}

WK_TEST(test_pq_pool_rebuilds_the_prepared_statement_cache_after_a_reconnect)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(1, 0);
    CHECK(p != NULL);
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    CHECK_EQ(pipelined(c), 42);
    CHECK_EQ(pipelined(c), 42);
    wk_pq_stmt_cache_stats st;
    wk_pq_get_stmt_cache_stats(c, &st);
    CHECK(st.size == 1 && st.misses == 1 && st.hits == 1);
    int pid = PQbackendPID(wk_pq_pgconn(c));
    wk_pq_pool_release(p, c);
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT pg_terminate_backend(%d, 10000)", pid);
    CHECK(pg_test_exec(conn, sql));
    /* the new session has none of the old one's statements: they are prepared again */
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    CHECK(PQbackendPID(wk_pq_pgconn(c)) != pid);
    CHECK_EQ(pipelined(c), 42);
    wk_pq_get_stmt_cache_stats(c, &st);
    CHECK(st.size == 1 && st.misses == 1 && st.hits == 0);
    CHECK_EQ(pipelined(c), 42);
    wk_pq_pool_release(p, c);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_pool_closes_a_connection_given_back_inside_a_transaction)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(1, 0);
    CHECK(p != NULL);
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    int pid = PQbackendPID(wk_pq_pgconn(c));
    PGresult *r = NULL;
    CHECK_OK(wk_pq_exec(c, "BEGIN", NULL, 0, &r, &err));
    PQclear(r);
    wk_pq_pool_release(p, c); /* an open transaction must not reach the next user */
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    CHECK(PQbackendPID(wk_pq_pgconn(c)) != pid);
    CHECK(PQtransactionStatus(wk_pq_pgconn(c)) == PQTRANS_IDLE);
    wk_pq_pool_release(p, c);
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    CHECK_EQ(s.discarded, 1);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_pool_checks_a_connection_idle_past_the_health_interval_by_a_round_trip)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(1, 50);
    CHECK(p != NULL);
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    wk_pq_pool_release(p, c);
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err)); /* idle < 50 ms: no round trip */
    wk_pq_pool_release(p, c);
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    uint64_t before = s.health_checks;
    nanosleep(&(struct timespec){0, 120 * 1000 * 1000}, NULL);
    CHECK_OK(wk_pq_pool_acquire(p, 0, &c, &err));
    CHECK(answers(c));
    wk_pq_pool_release(p, c);
    wk_pq_pool_get_stats(p, &s);
    CHECK_EQ(s.health_checks, before + 1);
    CHECK_EQ(s.connects, 1);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_pool_reports_a_first_connect_that_fails_and_tells_why)
{
    wk_pq_pool_opts o = {0};
    o.dsn = "host=127.0.0.1 port=1 user=nobody"; /* nothing listens on port 1 */
    o.size = 2;
    wk_pq_pool *p = NULL;
    wk_error err = {0};
    CHECK_STATUS(wk_pq_pool_new(&o, &p, &err), WK_ERR_CONNECT);
    CHECK(p != NULL); /* handed out so that the reason can be read */
    char why[256];
    size_t n = wk_pq_pool_last_error(p, why, sizeof why);
    CHECK_MSG(n > 0 && strstr(why, "127.0.0.1") != NULL, "last error: %s", why);
    wk_pq_conn *c = NULL;
    CHECK_STATUS(wk_pq_pool_acquire(p, 200, &c, &err), WK_ERR_CONNECT); /* still down */
    CHECK(c == NULL);
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(p, &s);
    CHECK(s.connect_failures >= 2 && s.open == 0 && s.busy == 0);
    wk_pq_pool_free(p);
    p = NULL;
    o.size = 2000;
    CHECK_STATUS(wk_pq_pool_new(&o, &p, &err), WK_ERR_LIMIT);
}

typedef struct item {
    char *name;
    int64_t qty;
    bool has_qty;
    wk_value attrs;
} item;

WK_SCHEMA_DEFINE_STATIC(item_schema, item, "item", 1,
                        WK_FIELD(item, name, "name", WK_SK_STR, WK_REQUIRED),
                        WK_FIELD_NULLABLE(item, qty, has_qty, "qty", WK_SK_I64, 0),
                        WK_FIELD(item, attrs, "attrs", WK_SK_VALUE, 0));

WK_SCHEMA_DEFINE_STATIC(other_schema, item, "other", 1,
                        WK_FIELD(item, name, "name", WK_SK_STR, WK_REQUIRED));

static wk_pq_loader *new_loader(wk_pq_pool *p, const char *sql)
{
    wk_pq_loader_opts o = {0};
    o.pool = p;
    o.sql = sql;
    o.schema = &item_schema;
    wk_pq_loader *l = NULL;
    return wk_pq_loader_new(&o, &l, NULL) == WK_OK ? l : NULL;
}

static const char items_sql[] =
    "SELECT name, qty, attrs FROM (VALUES (1, 'bolt', 12::int8, '{\"w\": 1.5, \"n\": 3}'::jsonb), "
    "(2, 'nut', NULL, '[]'), (3, 'a', 1, '{}'), (3, 'b', 2, '{}')) t(id, name, qty, attrs) "
    "WHERE id = $1::int4";

WK_TEST(test_pq_loader_decodes_the_row_and_caches_no_row_as_not_found)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(2, 0);
    CHECK(p != NULL);
    wk_pq_loader *l = new_loader(p, items_sql);
    CHECK(l != NULL);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    item it;
    memset(&it, 0, sizeof it);
    wk_error err = {0};
    CHECK_OK(wk_pq_loader_load(l, &item_schema, "1", 1, &it, &arena, &err));
    CHECK_STR(it.name, "bolt");
    CHECK(it.has_qty && it.qty == 12);
    const wk_value *w = wk_value_map_get(&it.attrs, "w", 1);
    const wk_value *n = wk_value_map_get(&it.attrs, "n", 1);
    CHECK(w != NULL && w->type == WK_VAL_FLOAT && w->u.f == 1.5);
    CHECK(n != NULL && n->type == WK_VAL_UINT && n->u.u == 3);
    memset(&it, 0, sizeof it);
    CHECK_OK(wk_pq_loader_load(l, &item_schema, "2", 1, &it, &arena, &err));
    CHECK(!it.has_qty && it.qty == 0 && it.attrs.type == WK_VAL_ARRAY);
    CHECK_STATUS(wk_pq_loader_load(l, &item_schema, "9", 1, &it, &arena, &err),
                 WK_ERR_NOT_FOUND);

    /* through the cache: "no row" is kept as a negative entry, the loader is not asked again */
    wk_cache_config cfg = {0};
    cfg.negative_ttl_ms = 60000;
    wk_cache *cache = NULL;
    CHECK_OK(wk_cache_new(&cfg, &cache, &err));
    wk_cache_entry *ref = NULL;
    CHECK_STATUS(wk_cache_get(cache, &item_schema, "9", 1, wk_pq_loader_load, l, &ref, &err),
                 WK_ERR_NOT_FOUND);
    CHECK_STATUS(wk_cache_get(cache, &item_schema, "9", 1, wk_pq_loader_load, l, &ref, &err),
                 WK_ERR_NOT_FOUND);
    CHECK_OK(wk_cache_get(cache, &item_schema, "1", 1, wk_pq_loader_load, l, &ref, &err));
    const item *cached = wk_cache_entry_object(ref);
    CHECK_STR(cached->name, "bolt");
    wk_cache_entry_unref(ref);
    wk_cache_stats s;
    wk_cache_get_stats(cache, &s);
    CHECK_EQ(s.loads, 2); /* "9" once (then the negative entry answered), "1" once */
    CHECK_EQ(s.load_not_found, 1);
    wk_cache_free(cache);
    wk_arena_free(&arena);
    wk_pq_loader_free(l);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_loader_reports_errors_as_errors_and_the_cache_keeps_none)
{
    NEED_CONN();
    wk_pq_pool *p = new_pool(1, 0);
    CHECK(p != NULL);
    wk_pq_loader *l = new_loader(p, items_sql);
    wk_pq_loader *broken = new_loader(p, "SELECT name, qty, attrs FROM no_such_table WHERE id = $1");
    CHECK(l != NULL && broken != NULL);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    item it;
    memset(&it, 0, sizeof it);
    wk_error err = {0};
    /* two rows for one id, another schema, a statement the server refuses */
    CHECK_STATUS(wk_pq_loader_load(l, &item_schema, "3", 1, &it, &arena, &err), WK_ERR_STATE);
    CHECK_STATUS(wk_pq_loader_load(l, &other_schema, "1", 1, &it, &arena, &err), WK_ERR_ARG);
    CHECK_STATUS(wk_pq_loader_load(broken, &item_schema, "1", 1, &it, &arena, &err),
                 WK_ERR_SERVER);
    /* an id the server cannot read as int4 is the server's error too, not "not found" */
    CHECK_STATUS(wk_pq_loader_load(l, &item_schema, "x", 1, &it, &arena, &err), WK_ERR_SERVER);
    wk_cache_config cfg = {0};
    cfg.negative_ttl_ms = 60000;
    wk_cache *cache = NULL;
    CHECK_OK(wk_cache_new(&cfg, &cache, &err));
    wk_cache_entry *ref = NULL;
    for (int i = 0; i < 2; i++) {
        CHECK_STATUS(wk_cache_get(cache, &item_schema, "1", 1, wk_pq_loader_load, broken, &ref,
                                  &err),
                     WK_ERR_SERVER);
    }
    wk_cache_stats s;
    wk_cache_get_stats(cache, &s);
    CHECK_EQ(s.loads, 2); /* an error is not cached: the loader was asked both times */
    CHECK_EQ(s.load_errors, 2);
    /* the pool's connection survived every error and serves the next load */
    CHECK_OK(wk_pq_loader_load(l, &item_schema, "1", 1, &it, &arena, &err));
    wk_pq_pool_stats ps;
    wk_pq_pool_get_stats(p, &ps);
    CHECK_EQ(ps.connects, 1);
    wk_cache_free(cache);
    wk_arena_free(&arena);
    wk_pq_loader_free(broken);
    wk_pq_loader_free(l);
    wk_pq_pool_free(p);
}

WK_TEST(test_pq_struct_sql_spells_the_schema_s_select_and_upsert)
{
    wk_buf b;
    wk_buf_init(&b, NULL, 0);
    CHECK_OK(wk_pq_struct_sql(&item_schema, "app.items", "id", WK_PQ_SQL_SELECT, &b, NULL));
    CHECK_MEM(b.data, b.len, "SELECT \"name\", \"qty\", \"attrs\" FROM app.items WHERE id = $1",
              strlen("SELECT \"name\", \"qty\", \"attrs\" FROM app.items WHERE id = $1"));
    CHECK(b.data[b.len] == '\0');
    b.len = 0;
    CHECK_OK(wk_pq_struct_sql(&item_schema, "items", "id", WK_PQ_SQL_UPSERT, &b, NULL));
    const char *want = "INSERT INTO items (id, \"name\", \"qty\", \"attrs\") VALUES ($1, $2, $3, "
                       "$4) ON CONFLICT (id) DO UPDATE SET \"name\" = $2, \"qty\" = $3, "
                       "\"attrs\" = $4";
    CHECK_MEM(b.data, b.len, want, strlen(want));
    /* refused: a value schema, no table, another statement; a cap leaves the buffer as it was */
    WK_SCHEMA_DEFINE_VALUE(doc_schema, "doc", 1);
    CHECK_STATUS(wk_pq_struct_sql(&doc_schema, "t", "id", WK_PQ_SQL_SELECT, &b, NULL),
                 WK_ERR_ARG);
    CHECK_STATUS(wk_pq_struct_sql(&item_schema, NULL, "id", WK_PQ_SQL_SELECT, &b, NULL),
                 WK_ERR_ARG);
    CHECK_STATUS(wk_pq_struct_sql(&item_schema, "t", "id", 7, &b, NULL), WK_ERR_ARG);
    wk_buf small;
    wk_buf_init(&small, NULL, 16);
    CHECK_STATUS(wk_pq_struct_sql(&item_schema, "t", "id", WK_PQ_SQL_UPSERT, &small, NULL),
                 WK_ERR_LIMIT);
    CHECK_EQ(small.len, 0u);
    wk_buf_free(&small);
    wk_buf_free(&b);
}

WK_TEST(test_pq_pool_upsert_writes_what_a_table_loader_reads_back)
{
    NEED_CONN();
    PGresult *r = NULL;
    CHECK_OK(wk_pq_exec(conn, "DROP TABLE IF EXISTS wk_test_upsert", NULL, 0, &r, NULL));
    PQclear(r);
    CHECK_OK(wk_pq_exec(conn, "CREATE TABLE wk_test_upsert (id int8 PRIMARY KEY, name text "
                        "NOT NULL, qty int8, attrs jsonb NOT NULL)", NULL, 0, &r, NULL));
    PQclear(r);
    wk_pq_pool *p = new_pool(2, 0);
    CHECK(p != NULL);
    wk_pq_loader_opts o = {.pool = p, .schema = &item_schema, .table = "wk_test_upsert"};
    wk_pq_loader *l = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_loader_new(&o, &l, &err)); /* key "id" by default */
    wk_pair pair = {0};
    wk_value_set_str(&pair.key, "w", 1);
    wk_value_set_int(&pair.val, 2);
    item in = {.name = (char *)"bolt", .qty = 7, .has_qty = true};
    in.attrs.type = WK_VAL_MAP;
    in.attrs.len = 1;
    in.attrs.u.pairs = &pair;
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    item out;
    for (int round = 0; round < 2; round++) { /* an insert, then an update of the same row */
        CHECK_OK(wk_pq_pool_upsert(p, "wk_test_upsert", "id", "5", 1, &item_schema, &in, &err));
        memset(&out, 0, sizeof out);
        CHECK_OK(wk_pq_loader_load(l, &item_schema, "5", 1, &out, &arena, &err));
        CHECK_STR(out.name, in.name);
        CHECK(out.has_qty == in.has_qty && out.qty == (in.has_qty ? 7 : 0));
        const wk_value *w = wk_value_map_get(&out.attrs, "w", 1);
        CHECK(w != NULL && w->type == WK_VAL_UINT && w->u.u == 2);
        in.name = (char *)"nut";
        in.has_qty = false; /* SQL NULL */
    }
    CHECK_STATUS(wk_pq_loader_load(l, &item_schema, "6", 1, &out, &arena, &err),
                 WK_ERR_NOT_FOUND);
    /* the server's refusal is the call's: a key that is not a number, a table that is not */
    CHECK_STATUS(wk_pq_pool_upsert(p, "wk_test_upsert", "id", "x", 1, &item_schema, &in, &err),
                 WK_ERR_SERVER);
    CHECK_STATUS(wk_pq_pool_upsert(p, "wk_no_such_table", "id", "1", 1, &item_schema, &in,
                                   &err),
                 WK_ERR_SERVER);
    wk_pq_loader_opts none = {.pool = p, .schema = &item_schema};
    wk_pq_loader *l2 = NULL;
    CHECK_STATUS(wk_pq_loader_new(&none, &l2, &err), WK_ERR_ARG);
    wk_arena_free(&arena);
    wk_pq_loader_free(l);
    wk_pq_pool_free(p);
    CHECK_OK(wk_pq_exec(conn, "DROP TABLE wk_test_upsert", NULL, 0, &r, NULL));
    PQclear(r);
}
