/*
 * The Redis store's command side: a bounded pool of connections, each command bounded by one
 * deadline (the pool wait, sending and every read together), pipelined GETs for multi-gets,
 * and a circuit breaker. When a command fails (reset, timed out, malformed or oversized
 * reply) its connection is dropped and the store fails fast for `retry_ms`, so callers see
 * WK_ERR_IO within the timeout once, then immediately, until the next attempt. An error reply
 * (`-ERR`, `-OOM`) keeps the connection and is reported with which command was refused.
 *
 * Writes are ordered for correctness when Redis refuses them: a put or an invalidation
 * deletes the key first (DEL is allowed at maxmemory), then writes the value or tombstone,
 * then publishes, so a refused write leaves no old value behind. Every write publishes,
 * whether or not this store subscribes. A connection is used by one thread at a time.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis/redis_internal.h"

int64_t wk__redis_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A static message for a refusal that names its cause, or `fallback`. */
const char *wk__redis_refusal(const wk__rconn *c, const wk__rnode *r, const char *fallback)
{
    if (r->type != '-' || r->n <= 0) {
        return fallback;
    }
    const char *m = wk__rnode_str(c, r);
    size_t n = (size_t)r->n;
    if (n >= 6 && memcmp(m, "NOAUTH", 6) == 0) {
        return "redis: NOAUTH: the server requires a password "
               "(redis://[user]:password@host or the password option)";
    }
    if (n >= 9 && memcmp(m, "WRONGPASS", 9) == 0) {
        return "redis: WRONGPASS: authentication failed (wrong user name or password, or the "
               "user is disabled)";
    }
    if (n >= 6 && memcmp(m, "NOPERM", 6) == 0) {
        return "redis: NOPERM: the ACL user may not run this command or touch this key";
    }
    if (n >= 7 && memcmp(m, "LOADING", 7) == 0) {
        return "redis: LOADING: the server is loading its data set";
    }
    if (n >= 8 && memcmp(m, "READONLY", 8) == 0) {
        return "redis: READONLY: the server is a replica (a failover is under way?)";
    }
    if (n >= 8 && memcmp(m, "MASTERDOWN", 10 < n ? 10 : n) == 0) {
        return "redis: MASTERDOWN: the replica lost its master";
    }
    return fallback;
}

/* AUTH, CLIENT SETNAME and SELECT, pipelined, on a new connection. */
static wk_status handshake(wk_redis_store *s, wk__rconn *c, wk_error *err)
{
    const char *argv[9];
    size_t lens[9];
    int argc[3];
    const char *msgs[3];
    int ncmd = 0, at = 0;
    char db[16];
    if (s->has_pass) {
        argv[at] = "AUTH";
        lens[at++] = 4;
        argc[ncmd] = 2;
        if (s->user[0] != '\0') {
            argv[at] = s->user;
            lens[at++] = strlen(s->user);
            argc[ncmd] = 3;
        }
        argv[at] = s->pass;
        lens[at++] = strlen(s->pass);
        msgs[ncmd++] = "redis: AUTH refused (does the server have a password or this ACL user? "
                       "Redis < 6 knows no user names)";
    }
    if (s->name[0] != '\0') {
        argv[at] = "CLIENT";
        lens[at++] = 6;
        argv[at] = "SETNAME";
        lens[at++] = 7;
        argv[at] = s->name;
        lens[at++] = strlen(s->name);
        argc[ncmd] = 3;
        msgs[ncmd++] = "redis: CLIENT SETNAME refused (spaces in the client name?)";
    }
    if (s->db != 0) {
        int dn = snprintf(db, sizeof db, "%u", s->db);
        argv[at] = "SELECT";
        lens[at++] = 6;
        argv[at] = db;
        lens[at++] = (size_t)dn;
        argc[ncmd] = 2;
        msgs[ncmd++] = "redis: SELECT refused (database number out of range, or a cluster?)";
    }
    if (ncmd == 0) {
        return WK_OK;
    }
    int64_t deadline = wk__redis_now_ms() + s->command_ms;
    at = 0;
    for (int i = 0; i < ncmd; i++) {
        if (wk__rconn_append(c, argc[i], argv + at, lens + at, err) != WK_OK) {
            return WK_ERR_IO;
        }
        at += argc[i];
    }
    wk_status st = wk__rconn_flush(c, deadline, err);
    wk_status first = WK_OK;
    for (int i = 0; i < ncmd && st == WK_OK; i++) {
        st = wk__rconn_read(c, &s->lim, deadline, err);
        if (st == WK_OK && first == WK_OK && c->nodes[0].type == '-') {
            first = wk_error_set(err, WK_ERR_IO, 0, wk__redis_refusal(c, &c->nodes[0], msgs[i]));
        }
    }
    return st != WK_OK ? st : first;
}

wk__rconn *wk__redis_connect(wk_redis_store *s, const wk__rendpoint *ep, bool bare,
                             wk_error *err)
{
    wk__rconn *c = wk__rt_open(ep, s->connect_ms, s->alloc, err);
    if (c != NULL && !bare && handshake(s, c, err) != WK_OK) {
        wk__rconn_free(c);
        return NULL;
    }
    return c;
}

