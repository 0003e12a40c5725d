/* params.h: the cost model's free constants.
 *
 * Constants only: the defaults come from cost_params_default()
 * (cost/layer_cost.h; src/cost/layer_cost.c says what they were fitted on),
 * or are fitted by `planner calibrate` and loaded with calibration_load().
 * Nothing else in the cost model is tunable.
 */
#ifndef PLANNER_COST_PARAMS_H
#define PLANNER_COST_PARAMS_H

#include "inputs/catalog.h"
#include "inputs/stack.h"

/* Constants for one GPU generation.  Each enters the step time linearly as
 * work / (peak x eff) (fit 1/eff), as a fixed time (fit it directly) or as a
 * fraction of a modelled time (fit it directly), so `planner calibrate` can
 * fit them by linear least squares.  Plausible ranges in brackets; the
 * defaults and what they were fitted on are in layer_cost.c. */
typedef struct gen_constants {
    double gemm_eff;            /* 16-bit GEMM math achieved / dense peak for
                                   large GEMMs [0.5, 0.85] */
    double attn_eff;            /* core attention achieved / 16-bit peak,
                                   causal half counted [0.05, 0.8]: low where
                                   the runs predate flash attention */
    double hbm_eff;             /* achieved / peak HBM bandwidth: element-wise
                                   kernels, GEMM operand traffic, FP8 casts,
                                   optimizer [0.6, 0.9] */
    double intra_eff;           /* collective bus bandwidth / NVLink rate
                                   (nccl-tests: A100 235/300, H100 368/450)
                                   [0.7, 0.9] */
    double inter_eff;           /* collective bus bandwidth / NIC rate
                                   [0.5, 0.95] */
    double kernel_s;            /* fixed cost per kernel (launch, tail) and per
                                   collective call, s [2e-6, 2e-5] */
    double fp8_gemm_eff;        /* FP8/FP4 GEMM math achieved / that format's
                                   dense peak [0.3, 0.8] */
    double overlap_exposed;     /* fraction of an overlapped collective's time
                                   that still lands on the critical path: the
                                   NCCL/userbuffer kernels take SMs and HBM
                                   bandwidth from the GEMMs they hide behind
                                   [0.05, 0.5] */
    double step_overhead_s;     /* fixed per-step time outside the modelled
                                   work (host: scheduler, data loader,
                                   logging, Python between kernels) of a
                                   current stack on this generation's
                                   servers, s [0, 0.1]; a stack's own
                                   extra time is stack_constants'.  A plan
                                   over several generations pays the
                                   largest of its stages' */
    double moe_host_s;          /* host time of one MoE layer's forward per
                                   micro-batch that lands on the critical
                                   path, s (the backward pays twice it):
                                   Megatron's token dispatcher copies the
                                   tokens per expert to the host (the
                                   all-to-all splits, TE's grouped-GEMM
                                   m_splits) and waits for them, so the
                                   CPU can no longer run ahead and the
                                   layer's ~200 launches of router,
                                   permutation, all-to-alls and per-expert
                                   quantize + GEMM show on the GPU's
                                   timeline [0, 5e-3]; dense layers pay
                                   nothing (no sync: the host runs ahead) */
    double overlap_exposed_net; /* overlap_exposed of a collective whose
                                   group spans nodes (NIC-bound): its NCCL
                                   kernels hold a few SMs and move ~50 GB/s
                                   of HBM traffic, far less than an NVLink
                                   collective's ~400 GB/s, so the compute it
                                   hides behind slows less [0.02, 0.5].
                                   Applied to the data-parallel collectives
                                   (ZeRO 0-3, evaluate.c) only: the CP ring
                                   and the MoE all-to-all keep
                                   overlap_exposed (docs/cost-model.md) */
} gen_constants;

/* Constants of one software stack (inputs/stack.h): what its software pays
 * on any GPU, fitted like the generations' (`planner calibrate`, named
 * STACK.FIELD).  Defaults and what they were fitted on: layer_cost.c. */
typedef struct stack_constants {
    double attn_eff;            /* core attention achieved / 16-bit peak,
                                   causal half counted, of a stack whose
                                   attention is unfused (STACK_ATTN_UNFUSED:
                                   batched GEMMs around a fused softmax over
                                   the s x s scores) [0.05, 0.5]; a flash
                                   stack uses the generation's attn_eff */
    double step_overhead_s;     /* host time per step of a stack with its
                                   own (stack_spec.own_host_time; no
                                   built-in stack has), in place of the
                                   generation's, s [0, 1] */
} stack_constants;

/* The memory reserve lives in two documented parts and nowhere else: the
 * catalog's usable_mem_bytes already leaves 2 GiB of the framework-visible
 * memory for the CUDA context (~0.5-1 GiB) and the first NCCL communicator's
 * buffers (src/inputs/catalog.c); reserve_bytes adds the rest of the per-process
 * fixed overhead (cuBLAS/cuBLASLt and Transformer Engine workspaces, the
 * buffers of the further TP/PP/DP/CP communicators), and frag_fraction the
 * caching allocator's fragmentation, proportional to the activations. */
typedef struct cost_params {
    gen_constants gen[GEN_COUNT];
    stack_constants stack[STACK_COUNT];
    double reserve_bytes;       /* per GPU beyond the catalog's usable memory:
                                   workspaces, further NCCL communicators
                                   [0.5, 3] GiB */
    double frag_fraction;       /* allocator fragmentation, fraction of
                                   activations [0.05, 0.2] */
} cost_params;

#endif
