/*
 * Connection forms of the Redis store against real redis-servers started here (loopback,
 * free ports, temp dirs): the default user with a password, an ACL user, a wrong password,
 * no password where one is required, a unix socket with ?db=N, a client name, AUTH and SELECT
 * repeated after the server drops every connection, the invalidation feed behind AUTH, and the
 * causes of failures named in the message (refused, timed out). URL forms that must be refused
 * are checked without a server. Skipped (77) without redis-server. Name resolution against
 * a DNS server that never answers runs in a child in its own network and mount namespaces
 * (skipped where unshare is not allowed).
 */
#define _GNU_SOURCE /* unshare */
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"
#include "wirekit/redis.h"
#include "wk_test.h"

static const char *const auth_args[] = {
    "--requirepass", "s3cret:@/",
    "--user", "alice", "on", ">apw", "~*", "&*", "+@all", NULL};

static bool have_redis_server(void)
{
    return system("command -v redis-server >/dev/null 2>&1") == 0;
}

static bool msg_has(const wk_error *e, const char *what)
{
    return e->msg != NULL && strstr(e->msg, what) != NULL;
}

/* A put through the store interface, then a fetch of the same key. */
static wk_status put_get(wk_redis_store *s, const char *key, const char *val, bool *found,
                         wk_buf *out, wk_error *err)
{
    const wk_cache_store *st = wk_redis_store_iface(s);
    wk_status r = st->store(st->self, key, strlen(key), val, strlen(val), 60000, WK_CACHE_STORE_REPLACE, err);
    if (r != WK_OK) {
        return r;
    }
    wk_slice k = {key, strlen(key)};
    return st->fetch(st->self, 1, &k, out, found, err);
}

static wk_status fetch1(wk_redis_store *s, const char *key, bool *found, wk_buf *out,
                        wk_error *err)
{
    const wk_cache_store *st = wk_redis_store_iface(s);
    wk_slice k = {key, strlen(key)};
    return st->fetch(st->self, 1, &k, out, found, err);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

WK_TEST(urls_refused_without_a_server)
{
    static const char *const bad[] = {
        "redis://:pw@127.0.0.1:x",   "redis://h:0",          "redis://h:70000",
        "unix://relative/path",      "unix://",              "unix:///tmp/s?db=x",
        "unix:///tmp/s?name=a",      "rediss://127.0.0.1:x", "http://127.0.0.1",
        "redis://u:%zz@h",           "redis://u:%0@h",       "redis://h/abc",
        "redis://h/123456",          "redis://%00:p@h",      "redis://[::1",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        wk_redis_opts o = {0};
        o.url = bad[i];
        o.no_subscribe = true;
        wk_redis_store *s = NULL;
        wk_error e = {0};
        CHECK_MSG(wk_redis_store_new(&o, &s, &e) == WK_ERR_ARG, "accepted %s", bad[i]);
        CHECK(s == NULL && e.msg != NULL && strncmp(e.msg, "redis: ", 7) == 0);
    }
    wk_redis_opts o = {0};
    /* TLS files are read at once: a missing CA file, or a certificate without its key, fail
     * wk_redis_store_new and say which */
    o.url = "rediss://h";
    o.no_subscribe = true;
    o.tls_ca_file = "/nonexistent/ca.pem";
    wk_redis_store *s = NULL;
    wk_error e = {0};
    CHECK_STATUS(wk_redis_store_new(&o, &s, &e), WK_ERR_ARG);
    CHECK(msg_has(&e, "cannot read the CA certificates"));
    o.tls_ca_file = NULL;
    o.tls_cert_file = "/nonexistent/client.pem";
    CHECK_STATUS(wk_redis_store_new(&o, &s, &e), WK_ERR_ARG);
    CHECK(msg_has(&e, "needs its key"));
    o.tls_cert_file = NULL;
    o.tls_server_name = "";
    CHECK_STATUS(wk_redis_store_new(&o, &s, &e), WK_ERR_ARG);
    o.tls_server_name = NULL;
    o.url = "127.0.0.1:1";
    o.client_name = "has space";
    CHECK_STATUS(wk_redis_store_new(&o, &s, &e), WK_ERR_ARG);
}

WK_TEST(refused_and_timed_out_are_named)
{
    /* a port nobody listens on: bind one, close it */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
          getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    int port = ntohs(a.sin_port);
    close(fd);
    char url[64];
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", port);
    wk_redis_opts o = {0};
    o.url = url;
    o.no_subscribe = true;
    wk_redis_store *s = NULL;
    wk_error e = {0};
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_STATUS(wk_redis_store_ping(s, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "connection refused"), "message: %s", e.msg);
    wk_redis_store_free(s);

    /* a listener that never answers: the kernel accepts, nobody reads */
    fd = socket(AF_INET, SOCK_STREAM, 0);
    a.sin_port = 0;
    len = sizeof a;
    CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && listen(fd, 4) == 0 &&
          getsockname(fd, (struct sockaddr *)&a, &len) == 0);
    snprintf(url, sizeof url, "redis://:pw@127.0.0.1:%d", ntohs(a.sin_port));
    o.command_timeout_ms = 100;
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    int64_t t0 = (int64_t)time(NULL);
    CHECK_STATUS(wk_redis_store_ping(s, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "timed out"), "message: %s", e.msg);
    CHECK((int64_t)time(NULL) - t0 <= 2);
    wk_redis_store_free(s);
    close(fd);

    /* a unix socket that does not exist */
    o.url = "unix:///nonexistent-wirekit-dir/redis.sock";
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_STATUS(wk_redis_store_ping(s, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "no such unix socket"), "message: %s", e.msg);
    wk_redis_store_free(s);
}

