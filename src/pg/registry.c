/*
 * The codec registry: an immutable table built once from a codec list, its slow twin (the
 * oracle), copy-on-write snapshots and the cell that publishes them.
 *
 * Where it sits: a codec list (builtins.c's, plus the catalog types addons/pq/pq_catalog.c
 * finds: hstore, composites, enums, domains) -> wk_pg_registry_build here, once per snapshot
 * -> every lookup (plan.c per column, the pq glue per parameter, array.c per element type) is
 * a row and an index, no scan. A connection publishes its snapshots through a cell, so a
 * catalog load never disturbs the plans already using the previous snapshot.
 *
 * Layout: one row per registered type OID (scalar or array) holding, for every (format,
 * kind), the index of a resolved decoder and encoder. OIDs below 4096 (every built-in type)
 * find their row through a direct index; others through an open-addressing hash that stores
 * the full OID and compares it on every probe, so two types can never share an answer. The
 * winner of each slot is decided at build time by the same rule the oracle applies at lookup
 * time (highest rank, latest registered on ties), so the table is a cache of the scan that is
 * exact by construction, and the tests check it key by key.
 */
#include "pg/pg_interface.h"
#include "pg/pg_oracle.h"

/* The nesting budget's count (pg_interface.h). */
_Thread_local unsigned wk__pg_nesting;

/* OIDs below this (every built-in type) find their row without hashing. */
#define DIRECT_OIDS 4096u
#define NK WK_PG_KIND_COUNT

/* One registered type OID: the codec that owns it (highest rank), and for each (format,
 * kind) the winning decoder and encoder, as indices into the registry's resolved tables. */
typedef struct row {
    wk_pg_oid oid;
    wk_pg_oid elem_oid; /* arrays: the element type */
    const wk_pg_codec *codec;
    bool is_array;
    uint32_t dec[2][NK]; /* index + 1 into decs; 0 = none */
    uint32_t enc[2][NK];
} row;

/* An open-addressing slot for OIDs past DIRECT_OIDS. */
typedef struct hslot {
    wk_pg_oid oid; /* 0 = empty (OID 0 is InvalidOid) */
    uint32_t row;
} hslot;

/* Memory a codec needs for as long as the registry lives (catalog codecs' OID lists and
 * names), with the function that frees it. */
typedef struct adopted {
    void *mem;
    void (*release)(void *mem);
} adopted;

/* An immutable snapshot, refcounted; its decoder and encoder tables are what every lookup
 * returns pointers into, so they live exactly as long as the snapshot. */
struct wk_pg_registry {
    size_t refs;
    const wk_allocator *alloc;
    wk_pg_registry *parent; /* snapshot this one extends (kept alive: its codecs are ours) */
    const wk_pg_codec **codecs;
    size_t ncodecs;
    row *rows;
    size_t nrows;
    hslot *hash;
    uint32_t hash_shift; /* 32 - log2(capacity) */
    size_t hash_cap;
    wk_pg_decoder *decs;
    size_t ndecs;
    wk_pg_encoder *encs;
    size_t nencs;
    uint32_t enc_default[2][NK];       /* index + 1 into encs */
    uint32_t enc_array_default[2][NK];
    adopted *adopted;
    size_t nadopted;
    uint32_t direct[DIRECT_OIDS]; /* row index + 1 */
};

/* ---- metadata helpers shared by the table build and the oracle ---- */

/* The kinds codec c decodes for one of its scalar OIDs, or for one of its array OIDs. */
static uint32_t cand_decode_kinds(const wk_pg_codec *c, bool is_array)
{
    return is_array ? wk__pg_array_decode_kinds(c) : c->decode_kinds;
}

/* The kinds codec c encodes, scalar or array. */
static uint32_t cand_encode_kinds(const wk_pg_codec *c, bool is_array)
{
    return is_array ? wk__pg_array_encode_kinds(c) : c->encode_kinds;
}

/* The function c decodes (f, k) with: its own, or array.c's for its array types. */
static wk_pg_decode_fn cand_decode_fn(const wk_pg_codec *c, bool is_array, int f, int k)
{
    return is_array ? wk__pg_array_dec[f][k] : c->decode[f][k];
}

