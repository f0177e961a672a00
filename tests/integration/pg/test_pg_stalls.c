/*
 * A server that stops answering must not hold the library or the `wirekit pg` command past
 * its limits (issue 29, items 1 and 3), against the shared PostgreSQL 15 (WK_PG_DSN; skipped
 * when unset). Only backends this test owns are stopped: its own connections' (found by
 * pg_backend_pid()) and the CLI's it starts (found by a unique application_name). A watchdog
 * child continues a stopped backend after PG_STOPPED_WATCHDOG_S whatever happens, so that a wait that
 * does not end fails the test instead of hanging it; every bound below is far from what a
 * loaded machine needs (the limits are 1.5 to 3 s, the bounds 15 s).
 *
 * - wk_pq_next on a stopped backend ends at the connection's deadline (it called a blocking
 *   PQgetResult before), and at the idle limit (wk_pq_limits.idle_ms) without a deadline;
 * - a COPY in to a backend that stops reading fails at the idle limit;
 * - a connect to a server that accepts and never answers ends at the idle limit;
 * - the CLI: `pg query --timeout 3` and `--idle-timeout 2` on a stopped backend exit 1 in
 *   time with "timed out"; `pg copy in` to a stopped backend says so on stderr without
 *   blaming a column; a describe that times out is not called a parameter's failure; a
 *   column type without a binary encoder is named by its SQL name, not a C kind number; a
 *   record past the 1 GiB cap of pg copy in is said to be one, not "out of memory".
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pg_stopped.h"
#include "pg_test_conn.h"
#include "wirekit/pq.h"
#include "wk_test.h"

static wk_pq_conn *conn; /* the watcher: finds backends, holds locks */

/* What every wait below must stay under: limits of 1.5 to 3 s plus the cancel's grace. */
#define BOUND_S 15.0

/* Waits (at most 10 s) until backend `pid` runs a statement; false when it never does. */
static bool wait_active_pid(pid_t pid)
{
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT count(*) FROM pg_stat_activity WHERE pid = %ld AND state = 'active'",
             (long)pid);
    for (int i = 0; i < 400; i++) {
        if (pg_test_count(conn, sql) == 1) {
            return true;
        }
        usleep(25000);
    }
    return false;
}

/* Waits (at most 10 s) for the backend of application_name `app` to run a statement that
 * starts with `prefix` (not the connect's set-up): its pid, or -1. */
static pid_t wait_active_app(const char *app, const char *prefix)
{
    char sql[300];
    snprintf(sql, sizeof sql,
             "SELECT coalesce(max(pid), -1) FROM pg_stat_activity WHERE application_name = "
             "'%s' AND state = 'active' AND query LIKE '%s%%'",
             app, prefix);
    for (int i = 0; i < 400; i++) {
        long pid = pg_test_count(conn, sql);
        if (pid > 0) {
            return (pid_t)pid;
        }
        usleep(25000);
    }
    return -1;
}

/* The DSN with application_name = app appended. */
static void dsn_with_app(char *out, size_t cap, const char *app)
{
    snprintf(out, cap, "%s application_name=%s", getenv("WK_PG_DSN"), app);
}

WK_TEST(test_pq_next_on_a_stopped_backend_ends_at_the_deadline)
{
    NEED_CONN();
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_connect_timeout(getenv("WK_PG_DSN"), NULL, 2000, &c, &err));
    pid_t backend = pg_stopped_backend_of(c);
    CHECK(backend > 0);
    CHECK_OK(wk_pq_send(c, "SELECT pg_sleep(30)", NULL, 0,
                        WK_PQ_SEND_SIMPLE | WK_PQ_SEND_SINGLE_ROW, &err));
    CHECK(wait_active_pid(backend));
    if (kill(backend, SIGSTOP) != 0) {
        wk_pq_conn_free(c);
        SKIP("cannot stop the backend (not allowed to signal it)");
    }
    pid_t w = pg_stopped_watchdog(backend);
    double t0 = wk_test_now_s();
    PGresult *res = NULL;
    wk_status st = wk_pq_next(c, &res, &err);
    double took = wk_test_now_s() - t0;
    PQclear(res);
    res = NULL;
    wk_status after = wk_pq_next(c, &res, NULL);
    pg_stopped_release(w, backend);
    PQclear(res);
    char msg[512];
    snprintf(msg, sizeof msg, "%s", wk_pq_conn_message(c));
    wk_pq_conn_free(c);
    CHECK_MSG(took < BOUND_S, "wk_pq_next waited %.1f s on a stopped backend", took);
    CHECK_STATUS(st, WK_ERR_IO);
    CHECK_MSG(strstr(msg, "timed out") != NULL, "message: %s", msg);
    CHECK_STATUS(after, WK_ERR_EOF); /* the query is over */
}

