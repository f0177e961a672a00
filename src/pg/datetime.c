/*
 * Dates and times: date, time, timetz, timestamp, timestamptz and interval, in both wire
 * formats.
 *
 * Where it sits: a row's bytes -> plan (plan.c) -> the date/time codecs (builtins.c for now)
 * -> the direct DATE / TIMESTAMP decoders there or codec_generic.c's generic functions -> the
 * wk__pg_type tables at the end of each section here -> C integers and structs (wirekit/pg.h
 * kinds), PostgreSQL text, events (the text) or values. range.c renders date and timestamp
 * range bounds through the same tables.
 *
 * Binary forms are PostgreSQL's integer datetimes (days or microseconds since 2000-01-01,
 * microseconds since midnight, interval's three fields), range-checked as the *_recv
 * functions do. Text output reproduces PostgreSQL's under DateStyle=ISO, IntervalStyle=postgres
 * and TimeZone=UTC (the session settings wirekit asks for), including infinities, BC years and
 * years beyond 9999; the Julian-day arithmetic is PostgreSQL's own (date2j / j2date). Text
 * input accepts those same output forms (plus a 'T' separator and infinity spellings), not the
 * whole of PostgreSQL's free-form datetime parser; a timestamptz without an offset is UTC.
 */
#include <math.h>
#include <stdlib.h>

#include "core/number_interface.h"
#include "pg/pg_interface.h"

/* PostgreSQL's own constants (datatype/timestamp.h): units, the Julian day of 2000-01-01, the
 * end of the date range and the timestamp range, and the limit of a time zone offset. */
#define USECS_PER_SEC INT64_C(1000000)
#define USECS_PER_MINUTE INT64_C(60000000)
#define USECS_PER_HOUR INT64_C(3600000000)
#define USECS_PER_DAY INT64_C(86400000000)
#define POSTGRES_EPOCH_JDATE 2451545
#define DATE_END_JULIAN 2147483494
#define MIN_TIMESTAMP INT64_C(-211813488000000000)
#define END_TIMESTAMP INT64_C(9223371331200000000)
#define TZDISP_LIMIT (16 * 3600)

/* Contract in pg_interface.h: PostgreSQL's date2j, valid over its whole date range. */
int32_t wk__pg_date2j(int year, int month, int day)
{
    int64_t y = year, m = month;
    if (m > 2) {
        m += 1;
        y += 4800;
    } else {
        m += 13;
        y += 4799;
    }
    int64_t century = y / 100;
    int64_t julian = y * 365 - 32167;
    julian += y / 4 - century + century / 4;
    julian += 7834 * m / 256 + day;
    return (int32_t)julian;
}

/* Contract in pg_interface.h: PostgreSQL's j2date, the inverse of date2j. */
void wk__pg_j2date(int32_t jd, int *year, int *month, int *day)
{
    unsigned int julian = (unsigned int)jd;
    julian += 32044;
    unsigned int quad = julian / 146097;
    unsigned int extra = (julian - quad * 146097) * 4 + 3;
    julian += 60 + quad * 3 + extra / 146097;
    quad = julian / 1461;
    julian -= quad * 1461;
    int y = (int)(julian * 4 / 1461);
    julian = ((y != 0) ? ((julian + 305) % 365) : ((julian + 306) % 366)) + 123;
    y += (int)quad * 4;
    *year = y - 4800;
    quad = julian * 2141 / 65536;
    *day = (int)(julian - 7834 * quad / 256);
    *month = (int)((quad + 10) % 12 + 1);
}

/* A date (days since 2000-01-01) inside date_recv's range, infinities excluded. */
static bool date_valid(int64_t days)
{
    return days >= -POSTGRES_EPOCH_JDATE && days < DATE_END_JULIAN - POSTGRES_EPOCH_JDATE;
}

/* A timestamp (microseconds since 2000-01-01) inside timestamp_recv's range. */
static bool ts_valid(int64_t ts)
{
    return ts >= MIN_TIMESTAMP && ts < END_TIMESTAMP;
}

/* ---- text output pieces ---- */

