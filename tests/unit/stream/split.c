/*
 * Chunk-split plans and the copying feeder for the stream tests (see split.h).
 */
#include "split.h"

#include <stdlib.h>
#include <string.h>

uint64_t split_next(split_rng *r)
{
    uint64_t x = r->s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    r->s = x;
    return x;
}

size_t split_below(split_rng *r, size_t n)
{
    return (size_t)(split_next(r) % n);
}

size_t split_plan(split_rng *r, size_t len, int kind, size_t max_piece, size_t **sizes)
{
    size_t *s = malloc((len + 2) * sizeof *s);
    size_t n = 0;
    size_t left = len;
    if (kind == 2) {
        s[n++] = len;
        *sizes = s;
        return n;
    }
    while (left > 0) {
        size_t k;
        if (kind == 1) {
            k = 1;
        } else if (kind == 3 && split_below(r, 3) != 0) {
            k = 1;
        } else {
            k = 1 + split_below(r, max_piece);
        }
        if (k > left) {
            k = left;
        }
        s[n++] = k;
        left -= k;
    }
    if (len > 0 && kind == 0 && split_below(r, 4) == 0) {
        s[n++] = 0; /* an empty chunk at the end now and then */
    }
    *sizes = s;
    return n;
}

void split_feeder_init(split_feeder *f, const uint8_t *data, size_t len, size_t *sizes,
                       size_t count)
{
    memset(f, 0, sizeof *f);
    f->data = data;
    f->len = len;
    f->sizes = sizes;
    f->count = count;
}

const uint8_t *split_feeder_next(split_feeder *f, size_t *n)
{
    free(f->copy);
    f->copy = NULL;
    if (f->next == f->count) {
        *n = 0;
        return NULL;
    }
    size_t k = f->sizes[f->next++];
    f->copy = malloc(k != 0 ? k : 1);
    if (k != 0) {
        memcpy(f->copy, f->data + f->pos, k);
    }
    f->pos += k;
    *n = k;
    return f->copy;
}

void split_feeder_free(split_feeder *f)
{
    free(f->copy);
    f->copy = NULL;
}

void split_json_events(const uint8_t *d, size_t n, const wk_read_opts *o, wk_buf *out)
{
    wk_json_reader r;
    wk_source src;
    wk_mp_writer w;
    wk_sink sink;
    out->len = 0;
    wk_json_reader_init(&r, d, n, o, NULL);
    wk_json_reader_source(&r, &src);
    wk_mp_writer_init(&w, out);
    wk_mp_writer_sink(&w, &sink);
    wk_transcode(&src, &sink, NULL);
    wk_mp_writer_finish(&w, NULL);
    wk_json_reader_free(&r);
}

void split_events_init(split_events *e)
{
    memset(e, 0, sizeof *e);
    wk_buf_init(&e->got, NULL, 0);
    wk_buf_init(&e->want, NULL, 0);
}

wk_status split_events_next(split_events *e, wk_json_unpacker *u)
{
    if (!e->open) {
        e->got.len = 0;
        wk_mp_writer_init(&e->w, &e->got);
        wk_mp_writer_sink(&e->w, &e->sink);
        e->open = true;
    }
    wk_status st = wk_json_unpacker_next_events(u, &e->sink);
    if (st != WK_ERR_AGAIN) {
        wk_mp_writer_finish(&e->w, NULL);
        e->open = false;
    }
    return st;
}

bool split_events_match(split_events *e, const uint8_t *d, size_t n, const wk_read_opts *o)
{
    split_json_events(d, n, o, &e->want);
    return e->got.len == e->want.len && memcmp(e->got.data, e->want.data, e->got.len) == 0;
}

void split_events_free(split_events *e)
{
    wk_buf_free(&e->got);
    wk_buf_free(&e->want);
}
