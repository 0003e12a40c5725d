/* goodput.c: what failures cost a training run, from a plan's failure-free
 * step time, the model and the cluster.
 *
 * The model (docs/goodput.md has the walk-through):
 *   - Failures arrive as a Poisson process, r_f per node per day (Kokolis et
 *     al., "Revisiting Reliability in Large-Scale Machine Learning Research
 *     Clusters", HPCA 2025): job MTTF M = 1 / (nodes x r_f).  A job holds
 *     whole nodes; a plan over several node groups sums nodes_g x r_f,g.
 *   - Checkpoint size: bf16 weights (2) + fp32 master weights (4) + Adam's
 *     two fp32 moments (8) = 14 bytes per parameter (ZeRO's 2+2+12 layout,
 *     Rajbhandari et al. 2020, without the gradients; BLOOM 176B's 2.3 TB
 *     checkpoint is 13.1 bytes per parameter).  Written by the ranks holding
 *     distinct shards: every GPU with the distributed optimizer (zero >= 1),
 *     else the tp x cp x pp ranks of one data-parallel replica.
 *   - Blocking time per checkpoint w: asynchronous (the default, Megatron's
 *     --async-save, PyTorch DCP async_save) blocks only for the device-to-host
 *     copy of each writer's shard; synchronous blocks for the whole write at
 *     the storage's aggregate bandwidth (capped by the writers' NICs).  The
 *     write to storage ("persist") bounds an asynchronous interval from below:
 *     a checkpoint cannot start before the previous one is durable.
 *   - Restart R = a fixed part (detection, rescheduling, initialization:
 *     Unicron, He et al. 2024; MegaScale, Jiang et al. NSDI'24; Kokolis's
 *     u0 = 5 min by default) + loading the checkpoint at the storage's
 *     aggregate read bandwidth.  The work lost since the last checkpoint is in
 *     the ETTR formula, not in R.
 *   - Optimal compute time between checkpoints: Young (1974) sqrt(2 w M);
 *     Daly (2006, "A higher order estimate of the optimum checkpoint interval
 *     for restart dumps", FGCS 22(3)) sqrt(2wM)[1 + sqrt(w/2M)/3 + (w/2M)/9]
 *     - w for w < 2M, else M; it differs from Young's when w/M is not small
 *     (100k-GPU jobs).  Auto uses Daly's, at least one step (and, when
 *     asynchronous, at least the persist time), rounded up to whole steps.
 *   - Expected ETTR: Daly's complete model for exponential failures,
 *     T_wall / T_solve = M e^(R/M) (e^((tau + w)/M) - 1) / tau; to first
 *     order it is Kokolis's (1 - (R + tau/2)/M) / (1 + w/tau).
 *   - Time to train N tokens = N / (tokens/s x ETTR); GPU-hours, cost at a
 *     price per GPU-hour, energy = wall time x (GPUs x board power + node
 *     overhead), an upper bound (board power, not measured draw; no PUE).
 * Invariants: every output finite; ETTR in [0, 1]; a job that cannot progress
 * (ETTR ~ 0) is said so, never given an infinite time.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "schedule/goodput.h"

#define SECONDS_PER_DAY 86400.0
#define CHECKPOINT_BYTES_PER_PARAM 14.0
/* Device-to-host copy of a shard, per GPU: PCIe Gen4 x16's ~25 GB/s pinned
 * (Gen5 parts copy faster; the figure only matters for huge shards). */
#define HOST_COPY_BYTES_PER_S 25e9
/* Default storage per node of the job: Llama 3 (Dubey et al. 2024, Sec.
 * 3.3.4): Tectonic sustains 2 TB/s and peaks at 7 TB/s for 2,048 nodes ->
 * ~1 GB/s written and ~3.4 GB/s read per node. */
#define STORAGE_WRITE_PER_NODE 1e9
#define STORAGE_READ_PER_NODE 3.4e9
/* Kokolis et al.'s u0: 5 minutes from failure to training again. */
#define RESTART_FIXED_S 300.0
/* Below this ETTR the job does not progress (and 1/ETTR would overflow). */
#define ETTR_MIN 1e-6
/* Longer than ~31.7 million years: not an answer. */
#define TIME_MAX_S 1e15

/* Per-generation defaults: failures per 1000 node-days, node overhead per
 * GPU (CPUs, NICs, fans, switches: the server's max power less its GPUs'),
 * and a reference price per GPU-hour (rough 2024-25 on-demand cloud list
 * prices; set --gpu-hour-price for a real quote). */