WK_TEST(password_acl_user_wrong_password_noauth)
{
    if (!have_redis_server()) {
        SKIP("redis-server not installed");
    }
    redis_server srv;
    if (!redis_server_start_with(&srv, auth_args, false)) {
        redis_server_stop(&srv);
        SKIP("cannot start redis-server");
    }
    char url[256];
    wk_redis_opts o = {0};
    o.url = url;
    o.no_subscribe = true;
    wk_error e = {0};
    wk_buf out;
    wk_buf_init(&out, NULL, 1 << 20);
    bool found = false;

    /* the default user: the password is %-encoded in the URL (":", "@" and "/" in it) */
    snprintf(url, sizeof url, "redis://:s3cret%%3A%%40%%2F@127.0.0.1:%d/0", srv.port);
    wk_redis_store *s = NULL;
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_OK(wk_redis_store_ping(s, &e));
    CHECK_OK(put_get(s, "wkconn:1", "one", &found, &out, &e));
    CHECK(found);
    CHECK_MEM(out.data, out.len, "one", 3);
    wk_redis_store_free(s);

    /* the same password from the option, not the URL */
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", srv.port);
    o.password = "s3cret:@/";
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_OK(wk_redis_store_ping(s, &e));
    wk_redis_store_free(s);
    o.password = NULL;

    /* an ACL user */
    snprintf(url, sizeof url, "redis://alice:apw@127.0.0.1:%d", srv.port);
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    out.len = 0;
    CHECK_OK(fetch1(s, "wkconn:1", &found, &out, &e));
    CHECK(found);
    CHECK_MEM(out.data, out.len, "one", 3);
    wk_redis_store_free(s);

    /* wrong passwords: default user and ACL user */
    snprintf(url, sizeof url, "redis://:nope@127.0.0.1:%d", srv.port);
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_STATUS(wk_redis_store_ping(s, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "WRONGPASS"), "message: %s", e.msg);
    wk_redis_store_free(s);
    snprintf(url, sizeof url, "redis://alice:nope@127.0.0.1:%d", srv.port);
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_STATUS(fetch1(s, "wkconn:1", &found, &out, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "WRONGPASS"), "message: %s", e.msg);
    wk_redis_store_free(s);

    /* no password at all */
    snprintf(url, sizeof url, "redis://127.0.0.1:%d", srv.port);
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_STATUS(wk_redis_store_ping(s, &e), WK_ERR_IO);
    CHECK_MSG(msg_has(&e, "NOAUTH"), "message: %s", e.msg);
    wk_redis_store_free(s);

    wk_buf_free(&out);
    redis_server_stop(&srv);
}

