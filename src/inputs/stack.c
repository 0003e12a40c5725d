/* stack.c: the built-in software stacks, one constant table (inputs/stack.h).
 *
 * What a row models: the training software a measured run (or a plan) used,
 * apart from the hardware -- which plan knobs exist in it (a mask of values
 * per knob; model/knobs.c maps the knob registry onto them, so the search
 * only tries what the stack has), whether it has an FP8 recipe, and how core
 * attention runs.  Its fitted software constants (host time per step beyond
 * a current stack's, the efficiency of an unfused attention) are
 * cost_params.stack[] (cost/params.h, defaults in cost/layer_cost.c).
 *
 * Sources per row (what each row assumes):
 *   megatron-core: Megatron-LM core_v0.15.0..core_v0.19.0, the releases
 *     emit writes flags for (--megatron-version): every knob of the
 *     registry, Transformer Engine FP8 recipes, flash attention (TE/cuDNN).
 *   megatron-lm-2020: NVIDIA/Megatron-LM as of its Sep 2020 README (v1.1)
 *     through its main of Jan 2021 (152aab304d, the README's GPT-3
 *     Example): tensor parallelism (Shoeybi et al. 2019), pipelining
 *     without interleaving (1F1B in Jan 2021; interleaving came on
 *     2021-02-13), each TP rank sending the whole activation to the next
 *     stage (training.py communicate(); no scatter/gather before
 *     2021-01-20: stack_p2p_splits_tp), --checkpoint-activations
 *     (full recompute only), the local DDP that all-reduces gradients
 *     after the backward (--DDP-impl local, no overlap), no distributed
 *     optimizer, SP, CP or EP; attention as baddbmm +
 *     FusedScaleMaskSoftmax + dropout + bmm.
 *   megatron-lm-2021: Narayanan et al., SC21 (arXiv 2104.04473): adds the
 *     interleaved 1F1B schedule (vpp) and the scatter/gather of p2p
 *     activations; still full recompute only, no SP, no distributed
 *     optimizer, no gradient-reduce overlap; unfused attention.
 *   megatron-lm-2022: Korthikanti et al., MLSys 2023 (arXiv 2205.05198;
 *     Megatron-LM v3.0): adds sequence parallelism and selective
 *     recomputation; the distributed optimizer came later
 *     (--use-distributed-optimizer, Megatron-LM late 2022), so none here;
 *     attention still unfused (the paper's selective recompute exists
 *     because the s x s scores are stored).
 *   deepspeed: Megatron-DeepSpeed / DeepSpeed 2021-2022 (MT-NLG, BLOOM; the
 *     ZeRO-3 rows of SC21 Table 2): ZeRO stages 0-3 (Rajbhandari et al.
 *     2020) with overlap_comm (gradient reduce overlapped with the
 *     backward at ZeRO-2 without pipelining and at ZeRO-3:
 *     stack_grad_reduce_overlaps; ZeRO-3 prefetches parameters), ZeRO-1/2's updated
 *     parameters all-gathered inside the optimizer step, after the update
 *     and before step() returns, so never under the next forward (no
 *     overlap_param_gather: stage_1_and_2.py DeepSpeedZeroOptimizer.step,
 *     dist.all_gather per shard in v0.6.0 of 2022, all_gather_dp_groups
 *     at master of 2025-02, 38327e07f6), its pipeline engine's 1F1B
 *     TrainSchedule without interleaving (deepspeed/runtime/pipe/
 *     schedule.py), Megatron's tensor parallelism without SP or TP-comm
 *     overlap, activation checkpointing (full), DeepSpeed-MoE expert
 *     parallelism; no CP (Ulysses is another kind), no FP8; unfused
 *     attention (Megatron-DeepSpeed's fused softmax).
 *   Host time per step: every row pays its GPU generation's (a current
 *   stack's; own_host_time false).  The older stacks had their own fitted
 *   host time until 2026-11-25, but their runs fit at a current stack's
 *   once costed with the knobs they ran (megatron-lm-2021 from round 5,
 *   2022 and deepspeed taking its value; megatron-lm-2020 since its runs'
 *   full recompute, cost/layer_cost.c round 7), and a constant of their own
 *   left each leave-one-source-out fold of SC21 or Korthikanti et al. with
 *   one that only its left-out runs determine (docs/validation.md).
 *   pytorch-fsdp2: torchtitan on PyTorch FSDP2 (torch.distributed.fsdp.
 *     fully_shard: pre-forward/backward hooks all-gather each block's
 *     parameters with prefetch, gradients reduce-scattered in the
 *     backward; reshard_after_forward=True is ZeRO-3, False ZeRO-2; plain
 *     replication is DDP: zero 0), DTensor tensor parallelism with
 *     sequence parallelism on the norms and async TP (TP-comm overlap),
 *     torch.distributed.pipelining schedules including interleaved 1F1B,
 *     context parallelism (ring attention over SDPA), full and selective
 *     activation checkpointing, torchao float8; attention by SDPA's flash
 *     kernels, FlashAttention-2 (STACK_ATTN_SDPA_FA2; its ring attention's
 *     time: layer_cost.c cp_torch_exchange).  No ZeRO-1 (the distributed
 *     optimizer's kind).  Its memory
 *     (stack_memory, cost/memory.c): torchtitan's op-level selective
 *     checkpointing, the loss on fp32-upcast logits in eager PyTorch (loss
 *     parallel at tp > 1), FSDP2's root module kept gathered, the
 *     pipeline stage's per-micro-batch buffers.  The other
 *     rows keep Megatron's selective recompute, fp32 logits and DeepSpeed's
 *     ZeRO-3 prefetch (MEM_MEGATRON).
 *   Its rules on knobs together (stack_spec.rules; knobs.c knob_rule, the
 *   same rules out/emit_torchtitan.c refuses by), read from torchtitan
 *   v0.2.2 (the release --emit torchtitan writes for) and 9dec370 (Dec 2024,
 *   the memory corpus's torchtitan rows):
 *     DDP_ALONE: models/llama3/infra/parallelize.py parallelize_llama
 *       (9dec370: parallelisms/parallelize_llama.py) applies FSDP/HSDP
 *       whenever dp_shard or cp > 1 (fsdp_enabled; llama4 and deepseek_v3
 *       also when ep > 1) and DDP otherwise, raising "DDP has not
 *       supported > 1D parallelism" unless the replicate mesh is the world;
 *     SP_WITH_TP: apply_tp's plan is SequenceParallel norms and
 *       Rowwise/ColwiseParallel with Shard(1) layouts, no option without;
 *     ASYNC_TP_COMPILED: v0.2.2 distributed/tensor_parallel.py
 *       maybe_enable_async_tp raises "Async TP requires 'model' in
 *       --compile.components and --compile.enable"; at 9dec370
 *       --experimental.enable_async_tensor_parallel is "only effective
 *       when compile is enabled" (torch._inductor's _micro_pipeline_tp);
 *     FULL_EVERY_NTH: apply_ac / _apply_ac_to_transformer_block wrap
 *       every TransformerBlock for mode "full"; mode "selective" with an
 *       integer option N fully checkpoints every N-th block
 *       (distributed/activation_checkpoint.py _apply_layer_sac), which the
 *       planner costs as block recompute of the same count per chunk where
 *       every chunk's count is one (model/knobs.c knob_ac_every_nth);
 *     SHARD_OVERLAPS: fully_shard's hooks always reduce-scatter in the
 *       backward and prefetch the next block's all-gather (no option to
 *       serialize them);
 *     ETP_TP_OR_1: v0.2.2 distributed/parallel_dims.py ParallelDims
 *       asserts "Currently we only support ETP=TP or ETP=1".
 *   Gradients reduced in bf16 (grad_reduce_bf16): megatron-core's
 *     --grad-reduce-in-bf16 (core_v0.15.0 arguments.py; the DDP config's
 *     grad_reduce_in_fp32 = False that NeMo and Megatron-Bridge recipes
 *     set) and FSDP2's MixedPrecisionPolicy(reduce_dtype=torch.bfloat16)
 *     (torchtitan training.mixed_precision_reduce); Megatron-LM 2020-2022
 *     forced fp32 accumulation and all-reduce with bf16 (arguments.py:
 *     "bfloat16 requires gradient accumulation and all-reduce to be done
 *     in fp32") and reduced fp16 models in fp16; DeepSpeed: not modelled.
 *   ZeRO-3 time (zero3_prefetch): Megatron-FSDP optim_grads_params
 *     (core_v0.15.0 megatron_fsdp.py, prefetch=True in forward and
 *     backward order) and FSDP2 gather each layer ahead of its use on a
 *     side stream; DeepSpeed's ZeRO-3 of 2021 (the SC21 runs) waits for
 *     each tensor's collectives.  Megatron-FSDP also re-gathers and
 *     re-synchronizes every chunk in every micro-batch
 *     (stack_zero3_syncs_each_backward).
 *   Full-iteration CUDA graphs (cuda_graph): megatron-core only
 *     (core_v0.15.0 --cuda-graph-impl local --cuda-graph-scope
 *     full_iteration, full_cuda_graph.py FullCudaGraphWrapper); torchtitan
 *     trains eagerly or under torch.compile without graph capture, the
 *     2020-2022 stacks and DeepSpeed have none.
 *   Data-parallel gradient bucket (dp_bucket_params): Megatron's DDP and
 *     Megatron-FSDP max(40M, 1M x dp) parameters (0 here); DeepSpeed's
 *     ZeRO reduce_bucket_size, 5e8 elements by default (deepspeed/runtime/
 *     zero/config.py DeepSpeedZeroConfig.reduce_bucket_size); FSDP2
 *     reduces per fully_shard block (0: the rule as before); torchtitan's
 *     DDP (zero 0) torch DDP's bucket_cap_mb = 100 MiB of gradients
 *     (ddp_bucket_bytes: 26.2M fp32 gradients; Megatron's rule gave 40M).
 *   16-bit Adam state (opt_state bf16): megatron-core's precision-aware
 *     optimizer (core_v0.15.0 --use-precision-aware-optimizer with
 *     --exp-avg-dtype/--exp-avg-sq-dtype bf16: TE FusedAdam, distributed
 *     optimizer only) and NeMo's distributed Adam with optim.dtype bf16
 *     (the NeMo 24.07 rows run megatron-core); torchtitan's AdamW keeps
 *     fp32 state on FSDP2's fp32 shards, the 2020-2022 stacks and
 *     DeepSpeed (not modelled) fp32.
 *   DeepSpeed's pipeline engine asserts ZeRO stage < 2 (deepspeed/runtime/
 *     pipe/engine.py PipelineEngine.__init__, "ZeRO-2 and ZeRO-3 are
 *     incompatible with pipeline parallelism", v0.6.0 to master):
 *     STACK_RULE_SHARD_NO_PIPE.  Its gradient reduce overlaps the backward
 *     only at ZeRO-2 without pipelining and ZeRO-3
 *     (stack_grad_reduce_overlaps): STACK_RULE_OVERLAP_BY_ZERO.
 *   DeepSpeed-MoE's limits (deepspeed/moe/layer.py MoE, sharded_moe.py
 *   TopKGate, utils/groups.py; v0.6.0 of 2022-03, the stack's release,
 *   checked against v0.16.0 and 2025's master):
 *     ETP_1: each expert whole on every tensor-parallel rank: v0.6.0's
 *       _create_expert_data_and_model_parallel builds the expert-parallel
 *       groups of data-parallel ranks at one model-parallel rank; expert
 *       tensor parallelism came with v0.7.0 (enable_expert_tensor_
 *       parallelism, #2074, 2022-07-31), only as the TP group itself (etp
 *       = tp, its tokens de-duplicated around the all-to-all: moe/
 *       mappings.py drop_tokens / gather_tokens), a mechanism the planner
 *       does not cost;
 *     EP_IN_DP: ep divides dp (v0.6.0: dp_world_size // ep expert-parallel
 *       groups of data-parallel ranks; v0.16.0 and master
 *       _get_expert_parallel_ranks: _ensure_divisibility(dp_world_size,
 *       expert_parallel_size_));
 *     TOPK_2: TopKGate.__init__ raises "Only top-1 and top-2 gatings are
 *       supported." (v0.6.0 to v0.14.x; v0.15.0 added topkgating for k > 2,
 *       #5881, 2024-08).
 *   Only megatron-core overlaps the MoE all-to-alls with another micro-
 *     batch's compute (--overlap-moe-expert-parallel-comm, combined_1f1b.py,
 *     core_v0.15.0); the other stacks are costed with them exposed.
 * The megatron-core stack's releases (megatron_version, --megatron-version):
 *   the tags emit writes flags for and the search plans for (the flex
 *   dispatcher's backends differ between them: model/knobs.c).
 * Invariants: names unique, the id equals the row index.
 */
