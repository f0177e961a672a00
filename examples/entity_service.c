/*
 * Example: the seeds' service end to end. Users live in PostgreSQL; `GET /users/ID` answers
 * through the entity cache (memory tier, then Redis, then PostgreSQL through the pool and
 * the loader) as JSON or MessagePack, whichever the request's Accept prefers (406 when it
 * accepts neither, 404 for no row); `PUT /users/ID` takes a JSON or MessagePack body by its
 * Content-Type, writes the row, then invalidates the key in every process's memory tier.
 *
 * What HTTP needs from wirekit is one call each way (wirekit/serve.h): wk_serve_get_async
 * answers a GET with a status, a body and a Content-Type (MessagePack answers are the cache's
 * own bytes, so a hot MessagePack GET encodes nothing; a JSON GET encodes the cached struct),
 * and wk_serve_decode reads a PUT's body by its Content-Type. The SELECT and the upsert are
 * the ones the schema implies (wk_pq_struct_sql). libmicrohttpd runs a pool of 2 epoll
 * threads, one per core here, and no thread waits on a miss: a memory-tier hit is answered
 * inside the call, anything else suspends the connection (MHD_suspend_connection) and the
 * answer resumes it from the cache's threads (the Redis store's I/O thread, which pipelines
 * every GET queued meanwhile in one write, or a cache worker running the PostgreSQL load), so
 * as many misses are in flight as there are requests waiting (docs/benchmarks.md, "service").
 *
 * usage: entity_service PORT TABLE [cold]   (PORT 0: any free port; it prints the port)
 * TABLE is (id int8 PRIMARY KEY, username text NOT NULL, password text, age int4, enabled
 * bool NOT NULL, metadata jsonb NOT NULL); entity_service_test.sh makes one. `cold` turns the
 * memory tier off (every GET goes to Redis, and to PostgreSQL on a Redis miss), for the
 * service benchmark's cold case. Needs
 * WK_PG_DSN and WK_REDIS_URL (exits 77 without them); stops on SIGINT or SIGTERM.
 */
#define _POSIX_C_SOURCE 200809L

#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <wirekit/pq.h>
#include <wirekit/redis.h>
#include <wirekit/wirekit.h>

typedef struct user {
    char *username;
    char *password;
    int32_t age;
    bool has_age; /* false: age is SQL NULL */
    bool enabled;
    wk_value metadata; /* the jsonb column, as a tree */
} user;

WK_SCHEMA_DEFINE_STATIC(user_schema, user, "user", 1,
                        WK_FIELD(user, username, "username", WK_SK_STR, WK_REQUIRED),
                        WK_FIELD(user, password, "password", WK_SK_STR, WK_NULLABLE),
                        WK_FIELD_NULLABLE(user, age, has_age, "age", WK_SK_I32, 0),
                        WK_FIELD(user, enabled, "enabled", WK_SK_BOOL, 0),
                        WK_FIELD(user, metadata, "metadata", WK_SK_VALUE, 0));

static wk_cache *cache;
static wk_pq_pool *pool;
static wk_pq_loader *loader;
static const char *table; /* argv[2] */
static int in_flight;      /* atomic: GETs suspended and not resumed yet */
static int stopping;       /* atomic: shutting down, no new cache calls */

/* Sends `len` bytes of `body` (copied) with `status` and, when given, its Content-Type. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const void *body,
                             size_t len, const char *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (type != NULL) {
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    }
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

/* A GET's or a PUT's *state. */
typedef struct request {
    wk_buf body;              /* a PUT's */
    struct MHD_Connection *c; /* a GET's, suspended while the cache answers */
    wk_serve_reply r;
} request;

/* Sends a GET's answer (queued now, or at the resume of a suspended connection). */
static enum MHD_Result send_answer(struct MHD_Connection *c, wk_serve_reply *r)
{
    enum MHD_Result ok = reply(c, r->status, r->body, r->len, r->content_type);
    wk_serve_reply_free(r);
    return ok;
}

/* The answer will come later: the connection waits, suspended (wirekit calls `answered` only
 * after this returned). */
static void suspend(void *ctx)
{
    request *rq = ctx;
    __atomic_fetch_add(&in_flight, 1, __ATOMIC_ACQ_REL);
    MHD_suspend_connection(rq->c);
}

/* The answer, on a cache thread: queued on the suspended connection, which then resumes. */
static void answered(void *ctx, wk_serve_reply *r)
{
    request *rq = ctx;
    send_answer(rq->c, r);
    MHD_resume_connection(rq->c);
    __atomic_fetch_sub(&in_flight, 1, __ATOMIC_RELEASE);
}

/* The status, body and Content-Type come from wirekit: Accept negotiated, then the cache; a
 * hit is sent at once, anything else by `answered`. */
static enum MHD_Result get_user(struct MHD_Connection *c, const char *id, request *rq)
{
    if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
        return reply(c, 503, "", 0, NULL);
    }
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    rq->c = c;
    if (wk_serve_get_async(cache, &user_schema, id, strlen(id), wk_pq_loader_load, loader, accept,
                           accept != NULL ? strlen(accept) : 0, &rq->r, suspend, answered,
                           rq) == WK_ERR_AGAIN) {
        return MHD_YES;
    }
    return send_answer(c, &rq->r);
}

