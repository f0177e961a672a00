/*
 * Descriptor checking, the field-name index, the codecs' compiled plans, and fingerprints.
 * Flow: a wk_schema descriptor -> checked once here -> an immutable index (name table and the
 * MessagePack/JSON plans: schema_plan_interface.h, schema_fast_interface.h) -> read by every
 * encoder and decoder of the schema codec.
 *
 * Descriptors are static data written by people, so they are checked once (wk_schema_prepare,
 * or lazily on first use, on the decode options' allocator or libc) and the result is an
 * immutable index: an open-addressing table of field numbers keyed by an FNV-1a hash of the
 * name, at most half full. The index is
 * published with a compare-and-swap on the descriptor's runtime slot; a thread that loses the
 * race frees its own copy, so no lock is ever taken and readers never wait. Lookups compare
 * the full name, never only the hash.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/dtoa_interface.h"
#include "schema/schema_plan_interface.h"
#include "wirekit/msgpack.h"
#include "wirekit/utf8.h"

#define FP_MAX_NEST 32

/* Is k one of the wk_schema_kind values? */
static bool kind_is_known(uint8_t k)
{
    return k >= WK_SK_BOOL && k <= WK_SK_ARRAY;
}

/* The member size a field of kind k must have, 0 when the descriptor gives it (char[N],
 * nested structs). */
static size_t kind_size(uint8_t k)
{
    switch ((wk_schema_kind)k) {
    case WK_SK_BOOL: return sizeof(bool);
    case WK_SK_I8:
    case WK_SK_U8: return 1;
    case WK_SK_I16:
    case WK_SK_U16: return 2;
    case WK_SK_I32:
    case WK_SK_U32:
    case WK_SK_F32: return 4;
    case WK_SK_I64:
    case WK_SK_U64:
    case WK_SK_F64: return 8;
    case WK_SK_STR: return sizeof(char *);
    case WK_SK_BYTES: return sizeof(wk_slice);
    case WK_SK_TIMESTAMP: return sizeof(wk_timestamp);
    case WK_SK_VALUE: return sizeof(wk_value);
    case WK_SK_ARRAY: return sizeof(wk_schema_array);
    case WK_SK_STRBUF:
    case WK_SK_STRUCT: return 0;
    }
    return 0;
}

/* Checks one type (and its chain of array element types). */
static wk_status check_type(const wk_schema_type *t, wk_error *err)
{
    for (int guard = 0; t != NULL; guard++) {
        if (guard > FP_MAX_NEST) {
            return wk_error_set(err, WK_ERR_ARG, 0, "schema: arrays nested too deeply");
        }
        if (!kind_is_known(t->kind)) {
            return wk_error_set(err, WK_ERR_ARG, 0, "schema: unknown field kind");
        }
        size_t want = kind_size(t->kind);
        if (want != 0 && t->size != want) {
            return wk_error_set(err, WK_ERR_ARG, 0, "schema: field size does not match kind");
        }
        if (t->kind == WK_SK_STRBUF && t->size == 0) {
            return wk_error_set(err, WK_ERR_ARG, 0, "schema: char[N] field with N = 0");
        }
        if (t->kind == WK_SK_STRUCT) {
            if (t->schema == NULL) {
                return wk_error_set(err, WK_ERR_ARG, 0, "schema: nested struct without descriptor");
            }
            if (t->schema->size != t->size || t->schema->root != WK_SCHEMA_ROOT_STRUCT) {
                return wk_error_set(err, WK_ERR_ARG, 0,
                                    "schema: nested descriptor does not describe the member");
            }
        }
        if (t->kind == WK_SK_ARRAY && t->elem == NULL) {
            return wk_error_set(err, WK_ERR_ARG, 0, "schema: array without element type");
        }
        t = t->kind == WK_SK_ARRAY ? t->elem : NULL;
    }
    return WK_OK;
}

/* Checks a descriptor's own fields (names, sizes, offsets within the struct, flags, array
 * count members): WK_OK, or WK_ERR_ARG with a message naming the mistake. */