#include <stdio.h>
#include <string.h>
#include "base/suggest.h"
#include "base/text.h"
#include "inputs/stack.h"

#define ALL (~0u)
/* torchtitan's DDP: replicate(model, device_mesh=dp_mesh, bucket_cap_mb=100)
 * (v0.2.2 models/llama3/infra/parallelize.py apply_ddp; 9dec370 alike);
 * torch DDP's reducer caps a bucket at bucket_cap_mb x 2^20 bytes of
 * gradients (torch/nn/parallel/distributed.py bucket_bytes_cap) */
#define TORCHTITAN_DDP_BUCKET_BYTES (100.0 * 1024 * 1024)
#define OFF (1u << 0)               /* bool knob: off only; degree: 1 only */
#define RC_NONE_FULL ((1u << 0) | (1u << 2))
/* PyTorch's context parallelism (torch.distributed.tensor.experimental
 * context_parallel, set_rotate_method "alltoall" | "allgather"): a K/V ring
 * or the K/V all-gather; no head-scattering all-to-all (Ulysses) */
#define CP_RING_AG ((1u << 0) | (1u << 2))   /* cp_comm_type p2p, all_gather */
/* torchtitan's selective checkpointing is its op-level policy
 * (stack_memory.selective), not Megatron's --recompute-modules: the
 * modules' knob keeps its default, 0 or core_attn (RC_MOD_CORE_ATTN, bit
 * value 1 of model/strategy.h) */
