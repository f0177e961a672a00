/*
 * Helpers of the change-stream tests (changes_test.h): opening, collecting with a watchdog,
 * slot clean-up and one-shot SQL.
 */
#define _GNU_SOURCE /* memmem */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "changes_test.h"

wk_status changes_open(const char *dsn, const char *slot, const char *pub, unsigned flags,
                       const char *work_mem, wk_pq_changes **out, wk_error *err)
{
    wk_pq_changes_opts o;
    memset(&o, 0, sizeof o);
    o.dsn = dsn != NULL ? dsn : getenv("WK_PG_DSN");
    o.slot = slot;
    o.publication = pub;
    o.flags = flags;
    o.decoding_work_mem = work_mem;
    o.timeout_ms = 60000; /* a loaded machine is slow, never silent that long */
    return wk_pq_changes_open(&o, out, err);
}

static wk_status collect_one(void *ctx, const wk_pq_change *ch, wk_error *err)
{
    changes_run *r = ctx;
    if (ch->op == WK_PQ_CHANGE_COMMIT) {
        r->commits++;
        bool seen = r->stop_at != NULL &&
                    memmem(r->lines.data + r->txn_start, r->lines.len - r->txn_start, r->stop_at,
                           strlen(r->stop_at)) != NULL;
        if (seen || (r->want_commits != 0 && r->commits >= r->want_commits)) {
            wk_pq_changes_stop(r->s);
        }
        r->txn_start = r->lines.len;
        return WK_OK;
    }
    r->changes++;
    r->streamed += ch->streamed;
    if (r->fail_after != 0 && r->changes == r->fail_after) {
        return wk_error_set(err, WK_ERR_IO, 0, "the test's consumer failed");
    }
    return wk_pq_changes_append(r->s, ch, NULL, &r->lines, err);
}

typedef struct watchdog {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool done;
    double deadline_s;
    wk_pq_changes *s;
} watchdog;

static void *watch(void *arg)
{
    watchdog *w = arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)w->deadline_s;
    pthread_mutex_lock(&w->mu);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cv, &w->mu, &until) != 0) {
            wk_pq_changes_stop(w->s); /* the deadline: stop, the test sees what is missing */
            break;
        }
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static wk_status collect(wk_pq_changes *s, size_t want_commits, size_t fail_after,
                        const char *stop_at, double deadline_s, changes_run *r, wk_error *err)
{
    memset(r, 0, sizeof *r);
    r->stop_at = stop_at;
    r->s = s;
    r->want_commits = want_commits;
    r->fail_after = fail_after;
    wk_buf_init(&r->lines, NULL, 0);
    watchdog w = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, deadline_s, s};
    pthread_t t;
    pthread_create(&t, NULL, watch, &w);
    wk_status st = wk_pq_changes_run(s, collect_one, r, err);
    pthread_mutex_lock(&w.mu);
    w.done = true;
    pthread_cond_signal(&w.cv);
    pthread_mutex_unlock(&w.mu);
    pthread_join(t, NULL);
    return st;
}

wk_status changes_collect(wk_pq_changes *s, size_t want_commits, size_t fail_after,
                          double deadline_s, changes_run *r, wk_error *err)
{
    return collect(s, want_commits, fail_after, NULL, deadline_s, r, err);
}

wk_status changes_collect_until(wk_pq_changes *s, const char *needle, double deadline_s,
                                changes_run *r, wk_error *err)
{
    return collect(s, 0, 0, needle, deadline_s, r, err);
}

void changes_run_free(changes_run *r)
{
    wk_buf_free(&r->lines);
}

static void quiet(void *arg, const char *msg)
{
    (void)arg;
    (void)msg; /* NOTICEs of DROP ... IF EXISTS */
}

bool changes_sql(const char *dsn, const char *sql)
{
    PGconn *c = PQconnectdb(dsn != NULL ? dsn : getenv("WK_PG_DSN"));
    PQsetNoticeProcessor(c, quiet, NULL);
    PGresult *r = PQexec(c, sql);
    bool ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;
    if (!ok) {
        fprintf(stderr, "%s: %s", sql, PQresultErrorMessage(r));
    }
    PQclear(r);
    PQfinish(c);
    return ok;
}

void changes_drop_slot(const char *dsn, const char *slot)
{
    char sql[256];
    snprintf(sql, sizeof sql,
             "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
             "WHERE slot_name = '%s'",
             slot);
    (void)changes_sql(dsn, sql);
}

size_t changes_count(const changes_run *r, const char *needle)
{
    size_t n = 0;
    const char *p = (const char *)r->lines.data, *end = p + r->lines.len;
    while (p != NULL && p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
        size_t k = strlen(needle);
        for (size_t i = 0; i + k <= len; i++) {
            if (memcmp(p + i, needle, k) == 0) {
                n++;
                break;
            }
        }
        p = nl != NULL ? nl + 1 : NULL;
    }
    return n;
}
