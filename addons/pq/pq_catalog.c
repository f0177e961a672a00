/*
 * Per-connection types: one catalog query at connect time (sent by pq_connect.c behind the
 * session settings) finds the database's own types and turns each into a codec added to a
 * snapshot private to the connection.
 *
 * - enums: text-like (both wire formats carry the label), decode to STR;
 * - domains over a type the registry knows: the base type's codec under the domain's OIDs;
 * - arrays of any of these: through the codec's array OID (typarray);
 * - extension types found by name: citext (text-like) and hstore (its own codec, hstore.c);
 * - composite types: the record codec (src/pg/record.c) with the attribute names and types;
 * - range and multirange types: the generic range codecs (range.c) over their subtype, whose
 *   codec is found in the snapshot when a value is decoded (an unknown subtype fails there).
 * Codec structs and their OID arrays are allocated in one block per catalog read and owned by
 * the new snapshot (wk_pg_registry_adopt), so they live exactly as long as it.
 *
 * Memory is bounded by what is used, not by the database's size: every table has a row type,
 * but few are ever a column's type, so the connect skips those no column, domain or range
 * uses; a statement whose columns have such a type (a whole-row reference, `SELECT t FROM t`)
 * loads it when it is described (wk__pq_catalog_load_columns, the extended protocol and COPY
 * out) or, in the simple protocol, when a result's row description names it
 * (wk_pq_rowdesc_new; the connection is busy with that query's rows then, so the load runs
 * on a short connection of its own, which sees committed types only). Reads are capped
 * (WK__PQ_CATALOG_EAGER_MAX types at a time, WK__PQ_CATALOG_MAX per connection), and a read
 * of n types costs O(n) work and memory.
 */
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"

/* What the catalog query and the lazy load select for each type, in the order
 * wk__pq_catalog_build reads: OID, name, typtype, base type, array type, attribute names and
 * types (composites), range subtype (ranges and multiranges). */
#define CATALOG_COLUMNS                                                                        \
    "SELECT t.oid, t.typname::text, t.typtype::text, t.typbasetype, t.typarray, "            \
    "  CASE WHEN t.typtype = 'c' THEN (SELECT array_agg(a.attname::text ORDER BY a.attnum) " \
    "    FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 "                \
    "    AND NOT a.attisdropped) END, "                                                      \
    "  CASE WHEN t.typtype = 'c' THEN (SELECT array_agg(a.atttypid ORDER BY a.attnum) "      \
    "    FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 "                \
    "    AND NOT a.attisdropped) END, "                                                      \
    "  (SELECT r.rngsubtype FROM pg_range r WHERE r.rngtypid = t.oid "                       \
    "    OR r.rngmultitypid = t.oid) "                                                       \
    "FROM pg_type t "

/* The kinds of type a codec is made for. */
#define CATALOG_KINDS                                                                          \
    "(t.typtype IN ('e', 'd', 'c', 'r', 'm') "                                               \
    "  OR (t.typtype = 'b' AND t.typname IN ('citext', 'hstore'))) "

#define STR2(x) #x
#define STR(x) STR2(x)

/* The catalog query at connect. Every table has a row type, most of which no column ever
 * has (they appear only in whole-row references): those are left to the lazy load, so that
 * a database of many tables costs nothing here. A table's row type that is some column's
 * type (or its array's), a domain's base or a range's subtype is loaded, as are standalone
 * composite types (CREATE TYPE ... AS). At most WK__PQ_CATALOG_EAGER_MAX types. */
static const char catalog_sql[] =
    CATALOG_COLUMNS
    "WHERE t.oid >= 16384 AND " CATALOG_KINDS
    "AND (t.typtype <> 'c' "
    "  OR t.typrelid IN (SELECT c.oid FROM pg_class c WHERE c.relkind = 'c') "
    "  OR t.oid IN (SELECT coalesce(nullif(u.typelem, 0), u.oid) FROM pg_attribute a "
    "    JOIN pg_type u ON u.oid = a.atttypid "
    "    WHERE a.atttypid >= 16384 AND a.attnum > 0 AND NOT a.attisdropped "
    "    UNION SELECT typbasetype FROM pg_type WHERE typbasetype >= 16384 "
    "    UNION SELECT rngsubtype FROM pg_range WHERE rngsubtype >= 16384)) "
    "ORDER BY t.typtype = 'd', t.oid LIMIT " STR(WK__PQ_CATALOG_EAGER_MAX);

