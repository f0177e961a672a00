/*
 * The fused MessagePack paths of the schema codec.
 *
 * Encoding walks the descriptor exactly as wk_schema_encode does (same frames, same emptiness
 * rules, same pair counts) but calls the MessagePack writer's inline functions directly
 * instead of dispatching events through a sink; wk_value fields go through the writer's fused
 * tree encoder. Decoding instantiates the shared decode loop (schema_decode_core.h) over a
 * small cursor that mirrors wk_mp_reader_next with the msgpack module's inline token decoder,
 * so no call is made per event; wk_value fields are built by the msgpack module's fused tree
 * decoder straight from the bytes. Neither path knows MessagePack's byte layout itself, and
 * both give byte-identical output and identical errors to the generic paths (tests compare).
 */
#include "msgpack/mp_token.h"
#include "schema/schema_decode_util.h"

/* ---- encoding ----------------------------------------------------------------------------- */

typedef struct mp_frame {
    const wk_schema *s;
    const uint8_t *base;
    const wk_schema_type *elem;
    size_t count;
    size_t i;
} mp_frame;

typedef struct mp_enc {
    wk_mp_writer w;
    uint32_t depth;
    mp_frame stack[WK__SCHEMA_MAX_DEPTH];
} mp_enc;

static bool mp_push(mp_enc *e, const wk_schema *s, const uint8_t *base,
                    const wk_schema_type *elem, size_t count)
{
    if (e->depth == WK__SCHEMA_MAX_DEPTH) {
        wk_mp_writer_fail(&e->w, WK_ERR_DEPTH, "schema: object nested too deeply");
        return false;
    }
    mp_frame *f = &e->stack[e->depth++];
    f->s = s;
    f->base = base;
    f->elem = elem;
    f->count = count;
    f->i = 0;
    if (s != NULL) {
        wk_mp_write_map(&e->w, wk__schema_present_count(s, base));
    } else if (count >= WK_COUNT_UNKNOWN) {
        wk_mp_writer_fail(&e->w, WK_ERR_ARG, "schema: array longer than 2^32-1");
        return false;
    } else {
        wk_mp_write_array(&e->w, (uint32_t)count);
    }
    return true;
}

static void mp_put_str(wk_mp_writer *w, const char *s, size_t len)
{
    if (len > UINT32_MAX) {
        wk_mp_writer_fail(w, WK_ERR_ARG, "schema: string longer than 4 GiB");
        return;
    }
    wk_mp_write_str(w, s, len);
}