WK_TEST(test_pq_idle_limit_ends_a_wait_without_a_deadline)
{
    NEED_CONN();
    wk_pq_limits lim = {0, 0, 1500};
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_connect_limits(getenv("WK_PG_DSN"), NULL, &lim, &c, &err));
    /* an answering server is not idle: a quick query and its rows */
    PGresult *res = NULL;
    CHECK_OK(wk_pq_exec(c, "SELECT 1", NULL, 0, &res, &err));
    PQclear(res);
    res = NULL;
    pid_t backend = pg_stopped_backend_of(c);
    CHECK(backend > 0);
    CHECK_OK(wk_pq_send(c, "SELECT pg_sleep(30)", NULL, 0, WK_PQ_SEND_SIMPLE, &err));
    CHECK(wait_active_pid(backend));
    if (kill(backend, SIGSTOP) != 0) {
        wk_pq_conn_free(c);
        SKIP("cannot stop the backend (not allowed to signal it)");
    }
    pid_t w = pg_stopped_watchdog(backend);
    double t0 = wk_test_now_s();
    wk_status st = wk_pq_next(c, &res, &err);
    double took = wk_test_now_s() - t0;
    pg_stopped_release(w, backend);
    PQclear(res);
    wk_pq_conn_free(c);
    CHECK_MSG(took < BOUND_S, "wk_pq_next waited %.1f s with a 1.5 s idle limit", took);
    CHECK_MSG(took >= 1.0, "gave up after %.2f s, before the idle limit", took);
    CHECK_STATUS(st, WK_ERR_IO);
}

WK_TEST(test_pq_copy_in_to_a_backend_that_stops_reading_fails_at_the_idle_limit)
{
    NEED_CONN();
    wk_pq_limits lim = {0, 0, 1500};
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    CHECK_OK(wk_pq_connect_limits(getenv("WK_PG_DSN"), NULL, &lim, &c, &err));
    CHECK(pg_test_exec(c, "CREATE TEMP TABLE stall_in (id int8, s text)"));
    pid_t backend = pg_stopped_backend_of(c);
    CHECK(backend > 0);
    static const char *const cols[2] = {"id", "s"};
    static const wk_pg_kind kinds[2] = {WK_PG_KIND_I64, WK_PG_KIND_TEXT};
    wk_pq_copy_in *in = NULL;
    CHECK_OK(wk_pq_copy_in_start(c, "stall_in", cols, kinds, 2, &in, &err));
    if (kill(backend, SIGSTOP) != 0) {
        (void)wk_pq_copy_in_end(in, "skipped", NULL, NULL);
        wk_pq_conn_free(c);
        SKIP("cannot stop the backend (not allowed to signal it)");
    }
    pid_t w = pg_stopped_watchdog(backend);
    wk_slice txt = {"rows long enough to fill the socket buffers soon", 48};
    wk_status st = WK_OK;
    double t0 = wk_test_now_s();
    for (int64_t id = 1; st == WK_OK && wk_test_now_s() - t0 < 2 * PG_STOPPED_WATCHDOG_S; id++) {
        const void *vals[2] = {&id, &txt};
        st = wk_pq_copy_in_row(in, vals, &err);
    }
    double took = wk_test_now_s() - t0;
    uint64_t rows = 99;
    wk_status end = wk_pq_copy_in_end(in, NULL, &rows, NULL);
    pg_stopped_release(w, backend);
    wk_pq_conn_free(c);
    CHECK_MSG(took < BOUND_S, "the copy went on for %.1f s after the backend stopped", took);
    CHECK_STATUS(st, WK_ERR_IO);
    CHECK_STATUS(end, WK_ERR_IO);
    CHECK_EQ(rows, 0);
}

