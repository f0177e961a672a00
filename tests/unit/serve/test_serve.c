/*
 * Serving entities in the negotiated type (wirekit/serve.h): the status, body and
 * Content-Type of wk_serve_get for every outcome of negotiation and of the cache get, the
 * cache's own bytes sent without an encode, request bodies decoded by their Content-Type, and
 * wk_serve_get_async giving the same answers through its callback.
 */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "../schema/seed_user.h"
#include "wirekit/serve.h"
#include "wk_test.h"

static int loads;

/* id "1" is the seed record, "fail" a database failure, anything else no row. */
static wk_status load(void *ctx, const wk_schema *s, const char *id, size_t id_len, void *obj,
                      wk_arena *arena, wk_error *err)
{
    (void)ctx, (void)s, (void)arena;
    loads++;
    if (id_len == 4 && memcmp(id, "fail", 4) == 0) {
        return wk_error_set(err, WK_ERR_CONNECT, 0, "database down");
    }
    if (id_len != 1 || id[0] != '1') {
        return WK_ERR_NOT_FOUND;
    }
    static wk_pair pairs[2];
    seed_user_fill(obj, pairs);
    return WK_OK;
}

static wk_cache *cache_with(const wk_serializer *ser)
{
    wk_cache_config cfg = {.serializer = ser};
    wk_cache *c = NULL;
    return wk_cache_new(&cfg, &c, NULL) == WK_OK ? c : NULL;
}

/* The seed record in `ser`'s encoding, into `out`. */
static bool seed_bytes(const wk_serializer *ser, wk_buf *out)
{
    seed_user u;
    wk_pair pairs[2];
    seed_user_fill(&u, pairs);
    wk_buf_init(out, NULL, 0);
    return ser->encode(&seed_user_schema, &u, out, NULL) == WK_OK;
}

static wk_status get(wk_cache *c, const char *id, const char *accept, wk_serve_reply *r)
{
    return wk_serve_get(c, &seed_user_schema, id, strlen(id), load, NULL, accept,
                        accept != NULL ? strlen(accept) : 0, r);
}