/* The function c encodes (f, k) with: its own, or array.c's for its array types. */
static wk_pg_encode_fn cand_encode_fn(const wk_pg_codec *c, bool is_array, int f, int k)
{
    return is_array ? wk__pg_array_enc[f][k] : c->encode[f][k];
}

/* Refuses a codec whose metadata is inconsistent (no OIDs, an OID 0, masks with unknown or
 * generic-only kinds, native kinds it does not encode, a kind bit without its function or the
 * reverse), so that a lookup can trust the masks. */
static wk_status check_codec(const wk_pg_codec *c, size_t index, wk_error *err)
{
    if (c == NULL || c->oids == NULL || c->n_oids == 0) {
        return wk__pg_fail(err, WK_ERR_ARG, index, "codec has no type OIDs");
    }
    uint32_t all = (1u << NK) - 1;
    uint32_t generic_only = WK_PG_KIND_MASK(WK_PG_KIND_ARRAY);
    if ((c->formats & ~WK_PG_BOTH_FORMATS) != 0 || c->formats == 0 ||
        (c->decode_kinds & ~all) != 0 || (c->encode_kinds & ~all) != 0 ||
        ((c->decode_kinds | c->encode_kinds) & generic_only) != 0 ||
        (c->encode_kinds & WK_PG_KIND_MASK(WK_PG_KIND_EVENTS)) != 0 ||
        (c->native_kinds & ~c->encode_kinds) != 0) {
        return wk__pg_fail(err, WK_ERR_ARG, index, "codec metadata masks are invalid");
    }
    for (int f = 0; f < 2; f++) {
        bool fmt = (c->formats & WK_PG_FORMAT_MASK(f)) != 0;
        for (int k = 0; k < NK; k++) {
            bool dk = fmt && (c->decode_kinds & WK_PG_KIND_MASK(k)) != 0;
            bool ek = fmt && (c->encode_kinds & WK_PG_KIND_MASK(k)) != 0;
            if (dk != (c->decode[f][k] != NULL) || ek != (c->encode[f][k] != NULL)) {
                return wk__pg_fail(err, WK_ERR_ARG, index,
                                   "codec metadata disagrees with its functions");
            }
        }
    }
    for (size_t i = 0; i < c->n_oids; i++) {
        if (c->oids[i] == 0) {
            return wk__pg_fail(err, WK_ERR_ARG, index, "codec lists OID 0");
        }
    }
    return WK_OK;
}

/* ---- lookup ---- */

/* Fibonacci hashing of an OID into a table of 2^(32 - shift) slots. */
static inline uint32_t hash_oid(wk_pg_oid oid, uint32_t shift)
{
    return (uint32_t)(oid * 2654435761u) >> shift;
}

/* The row of oid: the direct index below DIRECT_OIDS, else a linear probe that compares the
 * full OID; NULL when the type is not registered. */
static inline const row *find_row(const wk_pg_registry *r, wk_pg_oid oid)
{
    uint32_t idx;
    if (oid < DIRECT_OIDS) {
        idx = r->direct[oid];
    } else {
        if (r->hash_cap == 0) {
            return NULL;
        }
        size_t mask = r->hash_cap - 1;
        size_t h = hash_oid(oid, r->hash_shift);
        for (;;) {
            const hslot *s = &r->hash[h];
            if (s->oid == oid) {
                idx = s->row;
                break;
            }
            if (s->oid == 0) {
                return NULL;
            }
            h = (h + 1) & mask;
        }
    }
    return idx != 0 ? &r->rows[idx - 1] : NULL;
}

/* Public (wirekit/pg.h): the resolved decoder of (oid, format, kind), NULL when none; it lives
 * as long as the registry. */
WK_API const wk_pg_decoder *wk_pg_registry_find_decoder(const wk_pg_registry *reg, wk_pg_oid oid,
                                                        wk_pg_format format, wk_pg_kind kind)
{
    if ((unsigned)format > 1 || (unsigned)kind >= NK) {
        return NULL;
    }
    const row *rw = find_row(reg, oid);
    if (rw == NULL) {
        return NULL;
    }
    uint32_t i = rw->dec[format][kind];
    return i != 0 ? &reg->decs[i - 1] : NULL;
}

