/*
 * Statements a schema implies (wirekit/pq.h): the SELECT a loader runs and the upsert a write
 * runs, their column lists taken from the descriptor's fields in order, so a struct is read
 * and written without a column named twice by hand. Field names are quoted identifiers
 * (`"username"`, a `"` inside doubled); the table and the key column are SQL text the caller
 * gives as it would write them in a statement (a schema-qualified `app.users` included).
 * wk_pq_pool_upsert runs the upsert on a pooled connection with the struct's fields as its
 * parameters (wk_pq_struct_params).
 */
#include <stdio.h>
#include <string.h>

#include "wirekit/pq.h"

/* The statement being built and the first failure of an append (later appends do nothing,
 * so the text is never cut in the middle and continued). */
typedef struct sql_out {
    wk_buf *b;
    wk_status st;
} sql_out;

static void put(sql_out *o, const char *p, size_t n)
{
    if (o->st == WK_OK) {
        o->st = wk_buf_append(o->b, p, n);
    }
}

static void put_str(sql_out *o, const char *s)
{
    put(o, s, strlen(s));
}

/* Appends `name[0..len)` as a quoted identifier. */
static void quoted(sql_out *o, const char *name, size_t len)
{
    put(o, "\"", 1);
    for (size_t i = 0; i < len; i++) {
        put(o, name[i] == '"' ? "\"\"" : name + i, name[i] == '"' ? 2 : 1);
    }
    put(o, "\"", 1);
}

/* Appends the parameter `$n`. */
static void param(sql_out *o, uint32_t n)
{
    char t[12];
    int len = snprintf(t, sizeof t, "$%u", (unsigned)n);
    put(o, t, (size_t)len);
}

WK_API wk_status wk_pq_struct_sql(const wk_schema *s, const char *table, const char *key,
                                  unsigned what, wk_buf *out, wk_error *err)
{
    if (s == NULL || table == NULL || key == NULL || s->root != WK_SCHEMA_ROOT_STRUCT ||
        s->nfields == 0 || (what != WK_PQ_SQL_SELECT && what != WK_PQ_SQL_UPSERT)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "pq: a struct schema with fields, a table, a "
                                                "key column and WK_PQ_SQL_SELECT or _UPSERT");
    }
    size_t start = out->len;
    sql_out o = {out, WK_OK};
    put_str(&o, what == WK_PQ_SQL_SELECT ? "SELECT " : "INSERT INTO ");
    if (what == WK_PQ_SQL_UPSERT) {
        put_str(&o, table);
        put_str(&o, " (");
        put_str(&o, key);
        put_str(&o, ", ");
    }
    for (uint32_t i = 0; i < s->nfields; i++) { /* the columns, in field order */
        quoted(&o, s->fields[i].name, s->fields[i].name_len);
        put_str(&o, i + 1 < s->nfields ? ", " : "");
    }
    if (what == WK_PQ_SQL_SELECT) {
        put_str(&o, " FROM ");
        put_str(&o, table);
        put_str(&o, " WHERE ");
        put_str(&o, key);
        put_str(&o, " = $1");
    } else {
        put_str(&o, ") VALUES ($1");
        for (uint32_t i = 0; i < s->nfields; i++) {
            put_str(&o, ", ");
            param(&o, i + 2);
        }
        put_str(&o, ") ON CONFLICT (");
        put_str(&o, key);
        put_str(&o, ") DO UPDATE SET ");
        for (uint32_t i = 0; i < s->nfields; i++) {
            quoted(&o, s->fields[i].name, s->fields[i].name_len);
            put_str(&o, " = ");
            param(&o, i + 2);
            put_str(&o, i + 1 < s->nfields ? ", " : "");
        }
    }
    put(&o, "", 1); /* NUL-terminated */
    if (o.st != WK_OK) {
        out->len = start;
        return wk_error_set(err, o.st, 0, "pq: the statement does not fit the buffer");
    }
    out->len--; /* the NUL stays behind the text, outside its length */
    return WK_OK;
}

WK_API wk_status wk_pq_pool_upsert(wk_pq_pool *p, const char *table, const char *key,
                                   const char *id, size_t id_len, const wk_schema *s,
                                   const void *obj, wk_error *err)
{
    wk_buf sql;
    wk_buf_init(&sql, NULL, 0);
    wk_status st = wk_pq_struct_sql(s, table, key, WK_PQ_SQL_UPSERT, &sql, err);
    if (st != WK_OK) {
        wk_buf_free(&sql);
        return st;
    }
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    size_t n = 1 + (size_t)s->nfields;
    wk_pq_param *params = wk_arena_alloc(&arena, n * sizeof *params, _Alignof(wk_pq_param));
    wk_slice idv = {id, id_len};
    wk_schema_error serr;
    if (params == NULL) {
        st = wk_error_set(err, WK_ERR_NOMEM, 0, "pq: out of memory");
    } else {
        params[0] = (wk_pq_param){WK_PG_KIND_TEXT, &idv, 0};
        st = wk_pq_struct_params(s, obj, NULL, s->nfields, params + 1, &arena, &serr);
        if (st != WK_OK && err != NULL) {
            *err = serr.base;
        }
    }
    wk_pq_conn *conn = NULL;
    if (st == WK_OK) {
        st = wk_pq_pool_acquire(p, 0, &conn, err);
    }
    if (st == WK_OK) {
        PGresult *r = NULL;
        st = wk_pq_exec(conn, (const char *)sql.data, params, n, &r, err);
        PQclear(r);
        wk_pq_pool_release(p, conn);
    }
    wk_arena_free(&arena);
    wk_buf_free(&sql);
    return st;
}
