/* The negotiation case of the mediatype suite (bench_negotiate.c). */
#ifndef WK_BENCH_NEGOTIATE_H
#define WK_BENCH_NEGOTIATE_H
#include "bench.h"

/** Runs case "negotiate mix of N": wirekit in this process, npm negotiator in a Node child. */
void wk_bench_mediatype_negotiate(wk_bench *b);

#endif
