/*
 * The Redis store over TLS, against Debian's redis-server 7 started with --tls-port and
 * certificates made here with the openssl command (a CA, a server certificate for
 * 127.0.0.1 and localhost, a client certificate, and a second CA that signed none of them):
 * a put and get over rediss:// (and the memory tier's feed, with tracking, over TLS), the CA
 * as a file and as a hashed directory; a wrong CA, a host name mismatch, a server that
 * requires a client certificate (without one, then with one), a listener that never answers
 * the handshake (the connect deadline holds, measured), a Cluster whose nodes speak TLS on
 * their TLS ports, and a Sentinel over TLS. Every failure must name its cause.
 *
 * Each server listens on a plain port too (the harness's readiness check, redis-cli) and on
 * a free TLS port; the cluster's ports are chosen free with their bus ports (+10000).
 * Skipped (77) without redis-server, redis-cli or openssl.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "redis_server.h"
#include "wirekit/redis.h"
#include "wk_test.h"

static char dir[128];
static char ca[200], other_ca[200], cadir[200], srv_crt[200], srv_key[200], cli_crt[200],
    cli_key[200];

static void remove_certs(void)
{
    if (dir[0] != '\0') {
        rs_sh(NULL, 0, "rm -rf %s", dir);
    }
}

/* Makes the certificates once (EC P-256: fast to generate). */
static bool make_certs(void)
{
    if (dir[0] != '\0') {
        return true;
    }
    if (system("command -v openssl >/dev/null 2>&1 && command -v redis-server >/dev/null 2>&1 "
               "&& command -v redis-cli >/dev/null 2>&1") != 0) {
        return false;
    }
    snprintf(dir, sizeof dir, "/tmp/wk-tls-test-XXXXXX");
    if (mkdtemp(dir) == NULL) {
        dir[0] = '\0';
        return false;
    }
    char script[200];
    snprintf(script, sizeof script, "%s/gen.sh", dir);
    FILE *f = fopen(script, "w");
    if (f == NULL) {
        return false;
    }
    fprintf(f,
            "set -e\ncd %s\n"
            "k='-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes'\n"
            "openssl req -x509 $k -keyout ca.key -out ca.crt -days 2 -subj /CN=wk-test-ca\n"
            "openssl req -x509 $k -keyout other.key -out other.crt -days 2 -subj /CN=wk-other\n"
            "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > san.ext\n"
            "openssl req $k -keyout server.key -out server.csr -subj /CN=localhost\n"
            "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
            "-out server.crt -days 2 -extfile san.ext\n"
            "openssl req $k -keyout client.key -out client.csr -subj /CN=wk-client\n"
            "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
            "-out client.crt -days 2\n"
            "mkdir cadir && cp ca.crt cadir/ && openssl rehash cadir\n",
            dir);
    fclose(f);
    atexit(remove_certs);
    if (!rs_sh(NULL, 0, "sh %s >/dev/null 2>&1", script)) {
        return false;
    }
    snprintf(ca, sizeof ca, "%s/ca.crt", dir);
    snprintf(other_ca, sizeof other_ca, "%s/other.crt", dir);
    snprintf(cadir, sizeof cadir, "%s/cadir", dir);
    snprintf(srv_crt, sizeof srv_crt, "%s/server.crt", dir);
    snprintf(srv_key, sizeof srv_key, "%s/server.key", dir);
    snprintf(cli_crt, sizeof cli_crt, "%s/client.crt", dir);
    snprintf(cli_key, sizeof cli_key, "%s/client.key", dir);
    return true;
}

/* A redis-server with a plain port (free) and a TLS port (tls_port[0..)). */
typedef struct tls_server {
    redis_server r;
    int tls_port;
    char tls_port_s[16];
    const char *args[24];
} tls_server;

/* Starts a server with a TLS port beside its plain one; a TLS port another test took first
 * makes the server exit, and both ports are picked again. */
