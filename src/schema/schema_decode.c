/*
 * Generic schema decoder (wk_schema_decode): the decode loop
 * (schema_decode_loop_interface.h) compiled over any wk_source, so a struct can be read from
 * every format with one descriptor. Flow: any reader -> wk_source events -> decode_events()
 * -> the caller's struct. The fused paths (formats/json/schema_json_dec.c,
 * formats/msgpack/schema_mp.c) read the bytes directly and fall back to the same loop.
 */
#include "schema/schema_decode_interface.h"

/* A wk_value field: read its first event, then build the tree through a push-back source. */
static wk_status value_from_source(const wk_source *r, wk__dec *d, wk_value *dst, size_t voff)
{
    wk_event ev;
    wk_status st = r->next(r->self, &ev);
    if (st != WK_OK) {
        return st; /* the caller takes the source's report */
    }
    if (ev.type == WK_EV_END) {
        return wk__dec_fail(d, WK_ERR_SYNTAX, voff, "map ended after a key");
    }
    return wk__dec_value_tree(d, r, &ev, dst, voff);
}

/* decode_events(): decodes the next value of r into obj by the plan of s; returns as the loop
 * does (schema_decode_loop_interface.h, its body). */
#define DEC_NEXT(r, ev) ((r)->next((r)->self, (ev)))
#define DEC_OFFSET(r) ((r)->offset((r)->self))
#define DEC_ERROR(r, e) ((r)->error((r)->self, (e)))
#define DEC_SOURCE(r, out) (*(out) = *(r))
#define DEC_VALUE(r, d, dst, voff) value_from_source((r), (d), (dst), (voff))
static wk_status decode_events(const wk_schema *s, const wk_source *r, void *obj,
                               wk_arena *arena, const wk_schema_opts *opts,
                               wk_schema_error *err)
{
#include "schema/schema_decode_loop_interface.h"
}

/* The public entry: arguments checked, the error reset, then the loop. */
WK_API wk_status wk_schema_decode(const wk_schema *s, const wk_source *src, void *obj,
                                  wk_arena *arena, const wk_schema_opts *opts,
                                  wk_schema_error *err)
{
    wk__schema_error_reset(err);
    if (s == NULL || src == NULL || obj == NULL || arena == NULL) {
        return wk_error_set(err != NULL ? &err->base : NULL, WK_ERR_ARG, 0,
                            "schema: NULL argument");
    }
    return decode_events(s, src, obj, arena, opts, err);
}
