/* layer_cost.c: what decoder layers cost on one GPU for one micro-batch --
 * the building block of a stage (schedule/evaluate.c composes stages into a
 * step; the partitioners sum per-layer ranges) -- the p2p time across a
 * pipeline boundary, the default constants and the unfitted ones (where
 * cross-validation starts).
 *
 * Per layer on a GPU of its stage's node group, with the stage's tp:
 *   forward = GEMMs + flash attention + element-wise kernels (compute.c)
 *     + the TP/SP collectives (comm.c; hidden behind the GEMMs with
 *     tp_comm_overlap, cost_overlapped); the embedding on the first stage,
 *     the output layer, logits and loss on the last;
 *   (the attention forward at its exponentials' pace where the SFUs bind,
 *   compute_attention_exp_factor: the stack's fused tensor-peak kernels only);
 *   backward = 2 x the forward's GEMMs (flash attention: ATTN_BWD_RATIO x
 *     the forward at the tensor cores' pace -- its five matmuls carry 10 hd
 *     FLOPs per exponential; a windowed layer's FP8 attention over every
 *     causal key, attention_bwd_s) +
 *     the same TP traffic + the re-forward of recomputation (full:
 *     everything; selective: core attention);
 *   MoE layers (expert parallelism ep, expert tensor parallelism etp): the
 *     routed experts' grouped GEMMs at their tokens per expert
 *     (tf_layer_gemms_ep), dispatch and combine all-to-alls over ep ranks
 *     etp apart in the forward and again in the backward (comm.c, exposed),
 *     the alltoall dispatcher's sort of the received copies by local expert
 *     and back (moe_sort_chunks_s), the eager clamp and bias passes around
 *     the experts outside TE's fused grouped MLP (moe_eager_glu_bytes);
 *     with etp > 1 the dispatcher's all-gather of the routed copies over the
 *     etp consecutive ranks before the experts and the reduce-scatter of
 *     their partial outputs after them (Megatron-Core core_v0.15.0
 *     moe/token_dispatcher.py MoEAlltoAllTokenDispatcher
 *     dispatch_postprocess / combine_preprocess, over pg_collection.expt_tp;
 *     the backward runs the reverse pair), the gathered copies kept for the
 *     experts' weight gradients; expert weights / (ep etp) per GPU
 *     (range_cost.expert_params: their states shard over the
 *     expert-data-parallel group, memory.c); the all-to-all send and receive
 *     buffers (and with etp the partial outputs before their reduce-scatter)
 *     are transient memory; each MoE
 *     layer pays moe_host_s in its forward and twice in its backward (the
 *     dispatcher's device-to-host sync leaves the layer's launches on the
 *     critical path; MOE_HOST_GRAPHED_S under the recipes' TE graphs of the
 *     router and preprocessing with the flex dispatcher; under the
 *     all-to-all overlap only what exceeds the other pass's GPU work,
 *     moe_host_paced); on a stage spanning GPU types, each EP group's
 *     all-to-all over the groups and links it spans (ep_mixed_a2a_s);
 *   memory: parameters held, activations kept for the backward (Korthikanti
 *     et al. 2022 with flash attention, corrected for FP8 recipes) and the
 *     transient working set;
 *   p2p between ranks: b s h / t (/ t again with SP) 16-bit elements over
 *     the link between the two ranks' node groups (NVLink when the two
 *     stages share an NVLink domain: boundary_in_domain).
 * Identical consecutive layers are costed once.  Sources:
 * ../shared/reference/cost-model.md.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cost/comm.h"
#include "cost/compute.h"
#include "cost/layer_cost.h"
#include "cost/memory.h"
#include "model/knobs.h"
#include "model/transformer.h"

#define GIB (1073741824.0)

double cost_cap_time(double t)
{
    return isfinite(t) && t < COST_TIME_CAP_S ? (t > 0 ? t : 0) : COST_TIME_CAP_S;
}

/* Defaults fitted (round 4: Nelder-Mead on dense MAPE + 0.3 dense max
 * error + 0.5 x the same for FP8, each constant held to a physically
 * plausible range) to the 53 dense 16-bit runs of
 * ../shared/validation/published-runs.json, FP8 checked on its 24
 * predictable runs: dense MAPE 7.3%, max 21.4% (was 9.6% / 24.2% with one
 * global overhead); FP8 8.9% / 25.8% (was 9.7% / 26.7%).
 * Round 5 (software stacks, inputs/stack.c): each run is predicted on the
 * stack its source ran (fit/run_stacks.c), searching only that stack's
 * knobs, and what the 2020-2022 software paid moved out of the Volta and
 * Ampere rows into the stacks' constants; refitted by coordinate descent
 * on the same objective (the runs on Hopper and later are on megatron-core
 * and unchanged): dense MAPE 6.6%, max 20.6%; FP8 and MoE unchanged.
 *   Hardware, per generation (a current stack's software):
 *   Volta: gemm 0.85 (round 7, below); attn_eff = the unfused kernels'
 *     (no flash-attention kernel for sm70).
 *   Ampere: gemm 0.72 (0.732 since round 6; 0.678 with the 2020 software
 *     folded in), attn
 *     0.55 = FlashAttention-2's forward+backward on A100 (Dao 2023, arXiv
 *     2307.08691: ~50-73% of the 312 TFLOP/s peak, causal, head dim 128;
 *     no corpus run has flash attention on A100, so it is not fitted),
 *     inter 0.50 (SC21's 1,000-2,000-GPU jobs on a shared fabric).
 *   Hopper (9 Megatron-Core r0.8.0 bf16 runs; the 14 H100 FP8 runs at
 *     half weight share its attention, links and overhead, and Blackwell's
 *     10 FP8 runs use its copy): gemm 0.658, attn 0.453 (flash
 *     attention, cuDNN/FA2 era: ~450 of 989 TFLOP/s), inter 0.729;
 *     fp8_gemm_eff 0.725 from the FP8 runs (round 6: gemm 0.684, attn
 *     0.445, fp8_gemm_eff 0.702).
 *   overlap_exposed 0.408 for all; overlap_exposed_net 0.1 for all (a
 *     collective over a group spanning nodes, NIC-bound: fitted on a grid
 *     over the Hopper rows, the Megatron-Core r0.8.0 weak scaling's DP
 *     reduce the evidence).  Round 6 (2026-11, with it): planner
 *     calibrate (prior 1) of ampere/hopper gemm_eff, hopper attn_eff and
 *     fp8_gemm_eff, and Blackwell's and Blackwell Ultra's own attn_eff and
 *     fp8_gemm_eff (the rest Hopper's: same links, HBM, launches, host),
 *     on the dense 16-bit and FP8 runs: dense 6.9% -> 6.4%, FP8 8.6% ->
 *     8.5% (docs/cost-model.md, "Constants").
 *   step_overhead_s 0.066 s for every
 *     generation: the host time per step of a current stack (data loader,
 *     logging, Python between the step's phases).
 *   Software, per stack (cost_params.stack[]):
 *   attn_eff 0.19 for the unfused stacks (Megatron-LM 2020-2022,
 *     Megatron-DeepSpeed: baddbmm + fused scale-mask-softmax + dropout +
 *     bmm over the s x s scores), one value for the one kernel sequence;
 *   step_overhead_s: none of its own (stack.c); until 2026-11-25
 *     megatron-lm-2021's was 0.066 s -- once the search no longer hands
 *     SC21's runs overlap, SP and a distributed optimizer, they need no
 *     more host time than a current stack; megatron-lm-2022 and deepspeed
 *     took 2021's values (one source each: not fitted on their own);
 *     megatron-lm-2020's 0.25 s until round 7.
 * Round 7 (2026-11-25): the Megatron-LM README's 2020 runs are costed
 * with the full recompute they ran (fit/run_stacks.c); the search had
 * chosen none, and the 0.25 s of host time and Volta's gemm_eff 0.594
 * absorbed it (A100 rows +7..+14%, V100 -10..-21%).  With it,
 * calibrate (no prior) on the 53 dense 16-bit runs puts the 2020 stack's
 * host time at 0.067 s, a current stack's (so it has none of its own),
 * and Volta's gemm_eff at 0.895 at the catalog's 125 TFLOP/s; taken as
 * 0.85, the top of its plausible range (params.h; the DGX-2H's 450 W
 * V100s peak at 130, the Megatron v1.0 blog's 62.4 TFLOP/s being 48%,
 * which 0.85 x 125 / 130 = 0.82 covers).  Dense MAPE 6.4% -> 5.1%,
 * max 20.5% -> 20.3%; FP8 and MoE unchanged.
 * Blackwell's fp8_gemm_eff 0.741 -> 0.736 (2026-11-25) once its per-tensor
 * FP8 casts write no transpose (compute_fp8_cast_bytes): planner calibrate
 * --params blackwell.fp8_gemm_eff (prior 1, the dense 16-bit and FP8 runs),
 * as round 6 fitted it.
 * The FP8 GEMM efficiencies refitted (2026-11-25) once the recipes' residual
 * dropout 0 keeps no masks (transformer.c tf_dropout_mask_bytes: the GB200
 * Llama 3.1 405B rows fit their recipe's distributed optimizer without
 * recompute, where ZeRO-3 or full recompute had made them 2-12% slow and
 * held Blackwell's efficiency up) and the NVFP4 405B recipes run without
 * the TP overlap (fit/run_stacks.c): planner calibrate --params
 * hopper.fp8_gemm_eff,blackwell.fp8_gemm_eff,blackwell-ultra.fp8_gemm_eff
 * (prior 1, the dense 16-bit and FP8 runs): 0.702 -> 0.672, 0.736 ->
 * 0.645, 0.797 -> 0.803.  FP8 MAPE 7.5% -> 6.4%, max 19.6% -> 16.1%
 * (the same refit without the two mechanisms: 7.2%, 18.8%).
 * Blackwell's two refitted again (2026-11-25) once MXFP8 GEMMs run at
 * 0.951 of the per-tensor rate there (compute.c MX_GEMM_RATE): planner
 * calibrate --params blackwell.fp8_gemm_eff,blackwell-ultra.fp8_gemm_eff
 * (prior 1, the dense 16-bit and FP8 runs): 0.645 -> 0.632, 0.803 ->
 * 0.816.  FP8 MAPE 6.35% -> 5.78%, max 16.1% -> 17.2%.
 * intra_eff is not fitted: nccl-tests' bus bandwidth over the NVLink rate
 * (V100 ~130/150, A100 235/300, H100 368/450); hbm_eff and kernel_s are
 * round 2's.  Generations without runs copy the nearest measured one
 * (Turing: Volta, Ada: Ampere, CDNA: Hopper; Blackwell and Blackwell
 * Ultra: Hopper's but for their own attn_eff and fp8_gemm_eff, round 6) -- calibrate
 * them with `planner calibrate`. */
/* moe_host_s (round MoE 2): the host-paced time of one MoE layer's forward
 * per micro-batch (backward 2x), fitted on a grid to the 32 predictable MoE
 * runs (MAPE 67.0% -> 27.6%, max 210.6% -> 91.7%); the same for every
 * generation -- a property of the host and the software stack, and the
 * corpus has no MoE run before Hopper.  docs/validation.md has the evidence
 * (Qwen3-30B-A3B at mbs 1: ~9 ms per layer on H100 and B200 alike).
 * Round MoE 3: refitted on the grid (0.5 .. 2.25 ms) once the 39 rows run
 * on their models' published configs (validate's model library: gated
 * experts, head_dim 128/64, MLA, gpt-oss's windows, DeepSeek-V3's dense
 * layers and MTP): 2.25 ms had absorbed the work the rows' GeLU shapes
 * left out.  MAPE / max: 0.5 ms 28.3 / 85.7, 1.0 26.3 / 60.3, 1.25 25.9 /
 * 50.0, 1.5 26.2 / 47.9, 1.75 26.4 / 49.8, 2.25 29.2 / 54.3.
 * Round MoE 9: refitted on the same grid once the recipe facts and the
 * TE graphs' own host time (MOE_HOST_GRAPHED_S, a sourced value) had left
 * it to 17 of the 39 rows (10 run the full-iteration graph, 11 the TE
 * graphs with the flex dispatcher, 1 hides it under the all-to-all
 * overlap); MAPE / max over the 39 rows: 1.25 ms
 * 13.8 / 74.9, 1.5 12.4 / 68.1, 1.75 11.7 / 61.7, 2.0 12.2 / 55.9 (1.6,
 * 1.7, 1.8, 1.9 ms: 11.9, 11.7, 11.7, 11.9).  Leave one release out
 * refits it per fold from cost_params_unfitted's 2.5 ms, so its figure
 * does not depend on this value. */
#define MOE_HOST_S 1.75e-3
#define NET_EXPOSED 0.1
#define HOST_S 0.066                /* a current stack's host time per step */
#define UNFUSED_ATTN_EFF 0.19       /* Megatron's unfused attention (2020-2022) */
void cost_params_default(cost_params *p)
{
    /* gemm, attn, hbm, intra, inter, kernel_s, fp8_gemm, overlap_exposed,
     * step_overhead_s, moe_host_s, overlap_exposed_net */
    static const gen_constants volta = {0.85, UNFUSED_ATTN_EFF, 0.748, 0.87, 0.80, 6.3e-6, 0.65,
                                        0.408, HOST_S, MOE_HOST_S, NET_EXPOSED};
    static const gen_constants ampere = {0.732, 0.55, 0.748, 0.78, 0.50, 6.3e-6, 0.65, 0.408,
                                         HOST_S, MOE_HOST_S, NET_EXPOSED};
    static const gen_constants hopper = {0.684, 0.445, 0.748, 0.82, 0.729, 6.3e-6, 0.672, 0.408,
                                         HOST_S, MOE_HOST_S, NET_EXPOSED};
    /* Blackwell and Blackwell Ultra: Hopper's links, HBM, launch, overlap
     * and host constants (the same NCCL, HBM3e controllers and host
     * software), their own tensor-core and attention efficiencies */
    gen_constants blackwell = hopper, blackwell_ultra = hopper;
    int g;
    memset(p, 0, sizeof *p);
    for (g = 0; g < GEN_COUNT; g++)
        p->gen[g] = hopper;
    p->gen[GEN_VOLTA] = volta;
    p->gen[GEN_TURING] = volta;
    p->gen[GEN_AMPERE] = ampere;
    p->gen[GEN_ADA] = ampere;
    blackwell.attn_eff = 0.430;
    blackwell.fp8_gemm_eff = 0.632;
    blackwell_ultra.attn_eff = 0.470;
    blackwell_ultra.fp8_gemm_eff = 0.816;
    p->gen[GEN_BLACKWELL] = blackwell;
    p->gen[GEN_BLACKWELL_ULTRA] = blackwell_ultra;
    for (g = 0; g < STACK_COUNT; g++)
        p->stack[g] = (stack_constants){UNFUSED_ATTN_EFF, HOST_S};
    p->reserve_bytes = 1.0 * GIB;
    p->frag_fraction = 0.10;
}

