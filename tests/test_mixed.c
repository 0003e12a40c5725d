/* test_mixed.c: stages and data-parallel groups spanning node groups (AMP's
 * mixed replicas, Li et al., NeurIPS 2022; evaluate.c's eval_rank_mixed,
 * placement.c's packed placements).
 *
 * Hand-derived checks: on two groups whose links are alike, a stage of 8 V100
 * + 8 T4 (tp 1, dp 16) steps exactly as the same layout on 16 T4 (the slower
 * type paces every replica: compute, reduce, optimizer, overhead), and
 * slower than on 16 V100; its memory is judged against the smaller GPU (8
 * A100-80GB + 8 A100-40GB: a micro-batch that fits the 80 GB group alone
 * misses on the mix); more bandwidth never predicts a slower step; AMP's
 * 12 V100 + 4 T4 evaluates every tp x pp x dp over its 16 GPUs (pp 1 and 2
 * gave 0 candidates before); DP and ILP give the same bottleneck on a mixed
 * stage; interleaving (the placer's split chunked) and cp > 1 are searched
 * on stages across groups.  Expert parallelism across GPU types: an EP
 * group of 8 H100 + 8 A100 moves at the A100s' pace (2,698 us for 64 MiB a
 * rank, by hand), a stage with it steps as on 16 A100, replacing the slow
 * type never predicts slower, DP and ILP agree, the pruned search keeps the
 * exhaustive winner, and the report and the launch script say it; dp runs
 * past the largest group's GPUs.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cost/comm.h"
#include "cost/layer_cost.h"
#include "out/emit.h"
#include "out/report.h"
#include "partition/placement.h"
#include "search/search.h"
#include "testutil.h"

static cluster *yaml_cluster(const char *text)
{
    planner_error err = PLANNER_ERROR_INIT;
    cluster *c = NULL;
    ck_assert_msg(cluster_load_buffer(&c, text, strlen(text), "mixed.yaml", &err) == PLANNER_OK,
                  "%s", err.msg);
    return c;
}

/* A model on a mixed cluster with the default cost parameters: the tests'
 * setup (mixed_case_init takes over the cluster). */
typedef struct {
    run_spec run;
    model *m;
    cluster *c;
    cost_params p;
} mixed_case;

static void mixed_case_init(mixed_case *q, const char *model_path, cluster *c)
{
    q->m = tu_model_load(model_path, &q->run);
    q->c = c;
    cost_params_default(&q->p);
}

static void mixed_case_free(mixed_case *q)
{
    cluster_free(q->c);
    model_free(q->m);
}

/* AMP's GPT-2 on its 3 x p3.8xlarge + 1 x g4dn.12xlarge (12 V100 + 4 T4). */
static void amp_case_init(mixed_case *q)
{
    mixed_case_init(q, "configs/amp-gpt2.json", tu_cluster_load("clusters/amp-3xp3-1xg4dn.yaml"));
}

/* One stage, tp 1, dp 16, sequence seq_len, on group g alone (mix NULL) or
 * spanning mix. */
static void one_stage(strategy *s, const model *m, int seq_len, int g, const stage_mix *mix,
                      int mbs)
{
    memset(s, 0, sizeof *s);
    s->tp = s->pp = s->cp = s->ep = s->etp = s->vpp = 1;
    s->dp = 16;
    s->mbs = mbs;
    s->gbs = 32;
    s->seq_len = seq_len;
    s->zero = 1;
    s->overlap_grad_reduce = s->overlap_param_gather = true;
    s->n_stages = 1;
    s->stage[0] = (stage_spec){g, 0, m->layers, 1, 16};
    if (mix != NULL) {
        s->n_mixes = 1;
        s->mix[0] = *mix;
    }
}

/* pp 2 with tp, dp, mbs (gbs 32, sequence seq_len), stages to be placed. */
static void two_stages(strategy *s, int seq_len, int tp, int dp, int mbs)
{
    memset(s, 0, sizeof *s);
    s->tp = tp;
    s->pp = 2;
    s->dp = dp;
    s->cp = s->ep = s->etp = s->vpp = 1;
    s->mbs = mbs;
    s->gbs = 32;
    s->seq_len = seq_len;
    s->zero = 1;
    s->sp = s->tp_comm_overlap = tp > 1;
    s->overlap_grad_reduce = s->overlap_param_gather = true;
}

/* Two groups of 4 nodes x 4 GPUs with the same NICs and link. */
static const char alike_yaml[] =
    "name: alike\ngroups:\n"
    "  - {name: v, gpu: V100-SXM2-16GB, nodes: 4, gpus_per_node: 4, intra_node_bandwidth: 100GB/s,"
    " inter_node_bandwidth_per_node: 40Gbps, inter_node_latency: 30us}\n"
    "  - {name: t, gpu: T4, nodes: 4, gpus_per_node: 4, intra_node_bandwidth: 15.75GB/s,"
    " inter_node_bandwidth_per_node: 40Gbps, inter_node_latency: 30us}\n"
    "links:\n  - {between: [v, t], bandwidth: 10Gbps, latency: 30us}\n";

