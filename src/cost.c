/* cost.c: evaluate() -- one strategy's step time, throughput and per-stage
 * memory.
 *
 * Per pipeline rank i (its node group's GPU, its own tp and layers):
 *   forward of one micro-batch = sum over its layers of GEMMs + flash
 *     attention + element-wise kernels (compute.c) + TP/SP collectives
 *     (comm.c; hidden behind the GEMMs with tp_comm_overlap), plus the
 *     embedding on rank 0 and output layer + loss on the last rank;
 *   backward = 2 x the forward's kernels + the same TP traffic + the
 *     re-forward of recomputation (full: everything; selective: core
 *     attention);
 *   p2p between ranks: b s h / t (/ t again with SP) 16-bit elements over the
 *     link between the two ranks' node groups (NVLink when the whole
 *     pipeline sits in one node).
 * The schedule (pipeline.c) turns these into each rank's finish time.  Then
 * the data-parallel gradient reduce (all-reduce, or reduce-scatter with the
 * distributed optimizer / ZeRO) is exposed beyond the last backward unless
 * overlapped with it; the optimizer step (HBM-bound) and the parameter
 * all-gather (ZeRO >= 1, hidden behind the next forward when overlapped)
 * follow; ZeRO-3 gathers weights and reduces grads per micro-batch inside
 * each forward/backward.  step = max_i(finish_i + exposed reduce_i) +
 * max_i(optimizer_i + step sync_i) + max_i(exposed gather_i) +
 * max_i(step_overhead_s of rank i's GPU generation), where step sync is the
 * grad-norm (and fp16 unscale / inf-check) pass and the job-wide scalar
 * all-reduces (step_sync_s).
 * MoE layers (expert parallelism ep, experts not tensor-parallel): the
 * routed experts' grouped GEMMs at their tokens per expert
 * (tf_layer_gemms_ep), dispatch and combine all-to-alls over the ep
 * consecutive ranks in the forward and again in the backward (comm.c,
 * exposed); expert weights / ep per GPU, their gradients reduced (and with
 * the distributed optimizer their states sharded) over the
 * expert-data-parallel group of tp cp dp / ep ranks; the all-to-all send and
 * receive buffers are transient memory; each MoE layer pays moe_host_s in
 * its forward and twice in its backward (the dispatcher's device-to-host
 * sync leaves the layer's launches on the critical path).
 * Memory per rank: memory.c with memory_inflight() micro-batches.
 * Sources: ../shared/reference/cost-model.md.  evaluate() allocates only in
 * the schedule simulation; identical consecutive layers are costed once.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "comm.h"
#include "compute.h"
#include "cost.h"
#include "memory.h"
#include "pipeline.h"
#include "transformer.h"

#define GIB (1073741824.0)
/* Per-chunk times of one evaluation (pp x vpp; every chunk holds at least
 * one layer or the embedding/loss, so far above any real model's). */
#define TIME_CAP_S 1e30     /* absurd inputs (1e-300 B/s links) stay finite */

static double cap_time(double t)
{
    return isfinite(t) && t < TIME_CAP_S ? (t > 0 ? t : 0) : TIME_CAP_S;
}

