/* test_workers.c: base/workers.h -- every item runs exactly once, on a
 * worker index below workers_count(jobs, n), and the thread count is jobs
 * capped at the items and WORKERS_MAX. */
#define _GNU_SOURCE   /* sched_setaffinity, CPU_SET */
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include "base/workers.h"
#include "testutil.h"

#define ITEMS 1000

typedef struct tally {
    atomic_int runs[ITEMS];   /* times item i ran */
    int worker[ITEMS];        /* the worker that ran it */
    long square[ITEMS];       /* its result slot */
} tally;

static void count_item(void *arg, int item, int worker)
{
    tally *t = arg;
    atomic_fetch_add(&t->runs[item], 1);
    t->worker[item] = worker;
    t->square[item] = (long)item * item;
}

START_TEST(every_item_once)
{
    static const int jobs[] = {1, 2, 3, 8, 64, 1000};
    static tally t;
    for (size_t k = 0; k < sizeof jobs / sizeof jobs[0]; k++) {
        for (int n = 0; n <= ITEMS; n += n < 10 ? 1 : 330) {
            int used = workers_count(jobs[k], n);
            memset(&t, 0, sizeof t);
            workers_run(n, jobs[k], count_item, &t);
            for (int i = 0; i < ITEMS; i++) {
                ck_assert_int_eq(atomic_load(&t.runs[i]), i < n ? 1 : 0);
                if (i < n) {
                    ck_assert_int_lt(t.worker[i], used);
                    ck_assert_int_eq(t.square[i], (long)i * i);
                }
            }
        }
    }
}
END_TEST

START_TEST(counts)
{
    ck_assert_int_eq(workers_count(4, 100), 4);
    ck_assert_int_eq(workers_count(4, 3), 3);      /* never more than the items */
    ck_assert_int_eq(workers_count(4, 0), 1);
    ck_assert_int_eq(workers_count(0, 10), 1);
    ck_assert_int_eq(workers_count(1000, 1000), WORKERS_MAX);
    ck_assert_int_ge(workers_available(), 1);
    ck_assert_int_le(workers_available(), WORKERS_MAX);
}
END_TEST

/* The default -j follows the process's affinity mask (what Slurm's binding
 * or taskset gives a job), not the node's CPUs online: bound to one CPU, one
 * worker.  Skipped where the mask cannot be read or set. */
START_TEST(default_follows_affinity)
{
    cpu_set_t all, one;
    int cpu = -1;
    if (sched_getaffinity(0, sizeof all, &all) != 0) {
        printf("SKIP: default_follows_affinity (sched_getaffinity failed)\n");
        return;
    }
    ck_assert_int_eq(workers_available(),
                     CPU_COUNT(&all) < WORKERS_MAX ? CPU_COUNT(&all) : WORKERS_MAX);
    for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
        if (CPU_ISSET(i, &all))
            cpu = i;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) {
        printf("SKIP: default_follows_affinity (sched_setaffinity failed)\n");
        return;
    }
    ck_assert_int_eq(workers_available(), 1);
    ck_assert_int_eq(sched_setaffinity(0, sizeof all, &all), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("workers");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_item_once);
    tcase_add_test(tc, counts);
    tcase_add_test(tc, default_follows_affinity);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
