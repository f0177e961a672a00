/*
 * The validate-only scanner's loop (json/validate.c): bytes -> lexer (lex.h, lex_scan.h) ->
 * this loop -> a status and an offset, no tree and no events. A template compiled once per
 * instance of the lexer's wide scans, as the tree parser's loop is (decode_loop.h), in
 * two parts that json/validate.c includes in turn:
 *   without WK__VALIDATE_BODY  the loop's always-inlined string step, at file scope
 *   with WK__VALIDATE_BODY     the loop itself: the body of json_validate_doc() and
 *                              json_validate_doc_avx2(), whose headers json/validate.c writes
 *                              out and includes this file between the braces of
 * The includer defines
 *   WK__VALIDATE(name)  the instance's name for `name` (the string step, and the lexer's
 *                       scans): name, or name_avx2
 *   WK__VALIDATE_HOT    the storage and target attributes of the string step
 * and json/validate.c calls the instance the machine runs best (wk__json_simd). The grammar's
 * steps and failures are the lexer's (lex.h, lex_scan.h), shared with the tree parser.
 *
 * The loop checks that data[0..len) holds one JSON document (with WK_JSON_READ_MULTI or
 * WK_JSON_READ_ALLOW_TRAILING, that it starts with one) and returns WK_OK with *consumed (may
 * be NULL) the bytes read, else the first failure in err, as wk_json_decode_value would
 * report it. Nesting is one bit per open container (object or array), 512 levels inline.
 */
#if !defined(WK__VALIDATE) || !defined(WK__VALIDATE_HOT)
#error "json/validate_loop.h is a template: include it from json/validate.c"
#endif

#ifndef WK__VALIDATE_BODY
/* The string whose opening quote is at p: the position after its closing quote, or NULL
 * (f filled). Short plain strings (most keys and values) in one step. */
WK__VALIDATE_HOT const uint8_t *WK__VALIDATE(string)(const uint8_t *p, const uint8_t *end,
                                                     wk__json_fail *f)
{
    int k = wk__json_short_plain(p + 1, end);
    if (WK__LIKELY(k >= 0)) {
        return wk__advance(p + 2, (unsigned)k);
    }
    const uint8_t *esc;
    const uint8_t *close =
        WK__VALIDATE(wk__json_scan_string)(p + 1 + (k == -2 ? 16 : 0), end, &esc, f);
    if (close == NULL || (WK__UNLIKELY(esc != NULL) && !wk__json_check_escapes(esc, close, f))) {
        return NULL;
    }
    return close + 1;
}

#else /* WK__VALIDATE_BODY: the loop */

    unsigned flags = opts != NULL ? opts->flags : 0;
    size_t max_depth =
        opts != NULL && opts->max_depth != 0 ? opts->max_depth : WK_JSON_DEFAULT_MAX_DEPTH;
    const uint8_t *start = data;
    const uint8_t *p = start;
    const uint8_t *end = len != 0 ? start + len : start; /* no offset on a NULL `data` */
    wk__json_fail f = {WK_OK, NULL, NULL};
    uint64_t inline_bits[INLINE_WORDS];
    wk__stack stack;
    wk__stack_init(&stack, inline_bits, INLINE_WORDS, sizeof(uint64_t),
                   opts != NULL ? opts->alloc : NULL);
    uint64_t *bits = inline_bits;
    size_t depth = 0;
    bool object = false; /* the innermost open container is an object */
    uint8_t c;

    p = WK__VALIDATE(wk__json_doc_start)(p, end, (flags & WK_JSON_READ_ALLOW_BOM) != 0, &f);
    if (p == NULL) {
        goto fail;
    }
    c = *p;
    if (c != '{' && c != '[') {
        /* a scalar document: the loop below only sees values inside containers */
        p = c == '"' ? WK__VALIDATE(string)(p, end, &f) : scalar(p, end, flags, &f);
        if (p == NULL) {
            goto fail;
        }
        goto done;
    }
    goto open;

