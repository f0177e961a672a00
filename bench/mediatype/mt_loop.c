/*
 * mt-loop: a minimal loop over one media-type operation, for instruction counts under
 * `valgrind --tool=callgrind` (the wall-clock suite is noisy on a shared machine). Usage:
 * `mt-loop parse|render|serialize [iterations] [value]`; run it at two iteration counts and
 * divide the difference in instructions by the difference in iterations to get the per-op cost
 * without the start-up. The default value is the seed, `application/json; charset=utf-8`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirekit/mediatype.h"

static void escape(const void *p)
{
    __asm__ volatile("" : : "g"(p) : "memory");
}

int main(int argc, char **argv)
{
    const char *op = argc > 1 ? argv[1] : "parse";
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000ul;
    const char *v = argc > 3 ? argv[3] : "application/json; charset=utf-8";
    size_t len = strlen(v);
    int kind = strcmp(op, "parse") == 0 ? 0 : strcmp(op, "render") == 0 ? 1 : 2;
    wk_media_type mt = WK_MT_INIT;
    unsigned long sum = 0;
    if (wk_mt_parse(v, len, 0, &mt, NULL) != WK_OK) {
        fprintf(stderr, "mt-loop: not a media type\n");
        return 1;
    }
    uint8_t mem[512];
    wk_buf out;
    wk_buf_init_fixed(&out, mem, sizeof mem);
    wk_slice r;
    for (unsigned long i = 0; i < n; i++) {
        escape(v);
        if (kind == 0) {
            wk_mt_parse(v, len, 0, &mt, NULL);
            sum += mt.nparams + mt.id;
        } else if (kind == 1) {
            wk_buf_clear(&out);
            wk_mt_render_build(&mt, WK_MT_STYLE_WHATWG, &out, &r, NULL); /* no kept view */
            sum += r.len;
        } else {
            wk_buf_clear(&out);
            wk_mt_serialize(&mt, WK_MT_STYLE_WHATWG, &out, NULL);
            sum += out.len;
        }
    }
    printf("%lu\n", sum);
    return 0;
}
