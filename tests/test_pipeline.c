/* test_pipeline.c: the simulated schedules against the closed forms for
 * equal stages (1F1B: (m + p - 1)(f + b); interleaved: bubble (p - 1)/(v m)),
 * hand-derived uneven cases, and the allocation-free engine (no event list)
 * against a plain reference simulation written here from the schedule's
 * definition (pipeline.c's top comment), in long double, on random instances
 * with uneven stages, p2p and wrap-around delays; the event engine (--trace)
 * against the same; events; no allocation for any pp; the cache; each
 * stack's warm-up (stack_pipe_warmup) by hand from its source. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "schedule/pipeline.h"
#include "model/strategy.h"
#include "testutil.h"

/* The default stack's (megatron-core's) warm-up, where the stacks agree. */
#define CORE STACK_PIPE_MEGATRON_CORE

/* ---- reference: every operation's end time, ranks polled in turn -------- */

typedef struct ref_sim {
    int pp, vpp, m;
    long double *fe, *be;   /* end of F / B of (rank, mb, chunk); -1: not yet */
} ref_sim;

static long double *ref_at(const ref_sim *x, long double *a, int r, int mb, int c)
{
    return &a[((size_t)r * x->m + mb) * x->vpp + c];
}

/* Micro-batch and chunk of the k-th forward (backward) of every rank: groups
 * of pp micro-batches (the last m % pp), within a group chunk by chunk
 * (backwards from the last chunk). */
static void ref_decode(const ref_sim *x, int k, int backward, int *mb, int *c)
{
    int g = k / (x->pp * x->vpp);
    int size = x->m - g * x->pp < x->pp ? x->m - g * x->pp : x->pp;
    int off = k - g * x->pp * x->vpp;
    *mb = g * x->pp + off % size;
    *c = backward ? x->vpp - 1 - off / size : off / size;
}

/* Makespan (rank_end per rank), or -1 if the schedule deadlocks; each rank
 * warms up as `pipe` does (stack_pipe_warmup, checked by hand below). */
static long double ref_simulate(stack_pipe pipe, int pp, int vpp, int m, const double *f,
                                const double *b, const double *p2p, double wrap,
                                long double *rank_end)
{
    ref_sim x = {pp, vpp, m, NULL, NULL};
    int n = m * vpp, r, progress, done = 0;
    int next[STRATEGY_MAX_STAGES];
    long double busy[STRATEGY_MAX_STAGES], span = 0;
    size_t cells = (size_t)pp * m * vpp, i;

    x.fe = pl_calloc(cells, sizeof *x.fe);
    x.be = pl_calloc(cells, sizeof *x.be);
    ck_assert(x.fe != NULL && x.be != NULL);
    for (i = 0; i < cells; i++)
        x.fe[i] = x.be[i] = -1;
    for (r = 0; r < pp; r++) {
        next[r] = 0;
        busy[r] = 0;
    }
    do {
        progress = 0;
        for (r = 0; r < pp; r++) {
            int warm = stack_pipe_warmup(pipe, pp, vpp, m, r);
            while (next[r] < 2 * n) {
                int j = next[r], fwd, k, mb, c;
                long double dep = 0, *end;
                if (j < warm || (j < 2 * n - warm && (j - warm) % 2 == 0)) {
                    fwd = 1;
                    k = j < warm ? j : warm + (j - warm) / 2;
                } else {
                    fwd = 0;
                    k = j < 2 * n - warm ? (j - warm) / 2 : j - n;
                }
                ref_decode(&x, k, !fwd, &mb, &c);
                if (fwd) {
                    long double *in = r > 0  ? ref_at(&x, x.fe, r - 1, mb, c)
                                      : c > 0 ? ref_at(&x, x.fe, pp - 1, mb, c - 1)
                                              : NULL;
                    if (in != NULL && *in < 0)
                        break;
                    if (in != NULL)
                        dep = *in + (r > 0 ? p2p[r - 1] : wrap);
                    end = ref_at(&x, x.fe, r, mb, c);
                    *end = (dep > busy[r] ? dep : busy[r]) + (long double)f[r] / vpp;
                } else {
                    long double *in = r < pp - 1     ? ref_at(&x, x.be, r + 1, mb, c)
                                      : c == vpp - 1 ? ref_at(&x, x.fe, r, mb, c)
                                                     : ref_at(&x, x.be, 0, mb, c + 1);
                    if (*in < 0)
                        break;
                    dep = *in + (r < pp - 1 ? p2p[r] : c == vpp - 1 ? 0 : wrap);
                    end = ref_at(&x, x.be, r, mb, c);
                    *end = (dep > busy[r] ? dep : busy[r]) + (long double)b[r] / vpp;
                }
                busy[r] = *end;
                next[r]++;
                progress = 1;
                done += next[r] == 2 * n;
            }
        }
    } while (progress && done < pp);
    pl_free(x.fe);
    pl_free(x.be);
    if (done < pp)
        return -1;
    for (r = 0; r < pp; r++) {
        rank_end[r] = busy[r];
        if (busy[r] > span)
            span = busy[r];
    }
    return span;
}

