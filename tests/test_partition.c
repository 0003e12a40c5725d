/* test_partition.c: the layer partitioners (partition_dp.c, partition_ilp.c).
 *
 * Hand-derived cases (uniform layers, an output layer on the last stage, a
 * memory limit that forces a short first stage), the DP against the GLPK ILP
 * on many random instances (the same optimal bottleneck, the same verdict
 * when nothing fits), the ILP-only extras (per-class layer caps, the fill
 * objective) and clean statuses for bad problems and tiny time limits; the
 * valid range of coefficients (partition.h), the DP without cancellation at
 * 1e30 next to 1e9, the ILP's exact check of GLPK's answer, DP == ILP on
 * instances at the range's edges, and a time limit that covers building.
 */
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "partition/partition.h"
#include "testutil.h"

#define MAXL 24
#define MAXP 8
#define MAXK 3

typedef struct inst {
    partition_problem pb;
    int cls[MAXP];
    double t[MAXK * MAXL], st[MAXK * MAXL], act[MAXK * MAXL], peak[MAXK * MAXL];
    double ft[MAXP], fb[MAXP], infl[MAXP], cap[MAXP];
    int caps[MAXK];
} inst;

/* L uniform layers of 1 s and 1 byte on P stages of one class; no memory
 * limit, no fixed costs. */
static void uniform(inst *x, int L, int P)
{
    memset(x, 0, sizeof *x);
    for (int i = 0; i < L; i++) {
        x->t[i] = 1.0;
        x->st[i] = 1.0;
    }
    for (int s = 0; s < P; s++) {
        x->infl[s] = 1;
        x->cap[s] = HUGE_VAL;
    }
    x->pb = (partition_problem){L, P, 1, x->cls, x->t, x->st, x->act, NULL, x->ft, x->fb,
                                x->infl, x->cap, 1, NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL};
}

START_TEST(dp_uniform_even)
{
    inst x;
    partition_result r;
    uniform(&x, 12, 4);
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_OK);
    ck_assert(r.optimal);
    ck_assert_double_eq(r.bottleneck_s, 3.0);     /* 12 / 4 */
    for (int s = 0; s < 4; s++)
        ck_assert_int_eq(r.n_layers[s], 3);
}
END_TEST

START_TEST(dp_output_layer_on_last_stage)
{
    /* 10 layers of 1 s on 3 stages, the last also runs a 2 s output layer:
     * 4 + 4 + (2 + 2) = bottleneck 4 (an even 10/3 split cannot beat 4) */
    inst x;
    partition_result r;
    uniform(&x, 10, 3);
    x.ft[2] = 2.0;
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_OK);
    ck_assert_double_eq(r.bottleneck_s, 4.0);
    ck_assert_int_eq(r.n_layers[0], 4);
    ck_assert_int_eq(r.n_layers[1], 4);
    ck_assert_int_eq(r.n_layers[2], 2);
}
END_TEST

START_TEST(dp_memory_forces_short_first_stage)
{
    /* 8 layers, 2 stages; activations 1 byte per layer per micro-batch, the
     * first stage holds 4 micro-batches, capacity 6 bytes on stage 0: it can
     * take 1 layer (1 + 4 = 5 bytes), not 2 (2 + 8 = 10).  Bottleneck 7. */
    inst x;
    partition_result r;
    uniform(&x, 8, 2);
    for (int i = 0; i < 8; i++)
        x.act[i] = 1.0;
    x.infl[0] = 4;
    x.cap[0] = 6.0;
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_OK);
    ck_assert_int_eq(r.n_layers[0], 1);
    ck_assert_double_eq(r.bottleneck_s, 7.0);
    ck_assert_int_eq(partition_ilp(&x.pb, 10.0, &r), PARTITION_OK);
    ck_assert_double_eq(r.bottleneck_s, 7.0);
    x.cap[0] = 4.0;   /* not even one layer fits */
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INFEASIBLE);
    ck_assert_int_eq(partition_ilp(&x.pb, 10.0, &r), PARTITION_INFEASIBLE);
}
END_TEST

