/*
 * The Redis store's asynchronous get, the wk_cache_store `fetch_async` entry: a caller queues
 * a GET and returns at once; one I/O thread per store (started by the first request, stopped
 * by wk_redis_store_free) writes every GET queued since its last wake-up in one send on its
 * own connection (pipelining: one write and, mostly, one read carry many GETs), reads the
 * replies in order and answers each request's `done` from the read buffer. In the flow of a
 * cold cache get (cache -> fetch_async -> this thread -> RESP -> on_fetched in the cache) it
 * replaces the blocking round trip per request of fetch_each: a thread serving requests no
 * longer waits on Redis, so the GETs in flight are as many as the requests, not the threads.
 *
 * The connection is the thread's alone, opened with the pool's connect (redis_pool.c: AUTH,
 * CLIENT SETNAME, SELECT, TLS by the store's context) to the server the topology names
 * (redis_cluster.c: the single server, or Sentinel's master, looked up first when not known
 * yet); never the feed's, so no read goes on the connection tracking is on. A Cluster's
 * store has no fetch_async (redis_store.c leaves it NULL): the cache then runs its gets on
 * its worker threads through the synchronous path, which routes by slot and follows
 * redirects; this file therefore never meets a MOVED or ASK.
 *
 * Failures, each request answered exactly once: every request carries the store's command
 * deadline from when it was queued; when the oldest one in flight passes it, every request in
 * flight fails with WK_ERR_IO, the connection is closed (the next batch opens another) and
 * the server is marked down for retry_ms as the pool does, so the requests that follow fail
 * fast instead of each waiting out a deadline. A connection that breaks (reset, closed,
 * malformed reply) fails every request in flight on it the same way; one that cannot be
 * opened fails the batch. An error reply fails its request only. Stopping answers every
 * request still queued or in flight with WK_ERR_IO before the thread ends.
 *
 * The trade-off: one connection and one thread per store, so the store's asynchronous
 * throughput is what one core can parse and the callers' `done` can take (the cache decodes
 * each value there); the GETs of a burst share one write, which is what the cold service
 * case needed (docs/benchmarks.md, "service").
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "redis/redis_internal.h"

/* One request: queued, then in flight in the order sent; the key follows it. */
struct wk__rareq {
    wk__rareq *next;
    wk_cache_fetched_fn done;
    void *ctx;
    int64_t deadline;
    size_t key_len;
    char key[];
};

/* The I/O thread's own state: its connection, the server it is to, the requests in flight on
 * it (oldest first: replies come in that order, and so do the deadlines). */
typedef struct io {
    wk_redis_store *s;
    wk__rconn *c;
    wk__rsrv *v;
    wk__rareq *fly, **fly_tail;
} io;

/* Answers `r` (bytes valid during the call only) and frees it. */
static void answer(wk_redis_store *s, wk__rareq *r, wk_status st, const uint8_t *bytes,
                   size_t len, bool found, const wk_error *err)
{
    r->done(r->ctx, st, bytes, len, found, err);
    wk_free(s->alloc, r, sizeof *r + r->key_len);
}

/* Fails every request of the list `r` with `err`. */
static void fail_all(wk_redis_store *s, wk__rareq *r, const wk_error *err)
{
    while (r != NULL) {
        wk__rareq *next = r->next;
        answer(s, r, err->code, NULL, 0, false, err);
        r = next;
    }
}

/* Closes the connection after a failure `err`: every request in flight on it fails, and with
 * `down` the server is marked down (fail fast for retry_ms, topology refresh wanted). */
static void drop_conn(io *o, const wk_error *err, bool down)
{
    wk__rareq *fly = o->fly;
    o->fly = NULL;
    o->fly_tail = &o->fly;
    wk__rconn_free(o->c);
    o->c = NULL;
    if (down) {
        wk__redis_mark_down(o->s, o->v);
    }
    fail_all(o->s, fly, err);
}

/* A connection to the server the topology names now, in o->c; false with `err` set. */
static bool open_conn(io *o, wk_error *err)
{
    wk_redis_store *s = o->s;
    wk__redis_maybe_refresh(s);
    int64_t deadline = wk__redis_now_ms() + s->cfg.command_ms;
    if (wk__redis_await_map(s, deadline, err) != WK_OK) {
        return false;
    }
    wk__rsrv *v = wk__redis_route(s, "", 0);
    if (wk__redis_now_ms() < __atomic_load_n(&v->down_until_ms, __ATOMIC_ACQUIRE)) {
        wk_error_set(err, WK_ERR_IO, 0,
                     "redis: unavailable (a recent command failed; retrying soon)");
        return false;
    }
    o->c = wk__redis_connect(s, &v->ep, false, err);
    if (o->c == NULL) {
        wk__redis_mark_down(s, v);
        return false;
    }
    o->v = v;
    return true;
}

