/* test_workers.c: base/workers.h -- every item runs exactly once, on a
 * worker index below workers_count(jobs, n), and the thread count is jobs
 * capped at the items and WORKERS_MAX. */
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
    ck_assert_int_ge(workers_online(), 1);
    ck_assert_int_le(workers_online(), WORKERS_MAX);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("workers");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_item_once);
    tcase_add_test(tc, counts);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