/* Defaults fitted (round 4: Nelder-Mead on dense MAPE + 0.3 dense max
 * error + 0.5 x the same for FP8, each constant held to a physically
 * plausible range) to the 53 dense 16-bit runs of
 * ../shared/validation/published-runs.json, FP8 checked on its 24
 * predictable runs: dense MAPE 7.3%, max 21.4% (was 9.6% / 24.2% with one
 * global overhead); FP8 8.9% / 25.8% (was 9.7% / 26.7%).
 *   Volta (4 Megatron 2020 runs): gemm 0.594 and the overhead; attn_eff
 *     held at Ampere's (same era, same unfused memory-bound softmax, a
 *     similar FLOP/byte ratio): 4 runs cannot separate it from gemm_eff.
 *   Ampere (40 runs: Megatron 2020, SC21, Korthikanti): gemm 0.678, attn
 *     0.211 (pre-flash attention), inter 0.503 -- interior: with its bound
 *     lowered to 0.3 the fit stays at 0.50 (SC21's 1,000-2,000-GPU jobs on
 *     a shared fabric).
 *   Hopper (9 Megatron-Core r0.8.0 bf16 runs; the 14 H100 FP8 runs at
 *     half weight share its attention, links and overhead, and Blackwell's
 *     10 FP8 runs use its copy): gemm 0.658, attn 0.453 (flash
 *     attention, cuDNN/FA2 era: ~450 of 989 TFLOP/s), inter 0.729;
 *     fp8_gemm_eff 0.725 from the FP8 runs.
 *   overlap_exposed 0.408 for all.
 * intra_eff is not fitted: nccl-tests' bus bandwidth over the NVLink rate
 * (V100 ~130/150, A100 235/300, H100 368/450); hbm_eff and kernel_s are
 * round 2's.  Generations without runs copy the nearest measured one
 * (Turing: Volta, Ada: Ampere, Blackwell and CDNA: Hopper) -- calibrate
 * them with `planner calibrate`.
 * step_overhead_s is per generation and only partly physics: Hopper's
 * 0.066 s is a plausible host time per step of a current stack (data
 * loader, logging, Python between the step's phases); Ampere's 0.324 s and
 * Volta's 0.225 s absorb what the 2020-2021 software of their runs paid and
 * the model does not see -- no fused kernels, TP all-reduces neither
 * overlapped nor sequence-parallel, recompute settings the 2020 READMEs do
 * not print (round 3's residual study at zero overhead: those runs want
 * +0.04..+0.55 s, growing ~13% of the step per doubling of tp).  It is a
 * property of the software stack as much as of the GPU: on a current
 * stack on A100s the Ampere value overpredicts the step by ~0.25 s --
 * calibrate it (`planner calibrate --params ampere.step_overhead_s`).
 * With one global overhead (round 3) the 2020 runs set it to 0.28 s, the
 * small fast H100 runs came out -24% and Hopper's gemm_eff rose to 0.85 to
 * compensate. */
/* moe_host_s (round MoE 2): the host-paced time of one MoE layer's forward
 * per micro-batch (backward 2x), fitted on a grid to the 32 predictable MoE
 * runs (MAPE 67.0% -> 27.6%, max 210.6% -> 91.7%); the same for every
 * generation -- a property of the host and the software stack, and the
 * corpus has no MoE run before Hopper.  README validation has the evidence
 * (Qwen3-30B-A3B at mbs 1: ~9 ms per layer on H100 and B200 alike). */
#define MOE_HOST_S 2.25e-3
void cost_params_default(cost_params *p)
{
    /* gemm, attn, hbm, intra, inter, kernel_s, fp8_gemm, overlap_exposed,
     * step_overhead_s, moe_host_s */
    static const gen_constants volta = {0.594, 0.210, 0.748, 0.87, 0.80, 6.3e-6, 0.65, 0.408,
                                        0.225, MOE_HOST_S};
    static const gen_constants ampere = {0.678, 0.211, 0.748, 0.78, 0.503, 6.3e-6, 0.65, 0.408,
                                         0.324, MOE_HOST_S};
    static const gen_constants hopper = {0.658, 0.453, 0.748, 0.82, 0.729, 6.3e-6, 0.725, 0.408,
                                         0.066, MOE_HOST_S};
    int g;
    memset(p, 0, sizeof *p);
    for (g = 0; g < GEN_COUNT; g++)
        p->gen[g] = hopper;
    p->gen[GEN_VOLTA] = volta;
    p->gen[GEN_TURING] = volta;
    p->gen[GEN_AMPERE] = ampere;
    p->gen[GEN_ADA] = ampere;
    p->reserve_bytes = 1.0 * GIB;
    p->frag_fraction = 0.10;
}

double model_flops_per_step(const model *m, int gbs, int seq_len)
{
    double per_token = tf_logits_flops_per_token(m);
    int i;
    for (i = 0; i < m->layers; i++)
        per_token += tf_layer_flops_per_token(m, &m->layer[i], seq_len);
    return 3.0 * per_token * (double)gbs * seq_len;
}

