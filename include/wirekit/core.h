/*
 * wirekit core: status codes, error reports and allocator hooks shared by every module.
 *
 * Every fallible call returns a wk_status; one-shot calls also take an optional
 * `wk_error *err` last, filled with the code, a static message and the byte offset of the
 * failure. Memory goes through a wk_allocator the caller may replace; NULL means libc.
 */
#ifndef WIREKIT_CORE_H
#define WIREKIT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(WK_STATIC_DEFINE)
#define WK_API
#elif defined(_WIN32)
#ifdef WK_BUILDING
#define WK_API __declspec(dllexport)
#else
#define WK_API __declspec(dllimport)
#endif
#else
/** Marks a public function: exported from the shared library (default visibility); empty
 * with WK_STATIC_DEFINE; dllexport/dllimport on Windows. */
#define WK_API __attribute__((visibility("default")))
#endif

#include "wirekit/version.h" /* WK_VERSION_*: generated from project(VERSION) */

/** The library's version at run time, "MAJOR.MINOR.PATCH" (static string). Compare with
 *  WK_VERSION_STRING to see whether the program runs with the headers it was built with. */
WK_API const char *wk_version(void);
/** The library's version at run time as MAJOR * 10000 + MINOR * 100 + PATCH (see
 *  WK_VERSION_NUMBER). */
WK_API int wk_version_number(void);

/**
 * A view of `len` bytes at `ptr` owned by someone else, not NUL-terminated: the one slice type
 * of every module (strings and bytes in events, media-type parts, PostgreSQL text, cache keys,
 * a schema's bytes field). Plain value: copy it freely; it never owns what it points at.
 */
typedef struct wk_slice {
    const char *ptr; /**< the bytes */
    size_t len;      /**< their count */
} wk_slice;

/** Result of every fallible wirekit call. WK_OK is zero; every other value is an error. */
typedef enum wk_status {
    WK_OK = 0,
    WK_ERR_NOMEM,       /**< the allocator returned NULL */
    WK_ERR_TRUNCATED,   /**< input ended inside a value */
    WK_ERR_SYNTAX,      /**< bytes that are not valid for the format */
    WK_ERR_TYPE,        /**< a value of another type than expected */
    WK_ERR_RANGE,       /**< a number that does not fit the destination */
    WK_ERR_DEPTH,       /**< nesting deeper than the configured limit */
    WK_ERR_LIMIT,       /**< a configured size limit (buffer cap, arena cap) was reached */
    WK_ERR_UTF8,        /**< invalid UTF-8 where UTF-8 is required */
    WK_ERR_NOT_FOUND,   /**< a looked-up item does not exist */
    WK_ERR_ARG,         /**< an invalid argument from the caller */
    WK_ERR_STATE,       /**< a call out of order (e.g. a writer finished twice) */
    WK_ERR_TRAILING,    /**< bytes left after a complete value where none were allowed */
    WK_ERR_IO,          /**< an operating-system or network failure */
    WK_ERR_UNSUPPORTED, /**< a valid input that this build or option set does not handle */
    WK_ERR_EOF,         /**< a stream ended cleanly: no more values */
    WK_ERR_AGAIN,       /**< an incremental reader needs more input before the next value */
    WK_ERR_SERVER,      /**< a database server reported an error (e.g. a SQLSTATE) */
    WK_ERR_CONNECT      /**< a connection to a server could not be made or was lost */
} wk_status;

/** Details of a failure. `msg` is a static string, never freed; `offset` is a byte offset
 *  into the input (or output for writers) where the problem was found. */
typedef struct wk_error {
    wk_status code; /**< what went wrong */
    size_t offset; /**< byte offset where it went wrong */
    const char *msg; /**< static text, never freed (may be NULL) */
} wk_error;

/** Returns a static, human-readable name for a status ("ok", "truncated input", ...).
 *  Unknown values give "unknown status". Thread-safe. */
WK_API const char *wk_status_str(wk_status status);

/** Fills `err` (when not NULL) and returns `code`. A convenience for error paths. */
WK_API wk_status wk_error_set(wk_error *err, wk_status code, size_t offset, const char *msg);

/**
 * Allocator hooks, as in yyjson. `realloc` receives the old size so that pool allocators
 * need no headers. Any hook may be NULL only when the whole allocator pointer is NULL
 * (meaning libc malloc/realloc/free). `free` receives the size given at allocation.
 */
