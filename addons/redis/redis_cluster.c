/*
 * The Redis store's topology: which server a key goes to. In a Redis Cluster, keys map to one
 * of 16384 slots (CRC16 of the key, or of its {hash tag}); the slot map comes from CLUSTER
 * SLOTS asked of any known node (the servers already known and not marked down first, then
 * the seeds), and is patched by MOVED redirects, which also ask for a full refresh. With
 * Sentinel, the master's address comes from SENTINEL GET-MASTER-ADDR-BY-NAME asked of each
 * sentinel in turn. In single-server mode there is one server and nothing to refresh.
 *
 * In the flow of a cache miss (store get -> topology -> pool -> transport -> RESP) this is the
 * step between the command and its connection: the command asks wk__redis_route() for the
 * key's server, then wk__redis_checkout() for a connection to it, which waits (within the
 * command's deadline) while the first map or master is being found, routes again once it
 * is, and takes one from redis_pool.c. Servers are
 * added through the pool's table; this file only says which of them serves what.
 *
 * The trade-off is lock-free reads against a map that may be briefly stale. Lookups take no
 * lock: servers are added, never removed (their table entries are written once), and each
 * slot's server index is an atomic 16-bit word. A refresh runs in the thread of a command
 * that found it wanted, under a try-lock so that other threads go on with the map they have
 * (and follow MOVED/ASK when it is wrong); a refresh that finds nothing is tried again
 * REFRESH_MIN_MS later. Commands that fail on a dead master ask for one, and once the cluster
 * has promoted a replica the refresh finds it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "redis/redis_internal.h"

#define REFRESH_MIN_MS 100

/* CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, as Redis Cluster uses; one table
 * lookup per byte (crc16_tab[i] is the CRC of the byte i shifted through the polynomial). */
static const uint16_t crc16_tab[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
    0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef,
    0x1231, 0x0210, 0x3273, 0x2252, 0x52b5, 0x4294, 0x72f7, 0x62d6,
    0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c, 0xf3ff, 0xe3de,
    0x2462, 0x3443, 0x0420, 0x1401, 0x64e6, 0x74c7, 0x44a4, 0x5485,
    0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4,
    0xb75b, 0xa77a, 0x9719, 0x8738, 0xf7df, 0xe7fe, 0xd79d, 0xc7bc,
    0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b,
    0x5af5, 0x4ad4, 0x7ab7, 0x6a96, 0x1a71, 0x0a50, 0x3a33, 0x2a12,
    0xdbfd, 0xcbdc, 0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a,
    0x6ca6, 0x7c87, 0x4ce4, 0x5cc5, 0x2c22, 0x3c03, 0x0c60, 0x1c41,
    0xedae, 0xfd8f, 0xcdec, 0xddcd, 0xad2a, 0xbd0b, 0x8d68, 0x9d49,
    0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
    0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78,
    0x9188, 0x81a9, 0xb1ca, 0xa1eb, 0xd10c, 0xc12d, 0xf14e, 0xe16f,
    0x1080, 0x00a1, 0x30c2, 0x20e3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c, 0xe37f, 0xf35e,
    0x02b1, 0x1290, 0x22f3, 0x32d2, 0x4235, 0x5214, 0x6277, 0x7256,
    0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d,
    0x34e2, 0x24c3, 0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
    0xa7db, 0xb7fa, 0x8799, 0x97b8, 0xe75f, 0xf77e, 0xc71d, 0xd73c,
    0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab,
    0x5844, 0x4865, 0x7806, 0x6827, 0x18c0, 0x08e1, 0x3882, 0x28a3,
    0xcb7d, 0xdb5c, 0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a,
    0x4a75, 0x5a54, 0x6a37, 0x7a16, 0x0af1, 0x1ad0, 0x2ab3, 0x3a92,
    0xfd2e, 0xed0f, 0xdd6c, 0xcd4d, 0xbdaa, 0xad8b, 0x9de8, 0x8dc9,
    0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
    0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8,
    0x6e17, 0x7e36, 0x4e55, 0x5e74, 0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

/* Slicing by four: slice[k][x] is the CRC of the byte x followed by k zero bytes, so four
 * bytes cost four independent lookups instead of four dependent steps; made once from
 * crc16_tab. */
static uint16_t crc16_slice[4][256];
static pthread_once_t crc16_once = PTHREAD_ONCE_INIT;

static void crc16_slice_init(void)
{
    for (unsigned x = 0; x < 256; x++) {
        uint16_t v = crc16_tab[x];
        crc16_slice[0][x] = v;
        for (unsigned k = 1; k < 4; k++) {
            v = (uint16_t)((v << 8) ^ crc16_tab[v >> 8]); /* one zero byte more */
            crc16_slice[k][x] = v;
        }
    }
}

/* CRC16 (XMODEM) of key[0..n): four bytes a step through the sliced tables, the rest one by
 * one. */
static uint16_t crc16(const char *key, size_t n)
{
    const unsigned char *p = (const unsigned char *)key;
    uint16_t crc = 0;
    pthread_once(&crc16_once, crc16_slice_init);
    for (; n >= 4; n -= 4, p += 4) {
        /* the state's two bytes are consumed by the first two bytes of the four */
        crc = (uint16_t)(crc16_slice[3][(crc >> 8) ^ p[0]] ^ crc16_slice[2][(crc & 0xffu) ^ p[1]] ^
                         crc16_slice[1][p[2]] ^ crc16_slice[0][p[3]]);
    }
    for (; n > 0; n--) {
        crc = (uint16_t)((crc << 8) ^ crc16_tab[((crc >> 8) ^ *p++) & 0xffu]);
    }
    return crc;
}

uint16_t wk__redis_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (open != NULL) {
        size_t at = (size_t)(open - key) + 1;
        const char *close = memchr(open + 1, '}', len - at);
        if (close != NULL && close > open + 1) {
            return (uint16_t)(crc16(open + 1, (size_t)(close - open - 1)) % WK__SLOTS);
        }
    }
    return (uint16_t)(crc16(key, len) % WK__SLOTS);
}

