/*
 * The Redis store's command side: a bounded pool of hiredis connections, each command with a
 * timeout, pipelined GETs for multi-gets, and a circuit breaker. When a command fails (refused,
 * reset, timed out) its connection is dropped and the store fails fast for `retry_ms`, so
 * callers see WK_ERR_IO within the timeout once, then immediately, until the next attempt.
 * hiredis contexts are not thread-safe: a connection is used by one thread at a time.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cache/redis_internal.h"

int64_t wk__redis_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timeval to_tv(uint32_t ms)
{
    struct timeval tv;
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    return tv;
}

redisContext *wk__redis_connect(wk_redis_store *s, wk_error *err)
{
    redisContext *c = redisConnectWithTimeout(s->host, s->port, to_tv(s->connect_ms));
    if (c == NULL) {
        wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        return NULL;
    }
    if (c->err != 0) {
        wk_error_set(err, WK_ERR_IO, 0, "redis: cannot connect");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, to_tv(s->command_ms));
    redisEnableKeepAlive(c);
    if (s->db != 0) {
        char db[16];
        snprintf(db, sizeof db, "%u", s->db);
        redisReply *r = redisCommand(c, "SELECT %s", db);
        bool ok = r != NULL && r->type == REDIS_REPLY_STATUS;
        if (r != NULL) {
            freeReplyObject(r);
        }
        if (!ok) {
            wk_error_set(err, WK_ERR_IO, 0, "redis: SELECT failed");
            redisFree(c);
            return NULL;
        }
    }
    return c;
}

static void mark_down(wk_redis_store *s)
{
    __atomic_store_n(&s->down_until_ms, wk__redis_now_ms() + s->retry_ms, __ATOMIC_RELEASE);
}

static redisContext *acquire(wk_redis_store *s, wk_error *err)
{
    if (wk__redis_now_ms() < __atomic_load_n(&s->down_until_ms, __ATOMIC_ACQUIRE)) {
        wk_error_set(err, WK_ERR_IO, 0, "redis: unavailable (retrying soon)");
        return NULL;
    }
    pthread_mutex_lock(&s->mu);
    while (s->nidle == 0 && s->open == s->max) {
        pthread_cond_wait(&s->cv, &s->mu);
    }
    if (s->nidle > 0) {
        redisContext *c = s->idle[--s->nidle];
        pthread_mutex_unlock(&s->mu);
        return c;
    }
    s->open++;
    pthread_mutex_unlock(&s->mu);
    redisContext *c = wk__redis_connect(s, err);
    if (c == NULL) {
        pthread_mutex_lock(&s->mu);
        s->open--;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        mark_down(s);
    }
    return c;
}

static void give_back(wk_redis_store *s, redisContext *c, bool broken)
{
    if (broken) {
        redisFree(c);
        mark_down(s);
    }
    pthread_mutex_lock(&s->mu);
    if (broken) {
        s->open--;
    } else {
        s->idle[s->nidle++] = c;
    }
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

/* Reads one reply; false (connection broken) on I/O error or timeout. */
static bool read_reply(redisContext *c, redisReply **out)
{
    void *r = NULL;
    if (redisGetReply(c, &r) != REDIS_OK || r == NULL) {
        return false;
    }
    *out = r;
    return true;
}

static wk_status io_failure(wk_error *err, redisContext *c)
{
    return wk_error_set(err, WK_ERR_IO, 0,
                        c->err == REDIS_ERR_IO ? "redis: I/O error or timeout"
                        : c->err == REDIS_ERR_EOF ? "redis: connection closed"
                                                  : "redis: protocol error");
}

static wk_status r_fetch(void *self, size_t n, const wk_slice *keys, wk_buf *vals,
                         bool *found, wk_error *err)
{
    wk_redis_store *s = self;
    redisContext *c = acquire(s, err);
    if (c == NULL) {
        return WK_ERR_IO;
    }
    for (size_t i = 0; i < n; i++) {
        const char *argv[2] = {"GET", keys[i].ptr};
        size_t lens[2] = {3, keys[i].len};
        if (redisAppendCommandArgv(c, 2, argv, lens) != REDIS_OK) {
            give_back(s, c, true);
            return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        }
    }
    wk_status st = WK_OK;
    for (size_t i = 0; i < n; i++) {
        redisReply *r = NULL;
        if (!read_reply(c, &r)) {
            st = io_failure(err, c);
            give_back(s, c, true);
            return st;
        }
        found[i] = false;
        if (r->type == REDIS_REPLY_STRING) {
            found[i] = true;
            if (wk_buf_append(&vals[i], r->str, r->len) != WK_OK && st == WK_OK) {
                st = wk_error_set(err, WK_ERR_NOMEM, i, "redis: out of memory for a value");
            }
        }
        freeReplyObject(r);
    }
    give_back(s, c, false);
    return st;
}

