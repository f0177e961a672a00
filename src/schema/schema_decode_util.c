/*
 * The pieces of the schema decoder that do not depend on the reader: storing one decoded
 * value into a field (range checks, string copies, pushing container frames), closing frames
 * (required fields, array results), growing arrays, and error reports with the field path.
 * Flow: a reader's events -> the decoder's loop (schema_decode_loop_interface.h, in
 * schema_decode.c and formats/msgpack/schema_mp.c) -> these helpers -> the caller's struct.
 *
 * Arrays grow by doubling inside the arena, starting from at most 16 elements even when the
 * reader announced a larger count: memory follows the elements actually decoded, so a hostile
 * count cannot make the decoder allocate more than the input justifies.
 */
#include <float.h>
#include <stdio.h>

#include "schema/schema_decode_interface.h"

/* The static message for a value of the wrong type where a field of `kind` is due. */
static const char *expected_msg(uint8_t kind)
{
    switch ((wk_schema_kind)kind) {
    case WK_SK_BOOL: return "expected boolean";
    case WK_SK_I8:
    case WK_SK_I16:
    case WK_SK_I32:
    case WK_SK_I64:
    case WK_SK_U8:
    case WK_SK_U16:
    case WK_SK_U32:
    case WK_SK_U64: return "expected integer";
    case WK_SK_F32:
    case WK_SK_F64: return "expected number";
    case WK_SK_STR:
    case WK_SK_STRBUF: return "expected string";
    case WK_SK_BYTES: return "expected bytes";
    case WK_SK_TIMESTAMP: return "expected timestamp";
    case WK_SK_VALUE: return "expected a value";
    case WK_SK_STRUCT: return "expected map";
    case WK_SK_ARRAY: return "expected array";
    }
    return "unexpected value";
}

/* Appends s[0..n) to the error path at *pos, NUL-terminated; a path that would pass
 * WK_SCHEMA_PATH_MAX ends in "..." and takes nothing more. */
static void path_append(char *path, size_t *pos, const char *s, size_t n)
{
    const size_t room = WK_SCHEMA_PATH_MAX - 4; /* keep space for "..." and the NUL */
    if (*pos >= room) {
        return;
    }
    if (n > room - *pos) {
        memcpy(path + *pos, s, room - *pos);
        *pos = room;
        memcpy(path + *pos, "...", 4);
        return;
    }
    memcpy(path + *pos, s, n);
    *pos += n;
    path[*pos] = '\0';
}

/* Writes the path of the field being decoded into d->err ("a.b[3].c": field names from the
 * struct frames, element indexes from the array frames), up to the first frame that has
 * not started a field or an element. */
void wk__dec_path(wk__dec *d)
{
    if (d->err == NULL) {
        return;
    }
    /* one part per open frame, outermost first: ".name" for a struct's current field,
     * "[i]" for an array's current element; a frame between two parts ends the path */
    char *path = d->err->path;
    size_t pos = 0;
    path[0] = '\0';
    for (uint32_t i = 0; i < d->depth; i++) {
        const wk__dec_frame *f = &d->stack[i];
        if (f->s != NULL) {
            if (f->cur < 0) {
                break;
            }
            const wk_schema_field *fd = &f->s->fields[f->cur];
            if (pos > 0) {
                path_append(path, &pos, ".", 1);
            }
            path_append(path, &pos, fd->name, fd->name_len);
        } else {
            if (f->count == 0) {
                break;
            }
            char idx[32];
            int n = snprintf(idx, sizeof idx, "[%zu]", f->count - 1);
            path_append(path, &pos, idx, n > 0 ? (size_t)n : 0);
        }
    }
}

/* Reports the failure (code, input offset, static msg) with the field path in d->err, when
 * there is one; returns code. */
wk_status wk__dec_fail(wk__dec *d, wk_status code, size_t offset, const char *msg)
{
    if (d->err != NULL) {
        wk_error_set(&d->err->base, code, offset, msg);
        wk__dec_path(d);
    }
    return code;
}

