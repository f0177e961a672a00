/*
 * Internal pieces shared by the schema files: the per-descriptor lookup index (an
 * open-addressing table from field name to field number, built once and published with an
 * atomic pointer), and small helpers the generic and fused codecs share so that both paths
 * make the same decisions (which fields are empty, how a field path is printed).
 */
#ifndef WK_SCHEMA_INTERNAL_H
#define WK_SCHEMA_INTERNAL_H

#include <string.h>

#include "wirekit/schema.h"

#define WK__SCHEMA_MAX_FIELDS 4096u
#define WK__SCHEMA_MAX_REQUIRED 64u
#define WK__SCHEMA_DEFAULT_DEPTH 64u
#define WK__SCHEMA_MAX_DEPTH 256u

typedef struct wk__schema_index {
    uint64_t fingerprint;
    uint64_t required_mask; /* one bit per required field, numbered in declaration order */
    uint32_t mask;          /* slot count - 1 (a power of two minus one) */
    uint32_t nfields;
    uint8_t *reqbit;        /* [nfields]: bit number of a required field, 0xff otherwise */
    uint16_t *slots;        /* [mask + 1]: field number + 1, 0 = empty */
    /* The fused MessagePack encoder's plan: each key pre-encoded (str header + name), and
     * whether the struct is flat (no nested struct or array, at most 64 fields), which lets
     * it be written in one pre-sized pass. */
    bool mp_flat;
    uint32_t *mp_key_off;   /* [nfields]: offset of the field's encoded key in mp_keys */
    uint8_t *mp_key_len;    /* [nfields] (0: the key is longer than 250 bytes, not planned) */
    uint8_t *mp_keys;
} wk__schema_index;

/** The index of `s`, building it on first use. NULL (with `err` set) for a bad descriptor. */
const wk__schema_index *wk__schema_index_get(const wk_schema *s, wk_error *err);

/** Field number whose name is `key[0..len)`, or -1. */
static inline int32_t wk__schema_lookup(const wk_schema *s, const wk__schema_index *ix,
                                        const char *key, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)key[i]) * 16777619u;
    }
    for (uint32_t slot = h & ix->mask;; slot = (slot + 1) & ix->mask) {
        uint32_t f = ix->slots[slot];
        if (f == 0) {
            return -1;
        }
        const wk_schema_field *fd = &s->fields[f - 1];
        if (fd->name_len == len && memcmp(fd->name, key, len) == 0) {
            return (int32_t)(f - 1);
        }
    }
}

/** FNV-1a 32 of a name (the index hash). */
uint32_t wk__schema_name_hash(const char *s, size_t len);

/** True when the field holds its empty value (WK_OMITEMPTY leaves it out). */
bool wk__schema_field_empty(const wk_schema_field *f, const uint8_t *base);

/** Number of fields of `s` that are written for the struct at `base`. */
uint32_t wk__schema_present_count(const wk_schema *s, const uint8_t *base);

/** Effective depth limit for `opts`. */
uint32_t wk__schema_depth_limit(const wk_schema_opts *opts);

#endif
