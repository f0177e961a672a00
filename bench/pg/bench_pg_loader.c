/*
 * Suite "pg", part 4 (needs WK_PG_DSN): a cache miss served from PostgreSQL. One op loads one
 * user (username, password, a nullable age, enabled, a jsonb metadata map) by id into a C
 * struct, with strings and the metadata tree in an arena reset per op:
 *
 * - wirekit: wk_pq_loader_load, what wk_cache_get calls on a miss (a pooled connection
 *   taken and given back, the statement run with the id as $1, the row decoded through the
 *   loader's row -> struct plan);
 * - libpq PQexecParams: the same by hand on one connection (no pool): binary PQexecParams
 *   with the id as a text parameter, then each column decoded into the struct (strings
 *   copied into the arena, int4 and bool from their binary form, the jsonb document parsed
 *   with wk_json_decode_value as the loader's plan parses it);
 * - wirekit wk_cache_get (informative): the whole miss through a cache without tiers (the
 *   loader, plus the cache's MessagePack encode of the object and its entry).
 *
 * Ids cycle over the table's 1,000 rows so every op reads another row; both sides check that
 * the row they decoded is the one asked for (a checksum of every op's values is compared
 * before timing). The server is the same for every side and round trips dominate: the ratio
 * is what the library adds to a round trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "wirekit/cache.h"
#include "wirekit/json.h"
#include "wirekit/pq.h"

#define USERS 1000

typedef struct user {
    char *username;
    char *password;
    int32_t age;
    bool has_age;
    bool enabled;
    wk_value metadata;
} user;

WK_SCHEMA_DEFINE_STATIC(bench_user_schema, user, "bench_user", 1,
                        WK_FIELD(user, username, "username", WK_SK_STR, WK_REQUIRED),
                        WK_FIELD(user, password, "password", WK_SK_STR, WK_NULLABLE),
                        WK_FIELD_NULLABLE(user, age, has_age, "age", WK_SK_I32, 0),
                        WK_FIELD(user, enabled, "enabled", WK_SK_BOOL, 0),
                        WK_FIELD(user, metadata, "metadata", WK_SK_VALUE, 0));

typedef struct ctx {
    wk_pq_loader *loader;
    wk_cache *cache;
    PGconn *pg; /* the hand-written side's own connection */
    char sql[160];
    wk_arena arena;
    unsigned next; /* the next id, cycling over 1..USERS */
} ctx;

/* A checksum of what a user's fields hold, so that both sides are seen doing the same work. */
static uint64_t user_sum(const user *u)
{
    uint64_t s = strlen(u->username) + (u->password != NULL ? strlen(u->password) : 0) +
                 (u->has_age ? (uint64_t)u->age + 1000 : 0) + u->enabled;
    const wk_value *id = wk_value_map_get(&u->metadata, "id", 2);
    return s + (id != NULL && id->type == WK_VAL_UINT ? id->u.u : 0) + u->metadata.len;
}

static int id_text(ctx *c, char *buf, size_t cap)
{
    c->next = c->next % USERS + 1;
    return snprintf(buf, cap, "%u", c->next);
}

static uint64_t run_loader(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        char id[16];
        int n = id_text(c, id, sizeof id);
        user u;
        memset(&u, 0, sizeof u);
        if (wk_pq_loader_load(c->loader, &bench_user_schema, id, (size_t)n, &u, &c->arena,
                              NULL) != WK_OK) {
            return 0;
        }
        sum += user_sum(&u);
        wk_arena_reset(&c->arena);
    }
    return sum;
}

static uint64_t run_cache_get(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        char id[16];
        int n = id_text(c, id, sizeof id);
        wk_cache_entry *ref = NULL;
        if (wk_cache_get(c->cache, &bench_user_schema, id, (size_t)n, wk_pq_loader_load,
                         c->loader, &ref, NULL) != WK_OK) {
            return 0;
        }
        sum += user_sum(wk_cache_entry_object(ref));
        wk_cache_entry_unref(ref);
    }
    return sum;
}

