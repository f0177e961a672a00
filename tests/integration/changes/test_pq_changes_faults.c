/*
 * The change stream under faults, on a PRIVATE PostgreSQL started by the test (pg_private.h,
 * switched to wal_level=logical and restarted), so the shared server is never stopped:
 * - `wirekit pg changes` (WK_CLI) killed with SIGKILL at a random point of its streaming (once
 *   it has written, within the next second) while a writer commits rows with a sequence
 *   column, then restarted, WK_CHANGES_KILLS times (default 5): in the
 *   end every committed row is in the output (duplicates allowed and counted), none missing;
 * - the server stopped mid-stream: the run ends with WK_ERR_CONNECT, and after the restart
 *   a new stream delivers every committed change;
 * - one transaction of WK_CHANGES_ROWS rows (default 1,000,000) through `wirekit pg changes`
 *   with the consumer's peak resident memory (wait4's ru_maxrss) at most 32 MiB (under the
 *   sanitizers, WK_SANITIZE_BUILD, 100,000 rows and no cap: their shadow memory is counted).
 */
#define _GNU_SOURCE /* memmem, wait4 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "changes_test.h"
#include "pg_private.h"

static char dsn[512];
static int port;

/* The private server, once per process, with logical decoding on. */
static bool private_logical(void)
{
    static int state; /* 0 not yet, 1 up, -1 failed */
    if (state != 0) {
        return state == 1;
    }
    port = 40000 + (int)(getpid() % 20000);
    state = -1;
    atexit(pg_private_remove); /* also when a filter runs only some of the tests */
    if (!pg_private_start("changes-fault", port)) {
        return false;
    }
    pg_private_dsn(dsn, sizeof dsn, port);
    if (!changes_sql(dsn, "ALTER SYSTEM SET wal_level = logical; ") ||
        !changes_sql(dsn, "ALTER SYSTEM SET max_wal_senders = 10") ||
        !changes_sql(dsn, "ALTER SYSTEM SET max_replication_slots = 10")) {
        return false;
    }
    int ws = 0;
    waitpid(pg_private_stop_later(0), &ws, 0);
    if (!pg_private_restart(port)) {
        return false;
    }
    state = 1;
    return true;
}

#define NEED_LOGICAL_SERVER()                                                              \
    do {                                                                                  \
        if (!pg_private_available()) {                                                    \
            SKIP("no PostgreSQL 15 initdb in /usr/lib/postgresql/15/bin");                \
        }                                                                                 \
        CHECK_MSG(private_logical(), "cannot start a private PostgreSQL in %s",           \
                  pg_private_dir());                                                      \
    } while (0)

/* A fresh table `t` (seq bigint primary key, pad text), a publication `t_pub` and slot `t`. */
static bool fresh(const char *t)
{
    char sql[512];
    changes_drop_slot(dsn, t);
    snprintf(sql, sizeof sql,
             "DROP TABLE IF EXISTS %s; CREATE TABLE %s (seq bigint PRIMARY KEY, pad text); "
             "DROP PUBLICATION IF EXISTS %s_pub; CREATE PUBLICATION %s_pub FOR TABLE %s",
             t, t, t, t, t);
    if (!changes_sql(dsn, sql)) {
        return false;
    }
    snprintf(sql, sizeof sql, "%s_pub", t);
    wk_pq_changes *s = NULL;
    wk_status st = changes_open(dsn, t, sql, WK_PQ_CHANGES_CREATE_SLOT, NULL, &s, NULL);
    wk_pq_changes_free(s);
    return st == WK_OK;
}

/* Counts each "seq" of the JSON lines in p[0..n) into seen[1..max]; lines cut by a kill (no
 * closing brace) are counted as torn. */
static void count_seqs(const char *p, size_t n, unsigned *seen, long max, size_t *torn)
{
    const char *end = p + n;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *le = nl != NULL ? nl : end;
        const char *k = memmem(p, (size_t)(le - p), "{\"seq\":", 7);
        if (k == NULL || le[-1] != '}') {
            *torn += (le > p);
        } else {
            long v = strtol(k + 7, NULL, 10);
            if (v >= 1 && v <= max) {
                seen[v]++;
            }
        }
        p = nl != NULL ? nl + 1 : end;
    }
}

static volatile sig_atomic_t writer_stop;

static void on_term(int sig)
{
    (void)sig;
    writer_stop = 1;
}

/* A child committing rows 1, 2, 3, ... into `t` (one per transaction, every seventh
 * transaction three) until SIGTERM, finishing the transaction it is in. */
