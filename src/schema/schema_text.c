/*
 * Text forms of two field kinds, for formats without native bytes or timestamps (JSON):
 * bytes as standard base64, timestamps as RFC 3339 date-times. Decoding only: writers decide
 * how they print WK_EV_BIN and WK_EV_TIMESTAMP; the schema decoder accepts the text forms back.
 * Both parsers are strict (no whitespace, fixed field widths) and never read past `len`.
 * Flow: a string field's text (JSON input) -> these parsers -> the struct's bytes or
 * timestamp member, for the schema decoders (schema_decode_util.c, the fused JSON path).
 */
#include "schema/schema_decode_interface.h"

/* The value of a standard base64 digit (A-Z a-z 0-9 + /), -1 for any other byte. */
static int b64_digit(uint8_t c)
{
    if (c >= 'A' && c <= 'Z') {
        return c - 'A';
    }
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 26;
    }
    if (c >= '0' && c <= '9') {
        return c - '0' + 52;
    }
    if (c == '+') {
        return 62;
    }
    if (c == '/') {
        return 63;
    }
    return -1;
}

/* Decodes the standard base64 text s[0..len) (trailing '=' padding optional) into the arena
 * as *out. False on a byte outside the alphabet, a length no encoding has, or when the arena
 * refuses. */
bool wk__schema_base64_decode(wk_arena *a, const char *s, size_t len, wk_slice *out)
{
    while (len > 0 && s[len - 1] == '=' ) {
        len--;
    }
    if (len % 4 == 1) {
        return false;
    }
    /* every 4 digits are 3 bytes; a last group of 2 or 3 digits is 1 or 2 bytes */
    size_t n = len / 4 * 3 + (len % 4 == 0 ? 0 : len % 4 - 1);
    uint8_t *p = wk_arena_alloc(a, n, 1);
    if (p == NULL) {
        return false;
    }
    size_t o = 0;
    uint32_t acc = 0;
    int bits = 0;
    /* six bits per digit into an accumulator, a byte out whenever eight are there */
    for (size_t i = 0; i < len; i++) {
        int v = b64_digit((uint8_t)s[i]);
        if (v < 0) {
            return false;
        }
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            p[o++] = (uint8_t)(acc >> bits);
        }
    }
    out->ptr = (const char *)p;
    out->len = o;
    return o == n;
}

/* The n ASCII digits at s as a number (*out); false when one is not a digit. */
static bool digits(const char *s, size_t n, uint32_t *out)
{
    uint32_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        v = v * 10 + (uint32_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, uint32_t m, uint32_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (int64_t)(m > 2 ? m - 3 : m + 9) + 2) / 5 + (int64_t)d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Parses s[0..len), exactly an RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS, an optional
 * fraction of which nanoseconds are kept, then Z or +HH:MM/-HH:MM), into seconds since the
 * epoch in UTC. A leap second (:60) counts as :59. False at anything else. */
bool wk__schema_parse_rfc3339(const char *s, size_t len, wk_timestamp *out)
{
    /* YYYY-MM-DDTHH:MM:SS at fixed places, every field digits, in range (Feb 29 only in a
     * leap year) */
    uint32_t y, mo, d, h, mi, se;
    if (len < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
        s[13] != ':' || s[16] != ':') {
        return false;
    }
    if (!digits(s, 4, &y) || !digits(s + 5, 2, &mo) || !digits(s + 8, 2, &d) ||
        !digits(s + 11, 2, &h) || !digits(s + 14, 2, &mi) || !digits(s + 17, 2, &se)) {
        return false;
    }
    static const uint8_t mdays[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
        h > 23 || mi > 59 || se > 60) {
        return false;
    }
    /* an optional fraction: at least one digit; digits past the ninth are read and dropped */
    size_t i = 19;
    uint32_t nsec = 0;
    if (i < len && s[i] == '.') {
        i++;
        size_t start = i;
        uint32_t scale = 100000000;
        while (i < len && s[i] >= '0' && s[i] <= '9') {
            nsec += (uint32_t)(s[i] - '0') * scale;
            scale /= 10;
            i++;
        }
        if (i == start) {
            return false;
        }
    }
    /* the zone: Z, or an offset from UTC that is subtracted to give UTC */
    int64_t offset = 0;
    if (i < len && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i + 6 == len && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
        uint32_t oh, om;
        if (!digits(s + i + 1, 2, &oh) || !digits(s + i + 4, 2, &om) || oh > 23 || om > 59) {
            return false;
        }
        offset = (int64_t)(oh * 3600 + om * 60) * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return false;
    }
    if (i != len) {
        return false;
    }
    int64_t days = days_from_civil((int64_t)y, mo, d);
    out->sec = days * 86400 + (int64_t)(h * 3600 + mi * 60 + (se == 60 ? 59 : se)) - offset;
    out->nsec = nsec;
    return true;
}
