/* knobs.h: the plan knobs of a strategy, one row each: the one registry.
 *
 * A knob is a field of `strategy` (model/strategy.h) that a plan chooses:
 * tp, pp, dp, cp, ep, etp, vpp, mbs, sp, recompute, its layer count and method, the ZeRO
 * stage, the overlap flags, the embedding/loss accounting of the layer split.
 * Its row says everything an output needs: the key (in --fix, the JSON
 * reports, the sweep's CSV header and JSON Lines, validate's JSON), the
 * range, whether --fix takes it, its column in the plan table, and the
 * Megatron-LM flag(s) it becomes.  Its validity rule is knob_rule(), called
 * by strategy_check(), which the search, emit and validate all use.
 *
 * Adding a knob: a field in `strategy`, an id below (and an int in
 * strategy_constraints when --fix takes it), a row in knobs.c (and a case in
 * knob_rule() when Megatron constrains it), and its cost physics; every
 * output then carries it (tests/test_knobs.c checks each format).  See
 * docs/DESIGN.md "Adding a knob".
 */
#ifndef PLANNER_KNOBS_H
#define PLANNER_KNOBS_H

#include <stdbool.h>
#include <stddef.h>
#include <jansson.h>
#include "base/error.h"
#include "inputs/stack.h"
#include "model/strategy.h"

struct model;

/* The knobs, in output order (JSON, CSV, JSON Lines). */
typedef enum knob_id {
    KNOB_TP, KNOB_PP, KNOB_DP, KNOB_CP, KNOB_EP, KNOB_ETP, KNOB_VPP, KNOB_MBS,
    KNOB_SP, KNOB_RECOMPUTE, KNOB_RECOMPUTE_LAYERS, KNOB_RECOMPUTE_METHOD,
    KNOB_RECOMPUTE_MODULES, KNOB_ZERO,
    KNOB_OVERLAP_GRAD_REDUCE, KNOB_OVERLAP_PARAM_GATHER, KNOB_TP_COMM_OVERLAP,
    KNOB_ACCOUNT_EMBEDDING, KNOB_ACCOUNT_LOSS, KNOB_CP_COMM, KNOB_EP_COMM_OVERLAP,
    KNOB_CP_A2A, KNOB_GRAD_REDUCE_BF16, KNOB_CUDA_GRAPH, KNOB_SHARED_EXPERT_OVERLAP,
    KNOB_FLEX_DISPATCHER, KNOB_OPT_STATE, KNOB_TE_MOE_GRAPHS,
    KNOB_COUNT
} knob_id;

typedef enum knob_kind {
    KNOB_KIND_INT,           /* an int field */
    KNOB_KIND_BOOL,          /* a bool field: on/off in text, true/false in JSON */
    KNOB_KIND_RECOMPUTE, /* a recompute_mode field: none/selective/full */
    KNOB_KIND_CP_COMM,   /* a cp_comm_type field: p2p/a2a/all_gather/a2a+p2p */
    KNOB_KIND_NAMED,    /* an int field 0..max shown by name (knob_info.names) */
    KNOB_KIND_SET       /* an int field of bits, bit i named names[i]: "a+b", 0 "none" */
} knob_kind;

/* How emit turns the knob into Megatron flags. */
typedef enum knob_megatron {
    MEG_NONE,           /* no flag (dp: Megatron derives it from the world size) */
    MEG_INT,            /* `flag value`, always */
    MEG_INT_ABOVE_1,    /* `flag value` when value > 1 */
    MEG_SWITCH,         /* `flag` when on */
    MEG_EMIT            /* emit's own code for this knob (emit.c knob_args) */
} knob_megatron;

/* The section of the launch arguments a knob's flags belong to. */
typedef enum knob_section { KNOB_SEC_PARALLEL, KNOB_SEC_BATCH, KNOB_SEC_MEMORY } knob_section;

typedef struct knob_info {
    const char *key;        /* --fix key, JSON key, CSV column */
    knob_kind kind;
    int min, max;           /* valid values (bools 0..1, recompute 0..2) */
    size_t offset;          /* of the field in strategy */
    size_t fix_offset;      /* of its int in strategy_constraints; KNOB_NOT_FIXABLE */
    const char *table_head; /* plan table column header, NULL: not a column */
    int table_width;        /* its printf width */
    bool table_moe_only;    /* the column shows for MoE models only */
    const char *megatron;   /* its Megatron-LM flag(s), space separated */
    knob_megatron meg;
    knob_section meg_section;
    int meg_order;          /* place among the flags of its section */
    const char *what;       /* one line for people */
    const char *const *names;   /* KNOB_KIND_NAMED: the value names, 0..max;
                                   KNOB_KIND_SET: the bits' names */
} knob_info;