wk__rsrv *wk__redis_route(wk_redis_store *s, const char *key, size_t len)
{
    if (s->cfg.mode == WK__MODE_CLUSTER) {
        uint16_t i = __atomic_load_n(&s->slots[wk__redis_slot(key, len)], __ATOMIC_ACQUIRE);
        return s->srv[i];
    }
    return s->srv[__atomic_load_n(&s->master, __ATOMIC_ACQUIRE)];
}

/* The contract is in redis_internal.h. */
uint32_t wk__redis_masters(wk_redis_store *s, wk__rsrv **out)
{
    if (s->cfg.mode != WK__MODE_CLUSTER) {
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

/* Index after the subtree of node i (preorder, arrays counted by elements). */
static size_t skip(const wk__rconn *c, size_t i)
{
    size_t left = 1;
    while (left > 0 && i < c->nnodes) {
        left--;
        if (c->nodes[i].type == '*' && c->nodes[i].n > 0) {
            left += (size_t)c->nodes[i].n;
        }
        i++;
    }
    return i;
}

/* Applies a CLUSTER SLOTS reply got from `from`; false when it is malformed or covers no
 * slot. */
static bool apply_slots(wk_redis_store *s, const wk__rconn *c, const wk__rendpoint *from)
{
    const wk__rnode *r = c->nodes;
    if (c->nnodes < 1 || r[0].type != '*' || r[0].n <= 0) {
        return false;
    }
    size_t i = 1;
    size_t covered = 0;
    for (int64_t k = 0; k < r[0].n && i < c->nnodes; k++) {
        size_t end = skip(c, i);
        /* [start, end, [host, port, id, ...], replicas...] */
        if (r[i].type != '*' || r[i].n < 3 || i + 3 >= c->nnodes || r[i + 1].type != ':' ||
            r[i + 2].type != ':' || r[i + 3].type != '*' || r[i + 3].n < 2 ||
            i + 5 >= c->nnodes || r[i + 4].type != '$' || r[i + 5].type != ':') {
            return false;
        }
        int64_t lo = r[i + 1].n, hi = r[i + 2].n;
        const char *host = wk__rnode_str(c, &r[i + 4]);
        size_t hl = r[i + 4].n > 0 ? (size_t)r[i + 4].n : 0;
        if (hl == 0 || (hl == 1 && host[0] == '?')) {
            host = from->host; /* unknown endpoint: the node we asked */
            hl = strlen(from->host);
        }
        if (lo < 0 || hi < lo || hi >= (int64_t)WK__SLOTS) {
            return false;
        }
        wk__rendpoint ep;
        memset(&ep, 0, sizeof ep);
        if (hl >= sizeof ep.host || r[i + 5].n <= 0 || r[i + 5].n > 65535) {
            return false;
        }
        memcpy(ep.host, host, hl);
        ep.port = (int)r[i + 5].n;
        wk__rsrv *v = wk__redis_srv_locked(s, &ep);
        if (v == NULL) {
            return false;
        }
        uint16_t idx = (uint16_t)wk__redis_srv_index(s, v);
        for (int64_t sl = lo; sl <= hi; sl++) {
            __atomic_store_n(&s->slots[sl], idx, __ATOMIC_RELEASE);
        }
        covered += (size_t)(hi - lo + 1);
        i = end;
    }
    return covered > 0;
}

/* One question to one endpoint: CLUSTER SLOTS, or the sentinel's master address. */
static wk_status ask(wk_redis_store *s, const wk__rendpoint *ep, wk_error *err)
{
    bool sentinel = s->cfg.mode == WK__MODE_SENTINEL;
    wk__rconn *c = wk__redis_connect(s, ep, sentinel, err);
    if (c == NULL) {
        return WK_ERR_IO;
    }
    const char *slots_argv[2] = {"CLUSTER", "SLOTS"};
    size_t slots_lens[2] = {7, 5};
    const char *sent_argv[3] = {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", s->cfg.master_name};
    size_t sent_lens[3] = {8, 23, strlen(s->cfg.master_name)};
    int64_t deadline = wk__redis_now_ms() + s->cfg.command_ms;
    wk_status st = sentinel ? wk__rconn_append(c, 3, sent_argv, sent_lens, err)
                            : wk__rconn_append(c, 2, slots_argv, slots_lens, err);
    if (st == WK_OK) {
        st = wk__rconn_flush(c, deadline, err);
    }
    if (st == WK_OK) {
        st = wk__rconn_read(c, &s->cfg.lim, deadline, err);
    }
    if (st == WK_OK && c->nodes[0].type == '-') {
        st = wk_error_set(err, WK_ERR_IO, 0,
                          wk__redis_refusal(c, c->nodes,
                                            sentinel ? "redis: SENTINEL refused the question"
                                                     : "redis: CLUSTER SLOTS refused (not a "
                                                       "cluster node?)"));
    }
    if (st == WK_OK && !sentinel) {
        pthread_mutex_lock(&s->topo_mu);
        bool ok = apply_slots(s, c, ep);
        pthread_mutex_unlock(&s->topo_mu);
        if (!ok) {
            st = wk_error_set(err, WK_ERR_IO, 0, "redis: unusable CLUSTER SLOTS reply");
        }
    } else if (st == WK_OK) {
        const wk__rnode *r = c->nodes;
        char port[8];
        if (c->nnodes != 3 || r[0].type != '*' || r[1].type != '$' || r[2].type != '$' ||
            r[2].n <= 0 || r[2].n >= (int64_t)sizeof port) {
            st = wk_error_set(err, WK_ERR_IO, 0,
                              r[0].type == '*' && r[0].n < 0
                                  ? "redis: the sentinel does not know this master name"
                                  : "redis: unusable SENTINEL reply");
        } else {
            memcpy(port, wk__rnode_str(c, &r[2]), (size_t)r[2].n);
            port[r[2].n] = '\0';
            /* digits only, 1-65535: a hostile or broken sentinel's "abc" is not port 0 */
            char *end = NULL;
            long pn = strtol(port, &end, 10);
            bool port_ok = port[0] >= '0' && port[0] <= '9' && *end == '\0' && pn >= 1 &&
                           pn <= 65535;
            wk__rsrv *v = port_ok && r[1].n > 0
                              ? wk__redis_srv(s, wk__rnode_str(c, &r[1]), (size_t)r[1].n,
                                              (int)pn, false)
                              : NULL;
            if (!port_ok) {
                st = wk_error_set(err, WK_ERR_IO, 0,
                                  "redis: the sentinel named the master with a bad port");
            } else if (v == NULL) {
                st = wk_error_set(err, WK_ERR_IO, 0, "redis: bad master address from sentinel");
            } else {
                __atomic_store_n(&s->master, wk__redis_srv_index(s, v), __ATOMIC_RELEASE);
            }
        }
    }
    if (st != WK_OK) {
        wk__redis_note_failed(s, ep); /* the node or sentinel asked, by its own address */
    }
    wk__rconn_free(c);
    return st;
}

/* The refresh itself, under refresh_mu. */
static wk_status refresh_locked(wk_redis_store *s, wk_error *err)
{
    int64_t now = wk__redis_now_ms();
    __atomic_store_n(&s->refresh_after_ms, INT64_MAX, __ATOMIC_RELAXED);
    wk_status st = wk_error_set(err, WK_ERR_IO, 0, "redis: no seed node or sentinel answered");
    /* Known live servers first (a cluster's current masters), then the seeds. */
    uint32_t n = s->cfg.mode == WK__MODE_CLUSTER ? __atomic_load_n(&s->nsrv, __ATOMIC_ACQUIRE) : 0;
    for (uint32_t i = 0; i < n && st != WK_OK; i++) {
        if (now >= __atomic_load_n(&s->srv[i]->down_until_ms, __ATOMIC_ACQUIRE)) {
            st = ask(s, &s->srv[i]->ep, err);
        }
    }
    for (size_t i = 0; i < s->cfg.nseeds && st != WK_OK; i++) {
        st = ask(s, &s->cfg.seeds[i], err);
    }
    if (st == WK_OK) {
        __atomic_store_n(&s->map_known, true, __ATOMIC_RELEASE);
    } else {
        /* try again soon: the cluster may be electing a new master */
        int64_t again = wk__redis_now_ms() + REFRESH_MIN_MS;
        __atomic_store_n(&s->refresh_after_ms, again, __ATOMIC_RELAXED);
    }
    return st;
}

wk_status wk__redis_refresh(wk_redis_store *s, bool force, wk_error *err)
{
    if (s->cfg.mode == WK__MODE_SINGLE) {
        return WK_OK;
    }
    int64_t now = wk__redis_now_ms();
    if (!force && now < __atomic_load_n(&s->refresh_after_ms, __ATOMIC_RELAXED)) {
        return WK_OK;
    }
    if (force) {
        pthread_mutex_lock(&s->refresh_mu);
    } else if (pthread_mutex_trylock(&s->refresh_mu) != 0) {
        return WK_OK; /* another thread is at it; go on with the map we have */
    }
    wk_status st = refresh_locked(s, err);
    pthread_mutex_unlock(&s->refresh_mu);
    return st;
}

/* No map yet: the first refresh is under way in another thread (a command's try-lock, or the
 * feed's), or failed. Waits for it within `deadline`, a millisecond at a time, and when the
 * lock is free and still no map is known runs the refresh itself, so that a command fails
 * only on what the refresh found (every seed down, named by wk__redis_note_failed), never
 * because another thread was asking at the time. */
static wk_status await_map(wk_redis_store *s, int64_t deadline, wk_error *err)
{
    for (;;) {
        if (__atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE)) {
            return WK_OK;
        }
        if (pthread_mutex_trylock(&s->refresh_mu) == 0) {
            wk_status st = __atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE)
                               ? WK_OK
                               : refresh_locked(s, err);
            pthread_mutex_unlock(&s->refresh_mu);
            return st;
        }
        if (wk__redis_now_ms() >= deadline) {
            return wk_error_set(err, WK_ERR_IO, 0,
                                s->cfg.mode == WK__MODE_CLUSTER
                                    ? "redis: timed out waiting for the cluster slot map "
                                      "(CLUSTER SLOTS still under way)"
                                    : "redis: timed out waiting for the sentinels to name "
                                      "the master");
        }
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
}

void wk__redis_maybe_refresh(wk_redis_store *s)
{
    if (s->cfg.mode != WK__MODE_SINGLE &&
        wk__redis_now_ms() >= __atomic_load_n(&s->refresh_after_ms, __ATOMIC_RELAXED)) {
        wk_error e;
        (void)wk__redis_refresh(s, false, &e);
    }
}

wk_status wk__redis_await_map(wk_redis_store *s, int64_t deadline, wk_error *err)
{
    if (s->cfg.mode == WK__MODE_SINGLE || __atomic_load_n(&s->map_known, __ATOMIC_ACQUIRE)) {
        return WK_OK;
    }
    return await_map(s, deadline, err);
}

wk__rconn *wk__redis_checkout(wk_redis_store *s, wk__rsrv *v, int64_t deadline, wk_error *err)
{
    if (wk__redis_await_map(s, deadline, err) != WK_OK) {
        return NULL;
    }
    return wk__redis_take(s, v, deadline, err);
}

int wk__redis_redirect(wk_redis_store *s, const wk__rconn *c, const wk__rnode *r,
                       const wk__rsrv *from, wk__rsrv **to)
{
    if (r->type != '-' || r->n < 8) {
        return 0;
    }
    const char *m = wk__rnode_str(c, r);
    size_t n = (size_t)r->n;
    int kind;
    size_t at;
    if (memcmp(m, "MOVED ", 6) == 0) {
        kind = 1;
        at = 6;
    } else if (memcmp(m, "ASK ", 4) == 0) {
        kind = 2;
        at = 4;
    } else {
        return 0;
    }
    long slot = 0;
    size_t digits = 0;
    while (at < n && m[at] >= '0' && m[at] <= '9' && digits < 6) {
        slot = slot * 10 + (m[at++] - '0');
        digits++;
    }
    if (digits == 0 || at >= n || m[at] != ' ' || slot >= (long)WK__SLOTS) {
        return 0;
    }
    at++;
    const char *addr = m + at;
    size_t al = n - at;
    const char *colon = NULL;
    for (size_t i = 0; i < al; i++) {
        if (addr[i] == ':') {
            colon = addr + i; /* the last one: IPv6 hosts have colons */
        }
    }
    if (colon == NULL) {
        return 0;
    }
    long port = 0;
    for (const char *p = colon + 1; p < addr + al; p++) {
        if (*p < '0' || *p > '9' || port > 65535) {
            return 0;
        }
        port = port * 10 + (*p - '0');
    }
    const char *host = addr;
    size_t hl = (size_t)(colon - addr);
    if (hl == 0) {
        host = from->ep.host; /* ":port": the same host */
        hl = strlen(host);
    }
    wk__rsrv *v = wk__redis_srv(s, host, hl, (int)port, false);
    if (v == NULL) {
        return 0;
    }
    if (kind == 1 && s->cfg.mode == WK__MODE_CLUSTER) {
        __atomic_store_n(&s->slots[slot], (uint16_t)wk__redis_srv_index(s, v), __ATOMIC_RELEASE);
        wk__redis_want_refresh(s);
    }
    *to = v;
    return kind;
}