/* Sends the batch `r` (requests queued since the last wake-up) in one write, opening the
 * connection first when there is none (or, with nothing in flight, when the topology now
 * names another server); requests past their deadline fail without being sent. */
static void send_batch(io *o, wk__rareq *r)
{
    wk_redis_store *s = o->s;
    wk_error err = {WK_OK, 0, NULL};
    if (o->c != NULL && o->fly == NULL && wk__redis_route(s, "", 0) != o->v) {
        wk__rconn_free(o->c); /* a failover moved the master: follow it */
        o->c = NULL;
    }
    if (o->c == NULL && !open_conn(o, &err)) {
        fail_all(s, r, &err);
        return;
    }
    int64_t now = wk__redis_now_ms();
    bool sent = false;
    while (r != NULL) {
        wk__rareq *next = r->next;
        if (now >= r->deadline) {
            wk_error_set(&err, WK_ERR_IO, 0, "redis: command timed out (deadline passed)");
            answer(s, r, WK_ERR_IO, NULL, 0, false, &err);
        } else if (wk__rconn_append_get(o->c, r->key, r->key_len, false, &err) != WK_OK) {
            answer(s, r, err.code, NULL, 0, false, &err); /* nothing of it was queued */
        } else {
            r->next = NULL;
            *o->fly_tail = r;
            o->fly_tail = &r->next;
            sent = true;
        }
        r = next;
    }
    if (sent && wk__rconn_flush(o->c, now + s->cfg.command_ms, &err) != WK_OK) {
        drop_conn(o, &err, true);
    }
}

/* Reads every reply that has arrived, without waiting, and answers its request. */
static void read_replies(io *o)
{
    wk_redis_store *s = o->s;
    bool may_recv = true;
    wk_error err = {WK_OK, 0, NULL};
    while (o->c != NULL) {
        bool got = false;
        if (wk__rconn_next(o->c, &s->cfg.lim, &may_recv, &got, &err) != WK_OK) {
            drop_conn(o, &err, true);
            return;
        }
        if (!got) {
            return;
        }
        wk__rareq *r = o->fly;
        if (r == NULL) { /* a reply nobody asked for: the stream is out of step */
            wk_error_set(&err, WK_ERR_IO, 0, "redis: a reply no GET asked for");
            drop_conn(o, &err, true);
            return;
        }
        o->fly = r->next;
        if (o->fly == NULL) {
            o->fly_tail = &o->fly;
        }
        const uint8_t *val = NULL;
        size_t len = 0;
        const char *why = NULL;
        switch (wk__redis_get_reply(o->c, &o->c->nodes[0], &val, &len, &why)) {
        case WK__GET_HIT: answer(s, r, WK_OK, val, len, true, NULL); break;
        case WK__GET_MISS: answer(s, r, WK_OK, NULL, 0, false, NULL); break;
        case WK__GET_FAILED:
            wk_error_set(&err, WK_ERR_IO, 0, why);
            answer(s, r, WK_ERR_IO, NULL, 0, false, &err);
            break;
        }
    }
}

/* Takes every queued request (NULL when none); *stop tells whether the store is stopping. */
static wk__rareq *take_queue(wk__rasync *q, bool *stop)
{
    pthread_mutex_lock(&q->mu);
    wk__rareq *r = q->head;
    q->head = NULL;
    q->tail = &q->head;
    *stop = q->stopping;
    pthread_mutex_unlock(&q->mu);
    return r;
}

/* The I/O thread: send what was queued, read what arrived, expire the oldest in flight, then
 * poll the wake-up eventfd and the connection until the oldest deadline. */