/* Sends `ncmd` pipelined commands and checks that none failed. */
static wk_status run(wk_redis_store *s, int ncmd, const int *argc, const char **argv,
                     const size_t *lens, wk_error *err)
{
    redisContext *c = acquire(s, err);
    if (c == NULL) {
        return WK_ERR_IO;
    }
    int at = 0;
    for (int i = 0; i < ncmd; i++) {
        if (redisAppendCommandArgv(c, argc[i], argv + at, lens + at) != REDIS_OK) {
            give_back(s, c, true);
            return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        }
        at += argc[i];
    }
    wk_status st = WK_OK;
    for (int i = 0; i < ncmd; i++) {
        redisReply *r = NULL;
        if (!read_reply(c, &r)) {
            st = io_failure(err, c);
            give_back(s, c, true);
            return st;
        }
        if (r->type == REDIS_REPLY_ERROR && st == WK_OK) {
            st = wk_error_set(err, WK_ERR_IO, 0, "redis: command refused");
        }
        freeReplyObject(r);
    }
    give_back(s, c, false);
    return st;
}

static wk_status r_store(void *self, const char *key, size_t key_len, const void *val,
                         size_t val_len, uint32_t ttl_ms, unsigned mode, wk_error *err)
{
    wk_redis_store *s = self;
    char ttl[16];
    int tn = snprintf(ttl, sizeof ttl, "%u", ttl_ms != 0 ? ttl_ms : 1);
    const char *argv[8] = {"SET", key, val, "PX", ttl, "NX", "PUBLISH", s->channel};
    size_t lens[8] = {3, key_len, val_len, 2, (size_t)tn, 2, 7, s->channel_len};
    if (mode == WK_CACHE_STORE_FILL) {
        int argc[1] = {6};
        return run(s, 1, argc, argv, lens, err);
    }
    /* SET without NX, then PUBLISH channel key. */
    const char *argv2[8] = {"SET", key, val, "PX", ttl, "PUBLISH", s->channel, key};
    size_t lens2[8] = {3, key_len, val_len, 2, (size_t)tn, 7, s->channel_len, key_len};
    int argc[2] = {5, 3};
    return run(s, s->subscribe ? 2 : 1, argc, argv2, lens2, err);
}

static wk_status r_invalidate(void *self, const char *key, size_t key_len, uint32_t tomb_ms,
                              wk_error *err)
{
    wk_redis_store *s = self;
    char ttl[16];
    int tn = snprintf(ttl, sizeof ttl, "%u", tomb_ms != 0 ? tomb_ms : 1);
    const char *argv[8] = {"SET", key, WK_CACHE_TOMBSTONE_MARK, "PX", ttl,
                           "PUBLISH", s->channel, key};
    size_t lens[8] = {3, key_len, WK_CACHE_MARK_LEN, 2, (size_t)tn, 7, s->channel_len, key_len};
    int argc[2] = {5, 3};
    return run(s, s->subscribe ? 2 : 1, argc, argv, lens, err);
}

static wk_status r_remove(void *self, const char *key, size_t key_len, wk_error *err)
{
    const char *argv[2] = {"DEL", key};
    size_t lens[2] = {3, key_len};
    int argc[1] = {2};
    return run(self, 1, argc, argv, lens, err);
}

WK_API wk_status wk_redis_store_ping(wk_redis_store *s, wk_error *err)
{
    __atomic_store_n(&s->down_until_ms, 0, __ATOMIC_RELEASE); /* an explicit check retries */
    const char *argv[1] = {"PING"};
    size_t lens[1] = {4};
    int argc[1] = {1};
    return run(s, 1, argc, argv, lens, err);
}

