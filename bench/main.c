/* wirekit-bench: runs the benchmark suites (all, or those named with --suite). */
#include <stdlib.h>
#include <string.h>

#include "bench_internal.h"
#include "wirekit/core.h"
#include "bench_suites.h"

static void print_machine(void)
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
    printf("wirekit-bench %s | %s | %s | flags:%s\n", WK_VERSION_STRING, model, WK_COMPILER,
           WK_BUILD_FLAGS);
    printf("Figures are the fastest of 5 repetitions; 'wirekit speed-up' is the peer's ns/op "
           "divided by wirekit's (above 1 means wirekit is faster).\n");
}

static void usage(FILE *out)
{
    fprintf(out, "usage: wirekit-bench [--suite NAME]... [--json] [--quick] [--iterations N] [--list]\n");
}

int main(int argc, char **argv)
{
    wk_bench b;
    memset(&b, 0, sizeof b);
    const char *only[32];
    size_t nonly = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            b.json = true;
        } else if (strcmp(argv[i], "--quick") == 0) {
            b.quick = true;
        } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
            b.iterations = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--list") == 0) {
            for (size_t k = 0; wk_bench_suites[k].name != NULL; k++) {
                printf("%s\n", wk_bench_suites[k].name);
            }
            return 0;
        } else if (strcmp(argv[i], "--suite") == 0 && i + 1 < argc && nonly < 32) {
            only[nonly++] = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
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
    if (!b.json) {
        print_machine();
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
        if (!b.json) {
            printf("\n== suite %s ==\n", b.suite);
        }
        size_t from = b.nrows;
        if (wk_bench_suites[s].run(&b) != 0) {
            b.failures++;
        }
        wk_bench_print_table(&b, from);
        fflush(stdout);
    }
    free(b.rows);
    if (b.failures != 0) {
        fprintf(stderr, "wirekit-bench: %d check(s) failed\n", b.failures);
        return 1;
    }
    return 0;
}