/* ---- random instances ---------------------------------------------------- */

static double urand(unsigned *seed)
{
    return (double)(rand_r(seed) % 1000000) / 1e6;
}

/* Stage times of one of four kinds: equal stages without delays, equal
 * stages with equal p2p (the long cycle through every rank is critical: the
 * period is pp micro-batches), one slow rank, or all random. */
static double random_stages(unsigned *seed, int pp, double *f, double *b, double *p2p)
{
    int kind = rand_r(seed) % 4, slow = rand_r(seed) % pp, r;
    for (r = 0; r < pp; r++) {
        f[r] = kind < 2 ? 1.0 : 0.5 + urand(seed);
        b[r] = kind < 2 ? 2.0 : 2 * f[r] + 0.3 * urand(seed);
        p2p[r] = kind == 0 ? 0 : kind == 1 ? 0.05 : rand_r(seed) % 2 ? 0.2 * urand(seed) : 0;
    }
    if (kind == 2) {
        f[slow] *= 1.5;
        b[slow] *= 1.5;
    }
    return kind == 0 ? 0 : 0.1 * urand(seed);
}

/* Fast engine vs reference on one instance; returns 1 if both found the
 * schedule impossible (interleaving with m % pp != 0 can deadlock). */
static int check_instance(stack_pipe pipe, int pp, int vpp, int m, const double *f,
                          const double *b, const double *p2p, double wrap)
{
    long double ref_end[STRATEGY_MAX_STAGES];
    double end[STRATEGY_MAX_STAGES];
    long double want = ref_simulate(pipe, pp, vpp, m, f, b, p2p, wrap, ref_end);
    double got = schedule_simulate_ex(pipe, pp, vpp, m, f, b, p2p, wrap, end, NULL);
    int r;

    if (want < 0) {
        ck_assert_msg(got < 0, "pp %d vpp %d m %d: reference deadlocks, fast %g", pp, vpp, m,
                      got);
        return 1;
    }
    ck_assert_msg(fabsl(got - want) <= 1e-12L * want,
                  "pp %d vpp %d m %d: fast %.17g, reference %.17Lg", pp, vpp, m, got, want);
    for (r = 0; r < pp; r++)
        ck_assert_msg(fabsl(end[r] - ref_end[r]) <= 1e-12L * want,
                      "pp %d vpp %d m %d rank %d: %.17g vs %.17Lg", pp, vpp, m, r, end[r],
                      ref_end[r]);
    return 0;
}

START_TEST(fast_matches_reference_random)
{
    unsigned seed = 20240601;
    int it, interleaved = 0;
    for (it = 0; it < 500; it++) {
        double f[64], b[64], p2p[64], wrap;
        int pp = 1 + rand_r(&seed) % 64, vpp = 1 + rand_r(&seed) % 8;
        int m = 1 + rand_r(&seed) % 512;
        stack_pipe pipe = (stack_pipe)(it % 3);
        if (rand_r(&seed) % 2)   /* Megatron interleaving needs m % pp == 0 */
            m = pp * (1 + rand_r(&seed) % (512 / pp));
        if (it % 7 == 0)   /* one group: the stacks' warm-ups differ */
            m = pp;
        wrap = random_stages(&seed, pp, f, b, p2p);
        if (check_instance(pipe, pp, vpp, m, f, b, p2p, wrap) == 0 && vpp > 1)
            interleaved++;
    }
    ck_assert_msg(interleaved > 150, "%d feasible interleaved instances", interleaved);
}
END_TEST

