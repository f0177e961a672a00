/*
 * Generic schema encoder: walks a struct through its descriptor and emits events to any sink.
 *
 * Nesting (structs in structs, arrays of structs holding arrays...) is handled with an
 * explicit stack of frames, so a deep or cyclic object costs a WK_ERR_DEPTH, never a stack
 * overflow. Each map's pair count is computed before the map begins (one pass over the
 * struct's fields to see which WK_OMITEMPTY fields are empty), so writers that need counts up
 * front never have to patch a header. The fused MessagePack encoder (schema_mp.c) makes the
 * same decisions field for field; tests compare the two byte for byte.
 * Flow: the caller's struct -> this walk (the plan: schema_plan_interface.h) -> events -> any
 * sink (a JSON or MessagePack writer, a transcoder, a tree builder).
 */
#include "schema/schema_plan_interface.h"

/* One open struct or array of the walk. */
typedef struct enc_frame {
    const wk_schema *s;         /* struct frame, or NULL for an array frame */
    const uint8_t *base;        /* struct base, or array items */
    const wk_schema_type *elem; /* array element type */
    size_t count;               /* array element count */
    size_t i;                   /* next field / element */
} enc_frame;

/* The walk's state: the sink, the stack of open frames (fixed: WK__SCHEMA_MAX_DEPTH), and
 * where a failure goes. */
typedef struct enc {
    const wk_sink *sink;
    enc_frame stack[WK__SCHEMA_MAX_DEPTH];
    uint32_t depth;
    wk_error *err;
    const wk_allocator *alloc; /* the root index's allocator: deep wk_value frames */
} enc;

/* Sends ev to the sink; when the sink fails, its own report goes into e->err. */
static wk_status emit(enc *e, const wk_event *ev)
{
    wk_status st = e->sink->event(e->sink->self, ev);
    if (st != WK_OK && e->err != NULL) {
        e->sink->error(e->sink->self, e->err);
    }
    return st;
}

/* A string or binary event over p[0..len) (NULL with len 0 is the empty string);
 * WK_ERR_ARG beyond 4 GiB. */
static wk_status emit_str(enc *e, wk_event_type type, const void *p, size_t len)
{
    if (len > UINT32_MAX) {
        return wk_error_set(e->err, WK_ERR_ARG, 0, "schema: string longer than 4 GiB");
    }
    wk_event ev;
    ev.type = type;
    ev.f32 = false;
    ev.v.str.ptr = p != NULL ? p : "";
    ev.v.str.len = len;
    return emit(e, &ev);
}

/* An event with no payload (nil, END). */
static wk_status emit_simple(enc *e, wk_event_type type)
{
    wk_event ev;
    ev.type = type;
    ev.f32 = false;
    ev.v.u = 0;
    return emit(e, &ev);
}

/* A signed integer, as WK_EV_UINT when non-negative (the decoders' convention, so both
 * encoders write the shortest MessagePack form). */
static wk_status emit_int(enc *e, int64_t v)
{
    wk_event ev;
    ev.f32 = false;
    if (v >= 0) {
        ev.type = WK_EV_UINT;
        ev.v.u = (uint64_t)v;
    } else {
        ev.type = WK_EV_INT;
        ev.v.i = v;
    }
    return emit(e, &ev);
}

/* An unsigned integer event. */
static wk_status emit_uint(enc *e, uint64_t v)
{
    wk_event ev;
    ev.type = WK_EV_UINT;
    ev.f32 = false;
    ev.v.u = v;
    return emit(e, &ev);
}

/* Opens a frame and emits its header: a struct (s) as a map of its present fields, counted
 * first; an array (s NULL) of `count` elements of type elem at base. WK_ERR_DEPTH past
 * WK__SCHEMA_MAX_DEPTH levels. */
static wk_status push(enc *e, const wk_schema *s, const uint8_t *base,
                      const wk_schema_type *elem, size_t count)
{
    if (e->depth == WK__SCHEMA_MAX_DEPTH) {
        return wk_error_set(e->err, WK_ERR_DEPTH, 0, "schema: object nested too deeply");
    }
    enc_frame *f = &e->stack[e->depth++];
    f->s = s;
    f->base = base;
    f->elem = elem;
    f->count = count;
    f->i = 0;
    wk_event ev;
    ev.f32 = false;
    if (s != NULL) {
        ev.type = WK_EV_MAP;
        ev.v.count = wk__schema_present_count(s, base);
    } else {
        if (count >= WK_COUNT_UNKNOWN) {
            return wk_error_set(e->err, WK_ERR_ARG, 0, "schema: array longer than 2^32-1");
        }
        ev.type = WK_EV_ARRAY;
        ev.v.count = (uint32_t)count;
    }
    return emit(e, &ev);
}

