/* strategy.h: one parallel training layout, and what the cost model predicts
 * for it.
 *
 * Megatron's rank order is tp-cp-ep-dp-pp (TP fastest): N = tp * cp * dp * pp,
 * EP is carved out of DP.  The MoE layers regroup each stage's tp cp dp ranks
 * as etp-ep-edp (parallel_state.py initialize_model_parallel, the expert
 * grid: expert tensor parallelism fastest, then expert parallelism, then
 * the expert-data-parallel group), so ep x etp divides tp x cp x dp.
 * `stage[i]` is pipeline rank i: the node group that
 * hosts it and how many decoder layers it holds (over all its virtual chunks).
 */
#ifndef PLANNER_STRATEGY_H
#define PLANNER_STRATEGY_H

#include <stdbool.h>
#include "base/error.h"

#define STRATEGY_MAX_STAGES 256
#define STRATEGY_MAX_CHUNKS 512     /* virtual stages (pp x vpp) of a layout */

typedef enum recompute_mode {
    RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL
} recompute_mode;

/* Megatron --cp-comm-type (Transformer Engine's context-parallel attention,
 * megatron/core/transformer/transformer_config.py cp_comm_type): p2p, the
 * ring exchange of K/V blocks overlapped with attention (the default); a2a,
 * DeepSpeed-Ulysses all-to-alls that scatter the heads and gather the
 * sequence (heads and K/V heads per TP rank divisible by cp); all_gather,
 * the whole sequence's K/V gathered before attention, not overlapped;
 * a2a+p2p, hierarchical: all-to-alls inside groups of strategy.cp_a2a
 * consecutive cp ranks, the ring across the cp / cp_a2a groups
 * (--hierarchical-context-parallel-sizes cp_a2a cp/cp_a2a). */
typedef enum cp_comm_type {
    CP_COMM_P2P, CP_COMM_A2A, CP_COMM_ALLGATHER, CP_COMM_A2A_P2P, CP_COMM_COUNT
} cp_comm_type;

/* The node groups one pipeline stage spans when its tp x cp x dp GPUs do
 * not sit in one group (a stage laid across a group boundary: AMP's mixed
 * data-parallel replicas, Li et al., NeurIPS 2022), in rank order. */
#define STAGE_MIX_MAX 4             /* node groups one stage may span */
#define STRATEGY_MAX_MIXES 8        /* stages spanning groups in one strategy */
typedef struct stage_mix {
    int stage;                      /* the pipeline rank it describes */
    int n;                          /* groups spanned, 2 .. STAGE_MIX_MAX */
    int group[STAGE_MIX_MAX];       /* indices into cluster.group */
    int gpus[STAGE_MIX_MAX];        /* the stage's GPUs on each */
} stage_mix;

/* Which layers full recompute checkpoints (Megatron-Core
 * TransformerBlock._checkpointed_forward, per model chunk): block, the
 * first recompute_layers of each (virtual) pipeline chunk, the rest keep
 * their activations; uniform, every layer, in groups of recompute_layers
 * whose input alone is kept. */
typedef enum recompute_method { RECOMPUTE_BLOCK, RECOMPUTE_UNIFORM } recompute_method;

/* The dtype of Adam's state (the opt_state knob): fp32 moments (and fp32
 * main weights), bf16 moments with 16-bit main-weight storage, or fp32
 * moments with 16-bit main-weight storage (cost/memory.h
 * memory_optimizer_bytes) */
typedef enum opt_state_type { OPT_STATE_FP32, OPT_STATE_BF16, OPT_STATE_FP32_REM } opt_state_type;

/* Selective recompute's modules (Megatron-Core core_v0.15.0
 * --recompute-modules, TransformerConfig.recompute_modules): the bits of
 * strategy.recompute_modules; 0 with selective recompute is Megatron's
 * default, core_attn.  moe and shared_experts are not modelled. */
enum {
    RC_MOD_CORE_ATTN = 1,   /* core attention (flash: its forward again, no memory) */
    RC_MOD_LAYERNORM = 2,   /* the norms' outputs (with TE, the MoE pre-MLP norm) */
    RC_MOD_MLP = 4,         /* the dense MLP (checkpointed) */
    RC_MOD_MOE_ACT = 8,     /* the routed experts' activation function */
    RC_MOD_MLA_UP_PROJ = 16 /* MLA's q/kv up-projections and RoPE (their Q, K, V) */
};
#define RC_MOD_ALL 31