START_TEST(dp_group_paced_by_slower_type)
{
    run_spec run;
    model *m = tu_model_load("configs/amp-gpt2.json", &run);
    cluster *c = yaml_cluster(alike_yaml);
    cost_params p;
    stage_mix mix = {0, 2, {0, 1, 0, 0}, {8, 8, 0, 0}};
    strategy s;
    evaluation ev, et, em;
    cost_params_default(&p);
    /* per GPU: 40 Gbps / 4 = 10 Gbps inside each group and between them */
    ck_assert_double_eq(c->group[0].inter_bytes_per_s, c->link[0].bytes_per_s);
    one_stage(&s, m, run.seq_len, 0, NULL, 1);
    evaluate(m, c, &p, &s, &ev);
    one_stage(&s, m, run.seq_len, 1, NULL, 1);
    evaluate(m, c, &p, &s, &et);
    one_stage(&s, m, run.seq_len, 0, &mix, 1);
    evaluate(m, c, &p, &s, &em);
    ck_assert(et.step_time_s > ev.step_time_s);   /* T4 is the slower type */
    ck_assert_msg(fabs(em.step_time_s - et.step_time_s) <= 1e-12 * et.step_time_s,
                  "mixed %.9f s, T4 alone %.9f s, V100 alone %.9f s", em.step_time_s,
                  et.step_time_s, ev.step_time_s);
    ck_assert_double_eq_tol(em.stage_fwd_s[0] + em.stage_bwd_s[0],
                            et.stage_fwd_s[0] + et.stage_bwd_s[0], 1e-15);
    /* peak FLOP/s of 8 V100 + 8 T4 (more than 16 T4): a lower MFU */
    ck_assert(em.mfu < et.mfu);
    /* memory: against the smaller usable memory of the two */
    ck_assert_double_eq(em.stage_memory[0].capacity_bytes,
                        fmin(c->group[0].gpu.usable_mem_bytes, c->group[1].gpu.usable_mem_bytes));
    cluster_free(c);
    model_free(m);
}
END_TEST

START_TEST(memory_bound_by_smaller_gpu)
{
    static const char yaml[] =
        "name: a100s\ngroups:\n"
        "  - {name: big, gpu: A100-SXM-80GB, nodes: 2, gpus_per_node: 8}\n"
        "  - {name: small, gpu: A100-SXM-40GB, nodes: 2, gpus_per_node: 8}\n";
    run_spec run;
    model *m = tu_model_load("configs/amp-gpt2.json", &run);
    cluster *c = yaml_cluster(yaml);
    cost_params p;
    stage_mix mix = {0, 2, {0, 1, 0, 0}, {8, 8, 0, 0}};
    strategy s;
    evaluation big, mixed;
    bool split_seen = false;
    double cap_small = c->group[1].gpu.usable_mem_bytes;
    cost_params_default(&p);
    for (int mbs = 1; mbs <= 2; mbs *= 2) {
        /* gbs 32 over dp 16: mbs 1 or 2 */
        one_stage(&s, m, run.seq_len, 0, NULL, mbs);
        evaluate(m, c, &p, &s, &big);
        one_stage(&s, m, run.seq_len, 0, &mix, mbs);
        evaluate(m, c, &p, &s, &mixed);
        ck_assert_double_eq(mixed.stage_memory[0].capacity_bytes, cap_small);
        ck_assert(mixed.feasible == (mixed.stage_memory[0].total_bytes <= cap_small));
        if (big.feasible && !mixed.feasible)
            split_seen = true;
    }
    /* a transient that fits 80 GB but not 40 GB: the activations of a long
     * sequence */
    one_stage(&s, m, run.seq_len, 0, NULL, 2);
    s.seq_len = 16384;
    evaluate(m, c, &p, &s, &big);
    s.n_mixes = 1;
    s.mix[0] = mix;
    evaluate(m, c, &p, &s, &mixed);
    if (big.feasible && !mixed.feasible)
        split_seen = true;
    ck_assert_msg(split_seen, "80 GB alone %.1f GiB (%s), mixed %.1f GiB of %.1f (%s)",
                  big.peak_memory_bytes / 1073741824.0, big.feasible ? "fits" : "misses",
                  mixed.peak_memory_bytes / 1073741824.0, cap_small / 1073741824.0,
                  mixed.feasible ? "fits" : "misses");
    ck_assert(strstr(mixed.reason, "A100-SXM-40GB") != NULL);
    cluster_free(c);
    model_free(m);
}
END_TEST

