/* workers.h: run n independent items on a few POSIX threads.
 *
 * workers_run(n, jobs, fn, arg) calls fn(arg, i, w) once for each item
 * i = 0 .. n-1 on workers_count(jobs, n) threads: the calling thread is
 * worker 0, the others are made for the call and joined before it returns.
 * w, 0 .. workers_count(jobs, n) - 1, names the worker running the item, so
 * an item may use scratch space its worker keeps from item to item.  Items
 * are handed out in order by an atomic counter, so which worker runs which
 * item, and when, depends on the scheduler: an item writes only its own
 * result slot (and its worker's scratch), and the caller reads the slots in
 * item order after the call, so nothing it prints depends on the scheduling.
 * When a thread cannot be made, the threads there are (at least the
 * caller's) run its share: the call never fails.
 */
#ifndef PLANNER_WORKERS_H
#define PLANNER_WORKERS_H

#define WORKERS_MAX 64   /* threads of one call, at most */

typedef void workers_fn(void *arg, int item, int worker);

/* The CPUs this process may run on (its affinity mask, as nproc(1)
 * counts; the CPUs online where that is unreadable), 1 .. WORKERS_MAX: the
 * command line's default -j. */
int workers_available(void);

/* The threads workers_run(n, jobs, ...) uses: jobs, at most n and
 * WORKERS_MAX, at least 1. */
int workers_count(int jobs, int n);

void workers_run(int n, int jobs, workers_fn *fn, void *arg);

#endif