/* Long runs on few ranks: the periodic steady state is detected and jumped
 * over; the reference runs every micro-batch. */
START_TEST(fast_matches_reference_long)
{
    unsigned seed = 777;
    int it;
    for (it = 0; it < 60; it++) {
        double f[8], b[8], p2p[8], wrap;
        int pp = 1 + rand_r(&seed) % 8, vpp = 1 + rand_r(&seed) % 8;
        int m = pp * (1000 / pp + rand_r(&seed) % (3000 / pp));
        wrap = random_stages(&seed, pp, f, b, p2p);
        ck_assert(check_instance((stack_pipe)(it % 3), pp, vpp, m, f, b, p2p, wrap) == 0);
    }
}
END_TEST

/* The old two-run extrapolation (m = 2p + m % p and m + p, increment assumed
 * constant) predicted 287.375 here: the period (3 micro-batches, the cycle
 * F0 F1 F2 B2 B1 B0 through every rank) had not set in by 7 micro-batches. */
START_TEST(late_period)
{
    double f[3] = {1.5, 1.75, 1.125}, b[3] = {2.5, 2.375, 2.625}, p2p[3] = {0.25, 0.125, 0};
    long double ref_end[3];
    double t = schedule_simulate_ex(CORE, 3, 1, 64, f, b, p2p, 0, NULL, NULL);
    long double want = ref_simulate(CORE, 3, 1, 64, f, b, p2p, 0, ref_end);
    ck_assert(fabsl(t - want) <= 1e-12L * want);
    ck_assert(fabs(t - 287.375) > 1);
    check_instance(CORE, 3, 1, 64, f, b, p2p, 0);
}
END_TEST

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
        for (j = 0; j < 5; j++)
            for (k = STACK_PIPE_MEGATRON; k <= STACK_PIPE_TORCH; k++) {
                int p = ps[i], m = ms[j];
                double t = schedule_simulate((stack_pipe)k, p, 1, m, f, b, p2p, NULL);
                ck_assert_rel(t, (m + p - 1) * 3.0, 1e-12);
                /* bubble fraction (p - 1)/m */
                ck_assert(fabs(t / (m * 3.0) - 1 - schedule_bubble_fraction(p, 1, m)) < 1e-9);
            }
}
END_TEST

START_TEST(interleaved_equal_stages)
{
    static const int cfg[][3] = {{4, 2, 8}, {4, 2, 16}, {8, 3, 16}, {2, 4, 8}, {8, 2, 64},
                                 {4, 2, 4}, {8, 3, 8}};
    double f[8], b[8];
    size_t i;
    int k;
    for (k = 0; k < 8; k++) {
        f[k] = 1.0;
        b[k] = 2.0;
    }
    for (i = 0; i < sizeof cfg / sizeof cfg[0]; i++)
        for (k = STACK_PIPE_MEGATRON; k <= STACK_PIPE_TORCH; k++) {
            int p = cfg[i][0], v = cfg[i][1], m = cfg[i][2];
            double t = schedule_simulate((stack_pipe)k, p, v, m, f, b, NULL, NULL);
            /* m (f + b) plus a bubble of (p - 1)(f + b)/v */
            ck_assert_rel(t, m * 3.0 * (1 + schedule_bubble_fraction(p, v, m)), 1e-9);
        }
}
END_TEST

/* Uneven chunks within a rank (every rank's chunk 0 twice its chunk 1: a
 * 3-layer rank split 2 | 1, as a layout gives GPT 530B at pp 35 vpp 2):
 * Megatron's order runs a group of pp micro-batches chunk by chunk, so a
 * rank's fast chunk-1 forwards wait on the slow chunk-0 outputs of rank
 * pp - 1 and the step is slower than at vpp 1, the more so the longer the
 * ring.  pp 5, m 20, f = (2, 1), b = (4, 2) per rank: 219, against the
 * even split's closed form (m + (p - 1)/v)(f + b) = 22 x 9 = 198 and vpp
 * 1's (m + p - 1)(f + b) = 24 x 9 = 216 (219 also from an independent
 * replay of schedules.py's order in Python; 1.0 | 2.0 gives 222).  At pp 2
 * the steady state keeps the full rate: 9 per micro-batch from m 64 to 128. */
