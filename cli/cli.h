/*
 * Shared pieces of the wirekit command: the subcommand table entry, error reporting in the
 * one-line format `wirekit: <what went wrong> (at byte N)`, and whole-stream I/O helpers.
 * Exit codes: 0 success, 1 bad input or failure, 2 usage error.
 */
#ifndef WK_CLI_H
#define WK_CLI_H

#include <stdio.h>

#include "wirekit/wirekit.h"

#define WK_EXIT_OK 0
#define WK_EXIT_FAIL 1
#define WK_EXIT_USAGE 2

typedef struct wk_cli_command {
    const char *name;
    const char *summary; /* one line for `wirekit --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} wk_cli_command;

/** Prints `wirekit: <msg>` and exits-code helper: returns WK_EXIT_FAIL. */
int wk_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Prints `wirekit: <what>: <err->msg> (at byte N)` and returns WK_EXIT_FAIL. */
int wk_cli_fail_at(const char *what, const wk_error *err);
/** Prints `wirekit <cmd>: <msg>` plus a hint to use --help; returns WK_EXIT_USAGE. */
int wk_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** True when `arg` is -h or --help. */
int wk_cli_is_help(const char *arg);

/** Reads all of `path` ("-" or NULL = stdin) into a malloc'd buffer. Returns 0 or -1 (errno
 *  set; message already printed). */
int wk_cli_read_all(const char *path, uint8_t **data, size_t *len);
/** wk_cli_read_all, failing (message printed) as soon as more than `max` bytes were read; the
 *  buffer never grows past about twice `max`. */
int wk_cli_read_max(const char *path, size_t max, uint8_t **data, size_t *len);
/** Opens `path` for writing ("-" or NULL = stdout). NULL on failure (message printed). */
FILE *wk_cli_open_out(const char *path);

#endif
