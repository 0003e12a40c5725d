/* test_goodput.c: the failure / checkpoint / goodput model (schedule/goodput.c)
 * against published figures, each expected value derived by hand from the
 * paper's formula in the comment next to it:
 *   - Kokolis et al., "Revisiting Reliability in Large-Scale ML Research
 *     Clusters" (HPCA 2025): MTTF 1.8 h at 16,384 GPUs and 0.23 h at 131,072
 *     GPUs with r_f = 6.5e-3 per node-day; E[ETTR] ~0.7 with hourly and ~0.93
 *     with 5-minute checkpoints at 16,384 GPUs (u0 = 5 min, non-blocking).
 *   - Daly, "A higher order estimate of the optimum checkpoint interval for
 *     restart dumps" (FGCS 2006), Figs. 3-5: delta = 5 min, R = 10 min:
 *     tau_opt = 117 min (M = 24 h), 57 min (M = 6 h), 9.1 min (M = 15 min).
 *   - Llama 3 (Dubey et al. 2024, Sec. 3.3.4): 466 interruptions in 54 days on
 *     16,384 H100 (2,048 nodes), > 90% effective training time.
 * Plus the composition for a real plan and the bad inputs (no NaN/inf). */
#include <math.h>
#include <string.h>
#include "testutil.h"
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "schedule/goodput.h"
#include "search/search.h"
#include "search/size.h"

#define HOUR 3600.0
#define MINUTE 60.0

/* Kokolis: job MTTF = 1 / (N_nodes r_f).  16,384 GPUs = 2,048 nodes of 8:
 * 2048 x 6.5e-3 = 13.312 failures/day -> 24 / 13.312 = 1.803 h (published
 * 1.8 h, one decimal: +-0.05 h).  131,072 GPUs = 16,384 nodes: 106.5/day ->
 * 0.2254 h (published 0.23 h, two decimals: +-0.005 h). */
START_TEST(kokolis_mttf)
{
    double m16k = goodput_mttf_s(2048, 6.5e-3), m131k = goodput_mttf_s(16384, 6.5e-3);
    ck_assert_msg(fabs(m16k / HOUR - 1.8) <= 0.05, "16k GPUs: MTTF %.4f h", m16k / HOUR);
    ck_assert_msg(fabs(m131k / HOUR - 0.23) <= 0.005, "131k GPUs: MTTF %.4f h", m131k / HOUR);
    ck_assert_rel(m16k, 86400.0 / 13.312, 1e-12);
    /* out of range: 0, never NaN/inf */
    ck_assert(goodput_mttf_s(0, 6.5e-3) == 0);
    ck_assert(goodput_mttf_s(2048, -1) == 0);
    ck_assert(goodput_mttf_s(2048, NAN) == 0);
}
END_TEST

/* Kokolis's 16k-GPU example: M = 6490.4 s, u0 = R = 300 s, w = 0.
 * Their first-order E[ETTR] = 1 - (R + dt/2)/M: hourly 1 - 2100/6490.4 =
 * 0.676, 5-minute 1 - 450/6490.4 = 0.931 (published ~0.7 and ~0.93).
 * Daly's complete model dt / (M e^(R/M) (e^(dt/M) - 1)), which the code
 * uses: hourly 3600 / (6490.4 x 1.04730 x 0.74146) = 0.7144, 5-minute
 * 300 / (6490.4 x 1.04730 x 0.047316) = 0.9329. */
START_TEST(kokolis_ettr)
{
    double m = goodput_mttf_s(2048, 6.5e-3);
    double hourly = goodput_ettr(HOUR, 0, 5 * MINUTE, m);
    double five = goodput_ettr(5 * MINUTE, 0, 5 * MINUTE, m);
    ck_assert_msg(fabs(hourly - 0.70) <= 0.03, "hourly ETTR %.4f, published ~0.7", hourly);
    ck_assert_msg(fabs(five - 0.93) <= 0.03, "5-minute ETTR %.4f, published ~0.93", five);
    ck_assert_msg(fabs(hourly - 0.7144) <= 0.0005, "hourly ETTR %.5f", hourly);
    ck_assert_msg(fabs(five - 0.9329) <= 0.0005, "5-minute ETTR %.5f", five);
    /* first order agrees within its neglected terms, (dt/M)^2 / 6 ~ 0.05 */
    ck_assert(fabs(hourly - (1 - (300 + 1800) / m)) <= 0.05);
    ck_assert(fabs(five - (1 - (300 + 150) / m)) <= 0.005);
}
END_TEST