WK_TEST(test_pq_connect_to_a_server_that_never_answers_ends_at_the_idle_limit)
{
    /* a listener that never accepts: the kernel completes the handshake, libpq sends its
     * startup packet and waits for an answer that never comes */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t alen = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 8) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        close(fd);
        CHECK_MSG(false, "cannot listen on loopback");
    }
    char dsn[128];
    snprintf(dsn, sizeof dsn, "host=127.0.0.1 port=%u user=nobody dbname=none",
             (unsigned)ntohs(a.sin_port));
    wk_pq_limits lim = {0, 0, 1500};
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    double t0 = wk_test_now_s();
    wk_status st = wk_pq_connect_limits(dsn, NULL, &lim, &c, &err);
    double took = wk_test_now_s() - t0;
    wk_pq_conn_free(c);
    close(fd);
    CHECK_MSG(took < BOUND_S, "the connect waited %.1f s on a silent server", took);
    CHECK_STATUS(st, WK_ERR_CONNECT);
}

/* ---- the command ---------------------------------------------------------------------- */

static const char *cli(void)
{
    return WK_CLI_PATH;
}

/* A CLI run in the background, its stderr in a file. */
typedef struct cli_run {
    pid_t pid;
    char err_path[64];
} cli_run;

/* Starts `wirekit pg ARGS...` (NULL-terminated) with stdin from `in` (NULL: /dev/null),
 * stdout to /dev/null. */
static bool cli_start(cli_run *r, const char *in, const char *const *args)
{
    snprintf(r->err_path, sizeof r->err_path, "/tmp/wk-stalls-err.%ld", (long)getpid());
    r->pid = fork();
    if (r->pid == 0) {
        int i0 = open(in != NULL ? in : "/dev/null", O_RDONLY);
        int o = open("/dev/null", O_WRONLY);
        int e = open(r->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (i0 < 0 || o < 0 || e < 0) {
            _exit(126);
        }
        dup2(i0, 0);
        dup2(o, 1);
        dup2(e, 2);
        const char *argv[16];
        int n = 0;
        argv[n++] = cli();
        argv[n++] = "pg";
        for (; args[n - 2] != NULL && n < 15; n++) {
            argv[n] = args[n - 2];
        }
        argv[n] = NULL;
        execv(cli(), (char *const *)argv);
        _exit(127);
    }
    return r->pid > 0;
}

/* Waits at most `secs` for the CLI (killed past it): its exit status, -1 when killed. The
 * stderr text goes into err. */
static int cli_wait(cli_run *r, double secs, char *err, size_t cap)
{
    double t0 = wk_test_now_s();
    int ws = 0;
    int rc = -1;
    for (;;) {
        pid_t p = waitpid(r->pid, &ws, WNOHANG);
        if (p == r->pid) {
            rc = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
            break;
        }
        if (wk_test_now_s() - t0 > secs) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, &ws, 0);
            break;
        }
        usleep(20000);
    }
    size_t n = 0;
    uint8_t *text = wk_test_read_file(r->err_path, &n);
    snprintf(err, cap, "%s", text != NULL ? (const char *)text : "");
    free(text);
    unlink(r->err_path);
    return rc;
}

/* Runs the CLI with `args`, stops its backend once it runs the statement starting with
 * `prefix` and returns the exit status,
 * its stderr and how long it took after the stop (the CLI is killed at 2 * PG_STOPPED_WATCHDOG_S). */
static int cli_on_stopped_backend(const char *app, const char *prefix, const char *const *args,
                                  char *err, size_t cap, double *took, bool *stopped)
{
    cli_run r;
    *stopped = false;
    if (!cli_start(&r, NULL, args)) {
        return -1;
    }
    pid_t backend = wait_active_app(app, prefix);
    pid_t w = -1;
    if (backend > 0 && kill(backend, SIGSTOP) == 0) {
        *stopped = true;
        w = pg_stopped_watchdog(backend);
    }
    double t0 = wk_test_now_s();
    int rc = cli_wait(&r, 2 * PG_STOPPED_WATCHDOG_S, err, cap);
    *took = wk_test_now_s() - t0;
    if (backend > 0) {
        pg_stopped_release(w, backend);
    }
    return rc;
}