static void mp_put_value(mp_enc *e, const wk_schema_type *t, const uint8_t *p, uint32_t flags,
                         size_t count)
{
    wk_mp_writer *w = &e->w;
    switch ((wk_schema_kind)t->kind) {
    case WK_SK_BOOL: wk_mp_write_bool(w, *(const bool *)p); return;
    case WK_SK_I8: wk_mp_write_int(w, *(const int8_t *)p); return;
    case WK_SK_I16: wk_mp_write_int(w, *(const int16_t *)p); return;
    case WK_SK_I32: wk_mp_write_int(w, *(const int32_t *)p); return;
    case WK_SK_I64: wk_mp_write_int(w, *(const int64_t *)p); return;
    case WK_SK_U8: wk_mp_write_uint(w, *p); return;
    case WK_SK_U16: wk_mp_write_uint(w, *(const uint16_t *)p); return;
    case WK_SK_U32: wk_mp_write_uint(w, *(const uint32_t *)p); return;
    case WK_SK_U64: wk_mp_write_uint(w, *(const uint64_t *)p); return;
    case WK_SK_F32: wk_mp_write_float(w, *(const float *)p); return;
    case WK_SK_F64: wk_mp_write_double(w, *(const double *)p); return;
    case WK_SK_STR: {
        const char *s = *(const char *const *)p;
        if (s == NULL && (flags & WK_NULLABLE) != 0) {
            wk_mp_write_nil(w);
        } else if (s == NULL) {
            mp_put_str(w, "", 0);
        } else {
            mp_put_str(w, s, strlen(s));
        }
        return;
    }
    case WK_SK_STRBUF: {
        const char *s = (const char *)p;
        const char *nul = memchr(s, 0, t->size);
        mp_put_str(w, s, nul != NULL ? (size_t)(nul - s) : t->size);
        return;
    }
    case WK_SK_BYTES: {
        const wk_bytes *b = (const wk_bytes *)p;
        if (b->ptr == NULL && (flags & WK_NULLABLE) != 0) {
            wk_mp_write_nil(w);
        } else if (b->ptr == NULL && b->len != 0) {
            wk_mp_writer_fail(w, WK_ERR_ARG, "schema: NULL bytes with a length");
        } else if (b->len > UINT32_MAX) {
            wk_mp_writer_fail(w, WK_ERR_ARG, "schema: string longer than 4 GiB");
        } else {
            wk_mp_write_bin(w, b->ptr, b->len);
        }
        return;
    }
    case WK_SK_TIMESTAMP: {
        const wk_timestamp *ts = (const wk_timestamp *)p;
        if (ts->nsec >= 1000000000u) {
            wk_mp_writer_fail(w, WK_ERR_ARG, "schema: timestamp nanoseconds >= 1e9");
            return;
        }
        wk_mp_write_timestamp(w, ts->sec, ts->nsec);
        return;
    }
    case WK_SK_VALUE: wk_mp_write_value(w, (const wk_value *)p); return;
    case WK_SK_STRUCT: mp_push(e, t->schema, p, NULL, 0); return;
    case WK_SK_ARRAY: {
        const uint8_t *items = *(const uint8_t *const *)p;
        if (items == NULL && (flags & WK_NULLABLE) != 0) {
            wk_mp_write_nil(w);
        } else if (items == NULL && count != 0) {
            wk_mp_writer_fail(w, WK_ERR_ARG, "schema: NULL array with a count");
        } else {
            mp_push(e, NULL, items, t->elem, count);
        }
        return;
    }
    }
    wk_mp_writer_fail(w, WK_ERR_ARG, "schema: unknown field kind");
}

/* ---- the flat fast path: one pre-sized pass for structs without nested structs/arrays ---- */

/* Copies a short run of bytes without a library call (most keys and strings are short). */
static inline uint8_t *copy_small(uint8_t *p, const void *src, size_t n)
{
    const uint8_t *s = src;
    if (n <= 16) {
        if (n >= 8) {
            memcpy(p, s, 8);
            memcpy(p + n - 8, s + n - 8, 8);
        } else if (n >= 4) {
            memcpy(p, s, 4);
            memcpy(p + n - 4, s + n - 4, 4);
        } else if (n > 0) {
            p[0] = s[0];
            p[n / 2] = s[n / 2];
            p[n - 1] = s[n - 1];
        }
        return p + n;
    }
    memcpy(p, s, n);
    return p + n;
}

#define VAL_MAX_DEPTH 8
#define VAL_MAX_NODES 256

/* Upper bound of the bytes of a small wk_value tree made of the node types the flat writer
 * handles (nil, bool, integers, float64, strings, arrays, maps); SIZE_MAX for anything else
 * (the caller then takes the general path, which uses the msgpack module's tree writer). */
static size_t value_bound(const wk_value *v)
{
    const wk_value *ptr[VAL_MAX_DEPTH];
    uint32_t rem[VAL_MAX_DEPTH];
    int sp = 0;
    size_t total = 0;
    int nodes = 0;
    ptr[0] = v;
    rem[0] = 1;
    sp = 1;
    while (sp > 0) {
        if (rem[sp - 1] == 0) {
            sp--;
            continue;
        }
        const wk_value *n = ptr[sp - 1]++;
        rem[sp - 1]--;
        if (++nodes > VAL_MAX_NODES) {
            return SIZE_MAX;
        }
        switch ((wk_value_type)n->type) {
        case WK_VAL_NIL:
        case WK_VAL_BOOL: total += 1; break;
        case WK_VAL_INT:
        case WK_VAL_UINT: total += 9; break;
        case WK_VAL_FLOAT:
            if ((n->flags & WK_VALF_F32) != 0) {
                return SIZE_MAX;
            }
            total += 9;
            break;
        case WK_VAL_STR: total += 5 + (size_t)n->len; break;
        case WK_VAL_ARRAY:
        case WK_VAL_MAP:
            total += 5;
            if (n->len != 0) {
                if (sp == VAL_MAX_DEPTH) {
                    return SIZE_MAX;
                }
                /* A map's pairs are key/value wk_values side by side. */
                ptr[sp] = n->type == WK_VAL_MAP ? &n->u.pairs[0].key : n->u.items;
                rem[sp] = n->type == WK_VAL_MAP ? 2 * n->len : n->len;
                sp++;
            }
            break;
        default: return SIZE_MAX;
        }
    }
    return total;
}

