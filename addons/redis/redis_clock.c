/*
 * The Redis store's clock: milliseconds on CLOCK_MONOTONIC, the time base of every deadline
 * in the add-on (a connect, a TLS handshake, a command, the feed's heartbeat). A leaf of its
 * own so that the transport, which bounds connects with it, stays below the wire layer that
 * bounds commands with it.
 */
#include <time.h>

#include "redis/redis_internal.h"

/* CLOCK_MONOTONIC: deadlines must not jump with the wall clock. */
int64_t wk__redis_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