START_TEST(dp_two_speeds)
{
    /* 12 layers; stage 0 on a GPU 3x faster (1 s/layer), stage 1 on a slow
     * one (3 s/layer): 9 + 3 layers gives 9 s and 9 s, the optimum. */
    inst x;
    partition_result r;
    uniform(&x, 12, 2);
    x.pb.n_classes = 2;
    x.cls[1] = 1;
    /* class k's layer i is at [k * L + i] */
    for (int i = 0; i < 12; i++) {
        x.t[12 + i] = 3.0;
        x.st[12 + i] = 1.0;
    }
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_OK);
    ck_assert_double_eq(r.bottleneck_s, 9.0);
    ck_assert_int_eq(r.n_layers[0], 9);
    ck_assert_int_eq(r.n_layers[1], 3);
}
END_TEST

/* A random instance; returns it in *x.  Values are drawn from a few decimal
 * digits so distinct splits rarely tie by accident. */
static double urand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return (double)((*seed >> 8) & 0xFFFF) / 65536.0;
}

static void random_inst(inst *x, unsigned *seed)
{
    int L = 2 + (int)(urand(seed) * (MAXL - 1)), P, K;
    double total = 0;
    memset(x, 0, sizeof *x);
    if (L > MAXL)
        L = MAXL;
    P = 1 + (int)(urand(seed) * (L < MAXP ? L : MAXP));
    if (P > L)
        P = L;
    if (P > MAXP)
        P = MAXP;
    K = 1 + (int)(urand(seed) * MAXK);
    if (K > MAXK)
        K = MAXK;
    for (int k = 0; k < K; k++) {
        double speed = 0.5 + 2.0 * urand(seed);
        for (int i = 0; i < L; i++) {
            x->t[k * L + i] = speed * (0.5 + urand(seed));
            x->st[k * L + i] = 1.0 + 3.0 * urand(seed);
            x->act[k * L + i] = 0.5 + urand(seed);
            x->peak[k * L + i] = urand(seed) < 0.3 ? 4.0 * urand(seed) : 0.0;
            total += x->st[k * L + i] + x->act[k * L + i];
        }
    }
    for (int s = 0; s < P; s++) {
        int m = 1 + (int)(urand(seed) * 8);
        x->cls[s] = (int)(urand(seed) * K) % K;
        x->ft[s] = (s == 0 || s == P - 1) ? urand(seed) : 0.0;
        x->fb[s] = urand(seed);
        x->infl[s] = P - s < m ? P - s : m;
        /* from tight (often infeasible) to loose */
        x->cap[s] = urand(seed) < 0.1 ? HUGE_VAL
                                       : (0.5 + 3.0 * urand(seed)) * total / (K * P) * 2.0;
    }
    x->pb = (partition_problem){L, P, K, x->cls, x->t, x->st, x->act,
                                urand(seed) < 0.5 ? x->peak : NULL, x->ft, x->fb, x->infl,
                                x->cap, 1, NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL};
}

START_TEST(dp_equals_ilp_on_random_instances)
{
    unsigned seed = 20261121u;
    int agree = 0, feasible = 0, n = 300;
    for (int k = 0; k < n; k++) {
        inst x;
        partition_result rd, ri;
        partition_status sd, si;
        bool fits;
        random_inst(&x, &seed);
        sd = partition_dp(&x.pb, NULL, &rd);
        si = partition_ilp(&x.pb, 20.0, &ri);
        ck_assert_msg(sd == PARTITION_OK || sd == PARTITION_INFEASIBLE, "dp status %d", sd);
        ck_assert_msg(si == sd, "instance %d (L %d P %d K %d): dp %s, ilp %s", k,
                      x.pb.n_layers, x.pb.n_stages, x.pb.n_classes,
                      partition_status_name(sd), partition_status_name(si));
        if (sd == PARTITION_OK) {
            feasible++;
            ck_assert(ri.optimal);
            partition_measure(&x.pb, rd.n_layers, &fits);
            ck_assert(fits);
            partition_measure(&x.pb, ri.n_layers, &fits);
            ck_assert(fits);
            ck_assert_msg(fabs(rd.bottleneck_s - ri.bottleneck_s) <= 1e-6 * rd.bottleneck_s,
                          "instance %d: dp %.9g, ilp %.9g", k, rd.bottleneck_s,
                          ri.bottleneck_s);
        }
        agree++;
    }
    printf("partition: DP and ILP agree on %d of %d random instances (%d feasible)\n", agree,
           n, feasible);
    ck_assert_int_eq(agree, n);
    ck_assert_int_ge(feasible, n / 4);
    ck_assert_int_le(feasible, n - n / 20);
}
END_TEST

