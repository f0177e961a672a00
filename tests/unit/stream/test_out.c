/*
 * wk_out, the bounded output buffer: bytes arrive in order and whole at a callback, a pipe
 * and a FILE *, each flush is at most the cap, the buffer never grows past the cap (a value
 * larger than the cap is the writer's WK_ERR_LIMIT), and a failing destination latches.
 */
#include <stdlib.h>
#include <unistd.h>

#include "wirekit/wirekit.h"
#include "wk_test.h"

typedef struct collect {
    wk_buf all;
    size_t calls;
    size_t largest;
    size_t fail_after; /* 0 = never */
} collect;

static wk_status collect_fn(void *ctx, const void *data, size_t len)
{
    collect *c = ctx;
    c->calls++;
    if (c->fail_after != 0 && c->calls > c->fail_after) {
        return WK_ERR_IO;
    }
    if (len > c->largest) {
        c->largest = len;
    }
    if (wk_buf_grow(&c->all, len) != WK_OK) {
        return WK_ERR_NOMEM;
    }
    memcpy(c->all.data + c->all.len, data, len);
    c->all.len += len;
    return WK_OK;
}

/* Writes value i (an array [i, "value-i"]) to `buf` with a fresh writer. */
static wk_status write_value(wk_buf *buf, uint32_t i)
{
    wk_mp_writer w;
    char s[32];
    int n = snprintf(s, sizeof s, "value-%u", i);
    wk_mp_writer_init(&w, buf);
    wk_mp_writer_begin_array(&w, 2);
    wk_mp_writer_uint(&w, i);
    wk_mp_writer_str(&w, s, (size_t)n);
    return wk_mp_writer_finish(&w, NULL);
}

WK_TEST(test_out_sends_everything_in_order_through_a_bounded_buffer)
{
    collect c = {0};
    wk_buf_init(&c.all, NULL, 0);
    wk_buf want;
    wk_buf_init(&want, NULL, 0);
    wk_out o;
    wk_out_init_fn(&o, collect_fn, &c, 1024, NULL);
    for (uint32_t i = 0; i < 20000; i++) {
        CHECK_OK(write_value(wk_out_buf(&o), i));
        CHECK(o.buf.cap <= 1024);
        CHECK_OK(wk_out_commit(&o));
        CHECK_OK(write_value(&want, i));
    }
    CHECK_OK(wk_out_free(&o));
    CHECK(c.calls > 100);
    CHECK(c.largest <= 1024);
    CHECK_MEM(c.all.data, c.all.len, want.data, want.len);
    wk_buf_free(&c.all);
    wk_buf_free(&want);
}

WK_TEST(test_out_value_larger_than_the_cap_is_the_writers_limit_error)
{
    collect c = {0};
    wk_buf_init(&c.all, NULL, 0);
    wk_out o;
    wk_out_init_fn(&o, collect_fn, &c, 256, NULL);
    static char big[1000];
    wk_mp_writer w;
    wk_mp_writer_init(&w, wk_out_buf(&o));
    wk_mp_writer_str(&w, big, sizeof big);
    CHECK_STATUS(wk_mp_writer_finish(&w, NULL), WK_ERR_LIMIT);
    CHECK_OK(wk_out_free(&o));
    wk_buf_free(&c.all);
}

WK_TEST(test_out_failing_destination_latches)
{
    collect c = {0};
    c.fail_after = 2;
    wk_buf_init(&c.all, NULL, 0);
    wk_out o;
    wk_out_init_fn(&o, collect_fn, &c, 64, NULL);
    wk_status st = WK_OK;
    for (uint32_t i = 0; i < 100 && st == WK_OK; i++) {
        CHECK_OK(write_value(wk_out_buf(&o), i));
        st = wk_out_commit(&o);
    }
    CHECK_STATUS(st, WK_ERR_IO);
    CHECK_STATUS(wk_out_commit(&o), WK_ERR_IO);
    wk_error e;
    CHECK_STATUS(wk_out_error(&o, &e), WK_ERR_IO);
    CHECK_EQ(e.offset, wk_out_written(&o));
    CHECK_STATUS(wk_out_free(&o), WK_ERR_IO);
    wk_buf_free(&c.all);
}

WK_TEST(test_out_writes_to_a_pipe_and_a_file)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    wk_out o;
    wk_out_init_fd(&o, fds[1], 64, NULL);
    wk_buf want;
    wk_buf_init(&want, NULL, 0);
    for (uint32_t i = 0; i < 200; i++) { /* < 64 KiB: fits the pipe */
        CHECK_OK(write_value(wk_out_buf(&o), i));
        CHECK_OK(wk_out_commit(&o));
        CHECK_OK(write_value(&want, i));
    }
    CHECK_OK(wk_out_free(&o));
    close(fds[1]);
    uint8_t *got = malloc(want.len + 1);
    size_t n = 0;
    ssize_t k;
    while ((k = read(fds[0], got + n, want.len + 1 - n)) > 0) {
        n += (size_t)k;
    }
    close(fds[0]);
    CHECK_MEM(got, n, want.data, want.len);
    free(got);

    FILE *fp = tmpfile();
    CHECK(fp != NULL);
    wk_out_init_file(&o, fp, 100, NULL);
    for (uint32_t i = 0; i < 200; i++) {
        CHECK_OK(write_value(wk_out_buf(&o), i));
        CHECK_OK(wk_out_commit(&o));
    }
    CHECK_OK(wk_out_free(&o));
    CHECK_EQ(ftell(fp), (long)want.len);
    fclose(fp);
    wk_buf_free(&want);
}
