/*
 * The Redis store's wire layer: RESP2 commands written and replies read on a non-blocking
 * socket against one deadline per command (total time, however the server dribbles bytes),
 * with caps on a reply's size and element count checked from the headers, before anything is
 * allocated. Bytes move through the transport (redis_transport.c); hiredis's own reader is not
 * used, because it has neither a total deadline nor a size cap (`*999999999` made it allocate
 * the array, a `$400000000` header made it buffer the value). In the flow of a cache miss
 * (store get -> topology -> pool -> transport -> RESP) this is the last step, and the only one
 * that reads the bytes of a reply; every layer above reads the nodes it leaves. It also names
 * the causes of error replies (wk__redis_refusal) and tells what a GET's reply says
 * (wk__redis_get_reply), for every layer above.
 *
 * A reply is parsed into a flat preorder list of nodes that point into the read buffer, with
 * an explicit stack for nested arrays (no recursion). Parsing restarts from the reply's first
 * byte when more bytes arrive, but only once the buffer holds what the last attempt said it
 * needs at least (a bulk string's whole body), so a large value is not re-scanned per read.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redis/redis_internal.h"

#define LINE_MAX_BYTES 65536u /* a status, error or header line */
#define MAX_NESTING 8u        /* arrays inside arrays (pub/sub and SCAN need 2) */

void wk__rconn_free(wk__rconn *c)
{
    if (c == NULL) {
        return;
    }
    wk__rt_close(c);
    wk_free(c->alloc, c->in, c->in_cap);
    wk_free(c->alloc, c->nodes, c->nodes_cap * sizeof *c->nodes);
    wk_free(c->alloc, c->out, c->out_cap);
    wk_free(c->alloc, c, sizeof *c);
}

/* Polls p[0..n) until one is ready or `deadline`; WK_ERR_IO on timeout or error. */
static wk_status poll_until(struct pollfd *p, size_t n, int64_t deadline, wk_error *err)
{
    for (;;) {
        int64_t left = deadline - wk__redis_now_ms();
        if (left <= 0) {
            return wk_error_set(err, WK_ERR_IO, 0, "redis: command timed out (deadline passed)");
        }
        int r = poll(p, (nfds_t)n, (int)(left > 60000 ? 60000 : left));
        if (r > 0) {
            return WK_OK;
        }
        if (r < 0 && errno != EINTR) {
            return wk_error_set(err, WK_ERR_IO, 0, "redis: poll failed");
        }
    }
}

/* Waits for `events` on the socket until `deadline`. */
static wk_status wait_fd(wk__rconn *c, short events, int64_t deadline, wk_error *err)
{
    struct pollfd p = {c->fd, events, 0};
    return poll_until(&p, 1, deadline, err);
}

/* Makes room for `n` more bytes of pending output. */
static wk_status out_room(wk__rconn *c, size_t n, wk_error *err)
{
    if (n > c->out_cap - c->out_len) {
        size_t cap = c->out_cap < 256 ? 256 : c->out_cap;
        while (cap - c->out_len < n) {
            if (cap > SIZE_MAX / 2) {
                return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: command too large");
            }
            cap *= 2;
        }
        uint8_t *o = wk_realloc(c->alloc, c->out, c->out_cap, cap);
        if (o == NULL) {
            return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        }
        c->out = o;
        c->out_cap = cap;
    }
    return WK_OK;
}

/* Writes `<mark><v>\r\n` at p (at most 23 bytes); returns the end. A RESP header. */
static uint8_t *put_header(uint8_t *p, char mark, size_t v)
{
    if (v < 100) { /* argument counts and most key lengths: no loop */
        *p++ = (uint8_t)mark;
        if (v >= 10) {
            *p++ = (uint8_t)('0' + v / 10);
        }
        *p++ = (uint8_t)('0' + v % 10);
        *p++ = '\r';
        *p++ = '\n';
        return p;
    }
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    *p++ = (uint8_t)mark;
    while (n > 0) {
        *p++ = (uint8_t)digits[--n];
    }
    *p++ = '\r';
    *p++ = '\n';
    return p;
}

wk_status wk__rconn_append(wk__rconn *c, int argc, const char *const *argv, const size_t *lens,
                           wk_error *err)
{
    /* one reservation for the whole command, headers written by hand (no snprintf) */
    size_t total = 23;
    for (int i = 0; i < argc; i++) {
        if (lens[i] > SIZE_MAX / 2 - total) {
            return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: command too large");
        }
        total += 23 + lens[i] + 2;
    }
    wk_status st = out_room(c, total, err);
    if (st != WK_OK) {
        return st;
    }
    uint8_t *p = put_header(c->out + c->out_len, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        p = put_header(p, '$', lens[i]);
        if (lens[i] != 0) {
            memcpy(p, argv[i], lens[i]);
        }
        p += lens[i];
        *p++ = '\r';
        *p++ = '\n';
    }
    c->out_len = (size_t)(p - c->out);
    return WK_OK;
}

