/*
 * A PRIVATE PostgreSQL 15 for fault tests: initdb in a temp dir, a Unix socket only, started,
 * stopped (`pg_ctl stop -m immediate`, also from a forked child mid-operation) and removed by
 * the test itself, so the shared test server is never touched. Run as root, it runs as the
 * postgres account (PostgreSQL refuses root). Also the row counter the fault tests read
 * their rows with.
 */
#ifndef WK_PG_PRIVATE_H
#define WK_PG_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <unistd.h>

#include "wirekit/pg.h"
#include "wirekit/pq.h"
#include "wk_test.h"

/* True when the PostgreSQL 15 binaries (initdb) are installed. */
bool pg_private_available(void);

/* initdb into a new temp dir named after `tag`, then starts the server on `port`. The
 * directory (pg_private_dir()) exists even when this fails: call pg_private_remove(). */
bool pg_private_start(const char *tag, int port);

/* Starts the server again (after a stop) on `port`. */
bool pg_private_restart(int port);

/* Restarts the running server as an operator would (`pg_ctl restart -m fast`: every session
 * ended with its FATAL report, then the server up again on the same port), returning once
 * it accepts connections again. */
bool pg_private_restart_fast(void);

/* Forks a child that stops the server with `-m immediate` after `us` microseconds; its exit
 * status is 0 when pg_ctl succeeded. */
pid_t pg_private_stop_later(useconds_t us);

/* What a client saw when the server was stopped under it (pg_private_stop_later). */
typedef struct pg_stopped {
    int wait_status; /* the stopping child's, from waitpid */
    char msg[512];   /* the connection's message */
    char sqlstate[6]; /* its last error's SQLSTATE, "-" when none */
} pg_stopped;

/* Waits for the stopping `child` and records what `conn` reports into `out`. */
void pg_private_stopped(pid_t child, const wk_pq_conn *conn, pg_stopped *out);

/* Whether `st` is an honest end for an operation the stop cut short: the connection lost, or
 * the server's own shutdown report (SQLSTATE class 57P). */
bool pg_private_stop_honest(wk_status st, const pg_stopped *s);

/* Stops the server (immediate) and removes its directory. */
void pg_private_remove(void);

/* The directory holding data/, the logs and the socket. */
const char *pg_private_dir(void);

/* A DSN for the private server on `port` (user wirekit, database postgres). */
void pg_private_dsn(char *out, size_t cap, int port);

/* What pg_count_row has seen: the rows, and the int8 first column of the last one. */
typedef struct pg_counter {
    uint64_t rows;
    int64_t last_id;
} pg_counter;

/* A row function (wk_pq_copy_row_fn) counting rows into the pg_counter `ctx`; the plan
 * decodes the first column as WK_PG_KIND_I64. */
wk_status pg_count_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                       const int *lens, wk_error *err);

/* Skips the test without the binaries; else starts a private server named after `tag` on
 * `port` and writes its DSN into the char array `dsn`, or fails the test. */
#define NEED_PRIVATE_SERVER(tag, port, dsn)                                                \
    do {                                                                                  \
        if (!pg_private_available()) {                                                    \
            SKIP("no PostgreSQL 15 initdb in /usr/lib/postgresql/15/bin");                \
        }                                                                                 \
        if (!pg_private_start(tag, port)) {                                               \
            pg_private_remove();                                                          \
            CHECK_MSG(false, "cannot start a private PostgreSQL in %s", pg_private_dir()); \
        }                                                                                 \
        pg_private_dsn(dsn, sizeof dsn, port);                                            \
    } while (0)

#endif