static int same_layer(const layer_spec *a, const layer_spec *b)
{
    return a->hidden == b->hidden && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->ffn_hidden == b->ffn_hidden && a->moe == b->moe;
}

/* Flash attention's backward re-computes the scores and runs five matmuls
 * (S, dP, dV, dQ, dK) to the forward's two (Dao 2023). */
#define ATTN_BWD_RATIO 2.5

/* Megatron's DDP bucket: max(40M, 1M x dp) parameters (distributed.py); the
 * last bucket's reduce cannot start before the backward ends, the first
 * bucket's gather must finish before the forward starts. */
static double dp_bucket_params(int dp)
{
    double b = 1e6 * dp;
    return b > 4e7 ? b : 4e7;
}

/* Exposed part of a collective of `t` seconds overlapped with `window`
 * seconds of compute: what does not fit shows in full, what fits slows the
 * compute by overlap_exposed of itself (SMs and HBM taken by the
 * communication kernels). */
static double overlapped(double t, double window, const gen_constants *k)
{
    double hidden = t < window ? t : window;
    return (t - hidden) + k->overlap_exposed * hidden;
}

/* Activation bytes one layer keeps for its backward, per micro-batch on one
 * GPU: transformer.c's count (Korthikanti et al. 2022 with flash attention:
 * LN inputs, the QKV / proj / fc1 / fc2 GEMM inputs, Q K V and the
 * attention output, fc1's output, 16-bit), corrected for FP8/FP4 recipes.
 * Transformer Engine saves the inputs of its FP8 GEMMs for the weight
 * gradient in FP8 (te.pytorch Linear / LayerNormLinear: `saved_inputmat` is
 * the FP8 cast -- or its FP8 transpose -- when fp8 and the wgrad is not
 * overridden to higher precision; with SP the local FP8 shard, re-gathered
 * in the backward; MXFP8 adds one 8-bit scale per 32 values, ignored):
 *   - the two LayerNormLinear outputs (QKV and fc1 inputs): 1 byte, not 2,
 *     -h bytes per token each, outside the TP region (/ tp with SP);
 *   - the fc2 input (activation output, f wide): -f bytes per token, the
 *     16-bit output is freed after the cast; inside the TP region;
 *   - the proj input: in 16 bits it IS flash attention's saved output O
 *     (counted once); in FP8 the cast is an extra copy: +qw bytes per token.
 * Llama 3 70B per token: 35.5 h -> 31.0 h bytes (h 8192, f 28672, qw 8192):
 * -2h - f + qw = -16384 - 28672 + 8192 B.  Full recompute keeps the layer
 * input (16 bits), unchanged. */
static double layer_act_bytes(const model *m, const layer_spec *l, const strategy *s, int tp,
                              recompute_mode rc)
{
    double a = tf_layer_activation_bytes(m, l, s->mbs, s->seq_len, s->cp, tp, s->sp, rc);
    peak_format fmt = precision_peak(m->prec);
    if ((fmt == PEAK_FP8 || fmt == PEAK_FP4) && rc != RECOMPUTE_FULL) {
        double t = tp > 0 ? tp : 1;
        double sb = (double)s->mbs * s->seq_len / (s->cp > 0 ? s->cp : 1);
        double qw = (double)l->heads * l->head_dim;
        double f = l->moe && m->moe.experts > 0 ? 0 : l->ffn_hidden;   /* dense MLPs */
        double d = -2.0 * l->hidden * sb / (s->sp ? t : 1.0) + (qw - f) * sb / t;
        if (a + d > 0)
            a += d;
    }
    return a;
}

/* Adds part's times, kept activations and weight tensors to *acc (what one
 * more layer or chunk adds to a range; parameters and transients are the
 * caller's, as they combine differently). */
static void range_cost_add_work(range_cost *acc, const range_cost *part)
{
    acc->fwd_s += part->fwd_s;
    acc->bwd_s += part->bwd_s;
    acc->compute_s += part->compute_s;
    acc->recompute_s += part->recompute_s;
    acc->tp_comm_s += part->tp_comm_s;
    acc->ep_comm_s += part->ep_comm_s;
    acc->act_bytes += part->act_bytes;
    acc->n_tensors += part->n_tensors;
}

