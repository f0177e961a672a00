/*
 * Example: the seeds' service end to end. Users live in PostgreSQL; `GET /users/ID` answers
 * through the entity cache (memory tier, then Redis, then PostgreSQL through the pool and
 * the loader) as JSON or MessagePack, whichever the request's Accept prefers (406 when it
 * accepts neither, 404 for no row); `PUT /users/ID` takes a JSON or MessagePack body by its
 * Content-Type, writes the row, then invalidates the key in every process's memory tier.
 *
 * MessagePack answers are the cache's own bytes (the entry holds the encoded form), so a hot
 * MessagePack GET encodes nothing; a JSON GET encodes the cached struct. Three MessagePack
 * spellings are offered so a client asking for any of them gets it by that name.
 *
 * usage: entity_service PORT TABLE [cold]   (PORT 0: any free port; it prints the port)
 * TABLE is (id int8 PRIMARY KEY, username text NOT NULL, password text, age int4, enabled
 * bool NOT NULL, metadata jsonb NOT NULL); entity_service_test.sh makes one. `cold` turns the memory tier off (every GET goes to
 * Redis, and to PostgreSQL on a Redis miss), for the service benchmark's cold case. Needs
 * WK_PG_DSN and WK_REDIS_URL (exits 77 without them); stops on SIGINT or SIGTERM.
 */
#define _POSIX_C_SOURCE 200809L

#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What GET offers, the server's preference first; index 0 is JSON, the rest MessagePack. */
static const char *const offer_text[] = {"application/json", "application/vnd.msgpack",
                                         "application/msgpack", "application/x-msgpack"};
#define NOFFERS 4
static wk_media_type offers[NOFFERS];

static wk_cache *cache;
static wk_pq_pool *pool;
static wk_pq_loader *loader;
static char upsert[512];

/* Sends `len` bytes of `body` (copied) with `status` and, when given, its Content-Type. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const void *body,
                             size_t len, wk_media_type *type)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    wk_slice ct;
    char text[128];
    if (type != NULL && wk_mt_render(type, WK_MT_STYLE_SPACE, NULL, &ct, NULL) == WK_OK) {
        snprintf(text, sizeof text, "%.*s", (int)ct.len, ct.ptr); /* the header wants a C string */
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, text);
    }
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result get_user(struct MHD_Connection *c, const char *id)
{
    const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    size_t k;
    wk_status st = wk_mt_negotiate_header(accept, accept ? strlen(accept) : 0, 0, offers,
                                          NOFFERS, &k, NULL);
    if (st != WK_OK) {
        return reply(c, st == WK_ERR_NOT_FOUND ? 406 : 400, "", 0, NULL);
    }
    wk_cache_entry *e = NULL;
    st = wk_cache_get(cache, &user_schema, id, strlen(id), wk_pq_loader_load, loader, &e, NULL);
    if (st != WK_OK) {
        return reply(c, st == WK_ERR_NOT_FOUND ? 404 : 503, "", 0, NULL);
    }
    size_t len;
    const uint8_t *body = wk_cache_entry_bytes(e, &len); /* the cache's MessagePack */
    wk_buf json;
    wk_buf_init(&json, NULL, 0);
    if (k == 0) { /* JSON: the cached struct, encoded */
        st = wk_schema_encode_json(&user_schema, wk_cache_entry_object(e), &json, NULL);
        body = json.data;
        len = json.len;
    }
    enum MHD_Result ok = reply(c, st == WK_OK ? 200 : 500, body, len, &offers[k]);
    wk_buf_free(&json);
    wk_cache_entry_unref(e);
    return ok;
}

/* The body in `body` decoded by its Content-Type, written, then invalidated everywhere. */
static enum MHD_Result put_user(struct MHD_Connection *c, const char *id, const wk_buf *body)
{
    const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
    wk_media_type mt;
    const wk_format *f = NULL;
    if (ctype != NULL && wk_mt_parse(ctype, strlen(ctype), 0, &mt, NULL) == WK_OK) {
        f = wk_format_find_media_type(wk_mt_essence(&mt).ptr, wk_mt_essence(&mt).len);
    }
    if (f == NULL) {
        return reply(c, 415, "", 0, NULL);
    }
    user u;
    memset(&u, 0, sizeof u);
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_schema_error serr;
    wk_status st = wk_serializer_find(f->name)->decode(&user_schema, body->data, body->len, &u,
                                                       &arena, NULL, &serr);
    wk_pq_param p[6] = {{WK_PG_KIND_TEXT, &(wk_slice){id, strlen(id)}, 0}};
    if (st == WK_OK) {
        st = wk_pq_struct_params(&user_schema, &u, NULL, 5, p + 1, &arena, &serr);
    }
    unsigned status = 400;
    wk_pq_conn *conn = NULL;
    if (st == WK_OK && wk_pq_pool_acquire(pool, 0, &conn, NULL) == WK_OK) {
        PGresult *r = NULL;
        st = wk_pq_exec(conn, upsert, p, 6, &r, NULL);
        PQclear(r);
        wk_pq_pool_release(pool, conn);
        st = st == WK_OK ? wk_cache_invalidate(cache, &user_schema, id, strlen(id), NULL) : st;
        status = st == WK_OK ? 204 : 500;
    }
    wk_arena_free(&arena);
    return reply(c, status, "", 0, NULL);
}