/* The least bottleneck of pb over every split that fits (HUGE_VAL: none),
 * by brute force over the compositions of L into P positive parts. */
static double brute_best(const partition_problem *pb)
{
    int split[MAXP];
    double best = HUGE_VAL;
    for (int s = 0; s < pb->n_stages - 1; s++)
        split[s] = 1;
    split[pb->n_stages - 1] = pb->n_layers - (pb->n_stages - 1);
    for (;;) {
        bool fits;
        double b = partition_measure(pb, split, &fits);
        int s;
        if (fits && b < best)
            best = b;
        /* next composition: increment the first part that can grow */
        for (s = 0; s < pb->n_stages - 1; s++) {
            if (split[pb->n_stages - 1] > 1) {
                split[s]++;
                split[pb->n_stages - 1]--;
                break;
            }
            split[pb->n_stages - 1] += split[s] - 1;
            split[s] = 1;
        }
        if (s == pb->n_stages - 1)
            return best;
    }
}

/* The DP's split of pb is the brute force's optimum, or neither has one. */
static void assert_dp_is_brute_best(const partition_problem *pb)
{
    partition_result rd;
    double best = brute_best(pb);
    if (partition_dp(pb, NULL, &rd) == PARTITION_OK)
        ck_assert_msg(fabs(rd.bottleneck_s - best) <= 1e-12 * best, "dp %.9g, brute %.9g",
                      rd.bottleneck_s, best);
    else
        ck_assert(!isfinite(best));
}

START_TEST(dp_is_exhaustive_optimum)
{
    /* brute force over all splits of small instances */
    unsigned seed = 7u;
    for (int k = 0; k < 200; k++) {
        inst x;
        random_inst(&x, &seed);
        if (x.pb.n_layers > 12 || x.pb.n_stages > 5)
            continue;
        assert_dp_is_brute_best(&x.pb);
    }
}
END_TEST

/* Leading layers (partition.h; the placer's block recompute).  By hand, 6
 * like layers with N = 2: a plain layer 1 s, 3 B of activations, 1 B
 * transient; a leading one 2 s (its re-forward), 1 B (its input), 4 B
 * transient (its whole activations and the 1 B), and a plain layer frees
 * 3 - 1 = 2 B of it.  Stage [0, 4): 2 + 2 + 1 + 1 = 6 s; 1 + 1 + 3 + 3 = 8
 * B kept, transient max(4 - 2 x 2, 1) = 1: 9 B.  Stage [0, 2): 4 s, 2 + 4
 * = 6 B.  Two stages: 1/5 takes 7 s, 2/4 6 s, 3/3 5 s each, the optimum.
 * The ILP refuses such problems.  Then random instances of like layers
 * per class: the DP's optimum is the brute force's. */
START_TEST(dp_leading_layers)
{
    inst x;
    partition_result r;
    double lt[MAXK * MAXL], la[MAXK * MAXL], lp[MAXK * MAXL], fr[MAXK * MAXL];
    unsigned seed = 11u;
    uniform(&x, 6, 2);
    for (int i = 0; i < 6; i++) {
        x.st[i] = 0;
        x.act[i] = 3;
        x.peak[i] = 1;
        lt[i] = 2;
        la[i] = 1;
        lp[i] = 4;
        fr[i] = 2;
    }
    x.pb.peak_bytes = x.peak;
    x.pb.lead_layers = 2;
    x.pb.lead_time_s = lt;
    x.pb.lead_act_bytes = la;
    x.pb.lead_peak_bytes = lp;
    x.pb.freed_bytes = fr;
    ck_assert_double_eq(partition_stage_time(&x.pb, 0, 0, 4), 6.0);
    ck_assert_double_eq(partition_stage_bytes(&x.pb, 0, 0, 4), 9.0);
    ck_assert_double_eq(partition_stage_time(&x.pb, 0, 0, 2), 4.0);
    ck_assert_double_eq(partition_stage_bytes(&x.pb, 0, 0, 2), 6.0);
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_OK);
    ck_assert_double_eq(r.bottleneck_s, 5.0);
    ck_assert_int_eq(r.n_layers[0], 3);
    ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_UNSUPPORTED);
    for (int k = 0; k < 300; k++) {
        random_inst(&x, &seed);
        if (x.pb.n_layers > 12 || x.pb.n_stages > 5)
            continue;
        for (int c = 0; c < x.pb.n_classes; c++)
            for (int i = 0; i < x.pb.n_layers; i++) {
                int at = c * x.pb.n_layers + i, c0 = c * x.pb.n_layers;
                x.t[at] = x.t[c0];
                x.st[at] = x.st[c0];
                x.act[at] = x.act[c0];
                x.peak[at] = x.peak[c0];
                lt[at] = 1.5 * x.t[c0];
                la[at] = 0.25 * x.act[c0];
                lp[at] = x.act[c0] + x.peak[c0];
                fr[at] = 0.75 * x.act[c0];
            }
        x.pb.peak_bytes = x.peak;
        x.pb.lead_layers = 1 + k % 4 < x.pb.n_layers ? 1 + k % 4 : x.pb.n_layers;
        x.pb.lead_time_s = lt;
        x.pb.lead_act_bytes = la;
        x.pb.lead_peak_bytes = lp;
        x.pb.freed_bytes = fr;
        assert_dp_is_brute_best(&x.pb);
    }
}
END_TEST

