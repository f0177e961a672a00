/*
 * A ready wk_cache loader over PostgreSQL: one statement whose $1 is the entity's id, run on a
 * pooled connection, its row decoded into the schema's struct (wk_pq_row_to_struct), "no row"
 * answered as WK_ERR_NOT_FOUND (which the cache keeps as a negative entry), every failure
 * answered as the failure it is.
 *
 * The row -> struct plan is built once per result shape and connection snapshot, not per
 * call: the pool's connections each have a registry snapshot of their own (each read the
 * catalog when it connected), and a plan resolves its decoders in one, so the loader keeps a
 * few plans keyed by snapshot and column types, reused by every later load on a connection of
 * that snapshot. A reconnect brings a new snapshot and so a new plan; the old ones are
 * dropped when their slot is needed and no load is using them. The table is guarded by a
 * mutex held for a lookup, never while a statement runs or a row decodes.
 *
 * A statement cut by a lost connection (a terminated backend, a server restart) is run once
 * more on a fresh connection: a loader's statement reads, so running it twice is harmless,
 * and the caller sees WK_ERR_CONNECT only when the server cannot be reached now.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"
#include "wirekit/cache.h"
#include "wirekit/pq.h"

/* wk_pq_loader_load is a wk_cache_loader: a signature that drifts fails to compile here. */
static const wk_cache_loader loader_signature_check = wk_pq_loader_load;

#define PLANS 8

/* One plan: the snapshot and column types it was built for, and the loads using it now. */
typedef struct plan_slot {
    const wk_pg_registry *reg; /* NULL: free */
    wk_pq_struct_plan *plan;
    Oid *types;
    int ncols;
    unsigned users;
    uint64_t last_use;
} plan_slot;

struct wk_pq_loader {
    wk_pq_pool *pool;
    char *sql;
    const wk_schema *schema;
    wk_pg_oid id_oid;
    unsigned struct_flags;
    uint32_t acquire_ms;
    pthread_mutex_t mu;
    plan_slot plans[PLANS];
    uint64_t tick;
};

/* Public (wirekit/pq.h): checks and copies the options. */
WK_API wk_status wk_pq_loader_new(const wk_pq_loader_opts *opts, wk_pq_loader **out,
                                  wk_error *err)
{
    (void)loader_signature_check;
    *out = NULL;
    if (opts == NULL || opts->pool == NULL || opts->schema == NULL ||
        (opts->sql == NULL && opts->table == NULL)) {
        return wk__pg_fail(err, WK_ERR_ARG, 0,
                           "a loader needs a pool, a statement (or a table) and a schema");
    }
    /* without a statement, the one the schema implies (wk_pq_struct_sql), built here once */
    wk_buf built;
    wk_buf_init(&built, NULL, 0);
    if (opts->sql == NULL) {
        wk_status st = wk_pq_struct_sql(opts->schema, opts->table,
                                        opts->key != NULL ? opts->key : "id", WK_PQ_SQL_SELECT,
                                        &built, err);
        if (st != WK_OK) {
            wk_buf_free(&built);
            return st;
        }
    }
    const char *text = opts->sql != NULL ? opts->sql : (const char *)built.data;
    wk_pq_loader *l = calloc(1, sizeof *l);
    size_t n = strlen(text) + 1;
    char *sql = malloc(n);
    if (l == NULL || sql == NULL) {
        free(l);
        free(sql);
        wk_buf_free(&built);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the loader");
    }
    memcpy(sql, text, n);
    wk_buf_free(&built);
    l->pool = opts->pool;
    l->sql = sql;
    l->schema = opts->schema;
    l->id_oid = opts->id_oid;
    l->struct_flags = opts->struct_flags;
    l->acquire_ms = opts->acquire_timeout_ms;
    pthread_mutex_init(&l->mu, NULL);
    *out = l;
    return WK_OK;
}

