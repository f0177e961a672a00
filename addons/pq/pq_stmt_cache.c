/*
 * The prepared statements of a connection's pipelines, kept by statement text and parameter
 * types in a fixed array of slots (at most 4096, 64 by default) with least-recently-used
 * eviction. A lookup compares a 64-bit hash first and the text and types only on a match, so
 * a collision never runs the wrong statement. Names ("wk_s<n>") come from a counter and are
 * never reused on a connection, so an evicted statement can be DEALLOCATEd lazily, with the
 * next batch, without ever racing a new one of the same name. Slots used by the batch being
 *
 * Where it sits: wk_pq_pipeline_add (pq_pipeline.c) -> wk__pq_stmt_acquire here -> a slot
 * whose statement is prepared by pq_pipeline_send.c on first use; evicted names are
 * DEALLOCATEd with the next batch.
 * built are not evicted; when all are, the statement simply goes unprepared.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_stmt_cache.h"

#define DEFAULT_CAPACITY 64
#define MAX_CAPACITY 4096

/* Contract in pq_internal.h: FNV-1a over the text and the parameter type OIDs. */
uint64_t wk__pq_stmt_hash(const char *sql, const Oid *types, size_t n)
{
    uint64_t h = 1469598103934665603u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *)sql; *p != 0; p++) {
        h = (h ^ *p) * 1099511628211u;
    }
    for (size_t i = 0; i < n; i++) {
        h = (h ^ types[i]) * 1099511628211u;
    }
    return h != 0 ? h : 1;
}

/* The slot holds exactly this statement (text and types), not merely the same hash. */
static bool same_stmt(const wk__pq_stmt *s, const char *sql, const Oid *types, size_t n)
{
    return s->sql != NULL && s->ntypes == n && strcmp(s->sql, sql) == 0 &&
           (n == 0 || memcmp(s->types, types, n * sizeof *types) == 0);
}

/* Contract in pq_internal.h: the connection's cache, created on first use (NULL when out of
 * memory). */
wk__pq_stmt_cache *wk__pq_stmts(wk_pq_conn *c)
{
    if (c->stmts == NULL) {
        wk__pq_stmt_cache *sc = calloc(1, sizeof *sc);
        if (sc == NULL) {
            return NULL;
        }
        sc->slots = calloc(DEFAULT_CAPACITY, sizeof *sc->slots);
        if (sc->slots == NULL) {
            free(sc);
            return NULL;
        }
        sc->cap = DEFAULT_CAPACITY;
        c->stmts = sc;
    }
    return c->stmts;
}

/* Contract in pq_internal.h: frees the slots and the names waiting to be deallocated; the
 * server drops its statements with the session. */
void wk__pq_stmt_cache_free(wk_pq_conn *c)
{
    wk__pq_stmt_cache *sc = c->stmts;
    if (sc == NULL) {
        return;
    }
    for (size_t i = 0; i < sc->cap; i++) {
        free(sc->slots[i].sql);
    }
    free(sc->slots);
    free(sc->drop);
    free(sc);
    c->stmts = NULL;
}

/* Contract in pq_internal.h: empties a slot; with `drop`, a statement the server holds is
 * queued for DEALLOCATE. */
void wk__pq_stmt_forget(wk__pq_stmt_cache *sc, long slot, bool drop)
{
    wk__pq_stmt *s = &sc->slots[slot];
    if (s->sql == NULL) {
        return;
    }
    if (drop && s->ready) {
        if (sc->ndrop == sc->drop_cap) {
            size_t ncap = sc->drop_cap == 0 ? 8 : sc->drop_cap * 2;
            void *nd = realloc(sc->drop, ncap * sizeof *sc->drop);
            if (nd != NULL) {
                sc->drop = nd;
                sc->drop_cap = ncap;
            }
        }
        /* without memory for the name the statement stays on the server until the end of
         * the session: harmless, names are never reused */
        if (sc->ndrop < sc->drop_cap) {
            memcpy(sc->drop[sc->ndrop++], s->name, WK__PQ_STMT_NAME);
        }
    }
    free(s->sql);
    memset(s, 0, sizeof *s);
    sc->size--;
}

/* The least recently used statement that `batch` does not use (-1: none). */
static long lru_slot(const wk__pq_stmt_cache *sc, uint64_t batch)
{
    long lru = -1;
    for (size_t i = 0; i < sc->cap; i++) {
        const wk__pq_stmt *s = &sc->slots[i];
        if (s->sql != NULL && s->batch != batch &&
            (lru < 0 || s->last_use < sc->slots[lru].last_use)) {
            lru = (long)i;
        }
    }
    return lru;
}

/* The slot to take for a new statement: a free one, else the least recently used one. */
static long pick_slot(const wk__pq_stmt_cache *sc, uint64_t batch)
{
    for (size_t i = 0; i < sc->cap; i++) {
        if (sc->slots[i].sql == NULL) {
            return (long)i;
        }
    }
    return lru_slot(sc, batch);
}

