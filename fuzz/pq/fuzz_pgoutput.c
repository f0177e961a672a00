/*
 * libFuzzer harness: pgoutput messages from a hostile server, through the change stream's
 * dispatcher with no connection. Input: one byte of options (bit 0: values are binary, bit 1:
 * MessagePack records, bit 2: a 64-byte buffer for streamed transactions, so they spill to a
 * temporary file), then messages framed as [u16 big-endian length][bytes], each handed over
 * in an exact-size copy (a read past its end hits the sanitizer) as the server's next message:
 * Relation messages build table descriptions, changes are rendered as records
 * (wk_pq_changes_append) and their first column as text, streamed blocks are buffered,
 * replayed or dropped. A message the parser refuses is skipped, as the stream would stop
 * there; everything after it still goes through. Crashes, leaks and sanitizer reports are the
 * failures.
 */
#include <stdlib.h>
#include <string.h>

#include "pq/pq_repl_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static wk_pg_registry *reg;

typedef struct fuzz_ctx {
    wk_pq_changes *s;
    wk_pg_row_opts opts;
    wk_buf out;
} fuzz_ctx;

static wk_status render(void *ctx, const wk_pq_change *ch, wk_error *err)
{
    fuzz_ctx *f = ctx;
    wk_buf_clear(&f->out);
    if (ch->op == WK_PQ_CHANGE_COMMIT) {
        return WK_OK;
    }
    (void)wk_pq_changes_append(f->s, ch, &f->opts, &f->out, err);
    const wk_pq_value *row = ch->new_row != NULL ? ch->new_row : ch->old_row;
    if (row != NULL && ch->table->ncols > 0) {
        wk_buf_clear(&f->out);
        (void)wk_pq_changes_value_text(f->s, ch, row, 0, &f->out, err);
    }
    return WK_OK; /* a row that does not render is the server's; the stream goes on */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    if (reg == NULL && wk_pg_registry_new_default(NULL, &reg, NULL) != WK_OK) {
        abort();
    }
    wk_pq_changes *s = calloc(1, sizeof *s);
    fuzz_ctx f;
    memset(&f, 0, sizeof f);
    f.s = s;
    f.opts.format = (data[0] & 2) ? WK_PG_ROW_MSGPACK : WK_PG_ROW_JSON;
    wk_buf_init(&f.out, NULL, 0);
    s->reg = reg;
    s->binary = (data[0] & 1) != 0;
    s->stop_pipe[0] = s->stop_pipe[1] = -1;
    s->opts.max_buffer_bytes = (data[0] & 4) ? 64 : (size_t)1 << 20;
    s->opts.max_message_bytes = (size_t)1 << 20;
    s->fn = render;
    s->fn_ctx = &f;
    wk_buf_init(&s->time_text, NULL, 0);
    size_t at = 1;
    uint64_t lsn = 1;
    while (size - at >= 2) {
        size_t n = ((size_t)data[at] << 8) | data[at + 1];
        at += 2;
        n = n < size - at ? n : size - at;
        uint8_t *msg = malloc(n ? n : 1);
        memcpy(msg, data + at, n);
        wk_error err = {WK_OK, 0, NULL};
        (void)wk__repl_dispatch(s, msg, n, lsn++, &err);
        free(msg);
        at += n;
    }
    wk_pq_changes_free(s); /* no connection: frees the descriptions and buffers */
    wk_buf_free(&f.out);
    return 0;
}