#define KNOB_NOT_FIXABLE ((size_t)-1)

/* -1 = free.  For booleans: -1 free, 0 off, 1 on.  One int per fixable knob
 * (knob_info.fix_offset), and gpus, which is not a knob. */
typedef struct strategy_constraints {
    int tp, pp, dp, cp, ep, vpp, mbs;
    int sp;
    int recompute;      /* recompute_mode or -1 */
    int zero;           /* 0..3 or -1 */
    int gpus;           /* use exactly this many GPUs, -1 = any */
    int overlap_grad_reduce, overlap_param_gather, tp_comm_overlap;   /* free: the
                           search turns each on where the rules allow */
    int recompute_layers;   /* with full recompute; free: the search's (fewest that fit) */
    int cp_comm;            /* cp_comm_type or -1 (free: searched with cp > 1) */
    int recompute_method;   /* recompute_method or -1 (free: block) */
    int recompute_modules;  /* RC_MOD_ bits or -1 (free: core_attn, or the
                               memory-saving modules when they fit) */
    int ep_comm_overlap;    /* free: on where the rules and the stack allow
                               (MoE, ep > 1) */
    int cp_a2a;             /* a2a+p2p's all-to-all level; free: the largest
                               that stays in one NVLink domain */
    int grad_reduce_bf16;   /* free: off (Megatron's fp32 main gradients for
                               a bf16 model); not searched: a numerics choice */
    int etp;                /* free: searched on MoE models (1 on dense ones) */
    int cuda_graph;         /* free: off; not searched: a full-iteration graph
                               needs static shapes (MoE: capacity-bounded
                               dispatch), the recipe's call */
    int shared_expert_overlap;  /* free: tried on MoE models with shared
                                   experts and dispatcher traffic, as the
                                   alternative to ep_comm_overlap */
    int flex_dispatcher;    /* free: searched off (the alltoall
                               dispatcher) and on (DeepEP/HybridEP) on MoE
                               blocks with ep > 1 whose stack has it */
    int opt_state;          /* opt_state_type; free: fp32; not searched: 16-bit
                               Adam state trades numerics for memory, the
                               recipe's call */
    int te_moe_graphs;      /* free: on where its rule and the space allow
                               and the graphs leave less host time than
                               the uncaptured layer (the flex dispatcher:
                               cost_te_moe_graphs_help) */
} strategy_constraints;

#define STRATEGY_CONSTRAINTS_INIT \
    {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, \
     -1, -1, -1, -1}

/* True when software stack st has value v of knob k (knobs a stack does not
 * restrict: always; NULL: every value).  The search tries only these
 * (search.c), and a --fix value must be one (constraints_stack_check). */
bool knob_stack_allows(const stack_spec *st, knob_id k, int v);
struct node_group;
/* The flex token dispatcher's backend on node group g's GPUs for Megatron-LM
 * release ver: "deepep" or "hybridep", or NULL when neither runs there
 * (model/knobs.c: the releases' and the GPUs' rules; g NULL: GPUs unknown,
 * the release's backend).  The search tries the flex dispatcher only where
 * there is one, emit writes it. */
const char *knob_flex_backend(megatron_version ver, const struct node_group *g);
/* Whether release ver's flex dispatcher is DeepEP (core_v0.15.0, its only
 * backend), not HybridEP (core_v0.16.0 and later).  The cost model takes
 * both as HybridEP, the backend of every validating run: the search marks
 * a DeepEP plan (strategy.flex_deepep), which then ranks as unvalidated. */
bool knob_flex_deepep(megatron_version ver);
/* The reason knob_flex_backend(ver, g) is NULL ("" when it is not). */
const char *knob_flex_backend_missing(megatron_version ver, const struct node_group *g);
/* Whether Megatron-Core re-runs an MoE layer's pre-MLP norm when selective
 * recompute names layernorm: not under the router graphs (te_moe_graphs)
 * with the flex dispatcher or the shared-expert overlap (model/knobs.c,
 * cited).  The rules refuse layernorm there (it would be claimed for
 * nothing), the search leaves it out of its memory-saving set, and the
 * cost (layer_cost.c) saves and re-runs the norm only where this holds. */