/* `YYYY-MM-DD` of Julian day jd; *bc set when the year is not positive. */
static size_t fmt_date(char *o, int32_t jd, bool *bc)
{
    int y, m, d;
    wk__pg_j2date(jd, &y, &m, &d);
    *bc = y <= 0;
    size_t n = wk__pg_fmt_uint_pad(o, (uint64_t)(y > 0 ? y : -(y - 1)), 4);
    o[n++] = '-';
    n += wk__pg_fmt_uint_pad(o + n, (uint64_t)m, 2);
    o[n++] = '-';
    n += wk__pg_fmt_uint_pad(o + n, (uint64_t)d, 2);
    return n;
}

/* AppendSeconds: two-digit seconds, then up to six fraction digits without trailing zeros. */
static size_t fmt_seconds(char *o, int64_t sec, int64_t fsec)
{
    size_t n = wk__pg_fmt_uint_pad(o, (uint64_t)(sec < 0 ? -sec : sec), 2);
    if (fsec != 0) {
        uint64_t f = (uint64_t)(fsec < 0 ? -fsec : fsec);
        char t[6];
        wk__pg_fmt_uint_pad(t, f, 6);
        int len = 6;
        while (len > 0 && t[len - 1] == '0') {
            len--;
        }
        o[n++] = '.';
        memcpy(o + n, t, (size_t)len);
        n += (size_t)len;
    }
    return n;
}

/* HH:MM:SS[.ffffff] of microseconds since midnight (0..24h). */
static size_t fmt_time(char *o, int64_t t)
{
    int64_t h = t / USECS_PER_HOUR;
    t -= h * USECS_PER_HOUR;
    int64_t m = t / USECS_PER_MINUTE;
    t -= m * USECS_PER_MINUTE;
    int64_t s = t / USECS_PER_SEC;
    t -= s * USECS_PER_SEC;
    size_t n = wk__pg_fmt_uint_pad(o, (uint64_t)h, 2);
    o[n++] = ':';
    n += wk__pg_fmt_uint_pad(o + n, (uint64_t)m, 2);
    o[n++] = ':';
    n += fmt_seconds(o + n, s, t);
    return n;
}

/* EncodeTimezone: `tz` in PostgreSQL's convention (seconds west of UTC). */
static size_t fmt_zone(char *o, int32_t tz)
{
    int sec = tz < 0 ? -tz : tz;
    int min = sec / 60;
    sec -= min * 60;
    int hour = min / 60;
    min -= hour * 60;
    size_t n = 0;
    o[n++] = tz <= 0 ? '+' : '-';
    n += wk__pg_fmt_uint_pad(o + n, (uint64_t)hour, 2);
    if (sec != 0 || min != 0) {
        o[n++] = ':';
        n += wk__pg_fmt_uint_pad(o + n, (uint64_t)min, 2);
    }
    if (sec != 0) {
        o[n++] = ':';
        n += wk__pg_fmt_uint_pad(o + n, (uint64_t)sec, 2);
    }
    return n;
}

/* ---- a small cursor for the text forms ---- */

/* A read position over p[0..n): the text parsers advance i and fail without side effects
 * beyond it. */
typedef struct cur {
    const uint8_t *p;
    size_t n, i;
} cur;

/* The byte at the cursor is ch (false at the end). */
static bool at(const cur *c, uint8_t ch)
{
    return c->i < c->n && c->p[c->i] == ch;
}