/* Empties a plan slot (no load may be using it). */
static void drop_plan(plan_slot *ps)
{
    wk_pq_struct_plan_free(ps->plan);
    free(ps->types);
    memset(ps, 0, sizeof *ps);
}

/* Public: frees the plans and the loader; no load may be running. NULL is a no-op. */
WK_API void wk_pq_loader_free(wk_pq_loader *l)
{
    if (l == NULL) {
        return;
    }
    for (int i = 0; i < PLANS; i++) {
        drop_plan(&l->plans[i]);
    }
    pthread_mutex_destroy(&l->mu);
    free(l->sql);
    free(l);
}

/* Whether slot `ps` was built for `res` on a connection of snapshot `reg`. */
static bool plan_fits(const plan_slot *ps, const wk_pg_registry *reg, const PGresult *res)
{
    if (ps->reg != reg || ps->ncols != PQnfields(res)) {
        return false;
    }
    for (int i = 0; i < ps->ncols; i++) {
        if (ps->types[i] != PQftype(res, i)) {
            return false;
        }
    }
    return true;
}

/* The kept plan for `res` on a connection of snapshot `reg`, its users counted (-1: none).
 * Under the mutex. */
static int find_plan(wk_pq_loader *l, const wk_pg_registry *reg, const PGresult *res)
{
    for (int i = 0; i < PLANS; i++) {
        plan_slot *ps = &l->plans[i];
        if (ps->reg != NULL && plan_fits(ps, reg, res)) {
            ps->users++;
            ps->last_use = ++l->tick;
            return i;
        }
    }
    return -1;
}

/* The plan for `res` on `conn`: a kept one (users counted: give it back with put_plan), or a
 * new one kept in a free or unused slot; when every slot is in use the plan is the caller's
 * alone (*slot -1) and put_plan frees it. */
static wk_status get_plan(wk_pq_loader *l, const wk_pq_conn *conn, const PGresult *res,
                          const wk_pq_struct_plan **plan, int *slot, wk_schema_error *err)
{
    const wk_pg_registry *reg = wk_pq_registry(conn);
    pthread_mutex_lock(&l->mu);
    int found = find_plan(l, reg, res);
    *plan = found >= 0 ? l->plans[found].plan : NULL;
    pthread_mutex_unlock(&l->mu);
    if (found >= 0) {
        *slot = found;
        return WK_OK;
    }
    /* Not kept: built outside the mutex (it resolves every column's decoder). */
    wk_pq_struct_plan *p = NULL;
    wk_status st = wk_pq_struct_plan_new(conn, res, l->schema, l->struct_flags, &p, err);
    if (st != WK_OK) {
        return st;
    }
    int ncols = PQnfields(res);
    Oid *types = malloc((size_t)(ncols > 0 ? ncols : 1) * sizeof *types);
    if (types == NULL) {
        wk_pq_struct_plan_free(p);
        return wk__pg_fail(&err->base, WK_ERR_NOMEM, 0, "out of memory for the loader's plan");
    }
    for (int i = 0; i < ncols; i++) {
        types[i] = PQftype(res, i);
    }
    pthread_mutex_lock(&l->mu);
    found = find_plan(l, reg, res); /* another load may have built it meanwhile */
    if (found >= 0) {
        *plan = l->plans[found].plan;
        pthread_mutex_unlock(&l->mu);
        wk_pq_struct_plan_free(p);
        free(types);
        *slot = found;
        return WK_OK;
    }
    int at = -1;
    for (int i = 0; i < PLANS; i++) {
        plan_slot *ps = &l->plans[i];
        if (ps->reg == NULL) {
            at = i;
            break;
        }
        if (ps->users == 0 && (at < 0 || ps->last_use < l->plans[at].last_use)) {
            at = i; /* the least recently used one no load holds */
        }
    }
    if (at >= 0) {
        drop_plan(&l->plans[at]);
        plan_slot *ps = &l->plans[at];
        ps->reg = reg;
        ps->plan = p;
        ps->types = types;
        ps->ncols = ncols;
        ps->users = 1;
        ps->last_use = ++l->tick;
    }
    pthread_mutex_unlock(&l->mu);
    if (at < 0) {
        free(types);
    }
    *plan = p;
    *slot = at;
    return WK_OK;
}

