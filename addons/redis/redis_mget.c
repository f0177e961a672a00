/*
 * The Redis store's multi-get, the wk_cache_store `fetch_each` entry and the hot path of a
 * cache miss: the cache hands over the keys it missed locally, this file groups them by
 * server (redis_cluster.c routes each key), takes one connection per server (through
 * wk__redis_checkout(), from redis_pool.c), pipelines the GETs on it (redis_resp.c writes
 * them and parses the replies, redis_transport.c moves the bytes) and gives each value to the
 * cache's `take` callback as its reply is parsed, straight from the read buffer.
 *
 * Every batch is sent before any reply is read and the replies are read from whichever
 * server answers first (one poll over the connections still due), so the servers work in
 * parallel and a slow one does not hold up the others; the whole call has one deadline. The
 * trade-off is the window (pipeline_window): at most that many GETs are in flight per
 * connection, refilled in one send once half of them are answered, so a multi-get of many
 * keys keeps every server busy without making it queue all the replies at once, at the cost
 * of more sends per key when the window is small. Keys redirected by MOVED or ASK are sent
 * again to their new server, twice at most. A connection that fails is given back broken
 * (the pool then fails fast for retry_ms); an error reply keeps it.
 *
 * What the window and the parallel reads buy is measured by the cache benchmark's "redis
 * pipelined" case (16 keys per call on one server) and "redis cluster get, pipelined" (480
 * keys over a cluster, windows 16 and 64, beside redis-benchmark on the same servers):
 * re-measure with `wirekit bench --suite cache` (`--case cluster` for the cluster alone)
 * after changing this file; the figures belong in the benchmark's output, not here.
 */
#include <string.h>

#include "redis/redis_internal.h"

/* A multi-get on one server: the GETs of keys idx[0..n) pipelined on one connection, at most
 * the store's window of them in flight. */
typedef struct get_batch {
    wk__rsrv *v;
    wk__rconn *c; /* while replies are due */
    const wk_slice *keys; /* the call's keys, and its deadline */
    int64_t deadline;
    size_t *idx;
    size_t n;
    bool asking;
    size_t sent;  /* keys whose GET was sent */
    bool ready;   /* its socket was readable at the last poll (or it was not polled) */
    size_t got;   /* replies read (ASKING's +OK included) */
    wk_status st; /* the batch's first failure */
} get_batch;

/* Sends the next keys of a batch, as many as the window has room for. On failure the
 * connection is unusable: the caller gives it back broken. */
static wk_status batch_fill(wk_redis_store *s, get_batch *b, wk_error *err)
{
    const wk_slice *keys = b->keys;
    size_t answered = b->asking ? b->got / 2 : b->got;
    size_t end = answered + s->cfg.window < b->n ? answered + s->cfg.window : b->n;
    for (; b->sent < end; b->sent++) {
        const wk_slice *k = &keys[b->idx[b->sent]];
        wk_status st = wk__rconn_append_get(b->c, k->ptr, k->len, b->asking, err);
        if (st != WK_OK) {
            return st;
        }
    }
    return wk__rconn_flush(b->c, b->deadline, err);
}

/* Ends a batch's use of its connection, broken by `st` (kept as the batch's failure when it
 * is the first) or, with WK_OK, usable. */
static void batch_end(wk_redis_store *s, get_batch *b, wk_status st)
{
    wk__redis_give_back(s, b->v, b->c, st != WK_OK);
    b->c = NULL;
    if (b->st == WK_OK) {
        b->st = st;
    }
}

/* Takes a connection and sends the first window of a batch; false (batch failed, `err`
 * set) when no connection or the send failed. */
static bool batch_send(wk_redis_store *s, get_batch *b, wk_error *err)
{
    b->c = wk__redis_checkout(s, b->v, b->deadline, err);
    if (b->c == NULL) {
        b->st = WK_ERR_IO;
        return false;
    }
    wk_status st = batch_fill(s, b, err);
    if (st != WK_OK) {
        batch_end(s, b, st);
        return false;
    }
    return true;
}

/* The k-th reply of a batch, `r`: a value handed to `take`, a miss, a redirect (redir[i] set
 * to the target, asking[i] for ASK) or a failure kept in b->st (the first, described in
 * `err`; the replies after it are only drained). */
static void batch_reply(wk_redis_store *s, get_batch *b, size_t k, const wk__rnode *r,
                        wk_cache_take_fn take, void *ctx, wk__rsrv **redir, bool *asking,
                        wk_error *err)
{
    if ((b->asking && k % 2 == 0) || b->st != WK_OK) {
        return; /* +OK of ASKING, or draining the pipeline after a failure */
    }
    wk__rconn *c = b->c;
    size_t i = b->idx[b->asking ? k / 2 : k];
    wk__rsrv *to = NULL;
    int kind = s->cfg.mode == WK__MODE_CLUSTER && r->type == '-'
                   ? wk__redis_redirect(s, c, r, b->v, &to)
                   : 0;
    if (kind != 0) {
        redir[i] = to;
        asking[i] = kind == 2;
        return;
    }
    const uint8_t *val = NULL;
    size_t len = 0;
    const char *why = NULL;
    switch (wk__redis_get_reply(c, r, &val, &len, &why)) {
    case WK__GET_HIT: {
        wk_status ts = take(ctx, i, val, len);
        if (ts != WK_OK) {
            b->st = wk_error_set(err, ts, i,
                                 ts == WK_ERR_NOMEM ? "redis: out of memory for a value"
                                                    : "redis: a value was refused");
        }
        break;
    }
    case WK__GET_MISS: break;
    case WK__GET_FAILED: b->st = wk_error_set(err, WK_ERR_IO, i, why); break;
    }
}