/* CLIENT LIST through redis-cli as alice, for the client name. */
static bool client_listed(int port, const char *name)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "redis-cli -p %d --user alice --pass apw --no-auth-warning CLIENT LIST", port);
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        return false;
    }
    char line[1024];
    char want[160];
    snprintf(want, sizeof want, " name=%s ", name);
    bool seen = false;
    while (fgets(line, sizeof line, p) != NULL) {
        seen = seen || strstr(line, want) != NULL;
    }
    pclose(p);
    return seen;
}

WK_TEST(unix_socket_db_name_and_reconnect_repeat_auth_select)
{
    if (!have_redis_server()) {
        SKIP("redis-server not installed");
    }
    redis_server srv;
    if (!redis_server_start_with(&srv, auth_args, true)) {
        redis_server_stop(&srv);
        SKIP("cannot start redis-server");
    }
    char url[400];
    snprintf(url, sizeof url, "unix://alice:apw@%s?db=3", srv.sock);
    wk_redis_opts o = {0};
    o.url = url;
    o.client_name = "wk-conn-test";
    o.retry_ms = 50;
    wk_error e = {0};
    wk_buf out;
    wk_buf_init(&out, NULL, 1 << 20);
    bool found = false;
    wk_redis_store *s = NULL;
    CHECK_OK(wk_redis_store_new(&o, &s, &e));
    CHECK_OK(put_get(s, "wkconn:u", "sock", &found, &out, &e));
    CHECK(found);
    CHECK(client_listed(srv.port, "wk-conn-test"));
    /* the feed subscribes behind AUTH too */
    for (int i = 0; i < 200 && !wk_redis_store_feed_up(s); i++) {
        sleep_ms(10);
    }
    CHECK(wk_redis_store_feed_up(s));

    /* the key is in db 3, over TCP as well; not in db 0 */
    char tcp[128];
    snprintf(tcp, sizeof tcp, "redis://alice:apw@127.0.0.1:%d/3", srv.port);
    wk_redis_opts t = {0};
    t.url = tcp;
    t.no_subscribe = true;
    wk_redis_store *s3 = NULL;
    CHECK_OK(wk_redis_store_new(&t, &s3, &e));
    out.len = 0;
    CHECK_OK(fetch1(s3, "wkconn:u", &found, &out, &e));
    CHECK(found);
    CHECK_MEM(out.data, out.len, "sock", 4);
    wk_redis_store_free(s3);
    snprintf(tcp, sizeof tcp, "redis://alice:apw@127.0.0.1:%d", srv.port);
    CHECK_OK(wk_redis_store_new(&t, &s3, &e));
    CHECK_OK(fetch1(s3, "wkconn:u", &found, &out, &e));
    CHECK(!found);
    wk_redis_store_free(s3);

    /* the server restarts (every connection dropped, data gone): after the retry pause the
     * store reconnects, AUTHs, names itself and SELECTs 3 again */
    redis_server_kill(&srv);
    CHECK(redis_server_restart(&srv));
    int64_t t0 = (int64_t)time(NULL);
    wk_status st = WK_ERR_IO;
    while (st != WK_OK && (int64_t)time(NULL) - t0 < 5) {
        out.len = 0;
        st = put_get(s, "wkconn:u2", "again", &found, &out, &e);
        if (st != WK_OK) {
            sleep_ms(20);
        }
    }
    CHECK_MSG(st == WK_OK, "no reconnect: %s", e.msg);
    CHECK(found);
    CHECK(client_listed(srv.port, "wk-conn-test"));
    CHECK_OK(wk_redis_store_new(&t, &s3, &e)); /* db 0 */
    CHECK_OK(fetch1(s3, "wkconn:u2", &found, &out, &e));
    CHECK(!found);
    wk_redis_store_free(s3);
    for (int i = 0; i < 300 && !wk_redis_store_feed_up(s); i++) {
        sleep_ms(10);
    }
    CHECK(wk_redis_store_feed_up(s));
    wk_redis_store_free(s);
    wk_buf_free(&out);
    redis_server_stop(&srv);
}

