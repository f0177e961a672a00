/*
 * The fused schema JSON decoder's plan loop (schema_json_dec.c) and its helpers that scan.
 * Flow: bytes -> lexer (lex.h, lex_scan.h) -> this loop (the flat plan's ops in key order:
 * schema/schema_fast_interface.h) -> stores into the caller's struct; at anything it does not
 * handle it gives up and schema_json_dec.c runs the generic path (the schema decoder's loop
 * over the JSON reader) from the start. A template compiled once per instance of the JSON
 * lexer's wide scans (lex_scan.h), like the tree parser's loop (decode_loop.h), in
 * three parts that schema_json_dec.c includes in turn:
 *   WK__SJD_BODY undefined  the helpers, always inlined, at file scope
 *   WK__SJD_BODY 1          the body of dec_text_field() / dec_text_field_avx2(): a field of
 *                           a string kind other than WK_SK_STR (char[N], base64 bytes, RFC 3339
 *                           timestamps) at p (p < end) into dst, with the general loop's
 *                           checks, null as it takes it for WK_NULLABLE; returns the position
 *                           after it, or NULL to give up
 *   WK__SJD_BODY 2          the body of dec_flat() / dec_flat_avx2(): the flat plan of ix over
 *                           the document [in, end) into the struct at base (vdepth caps the
 *                           nesting of wk_value fields); true when it decoded the whole
 *                           document, else false and the generic path decides from the start
 * schema_json_dec.c writes out the headers of the out-of-line functions and includes the
 * bodies between their braces. It defines
 *   WK__SJD(name)  the instance's name for `name` (the helpers, the out-of-line functions and
 *                  the lexer's scans): name, or name_avx2
 *   WK__SJD_HOT    the storage and target attributes of the helpers
 * and runs the instance the machine runs best (wk__json_simd).
 */
#if !defined(WK__SJD) || !defined(WK__SJD_HOT)
#error "formats/json/schema_json_dec_loop.h is a template: include it from schema_json_dec.c"
#endif

#ifndef WK__SJD_BODY

/* A string at p ('"', p < end): its bytes, a view into the input when it has no escape
 * (*esc false), else unescaped into the arena with room for a NUL after them (*esc true).
 * Returns the byte after the closing quote, or NULL. */
WK__SJD_HOT const uint8_t *WK__SJD(dec_text)(const uint8_t *p, const uint8_t *end, wk_arena *a,
                                             const uint8_t **s, size_t *len, bool *esc)
{
    const uint8_t *first;
    wk__json_fail f = {WK_OK, NULL, NULL};
    const uint8_t *close = WK__SJD(wk__json_scan_string)(p + 1, end, &first, &f);
    if (WK__UNLIKELY(close == NULL)) {
        return NULL;
    }
    size_t n = (size_t)(close - p - 1);
    if (WK__LIKELY(first == NULL)) {
        *s = p + 1;
        *len = n;
        *esc = false;
        return close + 1;
    }
    uint8_t *d = wk_arena_alloc(a, n + 1, 1);
    if (d == NULL) {
        return NULL;
    }
    n = wk__json_unescape(p + 1, first, close, d, &f);
    if (n == (size_t)-1) {
        return NULL;
    }
    d[n] = '\0';
    *s = d;
    *len = n;
    *esc = true;
    return close + 1;
}

/* A string at p ('"', p < end) copied into the arena with its NUL; *plain when it had no
 * escape. A short plain one (closing quote within the 16 bytes after the opening one) is
 * found with one vector compare (a byte loop near the end of the input) and, with 16 bytes
 * of input after the quote, stored as one 16-byte move (the bytes past its NUL land in the
 * arena's free space); others go through dec_text. A string with an escape may hold
 * a NUL ("\u0000"): *plain false tells the caller to look. Returns the byte after the
 * closing quote, or NULL. */
WK__SJD_HOT const uint8_t *WK__SJD(dec_str_copy)(const uint8_t *p, const uint8_t *end,
                                                 const uint8_t *in, wk_arena *a,
                                                 const char **out, size_t *len, bool *plain)
{
    int k = wk__json_short_plain(p + 1, end);
    if (WK__LIKELY(k >= 0)) {
        char *d;
        if (WK__LIKELY(end - p > 16 && a->cur != NULL && a->end - a->cur >= 16)) {
            d = (char *)a->cur;
            memcpy(d, p + 1, 16);
            d[k] = '\0';
            a->cur += k + 1;
        } else {
            bool nul = false;
            d = wk__dec_copy_str(a, p + 1, (size_t)k, in, false, &nul);
            if (d == NULL) {
                return NULL;
            }
        }
        *out = d;
        *len = (size_t)k;
        *plain = true;
        return wk__advance(p + 2, (unsigned)k);
    }
    const uint8_t *s;
    p = WK__SJD(dec_text)(p, end, a, &s, len, plain);
    if (p == NULL) {
        return NULL;
    }
    *plain = !*plain;
    if (*plain) {
        bool nul = false;
        s = (const uint8_t *)wk__dec_copy_str(a, s, *len, in, false, &nul);
        if (s == NULL) {
            return NULL;
        }
    }
    *out = (const char *)s;
    return p;
}