static pid_t start_writer(const char *t)
{
    pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    signal(SIGTERM, on_term);
    PGconn *c = PQconnectdb(dsn);
    char sql[256];
    for (long seq = 1, i = 0; !writer_stop; i++) {
        int rows = i % 7 == 6 ? 3 : 1;
        snprintf(sql, sizeof sql,
                 "INSERT INTO %s SELECT g, 'w' FROM generate_series(%ld, %ld) g", t, seq,
                 seq + rows - 1);
        PGresult *r = PQexec(c, sql);
        bool ok = PQresultStatus(r) == PGRES_COMMAND_OK;
        PQclear(r);
        if (!ok) {
            _exit(1);
        }
        seq += rows;
        usleep(2000);
    }
    PQfinish(c);
    _exit(0);
}

/* `wirekit pg changes` on table `t` appending to `out` (a child process). */
static pid_t start_consumer(const char *t, const char *out, const char *extra)
{
    pid_t pid = fork();
    if (pid != 0) {
        return pid;
    }
    char pub[128];
    snprintf(pub, sizeof pub, "%s_pub", t);
    const char *cli = getenv("WK_CLI");
    if (extra != NULL) {
        execl(cli, cli, "pg", "changes", "--dsn", dsn, "--slot", t, "--publication", pub,
              extra, out, (char *)NULL);
    } else {
        execl(cli, cli, "pg", "changes", "--dsn", dsn, "--slot", t, "--publication", pub, out,
              (char *)NULL);
    }
    _exit(127);
}

/* The first column of the first row of `sql` on the private server as a number, or -1. */
static long query_long(const char *sql)
{
    PGconn *c = PQconnectdb(dsn);
    PGresult *r = PQexec(c, sql);
    long v = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 && !PQgetisnull(r, 0, 0)
                 ? strtol(PQgetvalue(r, 0, 0), NULL, 10)
                 : -1;
    PQclear(r);
    PQfinish(c);
    return v;
}

/* Waits (generously: a loaded machine) until `path` holds `needle`. */
static bool wait_for_text(const char *path, const char *needle, double seconds)
{
    for (double waited = 0; waited < seconds; waited += 0.2) {
        size_t n = 0;
        uint8_t *data = wk_test_read_file(path, &n);
        bool found = data != NULL && memmem(data, n, needle, strlen(needle)) != NULL;
        free(data);
        if (found) {
            return true;
        }
        usleep(200000);
    }
    return false;
}

WK_TEST(test_changes_consumer_killed_at_random_loses_nothing)
{
    NEED_LOGICAL_SERVER();
    if (getenv("WK_CLI") == NULL) {
        SKIP("WK_CLI (the wirekit command) is not set");
    }
    const char *k = getenv("WK_CHANGES_KILLS");
    int kills = k != NULL ? (int)strtol(k, NULL, 10) : 5;
    CHECK(fresh("wk_kill"));
    char out[512];
    snprintf(out, sizeof out, "%s/kill.jsonl", pg_private_dir());
    unlink(out);
    srand((unsigned)time(NULL));
    pid_t writer = start_writer("wk_kill");
    for (int i = 0; i < kills; i++) {
        struct stat before;
        off_t size0 = stat(out, &before) == 0 ? before.st_size : 0;
        pid_t c = start_consumer("wk_kill", out, NULL);
        /* killed while it streams: once it has written, somewhere in the next second */
        for (int w = 0; w < 3000 && (stat(out, &before) != 0 || before.st_size <= size0); w++) {
            usleep(20000);
        }
        usleep((useconds_t)(rand() % 1000000));
        kill(c, SIGKILL);
        int ws = 0;
        waitpid(c, &ws, 0);
        CHECK_MSG(WIFSIGNALED(ws), "consumer %d ended before it was killed (status %d)", i, ws);
    }
    kill(writer, SIGTERM);
    int ws = 0;
    waitpid(writer, &ws, 0);
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "the writer failed");
    long max = query_long("SELECT max(seq) FROM wk_kill");
    CHECK(max > 0);
    CHECK_EQ(query_long("SELECT count(*) FROM wk_kill"), max);
    /* a last run catches up, then stops cleanly on SIGTERM */
    pid_t c = start_consumer("wk_kill", out, NULL);
    char needle[64];
    snprintf(needle, sizeof needle, "{\"seq\":%ld,", max);
    CHECK_MSG(wait_for_text(out, needle, 300), "row %ld never arrived", max);
    kill(c, SIGTERM);
    waitpid(c, &ws, 0);
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "SIGTERM: status %d", ws);
    size_t n = 0;
    uint8_t *data = wk_test_read_file(out, &n);
    CHECK(data != NULL);
    unsigned *seen = calloc((size_t)max + 1, sizeof *seen);
    size_t torn = 0;
    count_seqs((const char *)data, n, seen, max, &torn);
    long missing = 0, dups = 0;
    for (long v = 1; v <= max; v++) {
        missing += seen[v] == 0;
        dups += seen[v] > 1 ? seen[v] - 1 : 0;
    }
    printf("  %d kills, %ld rows committed, %ld missing, %ld delivered again, %zu torn lines\n",
           kills, max, missing, dups, torn);
    CHECK_EQ(missing, 0L);
    free(seen);
    free(data);
    changes_drop_slot(dsn, "wk_kill");
}