wk__rconn *wk__redis_connect_feed(wk_redis_store *s, wk_error *err)
{
    if (s->mode != WK__MODE_SINGLE &&
        wk__redis_refresh(s, !__atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE), err) != WK_OK) {
        return NULL;
    }
    wk__rsrv *v;
    if (s->mode == WK__MODE_CLUSTER) {
        /* PUBLISH in a cluster reaches every node over the cluster bus: any node will do;
         * after a failure, the next one */
        uint32_t n = __atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE);
        v = s->srv[s->feed_rr++ % n];
    } else {
        v = s->srv[__atomic_load_n(&s->master, __ATOMIC_ACQUIRE)];
    }
    wk__rconn *c = wk__redis_connect(s, &v->ep, false, err);
    if (c == NULL) {
        wk__redis_want_refresh(s);
    }
    return c;
}

static void mark_down(wk_redis_store *s, wk__rsrv *v)
{
    __atomic_store_n(&v->down_until_ms, wk__redis_now_ms() + s->retry_ms, __ATOMIC_RELEASE);
    wk__redis_want_refresh(s);
}

/* Refreshes the topology first when one is wanted (cluster and sentinel modes). */
static void maybe_refresh(wk_redis_store *s)
{
    if (s->mode != WK__MODE_SINGLE &&
        wk__redis_now_ms() >= __atomic_load_n(&s->refresh_after_ms, __ATOMIC_RELAXED)) {
        wk_error e;
        (void)wk__redis_refresh(s, false, &e);
    }
}

/* Takes a connection to `v` from its pool (or opens one), waiting for a free one at most
 * until `deadline`. */
static wk__rconn *acquire(wk_redis_store *s, wk__rsrv *v, int64_t deadline, wk_error *err)
{
    if (s->mode != WK__MODE_SINGLE && !__atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE)) {
        wk_error_set(err, WK_ERR_IO, 0,
                     s->mode == WK__MODE_CLUSTER
                         ? "redis: no cluster seed node answered CLUSTER SLOTS"
                         : "redis: no sentinel named the master");
        return NULL;
    }
    if (wk__redis_now_ms() < __atomic_load_n(&v->down_until_ms, __ATOMIC_ACQUIRE)) {
        wk_error_set(err, WK_ERR_IO, 0,
                     "redis: unavailable (a recent command failed; retrying soon)");
        return NULL;
    }
    pthread_mutex_lock(&v->mu);
    while (v->nidle == 0 && v->open == v->max) {
        struct timespec ts = {(time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000L};
        if (wk__redis_now_ms() >= deadline ||
            pthread_cond_timedwait(&v->cv, &v->mu, &ts) == ETIMEDOUT) {
            if (v->nidle == 0 && v->open == v->max) {
                pthread_mutex_unlock(&v->mu);
                wk_error_set(err, WK_ERR_IO, 0,
                             "redis: timed out waiting for a pooled connection");
                return NULL;
            }
        }
    }
    if (v->nidle > 0) {
        wk__rconn *c = v->idle[--v->nidle];
        pthread_mutex_unlock(&v->mu);
        return c;
    }
    v->open++;
    pthread_mutex_unlock(&v->mu);
    wk__rconn *c = wk__redis_connect(s, &v->ep, false, err);
    if (c == NULL) {
        pthread_mutex_lock(&v->mu);
        v->open--;
        pthread_cond_signal(&v->cv);
        pthread_mutex_unlock(&v->mu);
        mark_down(s, v);
    }
    return c;
}

static void give_back(wk_redis_store *s, wk__rsrv *v, wk__rconn *c, bool broken)
{
    if (broken) {
        wk__rconn_free(c);
        mark_down(s, v);
    }
    pthread_mutex_lock(&v->mu);
    if (broken) {
        v->open--;
    } else {
        v->idle[v->nidle++] = c;
    }
    pthread_cond_signal(&v->cv);
    pthread_mutex_unlock(&v->mu);
}

/* Queues `ncmd` commands on `c`, each preceded by ASKING when `asking`. */
static wk_status append_cmds(wk__rconn *c, int ncmd, const int *argc, const char **argv,
                             const size_t *lens, bool asking, wk_error *err)
{
    static const char *const ask_argv[1] = {"ASKING"};
    static const size_t ask_lens[1] = {6};
    int at = 0;
    for (int i = 0; i < ncmd; i++) {
        if ((asking && wk__rconn_append(c, 1, ask_argv, ask_lens, err) != WK_OK) ||
            wk__rconn_append(c, argc[i], argv + at, lens + at, err) != WK_OK) {
            return WK_ERR_IO;
        }
        at += argc[i];
    }
    return WK_OK;
}

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
    size_t end = answered + s->window < b->n ? answered + s->window : b->n;
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
    give_back(s, b->v, b->c, st != WK_OK);
    b->c = NULL;
    if (b->st == WK_OK) {
        b->st = st;
    }
}

/* Takes a connection and sends the first window of a batch; false (batch failed, `err`
 * set) when no connection or the send failed. */
