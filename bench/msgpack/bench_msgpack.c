/* The msgpack benchmark suite: the seed record, then each file of the JSON corpus. */
#include "bench_msgpack.h"

int wk_bench_suite_msgpack(wk_bench *b)
{
    int rc = wk_bench_msgpack_seed(b);
    rc |= wk_bench_msgpack_corpus(b, "json-corpus/twitter.json");
    rc |= wk_bench_msgpack_corpus(b, "json-corpus/citm_catalog.json");
    return rc;
}
