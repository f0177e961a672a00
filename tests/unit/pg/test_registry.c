/*
 * The registry: the O(1) table must give exactly the slow scan's answer for every (OID,
 * format, kind), before and after codecs are added; snapshots are copy-on-write; a cell
 * publishes snapshots to readers that never lock.
 */
#include <pthread.h>
#include <stdlib.h>

#include "pg_test_util.h"
#include "pg/pg_oracle.h"
#include "wk_test.h"

static bool same_dec(const wk_pg_decoder *t, bool found, const wk_pg_decoder *s)
{
    if (t == NULL || !found) {
        return t == NULL && !found;
    }
    return t->fn == s->fn && t->codec == s->codec && t->oid == s->oid &&
           t->elem_oid == s->elem_oid && t->format == s->format && t->kind == s->kind;
}

static bool same_enc(const wk_pg_encoder *t, bool found, const wk_pg_encoder *s)
{
    if (t == NULL || !found) {
        return t == NULL && !found;
    }
    return t->fn == s->fn && t->codec == s->codec && t->oid == s->oid &&
           t->elem_oid == s->elem_oid && t->format == s->format && t->kind == s->kind;
}

/* Every OID any codec lists, plus neighbours and absent ones; returns mismatches. */
static size_t compare_all(const wk_pg_registry *r, size_t *checked)
{
    size_t n, bad = 0;
    const wk_pg_codec *const *cs = wk_pg_registry_codecs(r, &n);
    wk_pg_oid *oids = malloc((n * 8 + 8) * sizeof *oids);
    size_t no = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < cs[i]->n_oids; j++) {
            oids[no++] = cs[i]->oids[j];
            oids[no++] = cs[i]->oids[j] + 1;
            if (cs[i]->array_oids != NULL) {
                oids[no++] = cs[i]->array_oids[j];
            }
        }
    }
    oids[no++] = 0;
    oids[no++] = 4095;
    oids[no++] = 4096;
    oids[no++] = 123456789;
    oids[no++] = UINT32_MAX;
    for (size_t i = 0; i < no; i++) {
        for (int f = 0; f < 2; f++) {
            for (int k = 0; k < WK_PG_KIND_COUNT; k++) {
                wk_pg_decoder sd;
                bool sf = wk__pg_registry_scan_decoder(r, oids[i], (wk_pg_format)f,
                                                      (wk_pg_kind)k, &sd);
                const wk_pg_decoder *td =
                    wk_pg_registry_find_decoder(r, oids[i], (wk_pg_format)f, (wk_pg_kind)k);
                bad += !same_dec(td, sf, &sd);
                wk_pg_encoder se;
                bool ef = wk__pg_registry_scan_encoder_for(r, oids[i], (wk_pg_format)f,
                                                          (wk_pg_kind)k, &se);
                const wk_pg_encoder *te =
                    wk_pg_registry_find_encoder_for(r, oids[i], (wk_pg_format)f, (wk_pg_kind)k);
                bad += !same_enc(te, ef, &se);
                *checked += 2;
            }
        }
    }
    for (int f = 0; f < 2; f++) {
        for (int k = 0; k < WK_PG_KIND_COUNT; k++) {
            wk_pg_encoder se;
            bool ef = wk__pg_registry_scan_encoder(r, (wk_pg_format)f, (wk_pg_kind)k, WK_PG_KIND_BOOL, &se);
            if (k != WK_PG_KIND_ARRAY) {
                bad += !same_enc(wk_pg_registry_find_encoder(r, (wk_pg_format)f, (wk_pg_kind)k),
                                 ef, &se);
            }
            ef = wk__pg_registry_scan_encoder(r, (wk_pg_format)f, WK_PG_KIND_ARRAY, (wk_pg_kind)k, &se);
            bad += !same_enc(
                wk_pg_registry_find_array_encoder(r, (wk_pg_format)f, (wk_pg_kind)k), ef, &se);
            *checked += 2;
        }
    }
    free(oids);
    return bad;
}

WK_TEST(test_pg_registry_table_equals_the_scan_for_every_key)
{
    size_t checked = 0;
    CHECK_EQ(compare_all(pgt_reg(), &checked), 0);
    CHECK(checked > 5000);
}

static const wk_pg_codec *builtin(const char *name)
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