/* Cost of one decoder layer for one micro-batch on one GPU. */
static void layer_cost(const model *m, const layer_spec *l, const node_group *ng,
                       const gen_constants *k, const comm_link *tpl, const comm_link *cpl,
                       const strategy *s, int tp, range_cost *rc)
{
    const gpu_spec *gpu = &ng->gpu;
    peak_format fmt = precision_peak(m->prec);
    int eb = precision_bytes(m->prec);
    int cp = s->cp > 0 ? s->cp : 1;
    double tokens = (double)s->mbs * s->seq_len / cp;
    tf_gemm g[TF_MAX_GEMMS];
    int ep = s->ep > 0 ? s->ep : 1;
    int ngm = tf_layer_gemms_ep(m, l, tokens, tp, ep, g);
    double gemm = compute_gemms_s(gpu, k, fmt, eb, g, ngm);
    double attn = compute_attention_s(gpu, k, fmt,
                                      tf_attention_flops(l, s->mbs, s->seq_len, cp, tp));
    double elem = compute_memory_s(gpu, k,
                                   tf_layer_elementwise_bytes(m, l, tokens, tp, s->sp), 6);
    double cast_f = 0, cast_b = 0;
    double fwd, bwd, tpf = 0, tpb = 0, cpf = 0, cpb = 0, epf = 0, rec = 0;

    if (fmt == PEAK_FP8 || fmt == PEAK_FP4) {
        cast_f = compute_fp8_cast_s(gpu, k, g, ngm, false);
        cast_b = compute_fp8_cast_s(gpu, k, g, ngm, true);
    }
    fwd = gemm + attn + elem + cast_f;
    bwd = 2.0 * gemm + ATTN_BWD_RATIO * attn + 2.0 * elem + cast_b;

    if (tp > 1) {
        /* forward: two all-reduces (SP: all-gather + reduce-scatter pairs,
         * the same bytes) of b s h 16-bit activations.  Backward: without SP
         * the two input-gradient all-reduces; with SP also the re-gather of
         * each column-parallel input for its weight gradient (3 of the 4
         * collectives' worth).  With tp_comm_overlap each is split into tp
         * chunks pipelined with its GEMM: one chunk stays exposed, the rest
         * hides behind the GEMMs at overlap_exposed, beyond them in full. */
        double one = 2.0 * comm_allreduce_s(tpl, tp, tokens * l->hidden * 2.0) +
                     4.0 * k->kernel_s;
        double back = s->sp ? 1.5 * one : one;
        if (s->tp_comm_overlap) {
            tpf = one / tp + overlapped(one - one / tp, gemm, k);
            tpb = back / tp + overlapped(back - back / tp, 2.0 * gemm, k);
        } else {
            tpf = one;
            tpb = back;
        }
    }
    if (cp > 1) {
        /* ring attention: this rank's K and V blocks travel round the cp
         * ranks (cp - 1 steps), overlapped with the attention blocks; the
         * backward sends K, V and their gradients (twice the bytes) */
        double kvw = (double)l->kv_heads * l->head_dim / (l->kv_heads >= tp ? tp : l->kv_heads);
        double kv = tokens * 2.0 * kvw * 2.0;
        double t = (cp - 1) * comm_p2p_s(cpl->bytes_per_s, cpl->latency_s, kv);
        cpf = overlapped(t, attn, k);
        cpb = overlapped(2.0 * t, ATTN_BWD_RATIO * attn, k);
    }
    if (l->moe && m->moe.experts > 0 && ep > 1) {
        /* MoE: dispatch and combine all-to-alls of the top-k copies over the
         * EP group (experts not tensor-parallel: consecutive ranks, stride
         * 1), not overlapped; the backward runs the same two in reverse */
        epf = 2.0 * (comm_alltoall_s(ng, k, ep, 1, tf_moe_dispatch_bytes(m, l, tokens, tp)) +
                     k->kernel_s);
    }
    if (l->moe && m->moe.experts > 0) {
        /* the token dispatcher's device-to-host sync (tokens per expert)
         * drains the host's run-ahead: the layer's launches are paced by
         * the host, forward once, backward (dgrad + wgrad) twice */
        fwd += k->moe_host_s;
        bwd += 2.0 * k->moe_host_s;
    }
    if (s->recompute == RECOMPUTE_FULL)
        rec = fwd + tpf + cpf + epf;
    else if (s->recompute == RECOMPUTE_SELECTIVE)
        rec = attn;
    rc->fwd_s += fwd + tpf + cpf + epf;
    rc->bwd_s += bwd + tpb + cpb + epf + rec;
    rc->compute_s += fwd + bwd;
    rc->recompute_s += rec;
    rc->tp_comm_s += tpf + tpb + cpf + cpb;   /* the re-forward's: in recompute_s */
    rc->ep_comm_s += 2.0 * epf;
    rc->act_bytes += layer_act_bytes(m, l, s, tp, s->recompute);
    rc->n_tensors += tf_layer_tensors(m, l);
}

