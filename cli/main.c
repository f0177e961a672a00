/* The wirekit command: dispatches to one subcommand per cli/cmd_*.c, and fails (exit 1) when
 * what a command printed on standard output could not all be written (a full disk, a closed
 * pipe when SIGPIPE is ignored), so that such output is never taken for a success. */
#include <errno.h>
#include <string.h>

#include "cli.h"
#include "cli_commands.h"

static void print_help(FILE *out)
{
    fprintf(out, "usage: wirekit <command> [options] [args]\n\n"
                 "Fast, safe wire-format codecs: MessagePack, JSON, PostgreSQL values, media "
                 "types.\n\ncommands:\n");
    for (size_t i = 0; wk_cli_commands[i] != NULL; i++) {
        fprintf(out, "  %-10s %s\n", wk_cli_commands[i]->name, wk_cli_commands[i]->summary);
    }
    fprintf(out, "\noptions:\n"
                 "  -h, --help  this help ('wirekit <command> --help' describes each command)\n"
                 "  --version   print the version\n\n"
                 "Exit status: 0 success, 1 bad input or failure, 2 usage error (and, for pg,\n"
                 "no connection).\n");
}

/* Flushes standard output after a command that succeeded: a write that failed now or
 * earlier turns the success into a failure (a command that failed has said why). */
static int finish_stdout(int rc)
{
    errno = 0;
    if (rc != WK_EXIT_OK || (fflush(stdout) == 0 && !ferror(stdout))) {
        return rc;
    }
    int e = errno;
    wk_cli_fail("cannot write standard output%s%s", e != 0 ? ": " : "", e != 0 ? strerror(e) : "");
    return WK_EXIT_FAIL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_help(stderr);
        return WK_EXIT_USAGE;
    }
    if (wk_cli_is_help(argv[1])) {
        print_help(stdout);
        return finish_stdout(WK_EXIT_OK);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("wirekit %s\n", WK_VERSION_STRING);
        return finish_stdout(WK_EXIT_OK);
    }
    for (size_t i = 0; wk_cli_commands[i] != NULL; i++) {
        if (strcmp(argv[1], wk_cli_commands[i]->name) == 0) {
            return finish_stdout(wk_cli_commands[i]->run(argc - 1, argv + 1));
        }
    }
    fprintf(stderr, "wirekit: unknown command '%s'\nTry 'wirekit --help'.\n", argv[1]);
    return WK_EXIT_USAGE;
}
