/*
 * Example: MessagePack values from a pipe or a socket, a chunk at a time, as a msgpack-RPC
 * peer or a Fluentd forwarder sends them. The bytes are read with read(2) into one small
 * buffer and fed to an incremental unpacker (wirekit/stream.h); each complete value is taken
 * out as soon as it is there, as events, and written as one line of JSON through a bounded
 * output buffer (wk_out) on standard output. A value cut by a chunk's end is finished by the
 * next chunks; memory stays bounded by the largest value (the cap given to the unpacker). A
 * stream that ends inside a value, or holds bad bytes, is reported with its byte offset.
 * Run: producer | ./mp_stream     or     ./mp_stream FILE.mp
 */
#define _POSIX_C_SOURCE 200809L /* read() and open(): the example builds alone with -std=c11 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <wirekit/wirekit.h>

int main(int argc, char **argv)
{
    int fd = argc > 1 ? open(argv[1], O_RDONLY) : 0;
    if (fd < 0) {
        fprintf(stderr, "mp_stream: cannot open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    wk_mp_unpacker u;
    wk_mp_unpacker_init(&u, NULL, 1 << 20); /* a value may span chunks up to 1 MiB */
    wk_out out;
    wk_out_init_fd(&out, 1, 1 << 22, NULL); /* one value's JSON: at most 4 MiB */
    wk_json_writer jw;
    wk_json_write_opts wo = {WK_JSON_WRITE_NEWLINE, 0};
    wk_json_writer_init(&jw, wk_out_buf(&out), &wo);
    wk_sink sink;
    wk_json_writer_sink(&jw, &sink);

    unsigned char chunk[16]; /* tiny on purpose: most values arrive cut in pieces */
    unsigned long values = 0;
    int rc = 0;
    for (;;) {
        /* the unpacker may point into `chunk` until it answers WK_ERR_AGAIN: refill only then */
        wk_status st = wk_mp_unpacker_next_events(&u, &sink);
        if (st == WK_OK) {
            values++;
            wk_out_commit(&out); /* between values: sends the output on once there is enough */
            continue;
        }
        if (st == WK_ERR_AGAIN) {
            wk_out_flush(&out); /* what is ready goes out before a read that may wait */
            ssize_t n;
            do {
                n = read(fd, chunk, sizeof chunk);
            } while (n < 0 && errno == EINTR);
            if (n < 0) {
                fprintf(stderr, "mp_stream: read: %s\n", strerror(errno));
                rc = 1;
                break;
            }
            if (n == 0) {
                wk_mp_unpacker_finish(&u); /* end of input: an unfinished value is an error */
            } else {
                wk_mp_unpacker_feed(&u, chunk, (size_t)n);
            }
            continue;
        }
        if (st != WK_ERR_EOF) { /* bad or truncated input, the cap, or the writer's error */
            wk_error err;
            wk_mp_unpacker_error(&u, &err);
            fprintf(stderr, "mp_stream: %s (at byte %zu)\n",
                    err.msg != NULL ? err.msg : wk_status_str(err.code), err.offset);
            rc = 1;
        }
        break;
    }
    wk_error werr;
    if (wk_out_free(&out) != WK_OK) { /* flushes what is left */
        wk_out_error(&out, &werr);
        fprintf(stderr, "mp_stream: cannot write: %s\n",
                werr.msg != NULL ? werr.msg : wk_status_str(werr.code));
        rc = 1;
    }
    printf("%lu value%s, %llu bytes\n", values, values == 1 ? "" : "s",
           (unsigned long long)wk_mp_unpacker_offset(&u));
    wk_mp_unpacker_free(&u);
    if (fd > 0) {
        close(fd);
    }
    return rc;
}