static void *async_main(void *arg)
{
    wk_redis_store *s = arg;
    wk__rasync *q = &s->async;
    io o = {s, NULL, NULL, NULL, NULL};
    o.fly_tail = &o.fly;
    bool readable = false;
    wk_error err = {WK_OK, 0, NULL};
    for (;;) {
        bool stop = false;
        wk__rareq *batch = take_queue(q, &stop);
        if (stop) {
            wk_error_set(&err, WK_ERR_IO, 0, "redis: the store was freed before the GET "
                                             "was answered");
            fail_all(s, batch, &err);
            if (o.c != NULL) {
                drop_conn(&o, &err, false);
            }
            return NULL;
        }
        if (batch != NULL) {
            send_batch(&o, batch);
        }
        if (readable && o.c != NULL && o.fly == NULL) {
            /* a close or a reply while nothing was asked: the server went away (or spoke out
             * of turn); reopen on the next batch rather than fail it on a dead connection.
             * TLS records that carry no reply (a session ticket) leave it open. */
            bool may_recv = true, got = false;
            if (wk__rconn_next(o.c, &s->cfg.lim, &may_recv, &got, &err) != WK_OK || got) {
                wk__rconn_free(o.c);
                o.c = NULL;
            }
        } else if (readable && o.c != NULL) {
            read_replies(&o);
        }
        readable = false;
        int64_t now = wk__redis_now_ms();
        if (o.fly != NULL && now >= o.fly->deadline) {
            wk_error_set(&err, WK_ERR_IO, 0, "redis: command timed out (deadline passed)");
            drop_conn(&o, &err, true);
        }
        struct pollfd p[2] = {{q->wake, POLLIN, 0}, {o.c != NULL ? o.c->fd : -1, POLLIN, 0}};
        int64_t left = o.fly != NULL ? o.fly->deadline - now : -1;
        int r = poll(p, 2, left < 0 ? -1 : (int)(left > 60000 ? 60000 : left));
        if (r < 0 && errno != EINTR) {
            wk_error_set(&err, WK_ERR_IO, 0, "redis: poll failed");
            if (o.c != NULL) {
                drop_conn(&o, &err, false);
            }
            continue;
        }
        if (r > 0 && p[0].revents != 0) {
            uint64_t n;
            ssize_t got = read(q->wake, &n, sizeof n);
            (void)got; /* nonblocking: EAGAIN when another wake-up already took it */
        }
        readable = r > 0 && p[1].revents != 0;
    }
}

void wk__redis_async_init(wk_redis_store *s)
{
    pthread_mutex_init(&s->async.mu, NULL);
    s->async.tail = &s->async.head;
    s->async.wake = -1;
}

wk_status wk__redis_fetch_async(void *self, const char *key, size_t key_len,
                                wk_cache_fetched_fn done, void *ctx)
{
    wk_redis_store *s = self;
    wk__rasync *q = &s->async;
    wk__rareq *r = wk_alloc(s->alloc, sizeof *r + key_len);
    if (r == NULL) {
        return WK_ERR_NOMEM;
    }
    r->next = NULL;
    r->done = done;
    r->ctx = ctx;
    r->deadline = wk__redis_now_ms() + s->cfg.command_ms;
    r->key_len = key_len;
    memcpy(r->key, key, key_len);
    pthread_mutex_lock(&q->mu);
    if (!q->started && !q->stopping) { /* the first request starts the thread */
        q->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (q->wake >= 0 && pthread_create(&q->thread, NULL, async_main, s) == 0) {
            q->started = true;
        } else if (q->wake >= 0) {
            close(q->wake);
            q->wake = -1;
        }
    }
    if (!q->started || q->stopping) {
        pthread_mutex_unlock(&q->mu);
        wk_free(s->alloc, r, sizeof *r + key_len);
        return WK_ERR_IO;
    }
    bool was_empty = q->head == NULL; /* otherwise a wake-up is already due */
    *q->tail = r;
    q->tail = &r->next;
    pthread_mutex_unlock(&q->mu);
    if (was_empty) {
        uint64_t one = 1;
        ssize_t w = write(q->wake, &one, sizeof one);
        (void)w; /* only fails when the counter is full, and then the thread is woken */
    }
    return WK_OK;
}

void wk__redis_async_stop(wk_redis_store *s)
{
    wk__rasync *q = &s->async;
    pthread_mutex_lock(&q->mu);
    q->stopping = true;
    bool started = q->started;
    pthread_mutex_unlock(&q->mu);
    if (started) {
        uint64_t one = 1;
        ssize_t w = write(q->wake, &one, sizeof one);
        (void)w;
        pthread_join(q->thread, NULL);
        close(q->wake);
        q->wake = -1;
    }
    pthread_mutex_destroy(&q->mu);
}
