/*
 * The worker threads of wk_cache_get_async: what an asynchronous get hands over when it needs
 * the loader (a shared miss, a tombstone, a failure of the shared tier, a store without
 * fetch_async), so that a PostgreSQL load blocks one of these threads and never the store's
 * I/O thread or the caller's. Each cache owns a pool of WK__CWORKERS threads, started all at
 * once by the first submit (a cache whose gets never miss starts none), fed from one FIFO
 * under a mutex; wk_cache_free stops it: the jobs still queued are cancelled (their requests
 * answered with an error), the ones running finish, and the threads are joined.
 *
 * The trade-off is a fixed, small pool: at most WK__CWORKERS loads run at once per cache
 * (single-flight already folds concurrent misses on one key into one load), so a burst of
 * misses on distinct keys queues here rather than opening as many database connections.
 */
#include "cache/cache_internal.h"

/* A worker: takes the oldest job and runs it, until the pool stops and the queue is empty
 * (wk__cworkers_stop empties it first, so a stopping pool runs nothing new). */
static void *worker_main(void *arg)
{
    wk__cworkers *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (w->head == NULL && !w->stopping) {
            pthread_cond_wait(&w->cv, &w->mu);
        }
        wk__cjob *j = w->head;
        if (j == NULL) {
            break; /* stopping, nothing left */
        }
        w->head = j->next;
        if (w->head == NULL) {
            w->tail = &w->head;
        }
        pthread_mutex_unlock(&w->mu);
        j->run(j);
        pthread_mutex_lock(&w->mu);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

void wk__cworkers_init(wk__cworkers *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->tail = &w->head;
}

bool wk__cworkers_submit(wk__cworkers *w, wk__cjob *j)
{
    pthread_mutex_lock(&w->mu);
    if (w->stopping) {
        pthread_mutex_unlock(&w->mu);
        return false;
    }
    while (w->nth < WK__CWORKERS && pthread_create(&w->th[w->nth], NULL, worker_main, w) == 0) {
        w->nth++;
    }
    if (w->nth == 0) {
        pthread_mutex_unlock(&w->mu);
        return false;
    }
    j->next = NULL;
    *w->tail = j;
    w->tail = &j->next;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return true;
}

void wk__cworkers_stop(wk__cworkers *w)
{
    pthread_mutex_lock(&w->mu);
    w->stopping = true;
    wk__cjob *j = w->head;
    w->head = NULL;
    w->tail = &w->head;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    while (j != NULL) { /* outside the lock: a cancel answers its request */
        wk__cjob *next = j->next;
        j->cancel(j);
        j = next;
    }
    for (unsigned i = 0; i < w->nth; i++) {
        pthread_join(w->th[i], NULL);
    }
    w->nth = 0;
}

void wk__cworkers_destroy(wk__cworkers *w)
{
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
}
