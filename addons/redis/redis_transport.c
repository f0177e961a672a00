/*
 * The Redis store's transport: the one seam through which bytes reach a Redis server. It
 * opens a connection (TCP host:port, resolved and tried address by address, or a unix
 * socket) without blocking past the connect deadline, turns on TCP keepalive, runs the TLS
 * handshake (redis_tls.c) when the store speaks TLS, and moves bytes with
 * wk__rt_send()/wk__rt_recv(), which go through TLS or straight to the socket. The wire
 * layer (redis_resp.c) never touches the socket any other way.
 *
 * wirekit opens its own sockets (hiredis 0.14, Debian 12's, has no TLS, and was used for
 * nothing but the connect): a non-blocking connect() polled until `connect_ms`, so an
 * unanswered SYN costs the deadline and not the kernel's minutes. Name resolution runs
 * within the same deadline: an address literal is parsed at once, a name is looked up by
 * glibc's getaddrinfo_a() on its own thread while the caller waits in gai_suspend() at most
 * until the deadline (a resolver that stalls, as an unreachable DNS server does for its 5 s
 * per attempt, would otherwise hold the connect, and the command behind it, unbounded). A
 * failed connect is reported by cause (refused, timed out, no such socket, name not
 * resolved, name not resolved in time, unreachable) as a static message; the host is named
 * by wk_redis_store_failed_server().
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getaddrinfo_a, gai_suspend */
#endif
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "redis/redis_internal.h"

/* The cause of a failed connect, from its errno. */
static const char *connect_cause(int e, bool is_unix)
{
    switch (e) {
    case ECONNREFUSED:
        return is_unix ? "redis: cannot connect: connection refused (no server on the socket)"
                       : "redis: cannot connect: connection refused";
    case ETIMEDOUT: return "redis: cannot connect: timed out (connect_timeout_ms)";
    case ENOENT: return "redis: cannot connect: no such unix socket";
    case EACCES:
    case EPERM: return "redis: cannot connect: permission denied";
    case ENETUNREACH:
    case EHOSTUNREACH: return "redis: cannot connect: network unreachable";
    default: return "redis: cannot connect";
    }
}

/* A non-blocking socket connected to `addr` before `deadline`: the descriptor, or -1 with
 * errno (ETIMEDOUT when the deadline passed). */
static int connect_one(int family, const struct sockaddr *addr, socklen_t len, int64_t deadline)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return -1;
    }
    if (connect(fd, addr, len) == 0) {
        return fd;
    }
    if (errno != EINPROGRESS && errno != EAGAIN) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    for (;;) {
        int64_t left = deadline - wk__redis_now_ms();
        if (left <= 0) {
            close(fd);
            errno = ETIMEDOUT;
            return -1;
        }
        struct pollfd p = {fd, POLLOUT, 0};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        if (r < 0 || (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)) {
            soerr = errno;
        }
        if (r > 0 && soerr == 0) {
            return fd;
        }
        if (r > 0) {
            close(fd);
            errno = soerr;
            return -1;
        }
    }
}

/* One asynchronous look-up and what it reads. Shared by the caller and glibc's completion
 * notice (a thread glibc starts when the look-up ends); the last of the two to let go frees
 * it, so a caller past its deadline returns at once and the look-up, which glibc cannot
 * always cancel, finishes into memory still alive. From libc's malloc, not the store's
 * allocator: the notice may run after the store (and its allocator) are gone. */
typedef struct lookup {
    struct gaicb cb;
    struct addrinfo hints;
    char host[256];
    char port[8];
    int refs; /* atomic */
} lookup;

