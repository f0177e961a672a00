/*
 * Example: a C struct with a free-form map field, described by a schema, written as
 * MessagePack and as JSON, and read back.
 *
 * The schema lists each field's wire name, C member and kind; WK_SK_VALUE makes a field hold
 * any value (here a map of whatever the application wants to attach). One descriptor serves
 * both formats. Run: ./schema_map
 */
#include <stdio.h>
#include <string.h>

#include <wirekit/wirekit.h>

/* The C struct, and its schema right next to it. */
typedef struct user {
    char *username;
    int32_t age;
    bool enabled;
    wk_value metadata; /* free-form: map[string]any */
} user;

WK_SCHEMA_DEFINE_STATIC(user_schema, user, "user", 1,
                        WK_FIELD(user, username, "username", WK_SK_STR, WK_REQUIRED),
                        WK_FIELD(user, age, "age", WK_SK_I32, 0),
                        WK_FIELD(user, enabled, "enabled", WK_SK_BOOL, 0),
                        WK_FIELD(user, metadata, "metadata", WK_SK_VALUE, WK_OMITEMPTY));

static int fail(const char *what, const wk_error *err)
{
    fprintf(stderr, "schema_map: %s: %s (%s, at byte %zu)\n", what,
            err->msg ? err->msg : "", wk_status_str(err->code), err->offset);
    return 1;
}

int main(void)
{
    wk_error err = {0};
    wk_arena arena; /* every node of the metadata tree and every decoded string lives here */
    wk_arena_init(&arena, NULL, 0);

    /* An object, with metadata {"hello": "world", "int": 10} built by hand. */
    user u = {0};
    u.username = "root";
    u.age = 20;
    u.enabled = true;
    if (wk_value_set_map(&u.metadata, &arena, 2) != WK_OK) {
        return 1;
    }
    wk_value_set_str(&u.metadata.u.pairs[0].key, "hello", 5);
    wk_value_set_str(&u.metadata.u.pairs[0].val, "world", 5);
    wk_value_set_str(&u.metadata.u.pairs[1].key, "int", 3);
    wk_value_set_int(&u.metadata.u.pairs[1].val, 10);

    /* MessagePack, with the fused encoder (no event dispatch). */
    wk_buf mp;
    wk_buf_init(&mp, NULL, 0);
    if (wk_schema_encode_mp(&user_schema, &u, &mp, &err) != WK_OK) {
        return fail("encode MessagePack", &err);
    }
    printf("MessagePack, %zu bytes:", mp.len);
    for (size_t i = 0; i < mp.len; i++) {
        printf(" %02x", mp.data[i]);
    }
    printf("\n");

    /* JSON, through the serializer interface (the same call shape for every format). */
    const wk_serializer *json = wk_serializer_find("json");
    wk_buf js;
    wk_buf_init(&js, NULL, 0);
    if (json->encode(&user_schema, &u, &js, &err) != WK_OK) {
        return fail("encode JSON", &err);
    }
    printf("JSON: %.*s\n", (int)js.len, (const char *)js.data);

    /* Read both back into fresh structs; strings and the map are allocated in the arena. */
    wk_schema_error serr;
    user from_mp = {0}, from_json = {0};
    if (wk_schema_decode_mp(&user_schema, mp.data, mp.len, &from_mp, &arena, NULL, &serr) !=
        WK_OK) {
        return fail("decode MessagePack", &serr.base);
    }
    if (json->decode(&user_schema, js.data, js.len, &from_json, &arena, NULL, &serr) != WK_OK) {
        return fail("decode JSON", &serr.base);
    }
    const user *back[2] = {&from_mp, &from_json};
    for (int i = 0; i < 2; i++) {
        if (strcmp(back[i]->username, u.username) != 0 || back[i]->age != u.age ||
            back[i]->enabled != u.enabled ||
            !wk_value_equal(&back[i]->metadata, &u.metadata, NULL)) {
            fprintf(stderr, "schema_map: round trip %d differs\n", i);
            return 1;
        }
    }
    const wk_value *hello = wk_value_map_get(&from_json.metadata, "hello", 5);
    printf("decoded: username=%s age=%d enabled=%d metadata.hello=%.*s\n", from_json.username,
           from_json.age, from_json.enabled, (int)hello->len, hello->u.str);

    /* Hostile input is normal input: a wrong type is an error with the field path and the
     * byte offset, never a crash. */
    const char bad[] = "{\"username\":\"x\",\"age\":\"old\"}";
    user junk = {0};
    if (json->decode(&user_schema, bad, strlen(bad), &junk, &arena, NULL, &serr) == WK_OK) {
        fprintf(stderr, "schema_map: a string age was accepted\n");
        return 1;
    }
    char msg[200];
    wk_schema_error_format(&serr, msg, sizeof msg);
    printf("rejected %s: %s\n", bad, msg);

    wk_buf_free(&mp);
    wk_buf_free(&js);
    wk_arena_free(&arena);
    return 0;
}
