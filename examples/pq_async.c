/*
 * Example: two PostgreSQL connections made at once, then two queries at once on them, from
 * plain poll() loops: nothing blocks after the start.
 *
 * wk_pq_connect_start starts a connection without waiting; wk_pq_connecting_step advances it
 * (the socket, then the session settings and the catalog query in one round trip) as the
 * socket allows, and wk_pq_connecting_take hands the connection over.
 * wk_pq_async_start sends a query (parameters encoded by wirekit in binary) without waiting;
 * the loop then watches each query's socket for what wk_pq_async_wants says, with the
 * earliest wk_pq_async_timeout_ms as poll's timeout, and calls wk_pq_async_step when a socket
 * is ready or a deadline comes. Rows reach the row function through a decode plan as they
 * arrive, so neither query waits for the other: the slow one (it sleeps on the server)
 * overlaps the long one. Each query has a deadline of 10 s: past it, wk_pq_async_step
 * cancels the query and reports WK_ERR_IO.
 * Needs libpq and wirekit-pq. The connection string comes from WK_PG_DSN (for example
 * "host=127.0.0.1 dbname=postgres"); without it the example exits 77 (skipped).
 * Run: WK_PG_DSN='host=127.0.0.1 dbname=postgres' ./pq_async
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime and poll: the example builds alone with -std=c11 */

#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <wirekit/pq.h>
#include <wirekit/wirekit.h>

/* What one query's rows add up to. */
typedef struct tally {
    const char *name;
    uint64_t rows;
    int64_t sum; /* of the first column, an int8 */
} tally;

/* A row as the application wants it (query 1 has only the first column). */
typedef struct row {
    int64_t id;
    wk_slice label; /* text: a view into libpq's row, valid during the call */
} row;

