/*
 * `wirekit bench`: runs the seed benchmarks. The suites link the C peers (msgpack-c, cJSON,
 * GMime, ...), which the library and the rest of the command must not depend on, so they live
 * in a separate program, wirekit-bench, installed beside this one; this command runs it.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int run(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (wk_cli_is_help(argv[i])) {
            printf("usage: wirekit bench [--suite NAME]... [--case TEXT] [--json] [--quick] "
                   "[--list]\n"
                   "                     [--data DIR] [--svg FILE] [--chart DIR] "
                   "[--callgrind]\n\n"
                   "Runs the seed benchmarks with the C peers side by side in one process, the\n"
                   "implementations interleaved within each repetition, and prints per case the\n"
                   "median time (and spread), throughput, allocations/op and each peer's ratio\n"
                   "to wirekit, then a one-screen summary.\n\n"
                   "  --suite NAME  run this suite only (repeatable; default: all suites)\n"
                   "  --case TEXT   only the cases whose name contains TEXT (e.g. --suite "
                   "cache\n"
                   "                --case 'local hit')\n"
                   "  --json        one JSON object per measurement instead of the table\n"
                   "  --quick       few iterations: checks that everything runs, figures are "
                   "rough\n"
                   "  --list        list the suites\n"
                   "  --data DIR    where twitter.json, citm_catalog.json and canada.json are\n"
                   "                (default: share/wirekit/bench, then the source tree's\n"
                   "                node_modules/simdjson/jsonexamples)\n"
                   "  --svg FILE    write an SVG bar chart of every measurement\n"
                   "  --chart DIR   write one SVG bar chart per suite, DIR/<suite>.svg (time\n"
                   "                per operation; for the service suite, requests per second\n"
                   "                and p99 latency per implementation)\n"
                   "  --callgrind   count instructions per operation under valgrind instead of "
                   "timing\n\n"
                   "Exit status: 0 success, 1 a failure, 2 usage error.\n");
            return WK_EXIT_OK;
        }
    }
    /* wirekit-bench sits next to this executable (build tree and install tree alike). */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char path[PATH_MAX + 32];
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash != NULL) {
            *slash = '\0';
        }
        snprintf(path, sizeof path, "%s/wirekit-bench", self);
    } else {
        snprintf(path, sizeof path, "%s/wirekit-bench", WK_CLI_LIBEXEC);
    }
    argv[0] = path;
    execv(path, argv);
    return wk_cli_fail("cannot run %s: %s (was wirekit built with -DWK_BUILD_BENCH=ON?)", path,
                       strerror(errno));
}

const wk_cli_command wk_cli_cmd_bench = {"bench", "run the seed benchmarks against C peers",
                                         run};