/* One scalar JSON value at p (p < end) as a wk_value node, as the tree builders make it
 * (strings copied; no escape: WK_VALF_PLAIN too, as the JSON parser marks them). Returns the
 * next byte, or NULL (containers included: the caller decides). */
WK__SJD_HOT const uint8_t *WK__SJD(dec_node)(const uint8_t *p, const uint8_t *end,
                                             const uint8_t *in, wk_value *v, wk_arena *a)
{
    uint8_t c = *p;
    if (c == '"') {
        const char *str;
        size_t len;
        bool plain;
        p = WK__SJD(dec_str_copy)(p, end, in, a, &str, &len, &plain);
        if (p == NULL || len > UINT32_MAX) {
            return NULL;
        }
        wk__vb_head(v, WK_VAL_STR, plain ? WK_VALF_COPIED | WK_VALF_PLAIN : WK_VALF_COPIED,
                    (uint32_t)len);
        v->u.str = str;
        return p;
    }
    /* numbers: a small non-negative integer in one step, else the lexer's number rule */
    uint64_t small;
    const uint8_t *q = wk__json_small_uint(p, end, &small);
    if (WK__LIKELY(q != NULL)) {
        wk__vb_head(v, WK_VAL_UINT, 0, 0);
        v->u.u = small;
        return q;
    }
    if (c == '-' || wk__json_digit(c)) {
        wk__json_num num;
        wk__json_fail f = {WK_OK, NULL, NULL};
        p = wk__json_lex_number(p, end, false, &num, &f);
        if (p == NULL) {
            return NULL;
        }
        if (num.kind == WK__NUM_UINT) {
            wk__vb_head(v, WK_VAL_UINT, 0, 0);
            v->u.u = num.v.u;
        } else if (num.kind == WK__NUM_INT) {
            wk__vb_head(v, WK_VAL_INT, 0, 0);
            v->u.i = num.v.i;
        } else {
            wk__vb_head(v, WK_VAL_FLOAT, 0, 0);
            v->u.f = num.v.d;
        }
        return p;
    }
    /* the literals; anything else (a container, a bad byte) is the caller's to decide */
    size_t left = (size_t)(end - p);
    if (c == 't' && left >= 4 && memcmp(p, "true", 4) == 0) {
        wk__vb_head(v, WK_VAL_BOOL, 0, 0);
        v->u.u = 0;
        v->u.b = true;
        return p + 4;
    }
    if (c == 'f' && left >= 5 && memcmp(p, "false", 5) == 0) {
        wk__vb_head(v, WK_VAL_BOOL, 0, 0);
        v->u.u = 0;
        return p + 5;
    }
    if (c == 'n' && dec_is_null(p, end)) {
        wk__vb_head(v, WK_VAL_NIL, 0, 0);
        v->u.u = 0;
        return p + 4;
    }
    return NULL;
}

/* A wk_value field at p (p < end): a scalar, or a container of scalars built here with no
 * frame stack; a nested container or a wide one sends the whole value to the fused JSON tree
 * parser (the same tree as the generic path's builder; depth limit `vdepth`). Returns the
 * next byte or NULL. */
