/*
 * Decode plans: the codec of every result column resolved once, so that rows decode with no
 * lookups at all -- a loop over columns calling a function pointer per value.
 *
 * Where it sits: a result's column descriptions (OID, format; from libpq in addons/pq or from
 * a COPY header) + the caller's C kinds -> wk_pg_plan_build here, which asks the registry
 * (registry.c) once per column -> then per row: the row's value pointers and lengths (a
 * PGresult row, or a COPY row split by copy.c) -> the column's codec function (int.c,
 * varlena.c, codec_generic.c, ...) -> a C struct, events (JSON / MessagePack) or a value tree.
 *
 * A plan keeps, per column, the decoder of the requested C kind plus the EVENTS and VALUE
 * decoders (rows as maps of events for JSON / MessagePack, or as trees) and the column name.
 * It holds a reference on its registry, so the decoders stay valid however long the plan
 * lives.
 */
#include "pg/pg_interface.h"

/* One column: its decoders (registry rows, alive as long as the registry reference), where
 * its value goes in the caller's row struct, and its name (in the plan's `names` block). */
typedef struct plan_col {
    const wk_pg_decoder *dec;
    const wk_pg_decoder *ev; /* EVENTS decoder of the column, or NULL */
    const wk_pg_decoder *val; /* VALUE decoder of the column, or NULL */
    size_t offset;
    const char *name;
    size_t name_len;
} plan_col;

/* The plan: one allocation with the columns inline, plus one block of NUL-terminated names. */
struct wk_pg_plan {
    const wk_allocator *alloc;
    wk_pg_registry *reg;
    size_t ncols;
    char *names;
    size_t names_len;
    plan_col cols[];
};

/* Public (wirekit/pg.h). Only the requested kind's decoder is required; a column without an
 * EVENTS or VALUE decoder fails later, in emit_row / value_row, and only if asked. */
WK_API wk_status wk_pg_plan_build(const wk_pg_registry *reg, const wk_pg_plan_col *cols, size_t n,
                                  const wk_allocator *alloc, wk_pg_plan **out, wk_error *err)
{
    *out = NULL;
    size_t bytes, names_len = 0;
    if (!wk_size_mul(n, sizeof(plan_col), &bytes) ||
        !wk_size_add(bytes, sizeof(wk_pg_plan), &bytes)) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "too many columns");
    }
    for (size_t i = 0; i < n; i++) {
        names_len += (cols[i].name != NULL ? strlen(cols[i].name) : 0) + 1;
    }
    wk_pg_plan *p = wk_alloc(alloc, bytes);
    if (p == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the plan");
    }
    p->alloc = alloc;
    p->ncols = n;
    p->names_len = names_len;
    p->names = names_len ? wk_alloc(alloc, names_len) : NULL;
    if (names_len && p->names == NULL) {
        wk_free(alloc, p, bytes);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the plan");
    }
    char *np = p->names;
    for (size_t i = 0; i < n; i++) {
        const wk_pg_plan_col *c = &cols[i];
        plan_col *pc = &p->cols[i];
        pc->dec = wk_pg_registry_find_decoder(reg, c->oid, c->format, c->kind);
        pc->ev = wk_pg_registry_find_decoder(reg, c->oid, c->format, WK_PG_KIND_EVENTS);
        pc->val = wk_pg_registry_find_decoder(reg, c->oid, c->format, WK_PG_KIND_VALUE);
        pc->offset = c->offset;
        size_t len = c->name != NULL ? strlen(c->name) : 0;
        if (len) {
            memcpy(np, c->name, len);
        }
        np[len] = '\0';
        pc->name = np;
        pc->name_len = len;
        np += len + 1;
        if (pc->dec == NULL) {
            wk_free(alloc, p->names, names_len);
            wk_free(alloc, p, bytes);
            return wk__pg_fail(err, WK_ERR_NOT_FOUND, i,
                               "no decoder for a column's type, format and C kind");
        }
    }
    p->reg = wk_pg_registry_ref((wk_pg_registry *)reg);
    *out = p;
    return WK_OK;
}

/* Public: drops the registry reference and frees both blocks; NULL is a no-op. */
WK_API void wk_pg_plan_free(wk_pg_plan *plan)
{
    if (plan == NULL) {
        return;
    }
    wk_pg_registry_unref(plan->reg);
    wk_free(plan->alloc, plan->names, plan->names_len);
    wk_free(plan->alloc, plan, sizeof(wk_pg_plan) + plan->ncols * sizeof(plan_col));
}

/* Public: the column count. */
WK_API size_t wk_pg_plan_ncols(const wk_pg_plan *plan)
{
    return plan->ncols;
}

/* Public: column col's decoder of the requested kind, NULL past the end. */
WK_API const wk_pg_decoder *wk_pg_plan_decoder(const wk_pg_plan *plan, size_t col)
{
    return col < plan->ncols ? plan->cols[col].dec : NULL;
}

/* Public: each non-NULL value (lens[i] >= 0) decoded into row + the column's offset; NULL
 * values are only flagged in `nulls` (when given) and leave the field untouched. The first
 * failure stops the row, with the fields before it already written. */