WK_TEST(test_cli_pg_query_timeout_on_a_stopped_backend)
{
    NEED_CONN();
    char app[48], dsn[512], err[2048];
    snprintf(app, sizeof app, "wk_stall_q_%ld", (long)getpid());
    dsn_with_app(dsn, sizeof dsn, app);
    const char *args[] = {"query", "--dsn", dsn, "--timeout", "3", "SELECT pg_sleep(30)", NULL};
    double took = 0;
    bool stopped = false;
    int rc = cli_on_stopped_backend(app, "SELECT pg_sleep", args, err, sizeof err, &took,
                                    &stopped);
    CHECK_MSG(stopped, "the CLI's backend was never seen active (stderr: %s)", err);
    CHECK_MSG(took < BOUND_S, "pg query --timeout 3 ran %.1f s on a stopped backend", took);
    CHECK_MSG(rc == 1, "exit status %d: %s", rc, err);
    CHECK_MSG(strstr(err, "timed out") != NULL && strstr(err, "--timeout") != NULL,
              "stderr: %s", err);
}

WK_TEST(test_cli_pg_query_idle_timeout_on_a_stopped_backend)
{
    NEED_CONN();
    char app[48], dsn[512], err[2048];
    snprintf(app, sizeof app, "wk_stall_i_%ld", (long)getpid());
    dsn_with_app(dsn, sizeof dsn, app);
    /* no --timeout: no statement_timeout either, only the client's idle limit */
    const char *args[] = {"query", "--dsn", dsn, "--idle-timeout", "2", "SELECT pg_sleep(30)",
                          NULL};
    double took = 0;
    bool stopped = false;
    int rc = cli_on_stopped_backend(app, "SELECT pg_sleep", args, err, sizeof err, &took,
                                    &stopped);
    CHECK_MSG(stopped, "the CLI's backend was never seen active (stderr: %s)", err);
    CHECK_MSG(took < BOUND_S, "pg query --idle-timeout 2 ran %.1f s on a stopped backend",
              took);
    CHECK_MSG(rc == 1, "exit status %d: %s", rc, err);
    CHECK_MSG(strstr(err, "timed out") != NULL && strstr(err, "--idle-timeout") != NULL,
              "stderr: %s", err);
}

WK_TEST(test_cli_pg_copy_in_to_a_stopped_backend_says_why_without_blaming_a_column)
{
    NEED_CONN();
    CHECK(pg_test_exec(conn, "DROP TABLE IF EXISTS stall_copy_in; "
                             "CREATE TABLE stall_copy_in (a int, b text)"));
    /* records enough for the socket buffers to fill long before the file ends */
    char path[64];
    snprintf(path, sizeof path, "/tmp/wk-stalls-in.%ld.jsonl", (long)getpid());
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    for (int i = 0; i < 2000000; i++) {
        fprintf(f, "{\"a\":%d,\"b\":\"text to make a record longer\"}\n", i);
    }
    fclose(f);
    char app[48], dsn[512], err[2048];
    snprintf(app, sizeof app, "wk_stall_c_%ld", (long)getpid());
    dsn_with_app(dsn, sizeof dsn, app);
    const char *args[] = {"copy", "in", "--dsn", dsn, "--timeout", "3", "stall_copy_in", path,
                          NULL};
    double took = 0;
    bool stopped = false;
    int rc = cli_on_stopped_backend(app, "COPY", args, err, sizeof err, &took, &stopped);
    unlink(path);
    long written = pg_test_count(conn, "SELECT count(*) FROM stall_copy_in");
    (void)pg_test_exec(conn, "DROP TABLE IF EXISTS stall_copy_in");
    CHECK_MSG(stopped, "the CLI's backend was never seen active (stderr: %s)", err);
    CHECK_MSG(took < BOUND_S, "pg copy in ran %.1f s on a stopped backend", took);
    CHECK_MSG(rc == 1, "exit status %d: %s", rc, err);
    CHECK_MSG(strstr(err, "timed out") != NULL, "stderr: %s", err);
    CHECK_MSG(strstr(err, "column \"") == NULL, "a column is blamed: %s", err);
    CHECK_EQ(written, 0);
}

