/* Command-line arguments, spelled the same way by every subcommand: -h and --help, options
 * anywhere before `--` (GNU style: `cmd OPERAND --opt VALUE` reads --opt), an option's value
 * either after `=` or as the next argument, `--` ending the options, and an unknown option
 * refused. Shared with wirekit-bench, which the bench subcommand runs with its own
 * arguments. */
#include <stdarg.h>
#include <string.h>

#include "cli.h"

int wk_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "wirekit %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'wirekit %s --help'.\n", cmd);
    return WK_EXIT_USAGE;
}

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

void wk_cli_args_init(wk_cli_args *a, const char *cmd, int argc, char **argv, int first,
                      const wk_cli_optdef *defs)
{
    a->cmd = cmd;
    a->argc = argc;
    a->argv = argv;
    a->defs = defs;
    a->i = first;
    a->first = first;
    a->nops = 0;
}

/* An operand moves down to argv[first + nops]: that slot was read already (nops never passes
 * the arguments read), and an option's value keeps pointing at its own string. */
static void keep_operand(wk_cli_args *a, char *arg)
{
    a->argv[a->first + a->nops++] = arg;
}

int wk_cli_next(wk_cli_args *a, const char **value)
{
    *value = NULL;
    while (a->i < a->argc) {
        char *arg = a->argv[a->i++];
        if (strcmp(arg, "--") == 0) {
            while (a->i < a->argc) {
                keep_operand(a, a->argv[a->i++]);
            }
            break;
        }
        if (arg[0] != '-' || arg[1] == '\0') { /* "-" is an operand: standard input */
            keep_operand(a, arg);
            continue;
        }
        if (wk_cli_is_help(arg)) {
            return WK_CLI_HELP;
        }
        bool is_long = arg[1] == '-';
        const char *name = arg + (is_long ? 2 : 1);
        size_t nlen = is_long ? strcspn(name, "=") : 1;
        const wk_cli_optdef *d = a->defs;
        for (; d != NULL && d->name != NULL; d++) {
            if (is_long ? strncmp(d->name + 2, name, nlen) == 0 && d->name[2 + nlen] == '\0'
                        : d->short_name != '\0' && d->short_name == name[0]) {
                break;
            }
        }
        if (d == NULL || d->name == NULL) {
            wk_cli_usage_error(a->cmd,
                               "unknown option '%s' (an operand that begins with '-' goes "
                               "after '--')",
                               arg);
            return WK_CLI_BAD;
        }
        const char *inline_value = is_long ? (name[nlen] == '=' ? name + nlen + 1 : NULL)
                                           : (name[1] != '\0' ? name + 1 : NULL);
        if (!d->value) {
            if (inline_value != NULL) {
                wk_cli_usage_error(a->cmd, "option '%s' takes no value", d->name);
                return WK_CLI_BAD;
            }
            return d->id;
        }
        if (inline_value != NULL) {
            *value = inline_value;
        } else if (a->i < a->argc) {
            *value = a->argv[a->i++];
        } else {
            wk_cli_usage_error(a->cmd, "option '%s' needs a value", d->name);
            return WK_CLI_BAD;
        }
        return d->id;
    }
    return WK_CLI_DONE;
}