static bool batch_send(wk_redis_store *s, get_batch *b, wk_error *err)
{
    b->c = acquire(s, b->v, b->deadline, err);
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
    int kind = s->mode == WK__MODE_CLUSTER && r->type == '-'
                   ? wk__redis_redirect(s, c, r, b->v, &to)
                   : 0;
    if (kind != 0) {
        redir[i] = to;
        asking[i] = kind == 2;
    } else if (r->type == '$' && r->n >= 0) {
        wk_status ts = take(ctx, i, c->in + r->off, (size_t)r->n);
        if (ts != WK_OK) {
            b->st = wk_error_set(err, ts, i,
                                 ts == WK_ERR_NOMEM ? "redis: out of memory for a value"
                                                    : "redis: a value was refused");
        }
    } else if (r->type == '-') {
        b->st = wk_error_set(err, WK_ERR_IO, i,
                             wk__redis_refusal(c, r, "redis: GET answered with an error reply"));
    } else if (!(r->type == '$' || (r->type == '*' && r->n < 0))) {
        b->st = wk_error_set(err, WK_ERR_IO, i,
                             "redis: GET answered with a reply of the wrong type");
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
            wk_status st = wk__rconn_next(c, &s->lim, &allow, &got, err);
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
        if (b->st == WK_OK && b->sent < b->n && 2 * (b->sent - answered) <= s->window) {
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
                    give_back(s, bs[b].v, bs[b].c, true);
                    bs[b].c = NULL;
                }
            }
            return first == WK_OK ? st : first;
        }
    }
}

/* `fetch_each`, the multi-get: the keys are split by server (one server outside a cluster), every batch is
 * sent before any reply is read, so the servers work in parallel; keys redirected by MOVED
 * or ASK are sent again to their new server, twice at most. */
