/* evaluate.h: one strategy's predicted step time, throughput and per-stage
 * memory -- per-stage costs (cost/layer_cost.h) run through the pipeline
 * schedule (schedule/pipeline.h), then the data-parallel reduce, optimizer
 * and per-step overheads.
 */
#ifndef PLANNER_SCHEDULE_EVALUATE_H
#define PLANNER_SCHEDULE_EVALUATE_H

#include "cost/layer_cost.h"
#include "schedule/pipeline.h"

/* Predicts `s` for `m` on `c`.  `s` must be valid for the model (see
 * strategy_check); the stages must cover every layer.  Always fills *out;
 * out->feasible says whether every stage fits its GPU's usable memory. */
void evaluate(const model *m, const cluster *c, const cost_params *p,
              const strategy *s, evaluation *out);

/* evaluate() without the pipeline simulation, for the search's prunes: the
 * memory and feasibility exactly, and for the step a lower bound: no rank
 * runs its micro-batches' forwards and backwards faster than one after the
 * other, so step_time_s = micro-batches x the slowest rank's forward +
 * backward + the optimizer, parameter gather and overhead evaluate() adds
 * (the rates follow from it; the time breakdown is left at 0). */
void evaluate_bound(const model *m, const cluster *c, const cost_params *p,
                    const strategy *s, evaluation *out);

/* Layer-range costs kept across evaluations, for the search: a range's
 * cost (cost_layer_range_on) is a function of the model, the parameters,
 * its node group, TP degree, layers and end-stage flags and the knobs a
 * layer's cost reads, so candidates that differ only in other knobs (the
 * ZeRO stage, the DP overlaps, vpp or pp where a range recurs) share it;
 * so do their model FLOPs per step (model_flops_per_step).
 * evaluate_with() and evaluate_bound_with() give the same results as
 * evaluate() and evaluate_bound(), bit for bit; a memo serves one model,
 * cluster and parameter set, which must not change while it is in use (it
 * starts over when it is given others).  NULL: none. */
typedef struct eval_memo eval_memo;
/* reasons false: an evaluation through the memo leaves out->reason empty
 * (formatting it is a fair share of a miss's evaluation; the search reads
 * only the figures and evaluates the plans it reports again).  NULL when
 * out of memory. */
eval_memo *eval_memo_new(bool reasons);
void eval_memo_free(eval_memo *memo);
long eval_memo_hits(const eval_memo *memo);   /* ranges it gave back */
void evaluate_with(const model *m, const cluster *c, const cost_params *p,
                   const strategy *s, evaluation *out, eval_memo *memo);
void evaluate_bound_with(const model *m, const cluster *c, const cost_params *p,
                         const strategy *s, evaluation *out, eval_memo *memo);

/* Most pp x vpp chunks evaluate() simulates per chunk. */
#define COST_CHUNKS_MAX 2048

/* The inputs evaluate() gives the pipeline simulation (pipeline.c), for the
 * outputs that replay it (--trace, --svg): per-rank forward/backward times of
 * one micro-batch, or per-chunk times (fwd_s[r * vpp + c]) when the chunks
 * of a rank hold different layer counts (the embedding/loss-accounting
 * split), the p2p time after each rank ([pp - 1]: the wrap-around), and
 * the stack's schedule (its warm-up: stack_pipe_warmup). */
typedef struct cost_schedule {
    stack_pipe pipe;
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

#endif