/* cut_time_s: when no range memory refused is faster than the optimum,
 * the DP without capacities has the same optimum (the placer's
 * placer_memory_shaped); when it is faster, memory shaped the split on
 * some instances (the bottleneck without capacities is lower), and never
 * the other way round. */
START_TEST(dp_cut_time_tells_a_memory_shaped_split)
{
    unsigned seed = 20261125u;
    int free_opt = 0, shaped = 0, lower = 0;
    for (int k = 0; k < 300; k++) {
        inst x;
        partition_result rc, rn;
        double nocap[MAXP];
        random_inst(&x, &seed);
        if (partition_dp(&x.pb, NULL, &rc) != PARTITION_OK)
            continue;
        for (int s = 0; s < x.pb.n_stages; s++)
            nocap[s] = HUGE_VAL;
        x.pb.capacity_bytes = nocap;
        ck_assert_int_eq(partition_dp(&x.pb, NULL, &rn), PARTITION_OK);
        ck_assert(!isfinite(rn.cut_time_s));
        ck_assert(rn.bottleneck_s <= rc.bottleneck_s);
        if (rc.cut_time_s >= rc.bottleneck_s) {
            free_opt++;
            ck_assert_msg(rn.bottleneck_s == rc.bottleneck_s, "instance %d: %.9g vs %.9g free",
                          k, rc.bottleneck_s, rn.bottleneck_s);
        } else {
            shaped++;
            lower += rn.bottleneck_s < rc.bottleneck_s;
        }
    }
    printf("partition: %d splits the fastest ignoring memory, %d memory may shape (%d did)\n",
           free_opt, shaped, lower);
    ck_assert_int_ge(free_opt, 20);
    ck_assert_int_ge(lower, 20);
}
END_TEST

START_TEST(ilp_only_layer_caps)
{
    /* two stages of a fast class then one slow stage; the fast class may
     * hold at most 6 layers in all: DP refuses, ILP obeys */
    inst x;
    partition_result r;
    int caps[2] = {6, -1};
    uniform(&x, 12, 3);
    x.pb.n_classes = 2;
    x.cls[2] = 1;
    for (int i = 0; i < 12; i++) {
        x.t[12 + i] = 2.0;
        x.st[12 + i] = 1.0;
    }
    x.pb.class_layer_cap = caps;
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_UNSUPPORTED);
    ck_assert_int_eq(partition_ilp(&x.pb, 10.0, &r), PARTITION_OK);
    ck_assert_int_le(r.n_layers[0] + r.n_layers[1], 6);
    /* 3 + 3 fast, 6 slow x 2 s = 12 s */
    ck_assert_double_eq(r.bottleneck_s, 12.0);
    caps[0] = 1;   /* two fast stages need >= 2 layers */
    ck_assert_int_eq(partition_ilp(&x.pb, 10.0, &r), PARTITION_INFEASIBLE);
    caps[0] = -1;  /* no cap: 5 + 5 fast... bottleneck min max(a, b, 2c) */
    ck_assert_int_eq(partition_ilp(&x.pb, 10.0, &r), PARTITION_OK);
    ck_assert_double_eq(r.bottleneck_s, 5.0);   /* 5, 5, 2 layers x 2 s = 4 */
}
END_TEST