bool knob_moe_norm_recomputed(const struct model *m, const strategy *s);
/* Whether Megatron-LM release ver runs the shared-expert overlap
 * (--moe-shared-expert-overlap) with the flex token dispatcher: from
 * core_v0.18.0; earlier ones with the alltoall dispatcher only
 * (model/knobs.c).  The search tries the pair only there, emit refuses it
 * elsewhere. */
bool knob_shared_overlap_flex_release(megatron_version ver);
/* What --fix pins that release ver cannot run (the MoE router graphs
 * before core_v0.16.0, knob_te_moe_graphs_release; both the shared-expert
 * overlap and the flex dispatcher before core_v0.18.0), or NULL: a usage
 * error once the release is known. */
const char *knob_release_fix_conflict(const strategy_constraints *f, megatron_version ver);
/* Whether Megatron-LM release ver has the MoE router and preprocessing
 * graphs (te_moe_graphs: --cuda-graph-scope moe_router moe_preprocess):
 * from core_v0.16.0 (model/knobs.c).  The search tries them only there,
 * a --fix pin elsewhere is a usage error (knob_release_fix_conflict), emit
 * refuses them elsewhere. */
bool knob_te_moe_graphs_release(megatron_version ver);
/* The rules of s's own stack on knobs together (stack_spec.rules) that knob
 * k takes part in (knob_rule applies them; the search filters by them). */
planner_status knob_stack_rule(const struct model *m, const strategy *s, knob_id k,
                               planner_error *err);
/* torchtitan's layer-selective activation checkpointing that is s's full
 * recompute: 1 when it re-makes every block (mode "full"); N > 1 when, on
 * every pipeline rank, its block recompute of recompute_layers per chunk
 * checkpoints as many blocks in each chunk as torchtitan's selective_ac_option
 * N, which fully checkpoints every N-th block counted over the rank's
 * chunks in order (v0.2.2 distributed/activation_checkpoint.py
 * _apply_layer_sac, its process-wide _layer_sac_count; the blocks' places
 * differ, their count per chunk -- what the cost model reads -- does not);
 * the smallest such N; 0 when none (or not full recompute). */
int knob_ac_every_nth(const struct model *m, const strategy *s);

/* Whether strategy s (on model m) is one stack st runs: every knob's value
 * one st has (knob_stack_allows) and st's rules on knobs together
 * (stack_spec.rules, which knob_rule applies on s's own stack).  PLANNER_OK,
 * or PLANNER_E_INPUT with the reason. */
planner_status knobs_stack_check(const struct model *m, const strategy *s, const stack_spec *st,
                                 planner_error *err);

/* Checks that every knob f pins has its value in stack st
 * (knob_stack_allows: the stack's knob declarations in inputs/stack.c).
 * PLANNER_OK, or PLANNER_E_USAGE naming the first knob that does not and the
 * stack, e.g. "--fix vpp=2: the deepspeed stack has no vpp=2 (it has: 1)".
 * search_run calls it, so plan, size, sweep and validate refuse alike. */
planner_status constraints_stack_check(const strategy_constraints *f, const stack_spec *st,
                                       planner_error *err);

/* True when f pins any knob, or the GPU count. */
bool knobs_any_fixed(const strategy_constraints *f);

/* True when a and b agree on every knob. */
bool knobs_equal(const strategy *a, const strategy *b);

/* The row of knob k (k < KNOB_COUNT). */
const knob_info *knob_get_info(knob_id k);

/* The knob named `key`, or -1. */
int knob_find(const char *key);

/* Knob k's value in s (bools 0/1, recompute its mode) and its setter. */
int knob_value(const strategy *s, knob_id k);
void knob_set(strategy *s, knob_id k, int v);

/* Text of knob k's value in s: the number, on/off, or the recompute mode's
 * name (short: "sel" for the table).  Returns buf, which KNOB_TEXT_MAX
 * bytes hold whole. */
#define KNOB_TEXT_MAX 48   /* the longest: "core_attn+layernorm+mlp+moe_act+mla_up_proj" */
const char *knob_text(const strategy *s, knob_id k, bool short_form, char *buf, size_t size);