/* The lazy load: the types whose OIDs (or array OIDs) the caller lists in place of %s (an
 * array literal of OIDs) and every type they depend on (element, domain base, attribute and
 * range subtypes, recursively; UNION ends cycles), in the catalog query's shape. */
static const char lazy_head[] =
    "WITH RECURSIVE want(oid) AS ("
    "  SELECT unnest('";
static const char lazy_tail[] =
    "'::oid[]) UNION"
    "  SELECT d.dep FROM want w CROSS JOIN LATERAL ("
    "    SELECT t.typelem AS dep FROM pg_type t WHERE t.oid = w.oid"
    "    UNION ALL SELECT t.typbasetype FROM pg_type t WHERE t.oid = w.oid"
    "    UNION ALL SELECT a.atttypid FROM pg_type t JOIN pg_attribute a"
    "      ON a.attrelid = t.typrelid WHERE t.oid = w.oid AND a.attnum > 0"
    "      AND NOT a.attisdropped"
    "    UNION ALL SELECT r.rngsubtype FROM pg_range r WHERE r.rngtypid = w.oid"
    "      OR r.rngmultitypid = w.oid"
    "  ) d WHERE d.dep >= 16384) "
    CATALOG_COLUMNS
    "WHERE t.oid IN (SELECT oid FROM want) AND " CATALOG_KINDS
    "ORDER BY t.typtype = 'd', t.oid LIMIT " STR(WK__PQ_CATALOG_EAGER_MAX);

typedef struct owned {
    wk_pg_codec codec;
    wk_pg_oid oids[1];
    wk_pg_oid array_oids[1];
    wk_pg_composite *comp; /* composite types: attribute names and types */
    wk_pg_range_type rng;   /* ranges and multiranges: the subtype */
} owned;

/* The codecs of one catalog read, allocated as one array and adopted by the snapshot as one
 * piece (one allocation and one adoption per read, not per type). */
typedef struct owned_set {
    size_t n;
    owned items[];
} owned_set;

/* The adopted memory of one catalog read: each composite description, then the set. */
static void owned_set_free(void *p)
{
    owned_set *set = p;
    for (size_t i = 0; i < set->n; i++) {
        wk_pg_composite_free(set->items[i].comp);
    }
    free(set);
}

/* PostgreSQL's FirstNormalObjectId: every OID below it is the system's own (built-in types,
 * including those the registry has no codec for); the catalog query asks for none of them. */
#define FIRST_NORMAL_OID 16384u

/* The OIDs (type and array) the rows of this read took so far, each with its codec's index:
 * an open-addressing table, so that a read of n types costs O(n), not O(n^2). */
typedef struct oid_set {
    wk_pg_oid *oid; /* 0 = empty */
    uint32_t *at;   /* index into the read's codecs */
    size_t mask;
} oid_set;

static bool oid_set_init(oid_set *t, size_t rows)
{
    size_t cap = 16;
    while (cap < rows * 4) {
        cap *= 2;
    }
    t->oid = calloc(cap, sizeof *t->oid);
    t->at = calloc(cap, sizeof *t->at);
    t->mask = cap - 1;
    return t->oid != NULL && t->at != NULL;
}

static void oid_set_free(oid_set *t)
{
    free(t->oid);
    free(t->at);
}

/* The slot of `oid`: its own, or the empty one where it would go. */
static size_t oid_set_slot(const oid_set *t, wk_pg_oid oid)
{
    size_t h = (size_t)(oid * 2654435761u) & t->mask;
    while (t->oid[h] != 0 && t->oid[h] != oid) {
        h = (h + 1) & t->mask;
    }
    return h;
}

/* The codec index that took `oid` in this read, or -1. */
static long oid_set_find(const oid_set *t, wk_pg_oid oid)
{
    size_t h = oid_set_slot(t, oid);
    return t->oid[h] == oid && oid != 0 ? (long)t->at[h] : -1;
}