void cost_layer_range(const model *m, const cluster *c, const cost_params *p,
                      const strategy *s, int group, int tp, int first, int n,
                      bool first_stage, bool last_stage, range_cost *out)
{
    const node_group *ng = &c->group[group];
    const gpu_spec *gpu = &ng->gpu;
    const gen_constants *k = &p->gen[gpu->gen];
    int cp = s->cp > 0 ? s->cp : 1;
    comm_link tpl, cpl;
    range_cost one;
    double tokens = (double)s->mbs * s->seq_len / cp;
    double max_layer_act = 0, a2a_buf = 0;
    int ep = s->ep > 0 ? s->ep : 1;
    int i;

    if (tp <= 0)
        tp = s->tp > 0 ? s->tp : 1;
    memset(out, 0, sizeof *out);
    tpl = comm_group_link(ng, k, tp, 1);
    cpl = comm_group_link(ng, k, cp, tp);
    memset(&one, 0, sizeof one);
    for (i = first; i < first + n && i < m->layers; i++) {
        const layer_spec *l = &m->layer[i];
        if (i == first || !same_layer(l, &m->layer[i - 1])) {
            memset(&one, 0, sizeof one);
            layer_cost(m, l, ng, k, &tpl, &cpl, s, tp, &one);
            if (s->recompute == RECOMPUTE_FULL) {
                /* the layer being recomputed holds its full activations */
                double a = layer_act_bytes(m, l, s, tp, RECOMPUTE_NONE);
                if (a > max_layer_act)
                    max_layer_act = a;
            }
        }
        range_cost_add_work(out, &one);
        if (l->moe && m->moe.experts > 0) {
            /* routed experts sharded over ep (not over tp), the rest over tp;
             * the all-to-all's send and receive buffers of the layer at work */
            double e = tf_layer_expert_params(m, i);
            double a2a = 2.0 * tf_moe_dispatch_bytes(m, l, tokens, tp);
            out->params += (tf_layer_params(m, i) - e) / tp + e / ep;
            out->expert_params += e / ep;
            if (a2a > a2a_buf)
                a2a_buf = a2a;
        } else {
            out->params += tf_layer_params(m, i) / tp;
        }
    }
    out->act_peak_extra_bytes = max_layer_act + a2a_buf;
    if (first_stage) {
        double emb = compute_memory_s(gpu, k, tokens * m->hidden * 2.0 * 2.0, 1);
        out->fwd_s += emb;
        out->bwd_s += 2.0 * emb;
        out->compute_s += 3.0 * emb;
        out->params += model_embedding_params(m) / tp;
        out->n_tensors += 1;
    }
    if (last_stage) {
        peak_format fmt = precision_peak(m->prec);
        tf_gemm lg = {tokens, (double)m->vocab / tp, m->hidden, 1};
        /* the output GEMM runs in 16 bits even in FP8 recipes */
        double gemm = compute_gemms_s(gpu, k, fmt == PEAK_FP8 || fmt == PEAK_FP4 ? PEAK_BF16 : fmt,
                                      2, &lg, 1);
        /* cross-entropy over fp32 logits: about three passes of 4 bytes */
        double ce = compute_memory_s(gpu, k, 12.0 * tokens * m->vocab / tp, 3);
        out->fwd_s += gemm + ce;
        out->bwd_s += 2.0 * gemm + ce;
        out->compute_s += 3.0 * gemm + 2.0 * ce;
        if (!m->tied_embeddings || !first_stage)
            out->params += (double)m->vocab * m->hidden / tp;
        out->n_tensors += 1;
        /* fp32 logits of one micro-batch */
        out->act_peak_extra_bytes += 4.0 * tokens * m->vocab / tp;
    }
}

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