START_TEST(ilp_fill_objective_never_worse)
{
    unsigned seed = 99u;
    int better = 0;
    for (int k = 0; k < 60; k++) {
        inst x;
        partition_result rd, ri;
        double od, sum = 0;
        int first = 0;
        random_inst(&x, &seed);
        if (partition_dp(&x.pb, NULL, &rd) != PARTITION_OK)
            continue;
        x.pb.fill_weight = 1.0 / 7.0;   /* 8 micro-batches */
        ck_assert_int_eq(partition_dp(&x.pb, NULL, &ri), PARTITION_UNSUPPORTED);
        ck_assert_int_eq(partition_ilp(&x.pb, 20.0, &ri), PARTITION_OK);
        for (int s = 0; s < x.pb.n_stages; s++) {
            sum += partition_stage_time(&x.pb, s, first, rd.n_layers[s]);
            first += rd.n_layers[s];
        }
        od = rd.bottleneck_s + x.pb.fill_weight * sum;
        ck_assert_msg(ri.objective <= od * (1 + 1e-6), "ilp %.9g > dp split %.9g",
                      ri.objective, od);
        ck_assert(ri.bottleneck_s >= rd.bottleneck_s * (1 - 1e-9));
        if (ri.objective < od * (1 - 1e-6))
            better++;
    }
    printf("partition: the fill objective improved on the DP split in %d instances\n", better);
}
END_TEST

START_TEST(bad_problems_clean_status)
{
    inst x;
    partition_result r;
    planner_error why;
    uniform(&x, 4, 2);
    x.t[1] = NAN;
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INVALID);
    ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_INVALID);
    ck_assert_int_eq(partition_validate(&x.pb, tu_err(&why)), PLANNER_E_INPUT);
    ck_assert_str_eq(why.msg, "class 0 layer 1: a cost is outside 0 or [1e-30, 1e+30]");
    uniform(&x, 4, 5);   /* more stages than layers */
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INVALID);
    ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_INVALID);
    uniform(&x, 4, 2);
    x.cls[1] = 3;        /* class out of range */
    ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_INVALID);
    uniform(&x, 4, 2);
    ck_assert_int_eq(partition_ilp(&x.pb, 0.0, &r), PARTITION_INVALID);
    ck_assert_int_eq(partition_ilp(&x.pb, -1.0, &r), PARTITION_INVALID);
}
END_TEST

START_TEST(ilp_time_limit_is_clean)
{
    /* a large uniform instance (hard for branch and bound: many equal
     * splits) under a 1 ms limit returns a split or TIMEOUT, never aborts */
    static double t[PARTITION_MAX_STAGES * 2], st[PARTITION_MAX_STAGES * 2];
    static double act[PARTITION_MAX_STAGES * 2];
    double ft[40] = {0}, fb[40] = {0}, infl[40], cap[40];
    int cls[40] = {0};
    partition_problem pb;
    partition_result r;
    partition_status s;
    for (int i = 0; i < 126; i++) {
        t[i] = 1.0 + 1e-3 * (i % 7);
        st[i] = 1.0;
        act[i] = 0.0;
    }
    for (int i = 0; i < 40; i++) {
        infl[i] = 1;
        cap[i] = HUGE_VAL;
    }
    ft[39] = 3.0;
    pb = (partition_problem){126, 40, 1, cls, t, st, act, NULL, ft, fb, infl, cap, 1, NULL,
                             0, 0, 0, 0, NULL, NULL, NULL, NULL};
    s = partition_ilp(&pb, 0.001, &r);
    ck_assert_msg(s == PARTITION_OK || s == PARTITION_TIMEOUT, "status %s",
                  partition_status_name(s));
    if (s == PARTITION_OK) {
        bool fits;
        partition_measure(&pb, r.n_layers, &fits);
        ck_assert(fits);
    }
}
END_TEST

