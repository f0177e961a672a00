/*
 * Allocator hooks: the libc default and a fixed pool over caller memory. The pool never
 * touches the heap; it trades reuse (only the last block can be freed or grown) for zero
 * bookkeeping. Every allocation of the library goes through wk_alloc, wk_realloc and wk_free
 * with the caller's wk_allocator (NULL: libc), so a caller can bound or account for memory.
 */
#include <stdlib.h>
#include <string.h>

#include "wirekit/core.h"

/* The libc allocator's hooks: ctx and the sizes are not needed by malloc and free. */
static void *libc_malloc(void *ctx, size_t size)
{
    (void)ctx;
    return malloc(size);
}

static void *libc_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    (void)ctx;
    (void)old_size;
    return realloc(ptr, new_size);
}

static void libc_free(void *ctx, void *ptr, size_t size)
{
    (void)ctx;
    (void)size;
    free(ptr);
}

/* The libc allocator, static: the pointer handed out is valid for the process. */
static const wk_allocator libc_allocator = {libc_malloc, libc_realloc, libc_free, NULL};

/* The libc allocator (what NULL stands for everywhere). */
WK_API const wk_allocator *wk_allocator_libc(void)
{
    return &libc_allocator;
}

/* size bytes from a (NULL: malloc); NULL when out of memory, and for size 0 (no allocator
 * is asked for nothing). */
WK_API void *wk_alloc(const wk_allocator *a, size_t size)
{
    if (size == 0) {
        return NULL;
    }
    if (a == NULL) {
        return malloc(size);
    }
    return a->malloc(a->ctx, size);
}

/* Resizes the old_size-byte block ptr (NULL: a fresh allocation) to new_size bytes, the
 * contents kept up to the smaller size. NULL when out of memory (ptr is then still valid) and
 * for new_size 0 (ptr is then not freed: the caller frees it with its size). */
WK_API void *wk_realloc(const wk_allocator *a, void *ptr, size_t old_size, size_t new_size)
{
    if (new_size == 0) {
        return NULL;
    }
    if (a == NULL) {
        return realloc(ptr, new_size);
    }
    if (ptr == NULL) {
        return a->malloc(a->ctx, new_size);
    }
    return a->realloc(a->ctx, ptr, old_size, new_size);
}

/* Frees the size-byte block ptr from a (NULL ptr: nothing). */
WK_API void wk_free(const wk_allocator *a, void *ptr, size_t size)
{
    if (ptr == NULL) {
        return;
    }
    if (a == NULL) {
        free(ptr);
        return;
    }
    a->free(a->ctx, ptr, size);
}

/* ---- fixed pool ---- */

#define POOL_ALIGN 16u

/* n rounded up to the pool's 16-byte alignment. */
static size_t align_up(size_t n)
{
    return (n + (POOL_ALIGN - 1)) & ~(size_t)(POOL_ALIGN - 1);
}

/* The next 16-byte-aligned block of the pool, which becomes its last block; NULL when the
 * pool has no room left. */
static void *pool_malloc(void *ctx, size_t size)
{
    wk_pool *p = ctx;
    size_t start = align_up(p->used);
    if (start > p->cap || size > p->cap - start) {
        return NULL;
    }
    p->last = start;
    p->used = start + size;
    return p->buf + start;
}

/* The last block is resized in place; any other is copied into a fresh block (its old room
 * is not reused). NULL when the pool has no room. */
static void *pool_realloc(void *ctx, void *ptr, size_t old_size, size_t new_size)
{
    wk_pool *p = ctx;
    uint8_t *q = ptr;
    if (q == p->buf + p->last && new_size <= p->cap - p->last) {
        p->used = p->last + new_size; /* the last block grows or shrinks in place */
        return ptr;
    }
    void *fresh = pool_malloc(ctx, new_size);
    if (fresh != NULL) {
        memcpy(fresh, ptr, old_size < new_size ? old_size : new_size);
    }
    return fresh;
}

/* Only the last block gives its room back; freeing any other is a no-op. */
static void pool_free(void *ctx, void *ptr, size_t size)
{
    wk_pool *p = ctx;
    (void)size;
    if ((uint8_t *)ptr == p->buf + p->last) {
        p->used = p->last;
    }
}

/* Makes *out an allocator over the caller's buf[0..cap), with its state in *pool (both must
 * outlive the allocator). */
WK_API void wk_pool_init(wk_pool *pool, void *buf, size_t cap, wk_allocator *out)
{
    /* Align the start so that every block is 16-byte aligned in absolute terms. */
    uintptr_t addr = (uintptr_t)buf;
    size_t skip = (size_t)((POOL_ALIGN - (addr % POOL_ALIGN)) % POOL_ALIGN);
    if (skip > cap) {
        skip = cap;
    }
    pool->buf = (uint8_t *)buf + skip;
    pool->cap = cap - skip;
    pool->used = 0;
    pool->last = 0;
    out->malloc = pool_malloc;
    out->realloc = pool_realloc;
    out->free = pool_free;
    out->ctx = pool;
}