typedef struct wk_allocator {
    /** Allocates `size` bytes; NULL on failure. */
    void *(*malloc)(void *ctx, size_t size);
    /** Resizes a block of `old_size` bytes to `new_size`; NULL on failure (the block stays
     * valid). */
    void *(*realloc)(void *ctx, void *ptr, size_t old_size, size_t new_size);
    /** Frees a block of `size` bytes. */
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx; /**< passed to every hook */
} wk_allocator;

/** The libc allocator (malloc/realloc/free). Never NULL, shared, read-only. */
WK_API const wk_allocator *wk_allocator_libc(void);

/** Allocates through `a` (NULL = libc). Returns NULL on failure or when size is 0. */
WK_API void *wk_alloc(const wk_allocator *a, size_t size);
/** Resizes through `a` (NULL = libc). On failure returns NULL and leaves `ptr` valid. */
WK_API void *wk_realloc(const wk_allocator *a, void *ptr, size_t old_size, size_t new_size);
/** Frees through `a` (NULL = libc). NULL `ptr` is a no-op. */
WK_API void wk_free(const wk_allocator *a, void *ptr, size_t size);

/**
 * A fixed-pool allocator over caller memory: allocations are carved from `buf` front to back,
 * frees are no-ops except for the last block, realloc of the last block grows in place.
 * Useful to decode with zero heap traffic. `pool` must outlive every allocation.
 */
typedef struct wk_pool {
    uint8_t *buf; /**< the caller's memory */
    size_t cap; /**< its size */
    size_t used; /**< bytes handed out so far */
    size_t last; /**< offset of the most recent block */
} wk_pool;

/** Prepares `pool` over `buf[0..cap)` and fills `out` with hooks that allocate from it. */
WK_API void wk_pool_init(wk_pool *pool, void *buf, size_t cap, wk_allocator *out);

/** Branch hint of the inline fast paths (in these headers and in the library): `x` is
 *  expected to be true. Without GCC or Clang it is the plain condition. */
#if defined(__GNUC__)
#define WK_LIKELY(x) __builtin_expect(!!(x), 1)
/** Branch hint: `x` is expected to be false. */
#define WK_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define WK_LIKELY(x) (x)   /**< no hint without GCC or Clang */
#define WK_UNLIKELY(x) (x) /**< no hint without GCC or Clang */
#endif

/* GCC (not Clang) may warn about the overlapping moves below once they are inlined into a
 * caller whose `n` it cannot bound; the moves never leave [0, n). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#if __GNUC__ >= 11
#pragma GCC diagnostic ignored "-Wstringop-overread"
#endif
#endif
/** Copies `n` <= 31 bytes from `src` to `dst` (not overlapping) with at most two overlapping
 *  moves of 16, 8 or 4 bytes, or three single bytes below 4: cheaper than a memcpy call for
 *  the short keys and strings wire formats are made of, and folds to plain stores when `n` is
 *  a constant. Every move stays inside [0, n) of both. Larger `n`: use memcpy. */
static inline void wk_copy_short(void *dst, const void *src, size_t n)
{
    uint8_t *d = (uint8_t *)dst;
    const uint8_t *q = (const uint8_t *)src;
    if (n >= 8) {
        if (n >= 16) {
            memcpy(d, q, 16);
            memcpy(d + n - 16, q + n - 16, 16);
        } else {
            memcpy(d, q, 8);
            memcpy(d + n - 8, q + n - 8, 8);
        }
    } else if (n >= 4) {
        memcpy(d, q, 4);
        memcpy(d + n - 4, q + n - 4, 4);
    } else if (n != 0) {
        d[0] = q[0];
        d[n >> 1] = q[n >> 1];
        d[n - 1] = q[n - 1];
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/** Overflow-checked size arithmetic; return false when the result does not fit size_t. */
static inline bool wk_size_add(size_t a, size_t b, size_t *out)
{
    return !__builtin_add_overflow(a, b, out);
}
/** Overflow-checked multiplication; false when a * b does not fit size_t. */
static inline bool wk_size_mul(size_t a, size_t b, size_t *out)
{
    return !__builtin_mul_overflow(a, b, out);
}

#ifdef __cplusplus
}
#endif
#endif
