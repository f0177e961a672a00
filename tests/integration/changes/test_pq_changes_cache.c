/*
 * A cache the database keeps fresh, against the shared PostgreSQL (wal_level=logical) and
 * Redis (WK_PG_DSN, WK_REDIS_URL; skipped without them). Nothing here calls
 * wk_cache_invalidate or deletes a key:
 * - a reader PROCESS holds entity user:42 in its memory tier (its loader reads the row; local
 *   and shared TTLs of ten minutes, so nothing expires during the test); `wirekit pg changes
 *   --invalidate user=TABLE:id --redis URL` runs in another process; `psql -c "UPDATE ..."`
 *   changes the row; the reader sees the new value;
 * - the same with the invalidator as a library call in a thread of the reader's own process
 *   (wk_pq_changes_run_invalidator on the service's cache), stopped with wk_pq_changes_stop;
 * - a rule naming a column that is not in the table stops the run with WK_ERR_ARG.
 * Each reports the delay from the UPDATE's return to the reader seeing the new value.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "changes_test.h"
#include "wirekit/redis.h"

#define NEED_SERVERS()                                                                    \
    do {                                                                                  \
        if (getenv("WK_PG_DSN") == NULL || getenv("WK_REDIS_URL") == NULL) {              \
            SKIP("WK_PG_DSN or WK_REDIS_URL is not set (run scripts/servers.sh start)");  \
        }                                                                                 \
    } while (0)

WK_SCHEMA_DEFINE_VALUE(user_schema, "user", 1);

/* The loader: the row's name, read from the database. */
static wk_status load_user(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                           void *obj, wk_arena *arena, wk_error *err)
{
    (void)s;
    const char *table = ctx;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT name FROM %s WHERE id = %.*s", table, (int)id_len, id);
    PGconn *c = PQconnectdb(getenv("WK_PG_DSN"));
    PGresult *r = PQexec(c, sql);
    wk_status st = WK_ERR_NOT_FOUND;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
        size_t n = (size_t)PQgetlength(r, 0, 0);
        char *copy = wk_arena_alloc(arena, n + 1, 1);
        st = copy != NULL ? WK_OK : WK_ERR_NOMEM;
        if (copy != NULL) {
            memcpy(copy, PQgetvalue(r, 0, 0), n + 1);
            wk_value *v = obj;
            v->type = WK_VAL_STR;
            v->len = (uint32_t)n;
            v->u.str = copy;
        }
    } else if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        st = wk_error_set(err, WK_ERR_IO, 0, "the loader's query failed");
    }
    PQclear(r);
    PQfinish(c);
    return st;
}

typedef struct service {
    wk_redis_store *store;
    wk_cache *cache;
} service;

static bool service_open(service *sv, const char *ns)
{
    memset(sv, 0, sizeof *sv);
    wk_redis_opts o = {0};
    o.url = getenv("WK_REDIS_URL");
    o.connect_timeout_ms = 2000;
    o.command_timeout_ms = 2000;
    if (wk_redis_store_new(&o, &sv->store, NULL) != WK_OK) {
        return false;
    }
    for (int i = 0; i < 300 && !wk_redis_store_feed_up(sv->store); i++) {
        usleep(20000);
    }
    wk_cache_config cfg = {0};
    cfg.ns = ns;
    cfg.store = wk_redis_store_iface(sv->store);
    cfg.local_ttl_ms = 600000; /* nothing expires while the test runs */
    cfg.shared_ttl_ms = 600000;
    return wk_redis_store_feed_up(sv->store) && wk_cache_new(&cfg, &sv->cache, NULL) == WK_OK;
}

static void service_close(service *sv)
{
    wk_cache_free(sv->cache);
    wk_redis_store_free(sv->store);
}

/* The cached name of user 42 ("" when the get failed). */
static void cached_name(service *sv, const char *table, char *out, size_t cap)
{
    wk_cache_entry *e = NULL;
    out[0] = '\0';
    if (wk_cache_get(sv->cache, &user_schema, "42", 2, load_user, (void *)table, &e, NULL) ==
        WK_OK) {
        const wk_value *v = wk_cache_entry_object(e);
        snprintf(out, cap, "%.*s", (int)v->len, v->u.str);
        wk_cache_entry_unref(e);
    }
}