wk_status wk__rconn_append_get(wk__rconn *c, const char *key, size_t len, bool asking,
                               wk_error *err)
{
    static const char ask[] = "*1\r\n$6\r\nASKING\r\n";
    static const char get[] = "*2\r\n$3\r\nGET\r\n";
    if (len > SIZE_MAX / 2) {
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: command too large");
    }
    wk_status st = out_room(c, sizeof ask + sizeof get + 23 + len + 2, err);
    if (st != WK_OK) {
        return st;
    }
    uint8_t *p = c->out + c->out_len;
    if (asking) {
        memcpy(p, ask, sizeof ask - 1);
        p += sizeof ask - 1;
    }
    memcpy(p, get, sizeof get - 1);
    p = put_header(p + sizeof get - 1, '$', len);
    if (len != 0) {
        memcpy(p, key, len);
    }
    p += len;
    *p++ = '\r';
    *p++ = '\n';
    c->out_len = (size_t)(p - c->out);
    return WK_OK;
}

wk_status wk__rconn_append_cmds(wk__rconn *c, int ncmd, const int *argc, const char **argv,
                                const size_t *lens, bool asking, wk_error *err)
{
    static const char *const ask_argv[1] = {"ASKING"};
    static const size_t ask_lens[1] = {6};
    int at = 0;
    for (int i = 0; i < ncmd; i++) {
        if ((asking && wk__rconn_append(c, 1, ask_argv, ask_lens, err) != WK_OK) ||
            wk__rconn_append(c, argc[i], argv + at, lens + at, err) != WK_OK) {
            return WK_ERR_IO;
        }
        at += argc[i];
    }
    return WK_OK;
}

wk_status wk__rconn_flush(wk__rconn *c, int64_t deadline, wk_error *err)
{
    size_t at = 0;
    while (at < c->out_len) {
        ssize_t w = wk__rt_send(c, c->out + at, c->out_len - at);
        if (w > 0) {
            at += (size_t)w;
            continue;
        }
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            wk_status st = wait_fd(c, POLLOUT, deadline, err);
            if (st != WK_OK) {
                return st;
            }
            continue;
        }
        return wk_error_set(err, WK_ERR_IO, 0,
                            wk__rt_cause(c, "redis: connection lost while sending"));
    }
    c->out_len = 0;
    return WK_OK;
}

/* Reads the decimal integer of a header line `p[0..n)`; false when it is not one. */
static bool parse_int(const uint8_t *p, size_t n, int64_t *out)
{
    bool neg = n > 0 && p[0] == '-';
    size_t i = neg ? 1 : 0;
    if (i == n || n - i > 18) {
        return false;
    }
    int64_t v = 0;
    for (; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') {
            return false;
        }
        v = v * 10 + (p[i] - '0');
    }
    *out = neg ? -v : v;
    return true;
}

static wk_status add_node(wk__rconn *c, char type, int64_t n, size_t off, size_t max_elems,
                          wk_error *err)
{
    if (c->nnodes >= max_elems + 1) {
        return wk_error_set(err, WK_ERR_LIMIT, off, "redis: reply has more elements than the cap");
    }
    if (c->nnodes == c->nodes_cap) {
        size_t cap = c->nodes_cap < 8 ? 8 : c->nodes_cap * 2;
        wk__rnode *nn = wk_realloc(c->alloc, c->nodes, c->nodes_cap * sizeof *nn, cap * sizeof *nn);
        if (nn == NULL) {
            return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        }
        c->nodes = nn;
        c->nodes_cap = cap;
    }
    c->nodes[c->nnodes].type = type;
    c->nodes[c->nnodes].n = n;
    c->nodes[c->nnodes].off = off;
    c->nnodes++;
    return WK_OK;
}

/* The common reply, a bulk string of fewer than 10^9 bytes wholly buffered at `start`, read
 * without a line search: true with c->nodes and *used set; false for anything else (an
 * incomplete or malformed one included), which the general parser then reads and judges. */
