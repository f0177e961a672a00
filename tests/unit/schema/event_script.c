/* Recording sink and scripted source for event-level tests (see event_script.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event_script.h"

static void put(ev_recorder *r, const char *s, size_t n)
{
    if (r->len + n + 2 >= sizeof r->text) {
        return;
    }
    if (r->len > 0) {
        r->text[r->len++] = ' ';
    }
    memcpy(r->text + r->len, s, n);
    r->len += n;
    r->text[r->len] = '\0';
}

static wk_status rec_event(void *self, const wk_event *ev)
{
    ev_recorder *r = self;
    char tmp[512];
    int n = 0;
    if (r->latched != WK_OK) {
        return r->latched;
    }
    r->events++;
    if (r->fail_after != 0 && r->events >= r->fail_after) {
        r->latched = WK_ERR_LIMIT;
        return r->latched;
    }
    switch (ev->type) {
    case WK_EV_NIL: n = snprintf(tmp, sizeof tmp, "nil"); break;
    case WK_EV_BOOL: n = snprintf(tmp, sizeof tmp, "%s", ev->v.b ? "true" : "false"); break;
    case WK_EV_INT: n = snprintf(tmp, sizeof tmp, "i%lld", (long long)ev->v.i); break;
    case WK_EV_UINT: n = snprintf(tmp, sizeof tmp, "u%llu", (unsigned long long)ev->v.u); break;
    case WK_EV_FLOAT: n = snprintf(tmp, sizeof tmp, "%c%.17g", ev->f32 ? 's' : 'd', ev->v.f); break;
    case WK_EV_STR: {
        n = 0;
        tmp[n++] = '"';
        for (size_t i = 0; i < ev->v.str.len && n < 500; i++) {
            if (ev->v.str.ptr[i] == '\0') {
                tmp[n++] = '\\';
                tmp[n++] = '0';
            } else {
                tmp[n++] = ev->v.str.ptr[i];
            }
        }
        tmp[n++] = '"';
        break;
    }
    case WK_EV_BIN:
        n = snprintf(tmp, sizeof tmp, "b:");
        for (size_t i = 0; i < ev->v.str.len && n < 500; i++) {
            n += snprintf(tmp + n, sizeof tmp - (size_t)n, "%02x", (uint8_t)ev->v.str.ptr[i]);
        }
        break;
    case WK_EV_ARRAY:
    case WK_EV_MAP:
        if (ev->v.count == WK_COUNT_UNKNOWN) {
            n = snprintf(tmp, sizeof tmp, "%c?", ev->type == WK_EV_MAP ? '{' : '[');
        } else {
            n = snprintf(tmp, sizeof tmp, "%c%u", ev->type == WK_EV_MAP ? '{' : '[',
                         ev->v.count);
        }
        break;
    case WK_EV_END: n = snprintf(tmp, sizeof tmp, "}"); break;
    case WK_EV_TIMESTAMP:
        n = snprintf(tmp, sizeof tmp, "ts:%lld:%u", (long long)ev->v.ts.sec, ev->v.ts.nsec);
        break;
    case WK_EV_EXT: n = snprintf(tmp, sizeof tmp, "ext:%d:%u", ev->v.ext.type, ev->v.ext.len); break;
    case WK_EV_RAWNUM: n = snprintf(tmp, sizeof tmp, "raw:%.*s", (int)ev->v.str.len, ev->v.str.ptr); break;
    }
    put(r, tmp, (size_t)n);
    return WK_OK;
}

static wk_status rec_error(const void *self, wk_error *err)
{
    const ev_recorder *r = self;
    return wk_error_set(err, r->latched, r->events, "recorder failure");
}

void ev_recorder_init(ev_recorder *r)
{
    memset(r, 0, sizeof *r);
    r->sink.event = rec_event;
    r->sink.error = rec_error;
    r->sink.self = r;
}

static wk_status scr_next(void *self, wk_event *ev)
{
    ev_script *s = self;
    if (s->pos == s->n) {
        return WK_ERR_EOF;
    }
    *ev = s->ev[s->pos++];
    return WK_OK;
}

static size_t scr_offset(const void *self)
{
    const ev_script *s = self;
    return s->pos;
}

static wk_status scr_error(const void *self, wk_error *err)
{
    const ev_script *s = self;
    return wk_error_set(err, WK_ERR_EOF, s->pos, "script ended");
}

int ev_script_init(ev_script *s, const char *text)
{
    memset(s, 0, sizeof *s);
    s->source.next = scr_next;
    s->source.offset = scr_offset;
    s->source.error = scr_error;
    s->source.self = s;
    size_t sp = 0;
    const char *p = text;
    while (*p != '\0') {
        while (*p == ' ') {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        if (s->n == 512) {
            return -1;
        }
        wk_event *ev = &s->ev[s->n++];
        memset(ev, 0, sizeof *ev);
        char *end = NULL;
        if (*p == '{' || *p == '[') {
            ev->type = *p == '{' ? WK_EV_MAP : WK_EV_ARRAY;
            if (p[1] == '?') {
                ev->v.count = WK_COUNT_UNKNOWN;
                end = (char *)p + 2;
            } else {
                ev->v.count = (uint32_t)strtoul(p + 1, &end, 10);
            }
        } else if (*p == '}' || *p == ']') {
            ev->type = WK_EV_END;
            end = (char *)p + 1;
        } else if (strncmp(p, "nil", 3) == 0) {
            ev->type = WK_EV_NIL;
            end = (char *)p + 3;
        } else if (strncmp(p, "true", 4) == 0) {
            ev->type = WK_EV_BOOL;
            ev->v.b = true;
            end = (char *)p + 4;
        } else if (strncmp(p, "false", 5) == 0) {
            ev->type = WK_EV_BOOL;
            end = (char *)p + 5;
        } else if (*p == 'u') {
            ev->type = WK_EV_UINT;
            ev->v.u = strtoull(p + 1, &end, 10);
        } else if (*p == 'i') {
            ev->type = WK_EV_INT;
            ev->v.i = strtoll(p + 1, &end, 10);
        } else if (*p == 'd' || *p == 's') {
            ev->type = WK_EV_FLOAT;
            ev->f32 = *p == 's';
            ev->v.f = strtod(p + 1, &end);
        } else if (strncmp(p, "ts:", 3) == 0) {
            ev->type = WK_EV_TIMESTAMP;
            ev->v.ts.sec = strtoll(p + 3, &end, 10);
            ev->v.ts.nsec = (uint32_t)strtoul(end + 1, &end, 10);
        } else if (strncmp(p, "b:", 2) == 0) {
            ev->type = WK_EV_BIN;
            const char *q = p + 2;
            size_t start = sp;
            while ((*q >= '0' && *q <= '9') || (*q >= 'a' && *q <= 'f')) {
                char hx[3] = {q[0], q[1], 0};
                s->strings[sp++] = (char)strtoul(hx, NULL, 16);
                q += 2;
            }
            ev->v.str.ptr = s->strings + start;
            ev->v.str.len = sp - start;
            end = (char *)q;
        } else if (*p == '"') {
            ev->type = WK_EV_STR;
            const char *q = p + 1;
            size_t start = sp;
            while (*q != '"' && *q != '\0') {
                if (q[0] == '\\' && q[1] == '0') {
                    s->strings[sp++] = '\0';
                    q += 2;
                } else {
                    s->strings[sp++] = *q++;
                }
                if (sp >= sizeof s->strings) {
                    return -1;
                }
            }
            if (*q != '"') {
                return -1;
            }
            ev->v.str.ptr = s->strings + start;
            ev->v.str.len = sp - start;
            end = (char *)q + 1;
        } else {
            return -1;
        }
        if (end == NULL || (*end != ' ' && *end != '\0')) {
            return -1;
        }
        p = end;
    }
    return 0;
}