static wk_status r_fetch_each(void *self, size_t n, const wk_slice *keys,
                              wk_cache_take_fn take, void *ctx, wk_error *err)
{
    wk_redis_store *s = self;
    maybe_refresh(s);
    int64_t deadline = wk__redis_now_ms() + s->command_ms;
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
            size_t b = 0;
            while (b < nb && !(bs[b].v == target[i] && bs[b].asking == ask[i])) {
                b++;
            }
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
            size_t b = 0;
            while (b < nb && !(bs[b].v == target[i] && bs[b].asking == ask[i])) {
                b++;
            }
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

/* `fetch`: the values copied into vals[i] (the cache uses r_fetch_each instead). */
typedef struct copy_ctx {
    wk_buf *vals;
    bool *found;
} copy_ctx;

static wk_status copy_value(void *ctx, size_t i, const uint8_t *bytes, size_t len)
{
    copy_ctx *cc = ctx;
    wk_status st = wk_buf_append(&cc->vals[i], bytes, len);
    cc->found[i] = st == WK_OK;
    return st;
}

static wk_status r_fetch(void *self, size_t n, const wk_slice *keys, wk_buf *vals,
                         bool *found, wk_error *err)
{
    for (size_t i = 0; i < n; i++) {
        found[i] = false;
    }
    copy_ctx cc = {vals, found};
    return r_fetch_each(self, n, keys, copy_value, &cc, err);
}

/* Runs `ncmd` pipelined commands about `key` on its server, following MOVED and ASK
 * redirects (twice at most; the commands used here are idempotent, so a pipeline redirected
 * part-way is sent again whole). msgs[i] describes command i's error reply. With
 * wait_replicas, a WAIT follows and fewer acknowledgements than asked is a failure. Returns
 * the first failure; every reply is read so the connection stays usable. */
static wk_status run_on(wk_redis_store *s, wk__rsrv *v, int ncmd, const int *argc,
                        const char **argv, const size_t *lens, const char *const *msgs,
                        bool wait, wk_error *err)
{
    maybe_refresh(s);
    int64_t deadline = wk__redis_now_ms() + s->command_ms;
    bool asking = false;
    char wn[16], wt[16];
    int wnl = snprintf(wn, sizeof wn, "%u", s->wait_replicas);
    uint32_t wms = s->command_ms > 20 ? s->command_ms / 2 : 10;
    int wtl = snprintf(wt, sizeof wt, "%u", wms);
    for (int attempt = 0; attempt < 3; attempt++) {
        wk__rconn *c = acquire(s, v, deadline, err);
        if (c == NULL) {
            return WK_ERR_IO;
        }
        wk_status st = append_cmds(c, ncmd, argc, argv, lens, asking, err);
        if (st == WK_OK && wait) {
            const char *wargv[3] = {"WAIT", wn, wt};
            size_t wlens[3] = {4, (size_t)wnl, (size_t)wtl};
            st = wk__rconn_append(c, 3, wargv, wlens, err);
        }
        if (st == WK_OK) {
            st = wk__rconn_flush(c, deadline, err);
        }
        if (st != WK_OK) {
            give_back(s, v, c, true);
            return st;
        }
        wk_status first = WK_OK;
        wk__rsrv *to = NULL;
        int kind = 0;
        for (int i = 0; i < ncmd + (wait ? 1 : 0); i++) {
            st = WK_OK;
            if (asking && i < ncmd) {
                st = wk__rconn_read(c, &s->lim, deadline, err);
            }
            if (st == WK_OK) {
                st = wk__rconn_read(c, &s->lim, deadline, err);
            }
            if (st != WK_OK) {
                give_back(s, v, c, true);
                return st;
            }
            const wk__rnode *r = &c->nodes[0];
            wk__rsrv *t = NULL;
            int k = s->mode == WK__MODE_CLUSTER ? wk__redis_redirect(s, c, r, v, &t) : 0;
            if (k != 0) {
                if (kind == 0) {
                    kind = k;
                    to = t;
                }
                continue;
            }
            if (i == ncmd) { /* WAIT */
                if (first == WK_OK && kind == 0 &&
                    (r->type != ':' || r->n < (int64_t)s->wait_replicas)) {
                    first = wk_error_set(err, WK_ERR_IO, 0,
                                         "redis: write not acknowledged by the replicas asked "
                                         "for (WAIT); it may be lost in a failover");
                }
            } else if (r->type == '-' && first == WK_OK) {
                first = wk_error_set(err, WK_ERR_IO, 0, wk__redis_refusal(c, r, msgs[i]));
                if (r->n >= 8 && memcmp(wk__rnode_str(c, r), "READONLY", 8) == 0) {
                    wk__redis_want_refresh(s); /* a demoted master: ask for the new one */
                }
            }
        }
        give_back(s, v, c, false);
        if (kind == 0) {
            return first;
        }
        v = to;
        asking = kind == 2;
    }
    return wk_error_set(err, WK_ERR_IO, 0, "redis: too many cluster redirects");
}

static wk_status run(wk_redis_store *s, const char *key, size_t key_len, int ncmd,
                     const int *argc, const char **argv, const size_t *lens,
                     const char *const *msgs, bool wait, wk_error *err)
{
    maybe_refresh(s);
    return run_on(s, wk__redis_route(s, key, key_len), ncmd, argc, argv, lens, msgs,
                  wait && s->wait_replicas > 0, err);
}

static wk_status r_store(void *self, const char *key, size_t key_len, const void *val,
                         size_t val_len, uint32_t ttl_ms, unsigned mode, wk_error *err)
{
    wk_redis_store *s = self;
    char ttl[16];
    int tn = snprintf(ttl, sizeof ttl, "%u", ttl_ms != 0 ? ttl_ms : 1);
    if (mode == WK_CACHE_STORE_FILL) {
        const char *argv[6] = {"SET", key, val, "PX", ttl, "NX"};
        size_t lens[6] = {3, key_len, val_len, 2, (size_t)tn, 2};
        int argc[1] = {6};
        static const char *const msgs[1] = {"redis: fill refused (SET NX)"};
        return run(s, key, key_len, 1, argc, argv, lens, msgs, false, err);
    }
    /* DEL first: if Redis refuses the SET (maxmemory with noeviction) the old value is gone
     * all the same. Then SET, then PUBLISH, always (a store without a subscriber still
     * broadcasts, so one-shot writers such as the CLI reach every reader). In a cluster,
     * PUBLISH reaches every node over the cluster bus. */
    const char *argv[10] = {"DEL", key, "SET", key, val, "PX", ttl, "PUBLISH", s->channel, key};
    size_t lens[10] = {3, key_len, 3, key_len, val_len, 2, (size_t)tn, 7, s->channel_len, key_len};
    int argc[3] = {2, 5, 3};
    static const char *const msgs[3] = {
        "redis: put failed: DEL refused (the old value may remain)",
        "redis: put failed: SET refused (out of memory?); the old value was deleted",
        "redis: put stored but PUBLISH refused (other processes were not told)"};
    return run(s, key, key_len, 3, argc, argv, lens, msgs, true, err);
}

static wk_status r_invalidate(void *self, const char *key, size_t key_len, uint32_t tomb_ms,
                              wk_error *err)
{
    wk_redis_store *s = self;
    char ttl[16];
    int tn = snprintf(ttl, sizeof ttl, "%u", tomb_ms != 0 ? tomb_ms : 1);
    /* Delete first (DEL is allowed even at maxmemory), then fence with the tombstone, then
     * broadcast. A refused tombstone is reported, but the value is already gone. */
    const char *argv[10] = {"DEL", key, "SET", key, WK_CACHE_TOMBSTONE_MARK, "PX", ttl,
                            "PUBLISH", s->channel, key};
    size_t lens[10] = {3, key_len, 3, key_len, WK_CACHE_MARK_LEN, 2, (size_t)tn,
                       7, s->channel_len, key_len};
    int argc[3] = {2, 5, 3};
    static const char *const msgs[3] = {
        "redis: invalidation failed: DEL refused (the old value may remain)",
        "redis: invalidation not fenced: tombstone refused (out of memory?); the value was "
        "deleted",
        "redis: invalidation not broadcast: PUBLISH refused"};
    return run(s, key, key_len, 3, argc, argv, lens, msgs, true, err);
}

static wk_status r_remove(void *self, const char *key, size_t key_len, wk_error *err)
{
    const char *argv[2] = {"DEL", key};
    size_t lens[2] = {3, key_len};
    int argc[1] = {2};
    static const char *const msgs[1] = {"redis: DEL refused"};
    return run(self, key, key_len, 1, argc, argv, lens, msgs, false, err);
}

WK_API wk_status wk_redis_store_ping(wk_redis_store *s, wk_error *err)
{
    /* an explicit check retries at once */
    uint32_t n = __atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        __atomic_store_n(&s->srv[i]->down_until_ms, 0, __ATOMIC_RELEASE);
    }
    if (s->mode != WK__MODE_SINGLE && wk__redis_refresh(s, true, err) != WK_OK) {
        return WK_ERR_IO;
    }
    const char *argv[1] = {"PING"};
    size_t lens[1] = {4};
    int argc[1] = {1};
    static const char *const msgs[1] = {"redis: PING answered with an error reply"};
    return run_on(s, wk__redis_route(s, "", 0), 1, argc, argv, lens, msgs, false, err);
}

