/*
 * negotiate-driver: the wirekit side of the differential test against npm negotiator
 * (negotiate_diff.js). Reads cases from standard input, one a line: the Accept value, then
 * each offer, separated by tabs. Prints one line per case: the chosen offer's index (-1 for
 * none), a space, and one digit per offer, 1 when its quality is above 0; or "error OFFSET
 * MESSAGE" when the Accept value or an offer does not parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wirekit/mediatype.h"

#define MAX_OFFERS 16

static void one_case(char *line)
{
    char *fields[MAX_OFFERS + 1];
    size_t nf = 0;
    for (char *p = line; nf <= MAX_OFFERS;) {
        fields[nf++] = p;
        char *tab = strchr(p, '\t');
        if (tab == NULL) {
            break;
        }
        *tab = '\0';
        p = tab + 1;
    }
    static wk_media_type offers[MAX_OFFERS];
    size_t n = nf - 1;
    wk_error err = {0};
    for (size_t i = 0; i < n; i++) {
        if (wk_mt_parse(fields[i + 1], strlen(fields[i + 1]), 0, &offers[i], &err) != WK_OK) {
            printf("error %zu offer %zu: %s\n", err.offset, i, err.msg);
            return;
        }
    }
    wk_mt_accept acc;
    if (wk_mt_accept_parse(fields[0], strlen(fields[0]), 0, &acc, &err) != WK_OK) {
        printf("error %zu %s\n", err.offset, err.msg);
        return;
    }
    size_t chosen = wk_mt_negotiate(&acc, offers, n);
    printf("%ld ", chosen == WK_MT_NONE ? -1L : (long)chosen);
    for (size_t i = 0; i < n; i++) {
        putchar(wk_mt_accept_quality(&acc, &offers[i]) > 0 ? '1' : '0');
    }
    putchar('\n');
}

int main(void)
{
    static char line[1 << 16];
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        one_case(line);
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
