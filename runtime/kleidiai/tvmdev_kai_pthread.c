/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The default thread-pool hook: count - 1 pthreads plus the calling thread each run one
 * task index. Threads are created per call; a user with a pool of their own passes it
 * through tvmdev_kai_config.parallel instead.
 */
#include <pthread.h>
#include <stddef.h>

#include "tvmdev_kai.h"

struct worker {
    pthread_t thread;
    tvmdev_kai_task_fn task;
    void *arg;
    uint32_t index;
};

static void *run_worker(void *arg)
{
    struct worker *w = (struct worker *)arg;

    w->task(w->arg, w->index);
    return NULL;
}

void tvmdev_kai_pthread_parallel(void *ctx, uint32_t count, tvmdev_kai_task_fn task, void *arg)
{
    struct worker workers[TVMDEV_KAI_MAX_THREADS];
    uint32_t i, started = 0;

    (void)ctx;
    if (count > TVMDEV_KAI_MAX_THREADS) {
        count = TVMDEV_KAI_MAX_THREADS;
    }
    for (i = 1; i < count; i++) {
        workers[i].task = task;
        workers[i].arg = arg;
        workers[i].index = i;
        if (pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]) != 0) {
            break;
        }
        started = i;
    }
    task(arg, 0);
    for (i = started + 1; i < count; i++) {
        task(arg, i); /* threads that could not start: run their share here */
    }
    for (i = 1; i <= started; i++) {
        (void)pthread_join(workers[i].thread, NULL);
    }
}