START_TEST(interleaved_uneven_chunks)
{
    double f[5 * 2], b[5 * 2], f1[5], b1[5];
    for (int r = 0; r < 5; r++) {
        f[2 * r] = 2;
        f[2 * r + 1] = 1;
        b[2 * r] = 4;
        b[2 * r + 1] = 2;
        f1[r] = 3;
        b1[r] = 6;
    }
    ck_assert_rel(schedule_simulate_chunks(CORE, 5, 2, 20, f, b, NULL, 0, NULL, NULL), 219.0,
                  1e-12);
    ck_assert_rel(schedule_simulate(CORE, 5, 1, 20, f1, b1, NULL, NULL), 216.0, 1e-12);
    ck_assert_rel(schedule_simulate(CORE, 5, 2, 20, f1, b1, NULL, NULL), 198.0, 1e-12);
    ck_assert_rel(schedule_simulate_chunks(CORE, 2, 2, 128, f, b, NULL, 0, NULL, NULL) -
                      schedule_simulate_chunks(CORE, 2, 2, 64, f, b, NULL, 0, NULL, NULL),
                  64 * 9.0, 1e-12);
}
END_TEST

/* Millions of micro-batches: the closed forms for equal stages, and two
 * hand-derived uneven 1F1B pipelines of 2 ranks without p2p.
 * f = (1, 2), b = (2, 4): rank 1 is the bottleneck; it starts F0 at 1 (after
 * rank 0's F0), then is busy without a gap (each F(k + 1) arrived from rank 0
 * long before), so it ends its B(m - 1) at 1 + 6m and rank 0's B(m - 1)
 * ends 2 later: 6m + 3.  f = (2, 1), b = (4, 2): rank 0 runs F0 F1 (0..4),
 * waits for B0 from rank 1 (F0 2..3, B0 3..5), then B0 5..9 and from there
 * F(k + 1), B(k) every 6 without a gap (rank 1's B(k) is back within 3), so
 * B(m - 2) ends at 9 + 6(m - 2); B(m - 1) follows it directly (no forward
 * left): 6m + 1. */
START_TEST(long_runs)
{
    static const int ms[] = {1000, 1000000};
    double f[8], b[8], p2p[8] = {0};
    double fa[2] = {1, 2}, ba[2] = {2, 4}, fb[2] = {2, 1}, bb[2] = {4, 2};
    size_t i;
    int k;
    for (k = 0; k < 8; k++) {
        f[k] = 1.0;
        b[k] = 2.0;
    }
    for (i = 0; i < 2; i++) {
        int m = ms[i];
        ck_assert_rel(schedule_simulate(CORE, 8, 1, m, f, b, p2p, NULL), (m + 7) * 3.0, 1e-12);
        ck_assert_rel(schedule_simulate(CORE, 8, 2, m, f, b, p2p, NULL), m * 3.0 + 7 * 3.0 / 2,
                      1e-12);
        ck_assert_rel(schedule_simulate(CORE, 8, 4, m, f, b, p2p, NULL), m * 3.0 + 7 * 3.0 / 4,
                      1e-12);
        ck_assert_rel(schedule_simulate(CORE, 2, 1, m, fa, ba, p2p, NULL), 6.0 * m + 3, 1e-12);
        ck_assert_rel(schedule_simulate(CORE, 2, 1, m, fb, bb, p2p, NULL), 6.0 * m + 1, 1e-12);
    }
}
END_TEST

