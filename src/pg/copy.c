/*
 * PostgreSQL's binary COPY format, read without libpq: the 19-byte header (signature
 * "PGCOPY\n\377\r\n\0", a 32-bit flags word, a header extension skipped by its length), then
 * tuples (a 16-bit field count, each field a 32-bit length, -1 for NULL, and its bytes in the
 * type's binary wire form) and the trailer (a field count of -1).
 *
 * Where it sits: COPY ... TO STDOUT (BINARY) bytes (addons/pq/pq_copy.c, or a file) ->
 * wk_pg_copy_header once, then wk_pg_copy_row per tuple here -> the row's value pointers and
 * lengths -> a decode plan (plan.c) -> the binary codecs. Nothing is copied: a tuple's slices
 * point into the caller's bytes. Every length is checked against the bytes present before it
 * is used, and a short buffer is WK_ERR_AGAIN (read more, call again), not an error.
 */
#include "pg/pg_interface.h"

/* The 11-byte signature every binary COPY stream opens with. */
static const uint8_t copy_sig[11] = {'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0};

/* Public (wirekit/pg.h): a wrong signature is refused from its first bytes, before the whole
 * header has arrived; *used is the header's length with its extension. */
WK_API wk_status wk_pg_copy_header(const uint8_t *p, size_t n, size_t *used, wk_error *err)
{
    *used = 0;
    size_t have = n < sizeof copy_sig ? n : sizeof copy_sig;
    if (memcmp(p, copy_sig, have) != 0) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0, "not a binary COPY stream (bad signature)");
    }
    if (n < 19) {
        return wk__pg_fail(err, WK_ERR_AGAIN, n, "COPY header incomplete");
    }
    uint32_t flags = wk__pg_be32(p + 11);
    if (flags & (1u << 16)) {
        return wk__pg_fail(err, WK_ERR_UNSUPPORTED, 11, "COPY stream with OIDs (WITH OIDS)");
    }
    if (flags & 0xffff0000u) {
        return wk__pg_fail(err, WK_ERR_UNSUPPORTED, 11, "unknown critical COPY header flag");
    }
    uint32_t ext = wk__pg_be32(p + 15);
    if (ext > INT32_MAX) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 15, "negative COPY header extension length");
    }
    if (n - 19 < ext) {
        return wk__pg_fail(err, WK_ERR_AGAIN, n, "COPY header extension incomplete");
    }
    *used = 19 + (size_t)ext;
    return WK_OK;
}

/* Public (wirekit/pg.h): one tuple into vals/lens (views into p), or WK_ERR_EOF at the trailer;
 * the field count must equal ncols. */
WK_API wk_status wk_pg_copy_row(const uint8_t *p, size_t n, size_t ncols, const uint8_t **vals,
                                int *lens, size_t *used, wk_error *err)
{
    *used = 0;
    if (n < 2) {
        return wk__pg_fail(err, WK_ERR_AGAIN, n, "COPY tuple incomplete");
    }
    int16_t count = (int16_t)wk__pg_be16(p);
    if (count == -1) {
        *used = 2;
        return wk__pg_fail(err, WK_ERR_EOF, 0, "COPY trailer");
    }
    if (count < 0 || (size_t)count != ncols) {
        return wk__pg_fail(err, WK_ERR_SYNTAX, 0,
                           "COPY tuple field count does not match the columns");
    }
    size_t off = 2;
    for (size_t i = 0; i < ncols; i++) {
        if (n - off < 4) {
            return wk__pg_fail(err, WK_ERR_AGAIN, n, "COPY tuple incomplete");
        }
        int32_t len = (int32_t)wk__pg_be32(p + off);
        if (len < -1) {
            return wk__pg_fail(err, WK_ERR_SYNTAX, off, "negative COPY field length");
        }
        off += 4;
        if (len == -1) {
            vals[i] = NULL;
            lens[i] = -1;
            continue;
        }
        if (n - off < (size_t)len) {
            return wk__pg_fail(err, WK_ERR_AGAIN, n, "COPY tuple incomplete");
        }
        vals[i] = p + off;
        lens[i] = len;
        off += (size_t)len;
    }
    *used = off;
    return WK_OK;
}