/* Daly Figs. 3-5 (delta = 5 min): tau_opt = sqrt(2 delta M)[1 + sqrt(x)/3 +
 * x/9] - delta, x = delta / 2M.
 *   M = 24 h: sqrt(2 x 300 x 86400) = 7200; x = 1/576: 7200 x 1.014082 - 300
 *             = 7001.4 s = 116.7 min (published 117 min)
 *   M = 6 h:  3600 x 1.028549 - 300 = 3402.8 s = 56.7 min (published 57)
 *   M = 15 min: 734.85 x 1.154600 - 300 = 548.5 s = 9.14 min (published 9.1)
 * Young's sqrt(2 delta M) gives 120, 60 and 12.2 min: the 15-minute case is
 * where Daly's form matters. */
START_TEST(daly_intervals)
{
    const double w = 5 * MINUTE;
    ck_assert_msg(fabs(goodput_daly_interval_s(w, 24 * HOUR) / MINUTE - 117) <= 0.5, "24 h");
    ck_assert_msg(fabs(goodput_daly_interval_s(w, 6 * HOUR) / MINUTE - 57) <= 0.5, "6 h");
    ck_assert_msg(fabs(goodput_daly_interval_s(w, 15 * MINUTE) / MINUTE - 9.1) <= 0.05,
                  "15 min: %.3f min", goodput_daly_interval_s(w, 15 * MINUTE) / MINUTE);
    ck_assert_rel(goodput_daly_interval_s(w, 24 * HOUR), 7001.3889, 1e-6);
    ck_assert_rel(goodput_young_interval_s(w, 24 * HOUR), 7200, 1e-12);
    ck_assert_rel(goodput_young_interval_s(w, 15 * MINUTE), 734.847, 1e-5);
    ck_assert(goodput_young_interval_s(w, 15 * MINUTE) / MINUTE - 9.1 > 3);
    /* w >= 2M: checkpoint every M (Daly) */
    ck_assert_rel(goodput_daly_interval_s(2 * HOUR, HOUR), HOUR, 1e-12);
    ck_assert(goodput_daly_interval_s(0, HOUR) == 0);
}
END_TEST

/* Llama 3: 466 interruptions / (54 days x 2,048 nodes) = 4.214 per 1000
 * node-days -> M = 86400 / (2048 x 4.214e-3) = 10012 s (2.78 h).  Reasonable
 * settings: R = 5 min, an asynchronous checkpoint blocking 10 s (4 GB per GPU,
 * Llama 3's largest, over a ~0.4 GB/s copy: generous), Daly's interval
 * sqrt(2 x 10 x 10012)(1.0108) - 10 = 440.8 s.  First order:
 * 1 - (300 + 225.4)/10012 - 10/440.8 = 0.925; the complete model 0.9277;
 * published > 0.9. */
START_TEST(llama3_ettr)
{
    double rate = 466.0 / (54.0 * 2048.0);
    double m = goodput_mttf_s(2048, rate);
    double tau = goodput_daly_interval_s(10, m);
    double e = goodput_ettr(tau, 10, 5 * MINUTE, m);
    ck_assert_rel(m, 10012.0, 1e-4);
    ck_assert_rel(tau, 440.84, 1e-4);
    ck_assert_msg(e > 0.9, "Llama 3 ETTR %.4f", e);
    ck_assert_msg(fabs(e - 0.9277) <= 0.0005, "Llama 3 ETTR %.5f", e);
    /* the default Hopper rate is the unexpected part: 419 / 110,592 node-days */
    ck_assert_rel(goodput_default_failure_rate(GEN_HOPPER, NULL), 419.0 / 110.592, 1e-3);
    ck_assert_rel(goodput_default_failure_rate(GEN_AMPERE, NULL), 6.50, 1e-12);
}
END_TEST

