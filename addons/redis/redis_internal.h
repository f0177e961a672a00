/*
 * Internals of the Redis store (wirekit-redis): the store object shared by the command pool
 * (redis_store.c) and the invalidation feed (redis_feed.c), and the wire layer both use
 * (redis_resp.c: RESP written and read against a deadline, with size caps).
 */
#ifndef WK_REDIS_INTERNAL_H
#define WK_REDIS_INTERNAL_H

#include <hiredis/hiredis.h>
#include <pthread.h>
#include <sys/types.h>

#include "wirekit/redis.h"

/* ---- wire layer ---- */

/** One reply element, in preorder: type is '+', '-', ':', '$' or '*'; `n` is the integer,
 *  string length or element count (-1 for a nil bulk or array); a string's bytes are at
 *  `off` in the connection's read buffer. */
typedef struct wk__rnode {
    char type;
    int64_t n;
    size_t off;
} wk__rnode;

/** Caps on one reply: bytes of a value (and of the reply) and elements. */
typedef struct wk__rlimits {
    size_t max_bytes;
    size_t max_elems;
} wk__rlimits;

/** A connection: the socket (made by hiredis), a read buffer and the last reply's nodes.
 *  Every buffer and the connection itself come from `alloc` (the store's). */
typedef struct wk__rconn {
    const wk_allocator *alloc;
    redisContext *ctx;
    int fd;
    uint8_t *in;
    size_t in_len, in_cap, consumed;
    wk__rnode *nodes;
    size_t nnodes, nodes_cap;
    uint8_t *out;
    size_t out_len, out_cap;
} wk__rconn;

/** Where a server is: TCP host and port, or a unix socket path in `host`. */
typedef struct wk__rendpoint {
    char host[256];
    int port;
    bool is_unix;
} wk__rendpoint;

/* ---- transport (redis_transport.c): the one seam where TLS would go ---- */

/** Opens a non-blocking connection within `connect_ms`, the wk__rconn and its buffers from
 *  `alloc` (hiredis allocates its own context); NULL with `err` naming the cause. */
wk__rconn *wk__rt_open(const wk__rendpoint *ep, uint32_t connect_ms, const wk_allocator *alloc,
                       wk_error *err);
/** send()/recv() on the connection: -1 with errno EAGAIN when it would block. */
ssize_t wk__rt_send(wk__rconn *c, const void *p, size_t n);
ssize_t wk__rt_recv(wk__rconn *c, void *p, size_t n);
/** Closes the connection's socket (not `c`). */
void wk__rt_close(wk__rconn *c);
/** Closes the socket and frees `c` itself. NULL is a no-op. */
void wk__rconn_free(wk__rconn *c);
/** Queues one command (RESP array of bulk strings). */
wk_status wk__rconn_append(wk__rconn *c, int argc, const char *const *argv, const size_t *lens,
                           wk_error *err);
/** Queues GET `key`, preceded by ASKING when `asking`: wk__rconn_append without the
 *  general command's bookkeeping, for a multi-get's many GETs. */
wk_status wk__rconn_append_get(wk__rconn *c, const char *key, size_t len, bool asking,
                               wk_error *err);
/** Sends what is queued before `deadline` (monotonic ms). */
wk_status wk__rconn_flush(wk__rconn *c, int64_t deadline, wk_error *err);
/** Reads one whole reply before `deadline` into c->nodes. WK_ERR_LIMIT when a cap is passed
 *  (checked on headers, before allocating), WK_ERR_IO on timeout or a lost connection,
 *  WK_ERR_SYNTAX on bytes that are not RESP. After any failure the connection is unusable. */
wk_status wk__rconn_read(wk__rconn *c, const wk__rlimits *lim, int64_t deadline, wk_error *err);
/** Non-blocking: completes a reply from buffered bytes and what the socket holds now
 *  (recv() until it would block, or until one comes back shorter than the room it had: the
 *  socket is empty then, and a second recv() would only say EAGAIN); *got tells; without a
 *  reply, wait for the socket to be readable before calling again. Failures as
 *  wk__rconn_read. */
wk_status wk__rconn_try_read(wk__rconn *c, const wk__rlimits *lim, bool *got, wk_error *err);
/** wk__rconn_try_read for a caller that reads many replies per wake-up: recv() only while
 *  *may_recv, which turns false once a recv() found the socket empty (came back short, or
 *  would block), so the replies behind the first come from the buffer without a recv() that
 *  would only say EAGAIN. Set *may_recv true again after poll() reports the socket. */
wk_status wk__rconn_next(wk__rconn *c, const wk__rlimits *lim, bool *may_recv, bool *got,
                         wk_error *err);
/** Most connections wk__rconn_wait_any watches at once. */
#define WK__RCONN_WAIT_MAX 128u
/** Waits until one of cs[0..n) has bytes to read (or hung up), before `deadline`; WK_ERR_IO
 *  on timeout. ready[i] tells which (readable, hung up or failed), so only those are read. */
wk_status wk__rconn_wait_any(wk__rconn *const *cs, size_t n, bool *ready, int64_t deadline,
                             wk_error *err);
/** True when bytes of a next reply are already buffered. */
bool wk__rconn_buffered(const wk__rconn *c);
const char *wk__rnode_str(const wk__rconn *c, const wk__rnode *n);
/** True for a bulk or status string equal to `s`. */
bool wk__rnode_is(const wk__rconn *c, const wk__rnode *n, const char *s);

/* ---- a set of keys (redis_keyset.c): SCAN across cluster masters reports each key once ---- */

/** Keys seen so far; every byte from `alloc`. */
typedef struct wk__keyset {
    const wk_allocator *alloc;
    struct wk__kslot *tab;
    size_t cap, n;
    wk_buf bytes;
} wk__keyset;