static wk_status check_fields(const wk_schema *s, wk_error *err)
{
    if (s->rt == NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "schema: descriptor has no runtime slot");
    }
    if (s->root == WK_SCHEMA_ROOT_VALUE) {
        if (s->nfields != 0 || s->size != sizeof(wk_value)) {
            return wk_error_set(err, WK_ERR_ARG, 0, "schema: value descriptor with fields");
        }
        return WK_OK;
    }
    if (s->root != WK_SCHEMA_ROOT_STRUCT) {
        return wk_error_set(err, WK_ERR_ARG, 0, "schema: unknown root kind");
    }
    if (s->nfields > WK__SCHEMA_MAX_FIELDS || (s->nfields != 0 && s->fields == NULL)) {
        return wk_error_set(err, WK_ERR_ARG, 0, "schema: too many fields");
    }
    /* every field: a name, a known type of the right size, a member inside the struct (an
     * array's count member too), known flags, at most 64 required fields (one bit each) */
    uint32_t required = 0;
    for (uint32_t i = 0; i < s->nfields; i++) {
        const wk_schema_field *f = &s->fields[i];
        if (f->name == NULL || f->name_len == 0) {
            return wk_error_set(err, WK_ERR_ARG, i, "schema: field without a name");
        }
        wk_status st = check_type(&f->type, err);
        if (st != WK_OK) {
            if (err != NULL) {
                err->offset = i;
            }
            return st;
        }
        if ((uint64_t)f->offset + f->type.size > s->size ||
            (f->type.kind == WK_SK_ARRAY &&
             (uint64_t)f->count_offset + sizeof(size_t) > s->size)) {
            return wk_error_set(err, WK_ERR_ARG, i, "schema: member outside the struct");
        }
        if ((f->flags & ~(uint32_t)(WK_OMITEMPTY | WK_REQUIRED | WK_NULLABLE | WK_PRESENCE)) !=
            0) {
            return wk_error_set(err, WK_ERR_ARG, i, "schema: unknown field flag");
        }
        /* a presence member (WK_FIELD_NULLABLE): a bool inside the struct, on a kind whose
         * NULL is not already its own value (a wk_value's nil, an array's NULL pointer) */
        if ((f->flags & WK_PRESENCE) != 0 &&
            (f->type.kind == WK_SK_VALUE || f->type.kind == WK_SK_ARRAY ||
             (uint64_t)f->presence_offset + sizeof(bool) > s->size)) {
            return wk_error_set(err, WK_ERR_ARG, i, "schema: bad presence member");
        }
        if ((f->flags & WK_REQUIRED) != 0 && ++required > WK__SCHEMA_MAX_REQUIRED) {
            return wk_error_set(err, WK_ERR_ARG, i, "schema: more than 64 required fields");
        }
    }
    return WK_OK;
}

/* Most bytes the fixed-size part of a field's value takes in MessagePack (a string's whole
 * value when it is short: the encoder writes those without a check; longer string, binary
 * payloads and wk_value trees are sized when they are written). */
static size_t mp_fixed_value_bytes(const wk_schema_field *f)
{
    switch ((wk_schema_kind)f->type.kind) {
    case WK_SK_BOOL: return 1;
    case WK_SK_F32: return 5;
    case WK_SK_STR:
    case WK_SK_STRBUF: return WK__MP_SMALL_MAX;
    case WK_SK_BYTES:
    case WK_SK_VALUE: return 5;
    case WK_SK_TIMESTAMP: return 15;
    default: return 9;
    }
}

/* Most bytes the fixed-size part of a field's value takes in JSON: a number (an integer's 20
 * digits, a double's shortest text), `false`, `null`, or the quotes of an empty string (the
 * payloads of strings, base64, timestamps and wk_value trees are sized when written). */
#define JS_FIXED_VALUE_BYTES (WK__DTOA_JSON_MAX + 8u)

/* True when `name` is its own JSON string text: valid UTF-8, no '"', '\\' nor control byte. */
static bool json_plain_name(const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)name[i];
        if (c < 0x20 || c == '"' || c == '\\') {
            return false;
        }
    }
    return wk_utf8_valid(name, len, NULL);
}

