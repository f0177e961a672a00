/*
 * Suite "service": the seeds' whole service over HTTP. examples/entity_service.c (wirekit:
 * libmicrohttpd, the pool, the loader, the cache) and its Go twin (bench/service/go:
 * net/http, pgx, redigo, vmihailenco/msgpack) serve GET /users/ID for 1,000 users from the
 * same PostgreSQL and Redis, loaded by wrk on loopback.
 *
 * Cases: `hot` (every request served from the service's local tier: the run starts after a
 * warm-up that filled it) and `cold` (the service runs with its local tier off, so every
 * request goes to Redis, and to PostgreSQL on a Redis miss), each with JSON and MessagePack
 * answers (chosen by the request's Accept). One run per (case, format, impl) is a fresh
 * server, a 1 s warm-up, then wrk for the measured seconds with 1 thread and 32 connections
 * over the ids in turn; the repetitions alternate the two impls. A row's ns_per_op is wall
 * ns per request at the measured throughput (1e9 / requests per second, the median run), with
 * wrk's p50 and p99 latency of that run; any non-2xx answer fails the suite.
 *
 * The two cores are not partitioned: wrk (one thread), the server, PostgreSQL and Redis all
 * share both under the kernel's scheduler, the same way for both impls. Each server keeps as
 * many requests in flight as its design lets it: Go runs a goroutine per connection on
 * GOMAXPROCS 2 (32 in flight, redigo opening a Redis connection per concurrent request);
 * the C service runs libmicrohttpd's pool of 2 threads and blocks none on a miss: a GET that
 * is not a local hit is suspended (wk_serve_get_async) and the Redis store's I/O thread
 * pipelines every GET queued meanwhile on its one connection, so all 32 can be in flight
 * too, in one write and read rather than 32 round trips. Both use 4 PostgreSQL connections
 * (pgx's default, wirekit-pq's), which only a Redis miss reaches (on the cache's workers
 * in C).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "wirekit/pq.h"

#define USERS 1000
#define REPS 3

typedef struct run_result {
    double rps, p50_ns, p99_ns;
} run_result;

/* A latency of wrk's output ("812.00us", "1.20ms", "2.00s") in ns; 0 when unreadable. */
static double latency_ns(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    return strncmp(end, "us", 2) == 0 ? v * 1e3
           : strncmp(end, "ms", 2) == 0 ? v * 1e6
           : end[0] == 's'              ? v * 1e9
           : strncmp(end, "ns", 2) == 0 ? v
                                        : 0;
}

/* Runs wrk against the port for `secs` seconds with the script; fills *r. Returns false (and
 * says why) when wrk failed or any answer was not 2xx. */
static bool run_wrk(wk_bench *b, int port, const char *script, int secs, run_result *r)
{
    char url[64], dur[16];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    snprintf(dur, sizeof dur, "%ds", secs);
    char *argv[] = {WK_BENCH_WRK, "-t1", "-c32", "-d", dur, "--latency", "-s", (char *)script, url, NULL};
    pid_t pid;
    FILE *out = wk_bench_spawn(argv, &pid);
    if (out == NULL) {
        return false;
    }
    char line[512];
    bool bad = false;
    memset(r, 0, sizeof *r);
    while (fgets(line, sizeof line, out) != NULL) {
        char pct[8], val[32];
        if (sscanf(line, " Requests/sec: %lf", &r->rps) == 1) {
            continue;
        }
        if (strstr(line, "Non-2xx") != NULL || strstr(line, "Socket errors") != NULL) {
            wk_bench_say(b, "wrk: %s", line);
            bad = bad || strstr(line, "Non-2xx") != NULL;
        } else if (sscanf(line, " %7s %31s", pct, val) == 2 && strcmp(pct, "50%") == 0) {
            r->p50_ns = latency_ns(val);
        } else if (sscanf(line, " %7s %31s", pct, val) == 2 && strcmp(pct, "99%") == 0) {
            r->p99_ns = latency_ns(val);
        }
    }
    int status = wk_bench_spawn_wait(out, pid);
    return status == 0 && !bad && r->rps > 0 && r->p99_ns > 0;
}

/* Starts a server binary on a free port; returns its pid (its port in *port), or -1. */
static pid_t start_server(const char *bin, const char *table, bool cold, int *port, FILE **out)
{
    char *argv[] = {(char *)bin, "0", (char *)table, cold ? "cold" : NULL, NULL};
    pid_t pid;
    *out = wk_bench_spawn(argv, &pid);
    if (*out == NULL) {
        return -1;
    }
    char line[128];
    if (fgets(line, sizeof line, *out) == NULL || sscanf(line, "listening on %d", port) != 1) {
        kill(pid, SIGTERM);
        wk_bench_spawn_wait(*out, pid);
        return -1;
    }
    return pid;
}

/* Writes the wrk script that asks for each id in turn with `accept`. */
static bool write_script(const char *path, const char *accept)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return false;
    }
    fprintf(f, "local n = 0\nrequest = function()\n  n = n %% %d + 1\n"
               "  return wrk.format(\"GET\", \"/users/\" .. n, {[\"Accept\"] = \"%s\"})\nend\n",
            USERS, accept);
    return fclose(f) == 0;
}