/* Writes a tree value_bound() accepted; same bytes as wk_mp_write_value. */
static uint8_t *value_write(uint8_t *p, const wk_value *v)
{
    const wk_value *ptr[VAL_MAX_DEPTH];
    uint32_t rem[VAL_MAX_DEPTH];
    int sp = 1;
    ptr[0] = v;
    rem[0] = 1;
    while (sp > 0) {
        if (rem[sp - 1] == 0) {
            sp--;
            continue;
        }
        const wk_value *n = ptr[sp - 1]++;
        rem[sp - 1]--;
        switch ((wk_value_type)n->type) {
        case WK_VAL_NIL: p = wk_mp_encode_nil(p); break;
        case WK_VAL_BOOL: p = wk_mp_encode_bool(p, n->u.b); break;
        case WK_VAL_INT: p = wk_mp_encode_int(p, n->u.i); break;
        case WK_VAL_UINT: p = wk_mp_encode_uint(p, n->u.u); break;
        case WK_VAL_FLOAT: p = wk_mp_encode_double(p, n->u.f); break;
        case WK_VAL_STR:
            p = wk_mp_encode_str_header(p, n->len);
            p = copy_small(p, n->u.str, n->len);
            break;
        case WK_VAL_ARRAY:
        case WK_VAL_MAP:
            if (n->type == WK_VAL_MAP) {
                p = wk_mp_encode_map_header(p, n->len);
            } else {
                p = wk_mp_encode_array_header(p, n->len);
            }
            if (n->len != 0) {
                ptr[sp] = n->type == WK_VAL_MAP ? &n->u.pairs[0].key : n->u.items;
                rem[sp] = n->type == WK_VAL_MAP ? 2 * n->len : n->len;
                sp++;
            }
            break;
        default: break; /* excluded by value_bound */
        }
    }
    return p;
}

/* Encodes a flat struct in one pre-sized pass. Returns false, having written nothing, when the
 * object needs the general path (an unusual value, or an error the general path reports). */
