/* In-memory shared tier for the cache tests (see fake_store.h). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_store.h"

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static fake_item *find(fake_store *f, const char *key, size_t len)
{
    for (size_t i = 0; i < f->n; i++) {
        fake_item *it = &f->items[i];
        if (it->key_len == len && memcmp(it->key, key, len) == 0) {
            if (it->expires_ms != 0 && it->expires_ms <= now_ms()) {
                free(it->val);
                *it = f->items[--f->n];
                return NULL;
            }
            return it;
        }
    }
    return NULL;
}

static void set_item(fake_store *f, const char *key, size_t len, const void *val, size_t vlen,
                     uint32_t ttl_ms)
{
    fake_item *it = find(f, key, len);
    if (it == NULL) {
        if (f->n == FAKE_MAX_ITEMS || len > WK_CACHE_KEY_MAX) {
            return;
        }
        it = &f->items[f->n++];
        memcpy(it->key, key, len);
        it->key_len = len;
    } else {
        free(it->val);
    }
    it->val = malloc(vlen + 1);
    memcpy(it->val, val, vlen);
    it->val_len = vlen;
    it->expires_ms = ttl_ms != 0 ? now_ms() + ttl_ms : 0;
}

static void broadcast(fake_store *f, const char *key, size_t len)
{
    /* Called with the lock held: watchers cannot unregister meanwhile. */
    for (size_t i = 0; i < f->nwatch; i++) {
        f->watchers[i]->invalidated(f->watchers[i]->ctx, key, len);
    }
}

/* Counts a call made from inside a take (under f->mu). */
static void check_reentry(fake_store *f)
{
    if (f->in_take && pthread_equal(f->taker, pthread_self())) {
        f->reentered++;
    }
}

static wk_status f_fetch(void *self, size_t n, const wk_slice *keys, wk_buf *vals,
                         bool *found, wk_error *err)
{
    fake_store *f = self;
    pthread_mutex_lock(&f->mu);
    f->fetches++;
    check_reentry(f);
    if (f->down) {
        pthread_mutex_unlock(&f->mu);
        return wk_error_set(err, WK_ERR_IO, 0, "fake store is down");
    }
    for (size_t i = 0; i < n; i++) {
        fake_item *it = find(f, keys[i].ptr, keys[i].len);
        found[i] = it != NULL;
        if (it != NULL) {
            wk_buf_append(&vals[i], it->val, it->val_len);
        }
    }
    pthread_mutex_unlock(&f->mu);
    return WK_OK;
}

/* Values handed to `take` with the lock released (as a store would hold only its
 * connection), so a take that calls the store is counted instead of deadlocking. */
static wk_status f_fetch_each(void *self, size_t n, const wk_slice *keys, wk_cache_take_fn take,
                              void *ctx, wk_error *err)
{
    fake_store *f = self;
    pthread_mutex_lock(&f->mu);
    f->fetches++;
    bool down = f->down;
    pthread_mutex_unlock(&f->mu);
    if (down) {
        return wk_error_set(err, WK_ERR_IO, 0, "fake store is down");
    }
    unsigned taken = 0;
    for (size_t i = 0; i < n; i++) {
        if (f->fail_after != 0 && taken == f->fail_after) {
            return wk_error_set(err, WK_ERR_IO, i, "fake store failed part-way");
        }
        pthread_mutex_lock(&f->mu);
        fake_item *it = find(f, keys[i].ptr, keys[i].len);
        uint8_t *copy = NULL;
        size_t len = 0;
        if (it != NULL) {
            len = it->val_len;
            copy = malloc(len + 1);
            memcpy(copy, it->val, len);
        }
        if (copy != NULL) {
            f->taker = pthread_self();
            f->in_take = true;
        }
        pthread_mutex_unlock(&f->mu);
        if (copy == NULL) {
            continue;
        }
        wk_status st = take(ctx, i, copy, len);
        pthread_mutex_lock(&f->mu);
        f->in_take = false;
        pthread_mutex_unlock(&f->mu);
        free(copy);
        taken++;
        if (st != WK_OK) {
            return wk_error_set(err, st, i, "take refused a value");
        }
    }
    return WK_OK;
}

