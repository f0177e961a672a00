/* A private redis-server for tests (see redis_server.h). */
#include <arpa/inet.h>
#include <stdarg.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"

static bool port_free(int port);

/* A loopback port in [20000, 30000) that can be bound now: below Linux's ephemeral range, so
 * no client connection of a test running beside us can be holding it; another test may still
 * pick it first, which launch() notices (the server exits) and its callers retry. */
static int free_port(void)
{
    static unsigned seed;
    if (seed == 0) {
        seed = (unsigned)getpid() * 2246822519u + (unsigned)time(NULL);
    }
    for (int i = 0; i < 200; i++) {
        seed = seed * 1103515245u + 12345u;
        int p = 20000 + (int)((seed >> 8) % 10000);
        if (port_free(p)) {
            return p;
        }
    }
    return -1;
}

static bool answers(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = false;
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
        char buf[16];
        /* a server with a password answers -NOAUTH: up all the same */
        ok = write(fd, "PING\r\n", 6) == 6 && read(fd, buf, sizeof buf) >= 5 &&
             (memcmp(buf, "+PONG", 5) == 0 || memcmp(buf, "-NOAU", 5) == 0);
    }
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

static bool launch(redis_server *r)
{
    char port[16];
    snprintf(port, sizeof port, "%d", r->port);
    pid_t pid = fork();
    if (pid < 0) {
        return false;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0) {
            dup2(null, 1);
            dup2(null, 2);
        }
        const char *argv[64] = {"redis-server", "--port", port, "--bind", "127.0.0.1",
                                "--save", "", "--appendonly", "no", "--dir", r->dir,
                                "--daemonize", "no"};
        int n = 13;
        if (r->sock[0] != '\0') {
            argv[n++] = "--unixsocket";
            argv[n++] = r->sock;
            argv[n++] = "--unixsocketperm";
            argv[n++] = "700";
        }
        for (int i = 0; r->extra != NULL && r->extra[i] != NULL && n < 63; i++) {
            argv[n++] = r->extra[i];
        }
        argv[n] = NULL;
        execvp("redis-server", (char *const *)argv);
        _exit(127);
    }
    r->pid = pid;
    for (int i = 0; i < 200; i++) {
        if (answers(r->port)) {
            return true;
        }
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            r->pid = 0; /* it exited: a port taken meanwhile, most likely */
            return false;
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

bool redis_server_start(redis_server *r)
{
    return redis_server_start_with(r, NULL, false);
}

bool redis_server_start_with(redis_server *r, const char *const *extra, bool unix_socket)
{
    memset(r, 0, sizeof *r);
    r->extra = extra;
    snprintf(r->dir, sizeof r->dir, "/tmp/wk-redis-test-XXXXXX");
    if (mkdtemp(r->dir) == NULL) {
        return false;
    }
    if (unix_socket) {
        snprintf(r->sock, sizeof r->sock, "%s/redis.sock", r->dir);
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        r->port = free_port();
        if (r->port <= 0) {
            break;
        }
        snprintf(r->url, sizeof r->url, "redis://127.0.0.1:%d", r->port);
        if (launch(r)) {
            return true;
        }
        redis_server_kill(r);
    }
    rmdir(r->dir);
    return false;
}

bool redis_server_start_at(redis_server *r, int port, const char *const *extra)
{
    memset(r, 0, sizeof *r);
    r->extra = extra;
    snprintf(r->dir, sizeof r->dir, "/tmp/wk-redis-test-XXXXXX");
    if (mkdtemp(r->dir) == NULL) {
        return false;
    }
    r->port = port;
    snprintf(r->url, sizeof r->url, "redis://127.0.0.1:%d", r->port);
    return launch(r);
}

bool redis_server_restart(redis_server *r)
{
    return launch(r);
}

void redis_server_kill(redis_server *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGKILL);
        waitpid(r->pid, NULL, 0);
        r->pid = 0;
    }
}

void redis_server_stop(redis_server *r)
{
    redis_server_kill(r);
    if (r->sock[0] != '\0') {
        unlink(r->sock);
    }
    char nodes[300];
    snprintf(nodes, sizeof nodes, "%s/nodes.conf", r->dir);
    unlink(nodes); /* a cluster node's state */
    snprintf(nodes, sizeof nodes, "%s/dump.rdb", r->dir);
    unlink(nodes); /* written for a replica's full synchronisation */
    rmdir(r->dir);
}

void rs_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

int64_t rs_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool rs_sh(char *out, size_t cap, const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    FILE *p = popen(cmd, "r");
    if (p == NULL) {
        return false;
    }
    char line[512] = "";
    if (fgets(line, sizeof line, p) == NULL) {
        line[0] = '\0';
    }
    char rest[512];
    while (fgets(rest, sizeof rest, p) != NULL) {
    }
    int rc = pclose(p);
    line[strcspn(line, "\r\n")] = '\0';
    if (out != NULL) {
        snprintf(out, cap, "%s", line);
    }
    return rc == 0;
}

bool rs_cmd(int port, char *out, size_t cap, int argc, const char *const *argv,
            const size_t *lens)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) {
        return false;
    }
    struct timeval tv = {1, 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    (void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = connect(fd, (struct sockaddr *)&a, sizeof a) == 0;
    char head[32];
    int hn = snprintf(head, sizeof head, "*%d\r\n", argc);
    ok = ok && write(fd, head, (size_t)hn) == hn;
    for (int i = 0; i < argc && ok; i++) {
        size_t l = lens != NULL ? lens[i] : strlen(argv[i]);
        hn = snprintf(head, sizeof head, "$%zu\r\n", l);
        ok = write(fd, head, (size_t)hn) == hn && write(fd, argv[i], l) == (ssize_t)l &&
             write(fd, "\r\n", 2) == 2;
    }
    char line[512];
    size_t n = 0;
    while (ok && n + 1 < sizeof line) {
        ssize_t r = read(fd, line + n, 1);
        if (r != 1) {
            ok = false;
        } else if (line[n] == '\n') {
            break;
        } else {
            n++;
        }
    }
    close(fd);
    if (ok && out != NULL && cap > 0) {
        while (n > 0 && line[n - 1] == '\r') {
            n--;
        }
        line[n] = '\0';
        snprintf(out, cap, "%s", line);
    }
    return ok;
}

int rs_free_port(void)
{
    return free_port();
}

/* True when 127.0.0.1:port can be bound now. */
static bool port_free(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0;
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

int rs_free_port_with_bus(void)
{
    static unsigned seed;
    if (seed == 0) {
        seed = (unsigned)getpid() * 2654435761u;
    }
    for (int i = 0; i < 200; i++) {
        seed = seed * 1103515245u + 12345u;
        int p = 20000 + (int)((seed >> 8) % 10000);
        if (port_free(p) && port_free(p + 10000)) {
            return p;
        }
    }
    return -1;
}
