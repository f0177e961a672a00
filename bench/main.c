/*
 * wirekit-bench: runs the benchmark suites (all, or those named with --suite), prints a table
 * per suite and a one-screen summary, or JSON lines (--json), and writes SVG charts (--svg,
 * --chart). --callgrind runs the same program again inside valgrind's callgrind tool, which
 * then counts instructions per operation instead of timing (bench.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <valgrind/valgrind.h>

#include "bench_internal.h"
#include "cli.h"
#include "wirekit/core.h"
#include "bench_suites.h"

/* "wirekit-bench 0.1.0 | CPU, 2 CPUs" and "GNU 12.2.0 | flags: -O3 -DNDEBUG | load 0.42", two
 * lines so that neither passes 100 columns with a long CPU name. */
static void machine_line(char *out, size_t cap)
{
    char model[256] = "unknown CPU";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f != NULL) {
        char line[512];
        while (fgets(line, sizeof line, f) != NULL) {
            if (strncmp(line, "model name", 10) == 0) {
                char *colon = strchr(line, ':');
                if (colon != NULL) {
                    snprintf(model, sizeof model, "%s", colon + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(f);
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    char load[32] = "?";
    f = fopen("/proc/loadavg", "r");
    if (f != NULL) {
        if (fgets(load, sizeof load, f) != NULL) {
            load[strcspn(load, " ")] = '\0';
        }
        fclose(f);
    }
    snprintf(out, cap, "wirekit-bench %s | %.60s, %ld CPUs\n%s | flags:%.50s | load %s",
             WK_VERSION_STRING, model, cpus, WK_COMPILER, WK_BUILD_FLAGS, load);
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: wirekit-bench [--suite NAME]... [--case TEXT] [--json] [--quick] [--list]\n"
            "                     [--data DIR] [--svg FILE] [--chart DIR] [--callgrind]\n");
}

static int write_svg(const char *path, const wk_bench_row *rows, size_t n, const char *title,
                     const char *caption)
{
    /* replaced whole at the end (wk_cli_output), never left half-written */
    wk_cli_output out;
    if (wk_cli_output_open(&out, path, -1) != 0) {
        return 1;
    }
    if (wk_bench_write_svg(out.f, rows, n, title, caption) != 0) {
        wk_cli_output_abort(&out);
        fprintf(stderr, "wirekit-bench: cannot write %s\n", path);
        return 1;
    }
    return wk_cli_output_commit(&out) == 0 ? 0 : 1;
}

/* --callgrind: runs this program again under callgrind with the same arguments. */
static int run_under_callgrind(int argc, char **argv)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        fprintf(stderr, "wirekit-bench: cannot find my own executable\n");
        return 1;
    }
    self[n] = '\0';
    char out[] = "/tmp/wirekit-bench-callgrind-XXXXXX";
    int fd = mkstemp(out);
    if (fd < 0) {
        fprintf(stderr, "wirekit-bench: cannot create a temporary file: %s\n", strerror(errno));
        return 1;
    }
    close(fd);
    char outopt[64];
    snprintf(outopt, sizeof outopt, "--callgrind-out-file=%s", out);
    char **args = calloc((size_t)argc + 16, sizeof *args);
    if (args == NULL) {
        return 1;
    }
    size_t k = 0;
    args[k++] = "valgrind";
    args[k++] = "-q";
    args[k++] = "--tool=callgrind";
    args[k++] = "--instr-atstart=no";
    args[k++] = "--combine-dumps=yes";
    args[k++] = outopt;
    args[k++] = self;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--callgrind") != 0) {
            args[k++] = argv[i];
        }
    }
    args[k++] = "--callgrind-out";
    args[k++] = out;
    args[k] = NULL;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execvp("valgrind", args);
        fprintf(stderr, "wirekit-bench: cannot run valgrind: %s (Debian package valgrind)\n",
                strerror(errno));
        _exit(127);
    }
    int status = 0;
    int rc = 1;
    if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
        rc = WEXITSTATUS(status);
    }
    unlink(out);
    free(args);
    return rc;
}

