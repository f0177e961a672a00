/*
 * The Redis store's TLS, with OpenSSL: the client context made once per store from the
 * options (CA file or directory, client certificate and key, peer verification), and per
 * connection the handshake under the connect deadline, then reads and writes. The
 * transport (redis_transport.c) calls it for a connection made with TLS and never touches
 * OpenSSL itself.
 *
 * Peer verification is on unless the caller asked for `tls_insecure_skip_verify`: the chain
 * must lead to a trusted CA (the given file or directory, else the system's store) and the
 * certificate must name the host connected to (or the `tls_server_name` given), a DNS name
 * or an IP address (SAN). Failures are named by cause (not trusted, host name mismatch,
 * expired, a client certificate required, the handshake timed out, not a TLS port) in static
 * messages: nothing from the certificates or keys is ever put in a message.
 *
 * OpenSSL's socket BIO writes with write(2), which raises SIGPIPE on a connection the server
 * closed; a library must not kill its process, so the SSL object talks through a small BIO of
 * its own that sends with MSG_NOSIGNAL. The trade-off: one BIO method table per process (made
 * once) against a signal handler imposed on every program that links the add-on.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

#include "redis/redis_internal.h"

/* ---- the BIO: send with MSG_NOSIGNAL, recv, on the connection's descriptor ---- */

static BIO_METHOD *nosig_method;
static pthread_once_t nosig_once = PTHREAD_ONCE_INIT;

static int nosig_write(BIO *b, const char *p, int n)
{
    int fd = *(const int *)BIO_get_data(b);
    BIO_clear_retry_flags(b);
    ssize_t w = send(fd, p, (size_t)n, MSG_NOSIGNAL);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_write(b);
    }
    return (int)w;
}

static int nosig_read(BIO *b, char *p, int n)
{
    int fd = *(const int *)BIO_get_data(b);
    BIO_clear_retry_flags(b);
    ssize_t r = recv(fd, p, (size_t)n, 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        BIO_set_retry_read(b);
    }
    return (int)r;
}

static long nosig_ctrl(BIO *b, int cmd, long num, void *ptr)
{
    (void)b;
    (void)num;
    (void)ptr;
    return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int nosig_create(BIO *b)
{
    BIO_set_init(b, 1);
    return 1;
}

static void nosig_init(void)
{
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "wirekit socket");
    if (m != NULL && (BIO_meth_set_write(m, nosig_write) != 1 ||
                      BIO_meth_set_read(m, nosig_read) != 1 ||
                      BIO_meth_set_ctrl(m, nosig_ctrl) != 1 ||
                      BIO_meth_set_create(m, nosig_create) != 1)) {
        BIO_meth_free(m);
        m = NULL;
    }
    nosig_method = m;
}

/* ---- the context ---- */

wk_status wk__rtls_ctx_new(const wk_redis_opts *o, void **out, wk_error *err)
{
    *out = NULL;
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    if (ctx == NULL) {
        return wk_error_set(err, WK_ERR_NOMEM, 0,
                            "redis: TLS: cannot make a context (out of memory)");
    }
    (void)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    const char *msg = NULL;
    if (o->tls_ca_file != NULL || o->tls_ca_dir != NULL) {
        if (SSL_CTX_load_verify_locations(ctx, o->tls_ca_file, o->tls_ca_dir) != 1) {
            msg = "redis: TLS: cannot read the CA certificates (tls_ca_file / tls_ca_dir: "
                  "missing, unreadable or not PEM)";
        }
    } else if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
        msg = "redis: TLS: cannot load the system's CA certificates";
    }
    if (msg == NULL && (o->tls_cert_file != NULL) != (o->tls_key_file != NULL)) {
        msg = "redis: TLS: a client certificate needs its key and a key its certificate";
    }
    if (msg == NULL && o->tls_cert_file != NULL) {
        if (SSL_CTX_use_certificate_chain_file(ctx, o->tls_cert_file) != 1) {
            msg = "redis: TLS: cannot read the client certificate (tls_cert_file: missing, "
                  "unreadable or not PEM)";
        } else if (SSL_CTX_use_PrivateKey_file(ctx, o->tls_key_file, SSL_FILETYPE_PEM) != 1) {
            /* OpenSSL checks the pair as it loads the key */
            int r = ERR_GET_REASON(ERR_peek_last_error());
            msg = r == X509_R_KEY_VALUES_MISMATCH || r == X509_R_KEY_TYPE_MISMATCH
                      ? "redis: TLS: the client key does not match the client certificate"
                      : "redis: TLS: cannot read the client key (tls_key_file: missing, "
                        "unreadable, encrypted or not PEM)";
        } else if (SSL_CTX_check_private_key(ctx) != 1) {
            msg = "redis: TLS: the client key does not match the client certificate";
        }
    }
    SSL_CTX_set_verify(ctx, o->tls_insecure_skip_verify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER,
                       NULL);
    pthread_once(&nosig_once, nosig_init);
    if (msg == NULL && nosig_method == NULL) {
        msg = "redis: TLS: cannot make the socket BIO (out of memory)";
    }
    ERR_clear_error(); /* nothing of the files' contents is kept or shown */
    if (msg != NULL) {
        SSL_CTX_free(ctx);
        return wk_error_set(err, WK_ERR_ARG, 0, msg);
    }
    *out = ctx;
    return WK_OK;
}

