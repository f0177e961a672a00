/*
 * The pgoutput message parser: a cursor over one message that never reads past its end.
 *
 * Each field is taken through one of four readers (byte, 32-bit, 64-bit, C string) that latch
 * the first failure, so a message is parsed top-down as its layout reads in the protocol
 * documentation and checked once at the end. Tuples are walked fully here (every column's
 * kind and length against the bytes left), which is what lets the dispatcher hand the values
 * out afterwards without a check. The trade-off is walking each tuple twice, once to check
 * and once to split: both are a byte compare and a length read per column.
 */
#include <string.h>

#include "pg/pg_interface.h"
#include "pq/pq_repl_msg.h"

typedef struct cursor {
    const uint8_t *p;
    size_t n, at;
    wk_status st; /* the first failure, sticky */
    size_t err_at;
    const char *why;
} cursor;

static void fail(cursor *c, wk_status st, size_t at, const char *why)
{
    if (c->st == WK_OK) {
        c->st = st;
        c->err_at = at;
        c->why = why;
    }
}

static bool need(cursor *c, size_t k)
{
    if (c->st != WK_OK) {
        return false;
    }
    if (c->n - c->at < k) {
        fail(c, WK_ERR_TRUNCATED, c->n, "replication message ends inside a field");
        return false;
    }
    return true;
}

static uint8_t u8(cursor *c)
{
    return need(c, 1) ? c->p[c->at++] : 0;
}

static uint16_t u16(cursor *c)
{
    if (!need(c, 2)) {
        return 0;
    }
    uint16_t v = wk__pg_be16(c->p + c->at);
    c->at += 2;
    return v;
}

static uint32_t u32(cursor *c)
{
    if (!need(c, 4)) {
        return 0;
    }
    uint32_t v = wk__pg_be32(c->p + c->at);
    c->at += 4;
    return v;
}

static uint64_t u64(cursor *c)
{
    if (!need(c, 8)) {
        return 0;
    }
    uint64_t v = wk__pg_be64(c->p + c->at);
    c->at += 8;
    return v;
}

/* A NUL-terminated string: the view excludes the NUL. */
static wk_slice cstr(cursor *c)
{
    wk_slice s = {"", 0};
    if (c->st != WK_OK) {
        return s;
    }
    const uint8_t *nul = memchr(c->p + c->at, 0, c->n - c->at);
    if (nul == NULL) {
        fail(c, WK_ERR_TRUNCATED, c->n, "replication message ends inside a string");
        return s;
    }
    s.ptr = (const char *)c->p + c->at;
    s.len = (size_t)(nul - (c->p + c->at));
    c->at += s.len + 1;
    return s;
}

/* TupleData: a column count, then per column 'n', 'u', or 't'/'b' with a 32-bit length. */
static wk__pgo_tuple tuple(cursor *c)
{
    wk__pgo_tuple t = {0, NULL, 0};
    t.ncols = u16(c);
    t.data = c->p + c->at;
    size_t start = c->at;
    for (uint16_t i = 0; i < t.ncols && c->st == WK_OK; i++) {
        size_t at = c->at;
        uint8_t kind = u8(c);
        if (kind == 't' || kind == 'b') {
            uint32_t len = u32(c);
            if (c->st == WK_OK && len > c->n - c->at) {
                fail(c, WK_ERR_TRUNCATED, c->n, "a column value is longer than the message");
            } else if (c->st == WK_OK) {
                c->at += len;
            }
        } else if (kind != 'n' && kind != 'u' && c->st == WK_OK) {
            fail(c, WK_ERR_SYNTAX, at, "unknown column kind in a tuple");
        }
    }
    t.len = c->at - start;
    return t;
}

/* Update and Delete: an optional old image ('K' key or 'O' old row), then for Update 'N' and
 * the new image. */
static void old_and_new(cursor *c, wk__pgo_msg *m, bool has_new)
{
    size_t at = c->at;
    uint8_t k = u8(c);
    if (k == 'K' || k == 'O') {
        m->old_kind = (char)k;
        m->old_row = tuple(c);
        if (!has_new) {
            return;
        }
        at = c->at;
        k = u8(c);
    } else if (!has_new && c->st == WK_OK) {
        fail(c, WK_ERR_SYNTAX, at, "a delete without its old row");
        return;
    }
    if (k != 'N' && c->st == WK_OK) {
        fail(c, WK_ERR_SYNTAX, at, "an update without its new row");
        return;
    }
    m->new_row = tuple(c);
}

/* Relation columns: flags, name, type OID, typmod each; checked here, walked later. */
static void relation_atts(cursor *c, wk__pgo_msg *m)
{
    m->natts = u16(c);
    m->atts = c->p + c->at;
    size_t start = c->at;
    for (uint16_t i = 0; i < m->natts && c->st == WK_OK; i++) {
        (void)u8(c);
        (void)cstr(c);
        (void)u32(c);
        (void)u32(c);
    }
    m->atts_len = c->at - start;
}