/* A key's first 16 bytes as two zero-padded words and the masks of its bytes in them. */
static void plan_words(const uint8_t *key, size_t len, uint64_t w[2], uint64_t m[2])
{
    uint8_t kb[16] = {0}, mb[16] = {0};
    for (size_t k = 0; k < len && k < 16; k++) {
        kb[k] = key[k];
        mb[k] = 0xff;
    }
    memcpy(w, kb, 16);
    memcpy(m, mb, 16);
}

/* Fills the flat plans of the fused encoders (nothing when the struct is not flat). */
static void compile_mp_plan(const wk_schema *s, wk__schema_index *ix)
{
    if (!ix->mp_flat) {
        ix->mp_ops = NULL;
        return;
    }
    /* `fixed` and `jfixed` bound the bytes the fixed-size parts of a record take in each
     * format (the map header, every key with its padding, every fixed-size value), so the
     * flat encoders check for room once per record and only strings and trees check again */
    size_t fixed = 5;
    size_t jfixed = 2; /* '{' and '}' */
    size_t jpos = 0;
    for (uint32_t i = 0; i < s->nfields; i++) {
        const wk_schema_field *f = &s->fields[i];
        wk__mp_op *op = &ix->mp_ops[i];
        op->key = ix->mp_keys + ix->mp_key_off[i];
        op->key_len = ix->mp_key_len[i];
        op->offset = f->offset;
        op->size = f->type.size;
        op->kind = f->type.kind;
        op->flags = (uint8_t)f->flags;
        op->reqbit = ix->reqbit[i];
        op->reqmask = op->reqbit != 0xff ? (uint64_t)1 << op->reqbit : 0;
        /* the key's first 16 bytes as two words and masks, for the decoders' compare; the
         * JSON key is `,"name":` (the first field's ',' becomes the '{') */
        plan_words(op->key, op->key_len, op->kw, op->km);
        if (ix->js_flat) {
            op->jkey = ix->js_keys + jpos;
            op->jkey_len = (uint8_t)(f->name_len + 4);
            uint8_t *k = ix->js_keys + jpos;
            k[0] = ',';
            k[1] = '"';
            memcpy(k + 2, f->name, f->name_len);
            k[f->name_len + 2] = '"';
            k[f->name_len + 3] = ':';
            plan_words(k + 1, op->jkey_len - 1u, op->jw, op->jm);
            jpos += op->jkey_len;
            jfixed += (size_t)op->jkey_len + WK__MP_KEY_PAD + JS_FIXED_VALUE_BYTES;
        }
        fixed += (size_t)op->key_len + WK__MP_KEY_PAD + mp_fixed_value_bytes(f);
        if ((f->flags & WK_OMITEMPTY) != 0) {
            ix->mp_omit = true;
        }
    }
    ix->mp_fixed = fixed;
    ix->js_fixed = jfixed;
}

/* Builds the index of s in one allocation on alloc: the name table (a power of two of slots,
 * at least twice the fields), the keys as MessagePack and JSON text, and the plans. NULL with
 * err filled when out of memory, or WK_ERR_ARG for two fields of the same name. */