/* A new JSON value for knob k in s (integer, boolean or string), NULL when
 * out of memory. */
json_t *knob_json(const strategy *s, knob_id k);

/* Sets o[key] for knobs first .. last-1 in registry order.  0, or -1 when an
 * allocation fails. */
int knobs_json_set(json_t *o, const strategy *s, knob_id first, knob_id last);

/* Writes "tp,pp,...,account_loss" (the keys joined by `sep`) into buf;
 * returns the length it needs, like snprintf. */
int knobs_keys_join(char *buf, size_t size, const char *sep);

/* Writes the keys --fix takes (the fixable knobs', then "gpus") joined by
 * `sep` into buf; returns the length it needs, like snprintf. */
int knobs_fix_keys_join(char *buf, size_t size, const char *sep);

/* Megatron-LM core_v0.15.0's rule on knob k of s for model m
 * (../shared/reference/cost-model.md "Megatron-LM rules").  PLANNER_OK
 * when it holds, else PLANNER_E_INPUT with the broken rule in *err (err may
 * be NULL: then no message is formatted).  strategy_check() runs every
 * knob's rule, then the layer split's. */
planner_status knob_rule(const struct model *m, const strategy *s, knob_id k,
                         planner_error *err);

/* True when tensor parallelism of degree tp splits m's attention: heads %
 * tp == 0 and, with grouped-query attention (not MLA), the query groups too
 * (Megatron TransformerConfig: num_query_groups % tp == 0).  The tp rule of
 * knob_rule, and the search's list of tp values. */
bool knob_tp_splits_heads(const struct model *m, int tp);

/* Whether measured runs validate the cost of a knob's value: one row per
 * knob and value that the validation corpus
 * (../shared/validation/published-runs.json) exercises or does not.  A
 * value without a row is validated (the corpus exercises its cost).  The
 * outputs read it from here (knobs_unvalidated): the report marks a plan
 * that uses an unvalidated value, and the search counts its objective
 * SEARCH_VALIDATED_TIE lower per such value (knobs_unvalidated_count), so
 * a plan with fewer of them within that margin ranks first. */
typedef struct knob_validation {
    knob_id knob;
    int value;
    bool validated;
    const char *name;       /* what the value is in Megatron's terms; NULL for
                               the ZeRO stage, which each stack names
                               (stack_spec.zero_names) */
    const char *runs;       /* the corpus runs that exercise it, or "none" */
    bool and_above;         /* the row covers every value >= value */
} knob_validation;

/* The validation rows' value of the flex dispatcher with DeepEP
 * (strategy.flex_deepep): a value of its own, which no run validates. */
#define FLEX_DEEPEP 2

/* The row of knob k's value v, or NULL (then it is validated). */
const knob_validation *knob_validation_of(knob_id k, int v);

/* True when knob k's value v is validated (no row, or a validated row). */
bool knob_value_validated(knob_id k, int v);

/* The validation rows in registry order: *n gets their count. */
const knob_validation *knob_validation_rows(int *n);

/* How many of s's knob values no measured run validates: the count
 * knobs_unvalidated lists, found without formatting (the ranking's). */
int knobs_unvalidated_count(const strategy *s);

/* True when every knob value of s is validated (the count is 0). */
bool knobs_validated(const strategy *s);

/* Writes "zero=2 (Megatron-FSDP optim_grads)" for each unvalidated knob
 * value of s into buf, the ZeRO stage named by s's stack ("zero=2 (FSDP2
 * reshard_after_forward=False)" on pytorch-fsdp2, "(ZeRO stage 2)" on
 * deepspeed), joined by `sep` (names=false: "zero=2" only); "" when none.
 * Returns their count. */
int knobs_unvalidated(const strategy *s, bool names, const char *sep, char *buf, size_t size);

/* Parses "tp=8,pp=16,mbs=1,sp=on,recompute=selective,zero=1,gpus=64" into
 * *out (starting from *out's current values): every fixable knob's key, and
 * gpus.  PLANNER_E_USAGE with the message (no position: the caller adds
 * the option or the file's line) in *err; *out is untouched on failure. */
planner_status constraints_parse(strategy_constraints *out, const char *text,
                                 planner_error *err);

/* Pins in *dst every knob (and gpus) that *src pins and *dst leaves free. */
void constraints_fill(strategy_constraints *dst, const strategy_constraints *src);

#endif
