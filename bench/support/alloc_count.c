/*
 * Counts every allocation in the process (wirekit's and the peers', C and C++) by wrapping
 * the glibc allocator entry points. Counting is one relaxed atomic add, small next to any
 * malloc. glibc exports __libc_malloc and friends for exactly this kind of interposition.
 */
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static uint64_t alloc_calls;

uint64_t wk_bench_alloc_count(void);
uint64_t wk_bench_alloc_count(void)
{
    return __atomic_load_n(&alloc_calls, __ATOMIC_RELAXED);
}

/* The wrappers must be exported from the executable: the project builds with
 * -fvisibility=hidden, and a hidden malloc here would only catch calls from code linked
 * statically into wirekit-bench, never from the peers' shared libraries (GLib, libstdc++...). */
#define WK_EXPORT __attribute__((visibility("default")))

static void count(void)
{
    __atomic_fetch_add(&alloc_calls, 1, __ATOMIC_RELAXED);
}

WK_EXPORT void *malloc(size_t n)
{
    count();
    return __libc_malloc(n);
}

WK_EXPORT void *calloc(size_t n, size_t m)
{
    count();
    return __libc_calloc(n, m);
}

WK_EXPORT void *realloc(void *p, size_t n)
{
    count();
    return __libc_realloc(p, n);
}

WK_EXPORT void free(void *p)
{
    __libc_free(p);
}

WK_EXPORT void *aligned_alloc(size_t align, size_t n)
{
    count();
    return __libc_memalign(align, n);
}

WK_EXPORT void *memalign(size_t align, size_t n)
{
    count();
    return __libc_memalign(align, n);
}

WK_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    count();
    void *p = __libc_memalign(align, n);
    if (p == NULL) {
        return 12; /* ENOMEM */
    }
    *out = p;
    return 0;
}