/* Contract in pq_internal.h: the slot of (sql, types), *hit when it was there already; a new
 * one takes a free slot or evicts the least recently used outside `batch`; *slot -1 when
 * every slot is in use by the batch (the statement then runs unprepared). */
wk_status wk__pq_stmt_acquire(wk__pq_stmt_cache *sc, const char *sql, const Oid *types,
                              size_t n, uint64_t batch, long *slot, bool *hit, wk_error *err)
{
    *slot = -1;
    *hit = false;
    /* the slot found last first, by an exact compare: a batch often repeats one statement */
    long found = -1;
    const wk__pq_stmt *l = sc->last < sc->cap ? &sc->slots[sc->last] : NULL;
    if (l != NULL && same_stmt(l, sql, types, n)) {
        found = (long)sc->last;
    }
    uint64_t h = found < 0 ? wk__pq_stmt_hash(sql, types, n) : l->hash;
    for (size_t i = 0; i < sc->cap && found < 0; i++) {
        const wk__pq_stmt *s = &sc->slots[i];
        if (s->hash == h && same_stmt(s, sql, types, n)) {
            found = (long)i;
        }
    }
    if (found >= 0) {
        wk__pq_stmt *s = &sc->slots[found];
        s->last_use = ++sc->tick;
        s->batch = batch;
        sc->last = (size_t)found;
        *slot = found;
        *hit = s->ready;
        sc->hits += s->ready;
        return WK_OK;
    }
    sc->misses++;
    long at = pick_slot(sc, batch);
    if (at < 0) {
        return WK_OK; /* every slot serves this batch (or the capacity is 0): unprepared */
    }
    if (sc->slots[at].sql != NULL) {
        sc->evictions++;
        wk__pq_stmt_forget(sc, at, true);
    }
    size_t len = strlen(sql) + 1;
    size_t pad = (len + sizeof(Oid) - 1) / sizeof(Oid) * sizeof(Oid);
    char *block = malloc(pad + n * sizeof(Oid));
    if (block == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a prepared statement");
    }
    memcpy(block, sql, len);
    if (n != 0) {
        memcpy(block + pad, types, n * sizeof(Oid));
    }
    wk__pq_stmt *s = &sc->slots[at];
    s->hash = h;
    s->sql = block;
    s->types = (const Oid *)(const void *)(block + pad);
    s->ntypes = n;
    s->last_use = ++sc->tick;
    s->batch = batch;
    snprintf(s->name, sizeof s->name, "wk_s%llu", (unsigned long long)++sc->next_id);
    s->format = 1;
    s->ready = false;
    sc->size++;
    sc->last = (size_t)at;
    *slot = at;
    return WK_OK;
}

/* Public (wirekit/pq.h): at most 4096 slots (0 turns preparing off); shrinking evicts (and
 * deallocates) the least recently used. Refused while a pipeline is open. */
WK_API wk_status wk_pq_set_stmt_cache_capacity(wk_pq_conn *conn, size_t capacity,
                                               wk_error *err)
{
    if (capacity > MAX_CAPACITY) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "the statement cache holds at most 4096");
    }
    wk__pq_stmt_cache *sc = wk__pq_stmts(conn);
    if (sc == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the statement cache");
    }
    if (sc->open) {
        return wk__pg_fail(err, WK_ERR_STATE, 0, "a pipeline is open on the connection");
    }
    wk__pq_stmt *ns = calloc(capacity == 0 ? 1 : capacity, sizeof *ns);
    if (ns == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the statement cache");
    }
    while (sc->size > capacity) {
        wk__pq_stmt_forget(sc, lru_slot(sc, UINT64_MAX), true);
        sc->evictions++;
    }
    size_t k = 0; /* the survivors move to the first slots */
    for (size_t i = 0; i < sc->cap; i++) {
        if (sc->slots[i].sql != NULL) {
            ns[k++] = sc->slots[i];
        }
    }
    free(sc->slots);
    sc->slots = ns;
    sc->cap = capacity;
    sc->last = 0;
    return WK_OK;
}

/* Public: capacity, size, hits, misses and evictions; before the first pipeline, the default
 * capacity and zeros. */
WK_API void wk_pq_get_stmt_cache_stats(const wk_pq_conn *conn, wk_pq_stmt_cache_stats *out)
{
    memset(out, 0, sizeof *out);
    const wk__pq_stmt_cache *sc = conn->stmts;
    out->capacity = sc != NULL ? sc->cap : DEFAULT_CAPACITY;
    if (sc != NULL) {
        out->size = sc->size;
        out->hits = sc->hits;
        out->misses = sc->misses;
        out->evictions = sc->evictions;
    }
}