typedef struct gen_defaults {
    double failures_per_1000_node_days;
    const char *rate_source;
    double overhead_w_per_gpu;
    double gpu_hour_price;
} gen_defaults;

#define RSC1 "Kokolis et al. HPCA 2025, RSC-1 (A100): 6.50 per 1000 node-days"
#define LLAMA3 "Llama 3 (Dubey et al. 2024, Table 5): 419 unexpected interruptions " \
               "in 54 days on 2,048 nodes = 3.79 per 1000 node-days"

static const gen_defaults k_gen[GEN_COUNT] = {
    /* DGX-1: 3.5 kW max, 8 x 300 W GPUs */
    [GEN_VOLTA] = {6.50, RSC1 " (no Volta figure; the A100 one)", 137.5, 0.90},
    [GEN_TURING] = {6.50, RSC1 " (no Turing figure; the A100 one)", 100.0, 0.50},
    /* DGX A100: 6.5 kW max, 8 x 400 W */
    [GEN_AMPERE] = {6.50, RSC1, 412.5, 1.80},
    [GEN_ADA] = {6.50, RSC1 " (no Ada figure; the A100 one)", 200.0, 1.00},
    /* DGX H100: 10.2 kW max, 8 x 700 W */
    [GEN_HOPPER] = {3.79, LLAMA3, 575.0, 2.50},
    /* DGX B200: 14.3 kW max, 8 x 1000 W */
    [GEN_BLACKWELL] = {3.79, LLAMA3 " (no Blackwell figure; the H100 one)", 787.5, 4.00},
    [GEN_BLACKWELL_ULTRA] = {3.79, LLAMA3 " (no Blackwell figure; the H100 one)", 787.5,
                             5.00},
    [GEN_CDNA2] = {6.50, RSC1 " (no CDNA figure; the A100 one)", 400.0, 1.50},
    [GEN_CDNA3] = {6.50, RSC1 " (no CDNA figure; the A100 one)", 575.0, 2.00},
};

static const gen_defaults *gen_row(gpu_generation gen)
{
    return &k_gen[(unsigned)gen < GEN_COUNT ? gen : GEN_HOPPER];
}

double goodput_default_failure_rate(gpu_generation gen, const char **source)
{
    const gen_defaults *d = gen_row(gen);
    if (source != NULL)
        *source = d->rate_source;
    return d->failures_per_1000_node_days;
}

double goodput_mttf_s(double nodes, double failures_per_node_day)
{
    double rate = nodes * failures_per_node_day;
    if (!(nodes > 0) || !(failures_per_node_day > 0) || !isfinite(rate))
        return 0;
    return SECONDS_PER_DAY / rate;
}

double goodput_young_interval_s(double write_s, double mttf_s)
{
    if (!(write_s > 0) || !(mttf_s > 0))
        return 0;
    return sqrt(2.0 * write_s * mttf_s);
}

double goodput_daly_interval_s(double write_s, double mttf_s)
{
    double x;
    if (!(write_s > 0) || !(mttf_s > 0))
        return 0;
    if (write_s >= 2.0 * mttf_s)
        return mttf_s;
    x = write_s / (2.0 * mttf_s);
    return sqrt(2.0 * write_s * mttf_s) * (1.0 + sqrt(x) / 3.0 + x / 9.0) - write_s;
}

double goodput_ettr(double interval_s, double write_s, double restart_s, double mttf_s)
{
    double a, b, wall;
    if (!(interval_s > 0) || !(mttf_s > 0) || !(write_s >= 0) || !(restart_s >= 0) ||
        !isfinite(interval_s) || !isfinite(write_s) || !isfinite(restart_s))
        return 0;
    a = restart_s / mttf_s;
    b = (interval_s + write_s) / mttf_s;
    if (a > 700.0 || b > 700.0)
        return 0;
    /* wall time per unit of useful compute; expm1 keeps small b exact */
    wall = mttf_s * exp(a) * expm1(b) / interval_s;
    if (!isfinite(wall) || wall <= 0)
        return 0;
    return wall < 1.0 ? 1.0 : 1.0 / wall;
}

double goodput_checkpoint_bytes(const model *m, int seq_len)
{
    return CHECKPOINT_BYTES_PER_PARAM * model_param_count(m, seq_len);
}

/* GPUs, nodes, failure intensity (per day), power and price x GPUs of the
 * node groups the plan's stages occupy. */