static wk_status add_row(void *ctx, const wk_pg_plan *plan, const uint8_t *const *vals,
                         const int *lens, wk_error *err)
{
    tally *t = ctx;
    row r;
    bool nulls[2] = {false, false};
    /* the plan decodes column i into kinds[i] at offsets[i] of `row` (see main) */
    wk_status st = wk_pg_plan_decode_row(plan, vals, lens, &r, nulls, NULL, err);
    if (st == WK_OK) {
        t->rows++;
        t->sum += nulls[0] ? 0 : r.id;
    }
    return st;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fills `fd` to wait on `sock` for what `want` (WK_PQ_WANT_*) says, and lowers *timeout
 * (-1: none yet) to `left` (-1: no deadline). */
static void watch(struct pollfd *fd, int sock, unsigned want, int left, int *timeout)
{
    fd->fd = sock;
    fd->events = (short)(((want & WK_PQ_WANT_READ) ? POLLIN : 0) |
                         ((want & WK_PQ_WANT_WRITE) ? POLLOUT : 0));
    fd->revents = 0;
    if (left >= 0 && (*timeout < 0 || left < *timeout)) {
        *timeout = left;
    }
}

/* Connects conn[0..n) at once from one poll() loop: each connect says which socket to watch
 * and for what, and each step does what the socket allows (the socket, then the session
 * set-up and the catalog query); 5 s for each. Returns 0 when all are connected. */
static int connect_all(const char *dsn, wk_pq_conn **conn, int n)
{
    wk_pq_connecting *k[8] = {NULL};
    wk_status st[8];
    wk_error err = {0};
    int running = 0, rc = 0;
    for (int i = 0; i < n && i < 8; i++) {
        st[i] = wk_pq_connect_start(dsn, NULL, 5000, &k[i], &err);
        running += st[i] == WK_OK;
        rc |= st[i] != WK_OK;
        st[i] = st[i] == WK_OK ? WK_ERR_AGAIN : st[i];
    }
    while (running > 0) {
        struct pollfd fds[8];
        int idx[8], nfds = 0, timeout = -1;
        for (int i = 0; i < n && i < 8; i++) {
            if (st[i] != WK_ERR_AGAIN) {
                continue;
            }
            /* the socket can change while libpq tries the next address: read it each time */
            watch(&fds[nfds], wk_pq_connecting_socket(k[i]), wk_pq_connecting_wants(k[i]),
                  wk_pq_connecting_timeout_ms(k[i]), &timeout);
            idx[nfds++] = i;
        }
        if (poll(fds, (nfds_t)nfds, timeout) < 0) {
            perror("pq_async: poll");
            rc = 1;
            break;
        }
        for (int j = 0; j < nfds; j++) {
            int i = idx[j];
            /* a ready socket, or a deadline that has come: step; it never blocks */
            if (fds[j].revents == 0 && wk_pq_connecting_timeout_ms(k[i]) != 0) {
                continue;
            }
            st[i] = wk_pq_connecting_step(k[i], &err);
            running -= st[i] != WK_ERR_AGAIN;
        }
    }
    for (int i = 0; i < n && i < 8; i++) {
        conn[i] = wk_pq_connecting_take(k[i]); /* NULL when given up half-way */
        if (st[i] != WK_OK) {
            fprintf(stderr, "pq_async: connection %d: %s: %s\n", i, wk_status_str(st[i]),
                    conn[i] != NULL ? wk_pq_conn_message(conn[i]) : "not connected");
            rc = 1;
        }
    }
    if (rc == 0) {
        printf("%d connections made from one poll() loop\n", n);
    }
    return rc;
}

int main(void)
{
    const char *dsn = getenv("WK_PG_DSN");
    if (dsn == NULL || *dsn == '\0') {
        printf("pq_async: WK_PG_DSN is not set; skipped\n");
        return 77;
    }
    enum { NQ = 2 };
    wk_pq_conn *conn[NQ] = {NULL, NULL};
    wk_pq_async *q[NQ] = {NULL, NULL};
    wk_error err = {0};
    int rc = 0;
    if (connect_all(dsn, conn, NQ) != 0) {
        rc = 1;
    }

    /* query 0: many rows; query 1: a few rows after a server-side sleep */
    int64_t n = 100000, pause_ms = 300;
    wk_pq_param p0[] = {{WK_PG_KIND_I64, &n, 0}};
    wk_pq_param p1[] = {{WK_PG_KIND_I64, &pause_ms, 0}};
    const char *sql[NQ] = {
        "SELECT g::int8 AS id, md5(g::text) AS label FROM generate_series(1, $1::int8) AS g",
        "SELECT g::int8 AS id FROM generate_series(1, 10) AS g, pg_sleep($1::int8 / 1000.0)"};
    const wk_pq_param *params[NQ] = {p0, p1};
    tally t[NQ] = {{"many rows", 0, 0}, {"after a sleep", 0, 0}};
    static const wk_pg_kind kinds[2] = {WK_PG_KIND_I64, WK_PG_KIND_STR};
    static const size_t offsets[2] = {offsetof(row, id), offsetof(row, label)};
    double t0 = now_s();
    for (int i = 0; i < NQ && rc == 0; i++) {
        wk_pq_row_handler h = {kinds, offsets, add_row, &t[i]};
        if (wk_pq_async_start(conn[i], sql[i], params[i], 1, &h, &q[i], &err) != WK_OK) {
            fprintf(stderr, "pq_async: start: %s\n", wk_pq_conn_message(conn[i]));
            rc = 1;
        } else {
            wk_pq_async_set_timeout(q[i], 10000);
        }
    }

    /* the event loop: one poll() over every query still running */
    int running = rc == 0 ? NQ : 0;
    wk_status outcome[NQ] = {WK_ERR_AGAIN, WK_ERR_AGAIN};
    double ended[NQ] = {0, 0};
    while (running > 0) {
        struct pollfd fds[NQ];
        int idx[NQ], nfds = 0, timeout = -1;
        for (int i = 0; i < NQ; i++) {
            unsigned want = outcome[i] == WK_ERR_AGAIN ? wk_pq_async_wants(q[i]) : 0u;
            if (want == 0) {
                continue;
            }
            watch(&fds[nfds], wk_pq_async_socket(q[i]), want, wk_pq_async_timeout_ms(q[i]),
                  &timeout);
            idx[nfds++] = i;
        }
        if (poll(fds, (nfds_t)nfds, timeout) < 0) {
            perror("pq_async: poll");
            rc = 1;
            break;
        }
        for (int k = 0; k < nfds; k++) {
            int i = idx[k];
            /* a ready socket, or a deadline that has come: step; it never blocks */
            if (fds[k].revents == 0 && wk_pq_async_timeout_ms(q[i]) != 0) {
                continue;
            }
            outcome[i] = wk_pq_async_step(q[i], &err);
            if (outcome[i] != WK_ERR_AGAIN) {
                ended[i] = now_s() - t0;
                running--;
            }
        }
    }

    for (int i = 0; i < NQ && q[i] != NULL; i++) {
        if (outcome[i] != WK_OK) {
            fprintf(stderr, "pq_async: query %d: %s: %s\n", i, wk_status_str(outcome[i]),
                    wk_pq_conn_message(conn[i]));
            rc = 1;
            continue;
        }
        printf("query %d (%s): %llu rows, sum of ids %lld, %s, done after %.0f ms\n", i,
               t[i].name, (unsigned long long)t[i].rows, (long long)t[i].sum,
               wk_pq_async_command(q[i]), ended[i] * 1000);
    }
    /* the checks a reader can redo by hand: 1 + ... + n, and 10 rows summing to 55 */
    if (rc == 0 && (t[0].sum != n * (n + 1) / 2 || t[1].rows != 10 || t[1].sum != 55)) {
        fprintf(stderr, "pq_async: unexpected sums\n");
        rc = 1;
    }
    if (rc == 0) {
        printf("both queries done in %.0f ms on one thread\n", (now_s() - t0) * 1000);
    }
    for (int i = 0; i < NQ; i++) {
        wk_pq_async_free(q[i]);
        wk_pq_conn_free(conn[i]);
    }
    return rc;
}
