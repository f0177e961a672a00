/*
 * The row policy's description, shared by the two halves of the policy inside src/pg: row.c
 * (a row's values -> one record) and row_in.c (a record -> the columns' values, for COPY in).
 * Internal to src/pg; the contract is wirekit/pg.h's "the row policy".
 */
#ifndef WK_PG_ROW_POLICY_H
#define WK_PG_ROW_POLICY_H

#include "pg/pg_interface.h"

/* One column: as given (name copied), its record key, and what it decodes with. */
typedef struct wk__pg_row_col {
    wk_pg_row_col col;
    const char *key;          /* unique record key, NUL-terminated */
    size_t key_len;
    const wk_pg_decoder *ev;  /* EVENTS decoder in the column's format */
    const wk_pg_decoder *txt; /* json/jsonb: TEXT decoder (arrays mode prints their text) */
    bool is_json;             /* json or jsonb: SQL NULL leaves the key out */
} wk__pg_row_col;

struct wk_pg_rowdesc {
    const wk_allocator *alloc;
    wk_pg_registry *reg;
    wk_pg_row_opts opts;
    unsigned evflags;       /* wk_pg_events flags of the format's number rule */
    size_t ncols;
    wk__pg_row_col *cols;   /* in `mem` */
    wk_arena mem;           /* columns, names and keys: as long as the description */
    wk_buf scratch;         /* number and text rendering of one value */
    wk_buf cell;            /* arrays mode: one json value's text */
    wk_arena rowmem;        /* one row's unescaped array elements; reset per row */
    size_t failed_col;      /* SIZE_MAX, or the column the last call stopped at */
    size_t unknown_key;     /* SIZE_MAX, or the record pair whose key wk_pg_row_parse found no
                             * column for */
    wk_buf enc;             /* row_in.c: the encoded values of the last record */
    size_t *offs;           /* row_in.c: where each column's value starts in `enc` */
    uint32_t *kslot;        /* the keys hashed (wk__pg_row_key_hash): column + 1, 0 empty */
    size_t kmask;           /* slots - 1 (a power of two >= 2n) */
};

/* FNV-1a over a key's bytes: the hash of the key index (row.c builds it, row_in.c reads it). */
static inline size_t wk__pg_row_key_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
    }
    return (size_t)h;
}

/* json or jsonb (their arrays are not: they are arrays). */
static inline bool wk__pg_is_json_oid(wk_pg_oid oid)
{
    return oid == WK_PG_OID_JSON || oid == WK_PG_OID_JSONB;
}

#endif
