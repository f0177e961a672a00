/*
 * The media-type grammars, written once with the text codec: the WHATWG MIME Sniffing
 * "parse a MIME type" algorithm as a PEG, and RFC 9110's media-type ABNF. They are the
 * oracle: wk__mt_parse_grammar() and wk__mt_serialize_grammar() run them through the generic
 * interpreter and printer, and tests and the fuzzer hold the hand-tuned scanner to them.
 *
 * The WHATWG algorithm is "collect, then validate": an invalid parameter is skipped up to the
 * next ';' (or past a quoted string, which may contain ';'). In the grammar that is an ordered
 * choice, valid-parameter / skipped-parameter, where the second alternative consumes exactly
 * what the algorithm consumes and captures nothing. Two rules stay outside the grammar:
 * trimming HTTP whitespace from both ends (done before matching; inside the grammar it would
 * need lookahead at every byte) and "the first of two equal names wins" (done on the captures).
 *
 * Where it sits: mt_chars.c's byte classes -> the grammars built here with text_build.c ->
 * text_parse.c / text_print.c run them -> the same wk_media_type as the hand scanner
 * (mt_parse.c) gives, which tests/unit/mediatype and the fuzzer compare.
 *
 * The four programs (WHATWG or strict, bytes or UTF-8) are compiled on first use under
 * pthread_once and live for the life of the process.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mediatype/mt_internal.h"

/* messages name the limits by their numbers: kept in step here */
_Static_assert(WK_MT_MAX_PARAMS == 16, "a message below says 16 parameters");
_Static_assert(WK_MT_ESSENCE_MAX == 255, "a message below says 255 bytes");

/* Short for an unbounded repetition count. */
#define UNB WK_TEXT_UNBOUNDED

/* The bytes of one or more mt_chars.c classes as a text-codec byte set. */
static wk_text_byteset set_of(uint8_t cls)
{
    wk_text_byteset s = {{0, 0, 0, 0}};
    for (unsigned c = 0; c < 256; c++) {
        if (wk__mt_class[c] & cls) {
            wk_text_byteset_add_range(&s, (uint8_t)c, (uint8_t)c);
        }
    }
    return s;
}

/* A byte-class node over a set passed by value (grammar code reads better). */
static wk_text_node cls(wk_text_builder *b, const char *name, wk_text_byteset s)
{
    return wk_text_class(b, name, &s);
}

/* A case-sensitive literal of a C string. */
static wk_text_node lit(wk_text_builder *b, const char *s)
{
    return wk_text_lit(b, s, strlen(s), 0);
}

/* One quoted-string code point, minus the bytes in `minus`. In UTF-8 mode the non-ASCII ones
 * are U+0080..U+00FF as two bytes. */
static wk_text_node qchar(wk_text_builder *b, const char *name, const char *minus, bool utf8)
{
    wk_text_byteset s = set_of(WK__MT_QSC);
    wk_text_byteset_remove_chars(&s, minus);
    if (!utf8) {
        return cls(b, name, s);
    }
    for (unsigned c = 0x80; c < 256; c++) {
        s.w[c >> 6] &= ~((uint64_t)1 << (c & 63));
    }
    wk_text_byteset lead = {{0, 0, 0, 0}}, cont = {{0, 0, 0, 0}};
    wk_text_byteset_add_range(&lead, 0xC2, 0xC3);
    wk_text_byteset_add_range(&cont, 0x80, 0xBF);
    wk_text_node two = WK_TEXT_SEQ(b, cls(b, NULL, lead), cls(b, NULL, cont));
    return wk_text_rule(b, name, WK_TEXT_ALT(b, cls(b, NULL, s), two));
}

/* The WHATWG grammar: type "/" subtype, then `;` parameters, each either valid (captured:
 * name, and the value in the unquoted or the quoted slot) or skipped as the algorithm skips
 * it; `utf8` admits U+0080..U+00FF as UTF-8 in quoted strings. */