/* Makes the table and its 1,000 users (the seed's record, each with its own name). */
static bool make_table(wk_bench *b, const char *dsn, const char *table)
{
    wk_pq_conn *c = NULL;
    wk_error err = {0};
    if (wk_pq_connect(dsn, NULL, &c, &err) != WK_OK) {
        wk_bench_say(b, "service: %s: %s", dsn, err.msg);
        return false;
    }
    char drop[128], create[384], insert[384];
    snprintf(drop, sizeof drop, "DROP TABLE IF EXISTS %s", table);
    snprintf(create, sizeof create,
             "CREATE TABLE %s (id int8 PRIMARY KEY, username text NOT NULL, password text, "
             "age int4, enabled bool NOT NULL, metadata jsonb NOT NULL)",
             table);
    snprintf(insert, sizeof insert,
             "INSERT INTO %s SELECT i, 'user' || i, 'secret', 20, true, "
             "'{\"hello\": \"world\", \"int\": 10}' FROM generate_series(1, %d) i",
             table, USERS);
    const char *const steps[] = {drop, create, insert};
    PGresult *r = NULL;
    wk_status st = WK_OK;
    for (size_t i = 0; i < 3 && st == WK_OK; i++) {
        PQclear(r);
        r = NULL;
        st = wk_pq_exec(c, steps[i], NULL, 0, &r, &err);
    }
    PQclear(r);
    wk_pq_conn_free(c);
    if (st != WK_OK) {
        wk_bench_say(b, "service: cannot make %s: %s", table, err.msg);
    }
    return st == WK_OK;
}

int wk_bench_suite_service(wk_bench *b)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL || getenv("WK_REDIS_URL") == NULL) {
        wk_bench_say(b, "service: skipped, needs WK_PG_DSN and WK_REDIS_URL (scripts/servers.sh)");
        return 0;
    }
    if (access(WK_BENCH_SERVICE_C, X_OK) != 0 || access(WK_BENCH_WRK, X_OK) != 0) {
        wk_bench_say(b, "service: skipped, needs wrk and examples/entity_service "
                        "(libmicrohttpd-dev, wrk: scripts/deps.sh)");
        return 0;
    }
    static const struct {
        const char *impl, *bin;
    } impls[] = {
        {"wirekit", WK_BENCH_SERVICE_C},
#ifdef WK_BENCH_SERVICE_GO
        {"go", WK_BENCH_SERVICE_GO},
#endif
    };
    size_t nimpl = sizeof impls / sizeof impls[0];
    if (nimpl == 1) {
        wk_bench_say(b, "service: the Go twin is not built (golang-go, pgx v4, redigo, msgpack "
                        "v5: scripts/deps.sh); wirekit's rows only");
    }
    wk_bench_peer(b, "go", "Go (Debian golang-go) net/http, pgx v4 pool, redigo, "
                           "vmihailenco/msgpack v5; bench/service/go/entityservice.go");
    char table[48];
    snprintf(table, sizeof table, "wk_bench_service_%ld", (long)getpid());
    if (!make_table(b, dsn, table)) {
        return 0;
    }
    static const struct {
        const char *name, *accept;
        bool cold;
    } cases[] = {
        {"hot json", "application/json", false},
        {"hot msgpack", "application/vnd.msgpack", false},
        {"cold json", "application/json", true},
        {"cold msgpack", "application/vnd.msgpack", true},
    };
    int secs = wk_bench_quick(b) ? 1 : 5, reps = wk_bench_quick(b) ? 1 : REPS;
    char script[64];
    snprintf(script, sizeof script, "/tmp/wk_bench_service_%ld.lua", (long)getpid());
    static char notes[8][160];
    size_t nnote = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        if (!write_script(script, cases[k].accept)) {
            wk_bench_fail(b, "service: cannot write %s", script);
            break;
        }
        run_result runs[2][REPS];
        bool ok[2] = {true, true};
        for (int rep = 0; rep < reps; rep++) {
            for (size_t j = 0; j < nimpl; j++) {
                size_t i = (j + (size_t)rep) % nimpl; /* alternate who goes first */
                int port;
                FILE *out;
                pid_t pid = start_server(impls[i].bin, table, cases[k].cold, &port, &out);
                run_result warm;
                if (pid < 0) {
                    wk_bench_fail(b, "service: %s did not start", impls[i].bin);
                    ok[i] = false;
                    continue;
                }
                ok[i] = ok[i] && run_wrk(b, port, script, 1, &warm) &&
                        run_wrk(b, port, script, secs, &runs[i][rep]);
                kill(pid, SIGTERM);
                wk_bench_spawn_wait(out, pid);
            }
        }
        for (size_t i = 0; i < nimpl; i++) {
            if (!ok[i]) {
                wk_bench_fail(b, "service: %s %s: wrk failed or got non-2xx answers",
                              impls[i].impl, cases[k].name);
                continue;
            }
            /* the median run by throughput; its latencies go with it */
            run_result *r = runs[i], tmp;
            for (int x = 1; x < reps; x++) {
                for (int y = x; y > 0 && r[y].rps < r[y - 1].rps; y--) {
                    tmp = r[y];
                    r[y] = r[y - 1];
                    r[y - 1] = tmp;
                }
            }
            const run_result *m = &r[reps / 2];
            snprintf(notes[nnote], sizeof notes[nnote], "%.0f req/s, p50 %.0f us, p99 %.0f us",
                     m->rps, m->p50_ns / 1e3, m->p99_ns / 1e3);
            wk_bench_record_requests(b, cases[k].name, impls[i].impl, 1e9 / m->rps,
                                     1e9 / r[reps - 1].rps, 1e9 / r[0].rps, reps, m->p50_ns,
                                     m->p99_ns, notes[nnote]);
            nnote++;
        }
    }
    unlink(script);
    wk_pq_conn *c = NULL;
    char sql[128];
    snprintf(sql, sizeof sql, "DROP TABLE IF EXISTS %s", table);
    if (wk_pq_connect(dsn, NULL, &c, NULL) == WK_OK) {
        PGresult *r = NULL;
        wk_pq_exec(c, sql, NULL, 0, &r, NULL);
        PQclear(r);
        wk_pq_conn_free(c);
    }
    return 0;
}
