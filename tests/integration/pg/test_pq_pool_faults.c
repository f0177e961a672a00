/*
 * The pool and the cache loader under fault: 8 threads load users through wk_pq_loader_load
 * on a pool of 4 connections to a PRIVATE PostgreSQL (pg_private.h; its own initdb on its own
 * port, so that restarting it cannot disturb the other tests; skipped when initdb is missing)
 * while the main thread terminates every pooled backend (pg_terminate_backend) twice and
 * restarts the server (`pg_ctl restart -m fast`) once.
 *
 * Every request is checked: a row decoded is exactly the row of its id (no wrong value, no
 * empty one), an id past the table is WK_ERR_NOT_FOUND, and the only failure allowed is
 * WK_ERR_CONNECT, for a request that overlapped the restart's down time (from the moment the
 * restart began to the moment pg_ctl said the server was up again). A request that started
 * once the server was back, or that overlapped only a termination (the server stayed up:
 * the loader runs the cut statement again on a fresh connection), must succeed. Afterwards
 * the pool holds its 4 connections, each answering, and nothing leaks (ASan); the threads
 * share the pool and the loader, so ThreadSanitizer runs this test too (scripts/tsan.sh).
 * No timing is asserted: waits are bounded by generous deadlines only.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pg_private.h"
#include "wirekit/pq.h"
#include "wirekit/schema.h"
#include "wirekit/value.h"
#include "wk_test.h"

#define THREADS 8
#define POOL 4
#define USERS 1000
#define IDS 1100 /* ids past USERS have no row */

typedef struct user {
    char *username;
    char *password;
    int32_t age;
    bool has_age;
    bool enabled;
    wk_value metadata;
} user;

WK_SCHEMA_DEFINE_STATIC(user_schema, user, "user", 1,
                        WK_FIELD(user, username, "username", WK_SK_STR, WK_REQUIRED),
                        WK_FIELD(user, password, "password", WK_SK_STR, 0),
                        WK_FIELD_NULLABLE(user, age, has_age, "age", WK_SK_I32, 0),
                        WK_FIELD(user, enabled, "enabled", WK_SK_BOOL, 0),
                        WK_FIELD(user, metadata, "metadata", WK_SK_VALUE, 0));

/* The table: what the row of id i holds, checked by row_is_right. */
static const char setup_sql[] =
    "CREATE TABLE users (id int8 PRIMARY KEY, username text NOT NULL, password text, "
    "age int4, enabled bool NOT NULL, metadata jsonb NOT NULL);"
    "INSERT INTO users SELECT i, 'user-' || i, md5(i::text), "
    "CASE WHEN i % 7 = 0 THEN NULL ELSE i % 90 END, i % 2 = 0, "
    "jsonb_build_object('id', i, 'score', i + 0.5) FROM generate_series(1, 1000) i";

/* Whether `u` is exactly the row of `id` (numbers in metadata as numbers). */
static bool row_is_right(const user *u, long id)
{
    char name[32];
    snprintf(name, sizeof name, "user-%ld", id);
    if (u->username == NULL || strcmp(u->username, name) != 0 || u->password == NULL ||
        strlen(u->password) != 32 || u->enabled != (id % 2 == 0) ||
        u->has_age != (id % 7 != 0) || (u->has_age && u->age != id % 90) ||
        (!u->has_age && u->age != 0) || u->metadata.type != WK_VAL_MAP) {
        return false;
    }
    const wk_value *mid = wk_value_map_get(&u->metadata, "id", 2);
    const wk_value *score = wk_value_map_get(&u->metadata, "score", 5);
    return mid != NULL && mid->type == WK_VAL_UINT && mid->u.u == (uint64_t)id &&
           score != NULL && score->type == WK_VAL_FLOAT && score->u.f == (double)id + 0.5;
}

/* The main thread's fault windows, on the monotonic clock (wk_test_now_s). A request that
 * overlaps [down_from, down_to] may fail with WK_ERR_CONNECT; down_to stays far in the future
 * while the restart runs. */
static _Atomic double down_from = 1e300, down_to = 1e300;
static atomic_bool stop;

typedef struct worker {
    wk_pq_loader *loader;
    unsigned seed;
    long ok, not_found, connect_down;
    long wrong;            /* a row that is not its id's */
    long failed_up;        /* a failure outside the down window */
    wk_status bad_status;  /* the first failure outside it */
    char bad_msg[160];
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    while (!atomic_load(&stop)) {
        long id = 1 + (long)(rand_r(&w->seed) % IDS);
        char ids[24];
        int n = snprintf(ids, sizeof ids, "%ld", id);
        user u;
        memset(&u, 0, sizeof u);
        wk_error err = {0};
        double t0 = wk_test_now_s();
        wk_status st = wk_pq_loader_load(w->loader, &user_schema, ids, (size_t)n, &u, &arena,
                                         &err);
        double t1 = wk_test_now_s();
        if (st == WK_OK) {
            w->ok++;
            w->wrong += !row_is_right(&u, id) || id > USERS;
        } else if (st == WK_ERR_NOT_FOUND && id > USERS) {
            w->not_found++;
        } else if (st == WK_ERR_CONNECT && t1 >= atomic_load(&down_from) &&
                   t0 <= atomic_load(&down_to)) {
            w->connect_down++;
        } else {
            if (w->failed_up++ == 0) {
                w->bad_status = st;
                snprintf(w->bad_msg, sizeof w->bad_msg, "id %ld: %s", id, err.msg);
            }
        }
        wk_arena_reset(&arena);
    }
    wk_arena_free(&arena);
    return NULL;
}

static void sleep_ms(long ms)
{
    nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000L}, NULL);
}