START_TEST(glpk_error_returns_cleanly)
{
    /* GLPK calls its error routine (and would abort) when it runs out of
     * its memory limit; the hook returns here: SOLVER_ERROR, no abort, and
     * the next solve works (a fresh GLPK environment) */
    static double t[126], st[126], act[126];
    double ft[40] = {0}, fb[40] = {0}, infl[40], cap[40];
    int cls[40] = {0};
    partition_problem pb;
    partition_result r;
    for (int i = 0; i < 126; i++) {
        t[i] = 1.0;
        st[i] = 1.0;
        act[i] = 0.0;
    }
    for (int i = 0; i < 40; i++) {
        infl[i] = 1;
        cap[i] = 100.0;
    }
    pb = (partition_problem){126, 40, 1, cls, t, st, act, NULL, ft, fb, infl, cap, 1, NULL,
                             0, 0, 0, 0, NULL, NULL, NULL, NULL};
    glp_mem_limit(1);   /* 1 MB: the 5,040-column program needs more */
    ck_assert_int_eq(partition_ilp(&pb, 5.0, &r), PARTITION_SOLVER_ERROR);
    ck_assert_int_eq(r.status, PARTITION_SOLVER_ERROR);
    /* a small problem afterwards: solved as usual */
    pb.n_layers = 6;
    pb.n_stages = 3;
    ck_assert_int_eq(partition_ilp(&pb, 5.0, &r), PARTITION_OK);
    ck_assert_double_eq(r.bottleneck_s, 2.0);
}
END_TEST

START_TEST(range_rule)
{
    /* partition.h: every coefficient 0 or within [1e-30, 1e30]; capacity
     * also HUGE_VAL; mip_gap within [0, 1]; both solvers say INVALID */
    const double bad[] = {1e-31, 5e-324, 1.0000001e30, 1e300, -1e-30, NAN, HUGE_VAL};
    const double good[] = {0.0, 1e-30, 1e30, 1.0};
    inst x;
    partition_result r;
    planner_error why;
    for (size_t q = 0; q < sizeof bad / sizeof bad[0]; q++) {
        uniform(&x, 4, 2);
        x.st[2] = bad[q];
        ck_assert_int_eq(partition_validate(&x.pb, tu_err(&why)), PLANNER_E_INPUT);
        ck_assert_str_eq(why.msg, "class 0 layer 2: a cost is outside 0 or [1e-30, 1e+30]");
        ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INVALID);
        ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_INVALID);
        uniform(&x, 4, 2);
        x.ft[1] = bad[q];
        ck_assert_int_eq(partition_validate(&x.pb, tu_err(&why)), PLANNER_E_INPUT);
        ck_assert_str_eq(why.msg, "stage 1: a fixed cost is outside 0 or [1e-30, 1e+30]");
        ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INVALID);
        ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_INVALID);
        uniform(&x, 4, 2);
        x.pb.fill_weight = bad[q];
        ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_INVALID);
        if (bad[q] != HUGE_VAL) {   /* HUGE_VAL: no memory limit */
            uniform(&x, 4, 2);
            x.cap[0] = bad[q];
            ck_assert_int_eq(partition_validate(&x.pb, tu_err(&why)), PLANNER_E_INPUT);
            ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INVALID);
            ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_INVALID);
        }
    }
    for (size_t q = 0; q < sizeof good / sizeof good[0]; q++) {
        uniform(&x, 4, 2);
        x.t[2] = x.st[2] = x.act[3] = x.ft[0] = x.fb[1] = good[q];
        x.cap[0] = good[q] > 0 ? good[q] : HUGE_VAL;
        ck_assert_int_eq(partition_validate(&x.pb, tu_err(&why)), PLANNER_OK);
        x.cap[0] = HUGE_VAL;
        ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_OK);
    }
    uniform(&x, 4, 2);
    x.pb.mip_gap = 1.5;
    ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_INVALID);
    x.pb.mip_gap = 1.0;
    ck_assert_int_eq(partition_ilp(&x.pb, 1.0, &r), PARTITION_OK);
}
END_TEST

