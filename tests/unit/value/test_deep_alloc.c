/*
 * Deep nesting stays on the caller's allocator: the tree decoders' frame stacks start on the
 * C stack and, past it, take memory from the allocator the caller passed down (the reader
 * options', else the arena's), never from libc behind its back. The arena serves the nodes
 * from a caller buffer here, so every call the counting allocator sees is a stack growth;
 * failing that allocation must give WK_ERR_NOMEM, and nothing may stay live afterwards. The
 * tree walkers (wk_value_encode, wk_value_equal) take the allocator as a parameter.
 */
#include <string.h>

#include "wirekit/json.h"
#include "wirekit/msgpack.h"
#include "wirekit/value.h"
#include "wk_test.h"

#define DEPTH 300

static uint8_t arena_mem[1 << 20];

static size_t deep_mp(uint8_t *out)
{
    for (size_t i = 0; i < DEPTH - 1; i++) {
        out[i] = 0x91; /* array of one */
    }
    out[DEPTH - 1] = 0x90; /* empty array */
    return DEPTH;
}

static size_t deep_json(char *out)
{
    for (size_t i = 0; i < DEPTH; i++) {
        out[i] = '[';
        out[2 * DEPTH - 1 - i] = ']';
    }
    return 2 * DEPTH;
}

static size_t depth_of(const wk_value *v)
{
    size_t d = 0;
    while (v->type == WK_VAL_ARRAY) {
        d++;
        if (v->len == 0) {
            break;
        }
        v = &v->u.items[0];
    }
    return d;
}

WK_TEST(test_mp_tree_decode_grows_its_stack_on_the_arena_allocator)
{
    uint8_t mp[DEPTH];
    size_t n = deep_mp(mp);
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    wk_arena a;
    wk_arena_init_buf(&a, arena_mem, sizeof arena_mem, &t.a, 0);
    wk_read_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.max_depth = 1000;
    wk_value *v = NULL;
    CHECK_OK(wk_mp_decode_value(mp, n, &ro, &a, &v, NULL, NULL));
    CHECK_EQ(depth_of(v), DEPTH);
    CHECK(t.allocs >= 1);
    CHECK_EQ(t.live_bytes, 0);
    wk_arena_free(&a);

    wk_test_alloc_init(&t);
    t.fail_at = 1;
    wk_arena_init_buf(&a, arena_mem, sizeof arena_mem, &t.a, 0);
    wk_error err;
    CHECK_STATUS(wk_mp_decode_value(mp, n, &ro, &a, &v, NULL, &err), WK_ERR_NOMEM);
    CHECK(err.offset < n);
    CHECK_EQ(t.live_bytes, 0);
    wk_arena_free(&a);
}

WK_TEST(test_mp_tree_decode_prefers_the_reader_options_allocator)
{
    uint8_t mp[DEPTH];
    size_t n = deep_mp(mp);
    wk_test_alloc ta, tr;
    wk_test_alloc_init(&ta);
    wk_test_alloc_init(&tr);
    wk_arena a;
    wk_arena_init_buf(&a, arena_mem, sizeof arena_mem, &ta.a, 0);
    wk_read_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.max_depth = 1000;
    ro.alloc = &tr.a;
    wk_value *v = NULL;
    CHECK_OK(wk_mp_decode_value(mp, n, &ro, &a, &v, NULL, NULL));
    CHECK_EQ(depth_of(v), DEPTH);
    CHECK(tr.allocs >= 1);
    CHECK_EQ(ta.allocs, 0);
    CHECK_EQ(tr.live_bytes, 0);
    wk_arena_free(&a);
}

