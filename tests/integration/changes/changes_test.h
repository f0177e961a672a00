/*
 * Helpers of the change-stream tests: a stream opened on a slot and publication, a callback
 * that renders every change as a JSON line (wk_pq_changes_append) and stops the stream after
 * a number of commits, with a watchdog that stops it after a generous deadline so that a
 * missing change fails the test instead of hanging it.
 */
#ifndef WK_CHANGES_TEST_H
#define WK_CHANGES_TEST_H

#include "wirekit/pq_changes.h"
#include "wk_test.h"

/* What a run collected. */
typedef struct changes_run {
    wk_pq_changes *s;
    wk_buf lines;        /* one JSON line per change */
    size_t changes;      /* row changes seen */
    size_t commits;      /* COMMIT callbacks */
    size_t want_commits; /* stop after this many (0: only the watchdog stops) */
    size_t streamed;     /* changes of transactions streamed in progress */
    size_t fail_after;   /* return WK_ERR_IO at this change (1-based; 0: never) */
    const char *stop_at; /* stop after the commit of a change whose line holds this */
    size_t txn_start;    /* where the current transaction's lines start */
} changes_run;

/* Opens a stream on `dsn` (NULL: WK_PG_DSN) with `flags` and the session's
 * logical_decoding_work_mem `work_mem` (NULL: the server's): the status, *out set. */
wk_status changes_open(const char *dsn, const char *slot, const char *pub, unsigned flags,
                       const char *work_mem, wk_pq_changes **out, wk_error *err);

/* Runs `s` until `want_commits` commits were handled or `deadline_s` seconds passed; the
 * callback fails with WK_ERR_IO at change `fail_after` (0: never). The run's status (WK_OK
 * when stopped). `r` is initialised here; free with changes_run_free. */
wk_status changes_collect(wk_pq_changes *s, size_t want_commits, size_t fail_after,
                          double deadline_s, changes_run *r, wk_error *err);

/* changes_collect that stops after the commit of the first change holding `needle`. */
wk_status changes_collect_until(wk_pq_changes *s, const char *needle, double deadline_s,
                                changes_run *r, wk_error *err);

/* Frees what the run collected (not the stream). */
void changes_run_free(changes_run *r);

/* Drops the slot `slot` on the server of `conn_dsn` (NULL: WK_PG_DSN) if it exists. */
void changes_drop_slot(const char *dsn, const char *slot);

/* Runs `sql` on a fresh connection to `dsn` (NULL: WK_PG_DSN): false (and the error on
 * stderr) when it fails. */
bool changes_sql(const char *dsn, const char *sql);

/* The number of lines of `r` that hold `needle`. */
size_t changes_count(const changes_run *r, const char *needle);

#endif