static const char amp_yaml_fmt[] =
    "name: amp\ngroups:\n"
    "  - {name: p3, gpu: V100-SXM2-16GB, nodes: 3, gpus_per_node: 4, intra_node_bandwidth: 100GB/s,"
    " inter_node_bandwidth_per_node: %gGbps, inter_node_latency: 30us}\n"
    "  - {name: g4dn, gpu: T4, nodes: 1, gpus_per_node: 4, intra_node_bandwidth: 15.75GB/s,"
    " inter_node_bandwidth_per_node: %gGbps, inter_node_latency: 30us}\n"
    "links:\n  - {between: [p3, g4dn], bandwidth: %gGbps, latency: 30us}\n";

START_TEST(more_bandwidth_never_slower)
{
    run_spec run;
    model *m = tu_model_load("configs/amp-gpt2.json", &run);
    cost_params p;
    double prev[3] = {0, 0, 0};
    cost_params_default(&p);
    for (double f = 1; f <= 64; f *= 2) {
        char yaml[1024];
        cluster *c;
        placer *pc;
        placement pl = {2, {{0, 0, 0}, {1, 0, 0}}, true, 2};
        strategy s;
        evaluation e;
        planner_error why;
        snprintf(yaml, sizeof yaml, amp_yaml_fmt, 10 * f, 50 * f, 2.5 * f);
        c = yaml_cluster(yaml);
        /* pp 1 dp 16; pp 2 tp 1 dp 8 (stage 1: 4 V100 + 4 T4); pp 2 tp 4 dp 2 */
        for (int k = 0; k < 3; k++) {
            stage_mix mix = {0, 2, {0, 1, 0, 0}, {12, 4, 0, 0}};
            int tp = k == 2 ? 4 : 1;
            if (k == 0) {
                one_stage(&s, m, run.seq_len, 0, &mix, 1);
            } else {
                two_stages(&s, run.seq_len, tp, 8 / tp, 1);
                pc = placer_new(m, c, &p, false, 1.0);
                ck_assert_ptr_nonnull(pc);
                ck_assert_msg(placer_place(pc, &pl, &s, tu_err(&why)) == PLANNER_OK, "%s",
                              why.msg);
                placer_free(pc);
                ck_assert_int_eq(s.n_mixes, 1);
                /* the same 12/12 split at every bandwidth: only links change */
                for (int i = 0; i < 2; i++) {
                    s.stage[i].n_layers = 12;
                    s.stage[i].first_layer = 12 * i;
                }
            }
            evaluate(m, c, &p, &s, &e);
            ck_assert(isfinite(e.step_time_s) && e.step_time_s > 0);
            if (f > 1)
                ck_assert_msg(e.step_time_s <= prev[k] * (1 + 1e-12),
                              "case %d: x%g bandwidth %.6f s, before %.6f s", k, f,
                              e.step_time_s, prev[k]);
            prev[k] = e.step_time_s;
        }
        cluster_free(c);
    }
    model_free(m);
}
END_TEST

START_TEST(amp_every_layout_evaluates)
{
    /* AMP's space on 16 GPUs: tp in {1, 2, 4} (one node), pp x dp the rest;
     * every combination now has feasible candidates (pp 1 and 2 had none:
     * their stages span the p3 and g4dn groups) */
    mixed_case q;
    planner_error err = PLANNER_ERROR_INIT;
    int combos = 0;
    amp_case_init(&q);
    for (int tp = 1; tp <= 4; tp *= 2)
        for (int pp = 1; tp * pp <= 16; pp *= 2) {
            search_options o;
            search_result r;
            search_options_default(&o);
            o.gbs = q.run.global_batch;
            o.seq_len = q.run.seq_len;
            o.top_n = 1;
            o.fix.tp = tp;
            o.fix.pp = pp;
            o.fix.dp = 16 / (tp * pp);
            ck_assert_int_eq(search_run(&r, q.m, q.c, &q.p, &o, &err), PLANNER_OK);
            ck_assert_msg(r.feasible > 0 && r.n_top == 1 && r.top[0].e.gpus == 16,
                          "tp %d pp %d: %ld feasible", tp, pp, r.feasible);
            if (pp <= 2)   /* a stage must span the groups */
                ck_assert_int_ge(r.top[0].s.n_mixes, 1);
            combos++;
            search_result_free(&r);
        }
    ck_assert_int_eq(combos, 12);
    mixed_case_free(&q);
}
END_TEST

/* The search's data-parallel degrees across groups run up to all the
 * cluster's GPUs: AMP's tp 1 pp 1 dp 16 over 12 V100 + 4 T4 is found
 * with dp free (--fix tp=1,pp=1,gpus=16); before, dp stopped at the largest
 * group's 12 GPUs and that search had no candidate. */
START_TEST(dp_beyond_largest_group_searched)
{
    mixed_case q;
    search_result r;
    amp_case_init(&q);
    ck_assert_int_eq(tu_search(&r, q.m, &q.run, q.c, "tp=1,pp=1,gpus=16", false, 1),
                     PLANNER_OK);
    ck_assert_int_eq(r.top[0].s.dp, 16);
    ck_assert_int_eq(r.top[0].s.n_mixes, 1);
    ck_assert(r.top[0].e.feasible);
    search_result_free(&r);
    mixed_case_free(&q);
}
END_TEST