/* Replies a step reads before handling them. */
#define STEP_REPLIES 64u

/* Reads the replies of a batch that have arrived, without waiting: what the socket holds is
 * read at once (one recv() when it fits the buffer) and every whole reply buffered is noted;
 * then, once at most half the window is still due, the window is refilled in one send, so
 * a server that answers a window in one write gets the next in one send and works on it
 * while the values just read are handed to `take` (and decoded there). Returns with b->c set
 * while some replies are still due. A connection failure ends the batch. */
static void batch_step(wk_redis_store *s, get_batch *b, wk_cache_take_fn take, void *ctx,
                       wk__rsrv **redir, bool *asking, wk_error *err)
{
    wk__rconn *c = b->c;
    bool may_recv = true; /* the socket was reported readable (or never polled) */
    for (;;) {
        /* The nodes point into the read buffer: no recv() once one is kept (a recv may move
         * the buffer's bytes); GET replies are one node each. */
        wk__rnode rs[STEP_REPLIES];
        size_t nr = 0;
        while (nr < STEP_REPLIES) {
            bool allow = nr == 0 && may_recv;
            bool got = false;
            wk_status st = wk__rconn_next(c, &s->cfg.lim, &allow, &got, err);
            if (st != WK_OK) {
                batch_end(s, b, st);
                return;
            }
            if (nr == 0) {
                may_recv = allow;
            }
            if (!got) {
                break;
            }
            rs[nr++] = c->nodes[0];
        }
        size_t k0 = b->got;
        b->got += nr;
        size_t answered = b->asking ? b->got / 2 : b->got;
        wk_status fill = WK_OK;
        if (b->st == WK_OK && b->sent < b->n && 2 * (b->sent - answered) <= s->cfg.window) {
            fill = batch_fill(s, b, err);
        }
        for (size_t j = 0; j < nr; j++) {
            batch_reply(s, b, k0 + j, &rs[j], take, ctx, redir, asking, err);
        }
        if (fill != WK_OK) {
            batch_end(s, b, fill);
            return;
        }
        if (nr == STEP_REPLIES) {
            continue; /* more may be buffered */
        }
        bool more = b->st == WK_OK && b->sent < b->n;
        if (!more && answered == b->sent) {
            batch_end(s, b, WK_OK);
            return;
        }
        return; /* the rest after a poll */
    }
}

/* Reads every batch's replies as they arrive, whichever server answers first (one poll over
 * the connections still due, so a slow server does not hold up reading the others). */
static wk_status batches_read(wk_redis_store *s, get_batch *bs, size_t nb,
                              wk_cache_take_fn take, void *ctx, wk__rsrv **redir, bool *asking,
                              int64_t deadline, wk_error *err)
{
    wk_status first = WK_OK;
    wk_error e2;
    for (size_t b = 0; b < nb; b++) {
        bs[b].ready = false; /* just sent: a recv now would find nothing, so poll first */
    }
    for (;;) {
        wk__rconn *due[WK__RCONN_WAIT_MAX];
        size_t which[WK__RCONN_WAIT_MAX];
        bool ready[WK__RCONN_WAIT_MAX];
        size_t ndue = 0;
        bool left = false;
        for (size_t b = 0; b < nb; b++) {
            if (bs[b].c != NULL && bs[b].ready) {
                batch_step(s, &bs[b], take, ctx, redir, asking, first == WK_OK ? err : &e2);
            }
            if (bs[b].c == NULL && bs[b].st != WK_OK && first == WK_OK) {
                first = bs[b].st;
            }
            if (bs[b].c != NULL) {
                left = true;
                if (ndue < WK__RCONN_WAIT_MAX) {
                    which[ndue] = b;
                    due[ndue++] = bs[b].c;
                } else {
                    bs[b].ready = true; /* not polled: tried again next round */
                }
            }
        }
        if (!left) {
            return first;
        }
        wk_status st = wk__rconn_wait_any(due, ndue, ready, deadline, first == WK_OK ? err : &e2);
        for (size_t i = 0; i < ndue && st == WK_OK; i++) {
            bs[which[i]].ready = ready[i];
        }
        if (st != WK_OK) {
            for (size_t b = 0; b < nb; b++) {
                if (bs[b].c != NULL) {
                    wk__redis_give_back(s, bs[b].v, bs[b].c, true);
                    bs[b].c = NULL;
                }
            }
            return first == WK_OK ? st : first;
        }
    }
}