static bool parse_bulk(wk__rconn *c, size_t start, const wk__rlimits *lim, size_t *used)
{
    const uint8_t *p = c->in + start;
    size_t avail = c->in_len - start;
    if (avail < 4 || p[0] != '$' || c->nodes_cap == 0) {
        return false;
    }
    size_t v = 0, i = 1;
    while (i < avail && i < 10 && p[i] >= '0' && p[i] <= '9') {
        v = v * 10 + (size_t)(p[i++] - '0');
    }
    if (i == 1 || avail - i < 2 || p[i] != '\r' || p[i + 1] != '\n') {
        return false;
    }
    size_t after = start + i + 2;
    if (v > lim->max_bytes || c->in_len - after < v + 2 || c->in[after + v] != '\r' ||
        c->in[after + v + 1] != '\n') {
        return false;
    }
    c->nodes[0].type = '$';
    c->nodes[0].n = (int64_t)v;
    c->nodes[0].off = after;
    c->nnodes = 1;
    *used = after + v + 2;
    return true;
}

/* Parses one reply at the start of the input. WK_OK with *done true and *used set when the
 * reply is complete; WK_OK with *done false and *need set when more bytes are needed. */
static wk_status parse(wk__rconn *c, size_t start, const wk__rlimits *lim, bool *done,
                       size_t *used, size_t *need, wk_error *err)
{
    if (parse_bulk(c, start, lim, used)) {
        *done = true;
        return WK_OK;
    }
    int64_t pending[MAX_NESTING];
    size_t depth = 0;
    size_t pos = start;
    c->nnodes = 0;
    *done = false;
    for (;;) {
        const uint8_t *nl = pos < c->in_len ? memchr(c->in + pos, '\n', c->in_len - pos) : NULL;
        if (nl == NULL) {
            if (c->in_len - pos > LINE_MAX_BYTES) {
                return wk_error_set(err, WK_ERR_LIMIT, pos - start, "redis: reply line too long");
            }
            *need = c->in_len + 1;
            return WK_OK;
        }
        size_t eol = (size_t)(nl - c->in);
        if (eol == pos || c->in[eol - 1] != '\r') {
            return wk_error_set(err, WK_ERR_SYNTAX, pos - start,
                                "redis: malformed reply (no CRLF)");
        }
        char type = (char)c->in[pos];
        const uint8_t *body = c->in + pos + 1;
        size_t blen = eol - 1 - (pos + 1);
        size_t after = eol + 1;
        int64_t v = 0;
        wk_status st;
        if (!c->resp3 && strchr("+-:$*", type) == NULL) {
            type = '?'; /* RESP3 only on a connection that asked for it */
        }
        switch (type) {
        case '_': /* RESP3 null: a nil bulk */
            if (blen != 0) {
                return wk_error_set(err, WK_ERR_SYNTAX, pos - start, "redis: malformed null");
            }
            st = add_node(c, '$', -1, after, lim->max_elems, err);
            pos = after;
            break;
        case '#': /* RESP3 boolean, double and big number: kept as their text, like a status */
        case ',':
        case '(':
        case '+':
        case '-':
            st = add_node(c, type, (int64_t)blen, pos + 1, lim->max_elems, err);
            pos = after;
            break;
        case ':':
            if (!parse_int(body, blen, &v)) {
                return wk_error_set(err, WK_ERR_SYNTAX, pos - start,
                                    "redis: malformed integer reply");
            }
            st = add_node(c, type, v, pos, lim->max_elems, err);
            pos = after;
            break;
        case '=': /* RESP3 verbatim string and blob error: a bulk */
        case '!':
        case '$':
            if (!parse_int(body, blen, &v) || v < -1) {
                return wk_error_set(err, WK_ERR_SYNTAX, pos - start,
                                    "redis: malformed bulk length");
            }
            if (v > 0 && (uint64_t)v > lim->max_bytes) {
                return wk_error_set(err, WK_ERR_LIMIT, pos - start,
                                    "redis: reply value larger than max_reply_bytes");
            }
            if (v >= 0 && c->in_len - after < (size_t)v + 2) {
                *need = after + (size_t)v + 2;
                return WK_OK;
            }
            if (v >= 0 &&
                (c->in[after + (size_t)v] != '\r' || c->in[after + (size_t)v + 1] != '\n')) {
                return wk_error_set(err, WK_ERR_SYNTAX, after - start,
                                    "redis: bulk string not followed by CRLF");
            }
            st = add_node(c, type == '!' ? '-' : '$', v, after, lim->max_elems, err);
            pos = v >= 0 ? after + (size_t)v + 2 : after;
            break;
        case '>': /* RESP3 push and set: arrays to the readers above */
        case '~':
        case '%': /* RESP3 map: an array of 2n nodes, key then value */
        case '*':
            if (!parse_int(body, blen, &v) || v < -1 || (type != '*' && v < 0)) {
                return wk_error_set(err, WK_ERR_SYNTAX, pos - start,
                                    "redis: malformed array length");
            }
            if (type == '%' && v > 0) {
                if ((uint64_t)v > lim->max_elems / 2) {
                    return wk_error_set(err, WK_ERR_LIMIT, pos - start,
                                        "redis: reply map longer than max_reply_elements");
                }
                v *= 2;
            }
            if (v > 0 && (uint64_t)v > lim->max_elems) {
                return wk_error_set(err, WK_ERR_LIMIT, pos - start,
                                    "redis: reply array longer than max_reply_elements");
            }
            st = add_node(c, type == '>' ? '>' : '*', v, pos, lim->max_elems, err);
            pos = after;
            if (st == WK_OK && v > 0) {
                if (depth == MAX_NESTING) {
                    return wk_error_set(err, WK_ERR_LIMIT, pos - start,
                                        "redis: reply nested too deep");
                }
                pending[depth++] = v + 1; /* decremented below for the array node itself */
            }
            break;
        default:
            return wk_error_set(err, WK_ERR_SYNTAX, pos - start,
                                "redis: unknown reply type byte");
        }
        if (st != WK_OK) {
            return st;
        }
        if (pos - start > lim->max_bytes + LINE_MAX_BYTES) {
            return wk_error_set(err, WK_ERR_LIMIT, pos - start,
                                "redis: reply larger than max_reply_bytes");
        }
        /* One element done: close every array it completes. */
        while (depth > 0 && --pending[depth - 1] == 0) {
            depth--;
        }
        if (depth == 0) {
            *done = true;
            *used = pos;
            return WK_OK;
        }
    }
}