/* ETTR edges: in [0, 1], 0 (not NaN) when the job cannot progress or an
 * input is out of range; never above tau / (tau + w). */
START_TEST(ettr_edges)
{
    ck_assert(goodput_ettr(HOUR, 0, 300, 1e-3) == 0);          /* overflowing exp */
    ck_assert(goodput_ettr(0, 0, 300, HOUR) == 0);
    ck_assert(goodput_ettr(HOUR, -1, 300, HOUR) == 0);
    ck_assert(goodput_ettr(HOUR, 0, NAN, HOUR) == 0);
    ck_assert(goodput_ettr(INFINITY, 0, 300, HOUR) == 0);
    ck_assert(goodput_ettr(1, 0, 0, 1e300) <= 1.0);
    ck_assert(goodput_ettr(HOUR, 60, 0, 1e12) <= HOUR / (HOUR + 60));
    ck_assert_rel(goodput_ettr(HOUR, 60, 0, 1e12), HOUR / (HOUR + 60), 1e-6);
}
END_TEST

/* A Llama 3.1 405B plan on 16,384 H100 with a hand-set step of 10 s:
 * 2048 x 8192 tokens / 10 s = 1,677,721.6 tokens/s; 15e12 tokens -> 8.9407e6 s
 * failure-free.  Defaults: Hopper r_f = 3.79e-3 per node-day -> M =
 * 86400 / (2048 x 3.7887e-3) = 11135 s; checkpoint 14 B/param; persist at
 * 2,048 x 1 GB/s (2.8 s); load at 2,048 x 3.4 GB/s; restart 300 s + load;
 * async blocking = the 346 MB shard per GPU at 25 GB/s (14 ms); interval =
 * Daly's sqrt(2 x 0.0138 x 11135) = 17.6 s (above the persist time),
 * rounded up to whole 10-s steps: 20 s. */
