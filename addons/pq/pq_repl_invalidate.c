/*
 * A cache the database keeps fresh: committed row changes of the rules' tables become
 * wk_cache_invalidate calls for the entity whose id is the rule's column, rendered as
 * PostgreSQL prints it (an int4 42 is the id "42", a uuid its canonical text). The cache's
 * own invalidation does the rest: the local copy goes, the shared tier deletes the key,
 * writes its tombstone and broadcasts it, so every process's memory tier drops it.
 *
 * Each invalidation is made as its change arrives and returns once the shared tier has
 * acknowledged it; the stream's COMMIT callback then returns WK_OK and the commit can be
 * confirmed. A failed invalidation stops the stream before its commit is confirmed, so the
 * next run delivers the transaction again: an invalidation is never lost, at worst repeated.
 *
 * Rules are matched by schema and table name on every change (a table described anew may
 * have moved its columns), the column's index tried first where it was last found.
 */
#include <stdlib.h>
#include <string.h>

#include "pg/pg_interface.h"
#include "pq/pq_repl_internal.h"

typedef struct rule {
    const wk_schema *schema;
    char *schema_name, *table; /* the table split into schema and name */
    char *column;
    size_t col; /* where the column was last found: tried first */
} rule;

struct wk_pq_invalidator {
    wk_cache *cache;
    rule *rules;
    size_t n;
    uint64_t count;
    wk_buf id;
};

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* Public: see wirekit/pq_changes.h. */
WK_API void wk_pq_invalidator_free(wk_pq_invalidator *inv)
{
    if (inv == NULL) {
        return;
    }
    for (size_t i = 0; i < inv->n; i++) {
        free(inv->rules[i].schema_name);
        free(inv->rules[i].table);
        free(inv->rules[i].column);
    }
    free(inv->rules);
    wk_buf_free(&inv->id);
    free(inv);
}

