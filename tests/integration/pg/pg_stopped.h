/*
 * Backends stopped with SIGSTOP by the stall tests (test_pg_stalls, test_pq_waits): the pid
 * of a connection's backend, and a watchdog child that continues a stopped backend after
 * PG_STOPPED_WATCHDOG_S seconds whatever the test does, so that a failing test never leaves
 * the shared server with a stopped backend.
 */
#ifndef WK_PG_STOPPED_H
#define WK_PG_STOPPED_H

#include <sys/types.h>

#include "wirekit/pq.h"

/* The most a stopped backend stays stopped. */
#define PG_STOPPED_WATCHDOG_S 20

/* The backend pid of `c`, -1 when the query fails. */
pid_t pg_stopped_backend_of(wk_pq_conn *c);

/* Forks the watchdog of `backend`: its pid (-1 when fork failed). */
pid_t pg_stopped_watchdog(pid_t backend);

/* Continues `backend` now and ends its watchdog `w`. */
void pg_stopped_release(pid_t w, pid_t backend);

#endif
