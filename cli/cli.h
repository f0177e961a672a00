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

/** `wirekit pg changes` (pg_changes.c), argv[0] being "changes": the exit status. */
int wk_cli_pg_changes(int argc, char **argv);

/** Prints `wirekit: <msg>` and exits-code helper: returns WK_EXIT_FAIL. */
int wk_cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** `msg` with a library setting's C name (max_reply_bytes, ...) replaced by the option that
 *  sets it, in `buf`; `msg` itself when it names none (or `buf` is too small). */
const char *wk_cli_words(const char *msg, char *buf, size_t cap);
/** Prints `wirekit: <what>: <err->msg> (at byte N)` (wk_cli_words) and returns
 *  WK_EXIT_FAIL. */
int wk_cli_fail_at(const char *what, const wk_error *err);
/** Prints `wirekit <cmd>: <msg>` plus a hint to use --help; returns WK_EXIT_USAGE. */
int wk_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** True when `arg` is -h or --help. */
int wk_cli_is_help(const char *arg);
/** True when argv[*i] is the option `name` ("--dsn") with its value, spelled `--dsn VALUE` or
 *  `--dsn=VALUE` as in every subcommand: sets *value and moves *i onto a separate value.
 *  False, nothing changed, for another option or when the value is missing. */
bool wk_cli_opt(int argc, char **argv, int *i, const char *name, const char **value);

/* ---- options anywhere before `--`, one parser for every subcommand ---- */

/** One option a subcommand takes. */
typedef struct wk_cli_optdef {
    const char *name; /* "--dsn"; NULL ends a table */
    char short_name;  /* 'f' for -f (also -fVALUE), or 0 */
    bool value;       /* takes a value: `--dsn VALUE` or `--dsn=VALUE` */
    int id;           /* what wk_cli_next returns for it: greater than 0 */
} wk_cli_optdef;

#define WK_CLI_DONE 0    /* every argument read */
#define WK_CLI_HELP (-1) /* -h or --help */
#define WK_CLI_BAD (-2)  /* a usage error, already printed: exit WK_EXIT_USAGE */

/** The arguments of one subcommand, read in order. Operands are gathered, in their order,
 *  into argv[first .. first + nops) as the options around them are read (argv is reordered
 *  in place); after `--` every argument is an operand, and "-" always is one. */
typedef struct wk_cli_args {
    const char *cmd; /* in messages: "wirekit CMD: ..." */
    int argc;
    char **argv;
    const wk_cli_optdef *defs;
    int i, first, nops;
} wk_cli_args;

/** Starts reading argv[first..argc) against `defs` (ended by a NULL name). */
void wk_cli_args_init(wk_cli_args *a, const char *cmd, int argc, char **argv, int first,
                      const wk_cli_optdef *defs);
/** The next option: its id (with *value set when it takes one), WK_CLI_HELP, WK_CLI_BAD after
 *  printing a usage error (an unknown option, a value missing or not wanted), or WK_CLI_DONE
 *  when all arguments are read; the operands are then a->argv + a->first, a->nops of them. */
int wk_cli_next(wk_cli_args *a, const char **value);

/** Reads all of `path` ("-" or NULL = stdin) into a malloc'd buffer. Returns 0 or -1 (errno
 *  set; message already printed). */
int wk_cli_read_all(const char *path, uint8_t **data, size_t *len);
/** wk_cli_read_all, failing (message printed) as soon as more than `max` bytes were read; the
 *  buffer never grows past about twice `max`. */
int wk_cli_read_max(const char *path, size_t max, uint8_t **data, size_t *len);
/* ---- a named output file, replaced whole or not at all ---- */

/** An output: standard output, or a named file written through a temporary file. */
typedef struct wk_cli_output {
    const char *name; /* for messages: the path as given, or "standard output" */
    char *target;     /* the file renamed over (symbolic links resolved); NULL: stdout */
    char *tmp;        /* the temporary file, until renamed or removed */
    int fd;
    FILE *f;          /* on fd; write through one of them only */
} wk_cli_output;

/** Opens `path` for writing (NULL or "-" = standard output). A named file is written to a
 *  temporary file in the target's directory (the target found through symbolic links), given
 *  the target's mode when it exists (else 0666 less the umask), and renamed over the target
 *  by wk_cli_output_commit: a run that fails or is killed leaves the old file as it was (a
 *  kill by SIGINT, SIGTERM or SIGHUP also removes the temporary file). Refused when the
 *  output is the file open as `in_fd` (same device and inode, however it is named; -1: no
 *  input), which the run would destroy, also when that output is standard output opened by
 *  the shell. Returns 0, or -1 with the message printed. */
int wk_cli_output_open(wk_cli_output *o, const char *path, int in_fd);
/** Flushes o->f; for a named file, fsyncs it, closes it and renames it over the target.
 *  Returns 0, or -1 (message printed; the temporary file removed, the target untouched). */
int wk_cli_output_commit(wk_cli_output *o);
/** Gives up the output: a named file's temporary file is removed, the target untouched.
 *  Standard output is flushed. Does nothing after a commit. */
void wk_cli_output_abort(wk_cli_output *o);

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
/* Feeds the next chunk of the input to the unpacker, or finishes it at the end of the input;
 * false when the input cannot be read (the message is printed). */
bool wk_cli_input_feed(wk_cli_input *in, wk_unpacker *u);
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