static bool enc_flat(wk_mp_writer *w, const wk_schema *s, const wk__schema_index *ix,
                     const uint8_t *base)
{
    size_t lens[64];
    uint64_t present = 0;
    uint32_t n = 0;
    size_t bound = 5;
    for (uint32_t i = 0; i < s->nfields; i++) {
        const wk_schema_field *f = &s->fields[i];
        if ((f->flags & WK_OMITEMPTY) != 0 && wk__schema_field_empty(f, base)) {
            continue;
        }
        present |= (uint64_t)1 << i;
        n++;
        bound += ix->mp_key_len[i];
        const uint8_t *p = base + f->offset;
        switch ((wk_schema_kind)f->type.kind) {
        case WK_SK_STR: {
            const char *str = *(const char *const *)p;
            lens[i] = str != NULL ? strlen(str) : 0;
            if (lens[i] > UINT32_MAX) {
                return false;
            }
            bound += 5 + lens[i];
            break;
        }
        case WK_SK_STRBUF: {
            const char *nul = memchr(p, 0, f->type.size);
            lens[i] = nul != NULL ? (size_t)(nul - (const char *)p) : f->type.size;
            bound += 5 + lens[i];
            break;
        }
        case WK_SK_BYTES: {
            const wk_bytes *b = (const wk_bytes *)p;
            if ((b->ptr == NULL && b->len != 0) || b->len > UINT32_MAX) {
                return false;
            }
            bound += 5 + b->len;
            break;
        }
        case WK_SK_TIMESTAMP:
            if (((const wk_timestamp *)p)->nsec >= 1000000000u) {
                return false;
            }
            bound += 15;
            break;
        case WK_SK_VALUE: {
            size_t vb = value_bound((const wk_value *)p);
            if (vb == SIZE_MAX) {
                return false;
            }
            bound += vb;
            break;
        }
        case WK_SK_STRUCT:
        case WK_SK_ARRAY: return false;
        default: bound += 9; break;
        }
    }
    uint8_t *o = wk_mp_writer_ensure(w, bound);
    if (o == NULL) {
        return true; /* the writer latched the error; finish reports it */
    }
    o = wk_mp_encode_map_header(o, n);
    for (uint32_t i = 0; i < s->nfields; i++) {
        if ((present & ((uint64_t)1 << i)) == 0) {
            continue;
        }
        const wk_schema_field *f = &s->fields[i];
        const uint8_t *p = base + f->offset;
        o = copy_small(o, ix->mp_keys + ix->mp_key_off[i], ix->mp_key_len[i]);
        switch ((wk_schema_kind)f->type.kind) {
        case WK_SK_BOOL: o = wk_mp_encode_bool(o, *(const bool *)p); break;
        case WK_SK_I8: o = wk_mp_encode_int(o, *(const int8_t *)p); break;
        case WK_SK_I16: o = wk_mp_encode_int(o, *(const int16_t *)p); break;
        case WK_SK_I32: o = wk_mp_encode_int(o, *(const int32_t *)p); break;
        case WK_SK_I64: o = wk_mp_encode_int(o, *(const int64_t *)p); break;
        case WK_SK_U8: o = wk_mp_encode_uint(o, *p); break;
        case WK_SK_U16: o = wk_mp_encode_uint(o, *(const uint16_t *)p); break;
        case WK_SK_U32: o = wk_mp_encode_uint(o, *(const uint32_t *)p); break;
        case WK_SK_U64: o = wk_mp_encode_uint(o, *(const uint64_t *)p); break;
        case WK_SK_F64: o = wk_mp_encode_double(o, *(const double *)p); break;
        case WK_SK_STR: {
            const char *str = *(const char *const *)p;
            if (str == NULL && (f->flags & WK_NULLABLE) != 0) {
                o = wk_mp_encode_nil(o);
            } else {
                o = wk_mp_encode_str_header(o, (uint32_t)lens[i]);
                o = copy_small(o, str, lens[i]);
            }
            break;
        }
        case WK_SK_STRBUF:
            o = wk_mp_encode_str_header(o, (uint32_t)lens[i]);
            o = copy_small(o, p, lens[i]);
            break;
        case WK_SK_VALUE: o = value_write(o, (const wk_value *)p); break;
        default: {
            /* Kinds without a pointer encoder: hand the cursor back, use the checked writer
             * (the room is already reserved, so it cannot grow), take the cursor again. */
            wk_mp_writer_commit(w, o);
            if (f->type.kind == WK_SK_F32) {
                wk_mp_write_float(w, *(const float *)p);
            } else if (f->type.kind == WK_SK_TIMESTAMP) {
                const wk_timestamp *ts = (const wk_timestamp *)p;
                wk_mp_write_timestamp(w, ts->sec, ts->nsec);
            } else {
                const wk_bytes *b = (const wk_bytes *)p;
                if (b->ptr == NULL && (f->flags & WK_NULLABLE) != 0) {
                    wk_mp_write_nil(w);
                } else {
                    wk_mp_write_bin(w, b->ptr, b->len);
                }
            }
            o = w->pos;
            break;
        }
        }
    }
    wk_mp_writer_commit(w, o);
    return true;
}

