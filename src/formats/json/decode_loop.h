/*
 * The body of the fused JSON parser (json/decode.c): bytes -> lexer (lex.h, lex_scan.h) ->
 * this loop -> wk_value nodes on the scratch stack -> the arena. It is the body of both
 *   json_decode_tree()       the baseline instance
 *   json_decode_tree_avx2()  the instance for AVX2 (x86-64 with GCC or clang)
 * whose headers, with their storage and target attributes, are written out in json/decode.c,
 * which #includes this file between the braces of each. Before including, json/decode.c
 * defines
 *   WK__DECODE(name)  the lexer instance's name for `name` (name, or name_avx2)
 * and wk_json_decode_value calls the instance the machine runs best (wk__json_simd).
 *
 * The loop is one function of labels and gotos, no recursion: `value` parses the value at p
 * into vs[n] (opening a container pushes a frame and goes on at its first key or element),
 * `after_value` decides from the innermost open container what may follow (a ',' or its
 * closing bracket, which moves the children into the arena), `key` reads an object's key and
 * colon, `done` checks the end of the document and roots the tree, `fail` frees the stacks and
 * reports f (the lexer's failure: status, message, position). Locals keep the stack pointers and counts in registers; `ps` holds the same
 * stacks for the calls that grow them.
 */
#ifndef WK__DECODE
#error "json/decode_loop.h is a function body: include it inside json_decode_tree*() (json/decode.c)"
#endif

    /* The options, resolved once: NULL options are the defaults. */
    const wk_allocator *alloc = opts != NULL ? opts->alloc : NULL;
    unsigned flags = opts != NULL ? opts->flags : 0;
    size_t max_depth = opts != NULL && opts->max_depth != 0 ? opts->max_depth
                                                            : WK_JSON_DEFAULT_MAX_DEPTH;
    const bool copy = (flags & WK_READ_COPY_STRINGS) != 0;
    const bool raw = (flags & WK_JSON_READ_RAW_NUMBERS) != 0;
    const uint8_t *start = data;
    const uint8_t *p = start;
    const uint8_t *end = start + len;
    wk__json_fail f = {WK_OK, NULL, NULL};
    /* The two stacks start on the C stack (INLINE_VALUES nodes, INLINE_FRAMES frames) and
     * grow on the options' allocator, else the arena's; vs[0..n) are the nodes of the open
     * containers and their finished children, vs[fs[i].start] each open container's node. */
    wk_value inline_vs[INLINE_VALUES];
    frame inline_fs[INLINE_FRAMES];
    parser ps;
    wk__stack_init(&ps.vs, inline_vs, INLINE_VALUES, sizeof(wk_value),
                   alloc != NULL ? alloc : arena->alloc);
    wk__stack_init(&ps.fs, inline_fs, INLINE_FRAMES, sizeof(frame), ps.vs.alloc);
    wk_value *vs = inline_vs;
    frame *fs = inline_fs;
    size_t n = 0;
    size_t cap = ps.vs.cap; /* ps.vs.cap in a register */
    size_t depth = 0;
    bool obj = false; /* the innermost open container is an object (fs[depth - 1].object) */
    wk_value *v;
    uint8_t c;

    /* leading whitespace (and a BOM when allowed); an empty document fails here */
    p = WK__DECODE(wk__json_doc_start)(p, end, (flags & WK_JSON_READ_ALLOW_BOM) != 0, &f);
    if (p == NULL) {
        goto fail;
    }

value:
    /* p is at the first byte of a value (not at the end). */
    if (WK__UNLIKELY(n == cap)) {
        if (!grow_values(&ps, n, &vs)) {
            wk__json_failed(&f, WK_ERR_NOMEM, "out of memory for the parse stack", p);
            goto fail;
        }
        cap = ps.vs.cap;
    }
