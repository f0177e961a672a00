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
 * Codec structs and their OID arrays are allocated in one block per type and owned by the
 * new snapshot (wk_pg_registry_adopt), so they live exactly as long as it.
 */
#include <stdlib.h>

#include "pg/pg_interface.h"
#include "pq/pq_internal.h"

static const char catalog_sql[] =
    "SELECT t.oid, t.typname::text, t.typtype::text, t.typbasetype, t.typarray, "
    "  CASE WHEN t.typtype = 'c' THEN (SELECT array_agg(a.attname::text ORDER BY a.attnum) "
    "    FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 "
    "    AND NOT a.attisdropped) END, "
    "  CASE WHEN t.typtype = 'c' THEN (SELECT array_agg(a.atttypid ORDER BY a.attnum) "
    "    FROM pg_attribute a WHERE a.attrelid = t.typrelid AND a.attnum > 0 "
    "    AND NOT a.attisdropped) END, "
    "  (SELECT r.rngsubtype FROM pg_range r WHERE r.rngtypid = t.oid "
    "    OR r.rngmultitypid = t.oid) "
    "FROM pg_type t "
    "WHERE t.oid >= 16384 AND (t.typtype IN ('e', 'd', 'c', 'r', 'm') "
    "  OR (t.typtype = 'b' AND t.typname IN ('citext', 'hstore'))) "
    "ORDER BY t.typtype = 'd', t.oid";

typedef struct owned {
    wk_pg_codec codec;
    wk_pg_oid oids[1];
    wk_pg_oid array_oids[1];
    wk_pg_composite *comp; /* composite types: attribute names and types */
    wk_pg_range_type rng;   /* ranges and multiranges: the subtype */
} owned;

/* The adopted memory of one catalog codec: its composite description and the block itself. */
static void owned_free(void *p)
{
    owned *o = p;
    wk_pg_composite_free(o->comp);
    free(o);
}

/* PostgreSQL's FirstNormalObjectId: every OID below it is the system's own (built-in types,
 * including those the registry has no codec for); the catalog query asks for none of them. */
#define FIRST_NORMAL_OID 16384u

/* Whether a type the catalog claims may have `oid`: a database's own type, one the base
 * registry does not know (built-in or the caller's) and no earlier row took. A hostile or
 * broken server may claim anything (an enum with OID 23 would make int4 decode as a label);
 * such a claim is not believed. */
static bool oid_is_free(const wk_pg_registry *base, const wk_pg_codec *const *list, size_t n,
                        wk_pg_oid oid)
{
    bool is_array = false;
    if (oid < FIRST_NORMAL_OID || wk_pg_registry_codec_for(base, oid, &is_array) != NULL) {
        return false;
    }
    for (size_t j = 0; j < n; j++) {
        if (list[j]->oids[0] == oid || list[j]->array_oids[0] == oid) {
            return false;
        }
    }
    return true;
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

/* Contract in pq_internal.h: the catalog query pq_connect.c sends behind the settings. */
const char *wk__pq_catalog_sql(void)
{
    return catalog_sql;
}

/* Contract in pq_internal.h: one codec per row of the catalog result (in its order, so that
 * domains find their base), added to base as the connection's snapshot; rows whose type
 * cannot be served are skipped, not an error. */
wk_status wk__pq_catalog_build(wk_pq_conn *c, wk_pg_registry *base, const PGresult *r,
                               wk_pg_registry **out, wk_error *err)
{
    *out = NULL;
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQnfields(r) < 8) {
        wk__pq_set_message(c, "the catalog query returned no types");
        return wk__pg_fail(err, WK_ERR_SERVER, 0, "the catalog query failed");
    }
    int rows = PQntuples(r);
    owned **made = calloc((size_t)rows + 1, sizeof *made);
    const wk_pg_codec **list = calloc((size_t)rows + 1, sizeof *list);
    if (made == NULL || list == NULL) {
        free(made);
        free(list);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for catalog types");
    }
    size_t n = 0;
    wk_status st = WK_OK;
    /* Domains come last (ORDER BY), so a domain over an enum finds the enum's codec. */
    for (int i = 0; i < rows && st == WK_OK; i++) {
        wk_pg_oid oid = get_oid(r, i, 0);
        const char *name = PQgetvalue(r, i, 1);
        char kind = PQgetvalue(r, i, 2)[0];
        wk_pg_oid basetype = get_oid(r, i, 3);
        wk_pg_oid arr = get_oid(r, i, 4);
        if (!oid_is_free(base, list, n, oid)) {
            continue; /* never replaces a type known already */
        }
        if (arr == oid || (arr != 0 && !oid_is_free(base, list, n, arr))) {
            arr = 0; /* the type is taken; its claimed array type is not */
        }
        const wk_pg_codec *model = NULL;
        wk_pg_composite *comp = NULL;
        if (kind == 'e' || (kind == 'b' && strcmp(name, "citext") == 0)) {
            model = builtin_named("text");
        } else if (kind == 'b' && strcmp(name, "hstore") == 0) {
            model = wk_pg_hstore_codec();
        } else if (kind == 'd') {
            for (size_t j = 0; j < n; j++) {
                if (list[j]->oids[0] == basetype) {
                    model = list[j];
                }
            }
            bool is_array = false;
            if (model == NULL) {
                model = wk_pg_registry_codec_for(base, basetype, &is_array);
            }
            if (model == NULL || is_array) {
                continue; /* a domain over an unknown type or over an array: not handled */
            }
        } else if (kind == 'c') {
            const char *names = PQgetvalue(r, i, 5);
            const char *types = PQgetvalue(r, i, 6);
            st = wk_pg_composite_new(names, strlen(names), types, strlen(types), &comp, err);
            if (st != WK_OK) {
                break;
            }
            model = wk_pg_composite_codec();
        } else if (kind == 'r' || kind == 'm') {
            model = wk_pg_range_codec(kind == 'm');
        }
        if (model == NULL) {
            continue;
        }
        owned *o = calloc(1, sizeof *o);
        if (o == NULL) {
            wk_pg_composite_free(comp);
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for catalog types");
            break;
        }
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
        made[n] = o;
        list[n] = &o->codec;
        n++;
    }
    wk_pg_registry *next = NULL;
    if (st == WK_OK && n > 0) {
        st = wk_pg_registry_add(base, list, n, &next, err);
    } else if (st == WK_OK) {
        next = wk_pg_registry_ref(base);
    }
    /* The new snapshot owns the codec blocks; on failure they are freed here. */
    for (size_t j = 0; j < n; j++) {
        if (st != WK_OK || n == 0 || wk_pg_registry_adopt(next, made[j], owned_free) != WK_OK) {
            owned_free(made[j]);
            if (st == WK_OK) {
                st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for catalog types");
            }
        }
    }
    free(made);
    free(list);
    if (st != WK_OK) {
        wk_pg_registry_unref(next);
        return st;
    }
    *out = next;
    return WK_OK;
}