/* Terminates every backend but the caller's own; the number terminated (-1: failed). */
static long terminate_all(const char *dsn)
{
    wk_pq_conn *c = NULL;
    long n = -1;
    if (wk_pq_connect_timeout(dsn, NULL, 10000, &c, NULL) == WK_OK) {
        PGresult *r = PQexec(wk_pq_pgconn(c),
                             "SELECT count(pg_terminate_backend(pid, 10000)) FROM "
                             "pg_stat_activity WHERE backend_type = 'client backend' "
                             "AND pid <> pg_backend_pid()");
        if (PQresultStatus(r) == PGRES_TUPLES_OK) {
            n = strtol(PQgetvalue(r, 0, 0), NULL, 10);
        }
        PQclear(r);
    }
    wk_pq_conn_free(c);
    return n;
}

WK_TEST(test_pq_pool_faults_loads_stay_right_through_restart_and_terminations)
{
    int port = 40000 + (int)((getpid() + 4241) % 20000);
    char dsn[512];
    NEED_PRIVATE_SERVER("pqpool-fault", port, dsn);
    wk_pq_conn *admin = NULL;
    wk_error err = {0};
    bool ready = wk_pq_connect_timeout(dsn, NULL, 30000, &admin, &err) == WK_OK;
    PGresult *r = ready ? PQexec(wk_pq_pgconn(admin), setup_sql) : NULL;
    ready = ready && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    wk_pq_conn_free(admin);
    wk_pq_pool_opts po = {0};
    po.dsn = dsn;
    po.size = POOL;
    po.acquire_timeout_ms = 60000; /* a loaded machine may take long to reconnect all */
    po.backoff_min_ms = 20;
    po.backoff_max_ms = 400;
    wk_pq_pool *pool = NULL;
    wk_pq_loader *loader = NULL;
    ready = ready && wk_pq_pool_new(&po, &pool, &err) == WK_OK;
    wk_pq_loader_opts lo = {0};
    lo.pool = pool;
    lo.sql = "SELECT username, password, age, enabled, metadata FROM users WHERE id = $1";
    lo.schema = &user_schema;
    ready = ready && wk_pq_loader_new(&lo, &loader, &err) == WK_OK;
    if (!ready) {
        wk_pq_pool_free(pool);
        pg_private_remove();
        CHECK_MSG(false, "set-up failed: %s", err.msg);
    }

    worker w[THREADS];
    pthread_t th[THREADS];
    memset(w, 0, sizeof w);
    atomic_store(&stop, false);
    for (int i = 0; i < THREADS; i++) {
        w[i].loader = loader;
        w[i].seed = (unsigned)(i * 7919 + 1);
        pthread_create(&th[i], NULL, work, &w[i]);
    }
    sleep_ms(700);
    long killed1 = terminate_all(dsn);
    sleep_ms(700);
    long killed2 = terminate_all(dsn);
    sleep_ms(700);
    atomic_store(&down_to, 1e300);
    atomic_store(&down_from, wk_test_now_s());
    bool restarted = pg_private_restart_fast();
    atomic_store(&down_to, wk_test_now_s());
    sleep_ms(1500); /* after the restart: every request must succeed */
    atomic_store(&stop, true);
    for (int i = 0; i < THREADS; i++) {
        pthread_join(th[i], NULL);
    }

    /* the pool holds its connections, each of them answering */
    wk_pq_pool_stats s;
    wk_pq_pool_get_stats(pool, &s);
    wk_pq_conn *held[POOL] = {0};
    int answered = 0;
    for (int i = 0; i < POOL; i++) {
        if (wk_pq_pool_acquire(pool, 0, &held[i], &err) == WK_OK) {
            PGresult *one = NULL;
            answered += wk_pq_exec(held[i], "SELECT 1", NULL, 0, &one, NULL) == WK_OK;
            PQclear(one);
        }
    }
    wk_pq_pool_stats after;
    wk_pq_pool_get_stats(pool, &after);
    for (int i = 0; i < POOL; i++) {
        wk_pq_pool_release(pool, held[i]);
    }
    wk_pq_loader_free(loader);
    wk_pq_pool_free(pool);
    pg_private_remove();

    long ok = 0, nf = 0, down = 0, wrong = 0, failed = 0;
    int bad = -1;
    for (int i = 0; i < THREADS; i++) {
        ok += w[i].ok;
        nf += w[i].not_found;
        down += w[i].connect_down;
        wrong += w[i].wrong;
        failed += w[i].failed_up;
        if (bad < 0 && w[i].failed_up != 0) {
            bad = i;
        }
    }
    printf("    %ld loads: %ld rows, %ld not found, %ld WK_ERR_CONNECT while down, %ld wrong, "
           "%ld failed while up; terminated %ld + %ld backends; pool: %llu connects, %llu "
           "failed, %llu discarded, %zu open\n",
           ok + nf + down + wrong + failed, ok, nf, down, wrong, failed, killed1, killed2,
           (unsigned long long)s.connects, (unsigned long long)s.connect_failures,
           (unsigned long long)s.discarded, s.open);
    CHECK_MSG(restarted, "pg_ctl restart failed");
    CHECK_MSG(killed1 >= 1 && killed2 >= 1, "terminated %ld and %ld backends", killed1,
              killed2);
    CHECK_EQ(wrong, 0);
    CHECK_MSG(failed == 0, "%ld loads failed while the server was up; first: %s (%s)", failed,
              bad >= 0 ? wk_status_str(w[bad].bad_status) : "-", bad >= 0 ? w[bad].bad_msg : "");
    CHECK(ok > 0 && nf > 0);
    CHECK_EQ(after.open, POOL);
    CHECK_EQ(answered, POOL);
    CHECK(s.discarded >= 2); /* the terminated and the restarted backends were noticed */
}