/* AMP's search on 16 GPUs for `run` with fixed knobs, pruned or exhaustive. */
static planner_status amp_search(const model *m, const run_spec *run, const cluster *c, int tp,
                                 int pp, int cp, int vpp, bool exhaustive, search_result *r)
{
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    search_options o;
    cost_params_default(&p);
    search_options_default(&o);
    o.gbs = run->global_batch;
    o.seq_len = run->seq_len;
    o.top_n = 3;
    o.exhaustive = exhaustive;
    o.fix.gpus = 16;
    o.fix.tp = tp;
    o.fix.pp = pp;
    o.fix.cp = cp;
    o.fix.vpp = vpp;
    return search_run(r, m, c, &p, &o, &err);
}

/* Interleaving and context parallelism on stages spanning node groups
 * (search.c place_interleaved, cp_list): AMP's 12 V100 + 4 T4 with
 * megatron-core (its own stack, DeepSpeed, has neither).  pp 2: stage 0
 * spans the 4 T4 and 4 V100, and the placer gives it 3 of the 24 layers;
 * vpp 2 chunks each rank's layers (3 = 2 + 1: a
 * --pipeline-model-parallel-layout) with the same split, and the
 * interleaved schedule's bubble is the smaller.  With vpp free, the pruned
 * search finds the exhaustive winner.  cp 2 at pp 1: one stage over all 16
 * GPUs exchanging K/V.  Before, each of these gave no plan across the
 * groups (vpp > 1 and cp > 1 were not searched there). */
START_TEST(interleaving_and_cp_across_groups)
{
    mixed_case q;
    search_result r1, r2, a, b;
    planner_error rule;
    const strategy *s;
    amp_case_init(&q);
    q.c->stack = STACK_MEGATRON_CORE;
    ck_assert_int_eq(amp_search(q.m, &q.run, q.c, 4, 2, 1, 1, false, &r1), PLANNER_OK);
    ck_assert_int_eq(amp_search(q.m, &q.run, q.c, 4, 2, 1, 2, false, &r2), PLANNER_OK);
    s = &r2.top[0].s;
    ck_assert_int_eq(s->vpp, 2);
    ck_assert_int_ge(s->n_mixes, 1);
    ck_assert_int_eq(strategy_check(q.m, s, tu_err(&rule)), PLANNER_OK);
    ck_assert_int_eq(s->stage[0].n_layers, 3);
    ck_assert_int_eq(s->stage[1].n_layers, 21);
    ck_assert(s->layout);
    ck_assert_int_eq(strategy_chunk_layers(s, q.m->layers, 0, 0, NULL), 2);
    ck_assert_int_eq(strategy_chunk_layers(s, q.m->layers, 0, 1, NULL), 1);
    ck_assert_int_eq(strategy_chunk_layers(s, q.m->layers, 1, 0, NULL), 11);
    ck_assert_int_eq(strategy_chunk_layers(s, q.m->layers, 1, 1, NULL), 10);
    ck_assert_int_eq(r1.top[0].s.stage[0].n_layers, 3);
    ck_assert(r2.top[0].e.feasible && r1.top[0].e.feasible);
    ck_assert_double_lt(r2.top[0].e.time.bubble_s, r1.top[0].e.time.bubble_s);
    search_result_free(&r1);
    search_result_free(&r2);
    /* vpp searched: pruned == exhaustive */
    ck_assert_int_eq(amp_search(q.m, &q.run, q.c, -1, 2, 1, -1, false, &a), PLANNER_OK);
    ck_assert_int_eq(amp_search(q.m, &q.run, q.c, -1, 2, 1, -1, true, &b), PLANNER_OK);
    ck_assert(a.candidates <= b.candidates);
    ck_assert_msg(memcmp(&a.top[0].s, &b.top[0].s, sizeof a.top[0].s) == 0,
                  "pruned tp%d vpp%d mbs%d, exhaustive tp%d vpp%d mbs%d", a.top[0].s.tp,
                  a.top[0].s.vpp, a.top[0].s.mbs, b.top[0].s.tp, b.top[0].s.vpp, b.top[0].s.mbs);
    search_result_free(&a);
    search_result_free(&b);
    /* cp 2 over the 16 GPUs */
    ck_assert_int_eq(amp_search(q.m, &q.run, q.c, -1, 1, 2, -1, false, &r1), PLANNER_OK);
    s = &r1.top[0].s;
    ck_assert_int_eq(s->cp, 2);
    ck_assert_int_eq(s->n_mixes, 1);
    ck_assert_int_eq(s->mix[0].n, 2);
    ck_assert(r1.top[0].e.time.cp_comm_s > 0);
    ck_assert_int_eq(strategy_check(q.m, s, tu_err(&rule)), PLANNER_OK);
    search_result_free(&r1);
    mixed_case_free(&q);
}
END_TEST