value:
    /* p is at the first byte of a value inside a container (not at the end). */
    c = *p;
    if (c == '"') {
        p = WK__VALIDATE(string)(p, end, &f);
        if (p == NULL) {
            goto fail;
        }
        goto after_value;
    }
    if (c != '{' && c != '[') {
        p = scalar(p, end, flags, &f);
        if (p == NULL) {
            goto fail;
        }
        goto after_value;
    }

open:
    /* p is at '{' or '['. */
    if (depth >= max_depth) {
        wk__json_failed(&f, WK_ERR_DEPTH, "nesting deeper than the limit", p);
        goto fail;
    }
    if (WK__UNLIKELY((depth >> 6) == stack.cap)) {
        if (!wk__stack_grow(&stack, stack.cap, max_depth / 64 + 1)) {
            wk__json_failed(&f, WK_ERR_NOMEM, "out of memory for the nesting stack", p);
            goto fail;
        }
        bits = stack.mem;
    }
    object = c == '{';
    {
        uint64_t bit = 1ull << (depth & 63);
        bits[depth >> 6] = object ? bits[depth >> 6] | bit : bits[depth >> 6] & ~bit;
    }
    depth++;
    p = WK__VALIDATE(wk__json_skip_ws_indent)(p + 1, end);
    if (WK__UNLIKELY(p == end)) {
        wk__json_ends_inside(object, p, &f);
        goto fail;
    }
    if (*p == (object ? '}' : ']')) {
        p++;
        goto close; /* empty */
    }
    if (object) {
        goto key;
    }
    goto value;

after_value:
    /* inside a container (depth >= 1): a ',' or the closing bracket is due; a ',' right after
     * the value is the common case and skips the whitespace step */
    if (WK__LIKELY(p < end && *p == ',')) {
        goto comma;
    }
    p = WK__VALIDATE(wk__json_skip_ws_indent)(p, end);
    if (WK__UNLIKELY(p == end)) {
        wk__json_ends_inside(object, p, &f);
        goto fail;
    }
    c = *p;
    if (c == ',') {
    comma:
        p = WK__VALIDATE(wk__json_skip_ws_indent)(p + 1, end);
        if (object) {
            goto key;
        }
        if (WK__UNLIKELY(wk__json_array_item(p, end, &f) == NULL)) {
            goto fail;
        }
        goto value;
    }
    if (c != (object ? '}' : ']')) {
        wk__json_no_separator(object, p, &f);
        goto fail;
    }
    p++;

close:
    /* The container at depth - 1 has just closed. */
    depth--;
    if (depth == 0) {
        goto done;
    }
    object = level_is_object(bits, depth - 1);
    goto after_value;

key:
    /* in an object, p at its next key: the key, then its colon, then its value */
    if (WK__UNLIKELY(wk__json_key_start(p, end, &f) == NULL)) {
        goto fail;
    }
    p = WK__VALIDATE(string)(p, end, &f);
    if (p == NULL) {
        goto fail;
    }
    p = WK__VALIDATE(wk__json_colon)(p, end, &f);
    if (WK__UNLIKELY(p == NULL)) {
        goto fail;
    }
    goto value;

done:
    /* the document's value is whole: only whitespace may follow, unless allowed */
    p = WK__VALIDATE(wk__json_doc_end)(
        p, end, (flags & (WK_JSON_READ_ALLOW_TRAILING | WK_JSON_READ_MULTI)) != 0, &f);
    if (p == NULL) {
        goto fail;
    }
    wk__stack_free(&stack);
    if (consumed != NULL) {
        *consumed = (size_t)(p - start);
    }
    return wk_error_set(err, WK_OK, (size_t)(p - start), NULL);

fail:
    /* f says what failed and where */
    wk__stack_free(&stack);
    return wk_error_set(err, f.st, (size_t)(f.at - start), f.msg);

#endif /* WK__VALIDATE_BODY */