value_room:
    /* the stack has room for the value at vs[n] */
    v = &vs[n];
    c = *p;
    switch (c) {
    case '"': {
        /* a string: scanned (UTF-8 and controls checked, the first escape found), then a
         * view or a copy (make_string) */
        const uint8_t *esc;
        const uint8_t *close = WK__DECODE(wk__json_scan_string)(p + 1, end, &esc, &f);
        if (close == NULL || !make_string(v, p + 1, esc, close, copy, arena, &f)) {
            goto fail;
        }
        p = close + 1;
        break;
    }
    case '{':
    case '[':
        /* open: the container's node stays on the stack (its count and children are set at
         * its close); a frame remembers where it starts */
        if (depth >= max_depth) {
            wk__json_failed(&f, WK_ERR_DEPTH, "nesting deeper than the limit", p);
            goto fail;
        }
        if (depth == ps.fs.cap) {
            if (!wk__stack_grow(&ps.fs, depth, max_depth)) {
                wk__json_failed(&f, WK_ERR_NOMEM, "out of memory for the nesting stack", p);
                goto fail;
            }
            fs = ps.fs.mem;
        }
        fs[depth].start = (uint32_t)n;
        obj = c == '{';
        fs[depth].object = obj;
        depth++;
        memset(v, 0, sizeof *v);
        v->type = c == '{' ? WK_VAL_MAP : WK_VAL_ARRAY;
        n++;
        p = WK__DECODE(wk__json_skip_ws_indent)(p + 1, end);
        if (WK__UNLIKELY(p == end)) {
            wk__json_ends_inside(obj, p, &f);
            goto fail;
        }
        if (*p == (c == '{' ? '}' : ']')) {
            p++;
            depth--;
            obj = depth > 0 && fs[depth - 1].object;
            goto after_value; /* empty: the node is complete as it is */
        }
        if (c == '{') {
            goto key;
        }
        goto value;
    case 't': /* true, false, null */
    case 'f':
    case 'n':
        p = wk__json_literal(p, end, &f);
        if (WK__UNLIKELY(p == NULL)) {
            goto fail;
        }
        memset(v, 0, sizeof *v);
        if (c != 'n') {
            v->type = WK_VAL_BOOL;
            v->u.b = c == 't';
        }
        break;
    default:
        /* a number: an integer when it fits 64 bits, else a correctly rounded double, or its
         * text (WK_VAL_RAWNUM) with WK_JSON_READ_RAW_NUMBERS; -Infinity with the extension */
        if (WK__LIKELY(c == '-' || wk__json_digit(c))) {
            if (WK__UNLIKELY(c == '-' && (flags & WK_JSON_READ_NAN_INF) && end - p > 1 &&
                             p[1] == 'I')) {
                p = wk__json_word(p + 1, end, "Infinity", 8, &f);
                if (p == NULL) {
                    goto fail;
                }
                memset(v, 0, sizeof *v);
                v->type = WK_VAL_FLOAT;
                v->u.f = -__builtin_inf();
                break;
            }
            wk__json_num num;
            /* the always-inline form: two loop instances in one file would otherwise leave
             * the number lexer out of line, which costs several percent on number-heavy
             * documents (citm_catalog.json; wirekit bench --suite json --callgrind) */
            const uint8_t *e = NULL;
            if (WK__LIKELY(!raw && end - p > WK__JSON_SHORT_NUM_READ)) {
                /* digits one at a time, no end tests (lex.h) */
                e = wk__json_number_short(p, &num);
            }
            if (e == NULL) {
                e = wk__json_number(p, end, raw, false, &num, &f);
                if (e == NULL) {
                    goto fail;
                }
            }
            v->flags = 0;
            v->ext_type = 0;
            v->reserved = 0;
            v->len = 0;
            switch (num.kind) {
            case WK__NUM_UINT:
                v->type = WK_VAL_UINT;
                v->u.u = num.v.u;
                break;
            case WK__NUM_INT:
                v->type = WK_VAL_INT;
                v->u.i = num.v.i;
                break;
            case WK__NUM_DOUBLE:
                v->type = WK_VAL_FLOAT;
                v->u.f = num.v.d;
                break;
            default:
                if (!make_string(v, p, NULL, e, copy, arena, &f)) {
                    goto fail;
                }
                v->type = WK_VAL_RAWNUM;
                v->flags &= (uint8_t)~WK_VALF_PLAIN;
                break;
            }
            p = e;
            break;
        }
        /* NaN and Infinity, only with the extension flag; anything else is not a value */
        if ((c == 'N' || c == 'I') && (flags & WK_JSON_READ_NAN_INF)) {
            p = c == 'N' ? wk__json_word(p, end, "NaN", 3, &f)
                         : wk__json_word(p, end, "Infinity", 8, &f);
            if (p == NULL) {
                goto fail;
            }
            memset(v, 0, sizeof *v);
            v->type = WK_VAL_FLOAT;
            v->u.f = c == 'N' ? __builtin_nan("") : __builtin_inf();
            break;
        }
        wk__json_not_a_value(p, &f);
        goto fail;
    }
    n++;

