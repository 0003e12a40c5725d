/* stack.h: the software stacks a plan can assume, one constant table
 * (src/inputs/stack.c), as the GPU catalog is for hardware.
 *
 * A stack is the training software: which plan knobs it has (sequence
 * parallelism, TP-communication overlap, distributed-optimizer / ZeRO kinds,
 * context and expert parallelism, interleaving, recompute kinds, FP8
 * recipes) and how its kernels run (attention implementation).  Its fitted
 * software constants (per-step host time, attention efficiency of an
 * unfused implementation) live in cost_params.stack[] (cost/params.h) so
 * `planner calibrate` can fit them; the per-GPU-generation constants stay
 * hardware.  Chosen by `stack:` in the cluster YAML or --stack NAME;
 * default megatron-core.
 */
#ifndef PLANNER_STACK_H
#define PLANNER_STACK_H

#include <stdbool.h>
#include <stddef.h>

typedef enum stack_id {
    STACK_MEGATRON_CORE,    /* default */
    STACK_MEGATRON_LM_2020,
    STACK_MEGATRON_LM_2021,
    STACK_MEGATRON_LM_2022,
    STACK_DEEPSPEED,
    STACK_PYTORCH_FSDP2,
    STACK_COUNT
} stack_id;

/* How core attention runs. */
typedef enum stack_attention {
    STACK_ATTN_FLASH,       /* fused flash-attention kernels (FA2/cuDNN/FA3):
                               the GPU generation's attn_eff */
    STACK_ATTN_UNFUSED,     /* QK^T and PV as batched GEMMs around a fused
                               scale-mask-softmax and dropout over the s x s
                               scores (Megatron-LM before 2022): the stack's
                               attn_eff */
    STACK_ATTN_SDPA_FA2     /* PyTorch SDPA's flash backend, the
                               FlashAttention-2 kernels built into ATen (no
                               Hopper wgmma/TMA path): on Hopper a fraction
                               of the generation's attn_eff, which is
                               Transformer Engine's cuDNN fused attention
                               (cost_constants, layer_cost.c) */
} stack_attention;

/* The values of each restricted knob the stack has, as bit masks: bool knobs
 * bit 0 (off) and bit 1 (on); recompute bit per mode (none, selective,
 * full); zero bit per stage; the degrees cp, ep, vpp bit 0 (1) and bit 1
 * (above 1); cp_comm bit per cp_comm_type.  model/knobs.c maps the knob
 * registry onto these. */
typedef struct stack_knobs {
    unsigned sp, tp_comm_overlap, zero, overlap_grad_reduce, overlap_param_gather, recompute,
        cp, ep, vpp, ep_comm_overlap, cp_comm, grad_reduce_bf16, cuda_graph, opt_state,
        recompute_modules;   /* bit per value of the RC_MOD_ set (0: the default) */
} stack_knobs;

/* The rules a stack's software puts on knobs together, beyond each knob's
 * values (stack_spec.rules, bits).  model/knobs.c knob_rule applies them to
 * every strategy on the stack, so the search returns only plans the stack
 * runs, and out/emit_torchtitan.c and emit_deepspeed.c refuse by the same
 * rules (knobs_stack_check).  Sources: inputs/stack.c. */
enum {
    STACK_RULE_DDP_ALONE = 1u << 0,       /* replication without sharding (zero 0) only
                                             as the sole parallelism: not with cp or
                                             ep > 1, nor with tp or pp when dp > 1 */
    STACK_RULE_SP_WITH_TP = 1u << 1,      /* tp > 1 always with sequence parallelism */
    STACK_RULE_ASYNC_TP_COMPILED = 1u << 2, /* TP-comm overlap only with compiled blocks
                                               (model.torch_compile) */
    STACK_RULE_FULL_EVERY_NTH = 1u << 3,  /* full recompute wraps every block, or
                                             every N-th block counted over a rank's
                                             chunks (knob_ac_every_nth): no
                                             first-N-layers form */
    STACK_RULE_SHARD_OVERLAPS = 1u << 4,  /* sharded data parallelism (zero >= 2)
                                             always overlaps the gradient reduce, and
                                             zero 3 the parameter gather */
    STACK_RULE_ETP_TP_OR_1 = 1u << 5,     /* expert tensor parallelism is tp or 1 */
    STACK_RULE_SHARD_NO_PIPE = 1u << 6,   /* sharded gradients (zero >= 2) only without
                                             pipelining */
    STACK_RULE_ETP_1 = 1u << 7,           /* no expert tensor parallelism: etp 1 */
    STACK_RULE_EP_IN_DP = 1u << 8,        /* the expert-parallel ranks are data-parallel
                                             ranks: ep divides dp */
    STACK_RULE_TOPK_2 = 1u << 9,          /* MoE routing top-1 or top-2 only */
    STACK_RULE_OVERLAP_BY_ZERO = 1u << 10 /* the gradient reduce overlaps the backward
                                             only where stack_grad_reduce_overlaps
                                             says (the ZeRO stage, pipelining) */
};