/* Public: see wirekit/pq_changes.h. */
WK_API wk_status wk_pq_invalidator_new(wk_cache *cache, const wk_pq_invalidate_rule *rules,
                                       size_t n, wk_pq_invalidator **out, wk_error *err)
{
    *out = NULL;
    if (cache == NULL || rules == NULL || n == 0) {
        return wk__pg_fail(err, WK_ERR_ARG, 0, "a cache and at least one rule are needed");
    }
    wk_pq_invalidator *inv = calloc(1, sizeof *inv);
    if (inv == NULL || (inv->rules = calloc(n, sizeof *inv->rules)) == NULL) {
        free(inv);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    inv->cache = cache;
    inv->n = n;
    wk_buf_init(&inv->id, NULL, WK_CACHE_KEY_MAX);
    for (size_t i = 0; i < n; i++) {
        const wk_pq_invalidate_rule *r = &rules[i];
        if (r->schema == NULL || r->table == NULL || r->column == NULL || r->table[0] == '\0' ||
            r->column[0] == '\0') {
            wk_pq_invalidator_free(inv);
            return wk__pg_fail(err, WK_ERR_ARG, i, "a rule without entity, table or column");
        }
        const char *dot = strchr(r->table, '.');
        rule *d = &inv->rules[i];
        d->schema = r->schema;
        d->schema_name = dot != NULL ? dup_n(r->table, (size_t)(dot - r->table))
                                     : dup_n("public", 6);
        d->table = dot != NULL ? dup_n(dot + 1, strlen(dot + 1)) : dup_n(r->table, strlen(r->table));
        d->column = dup_n(r->column, strlen(r->column));
        if (d->schema_name == NULL || d->table == NULL || d->column == NULL) {
            wk_pq_invalidator_free(inv);
            return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory");
        }
    }
    *out = inv;
    return WK_OK;
}

/* Whether rule `r` names table `t`; finds the column when it does. */
static wk_status match(wk_pq_changes *s, rule *r, const wk_pq_change_table *t, bool *yes,
                       wk_error *err)
{
    *yes = strcmp(r->table, t->name) == 0 && strcmp(r->schema_name, t->schema) == 0;
    if (!*yes || (r->col < t->ncols && strcmp(t->cols[r->col].name, r->column) == 0)) {
        return WK_OK;
    }
    for (size_t i = 0; i < t->ncols; i++) {
        if (strcmp(t->cols[i].name, r->column) == 0) {
            r->col = i;
            return WK_OK;
        }
    }
    return wk__repl_fail(s, WK_ERR_ARG, err, "the rule's column is not in the table",
                         "column \"%s\" is not a column of %s", r->column, t->qualified);
}

/* Invalidates the entity named by column r->col of `row`. */
static wk_status invalidate(wk_pq_invalidator *inv, wk_pq_changes *s, const rule *r,
                            const wk_pq_change *ch, const wk_pq_value *row, wk_error *err)
{
    wk_buf_clear(&inv->id);
    wk_status st = wk_pq_changes_value_text(s, ch, row, r->col, &inv->id, err);
    if (st != WK_OK) {
        return st;
    }
    st = wk_cache_invalidate(inv->cache, r->schema, (const char *)inv->id.data, inv->id.len, err);
    if (st != WK_OK) {
        return wk__repl_fail(s, st, err, err != NULL ? err->msg : "invalidation failed",
                             "invalidating %s %.*s: %s", r->schema->name, (int)inv->id.len,
                             (const char *)inv->id.data,
                             err != NULL && err->msg != NULL ? err->msg : wk_status_str(st));
    }
    inv->count++;
    return WK_OK;
}

/* Whether two values are the same bytes. */
static bool same_value(const wk_pq_value *a, const wk_pq_value *b)
{
    return a->kind == b->kind && a->len == b->len &&
           (a->len == 0 || memcmp(a->ptr, b->ptr, a->len) == 0);
}

/* Public: see wirekit/pq_changes.h. */
WK_API wk_status wk_pq_invalidator_apply(wk_pq_invalidator *inv, wk_pq_changes *s,
                                         const wk_pq_change *ch, wk_error *err)
{
    if (ch->op == WK_PQ_CHANGE_COMMIT || ch->table == NULL) {
        return WK_OK;
    }
    for (size_t i = 0; i < inv->n; i++) {
        rule *r = &inv->rules[i];
        bool yes = false;
        wk_status st = match(s, r, ch->table, &yes, err);
        if (st != WK_OK || !yes) {
            if (st != WK_OK) {
                return st;
            }
            continue;
        }
        if (ch->op == WK_PQ_CHANGE_TRUNCATE) {
            return wk__repl_fail(s, WK_ERR_UNSUPPORTED, err, "a truncate of a cached table",
                                 "%s was truncated: its cached entities cannot be named",
                                 ch->table->qualified);
        }
        const wk_pq_value *old = ch->old_row != NULL ? &ch->old_row[r->col] : NULL;
        if (ch->op == WK_PQ_CHANGE_DELETE &&
            (old == NULL || (old->kind != WK_PQ_VALUE_TEXT && old->kind != WK_PQ_VALUE_BINARY))) {
            return wk__repl_fail(s, WK_ERR_ARG, err, "the id is not in the replica identity",
                                 "a delete of %s without column \"%s\": make it part of the "
                                 "replica identity (or REPLICA IDENTITY FULL)",
                                 ch->table->qualified, r->column);
        }
        if (ch->new_row != NULL) {
            st = invalidate(inv, s, r, ch, ch->new_row, err);
        }
        /* a key that changed: the old id is stale as well */
        bool old_differs = old != NULL &&
                           (old->kind == WK_PQ_VALUE_TEXT || old->kind == WK_PQ_VALUE_BINARY) &&
                           (ch->new_row == NULL || !same_value(old, &ch->new_row[r->col]));
        if (st == WK_OK && old_differs) {
            st = invalidate(inv, s, r, ch, ch->old_row, err);
        }
        if (st != WK_OK) {
            return st;
        }
    }
    return WK_OK;
}

/* Public: see wirekit/pq_changes.h. */
WK_API uint64_t wk_pq_invalidator_count(const wk_pq_invalidator *inv)
{
    return inv->count;
}

typedef struct run_ctx {
    wk_pq_changes *s;
    wk_pq_invalidator *inv;
} run_ctx;

static wk_status run_one(void *ctx, const wk_pq_change *ch, wk_error *err)
{
    run_ctx *c = ctx;
    return wk_pq_invalidator_apply(c->inv, c->s, ch, err);
}

/* Public: see wirekit/pq_changes.h. */
WK_API wk_status wk_pq_changes_run_invalidator(wk_pq_changes *s, wk_pq_invalidator *inv,
                                               wk_error *err)
{
    run_ctx c = {s, inv};
    return wk_pq_changes_run(s, run_one, &c, err);
}
