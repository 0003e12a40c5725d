/* cost_chunks.h: the schedule evaluate() simulates for a plan, rebuilt for
 * its outputs (--trace, --svg): per-rank or per-chunk forward/backward
 * times of one micro-batch and the p2p times, so that a replay of the
 * schedule ends where evaluate()'s step does. */
#ifndef PLANNER_COST_CHUNKS_H
#define PLANNER_COST_CHUNKS_H

#include "cost.h"
#include "pipeline.h"

/* Most pp x vpp chunks evaluate() simulates per chunk (cost.c). */
#define COST_CHUNKS_MAX 2048

typedef struct cost_schedule {
    int pp, vpp, microbatches;
    bool chunked;               /* fwd/bwd are per chunk: fwd_s[r vpp + c] */
    double fwd_s[COST_CHUNKS_MAX], bwd_s[COST_CHUNKS_MAX];
    double p2p_s[STRATEGY_MAX_STAGES];  /* after rank i; [pp-1]: the wrap */
    double p2p_wrap_s;
} cost_schedule;

/* Fills *out (about 36 KiB: keep it off small stacks) with the inputs evaluate() gives the pipeline simulation for
 * plan (s, e), e being evaluate()'s result for s: per-rank times
 * (e->stage_fwd_s / stage_bwd_s, chunked false) unless s interleaves over
 * the embedding/loss-accounting split, then per-chunk times rebuilt from
 * cost_layer_range() exactly as cost.c builds them (each chunk's own
 * layers, the embedding in rank 0 chunk 0, the output layer and loss in
 * rank pp-1's last chunk; what the rank pays beyond its chunks' layers in
 * equal shares).  0, or -1 for a plan the simulation cannot hold. */
int cost_schedule_inputs(const model *m, const cluster *c, const cost_params *p,
                         const strategy *s, const evaluation *e, cost_schedule *out);

/* Simulates *in (pipeline.c, the engine evaluate() uses), appending events
 * to `events` when not NULL: the time from the first forward to the last
 * backward, each rank's finish in rank_end_s (may be NULL), or < 0. */
double cost_schedule_simulate(const cost_schedule *in, double *rank_end_s,
                              sched_events *events);

#endif