/* The next frame on the decoder's stack, reset, for a struct or array that opens at voff;
 * NULL with *st = WK_ERR_DEPTH past the nesting limit. */
static wk__dec_frame *push_frame(wk__dec *d, size_t voff, wk_status *st)
{
    if (d->depth >= d->limit) {
        *st = wk__dec_fail(d, WK_ERR_DEPTH, voff, "nesting deeper than the limit");
        return NULL;
    }
    wk__dec_frame *f = &d->stack[d->depth++];
    f->cur = -1;
    f->count = 0;
    f->cap = 0;
    f->items = NULL;
    return f;
}

/* An integer event into *out when it lies in [min, max]: WK_ERR_RANGE outside, WK_ERR_TYPE
 * for another event. */
static wk_status dec_int(wk__dec *d, const wk_event *ev, int64_t min, int64_t max, int64_t *out,
                         size_t voff)
{
    if (ev->type == WK_EV_UINT) {
        if (ev->v.u > (uint64_t)max) {
            return wk__dec_fail(d, WK_ERR_RANGE, voff, "integer out of range for the field");
        }
        *out = (int64_t)ev->v.u;
        return WK_OK;
    }
    if (ev->type == WK_EV_INT) {
        if (ev->v.i < min || ev->v.i > max) {
            return wk__dec_fail(d, WK_ERR_RANGE, voff, "integer out of range for the field");
        }
        *out = ev->v.i;
        return WK_OK;
    }
    return wk__dec_fail(d, WK_ERR_TYPE, voff, "expected integer");
}

/* A non-negative integer event into *out when at most max: WK_ERR_RANGE for a negative one or
 * a larger one, WK_ERR_TYPE for another event. */
static wk_status dec_uint(wk__dec *d, const wk_event *ev, uint64_t max, uint64_t *out,
                          size_t voff)
{
    uint64_t u;
    if (ev->type == WK_EV_UINT) {
        u = ev->v.u;
    } else if (ev->type == WK_EV_INT) {
        if (ev->v.i < 0) {
            return wk__dec_fail(d, WK_ERR_RANGE, voff, "negative integer for an unsigned field");
        }
        u = (uint64_t)ev->v.i;
    } else {
        return wk__dec_fail(d, WK_ERR_TYPE, voff, "expected integer");
    }
    if (u > max) {
        return wk__dec_fail(d, WK_ERR_RANGE, voff, "integer out of range for the field");
    }
    *out = u;
    return WK_OK;
}

/* A string event as a NUL-terminated copy in the arena (*out). WK_ERR_TYPE when it holds a
 * NUL byte: a C string could not carry it. */
static wk_status dec_string(wk__dec *d, const wk_event *ev, char **out, size_t voff)
{
    if (memchr(ev->v.str.ptr, 0, ev->v.str.len) != NULL) {
        return wk__dec_fail(d, WK_ERR_TYPE, voff, "string contains a NUL byte");
    }
    char *s = wk_arena_strndup(d->arena, ev->v.str.ptr, ev->v.str.len);
    if (s == NULL) {
        return wk__dec_fail(d, WK_ERR_NOMEM, voff, "arena exhausted");
    }
    *out = s;
    return WK_OK;
}

/* Stores the value whose first event is ev into dst, a field of type t (contract in
 * schema_decode_interface.h): scalars are converted with their range checks, nil is taken
 * for WK_NULLABLE fields, structs and arrays push a frame the loop then fills. */