/* The unfitted constants: where `planner crossval` starts each fold's fit,
 * the centre its prior pulls toward and what a fold falls back to (a
 * refused fit).  The defaults above were
 * fitted on the whole public corpus, so a fold that started from them
 * would have seen the source it leaves out (docs/validation.md, "Leave one
 * source out").  None of these values comes from the corpus; one value per
 * constant for every generation and every stack:
 *   gemm_eff 0.675, hbm_eff 0.75, fp8_gemm_eff 0.55, overlap_exposed
 *     0.275, overlap_exposed_net 0.26, moe_host_s 2.5 ms, step_overhead_s
 *     0.05 s (a stack's own: 0.5 s), a stack's unfused attn_eff 0.275: the
 *     centres of their plausible ranges (params.h), for want of a
 *     published measurement of the quantity;
 *   attn_eff 0.5: FlashAttention-2's forward + backward reach 50-73% of
 *     A100's peak (Dao 2023, arXiv 2307.08691), the low end;
 *   intra_eff, inter_eff 0.8: NCCL's bus bandwidth is ~80% of the one-way
 *     link rate (nccl-tests; ../shared/reference/cost-model.md,
 *     "Communication");
 *   kernel_s 8.4 us: NCCL's ring base latency (same section).
 * The memory constants (reserve_bytes, frag_fraction) are not fitted:
 * the defaults'. */
void cost_params_unfitted(cost_params *p)
{
    /* gemm, attn, hbm, intra, inter, kernel_s, fp8_gemm, overlap_exposed,
     * step_overhead_s, moe_host_s, overlap_exposed_net */
    static const gen_constants start = {0.675, 0.5, 0.75, 0.8, 0.8, 8.4e-6, 0.55, 0.275,
                                        0.05, 2.5e-3, 0.26};
    int g;
    cost_params_default(p);
    for (g = 0; g < GEN_COUNT; g++)
        p->gen[g] = start;
    for (g = 0; g < STACK_COUNT; g++)
        p->stack[g] = (stack_constants){0.275, 0.5};
}

/* PyTorch SDPA's FlashAttention-2 against the fused attention the
 * generation's attn_eff stands for (Transformer Engine's cuDNN attention),
 * forward and backward alike.  PyTorch's SDPA tries flash_attention first
 * (sdp_utils.cpp priority_order; cuDNN attention opt-in since 2.5.1) and
 * torchtitan's context parallel allows only the flash and efficient
 * backends (9dec370 utils.py get_train_context); those flash kernels are
 * FlashAttention-2's, built for sm80 and run as they are on sm90 and sm100:
 * warp-level mma.sync (aten/src/ATen/native/transformers/cuda/flash_attn/
 * kernel_traits.h: MMA_Atom<SM80_16x8x16_F32BF16BF16F32_TN> for every
 * __CUDA_ARCH__ >= 800), no wgmma or tcgen05.  Transformer Engine on sm90+
 * prefers FusedAttention (dot_product_attention/utils.py
 * get_attention_backend: "Disabling FlashAttention to give FusedAttention
 * preference on Hopper+ for performance reasons").
 *   Hopper: Shah et al. 2024, FlashAttention-3 (arXiv 2407.08608) Figs.
 *     5-6, H100 SXM5 bf16, head dim 128, 16k: FlashAttention-2 / cuDNN
 *     forward 370 / 595 (causal 335 / 539), backward 322 / 516 TFLOP/s:
 *     0.62 each.
 *   Blackwell, Blackwell Ultra: NVIDIA/cudnn-frontend v1.15.0 (0b1577c)
 *     benchmark/sdpa_benchmark_training artifacts (NGC PyTorch 25.09: torch
 *     2.9 SDPA FLASH_ATTENTION against cuDNN 9.13.1, bf16, Llama 3.1
 *     405B's attention: 128 query heads, 8 K/V heads, head dim 128,
 *     causal, b 1, s 16,384), forward + backward: B200 (6.602 + 20.460) /
 *     (22.297 + 68.724) ms = 0.30 (forward 0.296, backward 0.298); GB300
 *     (5.167 + 17.345) / (20.421 + 62.664) = 0.27.  Its rate, ~400 TFLOP/s,
 *     is about FlashAttention-2's on H100: the sm80 instructions do not
 *     reach Blackwell's tensor throughput (so the softmax's exponentials do
 *     not bound it either: layer_cost's exponential factor).
 *   Ampere: attn_eff is FlashAttention-2's own (1); others unmeasured (1). */
static double sdpa_fa2_factor(gpu_generation gen)
{
    switch (gen) {
    case GEN_HOPPER: return 0.62;
    case GEN_BLACKWELL: return 0.30;
    case GEN_BLACKWELL_ULTRA: return 0.27;
    case GEN_VOLTA: case GEN_TURING: case GEN_AMPERE: case GEN_ADA: case GEN_CDNA2:
    case GEN_CDNA3: case GEN_COUNT: break;
    }
    return 1.0;
}

void cost_constants(gen_constants *out, const cost_params *p, int stack, gpu_generation gen)
{
    const stack_spec *st = stack_get(stack);
    const stack_constants *sc = &p->stack[st->id];
    *out = p->gen[(unsigned)gen < GEN_COUNT ? gen : GEN_HOPPER];
    if (st->attention == STACK_ATTN_UNFUSED)
        out->attn_eff = sc->attn_eff;
    if (st->attention == STACK_ATTN_SDPA_FA2)
        out->attn_eff *= sdpa_fa2_factor(gen);
    if (st->own_host_time)
        out->step_overhead_s = sc->step_overhead_s;
}

double model_flops_per_step(const model *m, int gbs, int seq_len)
{
    double per_token = tf_logits_flops_per_token(m), layer = 0;
    int i;
    for (i = 0; i < m->layers; i++) {
        /* a layer like the one before costs the same: not found again */
        if (i == 0 || !layer_spec_same(&m->layer[i], &m->layer[i - 1]))
            layer = tf_layer_flops_per_token(m, &m->layer[i], seq_len);
        per_token += layer;
    }
    return 3.0 * per_token * (double)gbs * seq_len;
}

/* Flash attention's backward re-computes the scores and runs five matmuls
 * (S, dP, dV, dQ, dK) to the forward's two (Dao 2023). */
#define ATTN_BWD_RATIO 2.5

double cost_attention_bwd_ratio(void)
{
    return ATTN_BWD_RATIO;
}

/* Core attention's backward, given its forward attn_fwd: ATTN_BWD_RATIO x
 * the forward over the keys the forward scores, but with the attention in
 * FP8 (model.fp8_attention, in an FP8-family recipe) a sliding-window
 * layer's backward over every causal key.  cuDNN's SDPA skips the tiles
 * outside the window in its 16-bit forward and backward and in its FP8
 * forward, not in its FP8 backward: NVIDIA/cudnn-frontend
 * benchmark/sdpa_benchmark_training/results/gpt_oss/gb200 and gb300 CSVs
 * (cuDNN 9.22, gpt-oss's head_dim 64 and 128-token window, causal, b 2 x
 * 128 heads) time the bf16 backward at 0.44, 0.86, 1.71, 3.45 ms for s =
 * 4k, 8k, 16k, 32k on GB300 (with s), the MXFP8 one at 1.87, 6.65, 25.0,
 * 96.9 ms (with s^2; FP8 1.48 .. 74.8), the FP8 and MXFP8 forwards with s
 * (0.17 .. 1.35 ms).  Transformer Engine runs FP8 attention with
 * gpt-oss's learnable sinks and windows in cuDNN on sm100 from cuDNN 9.21
 * (NVIDIA/TransformerEngine v2.15-v2.18 dot_product_attention/utils.py
 * get_attention_backend; v2.14 and earlier refused FP8 with either).
 * Above head_dim 64 the FP8 kernel's time over the 16-bit one's at the
 * nearer published shape scales both passes (cost_fp8_attention_ratio);
 * at 64 the windowed forward is not rescaled (a few tenths of a per cent
 * of a gpt-oss layer).  At head_dim 64 (gpt-oss, with its learnable sinks) the FP8
 * backward is slower for the same FLOPs: at s 4096, b 2, the gpt_oss
 * shape's every-tile backward (128 heads x 64) against llama3.1's causal
 * one (64 heads x 128, the same FLOPs), MXFP8 2.080 / 1.305 ms on GB200
 * and 1.871 / 1.203 on GB300 (1.59x, 1.56x), per-tensor FP8 1.731 / 1.167
 * and 1.480 / 0.985 (1.48x, 1.50x), while llama3.1's MXFP8 backward is
 * within 9% of its bf16 one (1.305 / 1.198 ms): FP8_SDPA_BWD_D64 scales
 * the 16-bit-rate backward of an FP8 attention layer at head_dim <= 64
 * (64 is the one measured) on Blackwell and Blackwell Ultra, the GPUs the
 * benchmark ran; elsewhere (Hopper's FP8 attention) no measurement: none. */
#define FP8_SDPA_BWD_D64_MX 1.57
#define FP8_SDPA_BWD_D64 1.49

/* cuDNN's FP8 attention against its 16-bit kernel above head_dim 64, as
 * cuDNN's published SDPA benchmark times it: NVIDIA/cudnn-frontend
 * benchmark/sdpa_benchmark_training/results/{dsv3,llama3.1}/{gb200,gb300}
 * CSVs (cuDNN 9.22, 2026-04-24; causal "top_left", b 2, s 4096 -- the
 * sequence of every corpus row that runs FP8 attention --, the
 * non-deterministic backward), milliseconds, bf16 / per-tensor FP8 / MXFP8:
 *   dsv3, multi-latent attention (128 heads, qk 192, v 128): GB200 forward
 *     0.977 / 0.656 / 0.714, backward 3.383 / 2.112 / 2.620; GB300 0.864 /
 *     0.493 / 0.546, 3.127 / 1.803 / 2.348;
 *   llama3.1 (64 query heads, 8 K/V heads, head_dim 128): GB200 0.391 /
 *     0.305 / 0.326, 1.198 / 1.167 / 1.305; GB300 0.323 / 0.217 / 0.242,
 *     1.101 / 0.985 / 1.203.
 * So FP8 pays at MLA's shape in both passes (MXFP8: 0.63 / 0.75 of the
 * bf16 time on GB300) and at head_dim 128 only in the forward (its MXFP8
 * backward is 9% slower).  An FP8 attention layer (model.fp8_attention in
 * an FP8-family recipe) costs the 16-bit time times the FP8 kernel's over
 * the bf16 one's of the nearer shape: head_dim above 128 dsv3's, 65 .. 128
 * llama3.1's (64 and below: FP8_SDPA_BWD_D64, the backward only); per-tensor
 * FP8 (and NVFP4's FP8 attention) the fp8 column, MXFP8 the mxfp8 one;
 * Blackwell from GB200, Blackwell Ultra from GB300, no measurement
 * elsewhere (1). */
typedef struct fp8_sdpa_times {
    double fwd[3], bwd[3];   /* bf16, per-tensor FP8, MXFP8 */
} fp8_sdpa_times;
static const fp8_sdpa_times k_sdpa_mla[2] = {
    {{0.977, 0.656, 0.714}, {3.383, 2.112, 2.620}},   /* GB200 */
    {{0.864, 0.493, 0.546}, {3.127, 1.803, 2.348}},   /* GB300 */
};
static const fp8_sdpa_times k_sdpa_d128[2] = {
    {{0.391, 0.305, 0.326}, {1.198, 1.167, 1.305}},   /* GB200 */
    {{0.323, 0.217, 0.242}, {1.101, 0.985, 1.203}},   /* GB300 */
};

double cost_fp8_attention_ratio(const model *m, const layer_spec *l, const gpu_spec *gpu,
                                bool backward)
{
    peak_format fmt = precision_peak(m->prec);
    const fp8_sdpa_times *t;
    int g, col = m->prec == PREC_MXFP8 ? 2 : 1;
    if (!m->fp8_attention || (fmt != PEAK_FP8 && fmt != PEAK_FP4) || l->head_dim <= 64)
        return 1.0;
    if (gpu->gen == GEN_BLACKWELL)
        g = 0;
    else if (gpu->gen == GEN_BLACKWELL_ULTRA)
        g = 1;
    else
        return 1.0;
    t = l->head_dim > 128 ? &k_sdpa_mla[g] : &k_sdpa_d128[g];
    return backward ? t->bwd[col] / t->bwd[0] : t->fwd[col] / t->fwd[0];
}
static double attention_bwd_s(const model *m, const layer_spec *l, const strategy *s,
                              const gpu_spec *gpu, const gen_constants *k, peak_format fmt,
                              int cp, int tp, double attn_fwd)
{
    layer_spec causal;
    double d64;
    if (!m->fp8_attention || (fmt != PEAK_FP8 && fmt != PEAK_FP4))
        return ATTN_BWD_RATIO * attn_fwd;
    d64 = l->head_dim > 64 ? cost_fp8_attention_ratio(m, l, gpu, true)
          : gpu->gen != GEN_BLACKWELL && gpu->gen != GEN_BLACKWELL_ULTRA ? 1.0
          : m->prec == PREC_MXFP8 ? FP8_SDPA_BWD_D64_MX : FP8_SDPA_BWD_D64;
    if (l->window <= 0 || l->window >= s->seq_len)
        return d64 * ATTN_BWD_RATIO * attn_fwd;
    causal = *l;
    causal.window = 0;
    return d64 * ATTN_BWD_RATIO *
           compute_attention_s(gpu, k, fmt,
                               tf_attention_flops(m, &causal, s->mbs, s->seq_len, cp, tp));
}