/* Reads min..max decimal digits. */
static bool num(cur *c, int min, int max, int64_t *out)
{
    int64_t v = 0;
    int k = 0;
    while (c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9' && k < max) {
        v = v * 10 + (c->p[c->i] - '0');
        c->i++;
        k++;
    }
    *out = v;
    return k >= min && !(c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9');
}

/* Consumes w (lower case) when the input has it there in either case. */
static bool word_at(cur *c, const char *w)
{
    size_t len = strlen(w);
    if (c->n - c->i < len) {
        return false;
    }
    for (size_t k = 0; k < len; k++) {
        uint8_t ch = c->p[c->i + k];
        if (ch >= 'A' && ch <= 'Z') {
            ch = (uint8_t)(ch + 32);
        }
        if (ch != (uint8_t)w[k]) {
            return false;
        }
    }
    c->i += len;
    return true;
}

/* Skips spaces and tabs. */
static void skip_spaces(cur *c)
{
    while (c->i < c->n && (c->p[c->i] == ' ' || c->p[c->i] == '\t')) {
        c->i++;
    }
}

/* Optional 'infinity' spellings: returns +1, -1 or 0. */
static int infinity_word(const uint8_t *p, size_t n)
{
    cur c = {p, n, 0};
    skip_spaces(&c);
    int sign = 1;
    if (at(&c, '-')) {
        sign = -1;
        c.i++;
    } else if (at(&c, '+')) {
        c.i++;
    }
    if (!word_at(&c, "infinity")) {
        return 0;
    }
    skip_spaces(&c);
    return c.i == c.n ? sign : 0;
}

/* Y+-MM-DD (year up to 7 digits) -> Julian day, not yet BC-adjusted: returns year/month/day. */
static bool parse_ymd(cur *c, int64_t *y, int64_t *m, int64_t *d)
{
    return num(c, 1, 7, y) && at(c, '-') && (c->i++, num(c, 1, 2, m)) && at(c, '-') &&
           (c->i++, num(c, 1, 2, d));
}

/* Days in month m of internal year y (Gregorian leap years). */
static int days_in_month(int64_t y, int64_t m)
{
    static const int dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return m == 2 && leap ? 29 : dm[m - 1];
}

/* Checks a calendar date (y as PostgreSQL's internal year, 0 = 1 BC). */
static bool ymd_ok(int64_t y, int64_t m, int64_t d)
{
    if (m < 1 || m > 12 || d < 1) {
        return false;
    }
    return d <= days_in_month(y, m);
}

/* HH:MM[:SS[.frac]] -> magnitude in microseconds (hours may have many digits). */
static bool parse_hms_mag(cur *c, uint64_t *out, int max_hour_digits)
{
    int64_t h, m, s = 0, f = 0;
    if (!num(c, 1, max_hour_digits, &h) || !at(c, ':')) {
        return false;
    }
    c->i++;
    if (!num(c, 2, 2, &m) || m > 59) {
        return false;
    }
    if (at(c, ':')) {
        c->i++;
        if (!num(c, 2, 2, &s) || s > 60) {
            return false;
        }
        if (at(c, '.')) {
            size_t start = c->i;
            c->i++;
            int k = 0;
            while (c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9') {
                if (k < 6) {
                    f = f * 10 + (c->p[c->i] - '0');
                }
                k++;
                c->i++;
            }
            if (k == 0) {
                return false;
            }
            if (k > 6) {
                /* ParseFractionalSecond: rint(strtod(".ddd") * 1e6), with the kernel's
                 * locale-free, correctly rounded parse (the digits before 63 bytes, as the
                 * bounded copy this replaces read). */
                size_t len = c->i - start;
                if (len > 63) {
                    len = 63;
                }
                f = (int64_t)rint(wk__decimal_to_double((const char *)c->p + start, len) *
                                  1000000.0);
            } else {
                for (; k < 6; k++) {
                    f *= 10;
                }
            }
        }
    }
    uint64_t t;
    if (__builtin_mul_overflow((uint64_t)h, (uint64_t)USECS_PER_HOUR, &t) ||
        __builtin_add_overflow(t, (uint64_t)((m * 60 + s) * USECS_PER_SEC + f), &t)) {
        return false;
    }
    *out = t;
    return true;
}

/* HH:MM[:SS[.frac]] within a day's range (the caller checks the 24:00:00 limit). */
static bool parse_hms(cur *c, int64_t *out, int max_hour_digits)
{
    uint64_t t;
    if (!parse_hms_mag(c, &t, max_hour_digits) || t > (uint64_t)INT64_MAX) {
        return false;
    }
    *out = (int64_t)t;
    return true;
}

/* [+-]HH[:MM[:SS]] or [+-]HHMM -> seconds east of UTC. */
static bool parse_zone(cur *c, int32_t *east)
{
    if (!at(c, '+') && !at(c, '-')) {
        return false;
    }
    int sign = c->p[c->i] == '-' ? -1 : 1;
    c->i++;
    int64_t h, m = 0, s = 0;
    size_t st = c->i;
    if (!num(c, 1, 4, &h)) {
        return false;
    }
    if (c->i - st == 4) {
        m = h % 100;
        h /= 100;
    } else if (at(c, ':')) {
        c->i++;
        if (!num(c, 2, 2, &m)) {
            return false;
        }
        if (at(c, ':')) {
            c->i++;
            if (!num(c, 2, 2, &s)) {
                return false;
            }
        }
    }
    if (m > 59 || s > 59) {
        return false;
    }
    int64_t v = h * 3600 + m * 60 + s;
    if (v >= TZDISP_LIMIT) {
        return false;
    }
    *east = (int32_t)(sign * v);
    return true;
}

/* Consumes " BC" (at least one space first, either case) after a date; true when present. */
static bool parse_bc(cur *c)
{
    size_t save = c->i;
    skip_spaces(c);
    if (c->i > save && (word_at(c, "bc"))) {
        return true;
    }
    c->i = save;
    return false;
}

/* ---- date ---- */

/* date_recv: int32 days; INT32_MIN / INT32_MAX are -infinity / infinity. */
static wk_status date_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 4) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary date must be 4 bytes");
    }
    int32_t d = (int32_t)wk__pg_be32(p);
    if (d != INT32_MIN && d != INT32_MAX && !date_valid(d)) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "date out of range");
    }
    v->i = d;
    return WK_OK;
}