/* Internal: see pq_repl_msg.h. */
wk_status wk__pgo_parse(const uint8_t *p, size_t n, bool in_stream, wk__pgo_msg *m,
                        wk_error *err)
{
    memset(m, 0, sizeof *m);
    cursor c = {p, n, 0, WK_OK, 0, NULL};
    m->type = (char)u8(&c);
    if (in_stream && wk__pgo_has_stream_xid(m->type)) {
        m->xid = u32(&c);
    }
    switch (m->type) {
    case WK__PGO_BEGIN:
        m->lsn = u64(&c);
        m->time = (int64_t)u64(&c);
        m->xid = u32(&c);
        break;
    case WK__PGO_COMMIT:
        (void)u8(&c); /* flags, unused */
        m->lsn = u64(&c);
        m->end_lsn = u64(&c);
        m->time = (int64_t)u64(&c);
        break;
    case WK__PGO_ORIGIN:
        m->lsn = u64(&c);
        m->name = cstr(&c);
        break;
    case WK__PGO_RELATION:
        m->relid = u32(&c);
        m->nspname = cstr(&c);
        m->name = cstr(&c);
        m->replident = (char)u8(&c);
        relation_atts(&c, m);
        break;
    case WK__PGO_TYPE:
        m->typoid = u32(&c);
        m->nspname = cstr(&c);
        m->name = cstr(&c);
        break;
    case WK__PGO_INSERT: {
        m->relid = u32(&c);
        size_t at = c.at;
        if (u8(&c) != 'N' && c.st == WK_OK) {
            fail(&c, WK_ERR_SYNTAX, at, "an insert without its new row");
        }
        m->new_row = tuple(&c);
        break;
    }
    case WK__PGO_UPDATE:
        m->relid = u32(&c);
        old_and_new(&c, m, true);
        break;
    case WK__PGO_DELETE:
        m->relid = u32(&c);
        old_and_new(&c, m, false);
        break;
    case WK__PGO_TRUNCATE:
        m->nrels = u32(&c);
        m->truncate_flags = u8(&c);
        /* the count is checked against the bytes left before the OIDs are looked at */
        if (c.st == WK_OK && m->nrels > (c.n - c.at) / 4) {
            fail(&c, WK_ERR_TRUNCATED, c.n, "a truncate names more tables than it holds");
        } else if (c.st == WK_OK) {
            m->relids = c.p + c.at;
            c.at += (size_t)m->nrels * 4;
        }
        break;
    case WK__PGO_MESSAGE: {
        (void)u8(&c); /* flags */
        m->lsn = u64(&c);
        m->nspname = cstr(&c);
        uint32_t len = u32(&c);
        if (c.st == WK_OK && len > c.n - c.at) {
            fail(&c, WK_ERR_TRUNCATED, c.n, "a logical message is longer than it holds");
        } else if (c.st == WK_OK) {
            c.at += len;
        }
        break;
    }
    case WK__PGO_STREAM_START:
        m->xid = u32(&c);
        m->first_segment = u8(&c) == 1;
        break;
    case WK__PGO_STREAM_STOP:
        break;
    case WK__PGO_STREAM_COMMIT:
        m->xid = u32(&c);
        (void)u8(&c);
        m->lsn = u64(&c);
        m->end_lsn = u64(&c);
        m->time = (int64_t)u64(&c);
        break;
    case WK__PGO_STREAM_ABORT:
        m->xid = u32(&c);
        m->subxid = u32(&c);
        /* protocol 4 adds the abort's LSN and time; they are not needed here */
        break;
    default:
        if (c.st == WK_OK) {
            fail(&c, WK_ERR_SYNTAX, 0, "unknown replication message type");
        }
        break;
    }
    if (c.st != WK_OK) {
        return wk__pg_fail(err, c.st, c.err_at, c.why);
    }
    return WK_OK;
}

/* Internal: see pq_repl_msg.h. The tuple was checked by wk__pgo_parse. */
void wk__pgo_tuple_values(const wk__pgo_tuple *t, wk_pq_value *vals)
{
    const uint8_t *q = t->data;
    for (uint16_t i = 0; i < t->ncols; i++) {
        uint8_t kind = *q++;
        vals[i].ptr = NULL;
        vals[i].len = 0;
        if (kind == 'n') {
            vals[i].kind = WK_PQ_VALUE_NULL;
        } else if (kind == 'u') {
            vals[i].kind = WK_PQ_VALUE_UNCHANGED;
        } else {
            vals[i].kind = kind == 'b' ? WK_PQ_VALUE_BINARY : WK_PQ_VALUE_TEXT;
            vals[i].len = wk__pg_be32(q);
            vals[i].ptr = q + 4;
            q += 4 + vals[i].len;
        }
    }
}

/* Internal: see pq_repl_msg.h. The columns were checked by wk__pgo_parse. */
bool wk__pgo_relation_next(const wk__pgo_msg *m, size_t *pos, wk__pgo_att *out)
{
    if (*pos >= m->atts_len) {
        return false;
    }
    const uint8_t *q = m->atts + *pos;
    out->key = (q[0] & 1) != 0;
    out->name.ptr = (const char *)q + 1;
    out->name.len = strlen(out->name.ptr);
    q += 2 + out->name.len;
    out->typoid = wk__pg_be32(q);
    out->typmod = (int32_t)wk__pg_be32(q + 4);
    *pos = (size_t)(q + 8 - m->atts);
    return true;
}
