/* evaluate.c: evaluate() -- one strategy's step time, throughput and per-stage
 * memory: the step model.
 *
 * Per pipeline rank i (its node group's GPU, its own tp and layers, chunk by
 * chunk with vpp > 1): the forward and backward of one micro-batch are the
 * sums of its layers' costs (cost/layer_cost.c has the per-layer model:
 * kernels, TP/SP and MoE collectives, recompute, the embedding and loss on
 * the end ranks), the p2p time to the next rank cost_boundary_p2p_s().
 * The schedule (pipeline.c) turns these into each rank's finish time.  Then
 * the data-parallel gradient reduce (all-reduce, or reduce-scatter with the
 * distributed optimizer / ZeRO; routed-expert gradients over the
 * expert-data-parallel group of tp cp dp / ep ranks) is exposed beyond the
 * last backward unless overlapped with it; the optimizer step (HBM-bound)
 * and the parameter all-gather (ZeRO >= 1, hidden behind the next forward
 * when overlapped) follow; ZeRO-3 gathers weights and reduces grads per
 * micro-batch inside each forward/backward.  step = max_i(finish_i +
 * exposed reduce_i) + max_i(optimizer_i + step sync_i) + max_i(exposed
 * gather_i) + max_i(step_overhead_s of rank i's GPU generation), where step
 * sync is the grad-norm (and fp16 unscale / inf-check) pass and the
 * job-wide scalar all-reduces (step_sync_s).
 * Memory per rank: memory.c (memory_stage(); expert states sharded
 * over their expert-data-parallel group) with memory_inflight()
 * micro-batches, or the schedule's own peak when the chunks of a rank keep
 * different activations (memory_inflight_chunks).
 * Sources: ../shared/reference/cost-model.md.  evaluate() allocates only in
 * the schedule simulation.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cost/comm.h"
#include "cost/compute.h"
#include "cost/memory.h"
#include "model/transformer.h"
#include "schedule/evaluate.h"

#define GIB (1073741824.0)
/* The per-step work outside the layers that the step waits for, besides
 * the optimizer's Adam pass (compute_optimizer_s):
 *   - the gradient-norm pass for clipping: read every local main gradient
 *     (4 B/param; fp32 models too), one multi-tensor kernel;
 *   - fp16 only: unscale the gradients by the loss scale and check them
 *     for inf/NaN (read and write 4 B/param, one kernel);
 *   - the scalar all-reduces that synchronize every rank once per step:
 *     the gradient norm and the loss average (and fp16's found-inf flag)
 *     over the whole job -- latency-bound collectives of a few bytes on
 *     the job's hierarchical ring/tree (NCCL), with their launch.
 * Megatron's optimizer.step() and training_step() (megatron/core/optimizer,
 * megatron/training/training.py). */
static double step_sync_s(const model *m, const node_group *ng, const gen_constants *k,
                          int world, double local_params)
{
    comm_link wl = comm_group_link(ng, k, world, 1);
    int scalars = m->prec == PREC_FP16 ? 3 : 2;
    double extra = m->prec == PREC_FP16 ? 4.0 + 8.0 : 4.0;
    return compute_memory_s(&ng->gpu, k, extra * local_params, m->prec == PREC_FP16 ? 2 : 1) +
           scalars * (comm_allreduce_s(&wl, world, 8.0) + k->kernel_s);
}

/* Bytes per parameter of the data-parallel gradient reduction. */
static double grad_reduce_bytes(const model *m, int zero)
{
    if (zero >= 2)
        return m->prec == PREC_FP32 ? 4.0 : 2.0;
    return m->prec == PREC_FP16 ? 2.0 : 4.0;   /* bf16: fp32 main grads */
}

/* ZeRO-3's gathered 16-bit weights held at once on a stage: the layer in
 * use (the largest of the stage's decoder layers, or its embedding / output
 * layer) and the next one being prefetched, the prefetch capped at
 * ZERO3_MAX_PREFETCH_PARAMS (DeepSpeed's stage3_max_live_parameters
 * default), per TP rank.  The rest stays sharded. */
