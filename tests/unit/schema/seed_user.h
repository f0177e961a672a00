/*
 * The seed record of SEEDS.md §3 as a C struct with its descriptor, shared by the schema
 * tests, the cache tests, the fuzz harness and the benchmarks:
 *   {username:"root", password:"secret", age:20, enabled:true, metadata:{hello:"world", int:10}}
 * `metadata` is free-form (the `map[string]any` that gob could not encode).
 */
#ifndef SEED_USER_H
#define SEED_USER_H

#include "wirekit/schema.h"

typedef struct seed_user {
    char *username;
    char *password;
    int64_t age;
    bool enabled;
    wk_value metadata;
} seed_user;

WK_SCHEMA_DEFINE_STATIC(seed_user_schema, seed_user, "user", 1,
    WK_FIELD(seed_user, username, "username", WK_SK_STR, WK_REQUIRED),
    WK_FIELD(seed_user, password, "password", WK_SK_STR, 0),
    WK_FIELD(seed_user, age, "age", WK_SK_I64, 0),
    WK_FIELD(seed_user, enabled, "enabled", WK_SK_BOOL, 0),
    WK_FIELD(seed_user, metadata, "metadata", WK_SK_VALUE, 0));

/* The recorded version and fingerprint (test_schema_guard_holds_for_the_seed_record): when
 * the descriptor changes, bump the version and record both again. */
#define SEED_USER_VERSION 1u
#define SEED_USER_FINGERPRINT 0x6d18520235dc88daull

/** Fills `u` with the seed record; `pairs` is storage for the two metadata pairs. */
static inline void seed_user_fill(seed_user *u, wk_pair pairs[2])
{
    memset(u, 0, sizeof *u);
    u->username = (char *)"root";
    u->password = (char *)"secret";
    u->age = 20;
    u->enabled = true;
    memset(pairs, 0, 2 * sizeof *pairs);
    wk_value_set_str(&pairs[0].key, "hello", 5);
    wk_value_set_str(&pairs[0].val, "world", 5);
    wk_value_set_str(&pairs[1].key, "int", 3);
    wk_value_set_int(&pairs[1].val, 10);
    u->metadata.type = WK_VAL_MAP;
    u->metadata.len = 2;
    u->metadata.u.pairs = pairs;
}

#endif