/* How the stack's software holds memory beyond the model states: each kind
 * is a mechanism cost/memory.c implements from the stack's source. */
typedef enum stack_selective {
    STACK_SEL_MEGATRON,     /* Megatron's selective recompute: the modules of
                               --recompute-modules re-run (Korthikanti et al.
                               2022; cost/layer_cost.c) */
    STACK_SEL_OP_POLICY     /* torchtitan's op-level selective activation
                               checkpointing: each block checkpointed, the
                               outputs of every other matmul and of SDPA
                               saved, the rest recomputed
                               (memory_op_sac_bytes) */
} stack_selective;

typedef enum stack_loss {
    STACK_LOSS_FP32_LOGITS, /* the fp32 logits of one micro-batch (Megatron's
                               fused vocab-parallel cross-entropy) */
    STACK_LOSS_EAGER_UPCAST /* logits upcast to fp32 and an eager
                               cross-entropy (torchtitan; PyTorch's loss
                               parallel at tp > 1): memory_loss_bytes */
} stack_loss;

typedef enum stack_gather {
    STACK_GATHER_PREFETCH,  /* ZeRO-3 gathers the layer at work and a
                               prefetch bounded by DeepSpeed's
                               stage3_max_live_parameters */
    STACK_GATHER_FSDP2      /* FSDP2 fully_shard per block plus the root:
                               memory_fsdp2_unsharded_bytes */
} stack_gather;

typedef enum stack_cp_attn {
    STACK_CP_TE,            /* Transformer Engine's context-parallel
                               attention (Megatron-Core's cp_comm_type):
                               cost_cp_transient_bytes */
    STACK_CP_TORCH          /* PyTorch's context_parallel ring attention
                               (torch.distributed.tensor.experimental
                               _attention.py) over torchtitan's SDPA, whose
                               K and V are repeated to the query heads
                               (repeat_kv) */
} stack_cp_attn;

typedef enum stack_pipe {
    STACK_PIPE_MEGATRON,    /* Megatron's schedules: a stage's output is
                               freed once sent (deallocate_output_tensor,
                               megatron/core/pipeline_parallel/schedules.py)
                               and p2p buffers are made per transfer; the
                               interleaved one runs all forwards first at
                               m == pp (Megatron-LM 2021 to core_r0.9.0:
                               stack_pipe_warmup) */
    STACK_PIPE_MEGATRON_CORE, /* the same from core_r0.10.0 (4295be1a6c,
                               2024-11), without the m == pp special case
                               (stack_pipe_warmup) */
    STACK_PIPE_TORCH        /* torch.distributed.pipelining's PipelineStage
                               keeps per-micro-batch buffers:
                               memory_pipe_buffers_bytes; its schedules'
                               warm-up: stack_pipe_warmup */
} stack_pipe;

typedef struct stack_memory {
    stack_selective selective;
    stack_loss loss;
    stack_gather gather;
    stack_cp_attn cp_attn;
    stack_pipe pipe;
} stack_memory;