static wk_text_node whatwg(wk_text_builder *b, bool utf8)
{
    wk_text_byteset all = {{~0ull, ~0ull, ~0ull, ~0ull}};
    wk_text_byteset not_semi = all, not_semi_eq = all, not_dq_bs = all, sptab = {{0}};
    wk_text_byteset_remove_chars(&not_semi, ";");
    wk_text_byteset_remove_chars(&not_semi_eq, ";=");
    wk_text_byteset_remove_chars(&not_dq_bs, "\"\\");
    wk_text_byteset_add_chars(&sptab, " \t");

    wk_text_node tchar = cls(b, "tchar", set_of(WK__MT_TOKEN));
    wk_text_node ws = wk_text_rep(b, cls(b, "HTTP-whitespace", set_of(WK__MT_WS)), 0, UNB);
    wk_text_node token = wk_text_rule(b, "token", wk_text_rep(b, tchar, 1, UNB));
    wk_text_node semi = lit(b, ";"), eq = lit(b, "="), dq = lit(b, "\""), bs = lit(b, "\\");
    wk_text_node end = wk_text_end(b);
    wk_text_node rest = wk_text_rep(b, cls(b, "not-semicolon", not_semi), 0, UNB);
    wk_text_node any = cls(b, "any-byte", all);

    /* valid-parameter: a token name, '=', a value whose code points are all allowed. */
    wk_text_node qsc = qchar(b, "quoted-string-char", "", utf8);
    wk_text_node qdc = qchar(b, "quoted-text-char", "\"\\", utf8);
    wk_text_node qvalue =
        wk_text_capture(b, WK_MT_SLOT_QVALUE, "quoted-value",
                        wk_text_rep(b, WK_TEXT_ALT(b, qdc, WK_TEXT_SEQ(b, bs, qsc)), 0, UNB), 0);
    wk_text_node qtail = wk_text_capture(b, WK_MT_SLOT_QTAIL, "quoted-tail", bs, 0);
    wk_text_node quoted = wk_text_rule(
        b, "quoted-value-then-junk",
        WK_TEXT_SEQ(b, dq, qvalue, WK_TEXT_ALT(b, WK_TEXT_SEQ(b, qtail, end), dq, end), rest));
    wk_text_node uqc = qchar(b, "value-char", " \t;", utf8);
    /* The "not a quote" test sits inside the capture so that the printer, which checks each
     * captured value against its sub-grammar, also checks it. */
    wk_text_node uvalue = wk_text_capture(
        b, WK_MT_SLOT_VALUE, "unquoted-value",
        WK_TEXT_SEQ(
            b, wk_text_not(b, dq),
            wk_text_rep(b,
                        WK_TEXT_SEQ(b, wk_text_rep(b, cls(b, "space-or-tab", sptab), 0, UNB), uqc),
                        1, UNB)),
        0);
    wk_text_node unquoted = WK_TEXT_SEQ(b, uvalue, ws);
    wk_text_node pname =
        wk_text_capture(b, WK_MT_SLOT_NAME, "parameter-name", token, WK_TEXT_PRINT_LOWER);
    wk_text_node valid = wk_text_rule(b, "valid-parameter",
                                      WK_TEXT_SEQ(b, pname, eq, WK_TEXT_ALT(b, quoted, unquoted),
                                                  wk_text_and(b, WK_TEXT_ALT(b, semi, end))));

    /* skipped-parameter: what the algorithm consumes for a parameter it drops. */
    wk_text_node qskip = WK_TEXT_SEQ(
        b, dq,
        wk_text_rep(
            b, WK_TEXT_ALT(b, cls(b, "not-quote-or-backslash", not_dq_bs), WK_TEXT_SEQ(b, bs, any)),
            0, UNB),
        wk_text_opt(b, WK_TEXT_ALT(b, dq, bs)), rest);
    wk_text_node skipped = wk_text_rule(
        b, "skipped-parameter",
        WK_TEXT_SEQ(b, wk_text_rep(b, cls(b, "not-semicolon-or-equals", not_semi_eq), 0, UNB),
                    wk_text_opt(b, WK_TEXT_SEQ(b, eq, WK_TEXT_ALT(b, qskip, rest)))));

    wk_text_node param =
        wk_text_rule(b, "parameter", WK_TEXT_SEQ(b, ws, WK_TEXT_ALT(b, valid, skipped)));
    wk_text_node type = wk_text_capture(b, WK_MT_SLOT_TYPE, "type", token, WK_TEXT_PRINT_LOWER);
    wk_text_node subtype =
        wk_text_capture(b, WK_MT_SLOT_SUBTYPE, "subtype", token, WK_TEXT_PRINT_LOWER);
    return WK_TEXT_SEQ(b, type, lit(b, "/"), subtype, ws,
                       wk_text_rep(b, WK_TEXT_SEQ(b, semi, param), 0, UNB), end);
}

/* RFC 9110: media-type = type "/" subtype *( OWS ";" OWS [ parameter ] ), where an invalid
 * parameter is an error rather than skipped. */
