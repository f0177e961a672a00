/*
 * The body of the schema decoder's loop, written once and compiled twice: over any wk_source
 * (decode_events(), the generic path, schema_decode.c) and straight over the MessagePack bytes
 * (decode_mp(), the fused path, formats/msgpack/schema_mp.c). Flow: a reader's events -> this
 * loop (the plan's fields by key: schema_index.c) -> stores into the caller's struct, with
 * wk_value fields built by the value module. Both instances therefore accept and reject
 * exactly the same inputs with the same errors. Each writes out its header
 *   static wk_status NAME(const wk_schema *s, READER *r, void *obj, wk_arena *arena,
 *                         const wk_schema_opts *opts, wk_schema_error *err)
 * and #includes this file between its braces. It returns WK_OK with the struct filled, or the
 * failure with err filled (its path says which field), from the loop or from the reader.
 *
 * Before including, define:
 *   DEC_NEXT(r, ev)     read the next event, returning wk_status
 *   DEC_OFFSET(r)       byte offset of the next unread byte
 *   DEC_ERROR(r, err)   copy the reader's latched error into `err` (a wk_error *)
 *   DEC_VALUE(r, d, dst, voff)  decode the next whole value into the wk_value `dst` (whose
 *                       first event has not been read), returning wk_status
 *   DEC_SOURCE(r, out)  fill a wk_source (`out`) that reads from `r` (for wk_value fields whose
 *                       first event was read already: elements of arrays of unknown size)
 *
 * The loop keeps an explicit stack of frames (one per open struct or array), so nesting costs
 * no C recursion and is capped by the depth limit. wk_values are built by wk_value_decode from
 * a one-event push-back source (the value's first event has already been read).
 */
#if !defined(DEC_NEXT) || !defined(DEC_OFFSET) || !defined(DEC_ERROR) || !defined(DEC_VALUE) || \
    !defined(DEC_SOURCE)