WK_TEST(test_pg_registry_table_equals_the_scan_after_additions)
{
    /* A citext-like type, an int4 override with a higher rank, a text codec of equal rank
     * registered later (it must win), and 1000 types above the direct-index range. */
    static wk_pg_oid citext[1] = {70001}, citext_arr[1] = {70002};
    static wk_pg_oid int4o[1] = {WK_PG_OID_INT4};
    static wk_pg_oid texto[1] = {WK_PG_OID_TEXT};
    wk_pg_codec c1 = *builtin("text");
    c1.name = "citext";
    c1.oids = citext;
    c1.array_oids = citext_arr;
    c1.n_oids = 1;
    c1.native_kinds = 0;
    wk_pg_codec c2 = *builtin("int4");
    c2.oids = int4o;
    c2.array_oids = NULL;
    c2.rank = 5;
    wk_pg_codec c3 = *builtin("text");
    c3.oids = texto;
    c3.array_oids = NULL;
    c3.n_oids = 1;
    const wk_pg_codec *add[] = {&c1, &c2, &c3};
    wk_pg_registry *r1;
    CHECK_OK(wk_pg_registry_add(pgt_reg(), add, 3, &r1, NULL));
    size_t checked = 0;
    CHECK_EQ(compare_all(r1, &checked), 0);
    CHECK(wk_pg_registry_find_decoder(r1, WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I32)->codec ==
          &c2);
    CHECK(wk_pg_registry_find_decoder(r1, WK_PG_OID_TEXT, WK_PG_TEXT, WK_PG_KIND_STR)->codec ==
          &c3);
    /* arrays of int4 still resolve through the built-in codec's array OID */
    CHECK(wk_pg_registry_find_decoder(r1, WK_PG_OID_INT4_ARRAY, WK_PG_BINARY, WK_PG_KIND_TEXT) !=
          NULL);
    const wk_pg_decoder *cd =
        wk_pg_registry_find_decoder(r1, 70002, WK_PG_BINARY, WK_PG_KIND_TEXT);
    CHECK(cd != NULL && cd->elem_oid == 70001 && cd->elem != NULL);
    /* The base snapshot did not change. */
    CHECK(wk_pg_registry_find_decoder(pgt_reg(), 70001, WK_PG_TEXT, WK_PG_KIND_STR) == NULL);
    CHECK(wk_pg_registry_find_decoder(pgt_reg(), WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I32)
              ->codec != &c2);

    enum { MANY = 1000 };
    wk_pg_codec *many = calloc(MANY, sizeof *many);
    wk_pg_oid *moids = calloc(MANY * 2, sizeof *moids);
    const wk_pg_codec **mp = calloc(MANY, sizeof *mp);
    for (int i = 0; i < MANY; i++) {
        many[i] = *builtin(i % 2 ? "int8" : "text");
        moids[2 * i] = 100000u + (wk_pg_oid)i * 7u;
        moids[2 * i + 1] = 900000u + (wk_pg_oid)i * 7u;
        many[i].oids = &moids[2 * i];
        many[i].array_oids = &moids[2 * i + 1];
        many[i].n_oids = 1;
        many[i].native_kinds = 0;
        many[i].rank = i % 3;
        mp[i] = &many[i];
    }
    wk_pg_registry *r2;
    CHECK_OK(wk_pg_registry_add(r1, mp, MANY, &r2, NULL));
    wk_pg_registry_unref(r1); /* r2 keeps r1 alive (it uses r1's codecs) */
    checked = 0;
    CHECK_EQ(compare_all(r2, &checked), 0);
    const wk_pg_decoder *d =
        wk_pg_registry_find_decoder(r2, 100000u + 7u * 999u, WK_PG_BINARY, WK_PG_KIND_I64);
    CHECK(d != NULL && d->codec == &many[999]);
    CHECK(wk_pg_registry_find_decoder(r2, 100001u, WK_PG_BINARY, WK_PG_KIND_STR) == NULL);
    wk_pg_registry_unref(r2);
    free(many);
    free(moids);
    free(mp);
}

WK_TEST(test_pg_registry_rejects_codecs_whose_metadata_lies)
{
    wk_pg_codec c = *builtin("int4");
    c.decode_kinds |= WK_PG_KIND_MASK(WK_PG_KIND_UUID); /* no function for it */
    const wk_pg_codec *cs[] = {&c};
    wk_pg_registry *r;
    wk_error err = {0};
    CHECK_STATUS(wk_pg_registry_build(cs, 1, NULL, &r, &err), WK_ERR_ARG);
    CHECK(err.msg != NULL);
    c = *builtin("int4");
    c.n_oids = 0;
    CHECK_STATUS(wk_pg_registry_build(cs, 1, NULL, &r, &err), WK_ERR_ARG);
    c = *builtin("int4");
    c.formats = WK_PG_FORMAT_MASK(WK_PG_BINARY); /* text functions present */
    CHECK_STATUS(wk_pg_registry_build(cs, 1, NULL, &r, &err), WK_ERR_ARG);
}