wk_status wk__dec_scalar(wk__dec *d, const wk_schema_type *t, uint8_t *dst, uint32_t flags,
                         size_t *count_dst, const wk_event *ev, size_t voff)
{
    wk_status st;
    int64_t i;
    uint64_t u;
    /* null for a WK_NULLABLE field: pointers and counts become NULL and 0; other kinds keep
     * what the struct held (the caller's default) */
    if (ev->type == WK_EV_NIL && (flags & WK_NULLABLE) != 0) {
        if (t->kind == WK_SK_STR) {
            *(char **)dst = NULL;
        } else if (t->kind == WK_SK_BYTES) {
            ((wk_slice *)dst)->ptr = NULL;
            ((wk_slice *)dst)->len = 0;
        } else if (t->kind == WK_SK_ARRAY) {
            *(void **)dst = NULL;
            *count_dst = 0;
        }
        return WK_OK;
    }
    /* Each kind takes the events that can stand for it; a `break` is a value of the wrong
     * type, reported after the switch with the kind's expected_msg. */
    switch ((wk_schema_kind)t->kind) {
    case WK_SK_BOOL:
        if (ev->type != WK_EV_BOOL) {
            break;
        }
        *(bool *)dst = ev->v.b;
        return WK_OK;
    /* integers: either integer event, range-checked for the member's width */
    case WK_SK_I8:
        st = dec_int(d, ev, INT8_MIN, INT8_MAX, &i, voff);
        if (st == WK_OK) {
            *(int8_t *)dst = (int8_t)i;
        }
        return st;
    case WK_SK_I16:
        st = dec_int(d, ev, INT16_MIN, INT16_MAX, &i, voff);
        if (st == WK_OK) {
            *(int16_t *)dst = (int16_t)i;
        }
        return st;
    case WK_SK_I32:
        st = dec_int(d, ev, INT32_MIN, INT32_MAX, &i, voff);
        if (st == WK_OK) {
            *(int32_t *)dst = (int32_t)i;
        }
        return st;
    case WK_SK_I64:
        st = dec_int(d, ev, INT64_MIN, INT64_MAX, &i, voff);
        if (st == WK_OK) {
            *(int64_t *)dst = i;
        }
        return st;
    case WK_SK_U8:
        st = dec_uint(d, ev, UINT8_MAX, &u, voff);
        if (st == WK_OK) {
            *dst = (uint8_t)u;
        }
        return st;
    case WK_SK_U16:
        st = dec_uint(d, ev, UINT16_MAX, &u, voff);
        if (st == WK_OK) {
            *(uint16_t *)dst = (uint16_t)u;
        }
        return st;
    case WK_SK_U32:
        st = dec_uint(d, ev, UINT32_MAX, &u, voff);
        if (st == WK_OK) {
            *(uint32_t *)dst = (uint32_t)u;
        }
        return st;
    case WK_SK_U64:
        st = dec_uint(d, ev, UINT64_MAX, &u, voff);
        if (st == WK_OK) {
            *(uint64_t *)dst = u;
        }
        return st;
    /* floats: any number (integers converted); a finite double beyond FLT_MAX does not fit
     * a float member, while NaN and infinities are stored as they are */
    case WK_SK_F32:
    case WK_SK_F64: {
        double v;
        if (ev->type == WK_EV_FLOAT) {
            v = ev->v.f;
        } else if (ev->type == WK_EV_UINT) {
            v = (double)ev->v.u;
        } else if (ev->type == WK_EV_INT) {
            v = (double)ev->v.i;
        } else {
            break;
        }
        if (t->kind == WK_SK_F64) {
            *(double *)dst = v;
            return WK_OK;
        }
        if (v == v && (v > FLT_MAX || v < -FLT_MAX) && v - v == 0.0) {
            return wk__dec_fail(d, WK_ERR_RANGE, voff, "number out of range for a float");
        }
        *(float *)dst = (float)v;
        return WK_OK;
    }
    case WK_SK_STR:
        if (ev->type != WK_EV_STR) {
            break;
        }
        return dec_string(d, ev, (char **)dst, voff);
    /* char[N]: the string and its NUL must fit the member */
    case WK_SK_STRBUF:
        if (ev->type != WK_EV_STR) {
            break;
        }
        if (ev->v.str.len >= t->size) {
            return wk__dec_fail(d, WK_ERR_RANGE, voff, "string too long for the field");
        }
        if (memchr(ev->v.str.ptr, 0, ev->v.str.len) != NULL) {
            return wk__dec_fail(d, WK_ERR_TYPE, voff, "string contains a NUL byte");
        }
        memcpy(dst, ev->v.str.ptr, ev->v.str.len);
        dst[ev->v.str.len] = '\0';
        return WK_OK;
    /* bytes: binary as it is, or a base64 string (the text form of formats without binary) */
    case WK_SK_BYTES: {
        wk_slice *b = (wk_slice *)dst;
        if (ev->type == WK_EV_STR) {
            if (!wk__schema_base64_decode(d->arena, ev->v.str.ptr, ev->v.str.len, b)) {
                return wk__dec_fail(d, WK_ERR_TYPE, voff, "expected bytes (base64 string)");
            }
            return WK_OK;
        }
        if (ev->type != WK_EV_BIN) {
            break;
        }
        uint8_t *p = wk_arena_alloc(d->arena, ev->v.str.len, 1);
        if (p == NULL) {
            return wk__dec_fail(d, WK_ERR_NOMEM, voff, "arena exhausted");
        }
        if (ev->v.str.len != 0) {
            memcpy(p, ev->v.str.ptr, ev->v.str.len);
        }
        b->ptr = (const char *)p;
        b->len = ev->v.str.len;
        return WK_OK;
    }
    /* timestamps: the native event, or an RFC 3339 string */
    case WK_SK_TIMESTAMP:
        if (ev->type == WK_EV_TIMESTAMP) {
            ((wk_timestamp *)dst)->sec = ev->v.ts.sec;
            ((wk_timestamp *)dst)->nsec = ev->v.ts.nsec;
            return WK_OK;
        }
        if (ev->type == WK_EV_STR) {
            if (!wk__schema_parse_rfc3339(ev->v.str.ptr, ev->v.str.len, (wk_timestamp *)dst)) {
                return wk__dec_fail(d, WK_ERR_TYPE, voff,
                                    "expected timestamp (RFC 3339 date-time)");
            }
            return WK_OK;
        }
        break;
    case WK_SK_VALUE: break; /* handled by the caller (wk__dec_value_tree) */
    /* a nested struct: a frame the loop fills key by key; its index was built with the
     * outer descriptor's (wk_schema_prepare checks nested descriptors first) */
    case WK_SK_STRUCT: {
        if (ev->type != WK_EV_MAP) {
            break;
        }
        wk__dec_frame *f = push_frame(d, voff, &st);
        if (f == NULL) {
            return st;
        }
        f->s = t->schema;
        f->ix = (const wk__schema_index *)__atomic_load_n(&t->schema->rt->index,
                                                         __ATOMIC_ACQUIRE);
        f->base = dst;
        f->seen = 0;
        f->next = 0;
        return WK_OK;
    }
    /* an array: a frame whose elements grow in the arena (wk__dec_array_slot) and are stored
     * in the field when it closes (wk__dec_pop) */
    case WK_SK_ARRAY: {
        if (ev->type != WK_EV_ARRAY) {
            break;
        }
        wk__dec_frame *f = push_frame(d, voff, &st);
        if (f == NULL) {
            return st;
        }
        f->s = NULL;
        f->elem = t->elem;
        f->declared = ev->v.count == WK_COUNT_UNKNOWN ? SIZE_MAX : ev->v.count;
        f->dst_items = (void **)dst;
        f->dst_count = count_dst;
        return WK_OK;
    }
    }
    return wk__dec_fail(d, WK_ERR_TYPE, voff, expected_msg(t->kind));
}

