/* emit.h: launch material for a plan: Megatron-LM arguments, an sbatch
 * script, a torchrun command, for one Megatron-LM release (core_v0.15.0 ..
 * core_v0.19.0).  Every flag exists in the chosen release
 * (tests/data/megatron-flags/, checked by the tests).  On the pytorch-fsdp2
 * stack: torchtitan's job config (out/emit_torchtitan.h) and the scripts
 * that run torchtitan's trainer with it. */
#ifndef PLANNER_EMIT_H
#define PLANNER_EMIT_H

#include <stdio.h>
#include <stdbool.h>
#include "inputs/cluster.h"
#include "inputs/stack.h"
#include "inputs/model.h"
#include "model/strategy.h"

typedef enum emit_kind {
    EMIT_NONE, EMIT_MEGATRON, EMIT_SLURM, EMIT_TORCHRUN, EMIT_TORCHTITAN, EMIT_DEEPSPEED
} emit_kind;

/* Whether `kind` launches stack `st` (NULL: megatron-core): megatron on the
 * Megatron-LM stacks (inputs/stack.h stack_megatron_launch), torchtitan on
 * pytorch-fsdp2 (stack_torchtitan_launch), deepspeed (the DeepSpeed config,
 * out/emit_deepspeed.h) on deepspeed, slurm and torchrun on all of them.
 * The one rule: the tool and emit_write ask it. */
bool emit_kind_supported(emit_kind kind, const stack_spec *st);

/* "megatron", "slurm", "torchrun", "torchtitan", "deepspeed" ("none", "?"). */
const char *emit_kind_name(emit_kind kind);

/* The Megatron-LM releases (megatron_version) are inputs/stack.h's. */

/* Writes the launch material of `kind` for plan `pl`, for Megatron-LM release
 * `ver` (on pytorch-fsdp2: for torchtitan TORCHTITAN_RELEASE, `ver` unused).
 * Returns PLANNER_OK; PLANNER_E_INPUT when the plan cannot be expressed
 * (emit_check's rule, or what the flags cannot carry: the reason in *err),
 * having written nothing; PLANNER_E_INTERNAL out of memory.  err may
 * be NULL. */
planner_status emit_write(FILE *out, emit_kind kind, megatron_version ver, const model *m,
                          const cluster *c, const plan *pl, planner_error *err);

/* Checks plan `pl` against Megatron-LM core_v0.15.0's rules: strategy_check()
 * (model/strategy.h, the rules the search and validate apply, one per knob
 * in model/knobs.c), then what Megatron cannot launch though the plan is
 * valid (stages with their own TP or DP degree).  Returns PLANNER_OK, or
 * PLANNER_E_INPUT with the broken rule in *err.  emit_write calls it first. */
planner_status emit_check(const model *m, const cluster *c, const plan *pl, planner_error *err);

/* Nodes and processes per node the plan launches on: the GPUs it uses
 * (tp cp dp pp) over the GPUs per node of the node groups its stages sit on.
 * Returns PLANNER_OK, or PLANNER_E_INPUT with the reason in *err (groups with
 * different GPUs per node, or a GPU count that does not fill whole nodes). */
planner_status emit_launch_shape(const cluster *c, const plan *pl, int *nodes,
                                 int *procs_per_node, planner_error *err);

/* One component of the launch: a run of consecutive ranks on one node
 * group (whole stages, or the part of a stage spanning groups that sits on
 * it).  Megatron orders ranks tp-cp-ep-dp-pp (pp outermost), so stage i owns
 * global ranks [i tp cp dp, (i+1) tp cp dp); components in rank order with
 * node ranks assigned in the same order put every rank on its group. */
typedef struct emit_component {
    int group;              /* index into cluster.group */
    int first_stage;        /* first pipeline stage of the run */
    int n_stages;
    int nodes;              /* whole nodes of the group it needs */
    int gpus_per_node;      /* processes per node (the group's GPUs per node) */
    int first_node;         /* node rank of its first node (sum of earlier nodes) */
    long first_rank;        /* global rank of its first process */
    long gpus;              /* its processes (ranks) */
} emit_component;

/* Splits plan `pl` into launch components (at most `max`, written to out[],
 * count in *n).  Returns PLANNER_OK, or PLANNER_E_INPUT with the reason in
 * *err: stages with different TP or DP degrees (Megatron has one of each), a
 * component that does not fill whole nodes, or more nodes than a group has.
 * A plan on one group gives one component (nodes from emit_launch_shape). */
planner_status emit_components(const cluster *c, const plan *pl, emit_component *out, int max,
                               int *n, planner_error *err);

#endif
