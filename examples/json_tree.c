/*
 * Example: a JSON file parsed into a value tree, then walked.
 *
 * wk_json_decode_value builds the whole document as wk_value nodes in an arena (strings point into
 * the input unless WK_READ_COPY_STRINGS is asked for). The walk below counts nodes by
 * type and prints the outline of the first levels, with an explicit stack as wirekit itself
 * does (no recursion, so no depth can overflow the C stack).
 * Run: ./json_tree FILE.json
 */
#include <stdio.h>
#include <stdlib.h>

#include <wirekit/wirekit.h>

/* Reads a whole file into a malloc'd buffer. */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf != NULL) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) {
            break;
        }
        char *bigger = realloc(buf, cap * 2);
        if (bigger == NULL) {
            free(buf);
            fclose(f);
            return NULL;
        }
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    *len = n;
    return buf;
}

/* One pending node of the walk: the value, its depth, and the key it sits under (if any). */
typedef struct frame {
    const wk_value *v;
    const wk_value *key;
    unsigned depth;
} frame;

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: json_tree FILE.json\n");
        return 2;
    }
    size_t len = 0;
    char *text = read_file(argv[1], &len);
    if (text == NULL) {
        fprintf(stderr, "json_tree: cannot read %s\n", argv[1]);
        return 1;
    }

    /* Parse. On a syntax error `err.offset` is the byte; wk_json_line_col turns it into a
     * line and column for people. */
    wk_arena arena;
    wk_arena_init(&arena, NULL, 0);
    wk_value *root = NULL;
    wk_error err = {0};
    if (wk_json_decode_value(text, len, NULL, &arena, &root, NULL, &err) != WK_OK) {
        size_t line, col;
        wk_json_line_col(text, len, err.offset, &line, &col);
        fprintf(stderr, "json_tree: %s: %s at line %zu, column %zu\n", argv[1], err.msg, line,
                col);
        return 1;
    }

    /* Walk: pop a node, count it, print it if shallow, push its children (in reverse so they
     * come out in document order). */
    size_t counts[WK_VAL_RAWNUM + 1] = {0};
    size_t cap = 1024, top = 0;
    frame *stack = malloc(cap * sizeof *stack);
    if (stack == NULL) {
        return 1;
    }
    stack[top++] = (frame){root, NULL, 0};
    while (top > 0) {
        frame f = stack[--top];
        counts[f.v->type]++;
        if (f.depth <= 2) {
            printf("%*s", (int)f.depth * 2, "");
            if (f.key != NULL && f.key->type == WK_VAL_STR) {
                printf("%.*s: ", (int)f.key->len, f.key->u.str);
            }
            if (f.v->type == WK_VAL_ARRAY || f.v->type == WK_VAL_MAP) {
                printf("%s of %u\n", wk_value_type_name((wk_value_type)f.v->type), f.v->len);
            } else if (f.v->type == WK_VAL_STR) {
                printf("\"%.*s\"\n", f.v->len > 40 ? 40 : (int)f.v->len, f.v->u.str);
            } else {
                printf("%s\n", wk_value_type_name((wk_value_type)f.v->type));
            }
        }
        size_t n = f.v->type == WK_VAL_ARRAY || f.v->type == WK_VAL_MAP ? f.v->len : 0;
        if (top + n > cap) {
            while (top + n > cap) {
                cap *= 2;
            }
            frame *bigger = realloc(stack, cap * sizeof *stack);
            if (bigger == NULL) {
                free(stack);
                return 1;
            }
            stack = bigger;
        }
        for (size_t i = n; i-- > 0;) {
            if (f.v->type == WK_VAL_ARRAY) {
                stack[top++] = (frame){&f.v->u.items[i], NULL, f.depth + 1};
            } else {
                stack[top++] = (frame){&f.v->u.pairs[i].val, &f.v->u.pairs[i].key, f.depth + 1};
            }
        }
    }
    size_t total = 0;
    printf("nodes by type:");
    for (int t = 0; t <= WK_VAL_RAWNUM; t++) {
        if (counts[t] != 0) {
            printf(" %s=%zu", wk_value_type_name((wk_value_type)t), counts[t]);
            total += counts[t];
        }
    }
    printf("\n%zu nodes from %zu bytes, %zu bytes of arena\n", total, len,
           wk_arena_footprint(&arena));

    free(stack);
    wk_arena_free(&arena);
    free(text);
    return 0;
}
