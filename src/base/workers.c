/* workers.c: the worker pool of workers.h on POSIX threads.
 *
 * No state outlives a call: workers_run makes its threads, hands the items
 * out through one atomic counter (C11 <stdatomic.h>) and joins the threads.
 * Making threads per call costs tens of microseconds each, small next to an
 * item (a search's block of layouts, a sweep point, a validated run).
 */
#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT (glibc) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>
#include "base/workers.h"

typedef struct pool {
    int n;
    workers_fn *fn;
    void *arg;
    atomic_int next;   /* the next item to hand out */
} pool;

typedef struct worker {
    pool *p;
    int index;
    pthread_t thread;
} worker;

static void run_items(pool *p, int index)
{
    for (int i = atomic_fetch_add(&p->next, 1); i < p->n; i = atomic_fetch_add(&p->next, 1))
        p->fn(p->arg, i, index);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    run_items(w->p, w->index);
    return NULL;
}

/* The process's affinity mask, as nproc(1) counts (coreutils nproc.c:
 * sched_getaffinity before sysconf): Slurm's task binding and cgroup
 * cpuset, taskset and numactl narrow it, so a job's default is the CPUs it
 * holds, not the node's.  The CPUs online where the mask is unreadable. */
int workers_available(void)
{
    cpu_set_t set;
    long n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (n < 1)
        n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > WORKERS_MAX ? WORKERS_MAX : (int)n;
}

int workers_count(int jobs, int n)
{
    int k = jobs < n ? jobs : n;
    return k < 1 ? 1 : k > WORKERS_MAX ? WORKERS_MAX : k;
}

void workers_run(int n, int jobs, workers_fn *fn, void *arg)
{
    pool p;
    worker w[WORKERS_MAX];
    int k = workers_count(jobs, n), made = 0;

    if (n <= 0)
        return;
    p.n = n;
    p.fn = fn;
    p.arg = arg;
    atomic_init(&p.next, 0);
    for (int i = 1; i < k; i++) {   /* worker 0 is this thread */
        w[made].p = &p;
        w[made].index = made + 1;
        if (pthread_create(&w[made].thread, NULL, worker_main, &w[made]) == 0)
            made++;
    }
    run_items(&p, 0);
    for (int i = 0; i < made; i++)
        pthread_join(w[i].thread, NULL);
}