START_TEST(dp_no_cancellation_at_1e30)
{
    /* 3 layers of 3, 1, 1 s on 2 stages; state bytes 1e30, 5e9, 5e9;
     * capacity 1e30 on stage 0, 6e9 on stage 1.  Split 1 + 2 (bottleneck
     * 3) puts 1e10 bytes on stage 1: it does not fit; 2 + 1 does (1e30 +
     * 5e9 <= 1e30 in doubles and 5e9 <= 6e9): bottleneck 4.  Prefix sums
     * made the 1 + 2 range 0 bytes ((1e30 + 5e9 + 5e9) - 1e30 = 0). */
    inst x;
    partition_result r;
    bool fits;
    uniform(&x, 3, 2);
    x.t[0] = 3.0;
    x.st[0] = 1e30;
    x.st[1] = x.st[2] = 5e9;
    x.cap[0] = 1e30;
    x.cap[1] = 6e9;
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_OK);
    ck_assert_int_eq(r.n_layers[0], 2);
    ck_assert_int_eq(r.n_layers[1], 1);
    ck_assert_double_eq(r.bottleneck_s, 4.0);
    partition_measure(&x.pb, r.n_layers, &fits);
    ck_assert(fits);
    ck_assert_int_eq(partition_ilp(&x.pb, 10.0, &r), PARTITION_OK);
    ck_assert_int_eq(r.n_layers[0], 2);
    ck_assert_double_eq(r.bottleneck_s, 4.0);
    x.cap[1] = 4e9;   /* nothing fits on stage 1 */
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INFEASIBLE);
    ck_assert_int_eq(partition_ilp(&x.pb, 10.0, &r), PARTITION_INFEASIBLE);
}
END_TEST

START_TEST(ilp_never_returns_a_split_that_does_not_fit)
{
    /* 2 layers of 1 byte on 2 stages of capacity 1 - 1e-9 bytes: no stage
     * fits a layer, but only by 1e-9, inside GLPK's row tolerance (1e-7):
     * partition_ilp() never returns such a split as OK */
    inst x;
    partition_result r;
    partition_status st;
    uniform(&x, 2, 2);
    x.cap[0] = x.cap[1] = 1.0 - 1e-9;
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INFEASIBLE);
    st = partition_ilp(&x.pb, 10.0, &r);
    ck_assert_msg(st == PARTITION_INFEASIBLE || st == PARTITION_SOLVER_ERROR, "status %s",
                  partition_status_name(st));
    ck_assert_int_eq(r.n_layers[0], 0);
    /* a stage whose fixed bytes exceed its capacity: infeasible at once */
    uniform(&x, 4, 2);
    x.fb[1] = 2.0;
    x.cap[1] = 1.0;
    ck_assert_int_eq(partition_ilp(&x.pb, 10.0, &r), PARTITION_INFEASIBLE);
    ck_assert_int_eq(partition_dp(&x.pb, NULL, &r), PARTITION_INFEASIBLE);
}
END_TEST

/* random_inst() with a few coefficients moved to the edges of the valid
 * range (1e-30, 1e30): the fuzzer's findings were of this kind (at 1e-300
 * and 1e300, now outside the range). */
static void edge_inst(inst *x, unsigned *seed)
{
    int L, P, K, n;
    random_inst(x, seed);
    L = x->pb.n_layers;
    P = x->pb.n_stages;
    K = x->pb.n_classes;
    n = 1 + (int)(urand(seed) * 3);
    for (int q = 0; q < n; q++) {
        int i = (int)(urand(seed) * K * L) % (K * L), s = (int)(urand(seed) * P) % P;
        double v = urand(seed) < 0.5 ? 1e-30 : 1e30;
        switch ((int)(urand(seed) * 6)) {
        case 0: x->t[i] = v; break;
        case 1: x->st[i] = v; break;
        case 2: x->act[i] = v; break;
        case 3: x->ft[s] = v; break;
        case 4: x->fb[s] = v; break;
        default: x->cap[s] = v; break;
        }
    }
}