/* The event engine (--trace) against the fast one, and its events. */
START_TEST(events_match_fast)
{
    unsigned seed = 99;
    int it;
    for (it = 0; it < 100; it++) {
        double f[32], b[32], p2p[32], e1[32], e2[32], last[32] = {0}, wrap, t1, t2;
        int pp = 1 + rand_r(&seed) % 32, vpp = 1 + rand_r(&seed) % 4, k, nf = 0, nb = 0;
        int m = pp * (1 + rand_r(&seed) % 6);
        stack_pipe pipe = (stack_pipe)(it % 3);
        sched_events ev = {NULL, 0, 0};
        wrap = random_stages(&seed, pp, f, b, p2p);
        t1 = schedule_simulate_ex(pipe, pp, vpp, m, f, b, p2p, wrap, e1, NULL);
        t2 = schedule_simulate_ex(pipe, pp, vpp, m, f, b, p2p, wrap, e2, &ev);
        ck_assert(t1 > 0 && t2 > 0);
        ck_assert_rel(t1, t2, 1e-12);
        for (k = 0; k < ev.n; k++) {
            const sched_event *x = &ev.ev[k];
            if (x->kind == SCHED_SEND)
                continue;
            nf += x->kind == SCHED_FORWARD;
            nb += x->kind == SCHED_BACKWARD;
            if (x->end_s > last[x->stage])
                last[x->stage] = x->end_s;
        }
        ck_assert_int_eq(nf, pp * m * vpp);
        ck_assert_int_eq(nb, pp * m * vpp);
        for (k = 0; k < pp; k++) {
            ck_assert_rel(e1[k], e2[k], 1e-12);
            ck_assert_rel(last[k], e2[k], 1e-12);
        }
        sched_events_free(&ev);
    }
}
END_TEST

/* Without events nothing is allocated, for every pp up to the maximum (an
 * allocation failure cannot change a plan). */
START_TEST(no_allocation)
{
    static const int ps[] = {1, 16, 17, 64, 255, STRATEGY_MAX_STAGES};
    static const int vs[] = {1, 2, 4};
    double f[STRATEGY_MAX_STAGES], b[STRATEGY_MAX_STAGES], p2p[STRATEGY_MAX_STAGES];
    double end[STRATEGY_MAX_STAGES];
    size_t i, j;
    int k;
    for (k = 0; k < STRATEGY_MAX_STAGES; k++) {
        f[k] = 1.0;
        b[k] = 2.0;
        p2p[k] = 0;
    }
    for (i = 0; i < sizeof ps / sizeof ps[0]; i++)
        for (j = 0; j < sizeof vs / sizeof vs[0]; j++) {
            int p = ps[i], v = vs[j], m = 4 * p;
            double t;
            alloc_fail_at(1);
            t = schedule_simulate_ex(CORE, p, v, m, f, b, p2p, 0, end, NULL);
            ck_assert_int_eq(alloc_count(), 0);
            ck_assert(!alloc_failed());
            alloc_fail_at(0);
            ck_assert_rel(t, m * 3.0 + (p - 1) * 3.0 / v, 1e-12);
        }
    /* uneven, against the reference, at the maximum */
    {
        unsigned seed = 5;
        double wrap = random_stages(&seed, STRATEGY_MAX_STAGES, f, b, p2p);
        alloc_fail_at(1);
        schedule_simulate_ex(CORE, STRATEGY_MAX_STAGES, 2, 512, f, b, p2p, wrap, end, NULL);
        ck_assert_int_eq(alloc_count(), 0);
        alloc_fail_at(0);
        check_instance(CORE, STRATEGY_MAX_STAGES, 2, 512, f, b, p2p, wrap);
        check_instance(CORE, STRATEGY_MAX_STAGES, 1, 300, f, b, p2p, wrap);
    }
}
END_TEST

/* The cache answers repeats bit for bit, keeps the last 8 distinct inputs,
 * and allocates nothing. */