#define ZERO3_MAX_PREFETCH_PARAMS 1e9
static double zero3_gather_bytes(const model *m, const stage_spec *st, int tp)
{
    double unit = 0;
    int i;
    for (i = st->first_layer; i < st->first_layer + st->n_layers && i < m->layers; i++) {
        double w = tf_layer_params(m, i);
        if (w > unit)
            unit = w;
    }
    if ((double)m->vocab * m->hidden > unit)
        unit = (double)m->vocab * m->hidden;
    return 2.0 * (unit + (unit < ZERO3_MAX_PREFETCH_PARAMS ? unit : ZERO3_MAX_PREFETCH_PARAMS)) /
           tp;
}

static const char *binding_of(const time_breakdown *t)
{
    struct { double v; const char *name; } parts[] = {
        {t->compute_s, "compute"},      {t->recompute_s, "recompute"},
        {t->tp_comm_s, "tp-comm"},      {t->cp_comm_s, "cp-comm"},
        {t->ep_comm_s, "ep-comm"},
        {t->pp_comm_s, "pp-comm"},      {t->bubble_s, "pipeline-bubble"},
        {t->dp_comm_s, "dp-comm"},      {t->optimizer_s, "optimizer"},
        {t->overhead_s, "overhead"}};
    size_t i, best = 0;
    for (i = 1; i < sizeof parts / sizeof parts[0]; i++)
        if (parts[i].v > parts[best].v)
            best = i;
    return parts[best].name;
}

void evaluate(const model *m, const cluster *c, const cost_params *p,
              const strategy *s, evaluation *out)
{
    evaluate_schedule(m, c, p, s, out, NULL);
}

double cost_schedule_simulate(const cost_schedule *in, double *rank_end_s, sched_events *events)
{
    if (in->chunked)
        return schedule_simulate_chunks(in->pp, in->vpp, in->microbatches, in->fwd_s, in->bwd_s,
                                        in->p2p_s, in->p2p_wrap_s, rank_end_s, events);
    return schedule_simulate_ex(in->pp, in->vpp, in->microbatches, in->fwd_s, in->bwd_s,
                                in->p2p_s, in->p2p_wrap_s, rank_end_s, events);
}

