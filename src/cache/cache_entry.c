/*
 * Cache entries: one immutable, reference-counted block holding the key, the encoded bytes
 * and the decoded object, plus an arena for what the object points to. The block is a single
 * allocation sized so that the arena's first chunk usually fits inside it too; an entry is
 * decoded from its bytes exactly once, and every reader afterwards shares that object.
 * Where it sits: cache.c builds an entry from a load's serialized result, a shared-tier read
 * or a put -> the shards of cache_local.c hold it (a bias in its count) -> callers get
 * references (thread slots, cache_thread.c, or counts) and the object inside.
 *
 * Building every entry from bytes (even after a load) means a local hit always equals what a
 * shared-tier read would give.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/cache_internal.h"

/* n rounded up to 16, the alignment of every part of an entry's block. */
static size_t align16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

/* Contract in cache_internal.h: one block laid out as header, key (NUL-terminated), bytes,
 * object, then the arena's first chunk (room for about twice the bytes); the object is decoded
 * here, so an entry whose bytes do not decode is never built (*st says why). Its charge counts
 * the arena's spill too. */
wk_cache_entry *wk__cache_entry_new(const wk_allocator *alloc, const wk_serializer *ser,
                                    const wk_schema *s, const char *key, size_t key_len,
                                    uint64_t hash, const uint8_t *bytes, size_t len,
                                    bool negative, int64_t expires_ms, wk_status *st)
{
    size_t head = align16(sizeof(wk_cache_entry));
    size_t keyroom = align16(key_len + 1);
    size_t byteroom = align16(len);
    size_t objroom = negative ? 0 : align16(s->size);
    size_t arenaroom = negative ? 0 : align16(2 * len + 256);
    size_t total = head + keyroom + byteroom + objroom + arenaroom;
    if (len > ((size_t)1 << 40)) {
        *st = WK_ERR_LIMIT;
        return NULL;
    }
    uint8_t *mem = wk_alloc(alloc, total);
    if (mem == NULL) {
        *st = WK_ERR_NOMEM;
        return NULL;
    }
    wk_cache_entry *e = (wk_cache_entry *)mem;
    memset(e, 0, sizeof *e);
    e->refs = 1;
    e->alloc = alloc;
    e->block = total;
    e->negative = negative;
    e->hash = hash;
    e->expires_ms = expires_ms;
    e->key = (char *)(mem + head);
    memcpy(e->key, key, key_len);
    e->key[key_len] = '\0';
    e->key_len = key_len;
    e->bytes = mem + head + keyroom;
    if (len != 0) {
        memcpy(e->bytes, bytes, len);
    }
    e->len = len;
    wk_arena_init_buf(&e->arena, mem + head + keyroom + byteroom + objroom, arenaroom, alloc,
                      0);
    if (!negative) {
        e->obj = mem + head + keyroom + byteroom;
        memset(e->obj, 0, s->size);
        wk_status dst = ser->decode(s, e->bytes, len, e->obj, &e->arena, NULL, NULL);
        if (dst != WK_OK) {
            wk_arena_free(&e->arena);
            wk_free(alloc, mem, total);
            *st = dst;
            return NULL;
        }
    }
    e->charge = total + wk_arena_footprint(&e->arena);
    *st = WK_OK;
    return e;
}

/* Public (wirekit/cache.h): the decoded object; NULL for a negative entry. */
WK_API const void *wk_cache_entry_object(const wk_cache_entry *r)
{
    return r->obj;
}

/* Public: the serialized bytes the object was decoded from. */
WK_API const uint8_t *wk_cache_entry_bytes(const wk_cache_entry *r, size_t *len)
{
    *len = r->len;
    return r->bytes;
}

/* Public: the entry's full key, NUL-terminated. */
WK_API const char *wk_cache_entry_key(const wk_cache_entry *r)
{
    return r->key;
}

/* Public: one more counted reference (relaxed: the caller already holds one). */
WK_API wk_cache_entry *wk_cache_entry_ref(wk_cache_entry *r)
{
    __atomic_fetch_add(&r->refs, 1, __ATOMIC_RELAXED);
    return r;
}

/* Contract in cache_internal.h: frees the arena's spill, then the block. */
void wk__entry_destroy(wk_cache_entry *e)
{
    wk_arena_free(&e->arena);
    wk_free(e->alloc, e, e->block);
}

/* Contract in cache_internal.h: drops the shard's hold; the last reference frees. */
void wk__entry_unbias(wk_cache_entry *e)
{
    if (__atomic_sub_fetch(&e->refs, WK__REF_BIAS, __ATOMIC_ACQ_REL) == 0) {
        wk__entry_destroy(e);
    }
}

/* The release past the top slot: another slot, else the count. */
static __attribute__((noinline)) void unref_slow(wk_cache_entry *r)
{
    if (!wk__ref_put_below(r) && __atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        wk__entry_destroy(r);
    }
}

/* Public: releases one reference; NULL is a no-op. The common case, the reference the
 * thread's latest hit took, is two plain stores. */
WK_API void wk_cache_entry_unref(wk_cache_entry *r)
{
    if (r == NULL) {
        return;
    }
    /* the reference the latest lock-free hit on this thread left on top of its slots (the
     * bottom slot and wk__no_refs hold NULL: never equal) */
    wk_cache_entry **top = wk__tls_top;
    if (__builtin_expect(__atomic_load_n(top, __ATOMIC_RELAXED) == r, 1)) {
        /* release: the caller's reads of the entry come before a reclaimer that sees the
         * slot empty drops the shard's hold */
        __atomic_store_n(top, NULL, __ATOMIC_RELEASE);
        wk__tls_top = top - 1;
        return;
    }
    unref_slow(r);
}