after_value:
    /* vs[n - 1] is complete: a top-level value ends the document, else a ',' or the
     * innermost container's closing bracket must follow */
    if (WK__UNLIKELY(depth == 0)) {
        goto done;
    }
    if (WK__UNLIKELY(p == end || *p <= ' ')) {
        p = WK__DECODE(wk__json_skip_ws)(p, end);
        if (WK__UNLIKELY(p == end)) {
            wk__json_ends_inside(obj, p, &f);
            goto fail;
        }
    }
    c = *p;
    /* a ',': the next key (in an object) or element (an array; a ']' here is a trailing
     * comma, which wk__json_array_item reports) */
    if (WK__LIKELY(c == ',')) {
        p = WK__DECODE(wk__json_skip_ws_indent)(p + 1, end);
        if (obj) {
            goto key;
        }
        if (WK__UNLIKELY(wk__json_array_item(p, end, &f) == NULL)) {
            goto fail;
        }
        goto value;
    }
    {
        frame *fr = &fs[depth - 1];
        if (c != (fr->object ? '}' : ']')) {
            wk__json_no_separator(fr->object, p, &f);
            goto fail;
        }
        p++;
        /* Close: move the children into the arena, leave the container node. */
        wk_value *node = &vs[fr->start];
        size_t count = n - fr->start - 1;
        size_t items = fr->object ? count / 2 : count;
        if (WK__UNLIKELY(items > UINT32_MAX)) {
            wk__json_failed(&f, WK_ERR_RANGE, "container with more than 2^32 elements", p);
            goto fail;
        }
        wk_value *kids = arena_take16(arena, count * sizeof(wk_value));
        if (kids == NULL) {
            wk__json_failed(&f, WK_ERR_NOMEM, "out of memory (arena) for a container", p);
            goto fail;
        }
        copy_kids(kids, node + 1, count);
        node->len = (uint32_t)items;
        node->u.items = kids; /* same pointer for u.pairs: wk_pair is two wk_value */
        n = fr->start + 1;
        depth--;
        obj = depth > 0 && fs[depth - 1].object;
        goto after_value;
    }

key:
    /* in an object, p at its next key: the key's node and room for its value */
    if (WK__UNLIKELY(wk__json_key_start(p, end, &f) == NULL)) {
        goto fail;
    }
    if (WK__UNLIKELY(n + 1 >= cap)) {
        if (!grow_values(&ps, n, &vs)) {
            wk__json_failed(&f, WK_ERR_NOMEM, "out of memory for the parse stack", p);
            goto fail;
        }
        cap = ps.vs.cap;
    }
    {
        const uint8_t *esc;
        const uint8_t *close = WK__DECODE(wk__json_scan_string)(p + 1, end, &esc, &f);
        if (close == NULL || !make_string(&vs[n], p + 1, esc, close, copy, arena, &f)) {
            goto fail;
        }
        n++;
        p = close + 1;
    }
    p = WK__DECODE(wk__json_colon)(p, end, &f);
    if (WK__UNLIKELY(p == NULL)) {
        goto fail;
    }
    goto value_room; /* the key made room for its value too */

done:
    /* the root is vs[0]: only whitespace may follow (unless trailing data or several
     * documents are allowed); the root node itself moves into the arena */
    p = WK__DECODE(wk__json_doc_end)(
        p, end, (flags & (WK_JSON_READ_ALLOW_TRAILING | WK_JSON_READ_MULTI)) != 0, &f);
    if (p == NULL) {
        goto fail;
    }
    {
        wk_value *root = wk_arena_alloc(arena, sizeof *root, 16);
        if (root == NULL) {
            wk__json_failed(&f, WK_ERR_NOMEM, "out of memory (arena) for the root", p);
            goto fail;
        }
        *root = vs[0];
        *out = root;
    }
    if (consumed != NULL) {
        *consumed = (size_t)(p - start);
    }
    wk__stack_free(&ps.vs);
    wk__stack_free(&ps.fs);
    return WK_OK;

fail:
    /* f says what failed and where; the arena keeps what was allocated (the caller's to
     * reset), the stacks are freed */
    wk__stack_free(&ps.vs);
    wk__stack_free(&ps.fs);
    return wk_error_set(err, f.st, (size_t)(f.at - start), f.msg);