START_TEST(dp_and_ilp_agree_on_mixed_stage)
{
    /* pp 2, tp 1, dp 8 on p3 then g4dn: stage 1 is 4 V100 + 4 T4; one
     * micro-batch per step (mbs 4), so the ILP's fill objective is its
     * bottleneck alone and both solvers must reach the same one */
    mixed_case q;
    placement pl = {2, {{0, 0, 0}, {1, 0, 0}}, true, 2};
    strategy s[2];
    evaluation e[2];
    planner_error why;
    double worst[2] = {0, 0};
    amp_case_init(&q);
    for (int k = 0; k < 2; k++) {
        placer *pc = placer_new(q.m, q.c, &q.p, k == 1, 5.0);
        two_stages(&s[k], q.run.seq_len, 1, 8, 4);
        ck_assert_msg(placer_place(pc, &pl, &s[k], tu_err(&why)) == PLANNER_OK, "%s",
                      why.msg);
        placer_free(pc);
        ck_assert_int_eq(s[k].n_mixes, 1);
        ck_assert_int_eq(s[k].mix[0].stage, 1);
        ck_assert_int_eq(s[k].stage[0].n_layers + s[k].stage[1].n_layers, q.m->layers);
        evaluate(q.m, q.c, &q.p, &s[k], &e[k]);
        for (int i = 0; i < 2; i++)
            worst[k] = fmax(worst[k], e[k].stage_fwd_s[i] + e[k].stage_bwd_s[i]);
    }
    ck_assert_msg(fabs(worst[0] - worst[1]) <= 1e-9 * worst[0], "dp %.9f s, ilp %.9f s",
                  worst[0], worst[1]);
    mixed_case_free(&q);
}
END_TEST

/* ---- expert parallelism across GPU types ---------------------------------- */

/* `hn` nodes of 8 H100 (450 GB/s NVLink, 400 Gb/s per GPU) and `an` nodes
 * of group a: 8 A100 80GB (300 GB/s, 200 Gb/s), or with `fast` 8 H100 like
 * group h's; 200 Gb/s and 14 us per GPU between the groups (the A100s' NIC
 * rate and everyone's latency). */
static cluster *ha_cluster(int hn, int an, bool fast)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "name: ha\ngroups:\n"
             "  - {name: h, gpu: H100-SXM, nodes: %d, gpus_per_node: 8,"
             " intra_node_bandwidth: 450GB/s, inter_node_bandwidth: 400Gbps,"
             " inter_node_latency: 14us}\n"
             "  - {name: a, gpu: %s, nodes: %d, gpus_per_node: 8,"
             " intra_node_bandwidth: %s, inter_node_bandwidth: %s, inter_node_latency: 14us}\n"
             "links:\n  - {between: [h, a], bandwidth: 200Gbps, latency: 14us}\n",
             hn, fast ? "H100-SXM" : "A100-SXM-80GB", an, fast ? "450GB/s" : "300GB/s",
             fast ? "400Gbps" : "200Gbps");
    return yaml_cluster(yaml);
}

/* Qwen3-30B-A3B (128 experts, top 8) on ha_cluster(hn, an, false): the
 * expert-parallel tests' setup. */
static void qwen_ha_init(mixed_case *q, int hn, int an)
{
    mixed_case_init(q, "configs/qwen3-30b-a3b.json", ha_cluster(hn, an, false));
}

/* An EP group of 16 ranks, 8 on an H100 node and 8 on an A100 node
 * (comm_alltoall_mixed_s), S = 64 MiB a rank.  By hand: an A100 rank sends
 * 7/16 S over its NVLink (300 GB/s x intra_eff 0.78: 125 us) and 8/16 S to
 * the H100 node through its 200 Gb/s NIC and the 200 Gb/s link (x inter_eff
 * 0.50: 2,684 us), plus 14 us; an H100 rank's 8/16 S cross the same link
 * at Hopper's inter_eff 0.729 (1,841 us).  The group waits for its slowest
 * rank: 2,698 us, exactly the all-to-all of 16 A100s on two A100 nodes.
 * One part is comm_alltoall_s (and the flex dispatcher's
 * comm_alltoall_node_dedup_s) to the bit. */