/* Gives back a plan from get_plan. */
static void put_plan(wk_pq_loader *l, const wk_pq_struct_plan *plan, int slot)
{
    if (slot < 0) {
        wk_pq_struct_plan_free((wk_pq_struct_plan *)plan);
        return;
    }
    pthread_mutex_lock(&l->mu);
    l->plans[slot].users--;
    pthread_mutex_unlock(&l->mu);
}

/* Runs the statement for `id` on a pooled connection: *res holds its result (the caller
 * clears it) and *conn the connection, still checked out. A connection lost under the
 * statement is given back (the pool closes it) and the statement run once more, on a
 * connection made for it: another idle one may belong to a backend going away too (all of
 * them are, after a restart or a mass termination), and a statement that itself kills its
 * backend is not run a third time. */
static wk_status run(wk_pq_loader *l, const char *id, size_t id_len, wk_pq_conn **conn,
                     PGresult **res, wk_error *err)
{
    wk_slice text = {id, id_len};
    wk_pq_param param = {WK_PG_KIND_TEXT, &text, l->id_oid};
    wk_status st = WK_OK;
    for (int attempt = 0; attempt < 2; attempt++) {
        *res = NULL;
        st = attempt == 0 ? wk_pq_pool_acquire(l->pool, l->acquire_ms, conn, err)
                          : wk__pq_pool_acquire_fresh(l->pool, l->acquire_ms, conn, err);
        if (st != WK_OK) {
            return st;
        }
        st = wk_pq_exec(*conn, l->sql, &param, 1, res, err);
        if (st != WK_ERR_CONNECT) {
            return st;
        }
        PQclear(*res);
        wk_pq_pool_release(l->pool, *conn); /* lost: the pool closes it */
        *conn = NULL;
        *res = NULL;
    }
    return st;
}

/* Public: a wk_cache_loader (see wirekit/pq.h). */
WK_API wk_status wk_pq_loader_load(void *ctx, const wk_schema *s, const char *id, size_t id_len,
                                   void *obj, wk_arena *arena, wk_error *err)
{
    wk_pq_loader *l = ctx;
    if (s != l->schema) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "the loader was made for another schema");
    }
    wk_pq_conn *conn = NULL;
    PGresult *res = NULL;
    wk_status st = run(l, id, id_len, &conn, &res, err);
    if (st != WK_OK) {
        PQclear(res);
        wk_pq_pool_release(l->pool, conn);
        return st;
    }
    int rows = PQntuples(res);
    bool tuples = PQresultStatus(res) == PGRES_TUPLES_OK;
    if (!tuples || rows != 1) {
        PQclear(res);
        wk_pq_pool_release(l->pool, conn);
        return !tuples    ? wk__pg_fail(err, WK_ERR_STATE, 0,
                                        "the loader's statement returns no rows (not a query)")
               : rows == 0 ? wk__pg_fail(err, WK_ERR_NOT_FOUND, 0, "no row for the id")
                           : wk__pg_fail(err, WK_ERR_STATE, 0,
                                         "the loader's statement returned more than one row");
    }
    const wk_pq_struct_plan *plan = NULL;
    int slot = -1;
    wk_schema_error se = {0};
    st = get_plan(l, conn, res, &plan, &slot, &se);
    /* the row decodes without the connection: another load may use it meanwhile */
    wk_pq_pool_release(l->pool, conn);
    if (st == WK_OK) {
        st = wk_pq_row_to_struct(plan, res, 0, obj, arena, &se);
        put_plan(l, plan, slot);
    }
    PQclear(res);
    if (st != WK_OK && err != NULL) {
        *err = se.base;
    }
    return st;
}