WK__SJD_HOT const uint8_t *WK__SJD(dec_value)(const uint8_t *p, const uint8_t *end,
                                              const uint8_t *in, wk_value *dst, wk_arena *a,
                                              uint32_t vdepth)
{
    const uint8_t *const start = p;
    uint8_t c = *p;
    if (c != '{' && c != '[') {
        return WK__SJD(dec_node)(p, end, in, dst, a);
    }
    /* a container: its children gather on the C stack (VALUE_KIDS of them at most), then
     * move to the arena in one copy, as the tree parser moves them */
    const bool is_map = c == '{';
    const uint8_t close = is_map ? '}' : ']';
    wk_value kids[VALUE_KIDS];
    uint32_t n = 0;
    p = WK__SJD(wk__json_skip_ws)(p + 1, end);
    if (p == end) {
        return NULL;
    }
    if (*p == close) {
        p++;
    } else {
        for (;;) {
            /* one child (a map's key, ':' and value): too many children go to the parser */
            if (n + 2 > VALUE_KIDS) {
                goto deeper;
            }
            if (is_map) {
                if (*p != '"') {
                    return NULL;
                }
                p = WK__SJD(dec_node)(p, end, in, &kids[n++], a);
                if (p == NULL) {
                    return NULL;
                }
                if (WK__LIKELY(p < end && *p == ':')) {
                    p++;
                } else {
                    p = WK__SJD(wk__json_skip_ws)(p, end);
                    if (p == end || *p != ':') {
                        return NULL;
                    }
                    p++;
                }
                p = WK__SJD(wk__json_skip_ws)(p, end);
                if (p == end) {
                    return NULL;
                }
            }
            if (*p == '{' || *p == '[') {
                goto deeper; /* a nested container: the whole value to the parser */
            }
            p = WK__SJD(dec_node)(p, end, in, &kids[n++], a);
            if (p == NULL) {
                return NULL;
            }
            /* then a ',' and the next child, or the container's end */
            p = WK__SJD(wk__json_skip_ws)(p, end);
            if (p == end) {
                return NULL;
            }
            if (*p == ',') {
                p = WK__SJD(wk__json_skip_ws)(p + 1, end);
                if (p == end) {
                    return NULL;
                }
                continue;
            }
            if (*p != close) {
                return NULL;
            }
            p++;
            break;
        }
    }
    wk_value *items = NULL;
    if (n != 0) {
        items = wk__vb_alloc(a, (size_t)n * sizeof(wk_value));
        if (items == NULL) {
            return NULL;
        }
        memcpy(items, kids, (size_t)n * sizeof(wk_value));
    }
    wk__vb_head(dst, is_map ? WK_VAL_MAP : WK_VAL_ARRAY, 0, is_map ? n / 2 : n);
    dst->u.items = items;
    return p;
deeper: {
    /* the whole value from its start through the fused tree parser: strings copied (the
     * field outlives the input), trailing bytes allowed (the rest of the document follows),
     * the field's depth budget; what this loop built so far is left in the arena */
    wk_read_opts vo = {0};
    vo.flags = WK_READ_COPY_STRINGS | WK_JSON_READ_ALLOW_TRAILING;
    vo.max_depth = vdepth;
    wk_value *v = NULL;
    size_t used = 0;
    if (wk_json_decode_value(start, (size_t)(end - start), &vo, a, &v, &used, NULL) != WK_OK) {
        return NULL;
    }
    *dst = *v;
    return start + used;
}
}

/* A WK_SK_STR field (p < end). */
WK__SJD_HOT const uint8_t *WK__SJD(dec_str_field)(const wk__mp_op *op, const uint8_t *p,
                                                  const uint8_t *end, const uint8_t *in,
                                                  uint8_t *dst, wk_arena *a)
{
    if (*p != '"') {
        if ((op->flags & WK_NULLABLE) != 0 && *p == 'n' && dec_is_null(p, end)) {
            *(char **)dst = NULL;
            return p + 4;
        }
        return NULL;
    }
    const char *str;
    size_t len;
    bool plain;
    p = WK__SJD(dec_str_copy)(p, end, in, a, &str, &len, &plain);
    if (p == NULL) {
        return NULL;
    }
    /* A plain string has no control byte (the lexer let none through): no NUL to look for. */
    if (WK__UNLIKELY(!plain) && wk__dec_has_nul((const uint8_t *)str, len)) {
        return NULL; /* "\u0000": the general loop's "string contains a NUL byte" */
    }
    *(const char **)dst = str;
    return p;
}

#elif WK__SJD_BODY == 1 /* the body of dec_text_field */

    if (*p == 'n') {
        if ((op->flags & WK_NULLABLE) == 0 || !dec_is_null(p, end)) {
            return NULL;
        }
        if (op->kind == WK_SK_BYTES) {
            ((wk_slice *)dst)->ptr = NULL;
            ((wk_slice *)dst)->len = 0;
        }
        return p + 4;
    }
    if (*p != '"') {
        return NULL;
    }
    const uint8_t *s;
    size_t len;
    bool esc;
    p = WK__SJD(dec_text)(p, end, a, &s, &len, &esc);
    if (p == NULL) {
        return NULL;
    }
    switch ((wk_schema_kind)op->kind) {
    case WK_SK_STRBUF:
        if (len >= op->size || (esc && wk__dec_has_nul(s, len))) {
            return NULL;
        }
        memcpy(dst, s, len);
        dst[len] = '\0';
        return p;
    case WK_SK_BYTES:
        return wk__schema_base64_decode(a, (const char *)s, len, (wk_slice *)dst) ? p : NULL;
    case WK_SK_TIMESTAMP:
        return wk__schema_parse_rfc3339((const char *)s, len, (wk_timestamp *)dst) ? p : NULL;
    default: return NULL;
    }