/* Public: the resolved encoder of a known target type. */
WK_API const wk_pg_encoder *wk_pg_registry_find_encoder_for(const wk_pg_registry *reg,
                                                            wk_pg_oid oid, wk_pg_format format,
                                                            wk_pg_kind kind)
{
    if ((unsigned)format > 1 || (unsigned)kind >= NK) {
        return NULL;
    }
    const row *rw = find_row(reg, oid);
    if (rw == NULL) {
        return NULL;
    }
    uint32_t i = rw->enc[format][kind];
    return i != 0 ? &reg->encs[i - 1] : NULL;
}

/* Public: the encoder of the type that is `kind`'s natural type (a parameter whose type the
 * caller leaves to wirekit). */
WK_API const wk_pg_encoder *wk_pg_registry_find_encoder(const wk_pg_registry *reg,
                                                        wk_pg_format format, wk_pg_kind kind)
{
    if ((unsigned)format > 1 || (unsigned)kind >= NK) {
        return NULL;
    }
    uint32_t i = reg->enc_default[format][kind];
    return i != 0 ? &reg->encs[i - 1] : NULL;
}

/* Public: the same for an array of elem_kind. */
WK_API const wk_pg_encoder *wk_pg_registry_find_array_encoder(const wk_pg_registry *reg,
                                                              wk_pg_format format,
                                                              wk_pg_kind elem_kind)
{
    if ((unsigned)format > 1 || (unsigned)elem_kind >= NK) {
        return NULL;
    }
    uint32_t i = reg->enc_array_default[format][elem_kind];
    return i != 0 ? &reg->encs[i - 1] : NULL;
}

/* Contract in pg_interface.h: the element encoder of an array encoder, looked up in the
 * registry the encoder came from. */
const wk_pg_encoder *wk__pg_elem_encoder(const wk_pg_encoder *e, wk_pg_kind kind)
{
    if (e->reg == NULL) {
        return NULL;
    }
    return wk_pg_registry_find_encoder_for(e->reg, e->elem_oid, (wk_pg_format)e->format, kind);
}

/* Public: the codec owning oid, and whether oid is one of its array types. */
WK_API const wk_pg_codec *wk_pg_registry_codec_for(const wk_pg_registry *reg, wk_pg_oid oid,
                                                   bool *is_array)
{
    const row *rw = find_row(reg, oid);
    if (rw == NULL) {
        return NULL;
    }
    if (is_array != NULL) {
        *is_array = rw->is_array;
    }
    return rw->codec;
}

/* Public: the element type of an array type, 0 for anything else. */
WK_API wk_pg_oid wk_pg_registry_elem_oid(const wk_pg_registry *reg, wk_pg_oid oid)
{
    const row *rw = find_row(reg, oid);
    return rw != NULL && rw->is_array ? rw->elem_oid : 0;
}

/* Public: the registry's codec list, in registration order. */
WK_API const wk_pg_codec *const *wk_pg_registry_codecs(const wk_pg_registry *reg, size_t *n)
{
    *n = reg->ncodecs;
    return reg->codecs;
}

/* ---- the oracle: ask every codec ---- */

/* The slow, obvious lookup: the highest-ranked codec (the last one among equals) that handles
 * `oid` as a scalar or array type, in `format`, decoding into (or encoding from) `kind`.
 * Returns it with `*arr` (the OID is the codec's array type) and `*elem` (the element OID). */
static const wk_pg_codec *scan(const wk_pg_registry *reg, wk_pg_oid oid, wk_pg_format format,
                               wk_pg_kind kind, bool encode, int *arr, wk_pg_oid *elem)
{
    if ((unsigned)format > 1 || (unsigned)kind >= NK) {
        return NULL;
    }
    const wk_pg_codec *best = NULL;
    for (size_t ci = 0; ci < reg->ncodecs; ci++) {
        const wk_pg_codec *c = reg->codecs[ci];
        if ((c->formats & WK_PG_FORMAT_MASK(format)) == 0) {
            continue;
        }
        for (size_t i = 0; i < c->n_oids; i++) {
            for (int a = 0; a < 2; a++) {
                wk_pg_oid o = a ? (c->array_oids != NULL ? c->array_oids[i] : 0) : c->oids[i];
                if (o != oid || o == 0) {
                    continue;
                }
                uint32_t kinds = encode ? cand_encode_kinds(c, a) : cand_decode_kinds(c, a);
                if ((kinds & WK_PG_KIND_MASK(kind)) == 0) {
                    continue;
                }
                if (best == NULL || c->rank >= best->rank) {
                    best = c;
                    *arr = a;
                    *elem = a ? c->oids[i] : 0;
                }
            }
        }
    }
    return best;
}