WK_API wk_status wk_schema_encode_mp(const wk_schema *s, const void *obj, wk_buf *out,
                                     wk_error *err)
{
    if (s == NULL || obj == NULL || out == NULL) {
        return wk_error_set(err, WK_ERR_ARG, 0, "schema: NULL argument");
    }
    const wk__schema_index *ix = wk__schema_index_get(s, err);
    if (ix == NULL) {
        return err != NULL ? err->code : WK_ERR_ARG;
    }
    size_t start = out->len;
    if (s->root == WK_SCHEMA_ROOT_STRUCT && ix->mp_flat) {
        wk_mp_writer w;
        wk_mp_writer_init(&w, out);
        if (enc_flat(&w, s, ix, obj)) {
            wk_status st = wk_mp_writer_finish(&w, err);
            if (st != WK_OK) {
                out->len = start;
            }
            return st;
        }
        wk_mp_writer_finish(&w, NULL);
        out->len = start;
    }
    mp_enc e;
    wk_mp_writer_init(&e.w, out);
    e.depth = 0;
    if (s->root == WK_SCHEMA_ROOT_VALUE) {
        wk_mp_write_value(&e.w, obj);
    } else {
        mp_push(&e, s, obj, NULL, 0);
    }
    while (e.depth > 0 && e.w.status == WK_OK) {
        mp_frame *f = &e.stack[e.depth - 1];
        if (f->s != NULL) {
            const wk_schema_field *fd = NULL;
            while (f->i < f->s->nfields) {
                const wk_schema_field *c = &f->s->fields[f->i++];
                if ((c->flags & WK_OMITEMPTY) == 0 || !wk__schema_field_empty(c, f->base)) {
                    fd = c;
                    break;
                }
            }
            if (fd == NULL) {
                e.depth--;
                continue;
            }
            wk_mp_write_str(&e.w, fd->name, fd->name_len);
            size_t count = 0;
            if (fd->type.kind == WK_SK_ARRAY) {
                count = *(const size_t *)(f->base + fd->count_offset);
            }
            mp_put_value(&e, &fd->type, f->base + fd->offset, fd->flags, count);
        } else {
            if (f->i == f->count) {
                e.depth--;
                continue;
            }
            const uint8_t *p = f->base + f->i * f->elem->size;
            f->i++;
            size_t count = 0;
            if (f->elem->kind == WK_SK_ARRAY) {
                count = ((const wk_slice *)p)->count;
            }
            mp_put_value(&e, f->elem, p, 0, count);
        }
    }
    wk_status st = wk_mp_writer_finish(&e.w, err);
    if (st != WK_OK) {
        out->len = start;
    }
    return st;
}

/* ---- decoding ----------------------------------------------------------------------------- */

/* A cursor with the reader's semantics (events, END after counted elements, latched errors,
 * offsets) and none of its options: no UTF-8 check and the default depth limit, like a
 * wk_mp_reader with default options. The decode loop never lets it nest deeper than the
 * schema depth limit plus one, so its stack is fixed. */
typedef struct mp_cursor {
    const uint8_t *start;
    const uint8_t *pos;
    const uint8_t *end;
    uint32_t depth;
    wk_status status;
    const char *msg;
    size_t err_offset;
    uint64_t rem[WK__SCHEMA_MAX_DEPTH + 4];
} mp_cursor;

static wk_status cur_fail(mp_cursor *r, wk_status st, const uint8_t *at, const char *msg)
{
    r->status = st;
    r->msg = msg;
    r->err_offset = (size_t)(at - r->start);
    return st;
}

static inline wk_status cur_next(mp_cursor *r, wk_event *ev)
{
    if (WK_MP_UNLIKELY(r->status != WK_OK)) {
        return r->status;
    }
    if (r->depth > 0) {
        uint64_t *top = &r->rem[r->depth - 1];
        if (*top == 0) {
            r->depth--;
            ev->type = WK_EV_END;
            ev->f32 = false;
            return WK_OK;
        }
        (*top)--;
    } else if (r->pos == r->end) {
        return WK_ERR_EOF;
    }
    if (WK_MP_UNLIKELY(r->pos == r->end)) {
        return cur_fail(r, WK_ERR_TRUNCATED, r->pos, WK_MP_MSG_TRUNCATED);
    }
    const uint8_t *start = r->pos;
    const char *msg = NULL;
    wk_status st = wk__mp_token(&r->pos, r->end, ev, &msg);
    if (WK_MP_UNLIKELY(st != WK_OK)) {
        return cur_fail(r, st, start, msg);
    }
    if (ev->type == WK_EV_ARRAY || ev->type == WK_EV_MAP) {
        if (r->depth >= WK__SCHEMA_MAX_DEPTH + 4) {
            r->pos = start;
            return cur_fail(r, WK_ERR_DEPTH, start, WK_MP_MSG_DEPTH);
        }
        r->rem[r->depth++] = ev->type == WK_EV_MAP ? 2 * (uint64_t)ev->v.count : ev->v.count;
    }
    return WK_OK;
}