/* Closes the top frame at its end (schema_decode_interface.h): a struct must have seen every
 * required field (the first missing one goes into the path), an array its declared count;
 * the array's items and count are then stored in the field. */
wk_status wk__dec_pop(wk__dec *d, size_t voff)
{
    wk__dec_frame *f = &d->stack[d->depth - 1];
    if (f->s != NULL) {
        uint64_t missing = f->ix->required_mask & ~f->seen;
        if (missing != 0) {
            for (uint32_t i = 0; i < f->s->nfields; i++) {
                uint8_t bit = f->ix->reqbit[i];
                if (bit != 0xff && (missing & ((uint64_t)1 << bit)) != 0) {
                    f->cur = (int32_t)i;
                    break;
                }
            }
            return wk__dec_fail(d, WK_ERR_NOT_FOUND, voff, "missing required field");
        }
    } else {
        if (f->declared != SIZE_MAX && f->count != f->declared) {
            return wk__dec_fail(d, WK_ERR_SYNTAX, voff, "array ended before its count");
        }
        if (f->items == NULL) {
            f->items = wk_arena_alloc(d->arena, 0, 16);
            if (f->items == NULL) {
                return wk__dec_fail(d, WK_ERR_NOMEM, voff, "arena exhausted");
            }
        }
        *f->dst_items = f->items;
        *f->dst_count = f->count;
    }
    d->depth--;
    return WK_OK;
}

