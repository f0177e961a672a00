/* A minimal JSON reader for the conformance suite's data file (see suite_json.h). */
#include "suite_json.h"

#include <string.h>

#include "wirekit/utf8.h"

typedef struct parser {
    const char *p, *end, *start;
    wk_arena *arena;
    bool failed;
} parser;

static void skip_ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' ||
                               *ps->p == '\t')) {
        ps->p++;
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

static bool parse_u4(parser *ps, uint32_t *cp)
{
    if (ps->end - ps->p < 4) {
        return false;
    }
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(ps->p[i]);
        if (h < 0) {
            return false;
        }
        v = v * 16 + (uint32_t)h;
    }
    ps->p += 4;
    *cp = v;
    return true;
}

static bool parse_string(parser *ps, wk_value *out)
{
    ps->p++; /* opening quote */
    size_t cap = (size_t)(ps->end - ps->p);
    char *buf = wk_arena_alloc(ps->arena, cap + 1, 1);
    size_t n = 0;
    while (ps->p < ps->end && *ps->p != '"') {
        char c = *ps->p++;
        if (c != '\\') {
            buf[n++] = c;
            continue;
        }
        if (ps->p == ps->end) {
            return false;
        }
        char e = *ps->p++;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u': {
            uint32_t cp;
            if (!parse_u4(ps, &cp)) {
                return false;
            }
            if (cp >= 0xd800 && cp <= 0xdbff) {
                uint32_t lo;
                if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
                    return false;
                }
                ps->p += 2;
                if (!parse_u4(ps, &lo) || lo < 0xdc00 || lo > 0xdfff) {
                    return false;
                }
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            uint8_t u8[4];
            size_t k = wk_utf8_encode(cp, u8);
            if (k == 0) {
                return false;
            }
            memcpy(buf + n, u8, k);
            n += k;
            break;
        }
        default: return false;
        }
    }
    if (ps->p == ps->end) {
        return false;
    }
    ps->p++;
    buf[n] = '\0';
    return wk_value_set_str(out, buf, n) == WK_OK;
}

static bool parse_value(parser *ps, wk_value *out);

/* Parses a list of elements (array) or key/value members (object) into scratch, then moves
 * them into an arena array of the final size. */
static bool parse_container(parser *ps, wk_value *out, bool is_obj)
{
    char close = is_obj ? '}' : ']';
    ps->p++;
    size_t cap = 16, n = 0;
    wk_value *tmp = wk_arena_alloc(ps->arena, cap * sizeof(wk_value), 8);
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
    } else {
        for (;;) {
            if (n + 2 > cap) {
                wk_value *bigger = wk_arena_alloc(ps->arena, 2 * cap * sizeof(wk_value), 8);
                memcpy(bigger, tmp, n * sizeof(wk_value));
                tmp = bigger;
                cap *= 2;
            }
            skip_ws(ps);
            if (is_obj) {
                if (ps->p >= ps->end || *ps->p != '"' || !parse_string(ps, &tmp[n++])) {
                    return false;
                }
                skip_ws(ps);
                if (ps->p >= ps->end || *ps->p != ':') {
                    return false;
                }
                ps->p++;
            }
            if (!parse_value(ps, &tmp[n++])) {
                return false;
            }
            skip_ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                break;
            }
            return false;
        }
    }
    size_t count = is_obj ? n / 2 : n;
    if ((is_obj ? wk_value_set_map(out, ps->arena, count)
                : wk_value_set_array(out, ps->arena, count)) != WK_OK) {
        return false;
    }
    if (n != 0) {
        memcpy(out->u.items, tmp, n * sizeof(wk_value));
    }
    return true;
}

static bool parse_value(parser *ps, wk_value *out)
{
    skip_ws(ps);
    if (ps->p >= ps->end) {
        return false;
    }
    char c = *ps->p;
    if (c == '{' || c == '[') {
        return parse_container(ps, out, c == '{');
    }
    if (c == '"') {
        return parse_string(ps, out);
    }
    if ((size_t)(ps->end - ps->p) >= 4 && memcmp(ps->p, "true", 4) == 0) {
        ps->p += 4;
        wk_value_set_bool(out, true);
        return true;
    }
    if ((size_t)(ps->end - ps->p) >= 5 && memcmp(ps->p, "false", 5) == 0) {
        ps->p += 5;
        wk_value_set_bool(out, false);
        return true;
    }
    if ((size_t)(ps->end - ps->p) >= 4 && memcmp(ps->p, "null", 4) == 0) {
        ps->p += 4;
        wk_value_set_nil(out);
        return true;
    }
    const char *s = ps->p;
    while (ps->p < ps->end && strchr("+-0123456789.eE", *ps->p) != NULL && *ps->p != '\0') {
        ps->p++;
    }
    if (ps->p == s) {
        return false;
    }
    wk_value_set_nil(out);
    out->type = WK_VAL_RAWNUM;
    out->u.str = s;
    out->len = (uint32_t)(ps->p - s);
    return true;
}

wk_value *suite_json_parse(const char *text, size_t len, wk_arena *arena, size_t *err_at)
{
    parser ps = {text, text + len, text, arena, false};
    wk_value *root = wk_arena_alloc(arena, sizeof(wk_value), 8);
    if (!parse_value(&ps, root)) {
        *err_at = (size_t)(ps.p - ps.start);
        return NULL;
    }
    skip_ws(&ps);
    if (ps.p != ps.end) {
        *err_at = (size_t)(ps.p - ps.start);
        return NULL;
    }
    return root;
}