#define RC_MOD_OP_POLICY ((1u << 0) | (1u << 1))
/* The ZeRO stages' mechanisms (stack_spec.zero_names): Megatron-LM's
 * DDP, its distributed optimizer (--use-distributed-optimizer) and
 * Megatron-FSDP's --data-parallel-sharding-strategy optim_grads and
 * optim_grads_params (core_v0.15.0); the 2020-2022 releases plain data
 * parallelism only.  DeepSpeed's are its ZeRO stages (zero_optimization.
 * stage), torchtitan's FSDP2 fully_shard with reshard_after_forward False
 * (gradients and optimizer state sharded, parameters kept gathered
 * between forward and backward: ZeRO-2-like) or True (ZeRO-3-like), and
 * its DDP at zero 0. */
#define ZERO_MEGATRON_CORE \
    {"plain data parallelism", "distributed optimizer", "Megatron-FSDP optim_grads", \
     "Megatron-FSDP optim_grads_params"}
#define ZERO_MEGATRON_LM {"plain data parallelism", NULL, NULL, NULL}
#define MEM_MEGATRON \
    {STACK_SEL_MEGATRON, STACK_LOSS_FP32_LOGITS, STACK_GATHER_PREFETCH, STACK_CP_TE, \
     STACK_PIPE_MEGATRON}
