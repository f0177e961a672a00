/*
 * money, PostgreSQL's cash.c: an int64 count of cents, rendered as cash_out does under
 * lc_monetary = C (the glue's session setting): "-$1,234.56".
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> this codec -> rendered.c -> the renderer
 * here -> text / a string event / a value tree. Encoding parses cash_in's syntax under
 * lc_monetary = C (the session wirekit sets up): '$' before or after the sign, ',' between
 * groups, '.' before at most two decimals (a third rounds half up, as cash_in; the rest is
 * dropped), a negative also as "(...)".
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

static bool mspace(uint8_t c)
{
    return c == ' ' || (c >= '\t' && c <= '\r');
}

/* cash_in under lc_monetary = C to cash_recv's 8 bytes. */
static wk_status p_money(const wk_pg_encoder *e, const uint8_t *s, size_t n, wk_buf *out,
                         wk_error *err)
{
    (void)e;
    size_t i = 0;
    bool neg = false, paren = false, any = false;
    while (i < n && mspace(s[i])) {
        i++;
    }
    i += i < n && s[i] == '$';
    while (i < n && mspace(s[i])) {
        i++;
    }
    if (i < n && (s[i] == '-' || s[i] == '(' || s[i] == '+')) {
        neg = s[i] != '+';
        paren = s[i] == '(';
        i++;
    }
    i += i < n && s[i] == '$';
    while (i < n && mspace(s[i])) {
        i++;
    }
    uint64_t cents = 0;
    int decimals = -1; /* -1: before the point */
    bool round_up = false;
    for (; i < n; i++) {
        uint8_t c = s[i];
        if (c >= '0' && c <= '9') {
            any = true;
            if (decimals >= 2) {
                round_up = round_up || (decimals == 2 && c >= '5');
                decimals = 3; /* digits past the third only are dropped */
                continue;
            }
            if (cents > (UINT64_MAX - 9) / 10) {
                return wk__pg_bad_input(err, i, "money value out of range");
            }
            cents = cents * 10 + (unsigned)(c - '0');
            decimals += decimals >= 0;
        } else if (c == '.' && decimals < 0) {
            decimals = 0;
        } else if (c != ',' || decimals >= 0) {
            break;
        }
    }
    for (int d = decimals < 0 ? 0 : decimals; d < 2; d++) {
        if (cents > UINT64_MAX / 10) {
            return wk__pg_bad_input(err, i, "money value out of range");
        }
        cents *= 10;
    }
    cents += round_up;
    if (paren && (i >= n || s[i++] != ')')) {
        return wk__pg_bad_input(err, i, "invalid input syntax for type money");
    }
    if (!neg && i < n && s[i] == '-') {
        neg = true;
        i++;
    }
    while (i < n && mspace(s[i])) {
        i++;
    }
    if (!any || i != n || cents > (uint64_t)INT64_MAX + neg) {
        return wk__pg_bad_input(err, i, !any || i != n ? "invalid input syntax for type money"
                                                       : "money value out of range");
    }
    uint8_t b[8];
    wk__pg_put64(b, neg ? (uint64_t)0 - cents : cents);
    return wk_buf_append(out, b, 8) == WK_OK ? WK_OK : wk__pg_nomem(err, 0);
}

static const wk__pg_rtype rt_money = {r_money, p_money};

R_OIDS(c_money, 790);
R_AOIDS(c_money, 791);
const wk_pg_codec wk__pg_codec_money = RC("money", &rt_money, WK_PG_BOTH_FORMATS, c_money);