WK_API wk_status wk_redis_store_count(wk_redis_store *s, const char *prefix, uint64_t *count,
                                      wk_error *err)
{
    *count = 0;
    redisContext *c = acquire(s, err);
    if (c == NULL) {
        return WK_ERR_IO;
    }
    char cursor[32] = "0";
    size_t plen = strlen(prefix);
    char *pattern = wk_alloc(s->alloc, plen * 2 + 2);
    if (pattern == NULL) {
        give_back(s, c, false);
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
    wk_status st = WK_OK;
    do {
        const char *argv[6] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
        size_t lens[6] = {4, strlen(cursor), 5, pn, 5, 4};
        redisReply *r = NULL;
        if (redisAppendCommandArgv(c, 6, argv, lens) != REDIS_OK || !read_reply(c, &r)) {
            st = io_failure(err, c);
            wk_free(s->alloc, pattern, plen * 2 + 2);
            give_back(s, c, true);
            return st;
        }
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            r->element[0]->type != REDIS_REPLY_STRING || r->element[0]->len >= sizeof cursor ||
            r->element[1]->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(r);
            st = wk_error_set(err, WK_ERR_IO, 0, "redis: unexpected SCAN reply");
            break;
        }
        memcpy(cursor, r->element[0]->str, r->element[0]->len);
        cursor[r->element[0]->len] = '\0';
        *count += r->element[1]->elements;
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    wk_free(s->alloc, pattern, plen * 2 + 2);
    give_back(s, c, false);
    return st;
}

/* redis://host[:port][/db] or host[:port]; [v6addr] in brackets. */
static wk_status parse_url(wk_redis_store *s, const char *url, wk_error *err)
{
    const char *p = url;
    if (strncmp(p, "redis://", 8) == 0) {
        p += 8;
    } else if (strstr(p, "://") != NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: URL scheme must be redis://");
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
    if (hl >= sizeof s->host) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: host name too long");
    }
    memcpy(s->host, host, hl);
    s->host[hl] = '\0';
    s->port = 6379;
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
        s->port = (int)port;
    }
    if (*p == '/') {
        p++;
        unsigned db = 0;
        int digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 5) {
            db = db * 10 + (unsigned)(*p++ - '0');
            digits++;
        }
        s->db = db;
    }
    if (*p != '\0') {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: unexpected characters in URL");
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
    wk_status st = parse_url(s, opts->url != NULL ? opts->url : "127.0.0.1:6379", err);
    const char *channel = opts->channel != NULL ? opts->channel : "wirekit:invalidate";
    s->channel_len = strlen(channel);
    if (st == WK_OK && (s->channel_len == 0 || s->channel_len >= sizeof s->channel)) {
        st = wk_error_set(err, WK_ERR_ARG, 0, "redis: channel name must be 1 to 127 bytes");
    }
    if (st != WK_OK) {
        wk_free(s->alloc, s, sizeof *s);
        return st;
    }
    memcpy(s->channel, channel, s->channel_len + 1);
    s->connect_ms = opts->connect_timeout_ms != 0 ? opts->connect_timeout_ms : 250;
    s->command_ms = opts->command_timeout_ms != 0 ? opts->command_timeout_ms : 250;
    s->retry_ms = opts->retry_ms != 0 ? opts->retry_ms : 1000;
    s->heartbeat_ms = opts->heartbeat_ms != 0 ? opts->heartbeat_ms : 1000;
    s->max = opts->pool != 0 ? opts->pool : 4;
    s->idle = wk_alloc(s->alloc, s->max * sizeof *s->idle);
    if (s->idle == NULL) {
        wk_free(s->alloc, s, sizeof *s);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    memset(s->idle, 0, s->max * sizeof *s->idle);
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    pthread_mutex_init(&s->wmu, NULL);
    s->subscribe = !opts->no_subscribe;
    s->iface.fetch = r_fetch;
    s->iface.store = r_store;
    s->iface.invalidate = r_invalidate;
    s->iface.remove = r_remove;
    s->iface.watch = s->subscribe ? wk__redis_watch : NULL;
    s->iface.self = s;
    s->stop_pipe[0] = s->stop_pipe[1] = -1;
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
    for (size_t i = 0; i < s->nidle; i++) {
        redisFree(s->idle[i]);
    }
    wk_free(s->alloc, s->idle, s->max * sizeof *s->idle);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->wmu);
    wk_free(s->alloc, s, sizeof *s);
}