#error "schema_decode_loop_interface.h is a function body: see its opening comment"
#endif

    /* The decoder's state, and the plan of s (built on first use on the options' allocator). */
    wk__dec d;
    wk_status st;
    wk_event ev;
    size_t voff; /* the input offset of the value being decoded, for error reports */
    d.arena = arena;
    d.err = err;
    d.depth = 0;
    d.limit = wk__schema_depth_limit(opts);
    d.flags = opts != NULL ? opts->flags : 0;
    if (err != NULL) {
        err->path[0] = '\0';
    }
    if (wk__schema_index_get(s, opts != NULL ? opts->alloc : NULL,
                             err != NULL ? &err->base : NULL) == NULL) {
        return err != NULL ? err->base.code : WK_ERR_ARG;
    }

    /* The first event: a wk_value root takes the whole value as a tree; a struct root is a
     * map, which pushes the first frame. */
    voff = DEC_OFFSET(r);
    st = DEC_NEXT(r, &ev);
    if (st != WK_OK) {
        if (st == WK_ERR_EOF) {
            return wk__dec_fail(&d, WK_ERR_EOF, voff, "expected a value, got end of input");
        }
        if (err != NULL) {
            DEC_ERROR(r, &err->base);
        }
        return st;
    }
    if (s->root == WK_SCHEMA_ROOT_VALUE) {
        wk_source src;
        DEC_SOURCE(r, &src);
        return wk__dec_value_tree(&d, &src, &ev, obj, voff);
    }
    wk_schema_type root = {WK_SK_STRUCT, s->size, s, NULL};
    st = wk__dec_scalar(&d, &root, obj, 0, NULL, &ev, voff);
    /* Each turn reads one event in the top frame: its END closes it (wk__dec_pop); in a
     * struct a key picks the field (an unknown key is skipped with its value, or rejected)
     * and the next event is that field's value; in an array the event is the next element.
     * The value then goes into its member (wk__dec_scalar), a container pushing a frame. */
    while (st == WK_OK && d.depth > 0) {
        wk__dec_frame *f = &d.stack[d.depth - 1];
        f->cur = -1;
        voff = DEC_OFFSET(r);
        if (f->s == NULL && f->elem->kind == WK_SK_VALUE && f->count < f->declared &&
            f->declared != SIZE_MAX) {
            /* An element of a counted array of wk_values: decode it without peeking. */
            uint8_t *slot = wk__dec_array_slot(&d, f, voff, &st);
            if (slot != NULL) {
                st = DEC_VALUE(r, &d, (wk_value *)slot, voff);
            }
            continue;
        }
        st = DEC_NEXT(r, &ev);
        if (st != WK_OK) {
            break;
        }
        if (ev.type == WK_EV_END) {
            st = wk__dec_pop(&d, voff);
            continue;
        }
        const wk_schema_type *t;
        uint8_t *dst;
        uint32_t flags = 0;
        size_t *count_dst = NULL;
        if (f->s != NULL) {
            /* A key: the next declared field first, the index otherwise. */
            int32_t idx = -1;
            if (ev.type == WK_EV_STR) {
                const wk_schema_field *want = f->next < f->s->nfields ? &f->s->fields[f->next]
                                                                      : NULL;
                if (want != NULL && want->name_len == ev.v.str.len &&
                    memcmp(want->name, ev.v.str.ptr, ev.v.str.len) == 0) {
                    idx = (int32_t)f->next;
                } else {
                    idx = wk__schema_lookup(f->s, f->ix, ev.v.str.ptr, ev.v.str.len);
                }
            }
            if (idx < 0) {
                if ((d.flags & WK_SCHEMA_REJECT_UNKNOWN) != 0) {
                    st = wk__dec_fail(&d, WK_ERR_NOT_FOUND, voff, "unknown field");
                    break;
                }
                /* Skip the key (it may be a container) and then its value. */
                for (int part = 0; part < 2 && st == WK_OK; part++) {
                    if (part == 1) {
                        st = DEC_NEXT(r, &ev);
                        if (st != WK_OK) {
                            break;
                        }
                    }
                    int open = ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP;
                    if (ev.type == WK_EV_END) {
                        st = wk__dec_fail(&d, WK_ERR_SYNTAX, voff, "map ended after a key");
                    }
                    while (st == WK_OK && open > 0) {
                        if (d.depth + (uint32_t)open > d.limit) {
                            st = wk__dec_fail(&d, WK_ERR_DEPTH, DEC_OFFSET(r),
                                              "nesting deeper than the limit");
                            break;
                        }
                        st = DEC_NEXT(r, &ev);
                        if (st == WK_OK) {
                            open += (ev.type == WK_EV_ARRAY || ev.type == WK_EV_MAP) ? 1 : 0;
                            open -= ev.type == WK_EV_END ? 1 : 0;
                        }
                    }
                }
                continue;
            }
            /* a known field: note it seen (required bits), aim at its member, read its value */
            const wk_schema_field *fd = &f->s->fields[idx];
            f->cur = idx;
            f->next = (uint32_t)idx + 1;
            uint8_t bit = f->ix->reqbit[idx];
            if (bit != 0xff) {
                f->seen |= (uint64_t)1 << bit;
            }
            t = &fd->type;
            dst = f->base + fd->offset;
            flags = fd->flags;
            if (t->kind == WK_SK_ARRAY) {
                count_dst = (size_t *)(f->base + fd->count_offset);
            }
            voff = DEC_OFFSET(r);
            if (t->kind == WK_SK_VALUE) {
                st = DEC_VALUE(r, &d, (wk_value *)dst, voff);
                continue;
            }
            st = DEC_NEXT(r, &ev);
            if (st != WK_OK) {
                break;
            }
            if (ev.type == WK_EV_END) {
                st = wk__dec_fail(&d, WK_ERR_SYNTAX, voff, "map ended after a key");
                break;
            }
            if ((fd->flags & WK_PRESENCE) != 0) {
                /* a presence member (WK_FIELD_NULLABLE): nil is NULL, the member zeroed;
                 * any other value is present and stored as usual */
                bool present = ev.type != WK_EV_NIL;
                *(bool *)(f->base + fd->presence_offset) = present;
                if (!present) {
                    memset(dst, 0, t->size);
                    continue;
                }
            }
        } else {
            /* An array element. */
            dst = wk__dec_array_slot(&d, f, voff, &st);
            if (dst == NULL) {
                break;
            }
            t = f->elem;
            if (t->kind == WK_SK_ARRAY) {
                count_dst = &((wk_schema_array *)dst)->count;
            }
        }
        if (t->kind == WK_SK_VALUE) {
            wk_source src;
            DEC_SOURCE(r, &src);
            st = wk__dec_value_tree(&d, &src, &ev, (wk_value *)dst, voff);
        } else {
            st = wk__dec_scalar(&d, t, dst, flags, count_dst, &ev, voff);
        }
    }
    /* the input ended with frames open; a reader's failure is reported in its own words */
    if (st == WK_ERR_EOF) {
        return wk__dec_fail(&d, WK_ERR_TRUNCATED, DEC_OFFSET(r), "input ended inside a value");
    }
    if (st != WK_OK && err != NULL && err->base.code != st) {
        /* A reader error: take its report. */
        DEC_ERROR(r, &err->base);
        wk__dec_path(&d);
    }
    return st;

#undef DEC_NEXT
#undef DEC_OFFSET
#undef DEC_ERROR
#undef DEC_SOURCE
#undef DEC_VALUE