int main(int argc, char **argv)
{
    wk_bench b;
    memset(&b, 0, sizeof b);
    const char *only[32];
    size_t nonly = 0;
    const char *svg = NULL, *chart = NULL;
    bool callgrind = false;
    enum { B_JSON = 1, B_QUICK, B_LIST, B_SUITE, B_CASE, B_DATA, B_SVG, B_CHART, B_CALLGRIND,
           B_CG_OUT };
    static const wk_cli_optdef defs[] = {
        {"--json", 0, false, B_JSON},         {"--quick", 0, false, B_QUICK},
        {"--list", 0, false, B_LIST},         {"--suite", 0, true, B_SUITE},
        {"--case", 0, true, B_CASE},          {"--data", 0, true, B_DATA},
        {"--svg", 0, true, B_SVG},            {"--chart", 0, true, B_CHART},
        {"--callgrind", 0, false, B_CALLGRIND}, {"--callgrind-out", 0, true, B_CG_OUT},
        {NULL, 0, false, 0},
    };
    wk_cli_args args;
    wk_cli_args_init(&args, "bench", argc, argv, 1, defs);
    int id;
    const char *v;
    while ((id = wk_cli_next(&args, &v)) != WK_CLI_DONE) {
        switch (id) {
        case WK_CLI_HELP: usage(stdout); return 0;
        case WK_CLI_BAD: return 2;
        case B_JSON: b.json = true; break;
        case B_QUICK: b.quick = true; break;
        case B_LIST:
            for (size_t k = 0; wk_bench_suites[k].name != NULL; k++) {
                printf("%s\n", wk_bench_suites[k].name);
            }
            return 0;
        case B_SUITE:
            if (nonly == sizeof only / sizeof only[0]) {
                fprintf(stderr, "wirekit-bench: at most %zu --suite options\n", nonly);
                return 2;
            }
            only[nonly++] = v;
            break;
        case B_CASE: b.case_filter = v; break;
        case B_DATA: b.data_dir = v; break;
        case B_SVG: svg = v; break;
        case B_CHART: chart = v; break;
        case B_CALLGRIND: callgrind = true; break;
        case B_CG_OUT: b.cg_file = v; break; /* set by --callgrind for the run inside valgrind */
        default: return 2;
        }
    }
    if (args.nops > 0) {
        return wk_cli_usage_error("bench", "no operands: '%s'", argv[args.first]);
    }
    unsigned count = 0;
    for (size_t k = 0; k < nonly; k++) {
        bool known = false;
        for (size_t s = 0; wk_bench_suites[s].name != NULL; s++) {
            known = known || strcmp(wk_bench_suites[s].name, only[k]) == 0;
        }
        if (!known) {
            fprintf(stderr, "wirekit-bench: unknown suite '%s' (see --list)\n", only[k]);
            return 2;
        }
    }
    if (callgrind && b.cg_file == NULL) {
        return run_under_callgrind(argc, argv);
    }
    if (b.cg_file != NULL && !RUNNING_ON_VALGRIND) {
        fprintf(stderr, "wirekit-bench: --callgrind-out is for the run inside valgrind; use "
                        "--callgrind\n");
        return 2;
    }
    if (chart != NULL && mkdir(chart, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "wirekit-bench: cannot create %s: %s\n", chart, strerror(errno));
        return 1;
    }
    char machine[1024];
    machine_line(machine, sizeof machine);
    b.progress = !b.json && isatty(2);
    b.started_ns = wk_bench_now_ns();
    for (size_t s = 0; wk_bench_suites[s].name != NULL; s++) {
        bool wanted = nonly == 0;
        for (size_t k = 0; k < nonly; k++) {
            wanted = wanted || strcmp(only[k], wk_bench_suites[s].name) == 0;
        }
        count += wanted;
    }
    b.suite_count = count;
    if (!b.json) {
        printf("%s\n", machine);
        if (b.cg_file != NULL) {
            printf("Figures are instructions per operation counted by callgrind (one batch per "
                   "row, after a warm-up).\n");
        } else {
            printf("Figures: the median of %d repetitions, implementations interleaved within "
                   "each repetition;\nspread = (slowest - fastest) / median; vs wk = the peer's "
                   "median / wirekit's (above 1:\nwirekit is faster). Informative rows "
                   "(wirekit variants, cached paths) get no ratio.\n",
                   b.quick ? 2 : 7);
        }
    }
    for (size_t s = 0; wk_bench_suites[s].name != NULL; s++) {
        bool wanted = nonly == 0;
        for (size_t k = 0; k < nonly; k++) {
            wanted = wanted || strcmp(only[k], wk_bench_suites[s].name) == 0;
        }
        if (!wanted) {
            continue;
        }
        b.suite = wk_bench_suites[s].name;
        b.suite_no++;
        b.npeers = 0;
        if (!b.json) {
            printf("\n== suite %s ==\n", b.suite);
        }
        size_t from = b.nrows;
        if (wk_bench_suites[s].run(&b) != 0) {
            b.failures++;
        }
        if (b.nqueue != 0) {
            wk_bench_fail(&b, "the suite left %zu queued spec(s) without wk_bench_flush()",
                          b.nqueue);
            b.nqueue = 0;
        }
        if (b.progress) {
            fputs("\r\033[K", stderr);
        }
        if (!b.json) {
            wk_bench_write_table(stdout, b.rows + from, b.nrows - from);
        }
        if (chart != NULL && b.nrows > from) {
            char path[PATH_MAX], title[128];
            snprintf(path, sizeof path, "%s/%s.svg", chart, b.suite);
            snprintf(title, sizeof title, "wirekit bench: suite %s", b.suite);
            b.failures += write_svg(path, b.rows + from, b.nrows - from, title, machine);
        }
        fflush(stdout);
    }
    if (svg != NULL && b.nrows > 0) {
        b.failures += write_svg(svg, b.rows, b.nrows, "wirekit bench", machine);
    }
    if (!b.json && b.nrows > 0) {
        wk_bench_write_summary(stdout, b.rows, b.nrows);
        printf("Total time %.0f s\n", (double)(wk_bench_now_ns() - b.started_ns) / 1e9);
    }
    free(b.rows);
    if (b.failures != 0) {
        fprintf(stderr, "wirekit-bench: %d check(s) failed\n", b.failures);
        return 1;
    }
    return 0;
}