static void oid_set_put(oid_set *t, wk_pg_oid oid, uint32_t at)
{
    if (oid != 0) {
        size_t h = oid_set_slot(t, oid);
        t->oid[h] = oid;
        t->at[h] = at;
    }
}

/* Whether a type the catalog claims may have `oid`: a database's own type, one the base
 * registry does not know (built-in or the caller's) and no earlier row took. A hostile or
 * broken server may claim anything (an enum with OID 23 would make int4 decode as a label);
 * such a claim is not believed. */
static bool oid_is_free(const wk_pg_registry *base, const oid_set *taken, wk_pg_oid oid)
{
    bool is_array = false;
    return oid >= FIRST_NORMAL_OID && wk_pg_registry_codec_for(base, oid, &is_array) == NULL &&
           oid_set_find(taken, oid) < 0;
}

/* The built-in codec called `name` (citext and enums borrow text's), or NULL. */
static const wk_pg_codec *builtin_named(const char *name)
{
    size_t n;
    const wk_pg_codec *const *cs = wk_pg_builtin_codecs(&n);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(cs[i]->name, name) == 0) {
            return cs[i];
        }
    }
    return NULL;
}

/* An OID column (text digits); 0 for NULL or anything that is not a uint32. Read here by
 * hand: strtoul may follow the locale, and the add-on calls only the core's public API. */
static uint32_t get_oid(const PGresult *r, int row, int col)
{
    if (PQgetisnull(r, row, col)) {
        return 0;
    }
    const char *s = PQgetvalue(r, row, col);
    uint64_t v = 0;
    size_t i = 0;
    for (; s[i] >= '0' && s[i] <= '9'; i++) {
        v = v * 10 + (uint64_t)(s[i] - '0');
        if (v > UINT32_MAX) {
            return 0;
        }
    }
    return i > 0 && s[i] == '\0' ? (uint32_t)v : 0;
}


/* Records the context of a catalog row that cannot be read (the connection's message) and
 * returns st: which type, and what is wrong where. */
static wk_status row_error(wk_pq_conn *c, wk_status st, const char *name, wk_pg_oid oid,
                           const char *what, const wk_error *e)
{
    if (c != NULL) {
        char m[sizeof c->message];
        snprintf(m, sizeof m,
                 "the catalog's type \"%.64s\" (OID %u): its %s cannot be read: %s (at byte "
                 "%zu)",
                 name, oid, what, e != NULL && e->msg != NULL ? e->msg : wk_status_str(st),
                 e != NULL ? e->offset : 0);
        wk__pq_set_message(c, m);
    }
    return st;
}

/* Contract in pq_internal.h: one codec per row of the catalog result (in its order, so that
 * domains find their base), added to base as the connection's snapshot; rows whose type
 * cannot be served are skipped, not an error. At most WK__PQ_CATALOG_EAGER_MAX rows are read,
 * and no more than WK__PQ_CATALOG_MAX types per connection (c->catalog_types). */
