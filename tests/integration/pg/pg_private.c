/*
 * The private PostgreSQL of the fault tests (pg_private.h): pg_ctl and initdb run through
 * system(), under `runuser -u postgres` when the test runs as root; and the fault tests' row
 * counter.
 */
#include "pg_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static char dir[128];
static const char pgbin[] = "/usr/lib/postgresql/15/bin";

static int sh(const char *cmd)
{
    char full[4096];
    snprintf(full, sizeof full, "%s%s", geteuid() == 0 ? "runuser -u postgres -- " : "", cmd);
    return system(full);
}

bool pg_private_available(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/initdb", pgbin);
    return access(path, X_OK) == 0;
}

const char *pg_private_dir(void)
{
    return dir;
}

void pg_private_dsn(char *out, size_t cap, int port)
{
    snprintf(out, cap, "host=%s port=%d user=wirekit dbname=postgres", dir, port);
}

bool pg_private_restart(int port)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd,
             "%s/pg_ctl -D %s/data -l %s/server.log -w -t 60 -o \"-p %d -k %s -c "
             "listen_addresses='' -c fsync=off\" start >/dev/null",
             pgbin, dir, dir, port, dir);
    return sh(cmd) == 0;
}

bool pg_private_restart_fast(void)
{
    char cmd[2048];
    /* the server's options come back from postmaster.opts */
    snprintf(cmd, sizeof cmd, "%s/pg_ctl -D %s/data -l %s/server.log -m fast -w -t 60 restart "
             ">/dev/null",
             pgbin, dir, dir);
    return sh(cmd) == 0;
}

pid_t pg_private_stop_later(useconds_t us)
{
    pid_t child = fork();
    if (child == 0) {
        usleep(us);
        char cmd[2048];
        snprintf(cmd, sizeof cmd, "%s/pg_ctl -D %s/data -m immediate -w stop >/dev/null 2>&1",
                 pgbin, dir);
        _exit(sh(cmd) == 0 ? 0 : 1);
    }
    return child;
}

bool pg_private_start(const char *tag, int port)
{
    char cmd[2048];
    snprintf(dir, sizeof dir, "%s/wk-%s.XXXXXX",
             getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp", tag);
    if (mkdtemp(dir) == NULL) {
        return false;
    }
    if (geteuid() == 0) {
        snprintf(cmd, sizeof cmd, "chown postgres:postgres %s", dir);
        if (system(cmd) != 0) {
            return false;
        }
    }
    snprintf(cmd, sizeof cmd,
             "%s/initdb -D %s/data -U wirekit -A trust --no-sync -E UTF8 --locale=C "
             ">%s/initdb.log 2>&1",
             pgbin, dir, dir);
    if (sh(cmd) != 0) {
        return false;
    }
    return pg_private_restart(port);
}

void pg_private_remove(void)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s/pg_ctl -D %s/data -m immediate -w stop >/dev/null 2>&1", pgbin,
             dir);
    (void)sh(cmd);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    (void)system(cmd);
}


wk_status pg_count_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                       const int *lens, wk_error *err)
{
    pg_counter *c = ctx;
    int64_t id = 0;
    wk_status st = wk_pg_plan_decode_row(plan, vals, lens, &id, NULL, NULL, err);
    if (st == WK_OK) {
        c->rows++;
        c->last_id = id;
    }
    return st;
}

void pg_private_stopped(pid_t child, const wk_pq_conn *conn, pg_stopped *out)
{
    out->wait_status = 0;
    waitpid(child, &out->wait_status, 0);
    snprintf(out->msg, sizeof out->msg, "%s", wk_pq_conn_message(conn));
    const wk_pq_error *le = wk_pq_last_error(conn);
    snprintf(out->sqlstate, sizeof out->sqlstate, "%.5s", le != NULL ? le->sqlstate : "-");
}

bool pg_private_stop_honest(wk_status st, const pg_stopped *s)
{
    return st == WK_ERR_CONNECT || (st == WK_ERR_SERVER && strncmp(s->sqlstate, "57P", 3) == 0);
}