/* The distinct servers that own slots (cluster) or the master in use; returns the count. */
static uint32_t masters(wk_redis_store *s, wk__rsrv **out)
{
    if (s->mode != WK__MODE_CLUSTER) {
        out[0] = wk__redis_route(s, "", 0);
        return 1;
    }
    uint32_t n = 0;
    for (uint32_t sl = 0; sl < WK__SLOTS; sl++) {
        wk__rsrv *v = s->srv[__atomic_load_n(&s->slots[sl], __ATOMIC_ACQUIRE)];
        uint32_t j = 0;
        while (j < n && out[j] != v) {
            j++;
        }
        if (j == n && n < WK__MAX_SRV) {
            out[n++] = v;
        }
    }
    return n;
}

WK_API wk_status wk_redis_store_scan(wk_redis_store *s, const char *prefix,
                                     wk_redis_key_fn fn, void *ctx, wk_error *err)
{
    size_t plen = strlen(prefix);
    char *pattern = wk_alloc(s->alloc, plen * 2 + 2);
    if (pattern == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    /* Escape glob characters so that the prefix matches literally. */
    size_t pn = 0;
    for (size_t i = 0; i < plen; i++) {
        if (strchr("*?[]\\", prefix[i]) != NULL) {
            pattern[pn++] = '\\';
        }
        pattern[pn++] = prefix[i];
    }
    pattern[pn++] = '*';
    if (s->mode != WK__MODE_SINGLE && !__atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE) &&
        wk__redis_refresh(s, true, err) != WK_OK) {
        wk_free(s->alloc, pattern, plen * 2 + 2);
        return WK_ERR_IO;
    }
    maybe_refresh(s);
    wk__rsrv *nodes[WK__MAX_SRV];
    uint32_t nn = masters(s, nodes);
    wk_status st = WK_OK;
    bool stop = false;
    /* across masters, a key that moves while the scan runs may be met twice */
    wk__keyset seen;
    wk__keyset_init(&seen, s->alloc);
    bool dedupe = nn > 1;
    for (uint32_t m = 0; m < nn && st == WK_OK && !stop; m++) {
        char cursor[32] = "0";
        do {
            const char *argv[6] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
            size_t lens[6] = {4, strlen(cursor), 5, pn, 5, 4};
            int argc[1] = {6};
            int64_t deadline = wk__redis_now_ms() + s->command_ms;
            wk__rconn *c = acquire(s, nodes[m], deadline, err);
            if (c == NULL) {
                st = WK_ERR_IO;
                break;
            }
            st = append_cmds(c, 1, argc, argv, lens, false, err);
            if (st == WK_OK) {
                st = wk__rconn_flush(c, deadline, err);
            }
            if (st == WK_OK) {
                st = wk__rconn_read(c, &s->lim, deadline, err);
            }
            if (st != WK_OK) {
                give_back(s, nodes[m], c, true);
                break;
            }
            const wk__rnode *r = c->nodes;
            if (r[0].type == '-') {
                st = wk_error_set(err, WK_ERR_IO, 0,
                                  wk__redis_refusal(c, r, "redis: SCAN answered with an error reply"));
                give_back(s, nodes[m], c, false);
                break;
            }
            if (c->nnodes < 3 || r[0].type != '*' || r[0].n != 2 || r[1].type != '$' ||
                r[1].n < 0 || (size_t)r[1].n >= sizeof cursor || r[2].type != '*' ||
                c->nnodes != 3 + (size_t)(r[2].n > 0 ? r[2].n : 0)) {
                give_back(s, nodes[m], c, false);
                st = wk_error_set(err, WK_ERR_IO, 0, "redis: unexpected SCAN reply");
                break;
            }
            memcpy(cursor, wk__rnode_str(c, &r[1]), (size_t)r[1].n);
            cursor[r[1].n] = '\0';
            for (size_t k = 3; k < c->nnodes && !stop; k++) {
                if (r[k].type != '$' || r[k].n < 0) {
                    continue;
                }
                const char *key = wk__rnode_str(c, &r[k]);
                int fresh = dedupe ? wk__keyset_add(&seen, key, (size_t)r[k].n) : 1;
                if (fresh < 0) {
                    st = wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
                    stop = true;
                } else if (fresh > 0) {
                    stop = !fn(ctx, key, (size_t)r[k].n);
                }
            }
            give_back(s, nodes[m], c, false);
        } while (!stop && strcmp(cursor, "0") != 0);
    }
    wk__keyset_free(&seen);
    wk_free(s->alloc, pattern, plen * 2 + 2);
    return st;
}

static bool count_one(void *ctx, const char *key, size_t len)
{
    (void)key;
    (void)len;
    (*(uint64_t *)ctx)++;
    return true;
}

WK_API wk_status wk_redis_store_count(wk_redis_store *s, const char *prefix, uint64_t *count,
                                      wk_error *err)
{
    *count = 0;
    return wk_redis_store_scan(s, prefix, count_one, count, err);
}