/* Makes room in the input buffer for `need` bytes and a read chunk (16 KiB) past what it
 * holds, never beyond `ceiling`; WK_ERR_LIMIT when the buffer is full at the ceiling. */
static wk_status grow_in(wk__rconn *c, size_t need, size_t ceiling, wk_error *err)
{
    size_t want = need > c->in_len + 16384 ? need : c->in_len + 16384;
    if (want > ceiling) {
        want = ceiling;
    }
    if (want > c->in_cap) {
        size_t cap = c->in_cap < 16384 ? 16384 : c->in_cap;
        while (cap < want) {
            cap = cap > SIZE_MAX / 2 ? want : cap * 2;
        }
        if (cap > ceiling) {
            cap = ceiling;
        }
        uint8_t *in = wk_realloc(c->alloc, c->in, c->in_cap, cap);
        if (in == NULL) {
            return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory for a reply");
        }
        c->in = in;
        c->in_cap = cap;
    }
    if (c->in_cap == c->in_len) {
        return wk_error_set(err, WK_ERR_LIMIT, c->in_len,
                            "redis: reply larger than max_reply_bytes");
    }
    return WK_OK;
}

/* Where the next reply starts: after the last one, or at 0 when nothing is left (the
 * common case costs no copy; replies pipelined behind it are parsed where they are). */
static size_t next_start(wk__rconn *c)
{
    if (c->consumed == c->in_len) {
        c->in_len = c->consumed = 0;
    }
    return c->consumed;
}

/* Moves the unfinished reply at `*start` to the front before reading more, so that the
 * buffer's cap applies to the reply alone; `*need` follows it. */
static void compact(wk__rconn *c, size_t *start, size_t *need)
{
    if (*start > 0) {
        memmove(c->in, c->in + *start, c->in_len - *start);
        c->in_len -= *start;
        *need = *need > *start ? *need - *start : 0;
        *start = 0;
        c->consumed = 0;
    }
}

wk_status wk__rconn_next(wk__rconn *c, const wk__rlimits *lim, bool *may_recv, bool *got,
                         wk_error *err)
{
    *got = false;
    size_t start = next_start(c);
    size_t need = 0;
    for (;;) {
        if (c->in_len >= need && c->in_len > start) {
            bool done = false;
            size_t used = 0;
            wk_status st = parse(c, start, lim, &done, &used, &need, err);
            if (st != WK_OK) {
                return st;
            }
            if (done) {
                c->consumed = used;
                *got = true;
                return WK_OK;
            }
        }
        if (!*may_recv) {
            return WK_OK; /* nothing more for now, without a recv that would say EAGAIN */
        }
        compact(c, &start, &need);
        /* Room for at least `need` bytes plus a read chunk, never past the cap. */
        size_t ceiling = lim->max_bytes + 2 * LINE_MAX_BYTES;
        if (need > ceiling) {
            return wk_error_set(err, WK_ERR_LIMIT, c->in_len,
                                "redis: reply larger than max_reply_bytes");
        }
        wk_status st = grow_in(c, need, ceiling, err);
        if (st != WK_OK) {
            return st;
        }
        size_t room = c->in_cap - c->in_len;
        ssize_t r = wk__rt_recv(c, c->in + c->in_len, room);
        if (r > 0) {
            c->in_len += (size_t)r;
            /* a short read: the socket is empty (and, over TLS, the session holds no
             * record's rest, which poll() would not see) */
            *may_recv = (size_t)r == room || wk__rtls_pending(c);
            continue;
        }
        if (r == 0) {
            return wk_error_set(err, WK_ERR_IO, c->in_len,
                                wk__rt_cause(c, "redis: connection closed by the server"));
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            *may_recv = false;
            return WK_OK; /* nothing more for now */
        }
        return wk_error_set(err, WK_ERR_IO, c->in_len,
                            wk__rt_cause(c, "redis: connection reset"));
    }
}