/* date_in for the ISO form: [-]Y-MM-DD with an optional " BC", or an infinity word; the range
 * checked as date_in does (field values, then the Julian range). */
static wk_status date_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    int inf = infinity_word(p, n);
    if (inf != 0) {
        v->i = inf > 0 ? INT32_MAX : INT32_MIN;
        return WK_OK;
    }
    cur c = {p, n, 0};
    skip_spaces(&c);
    int64_t y, m, d;
    if (!parse_ymd(&c, &y, &m, &d)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, c.i, "invalid input syntax for type date");
    }
    bool bc = parse_bc(&c);
    skip_spaces(&c);
    if (c.i != n || y == 0) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, c.i, "invalid input syntax for type date");
    }
    if (bc) {
        y = 1 - y;
    }
    if (!ymd_ok(y, m, d)) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "date field value out of range");
    }
    if (y > 5874898 || y < -4713) { /* 4714 BC is year -4713; its last weeks are valid */
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "date out of range");
    }
    int64_t days = (int64_t)wk__pg_date2j((int)y, (int)m, (int)d) - POSTGRES_EPOCH_JDATE;
    if (!date_valid(days)) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "date out of range");
    }
    v->i = days;
    return WK_OK;
}

/* date_send. */
static wk_status date_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[4];
    wk__pg_put32(b, (uint32_t)(int32_t)v->i);
    return wk_buf_append(out, b, 4);
}

/* date_out under DateStyle=ISO: YYYY-MM-DD, " BC" for years <= 0, infinities spelled out. */
static wk_status date_write_text(const wk__pg_native *v, wk_buf *out)
{
    if (v->i == INT32_MAX) {
        return wk_buf_append(out, "infinity", 8);
    }
    if (v->i == INT32_MIN) {
        return wk_buf_append(out, "-infinity", 9);
    }
    char t[32];
    bool bc;
    size_t n = fmt_date(t, (int32_t)(v->i + POSTGRES_EPOCH_JDATE), &bc);
    if (bc) {
        memcpy(t + n, " BC", 3);
        n += 3;
    }
    return wk_buf_append(out, t, n);
}

const wk__pg_type wk__pg_type_date = {WK__PG_CLASS_STRING, date_read_bin, date_read_text,
                                      date_write_bin, date_write_text, 0, 0};

/* ---- time / timetz ---- */

/* time_recv: int64 microseconds in [0, 24:00:00]. */
static wk_status time_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                               wk_error *err)
{
    (void)a;
    if (n != 8) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary time must be 8 bytes");
    }
    int64_t t = (int64_t)wk__pg_be64(p);
    if (t < 0 || t > USECS_PER_DAY) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "time out of range");
    }
    v->i = t;
    return WK_OK;
}

/* time_in for HH:MM[:SS[.frac]] (24:00:00 allowed, as PostgreSQL allows it). */
static wk_status time_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    cur c = {p, n, 0};
    skip_spaces(&c);
    int64_t t;
    if (!parse_hms(&c, &t, 2)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, c.i, "invalid input syntax for type time");
    }
    skip_spaces(&c);
    if (c.i != n) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, c.i, "invalid input syntax for type time");
    }
    if (t < 0 || t > USECS_PER_DAY) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "time out of range");
    }
    v->i = t;
    return WK_OK;
}

/* time_send. */
static wk_status time_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[8];
    wk__pg_put64(b, (uint64_t)v->i);
    return wk_buf_append(out, b, 8);
}

/* time_out: HH:MM:SS with the fraction's significant digits. */
static wk_status time_write_text(const wk__pg_native *v, wk_buf *out)
{
    char t[32];
    return wk_buf_append(out, t, fmt_time(t, v->i));
}

