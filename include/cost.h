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
#include "strategy.h"

/* Constants for one GPU generation. */
typedef struct gen_constants {
    double gemm_eff_max;        /* achieved/peak for large, square GEMMs */
    double gemm_half_flops;     /* GEMM size (FLOPs) at which efficiency halves */
    double attn_eff;            /* flash attention achieved/peak */
    double hbm_eff;             /* achieved/peak HBM bandwidth, memory-bound kernels */
    double intra_eff;           /* collective bus bandwidth / link rate, in a node */
    double inter_eff;           /* same, across nodes */
} gen_constants;

typedef struct cost_params {
    gen_constants gen[GEN_COUNT];
    double step_overhead_s;     /* fixed per-step cost (launch, data loader, sync) */
    double reserve_bytes;       /* CUDA context + NCCL + fragmentation per GPU */
    double frag_fraction;       /* allocator fragmentation, fraction of activations */
} cost_params;

/* Fills *p with the documented defaults. */
void cost_params_default(cost_params *p);

/* Predicts `s` for `m` on `c`.  `s` must be valid for the model (see
 * strategy_check); the stages must cover every layer.  Always fills *out;
 * out->feasible says whether every stage fits its GPU's usable memory. */
void evaluate(const model *m, const cluster *c, const cost_params *p,
              const strategy *s, evaluation *out);

/* Checks Megatron's rules for `s` on `m` (divisibility, SP needs tp > 1, ...).
 * Returns 0 if valid, else -1 with the broken rule in why. */
int strategy_check(const model *m, const strategy *s, char *why, int why_size);

/* Model FLOPs of one step (no recompute), the figure behind MFU. */
double model_flops_per_step(const model *m, int gbs, int seq_len);

#endif