#define MEM_MEGATRON_CORE \
    {STACK_SEL_MEGATRON, STACK_LOSS_FP32_LOGITS, STACK_GATHER_PREFETCH, STACK_CP_TE, \
     STACK_PIPE_MEGATRON_CORE}

static const stack_spec k_stacks[STACK_COUNT] = {
    {"megatron-core", "core_v0.15.0..core_v0.19.0", STACK_MEGATRON_CORE, STACK_ATTN_FLASH, true,
     false,
     {ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL, ALL},
     MEM_MEGATRON_CORE,
     "Megatron-LM core (the releases emit targets): every knob, TE FP8, flash attention", true, 0,
     0, 0, "Megatron", ZERO_MEGATRON_CORE},
    {"megatron-lm-2020", "Megatron-LM v1.1 (Sep 2020) to Jan 2021", STACK_MEGATRON_LM_2020,
     STACK_ATTN_UNFUSED, false, false,
     /* sp, tp_comm_overlap, zero, ogr, opg, recompute, cp, ep, vpp, ep_comm_overlap,
      * cp_comm, grad_reduce_bf16, cuda_graph, opt_state, recompute_modules */
     {OFF, OFF, 1u << 0, OFF, OFF, RC_NONE_FULL, OFF, OFF, OFF, OFF, OFF, OFF, OFF, OFF, ALL},
     MEM_MEGATRON,
     "Megatron-LM README Sep 2020 to Jan 2021: TP, pipelining without interleaving or "
     "scatter/gather, full recompute, local DDP (no overlap), unfused attention", false, 0, 0, 0,
     "Megatron", ZERO_MEGATRON_LM},
    {"megatron-lm-2021", "Megatron-LM v2.x (SC21)", STACK_MEGATRON_LM_2021, STACK_ATTN_UNFUSED,
     false, false,
     {OFF, OFF, 1u << 0, OFF, OFF, RC_NONE_FULL, OFF, OFF, ALL, OFF, OFF, OFF, OFF, OFF, ALL},
     MEM_MEGATRON,
     "Narayanan et al. SC21: + interleaved 1F1B; full recompute, no SP, no distributed "
     "optimizer, unfused attention", false, 0, 0, 0, "Megatron",
     ZERO_MEGATRON_LM},
    {"megatron-lm-2022", "Megatron-LM v3.0 (2022)", STACK_MEGATRON_LM_2022, STACK_ATTN_UNFUSED,
     false, false,
     {ALL, OFF, 1u << 0, OFF, OFF, ALL, OFF, OFF, ALL, OFF, OFF, OFF, OFF, OFF, ALL},
     MEM_MEGATRON,
     "Korthikanti et al. 2022: + sequence parallelism, selective recompute; no distributed "
     "optimizer, unfused attention", false, 0, 0, 0, "Megatron",
     ZERO_MEGATRON_LM},
    {"deepspeed", "Megatron-DeepSpeed / DeepSpeed 2021-2022", STACK_DEEPSPEED,
     STACK_ATTN_UNFUSED, false, false,
     {OFF, OFF, ALL, ALL, OFF, RC_NONE_FULL, OFF, ALL, OFF, OFF, OFF, OFF, OFF, OFF, ALL},
     MEM_MEGATRON,
     "DeepSpeed ZeRO 0-3 with overlap_comm, its 1F1B pipeline engine (no interleaving), "
     "TP without SP, full checkpointing, unfused attention", false, 5e8, 0,
     STACK_RULE_SHARD_NO_PIPE | STACK_RULE_ETP_1 | STACK_RULE_EP_IN_DP | STACK_RULE_TOPK_2 |
         STACK_RULE_OVERLAP_BY_ZERO,
     "DeepSpeed",
     {"data parallelism without ZeRO", "ZeRO stage 1", "ZeRO stage 2", "ZeRO stage 3"}},
    {"pytorch-fsdp2", "torchtitan on PyTorch FSDP2", STACK_PYTORCH_FSDP2, STACK_ATTN_SDPA_FA2, true,
     false,
     {ALL, ALL, (1u << 0) | (1u << 2) | (1u << 3), ALL, ALL, ALL, ALL, ALL, ALL, OFF,
      CP_RING_AG, ALL, OFF, OFF, RC_MOD_OP_POLICY},
     {STACK_SEL_OP_POLICY, STACK_LOSS_EAGER_UPCAST, STACK_GATHER_FSDP2, STACK_CP_TORCH,
      STACK_PIPE_TORCH},
     "torchtitan: FSDP2 (ZeRO-2/3, DDP), DTensor TP + SP, async TP, pipelining incl. "
     "interleaved, CP, float8, SDPA flash attention", true, 0, TORCHTITAN_DDP_BUCKET_BYTES,
     STACK_RULE_DDP_ALONE | STACK_RULE_SP_WITH_TP | STACK_RULE_ASYNC_TP_COMPILED |
         STACK_RULE_FULL_EVERY_NTH | STACK_RULE_SHARD_OVERLAPS | STACK_RULE_ETP_TP_OR_1,
     "torchtitan",
     {"DDP", NULL, "FSDP2 reshard_after_forward=False", "FSDP2 reshard_after_forward=True"}},
};