const wk__pg_type wk__pg_type_time = {WK__PG_CLASS_STRING, time_read_bin, time_read_text,
                                      time_write_bin, time_write_text, 0, 0};

/* timetz_recv: int64 microseconds, then int32 zone in seconds WEST of UTC (PostgreSQL's sign),
 * stored as offset_sec east of UTC. */
static wk_status timetz_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                 wk_error *err)
{
    (void)a;
    if (n != 12) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary timetz must be 12 bytes");
    }
    int64_t t = (int64_t)wk__pg_be64(p);
    int32_t zone = (int32_t)wk__pg_be32(p + 8);
    if (t < 0 || t > USECS_PER_DAY) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "time out of range");
    }
    if (zone <= -TZDISP_LIMIT || zone >= TZDISP_LIMIT) {
        return wk__pg_fail(err, WK_ERR_RANGE, 8, "time zone displacement out of range");
    }
    v->timetz.usec = t;
    v->timetz.offset_sec = -zone;
    return WK_OK;
}

/* timetz_in for a time followed by an offset ([+-]HH[:MM[:SS]] or [+-]HHMM). */
static wk_status timetz_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                  wk_error *err)
{
    (void)a;
    cur c = {p, n, 0};
    skip_spaces(&c);
    int64_t t;
    int32_t east = 0;
    if (!parse_hms(&c, &t, 2) || !parse_zone(&c, &east)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, c.i,
                           "invalid input syntax for type time with time zone");
    }
    skip_spaces(&c);
    if (c.i != n) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, c.i,
                           "invalid input syntax for type time with time zone");
    }
    if (t < 0 || t > USECS_PER_DAY) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "time out of range");
    }
    v->timetz.usec = t;
    v->timetz.offset_sec = east;
    return WK_OK;
}

/* timetz_send: the zone back in PostgreSQL's west-positive sign. */
static wk_status timetz_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[12];
    wk__pg_put64(b, (uint64_t)v->timetz.usec);
    wk__pg_put32(b + 8, (uint32_t)(-v->timetz.offset_sec));
    return wk_buf_append(out, b, 12);
}

/* timetz_out: the time, then the offset as EncodeTimezone writes it. */
static wk_status timetz_write_text(const wk__pg_native *v, wk_buf *out)
{
    char t[48];
    size_t n = fmt_time(t, v->timetz.usec);
    n += fmt_zone(t + n, -v->timetz.offset_sec);
    return wk_buf_append(out, t, n);
}

const wk__pg_type wk__pg_type_timetz = {WK__PG_CLASS_STRING, timetz_read_bin, timetz_read_text,
                                        timetz_write_bin, timetz_write_text, 0, 0};

/* ---- timestamp / timestamptz ---- */

/* timestamp_recv / timestamptz_recv: int64 microseconds; INT64_MIN / INT64_MAX are the
 * infinities. */
static wk_status ts_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                             wk_error *err)
{
    (void)a;
    if (n != 8) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary timestamp must be 8 bytes");
    }
    int64_t t = (int64_t)wk__pg_be64(p);
    if (t != INT64_MIN && t != INT64_MAX && !ts_valid(t)) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "timestamp out of range");
    }
    v->i = t;
    return WK_OK;
}

/* Two ASCII digits (checked by the caller) as a number. */
static inline unsigned d2(const uint8_t *p)
{
    return (unsigned)(p[0] - '0') * 10 + (unsigned)(p[1] - '0');
}

/* Every byte of p[0..n) is an ASCII digit. */
static inline bool all_digits(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if ((unsigned)(p[i] - '0') >= 10) {
            return false;
        }
    }
    return true;
}

/* The canonical `YYYY-MM-DD HH:MM:SS[.ffffff]` (what the server sends for timestamp), with
 * fixed positions; false means "use the general parser". */
