/*
 * Internal pieces shared by the schema files: the per-descriptor lookup index (an
 * open-addressing table from field name to field number, built once and published with an
 * atomic pointer), and small helpers the generic and fused codecs share so that both paths
 * make the same decisions (which fields are empty, how a field path is printed).
 * Flow: a descriptor -> schema_index.c (checked once, indexed, plans compiled) -> this
 * index -> every schema encoder and decoder (schema/, formats/json/schema_json_*.c,
 * formats/msgpack/schema_mp.c).
 */
#ifndef WK_SCHEMA_INTERNAL_H
#define WK_SCHEMA_INTERNAL_H

#include <string.h>

#include "wirekit/schema.h"

#define WK__SCHEMA_MAX_FIELDS 4096u
#define WK__SCHEMA_MAX_REQUIRED 64u
#define WK__SCHEMA_DEFAULT_DEPTH 64u
#define WK__SCHEMA_MAX_DEPTH 256u

/* One field of a flat struct in the fused plans, MessagePack and JSON (see wk__schema_index). */
typedef struct wk__mp_op {
    const uint8_t *key; /* the pre-encoded key (str header + name); 16 readable bytes past it */
    uint64_t kw[2];     /* the key's first 16 bytes as two words (zero-padded) */
    uint64_t km[2];     /* masks of the key's bytes in those words (all-ones bytes) */
    const uint8_t *jkey; /* JSON: `,"name":` (the name needs no escape); 16 readable bytes past */
    uint64_t jw[2];      /* JSON: the first 16 bytes of `"name":` as two words (zero-padded) */
    uint64_t jm[2];      /* and their masks */
    uint64_t reqmask;   /* the required-field bit of this field, 0 if not required */
    uint32_t offset;    /* offsetof the member */
    uint32_t size;      /* C size of the member (WK_SK_STRBUF: the buffer) */
    uint8_t kind;       /* wk_schema_kind */
    uint8_t flags;      /* field flags */
    uint8_t key_len;    /* bytes of `key` */
    uint8_t jkey_len;   /* bytes of `jkey` (name + 4) */
    uint8_t reqbit;     /* bit of a required field, 0xff otherwise */
} wk__mp_op;

/* Bytes readable (and, in the output, writable) past a pre-encoded key: keys of up to this
 * many bytes are copied with one fixed-size move. */
#define WK__MP_KEY_PAD 16u

/* The most bytes of a "small" MessagePack value: a str of up to 31 bytes with its fixstr
 * header, or any scalar but a timestamp (at most 9). The flat plan keeps this much room for
 * every string field, so the fused encoder writes short strings without a check. */
#define WK__MP_SMALL_MAX WK__MPF_SMALL /* (wirekit/schema_mp_fold.h) */

/* Writes a fused plan's pre-encoded key (`key`, `len` bytes, WK__MP_KEY_PAD readable bytes
 * past it) at o, which has the room: one fixed-size copy when it fits (most keys). Returns the
 * cursor after it. The MessagePack and JSON encoders' shared first step of a field; always
 * inline (GCC -O2 left it out of the JSON encoder's field loop, which costs instructions per
 * seed record: wirekit bench --suite schema --callgrind). */
static inline __attribute__((always_inline)) uint8_t *wk__schema_put_key(uint8_t *o,
                                                                    const uint8_t *key,
                                                                    size_t len)
{
    memcpy(o, key, WK__MP_KEY_PAD);
    if (WK_UNLIKELY(len > WK__MP_KEY_PAD)) {
        memcpy(o, key, len);
    }
    return o + len;
}

