/* The msgpack benchmark suite: the seed record, then each file of the JSON corpus. */
#include <msgpack.h>

#include "bench_msgpack.h"

#define MSGPACK_C_BUILD "msgpack-c " MSGPACK_VERSION ": Debian shared library, distribution build (-O2)"

int wk_bench_suite_msgpack(wk_bench *b)
{
    wk_bench_peer(b, "msgpack-c", MSGPACK_C_BUILD);
    wk_bench_peer(b, "msgpuck",
                  "msgpuck: header-inline encoders/decoders compiled here with wirekit's flags "
                  "(Debian libmsgpuck-dev)");
    int rc = wk_bench_msgpack_seed(b);
    rc |= wk_bench_msgpack_corpus(b, "twitter.json");
    rc |= wk_bench_msgpack_corpus(b, "citm_catalog.json");
    rc |= wk_bench_msgpack_corpus(b, "canada.json");
    return rc;
}