START_TEST(ep_alltoall_paced_by_slow_member)
{
    cluster *c = ha_cluster(2, 2, false);
    cost_params p;
    gen_constants kh, ka;
    const double S = 64.0 * 1048576.0;
    double t, hand;
    cost_params_default(&p);
    cost_constants(&kh, &p, c->stack, c->group[0].gpu.gen);
    cost_constants(&ka, &p, c->stack, c->group[1].gpu.gen);
    {
        comm_a2a_part mix[2] = {{&c->group[0], &kh, 0, 8}, {&c->group[1], &ka, 1, 8}};
        comm_a2a_part alone = {&c->group[1], &ka, 1, 16};
        t = comm_alltoall_mixed_s(c, mix, 2, 1, S, 0, 0);
        hand = fmax(S * 7 / 16 / (300e9 * ka.intra_eff), S * 8 / 16 / (25e9 * ka.inter_eff)) +
               14e-6;
        ck_assert_double_eq_tol(ka.intra_eff, 0.78, 1e-12);
        ck_assert_double_eq_tol(ka.inter_eff, 0.50, 1e-12);
        ck_assert_double_eq_tol(t, 2698.35e-6, 0.01e-6);
        ck_assert_double_eq_tol(t, hand, 1e-12 * hand);
        ck_assert(S * 8 / 16 / (25e9 * kh.inter_eff) + 14e-6 < t);   /* the H100 side */
        ck_assert_double_eq_tol(t, comm_alltoall_s(&c->group[1], &ka, 16, 1, S), 1e-15 * t);
        ck_assert_double_eq(comm_alltoall_mixed_s(c, &alone, 1, 1, S, 0, 0),
                            comm_alltoall_s(&c->group[1], &ka, 16, 1, S));
        ck_assert_double_eq(comm_alltoall_mixed_s(c, &alone, 1, 1, S, 128, 8),
                            comm_alltoall_node_dedup_s(&c->group[1], &ka, 16, 1, S, 128, 8));
        /* the flex dispatcher: the copies to the other node's 64 of 128
         * experts cross once, on the A100's NIC and the link alike */
        ck_assert_double_eq_tol(comm_alltoall_mixed_s(c, mix, 2, 1, S, 128, 8),
                                comm_alltoall_node_dedup_s(&c->group[1], &ka, 16, 1, S, 128, 8),
                                1e-15 * t);
        /* a stride of 2 (etp 2): 4 of each part's ranks share its node */
        mix[0].ranks = mix[1].ranks = 4;
        ck_assert_double_eq_tol(comm_alltoall_mixed_s(c, mix, 2, 2, S, 0, 0),
                                comm_alltoall_s(&c->group[1], &ka, 8, 2, S), 1e-15 * t);
    }
    cluster_free(c);
}
END_TEST

/* One stage of Qwen3-30B-A3B (128 experts, top 8) over 8 H100 + 8 A100,
 * tp 1, dp 16, ep 16: its one EP group spans both types.  Every member
 * pays the group's all-to-all (the H100s wait for the A100s' tokens:
 * cost_layer_range_member gives both members the same EP time, where each
 * member's own links gave the H100s less), and the step is exactly the same
 * layout's on 16 A100s over two A100 nodes (the A100s pace the grouped
 * GEMMs, the all-to-all, the DP ring: the link is their NIC's rate); with
 * ep 8 the two EP groups sit inside one type each and the H100s' own
 * all-to-all runs on their own NVLink. */
START_TEST(ep_stage_paced_by_slow_member)
{
    mixed_case q;
    stage_mix mix = {0, 2, {0, 1, 0, 0}, {8, 8, 0, 0}};
    strategy s;
    evaluation ea, em;
    range_cost r[2];
    qwen_ha_init(&q, 2, 2);
    for (int ep = 8; ep <= 16; ep *= 2) {
        for (int j = 0; j < 2; j++) {
            node_group view;
            cost_ep_span eps;
            one_stage(&s, q.m, q.run.seq_len, 0, &mix, 1);
            s.ep = ep;
            cost_member_view(q.c, &mix, j, &view);
            cost_member_ep_span(&mix, j, &s, &eps);
            ck_assert_int_eq(eps.n, 1);
            ck_assert_int_eq(eps.kind[0].n, ep == 16 ? 2 : 1);
            cost_layer_range_member(q.m, q.c, &view, &eps, &q.p, &s, 1, 0, 1, false, false,
                                    &r[j]);
        }
        ck_assert(r[0].ep_comm_s > 0);
        if (ep == 16)
            ck_assert_double_eq(r[0].ep_comm_s, r[1].ep_comm_s);
        else
            ck_assert_double_lt(r[0].ep_comm_s, r[1].ep_comm_s);
        ck_assert_double_lt(r[0].compute_s, r[1].compute_s);   /* H100 computes faster */
    }
    one_stage(&s, q.m, q.run.seq_len, 1, NULL, 1);
    s.ep = 16;
    evaluate(q.m, q.c, &q.p, &s, &ea);
    one_stage(&s, q.m, q.run.seq_len, 0, &mix, 1);
    s.ep = 16;
    evaluate(q.m, q.c, &q.p, &s, &em);
    ck_assert(em.time.ep_comm_s > 0);
    ck_assert_msg(fabs(em.step_time_s - ea.step_time_s) <= 1e-12 * ea.step_time_s,
                  "mixed %.9f s, A100 alone %.9f s", em.step_time_s, ea.step_time_s);
    ck_assert_double_eq_tol(em.time.ep_comm_s, ea.time.ep_comm_s, 1e-12 * ea.time.ep_comm_s);
    ck_assert_double_eq(em.stage_memory[0].capacity_bytes,
                        fmin(q.c->group[0].gpu.usable_mem_bytes,
                             q.c->group[1].gpu.usable_mem_bytes));
    mixed_case_free(&q);
}
END_TEST

