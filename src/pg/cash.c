/*
 * money, PostgreSQL's cash.c: an int64 count of cents, rendered as cash_out does under
 * lc_monetary = C (the glue's session setting): "-$1,234.56".
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> the renderer
 * here -> text / a string event / a value tree. There is no parser: cash_in's syntax follows
 * the locale, so money parameters go in the text format and the server parses them.
 */
#include "pg/pg_codec.h"

/* cash_out of cash_send's 8 bytes: sign, '$', the digits grouped by three, two decimals. */
static wk_status r_money(const wk_pg_decoder *d, const uint8_t *p, size_t n, wk_buf *out,
                         wk_error *err)
{
    (void)d;
    wk_status st = wk__pg_exact(n, 8, "binary money must be 8 bytes", err);
    if (st != WK_OK) {
        return st;
    }
    int64_t v = (int64_t)wk__pg_be64(p);
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char t[40];
    size_t i = sizeof t;
    int digits = 0;
    /* two fraction digits, then groups of three separated by ',' */
    do {
        if (digits == 2) {
            t[--i] = '.';
        } else if (digits > 2 && (digits - 2) % 3 == 0) {
            t[--i] = ',';
        }
        t[--i] = (char)('0' + u % 10);
        u /= 10;
        digits++;
    } while (u != 0 || digits < 3);
    t[--i] = '$';
    if (v < 0) {
        t[--i] = '-';
    }
    return wk_buf_append(out, t + i, sizeof t - i) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

static const wk__pg_rtype rt_money = {r_money, NULL};

R_OIDS(c_money, 790);
R_AOIDS(c_money, 791);
const wk_pg_codec wk__pg_codec_money = RC("money", &rt_money, WK_PG_BOTH_FORMATS, c_money);
