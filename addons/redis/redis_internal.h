/*
 * Internals of libwirekit-redis, the Redis tier of the entity cache. The add-on is built in
 * layers: a file calls only into the layers below its own and, where an arrow says so, into
 * a file listed below it in its own layer, so the calls between files form a DAG (no file
 * calls back up; what a lower layer must tell a higher one it leaves in a flag, as the pool
 * does with refresh_after_ms).
 *
 *   5 store     redis_store.c     the store object: new (options -> config -> servers ->
 *                                 commands -> subscriber), the wk_cache_store, free
 *   4 commands  redis_admin.c     ping, scan, count, pttl (the other wk_redis_store_* calls)
 *                                 -> redis_commands.c (wk__redis_run_on)
 *               redis_commands.c  the wk_cache_store commands: put, fill, invalidate,
 *                                 remove, fetch; a pipeline on one key's server following
 *                                 redirects -> redis_mget.c (fetch_each)
 *               redis_mget.c      the pipelined multi-get (fetch_each)
 *               redis_async.c     the asynchronous get (fetch_async): an I/O thread that
 *                                 pipelines every queued GET on its own connection
 *   3 topology  redis_feed.c      the subscriber thread and its watchers, feed state
 *                                 -> redis_cluster.c (which server to subscribe on)
 *               redis_cluster.c   which server: slot map, sentinel master, refresh,
 *                                 MOVED/ASK; checkout once the map is known
 *   2 pool      redis_pool.c      the server table, each server's connection pool, new
 *                                 connections (AUTH, SETNAME, SELECT), fail-fast
 *   1 wire      redis_resp.c      RESP2 and RESP3 commands and replies against a deadline,
 *                                 with caps; the clock; error replies named
 *                                 -> redis_transport.c
 *               redis_transport.c the socket: connect within the deadline, send, recv, TLS or
 *                                 not -> redis_tls.c
 *               redis_tls.c       OpenSSL: the store's context, the handshake, TLS I/O
 *   0 leaves    redis_url.c       options and URLs into a wk__rconfig (no I/O)
 *               redis_clock.c     the monotonic clock of every deadline
 *               redis_keyset.c    a set of keys (SCAN across masters)
 *
 * A cache miss flows down: the cache calls the store's fetch_each (redis_mget.c), which asks
 * redis_cluster.c for each key's server and a connection to it, redis_pool.c hands one out
 * (opening it through redis_transport.c when the pool has none idle), and redis_resp.c writes
 * the GETs and parses the replies. Below: the wire types, then each layer's calls, bottom up
 * (the store object before the pool, as every layer from the pool up takes it).
 */
#ifndef WK_REDIS_INTERNAL_H
#define WK_REDIS_INTERNAL_H

#include <pthread.h>
#include <sys/types.h>

#include "wirekit/redis.h"

/* ---- 1 wire: types shared by the transport and RESP ---- */

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

/** A connection: the socket, its TLS session (NULL in plain text), a read buffer and the
 *  last reply's nodes. Every buffer and the connection itself come from `alloc` (the
 *  store's); OpenSSL allocates the session itself. */