static wk__schema_index *build_index(const wk_schema *s, const wk_allocator *alloc,
                                     wk_error *err)
{
    /* Sizes first: the table at most half full; each key as MessagePack (a fixstr or str8
     * header, +2) and as JSON (`,"name":`, +4). Names longer than 250 bytes get no
     * pre-encoded key (and no flat plan). */
    uint32_t slots = 2;
    while (slots < 2 * s->nfields) {
        slots *= 2;
    }
    size_t keybytes = 0;
    size_t jkeybytes = 0;
    for (uint32_t i = 0; i < s->nfields; i++) {
        keybytes += s->fields[i].name_len <= 250 ? s->fields[i].name_len + 2u : 0u;
        jkeybytes += s->fields[i].name_len <= 250 ? s->fields[i].name_len + 4u : 0u;
    }
    size_t bytes = sizeof(wk__schema_index) + (size_t)s->nfields * sizeof(wk__mp_op) +
                   (size_t)s->nfields * sizeof(uint32_t) + (size_t)slots * sizeof(uint16_t) +
                   2 * (size_t)s->nfields + keybytes + WK__MP_KEY_PAD + jkeybytes +
                   WK__MP_KEY_PAD;
    wk__schema_index *ix = wk_alloc(alloc, bytes);
    if (ix == NULL) {
        wk_error_set(err, WK_ERR_NOMEM, 0, "schema: out of memory building the index");
        return NULL;
    }
    /* One block, carved in this order: the index, the ops, the key offsets, the table, the
     * required bits, the key lengths, the MessagePack keys (padded for whole-word loads),
     * the JSON keys (padded too). */
    memset(ix, 0, bytes);
    ix->alloc = alloc;
    ix->bytes = bytes;
    ix->mp_ops = (wk__mp_op *)(ix + 1);
    ix->mp_key_off = (uint32_t *)(ix->mp_ops + s->nfields);
    ix->slots = (uint16_t *)(ix->mp_key_off + s->nfields);
    ix->reqbit = (uint8_t *)(ix->slots + slots);
    ix->mp_key_len = ix->reqbit + s->nfields;
    ix->mp_keys = ix->mp_key_len + s->nfields;
    ix->mp_flat = s->nfields <= 64;
    ix->js_flat = true;
    /* The keys, and whether the struct is flat: at most 64 fields, no nested struct or
     * array or presence member, every name short; the JSON plan also needs names that are their own JSON text
     * (json_plain_name). */
    uint32_t koff = 0;
    for (uint32_t i = 0; i < s->nfields; i++) {
        const wk_schema_field *f = &s->fields[i];
        /* A presence member is read and written by the general walks only, so that the
         * flat plans stay one op per member. */
        if (f->type.kind == WK_SK_STRUCT || f->type.kind == WK_SK_ARRAY ||
            (f->flags & WK_PRESENCE) != 0) {
            ix->mp_flat = false;
        }
        if (f->name_len <= 250) {
            uint8_t *k = ix->mp_keys + koff;
            uint8_t *e = wk_mp_encode_str(k, f->name, f->name_len);
            ix->mp_key_off[i] = koff;
            ix->mp_key_len[i] = (uint8_t)(e - k);
            koff += (uint32_t)(e - k);
        } else {
            ix->mp_flat = false;
        }
        if (!json_plain_name(f->name, f->name_len)) {
            ix->js_flat = false;
        }
    }
    ix->js_flat = ix->js_flat && ix->mp_flat;
    ix->js_keys = ix->mp_keys + koff + WK__MP_KEY_PAD;
    ix->mask = slots - 1;
    ix->nfields = s->nfields;
    ix->fingerprint = wk_schema_fingerprint(s);
    /* The name table (linear probing; slot values are field numbers + 1, 0 empty) and the
     * required fields' bits, in field order. */
    uint32_t req = 0;
    for (uint32_t i = 0; i < s->nfields; i++) {
        const wk_schema_field *f = &s->fields[i];
        uint32_t slot = wk__schema_name_hash(f->name, f->name_len) & ix->mask;
        while (ix->slots[slot] != 0) {
            const wk_schema_field *g = &s->fields[ix->slots[slot] - 1];
            if (g->name_len == f->name_len && memcmp(g->name, f->name, f->name_len) == 0) {
                wk_free(alloc, ix, bytes);
                wk_error_set(err, WK_ERR_ARG, i, "schema: two fields with the same name");
                return NULL;
            }
            slot = (slot + 1) & ix->mask;
        }
        ix->slots[slot] = (uint16_t)(i + 1);
        ix->reqbit[i] = 0xff;
        if ((f->flags & WK_REQUIRED) != 0) {
            ix->reqbit[i] = (uint8_t)req;
            ix->required_mask |= (uint64_t)1 << req;
            req++;
        }
    }
    compile_mp_plan(s, ix);
    return ix;
}

/* Prepares `s`, then every descriptor reachable from it. A descriptor is marked prepared
 * (index published) before its children are visited, so cycles end. The walk keeps its own
 * stack of descriptors to visit instead of recursing. */