static bool tls_start(tls_server *t, const char *auth_clients)
{
    for (int attempt = 0; attempt < 5; attempt++) {
        memset(t, 0, sizeof *t);
        t->tls_port = rs_free_port();
        snprintf(t->tls_port_s, sizeof t->tls_port_s, "%d", t->tls_port);
        const char *a[] = {"--tls-port",     t->tls_port_s, "--tls-cert-file",    srv_crt,
                           "--tls-key-file", srv_key,       "--tls-ca-cert-file", ca,
                           "--tls-auth-clients", auth_clients, NULL};
        memcpy(t->args, a, sizeof a);
        if (redis_server_start_with(&t->r, t->args, false)) {
            return true;
        }
    }
    return false;
}

static wk_redis_opts tls_opts(const char *url)
{
    wk_redis_opts o = {0};
    o.url = url;
    o.tls_ca_file = ca;
    o.connect_timeout_ms = 2000;
    o.command_timeout_ms = 2000;
    o.no_subscribe = true;
    return o;
}

static bool msg_has(const wk_error *e, const char *part)
{
    return e->msg != NULL && strstr(e->msg, part) != NULL;
}

static wk_status put(wk_redis_store *s, const char *key, const char *val, wk_error *e)
{
    const wk_cache_store *st = wk_redis_store_iface(s);
    return st->store(st->self, key, strlen(key), val, strlen(val), 600000,
                     WK_CACHE_STORE_REPLACE, e);
}

static bool get_is(wk_redis_store *s, const char *key, const char *want)
{
    const wk_cache_store *st = wk_redis_store_iface(s);
    wk_buf b;
    wk_buf_init(&b, NULL, 1 << 20);
    wk_slice k = {key, strlen(key)};
    bool found = false;
    bool ok = st->fetch(st->self, 1, &k, &b, &found, NULL) == WK_OK && found &&
              b.len == strlen(want) && memcmp(b.data, want, b.len) == 0;
    wk_buf_free(&b);
    return ok;
}

/* Pings a store made from `o`: the status, the message in *e. */
static wk_status ping_with(const wk_redis_opts *o, wk_error *e)
{
    wk_redis_store *s = NULL;
    wk_status st = wk_redis_store_new(o, &s, e);
    if (st == WK_OK) {
        st = wk_redis_store_ping(s, e);
    }
    wk_redis_store_free(s);
    return st;
}

WK_TEST(tls_put_get_over_rediss_with_the_ca_as_file_and_directory)
{
    if (!make_certs()) {
        SKIP("openssl, redis-server or redis-cli missing (or certificates not made)");
    }
    tls_server t;
    CHECK(tls_start(&t, "no"));
    char url[64];
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d", t.tls_port);
    wk_redis_opts o = tls_opts(url);
    wk_redis_store *s = NULL;
    wk_error e = {0};
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_OK(wk_redis_store_ping(s, &e));
    CHECK_OK(put(s, "tls:1", "over tls", &e));
    CHECK(get_is(s, "tls:1", "over tls"));
    wk_redis_store_free(s);
    /* the value is really in that server: a plain redis-cli on its plain port reads it */
    char out[64];
    CHECK(rs_sh(out, sizeof out, "redis-cli -p %d GET tls:1", t.r.port));
    CHECK_STR(out, "over tls");
    /* the CA as a hashed directory, and `tls` with a host:port URL */
    snprintf(url, sizeof url, "localhost:%d", t.tls_port);
    o = tls_opts(url);
    o.tls = true;
    o.tls_ca_file = NULL;
    o.tls_ca_dir = cadir;
    CHECK_OK(ping_with(&o, &e));
    /* the feed over TLS, with tracking: up, and tracking on */
    o = tls_opts(url);
    o.tls = true;
    o.no_subscribe = false;
    o.heartbeat_ms = 200;
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    for (int i = 0; i < 300 && !wk_redis_store_tracking(s); i++) {
        rs_sleep_ms(10);
    }
    CHECK(wk_redis_store_tracking(s));
    wk_redis_store_free(s);
    redis_server_stop(&t.r);
}