/* Replacing the A100 group by H100s (GPU, NVLink and NICs; the link
 * between the groups kept) never predicts a slower step, for a stage
 * spanning the groups at tp 1 and 2, ep 2 to 16 (ep 16: an EP group across
 * the types), the alltoall and the flex dispatcher, with and without the
 * all-to-all overlap. */
START_TEST(ep_faster_type_never_slower)
{
    mixed_case q;
    cluster *fast = ha_cluster(2, 2, true);   /* q.c with H100s for its A100s */
    stage_mix mix = {0, 2, {0, 1, 0, 0}, {8, 8, 0, 0}};
    int cases = 0;
    qwen_ha_init(&q, 2, 2);
    for (int tp = 1; tp <= 2; tp++)
        for (int ep = 2; ep * tp <= 16; ep *= 2)
            for (int v = 0; v < 4; v++) {
                strategy s;
                evaluation es, ef;
                one_stage(&s, q.m, q.run.seq_len, 0, &mix, 1);
                s.tp = tp;
                s.dp = 16 / tp;
                s.sp = s.tp_comm_overlap = tp > 1;
                s.ep = ep;
                s.flex_dispatcher = v & 1;
                s.ep_comm_overlap = (v & 2) != 0;
                s.stage[0].tp = tp;
                s.stage[0].dp = s.dp;
                evaluate(q.m, q.c, &q.p, &s, &es);
                evaluate(q.m, fast, &q.p, &s, &ef);
                ck_assert(isfinite(es.step_time_s) && es.time.ep_comm_s > 0);
                ck_assert_msg(ef.step_time_s <= es.step_time_s * (1 + 1e-12),
                              "tp %d ep %d flex %d overlap %d: H100+H100 %.6f s, H100+A100 "
                              "%.6f s", tp, ep, v & 1, v >> 1, ef.step_time_s, es.step_time_s);
                cases++;
            }
    ck_assert_int_eq(cases, 28);
    cluster_free(fast);
    mixed_case_free(&q);
}
END_TEST

/* pp 2 over 8 H100 + 24 A100 (tp 1, dp 16, ep 16): stage 0 is the 8 H100
 * and 8 A100 with one EP group across them, stage 1 16 A100.  The DP and
 * the ILP solve the same partition problem (their per-layer times come from
 * the same per-member tables) and reach the same bottleneck. */
START_TEST(ep_dp_and_ilp_agree)
{
    mixed_case q;
    placement pl = {2, {{0, 0, 0}, {1, 0, 0}}, true, 2};
    strategy s[2];
    evaluation e[2];
    planner_error why;
    double worst[2] = {0, 0};
    qwen_ha_init(&q, 1, 3);
    for (int k = 0; k < 2; k++) {
        placer *pc = placer_new(q.m, q.c, &q.p, k == 1, 5.0);
        cost_ep_span eps;
        ck_assert_ptr_nonnull(pc);
        two_stages(&s[k], q.run.seq_len, 1, 16, 1);
        s[k].gbs = 16;   /* one micro-batch: the ILP's objective is the bottleneck */
        s[k].ep = 16;
        ck_assert_msg(placer_place(pc, &pl, &s[k], tu_err(&why)) == PLANNER_OK, "%s",
                      why.msg);
        placer_free(pc);
        ck_assert_int_eq(s[k].n_mixes, 1);
        ck_assert_int_eq(s[k].mix[0].stage, 0);
        cost_member_ep_span(&s[k].mix[0], 0, &s[k], &eps);
        ck_assert_int_eq(eps.n, 1);
        ck_assert_int_eq(eps.kind[0].n, 2);
        ck_assert_int_eq(s[k].stage[0].n_layers + s[k].stage[1].n_layers, q.m->layers);
        evaluate(q.m, q.c, &q.p, &s[k], &e[k]);
        ck_assert(e[k].time.ep_comm_s > 0);
        for (int i = 0; i < 2; i++)
            worst[k] = fmax(worst[k], e[k].stage_fwd_s[i] + e[k].stage_bwd_s[i]);
    }
    ck_assert_msg(fabs(worst[0] - worst[1]) <= 1e-9 * worst[0], "dp %.9f s, ilp %.9f s",
                  worst[0], worst[1]);
    ck_assert_int_eq(s[0].stage[0].n_layers, s[1].stage[0].n_layers);
    mixed_case_free(&q);
}
END_TEST

/* The search tries ep > 1 on stages spanning GPU types: Qwen3-30B-A3B on
 * one H100 node + one A100 node, all 16 GPUs in one stage (--fix
 * gpus=16,pp=1, global batch 64): plans with ep > 1 across the types rank
 * (before, the placements ran ep 1 unless --fix ep), and the pruned search
 * keeps the exhaustive one's winner. */