/* Waits until the cache shows `want` for user 42 (generous deadline); the delay in ms, or
 * -1. */
static double wait_for_name(service *sv, const char *table, const char *want)
{
    double t0 = wk_test_now_s();
    while (wk_test_now_s() - t0 < 60) {
        char name[64];
        cached_name(sv, table, name, sizeof name);
        if (strcmp(name, want) == 0) {
            return (wk_test_now_s() - t0) * 1000;
        }
        usleep(1000);
    }
    return -1;
}

/* A table with user 42 named 'old', a publication and a fresh slot. */
static bool fresh(const char *t)
{
    char sql[512];
    changes_drop_slot(NULL, t);
    snprintf(sql, sizeof sql,
             "DROP TABLE IF EXISTS %s; CREATE TABLE %s (id int PRIMARY KEY, name text); "
             "INSERT INTO %s VALUES (42, 'old'), (43, 'other'); "
             "DROP PUBLICATION IF EXISTS %s_pub; CREATE PUBLICATION %s_pub FOR TABLE %s",
             t, t, t, t, t, t);
    if (!changes_sql(NULL, sql)) {
        return false;
    }
    snprintf(sql, sizeof sql, "%s_pub", t);
    wk_pq_changes *s = NULL;
    wk_status st = changes_open(NULL, t, sql, WK_PQ_CHANGES_CREATE_SLOT, NULL, &s, NULL);
    wk_pq_changes_free(s);
    return st == WK_OK;
}

/* psql -c "UPDATE ...", as a person would. */
static bool psql_update(const char *t, const char *name)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "psql \"$WK_PG_DSN\" -q -c \"UPDATE %s SET name = '%s' WHERE id = 42\"",
             t, name);
    return system(cmd) == 0;
}

WK_TEST(test_changes_cli_invalidation_reaches_a_reader_process)
{
    NEED_SERVERS();
    if (getenv("WK_CLI") == NULL) {
        SKIP("WK_CLI (the wirekit command) is not set");
    }
    CHECK(fresh("wk_chg_users"));
    int ready[2], done[2];
    CHECK(pipe(ready) == 0 && pipe(done) == 0);
    pid_t reader = fork();
    if (reader == 0) {
        /* the reader: user 42 into its memory tier, then waits for the new name */
        service sv;
        char name[64] = "";
        bool ok = service_open(&sv, "wkchg");
        /* the load's own fill is not pushed back (NOLOOP): the second read is local */
        cached_name(&sv, "wk_chg_users", name, sizeof name);
        cached_name(&sv, "wk_chg_users", name, sizeof name);
        wk_cache_stats st;
        wk_cache_get_stats(sv.cache, &st);
        ok = ok && strcmp(name, "old") == 0 && st.local_hits >= 1;
        char c = ok ? 'r' : 'x';
        (void)!write(ready[1], &c, 1);
        (void)!read(done[0], &c, 1); /* the update is done */
        double ms = wait_for_name(&sv, "wk_chg_users", "new");
        printf("  reader process saw the UPDATE after %.1f ms\n", ms);
        fflush(stdout);
        service_close(&sv);
        _exit(ok && ms >= 0 ? 0 : 1);
    }
    /* only the reader writes `ready` and reads `done`: a reader that dies is an EOF here */
    close(ready[1]);
    close(done[0]);
    char url[256];
    snprintf(url, sizeof url, "%s", getenv("WK_REDIS_URL"));
    pid_t cli = fork();
    if (cli == 0) {
        const char *w = getenv("WK_CLI");
        execl(w, w, "pg", "changes", "--slot", "wk_chg_users", "--publication",
              "wk_chg_users_pub", "--invalidate", "user=wk_chg_users:id", "--redis", url, "--ns",
              "wkchg", "/dev/null", (char *)NULL);
        _exit(127);
    }
    char c = 0;
    CHECK(read(ready[0], &c, 1) == 1);
    CHECK_MSG(c == 'r', "the reader could not cache user 42 in its memory tier");
    CHECK(psql_update("wk_chg_users", "new"));
    CHECK(write(done[1], &c, 1) == 1);
    int ws = 0;
    waitpid(reader, &ws, 0);
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the reader never saw the new name");
    kill(cli, SIGTERM);
    waitpid(cli, &ws, 0);
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "pg changes: status %d", ws);
    changes_drop_slot(NULL, "wk_chg_users");
}

