/*
 * The Redis store's transport: the one seam through which bytes reach a Redis server. It
 * opens a connection (TCP host:port or a unix socket, made by hiredis with the connect
 * timeout), makes it non-blocking, and moves bytes with wk__rt_send()/wk__rt_recv(). The wire
 * layer (redis_resp.c) never touches the socket any other way, so TLS is added here alone:
 * hiredis >= 1.0 brings redisInitiateSSLWithContext(), and these two functions then call
 * SSL_write()/SSL_read(), mapping SSL_ERROR_WANT_READ/WANT_WRITE to EAGAIN. Debian 12 ships
 * hiredis 0.14.1, which has no TLS, so this build speaks plain TCP and unix sockets only.
 *
 * A failed connect is reported by cause (refused, timed out, no such socket, name not
 * resolved), from the errno text hiredis keeps, as a static message.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>

#include "redis/redis_internal.h"

static struct timeval to_tv(uint32_t ms)
{
    struct timeval tv;
    tv.tv_sec = (time_t)(ms / 1000);
    tv.tv_usec = (suseconds_t)(ms % 1000) * 1000;
    return tv;
}

/* The cause of a failed connect, from hiredis's errstr. */
static const char *connect_cause(const redisContext *ctx, bool is_unix)
{
    const char *e = ctx->errstr;
    if (strstr(e, "refused") != NULL) {
        return is_unix ? "redis: cannot connect: connection refused (no server on the socket)"
                       : "redis: cannot connect: connection refused";
    }
    if (strstr(e, "timed out") != NULL || strstr(e, "Timeout") != NULL) {
        return "redis: cannot connect: timed out (connect_timeout_ms)";
    }
    if (strstr(e, "No such file") != NULL) {
        return "redis: cannot connect: no such unix socket";
    }
    if (strstr(e, "Permission denied") != NULL) {
        return "redis: cannot connect: permission denied";
    }
    if (strstr(e, "resolve") != NULL || strstr(e, "known") != NULL ||
        strstr(e, "Name or service") != NULL) {
        return "redis: cannot connect: host name not resolved";
    }
    if (strstr(e, "unreachable") != NULL) {
        return "redis: cannot connect: network unreachable";
    }
    return "redis: cannot connect";
}

wk__rconn *wk__rt_open(const wk__rendpoint *ep, uint32_t connect_ms, const wk_allocator *alloc,
                       wk_error *err)
{
    redisContext *ctx = ep->is_unix ? redisConnectUnixWithTimeout(ep->host, to_tv(connect_ms))
                                    : redisConnectWithTimeout(ep->host, ep->port,
                                                              to_tv(connect_ms));
    if (ctx == NULL) {
        wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        return NULL;
    }
    if (ctx->err != 0) {
        wk_error_set(err, WK_ERR_IO, 0, connect_cause(ctx, ep->is_unix));
        redisFree(ctx);
        return NULL;
    }
    if (!ep->is_unix) {
        redisEnableKeepAlive(ctx);
    }
    wk__rconn *c = wk_alloc(alloc, sizeof *c);
    if (c == NULL) {
        redisFree(ctx);
        wk_error_set(err, WK_ERR_NOMEM, 0, "redis: out of memory");
        return NULL;
    }
    memset(c, 0, sizeof *c);
    c->alloc = alloc;
    c->ctx = ctx;
    c->fd = ctx->fd;
    int fl = fcntl(c->fd, F_GETFL, 0);
    if (fl < 0 || fcntl(c->fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        wk_error_set(err, WK_ERR_IO, 0, "redis: cannot make the socket non-blocking");
        /* no buffers yet: closing the socket and freeing `c` is all wk__rconn_free would do,
         * and doing it here keeps this file below redis_resp.c */
        wk__rt_close(c);
        wk_free(alloc, c, sizeof *c);
        return NULL;
    }
    return c;
}

ssize_t wk__rt_send(wk__rconn *c, const void *p, size_t n)
{
    return send(c->fd, p, n, MSG_NOSIGNAL);
}

ssize_t wk__rt_recv(wk__rconn *c, void *p, size_t n)
{
    return recv(c->fd, p, n, 0);
}

void wk__rt_close(wk__rconn *c)
{
    if (c->ctx != NULL) {
        redisFree(c->ctx);
        c->ctx = NULL;
    }
}
