/*
 * A misbehaving Redis for fault tests: a loopback TCP server (threads in the test process)
 * that answers PING, SELECT and writes normally and answers GET with scripted bytes: an error
 * reply, a wrong type, a truncated or oversized reply, a reply dribbled one byte at a time,
 * or nothing at all. Real Redis cannot be made to do these on demand.
 */
#ifndef FAKE_RESP_H
#define FAKE_RESP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#define FAKE_RESP_MAX_CONN 16

typedef struct fake_resp {
    /* behaviour of GET, set before fake_resp_start */
    const char *get_reply; /* bytes sent as the reply to GET */
    size_t get_reply_len;
    int dribble_ms;       /* > 0: after get_reply, one 'x' byte every dribble_ms, forever */
    size_t stream_bytes;  /* after get_reply, this many 'x' bytes as fast as possible */
    bool close_after_get; /* close the connection after the GET reply */
    bool silent_get;      /* never answer GET */
    const char *other_name;  /* a command (upper case, e.g. "SENTINEL", "CLUSTER") answered */
    const char *other_reply; /* with these bytes (NUL-terminated) */
    /* state */
    int listen_fd;
    int port;
    char url[64];
    atomic_int stop;
    pthread_t accept_thread;
    pthread_t conn_threads[FAKE_RESP_MAX_CONN];
    int conn_fds[FAKE_RESP_MAX_CONN];
    int nconn;
    pthread_mutex_t mu;
    int gets; /* GET commands received */
} fake_resp;

/** Listens on a loopback port (from $WK_FAULT_PORT_BASE, 27000 by default, the next 100
 *  ports, else any free port) and starts accepting. False on failure. */
bool fake_resp_start(fake_resp *f);
/** Stops every connection and the listener. */
void fake_resp_stop(fake_resp *f);

#endif