double cost_boundary_p2p_s(const model *m, const cluster *c, const cost_params *p,
                           const strategy *s, int i)
{
    int pp = s->pp > 0 ? s->pp : 1, cp = s->cp > 0 ? s->cp : 1, dp = s->dp > 0 ? s->dp : 1;
    int g, gn, tp;
    const node_group *ng;
    const gen_constants *k;
    double bytes, bw, lat;
    if (i < 0 || i >= pp || i >= STRATEGY_MAX_STAGES || c->n_groups < 1)
        return 0;
    g = s->stage[i].group >= 0 && s->stage[i].group < c->n_groups ? s->stage[i].group : 0;
    gn = s->stage[(i + 1) % pp].group;
    if (gn < 0 || gn >= c->n_groups)
        gn = g;
    tp = s->stage[i].tp > 0 ? s->stage[i].tp : (s->tp > 0 ? s->tp : 1);
    ng = &c->group[g];
    k = &p->gen[ng->gpu.gen];
    bytes = (double)s->mbs * s->seq_len / cp * m->hidden *
            (m->prec == PREC_FP32 ? 4.0 : 2.0) / tp;
    if (gn == g && (double)tp * cp * dp * pp <= comm_nvlink_domain(ng)) {
        bw = ng->intra_bytes_per_s * (k->intra_eff > 0 ? k->intra_eff : 1.0);
        lat = ng->intra_latency_s;
    } else {
        cluster_link_between(c, g, gn, &bw, &lat);
        bw *= k->inter_eff > 0 ? k->inter_eff : 1.0;   /* unset (0): the link rate */
    }
    return comm_p2p_s(bw, lat, bytes);
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
                fc[i * v + j] = cap_time(part.fwd_s);
                bc[i * v + j] = cap_time(part.bwd_s);
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
            double bucket = dense < dp_bucket_params(dp) ? dense : dp_bucket_params(dp);
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
                grad_exp[i] = last_grad + overlapped(rest, r->bwd_s, k);
            } else {
                grad_exp[i] = t_grad;
            }
            if (s->overlap_param_gather && t_param > 0)
                t_param = first_param + overlapped(t_param - first_param, r->fwd_s, k);
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

        r->fwd_s = cap_time(r->fwd_s);
        r->bwd_s = cap_time(r->bwd_s);
        r->compute_s = cap_time(r->compute_s);
        r->recompute_s = cap_time(r->recompute_s);
        r->tp_comm_s = cap_time(r->tp_comm_s);
        grad_exp[i] = cap_time(grad_exp[i]);
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
                fc[i * v + j] = cap_time(fc[i * v + j] + (fwd[i] - sf) / v);
                bc[i * v + j] = cap_time(bc[i * v + j] + (bwd[i] - sbw) / v);
            }
        }
        out->stage_fwd_s[i] = r->fwd_s;
        out->stage_bwd_s[i] = r->bwd_s;

        /* p2p to the next rank */
        p2p[i] = i < pp - 1 || (v > 1 && pp > 1) ? cap_time(cost_boundary_p2p_s(m, c, p, s, i))
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
    out->step_time_s = cap_time(done + cap_time(opt) + cap_time(param_exp) + overhead);
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
        t->compute_s = cap_time(t->compute_s);
        t->recompute_s = cap_time(t->recompute_s);
        t->tp_comm_s = cap_time(t->tp_comm_s);
        t->ep_comm_s = cap_time(t->ep_comm_s);
        t->pp_comm_s = cap_time(t->pp_comm_s);
        t->bubble_s = cap_time(t->bubble_s);
        t->dp_comm_s = cap_time(t->dp_comm_s);
        t->optimizer_s = cap_time(t->optimizer_s);
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
