/*
 * The pgoutput message parser (protocol versions 1 and 2): one logical replication message,
 * the bytes after an XLogData header, split into its fields as views into the message.
 * Everything the message declares (strings, counts, tuple lengths) is checked against the
 * bytes that are there before anything is read, so a parsed message can be walked without
 * further checks: tuples with wk__pgo_tuple_values, relation columns with
 * wk__pgo_relation_next. Nothing is allocated. Hostile input gives WK_ERR_TRUNCATED or
 * WK_ERR_SYNTAX with the byte offset in the message.
 */
#ifndef WK_PQ_REPL_MSG_H
#define WK_PQ_REPL_MSG_H

#include "wirekit/pq_changes.h"

/* Message types (the first byte). */
#define WK__PGO_BEGIN 'B'
#define WK__PGO_COMMIT 'C'
#define WK__PGO_ORIGIN 'O'
#define WK__PGO_RELATION 'R'
#define WK__PGO_TYPE 'Y'
#define WK__PGO_INSERT 'I'
#define WK__PGO_UPDATE 'U'
#define WK__PGO_DELETE 'D'
#define WK__PGO_TRUNCATE 'T'
#define WK__PGO_MESSAGE 'M'
#define WK__PGO_STREAM_START 'S'
#define WK__PGO_STREAM_STOP 'E'
#define WK__PGO_STREAM_COMMIT 'c'
#define WK__PGO_STREAM_ABORT 'A'

/* A row image as sent: the column count and the TupleData bytes (already checked). */
typedef struct wk__pgo_tuple {
    uint16_t ncols;
    const uint8_t *data; /* the first column's kind byte */
    size_t len;
} wk__pgo_tuple;

/* One parsed message; which fields are set depends on `type`. */
typedef struct wk__pgo_msg {
    char type;
    uint32_t xid;     /* B, S, c, A: the transaction; a streamed change: its (sub)transaction */
    uint32_t subxid;  /* A: the subtransaction aborted (== xid: the whole transaction) */
    uint64_t lsn;     /* B: the commit's LSN; C, c: the commit's LSN; M: the message's */
    uint64_t end_lsn; /* C, c: the end of the commit record */
    int64_t time;     /* B, C, c: the commit time (microseconds since 2000-01-01) */
    bool first_segment; /* S */
    uint32_t relid;   /* R, I, U, D */
    uint32_t typoid;  /* Y */
    wk_slice nspname; /* R, Y: the namespace ("" for pg_catalog); M: the prefix */
    wk_slice name;    /* R, Y: the relation's or type's name */
    char replident;   /* R */
    uint16_t natts;   /* R */
    const uint8_t *atts; /* R: the columns, walked with wk__pgo_relation_next */
    size_t atts_len;
    char old_kind;    /* U, D: 'K' (key columns) or 'O' (whole old row), 0 when none */
    wk__pgo_tuple old_row, new_row;
    uint32_t nrels;   /* T */
    uint8_t truncate_flags; /* T: 1 CASCADE, 2 RESTART IDENTITY */
    const uint8_t *relids;  /* T: nrels big-endian OIDs */
} wk__pgo_msg;

/* Parses p[0..n). `in_stream`: the message is inside a Stream Start/Stop block, so changes,
 * relations, types, truncates and messages carry a transaction id after the type byte.
 * Returns WK_OK, WK_ERR_TRUNCATED, WK_ERR_SYNTAX (an unknown type, a bad tuple kind, a string
 * without its NUL), with err->offset the byte in the message. */
wk_status wk__pgo_parse(const uint8_t *p, size_t n, bool in_stream, wk__pgo_msg *m,
                        wk_error *err);

/* The values of a checked tuple into vals[0..t->ncols). */
void wk__pgo_tuple_values(const wk__pgo_tuple *t, wk_pq_value *vals);

/* One column of a Relation message. */
typedef struct wk__pgo_att {
    bool key;
    wk_slice name;
    uint32_t typoid;
    int32_t typmod;
} wk__pgo_att;

/* The next column of a checked Relation message's columns, advancing *pos (start at 0):
 * false after the last. */
bool wk__pgo_relation_next(const wk__pgo_msg *m, size_t *pos, wk__pgo_att *out);

/* Whether a message of this type (inside a stream block) starts with a transaction id. */
static inline bool wk__pgo_has_stream_xid(char type)
{
    return type == WK__PGO_RELATION || type == WK__PGO_TYPE || type == WK__PGO_INSERT ||
           type == WK__PGO_UPDATE || type == WK__PGO_DELETE || type == WK__PGO_TRUNCATE ||
           type == WK__PGO_MESSAGE;
}

#endif