static wk_status f_store(void *self, const char *key, size_t key_len, const void *val,
                         size_t val_len, uint32_t ttl_ms, unsigned mode, wk_error *err)
{
    fake_store *f = self;
    pthread_mutex_lock(&f->mu);
    f->stores++;
    check_reentry(f);
    if (f->down) {
        pthread_mutex_unlock(&f->mu);
        return wk_error_set(err, WK_ERR_IO, 0, "fake store is down");
    }
    if (mode == WK_CACHE_STORE_REPLACE || find(f, key, key_len) == NULL) {
        set_item(f, key, key_len, val, val_len, ttl_ms);
    }
    if (mode == WK_CACHE_STORE_REPLACE) {
        broadcast(f, key, key_len);
    }
    pthread_mutex_unlock(&f->mu);
    return WK_OK;
}

static wk_status f_invalidate(void *self, const char *key, size_t key_len, uint32_t tomb_ms,
                              wk_error *err)
{
    fake_store *f = self;
    pthread_mutex_lock(&f->mu);
    f->invalidates++;
    check_reentry(f);
    if (f->down) {
        pthread_mutex_unlock(&f->mu);
        return wk_error_set(err, WK_ERR_IO, 0, "fake store is down");
    }
    set_item(f, key, key_len, WK_CACHE_TOMBSTONE_MARK, WK_CACHE_MARK_LEN, tomb_ms);
    broadcast(f, key, key_len);
    pthread_mutex_unlock(&f->mu);
    return WK_OK;
}

static wk_status f_remove(void *self, const char *key, size_t key_len, wk_error *err)
{
    fake_store *f = self;
    pthread_mutex_lock(&f->mu);
    f->removes++;
    check_reentry(f);
    if (f->down) {
        pthread_mutex_unlock(&f->mu);
        return wk_error_set(err, WK_ERR_IO, 0, "fake store is down");
    }
    fake_item *it = find(f, key, key_len);
    if (it != NULL) {
        free(it->val);
        *it = f->items[--f->n];
    }
    pthread_mutex_unlock(&f->mu);
    return WK_OK;
}

static void f_watch(void *self, const wk_cache_watch *w, bool enable)
{
    fake_store *f = self;
    pthread_mutex_lock(&f->mu);
    if (enable) {
        if (f->nwatch < FAKE_MAX_WATCH) {
            f->watchers[f->nwatch++] = w;
            if (!f->down) {
                w->feed(w->ctx, true);
            }
        }
    } else {
        for (size_t i = 0; i < f->nwatch; i++) {
            if (f->watchers[i] == w) {
                f->watchers[i] = f->watchers[--f->nwatch];
                break;
            }
        }
    }
    pthread_mutex_unlock(&f->mu);
}

void fake_store_init(fake_store *f)
{
    memset(f, 0, sizeof *f);
    pthread_mutex_init(&f->mu, NULL);
    f->store.fetch = f_fetch;
    f->store.store = f_store;
    f->store.invalidate = f_invalidate;
    f->store.remove = f_remove;
    f->store.watch = f_watch;
    f->store.self = f;
}

void fake_store_in_place(fake_store *f, bool on)
{
    f->store.fetch_each = on ? f_fetch_each : NULL;
}

void fake_store_free(fake_store *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->items[i].val);
    }
    pthread_mutex_destroy(&f->mu);
}

void fake_store_set_down(fake_store *f, bool down)
{
    pthread_mutex_lock(&f->mu);
    f->down = down;
    for (size_t i = 0; i < f->nwatch; i++) {
        f->watchers[i]->feed(f->watchers[i]->ctx, !down);
    }
    pthread_mutex_unlock(&f->mu);
}

void fake_store_put_raw(fake_store *f, const char *key, const void *val, size_t len)
{
    pthread_mutex_lock(&f->mu);
    set_item(f, key, strlen(key), val, len, 0);
    pthread_mutex_unlock(&f->mu);
}

const uint8_t *fake_store_get_raw(fake_store *f, const char *key, size_t *len)
{
    pthread_mutex_lock(&f->mu);
    fake_item *it = find(f, key, strlen(key));
    pthread_mutex_unlock(&f->mu);
    if (it == NULL) {
        return NULL;
    }
    *len = it->val_len;
    return it->val;
}