typedef struct wk__schema_index {
    const wk_allocator *alloc; /* what it was allocated from (NULL = libc) */
    size_t bytes;              /* and its size */
    uint64_t fingerprint;   /* wk_schema_fingerprint of the descriptor */
    uint64_t required_mask; /* one bit per required field, numbered in declaration order */
    uint32_t mask;          /* slot count - 1 (a power of two minus one) */
    uint32_t nfields;       /* the descriptor's */
    uint8_t *reqbit;        /* [nfields]: bit number of a required field, 0xff otherwise */
    uint16_t *slots;        /* [mask + 1]: field number + 1, 0 = empty */
    /* The fused MessagePack encoder's plan: each key pre-encoded (str header + name), and
     * whether the struct is flat (no nested struct or array, at most 64 fields), which lets
     * it be written in one pre-sized pass. */
    bool mp_flat;
    uint32_t *mp_key_off;   /* [nfields]: offset of the field's encoded key in mp_keys */
    uint8_t *mp_key_len;    /* [nfields] (0: the key is longer than 250 bytes, not planned) */
    uint8_t *mp_keys;       /* the encoded keys, back to back, padded for word loads */
    /* The compiled plan of a flat struct (mp_flat): one op per field in declaration order,
     * the most bytes the fixed-size parts of an object can take (map header, keys with their
     * copy padding, scalar values, string headers), and whether any field is WK_OMITEMPTY
     * (otherwise every field is written and the map header is constant). */
    wk__mp_op *mp_ops;
    size_t mp_fixed;
    bool mp_omit;
    /* The fused JSON plan (schema_json_enc.c, schema_json_dec.c) over the same ops: usable
     * when the struct is flat and every name is valid UTF-8 with nothing to escape (so a key's
     * JSON text is the name in quotes); the most bytes an object's fixed-size parts take in
     * JSON. */
    bool js_flat;
    size_t js_fixed;
    uint8_t *js_keys;       /* the `,"name":` keys, back to back, padded for word loads */
} wk__schema_index;

/** The index of `s`, building it on first use from `alloc` (the call's allocator; NULL =
 *  libc), as wk_schema_prepare(s, alloc) would. NULL (with `err` set) for a bad descriptor. */
const wk__schema_index *wk__schema_index_build(const wk_schema *s, const wk_allocator *alloc,
                                               wk_error *err);

/* The published index of s, or (first use) wk__schema_index_build: one acquire load on the
 * path every codec call takes; the acquire pairs with the release that published it. */
static inline const wk__schema_index *wk__schema_index_get(const wk_schema *s,
                                                           const wk_allocator *alloc,
                                                           wk_error *err)
{
    if (s->rt != NULL) {
        void *ix = __atomic_load_n(&s->rt->index, __ATOMIC_ACQUIRE);
        if (ix != NULL) {
            return ix;
        }
    }
    return wk__schema_index_build(s, alloc, err);
}

/** FNV-1a 32 of a name (the index hash). */
static inline uint32_t wk__schema_name_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    }
    return h;
}

