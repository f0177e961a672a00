/*
 * An in-memory shared tier for cache tests: the wk_cache_store contract (fill-if-absent,
 * replace-and-broadcast, tombstones, TTLs) with switches to make it fail, plus call counters.
 * Several caches attached to one fake store behave like processes sharing one Redis: an
 * invalidation or put in one is broadcast (synchronously) to the others. With
 * fake_store_in_place it offers fetch_each too, and counts store calls made from inside its
 * `take` callbacks.
 */
#ifndef FAKE_STORE_H
#define FAKE_STORE_H

#include <pthread.h>

#include "wirekit/cache.h"

#define FAKE_MAX_ITEMS 256
#define FAKE_MAX_WATCH 8

typedef struct fake_item {
    char key[WK_CACHE_KEY_MAX];
    size_t key_len;
    uint8_t *val;
    size_t val_len;
    int64_t expires_ms;
} fake_item;

typedef struct fake_store {
    pthread_mutex_t mu;
    fake_item items[FAKE_MAX_ITEMS];
    size_t n;
    bool down;
    unsigned fetches, stores, invalidates, removes;
    const wk_cache_watch *watchers[FAKE_MAX_WATCH];
    size_t nwatch;
    unsigned fail_after; /* fetch_each fails after handing over this many values (0: never) */
    pthread_t taker;     /* the thread inside a `take` of fetch_each, while in_take */
    bool in_take;
    unsigned reentered;  /* store calls made from inside a `take` (the contract forbids them) */
    wk_cache_store store;
} fake_store;

void fake_store_init(fake_store *f);
/** Offers fetch_each (values handed over in place) beside fetch, or withdraws it. */
void fake_store_in_place(fake_store *f, bool on);
void fake_store_free(fake_store *f);
/** Takes the store down (every operation fails with WK_ERR_IO, feed down) or brings it up. */
void fake_store_set_down(fake_store *f, bool down);
/** Writes raw bytes under `key` (e.g. a corrupt entry). */
void fake_store_put_raw(fake_store *f, const char *key, const void *val, size_t len);
/** Returns the stored bytes of `key` (NULL when absent); `*len` gets their length. */
const uint8_t *fake_store_get_raw(fake_store *f, const char *key, size_t *len);

#endif
