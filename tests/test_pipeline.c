/* test_pipeline.c: the simulated schedules against the closed forms for
 * equal stages (1F1B: (m + p - 1)(f + b); interleaved: bubble (p - 1)/(v m)),
 * the steady-state extrapolation against full simulation, and events. */
#include <math.h>
#include <stdlib.h>
#include "pipeline.h"
#include "testutil.h"

START_TEST(one_f_one_b_equal_stages)
{
    static const int ps[] = {1, 2, 4, 8, 16}, ms[] = {1, 3, 8, 32, 100};
    double f[16], b[16], p2p[16];
    size_t i, j;
    int k;
    for (k = 0; k < 16; k++) {
        f[k] = 1.0;
        b[k] = 2.0;
        p2p[k] = 0;
    }
    for (i = 0; i < 5; i++)
        for (j = 0; j < 5; j++) {
            int p = ps[i], m = ms[j];
            double t = schedule_simulate(p, 1, m, f, b, p2p, NULL);
            ck_assert_rel(t, (m + p - 1) * 3.0, 1e-12);
            /* bubble fraction (p - 1)/m */
            ck_assert(fabs(t / (m * 3.0) - 1 - schedule_bubble_fraction(p, 1, m)) < 1e-9);
        }
}
END_TEST

START_TEST(interleaved_equal_stages)
{
    static const int cfg[][3] = {{4, 2, 8}, {4, 2, 16}, {8, 3, 16}, {2, 4, 8}, {8, 2, 64}};
    double f[8], b[8];
    size_t i;
    int k;
    for (k = 0; k < 8; k++) {
        f[k] = 1.0;
        b[k] = 2.0;
    }
    for (i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        int p = cfg[i][0], v = cfg[i][1], m = cfg[i][2];
        double t = schedule_simulate(p, v, m, f, b, NULL, NULL);
        /* m (f + b) plus a bubble of (p - 1)(f + b)/v */
        ck_assert_rel(t, m * 3.0 * (1 + schedule_bubble_fraction(p, v, m)), 1e-9);
    }
}
END_TEST

START_TEST(extrapolation_matches_full_simulation)
{
    static const int cfg[][3] = {{4, 1, 64}, {8, 1, 100}, {4, 2, 64}, {6, 3, 96}, {3, 1, 7}};
    size_t i;
    unsigned seed = 12345;
    for (i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
        int p = cfg[i][0], v = cfg[i][1], m = cfg[i][2], k;
        double f[8], b[8], p2p[8], e1[8], e2[8], t1, t2;
        sched_events ev = {NULL, 0, 0};
        for (k = 0; k < p; k++) {
            f[k] = 1.0 + (rand_r(&seed) % 100) / 50.0;
            b[k] = 2.0 * f[k] + (rand_r(&seed) % 10) / 10.0;
            p2p[k] = (rand_r(&seed) % 10) / 40.0;
        }
        t1 = schedule_simulate_ex(p, v, m, f, b, p2p, 0.1, e1, NULL);
        t2 = schedule_simulate_ex(p, v, m, f, b, p2p, 0.1, e2, &ev);
        ck_assert_rel(t1, t2, 1e-9);
        for (k = 0; k < p; k++)
            ck_assert_rel(e1[k], e2[k], 1e-9);
        sched_events_free(&ev);
    }
}
END_TEST

START_TEST(events_and_bounds)
{
    double f[4] = {1, 1.5, 1, 1}, b[4] = {2, 3, 2, 2.5}, p2p[4] = {0.1, 0.1, 0.1, 0};
    sched_events ev = {NULL, 0, 0};
    int i, nf = 0, nb = 0, ns = 0;
    double t = schedule_simulate(4, 2, 8, f, b, p2p, &ev);
    for (i = 0; i < ev.n; i++) {
        ck_assert(ev.ev[i].end_s >= ev.ev[i].start_s);
        ck_assert(ev.ev[i].end_s <= t + 1e-9 || ev.ev[i].kind == SCHED_SEND);
        nf += ev.ev[i].kind == SCHED_FORWARD;
        nb += ev.ev[i].kind == SCHED_BACKWARD;
        ns += ev.ev[i].kind == SCHED_SEND;
    }
    ck_assert_int_eq(nf, 4 * 8 * 2);
    ck_assert_int_eq(nb, 4 * 8 * 2);
    ck_assert(ns > 0);
    /* the slowest rank bounds the step from below */
    ck_assert(t >= 8 * (1.5 + 3) - 1e-9);
    sched_events_free(&ev);
    sched_events_free(NULL);
}
END_TEST

START_TEST(p2p_delays_lengthen)
{
    double f[4] = {1, 1, 1, 1}, b[4] = {2, 2, 2, 2};
    double z[4] = {0, 0, 0, 0}, d[4] = {0.5, 0.5, 0.5, 0.5};
    double t0 = schedule_simulate(4, 1, 16, f, b, z, NULL);
    double t1 = schedule_simulate(4, 1, 16, f, b, d, NULL);
    ck_assert(t1 > t0);
    /* fill and drain cross 3 boundaries each way at least */
    ck_assert(t1 >= t0 + 6 * 0.5 - 1e-9);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, one_f_one_b_equal_stages);
    tcase_add_test(tc, interleaved_equal_stages);
    tcase_add_test(tc, extrapolation_matches_full_simulation);
    tcase_add_test(tc, events_and_bounds);
    tcase_add_test(tc, p2p_delays_lengthen);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