/* libmicrohttpd calls this once for a request's head, then once per chunk of its body, then
 * once more. The head is only noted: an answer queued that early closes the connection
 * (libmicrohttpd cannot keep it alive); a PUT body gathers in a capped buffer in *state. */
static int no_body; /* the *state of any request but a PUT */

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *data,
                              size_t *size, void **state)
{
    (void)cls, (void)version;
    bool put = strcmp(method, "PUT") == 0;
    if (*state == NULL) {
        *state = put ? malloc(sizeof(wk_buf)) : &no_body;
        if (put && *state != NULL) {
            wk_buf_init(*state, NULL, (size_t)1 << 20); /* a PUT body of at most 1 MiB */
        }
        return *state != NULL ? MHD_YES : MHD_NO;
    }
    if (*size != 0) {
        wk_status st = put ? wk_buf_append(*state, data, *size) : WK_ERR_ARG;
        *size = 0;
        return st == WK_OK ? MHD_YES : MHD_NO;
    }
    const char *id = strncmp(url, "/users/", 7) == 0 ? url + 7 : "";
    if (id[0] == '\0' || strspn(id, "0123456789") != strlen(id) || strlen(id) > 18) {
        return reply(c, 404, "", 0, NULL);
    }
    if (strcmp(method, "GET") == 0) {
        return get_user(c, id);
    }
    return put ? put_user(c, id, *state) : reply(c, 405, "", 0, NULL);
}

static void done(void *cls, struct MHD_Connection *c, void **state,
                 enum MHD_RequestTerminationCode why)
{
    (void)cls, (void)c, (void)why;
    if (*state != NULL && *state != &no_body) {
        wk_buf_free(*state);
        free(*state);
    }
}

int main(int argc, char **argv)
{
    const char *dsn = getenv("WK_PG_DSN"), *url = getenv("WK_REDIS_URL");
    if (dsn == NULL || url == NULL || argc < 3) {
        fprintf(stderr, "entity_service: needs WK_PG_DSN, WK_REDIS_URL, PORT and TABLE\n");
        return 77;
    }
    for (size_t i = 0; i < NOFFERS; i++) {
        wk_mt_parse(offer_text[i], strlen(offer_text[i]), 0, &offers[i], NULL);
    }
    wk_error err = {0};
    wk_pq_pool_opts po = {.dsn = dsn};
    char sql[512];
    bool ok = wk_pq_pool_new(&po, &pool, &err) == WK_OK;
    snprintf(upsert, sizeof upsert, "INSERT INTO %s VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT "
             "(id) DO UPDATE SET username = $2, password = $3, age = $4, enabled = $5, "
             "metadata = $6", argv[2]);
    snprintf(sql, sizeof sql, "SELECT username, password, age, enabled, metadata FROM %s "
             "WHERE id = $1", argv[2]);
    wk_pq_loader_opts lo = {.pool = pool, .sql = sql, .schema = &user_schema};
    wk_redis_opts ro = {.url = url};
    wk_redis_store *store = NULL;
    ok = ok && wk_pq_loader_new(&lo, &loader, &err) == WK_OK &&
         wk_redis_store_new(&ro, &store, &err) == WK_OK;
    wk_cache_config cfg = {.ns = argv[2], .negative_ttl_ms = 1000}; /* keys: TABLE:user:v1:ID */
    cfg.store = store != NULL ? wk_redis_store_iface(store) : NULL;
    cfg.flags = argc > 3 && strcmp(argv[3], "cold") == 0 ? WK_CACHE_NO_LOCAL : 0;
    ok = ok && wk_cache_new(&cfg, &cache, &err) == WK_OK;
    /* Signals are blocked before the daemon's threads start, so only sigwait sees them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    struct MHD_Daemon *d = !ok ? NULL
        : MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL,
                           (uint16_t)strtoul(argv[1], NULL, 10), NULL, NULL, handle, NULL,
                           MHD_OPTION_THREAD_POOL_SIZE, 2u, MHD_OPTION_NOTIFY_COMPLETED, done,
                           NULL, MHD_OPTION_CONNECTION_LIMIT, 4096u, MHD_OPTION_END);
    if (d != NULL) {
        printf("listening on %u\n", MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port);
        fflush(stdout);
        int sig;
        sigwait(&stop, &sig);
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
