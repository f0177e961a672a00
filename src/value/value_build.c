/*
 * Building trees by hand and reading them: setters for every node type (containers get
 * their children from the arena, zeroed to NIL), a linear map lookup, type names. A map's
 * pairs are laid out as key, value, key, value, so a map of n pairs is also 2n values in a
 * row; the decoders and walkers rely on that (checked below at compile time).
 * Flow: the caller's code -> these setters -> a tree (in the caller's arena) -> the encoders
 * (value_encode.c, the fused writers) or wk_value_map_get for reading.
 */
#include <string.h>

#include "wirekit/value.h"

_Static_assert(sizeof(wk_value) == 16, "a node is 16 bytes");
_Static_assert(sizeof(wk_pair) == 2 * sizeof(wk_value), "a pair is two nodes, no padding");

/* Makes *v an all-zero node of type t (no flags, no length, no payload). */
static void reset(wk_value *v, wk_value_type t)
{
    memset(v, 0, sizeof *v);
    v->type = (uint8_t)t;
}

/* The scalar setters (wirekit/value.h): *v becomes that node, whatever it held (a container's
 * children are not freed: they are the arena's). */
WK_API void wk_value_set_nil(wk_value *v)
{
    reset(v, WK_VAL_NIL);
}

WK_API void wk_value_set_bool(wk_value *v, bool b)
{
    reset(v, WK_VAL_BOOL);
    v->u.b = b;
}

/* A non-negative integer is stored as WK_VAL_UINT, as the decoders store it, so equal numbers
 * make equal trees whichever setter made them. */
WK_API void wk_value_set_int(wk_value *v, int64_t i)
{
    if (i >= 0) {
        wk_value_set_uint(v, (uint64_t)i);
        return;
    }
    reset(v, WK_VAL_INT);
    v->u.i = i;
}

WK_API void wk_value_set_uint(wk_value *v, uint64_t u)
{
    reset(v, WK_VAL_UINT);
    v->u.u = u;
}

WK_API void wk_value_set_float(wk_value *v, double f)
{
    reset(v, WK_VAL_FLOAT);
    v->u.f = f;
}

/* A string node that points at s[0..len) (not copied: s must outlive the tree); WK_ERR_RANGE
 * beyond 4 GiB. */
WK_API wk_status wk_value_set_str(wk_value *v, const char *s, size_t len)
{
    if (len > UINT32_MAX) {
        return WK_ERR_RANGE;
    }
    reset(v, WK_VAL_STR);
    v->len = (uint32_t)len;
    v->u.str = s;
    return WK_OK;
}

/* A string node over a NUL-terminated copy of s[0..len) in the arena (WK_VALF_COPIED);
 * WK_ERR_RANGE beyond 4 GiB, WK_ERR_NOMEM when the arena refuses. */
WK_API wk_status wk_value_set_str_copy(wk_value *v, wk_arena *a, const char *s, size_t len)
{
    if (len > UINT32_MAX) {
        return WK_ERR_RANGE;
    }
    char *c = wk_arena_strndup(a, s, len);
    if (c == NULL) {
        return WK_ERR_NOMEM;
    }
    reset(v, WK_VAL_STR);
    v->flags = WK_VALF_COPIED;
    v->len = (uint32_t)len;
    v->u.str = c;
    return WK_OK;
}

/* A binary node that points at p[0..len) (not copied); WK_ERR_RANGE beyond 4 GiB. */
WK_API wk_status wk_value_set_bin(wk_value *v, const void *p, size_t len)
{
    if (len > UINT32_MAX) {
        return WK_ERR_RANGE;
    }
    reset(v, WK_VAL_BIN);
    v->len = (uint32_t)len;
    v->u.bin = p;
    return WK_OK;
}

/* An extension node of the given type over p[0..len) (not copied); WK_ERR_RANGE beyond 4 GiB. */
WK_API wk_status wk_value_set_ext(wk_value *v, int8_t type, const void *p, size_t len)
{
    if (len > UINT32_MAX) {
        return WK_ERR_RANGE;
    }
    reset(v, WK_VAL_EXT);
    v->ext_type = type;
    v->len = (uint32_t)len;
    v->u.bin = p;
    return WK_OK;
}

/* A timestamp node (seconds since the epoch, nanoseconds in len); WK_ERR_RANGE when nsec is
 * not below 10^9. */
WK_API wk_status wk_value_set_timestamp(wk_value *v, int64_t sec, uint32_t nsec)
{
    if (nsec > 999999999u) {
        return WK_ERR_RANGE;
    }
    reset(v, WK_VAL_TIMESTAMP);
    v->u.i = sec;
    v->len = nsec;
    return WK_OK;
}

/* A container node of type t with n children of `per` bytes each, all NIL, in the arena;
 * WK_ERR_RANGE past 2^32-1 children or size_t bytes, WK_ERR_NOMEM when the arena refuses.
 * *v is untouched on failure. */
static wk_status set_container(wk_value *v, wk_arena *a, size_t n, size_t per, wk_value_type t)
{
    size_t bytes;
    if (n > UINT32_MAX || !wk_size_mul(n, per, &bytes)) {
        return WK_ERR_RANGE;
    }
    wk_value *items = NULL;
    if (n != 0) {
        items = wk_arena_alloc(a, bytes, 8);
        if (items == NULL) {
            return WK_ERR_NOMEM;
        }
        memset(items, 0, bytes); /* all-zero is NIL */
    }
    reset(v, t);
    v->len = (uint32_t)n;
    v->u.items = items;
    return WK_OK;
}

/* An array of n NIL elements (v->u.items), to fill in place. */
WK_API wk_status wk_value_set_array(wk_value *v, wk_arena *a, size_t n)
{
    return set_container(v, a, n, sizeof(wk_value), WK_VAL_ARRAY);
}

/* A map of n pairs of NIL key and value (v->u.pairs), to fill in place. */
WK_API wk_status wk_value_set_map(wk_value *v, wk_arena *a, size_t n)
{
    return set_container(v, a, n, sizeof(wk_pair), WK_VAL_MAP);
}

/* The value of the first pair whose key is the string key[0..len), or NULL (also when map is
 * NULL or not a map). A linear scan: maps are small, and the order is the input's. */
WK_API const wk_value *wk_value_map_get(const wk_value *map, const char *key, size_t len)
{
    if (map == NULL || map->type != WK_VAL_MAP) {
        return NULL;
    }
    for (uint32_t i = 0; i < map->len; i++) {
        const wk_pair *p = &map->u.pairs[i];
        if (p->key.type == WK_VAL_STR && p->key.len == len &&
            (len == 0 || memcmp(p->key.u.str, key, len) == 0)) {
            return &p->val;
        }
    }
    return NULL;
}

/* The lowercase name of a node type ("unknown" past the last), for messages. */
WK_API const char *wk_value_type_name(wk_value_type t)
{
    static const char *const names[] = {"nil",   "bool",  "int", "uint", "float",     "str",
                                        "bin",   "array", "map", "ext",  "timestamp", "rawnum"};
    if ((unsigned)t < sizeof names / sizeof names[0]) {
        return names[t];
    }
    return "unknown";
}