WK_API wk_status wk_schema_prepare(const wk_schema *s, const wk_allocator *alloc, wk_error *err)
{
    enum { PENDING_MAX = 256 };
    const wk_schema *pending[PENDING_MAX];
    size_t npending = 0;
    if (s == NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "schema: NULL descriptor");
    }
    /* each descriptor: skipped when already published, else checked, indexed and published
     * (compare-and-swap: a thread that loses frees its copy); then its nested descriptors
     * (through arrays too) are queued */
    pending[npending++] = s;
    while (npending > 0) {
        const wk_schema *cur = pending[--npending];
        if (cur->rt != NULL && __atomic_load_n(&cur->rt->index, __ATOMIC_ACQUIRE) != NULL) {
            continue;
        }
        wk_status st = check_fields(cur, err);
        if (st != WK_OK) {
            return st;
        }
        wk__schema_index *ix = build_index(cur, alloc, err);
        if (ix == NULL) {
            return err != NULL ? err->code : WK_ERR_ARG;
        }
        void *expected = NULL;
        if (!__atomic_compare_exchange_n(&cur->rt->index, &expected, ix, false,
                                         __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            wk_free(alloc, ix, ix->bytes); /* another thread published first: same content */
        }
        for (uint32_t i = 0; i < cur->nfields; i++) {
            for (const wk_schema_type *t = &cur->fields[i].type; t != NULL; t = t->elem) {
                if (t->kind == WK_SK_STRUCT && t->schema->rt != NULL &&
                    __atomic_load_n(&t->schema->rt->index, __ATOMIC_ACQUIRE) == NULL) {
                    if (npending == PENDING_MAX) {
                        return wk_error_set(err, WK_ERR_ARG, 0,
                                            "schema: too many nested descriptors");
                    }
                    pending[npending++] = t->schema;
                }
                if (t->kind != WK_SK_ARRAY) {
                    break;
                }
            }
        }
    }
    return WK_OK;
}

/* The slow half of wk__schema_index_get: prepares s (checks it, builds and publishes the
 * index) and returns the published index, NULL with err filled when s is invalid. */
const wk__schema_index *wk__schema_index_build(const wk_schema *s, const wk_allocator *alloc,
                                               wk_error *err)
{
    if (wk_schema_prepare(s, alloc, err) != WK_OK) {
        return NULL;
    }
    return __atomic_load_n(&s->rt->index, __ATOMIC_ACQUIRE);
}

/* Takes the published index off s and frees it (wirekit/schema.h: no codec may be using s
 * meanwhile). */
WK_API void wk_schema_unprepare(const wk_schema *s)
{
    if (s != NULL && s->rt != NULL) {
        wk__schema_index *ix = __atomic_exchange_n(&s->rt->index, NULL, __ATOMIC_ACQ_REL);
        if (ix != NULL) {
            wk_free(ix->alloc, ix, ix->bytes);
        }
    }
}

/* ---- fingerprint -------------------------------------------------------------------------- */

/* The fingerprint's running FNV-1a hash and the descriptors on the current path. */
typedef struct fp_state {
    uint64_t h;
    const wk_schema *path[FP_MAX_NEST];
    int depth;
} fp_state;

/* FNV-1a over p[0..n). */
static void fp_bytes(fp_state *st, const void *p, size_t n)
{
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        st->h = (st->h ^ b[i]) * 1099511628211ull;
    }
}

/* v as four little-endian bytes, so the fingerprint is the same on every host. */
static void fp_u32(fp_state *st, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    fp_bytes(st, b, 4);
}

static void fp_schema(fp_state *st, const wk_schema *s);

/* A type and its chain of array element types: the kind, a char[N]'s N, a nested struct's
 * shape. */
static void fp_type(fp_state *st, const wk_schema_type *t)
{
    for (int guard = 0; t != NULL && guard <= FP_MAX_NEST; guard++) {
        fp_u32(st, t->kind);
        if (t->kind == WK_SK_STRBUF) {
            fp_u32(st, t->size);
        } else if (t->kind == WK_SK_STRUCT && t->schema != NULL) {
            fp_schema(st, t->schema);
        }
        t = t->kind == WK_SK_ARRAY ? t->elem : NULL;
    }
}

/* Recursion is bounded by FP_MAX_NEST (descriptors are static data, not input); a descriptor
 * already on the path is hashed as a back-reference so recursive shapes terminate. */