void wk__rtls_ctx_free(void *ctx)
{
    SSL_CTX_free(ctx);
}

/* ---- a connection ---- */

/* True when `host` is an IPv4 or IPv6 literal (SNI must not carry one; verification then
 * matches an IP SAN). */
static bool is_ip_literal(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, host, buf) == 1 || inet_pton(AF_INET6, host, buf) == 1;
}

/* TLS 1.3's alert for a missing client certificate, met in the handshake or, since a 1.3
 * server refuses only once the client has sent its first bytes, in the first read. */
#define CLIENT_CERTIFICATE_REQUIRED                                                          \
    "redis: TLS: the server requires a client certificate (tls_cert_file and tls_key_file " \
    "/ --cert and --key)"

static bool client_certificate_required(int reason)
{
#ifdef SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED
    return reason == SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED;
#else
    (void)reason;
    return false;
#endif
}

/* The cause of a failed handshake, from the verification result and the error queue. */
static const char *handshake_cause(SSL *ssl)
{
    long v = SSL_get_verify_result(ssl);
    unsigned long e = ERR_peek_last_error();
    int reason = ERR_GET_REASON(e);
    ERR_clear_error();
    switch (v) {
    case X509_V_OK: break;
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
        return "redis: TLS: host name mismatch (the server's certificate does not name the "
               "host connected to; tls_server_name / --sni names another)";
    case X509_V_ERR_CERT_HAS_EXPIRED:
        return "redis: TLS: the server's certificate has expired";
    case X509_V_ERR_CERT_NOT_YET_VALID:
        return "redis: TLS: the server's certificate is not yet valid (clock?)";
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
    case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
    case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
    case X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    case X509_V_ERR_CERT_SIGNATURE_FAILURE:
        return "redis: TLS: certificate not trusted (the server's chain does not lead to the "
               "CA given: tls_ca_file / --cacert)";
    default:
        return "redis: TLS: the server's certificate failed verification";
    }
    if (client_certificate_required(reason)) {
        return CLIENT_CERTIFICATE_REQUIRED;
    }
    if (reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE ||
        reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE) {
        return "redis: TLS: the server refused the handshake (a client certificate required, "
               "or none of its protocol versions and ciphers shared)";
    }
    if (reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG) {
        return "redis: TLS: the server did not answer in TLS (a plain port?)";
    }
    return "redis: TLS: handshake failed (connection closed or refused by the server)";
}

/* The cause of a TLS failure after the handshake (TLS 1.3 servers refuse a missing client
 * certificate only once the client has sent its first bytes). */
static const char *io_cause(void)
{
    unsigned long e = ERR_peek_last_error();
    int reason = ERR_GET_REASON(e);
    ERR_clear_error();
    if (client_certificate_required(reason)) {
        return CLIENT_CERTIFICATE_REQUIRED;
    }
    if (reason == SSL_R_SSLV3_ALERT_BAD_CERTIFICATE ||
        reason == SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN ||
        reason == SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE) {
        return "redis: TLS: the server refused the client certificate";
    }
    return "redis: TLS: connection failed (protocol error or alert from the server)";
}