START_TEST(ep_searched_across_groups)
{
    mixed_case q;
    search_result a, b;
    bool ep_seen = false;
    qwen_ha_init(&q, 1, 1);
    q.run.global_batch = 64;
    ck_assert_int_eq(tu_search(&a, q.m, &q.run, q.c, "gpus=16,pp=1", false, 10), PLANNER_OK);
    ck_assert_int_eq(tu_search(&b, q.m, &q.run, q.c, "gpus=16,pp=1", true, 10), PLANNER_OK);
    for (int i = 0; i < a.n_top; i++) {
        ck_assert_int_eq(a.top[i].s.n_mixes, 1);
        if (a.top[i].s.ep > 1)
            ep_seen = true;
    }
    ck_assert(ep_seen);
    ck_assert(a.candidates <= b.candidates);
    ck_assert_msg(memcmp(&a.top[0].s, &b.top[0].s, sizeof a.top[0].s) == 0,
                  "pruned tp%d ep%d mbs%d, exhaustive tp%d ep%d mbs%d", a.top[0].s.tp,
                  a.top[0].s.ep, a.top[0].s.mbs, b.top[0].s.tp, b.top[0].s.ep, b.top[0].s.mbs);
    ck_assert_double_eq(a.top[0].e.step_time_s, b.top[0].e.step_time_s);
    search_result_free(&a);
    search_result_free(&b);
    mixed_case_free(&q);
}
END_TEST

/* Output: a stage whose EP groups span the GPU types says so in the
 * report's stage map and in the launch script's header (ep 16 over 8 H100 +
 * 8 A100), whose Megatron arguments carry the ep; with ep 8 each EP group
 * sits on one type and neither says it. */
START_TEST(ep_across_types_reported)
{
    mixed_case q;
    qwen_ha_init(&q, 1, 1);
    q.run.global_batch = 64;
    for (int ep = 8; ep <= 16; ep *= 2) {
        char fix[64], *text = NULL, *script = NULL, *json = NULL;
        size_t len = 0, slen = 0, jlen = 0;
        search_options o;
        search_result r;
        planner_error why;
        FILE *fp;
        snprintf(fix, sizeof fix, "gpus=16,pp=1,tp=2,ep=%d", ep);
        tu_search_options(&o, &q.run, fix, 1);
        ck_assert_int_eq(tu_search(&r, q.m, &q.run, q.c, fix, false, 1), PLANNER_OK);
        fp = open_memstream(&text, &len);
        report_table(fp, q.m, q.c, &o, &r);
        fclose(fp);
        fp = open_memstream(&json, &jlen);
        report_json(fp, q.m, q.c, &o, &r);
        fclose(fp);
        fp = open_memstream(&script, &slen);
        ck_assert_int_eq(emit_write(fp, EMIT_SLURM, MEGATRON_VERSION_DEFAULT, q.m, q.c,
                                    &r.top[0], tu_err(&why)),
                         PLANNER_OK);
        fclose(fp);
        ck_assert(strstr(text, "H100-SXMx8+A100-SXM-80GBx8") != NULL);
        ck_assert((strstr(text, "EP groups across the GPU types") != NULL) == (ep == 16));
        ck_assert((strstr(script, "expert-parallel groups span the GPU types") != NULL) ==
                  (ep == 16));
        /* the JSON says it too (review: it had the members only) */
        ck_assert_msg(strstr(json, ep == 16 ? "\"ep_across_types\": true"
                                            : "\"ep_across_types\": false") != NULL,
                      "ep %d", ep);
        snprintf(fix, sizeof fix, "--expert-model-parallel-size %d\n", ep);
        ck_assert_msg(strstr(script, fix) != NULL, "%s", fix);
        ck_assert(strstr(script, "#SBATCH hetjob") != NULL);
        free(text);
        free(json);
        free(script);
        search_result_free(&r);
    }
    mixed_case_free(&q);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("mixed");
    TCase *tc = tcase_create("mixed");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, dp_group_paced_by_slower_type);
    tcase_add_test(tc, memory_bound_by_smaller_gpu);
    tcase_add_test(tc, more_bandwidth_never_slower);
    tcase_add_test(tc, amp_every_layout_evaluates);
    tcase_add_test(tc, dp_and_ilp_agree_on_mixed_stage);
    tcase_add_test(tc, interleaving_and_cp_across_groups);
    tcase_add_test(tc, ep_alltoall_paced_by_slow_member);
    tcase_add_test(tc, ep_stage_paced_by_slow_member);
    tcase_add_test(tc, ep_faster_type_never_slower);
    tcase_add_test(tc, ep_dp_and_ilp_agree);
    tcase_add_test(tc, ep_searched_across_groups);
    tcase_add_test(tc, dp_beyond_largest_group_searched);
    tcase_add_test(tc, ep_across_types_reported);
    suite_add_tcase(su, tc);
    return tu_run_suite(su);
}