START_TEST(plan_composition)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    cluster *c = NULL;
    plan pl;
    goodput g;
    goodput_options o = GOODPUT_OPTIONS_INIT;
    planner_error why = PLANNER_ERROR_INIT;
    double bytes, persist;

    ck_assert_int_eq(model_load(&m, NULL, "configs/llama3.1-405b.json", NULL, &err), 0);
    ck_assert_int_eq(cluster_load(&c, "clusters/h100x16384.yaml", &err), 0);
    memset(&pl, 0, sizeof pl);
    pl.s.tp = 8;
    pl.s.pp = 16;
    pl.s.dp = 128;
    pl.s.cp = 1;
    pl.s.zero = 1;
    pl.s.n_stages = 16;
    for (int i = 0; i < 16; i++) {
        pl.s.stage[i].tp = 8;
        pl.s.stage[i].dp = 128;
    }
    pl.e.step_time_s = 10;
    pl.e.tokens_per_s = 2048.0 * 8192 / 10;
    pl.e.gpus = 16384;
    o.tokens = 15e12;
    ck_assert_msg(goodput_evaluate(&g, m, c, &pl.s, &pl.e, &o, tu_err(&why)) == PLANNER_OK, "%s",
                  why.msg);
    ck_assert_int_eq(g.gpus, 16384);
    ck_assert_int_eq(g.nodes, 2048);
    ck_assert_rel(g.mttf_s, 86400.0 / (2048 * 419.0 / 110592.0), 2e-3);
    bytes = 14.0 * model_param_count(m, 8192);
    ck_assert_rel(g.checkpoint_bytes, bytes, 1e-12);
    ck_assert_msg(bytes > 5.6e12 && bytes < 5.8e12, "405B x 14 B = %.4g", bytes);
    persist = bytes / (2048 * 1e9);
    ck_assert_rel(g.checkpoint_persist_s, persist, 1e-12);
    ck_assert_rel(g.restart_s, 300 + bytes / (2048 * 3.4e9), 1e-12);
    ck_assert_rel(g.checkpoint_write_s, bytes / 16384 / 25e9, 1e-12);
    ck_assert(goodput_daly_interval_s(g.checkpoint_write_s, g.mttf_s) > persist);
    ck_assert_rel(g.checkpoint_interval_s, 20, 1e-12);
    ck_assert_rel(g.time_failure_free_s, 15e12 / 1677721.6, 1e-9);
    ck_assert_rel(g.time_to_train_s, g.time_failure_free_s / g.ettr, 1e-12);
    ck_assert(g.ettr > 0.5 && g.ettr < 1);
    ck_assert_rel(g.gpu_hours, 16384 * g.time_to_train_s / 3600, 1e-12);
    ck_assert_rel(g.cost, g.gpu_hours * 2.50, 1e-12);
    /* 700 W board + 575 W DGX H100 overhead per GPU */
    ck_assert_rel(g.energy_kwh, 16384 * 1275.0 * g.time_to_train_s / 3.6e6, 1e-12);

    /* overrides: rate, restart, blocking write, interval, price */
    o.failures_per_1000_node_days = 6.5;
    o.restart_s = 600;
    o.mode = CHECKPOINT_FIXED;
    o.checkpoint_write_s = 0;
    o.checkpoint_interval_s = 1805;       /* rounded up to whole 10-s steps */
    o.gpu_hour_price = 2;
    ck_assert_msg(goodput_evaluate(&g, m, c, &pl.s, &pl.e, &o, tu_err(&why)) == PLANNER_OK, "%s",
                  why.msg);
    ck_assert_rel(g.mttf_s, 86400.0 / 13.312, 1e-12);
    ck_assert_rel(g.checkpoint_interval_s, 1810, 1e-12);
    ck_assert_rel(g.ettr, goodput_ettr(1810, 0, 600 + bytes / (2048 * 3.4e9), g.mttf_s),
                  1e-12);
    ck_assert_rel(g.cost, g.gpu_hours * 2, 1e-12);

    /* bad input: a clear message, nothing non-finite */
    o.gpu_hour_price = -1;
    ck_assert(goodput_evaluate(&g, m, c, &pl.s, &pl.e, &o, tu_err(&why)) == PLANNER_E_INPUT);
    ck_assert_msg(strstr(why.msg, "price") != NULL, "%s", why.msg);
    o.gpu_hour_price = 2;
    o.tokens = 1e300;
    ck_assert(goodput_evaluate(&g, m, c, &pl.s, &pl.e, &o, tu_err(&why)) == PLANNER_E_INPUT);
    ck_assert_msg(strstr(why.msg, "years") != NULL, "%s", why.msg);
    o.tokens = 15e12;
    o.failures_per_1000_node_days = 1e9;  /* a failure every 4 us */
    ck_assert(goodput_evaluate(&g, m, c, &pl.s, &pl.e, &o, tu_err(&why)) == PLANNER_E_INPUT);
    ck_assert_msg(strstr(why.msg, "cannot finish") != NULL, "%s", why.msg);
    ck_assert(isfinite(g.ettr) && isfinite(g.mttf_s) && g.time_to_train_s == 0);
    cluster_free(c);
    model_free(m);
}
END_TEST

/* GPT-3 175B on 64 DGX H100 with default search options. */
static void gpt3_setup(model **m, cluster **c, cost_params *p, search_options *o)
{
    run_spec run;
    *m = tu_model_load("configs/gpt3-175b.json", &run);
    *c = tu_cluster_load("clusters/h100x512.yaml");
    cost_params_default(p);
    search_options_default(o);
    o->gbs = run.global_batch;
    o->seq_len = run.seq_len;
}

/* --objective goodput ranks by tokens/s x ETTR: the ranked plans' goodput
 * (recomputed here through goodput_evaluate) never rises down the list. */