WK_TEST(test_pg_registry_defaults_by_kind)
{
    const wk_pg_registry *r = pgt_reg();
    static const struct {
        wk_pg_kind k;
        wk_pg_oid oid;
    } want[] = {
        {WK_PG_KIND_BOOL, WK_PG_OID_BOOL},   {WK_PG_KIND_I16, WK_PG_OID_INT2},
        {WK_PG_KIND_I32, WK_PG_OID_INT4},    {WK_PG_KIND_I64, WK_PG_OID_INT8},
        {WK_PG_KIND_F32, WK_PG_OID_FLOAT4},  {WK_PG_KIND_F64, WK_PG_OID_FLOAT8},
        {WK_PG_KIND_STR, WK_PG_OID_TEXT},    {WK_PG_KIND_TIMESTAMP, WK_PG_OID_TIMESTAMP},
        {WK_PG_KIND_NUMERIC, WK_PG_OID_NUMERIC}, {WK_PG_KIND_INET, WK_PG_OID_INET},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const wk_pg_encoder *e = wk_pg_registry_find_encoder(r, WK_PG_BINARY, want[i].k);
        CHECK_MSG(e != NULL && e->oid == want[i].oid, "kind %s", wk_pg_kind_name(want[i].k));
    }
    const wk_pg_encoder *e = wk_pg_registry_find_array_encoder(r, WK_PG_BINARY, WK_PG_KIND_F64);
    CHECK(e != NULL && e->oid == WK_PG_OID_FLOAT8_ARRAY && e->elem_oid == WK_PG_OID_FLOAT8);
    CHECK(wk_pg_registry_find_encoder(r, WK_PG_BINARY, WK_PG_KIND_VALUE) == NULL);
    CHECK(wk_pg_registry_find_decoder(r, WK_PG_OID_INT4, (wk_pg_format)2, WK_PG_KIND_I32) ==
          NULL);
    CHECK(wk_pg_registry_find_decoder(r, WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_COUNT) ==
          NULL);
}

/* ---- the cell: readers acquire while a writer publishes ---- */

typedef struct cell_ctx {
    wk_pg_registry_cell *cell;
    int stop;
    size_t reads, bad;
} cell_ctx;

static void *reader(void *arg)
{
    cell_ctx *c = arg;
    while (!__atomic_load_n(&c->stop, __ATOMIC_ACQUIRE)) {
        wk_pg_registry *r = wk_pg_registry_cell_acquire(c->cell);
        const wk_pg_decoder *d =
            wk_pg_registry_find_decoder(r, WK_PG_OID_INT4, WK_PG_BINARY, WK_PG_KIND_I32);
        int32_t v = 0;
        if (d == NULL || wk_pg_decode(d, "\0\0\0\x07", 4, &v, NULL, NULL) != WK_OK || v != 7) {
            __atomic_fetch_add(&c->bad, 1, __ATOMIC_RELAXED);
        }
        wk_pg_registry_unref(r);
        __atomic_fetch_add(&c->reads, 1, __ATOMIC_RELAXED);
    }
    return NULL;
}

WK_TEST(test_pg_registry_cell_publishes_snapshots_to_lock_free_readers)
{
    wk_pg_registry *base;
    CHECK_OK(wk_pg_registry_new_default(NULL, &base, NULL));
    cell_ctx c = {NULL, 0, 0, 0};
    CHECK_OK(wk_pg_registry_cell_new(base, &c.cell));
    wk_pg_registry *kept = wk_pg_registry_cell_acquire(c.cell);
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&th[i], NULL, reader, &c);
    }
    static wk_pg_oid oids[20];
    static wk_pg_codec codecs[20];
    for (int i = 0; i < 20; i++) {
        oids[i] = 60000u + (wk_pg_oid)i;
        codecs[i] = *builtin("text");
        codecs[i].oids = &oids[i];
        codecs[i].array_oids = NULL;
        codecs[i].n_oids = 1;
        const wk_pg_codec *one[] = {&codecs[i]};
        CHECK_OK(wk_pg_registry_cell_add(c.cell, one, 1, NULL));
    }
    __atomic_store_n(&c.stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
    }
    CHECK_EQ(c.bad, 0);
    wk_pg_registry *now = wk_pg_registry_cell_acquire(c.cell);
    CHECK(wk_pg_registry_find_decoder(now, 60019, WK_PG_TEXT, WK_PG_KIND_STR) != NULL);
    /* The snapshot taken before the additions does not see them. */
    CHECK(wk_pg_registry_find_decoder(kept, 60019, WK_PG_TEXT, WK_PG_KIND_STR) == NULL);
    wk_pg_registry_cell_free(c.cell);
    /* Both snapshots outlive the cell until released. */
    CHECK(wk_pg_registry_find_decoder(now, WK_PG_OID_INT4, WK_PG_TEXT, WK_PG_KIND_I32) != NULL);
    wk_pg_registry_unref(now);
    wk_pg_registry_unref(kept);
}