/* Contract in pg_oracle.h: scan() over every codec, then the winner's function. */
bool wk__pg_registry_scan_decoder(const wk_pg_registry *reg, wk_pg_oid oid,
                                        wk_pg_format format, wk_pg_kind kind,
                                        wk_pg_decoder *out)
{
    int arr = 0;
    wk_pg_oid elem = 0;
    const wk_pg_codec *c = scan(reg, oid, format, kind, false, &arr, &elem);
    if (c == NULL) {
        return false;
    }
    memset(out, 0, sizeof *out);
    out->fn = cand_decode_fn(c, arr, format, kind);
    out->codec = c;
    out->reg = reg;
    out->oid = oid;
    out->elem_oid = elem;
    out->format = (uint8_t)format;
    out->kind = (uint8_t)kind;
    return true;
}

/* Contract in pg_oracle.h. */
bool wk__pg_registry_scan_encoder_for(const wk_pg_registry *reg, wk_pg_oid oid,
                                            wk_pg_format format, wk_pg_kind kind,
                                            wk_pg_encoder *out)
{
    int arr = 0;
    wk_pg_oid elem = 0;
    const wk_pg_codec *c = scan(reg, oid, format, kind, true, &arr, &elem);
    if (c == NULL) {
        return false;
    }
    memset(out, 0, sizeof *out);
    out->fn = cand_encode_fn(c, arr, format, kind);
    out->codec = c;
    out->reg = reg;
    out->oid = oid;
    out->elem_oid = elem;
    out->format = (uint8_t)format;
    out->kind = (uint8_t)kind;
    return true;
}

/* The codec that is the default type of `kind` (for arrays: that also has an array type). */
static const wk_pg_codec *scan_native(const wk_pg_codec *const *codecs, size_t n,
                                      wk_pg_kind kind, wk_pg_format format, bool need_array)
{
    const wk_pg_codec *win = NULL;
    for (size_t ci = 0; ci < n; ci++) {
        const wk_pg_codec *c = codecs[ci];
        if ((c->native_kinds & WK_PG_KIND_MASK(kind)) == 0 ||
            (c->formats & WK_PG_FORMAT_MASK(format)) == 0) {
            continue;
        }
        if (need_array && (c->array_oids == NULL || c->array_oids[0] == 0)) {
            continue;
        }
        if (win == NULL || c->rank >= win->rank) {
            win = c;
        }
    }
    return win;
}

/* Contract in pg_oracle.h: the native codec of kind (or of an array of elem_kind). */
bool wk__pg_registry_scan_encoder(const wk_pg_registry *reg, wk_pg_format format,
                                        wk_pg_kind kind, wk_pg_kind elem_kind,
                                        wk_pg_encoder *out)
{
    if ((unsigned)format > 1 || (unsigned)kind >= NK || (unsigned)elem_kind >= NK) {
        return false;
    }
    bool arr = kind == WK_PG_KIND_ARRAY;
    const wk_pg_codec *c =
        scan_native((const wk_pg_codec *const *)reg->codecs, reg->ncodecs, arr ? elem_kind : kind,
                    format, arr);
    if (c == NULL) {
        return false;
    }
    return wk__pg_registry_scan_encoder_for(reg, arr ? c->array_oids[0] : c->oids[0], format,
                                           kind, out);
}

/* ---- building ---- */

/* Frees a snapshot whose last reference went: adopted memory first (codecs may point into
 * it), then the tables, then the reference on the snapshot it extended. */
