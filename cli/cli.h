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
/** True when argv[*i] is the option `name` ("--dsn") with its value, spelled `--dsn VALUE` or
 *  `--dsn=VALUE` as in every subcommand: sets *value and moves *i onto a separate value.
 *  False, nothing changed, for another option or when the value is missing. */
bool wk_cli_opt(int argc, char **argv, int *i, const char *name, const char **value);

/** Reads all of `path` ("-" or NULL = stdin) into a malloc'd buffer. Returns 0 or -1 (errno
 *  set; message already printed). */
int wk_cli_read_all(const char *path, uint8_t **data, size_t *len);
/** wk_cli_read_all, failing (message printed) as soon as more than `max` bytes were read; the
 *  buffer never grows past about twice `max`. */
int wk_cli_read_max(const char *path, size_t max, uint8_t **data, size_t *len);
/** Opens `path` for writing ("-" or NULL = stdout). NULL on failure (message printed). */
FILE *wk_cli_open_out(const char *path);

/* ---- streaming input with a progress line ---- */

#define WK_CLI_PROGRESS_AUTO (-1) /* on for regular files > 64 MB when stderr is a terminal */
#define WK_CLI_CHUNK ((size_t)64 << 10)

/** An input read a chunk at a time with read(2), so that a pipe's bytes are seen as soon as
 *  they arrive. Shows a progress line on stderr (bytes, MB/s, percent, ETA) when asked. */
typedef struct wk_cli_input {
    const char *name; /* for messages: the path, or "standard input" */
    int fd;
    uint64_t size;    /* of a regular file; 0 when unknown */
    uint64_t done;    /* bytes read so far */
    bool progress;
    bool shown;       /* a progress line is on the screen */
    double t0, last;
    uint8_t *buf;
} wk_cli_input;

/** Opens `path` (NULL or "-" = stdin). `progress` is 0, 1 or WK_CLI_PROGRESS_AUTO.
 *  Returns 0 or -1 (message printed). */
int wk_cli_input_open(wk_cli_input *in, const char *path, int progress);
/** Reads the next chunk: returns its size (0 at the end), or -1 on a read error (message
 *  printed). `*data` points into the input's buffer until the next call. */
long wk_cli_input_read(wk_cli_input *in, const uint8_t **data);
/** Clears the progress line and closes the input. */
void wk_cli_input_close(wk_cli_input *in);
/** Prints `wirekit: NAME:LINE:COL: what: msg (at byte N)` (LINE 0 = no position) and
 *  returns WK_EXIT_FAIL. When the error is an unpacker's cap (WK_ERR_LIMIT) and `max_value`
 *  is not 0, a second line names that cap and --max-value. */
int wk_cli_fail_in(const char *name, uint64_t line, uint64_t col, const char *what,
                   const wk_error *err, size_t max_value);

/* ---- --max-value: the largest value convert and inspect hold in memory ---- */

#define WK_CLI_DEFAULT_MAX_VALUE ((size_t)256 << 20)

/** "123", "64K", "16M", "1G" -> bytes; 0 for a bad, zero or too large size. */
size_t wk_cli_parse_size(const char *s);

/** `progress` for a command that writes its output to standard output: WK_CLI_PROGRESS_AUTO
 *  becomes 0 when standard output is a terminal, where the progress line would break into
 *  the output; 0 and 1 stay as they are. */
int wk_cli_progress_to_stdout(int progress);

#endif
