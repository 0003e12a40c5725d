/* pipeline.h: pipeline schedules (1F1B, interleaved) simulated over the real
 * per-stage times; the events feed the step time, --trace and --svg. */
#ifndef PLANNER_PIPELINE_H
#define PLANNER_PIPELINE_H

#include "inputs/stack.h"
#include "model/strategy.h"

typedef enum sched_kind {
    SCHED_FORWARD, SCHED_BACKWARD, SCHED_SEND, SCHED_DP_COMM, SCHED_OPTIMIZER
} sched_kind;

typedef struct sched_event {
    sched_kind kind;
    int stage;          /* pipeline rank */
    int microbatch;     /* -1 for per-step events */
    int chunk;          /* virtual stage, 0 without interleaving */
    double start_s, end_s;
} sched_event;

typedef struct sched_events {
    sched_event *ev;    /* owned */
    int n;
    size_t cap;         /* events allocated (pl_grow) */
} sched_events;

void sched_events_free(sched_events *e);   /* frees contents; NULL-safe */

/* Simulates the pipeline schedule of strategy `s` (1F1B, or interleaved when
 * s->vpp > 1) from per-stage forward/backward times of one micro-batch
 * (fwd_s[i], bwd_s[i] for pipeline rank i, all chunks together) and the p2p
 * time of one boundary crossing (p2p_s[i]: between rank i and i+1).  Returns
 * the time from the first forward to the last backward; when `out` is not
 * NULL, appends every forward, backward and send as an event.  Each rank
 * warms up as the stack's schedule `pipe` does (stack_pipe_warmup, the
 * count memory_inflight holds activations by).  Returns a
 * negative value if the schedule cannot proceed (interleaving with
 * microbatches % pp != 0 can deadlock) or, with `out`, if out of memory.
 * Without `out` nothing is allocated (any pp <= STRATEGY_MAX_STAGES). */
double schedule_simulate(stack_pipe pipe, int pp, int vpp, int microbatches,
                         const double *fwd_s, const double *bwd_s, const double *p2p_s,
                         sched_events *out);

/* The same, with the p2p time of the wrap-around crossing of an interleaved
 * schedule (rank pp-1 chunk c -> rank 0 chunk c+1; schedule_simulate uses
 * p2p_s[0]), and each rank's finish time (its last backward) in rank_end_s
 * (pp entries, may be NULL).  p2p_s[i] is read for i < pp - 1 only.
 * Without `out`: exact (the same times as with `out`, to rounding), no
 * allocation, O(pp) state; O(pp) per position of a rank's 2 m vpp
 * operations, and once the steady state is detected to repeat (every rank in
 * its 1F1B phase, checked, not assumed) the remaining repetitions are added
 * in one step, so long runs cost about O(pp^2 vpp).  Returns -1 if
 * microbatches * vpp > 2^28. */
double schedule_simulate_ex(stack_pipe pipe, int pp, int vpp, int microbatches,
                            const double *fwd_s, const double *bwd_s, const double *p2p_s,
                            double p2p_wrap_s, double *rank_end_s, sched_events *out);

/* schedule_simulate_ex with per-chunk times: fwd_chunk_s[r vpp + c]
 * (bwd_chunk_s likewise) is one micro-batch's forward (backward) of virtual
 * chunk c on rank r, for chunks of unequal cost (the embedding in rank 0's
 * chunk 0, the output layer and loss in rank pp-1's chunk vpp-1, uneven
 * layer counts per chunk).  Equal chunks give schedule_simulate_ex's times
 * for fwd_s[r] = the sum of rank r's chunks.  The same engines, exactness
 * and no-allocation guarantee without `out`; pp vpp entries each. */
double schedule_simulate_chunks(stack_pipe pipe, int pp, int vpp, int microbatches,
                                const double *fwd_chunk_s, const double *bwd_chunk_s,
                                const double *p2p_s, double p2p_wrap_s, double *rank_end_s,
                                sched_events *out);

/* A few recent no-event simulations, for a caller that repeats them: in a
 * search, candidates that differ only in what the schedule does not see
 * (ZeRO stage 0/1/2, ...) have the same stage times; about a third of the
 * GPT-3 175B search's simulation work repeats one of the last 8 calls.
 * Owned by the caller (no allocation, about 64 KiB: keep it off small
 * stacks), one per thread; sched_cache_init() empties it. */
#define SCHED_CACHE_ENTRIES 8

typedef struct sched_cache_entry {
    stack_pipe pipe;
    int pp, vpp, m;             /* pp 0: unused */
    unsigned long used;         /* the cache's clock at the last use */
    double wrap_s, span_s;
    double in_s[3 * STRATEGY_MAX_STAGES];       /* fwd, bwd, p2p (pp - 1 read) */
    double rank_end_s[STRATEGY_MAX_STAGES];
} sched_cache_entry;

typedef struct sched_cache {
    sched_cache_entry e[SCHED_CACHE_ENTRIES];
    unsigned long clock;
    long hits, misses;
} sched_cache;

void sched_cache_init(sched_cache *c);

/* schedule_simulate_ex(pipe, pp, vpp, microbatches, fwd_s, bwd_s, p2p_s,
 * p2p_wrap_s, rank_end_s, NULL), answered from `c` when the same inputs
 * (bit for bit) were simulated recently, then bit-identical; `c` may be
 * NULL (no cache). */
double schedule_simulate_cached(sched_cache *c, stack_pipe pipe, int pp, int vpp,
                                int microbatches, const double *fwd_s, const double *bwd_s,
                                const double *p2p_s, double p2p_wrap_s, double *rank_end_s);

/* Closed forms for equal stages (tests, reports): bubble time of 1F1B is
 * (pp - 1)(t_f + t_b); interleaving divides it by vpp. */
double schedule_bubble_fraction(int pp, int vpp, int microbatches);

#endif