static void registry_free(wk_pg_registry *r)
{
    const wk_allocator *a = r->alloc;
    for (size_t i = 0; i < r->nadopted; i++) {
        r->adopted[i].release(r->adopted[i].mem);
    }
    wk_free(a, r->adopted, r->nadopted * sizeof(adopted));
    wk_free(a, r->codecs, r->ncodecs * sizeof(*r->codecs));
    wk_free(a, r->rows, r->nrows * sizeof(row));
    wk_free(a, r->hash, r->hash_cap * sizeof(hslot));
    wk_free(a, r->decs, r->ndecs * sizeof(wk_pg_decoder));
    wk_free(a, r->encs, r->nencs * sizeof(wk_pg_encoder));
    wk_pg_registry *parent = r->parent;
    wk_free(a, r, sizeof *r);
    wk_pg_registry_unref(parent);
}

/* Finds or adds the row of `oid`. */
static row *row_for(wk_pg_registry *r, wk_pg_oid oid, size_t *nrows)
{
    uint32_t *slot;
    if (oid < DIRECT_OIDS) {
        slot = &r->direct[oid];
    } else {
        size_t mask = r->hash_cap - 1;
        size_t h = hash_oid(oid, r->hash_shift);
        while (r->hash[h].oid != 0 && r->hash[h].oid != oid) {
            h = (h + 1) & mask;
        }
        if (r->hash[h].oid == 0) {
            r->hash[h].oid = oid;
            r->hash[h].row = 0;
        }
        slot = &r->hash[h].row;
    }
    if (*slot == 0) {
        row *rw = &r->rows[*nrows];
        memset(rw, 0, sizeof *rw);
        rw->oid = oid;
        *slot = (uint32_t)++*nrows;
    }
    return &r->rows[*slot - 1];
}

/* Build-time winners of every slot: (codec, is_array, element OID) per (row, format, kind). */
typedef struct winner {
    const wk_pg_codec *codec;
    bool arr;
    wk_pg_oid elem;
} winner;

/* Lets codec c compete for row rw's owner and for each of its (format, kind) slots. */
static void consider(row *rw, winner *wd, winner *we, const wk_pg_codec *c, bool arr,
                     wk_pg_oid elem_oid)
{
    /* Same rule as the oracle: highest rank wins, the latest registered on ties. */
    if (rw->codec == NULL || c->rank >= rw->codec->rank) {
        rw->codec = c;
        rw->is_array = arr;
        rw->elem_oid = arr ? elem_oid : 0;
    }
    uint32_t dk = cand_decode_kinds(c, arr), ek = cand_encode_kinds(c, arr);
    for (int f = 0; f < 2; f++) {
        if ((c->formats & WK_PG_FORMAT_MASK(f)) == 0) {
            continue;
        }
        for (int k = 0; k < NK; k++) {
            winner *d = &wd[f * NK + k], *e = &we[f * NK + k];
            if ((dk & WK_PG_KIND_MASK(k)) && (d->codec == NULL || c->rank >= d->codec->rank)) {
                *d = (winner){c, arr, elem_oid};
            }
            if ((ek & WK_PG_KIND_MASK(k)) && (e->codec == NULL || c->rank >= e->codec->rank)) {
                *e = (winner){c, arr, elem_oid};
            }
        }
    }
}

/* Public (wirekit/pg.h): checks every codec, makes a row per OID (array OIDs included), lets
 * every codec compete for every slot (consider), then resolves the winners into decoder and
 * encoder tables and the per-kind defaults. The codec list is copied; the codecs themselves
 * must outlive the registry (static, or adopted). */