WK_TEST(test_json_tree_decode_grows_its_stacks_on_the_arena_allocator)
{
    char js[2 * DEPTH];
    size_t n = deep_json(js);
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    wk_arena a;
    wk_arena_init_buf(&a, arena_mem, sizeof arena_mem, &t.a, 0);
    wk_read_opts o;
    memset(&o, 0, sizeof o);
    o.max_depth = 1000;
    wk_value *v = NULL;
    CHECK_OK(wk_json_decode_value(js, n, &o, &a, &v, NULL, NULL));
    CHECK_EQ(depth_of(v), DEPTH);
    CHECK(t.allocs >= 1);
    CHECK_EQ(t.live_bytes, 0);
    wk_arena_free(&a);

    wk_test_alloc_init(&t);
    t.fail_at = 1;
    wk_arena_init_buf(&a, arena_mem, sizeof arena_mem, &t.a, 0);
    CHECK_STATUS(wk_json_decode_value(js, n, &o, &a, &v, NULL, NULL), WK_ERR_NOMEM);
    CHECK_EQ(t.live_bytes, 0);
    wk_arena_free(&a);
}

/* The reader keeps its own stack on the default allocator here (no options allocator), so
 * every call the counting allocator sees is the tree builder's. */
WK_TEST(test_generic_tree_decode_grows_its_stacks_on_the_arena_allocator)
{
    uint8_t mp[DEPTH];
    size_t n = deep_mp(mp);
    wk_test_alloc t;
    wk_test_alloc_init(&t);
    wk_arena a;
    wk_arena_init_buf(&a, arena_mem, sizeof arena_mem, &t.a, 0);
    wk_read_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.max_depth = 1000;
    wk_mp_reader r;
    wk_mp_reader_init(&r, mp, n, &ro);
    wk_source src;
    wk_mp_reader_source(&r, &src);
    wk_value *v = NULL;
    CHECK_OK(wk_value_decode(&src, &ro, &a, &v, NULL));
    wk_mp_reader_free(&r);
    CHECK_EQ(depth_of(v), DEPTH);
    CHECK(t.allocs >= 1);
    CHECK_EQ(t.live_bytes, 0);
    wk_arena_free(&a);
}

/* A sink that counts events and never fails: only wk_value_encode's own stack allocates. */
static wk_status count_event(void *self, const wk_event *ev)
{
    (void)ev;
    (*(size_t *)self)++;
    return WK_OK;
}

static wk_status count_error(const void *self, wk_error *err)
{
    (void)self;
    return wk_error_set(err, WK_OK, 0, NULL);
}

WK_TEST(test_value_encode_and_equal_grow_their_stacks_on_the_callers_allocator)
{
    uint8_t mp[DEPTH];
    size_t n = deep_mp(mp);
    wk_arena a;
    wk_arena_init_buf(&a, arena_mem, sizeof arena_mem, NULL, 0);
    wk_read_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.max_depth = 1000;
    wk_value *v = NULL, *w = NULL;
    CHECK_OK(wk_mp_decode_value(mp, n, &ro, &a, &v, NULL, NULL));
    CHECK_OK(wk_mp_decode_value(mp, n, &ro, &a, &w, NULL, NULL));

    wk_test_alloc t;
    wk_test_alloc_init(&t);
    size_t events = 0;
    wk_sink sink = {count_event, count_error, &events};
    CHECK_OK(wk_value_encode(v, &t.a, &sink, NULL));
    CHECK_EQ(events, 2 * DEPTH); /* each array opens and ends */
    CHECK(t.allocs >= 1);
    CHECK_EQ(t.live_bytes, 0);
    CHECK(wk_value_equal(v, w, &t.a));
    CHECK_EQ(t.live_bytes, 0);
    size_t before = t.allocs;
    CHECK(wk_value_equal(v, w, &t.a));
    CHECK(t.allocs > before);

    /* the allocator refuses: encode reports it, equal cannot tell the trees equal */
    wk_test_alloc_init(&t);
    t.fail_at = 1;
    wk_error err;
    CHECK_STATUS(wk_value_encode(v, &t.a, &sink, &err), WK_ERR_NOMEM);
    CHECK_EQ(t.live_bytes, 0);
    t.fail_at = t.attempts + 1;
    CHECK(!wk_value_equal(v, w, &t.a));
    CHECK_EQ(t.live_bytes, 0);
    wk_arena_free(&a);
}