typedef struct stage_spec {
    int group;          /* index into cluster.group (a stage spanning
                           groups, strategy.mix: the first) */
    int first_layer;    /* first decoder layer (0-based; vpp > 1: of chunk 0) */
    int n_layers;       /* decoder layers on this pipeline rank, all chunks */
    int tp;             /* tensor-parallel degree of this stage (= strategy tp
                           unless the hardware differs) */
    int dp;             /* data-parallel degree of this stage (= strategy dp) */
} stage_spec;

typedef struct strategy {
    int tp, pp, dp, cp, ep;
    int etp;                    /* expert tensor parallelism: the routed
                                   experts' weights split over etp
                                   consecutive ranks (--expert-tensor-
                                   parallel-size; 1: not split) */
    int vpp;                    /* virtual stages per pipeline rank, 1 = none */
    int mbs, gbs;               /* micro-batch and global batch, sequences */
    int seq_len;
    int stack;                  /* the software stack it runs on (stack_id,
                                   inputs/stack.h; 0: megatron-core): its
                                   stack-specific rules (knob_rule) */
    bool sp;                    /* sequence parallelism (needs tp > 1) */
    recompute_mode recompute;
    int recompute_layers;       /* full recompute: Megatron's --recompute-num-layers,
                                   per (virtual) pipeline chunk; 0 = every layer
                                   one by one (uniform 1) */
    int recompute_method;       /* recompute_method, with recompute_layers > 0 */
    int recompute_modules;      /* RC_MOD_ bits, with selective recompute */
    int zero;                   /* 0 plain; 1 distributed optimizer (ZeRO-1);
                                   2 also grads; 3 also weights */
    bool overlap_grad_reduce;   /* DP reduce overlapped with backward */
    bool overlap_param_gather;  /* param all-gather overlapped with forward */
    bool tp_comm_overlap;       /* TP collectives overlapped with GEMMs */
    cp_comm_type cp_comm;       /* how the cp ranks exchange K/V (cp > 1) */
    int cp_a2a;                 /* a2a+p2p: the all-to-all level's ranks
                                   (2 .. cp/2, divides cp); 0 otherwise */
    bool ep_comm_overlap;       /* MoE dispatch/combine all-to-alls overlapped
                                   with another micro-batch's compute
                                   (--overlap-moe-expert-parallel-comm) */
    bool shared_expert_overlap; /* the shared experts computed on a side
                                   stream under the token dispatcher's
                                   communication (--moe-shared-expert-overlap) */
    bool grad_reduce_bf16;      /* main gradients accumulated and reduced in
                                   bf16, not fp32 (--grad-reduce-in-bf16;
                                   Megatron-Core DDP grad_reduce_in_fp32 off) */
    bool cuda_graph;            /* every micro-batch's forward and backward
                                   replayed as one CUDA graph (--cuda-graph-impl
                                   local --cuda-graph-scope full_iteration,
                                   Megatron-Core full_cuda_graph.py) */
    int opt_state;              /* Adam's state: OPT_STATE_FP32 (fp32 main
                                   weights and moments), OPT_STATE_BF16
                                   (16-bit: --use-precision-aware-optimizer
                                   --exp-avg-dtype bf16 --exp-avg-sq-dtype
                                   bf16) or OPT_STATE_FP32_REM (fp32 moments,
                                   16-bit main-weight remainders:
                                   --use-precision-aware-optimizer;
                                   cost/memory.h memory_optimizer_bytes) */
    bool flex_dispatcher;       /* the node-aware flex token dispatcher
                                   (--moe-token-dispatcher-type flex
                                   --moe-enable-deepep; DeepEP / HybridEP):
                                   a token crosses to each other NVLink
                                   domain once, forwarded over NVLink there */
    bool flex_deepep;           /* with flex_dispatcher: its backend is DeepEP
                                   (core_v0.15.0, knob_flex_deepep), which the
                                   cost takes as HybridEP but for the SMs its
                                   kernels hold (COST_DEEPEP_SMS; unvalidated:
                                   model/knobs.c); false: HybridEP */
    bool te_moe_graphs;         /* Transformer Engine CUDA graphs of each MoE
                                   layer's router and dispatch preprocessing
                                   (--cuda-graph-impl transformer_engine
                                   --cuda-graph-scope moe_router
                                   moe_preprocess; cost/layer_cost.c
                                   moe_host_fwd_s) */
    /* Megatron --account-for-embedding-in-pipeline-split and
     * --account-for-loss-in-pipeline-split: the input embedding (the output
     * layer + loss) counts as one layer of the first (last) virtual chunk,
     * and the layers are cut by strategy_chunk_layers()'s rule instead of
     * the stages' n_layers / vpp (stage_spec must agree with it). */
    bool account_embedding, account_loss;
    /* Megatron --pipeline-model-parallel-layout (pipeline_parallel_layer_
     * layout.py): layout_layers[k] decoder layers in virtual stage k =
     * chunk * pp + rank (the layout's order), k < pp vpp; the embedding
     * sits in virtual stage 0, the MTP layers and the loss in the last.
     * strategy_chunk_layers() reads it; the stages must agree. */
    bool layout;
    short layout_layers[STRATEGY_MAX_CHUNKS];
    int n_stages;               /* == pp */
    stage_spec stage[STRATEGY_MAX_STAGES];
    int n_mixes;                /* stages spanning node groups (the others
                                   sit on their stage_spec.group) */
    stage_mix mix[STRATEGY_MAX_MIXES];
} strategy;