/* The batch of bs[0..nb) for server `v` and `asking`, or nb when there is none yet. */
static size_t find_batch(const get_batch *bs, size_t nb, const wk__rsrv *v, bool asking)
{
    size_t b = 0;
    while (b < nb && !(bs[b].v == v && bs[b].asking == asking)) {
        b++;
    }
    return b;
}

/* `fetch_each`, the multi-get: the keys are split by server (one server outside a cluster),
 * every batch is sent before any reply is read, so the servers work in parallel; keys
 * redirected by MOVED or ASK are sent again to their new server, twice at most. */
wk_status wk__redis_fetch_each(void *self, size_t n, const wk_slice *keys,
                               wk_cache_take_fn take, void *ctx, wk_error *err)
{
    wk_redis_store *s = self;
    wk__redis_maybe_refresh(s);
    int64_t deadline = wk__redis_now_ms() + s->cfg.command_ms;
    /* the keys are routed below: with the first map, not before it */
    if (wk__redis_await_map(s, deadline, err) != WK_OK) {
        return WK_ERR_IO;
    }
    /* a small multi-get, the common case, keeps this bookkeeping in local arrays */
    size_t idx_s[64];
    wk__rsrv *target_s[64], *redir_s[64];
    bool ask_s[64];
    get_batch bs_s[16];
    bool small = n <= 64;
    size_t maxb = (size_t)__atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE) * 2 + 8;
    if (maxb > WK__MAX_SRV * 2) {
        maxb = WK__MAX_SRV * 2;
    }
    size_t *idx = small ? idx_s : wk_alloc(s->alloc, n * sizeof *idx);
    wk__rsrv **target = small ? target_s : wk_alloc(s->alloc, n * sizeof *target);
    wk__rsrv **redir = small ? redir_s : wk_alloc(s->alloc, n * sizeof *redir);
    bool *ask = small ? ask_s : wk_alloc(s->alloc, n * sizeof *ask);
    get_batch *bs = maxb <= 16 ? bs_s : wk_alloc(s->alloc, maxb * sizeof *bs);
    wk_status first = WK_OK;
    if (idx == NULL || target == NULL || redir == NULL || ask == NULL || bs == NULL) {
        first = wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        goto out;
    }
    size_t pending = n;
    for (size_t i = 0; i < n; i++) {
        target[i] = wk__redis_route(s, keys[i].ptr, keys[i].len);
        ask[i] = false;
    }
    for (int round = 0; round < 3 && pending > 0 && first == WK_OK; round++) {
        /* group the pending keys by (server, asking); pending ones have target != NULL */
        size_t nb = 0, used = 0;
        for (size_t i = 0; i < n; i++) {
            if (target[i] == NULL) {
                continue;
            }
            size_t b = find_batch(bs, nb, target[i], ask[i]);
            if (b == nb) {
                if (nb == maxb) { /* servers added since the call began */
                    first = wk_error_set(err, WK_ERR_IO, i,
                                         "redis: the cluster map changed during a GET");
                    target[i] = NULL;
                    continue;
                }
                bs[nb].v = target[i];
                bs[nb].asking = ask[i];
                bs[nb].keys = keys;
                bs[nb].deadline = deadline;
                bs[nb].n = 0;
                bs[nb].c = NULL;
                bs[nb].sent = 0;
                bs[nb].got = 0;
                bs[nb].st = WK_OK;
                nb++;
            }
            bs[b].n++;
        }
        for (size_t b = 0; b < nb; b++) {
            bs[b].idx = idx + used;
            used += bs[b].n;
            bs[b].n = 0;
        }
        for (size_t i = 0; i < n; i++) {
            if (target[i] == NULL) {
                continue;
            }
            size_t b = find_batch(bs, nb, target[i], ask[i]);
            if (b < nb) {
                bs[b].idx[bs[b].n++] = i;
            }
        }
        wk_error e2;
        for (size_t b = 0; b < nb; b++) {
            if (!batch_send(s, &bs[b], first == WK_OK ? err : &e2) && first == WK_OK) {
                first = WK_ERR_IO;
            }
        }
        pending = 0;
        for (size_t i = 0; i < n; i++) {
            redir[i] = NULL;
        }
        wk_status st = batches_read(s, bs, nb, take, ctx, redir, ask, deadline,
                                    first == WK_OK ? err : &e2);
        if (st != WK_OK && first == WK_OK) {
            first = st;
        }
        for (size_t i = 0; i < n; i++) {
            target[i] = redir[i];
            pending += redir[i] != NULL;
        }
    }
    if (first == WK_OK && pending > 0) {
        first = wk_error_set(err, WK_ERR_IO, 0, "redis: too many cluster redirects for a GET");
    }
out:
    if (!small) {
        wk_free(s->alloc, idx, n * sizeof *idx);
        wk_free(s->alloc, target, n * sizeof *target);
        wk_free(s->alloc, redir, n * sizeof *redir);
        wk_free(s->alloc, ask, n * sizeof *ask);
    }
    if (bs != bs_s) {
        wk_free(s->alloc, bs, maxb * sizeof *bs);
    }
    return first;
}
