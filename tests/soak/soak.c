/*
 * wirekit-soak: the entity cache under a faulty Redis for minutes (scripts/soak.sh; not a
 * ctest). Several worker processes share a private redis-server and a source of truth in
 * shared memory (a version per key); each runs threads doing random reads, puts and
 * invalidations (--writes per mille of the operations, half puts, half invalidations), while
 * the parent kills, stops (SIGSTOP), OOMs (maxmemory 1, noeviction) and restarts Redis at
 * random.
 *
 * Every answer is checked: a value whose fields disagree or whose version is newer than the
 * truth is WRONG; a version older than one whose put or invalidation was acknowledged (WK_OK)
 * by then is STALE. Other processes learn of a write through the broadcast, so for them a write
 * counts only once it has been acknowledged for longer than the feed's bound (heartbeat +
 * command timeout, plus slack); gets started inside that window are counted as "in flight"
 * and not judged. Writes to a key come from one thread only (last-writer order is the
 * caller's job, not the cache's).
 *
 * usage: wirekit-soak [--seconds N] [--procs N] [--threads N] [--keys N] [--writes PERMILLE]
 *                     [--port P]
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"

#include "../unit/schema/seed_user.h"
#include "wirekit/redis.h"

#define MAX_KEYS 100000
#define MAX_PROCS 16
#define WINDOW_MS 2000 /* heartbeat 1000 + command timeout 250, plus slack for a busy box */

typedef struct key_state {
    atomic_flag lock;
    _Atomic uint64_t truth; /* version the source holds */
    uint64_t acked;         /* newest acknowledged version, and when */
    int64_t acked_ms;
    uint64_t prev; /* the one acknowledged before it, and when */
    int64_t prev_ms;
} key_state;

typedef struct proc_stats {
    _Atomic uint64_t gets, puts, invalidations, write_failures, errors, wrong, stale, in_flight,
        own_stale;
    _Atomic int64_t slowest_us;
    uint64_t fallbacks, shared_errors, local_hits, feed_resets;
} proc_stats;

typedef struct shared {
    _Atomic int stop;
    int nkeys;
    int writes; /* per mille of operations */
    int procs;
    int threads;
    char url[64];
    proc_stats stats[MAX_PROCS];
    key_state keys[MAX_KEYS];
} shared;

static shared *S;