/* The seqs of a run's lines into seen[]. */
static void seen_in_run(const changes_run *r, unsigned *seen, long max)
{
    size_t torn = 0;
    count_seqs((const char *)r->lines.data, r->lines.len, seen, max, &torn);
}

WK_TEST(test_changes_server_restart_mid_stream_is_connect_then_resumes)
{
    NEED_LOGICAL_SERVER();
    CHECK(fresh("wk_restart"));
    wk_pq_changes *s = NULL;
    wk_error err = {0};
    CHECK_OK(changes_open(dsn, "wk_restart", "wk_restart_pub", 0, NULL, &s, &err));
    for (int i = 0; i < 30; i++) {
        char sql[160];
        snprintf(sql, sizeof sql,
                 "INSERT INTO wk_restart SELECT g, 'r' FROM generate_series(%d, %d) g",
                 i * 10 + 1, i * 10 + 10);
        CHECK(changes_sql(dsn, sql));
    }
    pid_t stopper = pg_private_stop_later(300000);
    changes_run r;
    wk_status st = changes_collect(s, 0, 0, 120, &r, &err);
    int ws = 0;
    waitpid(stopper, &ws, 0);
    CHECK_STATUS(st, WK_ERR_CONNECT);
    CHECK(wk_pq_changes_message(s)[0] != '\0');
    unsigned seen[401] = {0};
    seen_in_run(&r, seen, 400);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    CHECK(pg_private_restart(port));
    CHECK(changes_sql(dsn, "INSERT INTO wk_restart SELECT g, 'r' FROM generate_series(301, 400) g"));
    s = NULL;
    CHECK_OK(changes_open(dsn, "wk_restart", "wk_restart_pub", 0, NULL, &s, &err));
    CHECK_OK(changes_collect_until(s, "{\"seq\":400,", 120, &r, &err));
    seen_in_run(&r, seen, 400);
    changes_run_free(&r);
    wk_pq_changes_free(s);
    long missing = 0;
    for (int v = 1; v <= 400; v++) {
        missing += seen[v] == 0;
    }
    CHECK_EQ(missing, 0L);
    changes_drop_slot(dsn, "wk_restart");
}

WK_TEST(test_changes_large_transaction_streams_in_bounded_memory)
{
    NEED_LOGICAL_SERVER();
    if (getenv("WK_CLI") == NULL) {
        SKIP("WK_CLI (the wirekit command) is not set");
    }
    const char *e = getenv("WK_CHANGES_ROWS");
    bool sanitized = getenv("WK_SANITIZE_BUILD") != NULL && getenv("WK_SANITIZE_BUILD")[0] != '\0';
    long rows = e != NULL ? strtol(e, NULL, 10) : sanitized ? 100000 : 1000000;
    CHECK(fresh("wk_big"));
    char sql[256];
    double t0 = wk_test_now_s();
    snprintf(sql, sizeof sql,
             "INSERT INTO wk_big SELECT g, repeat('p', 40) FROM generate_series(1, %ld) g", rows);
    CHECK(changes_sql(dsn, sql));
    double t1 = wk_test_now_s();
    long target = query_long("SELECT pg_current_wal_lsn() - '0/0'");
    pid_t c = start_consumer("wk_big", "/dev/null", NULL);
    /* done once the slot's confirmed position passed the transaction (status updates go out
     * every 10 s; the deadline is for a very slow machine) */
    long confirmed = -1;
    for (double waited = 0; waited < 1800; waited += 0.5) {
        confirmed = query_long("SELECT confirmed_flush_lsn - '0/0' FROM pg_replication_slots "
                               "WHERE slot_name = 'wk_big'");
        if (confirmed >= target) {
            break;
        }
        usleep(500000);
    }
    kill(c, SIGTERM);
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    wait4(c, &ws, 0, &ru);
    double t2 = wk_test_now_s();
    printf("  %ld-row transaction: inserted in %.1f s, streamed through in %.1f s, "
           "consumer peak RSS %ld KiB\n",
           rows, t1 - t0, t2 - t1, ru.ru_maxrss);
    CHECK_MSG(confirmed >= target, "the transaction was not confirmed");
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "consumer status %d", ws);
    CHECK_MSG(sanitized || ru.ru_maxrss <= 32 * 1024, "peak RSS %ld KiB over 32 MiB",
              ru.ru_maxrss);
    changes_drop_slot(dsn, "wk_big");
}