START_TEST(dp_equals_ilp_at_range_edges)
{
    /* the same optimum (or a SOLVER_ERROR, a refused GLPK answer, in at
     * most 1 in 20), never a split that breaks the rules */
    unsigned seed = 4242u;
    int feasible = 0, solver_errors = 0, n = 300;
    for (int k = 0; k < n; k++) {
        inst x;
        partition_result rd, ri;
        partition_status sd, si;
        bool fits;
        edge_inst(&x, &seed);
        ck_assert_int_eq(partition_validate(&x.pb, NULL), PLANNER_OK);
        sd = partition_dp(&x.pb, NULL, &rd);
        si = partition_ilp(&x.pb, 20.0, &ri);
        ck_assert_msg(sd == PARTITION_OK || sd == PARTITION_INFEASIBLE, "dp status %d", sd);
        if (sd == PARTITION_OK) {
            feasible++;
            partition_measure(&x.pb, rd.n_layers, &fits);
            ck_assert(fits);
        }
        if (si == PARTITION_SOLVER_ERROR) {   /* GLPK's split failed the check */
            solver_errors++;
            continue;
        }
        ck_assert_msg(si == sd, "instance %d (L %d P %d K %d): dp %s, ilp %s", k,
                      x.pb.n_layers, x.pb.n_stages, x.pb.n_classes,
                      partition_status_name(sd), partition_status_name(si));
        if (sd == PARTITION_OK) {
            ck_assert(ri.optimal);
            partition_measure(&x.pb, ri.n_layers, &fits);
            ck_assert(fits);
            for (int s = 0; s < x.pb.n_stages; s++)
                ck_assert_int_ge(ri.n_layers[s], 1);
            ck_assert_msg(fabs(rd.bottleneck_s - ri.bottleneck_s) <= 1e-6 * rd.bottleneck_s,
                          "instance %d: dp %.9g, ilp %.9g", k, rd.bottleneck_s,
                          ri.bottleneck_s);
        }
    }
    printf("partition: at the range edges, %d of %d feasible, %d ILP answers refused by the "
           "check\n", feasible, n, solver_errors);
    ck_assert_int_le(solver_errors, n / 20);
}
END_TEST

START_TEST(ilp_time_limit_covers_building)
{
    /* 2,048 layers on 64 stages: under a 20 ms limit the call stops while
     * building the program (TIMEOUT); when the limit covered only GLPK's
     * search, it built the program and solved the LP relaxation first
     * (2.3 s here) */
    enum { NL = 2048, NP = 64 };
    static double t[NL], st[NL], act[NL];
    double ft[NP] = {0}, fb[NP] = {0}, infl[NP], cap[NP];
    int cls[NP] = {0};
    partition_problem pb;
    partition_result r;
    partition_status s;
    struct timespec a, b;
    double elapsed;
    for (int i = 0; i < NL; i++) {
        t[i] = 1.0 + 1e-3 * (i % 7);
        st[i] = 1.0;
        act[i] = 0.0;
    }
    for (int i = 0; i < NP; i++) {
        infl[i] = 1;
        cap[i] = 100.0;
    }
    pb = (partition_problem){NL, NP, 1, cls, t, st, act, NULL, ft, fb, infl, cap, 1, NULL,
                             0, 0, 0, 0, NULL, NULL, NULL, NULL};
    clock_gettime(CLOCK_MONOTONIC, &a);
    s = partition_ilp(&pb, 0.02, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    elapsed = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    printf("partition: 2,048 x 64 ILP under a 20 ms limit: %s after %.3f s\n",
           partition_status_name(s), elapsed);
    ck_assert_int_eq(s, PARTITION_TIMEOUT);
    ck_assert_msg(elapsed < 0.5, "%.3f s for a 0.02 s limit", elapsed);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("partition");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, dp_uniform_even);
    tcase_add_test(tc, dp_output_layer_on_last_stage);
    tcase_add_test(tc, dp_memory_forces_short_first_stage);
    tcase_add_test(tc, dp_two_speeds);
    tcase_add_test(tc, dp_equals_ilp_on_random_instances);
    tcase_add_test(tc, dp_is_exhaustive_optimum);
    tcase_add_test(tc, dp_leading_layers);
    tcase_add_test(tc, dp_cut_time_tells_a_memory_shaped_split);
    tcase_add_test(tc, ilp_only_layer_caps);
    tcase_add_test(tc, ilp_fill_objective_never_worse);
    tcase_add_test(tc, bad_problems_clean_status);
    tcase_add_test(tc, ilp_time_limit_is_clean);
    tcase_add_test(tc, glpk_error_returns_cleanly);
    tcase_add_test(tc, range_rule);
    tcase_add_test(tc, dp_no_cancellation_at_1e30);
    tcase_add_test(tc, ilp_never_returns_a_split_that_does_not_fit);
    tcase_add_test(tc, dp_equals_ilp_at_range_edges);
    tcase_add_test(tc, ilp_time_limit_covers_building);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