WK_API wk_status wk_redis_store_pttl(wk_redis_store *s, const char *key, int64_t *ms,
                                     wk_error *err)
{
    *ms = -2;
    size_t kl = strlen(key);
    maybe_refresh(s);
    wk__rsrv *v = wk__redis_route(s, key, kl);
    bool asking = false;
    for (int attempt = 0; attempt < 3; attempt++) {
        int64_t deadline = wk__redis_now_ms() + s->command_ms;
        wk__rconn *c = acquire(s, v, deadline, err);
        if (c == NULL) {
            return WK_ERR_IO;
        }
        const char *argv[2] = {"PTTL", key};
        size_t lens[2] = {4, kl};
        int argc[1] = {2};
        wk_status st = append_cmds(c, 1, argc, argv, lens, asking, err);
        if (st == WK_OK) {
            st = wk__rconn_flush(c, deadline, err);
        }
        if (st == WK_OK && asking) {
            st = wk__rconn_read(c, &s->lim, deadline, err);
        }
        if (st == WK_OK) {
            st = wk__rconn_read(c, &s->lim, deadline, err);
        }
        if (st != WK_OK) {
            give_back(s, v, c, true);
            return st;
        }
        const wk__rnode *r = c->nodes;
        wk__rsrv *to = NULL;
        int kind = s->mode == WK__MODE_CLUSTER ? wk__redis_redirect(s, c, r, v, &to) : 0;
        if (kind != 0) {
            give_back(s, v, c, false);
            v = to;
            asking = kind == 2;
            continue;
        }
        if (r->type == ':') {
            *ms = r->n;
        } else {
            st = wk_error_set(err, WK_ERR_IO, 0,
                              wk__redis_refusal(c, r, "redis: PTTL answered something else"));
        }
        give_back(s, v, c, false);
        return st;
    }
    return wk_error_set(err, WK_ERR_IO, 0, "redis: too many cluster redirects");
}

/* Copies `n` bytes of a URL component, decoding %XX; false when it does not fit or a %
 * escape is malformed. */
static bool url_component(char *dst, size_t cap, const char *src, size_t n)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)src[i];
        if (ch == '%') {
            int v = 0;
            for (int k = 1; k <= 2; k++) {
                char h = i + (size_t)k < n ? src[i + (size_t)k] : '\0';
                int d = h >= '0' && h <= '9'   ? h - '0'
                        : h >= 'a' && h <= 'f' ? h - 'a' + 10
                        : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                               : -1;
                if (d < 0) {
                    return false;
                }
                v = v * 16 + d;
            }
            if (v == 0) {
                return false;
            }
            ch = (unsigned char)v;
            i += 2;
        }
        if (o + 1 >= cap) {
            return false;
        }
        dst[o++] = (char)ch;
    }
    dst[o] = '\0';
    return true;
}

/* A database number: 1 to 5 digits, the whole of [p, end). */
static bool parse_db(const char *p, const char *end, unsigned *db)
{
    unsigned v = 0;
    if (p == end || end - p > 5) {
        return false;
    }
    for (; p < end; p++) {
        if (*p < '0' || *p > '9') {
            return false;
        }
        v = v * 10 + (unsigned)(*p - '0');
    }
    *db = v;
    return true;
}

/* [[user]:password@] at the start of the authority [p, auth_end); returns where the host
 * starts. */
static const char *parse_userinfo(wk_redis_store *s, const char *p, const char *auth_end,
                                  wk_status *st, wk_error *err)
{
    const char *at = NULL;
    for (const char *q = p; q < auth_end; q++) {
        if (*q == '@') {
            at = q;
        }
    }
    if (at == NULL) {
        return p;
    }
    const char *colon = memchr(p, ':', (size_t)(at - p));
    if (colon == NULL) {
        /* "redis://secret@host": the whole userinfo is a password (as redis-cli reads it). */
        colon = p - 1;
    } else if (!url_component(s->user, sizeof s->user, p, (size_t)(colon - p))) {
        *st = wk_error_set(err, WK_ERR_ARG, 0,
                           "redis: bad user name in URL (too long or a bad % escape)");
        return NULL;
    }
    if (!url_component(s->pass, sizeof s->pass, colon + 1, (size_t)(at - colon - 1))) {
        *st = wk_error_set(err, WK_ERR_ARG, 0,
                           "redis: bad password in URL (too long or a bad % escape)");
        return NULL;
    }
    s->has_pass = true;
    return at + 1;
}

/* redis://[[user]:password@]host[:port][/db], unix://[[user]:password@]/path[?db=N] or
 * host[:port]; [v6addr] in brackets. */
static wk_status parse_url(wk_redis_store *s, const char *url, wk_error *err)
{
    const char *p = url;
    wk_status st = WK_OK;
    if (strncmp(p, "unix://", 7) == 0) {
        p += 7;
        const char *slash = strchr(p, '/');
        if (slash == NULL) {
            return wk_error_set(err, WK_ERR_ARG, 0,
                                "redis: unix:// needs an absolute socket path");
        }
        p = parse_userinfo(s, p, slash, &st, err);
        if (p == NULL) {
            return st;
        }
        if (p != slash) {
            return wk_error_set(err, WK_ERR_ARG, 0,
                                "redis: unix:// needs an absolute socket path");
        }
        const char *q = strchr(p, '?');
        size_t pl = q != NULL ? (size_t)(q - p) : strlen(p);
        if (!url_component(s->ep.host, sizeof s->ep.host, p, pl) || pl >= 108) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: unix socket path too long");
        }
        s->ep.is_unix = true;
        if (q != NULL) {
            if (strncmp(q, "?db=", 4) != 0 || !parse_db(q + 4, q + strlen(q), &s->db)) {
                return wk_error_set(err, WK_ERR_ARG, 0,
                                    "redis: unix:// takes only ?db=N after the path");
            }
        }
        return WK_OK;
    }
    if (strncmp(p, "rediss://", 9) == 0) {
        return wk_error_set(err, WK_ERR_ARG, 0,
                            "redis: rediss:// (TLS) is not supported: it needs hiredis >= 1.0 "
                            "(Debian 12 has 0.14.1)");
    }
    if (strncmp(p, "redis://", 8) == 0) {
        p += 8;
    } else if (strstr(p, "://") != NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0,
                            "redis: URL scheme must be redis:// or unix://");
    }
    p = parse_userinfo(s, p, p + strcspn(p, "/?#"), &st, err);
    if (p == NULL) {
        return st;
    }
    const char *host = p, *host_end;
    if (*p == '[') {
        host = p + 1;
        host_end = strchr(host, ']');
        if (host_end == NULL) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: unclosed [ in URL");
        }
        p = host_end + 1;
    } else {
        host_end = p + strcspn(p, ":/");
        p = host_end;
    }
    size_t hl = (size_t)(host_end - host);
    if (hl == 0) {
        host = "127.0.0.1";
        hl = 9;
    }
    if (hl >= sizeof s->ep.host) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: host name too long");
    }
    memcpy(s->ep.host, host, hl);
    s->ep.host[hl] = '\0';
    s->ep.port = 6379;
    if (*p == ':') {
        p++;
        long port = 0;
        int digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 6) {
            port = port * 10 + (*p++ - '0');
            digits++;
        }
        if (digits == 0 || port < 1 || port > 65535) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: bad port in URL");
        }
        s->ep.port = (int)port;
    }
    if (*p == '/') {
        p++;
        if (*p != '\0' && !parse_db(p, p + strlen(p), &s->db)) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: bad database number in URL");
        }
        p += strlen(p);
    }
    if (*p != '\0') {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: unexpected characters in URL");
    }
    return WK_OK;
}

