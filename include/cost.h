/* cost.h: the cost model's entry point and its free constants.
 *
 * evaluate() predicts the step time and per-stage memory of one strategy for
 * one model on one cluster.  Its constants live in cost_params: defaults from
 * cost_params_default(), or fitted by `planner calibrate` and loaded with
 * calibration_load().  Nothing else in the cost model is tunable.
 */
#ifndef PLANNER_COST_H
#define PLANNER_COST_H

#include "catalog.h"
#include "cluster.h"
#include "model.h"
#include "pipeline.h"
#include "strategy.h"

/* Constants for one GPU generation.  Each enters the step time linearly as
 * work / (peak x eff) (fit 1/eff), as a fixed time (fit it directly) or as a
 * fraction of a modelled time (fit it directly), so `planner calibrate` can
 * fit them by linear least squares.  Plausible ranges in brackets; the
 * defaults and what they were fitted on are in cost.c. */
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
                                   logging, Python between kernels), s;
                                   physically [0, 0.05] for a tuned modern
                                   stack.  Fitted per generation, it also
                                   absorbs what the corpus's software of
                                   that era paid and the model does not
                                   see (cost.c): calibrate it for your
                                   stack.  A plan over several generations
                                   pays the largest of its stages' */
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
} gen_constants;

/* The memory reserve lives in two documented parts and nowhere else: the
 * catalog's usable_mem_bytes already leaves 2 GiB of the framework-visible
 * memory for the CUDA context (~0.5-1 GiB) and the first NCCL communicator's
 * buffers (src/catalog.c); reserve_bytes adds the rest of the per-process
 * fixed overhead (cuBLAS/cuBLASLt and Transformer Engine workspaces, the
 * buffers of the further TP/PP/DP/CP communicators), and frag_fraction the
 * caching allocator's fragmentation, proportional to the activations. */
typedef struct cost_params {
    gen_constants gen[GEN_COUNT];
    double reserve_bytes;       /* per GPU beyond the catalog's usable memory:
                                   workspaces, further NCCL communicators
                                   [0.5, 3] GiB */
    double frag_fraction;       /* allocator fragmentation, fraction of
                                   activations [0.05, 0.2] */
} cost_params;

/* Fills *p with the documented defaults. */
void cost_params_default(cost_params *p);

/* Predicts `s` for `m` on `c`.  `s` must be valid for the model (see
 * strategy_check); the stages must cover every layer.  Always fills *out;
 * out->feasible says whether every stage fits its GPU's usable memory. */
void evaluate(const model *m, const cluster *c, const cost_params *p,
              const strategy *s, evaluation *out);

/* Most pp x vpp chunks evaluate() simulates per chunk. */
#define COST_CHUNKS_MAX 2048

/* The inputs evaluate() gives the pipeline simulation (pipeline.c), for the
 * outputs that replay it (--trace, --svg): per-rank forward/backward times of
 * one micro-batch, or per-chunk times (fwd_s[r * vpp + c]) when the chunks
 * of a rank hold different layer counts (the embedding/loss-accounting
 * split), and the p2p time after each rank ([pp - 1]: the wrap-around). */
typedef struct cost_schedule {
    int pp, vpp, microbatches;
    bool chunked;
    double fwd_s[COST_CHUNKS_MAX], bwd_s[COST_CHUNKS_MAX];
    double p2p_s[STRATEGY_MAX_STAGES];
    double p2p_wrap_s;
} cost_schedule;

/* evaluate(), also filling *sched (about 36 KiB: keep it off small stacks)
 * with the schedule it simulated when sched is not NULL. */
void evaluate_schedule(const model *m, const cluster *c, const cost_params *p,
                       const strategy *s, evaluation *out, cost_schedule *sched);

/* Simulates *in with the engine evaluate() uses, appending events to
 * `events` when not NULL: the time from the first forward to the last
 * backward, each rank's finish in rank_end_s (may be NULL), or < 0. */
double cost_schedule_simulate(const cost_schedule *in, double *rank_end_s,
                              sched_events *events);

/* Checks Megatron's rules for `s` on `m` (divisibility, SP needs tp > 1, ...).
 * Returns 0 if valid, else -1 with the broken rule in why. */
int strategy_check(const model *m, const strategy *s, char *why, int why_size);

/* Model FLOPs of one step (no recompute), the figure behind MFU. */
double model_flops_per_step(const model *m, int gbs, int seq_len);

/* Time and memory of the contiguous decoder layers [first, first + n) on one
 * GPU of node group `group` under strategy `s` (its tp, cp, mbs, seq_len, sp,
 * recompute, zero; `tp` overrides s->tp when > 0), for one micro-batch; the
 * embedding when `first_stage`, the output layer, logits and loss when
 * `last_stage`.  For partitioners: a stage's cost is the sum of its ranges.
 * Memory holds weights, grads and optimizer states of the range and ONE
 * micro-batch of activations (act_bytes); the caller multiplies by the
 * micro-batches in flight (memory_inflight). */
typedef struct range_cost {
    double fwd_s, bwd_s;            /* incl. recompute and exposed TP comm */
    double compute_s;               /* GEMMs, attention, element-wise (fwd + bwd) */
    double recompute_s;             /* re-forward */
    double tp_comm_s;               /* exposed TP/SP collectives (fwd + bwd) */
    double ep_comm_s;               /* MoE all-to-all dispatch + combine (fwd + bwd) */
    double params;                  /* parameters held by one GPU */
    double expert_params;           /* of which routed-expert parameters (their
                                       grads reduce over tp cp dp / ep ranks) */
    double act_bytes;               /* kept activations, one micro-batch */
    double act_peak_extra_bytes;    /* transient working set (logits, recompute) */
    int n_tensors;                  /* weight tensors (ZeRO-3 collectives) */
} range_cost;

void cost_layer_range(const model *m, const cluster *c, const cost_params *p,
                      const strategy *s, int group, int tp, int first, int n,
                      bool first_stage, bool last_stage, range_cost *out);

/* p2p time of one micro-batch's activations crossing the boundary after
 * pipeline rank i (to rank i+1; for i = pp-1 the wrap-around to rank 0 of
 * an interleaved schedule): b s / cp x h / tp elements at the model's
 * activation width, over NVLink when the whole pipeline sits in one NVLink
 * domain of one node group, else over the link between the two ranks' node
 * groups (cluster_link_between), efficiency applied. */
double cost_boundary_p2p_s(const model *m, const cluster *c, const cost_params *p,
                           const strategy *s, int i);

#endif