WK_TEST(test_cli_pg_query_describe_timeout_is_not_a_parameter_error)
{
    NEED_CONN();
    /* the watcher holds a lock the statement's describe waits for */
    CHECK(pg_test_exec(conn, "CREATE TABLE IF NOT EXISTS stall_lock (a int)"));
    CHECK(pg_test_exec(conn, "BEGIN; LOCK TABLE stall_lock IN ACCESS EXCLUSIVE MODE"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s pg query --dsn '%s' --idle-timeout 1.5 "
             "'SELECT a + $1::int FROM stall_lock' 1 2>&1 >/dev/null", cli(),
             getenv("WK_PG_DSN"));
    double t0 = wk_test_now_s();
    FILE *p = popen(cmd, "r");
    char err[2048] = "";
    size_t n = p != NULL ? fread(err, 1, sizeof err - 1, p) : 0;
    err[n] = '\0';
    int ws = p != NULL ? pclose(p) : -1;
    double took = wk_test_now_s() - t0;
    (void)pg_test_exec(conn, "ROLLBACK; DROP TABLE IF EXISTS stall_lock");
    CHECK_MSG(took < BOUND_S, "took %.1f s", took);
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 1, "exit status %d: %s", ws, err);
    CHECK_MSG(strstr(err, "timed out") != NULL, "stderr: %s", err);
    CHECK_MSG(strstr(err, "parameter") == NULL, "blamed on a parameter: %s", err);
}

WK_TEST(test_cli_pg_copy_in_names_a_type_without_a_binary_encoder_in_sql_terms)
{
    NEED_CONN();
    CHECK(pg_test_exec(conn, "DROP TABLE IF EXISTS stall_acl; CREATE TABLE stall_acl (c aclitem)"));
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "echo '{\"c\":\"x=r/y\"}' | %s pg copy in --dsn '%s' stall_acl 2>&1 >/dev/null",
             cli(), getenv("WK_PG_DSN"));
    FILE *p = popen(cmd, "r");
    char err[2048] = "";
    size_t n = p != NULL ? fread(err, 1, sizeof err - 1, p) : 0;
    err[n] = '\0';
    int ws = p != NULL ? pclose(p) : -1;
    (void)pg_test_exec(conn, "DROP TABLE IF EXISTS stall_acl");
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 1, "exit status %d: %s", ws, err);
    CHECK_MSG(strstr(err, "column \"c\" of type aclitem") != NULL, "stderr: %s", err);
    CHECK_MSG(strstr(err, "kind") == NULL, "a C kind reaches the user: %s", err);
}

WK_TEST(test_cli_pg_copy_in_record_past_the_cap_is_not_out_of_memory)
{
    NEED_CONN();
    /* one record (a line) longer than the 1 GiB a buffer holds: the cap, said as such */
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "head -c %zu /dev/zero | tr '\\000' x | %s pg copy in --dsn '%s' no_such_table "
             "2>&1 >/dev/null",
             (size_t)WK_BUF_DEFAULT_MAX + ((size_t)1 << 20), cli(), getenv("WK_PG_DSN"));
    FILE *p = popen(cmd, "r");
    char err[2048] = "";
    size_t n = p != NULL ? fread(err, 1, sizeof err - 1, p) : 0;
    err[n] = '\0';
    int ws = p != NULL ? pclose(p) : -1;
    CHECK_MSG(WIFEXITED(ws) && WEXITSTATUS(ws) == 1, "exit status %d: %s", ws, err);
    CHECK_MSG(strstr(err, "out of memory") == NULL, "stderr: %s", err);
    CHECK_MSG(strstr(err, ":1: a record longer than") != NULL, "stderr: %s", err);
}