const stack_spec *stack_find(const char *name)
{
    if (name == NULL)
        return NULL;
    for (size_t i = 0; i < STACK_COUNT; i++)
        if (text_equal_nocase(name, k_stacks[i].name))
            return &k_stacks[i];
    return NULL;
}

const stack_spec *stack_at(size_t i)
{
    return i < STACK_COUNT ? &k_stacks[i] : NULL;
}

int stack_zero2_whole_chunks(const stack_spec *st, int vpp)
{
    return st != NULL && st->id == STACK_MEGATRON_CORE && vpp > 1 ? vpp - 1 : 0;
}

bool stack_buckets_in_param_dtype(const stack_spec *st)
{
    return st != NULL && st->id == STACK_DEEPSPEED;
}

bool stack_grad_reduce_overlaps(const stack_spec *st, int zero, int pp)
{
    if (st == NULL || st->id != STACK_DEEPSPEED)
        return true;
    return zero >= 3 || (zero == 2 && pp <= 1);
}

bool stack_zero3_syncs_each_backward(const stack_spec *st)
{
    return st != NULL && st->id == STACK_MEGATRON_CORE;
}

bool stack_fp8_te(const stack_spec *st)
{
    return st != NULL && st->id == STACK_MEGATRON_CORE;
}

bool stack_eager_blocks(const stack_spec *st)
{
    return st != NULL && st->id == STACK_PYTORCH_FSDP2;
}