START_TEST(cache)
{
    static sched_cache c;
    double f[9][16], b[9][16], p2p[9][16], wrap[9];
    unsigned seed = 4242;
    int i, k, pp = 16, vpp = 2, m = 64;

    sched_cache_init(&c);
    for (i = 0; i < 9; i++)
        wrap[i] = random_stages(&seed, pp, f[i], b[i], p2p[i]);
    alloc_fail_at(1);
    for (k = 0; k < 3; k++)   /* 8 inputs: misses once each, then hits */
        for (i = 0; i < 8; i++) {
            double e1[16], e2[16];
            double t1 =
                schedule_simulate_cached(&c, CORE, pp, vpp, m, f[i], b[i], p2p[i], wrap[i], e1);
            double t2 =
                schedule_simulate_ex(CORE, pp, vpp, m, f[i], b[i], p2p[i], wrap[i], e2, NULL);
            ck_assert(memcmp(&t1, &t2, sizeof t1) == 0);
            ck_assert(memcmp(e1, e2, sizeof e1) == 0);
        }
    ck_assert_int_eq(c.misses, 8);
    ck_assert_int_eq(c.hits, 16);
    /* a ninth evicts the least recently used (input 0) */
    schedule_simulate_cached(&c, CORE, pp, vpp, m, f[8], b[8], p2p[8], wrap[8], NULL);
    schedule_simulate_cached(&c, CORE, pp, vpp, m, f[1], b[1], p2p[1], wrap[1], NULL);
    ck_assert_int_eq(c.misses, 9);
    schedule_simulate_cached(&c, CORE, pp, vpp, m, f[0], b[0], p2p[0], wrap[0], NULL);
    ck_assert_int_eq(c.misses, 10);
    /* any input that differs misses: one bit of one time, m, vpp, the stack's
     * schedule */
    b[3][7] = nextafter(b[3][7], 10.0);
    schedule_simulate_cached(&c, CORE, pp, vpp, m, f[3], b[3], p2p[3], wrap[3], NULL);
    schedule_simulate_cached(&c, CORE, pp, vpp, m + pp, f[4], b[4], p2p[4], wrap[4], NULL);
    schedule_simulate_cached(&c, CORE, pp, 1, m, f[5], b[5], p2p[5], wrap[5], NULL);
    schedule_simulate_cached(&c, STACK_PIPE_TORCH, pp, vpp, m, f[6], b[6], p2p[6], wrap[6], NULL);
    ck_assert_int_eq(c.misses, 14);
    ck_assert_int_eq(alloc_count(), 0);
    alloc_fail_at(0);
    /* no cache: a plain simulation */
    ck_assert(schedule_simulate_cached(NULL, CORE, 4, 1, 8, f[0], b[0], p2p[0], 0, NULL) > 0);
}
END_TEST

START_TEST(events_and_bounds)
{
    double f[4] = {1, 1.5, 1, 1}, b[4] = {2, 3, 2, 2.5}, p2p[4] = {0.1, 0.1, 0.1, 0};
    sched_events ev = {NULL, 0, 0};
    int i, nf = 0, nb = 0, ns = 0;
    double t = schedule_simulate(CORE, 4, 2, 8, f, b, p2p, &ev);
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
    double t0 = schedule_simulate(CORE, 4, 1, 16, f, b, z, NULL);
    double t1 = schedule_simulate(CORE, 4, 1, 16, f, b, d, NULL);
    ck_assert(t1 > t0);
    /* fill and drain cross 3 boundaries each way at least */
    ck_assert(t1 >= t0 + 6 * 0.5 - 1e-9);
}
END_TEST

/* Each stack's warm-up by hand from its source (inputs/stack.h).  pp 4,
 * vpp 2, m 4 (one group, 8 chunk-forwards per rank): Megatron-LM before
 * core_r0.10.0 runs all 8 first on every rank (num_microbatches ==
 * pipeline_parallel_size); Megatron-Core from core_r0.10.0 and torch's
 * ScheduleInterleaved1F1B 2 (4 - 1 - r) + (2 - 1) 4 = 10, 8, 6, 4, capped
 * at 8.  m 8: every stack 10, 8, 6, 4 (of 16).  Without interleaving
 * pp - 1 - r, at most m, on every stack (Megatron's 1F1B; torch's
 * Schedule1F1B and DeepSpeed's TrainSchedule in the same order). */
