/*
 * Prints the SQL of the row policy's round-trip table (cli_pg_rowpolicy.sh): a column of
 * every built-in type that has a literal in pg_samples.c, and an array column of each, in
 * three rows (the type's first sample, its second or the first again, and SQL NULL), plus a
 * jsonb and a json column holding the JSON value null in the first row and SQL NULL in the
 * last. Left out: aclitem (and aclitem[]), which has no binary send/receive functions in
 * PostgreSQL, so no binary COPY can carry it (wirekit names it and refuses, cli_pg_copy
 * checks that).
 * usage: pg_rowpolicy_table TABLE
 */
#include <stdio.h>
#include <stdbool.h>
#include <string.h>

#include "pg_samples.h"

/* A SQL string literal: quotes doubled. */
static void put_literal(const char *s)
{
    putchar('\'');
    for (; *s != '\0'; s++) {
        if (*s == '\'') {
            putchar('\'');
        }
        putchar(*s);
    }
    putchar('\'');
}

/* The index of the k-th sample (0 or 1) of the type of sample `first`, or `first`. An empty
 * int2vector is skipped: the server's int2vectorrecv refuses it in binary (wirekit says so),
 * so no binary COPY can carry it. */
static size_t sample_of(size_t first, int k)
{
    for (size_t i = first + 1; k > 0 && i < pg_type_nsamples; i++) {
        if (strcmp(pg_type_samples[i][0], pg_type_samples[first][0]) == 0 &&
            pg_type_samples[i][1] != NULL &&
            !(strcmp(pg_type_samples[i][0], "int2vector") == 0 && pg_type_samples[i][1][0] == 0)) {
            return i;
        }
    }
    return first;
}

/* Whether sample i is the first usable one of its type. */
static bool first_of_type(size_t i)
{
    const char *t = pg_type_samples[i][0];
    if (pg_type_samples[i][1] == NULL || strcmp(t, "aclitem") == 0) {
        return false;
    }
    for (size_t j = 0; j < i; j++) {
        if (strcmp(pg_type_samples[j][0], t) == 0 && pg_type_samples[j][1] != NULL) {
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: pg_rowpolicy_table TABLE\n");
        return 2;
    }
    const char *table = argv[1];
    printf("CREATE TABLE %s (id int", table);
    for (size_t i = 0; i < pg_type_nsamples; i++) {
        if (first_of_type(i)) {
            printf(", \"c_%s\" %s, \"a_%s\" %s[]", pg_type_samples[i][0], pg_type_samples[i][0],
                   pg_type_samples[i][0], pg_type_samples[i][0]);
        }
    }
    printf(", jn jsonb, jt json);\n");
    for (int row = 0; row < 3; row++) {
        printf("INSERT INTO %s VALUES (%d", table, row + 1);
        for (size_t i = 0; i < pg_type_nsamples; i++) {
            if (!first_of_type(i)) {
                continue;
            }
            const char *t = pg_type_samples[i][0];
            if (row == 2) {
                printf(", NULL, NULL");
                continue;
            }
            size_t s = sample_of(i, row);
            printf(", ");
            put_literal(pg_type_samples[s][1]);
            printf("::%s, ARRAY[", t);
            put_literal(pg_type_samples[s][1]);
            printf("::%s, NULL]", t);
        }
        printf(row == 0   ? ", 'null', 'null');\n"
               : row == 1 ? ", '{\"a\": [1, 2.5, null, \"x\"], \"u\": 12345678901234567890}', "
                            "'{\"b\": 1.5e300}');\n"
                          : ", NULL, NULL);\n");
    }
    return 0;
}