wk_status wk__rtls_connect(wk__rconn *c, void *ctx, const char *host, const char *server_name,
                           int64_t deadline, wk_error *err)
{
    SSL *ssl = SSL_new(ctx);
    BIO *bio = ssl != NULL ? BIO_new(nosig_method) : NULL;
    if (bio == NULL) {
        SSL_free(ssl);
        return wk_error_set(err, WK_ERR_NOMEM, 0, "redis: TLS: out of memory");
    }
    BIO_set_data(bio, &c->fd);
    SSL_set_bio(ssl, bio, bio);
    c->ssl = ssl;
    const char *name = server_name != NULL && server_name[0] != '\0' ? server_name : host;
    bool ip = is_ip_literal(name);
    if (!ip && SSL_set_tlsext_host_name(ssl, name) != 1) {
        return wk_error_set(err, WK_ERR_ARG, 0, "redis: TLS: the server name is not usable");
    }
    if (SSL_get_verify_mode(ssl) != SSL_VERIFY_NONE) {
        X509_VERIFY_PARAM *vp = SSL_get0_param(ssl);
        int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(vp, name) : SSL_set1_host(ssl, name);
        if (ok != 1) {
            return wk_error_set(err, WK_ERR_ARG, 0,
                                "redis: TLS: the host name cannot be verified");
        }
    }
    for (;;) {
        int r = SSL_connect(ssl);
        if (r == 1) {
            return WK_OK;
        }
        int e = SSL_get_error(ssl, r);
        short events = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (events == 0) {
            return wk_error_set(err, WK_ERR_IO, 0, handshake_cause(ssl));
        }
        for (;;) {
            int64_t left = deadline - wk__redis_now_ms();
            if (left <= 0) {
                ERR_clear_error();
                return wk_error_set(err, WK_ERR_IO, 0,
                                    "redis: TLS: handshake timed out (connect_timeout_ms)");
            }
            struct pollfd p = {c->fd, events, 0};
            int pr = poll(&p, 1, (int)left);
            if (pr > 0) {
                break;
            }
            if (pr < 0 && errno != EINTR) {
                return wk_error_set(err, WK_ERR_IO, 0, "redis: TLS: poll failed");
            }
        }
    }
}

ssize_t wk__rtls_send(wk__rconn *c, const void *p, size_t n)
{
    size_t written = 0;
    int cap = n > (size_t)INT32_MAX ? INT32_MAX : (int)n;
    int r = SSL_write_ex(c->ssl, p, (size_t)cap, &written) == 1 ? 1 : 0;
    if (r == 1) {
        return (ssize_t)written;
    }
    int e = SSL_get_error(c->ssl, 0);
    if (e == SSL_ERROR_WANT_WRITE || e == SSL_ERROR_WANT_READ) {
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_SYSCALL && errno != 0) {
        /* the server closed first: a TLS 1.3 server refuses a missing client certificate
         * after the handshake, with an alert that is waiting to be read; read it (without
         * blocking) so the failure says why */
        int saved = errno;
        char b[256];
        size_t got = 0;
        ERR_clear_error();
        (void)SSL_read_ex(c->ssl, b, sizeof b, &got);
        if (ERR_peek_last_error() != 0) {
            c->cause = io_cause();
        }
        errno = saved;
        return -1;
    }
    c->cause = io_cause();
    errno = ECONNRESET;
    return -1;
}

ssize_t wk__rtls_recv(wk__rconn *c, void *p, size_t n)
{
    size_t got = 0;
    if (SSL_read_ex(c->ssl, p, n, &got) == 1) {
        return (ssize_t)got;
    }
    int e = SSL_get_error(c->ssl, 0);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_ZERO_RETURN) {
        return 0; /* the server closed the TLS session */
    }
    if (e == SSL_ERROR_SYSCALL && errno == 0) {
        ERR_clear_error();
        return 0; /* closed without close_notify */
    }
    if (e != SSL_ERROR_SYSCALL) {
        c->cause = io_cause();
        errno = ECONNRESET;
    }
    return -1;
}

void wk__rtls_close(wk__rconn *c)
{
    if (c->ssl != NULL) {
        SSL_free(c->ssl); /* no close_notify: the socket is closed next, and a stalled
                             server must not hold the close */
        c->ssl = NULL;
        ERR_clear_error();
    }
}

bool wk__rtls_pending(const wk__rconn *c)
{
    return c->ssl != NULL && SSL_pending(c->ssl) > 0;
}