wk_status wk__pq_catalog_build(wk_pq_conn *c, wk_pg_registry *base, const PGresult *r,
                               wk_pg_registry **out, wk_error *err)
{
    *out = NULL;
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) < 8) {
        if (c != NULL) {
            wk__pq_set_message(c, "the catalog query returned no types");
        }
        return wk__pg_fail(err, WK_ERR_SERVER, 0, "the catalog query failed");
    }
    size_t had = c != NULL ? c->catalog_types : 0;
    size_t room = had < WK__PQ_CATALOG_MAX ? WK__PQ_CATALOG_MAX - had : 0;
    size_t rows = (size_t)PQntuples(r);
    rows = rows > WK__PQ_CATALOG_EAGER_MAX ? WK__PQ_CATALOG_EAGER_MAX : rows;
    rows = rows > room ? room : rows;
    owned_set *set = calloc(1, sizeof *set + (rows + 1) * sizeof(owned));
    const wk_pg_codec **list = calloc(rows + 1, sizeof *list);
    oid_set taken;
    bool have_set = oid_set_init(&taken, rows + 1);
    if (set == NULL || list == NULL || !have_set) {
        free(set);
        free(list);
        oid_set_free(&taken);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for catalog types");
    }
    size_t n = 0;
    wk_status st = WK_OK;
    /* Domains come last (ORDER BY), so a domain over an enum finds the enum's codec. */
    for (int i = 0; i < (int)rows && st == WK_OK; i++) {
        wk_pg_oid oid = get_oid(r, i, 0);
        const char *name = PQgetvalue(r, i, 1);
        char kind = PQgetvalue(r, i, 2)[0];
        wk_pg_oid basetype = get_oid(r, i, 3);
        wk_pg_oid arr = get_oid(r, i, 4);
        if (!oid_is_free(base, &taken, oid)) {
            continue; /* never replaces a type known already */
        }
        if (arr == oid || (arr != 0 && !oid_is_free(base, &taken, arr))) {
            arr = 0; /* the type is taken; its claimed array type is not */
        }
        const wk_pg_codec *model = NULL;
        wk_pg_composite *comp = NULL;
        if (kind == 'e' || (kind == 'b' && strcmp(name, "citext") == 0)) {
            model = builtin_named("text");
        } else if (kind == 'b' && strcmp(name, "hstore") == 0) {
            model = wk_pg_hstore_codec();
        } else if (kind == 'd') {
            long at = oid_set_find(&taken, basetype);
            bool is_array = false;
            model = at >= 0 && list[at]->oids[0] == basetype
                        ? list[at]
                        : wk_pg_registry_codec_for(base, basetype, &is_array);
            if (model == NULL || is_array) {
                continue; /* a domain over an unknown type or over an array: not handled */
            }
        } else if (kind == 'c') {
            const char *names = PQgetvalue(r, i, 5);
            const char *types = PQgetvalue(r, i, 6);
            wk_error e = {0};
            st = wk_pg_composite_new(names, strlen(names), types, strlen(types), &comp, &e);
            if (st != WK_OK) {
                (void)row_error(c, st, name, oid, "attribute list", &e);
                if (err != NULL) {
                    *err = e;
                }
                break;
            }
            model = wk_pg_composite_codec();
        } else if (kind == 'r' || kind == 'm') {
            model = wk_pg_range_codec(kind == 'm');
        }
        if (model == NULL) {
            continue;
        }
        owned *o = &set->items[n];
        o->codec = *model;
        o->oids[0] = oid;
        o->array_oids[0] = arr;
        o->codec.name = model->name;
        o->codec.oids = o->oids;
        o->codec.array_oids = o->array_oids;
        o->codec.n_oids = 1;
        o->codec.native_kinds = 0; /* never the default type of a C kind */
        o->comp = comp;
        if (comp != NULL) {
            o->codec.data = comp;
        }
        if (kind == 'r' || kind == 'm') {
            o->rng.subtype = get_oid(r, i, 7);
            o->codec.data = &o->rng;
        }
        set->n = n + 1;
        list[n] = &o->codec;
        oid_set_put(&taken, oid, (uint32_t)n);
        oid_set_put(&taken, arr, (uint32_t)n);
        n++;
    }
    oid_set_free(&taken);
    wk_pg_registry *next = NULL;
    if (st == WK_OK && n > 0) {
        st = wk_pg_registry_add(base, list, n, &next, err);
    } else if (st == WK_OK) {
        next = wk_pg_registry_ref(base);
    }
    free(list);
    /* The new snapshot owns the codec set; on failure it is freed here. */
    if (st == WK_OK && n > 0 && wk_pg_registry_adopt(next, set, owned_set_free) != WK_OK) {
        st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for catalog types");
    } else if (st == WK_OK && n > 0) {
        set = NULL; /* adopted */
    }
    if (set != NULL) {
        owned_set_free(set);
    }
    if (st != WK_OK) {
        wk_pg_registry_unref(next);
        return st;
    }
    if (c != NULL) {
        c->catalog_types = had + n;
    }
    *out = next;
    return WK_OK;
}

/* Whether `oid` is a database's own type the snapshot does not know and no lazy load missed. */
static bool unknown(const wk_pq_conn *c, wk_pg_oid oid)
{
    bool is_array = false;
    if (oid < FIRST_NORMAL_OID || wk_pg_registry_codec_for(c->reg, oid, &is_array) != NULL) {
        return false;
    }
    for (size_t i = 0; i < 16; i++) {
        if (c->catalog_missed[i] == oid) {
            return false;
        }
    }
    return true;
}