/* Room for the next element of array frame f, zeroed (schema_decode_interface.h). The items
 * double in the arena from 16, never past a declared count: memory follows the elements
 * actually read, whatever count the input announces. */
uint8_t *wk__dec_array_slot(wk__dec *d, wk__dec_frame *f, size_t voff, wk_status *st)
{
    if (f->declared != SIZE_MAX && f->count == f->declared) {
        *st = wk__dec_fail(d, WK_ERR_SYNTAX, voff, "array longer than its count");
        return NULL;
    }
    size_t size = f->elem->size;
    if (f->count == f->cap) {
        size_t cap = f->cap != 0 ? f->cap * 2 : 16;
        if (f->declared != SIZE_MAX && cap > f->declared) {
            cap = f->declared;
        }
        size_t bytes;
        if (!wk_size_mul(cap, size, &bytes)) {
            *st = wk__dec_fail(d, WK_ERR_LIMIT, voff, "array too large");
            return NULL;
        }
        uint8_t *items = wk_arena_alloc(d->arena, bytes, 16);
        if (items == NULL) {
            *st = wk__dec_fail(d, WK_ERR_NOMEM, voff, "arena exhausted");
            return NULL;
        }
        if (f->count != 0) {
            memcpy(items, f->items, f->count * size);
        }
        memset(items + f->count * size, 0, bytes - f->count * size);
        f->items = items;
        f->cap = cap;
    }
    uint8_t *slot = f->items + f->count * size;
    f->count++;
    return slot;
}

/* ---- wk_value fields: a source that replays one event first ----------------------------- */

/* A wk_source that gives `first` (already read from src by the decode loop) before src's
 * own events, so wk_value_decode sees the value from its first event. */
typedef struct pushback {
    const wk_source *src;
    const wk_event *first; /* NULL once given */
} pushback;

/* The push-back source: the event already read first, then the wrapped source's. */
static wk_status pb_next(void *self, wk_event *ev)
{
    pushback *pb = self;
    if (pb->first != NULL) {
        *ev = *pb->first;
        pb->first = NULL;
        return WK_OK;
    }
    return pb->src->next(pb->src->self, ev);
}

static size_t pb_offset(const void *self)
{
    const pushback *pb = self;
    return pb->src->offset(pb->src->self);
}

static wk_status pb_error(const void *self, wk_error *err)
{
    const pushback *pb = self;
    return pb->src->error(pb->src->self, err);
}

/* A wk_value field: the tree whose first event ev was read from src, built by
 * wk_value_decode in the decoder's arena with strings copied (the reader's views may not
 * outlive the call) and the depth the field has left; a failure is reported at its offset. */
wk_status wk__dec_value_tree(wk__dec *d, const wk_source *src, const wk_event *ev,
                             wk_value *out, size_t voff)
{
    if (ev->type == WK_EV_END) {
        return wk__dec_fail(d, WK_ERR_SYNTAX, voff, "unexpected end of container");
    }
    pushback pb = {src, ev};
    wk_source s = {pb_next, pb_offset, pb_error, &pb};
    wk_read_opts vo = {0};
    vo.flags = WK_READ_COPY_STRINGS;
    vo.max_depth = d->limit > d->depth ? d->limit - d->depth : 1;
    wk_value *v = NULL;
    wk_error e = {WK_OK, 0, NULL};
    wk_status st = wk_value_decode(&s, &vo, d->arena, &v, &e);
    if (st != WK_OK) {
        return wk__dec_fail(d, st, e.offset, e.msg);
    }
    *out = *v;
    return WK_OK;
}