typedef struct stack_spec {
    const char *name;
    const char *version;        /* the release(s) it stands for */
    stack_id id;
    stack_attention attention;
    bool fp8;                   /* has an FP8/FP4 training recipe */
    bool own_host_time;         /* its host time per step is its own fitted
                                   constant; else the GPU generation's, a
                                   current stack's (every built-in stack:
                                   stack.c) */
    stack_knobs knobs;
    stack_memory memory;        /* its memory mechanisms */
    const char *source;         /* what the row assumes and where it says so */
    bool zero3_prefetch;        /* ZeRO-3 gathers each layer's parameters ahead
                                   of its use on a side stream (FSDP units:
                                   Megatron-FSDP, FSDP2); else per tensor on
                                   the critical path (DeepSpeed 2021) */
    double dp_bucket_params;    /* the data-parallel gradient bucket, in
                                   parameters; 0: Megatron's max(40M, 1M x dp)
                                   (cost_dp_bucket_params) */
    double ddp_bucket_bytes;    /* at zero 0, the replicated (DDP) gradient
                                   bucket in bytes of gradients, where the
                                   stack's DDP is its own; 0: dp_bucket_params */
    unsigned rules;             /* STACK_RULE_ bits */
    const char *rules_by;       /* the software whose rules `rules` are, as
                                   messages name them ("torchtitan's
                                   rules"); "Megatron" for the Megatron
                                   rows, which have none of their own */
    const char *zero_names[4];  /* its data-parallel mechanism at each ZeRO
                                   stage (the plan's zero 0..3), as the
                                   outputs name it ("zero=2 (FSDP2
                                   reshard_after_forward=False)"); NULL where
                                   the stack has no such stage */
} stack_spec;

/* Of a rank's vpp model chunks, those whose ZeRO-2 gradients the stack
 * reduces as ONE bucket each, after the chunk's whole backward: Megatron-LM
 * wraps chunks 2..vpp with disable_bucketing (core_v0.15.0
 * megatron/training/training.py get_model; Megatron-FSDP then puts every
 * parameter of the chunk in a single bucket), vpp - 1; FSDP2 reduces per
 * fully_shard block in every chunk and DeepSpeed has no chunks: 0. */
int stack_zero2_whole_chunks(const stack_spec *st, int vpp);

/* Whether the stack's data-parallel reduce buckets hold the gradients in
 * the parameters' own dtype whatever the main gradients' dtype: DeepSpeed's
 * ZeRO-1/2 (deepspeed/runtime/zero/stage_1_and_2.py DeepSpeedZeroOptimizer:
 * self.dtype is the first parameter's dtype, and backward() allocates the
 * ipg_buffer -- two with overlap_comm -- as torch.empty(reduce_bucket_size,
 * dtype=self.dtype); the fp32 accumulation (gradient_accumulation_dtype)
 * is the partitioned gradients').  Megatron's and FSDP2's buckets are the
 * main gradients' (false). */
bool stack_buckets_in_param_dtype(const stack_spec *st);

/* Whether the stack can overlap the data-parallel gradient reduce with the
 * backward (overlap_grad_reduce) at ZeRO stage `zero` and `pp` pipeline
 * stages.  DeepSpeed (the stack's 2021-2022 releases) overlaps only where
 * its ZeRO optimizer runs with overlap_comm: at stage 0 there is none, and
 * the engine all-reduces after the backward (deepspeed/runtime/engine.py
 * backward -> allreduce_gradients -> buffered_allreduce_fallback, v0.6.0
 * and 2025's master; the pipeline engine's ReduceGrads likewise, after the
 * last micro-batch); _configure_zero_optimizer sets overlap_comm False at
 * stage 1 ("meaningless in stage 1", PR #1246 of 2021-07 to PR #4887 of
 * 2024-01) and under the pipeline engine (a PipelineModule) at stages 1-2;
 * ZeRO-2 without pipelining and ZeRO-3 overlap.  Every other stack: true
 * (its mask says whether it has the knob at all). */
bool stack_grad_reduce_overlaps(const stack_spec *st, int zero, int pp);

/* Whether the stack's ZeRO-3 re-gathers and re-synchronizes every model
 * chunk in every micro-batch: Megatron-FSDP optim_grads_params (core_v0.15.0
 * megatron_fsdp.py) releases a layer's gathered parameters after its forward
 * (_post_forward) and after its backward (_post_backward), so each backward
 * gathers its first (the last) layer again on demand (_pre_backward), and
 * _root_post_backward ends every backward with grad_reduce_pipeline.reset(),
 * waiting for the last reduce-scatter; each chunk is its own FSDP root
 * (training.py get_model).  FSDP2 and DeepSpeed have their own (false). */
bool stack_zero3_syncs_each_backward(const stack_spec *st);