WK_API wk_status wk_pg_registry_build(const wk_pg_codec *const *codecs, size_t n,
                                      const wk_allocator *alloc, wk_pg_registry **out,
                                      wk_error *err)
{
    *out = NULL;
    size_t cands = 0;
    for (size_t i = 0; i < n; i++) {
        wk_status st = check_codec(codecs[i], i, err);
        if (st != WK_OK) {
            return st;
        }
        cands += codecs[i]->n_oids * 2;
    }
    wk_pg_registry *r = wk_alloc(alloc, sizeof *r);
    if (r == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the registry");
    }
    memset(r, 0, sizeof *r);
    r->refs = 1;
    r->alloc = alloc;
    r->ncodecs = n;
    r->codecs = n ? wk_alloc(alloc, n * sizeof(*r->codecs)) : NULL;
    r->rows = cands ? wk_alloc(alloc, cands * sizeof(row)) : NULL;
    r->nrows = cands; /* allocated count, for freeing */
    size_t cap = 16;
    while (cap < cands * 2) {
        cap *= 2;
    }
    r->hash_cap = cap;
    r->hash_shift = 32;
    for (size_t c = cap; c > 1; c >>= 1) {
        r->hash_shift--;
    }
    r->hash = wk_alloc(alloc, cap * sizeof(hslot));
    if ((n && r->codecs == NULL) || (cands && r->rows == NULL) || r->hash == NULL) {
        registry_free(r);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the registry");
    }
    memset(r->hash, 0, cap * sizeof(hslot));
    if (n) {
        memcpy(r->codecs, codecs, n * sizeof(*r->codecs));
    }
    /* Pass 1: rows and the winner of every slot. */
    size_t nrows = 0;
    size_t slots = cands * 2 * NK;
    winner *wd = cands ? wk_alloc(alloc, slots * sizeof(winner)) : NULL;
    winner *we = cands ? wk_alloc(alloc, slots * sizeof(winner)) : NULL;
    if (cands && (wd == NULL || we == NULL)) {
        wk_free(alloc, wd, slots * sizeof(winner));
        wk_free(alloc, we, slots * sizeof(winner));
        registry_free(r);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the registry");
    }
    if (cands) {
        memset(wd, 0, slots * sizeof(winner));
        memset(we, 0, slots * sizeof(winner));
    }
    for (size_t ci = 0; ci < n; ci++) {
        const wk_pg_codec *c = codecs[ci];
        for (size_t i = 0; i < c->n_oids; i++) {
            for (int arr = 0; arr < 2; arr++) {
                wk_pg_oid o = arr ? (c->array_oids != NULL ? c->array_oids[i] : 0) : c->oids[i];
                if (o == 0) {
                    continue;
                }
                row *rw = row_for(r, o, &nrows);
                size_t ri = (size_t)(rw - r->rows);
                consider(rw, wd + ri * 2 * NK, we + ri * 2 * NK, c, arr, c->oids[i]);
            }
        }
    }
    size_t ndec = 0, nenc = 0;
    for (size_t s = 0; s < nrows * 2 * NK; s++) {
        ndec += wd[s].codec != NULL;
        nenc += we[s].codec != NULL;
    }
    r->decs = ndec ? wk_alloc(alloc, ndec * sizeof(wk_pg_decoder)) : NULL;
    r->encs = nenc ? wk_alloc(alloc, nenc * sizeof(wk_pg_encoder)) : NULL;
    r->ndecs = ndec;
    r->nencs = nenc;
    if ((ndec && r->decs == NULL) || (nenc && r->encs == NULL)) {
        wk_free(alloc, wd, slots * sizeof(winner));
        wk_free(alloc, we, slots * sizeof(winner));
        registry_free(r);
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the registry");
    }
    /* Pass 2: materialise decoders and encoders. */
    size_t di = 0, ei = 0;
    for (size_t ri = 0; ri < nrows; ri++) {
        row *rw = &r->rows[ri];
        for (int f = 0; f < 2; f++) {
            for (int k = 0; k < NK; k++) {
                const winner *w = &wd[(ri * 2 + (size_t)f) * NK + (size_t)k];
                if (w->codec != NULL) {
                    wk_pg_decoder *d = &r->decs[di];
                    memset(d, 0, sizeof *d);
                    d->fn = cand_decode_fn(w->codec, w->arr, f, k);
                    d->codec = w->codec;
                    d->reg = r;
                    d->oid = rw->oid;
                    d->elem_oid = w->arr ? w->elem : 0;
                    d->format = (uint8_t)f;
                    d->kind = (uint8_t)k;
                    rw->dec[f][k] = (uint32_t)++di;
                }
                w = &we[(ri * 2 + (size_t)f) * NK + (size_t)k];
                if (w->codec != NULL) {
                    wk_pg_encoder *e = &r->encs[ei];
                    memset(e, 0, sizeof *e);
                    e->fn = cand_encode_fn(w->codec, w->arr, f, k);
                    e->codec = w->codec;
                    e->reg = r;
                    e->oid = rw->oid;
                    e->elem_oid = w->arr ? w->elem : 0;
                    e->format = (uint8_t)f;
                    e->kind = (uint8_t)k;
                    rw->enc[f][k] = (uint32_t)++ei;
                }
            }
        }
    }
    wk_free(alloc, wd, slots * sizeof(winner));
    wk_free(alloc, we, slots * sizeof(winner));
    /* Pass 3: array decoders of TEXT/EVENTS/VALUE get their element decoder (VALUE trees are
     * built from the element's events). */
    for (size_t i = 0; i < ndec; i++) {
        wk_pg_decoder *d = &r->decs[i];
        if (d->elem_oid != 0 && d->kind != WK_PG_KIND_ARRAY) {
            wk_pg_kind ek = d->kind == WK_PG_KIND_VALUE ? WK_PG_KIND_EVENTS
                                                        : (wk_pg_kind)d->kind;
            d->elem = wk_pg_registry_find_decoder(r, d->elem_oid, (wk_pg_format)d->format, ek);
        }
    }
    /* Defaults by kind. */
    for (int f = 0; f < 2; f++) {
        for (int k = 0; k < NK; k++) {
            const wk_pg_codec *c = scan_native(codecs, n, (wk_pg_kind)k, (wk_pg_format)f, false);
            if (c != NULL) {
                const row *rw = find_row(r, c->oids[0]);
                r->enc_default[f][k] = rw != NULL ? rw->enc[f][k] : 0;
            }
            c = scan_native(codecs, n, (wk_pg_kind)k, (wk_pg_format)f, true);
            if (c != NULL) {
                const row *rw = find_row(r, c->array_oids[0]);
                r->enc_array_default[f][k] = rw != NULL ? rw->enc[f][WK_PG_KIND_ARRAY] : 0;
            }
        }
    }
    *out = r;
    return WK_OK;
}