START_TEST(objective_goodput_order)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    cluster *c = NULL;
    cost_params p;
    search_options o;
    search_result r;
    double prev = HUGE_VAL;

    gpt3_setup(&m, &c, &p, &o);
    o.obj = OBJECTIVE_GOODPUT;
    o.goodput.failures_per_1000_node_days = 500;   /* failures matter: M = 45 min */
    o.goodput.mode = CHECKPOINT_SYNC;
    o.top_n = 8;
    ck_assert_int_eq(search_run(&r, m, c, &p, &o, &err), 0);
    ck_assert_int_ge(r.n_top, 2);
    for (int i = 0; i < r.n_top; i++) {
        goodput g;
        ck_assert(goodput_evaluate(&g, m, c, &r.top[i].s, &r.top[i].e, &o.goodput, NULL) ==
                  PLANNER_OK);
        ck_assert_msg(g.goodput_tokens_per_s <= prev * (1 + 1e-12), "rank %d", i + 1);
        ck_assert(g.ettr > 0 && g.ettr < 1);
        prev = g.goodput_tokens_per_s;
    }
    ck_assert_str_eq(objective_name(OBJECTIVE_COST), "cost");
    {
        objective ob;
        ck_assert_int_eq(objective_from_name("time", &ob), 0);
        ck_assert_int_eq(ob, OBJECTIVE_TIME);
        ck_assert_int_eq(objective_from_name("speed", &ob), -1);
    }
    search_result_free(&r);
    cluster_free(c);
    model_free(m);
}
END_TEST

/* planner size on GPT-3 175B and up to 64 DGX H100: the fewest nodes that
 * fit fit, one node fewer does not (it was tried: bisection), and with a
 * deadline the choice meets it at the lowest cost of the rows meeting it. */
START_TEST(size_fewest_and_deadline)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    cluster *c = NULL;
    cost_params p;
    search_options o;
    size_result r;
    int f, below = -1;

    gpt3_setup(&m, &c, &p, &o);
    o.obj = OBJECTIVE_TIME;
    o.goodput.tokens = 300e9;                      /* GPT-3's 300B tokens */
    ck_assert_int_eq(size_run(m, c, &p, &o, 365 * 86400.0, &r, &err), 0);
    f = r.min_fit;
    ck_assert_int_ge(f, 0);
    ck_assert(r.row[f].fits);
    for (int i = 0; i < r.n_rows; i++) {
        if (i > 0)
            ck_assert_int_gt(r.row[i].nodes, r.row[i - 1].nodes);
        if (r.row[i].nodes == r.row[f].nodes - 1)
            below = i;
        if (r.row[i].nodes < r.row[f].nodes)
            ck_assert(!r.row[i].fits);
    }
    ck_assert_msg(r.row[f].nodes == 1 || (below >= 0 && !r.row[below].fits), "%d nodes",
                  r.row[f].nodes);
    ck_assert_int_ge(r.choice, 0);
    ck_assert(r.row[r.choice].meets && r.row[r.choice].g.time_to_train_s <= 365 * 86400.0);
    for (int i = 0; i < r.n_rows; i++)
        if (r.row[i].meets)
            ck_assert(r.row[i].g.cost >= r.row[r.choice].g.cost);
    size_result_free(&r);
    /* an impossible deadline: a note with the miss, exit 3's status */
    ck_assert_int_eq(size_run(m, c, &p, &o, 86400.0, &r, &err), PLANNER_E_INFEASIBLE);
    ck_assert_msg(strstr(r.note, "too long") != NULL, "%s", r.note);
    size_result_free(&r);
    cluster_free(c);
    model_free(m);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("goodput");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, kokolis_mttf);
    tcase_add_test(tc, kokolis_ettr);
    tcase_add_test(tc, daly_intervals);
    tcase_add_test(tc, llama3_ettr);
    tcase_add_test(tc, ettr_edges);
    tcase_add_test(tc, plan_composition);
    tcase_add_test(tc, objective_goodput_order);
    tcase_add_test(tc, size_fewest_and_deadline);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