/* Cluster seeds or sentinels: each "host:port" or a URL (whose credentials then apply). */
static wk_status parse_seeds(wk_redis_store *s, const char *const *list, size_t n,
                             wk_error *err)
{
    if (n == 0 || n > WK__MAX_SRV) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: give 1 to 64 seed nodes or sentinels");
    }
    s->seeds = wk_alloc(s->alloc, n * sizeof *s->seeds);
    if (s->seeds == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    memset(s->seeds, 0, n * sizeof *s->seeds);
    s->seeds_cap = n;
    wk__rendpoint keep = s->ep;
    unsigned db = s->db;
    for (size_t i = 0; i < n; i++) {
        if (list[i] == NULL) {
            return wk_error_set(err, WK_ERR_ARG, 0, "redis: NULL in the seed list");
        }
        wk_status st = parse_url(s, list[i], err);
        if (st != WK_OK) {
            return st;
        }
        if (s->ep.is_unix && s->mode == WK__MODE_CLUSTER) {
            return wk_error_set(err, WK_ERR_ARG, 0,
                                "redis: cluster seed nodes must be host:port");
        }
        s->seeds[i] = s->ep;
        s->nseeds++;
    }
    s->ep = keep;
    if (s->db == 0) {
        s->db = db;
    }
    return WK_OK;
}