static wk_text_node strict(wk_text_builder *b, bool utf8)
{
    wk_text_node tchar = cls(b, "tchar", set_of(WK__MT_TOKEN));
    wk_text_node token = wk_text_rule(b, "token", wk_text_rep(b, tchar, 1, UNB));
    wk_text_node ows =
        wk_text_rule(b, "OWS", wk_text_rep(b, cls(b, "SP-HTAB", set_of(WK__MT_OWS)), 0, UNB));
    wk_text_node dq = lit(b, "\"");
    wk_text_node qdtext = qchar(b, "qdtext", "\"\\", utf8);
    wk_text_node qpair = wk_text_rule(
        b, "quoted-pair", WK_TEXT_SEQ(b, lit(b, "\\"), qchar(b, "quoted-pair-char", "", utf8)));
    wk_text_node qstring = wk_text_rule(
        b, "quoted-string",
        WK_TEXT_SEQ(b, dq,
                    wk_text_capture(b, WK_MT_SLOT_QVALUE, "quoted-value",
                                    wk_text_rep(b, WK_TEXT_ALT(b, qdtext, qpair), 0, UNB), 0),
                    dq));
    wk_text_node param = wk_text_rule(
        b, "parameter",
        WK_TEXT_SEQ(
            b, wk_text_capture(b, WK_MT_SLOT_NAME, "parameter-name", token, WK_TEXT_PRINT_LOWER),
            lit(b, "="),
            WK_TEXT_ALT(b, wk_text_capture(b, WK_MT_SLOT_VALUE, "value", token, 0), qstring)));
    wk_text_node type = wk_text_capture(b, WK_MT_SLOT_TYPE, "type", token, WK_TEXT_PRINT_LOWER);
    wk_text_node subtype =
        wk_text_capture(b, WK_MT_SLOT_SUBTYPE, "subtype", token, WK_TEXT_PRINT_LOWER);
    wk_text_node params = wk_text_rule(
        b, "parameters",
        wk_text_rep(b, WK_TEXT_SEQ(b, ows, lit(b, ";"), ows, wk_text_opt(b, param)), 0, UNB));
    return WK_TEXT_SEQ(b, type, lit(b, "/"), subtype, params, wk_text_end(b));
}

/* The four compiled grammars, by flags (WK_MT_STRICT | WK_MT_UTF8), built once. */
static wk_text_program *programs[4];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Builds and compiles the four grammars; one that fails stays NULL (callers then report
 * WK_ERR_NOMEM). */
static void build_all(void)
{
    for (unsigned f = 0; f < 4; f++) {
        wk_text_builder *b = wk_text_builder_new(NULL);
        if (b == NULL) {
            continue;
        }
        bool utf8 = (f & WK_MT_UTF8) != 0;
        wk_text_node root = (f & WK_MT_STRICT) ? strict(b, utf8) : whatwg(b, utf8);
        root = wk_text_rule(b, "media-type", root);
        if (wk_text_compile(b, root, &programs[f], NULL) != WK_OK) {
            programs[f] = NULL;
        }
        wk_text_builder_free(b);
    }
}

/* Public (wirekit/mediatype.h): the compiled grammar for flags, built on first use. */
const wk_text_program *wk_mt_grammar(unsigned flags)
{
    pthread_once(&once, build_all);
    return programs[flags & (WK_MT_STRICT | WK_MT_UTF8)];
}

/* ---- the oracle ------------------------------------------------------------------------- */

/* Contract in mt_internal.h: parses with the grammar (trimming first, as WHATWG does), then
 * fills the value from the captures, the first of duplicate names kept. */
