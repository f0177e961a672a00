/*
 * Buffers of transactions the server streams while they are in progress (protocol 2,
 * `streaming 'true'`): every message of a Stream Start/Stop block is kept as a record
 * [u32 length][u64 LSN][message] until the transaction's Stream Commit hands the records to
 * the dispatcher in order, or its Stream Abort drops them.
 *
 * Records stay in memory while the stream's budget (max_buffer_bytes, shared by every
 * transaction in progress) lasts; past it a transaction's further records go to an unlinked
 * temporary file (tmpfile(3): nothing is left on disk whatever happens to the process). So
 * resident memory is the budget plus one message, and a transaction of any size costs disk
 * instead. A subtransaction's records start at a remembered offset; as PostgreSQL nests
 * subtransactions, aborting one cuts the buffer back to that offset (its children's records
 * come after it, the parent's cannot until it ends) — the apply worker's own rule.
 */
#include <stdlib.h>
#include <string.h>

#include "pg/pg_interface.h"
#include "pq/pq_repl_internal.h"

#define RECORD_HEAD 12u

/* Internal: see pq_repl_internal.h. */
wk__repl_txn *wk__repl_txn_get(wk_pq_changes *s, uint32_t xid, bool create, wk_error *err,
                               wk_status *st)
{
    wk__repl_txn *free_slot = NULL;
    for (size_t i = 0; i < WK__REPL_MAX_STREAMED; i++) {
        if (s->txns[i].used && s->txns[i].xid == xid) {
            return &s->txns[i];
        }
        if (!s->txns[i].used && free_slot == NULL) {
            free_slot = &s->txns[i];
        }
    }
    if (!create) {
        return NULL;
    }
    if (free_slot == NULL) {
        *st = wk__repl_fail(s, WK_ERR_LIMIT, err, "too many streamed transactions",
                            "more than %u transactions streamed in progress at once",
                            WK__REPL_MAX_STREAMED);
        return NULL;
    }
    memset(free_slot, 0, sizeof *free_slot);
    free_slot->used = true;
    free_slot->xid = xid;
    wk_buf_init(&free_slot->mem, NULL, 0);
    return free_slot;
}

/* The buffer's length: memory then file. */
static uint64_t txn_len(const wk__repl_txn *t)
{
    return (uint64_t)t->mem.len + t->file_len;
}

/* Remembers where subtransaction `subxid` starts, the first time it is seen. */
static wk_status note_sub(wk_pq_changes *s, wk__repl_txn *t, uint32_t subxid, wk_error *err)
{
    if (subxid == t->xid || subxid == 0) {
        return WK_OK;
    }
    for (size_t i = t->nsubs; i > 0; i--) {
        if (t->subs[i - 1].xid == subxid) {
            return WK_OK;
        }
    }
    if (t->nsubs == t->subs_cap) {
        if (t->subs_cap >= WK__REPL_MAX_SUBXACTS) {
            return wk__repl_fail(s, WK_ERR_LIMIT, err, "too many subtransactions",
                                 "transaction %u has more than %u subtransactions", t->xid,
                                 WK__REPL_MAX_SUBXACTS);
        }
        size_t cap = t->subs_cap == 0 ? 16 : t->subs_cap * 2;
        struct wk__repl_sub *n = realloc(t->subs, cap * sizeof *n);
        if (n == NULL) {
            return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
        }
        t->subs = n;
        t->subs_cap = cap;
    }
    t->subs[t->nsubs].xid = subxid;
    t->subs[t->nsubs].at = txn_len(t);
    t->nsubs++;
    return WK_OK;
}

/* Internal: see pq_repl_internal.h. */
wk_status wk__repl_txn_add(wk_pq_changes *s, wk__repl_txn *t, uint32_t subxid,
                           const uint8_t *msg, size_t n, uint64_t lsn, wk_error *err)
{
    wk_status st = note_sub(s, t, subxid, err);
    if (st != WK_OK) {
        return st;
    }
    uint8_t head[RECORD_HEAD];
    wk__pg_put32(head, (uint32_t)n);
    wk__pg_put64(head + 4, lsn);
    if (t->file == NULL && s->buffered + n + RECORD_HEAD <= s->opts.max_buffer_bytes) {
        if (wk_buf_append(&t->mem, head, RECORD_HEAD) != WK_OK ||
            wk_buf_append(&t->mem, msg, n) != WK_OK) {
            return wk__repl_fail(s, WK_ERR_NOMEM, err, "out of memory", "out of memory");
        }
        s->buffered += n + RECORD_HEAD;
        return WK_OK;
    }
    if (t->file == NULL) {
        t->file = tmpfile();
        if (t->file == NULL) {
            return wk__repl_fail(s, WK_ERR_IO, err, "cannot make a temporary file",
                                 "cannot make a temporary file for streamed transaction %u",
                                 t->xid);
        }
    }
    if (fwrite(head, 1, RECORD_HEAD, t->file) != RECORD_HEAD || fwrite(msg, 1, n, t->file) != n) {
        return wk__repl_fail(s, WK_ERR_IO, err, "cannot write the temporary file",
                             "cannot write the temporary file of streamed transaction %u",
                             t->xid);
    }
    t->file_len += n + RECORD_HEAD;
    return WK_OK;
}

