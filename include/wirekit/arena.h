/*
 * wk_arena: a bump allocator for decoded trees and strings, freed all at once.
 *
 * Memory comes in chunks from the arena's allocator; each chunk doubles the previous one up
 * to 1 MiB, and a request larger than that gets a chunk of its own. An optional cap bounds the
 * total bytes the arena may take from its allocator, so a hostile input cannot make a
 * decoder allocate without limit. An arena can start over a caller buffer (no heap at all
 * until it is exhausted).
 */
#ifndef WIREKIT_ARENA_H
#define WIREKIT_ARENA_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A block of memory an arena took from its allocator (internal). */
typedef struct wk_arena_chunk wk_arena_chunk;

/** The cap of an arena made with `max` 0, as for wk_buf (WK_BUF_DEFAULT_MAX): 1 GiB. */
#define WK_ARENA_DEFAULT_MAX ((size_t)1 << 30)

/** A bump allocator: everything allocated from it is freed at once by wk_arena_free()
 * (fields are internal). */
typedef struct wk_arena {
    wk_arena_chunk *chunks;    /**< most recent first; never the initial buffer */
    uint8_t *cur;              /**< bump pointer */
    uint8_t *end;              /**< end of the current region */
    size_t next_size;          /**< size of the next chunk */
    size_t total;              /**< bytes taken from the allocator */
    size_t max;                /**< cap on `total` (SIZE_MAX = none) */
    const wk_allocator *alloc; /**< NULL = libc */
    uint8_t *initial;          /**< caller buffer given to wk_arena_init_buf, or NULL */
    size_t initial_cap; /**< size of `initial` */
    /** Which life of the arena this is: a value from one process-wide counter, taken anew by
     *  every init, reset and free, so that whoever keeps memory in the arena between calls
     *  (wk_mp_unpacker_next_value_in_place) can tell that it was reset or freed and
     *  initialised again even when its pointers came back to the same place. Added in 0.x:
     *  it changed sizeof(wk_arena), so code built against an older header must be rebuilt. */
    uint64_t gen;
} wk_arena;

/** Makes an empty arena. `alloc` NULL means libc; `max` caps the bytes taken from the
 *  allocator: 0 means WK_ARENA_DEFAULT_MAX (the rule of every limit: 0 is the default, never
 *  "unlimited"), SIZE_MAX means no cap. Allocates nothing until the first request. Release
 *  with wk_arena_free(). */
WK_API void wk_arena_init(wk_arena *a, const wk_allocator *alloc, size_t max);

/** Like wk_arena_init, but serves requests from `buf[0..cap)` first. */
WK_API void wk_arena_init_buf(wk_arena *a, void *buf, size_t cap, const wk_allocator *alloc,
                              size_t max);

/** Returns `size` bytes aligned to `align` (a power of two, at most 16), or NULL when the
 *  allocator fails or the cap would be exceeded. A size of 0 returns a valid unique pointer.
 *  The memory lives until wk_arena_reset() or wk_arena_free(). Not thread-safe. */
WK_API void *wk_arena_alloc(wk_arena *a, size_t size, size_t align);

/** Copies `len` bytes into the arena and adds a NUL after them. NULL on failure. */
WK_API char *wk_arena_strndup(wk_arena *a, const void *s, size_t len);

/** Forgets every allocation but keeps the largest chunk for reuse. */
WK_API void wk_arena_reset(wk_arena *a);

/** Returns all chunks to the allocator. The arena can be used again afterwards. */
WK_API void wk_arena_free(wk_arena *a);

/** Bytes the arena has taken from its allocator (not counting an initial caller buffer). */
WK_API size_t wk_arena_footprint(const wk_arena *a);

#ifdef __cplusplus
}
#endif
#endif