#elif WK__SJD_BODY == 2 /* the body of dec_flat */

    /* the document must be one object (no byte order mark: the generic path decides) */
    const uint8_t *p = WK__SJD(wk__json_skip_ws)(in, end);
    if (p == end || *p != '{') {
        return false;
    }
    p = WK__SJD(wk__json_skip_ws)(p + 1, end);
    if (p == end) {
        return false;
    }
    const wk__mp_op *const ops = ix->mp_ops;
    const wk__mp_op *const ops_end = ops + ix->nfields;
    const wk__mp_op *want = ops; /* the field expected next: the descriptor's order */
    uint64_t seen = 0;           /* required fields seen, as reqmask bits */
    if (*p == '}') {
        p++;
    } else {
        for (;;) {
            if (*p != '"') {
                return false;
            }
            /* The key: most documents list the fields in the descriptor's order, so the
             * expected `"name":` is compared first, as two masked words when 16 bytes are
             * left; any other key is scanned and looked up in the index. */
            const wk__mp_op *op;
            size_t left = (size_t)(end - p);
            if (WK__LIKELY(want < ops_end &&
                           (left >= 16 ? dec_key_is(want, p, end)
                                       : left >= (size_t)want->jkey_len - 1 &&
                                             memcmp(p, want->jkey + 1, want->jkey_len - 1u) ==
                                                 0))) {
                op = want;
                p += op->jkey_len - 1;
            } else {
                const uint8_t *first;
                wk__json_fail f = {WK_OK, NULL, NULL};
                const uint8_t *close = WK__SJD(wk__json_scan_string)(p + 1, end, &first, &f);
                if (close == NULL || first != NULL) {
                    return false;
                }
                int32_t idx = wk__schema_lookup_index(ix, (const char *)p + 1,
                                                      (size_t)(close - p - 1));
                if (idx < 0) {
                    return false; /* unknown: the generic path skips it (or rejects it) */
                }
                op = &ops[idx];
                p = WK__SJD(wk__json_skip_ws)(close + 1, end);
                if (p == end || *p != ':') {
                    return false;
                }
                p++;
            }
            want = op + 1;
            seen |= op->reqmask;
            p = WK__SJD(wk__json_skip_ws)(p, end);
            if (WK__UNLIKELY(p == end)) {
                return false;
            }
            /* The value, stored straight into the member by its kind; a repeated key is
             * stored again (the last one wins, as in the generic loop). */
            uint8_t *dst = base + op->offset;
            switch ((wk_schema_kind)op->kind) {
            case WK_SK_STR: p = WK__SJD(dec_str_field)(op, p, end, in, dst, a); break;
            case WK_SK_BOOL:
                if (end - p >= 4 && memcmp(p, "true", 4) == 0) {
                    *(bool *)dst = true;
                    p += 4;
                } else if (end - p >= 5 && memcmp(p, "false", 5) == 0) {
                    *(bool *)dst = false;
                    p += 5;
                } else if ((op->flags & WK_NULLABLE) != 0 && dec_is_null(p, end)) {
                    p += 4;
                } else {
                    return false;
                }
                break;
            case WK_SK_I8:
            case WK_SK_I16:
            case WK_SK_I32:
            case WK_SK_I64:
            case WK_SK_U8:
            case WK_SK_U16:
            case WK_SK_U32:
            case WK_SK_U64: p = dec_int_field(op, p, end, dst); break;
            case WK_SK_F32:
            case WK_SK_F64: p = dec_float_field(op, p, end, dst); break;
            case WK_SK_VALUE: p = WK__SJD(dec_value)(p, end, in, (wk_value *)dst, a, vdepth); break;
            default: p = WK__SJD(dec_text_field)(op, p, end, dst, a); break;
            }
            if (WK__UNLIKELY(p == NULL)) {
                return false;
            }
            /* then a ',' (compact input: right after the value) or the object's '}' */
            if (WK__LIKELY(p < end && *p == ',')) {
                p++;
            } else {
                p = WK__SJD(wk__json_skip_ws)(p, end);
                if (p == end) {
                    return false;
                }
                if (*p == '}') {
                    p++;
                    break;
                }
                if (*p != ',') {
                    return false;
                }
                p++;
            }
            p = WK__SJD(wk__json_skip_ws)(p, end);
            if (p == end) {
                return false;
            }
        }
    }
    /* only whitespace may follow, and every required field must have been seen */
    p = WK__SJD(wk__json_skip_ws)(p, end);
    return p == end && (seen & ix->required_mask) == ix->required_mask;

#endif /* WK__SJD_BODY */