wk_status wk__rconn_try_read(wk__rconn *c, const wk__rlimits *lim, bool *got, wk_error *err)
{
    bool may_recv = true;
    return wk__rconn_next(c, lim, &may_recv, got, err);
}

wk_status wk__rconn_read(wk__rconn *c, const wk__rlimits *lim, int64_t deadline, wk_error *err)
{
    for (;;) {
        bool got = false;
        wk_status st = wk__rconn_try_read(c, lim, &got, err);
        if (st != WK_OK || got) {
            return st;
        }
        st = wait_fd(c, POLLIN, deadline, err);
        if (st != WK_OK) {
            return st;
        }
    }
}

wk_status wk__rconn_wait_any(wk__rconn *const *cs, size_t n, bool *ready, int64_t deadline,
                             wk_error *err)
{
    struct pollfd p[WK__RCONN_WAIT_MAX];
    if (n > WK__RCONN_WAIT_MAX) {
        n = WK__RCONN_WAIT_MAX;
    }
    for (size_t i = 0; i < n; i++) {
        p[i].fd = cs[i]->fd;
        p[i].events = POLLIN;
        p[i].revents = 0;
    }
    wk_status st = poll_until(p, n, deadline, err);
    for (size_t i = 0; i < n; i++) {
        ready[i] = st == WK_OK && p[i].revents != 0; /* readable, hung up or failed */
    }
    return st;
}

const char *wk__rnode_str(const wk__rconn *c, const wk__rnode *n)
{
    return (const char *)c->in + n->off;
}

bool wk__rnode_is(const wk__rconn *c, const wk__rnode *n, const char *s)
{
    size_t l = strlen(s);
    return (n->type == '$' || n->type == '+') && n->n == (int64_t)l &&
           memcmp(c->in + n->off, s, l) == 0;
}

const char *wk__redis_refusal(const wk__rconn *c, const wk__rnode *r, const char *fallback)
{
    if (r->type != '-' || r->n <= 0) {
        return fallback;
    }
    const char *m = wk__rnode_str(c, r);
    size_t n = (size_t)r->n;
    if (n >= 6 && memcmp(m, "NOAUTH", 6) == 0) {
        return "redis: NOAUTH: the server requires a password "
               "(redis://[user]:password@host or the password option)";
    }
    if (n >= 9 && memcmp(m, "WRONGPASS", 9) == 0) {
        return "redis: WRONGPASS: authentication failed (wrong user name or password, or the "
               "user is disabled)";
    }
    if (n >= 6 && memcmp(m, "NOPERM", 6) == 0) {
        return "redis: NOPERM: the ACL user may not run this command or touch this key";
    }
    if (n >= 7 && memcmp(m, "LOADING", 7) == 0) {
        return "redis: LOADING: the server is loading its data set";
    }
    if (n >= 8 && memcmp(m, "READONLY", 8) == 0) {
        return "redis: READONLY: the server is a replica (a failover is under way?)";
    }
    if (n >= 8 && memcmp(m, "MASTERDOWN", 10 < n ? 10 : n) == 0) {
        return "redis: MASTERDOWN: the replica lost its master";
    }
    return fallback;
}

wk__get_outcome wk__redis_get_reply(const wk__rconn *c, const wk__rnode *r, const uint8_t **val,
                                    size_t *len, const char **why)
{
    if (r->type == '$' && r->n >= 0) {
        *val = c->in + r->off;
        *len = (size_t)r->n;
        return WK__GET_HIT;
    }
    if (r->type == '$' || (r->type == '*' && r->n < 0)) {
        return WK__GET_MISS;
    }
    *why = r->type == '-' ? wk__redis_refusal(c, r, "redis: GET answered with an error reply")
                          : "redis: GET answered with a reply of the wrong type";
    return WK__GET_FAILED;
}
