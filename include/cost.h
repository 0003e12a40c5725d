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

/* Constants for one GPU generation.  Each enters the step time linearly as
 * work / (peak x eff) (fit 1/eff) or as a fixed time (fit it directly), so
 * `planner calibrate` can fit them by linear least squares. */
typedef struct gen_constants {
    double gemm_eff;            /* GEMM math achieved/peak (large GEMMs) */
    double attn_eff;            /* flash attention achieved/peak */
    double hbm_eff;             /* achieved/peak HBM bandwidth: element-wise
                                   kernels, GEMM operand traffic, optimizer */
    double intra_eff;           /* collective bus bandwidth / NVLink rate */
    double inter_eff;           /* collective bus bandwidth / NIC rate */
    double kernel_s;            /* fixed cost per kernel (launch, tail), s */
} gen_constants;

typedef struct cost_params {
    gen_constants gen[GEN_COUNT];
    double step_overhead_s;     /* fixed per-step cost (launch, data loader, sync) */
    double reserve_bytes;       /* per GPU beyond the catalog's usable memory:
                                   NCCL buffers, cuBLAS workspaces */
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
    double params;                  /* parameters held by one GPU */
    double act_bytes;               /* kept activations, one micro-batch */
    double act_peak_extra_bytes;    /* transient working set (logits, recompute) */
    int n_tensors;                  /* weight tensors (ZeRO-3 collectives) */
} range_cost;

void cost_layer_range(const model *m, const cluster *c, const cost_params *p,
                      const strategy *s, int group, int tp, int first, int n,
                      bool first_stage, bool last_stage, range_cost *out);

#endif