/* Micro-batches per step: gbs / (mbs * dp). */
int strategy_microbatches(const strategy *s);
int strategy_gpus(const strategy *s);   /* tp * cp * dp * pp (homogeneous) */
/* The expert-data-parallel group of a stage of tensor-parallel degree tp:
 * tp cp dp / (ep etp) ranks (expert rank order etp-ep-edp-pp), >= 1. */
int strategy_expert_dp(const strategy *s, int tp);

/* The ranks one layer's routed experts are split over: ep x etp (each 1
 * when unset), the expert grid's etp-ep block (parallel_state.py). */
int strategy_expert_split(const strategy *s);
const char *recompute_name(recompute_mode r);
const char *cp_comm_name(cp_comm_type t);   /* Megatron's --cp-comm-type value */
/* The groups stage i spans (its entry of s->mix), or NULL when it sits
 * in one group. */
const stage_mix *strategy_stage_mix(const strategy *s, int i);
/* The node groups stage i's GPUs sit on (a stage spanning groups: its
 * mix; otherwise its group with all tp cp dp GPUs), at most cap of them,
 * into group[] and gpus[]; returns how many (0 for a bad stage). */
int strategy_stage_members(const strategy *s, int i, int *group, int *gpus, int cap);

/* Decoder layers of virtual chunk `chunk` (0 .. vpp-1) on pipeline rank
 * `rank`, and in *first_layer (may be NULL) the first of them; `layers` is
 * the model's decoder layer count.  Chunks are ordered chunk-major (chunk 0
 * of ranks 0 .. pp-1, then chunk 1 ...), each holding contiguous layers.
 * The rule:
 *   account_embedding / account_loss (Megatron's flags): U = layers + e + l
 *     units (e, l = 1 when the flag is set), U / (pp vpp) per chunk, less
 *     the embedding on rank 0 chunk 0 and the loss on rank pp-1 chunk vpp-1
 *     (Llama 3.1 405B, 126 layers, pp 8 vpp 8: 2 per chunk, 1 in the first
 *     and the last);
 *   otherwise each rank's n_layers / vpp per chunk (vpp 1: the stage's own
 *     first_layer), which is what --decoder-first/last-pipeline-num-layers
 *     and the even split give.
 * Returns -1 for a rank or chunk out of range. */
int strategy_chunk_layers(const strategy *s, int layers, int rank, int chunk, int *first_layer);

/* strategy_chunk_layers() for chunks from .. from+chunks-1 of rank `rank`
 * at once (the rule's sums over the ranks found once): chunk from+k's
 * count (or -1) into n[k] and its first layer (0 where the count is -1)
 * into first_layer[k]. */
