/* Minimal JSON reader for the mimesniff vectors (see mini_json.h). */
#include "mini_json.h"

#include <stdlib.h>
#include <string.h>

typedef struct rd {
    const char *s;
    size_t len, pos;
} rd;

static void skip_ws(rd *r)
{
    while (r->pos < r->len && strchr(" \t\r\n", r->s[r->pos]) != NULL) {
        r->pos++;
    }
}

static int hex4(rd *r, uint32_t *v)
{
    if (r->len - r->pos < 4) {
        return -1;
    }
    *v = 0;
    for (int i = 0; i < 4; i++) {
        char c = r->s[r->pos++];
        uint32_t d = c >= '0' && c <= '9'   ? (uint32_t)(c - '0')
                     : c >= 'a' && c <= 'f' ? (uint32_t)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (uint32_t)(c - 'A' + 10)
                                            : 99;
        if (d == 99) {
            return -1;
        }
        *v = *v * 16 + d;
    }
    return 0;
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Reads a string at r->pos (on the opening quote) into a malloc'd UTF-8 buffer. */
static char *read_string(rd *r, size_t *out_len)
{
    if (r->pos >= r->len || r->s[r->pos] != '"') {
        return NULL;
    }
    r->pos++;
    char *o = malloc((r->len - r->pos) * 2 + 8);
    size_t n = 0;
    while (o != NULL && r->pos < r->len) {
        char c = r->s[r->pos++];
        if (c == '"') {
            o[n] = '\0';
            *out_len = n;
            return o;
        }
        if (c != '\\') {
            o[n++] = c;
            continue;
        }
        if (r->pos >= r->len) {
            break;
        }
        c = r->s[r->pos++];
        const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t";
        const char *k = strchr(from, c);
        if (c != 'u' && k != NULL && c != '\0') {
            o[n++] = to[k - from];
            continue;
        }
        uint32_t cp, lo;
        if (c != 'u' || hex4(r, &cp) != 0) {
            break;
        }
        if (cp >= 0xD800 && cp <= 0xDBFF && r->len - r->pos >= 6 && r->s[r->pos] == '\\' &&
            r->s[r->pos + 1] == 'u') {
            r->pos += 2;
            if (hex4(r, &lo) != 0) {
                break;
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        n += put_utf8(o + n, cp);
    }
    free(o);
    return NULL;
}

static bool lit(rd *r, const char *w)
{
    size_t n = strlen(w);
    if (r->len - r->pos >= n && memcmp(r->s + r->pos, w, n) == 0) {
        r->pos += n;
        return true;
    }
    return false;
}

long mj_read_vectors(const char *text, size_t len, mj_vector **out)
{
    rd r = {text, len, 0};
    size_t cap = 64, n = 0;
    mj_vector *v = calloc(cap, sizeof *v);
    skip_ws(&r);
    if (v == NULL || !lit(&r, "[")) {
        free(v);
        return -1;
    }
    for (;;) {
        skip_ws(&r);
        if (lit(&r, "]")) {
            break;
        }
        if (r.pos < r.len && r.s[r.pos] == '"') {
            size_t l;
            free(read_string(&r, &l)); /* a section comment */
        } else if (lit(&r, "{")) {
            if (n == cap) {
                cap *= 2;
                mj_vector *nv = realloc(v, cap * sizeof *v);
                if (nv == NULL) {
                    goto bad;
                }
                v = nv;
            }
            mj_vector *cur = &v[n++];
            memset(cur, 0, sizeof *cur);
            bool has_input = false;
            for (;;) {
                skip_ws(&r);
                if (lit(&r, "}")) {
                    break;
                }
                size_t kl;
                char *key = read_string(&r, &kl);
                skip_ws(&r);
                if (key == NULL || !lit(&r, ":")) {
                    free(key);
                    goto bad;
                }
                skip_ws(&r);
                char *val = NULL;
                size_t vl = 0;
                if (lit(&r, "null") || lit(&r, "true") || lit(&r, "false")) {
                    val = NULL;
                } else if ((val = read_string(&r, &vl)) == NULL) {
                    free(key);
                    goto bad;
                }
                if (strcmp(key, "input") == 0) {
                    cur->input = val;
                    cur->input_len = vl;
                    has_input = val != NULL;
                } else if (strcmp(key, "output") == 0) {
                    cur->output = val;
                    cur->output_len = vl;
                } else {
                    free(val);
                }
                free(key);
                skip_ws(&r);
                lit(&r, ",");
            }
            if (!has_input) {
                goto bad;
            }
        } else {
            goto bad;
        }
        skip_ws(&r);
        lit(&r, ",");
    }
    *out = v;
    return (long)n;
bad:
    mj_free(v, (long)n);
    return -1;
}

void mj_free(mj_vector *v, long n)
{
    for (long i = 0; i < n; i++) {
        free(v[i].input);
        free(v[i].output);
    }
    free(v);
}

bool mj_utf8_to_latin1(const char *s, size_t len, char *out, size_t *out_len)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        uint8_t c = (uint8_t)s[i];
        if (c < 0x80) {
            out[n++] = (char)c;
        } else if ((c == 0xC2 || c == 0xC3) && i + 1 < len) {
            out[n++] = (char)(((c & 0x1F) << 6) | ((uint8_t)s[++i] & 0x3F));
        } else {
            return false;
        }
    }
    *out_len = n;
    return true;
}