/* Runs `sql` on a connection of its own, opened with c's parameters and waited for within c's
 * limits: c is busy streaming a query's rows (the simple protocol's, whose first row is
 * where its columns' types are seen), so it cannot ask. That session sees what is committed:
 * a type made earlier in the same query string is not there yet, and its values stay text. */
static wk_status run_aside(wk_pq_conn *c, const char *sql, PGresult **r)
{
    *r = NULL;
    PQconninfoOption *opts = PQconninfo(c->pg);
    size_t n = 0;
    for (PQconninfoOption *o = opts; o != NULL && o->keyword != NULL; o++) {
        n++;
    }
    const char **kw = calloc(n + 1, sizeof *kw), **val = calloc(n + 1, sizeof *val);
    wk_status st = opts != NULL && kw != NULL && val != NULL ? WK_OK : WK_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; st == WK_OK && i < n; i++) {
        if (opts[i].val != NULL) {
            kw[k] = opts[i].keyword;
            val[k++] = opts[i].val;
        }
    }
    wk_pq_conn aside;
    memset(&aside, 0, sizeof aside);
    aside.pg = st == WK_OK ? PQconnectdbParams(kw, val, 0) : NULL;
    aside.timeout_ms = c->timeout_ms;
    aside.idle_ms = c->idle_ms;
    if (st == WK_OK && PQstatus(aside.pg) == CONNECTION_OK) {
        st = wk__pq_run(&aside, sql, r, NULL);
    } else if (st == WK_OK) {
        st = WK_ERR_CONNECT;
    }
    wk__pq_clear_error(&aside);
    PQfinish(aside.pg);
    PQconninfoFree(opts);
    free(kw);
    free(val);
    return st;
}

/* Contract in pq_internal.h: the types of a described statement's columns that the snapshot
 * does not know, loaded with what they depend on (one round trip) into a new snapshot. */
bool wk__pq_catalog_load_columns(wk_pq_conn *c, const PGresult *desc)
{
    char list[1024];
    size_t len = 0;
    int nf = PQnfields(desc);
    for (int i = 0; i < nf && len + 16 < sizeof list; i++) {
        wk_pg_oid oid = PQftype(desc, i);
        if (unknown(c, oid)) {
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%u", len ? "," : "{", oid);
        }
    }
    if (len == 0 || c->catalog_types >= WK__PQ_CATALOG_MAX || c->broken) {
        return false;
    }
    list[len++] = '}';
    list[len] = '\0';
    size_t total = sizeof lazy_head + len + sizeof lazy_tail;
    char *sql = malloc(total);
    if (sql == NULL) {
        return false;
    }
    snprintf(sql, total, "%s%s%s", lazy_head, list, lazy_tail);
    PGresult *r = NULL;
    bool busy = PQisBusy(c->pg) || PQtransactionStatus(c->pg) == PQTRANS_ACTIVE ||
                PQpipelineStatus(c->pg) != PQ_PIPELINE_OFF;
    wk_status st = busy ? run_aside(c, sql, &r) : wk__pq_run(c, sql, &r, NULL);
    free(sql);
    wk_pg_registry *next = NULL;
    if (st == WK_OK && wk__pq_catalog_build(c, c->reg, r, &next, NULL) == WK_OK) {
        wk_pg_registry_unref(c->reg); /* plans made with it keep it: next's parent */
        c->reg = next;
    }
    PQclear(r);
    wk__pq_clear_error(c); /* a failed load leaves the types unknown, not an error */
    for (int i = 0; i < nf; i++) {
        wk_pg_oid oid = PQftype(desc, i);
        if (unknown(c, oid)) { /* no codec serves it (an extension's type): not asked again */
            c->catalog_missed[c->catalog_nmissed++ % 16u] = oid;
        }
    }
    return true;
}

/* Contract in pq_internal.h: the catalog query pq_connect.c sends behind the settings. */
const char *wk__pq_catalog_sql(void)
{
    return catalog_sql;
}