static bool ts_canonical(const uint8_t *p, size_t n, int64_t *out)
{
    if (n < 19 || n > 26 || n == 20 || p[4] != '-' || p[7] != '-' || p[10] != ' ' ||
        p[13] != ':' || p[16] != ':' || !all_digits(p, 4) || !all_digits(p + 5, 2) ||
        !all_digits(p + 8, 2) || !all_digits(p + 11, 2) || !all_digits(p + 14, 2) ||
        !all_digits(p + 17, 2)) {
        return false;
    }
    int64_t frac = 0;
    if (n > 19) {
        if (p[19] != '.' || !all_digits(p + 20, n - 20)) {
            return false;
        }
        for (size_t i = 20; i < 26; i++) {
            frac = frac * 10 + (i < n ? p[i] - '0' : 0);
        }
    }
    int y = (int)(d2(p) * 100 + d2(p + 2));
    int mo = (int)d2(p + 5), d = (int)d2(p + 8);
    unsigned h = d2(p + 11), mi = d2(p + 14), sec = d2(p + 17);
    if (y == 0 || !ymd_ok(y, mo, d) || h > 23 || mi > 59 || sec > 59) {
        return false;
    }
    int64_t days = (int64_t)wk__pg_date2j(y, mo, d) - POSTGRES_EPOCH_JDATE;
    *out = days * USECS_PER_DAY + (int64_t)((h * 60 + mi) * 60 + sec) * USECS_PER_SEC + frac;
    return true;
}

/* timestamp_in / timestamptz_in for the forms the server writes: the canonical shape first
 * (fixed positions, no offset), then the general ISO form: date, optional ' ' or 'T' time,
 * optional offset or 'Z', optional " BC", or an infinity word. With `tz` the offset is
 * applied (no offset means UTC, the session's TimeZone); without it the offset is ignored, as
 * timestamp_in ignores it. */
static wk_status ts_parse(const uint8_t *p, size_t n, bool tz, int64_t *out, wk_error *err)
{
    if (ts_canonical(p, n, out)) {
        return WK_OK;
    }
    int inf = n > 0 && p[0] >= '0' && p[0] <= '9' ? 0 : infinity_word(p, n);
    if (inf != 0) {
        *out = inf > 0 ? INT64_MAX : INT64_MIN;
        return WK_OK;
    }
    cur c = {p, n, 0};
    skip_spaces(&c);
    int64_t y, m, d, t = 0;
    int32_t east = 0;
    if (!parse_ymd(&c, &y, &m, &d)) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, c.i, "invalid input syntax for type timestamp");
    }
    if (at(&c, ' ') || at(&c, 'T')) {
        c.i++;
        if (!parse_hms(&c, &t, 2)) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, c.i,
                               "invalid input syntax for type timestamp");
        }
        if (at(&c, '+') || at(&c, '-')) {
            if (!parse_zone(&c, &east)) {
                return wk__pg_fail(err, WK_ERR_SYNTAX, c.i, "invalid time zone in timestamp");
            }
        } else if (at(&c, 'Z')) {
            c.i++;
        }
    }
    bool bc = parse_bc(&c);
    skip_spaces(&c);
    if (c.i != n || y == 0) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, c.i, "invalid input syntax for type timestamp");
    }
    if (bc) {
        y = 1 - y;
    }
    if (!ymd_ok(y, m, d) || t > USECS_PER_DAY || y > 294277 || y < -4713) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "timestamp field value out of range");
    }
    int64_t days = (int64_t)wk__pg_date2j((int)y, (int)m, (int)d) - POSTGRES_EPOCH_JDATE;
    int64_t ts;
    /* Year 294277 passes the field check but overflows int64 microseconds: check the sums. */
    bool overflow = __builtin_mul_overflow(days, (int64_t)USECS_PER_DAY, &ts) ||
                    __builtin_add_overflow(ts, (int64_t)t, &ts);
    if (tz && !overflow) {
        /* a timestamp (no tz) ignores the offset */
        overflow = __builtin_sub_overflow(ts, (int64_t)east * USECS_PER_SEC, &ts);
    }
    if (overflow || !ts_valid(ts)) {
        return wk__pg_fail(err, WK_ERR_RANGE, 0, "timestamp out of range");
    }
    *out = ts;
    return WK_OK;
}

/* timestamp_in. */
static wk_status ts_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                              wk_error *err)
{
    (void)a;
    return ts_parse(p, n, false, &v->i, err);
}

/* timestamptz_in. */
static wk_status tstz_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                                wk_error *err)
{
    (void)a;
    return ts_parse(p, n, true, &v->i, err);
}

/* timestamp_out / timestamptz_out under DateStyle=ISO and TimeZone=UTC: date, time, "+00" for
 * timestamptz, " BC" for years <= 0, infinities spelled out. */