/* Public: a registry of the built-in codecs. */
WK_API wk_status wk_pg_registry_new_default(const wk_allocator *alloc, wk_pg_registry **out,
                                            wk_error *err)
{
    size_t n;
    const wk_pg_codec *const *c = wk_pg_builtin_codecs(&n);
    return wk_pg_registry_build(c, n, alloc, out, err);
}

/* Public: a new snapshot with base's codecs followed by `codecs` (so they win ties); base
 * stays valid and unchanged. */
WK_API wk_status wk_pg_registry_add(const wk_pg_registry *base, const wk_pg_codec *const *codecs,
                                    size_t n, wk_pg_registry **out, wk_error *err)
{
    *out = NULL;
    size_t total;
    if (!wk_size_add(base->ncodecs, n, &total)) {
        return wk__pg_fail(err, WK_ERR_LIMIT, 0, "too many codecs");
    }
    const wk_pg_codec **all = wk_alloc(base->alloc, total * sizeof(*all));
    if (all == NULL) {
        return wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the registry");
    }
    memcpy(all, base->codecs, base->ncodecs * sizeof(*all));
    if (n) {
        memcpy(all + base->ncodecs, codecs, n * sizeof(*all));
    }
    wk_status st = wk_pg_registry_build(all, total, base->alloc, out, err);
    wk_free(base->alloc, all, total * sizeof(*all));
    if (st == WK_OK) {
        /* base's adopted codecs must outlive this snapshot. */
        (*out)->parent = wk_pg_registry_ref((wk_pg_registry *)base);
    }
    return st;
}

/* Public: reg takes ownership of mem and calls release when its last reference goes. */
WK_API wk_status wk_pg_registry_adopt(wk_pg_registry *reg, void *mem, void (*release)(void *mem))
{
    adopted *na = wk_realloc(reg->alloc, reg->adopted, reg->nadopted * sizeof(adopted),
                             (reg->nadopted + 1) * sizeof(adopted));
    if (na == NULL) {
        return WK_ERR_NOMEM;
    }
    reg->adopted = na;
    reg->adopted[reg->nadopted].mem = mem;
    reg->adopted[reg->nadopted].release = release;
    reg->nadopted++;
    return WK_OK;
}

