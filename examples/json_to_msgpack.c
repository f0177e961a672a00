/*
 * Example: JSON Lines to MessagePack, streaming: one line in memory at a time, no tree.
 *
 * Each line gets a JSON event reader (a wk_source) wired to a MessagePack writer (a wk_sink)
 * by wk_transcode; the MessagePack bytes are written out and the buffer reused. Memory stays
 * flat whatever the file size. A bad line is reported with its line number and column and
 * the conversion stops (exit 1). Then the output is read back as a check, converted to JSON
 * with wk_json_from_msgpack.
 * Run: ./json_to_msgpack IN.jsonl OUT.mp
 */
#define _POSIX_C_SOURCE 200809L /* getline and ssize_t: the example builds alone with -std=c11 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <wirekit/wirekit.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: json_to_msgpack IN.jsonl OUT.mp\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    FILE *out = fopen(argv[2], "wb");
    if (in == NULL || out == NULL) {
        fprintf(stderr, "json_to_msgpack: cannot open %s\n", in == NULL ? argv[1] : argv[2]);
        return 1;
    }

    wk_buf mp; /* reused for every line */
    wk_buf_init(&mp, NULL, 0);
    char *line = NULL;
    size_t line_cap = 0, lineno = 0, values = 0, bytes_in = 0, bytes_out = 0;
    ssize_t n;
    int rc = 0;
    while ((n = getline(&line, &line_cap, in)) > 0) {
        lineno++;
        bytes_in += (size_t)n;
        if (strspn(line, " \t\r\n") == (size_t)n) {
            continue; /* blank line */
        }
        /* reader -> events -> writer */
        wk_json_reader r;
        wk_json_reader_init(&r, line, (size_t)n, NULL, NULL);
        wk_source src;
        wk_json_reader_source(&r, &src);
        wk_mp_writer w;
        mp.len = 0;
        wk_mp_writer_init(&w, &mp);
        wk_sink sink;
        wk_mp_writer_sink(&w, &sink);
        wk_error err = {0};
        wk_status st = wk_transcode(&src, &sink, &err);
        wk_error werr = {0};
        wk_status wst = wk_mp_writer_finish(&w, &werr);
        wk_json_reader_free(&r);
        if (st != WK_OK || wst != WK_OK) {
            fprintf(stderr, "json_to_msgpack: %s:%zu:%zu: %s\n", argv[1], lineno,
                    err.offset + 1, st != WK_OK ? err.msg : werr.msg);
            rc = 1;
            break;
        }
        fwrite(mp.data, 1, mp.len, out);
        bytes_out += mp.len;
        values++;
    }
    free(line);
    fclose(in);
    if (fclose(out) != 0) {
        rc = 1;
    }
    printf("%zu values, %zu bytes of JSON -> %zu bytes of MessagePack\n", values, bytes_in,
           bytes_out);
    if (rc != 0) {
        wk_buf_free(&mp);
        return rc;
    }

    /* The check: the MessagePack file back to JSON, one compact line per value. */
    FILE *f = fopen(argv[2], "rb");
    if (f == NULL) {
        return 1;
    }
    wk_buf back, all;
    wk_buf_init(&back, NULL, 0);
    wk_buf_init(&all, NULL, 0);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (wk_buf_append(&all, chunk, got) != WK_OK) {
            return 1;
        }
    }
    fclose(f);
    wk_json_write_opts wo = {WK_JSON_WRITE_NEWLINE, 0};
    wk_error err = {0};
    if (wk_json_from_msgpack(all.data, all.len, &wo, 0, &back, &err) != WK_OK) {
        fprintf(stderr, "json_to_msgpack: reading back: %s at byte %zu\n", err.msg, err.offset);
        return 1;
    }
    size_t lines = 0;
    for (size_t i = 0; i < back.len; i++) {
        lines += back.data[i] == '\n';
    }
    printf("read back: %zu values\n%.*s", lines, (int)back.len, (const char *)back.data);
    wk_buf_free(&back);
    wk_buf_free(&all);
    wk_buf_free(&mp);
    return lines == values ? 0 : 1;
}
