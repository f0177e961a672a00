/*
 * Example: HTTP media types: parse, look up, serialize, build, and find a type by file
 * extension.
 *
 * wk_mt_parse follows the WHATWG MIME Sniffing parser (what browsers do; WK_MT_STRICT for
 * RFC 9110). The result is views into the input; well-known types (the mime-db table, built
 * in) also get an id with their default charset and compressibility.
 * Run: ./mediatype ['Content-Type value' ...]
 */
#include <stdio.h>
#include <string.h>

#include <wirekit/wirekit.h>

static int show(const char *text)
{
    wk_media_type mt = WK_MT_INIT;
    wk_error err = {0};
    if (wk_mt_parse(text, strlen(text), 0, &mt, &err) != WK_OK) {
        printf("%-40s -> not a media type: %s (at byte %zu)\n", text, err.msg, err.offset);
        return 0;
    }
    /* The canonical serialization (lowercase, quotes only where needed). */
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    if (wk_mt_serialize(&mt, WK_MT_STYLE_WHATWG, &out, &err) != WK_OK) {
        return 1;
    }
    printf("%-40s -> %.*s\n", text, (int)out.len, (const char *)out.data);
    printf("    essence %.*s", (int)wk_mt_essence(&mt).len, wk_mt_essence(&mt).ptr);
    const wk_mt_known *k = wk_mt_known_get(mt.id);
    if (k != NULL) {
        printf(" (well-known #%u, default charset %s, compressible %s)", (unsigned)mt.id,
               k->charset ? k->charset : "none",
               k->compressible > 0 ? "yes" : k->compressible == 0 ? "no" : "unknown");
    }
    printf("\n");
    /* Parameters: the charset has its own accessor; quoted values are unescaped on demand. */
    const wk_mt_param *cs = wk_mt_charset(&mt);
    if (cs != NULL) {
        char v[64];
        size_t n = wk_mt_param_value(cs, v, sizeof v);
        printf("    charset %.*s\n", n <= sizeof v ? (int)n : 0, v);
    }
    wk_buf_free(&out);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const samples[] = {
        "Text/HTML; Charset=\"utf-8\"",
        "application/json",
        "multipart/form-data; boundary=\"a b\"",
        "text/plain;charset=\"us\\-ascii\";format=flowed",
        "no slash here",
    };
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            if (show(argv[i]) != 0) {
                return 1;
            }
        }
        return 0;
    }
    for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++) {
        if (show(samples[i]) != 0) {
            return 1;
        }
    }

    /* Build one from parts (values are plain text; quoting is the serializer's job). */
    wk_mt_param params[] = {{{"charset", 7}, {"UTF-8", 5}, 0, 0},
                            {{"profile", 7}, {"https://example.org/v1", 22}, 0, 0}};
    wk_media_type built = WK_MT_INIT;
    wk_error err = {0};
    wk_buf out;
    wk_buf_init(&out, NULL, 0);
    if (wk_mt_build(&built, "application/json", 16, params, 2, &err) != WK_OK ||
        wk_mt_serialize(&built, WK_MT_STYLE_SPACE, &out, &err) != WK_OK) {
        fprintf(stderr, "mediatype: build: %s\n", err.msg);
        return 1;
    }
    printf("built: %.*s\n", (int)out.len, (const char *)out.data);
    wk_buf_free(&out);
    /* A media type is a plain value: copy it by assignment, nothing to free. */
    wk_media_type copy = built;
    printf("copy: %.*s\n", (int)wk_mt_essence(&copy).len, wk_mt_essence(&copy).ptr);

    /* File extension -> media type, through the built-in table's perfect hash. */
    static const char *const exts[] = {"json", ".PNG", "gz", "mp4", "nope"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        uint16_t id = wk_mt_known_find_ext(exts[i], strlen(exts[i]));
        const wk_mt_known *k = wk_mt_known_get(id);
        printf("extension %-7s -> %s\n", exts[i], k != NULL ? k->essence : "(unknown)");
    }
    return 0;
}