static wk_status ts_format(int64_t ts, bool tz, wk_buf *out)
{
    if (ts == INT64_MAX) {
        return wk_buf_append(out, "infinity", 8);
    }
    if (ts == INT64_MIN) {
        return wk_buf_append(out, "-infinity", 9);
    }
    int64_t date = ts / USECS_PER_DAY;
    int64_t time = ts - date * USECS_PER_DAY;
    if (time < 0) {
        time += USECS_PER_DAY;
        date -= 1;
    }
    char t[64];
    bool bc;
    size_t n = fmt_date(t, (int32_t)(date + POSTGRES_EPOCH_JDATE), &bc);
    t[n++] = ' ';
    n += fmt_time(t + n, time);
    if (tz) {
        memcpy(t + n, "+00", 3);
        n += 3;
    }
    if (bc) {
        memcpy(t + n, " BC", 3);
        n += 3;
    }
    return wk_buf_append(out, t, n);
}

/* timestamp_out. */
static wk_status ts_write_text(const wk__pg_native *v, wk_buf *out)
{
    return ts_format(v->i, false, out);
}

/* timestamptz_out. */
static wk_status tstz_write_text(const wk__pg_native *v, wk_buf *out)
{
    return ts_format(v->i, true, out);
}

const wk__pg_type wk__pg_type_timestamp = {WK__PG_CLASS_STRING, ts_read_bin, ts_read_text,
                                           time_write_bin, ts_write_text, 0, 0};
const wk__pg_type wk__pg_type_timestamptz = {WK__PG_CLASS_STRING, ts_read_bin, tstz_read_text,
                                             time_write_bin, tstz_write_text, 0, 0};

/* ---- interval ---- */

/* interval_recv: int64 microseconds, int32 days, int32 months (no range to check: every bit
 * pattern is an interval). */
static wk_status iv_read_bin(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                             wk_error *err)
{
    (void)a;
    if (n != 16) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "binary interval must be 16 bytes");
    }
    v->iv.usec = (int64_t)wk__pg_be64(p);
    v->iv.days = (int32_t)wk__pg_be32(p + 8);
    v->iv.months = (int32_t)wk__pg_be32(p + 12);
    return WK_OK;
}

/* interval_send. */
static wk_status iv_write_bin(const wk__pg_native *v, wk_buf *out)
{
    uint8_t b[16];
    wk__pg_put64(b, (uint64_t)v->iv.usec);
    wk__pg_put32(b + 8, (uint32_t)v->iv.days);
    wk__pg_put32(b + 12, (uint32_t)v->iv.months);
    return wk_buf_append(out, b, 16);
}

/* AddPostgresIntPart */
static size_t iv_part(char *o, int64_t value, const char *unit, bool *is_zero, bool *is_before)
{
    if (value == 0) {
        return 0;
    }
    size_t n = 0;
    if (!*is_zero) {
        o[n++] = ' ';
    }
    if (*is_before && value > 0) {
        o[n++] = '+';
    }
    if (value < 0) {
        o[n++] = '-';
    }
    n += wk__pg_fmt_uint_pad(o + n, value < 0 ? 0 - (uint64_t)value : (uint64_t)value, 1);
    o[n++] = ' ';
    size_t ul = strlen(unit);
    memcpy(o + n, unit, ul);
    n += ul;
    if (value != 1) {
        o[n++] = 's';
    }
    *is_before = value < 0;
    *is_zero = false;
    return n;
}

/* interval_out under IntervalStyle=postgres: "N years N mons N days" parts, then
 * [-]HH:MM:SS[.f], or "00:00:00" for the zero interval. */
static wk_status iv_write_text(const wk__pg_native *v, wk_buf *out)
{
    char t[160];
    size_t n = 0;
    bool is_zero = true, is_before = false;
    int64_t year = v->iv.months / 12, mon = v->iv.months % 12;
    int64_t time = v->iv.usec;
    int64_t hour = time / USECS_PER_HOUR;
    time -= hour * USECS_PER_HOUR;
    int64_t min = time / USECS_PER_MINUTE;
    time -= min * USECS_PER_MINUTE;
    int64_t sec = time / USECS_PER_SEC;
    int64_t fsec = time - sec * USECS_PER_SEC;
    n += iv_part(t + n, year, "year", &is_zero, &is_before);
    n += iv_part(t + n, mon, "mon", &is_zero, &is_before);
    n += iv_part(t + n, v->iv.days, "day", &is_zero, &is_before);
    if (is_zero || hour != 0 || min != 0 || sec != 0 || fsec != 0) {
        bool minus = hour < 0 || min < 0 || sec < 0 || fsec < 0;
        if (!is_zero) {
            t[n++] = ' ';
        }
        if (minus) {
            t[n++] = '-';
        } else if (is_before) {
            t[n++] = '+';
        }
        n += wk__pg_fmt_uint_pad(t + n, hour < 0 ? 0 - (uint64_t)hour : (uint64_t)hour, 2);
        t[n++] = ':';
        n += wk__pg_fmt_uint_pad(t + n, (uint64_t)(min < 0 ? -min : min), 2);
        t[n++] = ':';
        n += fmt_seconds(t + n, sec, fsec);
    }
    return wk_buf_append(out, t, n);
}

