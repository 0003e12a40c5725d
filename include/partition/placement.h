/* placement.h: pipeline stages on node groups, layers on stages.
 *
 * A placement lists, in pipeline order, runs of stages on node groups
 * ("3 stages on p3, then 1 on g4dn"): each stage's tp x cp x dp GPUs sit in
 * one group (TP and DP groups never span GPU types), and a group hosts at
 * most GPUs / (tp cp dp) stages.  The placer turns a placement and a
 * strategy's knobs into the strategy's stage list: each stage's group and
 * TP degree from the placement, its layers from the partitioner
 * (partition.h), with per-layer costs from cost_layer_range() on each
 * stage's own GPU type, memoized per group and every knob the layer costs
 * read (tp, cp, mbs, seq, sp, recompute, the overlaps, ep, etp, ...) within
 * one placer (one search).
 */
#ifndef PLANNER_PLACEMENT_H
#define PLANNER_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include "schedule/evaluate.h"
#include "partition/partition.h"

#define PLACEMENT_MAX_PARTS 8

typedef struct placement_part {
    int group;          /* index into cluster.group */
    int n_stages;       /* consecutive pipeline stages on it, >= 1 */
    int tp;             /* TP degree of these stages (0: the strategy's) */
} placement_part;

/* packed: the parts' groups (n_stages unused, tp the strategy's) are one
 * row of GPUs in that order and its pp stages of tp cp dp GPUs are laid
 * along it from the start, so a stage may span a group boundary (AMP's
 * mixed data-parallel replicas, Li et al., NeurIPS 2022); at most
 * PLACEMENT_MAX_PACKED groups. */
#define PLACEMENT_MAX_PACKED 4
typedef struct placement {
    int n_parts;
    placement_part part[PLACEMENT_MAX_PARTS];
    bool packed;
    int pp;             /* packed: the stages */
} placement;

/* Stages in all (the pipeline depth). */
int placement_stages(const placement *pl);

/* GPUs a placement uses with cp x dp per stage. */
long placement_gpus(const placement *pl, int tp, int cp, int dp);

/* The runs of s's stages (group changes start a new part; stages spanning
 * groups: the packed placement of its groups in rank order).  0, or -1 when
 * s has more runs than PLACEMENT_MAX_PARTS or no stages. */
int placement_from_strategy(const strategy *s, placement *out);

/* Placements over two or more node groups of `c` for stages of tp x cp x dp
 * GPUs, written to out[0..cap) in a deterministic order; returns how many.
 * Every ordered choice of 2 or more groups (all orders for up to 4 groups;
 * with more, the groups sorted by usable memory, then peak FLOP/s, and the
 * prefixes of that order).  Each group hosts as many stages as it has room
 * for (GPUs / (tp cp dp)), or, when `want_pp` > 0, any counts that add up
 * to want_pp.  Placements deeper than max_stages are left out; at most
 * `cap` are made (the first ones in this order). */
int placement_enumerate(const cluster *c, int tp, int cp, int dp, int max_stages,
                        int want_pp, placement *out, int cap);

/* Packed placements (see placement): for every ordered choice of 2 or more
 * groups (placement_enumerate's orders, up to PLACEMENT_MAX_PACKED
 * groups), pp = want_pp (> 0) or as many stages as the groups' GPUs hold,
 * kept when the last group is used and some stage spans a group boundary
 * (the others are placement_enumerate's). */
int placement_enumerate_packed(const cluster *c, int tp, int cp, int dp, int max_stages,
                               int want_pp, placement *out, int cap);

/* The groups stage q of packed placement pl (stages of `unit` GPUs) spans,
 * in rank order, into *out (out->n: 1 when it sits in one group); 0, or -1
 * when it spans more than STAGE_MIX_MAX or lies beyond the groups. */
int placement_stage_members(const cluster *c, const placement *pl, long unit, int q,
                            stage_mix *out);

/* "p3 x3 + g4dn x1" (packed: "p3 + g4dn packed") into buf. */
void placement_describe(const cluster *c, const placement *pl, char *buf, size_t size);

typedef struct placer placer;

typedef struct placer_stats {
    long partitions;        /* partition problems solved */
    long ilp_solves;        /* of those, by the ILP */
    long ilp_not_optimal;   /* ILP stopped by its time limit (best found used) */
    long ilp_fallbacks;     /* ILP gave no split: the DP's was used */
    long cost_misses;       /* per-layer cost tables computed */
    long cost_hits;         /* ... and reused */
    long limit_stops;       /* calls the work limit stopped (placer_set_work_limit) */
} placer_stats;

/* A placer for one search.  use_ilp: partition with partition_ilp() (its
 * fill objective, time limit ilp_time_limit_s per solve), else the DP.
 * Returns NULL when out of memory.  Borrowed inputs must outlive it. */
placer *placer_new(const model *m, const cluster *c, const cost_params *p, bool use_ilp,
                   double ilp_time_limit_s);
void placer_free(placer *pc);   /* NULL-safe */
const placer_stats *placer_get_stats(const placer *pc);

/* The placer's work: DP inner-loop steps plus L per per-layer cost table
 * built, over all calls.  With a limit > 0, a call that would go past it
 * stops: placer_place() fails and counts it in placer_stats.limit_stops (0 =
 * no limit, the default). */
void placer_set_work_limit(placer *pc, long long steps);
long long placer_work(const placer *pc);

/* Forgets the per-layer cost tables (the next calls build them anew and
 * count their work again): a search's block run after it costs the same
 * work whatever the placer served before (search.c, PARALLEL). */
void placer_forget(placer *pc);

/* When no split fits: on (the default), the split whose worst stage is the
 * least over its memory (a search's closest miss: its advice names what
 * that stage needs); off, the fastest split (cheaper, for searches that
 * already hold a feasible plan and so will never report a miss). */
void placer_balance_misses(placer *pc, bool on);

/* Whether memory may have shaped the last placer_place's split: false only
 * when the DP's split has the least bottleneck of any split of these knobs,
 * memory ignored (partition_result.cut_time_s); true after the ILP, a split
 * that did not fit, or a failure. */
bool placer_memory_shaped(const placer *pc);

/* Fills s->stage[] and s->n_stages (= s->pp, set by the caller to
 * placement_stages(pl)) for s's tp, cp, dp, mbs, gbs, seq_len, sp,
 * recompute, zero and tp_comm_overlap: groups and TP from `pl`, layers from
 * the partitioner (the least bottleneck that fits every stage's memory; when
 * nothing fits, see placer_balance_misses; evaluate() then reports the
 * miss).  vpp must be 1.  Returns PLANNER_OK; PLANNER_E_INPUT when it
 * cannot (the reason in *err; when the work limit stopped it, that is the
 * reason and placer_stats.limit_stops counts it); PLANNER_E_INTERNAL when
 * out of memory.  err may be NULL (no message is formatted). */
planner_status placer_place(placer *pc, const placement *pl, strategy *s, planner_error *err);

/* The same with the solver chosen per call (the search screens with the DP
 * and re-partitions the plans that may rank with the ILP). */
planner_status placer_place_with(placer *pc, const placement *pl, strategy *s, bool use_ilp,
                                 planner_error *err);

#endif