typedef struct invalidator_thread {
    wk_pq_changes *s;
    wk_pq_invalidator *inv;
    wk_status st;
} invalidator_thread;

static void *run_invalidator(void *arg)
{
    invalidator_thread *t = arg;
    t->st = wk_pq_changes_run_invalidator(t->s, t->inv, NULL);
    return NULL;
}

WK_TEST(test_changes_invalidator_thread_keeps_its_service_cache_fresh)
{
    NEED_SERVERS();
    CHECK(fresh("wk_chg_svc"));
    service sv;
    CHECK(service_open(&sv, "wkchgsvc"));
    char name[64];
    cached_name(&sv, "wk_chg_svc", name, sizeof name);
    CHECK_STR(name, "old");
    wk_pq_invalidate_rule rule = {&user_schema, "public.wk_chg_svc", "id"};
    invalidator_thread t = {NULL, NULL, WK_OK};
    CHECK_OK(wk_pq_invalidator_new(sv.cache, &rule, 1, &t.inv, NULL));
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_svc", "wk_chg_svc_pub", 0, NULL, &t.s, &err));
    pthread_t th;
    pthread_create(&th, NULL, run_invalidator, &t);
    /* an update of another row invalidates only that one */
    CHECK(changes_sql(NULL, "UPDATE wk_chg_svc SET name = 'x' WHERE id = 43"));
    CHECK(psql_update("wk_chg_svc", "new"));
    double ms = wait_for_name(&sv, "wk_chg_svc", "new");
    printf("  the service's own cache saw the UPDATE after %.1f ms\n", ms);
    CHECK(ms >= 0);
    /* a delete: the entity goes (the loader then says not found) */
    CHECK(changes_sql(NULL, "DELETE FROM wk_chg_svc WHERE id = 42"));
    for (int i = 0; i < 6000 && wk_pq_invalidator_count(t.inv) < 3; i++) {
        usleep(10000);
    }
    CHECK_EQ(wk_pq_invalidator_count(t.inv), 3u);
    wk_cache_entry *e = NULL;
    CHECK_STATUS(wk_cache_get(sv.cache, &user_schema, "42", 2, load_user, "wk_chg_svc", &e, NULL),
                 WK_ERR_NOT_FOUND);
    wk_pq_changes_stop(t.s);
    pthread_join(th, NULL);
    CHECK_OK(t.st);
    wk_pq_changes_free(t.s);
    wk_pq_invalidator_free(t.inv);
    service_close(&sv);
    changes_drop_slot(NULL, "wk_chg_svc");
}

WK_TEST(test_changes_invalidate_rule_with_unknown_column_stops_the_run)
{
    NEED_SERVERS();
    CHECK(fresh("wk_chg_badcol"));
    service sv;
    CHECK(service_open(&sv, "wkchgbad"));
    wk_pq_invalidate_rule rule = {&user_schema, "wk_chg_badcol", "no_such_column"};
    wk_pq_invalidator *inv = NULL;
    CHECK_OK(wk_pq_invalidator_new(sv.cache, &rule, 1, &inv, NULL));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(NULL, "wk_chg_badcol", "wk_chg_badcol_pub", 0, NULL, &s, &err));
    CHECK(changes_sql(NULL, "UPDATE wk_chg_badcol SET name = 'y' WHERE id = 42"));
    CHECK_STATUS(wk_pq_changes_run_invalidator(s, inv, &err), WK_ERR_ARG);
    CHECK(strstr(wk_pq_changes_message(s), "no_such_column") != NULL);
    wk_pq_changes_free(s);
    wk_pq_invalidator_free(inv);
    service_close(&sv);
    changes_drop_slot(NULL, "wk_chg_badcol");
}