static void lookup_unref(lookup *l)
{
    if (__atomic_sub_fetch(&l->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        if (l->cb.ar_result != NULL) {
            freeaddrinfo(l->cb.ar_result);
        }
        free(l);
    }
}

/* glibc's completion notice (SIGEV_THREAD). */
static void lookup_done(union sigval v)
{
    lookup_unref(v.sival_ptr);
}

/* The addresses of `host` (a literal at once, a name before `deadline`) in *res; NULL with
 * *cause when it does not resolve or not in time. */
static struct addrinfo *resolve(const char *host, const char *port, int64_t deadline,
                                const char **cause)
{
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST;
    int r = getaddrinfo(host, port, &hints, &res);
    if (r == 0 && res != NULL) {
        return res;
    }
    *cause = "redis: cannot connect: host name not resolved";
    if (r != EAI_NONAME) {
        return NULL;
    }
    lookup *l = malloc(sizeof *l);
    if (l == NULL) {
        *cause = "redis: cannot connect: out of memory resolving the host name";
        return NULL;
    }
    memset(l, 0, sizeof *l);
    snprintf(l->host, sizeof l->host, "%s", host);
    snprintf(l->port, sizeof l->port, "%s", port);
    l->hints.ai_family = AF_UNSPEC;
    l->hints.ai_socktype = SOCK_STREAM;
    l->cb.ar_name = l->host;
    l->cb.ar_service = l->port;
    l->cb.ar_request = &l->hints;
    l->refs = 2;
    struct sigevent ev;
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_THREAD;
    ev.sigev_notify_function = lookup_done;
    ev.sigev_value.sival_ptr = l;
    struct gaicb *list[1] = {&l->cb};
    if (getaddrinfo_a(GAI_NOWAIT, list, 1, &ev) != 0) {
        free(l); /* not queued: no notice will come */
        *cause = "redis: cannot connect: cannot start resolving the host name";
        return NULL;
    }
    for (;;) {
        int e = gai_error(&l->cb);
        if (e != EAI_INPROGRESS) {
            if (e == 0 && l->cb.ar_result != NULL) {
                res = l->cb.ar_result; /* ours now: the notice frees only what is left */
                l->cb.ar_result = NULL;
            }
            lookup_unref(l);
            return res;
        }
        int64_t left = deadline - wk__redis_now_ms();
        if (left <= 0) {
            lookup_unref(l); /* the look-up goes on; its notice frees it */
            *cause = "redis: cannot connect: host name not resolved within connect_timeout_ms";
            return NULL;
        }
        struct timespec ts = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
        (void)gai_suspend((const struct gaicb *const *)list, 1, &ts);
    }
}

/* TCP: every address the name resolves to, in order, until one answers; -1 with *cause. */
static int connect_tcp(const wk__rendpoint *ep, int64_t deadline, const char **cause)
{
    char port[8];
    snprintf(port, sizeof port, "%d", ep->port);
    struct addrinfo *res = resolve(ep->host, port, deadline, cause);
    if (res == NULL) {
        return -1;
    }
    int fd = -1, e = ECONNREFUSED;
    for (struct addrinfo *a = res; a != NULL && fd < 0; a = a->ai_next) {
        fd = connect_one(a->ai_family, a->ai_addr, a->ai_addrlen, deadline);
        e = errno;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        *cause = connect_cause(e, false);
        return -1;
    }
    int on = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    return fd;
}

static int connect_unix(const wk__rendpoint *ep, int64_t deadline, const char **cause)
{
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    size_t n = strlen(ep->host);
    if (n >= sizeof a.sun_path) {
        *cause = "redis: cannot connect: unix socket path too long";
        return -1;
    }
    memcpy(a.sun_path, ep->host, n + 1);
    int fd = connect_one(AF_UNIX, (const struct sockaddr *)&a, sizeof a, deadline);
    if (fd < 0) {
        *cause = connect_cause(errno, true);
    }
    return fd;
}

wk__rconn *wk__rt_open(const wk__rendpoint *ep, uint32_t connect_ms, void *tls,
                       const char *server_name, const wk_allocator *alloc, wk_error *err)
{
    int64_t deadline = wk__redis_now_ms() + connect_ms;
    const char *cause = NULL;
    int fd = ep->is_unix ? connect_unix(ep, deadline, &cause) : connect_tcp(ep, deadline, &cause);
    if (fd < 0) {
        wk_error_set(err, WK_ERR_IO, 0, cause);
        return NULL;
    }
    wk__rconn *c = wk_alloc(alloc, sizeof *c);
    if (c == NULL) {
        close(fd);
        wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->alloc = alloc;
    c->fd = fd;
    /* TLS over TCP only: Redis serves its unix socket in plain text */
    if (tls != NULL && !ep->is_unix &&
        wk__rtls_connect(c, tls, ep->host, server_name, deadline, err) != WK_OK) {
        /* no buffers yet: closing and freeing `c` is all wk__rconn_free would do, and doing
         * it here keeps this file below redis_resp.c */
        wk__rt_close(c);
        wk_free(alloc, c, sizeof *c);
        return NULL;
    }
    return c;
}

ssize_t wk__rt_send(wk__rconn *c, const void *p, size_t n)
{
    if (c->ssl != NULL) {
        return wk__rtls_send(c, p, n);
    }
    return send(c->fd, p, n, MSG_NOSIGNAL);
}

ssize_t wk__rt_recv(wk__rconn *c, void *p, size_t n)
{
    if (c->ssl != NULL) {
        return wk__rtls_recv(c, p, n);
    }
    return recv(c->fd, p, n, 0);
}

const char *wk__rt_cause(const wk__rconn *c, const char *fallback)
{
    return c->cause != NULL ? c->cause : fallback;
}

void wk__rt_close(wk__rconn *c)
{
    wk__rtls_close(c);
    if (c->fd >= 0) {
        close(c->fd);
        c->fd = -1;
    }
}
