/*
 * yajl 2.1 as a validate-only peer of the json suite: yajl_parse with no callbacks checks
 * the grammar and (by default) UTF-8 without building anything or converting numbers, which
 * is what wk_json_validate does. A handle is allocated per document (yajl cannot reset one
 * after a completed parse), as wirekit's call sets up its own state per document.
 */
#include <stdio.h>
#include <yajl/yajl_parse.h>
#include <yajl/yajl_version.h>

#include "bench_json.h"

uint64_t jb_yajl_validate(void *arg, uint64_t iters)
{
    const jb_input *in = arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; i < iters; i++) {
        yajl_handle h = yajl_alloc(NULL, NULL, NULL);
        acc += yajl_parse(h, in->data, in->len) == yajl_status_ok &&
               yajl_complete_parse(h) == yajl_status_ok;
        yajl_free(h);
    }
    return acc;
}

const char *jb_yajl_version(void)
{
    static char v[16];
    int n = yajl_version();
    snprintf(v, sizeof v, "%d.%d.%d", n / 10000, n / 100 % 100, n % 100);
    return v;
}