/* The stack's data-parallel bucket (stack_spec.ddp_bucket_bytes at zero 0,
 * dp_bucket_params), else Megatron's DDP bucket: max(40M, 1M x dp)
 * parameters (distributed.py); the last bucket's reduce cannot start before
 * the backward ends, the first bucket's gather must finish before the
 * forward starts. */
double cost_dp_bucket_params(const stack_spec *st, int dp, int zero, double grad_bytes)
{
    double b = 1e6 * dp;
    if (st != NULL && zero == 0 && st->ddp_bucket_bytes > 0 && grad_bytes > 0)
        return st->ddp_bucket_bytes / grad_bytes;
    if (st != NULL && st->dp_bucket_params > 0)
        return st->dp_bucket_params;
    return b > 4e7 ? b : 4e7;
}

/* Exposed part of a collective of `t` seconds overlapped with `window`
 * seconds of compute: what does not fit shows in full, what fits slows the
 * compute by overlap_exposed of itself (SMs and HBM taken by the
 * communication kernels). */
double cost_overlapped(double t, double window, const gen_constants *k)
{
    return cost_overlapped_on(t, window, k, false);
}

double cost_overlapped_on(double t, double window, const gen_constants *k, bool network)
{
    double hidden = t < window ? t : window;
    return (t - hidden) + (network ? k->overlap_exposed_net : k->overlap_exposed) * hidden;
}

/* HBM bytes of the eager passes Megatron-Core's TEGroupedMLP runs around
 * the routed experts' grouped GEMMs, per micro-batch on one GPU, forward
 * (backward false) or backward, and their kernels (*kernels), outside
 * Transformer Engine's fused grouped MLP (model.fused_grouped_mlp).
 * moe/experts.py, core_v0.15.0 and every release the corpus's
 * Megatron-Bridge containers pin (v0.2.0-v0.6.0's 3rdparty/Megatron-LM):
 *   - a clamped GLU (model.glu_limit; activation_func_clamp_value):
 *     fusions/fused_bias_geglu.py weighted_bias_quick_geglu_impl (and the
 *     unfused glu()) chunks fc1's output, clamps each half and cats them
 *     before the fused activation: two clamps reading and writing f
 *     16-bit values a routed copy and a cat of 2f, 16 f bytes; backward,
 *     each clamp's masked gradient (reads the gradient and its saved input,
 *     writes f) and the chunk's cat of the two, 20 f;
 *   - expert biases (MODEL_BIAS_MLP; add_bias_linear): fc1's is added in
 *     TE GroupedLinear's GEMM (skip_bias_add False), fc2's returned apart
 *     (skip_bias_add True) and added by _apply_bias, a loop over the local
 *     experts (split; t + b * p, the bias weighted by the routing
 *     probability; cat): 12 h bytes a copy (the product written, the sum
 *     reading both, the cat); backward, the bias's and the probability's
 *     gradients (each a product of the output gradient, written and
 *     reduced: 12 h) and split's cat of the per-expert gradients (4 h).
 * Each routed copy of the tp x ep ranks' tokens lands on one rank: tokens
 * x top-k / tp copies a rank, etp x that under expert tensor parallelism.
 * Kernels: three for the clamp (forward and backward); one cat and two
 * (forward) or four (backward) per local expert for the bias.  Under
 * moe_act recompute the clamp's forward runs again in the backward
 * (MOE_EAGER_CLAMP_RERUN). */
typedef enum moe_eager_pass {
    MOE_EAGER_FWD,
    MOE_EAGER_BWD,
    MOE_EAGER_CLAMP_RERUN   /* moe_act recompute: the clamp's forward again
                               (the checkpointed bias_act_func; fc2's bias
                               is added outside it) */
} moe_eager_pass;

static double moe_eager_glu_bytes(const model *m, const layer_spec *l, double tokens, int tp,
                                  int ep, int etp, moe_eager_pass pass, int *kernels)
{
    double copies, f, local;
    bool clamp = m->glu_limit > 0 && activation_gated(m->act), backward = pass == MOE_EAGER_BWD;
    bool bias = pass != MOE_EAGER_CLAMP_RERUN && (model_biases(m) & MODEL_BIAS_MLP) != 0;
    double b = 0;
    *kernels = 0;
    if (!l->moe || m->moe.experts <= 0 || m->fused_grouped_mlp)
        return 0;
    copies = tokens * m->moe.top_k / (tp > 0 ? tp : 1) * etp;
    f = (double)m->moe.expert_ffn / etp;
    local = (double)m->moe.experts / (ep > 0 ? ep : 1);
    if (clamp) {
        b += (backward ? 20.0 : 16.0) * f;
        *kernels += 3;
    }
    if (bias) {
        b += (backward ? 16.0 : 12.0) * l->hidden;
        *kernels += 1 + (int)ceil((backward ? 4.0 : 2.0) * local);
    }
    return b * copies;
}

static double moe_eager_glu_s(const model *m, const layer_spec *l, const gpu_spec *gpu,
                              const gen_constants *k, double tokens, int tp, int ep, int etp,
                              moe_eager_pass pass)
{
    int n;
    double b = moe_eager_glu_bytes(m, l, tokens, tp, ep, etp, pass, &n);
    return b > 0 ? compute_memory_s(gpu, k, b, n) : 0;
}

/* The modules selective recompute re-runs (0: Megatron's default). */
static int selective_modules(const strategy *s)
{
    return s->recompute_modules > 0 ? s->recompute_modules : RC_MOD_CORE_ATTN;
}

/* Bytes selective recompute's modules do not keep, per micro-batch on one
 * GPU, from Korthikanti et al. 2022's terms as transformer.c counts them
 * (Megatron-Core core_v0.15.0 TransformerLayer / MLP with the Transformer
 * Engine spec):
 *   core_attn: nothing (flash attention keeps no s x s term);
 *   layernorm: the norm outputs Megatron can drop -- with Transformer
 *     Engine the dense layers' norms are fused into LayerNormLinear
 *     (input_layernorm / pre_mlp_layernorm are IdentityOp, nothing to
 *     drop); an MoE layer's pre-MLP norm is separate: its output, the
 *     router / shared-expert / dispatch input, 2 s b h (/ t with SP),
 *     unless the router graphs keep it (knob_moe_norm_recomputed, model/
 *     knobs.c);
 *   mlp (dense layers; Megatron skips MoELayer): the MLP runs under a
 *     checkpoint keeping only its input (the residual, kept anyway): fc1's
 *     input 2 s b h (/ t with SP), its output 4 s b f (SwiGLU) or 2 s b f,
 *     and the activation output 2 s b f, / t;
 *   moe_act: the routed experts' activation output, 2 s b k f_e / t, and
 *     with a clamped GLU the clamped copy (tf_moe_glu_clamp_kept_bytes:
 *     CheckpointWithoutOutput keeps only fc1's output, its input);
 *   mla_up_proj (MLA layers; Megatron-Core multi_latent_attention.py,
 *     recompute_up_proj: qkv_up_proj_and_rope_apply runs under a
 *     CheckpointWithoutOutput whose outputs are discarded once core
 *     attention has consumed them, discard_output_and_register_recompute):
 *     the Q, K and V that core attention saves, 2 s b heads (2 (nope +
 *     rope) + v) / t.
 * FP8/FP4 recipes save the GEMM inputs (fc1's, the activation output) at 1
 * byte (layer_act_bytes): those terms count 1 byte there. */
static double selective_saved_bytes(const model *m, const layer_spec *l, const strategy *s,
                                    int tp)
{
    int mods = selective_modules(s);
    peak_format fmt = precision_peak(m->prec);
    double gin = fmt == PEAK_FP8 || fmt == PEAK_FP4 ? 1.0 : 2.0;
    double t = tp > 0 ? tp : 1;
    double sb = (double)s->mbs * s->seq_len / (s->cp > 0 ? s->cp : 1);
    double outside = s->sp ? t : 1.0, saved = 0;
    bool moe = l->moe && m->moe.experts > 0;
    if ((mods & RC_MOD_LAYERNORM) && moe && knob_moe_norm_recomputed(m, s))
        saved += 2.0 * sb * l->hidden / outside;
    if ((mods & RC_MOD_MLP) && !moe)
        saved += gin * sb * l->hidden / outside +
                 ((activation_gated(m->act) ? 4.0 : 2.0) + gin) * sb * l->ffn_hidden / t;
    if ((mods & RC_MOD_MOE_ACT) && moe)
        saved += (2.0 * sb * m->moe.top_k * m->moe.expert_ffn +
                  tf_moe_glu_clamp_kept_bytes(m, l, sb)) / t;
    if ((mods & RC_MOD_MLA_UP_PROJ) && m->mla.kv_lora_rank > 0)
        saved += 2.0 * sb * l->heads *
                 (2.0 * (m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim) + m->mla.v_head_dim) /
                 t;
    return saved;
}

/* The forward time selective recompute re-runs in one layer's backward:
 * core_attn the attention; layernorm an MoE layer's pre-MLP norm (2 b s h
 * read and written); mlp a dense layer's fc1 and fc2 GEMMs (the two after
 * attention's in tf_layer_gemms_ep), its activation function and its TP
 * collectives (half of the layer's forward ones, `tpf`); moe_act the routed experts'
 * activation function; mla_up_proj MLA's q and kv up-projections (gemm[1]
 * and [3] of mla_gemms with a q LoRA rank, else the q projection and the kv
 * up-projection, [0] and [2]; the RoPE's element-wise pass and, with SP,
 * the up-projections' input gather are not counted).  The MLP's GEMMs
 * follow attention's (tf_attention_gemm_count: 2, or MLA's 4-5). */
static double selective_rerun_s(const model *m, const layer_spec *l, const strategy *s,
                                const gpu_spec *gpu, const gen_constants *k, int tp,
                                const tf_gemm *g, double attn, double tpf)
{
    int mods = selective_modules(s);
    int eb = precision_bytes(m->prec);
    double t = tp > 0 ? tp : 1;
    double tokens = (double)s->mbs * s->seq_len / (s->cp > 0 ? s->cp : 1);
    bool moe = l->moe && m->moe.experts > 0;
    double rec = 0;
    if (mods & RC_MOD_CORE_ATTN)
        rec += attn;
    if ((mods & RC_MOD_LAYERNORM) && moe && knob_moe_norm_recomputed(m, s))
        rec += compute_memory_s(gpu, k, 2.0 * 2.0 * tokens * l->hidden / (s->sp ? t : 1.0), 1);
    if ((mods & RC_MOD_MLP) && !moe)
        rec += compute_gemms_s(gpu, k, m->prec, eb, g + tf_attention_gemm_count(m), 2) +
               compute_memory_s(gpu, k, tf_mlp_activation_bytes(m, tokens, l->ffn_hidden, tp), 1) +
               0.5 * tpf;
    if ((mods & RC_MOD_MOE_ACT) && moe)
        rec += compute_memory_s(gpu, k,
                                tf_mlp_activation_bytes(m, tokens * m->moe.top_k,
                                                        m->moe.expert_ffn, tp), 1) +
               moe_eager_glu_s(m, l, gpu, k, tokens, tp, s->ep, s->etp > 1 ? s->etp : 1,
                               MOE_EAGER_CLAMP_RERUN);
    if ((mods & RC_MOD_MLA_UP_PROJ) && m->mla.kv_lora_rank > 0) {
        /* q up (or q) and kv up: the 2nd and 4th of 5, the 1st and 3rd of 4 */
        int q = tf_attention_gemm_count(m) - 4;
        rec += compute_gemms_s(gpu, k, m->prec, eb, g + q, 1) +
               compute_gemms_s(gpu, k, m->prec, eb, g + q + 2, 1);
    }
    return rec;
}

/* The forward time torchtitan's op-level selective checkpointing re-runs in
 * a dense layer's backward (stack_memory.selective STACK_SEL_OP_POLICY;
 * 9dec370 parallelize_llama.py _apply_ac_to_transformer_block, "op" mode):
 * every op re-runs but those _custom_policy saves -- SDPA, the
 * reduce-scatters, and each mm whose forward count is odd (wq, wk, wv,
 * wo, w1, w3, w2 in order: wq, wv, w1 and w2 saved, as memory_op_sac_bytes
 * keeps) -- so wk, wo and w3 re-run (a GeLU MLP: wk, wo, w2): of the fused
 * GEMMs (tf_layer_gemms_ep) K's kv / (q + 2 kv) of QKV, the output
 * projection, half a gated fc1 (else fc2); every element-wise op (`elem`:
 * norms, RoPE, activation, adds, and an eager block's extra passes); the
 * SP all-gathers, half the forward's TP collectives; not the attention.
 * In an FP8 recipe each re-run Linear casts its input again (torchao's
 * Float8Linear quantizes per call): wk's and w3's the block's h-wide
 * normed inputs, wo's the q-wide attention output (w2's f-wide input for a
 * GeLU MLP), at compute_fp8_cast_bytes a element.  Megatron's selective
 * recompute re-runs the core attention instead (selective_rerun_s). */
static double op_sac_rerun_s(const model *m, const layer_spec *l, const gpu_spec *gpu,
                             const gen_constants *k, const tf_gemm *g, double elem, double tpf)
{
    peak_format fmt = precision_peak(m->prec);
    int eb = precision_bytes(m->prec);
    double q = (double)l->heads * l->head_dim, kv = (double)l->kv_heads * l->head_dim;
    bool gated = activation_gated(m->act);
    double mlp = gated ? 0.5 * compute_gemms_s(gpu, k, m->prec, eb, g + 2, 1)
                       : compute_gemms_s(gpu, k, m->prec, eb, g + 3, 1);
    double casts = 0;
    if (fmt == PEAK_FP8 || fmt == PEAK_FP4)
        casts = compute_memory_s(gpu, k, compute_fp8_cast_bytes(gpu, m->prec) * g[0].m *
                                 (g[0].k + g[1].k + (gated ? g[2].k : g[3].k)), 3);
    return kv / (q + 2.0 * kv) * compute_gemms_s(gpu, k, m->prec, eb, g, 1) +
           compute_gemms_s(gpu, k, m->prec, eb, g + 1, 1) + mlp + casts + elem + 0.5 * tpf;
}