void strategy_rank_chunks(const strategy *s, int layers, int rank, int from, int chunks, int *n,
                          int *first_layer);

/* Sets s's pp stages from strategy_chunk_layers()'s rule: each on node
 * group `group` at s's tp and dp, holding its chunks' layers from its first
 * chunk's first layer.  0, or -1 when a chunk's count is -1 (none counted). */
int strategy_stages_from_chunks(strategy *s, int layers, int group);

/* Sets s's stages (group, tp, dp as given) to the account-for-embedding-
 * and-loss split of `layers` decoder layers over s->pp ranks and s->vpp
 * chunks, with both flags on.  0, or -1 when (layers + 2) % (pp vpp) != 0
 * or a stage would hold a negative count. */
int strategy_split_account(strategy *s, int layers, int group);

/* Where a step's time goes (seconds per step, exposed parts only). */
typedef struct time_breakdown {
    double compute_s;       /* forward + backward GEMMs and kernels, critical path */
    double recompute_s;     /* re-forward for recomputation */
    double tp_comm_s;       /* exposed TP (and SP) collectives */
    double cp_comm_s;
    double ep_comm_s;
    double pp_comm_s;       /* exposed p2p send/recv */
    double bubble_s;        /* pipeline fill and drain */
    double dp_comm_s;       /* exposed gradient reduce / param gather */
    double optimizer_s;     /* optimizer step */
    double overhead_s;      /* fixed per-step overheads */
} time_breakdown;

/* Bytes per GPU on one pipeline stage. */
typedef struct memory_breakdown {
    double weights_bytes;
    double grads_bytes;
    double optimizer_bytes;
    double activations_bytes;   /* micro-batches in flight, incl. embedding/logits */
    double reserve_bytes;       /* CUDA context, NCCL buffers, fragmentation */
    double total_bytes;
    double capacity_bytes;      /* usable memory of the stage's GPU */
} memory_breakdown;

typedef struct evaluation {
    bool feasible;
    char reason[160];           /* why not feasible, "" otherwise */
    double step_time_s;
    double tokens_per_s;
    double tokens_per_s_per_gpu;
    double tflops_per_gpu;      /* model FLOPs (no recompute) per GPU per second / 1e12 */
    double mfu;                 /* model FLOP/s over peak of the GPUs used */
    double peak_memory_bytes;   /* max over stages */
    int peak_stage;             /* stage holding the peak */
    int gpus;                   /* GPUs the strategy uses */
    time_breakdown time;
    const char *binding;        /* what limits the step, static string */
    int n_stages;
    memory_breakdown stage_memory[STRATEGY_MAX_STAGES];
    double stage_fwd_s[STRATEGY_MAX_STAGES];   /* one micro-batch, one rank */
    double stage_bwd_s[STRATEGY_MAX_STAGES];
    /* the largest share of a layer's backward that is recomputation: every
     * backward of the schedule shrinks by at most this fraction without
     * recompute, so the step by at most this fraction too (a longest path
     * through operations that each keep >= 1 - share of their time) */
    double recompute_share;
} evaluation;

/* A strategy and its prediction: what the search returns. */
typedef struct plan {
    strategy s;
    evaluation e;
} plan;

/* The model this strategy trains (inputs/model.h). */
struct model;

/* Checks Megatron's rules for `s` on `m`: every knob's rule (knob_rule in
 * model/knobs.h: divisibility, SP needs tp > 1, ...), then the layer split's.
 * The one rule function: the search, emit_check and validate call it.
 * Returns PLANNER_OK if valid, else PLANNER_E_INPUT with the broken rule in
 * *err; err may be NULL (no message is formatted: the search's per-candidate
 * check). */
planner_status strategy_check(const struct model *m, const strategy *s, planner_error *err);

/* strategy_check, and the rule that refused s into *knob (knob may be
 * NULL): the knob_id whose knob_rule failed, or KNOB_COUNT for the layer
 * split's rules and the batch/sequence check. */
planner_status strategy_check_rule(const struct model *m, const strategy *s, int *knob,
                                   planner_error *err);

#endif