typedef struct occupancy {
    int gpus, nodes;
    double failures_per_day;
    double power_w, price_x_gpus;
    bool rate_default;
} occupancy;

static void occupy(const cluster *c, const strategy *s, const evaluation *e,
                   const goodput_options *o,
                   occupancy *oc)
{
    int per_group[CLUSTER_MAX_GROUPS] = {0};
    int g, i;
    memset(oc, 0, sizeof *oc);
    if (s->n_stages <= 0 || c->n_groups > CLUSTER_MAX_GROUPS) {
        per_group[0] = e->gpus > 0 ? e->gpus : strategy_gpus(s);
    } else {
        for (i = 0; i < s->n_stages; i++) {
            int mg[STAGE_MIX_MAX], mn[STAGE_MIX_MAX];
            int k = strategy_stage_members(s, i, mg, mn, STAGE_MIX_MAX);
            for (int j = 0; j < k; j++)   /* a stage spanning groups: each its share */
                per_group[mg[j] >= 0 && mg[j] < c->n_groups ? mg[j] : 0] += mn[j];
        }
    }
    oc->rate_default = true;
    for (g = 0; g < c->n_groups && g < CLUSTER_MAX_GROUPS; g++) {
        const node_group *ng = &c->group[g];
        const gen_defaults *d = gen_row(ng->gpu.gen);
        double rate = d->failures_per_1000_node_days;
        int nodes;
        if (per_group[g] == 0)
            continue;
        nodes = (per_group[g] + ng->gpus_per_node - 1) / ng->gpus_per_node;
        if (o->failures_per_1000_node_days > 0)
            rate = o->failures_per_1000_node_days;
        else if (c->reliability.failures_per_1000_node_days > 0)
            rate = c->reliability.failures_per_1000_node_days;
        if (o->failures_per_1000_node_days > 0 ||
            c->reliability.failures_per_1000_node_days > 0)
            oc->rate_default = false;
        oc->gpus += per_group[g];
        oc->nodes += nodes;
        oc->failures_per_day += nodes * rate / 1000.0;
        oc->power_w += per_group[g] * (ng->gpu.board_power_w + d->overhead_w_per_gpu);
        oc->price_x_gpus += per_group[g] * d->gpu_hour_price;
    }
}

/* Checkpoint size, blocking, persist and load times into *out. */
static void checkpoint_times(const model *m, const cluster *c, const strategy *s,
                             const goodput_options *o, goodput *out)
{
    double writers = s->zero >= 1 ? out->gpus
                                     : (double)out->gpus / (s->dp > 0 ? s->dp : 1);
    double write_bw = c->reliability.storage_write_bytes_per_s > 0
                          ? c->reliability.storage_write_bytes_per_s
                          : out->nodes * STORAGE_WRITE_PER_NODE;
    double read_bw = c->reliability.storage_read_bytes_per_s > 0
                         ? c->reliability.storage_read_bytes_per_s
                         : out->nodes * STORAGE_READ_PER_NODE;
    double nic_bw;
    if (writers < 1)
        writers = 1;
    nic_bw = writers * c->group[0].inter_bytes_per_s;
    if (nic_bw > 0 && nic_bw < write_bw)
        write_bw = nic_bw;
    out->checkpoint_bytes = goodput_checkpoint_bytes(m, s->seq_len);
    out->checkpoint_persist_s = out->checkpoint_bytes / write_bw;
    out->checkpoint_load_s = out->checkpoint_bytes / read_bw;
    switch (o->mode) {
    case CHECKPOINT_SYNC: out->checkpoint_write_s = out->checkpoint_persist_s; break;
    case CHECKPOINT_FIXED: out->checkpoint_write_s = o->checkpoint_write_s; break;
    case CHECKPOINT_ASYNC:
    default:
        out->checkpoint_write_s = out->checkpoint_bytes / writers / HOST_COPY_BYTES_PER_S;
        break;
    }
}

/* The compute time between checkpoints, whole steps. */
static double checkpoint_interval(const goodput_options *o, const goodput *g)
{
    double t = o->checkpoint_interval_s;
    double steps;
    if (!(t > 0)) {
        t = goodput_daly_interval_s(g->checkpoint_write_s, g->mttf_s);
        if (o->mode != CHECKPOINT_SYNC && t < g->checkpoint_persist_s)
            t = g->checkpoint_persist_s;
    }
    steps = ceil(t / g->step_s - 1e-9);
    return (steps < 1 ? 1 : steps) * g->step_s;
}