WK_TEST(tls_wrong_ca_and_host_name_mismatch_are_named)
{
    if (!make_certs()) {
        SKIP("openssl, redis-server or redis-cli missing (or certificates not made)");
    }
    tls_server t;
    CHECK(tls_start(&t, "no"));
    char url[64];
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d", t.tls_port);
    wk_redis_opts o = tls_opts(url);
    o.tls_ca_file = other_ca;
    wk_error e = {0};
    CHECK_STATUS(ping_with(&o, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "certificate not trusted"), "wrong CA: %s", e.msg);
    /* a name the certificate does not carry */
    o = tls_opts(url);
    o.tls_server_name = "wrong.example";
    CHECK_STATUS(ping_with(&o, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "host name mismatch"), "mismatch: %s", e.msg);
    /* and one it does, connected by IP */
    o.tls_server_name = "localhost";
    CHECK_OK(ping_with(&o, &e));
    /* the opt-out accepts anything: the wrong CA and the wrong name */
    o.tls_ca_file = other_ca;
    o.tls_server_name = "wrong.example";
    o.tls_insecure_skip_verify = true;
    CHECK_OK(ping_with(&o, &e));
    /* TLS to a plain port */
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d", t.r.port);
    o = tls_opts(url);
    CHECK_STATUS(ping_with(&o, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "TLS"), "plain port: %s", e.msg);
    redis_server_stop(&t.r);
}

WK_TEST(tls_client_certificate_required_then_given)
{
    if (!make_certs()) {
        SKIP("openssl, redis-server or redis-cli missing (or certificates not made)");
    }
    tls_server t;
    CHECK(tls_start(&t, "yes"));
    char url[64];
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d", t.tls_port);
    wk_redis_opts o = tls_opts(url);
    wk_error e = {0};
    CHECK_STATUS(ping_with(&o, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "client certificate"), "no client certificate: %s", e.msg);
    o.tls_cert_file = cli_crt;
    o.tls_key_file = cli_key;
    CHECK_OK(ping_with(&o, &e));
    /* a key that is not the certificate's is refused at once, naming neither's contents */
    o.tls_key_file = srv_key;
    wk_redis_store *s = NULL;
    CHECK_STATUS(wk_redis_store_new(&o, &s, &e), WK_ERR_ARG);
    CHECK(msg_has(&e, "does not match"));
    redis_server_stop(&t.r);
}

WK_TEST(tls_handshake_stalled_by_the_server_holds_the_connect_deadline)
{
    if (!make_certs()) {
        SKIP("openssl, redis-server or redis-cli missing (or certificates not made)");
    }
    /* a listener that never accepts: the kernel completes TCP, nobody answers the hello */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 8) == 0 &&
          getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    char url[64];
    snprintf(url, sizeof url, "rediss://127.0.0.1:%d", ntohs(a.sin_port));
    wk_redis_opts o = tls_opts(url);
    o.connect_timeout_ms = 300;
    o.command_timeout_ms = 300;
    wk_error e = {0};
    int64_t t0 = rs_now_ms();
    CHECK_STATUS(ping_with(&o, &e), WK_ERR_IO);
    int64_t took = rs_now_ms() - t0;
    printf("# tls: a stalled handshake failed after %lld ms (connect_timeout_ms 300)\n",
           (long long)took);
    CHECK_MSG(msg_has(&e, "handshake timed out"), "stall: %s", e.msg);
    CHECK_MSG(took < 3000, "took %lld ms", (long long)took);
    close(fd);
}

/* ---- Cluster over TLS ---------------------------------------------------------------------- */

#define CNODES 3