/* An FP8/FP4 recipe's MoE layer against layer_act_bytes' dense rule, per
 * micro-batch on one GPU: the routed experts' grouped GEMMs are
 * Transformer Engine GroupedLinear (Megatron-Core core_v0.15.0
 * moe/experts.py TEGroupedMLP), whose forward quantizes each expert's
 * input (tex.split_quantize) and saves that FP8 copy, column-wise usage
 * only, for the weight gradient (te.pytorch module/grouped_linear.py
 * _GroupedLinear.forward: inputmat.update_usage(rowwise_usage=False)):
 * fc1's input, the dispatched copies, k h bytes a token not 2 k h, and
 * fc2's input, the activation output, k f_e not 2 k f_e -- but under
 * moe_act recompute fc2 saves its original 16-bit input
 * (set_save_original_input), which the checkpoint discards
 * (selective_saved_bytes already drops it whole).  The layer's pre-MLP
 * norm is no LayerNormLinear (the router and the permutation read its
 * 16-bit output, which the router's GEMM saves): of the dense rule's two
 * normed GEMM inputs in FP8 only the QKV one is, + h back.  Shared experts
 * (TE Linear: their own FP8 copy of the normed input, fc2's input in FP8)
 * are left at the dense count.  On a tp rank the routed copies are the
 * ep x tp ranks' tokens' share (tf_layer_activation_bytes' / t).  The
 * GroupedLinear copies are Transformer Engine's (stack_fp8_te): torchtitan's
 * float8 experts run torchao's grouped GEMM, which saves the 16-bit inputs
 * (inputs/stack.h), so there the routed experts keep the 16-bit count. */