static void cur_error(const mp_cursor *r, wk_error *err)
{
    err->code = r->status;
    err->msg = r->msg;
    err->offset = r->status != WK_OK ? r->err_offset : (size_t)(r->pos - r->start);
}

static wk_status src_next(void *self, wk_event *ev)
{
    return cur_next(self, ev);
}

static size_t src_offset(const void *self)
{
    const mp_cursor *r = self;
    return (size_t)(r->pos - r->start);
}

static void src_error(const void *self, wk_error *err)
{
    cur_error(self, err);
}

static void cur_source(mp_cursor *r, wk_source *src)
{
    src->next = src_next;
    src->offset = src_offset;
    src->error = src_error;
    src->self = r;
}

/* A wk_value field: the msgpack module's fused tree decoder, then the cursor moves past it. */
static wk_status cur_value(mp_cursor *r, wk__dec *d, wk_value *dst, size_t voff)
{
    if (r->status != WK_OK) {
        return r->status;
    }
    if (r->depth > 0) {
        if (r->rem[r->depth - 1] == 0) {
            return wk__dec_fail(d, WK_ERR_SYNTAX, voff, "map ended after a key");
        }
        r->rem[r->depth - 1]--;
    }
    if (r->pos == r->end) {
        return cur_fail(r, WK_ERR_TRUNCATED, r->pos, WK_MP_MSG_TRUNCATED);
    }
    wk_value_opts vo;
    vo.flags = WK_VALUE_COPY_STRINGS;
    vo.max_depth = d->limit > d->depth ? d->limit - d->depth : 1;
    wk_value *v = NULL;
    size_t used = 0;
    wk_error e = {WK_OK, 0, NULL};
    wk_status st = wk_mp_decode_value(r->pos, (size_t)(r->end - r->pos), NULL, &vo, d->arena,
                                      &v, &used, &e);
    if (st != WK_OK) {
        size_t at = (size_t)(r->pos - r->start) + e.offset;
        r->status = st;
        r->msg = e.msg;
        r->err_offset = at;
        return wk__dec_fail(d, st, at, e.msg);
    }
    r->pos += used;
    *dst = *v;
    return WK_OK;
}

#define DEC_FN decode_mp
#define DEC_READER mp_cursor
#define DEC_NEXT(r, ev) cur_next((r), (ev))
#define DEC_OFFSET(r) ((size_t)((r)->pos - (r)->start))
#define DEC_ERROR(r, e) cur_error((r), (e))
#define DEC_SOURCE(r, out) cur_source((r), (out))
#define DEC_VALUE(r, d, dst, voff) cur_value((r), (d), (dst), (voff))
#include "schema/schema_decode_core.h"

WK_API wk_status wk_schema_decode_mp(const wk_schema *s, const void *data, size_t len,
                                     void *obj, wk_arena *arena, const wk_schema_opts *opts,
                                     wk_schema_error *err)
{
    if (err != NULL) {
        err->base.code = WK_OK;
        err->base.offset = 0;
        err->base.msg = NULL;
        err->path[0] = '\0';
    }
    if (s == NULL || (data == NULL && len != 0) || obj == NULL || arena == NULL) {
        return wk_error_set(err != NULL ? &err->base : NULL, WK_ERR_ARG, 0,
                            "schema: NULL argument");
    }
    mp_cursor r;
    r.start = data != NULL ? data : (const uint8_t *)"";
    r.pos = r.start;
    r.end = r.start + len;
    r.depth = 0;
    r.status = WK_OK;
    r.msg = NULL;
    r.err_offset = 0;
    wk_status st = decode_mp(s, &r, obj, arena, opts, err);
    if (st == WK_OK && r.pos != r.end) {
        return wk_error_set(err != NULL ? &err->base : NULL, WK_ERR_TRAILING,
                            (size_t)(r.pos - r.start), "trailing bytes after the value");
    }
    return st;
}
