/*
 * A private redis-server for tests that must kill and restart Redis: started on a free
 * loopback port in a temporary directory, never the shared one.
 */
#ifndef REDIS_SERVER_H
#define REDIS_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct redis_server {
    char dir[256];
    int port;
    pid_t pid;
    char url[64];
    char sock[300];            /* unix socket path (in dir) when started with one */
    const char *const *extra;  /* more redis-server arguments, NULL-terminated (or NULL) */
} redis_server;

/** Picks a free port and a temp dir, starts redis-server, waits until it answers (on a
 *  new port when the server exits because another test took the first). */
bool redis_server_start(redis_server *r);
/** Like redis_server_start() with more arguments (NULL-terminated); with `unix_socket` the
 *  server also listens on dir/redis.sock (path in r->sock). `extra` must outlive the server. */
bool redis_server_start_with(redis_server *r, const char *const *extra, bool unix_socket);
/** Like redis_server_start_with() on a given port (cluster tests need fixed port pairs). */
bool redis_server_start_at(redis_server *r, int port, const char *const *extra);
/** Starts it again on the same port (after a kill). */
bool redis_server_restart(redis_server *r);
/** SIGKILLs it and reaps it. */
void redis_server_kill(redis_server *r);
/** Kills it and removes the temp dir. */
void redis_server_stop(redis_server *r);

/* Sleeps ms milliseconds. */
void rs_sleep_ms(int ms);
/* Monotonic clock in milliseconds. */
int64_t rs_now_ms(void);
/* Runs a shell command (printf format); its first output line (trimmed) in `out` (may be
 * NULL). True when the command exited 0. */
bool rs_sh(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A free loopback port in [20000, 30000), below the ephemeral range (bound, then released). */
int rs_free_port(void);
/* A free loopback port p in [20000, 30000) with p + 10000 free too (a cluster node's bus),
 * so no client connection holds either (both below Linux's ephemeral range); -1 if none. */
int rs_free_port_with_bus(void);

/* Sends one command (argc strings of argv, lens[i] bytes each; lens NULL: strlen) to the
 * plain server on 127.0.0.1:port, within 1 s; the reply's first line, type byte included
 * (":12", "+OK", "-ERR ..."), in `out` (may be NULL). True when a reply came. */
bool rs_cmd(int port, char *out, size_t cap, int argc, const char *const *argv,
            const size_t *lens);

#endif