static planner_status bad_options(const goodput_options *o, planner_error *err)
{
    const char *what = NULL;
    if (!(o->tokens >= 0) || !isfinite(o->tokens))
        what = "tokens";
    else if (!(o->failures_per_1000_node_days >= 0) || !isfinite(o->failures_per_1000_node_days))
        what = "failure rate";
    else if (!(o->restart_s >= 0) || !isfinite(o->restart_s))
        what = "restart time";
    else if (!(o->checkpoint_write_s >= 0) || !isfinite(o->checkpoint_write_s))
        what = "checkpoint write time";
    else if (!(o->checkpoint_interval_s >= 0) || !isfinite(o->checkpoint_interval_s))
        what = "checkpoint interval";
    else if (!(o->gpu_hour_price >= 0) || !isfinite(o->gpu_hour_price))
        what = "GPU-hour price";
    if (what == NULL)
        return PLANNER_OK;
    return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "the %s must be a finite number >= 0",
                     what);
}

/* Time, GPU-hours, cost and energy for o->tokens; PLANNER_E_INPUT when it is
 * not finite. */
static planner_status time_to_train(const goodput_options *o, goodput *g, planner_error *err)
{
    double ff = o->tokens / g->tokens_per_s, t;
    if (!g->progresses)
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                         "the job cannot finish: ETTR %.2g (job MTTF %.3g s, restart %.3g s, "
                         "checkpoint every %.3g s blocking %.3g s); fewer nodes, a lower failure "
                         "rate or faster restarts would",
                         g->ettr, g->mttf_s, g->restart_s, g->checkpoint_interval_s,
                         g->checkpoint_write_s);
    t = ff / g->ettr;
    if (!isfinite(t) || t > TIME_MAX_S)
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                         "training %.3g tokens would take more than %.3g years", o->tokens,
                         TIME_MAX_S / (365.25 * SECONDS_PER_DAY));
    g->have_time = true;
    g->time_failure_free_s = ff;
    g->time_to_train_s = t;
    g->gpu_hours = g->gpus * t / 3600.0;
    g->cost = g->gpu_hours * g->gpu_hour_price;
    g->energy_kwh = g->power_w * t / 3.6e6;
    return PLANNER_OK;
}

planner_status goodput_evaluate(goodput *out, const model *m, const cluster *c,
                                const strategy *s, const evaluation *e,
                                const goodput_options *opts, planner_error *err)
{
    static const goodput_options k_default = GOODPUT_OPTIONS_INIT;
    const goodput_options *o = opts != NULL ? opts : &k_default;
    occupancy oc;

    memset(out, 0, sizeof *out);
    if (bad_options(o, err) != PLANNER_OK)
        return PLANNER_E_INPUT;
    if (!(e->step_time_s > 0) || !(e->tokens_per_s > 0) ||
        !isfinite(e->step_time_s) || !isfinite(e->tokens_per_s))
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                         "the plan has no finite step time");
    occupy(c, s, e, o, &oc);
    if (oc.gpus <= 0 || !(oc.failures_per_day > 0))
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                         "the plan occupies no GPUs of the cluster");
    out->gpus = oc.gpus;
    out->nodes = oc.nodes;
    out->step_s = e->step_time_s;
    out->tokens_per_s = e->tokens_per_s;
    out->failures_per_node_day = oc.failures_per_day / oc.nodes;
    out->rate_default = oc.rate_default;
    out->mttf_s = SECONDS_PER_DAY / oc.failures_per_day;
    out->power_w = oc.power_w;
    out->price_default = !(o->gpu_hour_price > 0);
    out->gpu_hour_price = o->gpu_hour_price > 0 ? o->gpu_hour_price : oc.price_x_gpus / oc.gpus;
    checkpoint_times(m, c, s, o, out);
    out->restart_s = (o->restart_s > 0                    ? o->restart_s
                      : c->reliability.restart_s > 0 ? c->reliability.restart_s
                                                     : RESTART_FIXED_S) +
                     out->checkpoint_load_s;
    out->interval_auto = !(o->checkpoint_interval_s > 0);
    out->checkpoint_interval_s = checkpoint_interval(o, out);
    out->ettr = goodput_ettr(out->checkpoint_interval_s, out->checkpoint_write_s,
                             out->restart_s, out->mttf_s);
    out->progresses = out->ettr > ETTR_MIN;
    out->goodput_tokens_per_s = out->tokens_per_s * out->ettr;
    if (o->tokens > 0)
        return time_to_train(o, out, err);
    return PLANNER_OK;
}