/* Public: one more reference; NULL passes through. */
WK_API wk_pg_registry *wk_pg_registry_ref(wk_pg_registry *reg)
{
    if (reg != NULL) {
        __atomic_fetch_add(&reg->refs, 1, __ATOMIC_RELAXED);
    }
    return reg;
}

/* Public: drops a reference; the last one frees the snapshot. */
WK_API void wk_pg_registry_unref(wk_pg_registry *reg)
{
    if (reg != NULL && __atomic_sub_fetch(&reg->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        registry_free(reg);
    }
}

/* ---- the publishing cell ---- */

/* The publishing cell: readers take the current snapshot lock-free; writers (catalog loads)
 * build the next one and publish it. */
struct wk_pg_registry_cell {
    wk_pg_registry *current; /* read with an atomic acquire load */
    wk_pg_registry **all;    /* every snapshot published, each holding one cell reference */
    size_t nall;
    int lock;                /* writers only: a spin lock (writes are rare: connect time) */
};

/* Public: a cell publishing `initial`, whose reference it takes. */
WK_API wk_status wk_pg_registry_cell_new(wk_pg_registry *initial, wk_pg_registry_cell **out)
{
    wk_pg_registry_cell *c = wk_alloc(initial->alloc, sizeof *c);
    if (c == NULL) {
        return WK_ERR_NOMEM;
    }
    c->all = wk_alloc(initial->alloc, sizeof(*c->all));
    if (c->all == NULL) {
        wk_free(initial->alloc, c, sizeof *c);
        return WK_ERR_NOMEM;
    }
    c->all[0] = initial;
    c->nall = 1;
    c->lock = 0;
    __atomic_store_n(&c->current, initial, __ATOMIC_RELEASE);
    *out = c;
    return WK_OK;
}

/* Public: a reference on the current snapshot. */
WK_API wk_pg_registry *wk_pg_registry_cell_acquire(wk_pg_registry_cell *cell)
{
    /* Safe without a lock: the cell holds a reference on every snapshot it ever published. */
    wk_pg_registry *r = __atomic_load_n(&cell->current, __ATOMIC_ACQUIRE);
    return wk_pg_registry_ref(r);
}

/* Public: publishes current + codecs as the new current snapshot; the old ones stay alive in
 * the cell until it is freed, which is what makes acquire safe without a lock. */
WK_API wk_status wk_pg_registry_cell_add(wk_pg_registry_cell *cell,
                                         const wk_pg_codec *const *codecs, size_t n,
                                         wk_error *err)
{
    while (__atomic_exchange_n(&cell->lock, 1, __ATOMIC_ACQUIRE) != 0) {
    }
    wk_pg_registry *cur = cell->current;
    wk_pg_registry *next;
    wk_status st = wk_pg_registry_add(cur, codecs, n, &next, err);
    if (st == WK_OK) {
        wk_pg_registry **na = wk_realloc(cur->alloc, cell->all, cell->nall * sizeof(*na),
                                         (cell->nall + 1) * sizeof(*na));
        if (na == NULL) {
            wk_pg_registry_unref(next);
            st = wk__pg_fail(err, WK_ERR_NOMEM, 0, "out of memory for the registry cell");
        } else {
            cell->all = na;
            cell->all[cell->nall++] = next;
            __atomic_store_n(&cell->current, next, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&cell->lock, 0, __ATOMIC_RELEASE);
    return st;
}

/* Public: drops the cell's references on every snapshot it published. */
WK_API void wk_pg_registry_cell_free(wk_pg_registry_cell *cell)
{
    if (cell == NULL) {
        return;
    }
    const wk_allocator *a = cell->all[0]->alloc;
    size_t n = cell->nall;
    wk_pg_registry **all = cell->all;
    wk_free(a, cell, sizeof *cell);
    for (size_t i = n; i-- > 0;) {
        wk_pg_registry_unref(all[i]);
    }
    wk_free(a, all, n * sizeof(*all));
}