/* Whether the stack's FP8 recipes run the linear layers as Transformer
 * Engine modules, with TE's memory mechanisms: the quantized weight cached
 * across a step's micro-batches (cost/memory.h
 * memory_fp8_weight_cache_bytes: TELinear and kin pass
 * is_first_microbatch, core_v0.15.0 megatron/core/extensions/
 * transformer_engine.py) and the FP8 copies of the routed experts' inputs
 * GroupedLinear saves for the weight gradient (cost/layer_cost.c
 * moe_fp8_saved_delta): megatron-core.  torchtitan's float8 is torchao's,
 * not TE: Float8Linear, and for MoE experts (GroupedExperts'
 * torch._grouped_mm) torchao's _Float8GroupedMM, whose forward saves the
 * high-precision input A for the backward and quantizes it again there
 * (torchao v0.13.0 to 2026's main prototype/moe_training
 * scaled_grouped_mm.py / fp8_grouped_mm.py, ctx.save_for_backward(A, B_t,
 * offs), A asserted bf16 or fp32; mxfp8_grouped_mm.py likewise); the other
 * stacks have no FP8 recipe. */
bool stack_fp8_te(const stack_spec *st);

/* Whether the stack runs a decoder block's element-wise work as separate
 * eager PyTorch ops unless the block is compiled (model.torch_compile):
 * pytorch-fsdp2 (torchtitan's Llama blocks, training.compile off by
 * default; layer_cost.c eager_extra_bytes); the Megatron stacks and
 * DeepSpeed's Megatron models run fused kernels (false). */
bool stack_eager_blocks(const stack_spec *st);

/* Whether the stack is launched by Megatron-LM's pretrain_gpt.py arguments,
 * the launch material out/emit.c writes (--emit): megatron-core and
 * Megatron-LM 2020-2022 (their plans' knobs are a subset of the releases'
 * flags).  Not pytorch-fsdp2 (torchtitan: a TOML job config, FSDP2/DTensor
 * mechanisms) nor deepspeed: Megatron-DeepSpeed takes ZeRO, its pipeline
 * engine and overlap_comm from a DeepSpeed JSON config (--deepspeed
 * --deepspeed_config), and its arguments.py is a 2021-2022 fork without the
 * core_v0.15+ flags emit writes (--use-megatron-fsdp, --use-distributed-
 * optimizer's Megatron-Core options), so those flags would run the plan with
 * Megatron-Core's mechanisms, not the ones it was costed with. */
bool stack_megatron_launch(const stack_spec *st);

/* Whether the stack is launched by torchtitan's trainer with a TOML job
 * config (out/emit_torchtitan.c): pytorch-fsdp2. */
bool stack_torchtitan_launch(const stack_spec *st);

/* Whether each of a pipeline stage's tp ranks sends 1/tp of the activation
 * crossing a stage boundary (else the whole of it), `sp` the strategy's
 * sequence parallelism.  The tensor a stage hands on is the residual stream
 * as its ranks hold it, (seq / cp, mbs, hidden), and:
 *   megatron-core: seq / tp as well only with sequence parallelism
 *     (core_v0.15.0 pipeline_parallel/schedules.py get_tensor_shapes and
 *     forward_backward_pipelining_with_interleaving's tensor_shape;
 *     p2p_communication.py sends it whole: the scatter/gather of Megatron-LM
 *     2021-22 did not move into core, 39b83c7953, 2023-01-31): without SP
 *     every TP rank sends the whole activation;
 *   megatron-lm-2021, megatron-lm-2022: always (the scatter/gather of
 *     Narayanan et al. SC21 Sec 4.1: Megatron-LM 27fc468964, 2021-01-20, on
 *     by default from 72e4230bb5, 2021-02-16, --no-scatter-gather-tensors-
 *     in-pipeline to turn off; p2p_communication.py sends 1/tp of the
 *     flattened tensor and the receiver all-gathers it over NVLink; with SP,
 *     cfd2e21607 2022-04-28, the tensor is (seq / tp, mbs, hidden) already);
 *   megatron-lm-2020: never (Megatron-LM's main before 2021-01-20,
 *     training.py communicate() sends the whole (seq, mbs, hidden) tensor;
 *     no SP there);
 *   deepspeed: always at tp > 1 (deepspeed/runtime/pipe/engine.py
 *     PipelineEngine: is_pipe_partitioned = is_model_parallel, config
 *     pipeline.pipe_partitioned default true; _exec_forward_pass sends a
 *     PartitionedTensor over the slice-parallel (TP) group, the receiver
 *     all-gathers it);
 *   pytorch-fsdp2: only with SP (torch.distributed.pipelining sends the
 *     stage's output tensor as it is; torchtitan's TP plan leaves the
 *     residual stream as a local Shard(1) tensor, seq / tp, with its
 *     SequenceParallel norms and RowwiseParallel(output_layouts=Shard(1))).
 * cost_boundary_bytes applies it. */