/* The body in `body` decoded by its Content-Type, written, then invalidated everywhere. */
static enum MHD_Result put_user(struct MHD_Connection *c, const char *id, const wk_buf *body)
{
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    user u = {0};
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    unsigned status;
    wk_status st = wk_serve_decode(&user_schema, ctype, ctype != NULL ? strlen(ctype) : 0,
                                   body->data, body->len, &u, &arena, &status, NULL);
    if (st == WK_OK) { /* the schema's fields upserted, then every process's copy dropped */
        st = wk_pq_pool_upsert(pool, table, "id", id, strlen(id), &user_schema, &u, NULL);
        st = st == WK_OK ? wk_cache_invalidate(cache, &user_schema, id, strlen(id), NULL) : st;
        status = st == WK_OK ? 204 : 500;
    }
    wk_arena_free(&arena);
    return reply(c, status, "", 0, NULL);
}

/* libmicrohttpd calls this once for a request's head, then once per chunk of its body, then
 * once more. The head is only noted: an answer queued that early closes the connection
 * (libmicrohttpd cannot keep it alive); a PUT body gathers in a capped buffer in *state. */
static int no_body; /* the *state of any request but a PUT or a GET */

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **state)
{
    (void)cls, (void)version;
    bool put = strcmp(method, "PUT") == 0, get = strcmp(method, "GET") == 0;
    request *rq = *state;
    if (rq == NULL) {
        rq = put || get ? calloc(1, sizeof *rq) : NULL;
        if (rq != NULL) {
            wk_buf_init(&rq->body, NULL, (size_t)1 << 20); /* a PUT body of at most 1 MiB */
        }
        *state = put || get ? (void *)rq : &no_body;
        return *state != NULL ? MHD_YES : MHD_NO;
    }
    if (*size != 0) {
        wk_status st = put ? wk_buf_append(&rq->body, data, *size) : WK_ERR_ARG;
        *size = 0;
        return st == WK_OK ? MHD_YES : MHD_NO;
    }
    const char *id = strncmp(url, "/users/", 7) == 0 ? url + 7 : "";
    if (id[0] == '\0' || strspn(id, "0123456789") != strlen(id) || strlen(id) > 18) {
        return reply(c, 404, "", 0, NULL);
    }
    if (get) {
        return get_user(c, id, rq);
    }
    return put ? put_user(c, id, &rq->body) : reply(c, 405, "", 0, NULL);
}

static void done(void *cls, struct MHD_Connection *c, void **state,
                 enum MHD_RequestTerminationCode why)
{
    (void)cls, (void)c, (void)why;
    request *rq = *state;
    if (rq != NULL && (void *)rq != &no_body) {
        wk_buf_free(&rq->body);
        wk_serve_reply_free(&rq->r); /* an answer never sent (connection lost) */
        free(rq);
    }
}

int main(int argc, char **argv)
{
    const char *dsn = getenv("WK_PG_DSN"), *url = getenv("WK_REDIS_URL");
    if (dsn == NULL || url == NULL || argc < 3) {
        fprintf(stderr, "entity_service: needs WK_PG_DSN, WK_REDIS_URL, PORT and TABLE\n");
        return 77;
    }
    wk_error err = {0};
    table = argv[2];
    /* One HTTP thread per core: no thread waits on a miss (GETs are suspended while the
     * cache answers). The Redis pool serves the synchronous calls (PUT's invalidation, the
     * workers' loads), the store's I/O thread the GETs; PostgreSQL is reached only on a Redis
     * miss. */
    unsigned threads = 2;
    wk_pq_pool_opts po = {.dsn = dsn};
    bool ok = wk_pq_pool_new(&po, &pool, &err) == WK_OK;
    wk_pq_loader_opts lo = {.pool = pool, .table = table, .schema = &user_schema}; /* key "id" */
    wk_redis_opts ro = {.url = url, .pool = threads};
    wk_redis_store *store = NULL;
    ok = ok && wk_pq_loader_new(&lo, &loader, &err) == WK_OK &&
         wk_redis_store_new(&ro, &store, &err) == WK_OK;
    wk_cache_config cfg = {.ns = table, .negative_ttl_ms = 1000}; /* keys: TABLE:user:v1:ID */
    cfg.store = store != NULL ? wk_redis_store_iface(store) : NULL;
    cfg.flags = argc > 3 && strcmp(argv[3], "cold") == 0 ? WK_CACHE_NO_LOCAL : 0;
    ok = ok && wk_cache_new(&cfg, &cache, &err) == WK_OK;
    /* Signals are blocked before the daemon's threads start, so only sigwait sees them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    /* libmicrohttpd zeroes a connection's memory pool after every request: 8 KiB (headers
     * and a body chunk) rather than its default 32 KiB keeps that to one page or two. */
    struct MHD_Daemon *d = !ok ? NULL
        : MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                               MHD_ALLOW_SUSPEND_RESUME,
                           (uint16_t)strtoul(argv[1], NULL, 10), NULL, NULL, handle, NULL,
                           MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_NOTIFY_COMPLETED, done,
                           NULL, MHD_OPTION_CONNECTION_LIMIT, 4096u,
                           MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)8192, MHD_OPTION_END);
    if (d != NULL) {
        printf("listening on %u\n", MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port);
        fflush(stdout);
        int sig;
        sigwait(&stop, &sig);
        /* libmicrohttpd may not stop with connections suspended: new GETs get a 503, the
         * ones waiting are resumed by their answers (within the store's deadline or their
         * load); a client gone meanwhile is never called back, hence the count here */
        __atomic_store_n(&stopping, 1, __ATOMIC_RELEASE);
        while (__atomic_load_n(&in_flight, __ATOMIC_ACQUIRE) > 0) {
            nanosleep(&(struct timespec){0, 1000000}, NULL);
        }
        MHD_stop_daemon(d);
    } else {
        fprintf(stderr, "entity_service: %s\n", ok ? "cannot listen" : err.msg);
    }
    wk_cache_free(cache);
    wk_redis_store_free(store);
    wk_pq_loader_free(loader);
    wk_pq_pool_free(pool);
    return d != NULL ? 0 : 1;
}
