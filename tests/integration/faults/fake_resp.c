/* A misbehaving Redis for fault tests (see fake_resp.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "fake_resp.h"

typedef struct conn_arg {
    fake_resp *f;
    int fd;
} conn_arg;

static bool send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
        if (w <= 0) {
            return false;
        }
        c += w;
        n -= (size_t)w;
    }
    return true;
}

/* Parses one RESP command at buf[0..len); returns its length (0: incomplete) and copies the
 * upper-cased command name into name. */
static size_t parse_cmd(const char *buf, size_t len, char *name, size_t cap)
{
    if (len < 4 || buf[0] != '*') {
        return 0;
    }
    const char *end = buf + len;
    char *p;
    long argc = strtol(buf + 1, &p, 10);
    if (p + 2 > end || p[0] != '\r') {
        return 0;
    }
    p += 2;
    name[0] = '\0';
    for (long i = 0; i < argc; i++) {
        if (p >= end || *p != '$') {
            return 0;
        }
        char *q;
        long l = strtol(p + 1, &q, 10);
        if (q + 2 > end || q[0] != '\r') {
            return 0;
        }
        q += 2;
        if (q + l + 2 > end) {
            return 0;
        }
        if (i == 0) {
            size_t n = (size_t)l < cap - 1 ? (size_t)l : cap - 1;
            for (size_t k = 0; k < n; k++) {
                char ch = q[k];
                name[k] = (char)(ch >= 'a' && ch <= 'z' ? ch - 32 : ch);
            }
            name[n] = '\0';
        }
        p = q + l + 2;
    }
    return (size_t)(p - buf);
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void *serve(void *arg)
{
    conn_arg *a = arg;
    fake_resp *f = a->f;
    int fd = a->fd;
    free(a);
    char buf[65536];
    size_t len = 0;
    while (!f->stop) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) {
            continue;
        }
        ssize_t r = recv(fd, buf + len, sizeof buf - len, 0);
        if (r <= 0) {
            break;
        }
        len += (size_t)r;
        char name[32];
        size_t used;
        while ((used = parse_cmd(buf, len, name, sizeof name)) > 0) {
            memmove(buf, buf + used, len - used);
            len -= used;
            bool ok = true;
            if (strcmp(name, "PING") == 0) {
                ok = send_all(fd, "+PONG\r\n", 7);
            } else if (strcmp(name, "GET") == 0) {
                pthread_mutex_lock(&f->mu);
                f->gets++;
                pthread_mutex_unlock(&f->mu);
                if (f->silent_get) {
                    continue;
                }
                ok = send_all(fd, f->get_reply, f->get_reply_len);
                static char chunk[65536];
                memset(chunk, 'x', sizeof chunk);
                for (size_t left = f->stream_bytes; ok && left > 0 && !f->stop;) {
                    size_t n = left < sizeof chunk ? left : sizeof chunk;
                    ok = send_all(fd, chunk, n);
                    left -= n;
                }
                while (ok && f->dribble_ms > 0 && !f->stop) {
                    ok = send_all(fd, "x", 1);
                    nap_ms(f->dribble_ms);
                }
                if (f->close_after_get) {
                    ok = false;
                }
            } else if (f->other_name != NULL && strcmp(name, f->other_name) == 0) {
                ok = send_all(fd, f->other_reply, strlen(f->other_reply));
            } else if (strcmp(name, "DEL") == 0 || strcmp(name, "PUBLISH") == 0) {
                ok = send_all(fd, ":0\r\n", 4);
            } else {
                ok = send_all(fd, "+OK\r\n", 5);
            }
            if (!ok) {
                goto out;
            }
        }
    }
out:
    shutdown(fd, SHUT_RDWR);
    return NULL;
}

static void *accept_loop(void *arg)
{
    fake_resp *f = arg;
    while (!f->stop) {
        struct pollfd p = {f->listen_fd, POLLIN, 0};
        if (poll(&p, 1, 50) <= 0) {
            continue;
        }
        int fd = accept(f->listen_fd, NULL, NULL);
        if (fd < 0) {
            continue;
        }
        pthread_mutex_lock(&f->mu);
        conn_arg *a = malloc(sizeof *a);
        if (f->nconn == FAKE_RESP_MAX_CONN || a == NULL) {
            pthread_mutex_unlock(&f->mu);
            free(a);
            close(fd);
            continue;
        }
        a->f = f;
        a->fd = fd;
        f->conn_fds[f->nconn] = fd;
        if (pthread_create(&f->conn_threads[f->nconn], NULL, serve, a) != 0) {
            free(a);
            close(fd);
        } else {
            f->nconn++;
        }
        pthread_mutex_unlock(&f->mu);
    }
    return NULL;
}

bool fake_resp_start(fake_resp *f)
{
    f->stop = 0;
    f->nconn = 0;
    f->gets = 0;
    pthread_mutex_init(&f->mu, NULL);
    f->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (f->listen_fd < 0) {
        return false;
    }
    int one = 1;
    setsockopt(f->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    const char *base_env = getenv("WK_FAULT_PORT_BASE");
    int base = base_env != NULL ? (int)strtol(base_env, NULL, 10) : 27000;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool bound = false;
    for (int port = base; port > 0 && port < base + 100 && !bound; port++) {
        a.sin_port = htons((uint16_t)port);
        bound = bind(f->listen_fd, (struct sockaddr *)&a, sizeof a) == 0;
    }
    if (!bound) {
        a.sin_port = 0;
        bound = bind(f->listen_fd, (struct sockaddr *)&a, sizeof a) == 0;
    }
    socklen_t alen = sizeof a;
    if (!bound || listen(f->listen_fd, 16) != 0 ||
        getsockname(f->listen_fd, (struct sockaddr *)&a, &alen) != 0) {
        close(f->listen_fd);
        return false;
    }
    f->port = ntohs(a.sin_port);
    snprintf(f->url, sizeof f->url, "redis://127.0.0.1:%d", f->port);
    return pthread_create(&f->accept_thread, NULL, accept_loop, f) == 0;
}

void fake_resp_stop(fake_resp *f)
{
    f->stop = 1;
    pthread_join(f->accept_thread, NULL);
    for (int i = 0; i < f->nconn; i++) {
        pthread_join(f->conn_threads[i], NULL);
        close(f->conn_fds[i]);
    }
    close(f->listen_fd);
    pthread_mutex_destroy(&f->mu);
}