bool stack_p2p_splits_tp(const stack_spec *st, bool sp);

/* Whether the stack's interleaved schedule moves each chunk step's
 * activations in a blocking exchange: Megatron-LM v2.x/v3.0 (megatron/
 * p2p_communication.py _communicate: batch_isend_irecv, wait on every
 * request, then torch.cuda.synchronize(), unconditionally; schedules.py
 * forward_backward_pipelining_with_interleaving exchanges once per
 * forward + backward pair in the steady state,
 * send_forward_backward_recv_forward_backward), so the rank computes
 * nothing while its sends and receives run.  Megatron-Core's interleaved
 * schedule overlaps them (false): Megatron-LM's arguments.py turns
 * overlap_p2p_comm on for it (--no-overlap-p2p-communication, core_r0.8.0
 * through core_v0.15.0) and batch_p2p_comm = not overlap_p2p_comm, so no
 * synchronize; schedules.py pp_post_forward/pp_post_backward post isend/
 * irecv on NCCL's stream and the compute stream waits for a receive just
 * before the chunk that needs it; torch.distributed.pipelining likewise
 * (async P2P works, stream waits).  Stacks without interleaving: false. */
bool stack_p2p_blocking(const stack_spec *st);

/* The warm-up of pipeline rank `rank` (0-based) of `pp` under the stack's
 * schedule `pipe`, with `vpp` model chunks per rank and `microbatches` (m)
 * per step: the chunk-forwards it runs before its steady state of one
 * forward then one backward (then the remaining backwards), at most m vpp
 * (all forwards first), at least 0.  The rank holds warm-up + 1 chunks'
 * activations at its first backward (m vpp if all forwards run first).
 * One rule for the time (schedule/pipeline.c) and the memory
 * (cost/memory.c) of the same schedule:
 *   vpp 1, every stack: pp - rank - 1.  Megatron's
 *     forward_backward_pipelining_without_interleaving (core_r0.9.0 to
 *     main: get_pp_rank_microbatches); torch.distributed.pipelining's
 *     Schedule1F1B warms up min(m, pp - stage_index) and then runs one
 *     backward then one forward: the same order, its warm-up counting the
 *     first steady forward; DeepSpeed's TrainSchedule (deepspeed/runtime/
 *     pipe/schedule.py) runs stage s's forward i at step 2 i + s and its
 *     backward i at 2 i + 2 pp - 1 - s: again pp - s forwards before the
 *     first backward, then alternating.
 *   vpp > 1: 2 (pp - 1 - rank) + (vpp - 1) pp, except
 *     STACK_PIPE_MEGATRON at m == pp: all m vpp.  Megatron-LM's
 *     forward_backward_pipelining_with_interleaving from its introduction
 *     (dd88906264, 2020-12-12) to core_r0.9.0: `if num_microbatches ==
 *     pipeline_parallel_size: num_warmup_microbatches =
 *     total_num_microbatches; all_warmup_microbatches = True`, else the
 *     formula capped at m vpp.  core_r0.10.0 (4295be1a6c, 2024-11-01,
 *     "tunable schedule") dropped the special case: the formula with
 *     microbatch_group_size_per_vp_stage (default pp) in place of pp, and
 *     all forwards first only where it reaches m vpp (main's
 *     get_pp_rank_microbatches alike).  torch.distributed.pipelining's
 *     ScheduleInterleaved1F1B get_rank_warmup_ops: (n_local_stages - 1)
 *     microbatches_per_round + 2 (pp - 1 - rank), capped at m vpp, the
 *     round pp whenever pp divides m (number_of_rounds = max(1, m // pp);
 *     the planner interleaves only then; an earlier version wrote
 *     pp_group_size itself).
 * Not modelled: with --overlap-moe-expert-parallel-comm Megatron-Core
 * (core_v0.14.0 on, get_pp_rank_microbatches) warms up one chunk-forward
 * more and then runs each steady forward together with a backward, layer
 * by layer (combined_1f1b.py): the rank holds about warm-up + 1 chunks
 * still, the pairing's timing is not simulated.
 * Out-of-range pp, vpp, m count as 1; rank as given. */
