/*
 * Bump allocator in chunks. Each chunk carries a small header (link + size) so that the whole
 * arena frees in one walk. Chunk sizes double from 4 KiB to 1 MiB; larger requests get a
 * dedicated chunk so a single huge string does not waste a doubled chunk. A reset coalesces
 * the chunks into one, so a decoder that resets its arena per document stops allocating after
 * the first document. The cap counts bytes taken from the allocator, headers included.
 * Every decoder puts its nodes and copied strings here (one reset frees a whole document);
 * the fused parsers inline the bump (wk__vb_alloc, arena_take16) and call wk_arena_alloc only
 * for a new chunk.
 */
#include <stdatomic.h>
#include <string.h>

#include "wirekit/arena.h"

/* The source of wk_arena.gen. Process-wide rather than per arena, so that an arena freed and
 * initialised again over the same memory still gets a value it never had: init cannot know
 * what the struct held before. 64 bits never wrap. */
static _Atomic uint64_t last_gen;

static uint64_t new_gen(void)
{
    return atomic_fetch_add_explicit(&last_gen, 1, memory_order_relaxed) + 1;
}

/* The header at the start of every chunk the arena took from its allocator (not of the
 * caller's initial buffer). */
struct wk_arena_chunk {
    wk_arena_chunk *next;
    size_t size; /* bytes in the whole chunk, header included */
};

#define FIRST_CHUNK ((size_t)4096)
#define MAX_CHUNK ((size_t)1 << 20)
#define HEADER_SIZE ((sizeof(wk_arena_chunk) + 15u) & ~(size_t)15u)

/* An empty arena on alloc (NULL: libc), capped at max bytes taken (0: the default). Nothing
 * is allocated until the first wk_arena_alloc. */
WK_API void wk_arena_init(wk_arena *a, const wk_allocator *alloc, size_t max)
{
    memset(a, 0, sizeof(*a));
    a->alloc = alloc;
    a->max = max != 0 ? max : WK_ARENA_DEFAULT_MAX;
    a->next_size = FIRST_CHUNK;
    a->gen = new_gen();
}

/* An arena that bumps in the caller's buf[0..cap) first (never freed by the arena), then
 * takes chunks from alloc. */
WK_API void wk_arena_init_buf(wk_arena *a, void *buf, size_t cap, const wk_allocator *alloc,
                              size_t max)
{
    wk_arena_init(a, alloc, max);
    a->initial = buf;
    a->initial_cap = cap;
    a->cur = buf;
    a->end = (uint8_t *)buf + cap;
}

/* The slow path of wk_arena_alloc: a new chunk (the next doubling size, or a dedicated one
 * of exactly what the request needs), the request at its start. NULL past the cap, on
 * overflow, or when the allocator refuses; the arena is then unchanged. */
static void *new_chunk(wk_arena *a, size_t size, size_t align)
{
    /* the chunk's size: the next doubling size, or a dedicated chunk for a request larger
     * than that (so one huge string does not waste a doubled chunk); the cap counts what is
     * taken from the allocator, headers included */
    size_t need;
    if (!wk_size_add(size, HEADER_SIZE + align, &need)) {
        return NULL;
    }
    size_t chunk = a->next_size;
    bool dedicated = need > chunk;
    if (dedicated) {
        chunk = need;
    }
    size_t total;
    if (!wk_size_add(a->total, chunk, &total) || (a->max != 0 && total > a->max)) {
        return NULL;
    }
    wk_arena_chunk *c = wk_alloc(a->alloc, chunk);
    if (c == NULL) {
        return NULL;
    }
    c->size = chunk;
    c->next = a->chunks;
    a->chunks = c;
    a->total = total;
    uint8_t *base = (uint8_t *)c + HEADER_SIZE;
    uintptr_t p = ((uintptr_t)base + (align - 1)) & ~(uintptr_t)(align - 1);
    if (!dedicated) {
        /* Keep bumping in the new chunk; a dedicated chunk leaves the current region alone. */
        a->cur = (uint8_t *)p + size;
        a->end = (uint8_t *)c + chunk;
        if (a->next_size < MAX_CHUNK) {
            a->next_size *= 2;
        }
    }
    return (void *)p;
}

/* size bytes aligned to align (a power of two; 0 means 1), valid until the next reset or
 * free. NULL when the cap or the allocator refuses. */
WK_API void *wk_arena_alloc(wk_arena *a, size_t size, size_t align)
{
    if (align == 0) {
        align = 1;
    }
    if (a->cur != NULL) {
        uintptr_t p = ((uintptr_t)a->cur + (align - 1)) & ~(uintptr_t)(align - 1);
        if (p <= (uintptr_t)a->end && size <= (size_t)((uintptr_t)a->end - p)) {
            a->cur = (uint8_t *)p + size;
            return (void *)p;
        }
    }
    return new_chunk(a, size, align);
}

/* A NUL-terminated copy of s[0..len) in the arena, or NULL. */
WK_API char *wk_arena_strndup(wk_arena *a, const void *s, size_t len)
{
    size_t n;
    if (!wk_size_add(len, 1, &n)) {
        return NULL;
    }
    char *d = wk_arena_alloc(a, n, 1);
    if (d != NULL) {
        if (len != 0) {
            memcpy(d, s, len);
        }
        d[len] = '\0';
    }
    return d;
}

/* Forgets every allocation but keeps the memory: several chunks become one of their total
 * size (so the same workload then fits without allocating); an arena over a caller's buffer
 * frees its chunks and starts over in the buffer. */
WK_API void wk_arena_reset(wk_arena *a)
{
    a->gen = new_gen(); /* everything allocated before is gone, wherever `cur` ends up */
    if (a->initial != NULL) {
        wk_arena_free(a); /* the caller's buffer is the region to reuse */
        return;
    }
    wk_arena_chunk *c = a->chunks;
    if (c != NULL && c->next != NULL) {
        /* Several chunks: replace them by one chunk of their total size, so that the same
         * workload after the reset fits in one region and allocates nothing. `total` is
         * within the cap already. */
        size_t size = a->total;
        wk_arena_free(a);
        c = wk_alloc(a->alloc, size);
        if (c == NULL) {
            return; /* an empty arena is still a valid one */
        }
        c->size = size;
        c->next = NULL;
        a->chunks = c;
        a->total = size;
        a->next_size = size < MAX_CHUNK ? size : MAX_CHUNK;
    }
    if (c != NULL) {
        a->cur = (uint8_t *)c + HEADER_SIZE;
        a->end = (uint8_t *)c + c->size;
    }
}

/* Frees every chunk; the arena is empty and may be used again. */
WK_API void wk_arena_free(wk_arena *a)
{
    wk_arena_chunk *c = a->chunks;
    while (c != NULL) {
        wk_arena_chunk *next = c->next;
        wk_free(a->alloc, c, c->size);
        c = next;
    }
    a->chunks = NULL;
    a->total = 0;
    a->next_size = FIRST_CHUNK;
    a->gen = new_gen();
    if (a->initial != NULL) {
        a->cur = a->initial;
        a->end = a->initial + a->initial_cap;
    } else {
        a->cur = NULL;
        a->end = NULL;
    }
}

/* The bytes the arena holds from its allocator (headers included; not the caller's buffer). */
WK_API size_t wk_arena_footprint(const wk_arena *a)
{
    return a->total;
}