wk_status wk__mt_parse_grammar(const void *data, size_t len, unsigned flags, wk_media_type *mt,
                               wk_error *err)
{
    const wk_text_program *p = wk_mt_grammar(flags);
    if (p == NULL || mt == NULL || (data == NULL && len != 0)) {
        return wk_error_set(err, p == NULL ? WK_ERR_NOMEM : WK_ERR_ARG, 0, "no grammar");
    }
    const uint8_t *s = data != NULL ? data : (const uint8_t *)"";
    wk__mt_clear(mt);
    size_t b = 0, e = len;
    if (!(flags & WK_MT_STRICT)) {
        while (b < e && wk__mt_is(s[b], WK__MT_WS)) {
            b++;
        }
        while (e > b && wk__mt_is(s[e - 1], WK__MT_WS)) {
            e--;
        }
    }
    /* Every capture spans at least one byte except quoted values, each of which follows at
     * least two bytes (';' and '"'): len + 8 captures always suffice. */
    size_t cap = (e - b) + 8;
    wk_text_cap *caps = malloc(cap * sizeof *caps);
    if (caps == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    size_t n = 0;
    wk_status st = wk_text_parse(p, s + b, e - b, caps, cap, &n, err);
    if (st != WK_OK) {
        free(caps);
        if (err != NULL) {
            err->offset += b;
        }
        return st;
    }
    const char *ess = caps[0].ptr;
    size_t type_len = caps[0].len, ess_len = caps[0].len + 1 + caps[1].len;
    mt->input.ptr = (const char *)s + b;
    mt->input.len = e - b;
    for (size_t k = 2; k < n;) {
        const wk_text_cap *name = &caps[k++];
        const wk_text_cap *val = &caps[k++];
        size_t vlen = val->len;
        if (k < n && caps[k].slot == WK_MT_SLOT_QTAIL) {
            vlen += caps[k++].len;
        }
        bool quoted = val->slot == WK_MT_SLOT_QVALUE;
        bool dup = false;
        for (unsigned j = 0; j < mt->nparams; j++) {
            dup = dup ||
                  wk__mt_ieq(mt->params[j].name.ptr, mt->params[j].name.len, name->ptr, name->len);
        }
        if (dup) {
            if (flags & WK_MT_STRICT) {
                size_t at = (size_t)(name->ptr - (const char *)s);
                free(caps);
                wk__mt_clear(mt);
                return wk_error_set(err, WK_ERR_SYNTAX, at, "duplicate parameter name");
            }
            continue;
        }
        if (mt->nparams == WK_MT_MAX_PARAMS) {
            size_t at = (size_t)(name->ptr - (const char *)s);
            free(caps);
            wk__mt_clear(mt);
            return wk_error_set(err, WK_ERR_LIMIT, at, "more than 16 parameters");
        }
        wk_mt_param *pp = &mt->params[mt->nparams++];
        pp->name.ptr = name->ptr;
        pp->name.len = name->len;
        pp->value.ptr = val->ptr;
        pp->value.len = vlen;
        pp->quoted = quoted;
        pp->escaped = quoted && memchr(val->ptr, '\\', vlen) != NULL;
    }
    free(caps);
    if (!wk__mt_set_essence(mt, ess, type_len, ess_len, NULL)) {
        return wk_error_set(err, WK_ERR_LIMIT, b + WK_MT_ESSENCE_MAX,
                            "an essence with capitals longer than 255 bytes");
    }
    return WK_OK;
}

/* Contract in mt_internal.h: serializes by printing captures through the grammar. */
wk_status wk__mt_serialize_grammar(const wk_media_type *mt, unsigned flags, wk_buf *out,
                                   wk_error *err)
{
    const wk_text_program *p = wk_mt_grammar(flags);
    if (p == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "no grammar");
    }
    /* Captures carry the canonical choice: a plain value that is a non-empty token goes in
     * the unquoted slot, anything else is escaped into the quoted slot. */
    size_t total = 0;
    for (unsigned k = 0; k < mt->nparams; k++) {
        total += 3 * mt->params[k].value.len + 1;
    }
    char *scratch = malloc(total + 1);
    if (scratch == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "out of memory");
    }
    wk_text_cap caps[2 + 2 * WK_MT_MAX_PARAMS];
    size_t n = 0, used = 0;
    wk_slice type = wk_mt_type(mt), subtype = wk_mt_subtype(mt);
    caps[n++] = (wk_text_cap){WK_MT_SLOT_TYPE, type.ptr, type.len};
    caps[n++] = (wk_text_cap){WK_MT_SLOT_SUBTYPE, subtype.ptr, subtype.len};
    for (unsigned k = 0; k < mt->nparams; k++) {
        const wk_mt_param *pp = &mt->params[k];
        char *plain = scratch + used;
        size_t plen = wk_mt_param_value(pp, plain, pp->value.len);
        caps[n++] = (wk_text_cap){WK_MT_SLOT_NAME, pp->name.ptr, pp->name.len};
        if (wk__mt_token(plain, plen)) {
            caps[n++] = (wk_text_cap){WK_MT_SLOT_VALUE, plain, plen};
            used += plen;
            continue;
        }
        char *esc = plain + plen;
        size_t elen = 0;
        for (size_t i = 0; i < plen; i++) {
            if (plain[i] == '"' || plain[i] == '\\') {
                esc[elen++] = '\\';
            }
            esc[elen++] = plain[i];
        }
        caps[n++] = (wk_text_cap){WK_MT_SLOT_QVALUE, esc, elen};
        used += plen + elen;
    }
    wk_status st = wk_text_print(p, caps, n, out, err);
    free(scratch);
    return st;
}