static double moe_fp8_saved_delta(const model *m, const layer_spec *l, const strategy *s,
                                  const stack_spec *st, double sb, double t)
{
    double k = m->moe.top_k;
    bool act_rerun = s->recompute == RECOMPUTE_SELECTIVE &&
                     (selective_modules(s) & RC_MOD_MOE_ACT);
    double d = l->hidden * sb / (s->sp ? t : 1.0);
    if (!stack_fp8_te(st))
        return d;
    d -= k * l->hidden * sb / t;
    if (!act_rerun)
        d -= k * m->moe.expert_ffn * sb / t;
    return d;
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
 * input (16 bits), unchanged.  Selective recompute drops what its modules
 * re-run (selective_saved_bytes); on a stack with an op-level policy
 * (torchtitan's, stack_memory.selective) a dense layer keeps what the policy
 * saves instead (memory_op_sac_bytes). */
static double layer_act_bytes(const model *m, const layer_spec *l, const strategy *s, int tp,
                              recompute_mode rc, int stack)
{
    double a = tf_layer_activation_bytes(m, l, s->mbs, s->seq_len, s->cp, tp, s->sp, rc);
    peak_format fmt = precision_peak(m->prec);
    if (rc == RECOMPUTE_SELECTIVE && stack_get(stack)->memory.selective == STACK_SEL_OP_POLICY &&
        !(l->moe && m->moe.experts > 0))
        return memory_op_sac_bytes(m, l, (double)s->mbs * s->seq_len / (s->cp > 0 ? s->cp : 1),
                                   tp, s->sp);
    if (rc == RECOMPUTE_SELECTIVE)
        a -= selective_saved_bytes(m, l, s, tp);
    if (rc == RECOMPUTE_NONE ||
        (rc == RECOMPUTE_SELECTIVE && !(selective_modules(s) & RC_MOD_CORE_ATTN)))
        a += cost_cp_saved_bytes(l, s, tp);   /* core attention's saved tensors kept */
    if (rc != RECOMPUTE_FULL && s->etp > 1 && l->moe && m->moe.experts > 0)
        /* the routed experts' fc1 input is the etp ranks' copies gathered
         * (token_dispatcher.py dispatch_postprocess): etp x this rank's */
        a += (s->etp - 1) * tf_moe_dispatch_bytes(m, l, (double)s->mbs * s->seq_len /
                                                  (s->cp > 0 ? s->cp : 1), tp);
    if ((fmt == PEAK_FP8 || fmt == PEAK_FP4) && rc != RECOMPUTE_FULL) {
        double t = tp > 0 ? tp : 1;
        double sb = (double)s->mbs * s->seq_len / (s->cp > 0 ? s->cp : 1);
        double qw = (double)l->heads * l->head_dim;
        double f = l->moe && m->moe.experts > 0 ? 0 : l->ffn_hidden;   /* dense MLPs */
        double d = -2.0 * l->hidden * sb / (s->sp ? t : 1.0) + (qw - f) * sb / t;
        if (l->moe && m->moe.experts > 0)
            d += moe_fp8_saved_delta(m, l, s, stack_get(stack), sb, t);
        if (a + d > 0)
            a += d;
    }
    return a;
}

/* Adds part's times, kept activations and weight tensors to *acc (what one
 * more layer or chunk adds to a range; parameters and transients are the
 * caller's, as they combine differently). */
void range_cost_add_work(range_cost *acc, const range_cost *part)
{
    acc->fwd_s += part->fwd_s;
    acc->bwd_s += part->bwd_s;
    acc->compute_s += part->compute_s;
    acc->recompute_s += part->recompute_s;
    if (part->recompute_share > acc->recompute_share)
        acc->recompute_share = part->recompute_share;
    acc->tp_comm_s += part->tp_comm_s;
    acc->cp_comm_s += part->cp_comm_s;
    acc->ep_comm_s += part->ep_comm_s;
    acc->act_bytes += part->act_bytes;
    acc->n_tensors += part->n_tensors;
}

/* This rank's K and V for one micro-batch, 16-bit: b s / cp tokens x 2
 * widths of the K/V heads a TP rank holds (at least one head). */
static double cp_kv_bytes(const layer_spec *l, const strategy *s, int tp)
{
    int cp = s->cp > 0 ? s->cp : 1;
    double tokens = (double)s->mbs * s->seq_len / cp;
    double kvw = (double)l->kv_heads * l->head_dim / (l->kv_heads >= tp ? tp : l->kv_heads);
    return tokens * 2.0 * kvw * 2.0;
}

/* This rank's Q (and attention output O, the same width) for one
 * micro-batch, 16-bit: b s / cp tokens x the query heads a TP rank holds. */
static double cp_q_bytes(const layer_spec *l, const strategy *s, int tp)
{
    int cp = s->cp > 0 ? s->cp : 1;
    return (double)s->mbs * s->seq_len / cp * ((double)l->heads * l->head_dim / tp) * 2.0;
}

/* The ring's transient over r ranks (TE AttnFuncWithCPAndKVP2P): the
 * forward's r K/V blocks and r partial outputs, or the backward's dQ
 * accumulator, two [K/V, dK/dV] buffers and one step's dQ dK dV. */
static double cp_ring_transient(int r, double q, double kv)
{
    double fwd = r * (kv + q), bwd = 2.0 * q + 5.0 * kv;
    return fwd > bwd ? fwd : bwd;
}

/* The Ulysses all-to-alls' transient (TE flash_attn_a2a_communicate):
 * beside the caller's Q K V, their contiguous send copies (the received
 * ones are what attention saves), or for the output the reordered send
 * copy and the receive buffer; the backward's dQ dK dV likewise. */
static double cp_a2a_transient(double q, double kv)
{
    return q + kv + (q + kv > 2.0 * q ? q + kv : 2.0 * q);
}

/* PyTorch's ring attention (_templated_ring_attention and its backward,
 * torch/distributed/tensor/experimental/_attention.py) over K and V of kv
 * bytes, the rotater holding `held` of them at once: the backward's fp32
 * dQ dK dV accumulators, the contiguous K V and their concatenation sent
 * on, what the rotater received, one step's dQ dK dV, and the fp32 dK/dV
 * concatenation sent and received (the forward's K/V copies and its fp32
 * merged output hold less). */
static double cp_torch_transient(double held, double q, double kv)
{
    return 2.0 * (q + kv) + 2.0 * kv + held * kv + (q + kv) + 4.0 * kv;
}

/* The K and V bytes the stack's context parallelism exchanges: this rank's
 * K and V at the K/V heads (cp_kv_bytes), or on PyTorch's ring
 * (STACK_CP_TORCH) at the query heads: torchtitan repeats K and V to the
 * query heads before SDPA (9dec370 models/llama/model.py Attention.forward:
 * repeat_kv, then F.scaled_dot_product_attention), and the ring gathers
 * and rotates what SDPA was given, 2 Q. */
static double cp_exchanged_kv_bytes(const layer_spec *l, const strategy *s, int tp, int stack)
{
    if (stack_get(stack)->memory.cp_attn == STACK_CP_TORCH)
        return 2.0 * cp_q_bytes(l, s, tp);
    return cp_kv_bytes(l, s, tp);
}

double cost_cp_transient_bytes(const layer_spec *l, const strategy *s, int tp, int stack)
{
    int cp = s->cp > 0 ? s->cp : 1, a;
    double kv = cp_exchanged_kv_bytes(l, s, tp, stack), q = cp_q_bytes(l, s, tp), ring;
    if (cp <= 1)
        return 0;
    if (stack_get(stack)->memory.cp_attn == STACK_CP_TORCH)
        return cp_torch_transient(s->cp_comm == CP_COMM_ALLGATHER ? cp : 1, q, kv);
    switch (s->cp_comm) {
    case CP_COMM_ALLGATHER:
        return 2.0 * cp * kv;
    case CP_COMM_A2A:
        return cp_a2a_transient(q, kv);
    case CP_COMM_A2A_P2P:
        /* the all-to-all over cp_a2a ranks, then the ring over cp / cp_a2a
         * groups with the caller's Q K V still held */
        a = s->cp_a2a > 1 && cp % s->cp_a2a == 0 ? s->cp_a2a : 1;
        ring = q + kv + cp_ring_transient(cp / a, q, kv);
        return ring > cp_a2a_transient(q, kv) ? ring : cp_a2a_transient(q, kv);
    case CP_COMM_P2P:
    case CP_COMM_COUNT:
        break;
    }
    return cp_ring_transient(cp, q, kv);
}

double cost_cp_saved_bytes(const layer_spec *l, const strategy *s, int tp)
{
    if (s->cp <= 1 || (s->cp_comm != CP_COMM_A2A && s->cp_comm != CP_COMM_A2A_P2P))
        return 0;
    return cp_q_bytes(l, s, tp);
}

/* The Ulysses all-to-alls of one pass over `a` ranks spaced `stride` apart:
 * Q, K, V (b s / cp tokens x (q + 2 kv) widths / tp, 16-bit) before
 * attention, the output (q widths) after it; not overlapped. */
static double cp_a2a_s(const layer_spec *l, const node_group *ng, const gen_constants *k,
                       const strategy *s, int tp, int a, int stride)
{
    double tokens = (double)s->mbs * s->seq_len / (s->cp > 0 ? s->cp : 1);
    double kvw = (double)l->kv_heads * l->head_dim / (l->kv_heads >= tp ? tp : l->kv_heads);
    double qw = (double)l->heads * l->head_dim / tp;
    return comm_alltoall_s(ng, k, a, stride, tokens * (qw + 2.0 * kvw) * 2.0) +
           comm_alltoall_s(ng, k, a, stride, tokens * qw * 2.0) + 2.0 * k->kernel_s;
}

/* PyTorch's ring attention (torch 2.5-2.6 torch/distributed/tensor/
 * experimental/_attention.py, as torchtitan 9dec370 runs it: rotate method
 * allgather by default, load balancing on, convert_to_f32 on) over c = cp
 * ranks, one layer and micro-batch on the slowest rank, Q this rank's
 * query bytes (16-bit), KV the exchanged K and V (2 Q), attention `attn`
 * seconds forward and ATTN_BWD_RATIO x attn backward, split in c equal
 * steps (the load-balanced causal split: step 0 the local causal block,
 * each later step half a block, q or k/v halved).
 *   Forward (_templated_ring_attention): the allgather rotater gathers
 *     every rank's K/V once, issued before step 0's SDPA and waited at step
 *     1, so it hides behind attn / c only; the alltoall rotater
 *     (ft_c.permute_tensor) sends one block per step, each behind one
 *     step.  Each step merges its partial output into an fp32 accumulator
 *     (_SDPAMerger: the block's upcast, out - block_out, its product with
 *     sigmoid(lse difference), the subtraction: 19 Q of HBM traffic per
 *     full step -- rank c - 1's steps are all full) and re-concatenates K
 *     and V (torch.cat, 2 KV) at every step but the last; K and V made
 *     contiguous first (2 KV) and the result cast back (3 Q): 3 Q + 2 KV +
 *     (c - 1) (19 Q + 2 KV).
 *   Backward (_templated_ring_attention_backward): the kv rotater gathers
 *     (or rotates) K/V again, behind the first backward step; the fp32 dK
 *     and dV (2 KV bytes) travel round the ring by all-to-all
 *     (dkv_rotater), each send waited after the next step's SDPA backward,
 *     the last after the loop, in full.  HBM passes: fp32 zeros for dQ dK
 *     dV (2 Q + 2 KV), K V contiguous (2 KV), per step the K/V
 *     concatenation (2 KV, not at the last), the fp32 dK dV accumulation
 *     (a chunk added and the whole re-concatenated, _partial_update: 6.5
 *     KV on rank c - 1; 5 KV at step 0), their fp32 concatenation sent on
 *     (4 KV) and dQ's accumulation (5 Q), the casts back (3 Q + 3 KV):
 *     (2 + 2 + 5 + 4 + 3) KV + (2 + 5 + 3) Q + (c - 1) (6.5 KV + 4 KV +
 *     5 Q + 2 KV).
 * The HBM passes are the ring's own kernels (none at cp 1), counted here
 * with its exposed communication. */
static void cp_torch_exchange(const gen_constants *k, const gpu_spec *gpu, const comm_link *cpl,
                              const strategy *s, int c, double q, double kv, double attn,
                              double *fwd, double *bwd)
{
    double bwd_attn = ATTN_BWD_RATIO * attn, t, dkv;
    double step_kv = comm_p2p_s(cpl->bytes_per_s, cpl->latency_s, kv) + k->kernel_s;
    if (s->cp_comm == CP_COMM_ALLGATHER) {
        t = comm_allgather_s(cpl, c, c * kv) + k->kernel_s;
        *fwd = cost_overlapped(t, attn / c, k);
        *bwd = cost_overlapped(t, bwd_attn / c, k);
    } else {
        *fwd = (c - 1) * cost_overlapped(step_kv, attn / c, k);
        *bwd = (c - 1) * cost_overlapped(step_kv, bwd_attn / c, k);
    }
    dkv = comm_p2p_s(cpl->bytes_per_s, cpl->latency_s, 2.0 * kv) + k->kernel_s;
    *bwd += (c - 1) * cost_overlapped(dkv, bwd_attn / c, k) + dkv;
    *fwd += compute_memory_s(gpu, k, 3.0 * q + 2.0 * kv + (c - 1) * (19.0 * q + 2.0 * kv),
                             3 + 6 * (c - 1));
    *bwd += compute_memory_s(gpu, k, 10.0 * q + 16.0 * kv + (c - 1) * (5.0 * q + 12.5 * kv),
                             9 + 8 * (c - 1));
}

void cost_cp_exchange(const model *m, const layer_spec *l, const node_group *ng,
                      const gen_constants *k, const comm_link *cpl, const strategy *s, int tp,
                      int stack, double attn, double *fwd, double *bwd)
{
    int cp = s->cp > 0 ? s->cp : 1, ring = cp, a = 1;
    double kv = cp_kv_bytes(l, s, tp);
    comm_link rl = *cpl;
    double t;
    (void)m;
    *fwd = *bwd = 0;
    if (cp <= 1)
        return;
    if (stack_get(stack)->memory.cp_attn == STACK_CP_TORCH) {
        cp_torch_exchange(k, &ng->gpu, cpl, s, cp, cp_q_bytes(l, s, tp),
                          cp_exchanged_kv_bytes(l, s, tp, stack), attn, fwd, bwd);
        return;
    }
    switch (s->cp_comm) {
    case CP_COMM_A2A:
        /* Ulysses: scatter the heads, gather the sequence; the backward
         * runs the same two on the gradients */
        *fwd = *bwd = cp_a2a_s(l, ng, k, s, tp, cp, tp);
        return;
    case CP_COMM_ALLGATHER:
        /* Transformer Engine AttnFuncWithCPAndKVAllGather: the sequence's
         * K and V gathered before attention; the backward saves only the
         * local K/V, gathers them again, and reduce-scatters their
         * gradients (dK, dV of the whole sequence); nothing overlapped */
        *fwd = comm_allgather_s(cpl, cp, kv * cp) + k->kernel_s;
        *bwd = comm_allgather_s(cpl, cp, kv * cp) + comm_reducescatter_s(cpl, cp, kv * cp) +
               2.0 * k->kernel_s;
        return;
    case CP_COMM_A2A_P2P:
        /* Transformer Engine AttnFuncWithCPAndKVP2P with cp_group = [a2a,
         * p2p]: Q, K, V all-to-all over the cp_a2a consecutive cp ranks
         * (stride tp; the sequence of cp_a2a ranks, 1/cp_a2a of the heads),
         * then the ring over the cp / cp_a2a groups (stride tp x cp_a2a):
         * each block is cp_a2a x the tokens at 1/cp_a2a of the K/V width,
         * the same bytes as plain p2p's; the output (backward: dO before,
         * dQ dK dV after) all-to-all'd back */
        a = s->cp_a2a > 1 && cp % s->cp_a2a == 0 ? s->cp_a2a : 1;
        ring = cp / a;
        rl = comm_group_link(ng, k, ring, tp * a);
        *fwd = *bwd = cp_a2a_s(l, ng, k, s, tp, a, tp);
        break;
    case CP_COMM_P2P:
    case CP_COMM_COUNT:
        break;
    }
    if (ring <= 1)
        return;
    /* ring attention: this rank's K and V blocks travel round the ring
     * (ring - 1 steps), overlapped with the attention blocks; the backward
     * sends K, V and their gradients (twice the bytes) */
    t = (ring - 1) * comm_p2p_s(rl.bytes_per_s, rl.latency_s, kv);
    *fwd += cost_overlapped(t, attn, k);
    *bwd += cost_overlapped(2.0 * t, ATTN_BWD_RATIO * attn, k);
}

/* The host-paced time of layer l's forward (its backward pays twice it):
 * an MoE layer's token dispatcher copies the tokens per expert to the host
 * and waits, which drains the host's run-ahead, so the layer's launches are
 * paced by the host (moe_host_s); dense layers have no sync.  Under a
 * full-iteration CUDA graph (Megatron-Core full_cuda_graph.py:
 * FullCudaGraphWrapper captures forward_backward_func, every micro-batch,
 * and replays it) there is neither: a captured graph holds no
 * device-to-host sync (static shapes: Megatron-Bridge 26.08's recipes bound
 * the dispatch by moe_expert_rank_capacity_factor and moe_paged_stash) and
 * no host launches to pace it. */
/* Under Transformer Engine's per-module graphs of the router and the
 * dispatch preprocessing (the te_moe_graphs knob) with a fused dispatcher
 * (DeepEP/HybridEP, the flex dispatcher), what stays host-paced is the
 * routed experts' part after the sync.  NVIDIA's Megatron-LM write-up
 * "Optimizing DeepSeek-V3 Training Performance on NVIDIA GB200 NVL72"
 * (docs/discussions/deepseek-v3-gb200-optimization, Megatron-LM eb0783b6d3,
 * 2025-11-03: DeepSeek-V3 MXFP8, EP 32 x PP 8, mbs 1, 970 TFLOP/s with
 * HybridEP and --cuda-graph-scope attn moe_router moe_preprocess), 2.3:
 * after the graphs "only the routed experts part still has some CPU
 * overhead"; 3.1: removing the device-to-host sync, so that graphs cover
 * the whole model, is estimated at "at least a 10% additional performance
 * gain" -- estimated "using a small proxy model", not measured at that
 * layout, and a lower bound.  A 10% gain is host time one tenth of the GPU
 * time: at the model's GPU time for that layout (the corpus's 25.11 GB200
 * DeepSeek-V3 MXFP8 row, pp 8 vpp 4 ep 32 mbs 1, 1,003 TFLOP/s measured:
 * 14.87 s over 931 MoE-layer forwards, each paying its host time three
 * times) 0.53 ms per MoE-layer forward at its 8 local experts (256 / EP
 * 32).  The write-up's own figures give 0.50-0.55 ms without the corpus:
 * 970 TFLOP/s at GBS 2048 (249.7 GFLOP a token) is 8.44 s a step, of which
 * 1 - 1/1.1 is 0.77 s, over 64 micro-batches x 8 MoE layers (its busiest
 * ranks, layout Et|(tt|)*30L; 7.25 on average) x 3.  The routed
 * experts' host work is per local expert: Transformer Engine's
 * GroupedLinear quantizes each expert's input (split_quantize) and launches
 * one GEMM per expert (general_grouped_gemm) after the sync, and the
 * write-up's outlook (3.1) names fewer local experts as what cuts those
 * overheads: 0.53 ms x local experts / 8.  The write-up measured the
 * graphs with the fused dispatchers only (it left the alltoall dispatcher
 * before capturing them); Megatron-Core's MoEAlltoAllTokenDispatcher under
 * a moe_preprocess graph issues its device-to-host copy at
 * before_ep_alltoall, just before
 * its sync (token_dispatcher.py, the Bridge 25.11 pin 0d8e0714cd), and
 * launches its all-to-alls, chunk sorts and unpermutation from the host
 * after it: it keeps moe_host_s.  Not modelled: the graphs' memory (their
 * static input and output buffers and private memory pools; neither the
 * write-up nor Megatron-Core gives a figure). */
#define MOE_HOST_GRAPHED_S 0.53e-3
#define MOE_HOST_GRAPHED_EXPERTS 8.0

static double moe_host_fwd_s(const model *m, const layer_spec *l, const strategy *s,
                             const gen_constants *k)
{
    if (!l->moe || m->moe.experts <= 0 || s->cuda_graph)
        return 0.0;
    if (s->te_moe_graphs && s->flex_dispatcher)
        return MOE_HOST_GRAPHED_S * m->moe.experts / (s->ep > 0 ? s->ep : 1) /
               MOE_HOST_GRAPHED_EXPERTS;
    return k->moe_host_s;
}

bool cost_te_moe_graphs_help(const model *m, const cost_params *p, const strategy *s,
                             gpu_generation gen)
{
    gen_constants kc;
    strategy on = *s, off = *s;
    layer_spec l = {0};
    l.moe = true;
    on.te_moe_graphs = true;
    off.te_moe_graphs = false;
    cost_constants(&kc, p, s->stack, gen);
    return moe_host_fwd_s(m, &l, &on, &kc) < moe_host_fwd_s(m, &l, &off, &kc);
}

/* Adds layer l's host-paced time to its forward (*fwd) and backward
 * (*bwd, twice the forward's: dgrad + wgrad), given their GPU work.  Under
 * --overlap-moe-expert-parallel-comm the steady state runs one
 * micro-batch's forward and another's backward layer by layer (Megatron-Core
 * core_v0.15.0 models/common/model_chunk_schedule_plan.py
 * TransformerLayerSchedulePlan.run): the host queues the backward's expert
 * GEMMs (b_layer.mlp.backward) between the forward's router and dispatch
 * preprocessing (post_attn: the device-to-host copy of the splits on the
 * dispatcher's side stream, token_dispatcher.py cuda_dtoh_point) and its
 * dispatch (moe_dispatch: d2h_event.synchronize(), which waits for that
 * event only), then the backward's weight gradients and dispatch before
 * the forward's experts.  So while the host waits and launches, the GPU
 * runs the other pass: the forward's host time hides under the backward's
 * GPU work and the backward's under the forward's, and only what exceeds
 * it shows.  The pipeline's warm-up and cool-down passes are costed the
 * same (moe_comm's optimism). */
static void moe_host_paced(const model *m, const layer_spec *l, const strategy *s,
                           const gen_constants *k, double *fwd, double *bwd)
{
    double h = moe_host_fwd_s(m, l, s, k), hf = h, hb = 2.0 * h;
    if (s->ep_comm_overlap) {
        hf = h > *bwd ? h - *bwd : 0.0;
        hb = hb > *fwd ? hb - *fwd : 0.0;
    }
    *fwd += hf;
    *bwd += hb;
}

/* A member of a stage spanning node groups, for its MoE all-to-alls: the
 * cluster, the constants and stack (each group's generation constants), and
 * the EP groups it takes part in (cost_member_ep_span). */
_Static_assert(STAGE_MIX_MAX <= COMM_A2A_PARTS_MAX, "an EP group spans at most a stage's groups");
typedef struct ep_mixed {
    const cluster *c;
    const cost_params *p;
    int stack;
    const cost_ep_span *span;
} ep_mixed;

/* One dispatch (or combine) of D = `bytes` a rank for a member of a stage
 * spanning node groups: the slowest of its EP groups, each over the groups
 * and links it spans (comm_alltoall_mixed_s; the flex dispatcher's
 * node-aware form when `flex`).  Megatron-Core's MoEAlltoAllTokenDispatcher
 * (core_v0.15.0 moe/token_dispatcher.py) exchanges the permuted tokens with
 * one torch.distributed all_to_all_single over the EP group
 * (moe/moe_utils.py all_to_all, pg_collection.ep), its input and output
 * splits from the routing map: every rank waits for all of its EP peers'
 * tokens, so the group moves at its slowest member's links; with the data
 * split uniformly over the data-parallel ranks (Megatron's sampler) and
 * balanced routing each rank sends the same D, and each expert gets the
 * same tokens on every GPU type, so the grouped GEMMs (layer_cost) run at
 * the member's own GPU and the slowest member paces the stage. */
static double ep_mixed_a2a_s(const model *m, const ep_mixed *em, int etp, double bytes,
                             bool flex)
{
    double worst = 0;
    for (int x = 0; x < em->span->n; x++) {
        const cost_ep_group *eg = &em->span->kind[x];
        gen_constants kc[STAGE_MIX_MAX];
        comm_a2a_part part[STAGE_MIX_MAX];
        int n = eg->n < STAGE_MIX_MAX ? eg->n : STAGE_MIX_MAX;
        double t;
        for (int j = 0; j < n; j++) {
            const node_group *g = &em->c->group[eg->group[j]];
            cost_constants(&kc[j], em->p, em->stack, g->gpu.gen);
            part[j] = (comm_a2a_part){g, &kc[j], eg->group[j], eg->ranks[j]};
        }
        t = comm_alltoall_mixed_s(em->c, part, n, etp, bytes, m->moe.experts,
                                  flex ? m->moe.top_k : 0);
        if (t > worst)
            worst = t;
    }
    return worst;
}

/* The token dispatcher's communication of one MoE layer, forward (*epf)
 * and backward (*epb), exposed; f_comp is the layer's forward compute.
 * Dispatch and combine all-to-alls of the top-k copies (D bytes a rank)
 * over the EP group (ranks etp apart: the expert grid etp-ep-edp); the
 * backward runs the same two in reverse.  The flex dispatcher
 * (flex_dispatcher: DeepEP, HybridEP) sends a token once per destination
 * rank and over the network once per other NVLink domain it reaches
 * (comm_alltoall_node_dedup_s), the alltoall dispatcher every copy.  etp > 1: the all-gather of the
 * etp ranks' copies (an etp x D output) and the reduce-scatter of the
 * experts' partial sums (an etp x D input) over the etp consecutive ranks;
 * the backward's reverse pair moves the same.  Overlaps (exclusive by
 * Megatron's rule, knobs.c):
 *   --overlap-moe-expert-parallel-comm (Megatron-Core
 *     pipeline_parallel/combined_1f1b.py, models/gpt/
 *     fine_grained_callables.py): the steady state runs one micro-batch's
 *     forward and another's backward as one step, layer by layer, each
 *     all-to-all on its own stream under the other pass's compute
 *     (attention, experts); what does not fit shows.  The pipeline's
 *     warm-up and cool-down passes are costed the same (a slight optimism
 *     at few micro-batches);
 *   --moe-shared-expert-overlap (moe/shared_experts.py SharedExpertMLP,
 *     moe/token_dispatcher.py MoEAlltoAllTokenDispatcher): the shared
 *     experts run on their own CUDA stream, their fc1 and activation
 *     launched once the dispatch all-to-all is queued
 *     (dispatch_postprocess), their fc2 once the combine's is
 *     (combine_postprocess), their TP gather and reduce-scatter on that
 *     stream too; the backward's shared-expert gradients are scheduled
 *     first (set_tensor_grad_fn_sequence_sr) under the backward's
 *     all-to-alls.  So the shared experts' GEMMs and activation (forward
 *     S, backward 2 S) hide the dispatcher's traffic at overlap_exposed;
 *     their own TP collectives stay in the layer's TP time.  From
 *     core_v0.18.0 the flex dispatcher takes the overlap too
 *     (MoEFlexTokenDispatcher: fc1 after the dispatch, fc2 in
 *     combine_postprocess, the shared stream as above; Megatron-LM
 *     ebfa13852f): costed the same over its own traffic. */
/* HybridEP's SMs (COST_HYBRIDEP_SMS, layer_cost.h): every validating
 * HybridEP run held 32 -- Megatron-Bridge's benchmark setup sets
 * moe_hybridep_num_sms = 32 wherever moe_flex_dispatcher_backend is
 * "hybridep" (v0.2.0 scripts/performance/utils/helpers.py, v0.3.0-v0.5.0
 * scripts/performance/utils/overrides.py, v0.6.0 perf_recipes/_common.py
 * _benchmark_common, which every perf recipe calls); Megatron-Core passes
 * it to DeepEP's HybridEPBuffer as num_sms_dispatch_api and
 * num_sms_combine_api (moe/token_dispatcher.py _HybridEPManager). */

/* What an overlapped all-to-all's hidden part costs the compute it runs
 * under, as a share of itself: the flex dispatcher's kernels inside the
 * NVLink domain hold a fixed number of the GPU's SMs for the exchange, so
 * the other micro-batch's kernels run on the rest: that share, on whatever
 * GPU the backend runs (Ampere to Blackwell Ultra, knobs.c
 * knob_flex_backend): HybridEP's COST_HYBRIDEP_SMS (the --moe-hybridep-num-sms
 * every validating run set and --emit pins), core_v0.15.0's DeepEP
 * COST_DEEPEP_SMS (Megatron-Core's moe_deepep_num_sms default, unpinned).
 * Anything else overlap_exposed (or overlap_exposed_net over the NICs,
 * cost_overlapped_on); a GPU without a catalogued SM count too. */
static void ep_overlap_constants(const node_group *ng, const strategy *s, bool net,
                                 const gen_constants *k, gen_constants *out)
{
    int sms = compute_sm_count(&ng->gpu);
    *out = *k;
    if (s->flex_dispatcher && !net && sms > 0)
        out->overlap_exposed =
            (s->flex_deepep ? COST_DEEPEP_SMS : COST_HYBRIDEP_SMS) / (double)sms;
}

static void moe_comm(const model *m, const layer_spec *l, const node_group *ng,
                     const gen_constants *k, const ep_mixed *em, const strategy *s, int tp,
                     const tf_gemm *g, double f_comp, double *epf, double *epb)
{
    int ep = s->ep > 0 ? s->ep : 1, etp = s->etp > 1 ? s->etp : 1;
    double tokens = (double)s->mbs * s->seq_len / (s->cp > 0 ? s->cp : 1);
    double d = tf_moe_dispatch_bytes(m, l, tokens, tp), t = 0;
    if (ep > 1 && em != NULL)
        t = 2.0 * (ep_mixed_a2a_s(m, em, etp, d, s->flex_dispatcher) + k->kernel_s);
    else if (ep > 1 && s->flex_dispatcher)
        t = 2.0 * (comm_alltoall_node_dedup_s(ng, k, ep, etp, d, m->moe.experts, m->moe.top_k) +
                   k->kernel_s);
    else if (ep > 1)
        t = 2.0 * (comm_alltoall_s(ng, k, ep, etp, d) + k->kernel_s);
    if (etp > 1) {
        comm_link el = comm_group_link(ng, k, etp, 1);
        t += comm_allgather_s(&el, etp, etp * d) + comm_reducescatter_s(&el, etp, etp * d) +
             2.0 * k->kernel_s;
    }
    *epf = *epb = t;
    /* Either overlap hides the dispatcher's traffic under other compute, at
     * one cost for both (ep_overlap_constants): an EP group beyond the
     * NVLink domain is NIC-bound, its hidden part slowing the compute at the
     * network share (cost_overlapped_on, as the DP collectives over the
     * NICs); the flex dispatcher's kernels inside the domain at their SMs' share. */
    bool net = (long)ep * etp > comm_nvlink_domain(ng);
    gen_constants ko;
    ep_overlap_constants(ng, s, net, k, &ko);
    if (s->ep_comm_overlap) {
        *epf = cost_overlapped_on(t, 2.0 * f_comp, &ko, net);
        *epb = cost_overlapped_on(t, f_comp, &ko, net);
    } else if (s->shared_expert_overlap && tf_shared_ffn(m) > 0) {
        /* the shared fc1 and fc2 follow the router's GEMM (tf_layer_gemms_ep) */
        double sh = compute_gemms_s(&ng->gpu, k, m->prec, precision_bytes(m->prec),
                                    g + tf_attention_gemm_count(m) + 1, 2) +
                    compute_memory_s(&ng->gpu, k,
                                     tf_mlp_activation_bytes(m, tokens, tf_shared_ffn(m), tp), 1);
        *epf = cost_overlapped_on(t, sh, &ko, net);
        *epb = cost_overlapped_on(t, 2.0 * sh, &ko, net);
    }
}

/* The alltoall dispatcher's second permutation, forward: Megatron-Core's
 * MoEAlltoAllTokenDispatcher (core_v0.15.0 and later
 * moe/token_dispatcher.py) sorts the copies it received, grouped by source
 * rank, by local expert before the experts ("Permutation 2",
 * dispatch_postprocess: sort_chunks_by_idxs, after the etp all-gather) and
 * back after them ("Unpermutation 2", combine_preprocess) whenever a rank
 * holds more than one expert; each pass reads and writes every copy (D
 * bytes a rank under balanced routing, etp x D gathered).  The flex
 * dispatcher's DeepEP and HybridEP receive per rank and permute once to the
 * experts (_DeepepManager get_permuted_hidden_states_by_experts,
 * HybridEP's dispatch_with_permute): the one permutation
 * tf_layer_elementwise_bytes counts for every dispatcher.  NVIDIA's
 * DeepSeek-V3 GB200 write-up says the same (Megatron-LM
 * docs/discussions/deepseek-v3-gb200-optimization, 2.1.1: the NCCL
 * alltoall dispatcher runs "one global and one local permute", DeepEP and
 * HybridEP fuse the global one into the communication kernel). */
static double moe_sort_chunks_s(const model *m, const layer_spec *l, const gpu_spec *gpu,
                                const gen_constants *k, const strategy *s, double tokens, int tp,
                                int ep, int etp)
{
    double d;
    if (!l->moe || m->moe.experts <= ep || s->flex_dispatcher)
        return 0;
    d = tf_moe_dispatch_bytes(m, l, tokens, tp) * etp;
    return compute_memory_s(gpu, k, 2.0 * 2.0 * d, 2);
}

/* MXFP8 under sequence parallelism with Transformer Engine's userbuffers
 * TP overlap: a row-parallel Linear (attention's output projection, fc2)
 * all-gathers its output gradient row-wise for the dgrad GEMM and, since a
 * row-scaled MXFP8 tensor cannot be turned into the column-scaled copy the
 * wgrad GEMM reads, quantizes it column-wise and all-gathers it a second
 * time, overlapped with the dgrad GEMM (NVIDIA/TransformerEngine
 * transformer_engine/pytorch/module/linear.py, backward: `ub_overlap_ag and
 * isinstance(grad_output_quantizer, MXFP8Quantizer)` ->
 * bulk_overlap_ag_with_external_gemm; v2.9 .. v2.18).  A per-tensor FP8
 * gradient gathered once serves both GEMMs.  So two more all-gathers of the
 * layer's `elems` (tokens x hidden) 1-byte values, the 1-per-32 scales
 * ignored; without the userbuffers overlap TE gathers otherwise (not
 * modelled).  On a MoE layer the routed experts' fc2 gathers nothing:
 * Megatron-Core's TEGroupedLinear (extensions/transformer_engine.py,
 * explicit_expert_comm) hands TE's GroupedLinear parallel_mode None and
 * tp_size 1, the token dispatcher moving the tokens; so attention's
 * projection pays, and a shared expert's fc2 (SharedExpertMLP is an MLP
 * of TE Linears, tp_comm_buffer_name "fc2") unless
 * --moe-shared-expert-overlap turns its ub_overlap_* and parallel_mode off
 * (moe/shared_experts.py __init__). */
static double mx_wgrad_regather_s(const model *m, const layer_spec *l, const comm_link *tpl,
                                  const strategy *s, int tp, double elems,
                                  const gen_constants *k)
{
    double n = 2.0;
    if (m->prec != PREC_MXFP8 || !s->sp || tp < 2)
        return 0;
    if (l->moe && m->moe.experts > 0)
        n = 1.0 + (m->moe.shared_experts > 0 && !s->shared_expert_overlap ? 1.0 : 0.0);
    return n * (comm_allgather_s(tpl, tp, elems) + k->kernel_s);
}

/* HBM bytes one dense layer's forward moves beyond the fused kernels
 * tf_layer_elementwise_bytes counts, per micro-batch on one GPU, when a
 * stack runs the block as eager PyTorch ops (stack_eager_blocks, not
 * compiled), from torchtitan 9dec370's Llama block (models/llama/model.py,
 * models/norms.py), 16-bit activations, fp32 4 B:
 *   RMSNorm (norm_type "rmsnorm", the default): x.float() (2 + 4), pow(2)
 *     (4 + 4), mean (4), x * rsqrt (4 + 4), type_as (4 + 2), * weight
 *     (2 + 2): 36 B an element against the fused 4, two norms: 64 h (/ tp
 *     with SP); LayerNorm models: torch's layer_norm is one kernel (0);
 *   apply_rotary_emb: float() (2 + 4), the complex product (4 + 4),
 *     type_as (4 + 2): 20 B against 4 over q and k: 16 (q + kv) / tp;
 *   repeat_kv (expand + reshape: a copy) of K and V to the query heads,
 *     2 (2 kv + 2 q) / tp where kv_heads < heads (SDPA gets no GQA);
 *   the attention output's transpose(1, 2).contiguous(): 4 q / tp;
 *   F.silu(w1(x)) * w3(x): silu (2 + 2) and the product (4 + 2), 10 f
 *     against the fused 6 f: 4 f / tp for gated MLPs.
 * The residual adds are the fused count's bias-dropout-adds (6 h each).
 * Llama 3.1 8B: 262,144 + 81,920 + 20,480 + 16,384 + 57,344 = 438,272 B a
 * token, 2.3x the fused 188,416.  The backward pays twice it, as the fused
 * count's (layer_cost); dense layers only (no MoE block in torchtitan
 * 9dec370). */
#define EAGER_EXTRA_KERNELS 20
static double eager_extra_bytes(const model *m, const layer_spec *l, double tokens, int tp,
                                bool sp)
{
    double t = tp > 0 ? tp : 1, q = (double)l->heads * l->head_dim / t;
    double kv = (double)l->kv_heads * l->head_dim / t, b = 0;
    if (m->norm == NORM_RMSNORM)
        b += 2.0 * 32.0 * l->hidden / (sp ? t : 1.0);
    if (m->position == POS_ROPE)
        b += 16.0 * (q + kv);
    if (l->kv_heads < l->heads)
        b += 2.0 * (2.0 * kv + 2.0 * q);
    b += 4.0 * q;
    if (activation_gated(m->act))
        b += 4.0 * l->ffn_hidden / t;
    return b * tokens;
}

/* Cost of one decoder layer for one micro-batch on one GPU, recomputed as
 * `mode` says (full recompute's chosen layers: RECOMPUTE_FULL, the others
 * of a block recompute: RECOMPUTE_NONE). */
static void layer_cost(const model *m, const layer_spec *l, const node_group *ng,
                       const gen_constants *k, const ep_mixed *em, const comm_link *tpl,
                       const comm_link *cpl, const strategy *s, int tp, recompute_mode mode,
                       int stack, range_cost *rc)
{
    const gpu_spec *gpu = &ng->gpu;
    peak_format fmt = precision_peak(m->prec);
    int eb = precision_bytes(m->prec);
    int cp = s->cp > 0 ? s->cp : 1;
    double tokens = (double)s->mbs * s->seq_len / cp;
    tf_gemm g[TF_MAX_GEMMS];
    int ep = s->ep > 0 ? s->ep : 1, etp = s->etp > 1 ? s->etp : 1;
    int ngm = tf_layer_gemms_ep(m, l, tokens, tp, ep, etp, g);
    double gemm = compute_gemms_s(gpu, k, m->prec, eb, g, ngm);
    double attn_flops = tf_attention_flops(m, l, s->mbs, s->seq_len, cp, tp);
    /* the softmax's exponentials pace the forward of fused kernels that
     * run the tensor cores near their peak (STACK_ATTN_FLASH: cuDNN,
     * FlashAttention-3/4); unfused attention runs its softmax as a kernel
     * of its own between the batched GEMMs, and SDPA's FlashAttention-2
     * issues sm80 mma.sync at ~400 TFLOP/s on B200 (sdpa_fa2_factor):
     * ~1,450 FLOPs per clock and SM (148 SMs at the 1.86 GHz of its 8,192
     * per clock and 2.25 PFLOP/s), 5.7 exponentials per clock at head_dim
     * 64 (256 FLOPs a score), under the SFUs' 16 */
    double xf = stack_get(stack)->attention != STACK_ATTN_FLASH
                    ? 1.0
                    : compute_attention_exp_factor(gpu, tf_attention_score_flops(m, l));
    double attn_tc = compute_attention_s(gpu, k, fmt, attn_flops);   /* the tensor cores' pace */
    double attn = (xf > 1.0 ? compute_attention_s(gpu, k, fmt, attn_flops * xf) : attn_tc) *
                  cost_fp8_attention_ratio(m, l, gpu, false);
    double elem = compute_memory_s(gpu, k,
                                   tf_layer_elementwise_bytes(m, l, tokens, tp, s->sp), 6) +
                  moe_sort_chunks_s(m, l, gpu, k, s, tokens, tp, ep, etp);
    double cast_f = 0, cast_b = 0;
    if (stack_eager_blocks(stack_get(stack)) && !m->torch_compile &&
        !(l->moe && m->moe.experts > 0))
        elem += compute_memory_s(gpu, k, eager_extra_bytes(m, l, tokens, tp, s->sp),
                                 EAGER_EXTRA_KERNELS);
    double fwd, bwd, tpf = 0, tpb = 0, cpf = 0, cpb = 0, epf = 0, epb = 0, rec = 0;

    if (fmt == PEAK_FP8 || fmt == PEAK_FP4) {
        cast_f = compute_fp8_cast_s(gpu, k, m->prec, g, ngm, false);
        cast_b = compute_fp8_cast_s(gpu, k, m->prec, g, ngm, true);
    }
    fwd = gemm + attn + elem + cast_f +
          moe_eager_glu_s(m, l, gpu, k, tokens, tp, ep, etp, MOE_EAGER_FWD);
    bwd = 2.0 * gemm +
          attention_bwd_s(m, l, s, gpu, k, fmt, cp, tp, attn_tc) +
          2.0 * elem + cast_b + moe_eager_glu_s(m, l, gpu, k, tokens, tp, ep, etp, MOE_EAGER_BWD);

    if (tp > 1) {
        /* forward: two all-reduces (SP: all-gather + reduce-scatter pairs,
         * the same bytes) of b s h 16-bit activations.  Backward: without SP
         * the two input-gradient all-reduces; with SP also the re-gather of
         * each column-parallel input for its weight gradient (3 of the 4
         * collectives' worth), and under the overlap MXFP8's second gather
         * of the row-parallel output gradients (mx_wgrad_regather_s).  With
         * tp_comm_overlap each is split into tp chunks pipelined with its
         * GEMM: one chunk stays exposed, the rest hides behind the GEMMs at
         * overlap_exposed, beyond them in full (the re-gather: all of it). */
        double one = 2.0 * comm_allreduce_s(tpl, tp, tokens * l->hidden * 2.0) +
                     4.0 * k->kernel_s;
        double back = s->sp ? 1.5 * one : one;
        if (s->tp_comm_overlap) {
            double regather = mx_wgrad_regather_s(m, l, tpl, s, tp, tokens * l->hidden, k);
            tpf = one / tp + cost_overlapped(one - one / tp, gemm, k);
            tpb = back / tp + cost_overlapped(back - back / tp + regather, 2.0 * gemm, k);
        } else {
            tpf = one;
            tpb = back;
        }
    }
    if (cp > 1)
        cost_cp_exchange(m, l, ng, k, cpl, s, tp, stack, attn, &cpf, &cpb);
    if (l->moe && m->moe.experts > 0 && (ep > 1 || etp > 1))
        moe_comm(m, l, ng, k, em, s, tp, g, gemm + attn + elem + cast_f, &epf, &epb);
    moe_host_paced(m, l, s, k, &fwd, &bwd);
    if (mode == RECOMPUTE_FULL)
        rec = fwd + tpf + cpf + epf;
    else if (mode == RECOMPUTE_SELECTIVE &&
             stack_get(stack)->memory.selective == STACK_SEL_OP_POLICY &&
             !(l->moe && m->moe.experts > 0) && m->mla.kv_lora_rank <= 0)
        rec = op_sac_rerun_s(m, l, gpu, k, g, elem, tpf);
    else if (mode == RECOMPUTE_SELECTIVE)
        rec = selective_rerun_s(m, l, s, gpu, k, tp, g, attn, tpf);
    rc->fwd_s += fwd + tpf + cpf + epf;
    rc->bwd_s += bwd + tpb + cpb + epb + rec;
    rc->compute_s += fwd + bwd;
    rc->recompute_s += rec;
    if (rec > 0 && rec / (bwd + tpb + cpb + epb + rec) > rc->recompute_share)
        rc->recompute_share = rec / (bwd + tpb + cpb + epb + rec);
    rc->tp_comm_s += tpf + tpb;   /* the re-forward's: in recompute_s */
    rc->cp_comm_s += cpf + cpb;
    rc->ep_comm_s += epf + epb;
    rc->act_bytes += layer_act_bytes(m, l, s, tp, mode, stack);
    rc->n_tensors += tf_layer_tensors(m, l);
}

bool cost_mix_valid(const cluster *c, const stage_mix *mx)
{
    if (mx->n < 2 || mx->n > STAGE_MIX_MAX)
        return false;
    for (int j = 0; j < mx->n; j++)
        if (mx->group[j] < 0 || mx->group[j] >= c->n_groups || mx->gpus[j] < 1)
            return false;
    return true;
}

void cost_member_view(const cluster *c, const stage_mix *mx, int j, node_group *out)
{
    int n = mx->n < STAGE_MIX_MAX ? mx->n : STAGE_MIX_MAX;
    *out = c->group[mx->group[j]];
    for (int a = 0; a < n; a++)
        for (int b = a; b < n; b++) {
            double bw, lat;
            cluster_link_between(c, mx->group[a], mx->group[b], &bw, &lat);
            if (bw < out->inter_bytes_per_s)
                out->inter_bytes_per_s = bw;
            if (lat > out->inter_latency_s)
                out->inter_latency_s = lat;
        }
    if (mx->gpus[j] > 0 && out->gpus_per_node > mx->gpus[j])
        out->gpus_per_node = mx->gpus[j];
    if (mx->gpus[j] > 0 && out->gpu.nvlink_domain > mx->gpus[j])
        out->gpu.nvlink_domain = mx->gpus[j];
}

/* Positions lo + r + q etp (q < ep: one EP group of the block at lo) inside
 * the ranks [a, b). */
static int ep_positions_in(long lo, int r, int etp, int ep, long a, long b)
{
    long first = lo + r;
    long qa = a > first ? (a - first + etp - 1) / etp : 0;
    long qb = b > first ? (b - first + etp - 1) / etp : 0;
    if (qa > ep)
        qa = ep;
    if (qb > ep)
        qb = ep;
    return qb > qa ? (int)(qb - qa) : 0;
}

/* Adds EP group r of the block at lo (its members on each of mx's groups,
 * off[] the members' first ranks) to *out unless it is there already. */
static void ep_span_add(const stage_mix *mx, const long *off, long lo, int r, int etp, int ep,
                        cost_ep_span *out)
{
    cost_ep_group g;
    memset(&g, 0, sizeof g);
    for (int i = 0; i < mx->n && i < STAGE_MIX_MAX; i++) {
        int k = ep_positions_in(lo, r, etp, ep, off[i], off[i + 1]);
        if (k > 0) {
            g.group[g.n] = mx->group[i];
            g.ranks[g.n++] = k;
        }
    }
    for (int x = 0; x < out->n; x++)
        if (memcmp(&out->kind[x], &g, sizeof g) == 0)
            return;
    if (out->n < COST_EP_KINDS)
        out->kind[out->n++] = g;
}

void cost_member_ep_span(const stage_mix *mx, int j, const strategy *s, cost_ep_span *out)
{
    int ep = s->ep > 0 ? s->ep : 1, etp = s->etp > 1 ? s->etp : 1, n = mx->n;
    long off[STAGE_MIX_MAX + 1], block = (long)ep * etp, b0, b1, visit[3];
    int nv = 0;
    memset(out, 0, sizeof *out);
    if (block <= 1 || n < 1 || n > STAGE_MIX_MAX || j < 0 || j >= n)
        return;
    off[0] = 0;
    for (int i = 0; i < n; i++)
        off[i + 1] = off[i] + mx->gpus[i];
    if (off[j + 1] <= off[j])
        return;
    /* the blocks member j's ranks fall in: the first, one inside (the
     * blocks strictly between the first and the last lie wholly in member
     * j: all alike), the last */
    b0 = off[j] / block;
    b1 = (off[j + 1] - 1) / block;
    visit[nv++] = b0;
    if (b0 + 1 < b1)
        visit[nv++] = b0 + 1;
    if (b1 > b0)
        visit[nv++] = b1;
    for (int v = 0; v < nv; v++)
        for (int r = 0; r < etp; r++)
            if (ep_positions_in(visit[v] * block, r, etp, ep, off[j], off[j + 1]) > 0)
                ep_span_add(mx, off, visit[v] * block, r, etp, ep, out);
}

bool cost_stage_ep_mixed(const strategy *s, int i)
{
    const stage_mix *mx = strategy_stage_mix(s, i);
    for (int j = 0; mx != NULL && j < mx->n && j < STAGE_MIX_MAX; j++) {
        cost_ep_span eps;
        cost_member_ep_span(mx, j, s, &eps);
        for (int x = 0; x < eps.n; x++)
            if (eps.kind[x].n > 1)
                return true;
    }
    return false;
}

/* The multi-token-prediction layers on the last stage (DeepSeek-V3 report,
 * arXiv 2412.19437 section 2.2; Megatron-Core models/gpt/gpt_model.py and
 * transformer/multi_token_prediction.py): each is one transformer block
 * like the model's last layer, fed by a projection of [norm(h);
 * norm(embedding)] (2h -> h, a TP-split linear), with its own pass through
 * the shared output layer and loss (cost_layer_range adds those); the MTP
 * stage builds its own copy of the input embedding (gpt_model.py: the
 * embedding is built where pre_process or mtp_process): none more when it
 * is the first stage too, or when the output layer is that embedding
 * (tied). */
static void mtp_cost(const model *m, const node_group *ng, const gen_constants *k,
                     const ep_mixed *em, const comm_link *tpl, const comm_link *cpl,
                     const strategy *s, int tp, int stack, bool first_stage, range_cost *out)
{
    const layer_spec *l = &m->layer[m->layers - 1];
    int cp = s->cp > 0 ? s->cp : 1;
    double tokens = (double)s->mbs * s->seq_len / cp;
    tf_gemm pg = {tokens, (double)l->hidden / tp, 2.0 * l->hidden, 1};
    double proj = compute_gemms_s(&ng->gpu, k, m->prec, precision_bytes(m->prec), &pg, 1);
    double e = tf_layer_expert_params(m, m->layers - 1);
    double eg = strategy_expert_split(s);   /* the expert weights' split */
    for (int j = 0; j < m->mtp_layers; j++) {
        range_cost one;
        memset(&one, 0, sizeof one);
        layer_cost(m, l, ng, k, em, tpl, cpl, s, tp, s->recompute, stack, &one);
        range_cost_add_work(out, &one);
        out->fwd_s += proj;
        out->bwd_s += 2.0 * proj;
        out->compute_s += 3.0 * proj;
        out->params += (tf_layer_params(m, m->layers - 1) - e) / tp + e / eg +
                       2.0 * l->hidden * (double)l->hidden / tp;
        out->expert_params += e / eg;
    }
    if (!first_stage && !m->tied_embeddings) {
        out->params += model_embedding_params(m, s->seq_len) / tp;
        out->vocab_params += model_embedding_params(m, s->seq_len) / tp;
    }
}

/* Full recompute of part of a range (Megatron-Core core_v0.15.0
 * TransformerBlock._checkpointed_forward, over the layers of one model
 * chunk -- a pipeline rank's, or one virtual stage's with interleaving;
 * cost_layer_range is called per chunk):
 *   block N: the first N layers run under a checkpoint (only their input
 *     is kept, their forward runs again in the backward), the others keep
 *     every activation and run once;
 *   uniform N: every layer is re-run; the layers go in groups of N from
 *     the chunk's first and only each group's input is kept;
 *   N = 0: every layer one by one (Megatron's uniform 1, the planner's
 *     "full").
 * Transient bytes while a checkpointed layer is re-run: its whole
 * activations (block, N = 0; the range's largest, as with every layer
 * recomputed), less what the layers kept in full have already freed (the
 * backward runs them first: they sit above the block, and each frees its
 * activations beyond its input); uniform N: a group's whole activations.
 * With one micro-batch in flight, block N = n - 1 then needs the same
 * memory as N = n, and fewer layers recomputed never need less: a stage's
 * memory is non-increasing in N (tests/test_search.c checks it).
 * The placer's per-layer tables cost each layer both ways, a range of one
 * layer as it stands and one without recompute, and its partitioner puts
 * the first cost_recompute_lead_layers() of each stage on the first
 * (partition.h "Leading layers"): evaluate()'s block split; under uniform
 * N it partitions whole groups of N (cost_recompute_group_layers), each
 * costed as a range of N layers. */
typedef struct range_recompute {
    int layers;         /* N; 0: every layer */
    bool uniform;
} range_recompute;

int cost_recompute_group_layers(const strategy *s)
{
    return s->recompute == RECOMPUTE_FULL && s->recompute_method == RECOMPUTE_UNIFORM &&
                   s->recompute_layers > 1
               ? s->recompute_layers
               : 1;
}

int cost_recompute_lead_layers(const strategy *s)
{
    return s->recompute == RECOMPUTE_FULL && s->recompute_method != RECOMPUTE_UNIFORM &&
                   s->recompute_layers > 0
               ? s->recompute_layers
               : 0;
}

/* Whether layer p (0-based in its range) re-runs its forward. */
static bool recomputed(const strategy *s, int p)
{
    int lead = cost_recompute_lead_layers(s);
    return s->recompute == RECOMPUTE_FULL && (lead == 0 || p < lead);
}

double cost_range_transient_bytes(const range_cost *r)
{
    double over = r->layer_buf_bytes - r->loss_bytes;
    double ws = r->act_peak_extra_bytes + (over > 0 ? over : 0);
    return ws > r->embed_bwd_bytes ? ws : r->embed_bwd_bytes;
}

void cost_layer_range(const model *m, const cluster *c, const cost_params *p,
                      const strategy *s, int group, int tp, int first, int n,
                      bool first_stage, bool last_stage, range_cost *out)
{
    cost_layer_range_on(m, &c->group[group], p, c->stack, s, tp, first, n, first_stage, last_stage,
                        out);
}

/* The first stage's embedding lookup: a memory-bound pass forward, twice its
 * time backward, the embedding table's parameters, sharded over tp, and its
 * backward's working set where the stack has one of its own
 * (memory_fsdp2_embedding_bwd_bytes). */
static void add_embedding_cost(const model *m, const gpu_spec *gpu, const gen_constants *k,
                               const strategy *s, int tp, int stack, double tokens,
                               range_cost *out)
{
    double emb = compute_memory_s(gpu, k, tokens * m->hidden * 2.0 * 2.0, 1);
    out->fwd_s += emb;
    out->bwd_s += 2.0 * emb;
    out->compute_s += 3.0 * emb;
    out->params += model_embedding_params(m, s->seq_len) / tp;
    out->vocab_params += model_embedding_params(m, s->seq_len) / tp;
    out->n_tensors += 1;
    out->embed_bwd_bytes = memory_fsdp2_embedding_bwd_bytes(stack_get(stack)->memory.gather, tp,
                                                            tokens, m->vocab, m->hidden);
}

/* The last stage's output head and loss (and each MTP layer's own head):
 * the vocabulary GEMM, the cross-entropy, the output weights unless tied to
 * the embedding on this same stage, and the loss's working set.  The GEMM
 * runs in 16 bits even in FP8 recipes, but in MXFP8 under Megatron-Core's
 * fp8_output_proj (model.fp8_output_proj, MXFP8 recipes only:
 * fp8_utils.py is_mxfp8_output_proj_active; gpt_model.py builds the output
 * layer as TELMHeadColumnParallelLinear, a TE Linear under the recipe's
 * autocast): the MXFP8 GEMM rate and 1-byte operands, and Transformer
 * Engine's quantization of its input forward and of the logits' gradient
 * backward (compute_fp8_cast_s), as a decoder layer's Linear. */
static void add_output_cost(const model *m, const gpu_spec *gpu, const gen_constants *k,
                            const strategy *s, int tp, int stack, double tokens,
                            bool first_stage, range_cost *out)
{
    tf_gemm lg = {tokens, (double)m->vocab / tp, m->hidden, 1};
    bool mx = m->fp8_output_proj && m->prec == PREC_MXFP8;
    double gemm = mx ? compute_gemms_s(gpu, k, m->prec, 1, &lg, 1)
                     : compute_gemms_s(gpu, k, precision_bytes(m->prec) == 1 ? PREC_BF16 : m->prec,
                                       2, &lg, 1);
    double cast_f = mx ? compute_fp8_cast_s(gpu, k, m->prec, &lg, 1, false) : 0;
    double cast_b = mx ? compute_fp8_cast_s(gpu, k, m->prec, &lg, 1, true) : 0;
    /* cross-entropy over fp32 logits: about three passes of 4 bytes */
    double ce = compute_memory_s(gpu, k, 12.0 * tokens * m->vocab / tp, 3);
    int heads = 1 + (m->mtp_layers > 0 ? m->mtp_layers : 0);   /* each MTP layer's own */
    out->fwd_s += heads * (gemm + cast_f + ce);
    out->bwd_s += heads * (2.0 * gemm + cast_b + ce);
    out->compute_s += heads * (3.0 * gemm + cast_f + cast_b + 2.0 * ce);
    if (!m->tied_embeddings || !first_stage) {
        out->params += (double)m->vocab * m->hidden / tp;
        out->vocab_params += (double)m->vocab * m->hidden / tp;
    }
    out->n_tensors += 1;
    /* the loss's working set, by the stack (memory_loss_bytes) */
    double loss = memory_loss_bytes(stack_get(stack)->memory.loss, tokens, m->vocab, m->hidden,
                                    tp, s->sp, m->loss_compiled);
    out->act_peak_extra_bytes += loss;
    out->loss_bytes += loss;
}

/* cost_layer_range_on(), with the EP groups of a member of a stage spanning
 * node groups when em is not NULL. */
static void range_on(const model *m, const node_group *ng, const ep_mixed *em,
                     const cost_params *p, int stack, const strategy *s, int tp, int first,
                     int n, bool first_stage, bool last_stage, range_cost *out)
{
    const gpu_spec *gpu = &ng->gpu;
    gen_constants kc;
    const gen_constants *k = &kc;
    int cp = s->cp > 0 ? s->cp : 1;
    comm_link tpl, cpl;
    range_cost one, kept;
    double tokens = (double)s->mbs * s->seq_len / cp;
    double max_layer_act = 0, a2a_buf = 0, cp_buf = 0;
    double full_act = 0, in_act = 0, freed = 0, group_act = 0, max_group_act = 0, max_sel = 0;
    bool have_one = false, have_kept = false;
    range_recompute rr = {cost_recompute_group_layers(s), cost_recompute_group_layers(s) > 1};
    int etp = s->etp > 1 ? s->etp : 1;
    int i;

    cost_constants(&kc, p, stack, gpu->gen);
    if (tp <= 0)
        tp = s->tp > 0 ? s->tp : 1;
    memset(out, 0, sizeof *out);
    tpl = comm_group_link(ng, k, tp, 1);
    cpl = comm_group_link(ng, k, cp, tp);
    memset(&one, 0, sizeof one);
    memset(&kept, 0, sizeof kept);
    for (i = first; i < first + n && i < m->layers; i++) {
        const layer_spec *l = &m->layer[i];
        int at = i - first;
        bool re = recomputed(s, at);
        if (i == first || !layer_spec_same(l, &m->layer[i - 1])) {
            full_act = layer_act_bytes(m, l, s, tp, RECOMPUTE_NONE, stack);
            in_act = layer_act_bytes(m, l, s, tp, RECOMPUTE_FULL, stack);
            if (s->recompute == RECOMPUTE_SELECTIVE &&
                full_act - layer_act_bytes(m, l, s, tp, RECOMPUTE_SELECTIVE, stack) > max_sel)
                max_sel = full_act - layer_act_bytes(m, l, s, tp, RECOMPUTE_SELECTIVE, stack);
            have_one = have_kept = false;
        }
        if (re && !have_one) {
            memset(&one, 0, sizeof one);
            layer_cost(m, l, ng, k, em, &tpl, &cpl, s, tp, s->recompute, stack, &one);
            have_one = true;
        } else if (!re && !have_kept) {
            memset(&kept, 0, sizeof kept);
            layer_cost(m, l, ng, k, em, &tpl, &cpl, s, tp,
                       s->recompute == RECOMPUTE_FULL ? RECOMPUTE_NONE : s->recompute, stack,
                       &kept);
            have_kept = true;
        }
        if (re && s->recompute == RECOMPUTE_FULL) {
            range_cost part = one;
            if (rr.uniform && at % rr.layers != 0)
                part.act_bytes = 0;          /* inside a group: its input is not kept */
            if (full_act > max_layer_act)
                max_layer_act = full_act;
            group_act = rr.uniform && at % rr.layers != 0 ? group_act + full_act : full_act;
            if (group_act > max_group_act)
                max_group_act = group_act;
            range_cost_add_work(out, &part);
        } else {
            freed += full_act - in_act;
            range_cost_add_work(out, re ? &one : &kept);
        }
        if (cost_cp_transient_bytes(l, s, tp, stack) > cp_buf)
            cp_buf = cost_cp_transient_bytes(l, s, tp, stack);
        if (l->moe && m->moe.experts > 0) {
            /* routed experts sharded over ep x etp (not over tp), the rest
             * over tp; the all-to-all's send and receive buffers of the layer
             * at work, and with etp > 1 the experts' partial outputs (etp x
             * the copies) before their reduce-scatter */
            double e = tf_layer_expert_params(m, i);
            double d = tf_moe_dispatch_bytes(m, l, tokens, tp);
            double a2a = 2.0 * d + (etp > 1 ? etp * d : 0);
            out->params += (tf_layer_params(m, i) - e) / tp + e / strategy_expert_split(s);
            out->expert_params += e / strategy_expert_split(s);
            if (a2a > a2a_buf)
                a2a_buf = a2a;
        } else {
            out->params += tf_layer_params(m, i) / tp;
        }
    }
    if (s->recompute == RECOMPUTE_SELECTIVE)
        max_layer_act = max_sel;   /* one layer's dropped bytes, re-run */
    else if (rr.uniform)
        max_layer_act = max_group_act;
    else if (s->recompute == RECOMPUTE_FULL)
        max_layer_act = max_layer_act > freed ? max_layer_act - freed : 0;
    /* the MoE all-to-all buffers and the CP K/V buffers live in different
     * parts of a layer: the larger of the two, apart from the working set
     * (cost_range_transient_bytes) */
    out->act_peak_extra_bytes = max_layer_act;
    out->layer_buf_bytes = a2a_buf > cp_buf ? a2a_buf : cp_buf;
    if (first_stage)
        add_embedding_cost(m, gpu, k, s, tp, stack, tokens, out);
    if (last_stage) {
        add_output_cost(m, gpu, k, s, tp, stack, tokens, first_stage, out);
        if (m->mtp_layers > 0)
            mtp_cost(m, ng, k, em, &tpl, &cpl, s, tp, stack, first_stage, out);
    }
}

void cost_layer_range_on(const model *m, const node_group *ng, const cost_params *p, int stack,
                         const strategy *s, int tp, int first, int n, bool first_stage,
                         bool last_stage, range_cost *out)
{
    range_on(m, ng, NULL, p, stack, s, tp, first, n, first_stage, last_stage, out);
}

void cost_layer_range_member(const model *m, const cluster *c, const node_group *view,
                             const cost_ep_span *eps, const cost_params *p, const strategy *s,
                             int tp, int first, int n, bool first_stage, bool last_stage,
                             range_cost *out)
{
    ep_mixed em = {c, p, c->stack, eps};
    range_on(m, view, eps != NULL && eps->n > 0 ? &em : NULL, p, c->stack, s, tp, first, n,
             first_stage, last_stage, out);
}

/* The slowest link between any group of stage a and any of stage b (the
 * pairs a boundary between stages spanning groups may cross), its latency
 * the largest. */
static double mixed_boundary_link(const cluster *c, const strategy *s, int a, int b,
                                  double *lat_out)
{
    int ga[STAGE_MIX_MAX], gb[STAGE_MIX_MAX], na[STAGE_MIX_MAX], nb[STAGE_MIX_MAX];
    int n = strategy_stage_members(s, a, ga, na, STAGE_MIX_MAX);
    int m = strategy_stage_members(s, b, gb, nb, STAGE_MIX_MAX);
    double bw = HUGE_VAL;
    *lat_out = 0;
    for (int x = 0; x < n; x++)
        for (int y = 0; y < m; y++) {
            double b2, l2;
            cluster_link_between(c, ga[x], gb[y], &b2, &l2);
            if (b2 < bw)
                bw = b2;
            if (l2 > *lat_out)
                *lat_out = l2;
        }
    return isfinite(bw) ? bw : 0;
}

double cost_boundary_bytes(const model *m, const strategy *s, int tp, int stack)
{
    int cp = s->cp > 0 ? s->cp : 1;
    double split = tp > 1 && stack_p2p_splits_tp(stack_get(stack), s->sp) ? tp : 1;
    return (double)s->mbs * s->seq_len / cp * m->hidden * precision_16bit_bytes(m->prec) / split;
}

double cost_kept_output_bytes(const model *m, const strategy *s, int tp, int stack)
{
    return memory_pipe_kept_output_bytes(stack_get(stack)->memory.pipe, s->pp, m->prec,
                                         (double)s->mbs * s->seq_len / (s->cp > 0 ? s->cp : 1),
                                         m->vocab, tp);
}

/* Whether the boundary after pipeline rank i (to rank i + 1, or the wrap to
 * rank 0) stays inside one NVLink domain of ng, whose `stride` = tp cp dp
 * GPUs per stage Megatron numbers consecutively (rank order tp-cp-ep-dp-pp,
 * pp outermost: core_v0.15.0 parallel_state.py initialize_model_parallel),
 * the domains being consecutive blocks of comm_nvlink_domain() GPUs: the
 * whole pipeline in one domain, or, on a one-group cluster, every pair of
 * GPUs that exchange (i stride + j and (i + 1) stride + j, j < stride: the
 * same tp, cp and dp coordinates) in the same block -- the slowest pair
 * paces the step, so a stride that does not divide the domain (tp 1 dp 32
 * on a 72-GPU NVL72 domain: stage 1 on GPUs 32-63, stage 2 on 64-95) sends
 * over the network where any replica's pair crosses. */
static bool boundary_in_domain(const cluster *c, const node_group *ng, double stride, int pp,
                               int i)
{
    double dom = comm_nvlink_domain(ng), next = (double)((i + 1) % pp);
    if (stride * pp <= dom)
        return true;
    if (c->n_groups != 1 || stride >= dom)
        return false;
    for (double j = 0; j < stride; j++)
        if (floor((i * stride + j) / dom) != floor((next * stride + j) / dom))
            return false;
    return true;
}

double cost_boundary_p2p_s(const model *m, const cluster *c, const cost_params *p,
                           const strategy *s, int i)
{
    int pp = s->pp > 0 ? s->pp : 1, cp = s->cp > 0 ? s->cp : 1, dp = s->dp > 0 ? s->dp : 1;
    int g, gn, tp;
    const node_group *ng;
    gen_constants kc;
    const gen_constants *k = &kc;
    double bytes, bw, lat;
    if (i < 0 || i >= pp || i >= STRATEGY_MAX_STAGES || c->n_groups < 1)
        return 0;
    g = s->stage[i].group >= 0 && s->stage[i].group < c->n_groups ? s->stage[i].group : 0;
    gn = s->stage[(i + 1) % pp].group;
    if (gn < 0 || gn >= c->n_groups)
        gn = g;
    tp = s->stage[i].tp > 0 ? s->stage[i].tp : (s->tp > 0 ? s->tp : 1);
    ng = &c->group[g];
    cost_constants(&kc, p, c->stack, ng->gpu.gen);
    bytes = cost_boundary_bytes(m, s, tp, c->stack);
    if (strategy_stage_mix(s, i) != NULL || strategy_stage_mix(s, (i + 1) % pp) != NULL) {
        bw = mixed_boundary_link(c, s, i, (i + 1) % pp, &lat);
        bw *= k->inter_eff > 0 ? k->inter_eff : 1.0;
    } else if (gn == g && boundary_in_domain(c, ng, (double)tp * cp * dp, pp, i)) {
        bw = comm_intra_bytes_per_s(ng, k);
        lat = ng->intra_latency_s;
    } else {
        cluster_link_between(c, g, gn, &bw, &lat);
        bw *= k->inter_eff > 0 ? k->inter_eff : 1.0;   /* unset (0): the link rate */
    }
    return comm_p2p_s(bw, lat, bytes);
}