int stack_pipe_warmup(stack_pipe pipe, int pp, int vpp, int microbatches, int rank);

/* The order every stack's schedule runs a rank's operations in, after
 * stack_pipe_warmup's `warm` forwards of the n = m vpp of each kind: one
 * forward then one backward alternately, then the remaining backwards.
 * Whether the rank's j-th operation (0-based, of 2 n) is a forward, and
 * into *k (may be NULL) its index among its kind's.  Megatron's
 * forward_backward_pipelining_with(out)_interleaving (warm-up loop, 1F1B
 * loop of forward_k = k + num_warmup_microbatches then backward k,
 * cool-down loop); torch's ScheduleInterleaved1F1B
 * _calculate_single_rank_operations (warmup_ops, fwd_bwd_ops of a forward
 * then a backward, cooldown_ops) and Schedule1F1B (the same order,
 * stack_pipe_warmup); DeepSpeed's TrainSchedule likewise.  Inline: the
 * schedule simulation's inner loop. */
static inline bool stack_pipe_op(int j, int warm, int n, int *k)
{
    bool fwd = j < warm || (j < 2 * n - warm && (j - warm) % 2 == 0);
    if (k != NULL)
        *k = j < warm ? j : j < 2 * n - warm ? (fwd ? warm + (j - warm) / 2 : (j - warm) / 2)
                                            : j - n;
    return fwd;
}

/* The chunk of a rank's k-th chunk-forward (`backward`: chunk-backward)
 * under every stack's interleaved order, with its micro-batch in *mb and its
 * group's size in *group_size (either may be NULL): groups of pp
 * micro-batches (the last m - g pp), each group's micro-batches chunk by
 * chunk, the backwards from the last chunk.  Megatron-Core's
 * get_model_chunk_id / get_microbatch_id_in_model_chunk
 * (microbatch_group_size_per_vp_stage pp by default; Megatron-LM before
 * core_r0.10.0 always pp); torch's ScheduleInterleaved1F1B
 * forward_stage_index / backward_stage_index (microbatches_per_round pp
 * when pp divides m).  vpp 1: chunk 0, micro-batch k. */
static inline int stack_pipe_chunk(int k, int pp, int vpp, int microbatches, bool backward,
                                   int *mb, int *group_size)
{
    int g = k / (pp * vpp);
    int gs = microbatches - g * pp < pp ? microbatches - g * pp : pp;
    int off = k - g * pp * vpp;
    int c = gs > 0 ? off / gs : 0;
    if (c >= vpp)
        c = vpp - 1;
    if (mb != NULL)
        *mb = g * pp + (gs > 0 ? off % gs : 0);
    if (group_size != NULL)
        *group_size = gs;
    return backward ? vpp - 1 - c : c;
}

/* The Megatron-LM releases of the megatron-core stack, oldest first: what
 * emit writes flags for and the search plans for (--megatron-version). */
typedef enum megatron_version {
    MEGATRON_0_15, MEGATRON_0_16, MEGATRON_0_17, MEGATRON_0_18, MEGATRON_0_19,
    MEGATRON_VERSION_COUNT
} megatron_version;

#define MEGATRON_VERSION_DEFAULT MEGATRON_0_19   /* the newest */

/* "0.15" .. "0.19" (or "core_v0.15.0" ..): 0 and *out, or -1. */
int megatron_version_parse(const char *text, megatron_version *out);

/* The release's git tag, "core_v0.15.0" ..; "?" for an unknown value. */
const char *megatron_version_tag(megatron_version v);

/* The stack named `name` (case-insensitive), or NULL. */
const stack_spec *stack_find(const char *name);
/* Row i (the stack_id order), or NULL. */
const stack_spec *stack_at(size_t i);
size_t stack_count(void);
/* The stack of id (STACK_MEGATRON_CORE for an out-of-range id). */
const stack_spec *stack_get(int id);
/* " (did you mean 'X'?)" or "" into buf, and the list of names into names
 * ("a, b, c"), for the messages of an unknown name. */
void stack_unknown_hint(const char *name, char *hint, size_t hint_size, char *names,
                        size_t names_size);

#endif