static int64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t now_ms(void)
{
    return now_us() / 1000;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void key_lock(key_state *k)
{
    while (atomic_flag_test_and_set_explicit(&k->lock, memory_order_acquire)) {
    }
}

static void key_unlock(key_state *k)
{
    atomic_flag_clear_explicit(&k->lock, memory_order_release);
}

static void ack(int key, uint64_t v)
{
    key_state *k = &S->keys[key];
    key_lock(k);
    if (v > k->acked) {
        k->prev = k->acked;
        k->prev_ms = k->acked_ms;
        k->acked = v;
        k->acked_ms = now_ms();
    }
    key_unlock(k);
}

/* The version a get starting now must at least return: the newest acknowledgement older than
 * the window; `*unsure` when a newer one is still inside it. */
static uint64_t must_have(int key, bool *unsure)
{
    key_state *k = &S->keys[key];
    int64_t now = now_ms();
    key_lock(k);
    uint64_t need = 0;
    *unsure = false;
    if (k->acked != 0 && now - k->acked_ms >= WINDOW_MS) {
        need = k->acked;
    } else {
        *unsure = k->acked != 0;
        if (k->prev != 0 && now - k->prev_ms >= WINDOW_MS) {
            need = k->prev;
        }
    }
    key_unlock(k);
    return need;
}

static void id_of(int key, char *buf, size_t cap)
{
    snprintf(buf, cap, "k%d", key);
}

static wk_status load(void *ctx, const wk_schema *s, const char *id, size_t id_len, void *obj,
                      wk_arena *arena, wk_error *err)
{
    (void)ctx;
    (void)s;
    (void)err;
    int key = (int)strtol(id + 1, NULL, 10);
    uint64_t v = atomic_load(&S->keys[key].truth);
    seed_user *u = obj;
    char name[64];
    snprintf(name, sizeof name, "%.*s:v%llu", (int)id_len, id, (unsigned long long)v);
    u->username = wk_arena_strndup(arena, name, strlen(name));
    u->age = (int64_t)v;
    u->enabled = true;
    return WK_OK;
}

typedef struct worker {
    wk_cache *cache;
    int proc;
    int thread;
    unsigned seed;
} worker;

static void do_get(worker *w, int key)
{
    proc_stats *ps = &S->stats[w->proc];
    char id[32];
    id_of(key, id, sizeof id);
    bool unsure;
    uint64_t need = must_have(key, &unsure);
    int64_t t0 = now_us();
    wk_cache_entry *r = NULL;
    wk_status st = wk_cache_get(w->cache, &seed_user_schema, id, strlen(id), load, NULL, &r, NULL);
    int64_t dt = now_us() - t0;
    atomic_fetch_add(&ps->gets, 1);
    int64_t slow = atomic_load(&ps->slowest_us);
    while (dt > slow && !atomic_compare_exchange_weak(&ps->slowest_us, &slow, dt)) {
    }
    if (st != WK_OK) {
        atomic_fetch_add(&ps->errors, 1);
        return;
    }
    const seed_user *u = wk_cache_entry_object(r);
    uint64_t v = (uint64_t)u->age;
    char want[64];
    snprintf(want, sizeof want, "%s:v%llu", id, (unsigned long long)v);
    if (u->username == NULL || strcmp(u->username, want) != 0 ||
        v > atomic_load(&S->keys[key].truth)) {
        atomic_fetch_add(&ps->wrong, 1);
    } else if (v < need) {
        atomic_fetch_add(&ps->stale, 1);
        fprintf(stderr, "soak: STALE %s: got v%llu, v%llu acknowledged over %d ms before\n", id,
                (unsigned long long)v, (unsigned long long)need, WINDOW_MS);
    } else if (unsure) {
        atomic_fetch_add(&ps->in_flight, 1);
    }
    wk_cache_entry_unref(r);
}

static void do_write(worker *w, int key, bool put)
{
    proc_stats *ps = &S->stats[w->proc];
    char id[32];
    id_of(key, id, sizeof id);
    uint64_t v = atomic_fetch_add(&S->keys[key].truth, 1) + 1;
    wk_status st;
    if (put) {
        char name[64];
        snprintf(name, sizeof name, "%s:v%llu", id, (unsigned long long)v);
        seed_user u;
        memset(&u, 0, sizeof u);
        u.username = name;
        u.age = (int64_t)v;
        u.enabled = true;
        st = wk_cache_put(w->cache, &seed_user_schema, id, strlen(id), &u, 0, NULL);
        atomic_fetch_add(&ps->puts, 1);
    } else {
        st = wk_cache_invalidate(w->cache, &seed_user_schema, id, strlen(id), NULL);
        atomic_fetch_add(&ps->invalidations, 1);
    }
    if (st == WK_OK) {
        ack(key, v);
    } else {
        atomic_fetch_add(&ps->write_failures, 1);
    }
    /* This process must never see an older version than it just wrote (no window). */
    if (st == WK_OK) {
        wk_cache_entry *r = NULL;
        if (wk_cache_get(w->cache, &seed_user_schema, id, strlen(id), load, NULL, &r, NULL) ==
            WK_OK) {
            if ((uint64_t)((const seed_user *)wk_cache_entry_object(r))->age < v) {
                atomic_fetch_add(&ps->own_stale, 1);
                fprintf(stderr, "soak: OWN STALE %s after acknowledged v%llu\n", id,
                        (unsigned long long)v);
            }
            wk_cache_entry_unref(r);
        }
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    int writers = S->procs * S->threads;
    int me = w->proc * S->threads + w->thread;
    int own = S->nkeys / writers;
    while (!atomic_load(&S->stop)) {
        unsigned dice = rand_r(&w->seed) % 1000;
        if (dice < (unsigned)S->writes && own > 0) {
            /* Writes go to this thread's own keys: key % writers == me. */
            int key = (int)(rand_r(&w->seed) % (unsigned)own) * writers + me;
            do_write(w, key, dice % 2 == 0);
        } else {
            do_get(w, (int)(rand_r(&w->seed) % (unsigned)S->nkeys));
        }
    }
    return NULL;
}

static void run_process(int proc)
{
    wk_redis_opts o;
    memset(&o, 0, sizeof o);
    o.url = S->url;
    wk_redis_store *s = NULL;
    if (wk_redis_store_new(&o, &s, NULL) != WK_OK) {
        _exit(2);
    }
    wk_cache_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ns = "soak";
    cfg.store = wk_redis_store_iface(s);
    wk_cache *c = NULL;
    if (wk_cache_new(&cfg, &c, NULL) != WK_OK) {
        _exit(2);
    }
    pthread_t th[16];
    worker ws[16];
    for (int t = 0; t < S->threads; t++) {
        ws[t].cache = c;
        ws[t].proc = proc;
        ws[t].thread = t;
        ws[t].seed = (unsigned)(proc * 7919 + t * 104729 + (int)getpid());
        pthread_create(&th[t], NULL, worker_main, &ws[t]);
    }
    for (int t = 0; t < S->threads; t++) {
        pthread_join(th[t], NULL);
    }
    wk_cache_stats st;
    wk_cache_get_stats(c, &st);
    S->stats[proc].fallbacks = st.fallbacks;
    S->stats[proc].shared_errors = st.shared_errors;
    S->stats[proc].local_hits = st.local_hits;
    S->stats[proc].feed_resets = st.feed_resets;
    wk_cache_free(c);
    wk_redis_store_free(s);
    _exit(0);
}

/* ---- Redis and the chaos ----------------------------------------------------------------- */

static pid_t redis_pid;
static int redis_port;
static char redis_dir[64];

static bool redis_answers(void)
{
    const char *argv[1] = {"PING"};
    char rep[64];
    return rs_cmd(redis_port, rep, sizeof rep, 1, argv, NULL) && rep[0] == '+';
}

static bool redis_start(void)
{
    char port[16];
    snprintf(port, sizeof port, "%d", redis_port);
    pid_t pid = fork();
    if (pid == 0) {
        if (freopen("/dev/null", "w", stdout) == NULL) {
            _exit(127);
        }
        execlp("redis-server", "redis-server", "--port", port, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", "no", "--dir", redis_dir, (char *)NULL);
        _exit(127);
    }
    redis_pid = pid;
    for (int i = 0; i < 200; i++) {
        if (redis_answers()) {
            return true;
        }
        sleep_ms(20);
    }
    return false;
}

static void redis_config(const char *name, const char *value)
{
    const char *argv[4] = {"CONFIG", "SET", name, value};
    (void)rs_cmd(redis_port, NULL, 0, 4, argv, NULL);
}

int main(int argc, char **argv)
{
    int seconds = 600, procs = 4, threads = 2, nkeys = 20000, writes = 10;
    redis_port = 57090;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = (int)strtol(argv[i + 1], NULL, 10);
        if (strcmp(argv[i], "--seconds") == 0) {
            seconds = v;
        } else if (strcmp(argv[i], "--procs") == 0) {
            procs = v < 1 ? 1 : v > MAX_PROCS ? MAX_PROCS : v;
        } else if (strcmp(argv[i], "--threads") == 0) {
            threads = v < 1 ? 1 : v > 16 ? 16 : v;
        } else if (strcmp(argv[i], "--keys") == 0) {
            nkeys = v < 1 ? 1 : v > MAX_KEYS ? MAX_KEYS : v;
        } else if (strcmp(argv[i], "--writes") == 0) {
            writes = v < 0 ? 0 : v > 1000 ? 1000 : v;
        } else if (strcmp(argv[i], "--port") == 0) {
            redis_port = v;
        }
    }
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED) {
        return 1;
    }
    S->nkeys = nkeys;
    S->writes = writes;
    S->procs = procs;
    S->threads = threads;
    snprintf(S->url, sizeof S->url, "redis://127.0.0.1:%d", redis_port);
    snprintf(redis_dir, sizeof redis_dir, "/tmp/wk-soak-XXXXXX");
    if (mkdtemp(redis_dir) == NULL || !redis_start()) {
        fprintf(stderr, "soak: cannot start redis-server on port %d\n", redis_port);
        return 1;
    }
    redis_config("maxmemory-policy", "noeviction");
    pid_t kids[MAX_PROCS];
    for (int p = 0; p < procs; p++) {
        kids[p] = fork();
        if (kids[p] == 0) {
            run_process(p);
        }
    }
    printf("soak: %d processes x %d threads, %d keys, %d.%d%% writes, %d s, Redis on port %d\n",
           procs, threads, nkeys, writes / 10, writes % 10, seconds, redis_port);
    unsigned seed = (unsigned)getpid();
    int kills = 0, stops = 0, ooms = 0;
    int64_t end = now_ms() + (int64_t)seconds * 1000;
    while (now_ms() < end) {
        sleep_ms(3000 + rand_r(&seed) % 5000);
        if (now_ms() >= end) {
            break;
        }
        long hold = 1000 + rand_r(&seed) % 2000;
        switch (rand_r(&seed) % 4) {
        case 0:
            kill(redis_pid, SIGKILL);
            waitpid(redis_pid, NULL, 0);
            sleep_ms(hold);
            if (!redis_start()) {
                fprintf(stderr, "soak: redis-server did not restart\n");
            }
            redis_config("maxmemory-policy", "noeviction");
            kills++;
            printf("soak: %3llds killed Redis for %ld ms\n",
                   (long long)(seconds - (end - now_ms()) / 1000), hold);
            break;
        case 1:
            kill(redis_pid, SIGSTOP);
            sleep_ms(hold);
            kill(redis_pid, SIGCONT);
            stops++;
            printf("soak: %3llds stopped Redis for %ld ms\n",
                   (long long)(seconds - (end - now_ms()) / 1000), hold);
            break;
        case 2:
            redis_config("maxmemory", "1");
            sleep_ms(hold);
            redis_config("maxmemory", "0");
            ooms++;
            printf("soak: %3llds Redis out of memory for %ld ms\n",
                   (long long)(seconds - (end - now_ms()) / 1000), hold);
            break;
        default: break; /* a quiet spell */
        }
        fflush(stdout);
    }
    atomic_store(&S->stop, 1);
    for (int p = 0; p < procs; p++) {
        waitpid(kids[p], NULL, 0);
    }
    kill(redis_pid, SIGKILL);
    waitpid(redis_pid, NULL, 0);
    rmdir(redis_dir);
    uint64_t gets = 0, puts = 0, invs = 0, wfail = 0, errors = 0, wrong = 0, stale = 0, flight = 0,
             own = 0, fallbacks = 0, serr = 0, lhits = 0;
    int64_t slowest = 0;
    for (int p = 0; p < procs; p++) {
        proc_stats *ps = &S->stats[p];
        gets += ps->gets;
        puts += ps->puts;
        invs += ps->invalidations;
        wfail += ps->write_failures;
        errors += ps->errors;
        wrong += ps->wrong;
        stale += ps->stale;
        flight += ps->in_flight;
        own += ps->own_stale;
        fallbacks += ps->fallbacks;
        serr += ps->shared_errors;
        lhits += ps->local_hits;
        if (ps->slowest_us > slowest) {
            slowest = ps->slowest_us;
        }
    }
    printf("\n| measure | value |\n| --- | --- |\n");
    printf("| duration | %d s |\n| Redis killed / stopped / out of memory | %d / %d / %d |\n",
           seconds, kills, stops, ooms);
    printf("| gets | %llu (%.0f/s) |\n", (unsigned long long)gets, (double)gets / seconds);
    printf("| local hits | %llu |\n", (unsigned long long)lhits);
    printf("| puts / invalidations | %llu / %llu |\n", (unsigned long long)puts,
           (unsigned long long)invs);
    printf("| writes not acknowledged (Redis failed) | %llu |\n", (unsigned long long)wfail);
    printf("| fallbacks to the loader | %llu |\n", (unsigned long long)fallbacks);
    printf("| shared-tier errors | %llu |\n", (unsigned long long)serr);
    printf("| get errors | %llu |\n", (unsigned long long)errors);
    printf("| slowest get | %.1f ms |\n", (double)slowest / 1000.0);
    printf("| gets inside a write's broadcast window (not judged) | %llu |\n",
           (unsigned long long)flight);
    printf("| WRONG values | %llu |\n", (unsigned long long)wrong);
    printf("| STALE after an acknowledged write (other processes, > %d ms) | %llu |\n", WINDOW_MS,
           (unsigned long long)stale);
    printf("| STALE right after the own acknowledged write | %llu |\n", (unsigned long long)own);
    return wrong == 0 && stale == 0 && own == 0 && errors == 0 ? 0 : 1;
}