WK_API wk_status wk_pg_plan_decode_row(const wk_pg_plan *plan, const uint8_t *const *vals,
                                       const int *lens, void *row, bool *nulls, wk_arena *arena,
                                       wk_error *err)
{
    uint8_t *base = row;
    for (size_t i = 0; i < plan->ncols; i++) {
        const plan_col *c = &plan->cols[i];
        if (lens[i] < 0) {
            if (nulls != NULL) {
                nulls[i] = true;
            }
            continue;
        }
        if (nulls != NULL) {
            nulls[i] = false;
        }
        wk_status st = c->dec->fn(c->dec, vals[i], (size_t)lens[i], base + c->offset, arena, err);
        if (st != WK_OK) {
            return st;
        }
    }
    return WK_OK;
}

/* One event to the sink; on failure the sink's own error fills err. */
static wk_status send(const wk_pg_events *ev, const wk_event *x, wk_error *err)
{
    wk_status st = ev->sink->event(ev->sink->self, x);
    if (st != WK_OK && err != NULL) {
        ev->sink->error(ev->sink->self, err);
    }
    return st;
}

/* Public: the row as one map event, column names as keys, SQL NULL as nil, each value through
 * its EVENTS decoder (which writes straight to the caller's sink; no arena is needed). */
WK_API wk_status wk_pg_plan_emit_row(const wk_pg_plan *plan, const uint8_t *const *vals,
                                     const int *lens, const wk_pg_events *ev, wk_error *err)
{
    wk_event x;
    x.f32 = false;
    x.type = WK_EV_MAP;
    x.v.count = (uint32_t)plan->ncols;
    wk_status st = send(ev, &x, err);
    for (size_t i = 0; i < plan->ncols && st == WK_OK; i++) {
        const plan_col *c = &plan->cols[i];
        x.type = WK_EV_STR;
        x.v.str.ptr = c->name;
        x.v.str.len = c->name_len;
        st = send(ev, &x, err);
        if (st != WK_OK) {
            break;
        }
        if (lens[i] < 0) {
            x.type = WK_EV_NIL;
            st = send(ev, &x, err);
            continue;
        }
        if (c->ev == NULL) {
            return wk__pg_fail(err, WK_ERR_NOT_FOUND, i, "a column's type has no event decoder");
        }
        st = c->ev->fn(c->ev, vals[i], (size_t)lens[i], (void *)ev, NULL, err);
    }
    if (st == WK_OK) {
        x.type = WK_EV_END;
        st = send(ev, &x, err);
    }
    return st;
}

/* Public: the row as a map value in `arena`; the keys point at the plan's names (valid while
 * the plan lives), the values are built in the arena by each column's VALUE decoder. */
WK_API wk_status wk_pg_plan_value_row(const wk_pg_plan *plan, const uint8_t *const *vals,
                                      const int *lens, wk_arena *arena, wk_value *out,
                                      wk_error *err)
{
    if (plan->ncols > UINT32_MAX) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "too many columns");
    }
    wk_pair *pairs = plan->ncols ? wk_arena_alloc(arena, plan->ncols * sizeof(wk_pair), 8) : NULL;
    if (plan->ncols && pairs == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a row");
    }
    for (size_t i = 0; i < plan->ncols; i++) {
        const plan_col *c = &plan->cols[i];
        wk_value *k = &pairs[i].key;
        memset(&pairs[i], 0, sizeof pairs[i]);
        k->type = WK_VAL_STR;
        k->len = (uint32_t)c->name_len;
        k->u.str = c->name; /* lives as long as the plan */
        if (lens[i] < 0) {
            pairs[i].val.type = WK_VAL_NIL;
            continue;
        }
        const wk_pg_decoder *vd = c->val;
        if (vd == NULL) {
            return wk__pg_fail(err, WK_ERR_NOT_FOUND, i, "a column's type has no tree decoder");
        }
        wk_status st = vd->fn(vd, vals[i], (size_t)lens[i], &pairs[i].val, arena, err);
        if (st != WK_OK) {
            return st;
        }
    }
    memset(out, 0, sizeof *out);
    out->type = WK_VAL_MAP;
    out->len = (uint32_t)plan->ncols;
    out->u.pairs = pairs;
    return WK_OK;
}

/* Public (wirekit/pg.h): a row description over the plan's columns: each column's name, and
 * the type and format its decoder was resolved for (typmods are not in a plan: -1). */
WK_API wk_status wk_pg_rowdesc_from_plan(const wk_pg_plan *plan, const wk_pg_row_opts *opts,
                                         wk_pg_rowdesc **out, wk_error *err)
{
    *out = NULL;
    wk_pg_row_col *cols = wk_alloc(plan->alloc, (plan->ncols + 1) * sizeof *cols);
    if (cols == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for a row description");
    }
    for (size_t i = 0; i < plan->ncols; i++) {
        cols[i].name = plan->cols[i].name;
        cols[i].oid = plan->cols[i].dec->oid;
        cols[i].typmod = -1;
        cols[i].format = (wk_pg_format)plan->cols[i].dec->format;
    }
    wk_status st = wk_pg_rowdesc_new(plan->reg, cols, plan->ncols, opts, plan->alloc, out, err);
    wk_free(plan->alloc, cols, (plan->ncols + 1) * sizeof *cols);
    return st;
}