/* Cuts the buffer back to `at` bytes. */
static void truncate_to(wk_pq_changes *s, wk__repl_txn *t, uint64_t at)
{
    if (at <= t->mem.len) {
        s->buffered -= t->mem.len - (size_t)at;
        t->mem.len = (size_t)at;
        if (t->file != NULL) {
            fclose(t->file);
            t->file = NULL;
            t->file_len = 0;
        }
        return;
    }
    /* inside the file: later writes go on from there (what lies beyond is never read) */
    uint64_t in_file = at - t->mem.len;
    if (t->file != NULL && fseeko(t->file, (off_t)in_file, SEEK_SET) == 0) {
        t->file_len = in_file;
    }
}

/* Internal: see pq_repl_internal.h. */
void wk__repl_txn_abort(wk_pq_changes *s, wk__repl_txn *t, uint32_t subxid)
{
    if (subxid == t->xid) {
        wk__repl_txn_end(s, t);
        return;
    }
    for (size_t i = 0; i < t->nsubs; i++) {
        if (t->subs[i].xid == subxid) {
            truncate_to(s, t, t->subs[i].at);
            t->nsubs = i; /* it and the subtransactions after it are gone */
            return;
        }
    }
    /* a subtransaction without changes: nothing of it was buffered */
}

/* Internal: see pq_repl_internal.h. */
wk_status wk__repl_txn_replay(wk_pq_changes *s, wk__repl_txn *t,
                              wk_status (*fn)(wk_pq_changes *s, const uint8_t *msg, size_t n,
                                              uint64_t lsn, wk_error *err),
                              wk_error *err)
{
    wk_status st = WK_OK;
    for (size_t at = 0; at < t->mem.len && st == WK_OK;) {
        uint32_t n = wk__pg_be32(t->mem.data + at);
        uint64_t lsn = wk__pg_be64(t->mem.data + at + 4);
        st = fn(s, t->mem.data + at + RECORD_HEAD, n, lsn, err);
        at += RECORD_HEAD + n;
    }
    if (st != WK_OK || t->file == NULL) {
        return st;
    }
    if (fflush(t->file) != 0 || fseeko(t->file, 0, SEEK_SET) != 0) {
        return wk__repl_fail(s, WK_ERR_IO, err, "cannot read the temporary file",
                             "cannot read back streamed transaction %u", t->xid);
    }
    wk_buf rec;
    wk_buf_init(&rec, NULL, 0);
    uint64_t left = t->file_len;
    while (left > 0 && st == WK_OK) {
        uint8_t head[RECORD_HEAD];
        if (left < RECORD_HEAD || fread(head, 1, RECORD_HEAD, t->file) != RECORD_HEAD) {
            st = WK_ERR_IO;
            break;
        }
        uint32_t n = wk__pg_be32(head);
        uint64_t lsn = wk__pg_be64(head + 4);
        wk_buf_clear(&rec);
        if (n > left - RECORD_HEAD || wk_buf_reserve(&rec, n) != WK_OK ||
            fread(rec.data, 1, n, t->file) != n) {
            st = WK_ERR_IO;
            break;
        }
        left -= RECORD_HEAD + n;
        st = fn(s, rec.data, n, lsn, err);
    }
    wk_buf_free(&rec);
    if (st == WK_ERR_IO && (err == NULL || err->code != WK_ERR_IO)) {
        return wk__repl_fail(s, WK_ERR_IO, err, "cannot read the temporary file",
                             "cannot read back streamed transaction %u", t->xid);
    }
    return st;
}

/* Internal: see pq_repl_internal.h. */
void wk__repl_txn_end(wk_pq_changes *s, wk__repl_txn *t)
{
    if (!t->used) {
        return;
    }
    s->buffered -= t->mem.len;
    wk_buf_free(&t->mem);
    if (t->file != NULL) {
        fclose(t->file);
    }
    free(t->subs);
    if (s->cur_stream == t) {
        s->cur_stream = NULL;
    }
    memset(t, 0, sizeof *t);
}