static void fp_schema(fp_state *st, const wk_schema *s)
{
    for (int i = 0; i < st->depth; i++) {
        if (st->path[i] == s) {
            fp_u32(st, 0xbacc0000u | (uint32_t)(st->depth - i));
            return;
        }
    }
    if (st->depth == FP_MAX_NEST) {
        fp_u32(st, 0xdeeeu);
        return;
    }
    st->path[st->depth++] = s;
    fp_u32(st, s->root);
    fp_u32(st, s->nfields);
    for (uint32_t i = 0; i < s->nfields && s->fields != NULL; i++) {
        const wk_schema_field *f = &s->fields[i];
        fp_u32(st, f->name_len);
        if (f->name != NULL) {
            fp_bytes(st, f->name, f->name_len);
        }
        fp_u32(st, f->flags);
        fp_type(st, &f->type);
    }
    st->depth--;
}

/* A 64-bit FNV-1a hash of the descriptor's shape (names, kinds, flags, nesting), not of its
 * offsets: it changes when the wire form does (wirekit/schema.h). */
WK_API uint64_t wk_schema_fingerprint(const wk_schema *s)
{
    fp_state st;
    st.h = 14695981039346656037ull;
    st.depth = 0;
    if (s != NULL) {
        fp_schema(&st, s);
    }
    return st.h;
}

/* WK_OK when s has the recorded version and fingerprint; WK_ERR_STATE when its shape changed
 * without a version bump, or its version changed (record the new pair). */
WK_API wk_status wk_schema_guard(const wk_schema *s, uint32_t recorded_version,
                                 uint64_t recorded_fingerprint, wk_error *err)
{
    if (s == NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "schema: NULL descriptor");
    }
    uint64_t fp = wk_schema_fingerprint(s);
    if (s->version == recorded_version && fp != recorded_fingerprint) {
        return wk_error_set(err, WK_ERR_STATE, 0,
                            "schema shape changed but its version was not bumped");
    }
    if (s->version != recorded_version) {
        return wk_error_set(err, WK_ERR_STATE, 0,
                            "schema version changed: record the new version and fingerprint");
    }
    return WK_OK;
}

/* ---- helpers shared by the codecs --------------------------------------------------------- */

/* Is field f of the struct at base empty for WK_OMITEMPTY (zero, NULL, an empty array)? A
 * nested struct never is; a field with a presence member is empty exactly when it is NULL
 * (a present zero is a value its presence member was declared to keep). */
bool wk__schema_field_empty(const wk_schema_field *f, const uint8_t *base)
{
    if ((f->flags & WK_PRESENCE) != 0) {
        return wk__schema_field_null(f, base);
    }
    switch ((wk_schema_kind)f->type.kind) {
    case WK_SK_STRUCT: return false;
    case WK_SK_ARRAY: return *(const size_t *)(base + f->count_offset) == 0;
    default: return wk__schema_member_empty(f->type.kind, base + f->offset);
    }
}

/* The number of fields of the struct at base that are written (not omitted as empty). */
uint32_t wk__schema_present_count(const wk_schema *s, const uint8_t *base)
{
    uint32_t n = 0;
    for (size_t i = 0; wk__schema_next_field(s, base, &i) != NULL;) {
        n++;
    }
    return n;
}

/* The decoders' nesting limit: the options', default WK__SCHEMA_DEFAULT_DEPTH, at most
 * WK__SCHEMA_MAX_DEPTH (the frame stacks are fixed arrays). */
uint32_t wk__schema_depth_limit(const wk_schema_opts *opts)
{
    if (opts == NULL || opts->max_depth == 0) {
        return WK__SCHEMA_DEFAULT_DEPTH;
    }
    return opts->max_depth > WK__SCHEMA_MAX_DEPTH ? WK__SCHEMA_MAX_DEPTH : opts->max_depth;
}

/* "path: message (at byte N)" into buf (snprintf: truncated to cap); returns the length the
 * whole text needs. */
WK_API size_t wk_schema_error_format(const wk_schema_error *e, char *buf, size_t cap)
{
    const char *msg = e->base.msg != NULL ? e->base.msg : wk_status_str(e->base.code);
    int n;
    if (e->path[0] != '\0') {
        n = snprintf(buf, cap, "%s: %s (at byte %zu)", e->path, msg, e->base.offset);
    } else {
        n = snprintf(buf, cap, "%s (at byte %zu)", msg, e->base.offset);
    }
    return n < 0 ? 0 : (size_t)n;
}