void wk__keyset_init(wk__keyset *k, const wk_allocator *alloc);
/** Adds `key`: 1 when it is new, 0 when it was there, -1 out of memory. */
int wk__keyset_add(wk__keyset *k, const char *key, size_t len);
void wk__keyset_free(wk__keyset *k);

/* ---- the store ---- */

/** Servers a store may know (cluster masters and replicas it was redirected to, sentinels'
 *  masters); never removed while the store lives. */
#define WK__MAX_SRV 64u
#define WK__SLOTS 16384u

/** One server and its connection pool. */
typedef struct wk__rsrv {
    wk__rendpoint ep;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    wk__rconn **idle;
    size_t nidle;
    size_t open; /* connections in use or idle */
    size_t max;
    int64_t down_until_ms; /* atomic: fail fast until then */
} wk__rsrv;

enum { WK__MODE_SINGLE, WK__MODE_CLUSTER, WK__MODE_SENTINEL };

struct wk_redis_store {
    const wk_allocator *alloc; /* the store's own memory (NULL = libc) */
    int mode;
    wk__rendpoint ep; /* single mode: the server */
    /* servers: srv[0, nsrv) (nsrv atomic; entries written once under topo_mu) */
    wk__rsrv *srv[WK__MAX_SRV];
    uint32_t nsrv;
    uint32_t master;          /* atomic: single and sentinel mode, the server in use */
    uint16_t *slots;          /* cluster: WK__SLOTS server indices (atomic entries) */
    bool map_known;           /* atomic: cluster map or sentinel master found once */
    wk__rendpoint *seeds;     /* cluster seed nodes or sentinels */
    size_t nseeds, seeds_cap;
    char master_name[128];    /* sentinel: the master's name */
    pthread_mutex_t topo_mu;  /* adding servers, writing the map */
    pthread_mutex_t refresh_mu; /* one refresh at a time */
    int64_t refresh_after_ms; /* atomic: a refresh is wanted from then (INT64_MAX: none) */
    uint32_t feed_rr;         /* cluster: which server the subscriber tries next */
    unsigned wait_replicas;   /* WAIT this many replicas after each write */
    size_t window;            /* GETs in flight per connection in a multi-get */
    unsigned db;
    char user[128];
    char pass[256];
    bool has_pass; /* AUTH [user] pass on every new connection */
    char name[128]; /* CLIENT SETNAME on every new connection ("" = none) */
    char channel[128];
    size_t channel_len;
    uint32_t connect_ms;
    uint32_t command_ms;
    uint32_t retry_ms;
    uint32_t heartbeat_ms;
    wk__rlimits lim;
    size_t pool_max; /* connections per server */
    /* feed */
    bool subscribe;
    pthread_t thread;
    bool thread_started;
    int stop_pipe[2];
    pthread_mutex_t wmu; /* watchers and feed state */
    const wk_cache_watch **watchers;
    size_t nwatch, watch_cap;
    bool feed_up;
    wk_cache_store iface;
};

int64_t wk__redis_now_ms(void);

/** Connects to `ep` with the store's timeouts, then AUTH, CLIENT SETNAME and SELECT as
 *  configured (every new connection, so a reconnect repeats them); `bare` skips them (for
 *  sentinels). NULL with `err` naming the cause. */
wk__rconn *wk__redis_connect(wk_redis_store *s, const wk__rendpoint *ep, bool bare,
                             wk_error *err);

/** A connection for the subscriber: the server in use, or in a cluster the next known one. */
wk__rconn *wk__redis_connect_feed(wk_redis_store *s, wk_error *err);

/* ---- topology (redis_cluster.c) ---- */

/** The cluster slot of a key: CRC16 (XMODEM) of the key, or of its {hash tag}, mod 16384. */
uint16_t wk__redis_slot(const char *key, size_t len);
/** The server for `key`: by slot in a cluster, else the master in use. */
wk__rsrv *wk__redis_route(wk_redis_store *s, const char *key, size_t len);
/** Finds or adds the server at host:port; NULL when the table is full or out of memory. */
wk__rsrv *wk__redis_srv(wk_redis_store *s, const char *host, size_t host_len, int port,
                        bool is_unix);
/** Allocates a server's pool (from `alloc`). */
wk__rsrv *wk__redis_srv_new(const wk_allocator *alloc, const wk__rendpoint *ep, size_t max);
void wk__redis_srv_free(const wk_allocator *alloc, wk__rsrv *v);
/** Asks for a topology refresh (cluster slots or sentinel master) soon. */
void wk__redis_want_refresh(wk_redis_store *s);
/** Refreshes the topology now when one is wanted (or `force`) and no other thread is doing
 *  it. WK_OK when a map or master was found (or none was needed). */
wk_status wk__redis_refresh(wk_redis_store *s, bool force, wk_error *err);
/** Parses a "-MOVED slot host:port" or "-ASK slot host:port" reply: 1 for MOVED, 2 for ASK,
 *  0 for anything else; on 1 or 2 the target server (added if new) is in *to and, for
 *  MOVED, the slot map is updated. */
int wk__redis_redirect(wk_redis_store *s, const wk__rconn *c, const wk__rnode *r,
                       const wk__rsrv *from, wk__rsrv **to);

/** The subscriber thread's body (redis_feed.c). */
/** A static message naming the cause of an error reply (NOAUTH, WRONGPASS, NOPERM, LOADING,
 *  READONLY, MASTERDOWN), or `fallback`. */
const char *wk__redis_refusal(const wk__rconn *c, const wk__rnode *r, const char *fallback);

void *wk__redis_feed_main(void *arg);

/** Registers or unregisters a watcher (redis_feed.c). */
void wk__redis_watch(void *self, const wk_cache_watch *w, bool enable);

#endif
