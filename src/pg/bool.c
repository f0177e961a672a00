/*
 * bool, PostgreSQL's bool.c, in both wire formats.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the codec below -> either the direct
 * binary encoder here or the generic functions of codec_generic.c, which call this file's
 * readers and writers (wk__pg_type_bool) -> a C bool, PostgreSQL text, an event or a value.
 */
#include "pg/pg_codec.h"

/* boolrecv: one byte. */
static wk_status bool_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 1) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary bool must be 1 byte");
    }
    v->b = p[0] != 0; /* as boolrecv: any non-zero byte is true */
    return WK_OK;
}

/* True when s[0..n) is a non-empty prefix of the lower-case word w, in either case. */
static bool word_is(const uint8_t *s, size_t n, const char *w)
{
    return n != 0 && n <= strlen(w) && wk__pg_prefix_ieq(s, n, w);
}

/* boolin: the words below, spaces around allowed, any case. */
static wk_status bool_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    while (n > 0 && wk__pg_is_space(p[0])) {
        p++;
        n--;
    }
    while (n > 0 && wk__pg_is_space(p[n - 1])) {
        n--;
    }
    /* boolin: any unique prefix of true/false/yes/no, "on"/"off" with at least two letters. */
    if (word_is(p, n, "true") || word_is(p, n, "yes") || (n >= 2 && word_is(p, n, "on")) ||
        (n == 1 && p[0] == '1')) {
        v->b = true;
        return WK_OK;
    }
    if (word_is(p, n, "false") || word_is(p, n, "no") || (n >= 2 && word_is(p, n, "off")) ||
        (n == 1 && p[0] == '0')) {
        v->b = false;
        return WK_OK;
    }
    return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "invalid input syntax for type boolean");
}

/* boolsend: 1 or 0. */
static wk_status bool_write_bin(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_push(out, v->b ? 1 : 0);
}

/* boolout: "t" or "f". */
static wk_status bool_write_text(const wk__pg_native *v, wk_buf *out)
{
    return wk_buf_push(out, v->b ? 't' : 'f');
}

/* bool's operations for the generic, table-driven codec functions. */
const wk__pg_type wk__pg_type_bool = {WK__PG_CLASS_BOOL, bool_read_bin, bool_read_text,
                                      bool_write_bin, bool_write_text, 0, 0};

/* ---- the codec ---- */

/* boolsend from a C bool: the fixed-width encoder. */
static inline void stbool(uint8_t *p, bool v)
{
    p[0] = v ? 1 : 0;
}
/* boolsend of a C bool. */
FAST_ENC_BIN(enc_bin_bool, bool, 1, stbool)

OIDS(o_bool, WK_PG_OID_BOOL);
OIDS(a_bool, WK_PG_OID_BOOL_ARRAY);

const wk_pg_codec wk__pg_codec_bool = {
    "bool", o_bool, a_bool, N(o_bool), WK_PG_BOTH_FORMATS, K(BOOL) | GEN_DEC_KINDS,
    K(BOOL) | K(TEXT), K(BOOL), 0,
    {DEC_ROW([WK_PG_KIND_BOOL] = CV), DEC_ROW([WK_PG_KIND_BOOL] = CV)},
    {ENC_ROW([WK_PG_KIND_BOOL] = EC), ENC_ROW([WK_PG_KIND_BOOL] = enc_bin_bool)},
    &wk__pg_type_bool};