WK_TEST(tls_cluster_put_get_on_every_master_over_tls_ports)
{
    if (!make_certs()) {
        SKIP("openssl, redis-server or redis-cli missing (or certificates not made)");
    }
    static redis_server nodes[CNODES];
    static char tport[CNODES][16];
    static const char *args[CNODES][24];
    int tp[CNODES];
    for (int i = 0; i < CNODES; i++) {
        tp[i] = rs_free_port_with_bus();
        CHECK(tp[i] > 0);
        snprintf(tport[i], sizeof tport[i], "%d", tp[i]);
        const char *a[] = {"--tls-port",         tport[i],  "--tls-cert-file", srv_crt,
                           "--tls-key-file",     srv_key,   "--tls-ca-cert-file", ca,
                           "--tls-auth-clients", "no",      "--tls-cluster",   "yes",
                           "--tls-replication",  "yes",     "--cluster-enabled", "yes",
                           "--cluster-config-file", "nodes.conf", NULL};
        memcpy(args[i], a, sizeof a);
        CHECK(redis_server_start_with(&nodes[i], args[i], false));
    }
    char out[512];
    bool made = rs_sh(out, sizeof out,
                      "redis-cli --tls --cacert %s --cluster create 127.0.0.1:%d 127.0.0.1:%d "
                      "127.0.0.1:%d --cluster-replicas 0 --cluster-yes >/dev/null 2>&1",
                      ca, tp[0], tp[1], tp[2]);
    CHECK_MSG(made, "redis-cli --tls --cluster create failed");
    for (int t = 0, ok = 0; !ok; t++) {
        CHECK_MSG(t < 300, "the TLS cluster never reached cluster_state:ok");
        ok = 1;
        for (int i = 0; i < CNODES && ok; i++) {
            ok = rs_sh(out, sizeof out, "redis-cli -p %d cluster info | grep cluster_state",
                       nodes[i].port) &&
                 strncmp(out, "cluster_state:ok", 16) == 0;
        }
        rs_sleep_ms(50);
    }
    char seed[32];
    snprintf(seed, sizeof seed, "127.0.0.1:%d", tp[1]);
    const char *seeds[1] = {seed};
    wk_redis_opts o = tls_opts(NULL);
    o.tls = true;
    o.cluster_nodes = seeds;
    o.ncluster_nodes = 1;
    o.no_subscribe = false;
    o.heartbeat_ms = 200;
    wk_redis_store *s = NULL;
    wk_error e = {0};
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    /* keys over the three masters: each reached on its TLS port (a plain port would fail
     * the handshake) */
    for (int k = 0; k < 30; k++) {
        char key[32], val[32];
        snprintf(key, sizeof key, "tlsc:%d", k);
        snprintf(val, sizeof val, "v%d", k);
        CHECK_MSG(put(s, key, val, &e) == WK_OK, "put %s: %s", key, e.msg);
        CHECK(get_is(s, key, val));
    }
    for (int i = 0; i < CNODES; i++) {
        CHECK(rs_sh(out, sizeof out, "redis-cli -p %d dbsize", nodes[i].port));
        CHECK_MSG(strtol(out, NULL, 10) > 0, "node %d holds no key", i);
    }
    /* the feed: one tracking connection per master, over TLS */
    for (int i = 0; i < 300 && !wk_redis_store_tracking(s); i++) {
        rs_sleep_ms(10);
    }
    CHECK(wk_redis_store_tracking(s));
    wk_redis_store_free(s);
    for (int i = 0; i < CNODES; i++) {
        redis_server_stop(&nodes[i]);
    }
}

/* ---- Sentinel over TLS --------------------------------------------------------------------- */