/** Field number whose name is `key[0..len)`, or -1. */
static inline int32_t wk__schema_lookup(const wk_schema *s, const wk__schema_index *ix,
                                        const char *key, size_t len)
{
    for (uint32_t slot = wk__schema_name_hash(key, len) & ix->mask;;
         slot = (slot + 1) & ix->mask) {
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

/** The same lookup with only the index (its plan holds the names as pre-encoded keys). */
static inline int32_t wk__schema_lookup_index(const wk__schema_index *ix, const char *key,
                                              size_t len)
{
    for (uint32_t slot = wk__schema_name_hash(key, len) & ix->mask;;
         slot = (slot + 1) & ix->mask) {
        uint32_t f = ix->slots[slot];
        if (f == 0) {
            return -1;
        }
        const wk__mp_op *op = &ix->mp_ops[f - 1];
        size_t hl = op->key[0] >= 0xa0 && op->key[0] <= 0xbf ? 1u : 2u;
        if (op->key_len - hl == len && memcmp(op->key + hl, key, len) == 0) {
            return (int32_t)(f - 1);
        }
    }
}

/** True when field `f` of the struct at `base` has a presence member (WK_FIELD_NULLABLE)
 *  that says NULL: the encoders write nil for it, whatever its member holds. */
static inline bool wk__schema_field_null(const wk_schema_field *f, const uint8_t *base)
{
    return (f->flags & WK_PRESENCE) != 0 && !*(const bool *)(base + f->presence_offset);
}

/** True when the field holds its empty value (WK_OMITEMPTY leaves it out). */
bool wk__schema_field_empty(const wk_schema_field *f, const uint8_t *base);

/** The next field of `s` from `*i` on that is written (not a WK_OMITEMPTY field holding its
 *  empty value), advancing `*i` past it; NULL when no field is left. The one walk of both
 *  encoders (events and fused MessagePack). */
static inline const wk_schema_field *wk__schema_next_field(const wk_schema *s,
                                                           const uint8_t *base, size_t *i)
{
    while (*i < s->nfields) {
        const wk_schema_field *c = &s->fields[(*i)++];
        if ((c->flags & WK_OMITEMPTY) == 0 || !wk__schema_field_empty(c, base)) {
            return c;
        }
    }
    return NULL;
}

/** Resets a decode error before a decode: no error, root path. */
static inline void wk__schema_error_reset(wk_schema_error *err)
{
    if (err != NULL) {
        err->base.code = WK_OK;
        err->base.offset = 0;
        err->base.msg = NULL;
        err->path[0] = '\0';
    }
}

/** The omitempty rule, written once: whether the member of kind `kind` (a wk_schema_kind other
 *  than WK_SK_STRUCT, never empty, and WK_SK_ARRAY, empty by its count member, which the caller
 *  checks) at `p` holds its empty value: false, zero, a NULL or "" string, no bytes, the zero
 *  timestamp, a nil wk_value. Inline: the fused MessagePack encoder calls it per field. */
static inline bool wk__schema_member_empty(unsigned kind, const uint8_t *p)
{
    switch ((wk_schema_kind)kind) {
    case WK_SK_BOOL: return !*(const bool *)p;
    case WK_SK_I8:
    case WK_SK_U8: return *p == 0;
    case WK_SK_I16:
    case WK_SK_U16: return *(const uint16_t *)p == 0;
    case WK_SK_I32:
    case WK_SK_U32: return *(const uint32_t *)p == 0;
    case WK_SK_I64:
    case WK_SK_U64: return *(const uint64_t *)p == 0;
    case WK_SK_F32: return *(const float *)p == 0.0f;
    case WK_SK_F64: return *(const double *)p == 0.0;
    case WK_SK_STR: {
        const char *s = *(const char *const *)p;
        return s == NULL || s[0] == '\0';
    }
    case WK_SK_STRBUF: return p[0] == '\0';
    case WK_SK_BYTES: return ((const wk_slice *)p)->len == 0;
    case WK_SK_TIMESTAMP: {
        const wk_timestamp *t = (const wk_timestamp *)p;
        return t->sec == 0 && t->nsec == 0;
    }
    case WK_SK_VALUE: return ((const wk_value *)p)->type == WK_VAL_NIL;
    default: return false;
    }
}

/** The checks a fused encoder (wk_schema_encode_mp, wk_schema_encode_json) starts with: the
 *  arguments, the schema's index. Returns the index, or NULL with the status to return in *st
 *  (err filled). */
static inline const wk__schema_index *wk__schema_encode_begin(const wk_schema *s,
                                                              const void *obj,
                                                              const wk_buf *out, wk_error *err,
                                                              wk_status *st)
{
    if (s == NULL || obj == NULL || out == NULL) {
        *st = wk_error_set(err, WK_ERR_ARG, 0, "schema: NULL argument");
        return NULL;
    }
    const wk__schema_index *ix = wk__schema_index_get(s, NULL, err);
    if (ix == NULL) {
        *st = err != NULL ? err->code : WK_ERR_ARG;
    }
    return ix;
}

/** The checks a fused decoder (wk_schema_decode_mp, wk_schema_decode_json) starts with: the
 *  error reset, the arguments, the schema's index. Returns the index, or NULL with the status to
 *  return in *st (err filled). */
static inline const wk__schema_index *wk__schema_decode_begin(const wk_schema *s,
                                                              const void *data, size_t len,
                                                              const void *obj,
                                                              const wk_arena *arena,
                                                              const wk_schema_opts *opts,
                                                              wk_schema_error *err, wk_status *st)
{
    wk__schema_error_reset(err);
    if (s == NULL || (data == NULL && len != 0) || obj == NULL || arena == NULL) {
        *st = wk_error_set(err != NULL ? &err->base : NULL, WK_ERR_ARG, 0,
                           "schema: NULL argument");
        return NULL;
    }
    const wk__schema_index *ix = wk__schema_index_get(s, opts != NULL ? opts->alloc : NULL,
                                                      err != NULL ? &err->base : NULL);
    if (ix == NULL) {
        *st = err != NULL ? err->base.code : WK_ERR_ARG;
    }
    return ix;
}

/** Number of fields of `s` that are written for the struct at `base`. */
uint32_t wk__schema_present_count(const wk_schema *s, const uint8_t *base);

/** Effective depth limit for `opts`. */
uint32_t wk__schema_depth_limit(const wk_schema_opts *opts);

#endif