void evaluate_schedule(const model *m, const cluster *c, const cost_params *p,
                       const strategy *s, evaluation *out, cost_schedule *sched)
{
    double fwd[STRATEGY_MAX_STAGES], bwd[STRATEGY_MAX_STAGES], p2p[STRATEGY_MAX_STAGES];
    double rank_end[STRATEGY_MAX_STAGES], grad_exp[STRATEGY_MAX_STAGES];
    double param_exp = 0, opt = 0, done = 0, span, peak_flops = 0, overhead = 0;
    range_cost rc[STRATEGY_MAX_STAGES];
    state_bytes sb;
    int pp = s->pp > 0 ? s->pp : 1, v = s->vpp > 0 ? s->vpp : 1;
    int mcount = strategy_microbatches(s);
    int cp = s->cp > 0 ? s->cp : 1, dp = s->dp > 0 ? s->dp : 1;
    int i, j, worst = 0;
    double fc[COST_CHUNKS_MAX], bc[COST_CHUNKS_MAX];
    bool chunked;

    memset(out, 0, sizeof *out);
    if (pp > STRATEGY_MAX_STAGES)
        pp = STRATEGY_MAX_STAGES;
    if (v > COST_CHUNKS_MAX / pp)   /* beyond any model's layers */
        v = COST_CHUNKS_MAX / pp;
    /* per-chunk schedule times where the chunks of a rank hold different
     * layer counts (the embedding/loss-accounting split); the even and the
     * first/last splits keep per-rank times (chunk = rank / vpp), as the
     * trace (trace.c, per-rank times) replays them */
    chunked = v > 1 && (s->account_embedding || s->account_loss);
    if (mcount < 1)
        mcount = 1;
    out->n_stages = pp;
    out->gpus = strategy_gpus(s);
    memory_state_bytes(m->prec, s->zero, dp, &sb);

    for (i = 0; i < pp; i++) {
        const stage_spec *st = &s->stage[i];
        int g = st->group >= 0 && st->group < c->n_groups ? st->group : 0;
        int tp = st->tp > 0 ? st->tp : (s->tp > 0 ? s->tp : 1);
        const node_group *ng = &c->group[g];
        const gen_constants *k = &p->gen[ng->gpu.gen];
        comm_link dpl = comm_group_link(ng, k, dp, tp * cp);
        /* routed experts: expert-data-parallel group of tp cp dp / ep ranks,
         * ep apart (expert rank order etp-ep-edp-pp, etp 1) */
        int ep = s->ep > 0 ? s->ep : 1;
        int edp = (tp * cp * dp) / ep > 0 ? (tp * cp * dp) / ep : 1;
        comm_link edpl = comm_group_link(ng, k, edp, ep);
        double gb = grad_reduce_bytes(m, s->zero);
        double t_grad, t_param, opt_i, inflight;
        double ca[COST_CHUNKS_MAX];
        bool act_uneven = false;
        range_cost *r = &rc[i];

        memset(r, 0, sizeof *r);
        /* chunk by chunk (strategy_chunk_layers' rule): the embedding in
         * rank 0's chunk 0, the output layer and loss in rank pp-1's last */
        for (j = 0; j < v; j++) {
            range_cost part;
            int first = 0, n = strategy_chunk_layers(s, m->layers, i, j, &first);
            if (n < 0)
                n = 0;
            cost_layer_range(m, c, p, s, g, tp, first, n, i == 0 && j == 0,
                             i == pp - 1 && j == v - 1, &part);
            range_cost_add_work(r, &part);
            r->params += part.params;
            r->expert_params += part.expert_params;
            if (part.act_peak_extra_bytes > r->act_peak_extra_bytes)
                r->act_peak_extra_bytes = part.act_peak_extra_bytes;
            if (chunked) {
                fc[i * v + j] = cost_cap_time(part.fwd_s);
                bc[i * v + j] = cost_cap_time(part.bwd_s);
                ca[j] = part.act_bytes;
                if (part.act_bytes != ca[0])
                    act_uneven = true;
            }
        }

        /* data parallelism */
        if (s->zero >= 3) {
            /* every weight tensor is gathered before its forward and again
             * before its backward, its gradient reduce-scattered after: one
             * ring collective per tensor (NCCL's hierarchical latency) on the
             * critical path (each layer waits for its weights; measured
             * ZeRO-3 runs scale as if little were hidden, Narayanan et al.
             * SC21 Table 2).  Each per-tensor collective also flattens or
             * unflattens one chunk per rank (list all-gather /
             * reduce-scatter: dp copy kernels), the term that grows
             * linearly with the ranks as SC21's 384 -> 1,536 GPU runs do */
            double lat = r->n_tensors * (comm_ring_latency_s(&dpl, dp) + dp * k->kernel_s);
            double ag = comm_allgather_s(&dpl, dp, r->params * 2.0) -
                        comm_ring_latency_s(&dpl, dp);
            double rs = comm_reducescatter_s(&dpl, dp, r->params * gb) -
                        comm_ring_latency_s(&dpl, dp);
            if (dp > 1) {
                r->fwd_s += lat + ag;
                r->bwd_s += 2.0 * lat + ag + rs;
            }
            t_grad = t_param = 0;
            grad_exp[i] = 0;
        } else {
            double dense = r->params - r->expert_params, ex = r->expert_params;
            double bucket = dense < cost_dp_bucket_params(dp) ? dense : cost_dp_bucket_params(dp);
            double last_grad, first_param = 0;
            if (s->zero >= 1) {
                t_grad = comm_reducescatter_s(&dpl, dp, dense * gb);
                t_param = comm_allgather_s(&dpl, dp, dense * 2.0);
                if (ex > 0) {
                    t_grad += comm_reducescatter_s(&edpl, edp, ex * gb);
                    t_param += comm_allgather_s(&edpl, edp, ex * 2.0);
                }
                last_grad = comm_reducescatter_s(&dpl, dp, bucket * gb);
                first_param = comm_allgather_s(&dpl, dp, bucket * 2.0);
            } else {
                t_grad = comm_allreduce_s(&dpl, dp, dense * gb);
                if (ex > 0)
                    t_grad += comm_allreduce_s(&edpl, edp, ex * gb);
                t_param = 0;
                last_grad = comm_allreduce_s(&dpl, dp, bucket * gb);
            }
            /* overlapped with the last micro-batch's backward (forward):
             * the last (first) bucket always shows */
            if (s->overlap_grad_reduce && t_grad > 0) {
                double rest = t_grad - last_grad;
                grad_exp[i] = last_grad + cost_overlapped(rest, r->bwd_s, k);
            } else {
                grad_exp[i] = t_grad;
            }
            if (s->overlap_param_gather && t_param > 0)
                t_param = first_param + cost_overlapped(t_param - first_param, r->fwd_s, k);
        }
        if (t_param > param_exp)
            param_exp = t_param;
        {
            /* the distributed optimizer shards the experts' states over
             * their expert-data-parallel group */
            double local = r->params;
            if (s->zero >= 1)
                local = r->expert_params > 0
                            ? (r->params - r->expert_params) / dp + r->expert_params / edp
                            : r->params / dp;
            opt_i = compute_optimizer_s(&ng->gpu, k, local) +
                    step_sync_s(m, ng, k, out->gpus > 0 ? out->gpus : 1, local);
        }
        if (opt_i > opt)
            opt = opt_i;
        /* the slowest host sets the pace; not clamped at 0 so that
         * `planner calibrate` sees its slope through a negative trial */
        if (i == 0 || k->step_overhead_s > overhead)
            overhead = k->step_overhead_s;

        r->fwd_s = cost_cap_time(r->fwd_s);
        r->bwd_s = cost_cap_time(r->bwd_s);
        r->compute_s = cost_cap_time(r->compute_s);
        r->recompute_s = cost_cap_time(r->recompute_s);
        r->tp_comm_s = cost_cap_time(r->tp_comm_s);
        grad_exp[i] = cost_cap_time(grad_exp[i]);
        fwd[i] = r->fwd_s;
        bwd[i] = r->bwd_s;
        if (chunked) {
            /* what the rank pays beyond its chunks' layers (ZeRO-3's
             * per-tensor collectives) in equal shares */
            double sf = 0, sbw = 0;
            for (j = 0; j < v; j++) {
                sf += fc[i * v + j];
                sbw += bc[i * v + j];
            }
            for (j = 0; j < v; j++) {
                fc[i * v + j] = cost_cap_time(fc[i * v + j] + (fwd[i] - sf) / v);
                bc[i * v + j] = cost_cap_time(bc[i * v + j] + (bwd[i] - sbw) / v);
            }
        }
        out->stage_fwd_s[i] = r->fwd_s;
        out->stage_bwd_s[i] = r->bwd_s;

        /* p2p to the next rank */
        p2p[i] = i < pp - 1 || (v > 1 && pp > 1) ? cost_cap_time(cost_boundary_p2p_s(m, c, p, s, i))
                                                : 0;

        /* memory */
        inflight = memory_inflight(pp, v, mcount, i);
        {
            double extra = r->act_peak_extra_bytes, act = r->act_bytes;
            if (s->zero >= 3 && st->n_layers > 0 && dp > 1)
                extra += zero3_gather_bytes(m, st, tp);
            if (act_uneven && act > 0) {
                /* chunks keep different activations: the schedule's own
                 * peak, as whole-rank micro-batches */
                inflight = memory_inflight_chunks(pp, v, mcount, i, ca) / act;
            }
            state_bytes sbs = sb;
            if (r->expert_params > 0 && r->params > 0) {
                /* expert states sharded over edp, the rest over dp */
                state_bytes sbe;
                double fe = r->expert_params / r->params;
                memory_state_bytes(m->prec, s->zero, edp, &sbe);
                sbs.weights = (1.0 - fe) * sb.weights + fe * sbe.weights;
                sbs.grads = (1.0 - fe) * sb.grads + fe * sbe.grads;
                sbs.optimizer = (1.0 - fe) * sb.optimizer + fe * sbe.optimizer;
            }
            memory_stage(&sbs, r->params, act, inflight, extra, p->reserve_bytes,
                         p->frag_fraction, ng->gpu.usable_mem_bytes, &out->stage_memory[i]);
        }
        if (out->stage_memory[i].total_bytes > out->peak_memory_bytes) {
            out->peak_memory_bytes = out->stage_memory[i].total_bytes;
            out->peak_stage = i;
        }
        peak_flops += compute_peak_flops(&ng->gpu, precision_peak(m->prec)) * tp * cp * dp;
    }

    if (chunked)
        span = schedule_simulate_chunks(pp, v, mcount, fc, bc, p2p, pp > 1 ? p2p[pp - 1] : 0,
                                        rank_end, NULL);
    else
        span = schedule_simulate_ex(pp, v, mcount, fwd, bwd, p2p, pp > 1 ? p2p[pp - 1] : 0,
                                    rank_end, NULL);
    if (sched != NULL) {
        int n = chunked ? pp * v : pp;
        sched->pp = pp;
        sched->vpp = v;
        sched->microbatches = mcount;
        sched->chunked = chunked;
        memcpy(sched->fwd_s, chunked ? fc : fwd, (size_t)n * sizeof(double));
        memcpy(sched->bwd_s, chunked ? bc : bwd, (size_t)n * sizeof(double));
        memcpy(sched->p2p_s, p2p, (size_t)pp * sizeof(double));
        sched->p2p_wrap_s = pp > 1 ? p2p[pp - 1] : 0;
    }
    if (span < 0) {   /* out of memory in the simulation: the closed form */
        double fb = 0;
        for (i = 0; i < pp; i++)
            if (fwd[i] + bwd[i] > fb)
                fb = fwd[i] + bwd[i];
        span = (mcount + (pp - 1.0) / v) * fb;
        for (i = 0; i < pp; i++)
            rank_end[i] = span;
    }
    for (i = 0; i < pp; i++) {
        double d = rank_end[i] + grad_exp[i];
        if (d > done)
            done = d;
        if (fwd[i] + bwd[i] > fwd[worst] + bwd[worst])
            worst = i;
    }
    out->step_time_s = cost_cap_time(done + cost_cap_time(opt) + cost_cap_time(param_exp) + overhead);
    if (!(out->step_time_s > 0))
        out->step_time_s = 1e-9;

    /* breakdown, on the slowest rank */
    {
        time_breakdown *t = &out->time;
        double steady = mcount * (fwd[worst] + bwd[worst]);
        double pp_fill = 0;
        t->compute_s = mcount * rc[worst].compute_s;
        t->recompute_s = mcount * rc[worst].recompute_s;
        t->tp_comm_s = mcount * rc[worst].tp_comm_s;
        t->ep_comm_s = mcount * rc[worst].ep_comm_s;
        for (i = 0; i < pp - 1; i++)
            pp_fill += 2.0 * p2p[i];
        t->pp_comm_s = pp_fill < span - steady ? pp_fill : (span > steady ? span - steady : 0);
        t->bubble_s = span - steady - t->pp_comm_s;
        if (t->bubble_s < 0)
            t->bubble_s = 0;
        t->dp_comm_s = (done - span) + param_exp;
        if (s->zero >= 3)
            t->dp_comm_s += steady - (t->compute_s + t->recompute_s + t->tp_comm_s +
                                      t->ep_comm_s);
        if (t->dp_comm_s < 0)
            t->dp_comm_s = 0;
        t->optimizer_s = opt;
        t->overhead_s = overhead;
        t->compute_s = cost_cap_time(t->compute_s);
        t->recompute_s = cost_cap_time(t->recompute_s);
        t->tp_comm_s = cost_cap_time(t->tp_comm_s);
        t->ep_comm_s = cost_cap_time(t->ep_comm_s);
        t->pp_comm_s = cost_cap_time(t->pp_comm_s);
        t->bubble_s = cost_cap_time(t->bubble_s);
        t->dp_comm_s = cost_cap_time(t->dp_comm_s);
        t->optimizer_s = cost_cap_time(t->optimizer_s);
    }

    {
        double tokens = (double)s->gbs * s->seq_len;
        double mf = model_flops_per_step(m, s->gbs, s->seq_len);
        int gpus = out->gpus > 0 ? out->gpus : 1;
        out->tokens_per_s = tokens / out->step_time_s;
        out->tokens_per_s_per_gpu = out->tokens_per_s / gpus;
        out->tflops_per_gpu = mf / out->step_time_s / gpus / 1e12;
        out->mfu = peak_flops > 0 ? mf / out->step_time_s / peak_flops : 0;
        if (!isfinite(out->mfu) || out->mfu < 0)
            out->mfu = 0;
        if (out->mfu > 1)   /* only with inputs beyond physics (peaks ~0) */
            out->mfu = 1;
    }

    out->feasible = true;
    for (i = 0; i < pp; i++) {
        const memory_breakdown *mb = &out->stage_memory[i];
        if (mb->total_bytes > mb->capacity_bytes) {
            int g = s->stage[i].group >= 0 && s->stage[i].group < c->n_groups
                        ? s->stage[i].group : 0;
            out->feasible = false;
            snprintf(out->reason, sizeof out->reason,
                     "stage %d needs %.1f GiB, %s has %.1f GiB usable", i,
                     mb->total_bytes / GIB, c->group[g].gpu.name, mb->capacity_bytes / GIB);
            break;
        }
    }
    out->binding = out->feasible ? binding_of(&out->time) : "memory";
}