START_TEST(warmup_per_stack)
{
    static const int core4[4] = {8, 8, 6, 4}, m8[4] = {10, 8, 6, 4};
    for (int r = 0; r < 4; r++) {
        ck_assert_int_eq(stack_pipe_warmup(STACK_PIPE_MEGATRON, 4, 2, 4, r), 8);
        ck_assert_int_eq(stack_pipe_warmup(CORE, 4, 2, 4, r), core4[r]);
        ck_assert_int_eq(stack_pipe_warmup(STACK_PIPE_TORCH, 4, 2, 4, r), core4[r]);
        for (int k = STACK_PIPE_MEGATRON; k <= STACK_PIPE_TORCH; k++) {
            ck_assert_int_eq(stack_pipe_warmup((stack_pipe)k, 4, 2, 8, r), m8[r]);
            ck_assert_int_eq(stack_pipe_warmup((stack_pipe)k, 4, 1, 8, r), 3 - r);
            ck_assert_int_eq(stack_pipe_warmup((stack_pipe)k, 4, 1, 2, r), r < 2 ? 2 : 3 - r);
        }
    }
    /* pp 8 vpp 3 m 8: the last rank (v - 1) pp = 16 of 24, the first capped */
    ck_assert_int_eq(stack_pipe_warmup(CORE, 8, 3, 8, 7), 16);
    ck_assert_int_eq(stack_pipe_warmup(CORE, 8, 3, 8, 0), 24);
    ck_assert_int_eq(stack_pipe_warmup(STACK_PIPE_MEGATRON, 8, 3, 8, 7), 24);
    /* the built-in stacks' schedules */
    ck_assert_int_eq(stack_find("megatron-core")->memory.pipe, STACK_PIPE_MEGATRON_CORE);
    ck_assert_int_eq(stack_find("megatron-lm-2021")->memory.pipe, STACK_PIPE_MEGATRON);
    ck_assert_int_eq(stack_find("pytorch-fsdp2")->memory.pipe, STACK_PIPE_TORCH);
}
END_TEST

/* The order every stack runs: Megatron-Core's model_parallel_config.py
 * example for pp 2, vpp 2, a group of 2, m 4 ("rank 0 | 0 1 0 1 2 3 2 3"):
 * forwards of micro-batches 0 1 0 1 2 3 2 3 on chunks 0 0 1 1 0 0 1 1, the
 * backwards on chunks 1 1 0 0 1 1 0 0; rank 0 (warm-up 2 (2 - 1) + 2 = 4)
 * runs F0-F3, then F4 B0 F5 B1 F6 B2 F7 B3, then B4-B7. */
START_TEST(order_hand)
{
    static const int mb[8] = {0, 1, 0, 1, 2, 3, 2, 3}, fc[8] = {0, 0, 1, 1, 0, 0, 1, 1};
    static const int fwd[16] = {1, 1, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0, 0, 0, 0, 0};
    static const int idx[16] = {0, 1, 2, 3, 4, 0, 5, 1, 6, 2, 7, 3, 4, 5, 6, 7};
    for (int k = 0; k < 8; k++) {
        int m = -1, gs = -1;
        ck_assert_int_eq(stack_pipe_chunk(k, 2, 2, 4, false, &m, &gs), fc[k]);
        ck_assert_int_eq(m, mb[k]);
        ck_assert_int_eq(gs, 2);
        ck_assert_int_eq(stack_pipe_chunk(k, 2, 2, 4, true, &m, NULL), 1 - fc[k]);
        ck_assert_int_eq(m, mb[k]);
    }
    ck_assert_int_eq(stack_pipe_warmup(CORE, 2, 2, 4, 0), 4);
    for (int j = 0; j < 16; j++) {
        int k = -1;
        ck_assert_int_eq(stack_pipe_op(j, 4, 8, &k), fwd[j]);
        ck_assert_int_eq(k, idx[j]);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pipeline");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, warmup_per_stack);
    tcase_add_test(tc, order_hand);
    tcase_add_test(tc, one_f_one_b_equal_stages);
    tcase_add_test(tc, interleaved_equal_stages);
    tcase_add_test(tc, interleaved_uneven_chunks);
    tcase_add_test(tc, long_runs);
    tcase_add_test(tc, late_period);
    tcase_add_test(tc, fast_matches_reference_random);
    tcase_add_test(tc, fast_matches_reference_long);
    tcase_add_test(tc, events_match_fast);
    tcase_add_test(tc, no_allocation);
    tcase_add_test(tc, cache);
    tcase_add_test(tc, events_and_bounds);
    tcase_add_test(tc, p2p_delays_lengthen);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