/* Emits one value of type `t` stored at `p` (`flags`: the field's flags, 0 for elements). */
static wk_status emit_value(enc *e, const wk_schema_type *t, const uint8_t *p, uint32_t flags,
                            size_t count)
{
    wk_event ev;
    ev.f32 = false;
    /* Scalars become one event each (a float member keeps f32, so writers keep its width);
     * NULL pointers are nil for WK_NULLABLE fields, else empty; char[N] ends at its NUL;
     * structs and arrays open a frame that the loop in wk_schema_encode then walks. */
    switch ((wk_schema_kind)t->kind) {
    case WK_SK_BOOL:
        ev.type = WK_EV_BOOL;
        ev.v.b = *(const bool *)p;
        return emit(e, &ev);
    case WK_SK_I8: return emit_int(e, *(const int8_t *)p);
    case WK_SK_I16: return emit_int(e, *(const int16_t *)p);
    case WK_SK_I32: return emit_int(e, *(const int32_t *)p);
    case WK_SK_I64: return emit_int(e, *(const int64_t *)p);
    case WK_SK_U8: return emit_uint(e, *p);
    case WK_SK_U16: return emit_uint(e, *(const uint16_t *)p);
    case WK_SK_U32: return emit_uint(e, *(const uint32_t *)p);
    case WK_SK_U64: return emit_uint(e, *(const uint64_t *)p);
    case WK_SK_F32:
        ev.type = WK_EV_FLOAT;
        ev.f32 = true;
        ev.v.f = *(const float *)p;
        return emit(e, &ev);
    case WK_SK_F64:
        ev.type = WK_EV_FLOAT;
        ev.v.f = *(const double *)p;
        return emit(e, &ev);
    case WK_SK_STR: {
        const char *s = *(const char *const *)p;
        if (s == NULL && (flags & WK_NULLABLE) != 0) {
            return emit_simple(e, WK_EV_NIL);
        }
        return emit_str(e, WK_EV_STR, s, s != NULL ? strlen(s) : 0);
    }
    case WK_SK_STRBUF: {
        const char *s = (const char *)p;
        const char *nul = memchr(s, 0, t->size);
        return emit_str(e, WK_EV_STR, s, nul != NULL ? (size_t)(nul - s) : t->size);
    }
    case WK_SK_BYTES: {
        const wk_slice *b = (const wk_slice *)p;
        if (b->ptr == NULL && (flags & WK_NULLABLE) != 0) {
            return emit_simple(e, WK_EV_NIL);
        }
        if (b->ptr == NULL && b->len != 0) {
            return wk_error_set(e->err, WK_ERR_ARG, 0, "schema: NULL bytes with a length");
        }
        return emit_str(e, WK_EV_BIN, b->ptr, b->len);
    }
    case WK_SK_TIMESTAMP: {
        const wk_timestamp *ts = (const wk_timestamp *)p;
        if (ts->nsec >= 1000000000u) {
            return wk_error_set(e->err, WK_ERR_ARG, 0, "schema: timestamp nanoseconds >= 1e9");
        }
        ev.type = WK_EV_TIMESTAMP;
        ev.v.ts.sec = ts->sec;
        ev.v.ts.nsec = ts->nsec;
        return emit(e, &ev);
    }
    case WK_SK_VALUE: {
        wk_status st = wk_value_encode((const wk_value *)p, e->alloc, e->sink, e->err);
        return st;
    }
    case WK_SK_STRUCT: return push(e, t->schema, p, NULL, 0);
    case WK_SK_ARRAY: {
        const uint8_t *items = *(const uint8_t *const *)p;
        if (items == NULL && (flags & WK_NULLABLE) != 0) {
            return emit_simple(e, WK_EV_NIL);
        }
        if (items == NULL && count != 0) {
            return wk_error_set(e->err, WK_ERR_ARG, 0, "schema: NULL array with a count");
        }
        return push(e, NULL, items, t->elem, count);
    }
    }
    return wk_error_set(e->err, WK_ERR_ARG, 0, "schema: unknown field kind");
}

/* Walks the struct obj by the descriptor s into sink (wirekit/schema.h): the plan is built
 * on first use; failures are the walk's (WK_ERR_ARG, WK_ERR_DEPTH) or the sink's, in err. */
WK_API wk_status wk_schema_encode(const wk_schema *s, const void *obj, const wk_sink *sink,
                                  wk_error *err)
{
    if (s == NULL || obj == NULL || sink == NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "schema: NULL argument");
    }
    const wk__schema_index *ix = wk__schema_index_get(s, NULL, err);
    if (ix == NULL) {
        return err != NULL ? err->code : WK_ERR_ARG;
    }
    enc e;
    e.sink = sink;
    e.depth = 0;
    e.err = err;
    e.alloc = ix->alloc;
    if (s->root == WK_SCHEMA_ROOT_VALUE) {
        return wk_value_encode(obj, ix->alloc, sink, err); /* obj is a wk_value */
    }
    /* The walk: the top frame's next field (its name, then its value) or element, and its
     * END once it has none left; a value that is a struct or array pushes a frame. */
    wk_status st = push(&e, s, obj, NULL, 0);
    while (st == WK_OK && e.depth > 0) {
        enc_frame *f = &e.stack[e.depth - 1];
        if (f->s != NULL) {
            const wk_schema_field *fd = wk__schema_next_field(f->s, f->base, &f->i);
            if (fd == NULL) {
                e.depth--;
                st = emit_simple(&e, WK_EV_END);
                continue;
            }
            st = emit_str(&e, WK_EV_STR, fd->name, fd->name_len);
            if (st == WK_OK && wk__schema_field_null(fd, f->base)) {
                st = emit_simple(&e, WK_EV_NIL);
            } else if (st == WK_OK) {
                size_t count = 0;
                if (fd->type.kind == WK_SK_ARRAY) {
                    count = *(const size_t *)(f->base + fd->count_offset);
                }
                st = emit_value(&e, &fd->type, f->base + fd->offset, fd->flags, count);
            }
        } else {
            /* an array frame: elements are elem->size bytes apart; an element that is an
             * array carries its own count (wk_schema_array) */
            if (f->i == f->count) {
                e.depth--;
                st = emit_simple(&e, WK_EV_END);
                continue;
            }
            const uint8_t *p = f->base + f->i * f->elem->size;
            f->i++;
            size_t count = 0;
            if (f->elem->kind == WK_SK_ARRAY) {
                count = ((const wk_schema_array *)p)->count;
            }
            st = emit_value(&e, f->elem, p, 0, count);
        }
    }
    return st;
}