WK_TEST(tls_sentinel_names_the_master_over_tls)
{
    if (!make_certs()) {
        SKIP("openssl, redis-server or redis-cli missing (or certificates not made)");
    }
    tls_server m;
    CHECK(tls_start(&m, "no"));
    redis_server sent;
    memset(&sent, 0, sizeof sent);
    snprintf(sent.dir, sizeof sent.dir, "%s/sentinel", dir);
    CHECK(mkdir(sent.dir, 0700) == 0);
    sent.port = rs_free_port();
    int stls = rs_free_port();
    char conf[300];
    snprintf(conf, sizeof conf, "%s/sentinel.conf", sent.dir);
    FILE *f = fopen(conf, "w");
    CHECK(f != NULL);
    fprintf(f,
            "port %d\nbind 127.0.0.1\ndir %s\ntls-port %d\ntls-cert-file %s\n"
            "tls-key-file %s\ntls-ca-cert-file %s\ntls-auth-clients no\ntls-replication yes\n"
            "sentinel monitor wkm 127.0.0.1 %d 1\n",
            sent.port, sent.dir, stls, srv_crt, srv_key, ca, m.tls_port);
    fclose(f);
    pid_t pid = fork();
    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL) {
            _exit(127);
        }
        execlp("redis-server", "redis-server", conf, "--sentinel", (char *)NULL);
        _exit(127);
    }
    sent.pid = pid;
    char out[128];
    for (int t = 0; !rs_sh(out, sizeof out, "redis-cli -p %d ping 2>/dev/null", sent.port) ||
                    strcmp(out, "PONG") != 0;
         t++) {
        CHECK_MSG(t < 200, "the sentinel never answered");
        rs_sleep_ms(20);
    }
    char sa[32];
    snprintf(sa, sizeof sa, "127.0.0.1:%d", stls);
    const char *sentinels[1] = {sa};
    wk_redis_opts o = tls_opts(NULL);
    o.tls = true;
    o.sentinels = sentinels;
    o.nsentinels = 1;
    o.sentinel_master = "wkm";
    wk_redis_store *s = NULL;
    wk_error e = {0};
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_MSG(wk_redis_store_ping(s, &e) == WK_OK, "ping: %s", e.msg);
    CHECK_OK(put(s, "tlss:1", "via sentinel", &e));
    CHECK(get_is(s, "tlss:1", "via sentinel"));
    wk_redis_store_free(s);
    CHECK(rs_sh(out, sizeof out, "redis-cli -p %d GET tlss:1", m.r.port));
    CHECK_STR(out, "via sentinel");
    redis_server_kill(&sent);
    redis_server_stop(&m.r);
}

/* ---- the CLI over TLS ------------------------------------------------------------------- */

#ifdef WK_CLI_PATH
WK_TEST(tls_cli_put_get_and_a_wrong_ca_exits_1_with_the_cause)
{
    if (!make_certs()) {
        SKIP("openssl, redis-server or redis-cli missing (or certificates not made)");
    }
    tls_server t;
    CHECK(tls_start(&t, "no"));
    char out[512];
    CHECK(rs_sh(out, sizeof out, "%s cache --redis rediss://127.0.0.1:%d --cacert %s put 7 "
                                 "'{\"tls\":true}'",
                WK_CLI_PATH, t.tls_port, ca));
    CHECK_STR(out, "");
    CHECK(rs_sh(out, sizeof out, "%s cache --redis 127.0.0.1:%d --tls --cacert %s get 7",
                WK_CLI_PATH, t.tls_port, ca));
    CHECK_STR(out, "{\"tls\":true}");
    /* a wrong CA: exit 1, and the message says why */
    CHECK(rs_sh(out, sizeof out,
                "%s cache --redis rediss://127.0.0.1:%d --cacert %s get 7 >/dev/null 2>&1; "
                "echo $?",
                WK_CLI_PATH, t.tls_port, other_ca));
    CHECK_STR(out, "1");
    CHECK(rs_sh(out, sizeof out, "%s cache --redis rediss://127.0.0.1:%d --cacert %s get 7 2>&1",
                WK_CLI_PATH, t.tls_port, other_ca) == false);
    CHECK_MSG(strstr(out, "certificate not trusted") != NULL, "wrong CA: %s", out);
    /* a host name mismatch through --sni, and --insecure accepting it */
    rs_sh(out, sizeof out, "%s cache --redis rediss://127.0.0.1:%d --cacert %s --sni "
                           "wrong.example get 7 2>&1",
          WK_CLI_PATH, t.tls_port, ca);
    CHECK_MSG(strstr(out, "host name mismatch") != NULL, "mismatch: %s", out);
    CHECK(rs_sh(out, sizeof out, "%s cache --redis rediss://127.0.0.1:%d --insecure --sni "
                                 "wrong.example get 7",
                WK_CLI_PATH, t.tls_port));
    CHECK_STR(out, "{\"tls\":true}");
    /* TLS options without TLS are a usage error, not a silent plain connection */
    CHECK(rs_sh(out, sizeof out, "%s cache --redis 127.0.0.1:%d --cacert %s get 7 >/dev/null "
                                 "2>&1; echo $?",
                WK_CLI_PATH, t.r.port, ca));
    CHECK_STR(out, "2");
    redis_server_stop(&t.r);
}
#endif