WK_TEST(test_serve_get_answers_in_the_negotiated_format_with_its_content_type)
{
    wk_cache *c = cache_with(NULL);
    CHECK(c != NULL);
    CHECK(wk_cache_serializer(c) == wk_serializer_msgpack());
    wk_buf json, mp;
    CHECK(seed_bytes(wk_serializer_json(), &json) && seed_bytes(wk_serializer_msgpack(), &mp));
    static const struct {
        const char *accept, *type;
        bool json;
    } cases[] = {
        {NULL, "application/json", true}, /* no Accept: the first offer */
        {"application/json", "application/json", true},
        {"text/html, application/vnd.msgpack;q=0.9, */*;q=0.1", "application/vnd.msgpack", false},
        {"application/msgpack", "application/msgpack", false},
        {"application/x-msgpack", "application/x-msgpack", false},
        {"application/*", "application/json", true}, /* ties keep the server's order */
        {"application/json;q=0.5, application/vnd.msgpack", "application/vnd.msgpack", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wk_serve_reply r;
        CHECK_OK(get(c, "1", cases[i].accept, &r));
        CHECK_EQ(r.status, 200u);
        CHECK(r.content_type != NULL && strcmp(r.content_type, cases[i].type) == 0);
        const wk_buf *want = cases[i].json ? &json : &mp;
        CHECK_MEM(r.body, r.len, want->data, want->len);
        CHECK_EQ(r.err.code, WK_OK);
        wk_serve_reply_free(&r);
    }
    CHECK_EQ(loads, 1); /* one load, then local hits */
    wk_buf_free(&json);
    wk_buf_free(&mp);
    wk_cache_free(c);
}

WK_TEST(test_serve_get_sends_the_cache_s_own_bytes_without_an_encode)
{
    const wk_serializer *sers[] = {wk_serializer_msgpack(), wk_serializer_json()};
    for (size_t i = 0; i < 2; i++) {
        wk_cache *c = cache_with(sers[i]);
        CHECK(c != NULL);
        CHECK(wk_cache_serializer(c) == sers[i]);
        wk_serve_reply r;
        CHECK_OK(get(c, "1", i == 0 ? "application/vnd.msgpack" : "application/json", &r));
        size_t len;
        const uint8_t *bytes = wk_cache_entry_bytes(r.entry, &len);
        CHECK(r.body == bytes && r.len == len); /* the entry's bytes themselves */
        CHECK_EQ(r.buf.len, 0u);
        wk_serve_reply_free(&r);
        CHECK_OK(get(c, "1", i == 0 ? "application/json" : "application/x-msgpack", &r));
        CHECK(r.body == r.buf.data && r.len == r.buf.len && r.len > 0); /* the other: encoded */
        wk_serve_reply_free(&r);
        wk_cache_free(c);
    }
}

WK_TEST(test_serve_get_maps_every_failure_to_its_status)
{
    wk_cache *c = cache_with(NULL);
    CHECK(c != NULL);
    loads = 0;
    static const struct {
        const char *id, *accept;
        unsigned status;
        wk_status st;
        int loads;
    } cases[] = {
        {"1", "text/html", 406, WK_ERR_NOT_FOUND, 0},          /* refused before the cache */
        {"1", "application/json;q=0", 406, WK_ERR_NOT_FOUND, 0},
        {"1", "application/json;q=2", 400, WK_ERR_SYNTAX, 0},  /* malformed: the parser's */
        {"7", "application/json", 404, WK_ERR_NOT_FOUND, 1},
        {"fail", "application/json", 503, WK_ERR_CONNECT, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        wk_serve_reply r;
        loads = 0;
        wk_status st = get(c, cases[i].id, cases[i].accept, &r);
        CHECK_MSG(r.status == cases[i].status, "case %zu: status %u", i, r.status);
        CHECK_MSG(st != WK_OK && r.err.code == st, "case %zu: %s", i, wk_status_str(st));
        CHECK_MSG(cases[i].st == WK_ERR_SYNTAX || st == cases[i].st, "case %zu: %s", i,
                  wk_status_str(st));
        CHECK(r.content_type == NULL && r.len == 0 && r.err.msg != NULL);
        CHECK_EQ(loads, cases[i].loads);
        wk_serve_reply_free(&r);
    }
    wk_serve_reply_free(NULL);
    wk_cache_free(c);
}

/* One wk_serve_get_async answer: the reply, the callbacks' calls, a signal for the test. */
typedef struct waiter {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int calls, deferrals;
    bool done_before_defer;
    wk_serve_reply r;
} waiter;

/* Slow on purpose: a worker's answer mostly comes while it runs, the path where the calling
 * thread hands the answer to `done` after it. */
static void deferred(void *ctx)
{
    waiter *w = ctx;
    nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    pthread_mutex_lock(&w->mu);
    w->deferrals++;
    pthread_mutex_unlock(&w->mu);
}

static void answered(void *ctx, wk_serve_reply *r)
{
    waiter *w = ctx;
    pthread_mutex_lock(&w->mu);
    w->done_before_defer = w->done_before_defer || w->deferrals == 0;
    w->calls++;
    (void)r; /* w->r */
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

WK_TEST(test_serve_get_async_answers_as_serve_get_does)
{
    wk_cache *c = cache_with(NULL);
    CHECK(c != NULL);
    static const struct {
        const char *id, *accept;
        bool here; /* always answered before wk_serve_get_async returns */
    } cases[] = {
        {"1", "text/html", true},                  /* 406 before the cache */
        {"1", "application/json;q=2", true},       /* 400 */
        {"1", "application/json", false},          /* a miss: the loader on a worker */
        {"1", "application/vnd.msgpack", true},    /* now a local hit */
        {"7", "application/json", false},          /* 404 from the loader */
        {"fail", "application/json", false},       /* 503 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        waiter w = {0};
        pthread_mutex_init(&w.mu, NULL);
        pthread_cond_init(&w.cv, NULL);
        const char *a = cases[i].accept;
        wk_status ast = wk_serve_get_async(c, &seed_user_schema, cases[i].id,
                                           strlen(cases[i].id), load, NULL, a, strlen(a), &w.r,
                                           deferred, answered, &w);
        /* what a worker answers may also come before the call returns, and is then
         * returned at once (no callback); refusals and hits always are */
        bool here = ast != WK_ERR_AGAIN;
        CHECK_MSG(here || !cases[i].here, "case %zu was deferred", i);
        pthread_mutex_lock(&w.mu);
        while (!here && w.calls == 0) {
            pthread_cond_wait(&w.cv, &w.mu);
        }
        pthread_mutex_unlock(&w.mu);
        CHECK_EQ(w.calls, here ? 0 : 1); /* `done` only for a deferred answer */
        CHECK_EQ(w.deferrals, here ? 0 : 1); /* and `defer` before it */
        CHECK(!w.done_before_defer);
        wk_serve_reply r;
        wk_status st = get(c, cases[i].id, a, &r); /* the blocking call's answer */
        CHECK(!here || ast == st);
        CHECK_EQ(w.r.status, r.status);
        CHECK_EQ(w.r.err.code, r.err.code);
        CHECK(st == r.err.code);
        CHECK_MEM(w.r.body, w.r.len, r.body, r.len);
        CHECK((w.r.content_type == NULL) == (r.content_type == NULL));
        CHECK(r.content_type == NULL || strcmp(w.r.content_type, r.content_type) == 0);
        wk_serve_reply_free(&r);
        wk_serve_reply_free(&w.r);
    }
    wk_cache_free(c);
}

WK_TEST(test_serve_decode_reads_a_body_by_its_content_type)
{
    wk_buf json, mp;
    CHECK(seed_bytes(wk_serializer_json(), &json) && seed_bytes(wk_serializer_msgpack(), &mp));
    static const struct {
        const char *type;
        bool json;
    } ok[] = {
        {"application/json", true},
        {"Application/JSON; charset=utf-8", true},
        {"application/problem+json", true},
        {"application/vnd.msgpack", false},
        {"application/msgpack", false},
        {"application/x-msgpack", false},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        seed_user u;
        memset(&u, 0, sizeof u);
        wk_arena arena;
        wk_arena_init(&arena, NULL, 0);
        unsigned status = 1;
        const wk_buf *b = ok[i].json ? &json : &mp;
        CHECK_OK(wk_serve_decode(&seed_user_schema, ok[i].type, strlen(ok[i].type), b->data,
                                 b->len, &u, &arena, &status, NULL));
        CHECK_EQ(status, 0u);
        CHECK(strcmp(u.username, "root") == 0 && u.age == 20 && u.enabled);
        wk_arena_free(&arena);
    }
    const char *const refused[] = {NULL, "text/plain", "application/xml", "not a type"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        seed_user u;
        memset(&u, 0, sizeof u);
        wk_arena arena;
        wk_arena_init(&arena, NULL, 0);
        unsigned status = 0;
        wk_schema_error err;
        CHECK_STATUS(wk_serve_decode(&seed_user_schema, refused[i],
                                     refused[i] != NULL ? strlen(refused[i]) : 0, json.data,
                                     json.len, &u, &arena, &status, &err),
                     WK_ERR_UNSUPPORTED);
        CHECK_EQ(status, 415u);
        CHECK(err.base.code == WK_ERR_UNSUPPORTED && err.path[0] == '\0');
        wk_arena_free(&arena);
    }
    /* a JSON body sent as MessagePack, and a field of the wrong type: 400 with the path */
    const char *const bad[][2] = {{"application/vnd.msgpack", "{\"username\":\"x\"}"},
                                  {"application/json", "{\"username\":\"x\",\"age\":\"old\"}"}};
    for (size_t i = 0; i < 2; i++) {
        seed_user u;
        memset(&u, 0, sizeof u);
        wk_arena arena;
        wk_arena_init(&arena, NULL, 0);
        unsigned status = 0;
        wk_schema_error err;
        wk_status st = wk_serve_decode(&seed_user_schema, bad[i][0], strlen(bad[i][0]),
                                       bad[i][1], strlen(bad[i][1]), &u, &arena, &status, &err);
        CHECK(st != WK_OK && st != WK_ERR_UNSUPPORTED && err.base.code == st);
        CHECK_EQ(status, 400u);
        CHECK(i == 0 || strcmp(err.path, "age") == 0);
        wk_arena_free(&arena);
    }
    wk_buf_free(&json);
    wk_buf_free(&mp);
}