/* interval_in for the IntervalStyle=postgres output form (what the server sends): signed
 * "N unit" parts (years, mons, days, and their singulars) and an optional time part. */
static wk_status iv_read_text(const uint8_t *p, size_t n, wk__pg_native *v, wk_arena *a,
                              wk_error *err)
{
    (void)a;
    /* The IntervalStyle=postgres output form: "[+-]N unit" parts then "[+-]H:MM:SS[.f]". */
    cur c = {p, n, 0};
    int64_t months = 0, days = 0, usec = 0;
    bool any = false, have_time = false;
    for (;;) {
        skip_spaces(&c);
        if (c.i == n) {
            break;
        }
        size_t tok = c.i;
        int sign = 1;
        if (at(&c, '-') || at(&c, '+')) {
            sign = c.p[c.i] == '-' ? -1 : 1;
            c.i++;
        }
        size_t save = c.i;
        uint64_t t;
        if (!have_time && parse_hms_mag(&c, &t, 12)) {
            int64_t signed_t;
            if (t > (uint64_t)INT64_MAX + (sign < 0 ? 1u : 0u)) {
                return wk__pg_fail(err, WK_ERR_RANGE, tok, "interval out of range");
            }
            signed_t = sign < 0 ? (int64_t)(0 - t) : (int64_t)t;
            if (__builtin_add_overflow(usec, signed_t, &usec)) {
                return wk__pg_fail(err, WK_ERR_RANGE, tok, "interval out of range");
            }
            have_time = true;
            any = true;
            continue;
        }
        c.i = save;
        int64_t val;
        if (!num(&c, 1, 12, &val)) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, tok, "invalid input syntax for type interval");
        }
        val *= sign;
        skip_spaces(&c);
        int64_t *field;
        int64_t mul;
        if (word_at(&c, "years") || word_at(&c, "year")) {
            field = &months;
            mul = 12;
        } else if (word_at(&c, "mons") || word_at(&c, "mon")) {
            field = &months;
            mul = 1;
        } else if (word_at(&c, "days") || word_at(&c, "day")) {
            field = &days;
            mul = 1;
        } else if (word_at(&c, "hours") || word_at(&c, "hour")) {
            field = &usec;
            mul = USECS_PER_HOUR;
        } else if (word_at(&c, "mins") || word_at(&c, "min")) {
            field = &usec;
            mul = USECS_PER_MINUTE;
        } else if (word_at(&c, "secs") || word_at(&c, "sec")) {
            field = &usec;
            mul = USECS_PER_SEC;
        } else {
            return wk__pg_fail(err, WK_ERR_SYNTAX, c.i, "unknown unit in interval");
        }
        int64_t prod;
        if (__builtin_mul_overflow(val, mul, &prod) ||
            __builtin_add_overflow(*field, prod, field)) {
            return wk__pg_fail(err, WK_ERR_RANGE, tok, "interval out of range");
        }
        any = true;
    }
    if (!any || months > INT32_MAX || months < INT32_MIN || days > INT32_MAX ||
        days < INT32_MIN) {
        return wk__pg_fail(err, any ? WK_ERR_RANGE : WK_ERR_SYNTAX, 0,
                           any ? "interval out of range" : "empty interval");
    }
    v->iv.months = (int32_t)months;
    v->iv.days = (int32_t)days;
    v->iv.usec = usec;
    return WK_OK;
}

const wk__pg_type wk__pg_type_interval = {WK__PG_CLASS_STRING, iv_read_bin, iv_read_text,
                                          iv_write_bin, iv_write_text, 0, 0};