WK_API wk_status wk_redis_store_new(const wk_redis_opts *opts, wk_redis_store **out,
                                     wk_error *err)
{
    static const wk_redis_opts defaults;
    if (opts == NULL) {
        opts = &defaults;
    }
    *out = NULL;
    wk_redis_store *s = wk_alloc(opts->alloc, sizeof *s);
    if (s == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    memset(s, 0, sizeof *s);
    s->alloc = opts->alloc;
    pthread_mutex_init(&s->topo_mu, NULL);
    pthread_mutex_init(&s->refresh_mu, NULL);
    pthread_mutex_init(&s->wmu, NULL);
    s->stop_pipe[0] = s->stop_pipe[1] = -1;
    s->refresh_after_ms = INT64_MAX;
    s->mode = opts->ncluster_nodes > 0 ? WK__MODE_CLUSTER
              : opts->nsentinels > 0   ? WK__MODE_SENTINEL
                                       : WK__MODE_SINGLE;
    wk_status st = WK_OK;
    if (opts->url != NULL || s->mode == WK__MODE_SINGLE) {
        st = parse_url(s, opts->url != NULL ? opts->url : "127.0.0.1:6379", err);
    }
    if (st == WK_OK && s->mode == WK__MODE_CLUSTER) {
        st = parse_seeds(s, opts->cluster_nodes, opts->ncluster_nodes, err);
        if (st == WK_OK && s->db != 0) {
            st = wk_error_set(err, WK_ERR_ARG, 0, "redis: a cluster has only database 0");
        }
    } else if (st == WK_OK && s->mode == WK__MODE_SENTINEL) {
        st = parse_seeds(s, opts->sentinels, opts->nsentinels, err);
        size_t mn = opts->sentinel_master != NULL ? strlen(opts->sentinel_master) : 0;
        if (st == WK_OK && (mn == 0 || mn >= sizeof s->master_name)) {
            st = wk_error_set(err, WK_ERR_ARG, 0,
                              "redis: sentinel_master (the master's name) is required");
        } else if (st == WK_OK) {
            memcpy(s->master_name, opts->sentinel_master, mn + 1);
        }
    }
    const char *channel = opts->channel != NULL ? opts->channel : "wirekit:invalidate";
    s->channel_len = strlen(channel);
    if (st == WK_OK && (s->channel_len == 0 || s->channel_len >= sizeof s->channel)) {
        st = wk_error_set(err, WK_ERR_ARG, 0, "redis: channel name must be 1 to 127 bytes");
    }
    if (st == WK_OK && opts->username != NULL) {
        size_t n = strlen(opts->username);
        if (n >= sizeof s->user) {
            st = wk_error_set(err, WK_ERR_ARG, 0, "redis: user name longer than 127 bytes");
        } else {
            memcpy(s->user, opts->username, n + 1);
        }
    }
    if (st == WK_OK && opts->password != NULL) {
        size_t n = strlen(opts->password);
        if (n >= sizeof s->pass) {
            st = wk_error_set(err, WK_ERR_ARG, 0, "redis: password longer than 255 bytes");
        } else {
            memcpy(s->pass, opts->password, n + 1);
            s->has_pass = true;
        }
    }
    if (st == WK_OK && opts->client_name != NULL) {
        size_t n = strlen(opts->client_name);
        if (n >= sizeof s->name || strpbrk(opts->client_name, " \n\r\t") != NULL) {
            st = wk_error_set(err, WK_ERR_ARG, 0,
                              "redis: client name must be under 128 bytes, without spaces");
        } else {
            memcpy(s->name, opts->client_name, n + 1);
        }
    }
    if (st != WK_OK) {
        wk_redis_store_free(s);
        return st;
    }
    memcpy(s->channel, channel, s->channel_len + 1);
    s->connect_ms = opts->connect_timeout_ms != 0 ? opts->connect_timeout_ms : 250;
    s->command_ms = opts->command_timeout_ms != 0 ? opts->command_timeout_ms : 250;
    s->retry_ms = opts->retry_ms != 0 ? opts->retry_ms : 1000;
    s->heartbeat_ms = opts->heartbeat_ms != 0 ? opts->heartbeat_ms : 1000;
    s->lim.max_bytes =
        opts->max_reply_bytes != 0 ? opts->max_reply_bytes : WK_REDIS_MAX_REPLY_DEFAULT;
    s->lim.max_elems =
        opts->max_reply_elements != 0 ? opts->max_reply_elements : WK_REDIS_MAX_ELEMENTS_DEFAULT;
    s->pool_max = opts->pool != 0 ? opts->pool : 4;
    s->wait_replicas = opts->wait_replicas;
    s->window = opts->pipeline_window != 0 ? opts->pipeline_window : 256;
    /* server 0: the single server, the first seed node, or (sentinel) a placeholder until
     * the sentinels name the master: the first sentinel, refused as a data node by the
     * refresh that runs before the first command */
    s->srv[0] = wk__redis_srv_new(s->alloc, s->mode == WK__MODE_SINGLE ? &s->ep : &s->seeds[0],
                                  s->pool_max);
    if (s->srv[0] != NULL) {
        s->nsrv = 1;
    }
    if (s->mode == WK__MODE_CLUSTER) {
        s->slots = wk_alloc(s->alloc, WK__SLOTS * sizeof *s->slots);
        if (s->slots != NULL) {
            memset(s->slots, 0, WK__SLOTS * sizeof *s->slots); /* server 0 until mapped */
        }
    }
    if (s->srv[0] == NULL || (s->mode == WK__MODE_CLUSTER && s->slots == NULL)) {
        wk_redis_store_free(s);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    if (s->mode != WK__MODE_SINGLE) {
        s->refresh_after_ms = 0; /* the first command finds the topology */
    }
    s->subscribe = !opts->no_subscribe;
    s->iface.fetch = r_fetch;
    s->iface.fetch_each = r_fetch_each;
    s->iface.store = r_store;
    s->iface.invalidate = r_invalidate;
    s->iface.remove = r_remove;
    s->iface.watch = s->subscribe ? wk__redis_watch : NULL;
    s->iface.self = s;
    if (s->subscribe) {
        if (pipe(s->stop_pipe) != 0 ||
            pthread_create(&s->thread, NULL, wk__redis_feed_main, s) != 0) {
            wk_redis_store_free(s);
            return wk_error_set(err, WK_ERR_IO, 0, "redis: cannot start the subscriber");
        }
        s->thread_started = true;
    }
    *out = s;
    return WK_OK;
}

WK_API const wk_cache_store *wk_redis_store_iface(wk_redis_store *s)
{
    return &s->iface;
}

WK_API bool wk_redis_store_feed_up(wk_redis_store *s)
{
    pthread_mutex_lock(&s->wmu);
    bool up = s->feed_up;
    pthread_mutex_unlock(&s->wmu);
    return up;
}

WK_API void wk_redis_store_free(wk_redis_store *s)
{
    if (s == NULL) {
        return;
    }
    if (s->thread_started) {
        ssize_t w = write(s->stop_pipe[1], "x", 1);
        (void)w;
        pthread_join(s->thread, NULL);
    }
    if (s->stop_pipe[0] >= 0) {
        close(s->stop_pipe[0]);
        close(s->stop_pipe[1]);
    }
    for (uint32_t i = 0; i < s->nsrv; i++) {
        wk__redis_srv_free(s->alloc, s->srv[i]);
    }
    if (s->slots != NULL) {
        wk_free(s->alloc, s->slots, WK__SLOTS * sizeof *s->slots);
    }
    if (s->seeds != NULL) {
        wk_free(s->alloc, s->seeds, s->seeds_cap * sizeof *s->seeds);
    }
    wk_free(s->alloc, (void *)s->watchers, s->watch_cap * sizeof *s->watchers);
    pthread_mutex_destroy(&s->topo_mu);
    pthread_mutex_destroy(&s->refresh_mu);
    pthread_mutex_destroy(&s->wmu);
    explicit_bzero(s->pass, sizeof s->pass);
    wk_free(s->alloc, s, sizeof *s);
}