bool stack_torchtitan_launch(const stack_spec *st)
{
    return st != NULL && st->id == STACK_PYTORCH_FSDP2;
}

bool stack_megatron_launch(const stack_spec *st)
{
    if (st == NULL)
        return false;
    switch (st->id) {
    case STACK_MEGATRON_CORE:
    case STACK_MEGATRON_LM_2020:
    case STACK_MEGATRON_LM_2021:
    case STACK_MEGATRON_LM_2022: return true;
    default:                     return false;
    }
}

bool stack_p2p_splits_tp(const stack_spec *st, bool sp)
{
    switch (st != NULL ? st->id : STACK_MEGATRON_CORE) {
    case STACK_MEGATRON_LM_2020: return false;
    case STACK_MEGATRON_LM_2021:
    case STACK_MEGATRON_LM_2022:
    case STACK_DEEPSPEED:        return true;
    default:                     return sp;
    }
}

bool stack_p2p_blocking(const stack_spec *st)
{
    return st != NULL && (st->id == STACK_MEGATRON_LM_2021 || st->id == STACK_MEGATRON_LM_2022);
}

int stack_pipe_warmup(stack_pipe pipe, int pp, int vpp, int microbatches, int rank)
{
    int n, warm;
    pp = pp > 0 ? pp : 1;
    vpp = vpp > 0 ? vpp : 1;
    microbatches = microbatches > 0 ? microbatches : 1;
    n = microbatches * vpp;
    if (vpp == 1)
        warm = pp - rank - 1;
    else if (pipe == STACK_PIPE_MEGATRON && microbatches == pp)
        warm = n;   /* Megatron-LM to core_r0.9.0: all forwards first */
    else
        warm = 2 * (pp - rank - 1) + (vpp - 1) * pp;
    if (warm > n)
        warm = n;
    return warm > 0 ? warm : 0;
}

size_t stack_count(void)
{
    return STACK_COUNT;
}

const stack_spec *stack_get(int id)
{
    return id >= 0 && id < STACK_COUNT ? &k_stacks[id] : &k_stacks[STACK_MEGATRON_CORE];
}

void stack_unknown_hint(const char *name, char *hint, size_t hint_size, char *names,
                        size_t names_size)
{
    const char *list[STACK_COUNT];
    size_t used = 0;
    for (size_t i = 0; i < STACK_COUNT; i++)
        list[i] = k_stacks[i].name;
    suggest_format(name, list, STACK_COUNT, hint, hint_size);
    if (names_size > 0)
        names[0] = '\0';
    for (size_t i = 0; i < STACK_COUNT && used < names_size; i++)
        used += (size_t)snprintf(names + used, names_size - used, "%s%s", i ? ", " : "",
                                 list[i]);
}

static const char *const version_tag[MEGATRON_VERSION_COUNT] = {
    "core_v0.15.0", "core_v0.16.0", "core_v0.17.0", "core_v0.18.0", "core_v0.19.0"};

int megatron_version_parse(const char *text, megatron_version *out)
{
    for (int v = 0; v < MEGATRON_VERSION_COUNT; v++) {
        const char *tag = version_tag[v], *number = tag + strlen("core_v");
        size_t minor = strlen(number) - strlen(".0");   /* "0.15" */
        if (strcmp(text, tag) == 0 || strcmp(text, number) == 0 ||
            (strncmp(text, number, minor) == 0 && text[minor] == '\0')) {
            *out = (megatron_version)v;
            return 0;
        }
    }
    return -1;
}

const char *megatron_version_tag(megatron_version v)
{
    return (int)v >= 0 && v < MEGATRON_VERSION_COUNT ? version_tag[v] : "?";
}