static uint32_t be32(const char *p)
{
    const unsigned char *b = (const unsigned char *)p;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

/* The hand-written loader: binary PQexecParams and a decode of each column by hand. */
static bool load_by_hand(ctx *c, const char *id, user *u)
{
    const char *vals[1] = {id};
    PGresult *r = PQexecParams(c->pg, c->sql, 1, NULL, vals, NULL, NULL, 1);
    bool ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && PQnfields(r) == 5;
    if (ok) {
        u->username = wk_arena_strndup(&c->arena, PQgetvalue(r, 0, 0),
                                       (size_t)PQgetlength(r, 0, 0));
        u->password = PQgetisnull(r, 0, 1)
                          ? NULL
                          : wk_arena_strndup(&c->arena, PQgetvalue(r, 0, 1),
                                             (size_t)PQgetlength(r, 0, 1));
        u->has_age = !PQgetisnull(r, 0, 2) && PQgetlength(r, 0, 2) == 4;
        u->age = u->has_age ? (int32_t)be32(PQgetvalue(r, 0, 2)) : 0;
        u->enabled = PQgetlength(r, 0, 3) == 1 && PQgetvalue(r, 0, 3)[0] != 0;
        /* binary jsonb: a version byte (1), then the document's text */
        const char *j = PQgetvalue(r, 0, 4);
        int jl = PQgetlength(r, 0, 4);
        wk_value *doc = NULL;
        ok = u->username != NULL && jl > 1 && j[0] == 1 &&
             wk_json_decode_value(j + 1, (size_t)jl - 1, NULL, &c->arena, &doc, NULL, NULL) ==
                 WK_OK;
        if (ok) {
            u->metadata = *doc;
        }
    }
    PQclear(r);
    return ok;
}

static uint64_t run_libpq(void *arg, uint64_t iters)
{
    ctx *c = arg;
    uint64_t sum = 0;
    for (uint64_t i = 0; i < iters; i++) {
        char id[16];
        (void)id_text(c, id, sizeof id);
        user u;
        memset(&u, 0, sizeof u);
        if (!load_by_hand(c, id, &u)) {
            return 0;
        }
        sum += user_sum(&u);
        wk_arena_reset(&c->arena);
    }
    return sum;
}

/* Runs `sql` on the hand-written side's connection; false (and the error told) on failure. */
static bool setup(wk_bench *b, PGconn *pg, const char *sql)
{
    PGresult *r = PQexec(pg, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
    if (!ok) {
        wk_bench_fail(b, "pg loader: %s: %s", sql, PQresultErrorMessage(r));
    }
    PQclear(r);
    return ok;
}

int wk_bench_pg_loader(wk_bench *b)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL) {
        wk_bench_say(b, "pg loader: skipped (WK_PG_DSN is not set; start a server with "
                        "scripts/servers.sh start)");
        return 0;
    }
    ctx c;
    memset(&c, 0, sizeof c);
    wk_arena_init(&c.arena, NULL, 0);
    char table[48], sql[512];
    snprintf(table, sizeof table, "wk_bench_users_%ld", (long)getpid());
    snprintf(c.sql, sizeof c.sql,
             "SELECT username, password, age, enabled, metadata FROM %s WHERE id = $1", table);
    c.pg = PQconnectdb(dsn);
    wk_pq_pool *pool = NULL;
    wk_pq_pool_opts po = {0};
    po.dsn = dsn;
    po.size = 1; /* one thread: one connection, as the hand-written side has */
    wk_error err = {0};
    int rc = 0;
    snprintf(sql, sizeof sql,
             "CREATE TABLE %s (id int8 PRIMARY KEY, username text NOT NULL, password text, "
             "age int4, enabled bool NOT NULL, metadata jsonb NOT NULL)",
             table);
    bool ok = PQstatus(c.pg) == CONNECTION_OK && setup(b, c.pg, sql);
    snprintf(sql, sizeof sql,
             "INSERT INTO %s SELECT i, 'user-' || i, md5(i::text), "
             "CASE WHEN i %% 7 = 0 THEN NULL ELSE i %% 90 END, i %% 2 = 0, "
             "jsonb_build_object('id', i, 'score', i + 0.5, 'tags', jsonb_build_array('a', i)) "
             "FROM generate_series(1, %d) i",
             table, USERS);
    ok = ok && setup(b, c.pg, sql);
    ok = ok && wk_pq_pool_new(&po, &pool, &err) == WK_OK;
    wk_pq_loader_opts lo = {0};
    lo.pool = pool;
    lo.sql = c.sql;
    lo.schema = &bench_user_schema;
    ok = ok && wk_pq_loader_new(&lo, &c.loader, &err) == WK_OK;
    wk_cache_config cc = {0};
    cc.flags = WK_CACHE_NO_LOCAL; /* no tier: every get is a miss */
    ok = ok && wk_cache_new(&cc, &c.cache, &err) == WK_OK;
    if (!ok) {
        wk_bench_fail(b, "pg loader: setup failed: %s %s", PQerrorMessage(c.pg),
                      err.msg != NULL ? err.msg : "");
        rc = 1;
    } else {
        /* every id once through each side: the same rows, the same values */
        c.next = 0;
        uint64_t a = run_loader(&c, USERS);
        c.next = 0;
        uint64_t h = run_libpq(&c, USERS);
        c.next = 0;
        uint64_t g = run_cache_get(&c, USERS);
        if (a == 0 || a != h || a != g) {
            wk_bench_fail(b, "pg loader: checksums differ (loader %llu, libpq %llu, cache %llu)",
                          (unsigned long long)a, (unsigned long long)h, (unsigned long long)g);
            rc = 1;
        }
        uint64_t it = wk_bench_quick(b) ? 200 : 0;
        const char *cn = "cache miss: load 1 user by id";
        wk_bench_spec s1 = {cn, "wirekit", run_loader, &c, it, 0,
                            "wk_pq_loader_load: pooled connection, row -> struct plan", 0};
        wk_bench_spec s2 = {cn, "libpq PQexecParams", run_libpq, &c, it, 0,
                            "by hand: one connection, binary result, columns decoded by hand",
                            0};
        wk_bench_spec s3 = {cn, "wirekit wk_cache_get", run_cache_get, &c, it, 0,
                            "the whole miss: loader + MessagePack encode + entry (no tiers)",
                            WK_BENCH_INFO};
        wk_bench_add(b, &s1);
        wk_bench_add(b, &s2);
        wk_bench_add(b, &s3);
        wk_bench_flush(b);
    }
    wk_cache_free(c.cache);
    wk_pq_loader_free(c.loader);
    wk_pq_pool_free(pool);
    if (PQstatus(c.pg) == CONNECTION_OK) {
        snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", table);
        (void)setup(b, c.pg, sql);
    }
    PQfinish(c.pg);
    wk_arena_free(&c.arena);
    return rc;
}