typedef struct wk__rconn {
    const wk_allocator *alloc;
    struct ssl_st *ssl;
    const char *cause; /* static: why TLS I/O failed (an alert), for the wire layer's message */
    bool resp3;        /* HELLO 3 was answered: RESP3 types are read (the feed's connection) */
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

/* ---- 1 wire, TLS (redis_tls.c) ---- */

/** The store's TLS client context (an SSL_CTX, in *out) from the options' CA, client
 *  certificate and key, peer verification on unless tls_insecure_skip_verify. WK_ERR_ARG
 *  naming the file that cannot be used (never its contents), or WK_ERR_NOMEM. */
wk_status wk__rtls_ctx_new(const wk_redis_opts *o, void **out, wk_error *err);
/** Frees a context from wk__rtls_ctx_new (NULL is a no-op). */
void wk__rtls_ctx_free(void *ctx);
/** The TLS handshake on c->fd before `deadline`, SNI and verification against
 *  `server_name` when given, else `host`; c->ssl is set (also on failure, for
 *  wk__rtls_close). WK_ERR_IO naming the cause (not trusted, host name mismatch, timed
 *  out, not a TLS port, client certificate refused). */
wk_status wk__rtls_connect(wk__rconn *c, void *ctx, const char *host, const char *server_name,
                           int64_t deadline, wk_error *err);
/** SSL_write/SSL_read as send()/recv(): -1 with errno EAGAIN when it would block, 0 when the
 *  server closed; a TLS failure is -1 with ECONNRESET and c->cause naming it. */
ssize_t wk__rtls_send(wk__rconn *c, const void *p, size_t n);
ssize_t wk__rtls_recv(wk__rconn *c, void *p, size_t n);
/** True when the session holds decrypted bytes not yet read (poll() would not see them). */
bool wk__rtls_pending(const wk__rconn *c);
/** Frees the session (no close_notify). */
void wk__rtls_close(wk__rconn *c);

/* ---- 1 wire, transport (redis_transport.c): the one seam through which bytes pass ---- */

/** Opens a non-blocking connection within `connect_ms` (the TLS handshake included when
 *  `tls`, the store's context, is not NULL; unix sockets stay plain), the wk__rconn from
 *  `alloc`; NULL with `err` naming the cause. */
wk__rconn *wk__rt_open(const wk__rendpoint *ep, uint32_t connect_ms, void *tls,
                       const char *server_name, const wk_allocator *alloc, wk_error *err);
/** send()/recv() on the connection: -1 with errno EAGAIN when it would block. */
ssize_t wk__rt_send(wk__rconn *c, const void *p, size_t n);
ssize_t wk__rt_recv(wk__rconn *c, void *p, size_t n);
/** c->cause when a TLS failure was named, else `fallback`. */
const char *wk__rt_cause(const wk__rconn *c, const char *fallback);
/** Closes the connection's socket and TLS session (not `c`). */
void wk__rt_close(wk__rconn *c);

/* ---- 1 wire, RESP (redis_resp.c) ---- */

/** Frees `c` and its buffers after closing its socket. NULL is a no-op. */
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
const char *wk__rnode_str(const wk__rconn *c, const wk__rnode *n);
/** True for a bulk or status string equal to `s`. */
bool wk__rnode_is(const wk__rconn *c, const wk__rnode *n, const char *s);
/** Queues `ncmd` commands, command i being argc[i] strings of argv/lens taken in order; each
 *  is preceded by ASKING when `asking` (a command sent on after an -ASK redirect). */
wk_status wk__rconn_append_cmds(wk__rconn *c, int ncmd, const int *argc, const char **argv,
                                const size_t *lens, bool asking, wk_error *err);
/** A static message naming the cause of an error reply (NOAUTH, WRONGPASS, NOPERM, LOADING,
 *  READONLY, MASTERDOWN), or `fallback`. */
const char *wk__redis_refusal(const wk__rconn *c, const wk__rnode *r, const char *fallback);
/** What a GET's reply says. */
typedef enum { WK__GET_HIT, WK__GET_MISS, WK__GET_FAILED } wk__get_outcome;
/** Reads the reply `r` to a GET: WK__GET_HIT with the value at *val (in c's read buffer, *len
 *  bytes), WK__GET_MISS for a nil (a null bulk string or array), or WK__GET_FAILED with *why a
 *  static message (an error reply's cause, or a reply of the wrong type). */
wk__get_outcome wk__redis_get_reply(const wk__rconn *c, const wk__rnode *r, const uint8_t **val,
                                    size_t *len, const char **why);

/* ---- 0 leaf, the clock (redis_clock.c) ---- */

/** Now on the monotonic clock, in ms: the time base of every deadline in the add-on. */
int64_t wk__redis_now_ms(void);

/* ---- 0 leaf, options (redis_url.c): wk_redis_opts and URLs into a config, no I/O ---- */

enum { WK__MODE_SINGLE, WK__MODE_CLUSTER, WK__MODE_SENTINEL };

/** Most tracking prefixes a store takes. */
#define WK__TRACK_PREFIXES_MAX 8u

/** What a store was asked for, validated, defaults applied; fixed for the store's life. */
typedef struct wk__rconfig {
    int mode;
    wk__rendpoint ep;         /* single mode: the server */
    wk__rendpoint *seeds;     /* cluster seed nodes or sentinels */
    size_t nseeds, seeds_cap;
    char master_name[128];    /* sentinel: the master's name */
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
    bool subscribe;
    bool tls;           /* every TCP connection in TLS (rediss:// or the option) */
    char tls_sni[256];  /* SNI and the name verified ("" = the host connected to) */
    bool tracking;      /* CLIENT TRACKING on the feed's connections when the server has it */
    char track_prefix[WK__TRACK_PREFIXES_MAX][128]; /* BCAST PREFIX each ("" none: all keys) */
    size_t ntrack;
} wk__rconfig;

/** Fills `cfg` (zeroed by the caller) from `opts`: the mode, the URL or the seed list (seeds
 *  from `alloc`), credentials, client name, channel, then the defaults of every zero field.
 *  WK_ERR_ARG with the reason for a bad URL or option, WK_ERR_NOMEM; on failure `cfg` may
 *  hold seeds: wk__redis_config_free() it all the same. */
wk_status wk__redis_config_parse(wk__rconfig *cfg, const wk_redis_opts *opts,
                                 const wk_allocator *alloc, wk_error *err);
/** Frees the seeds and wipes the password. */
void wk__redis_config_free(wk__rconfig *cfg, const wk_allocator *alloc);

/* ---- 0 leaf, a set of keys (redis_keyset.c): SCAN across cluster masters reports each key
 * once ---- */

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

/* ---- 5 the store object (redis_store.c), each field owned by the file named beside it;
 * declared here, before the layers between, because they all take the store ---- */

/** Servers a store may know (cluster masters and replicas it was redirected to, sentinels'
 *  masters); never removed while the store lives. */
#define WK__MAX_SRV 64u
#define WK__SLOTS 16384u

/** One connection of the invalidation feed ([0] subscribes; in a cluster one per master).
 *  While tracking is on with NOLOOP the store's writes to `srv` go through it (lent), so
 *  the server never echoes this process's own writes back to it. `mu` makes one thread at a
 *  time its user: the feed thread reading it or a writer running its commands; whoever reads
 *  hands the pushes and pongs it meets to the feed (wk__redis_feed_read). */
typedef struct wk__rfeedc {
    pthread_mutex_t mu;
    wk__rconn *c;       /* NULL while the feed is closed */
    struct wk__rsrv *srv;
    bool lend;          /* writes to srv may use c (tracking with NOLOOP, feed announced) */
    bool ponged;        /* answered the last PING */
    unsigned owed;      /* PINGs sent whose +PONG was not read yet (they come before any
                           writer's replies) */
} wk__rfeedc;

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

/** One asynchronous GET (redis_async.c). */
typedef struct wk__rareq wk__rareq;

/** The store's asynchronous reader (redis_async.c): callers queue requests under `mu` and
 *  wake its I/O thread (started by the first request) through the eventfd `wake`. */
typedef struct wk__rasync {
    pthread_mutex_t mu;
    wk__rareq *head, **tail; /* queued, not sent yet */
    int wake;                /* eventfd, -1 until the thread starts */
    bool started;
    bool stopping;
    pthread_t thread;
} wk__rasync;

struct wk_redis_store {
    const wk_allocator *alloc; /* the store's own memory (NULL = libc) */
    wk__rconfig cfg;           /* redis_url.c: the options, fixed after new */
    /* redis_pool.c: servers srv[0, nsrv) (nsrv atomic; entries written once under topo_mu) */
    wk__rsrv *srv[WK__MAX_SRV];
    uint32_t nsrv;
    pthread_mutex_t topo_mu;  /* adding servers, writing the map */
    int64_t refresh_after_ms; /* atomic: a refresh is wanted from then (INT64_MAX: none);
                                 lowered by the pool, read and reset by the topology */
    /* redis_cluster.c: the topology */
    uint32_t master;          /* atomic: single and sentinel mode, the server in use */
    uint16_t *slots;          /* cluster: WK__SLOTS server indices (atomic entries) */
    bool map_known;           /* atomic: cluster map or sentinel master found once */
    pthread_mutex_t refresh_mu; /* one refresh at a time */
    /* redis_feed.c: the subscriber and its watchers */
    uint32_t feed_rr;         /* cluster: which server the subscriber tries next */
    wk__rfeedc feed[WK__MAX_SRV]; /* the feed's connections, feed[0, nfeed) */
    uint32_t nfeed;           /* atomic */
    bool feed_tracking;       /* every feed connection has tracking on (feed thread only) */
    bool feed_subscribed;     /* feed[0]'s SUBSCRIBE was confirmed (under feed[0].mu) */
    pthread_t thread;
    bool thread_started;
    int stop_pipe[2];
    pthread_mutex_t wmu; /* watchers and feed state */
    const wk_cache_watch **watchers;
    size_t nwatch, watch_cap;
    bool feed_up;
    int64_t fresh_until; /* the last bound given to the watchers (under wmu) */
    /* redis_store.c: what the caches are given; the TLS context (NULL: plain TCP) */
    wk_cache_store iface;
    void *tls_ctx;
    /* redis_feed.c: tracking on (every master's feed connection has it) */
    bool tracking_up;
    /* redis_async.c: the asynchronous get */
    wk__rasync async;
};



/* ---- 2 pool (redis_pool.c): servers and their connections ---- */

/** Allocates a server's pool of at most `max` connections (from `alloc`). */
wk__rsrv *wk__redis_srv_new(const wk_allocator *alloc, const wk__rendpoint *ep, size_t max);
/** Closes the server's idle connections and frees it. NULL is a no-op. */
void wk__redis_srv_free(const wk_allocator *alloc, wk__rsrv *v);
/** Finds or adds the server at `ep`, under topo_mu; NULL when the table is full or out of
 *  memory. */
wk__rsrv *wk__redis_srv_locked(wk_redis_store *s, const wk__rendpoint *ep);
/** Finds or adds the server at host:port (takes topo_mu); NULL when the address does not
 *  fit, the table is full or out of memory. */
wk__rsrv *wk__redis_srv(wk_redis_store *s, const char *host, size_t host_len, int port,
                        bool is_unix);
/** The index of `v` in the server table (0 when it is not there). */
uint32_t wk__redis_srv_index(wk_redis_store *s, const wk__rsrv *v);
/** Connects to `ep` with the store's timeouts, then AUTH, CLIENT SETNAME and SELECT as
 *  configured (every new connection, so a reconnect repeats them); `bare` skips them (for
 *  sentinels). NULL with `err` naming the cause. */
wk__rconn *wk__redis_connect(wk_redis_store *s, const wk__rendpoint *ep, bool bare,
                             wk_error *err);
/** Records, for the calling thread, that `ep` of store `s` failed (a connect, a command, a
 *  sentinel's answer): what wk_redis_store_failed_server() reports. */
void wk__redis_note_failed(const wk_redis_store *s, const wk__rendpoint *ep);
/** Takes a connection to `v` from its pool, or opens one when the pool has room, waiting for
 *  a free one at most until `deadline`. Fails fast (WK_ERR_IO, no I/O) while `v` is marked
 *  down; a failed connect marks it down. */
wk__rconn *wk__redis_take(wk_redis_store *s, wk__rsrv *v, int64_t deadline, wk_error *err);
/** Marks `v` down (fail fast) for retry_ms and asks for a topology refresh: what a failed
 *  connection does (wk__redis_give_back with `broken`, the asynchronous reader's). */
void wk__redis_mark_down(wk_redis_store *s, wk__rsrv *v);
/** Returns `c` to `v`'s pool, or with `broken` closes it and marks `v` down for retry_ms. */
void wk__redis_give_back(wk_redis_store *s, wk__rsrv *v, wk__rconn *c, bool broken);
/** Asks the topology layer for a refresh soon (cluster slots or sentinel master): lowers
 *  refresh_after_ms, which redis_cluster.c reads before each command. A flag, not a call, so
 *  the pool stays below the topology layer. No-op in single mode. */
void wk__redis_want_refresh(wk_redis_store *s);

/* ---- 3 topology (redis_cluster.c): which server a key goes to ---- */

/** The cluster slot of a key: CRC16 (XMODEM) of the key, or of its {hash tag}, mod 16384. */
uint16_t wk__redis_slot(const char *key, size_t len);
/** The server for `key`: by slot in a cluster, else the master in use. */
wk__rsrv *wk__redis_route(wk_redis_store *s, const char *key, size_t len);
/** The distinct servers that own slots (cluster; at most WK__MAX_SRV, by a walk of the
 *  16384 slots) or the master in use, in out[]; returns the count. */
uint32_t wk__redis_masters(wk_redis_store *s, wk__rsrv **out);
/** Refreshes the topology now when one is wanted (or `force`) and no other thread is doing
 *  it. WK_OK when a map or master was found (or none was needed). */
wk_status wk__redis_refresh(wk_redis_store *s, bool force, wk_error *err);
/** wk__redis_refresh() when one is due, its failure ignored (the command that follows
 *  reports it): what each command does first. */
void wk__redis_maybe_refresh(wk_redis_store *s);
/** In cluster or sentinel mode before the first map or master is known: waits for the
 *  refresh another thread is running, or runs it, within `deadline` (what a command does
 *  before routing its keys). WK_OK at once once a map is known, and in single mode;
 *  WK_ERR_IO with the refresh's cause (the failing node noted) or a timeout. */
wk_status wk__redis_await_map(wk_redis_store *s, int64_t deadline, wk_error *err);
/** A connection to `v` (wk__redis_take), after wk__redis_await_map. */
wk__rconn *wk__redis_checkout(wk_redis_store *s, wk__rsrv *v, int64_t deadline, wk_error *err);
/** Parses a "-MOVED slot host:port" or "-ASK slot host:port" reply: 1 for MOVED, 2 for ASK,
 *  0 for anything else; on 1 or 2 the target server (added if new) is in *to and, for
 *  MOVED, the slot map is updated. */
int wk__redis_redirect(wk_redis_store *s, const wk__rconn *c, const wk__rnode *r,
                       const wk__rsrv *from, wk__rsrv **to);

/* ---- 3 topology, feed (redis_feed.c): the invalidation subscriber ---- */

/** The subscriber thread's body: subscribes, hands messages to the watchers, reconnects,
 *  until a byte arrives on stop_pipe. */
void *wk__redis_feed_main(void *arg);
/** Registers or unregisters a watcher (the wk_cache_store `watch` entry). */
void wk__redis_watch(void *self, const wk_cache_watch *w, bool enable);
/** Initialises and destroys the feed connections' mutexes (the store's new and free). */
void wk__redis_feed_init(wk_redis_store *s);
void wk__redis_feed_destroy(wk_redis_store *s);
/** The feed's connection to `v`, locked, when a write may go through it (tracking with
 *  NOLOOP is up on it), else NULL: the write takes a pool connection instead (and its
 *  change comes back as an invalidation, which only drops a copy). */
wk__rfeedc *wk__redis_feed_lend(wk_redis_store *s, const wk__rsrv *v);
/** Reads the writer's next reply on a lent connection before `deadline`, handing the
 *  pushes (invalidations, messages) and the feed's pongs met before it to the feed.
 *  Failures as wk__rconn_read. */
wk_status wk__redis_feed_read(wk_redis_store *s, wk__rfeedc *f, int64_t deadline,
                              wk_error *err);
/** Ends a lend: what arrived behind the writer's replies is handed to the feed, then the
 *  connection is unlocked; with `broken` (or when that fails) it is shut down, so the feed
 *  thread sees it fail and reopens the feed (a reset). */
void wk__redis_feed_return(wk_redis_store *s, wk__rfeedc *f, bool broken);

/* ---- 4 commands ---- */

/** redis_mget.c: the wk_cache_store `fetch_each` entry (`self` is the store). */
wk_status wk__redis_fetch_each(void *self, size_t n, const wk_slice *keys,
                               wk_cache_take_fn take, void *ctx, wk_error *err);

/** redis_async.c: the wk_cache_store `fetch_async` entry (`self` is the store; single and
 *  sentinel mode only: a cluster's store has none, so the cache runs its gets on workers). */
wk_status wk__redis_fetch_async(void *self, const char *key, size_t key_len,
                                wk_cache_fetched_fn done, void *ctx);
/** redis_async.c: the queue's mutex (the store's new). */
void wk__redis_async_init(wk_redis_store *s);
/** redis_async.c: stops the I/O thread, every request still queued or in flight answered
 *  with WK_ERR_IO first (the store's free, before the servers go). */
void wk__redis_async_stop(wk_redis_store *s);

/** redis_commands.c: runs `ncmd` pipelined commands on `v`, following MOVED and ASK
 *  redirects (twice at most; the commands are idempotent, so a pipeline redirected part-way
 *  is sent again whole); with `lend` (the cache's writes) on the feed's connection to the
 *  server when it can be lent (wk__redis_feed_lend), else on a pooled one. msgs[i] describes command i's error reply; with `wait`, a WAIT for
 *  wait_replicas follows and fewer acknowledgements is a failure. Returns the first failure;
 *  every reply is read so the connection stays usable. */
wk_status wk__redis_run_on(wk_redis_store *s, wk__rsrv *v, int ncmd, const int *argc,
                           const char **argv, const size_t *lens, const char *const *msgs,
                           bool wait, bool lend, wk_error *err);
/** redis_commands.c: sets the command entries of `iface` (fetch, fetch_each, store,
 *  invalidate, remove); the store sets `watch` and `self`. */
void wk__redis_commands_bind(wk_cache_store *iface);

#endif
