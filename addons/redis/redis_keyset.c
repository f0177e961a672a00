/*
 * A set of keys for the Redis store's SCAN across cluster masters: while a slot migrates, a
 * key can be seen on its old master and again on its new one, and the scan reports each key
 * once by remembering what it reported. Open addressing over 64-bit hashes, the key bytes
 * kept in one growing buffer (compared on a hash match, so a collision never hides a key),
 * everything from the store's allocator.
 */
#include <string.h>

#include "cache/cache_key_interface.h"
#include "redis/redis_internal.h"

struct wk__kslot {
    uint64_t hash;
    size_t off; /* of the key in `bytes`, + 1 (0 = empty) */
    size_t len;
};

void wk__keyset_init(wk__keyset *k, const wk_allocator *alloc)
{
    memset(k, 0, sizeof *k);
    k->alloc = alloc;
    wk_buf_init(&k->bytes, alloc, 0);
}

void wk__keyset_free(wk__keyset *k)
{
    wk_free(k->alloc, k->tab, k->cap * sizeof *k->tab);
    wk_buf_free(&k->bytes);
    memset(k, 0, sizeof *k);
}

static struct wk__kslot *find(const wk__keyset *k, struct wk__kslot *tab, size_t cap,
                              uint64_t h, const char *key, size_t len)
{
    for (size_t i = (size_t)h & (cap - 1);; i = (i + 1) & (cap - 1)) {
        struct wk__kslot *e = &tab[i];
        if (e->off == 0 || (e->hash == h && e->len == len && key != NULL &&
                            memcmp(k->bytes.data + e->off - 1, key, len) == 0)) {
            return e;
        }
    }
}

static bool grow(wk__keyset *k)
{
    size_t cap = k->cap == 0 ? 64 : k->cap * 2;
    struct wk__kslot *tab = wk_alloc(k->alloc, cap * sizeof *tab);
    if (tab == NULL) {
        return false;
    }
    memset(tab, 0, cap * sizeof *tab);
    for (size_t i = 0; i < k->cap; i++) {
        if (k->tab[i].off != 0) {
            *find(k, tab, cap, k->tab[i].hash, NULL, 0) = k->tab[i]; /* first empty slot */
        }
    }
    wk_free(k->alloc, k->tab, k->cap * sizeof *k->tab);
    k->tab = tab;
    k->cap = cap;
    return true;
}

int wk__keyset_add(wk__keyset *k, const char *key, size_t len)
{
    if (2 * (k->n + 1) > k->cap && !grow(k)) {
        return -1;
    }
    uint64_t h = wk__cache_hash(key, len);
    struct wk__kslot *e = find(k, k->tab, k->cap, h, key, len);
    if (e->off != 0) {
        return 0;
    }
    size_t off = k->bytes.len;
    if (wk_buf_append(&k->bytes, key, len) != WK_OK) {
        return -1;
    }
    e->hash = h;
    e->off = off + 1;
    e->len = len;
    k->n++;
    return 1;
}
