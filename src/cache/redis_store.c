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

#include "cache/redis_internal.h"

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

wk__rconn *wk__redis_connect(wk_redis_store *s, wk_error *err)
{
    wk__rconn *c = wk__rt_open(&s->ep, s->connect_ms, err);
    if (c != NULL && handshake(s, c, err) != WK_OK) {
        wk__rconn_free(c);
        return NULL;
    }
    return c;
}

static void mark_down(wk_redis_store *s)
{
    __atomic_store_n(&s->down_until_ms, wk__redis_now_ms() + s->retry_ms, __ATOMIC_RELEASE);
}

/* Takes a connection from the pool (or opens one), waiting for a free one at most until
 * `deadline`. */
static wk__rconn *acquire(wk_redis_store *s, int64_t deadline, wk_error *err)
{
    if (wk__redis_now_ms() < __atomic_load_n(&s->down_until_ms, __ATOMIC_ACQUIRE)) {
        wk_error_set(err, WK_ERR_IO, 0,
                     "redis: unavailable (a recent command failed; retrying soon)");
        return NULL;
    }
    pthread_mutex_lock(&s->mu);
    while (s->nidle == 0 && s->open == s->max) {
        struct timespec ts = {(time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000L};
        if (wk__redis_now_ms() >= deadline ||
            pthread_cond_timedwait(&s->cv, &s->mu, &ts) == ETIMEDOUT) {
            if (s->nidle == 0 && s->open == s->max) {
                pthread_mutex_unlock(&s->mu);
                wk_error_set(err, WK_ERR_IO, 0,
                             "redis: timed out waiting for a pooled connection");
                return NULL;
            }
        }
    }
    if (s->nidle > 0) {
        wk__rconn *c = s->idle[--s->nidle];
        pthread_mutex_unlock(&s->mu);
        return c;
    }
    s->open++;
    pthread_mutex_unlock(&s->mu);
    wk__rconn *c = wk__redis_connect(s, err);
    if (c == NULL) {
        pthread_mutex_lock(&s->mu);
        s->open--;
        pthread_cond_signal(&s->cv);
        pthread_mutex_unlock(&s->mu);
        mark_down(s);
    }
    return c;
}

static void give_back(wk_redis_store *s, wk__rconn *c, bool broken)
{
    if (broken) {
        wk__rconn_free(c);
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

/* A connection with `ncmd` queued commands sent; NULL with `err` set. */
static wk__rconn *send_cmds(wk_redis_store *s, int ncmd, const int *argc, const char **argv,
                            const size_t *lens, int64_t deadline, wk_error *err)
{
    wk__rconn *c = acquire(s, deadline, err);
    if (c == NULL) {
        return NULL;
    }
    int at = 0;
    wk_status st = WK_OK;
    for (int i = 0; i < ncmd && st == WK_OK; i++) {
        st = wk__rconn_append(c, argc[i], argv + at, lens + at, err);
        at += argc[i];
    }
    if (st == WK_OK) {
        st = wk__rconn_flush(c, deadline, err);
    }
    if (st != WK_OK) {
        give_back(s, c, true);
        return NULL;
    }
    return c;
}

static wk_status r_fetch(void *self, size_t n, const wk_cache_keyref *keys, wk_buf *vals,
                         bool *found, wk_error *err)
{
    wk_redis_store *s = self;
    int64_t deadline = wk__redis_now_ms() + s->command_ms;
    wk__rconn *c = acquire(s, deadline, err);
    if (c == NULL) {
        return WK_ERR_IO;
    }
    wk_status st = WK_OK;
    for (size_t i = 0; i < n && st == WK_OK; i++) {
        const char *argv[2] = {"GET", keys[i].ptr};
        size_t lens[2] = {3, keys[i].len};
        st = wk__rconn_append(c, 2, argv, lens, err);
    }
    if (st == WK_OK) {
        st = wk__rconn_flush(c, deadline, err);
    }
    if (st != WK_OK) {
        give_back(s, c, true);
        return st;
    }
    wk_status first = WK_OK;
    for (size_t i = 0; i < n; i++) {
        st = wk__rconn_read(c, &s->lim, deadline, err);
        if (st != WK_OK) {
            give_back(s, c, true);
            return st;
        }
        const wk__rnode *r = &c->nodes[0];
        found[i] = false;
        if (first != WK_OK) {
            continue; /* drain the pipeline, keep the first failure */
        }
        if (r->type == '$' && r->n >= 0) {
            found[i] = true;
            if (wk_buf_append(&vals[i], wk__rnode_str(c, r), (size_t)r->n) != WK_OK) {
                first = wk_error_set(err, WK_ERR_NOMEM, i, "redis: out of memory for a value");
            }
        } else if (r->type == '-') {
            first = wk_error_set(err, WK_ERR_IO, i,
                                 wk__redis_refusal(c, r, "redis: GET answered with an error reply"));
        } else if (!(r->type == '$' || (r->type == '*' && r->n < 0))) {
            first = wk_error_set(err, WK_ERR_IO, i,
                                 "redis: GET answered with a reply of the wrong type");
        }
    }
    give_back(s, c, false);
    return first;
}

/* Sends `ncmd` pipelined commands; msgs[i] describes command i's error reply. Returns the
 * first failure; every reply is read so the connection stays usable. */
static wk_status run(wk_redis_store *s, int ncmd, const int *argc, const char **argv,
                     const size_t *lens, const char *const *msgs, wk_error *err)
{
    int64_t deadline = wk__redis_now_ms() + s->command_ms;
    wk__rconn *c = send_cmds(s, ncmd, argc, argv, lens, deadline, err);
    if (c == NULL) {
        return WK_ERR_IO;
    }
    wk_status first = WK_OK;
    for (int i = 0; i < ncmd; i++) {
        wk_status st = wk__rconn_read(c, &s->lim, deadline, err);
        if (st != WK_OK) {
            give_back(s, c, true);
            return st;
        }
        if (c->nodes[0].type == '-' && first == WK_OK) {
            first = wk_error_set(err, WK_ERR_IO, 0, wk__redis_refusal(c, c->nodes, msgs[i]));
        }
    }
    give_back(s, c, false);
    return first;
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
        return run(s, 1, argc, argv, lens, msgs, err);
    }
    /* DEL first: if Redis refuses the SET (maxmemory with noeviction) the old value is gone
     * all the same. Then SET, then PUBLISH, always (a store without a subscriber still
     * broadcasts, so one-shot writers such as the CLI reach every reader). */
    const char *argv[10] = {"DEL", key, "SET", key, val, "PX", ttl, "PUBLISH", s->channel, key};
    size_t lens[10] = {3, key_len, 3, key_len, val_len, 2, (size_t)tn, 7, s->channel_len, key_len};
    int argc[3] = {2, 5, 3};
    static const char *const msgs[3] = {
        "redis: put failed: DEL refused (the old value may remain)",
        "redis: put failed: SET refused (out of memory?); the old value was deleted",
        "redis: put stored but PUBLISH refused (other processes were not told)"};
    return run(s, 3, argc, argv, lens, msgs, err);
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
    return run(s, 3, argc, argv, lens, msgs, err);
}

static wk_status r_remove(void *self, const char *key, size_t key_len, wk_error *err)
{
    const char *argv[2] = {"DEL", key};
    size_t lens[2] = {3, key_len};
    int argc[1] = {2};
    static const char *const msgs[1] = {"redis: DEL refused"};
    return run(self, 1, argc, argv, lens, msgs, err);
}

WK_API wk_status wk_redis_store_ping(wk_redis_store *s, wk_error *err)
{
    __atomic_store_n(&s->down_until_ms, 0, __ATOMIC_RELEASE); /* an explicit check retries */
    const char *argv[1] = {"PING"};
    size_t lens[1] = {4};
    int argc[1] = {1};
    static const char *const msgs[1] = {"redis: PING answered with an error reply"};
    return run(s, 1, argc, argv, lens, msgs, err);
}

WK_API wk_status wk_redis_store_count(wk_redis_store *s, const char *prefix, uint64_t *count,
                                      wk_error *err)
{
    *count = 0;
    size_t plen = strlen(prefix);
    char *pattern = malloc(plen * 2 + 2);
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
    char cursor[32] = "0";
    wk_status st = WK_OK;
    do {
        const char *argv[6] = {"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"};
        size_t lens[6] = {4, strlen(cursor), 5, pn, 5, 4};
        int argc[1] = {6};
        int64_t deadline = wk__redis_now_ms() + s->command_ms;
        wk__rconn *c = send_cmds(s, 1, argc, argv, lens, deadline, err);
        if (c == NULL) {
            st = WK_ERR_IO;
            break;
        }
        st = wk__rconn_read(c, &s->lim, deadline, err);
        if (st != WK_OK) {
            give_back(s, c, true);
            break;
        }
        const wk__rnode *r = c->nodes;
        if (r[0].type == '-') {
            st = wk_error_set(err, WK_ERR_IO, 0,
                              wk__redis_refusal(c, r, "redis: SCAN answered with an error reply"));
            give_back(s, c, false);
            break;
        }
        if (c->nnodes < 3 || r[0].type != '*' || r[0].n != 2 || r[1].type != '$' ||
            r[1].n < 0 || (size_t)r[1].n >= sizeof cursor || r[2].type != '*') {
            give_back(s, c, false);
            st = wk_error_set(err, WK_ERR_IO, 0, "redis: unexpected SCAN reply");
            break;
        }
        memcpy(cursor, wk__rnode_str(c, &r[1]), (size_t)r[1].n);
        cursor[r[1].n] = '\0';
        *count += r[2].n > 0 ? (uint64_t)r[2].n : 0;
        give_back(s, c, false);
    } while (strcmp(cursor, "0") != 0);
    free(pattern);
    return st;
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

WK_API wk_status wk_redis_store_new(const wk_redis_opts *opts, wk_redis_store **out,
                                     wk_error *err)
{
    static const wk_redis_opts defaults;
    if (opts == NULL) {
        opts = &defaults;
    }
    *out = NULL;
    wk_redis_store *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    wk_status st = parse_url(s, opts->url != NULL ? opts->url : "127.0.0.1:6379", err);
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
        explicit_bzero(s->pass, sizeof s->pass);
        free(s);
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
    s->max = opts->pool != 0 ? opts->pool : 4;
    s->idle = calloc(s->max, sizeof *s->idle);
    if (s->idle == NULL) {
        free(s);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
    }
    pthread_mutex_init(&s->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->cv, &ca);
    pthread_condattr_destroy(&ca);
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
        wk__rconn_free(s->idle[i]);
    }
    free(s->idle);
    free(s->watchers);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->wmu);
    explicit_bzero(s->pass, sizeof s->pass);
    free(s);
}
