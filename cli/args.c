/* Command-line arguments, spelled the same way by every subcommand: -h and --help, and an
 * option's value either after `=` or as the next argument. Shared with wirekit-bench, which
 * the bench subcommand runs with its own arguments. */
#include <string.h>

#include "cli.h"

int wk_cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

bool wk_cli_opt(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) {
        return false;
    }
    if (a[n] == '=') {
        *value = a + n + 1;
        return true;
    }
    if (a[n] != '\0' || *i + 1 >= argc) {
        return false;
    }
    *value = argv[++*i];
    return true;
}