/* A ping of redis://HOST:6379 with a 300 ms connect deadline: its status, message and
 * duration, and the server wk_redis_store_failed_server names. */
static wk_status ping_host(const char *host, wk_error *err, int64_t *ms, char *failed,
                           size_t cap)
{
    char url[128];
    snprintf(url, sizeof url, "redis://%s:6379", host);
    wk_redis_opts o = {0};
    o.url = url;
    o.connect_timeout_ms = 300;
    o.command_timeout_ms = 300;
    o.no_subscribe = true;
    wk_redis_store *s = NULL;
    wk_status st = wk_redis_store_new(&o, &s, err);
    if (st != WK_OK) {
        return st;
    }
    int64_t t0 = rs_now_ms();
    st = wk_redis_store_ping(s, err);
    *ms = rs_now_ms() - t0;
    wk_redis_store_failed_server(s, failed, cap);
    wk_redis_store_free(s);
    return st;
}

/* The child's half of the test below, in its own namespaces: loopback up, /etc/resolv.conf
 * naming 127.0.0.1 (bind-mounted over, privately), first with nothing there (the query is
 * refused: a quick "not resolved"), then with a UDP socket on port 53 that never answers
 * (glibc would wait 5 s per attempt, twice). */
static void resolve_in_namespace(const char *dir)
{
    int sk = socket(AF_INET, SOCK_DGRAM, 0);
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    CHECK(sk >= 0 && ioctl(sk, SIOCGIFFLAGS, &ifr) == 0);
    ifr.ifr_flags |= IFF_UP;
    CHECK(ioctl(sk, SIOCSIFFLAGS, &ifr) == 0);
    close(sk);
    char conf[300];
    snprintf(conf, sizeof conf, "%s/resolv.conf", dir);
    FILE *f = fopen(conf, "w");
    CHECK(f != NULL);
    fputs("nameserver 127.0.0.1\noptions timeout:5 attempts:2\n", f);
    CHECK(fclose(f) == 0);
    CHECK(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
    CHECK(mount(conf, "/etc/resolv.conf", NULL, MS_BIND, NULL) == 0);

    wk_error err;
    int64_t ms = 0;
    char failed[300];
    CHECK_STATUS(ping_host("wk-unknown.invalid", &err, &ms, failed, sizeof failed), WK_ERR_IO);
    CHECK_MSG(msg_has(&err, "host name not resolved"), "unknown name: %s", err.msg);
    CHECK_STR(failed, "wk-unknown.invalid:6379");

    int dns = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons(53);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(dns >= 0 && bind(dns, (const struct sockaddr *)&a, sizeof a) == 0);
    CHECK_STATUS(ping_host("wk-stall.invalid", &err, &ms, failed, sizeof failed), WK_ERR_IO);
    printf("# a DNS server that never answers: the connect failed after %lld ms "
           "(connect_timeout_ms 300)\n", (long long)ms);
    CHECK_MSG(msg_has(&err, "not resolved within connect_timeout_ms"), "stall: %s", err.msg);
    CHECK_STR(failed, "wk-stall.invalid:6379");
    CHECK_MSG(ms < 3000, "resolving took %lld ms against a 300 ms deadline", (long long)ms);
    close(dns);
    umount("/etc/resolv.conf");
}

WK_TEST(a_resolver_that_never_answers_is_bounded_by_the_connect_deadline)
{
    char dir[] = "/tmp/wk-resolv-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    fflush(stdout);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        if (unshare(CLONE_NEWNS | CLONE_NEWNET) != 0) {
            _exit(77);
        }
        resolve_in_namespace(dir);
        fflush(stdout);
        _exit(wk__test_failed() ? 1 : 0);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    char conf[300];
    snprintf(conf, sizeof conf, "%s/resolv.conf", dir);
    unlink(conf);
    rmdir(dir);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        SKIP("unshare(CLONE_NEWNS | CLONE_NEWNET) not allowed here");
    }
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's checks failed");
}
