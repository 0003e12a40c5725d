/* layer_cost.h: the time and memory of decoder layers on one GPU, for one
 * micro-batch -- the building block of a stage's cost (schedule/evaluate.h
 * composes stages into a step; the partitioners sum ranges).
 */
#ifndef PLANNER_COST_LAYER_COST_H
#define PLANNER_COST_LAYER_COST_H

#include <stdbool.h>
#include "cost/comm.h"
#include "cost/params.h"
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "inputs/stack.h"
#include "model/strategy.h"

/* Fills *p with the documented default constants (layer_cost.c says what
 * they were fitted on). */
void cost_params_default(cost_params *p);

/* Fills *p with the unfitted constants: the defaults with every constant
 * `planner calibrate` can fit set to a value that owes nothing to the
 * validation corpus (layer_cost.c says where each comes from).  Cross-
 * validation's folds start from them, so a fold never sees its left-out
 * source through its start, its prior or its fallback. */
void cost_params_unfitted(cost_params *p);

/* The constants of GPU generation `gen` under software stack `stack`
 * (stack_id; the cluster's cluster.stack):
 * p->gen[gen] with the stack's attention efficiency where its attention is
 * unfused (STACK_ATTN_UNFUSED) and its host time per step where it has its
 * own (stack_spec.own_host_time; none of the built-in stacks). */
void cost_constants(gen_constants *out, const cost_params *p, int stack, gpu_generation gen);

/* Core attention's backward over its forward (16-bit, every key the forward
 * scores): flash attention's five matmuls to two (layer_cost.c). */
double cost_attention_bwd_ratio(void);

/* The SMs HybridEP's dispatch and combine kernels hold, as every validating
 * run set them (Megatron-Bridge's benchmark setup, layer_cost.c): the cost's
 * share of an overlapped HybridEP all-to-all, and the emitted
 * --moe-hybridep-num-sms.  Megatron-Core's own default differs by release
 * (core_v0.16.0/0.17.x moe_hybridep_num_sms 16; from core_v0.18.0 None,
 * DeepEP's HybridEPBuffer default: 32 inside one NVLink domain until DeepEP
 * a0d27f1, 24 after). */
#define COST_HYBRIDEP_SMS 32

/* The SMs DeepEP's intranode dispatch and combine kernels hold (the flex
 * dispatcher's backend on core_v0.15.0, strategy.flex_deepep): Megatron-Core
 * core_v0.15.0 transformer_config.py moe_deepep_num_sms = 20, which
 * moe/token_dispatcher.py _DeepepManager.__init__ hands to DeepEP
 * (fused_a2a.py set_deepep_num_sms -> deep_ep Buffer.set_num_sms; DeepEP's
 * own default, buffer.py Buffer.num_sms, is 20 too).  The emitted
 * --moe-enable-deepep leaves it at that default. */
#define COST_DEEPEP_SMS 20

/* An FP8 attention layer's (model.fp8_attention, FP8-family recipe) time
 * over the 16-bit one's, forward or backward, above head_dim 64: cuDNN's
 * published SDPA benchmark at the nearer shape (multi-latent attention,
 * head_dim 128) on Blackwell and Blackwell Ultra; 1 elsewhere
 * (layer_cost.c). */
double cost_fp8_attention_ratio(const model *m, const layer_spec *l, const gpu_spec *gpu,
                                bool backward);

/* True when the Transformer Engine graphs of the MoE router and dispatch
 * preprocessing (strategy.te_moe_graphs) leave an MoE layer of m under s
 * (its dispatcher, ep, full-iteration graph) less host time on a GPU of
 * generation gen than the uncaptured layer (moe_host_fwd_s): the search's
 * test for turning the free knob on. */
bool cost_te_moe_graphs_help(const model *m, const cost_params *p, const strategy *s,
                             gpu_generation gen);

/* Model FLOPs of one step (no recompute), the figure behind MFU. */
double model_flops_per_step(const model *m, int gbs, int seq_len);

/* Time and memory of the contiguous decoder layers [first, first + n) on one
 * GPU of node group `group` under strategy `s` (its tp, cp, ep, mbs, seq_len,
 * sp, recompute and the layer knobs, never pp, dp, vpp, gbs, the ZeRO stage,
 * the DP overlaps or the pipeline split: evaluate.c's memo across candidates
 * keys on the others alone, memo_knobs; `tp` overrides s->tp when > 0), for
 * one micro-batch; the embedding when `first_stage`, the output layer,
 * logits and loss when `last_stage`.  For partitioners: a stage's cost is
 * the sum of its ranges.  Memory: the parameters one GPU holds of the range
 * (its weights, gradients and optimizer states follow from them and the
 * ZeRO stage, memory.c) and ONE micro-batch of activations (act_bytes); the
 * caller multiplies by the micro-batches in flight (memory_inflight).  The layers count only
 * through their specs, in order (layer_spec_same), never their indices:
 * evaluate() costs a pipeline's alike chunks once (test_cost
 * alike_ranges_cost_alike). */
typedef struct range_cost {
    double fwd_s, bwd_s;            /* incl. recompute and exposed TP comm */
    double compute_s;               /* GEMMs, attention, element-wise (fwd + bwd) */
    double recompute_s;             /* re-forward */
    double recompute_share;         /* the largest recompute_s / bwd_s of one layer */
    double tp_comm_s;               /* exposed TP/SP collectives (fwd + bwd) */
    double cp_comm_s;               /* exposed CP K/V exchange (fwd + bwd) */
    double ep_comm_s;               /* MoE all-to-all dispatch + combine (fwd + bwd) */
    double params;                  /* parameters held by one GPU */
    double expert_params;           /* of which routed-expert parameters (their
                                       grads reduce over tp cp dp / ep ranks) */
    double vocab_params;            /* of which the embedding and output
                                       matrices (not Transformer Engine
                                       modules: no cached FP8 weight,
                                       memory_fp8_weight_cache_bytes) */
    double act_bytes;               /* kept activations, one micro-batch */
    double act_peak_extra_bytes;    /* transient working set (recompute, the
                                       loss's: the convention sums them) */
    double layer_buf_bytes;         /* the largest buffers one layer holds only
                                       while its attention or token dispatch
                                       runs (CP exchange, MoE all-to-all) */
    double loss_bytes;              /* the loss's working set (last stage; part
                                       of act_peak_extra_bytes) */
    double embed_bwd_bytes;         /* the embedding's backward working set
                                       (first stage; memory_fsdp2_embedding_
                                       bwd_bytes), after every layer's */
    int n_tensors;                  /* weight tensors (ZeRO-3 collectives) */
} range_cost;

/* Full recompute's leading layers (Megatron-Core TransformerBlock.
 * _checkpointed_forward, --recompute-method block --recompute-num-layers
 * N): N when block recompute re-runs the first N layers of each chunk and
 * the rest keep their activations; 0 when every layer of a range costs
 * alike wherever it sits (no full recompute, every layer re-run, or
 * uniform).  The placer's partitioner costs a stage's first N layers as
 * recomputed and the rest as kept by it. */
int cost_recompute_lead_layers(const strategy *s);

/* Uniform recompute's groups (--recompute-method uniform
 * --recompute-num-layers N): N when full recompute re-runs every layer in
 * groups of N from each chunk's first, keeping each group's input alone
 * (so a chunk's layers are whole groups: knobs.c rule_recompute); 1
 * otherwise.  The placer's partitioner splits whole groups. */
int cost_recompute_group_layers(const strategy *s);

/* The transient bytes of range r at its peak, the one rule evaluate() and
 * the partitioner use: its working set (act_peak_extra_bytes: one layer's
 * recompute plus the loss's) with the layer-time buffers in place of the
 * loss's working set where larger -- they live inside a layer's attention
 * or dispatch, the loss between the last layer's forward and its backward,
 * never at once: ws + max(layer_buf, loss); the embedding's backward
 * (embed_bwd_bytes) runs after the stage's last layer has finished its
 * own: the larger of the two. */
double cost_range_transient_bytes(const range_cost *r);

void cost_layer_range(const model *m, const cluster *c, const cost_params *p,
                      const strategy *s, int group, int tp, int first, int n,
                      bool first_stage, bool last_stage, range_cost *out);
/* The same on node group `ng` itself (a cost_member_view()) under software
 * stack `stack` (the cluster's: cluster.stack). */
void cost_layer_range_on(const model *m, const node_group *ng, const cost_params *p, int stack,
                         const strategy *s, int tp, int first, int n, bool first_stage,
                         bool last_stage, range_cost *out);

/* Member j of a stage spanning node groups (stage_mix) as its kernels and
 * collectives see it (AMP's model, Li et al., NeurIPS 2022: each member
 * computes its uniform share on its own GPU; the slowest paces the stage):
 * group mx->group[j]'s GPU, NVLink and latencies, with every network hop at
 * the slowest rate and the largest latency among the members' own
 * inter-node links and the links between them (cluster_link_between), and
 * an NVLink domain no larger than the member's share of the stage, so a
 * group of the stage's ranks larger than that share crosses the network. */
void cost_member_view(const cluster *c, const stage_mix *mx, int j, node_group *out);
/* mx names 2 .. STAGE_MIX_MAX groups of c, each with GPUs. */
bool cost_mix_valid(const cluster *c, const stage_mix *mx);

/* The expert-parallel groups member j of a stage spanning node groups takes
 * part in, each as the members it has on each node group: an EP group of
 * ep ranks etp apart inside a block of ep x etp consecutive ranks of the
 * stage (Megatron-Core parallel_state.py, core_v0.15.0: the expert rank
 * generator's order tp-ep-dp-pp with the expert tensor-parallel size as
 * its tp and cp 1, so pipeline stage i's tp cp dp ranks are tp cp dp / (ep
 * etp) such blocks; the stage's members are its runs of ranks on each node
 * group, in mx's order).  A block inside member j is a one-part group on
 * its group; a block across a member boundary has parts on every group it
 * reaches.  n 0: no expert parallelism (ep x etp 1). */
#define COST_EP_KINDS 6
typedef struct cost_ep_group {
    int n;                          /* node groups it spans, 1 .. STAGE_MIX_MAX */
    int group[STAGE_MIX_MAX];       /* indices into cluster.group */
    int ranks[STAGE_MIX_MAX];       /* its members on each */
} cost_ep_group;
typedef struct cost_ep_span {
    int n;                          /* distinct groups, 0 .. COST_EP_KINDS */
    cost_ep_group kind[COST_EP_KINDS];
} cost_ep_span;
void cost_member_ep_span(const stage_mix *mx, int j, const strategy *s, cost_ep_span *out);
/* Whether one of stage i's EP groups spans node groups (its all-to-all
 * paced by the slowest member's links). */
bool cost_stage_ep_mixed(const strategy *s, int i);

/* cost_layer_range_on() for member j of a stage spanning groups: on its view
 * (cost_member_view), with the MoE all-to-all of each of its EP groups
 * (cost_member_ep_span: eps) over the groups and links it spans
 * (comm_alltoall_mixed_s), the member's all-to-all being the slowest of its
 * EP groups'.  eps->n 0: cost_layer_range_on() on the view. */
void cost_layer_range_member(const model *m, const cluster *c, const node_group *view,
                             const cost_ep_span *eps, const cost_params *p, const strategy *s,
                             int tp, int first, int n, bool first_stage, bool last_stage,
                             range_cost *out);

/* The context-parallel K/V exchange of one attention layer (layer l, one
 * micro-batch, attention compute `attn` seconds forward) under
 * s->cp_comm, exposed seconds forward and backward (0 when cp 1):
 *   p2p        ring: cp - 1 sends of this rank's K/V block (b s / cp tokens
 *              x 2 K/V widths / tp, 16-bit) over the cp link, overlapped
 *              with attention (cost_overlapped); the backward sends twice
 *              the bytes behind ATTN_BWD_RATIO x attn;
 *   a2a        DeepSpeed-Ulysses: all-to-alls of Q, K, V (b s / cp tokens x
 *              (q + 2 kv) widths / tp) before attention and of the output
 *              after it, the same two in the backward, not overlapped;
 *   all_gather K, V of the whole sequence gathered before attention; the
 *              backward gathers them again and reduce-scatters their
 *              gradients; not overlapped;
 *   a2a+p2p    a2a's all-to-alls over the s->cp_a2a consecutive cp ranks,
 *              then p2p's ring over the cp / cp_a2a groups (stride tp
 *              cp_a2a, the same bytes per block).
 * Megatron-Core TransformerConfig.cp_comm_type (core_v0.15.0), Transformer
 * Engine pytorch/attention/dot_product_attention/context_parallel.py
 * (AttnFuncWithCPAndKVP2P, AttnFuncWithCPAndKVAllGather,
 * AttnFuncWithCPAndQKVOA2A).  On a stack with PyTorch's ring attention
 * (`stack`'s memory.cp_attn STACK_CP_TORCH) all_gather and p2p are torch's
 * allgather and alltoall rotaters, the K/V repeated to the query heads, and
 * the exchange time includes the ring's fp32 merge and gradient passes
 * (layer_cost.c cp_torch_exchange). */
void cost_cp_exchange(const model *m, const layer_spec *l, const node_group *ng,
                      const gen_constants *k, const comm_link *cpl, const strategy *s, int tp,
                      int stack, double attn, double *fwd, double *bwd);

/* Transient bytes of one attention layer's context-parallel exchange on one
 * GPU (one micro-batch), beyond what attention without CP holds, from
 * Transformer Engine's context-parallel attention (transformer_engine/
 * pytorch/attention/dot_product_attention/context_parallel.py, as at
 * d0067d0; the same structure since TE 1.x).  Q and the output O are b s /
 * cp tokens x the query heads per TP rank, KV this rank's K and V (16-bit;
 * cp_kv_bytes):
 *   p2p (AttnFuncWithCPAndKVP2P): the forward keeps every step's K/V block
 *     (p2p_comm_buffers: the local K/V concatenated, then cp - 1 received)
 *     and every step's partial output (out_per_step) until the final
 *     correction, cp (KV + O); the backward holds the dQ accumulator, two
 *     [K/V, dK/dV] double buffers and one step's dQ dK dV, 2 Q + 5 KV; the
 *     larger;
 *   all_gather (AttnFuncWithCPAndKVAllGather): the whole sequence's K and
 *     V and, in the backward, their gradients, 2 cp KV (only the local K/V
 *     is saved);
 *   a2a (AttnFuncWithCPAndQKVOA2A, flash_attn_a2a_communicate): each
 *     all-to-all makes its input contiguous and receives into an
 *     empty_like buffer; the received Q K V are what attention saves, so
 *     the forward holds the caller's Q K V and the send copies, 2 (Q + KV),
 *     or for the output the caller's Q K V, the reordered O and its receive
 *     buffer, Q + KV + 2 O; the backward's dQ dK dV the same 2 (Q + KV):
 *     Q + KV + max(Q + KV, 2 O);
 *   a2a+p2p: the a2a term, or the ring's over cp / cp_a2a groups (blocks
 *     of the same bytes) with the caller's Q K V still held, Q + KV + the
 *     ring term; the larger.
 * On a stack with PyTorch's ring attention (stack_memory.cp_attn
 * STACK_CP_TORCH: torch/distributed/tensor/experimental/_attention.py
 * _templated_ring_attention_backward, whose backward holds the most), with
 * K and V repeated to the query heads (torchtitan models/llama/model.py
 * repeat_kv: KV = 2 Q): fp32 dQ dK dV accumulators 2 (Q + KV), the
 * contiguous K V and their concatenation 2 KV, the rotater's K/V (all_gather,
 * _AllGatherRotater: the whole sequence, cp KV; p2p, _AllToAllRotater: one
 * block, KV), one step's dQ dK dV Q + KV, the fp32 dK/dV concatenation sent
 * and received 4 KV: 3 Q + (9 + cp or 1) KV.
 * 0 at cp 1.  Alive only while the layer's attention runs (forward or
 * backward). */
double cost_cp_transient_bytes(const layer_spec *l, const strategy *s, int tp, int stack);

/* Activation bytes the context-parallel exchange adds to what a layer
 * saves (one micro-batch, one GPU): a2a and a2a+p2p save the attention's
 * output in its head-scattered layout (TE AttnFuncWithCPAndQKVOA2A saves
 * out_part; the output all-to-all'd back is a new tensor, the projection's
 * saved input), one O more, b s / cp x q / tp x 2 B, where core attention
 * is not recomputed; p2p and all_gather save attention's own output: 0. */
double cost_cp_saved_bytes(const layer_spec *l, const strategy *s, int tp);

/* One micro-batch's activations crossing a pipeline stage boundary on one
 * GPU of the stack: b s / cp x h elements at the model's activation width
 * (2 B, 4 for fp32 models), / tp where the stack splits them across the TP
 * ranks (stack_p2p_splits_tp: sequence parallelism, or Megatron-LM
 * 2021-22's and DeepSpeed's scatter/gather); what each rank sends, and
 * what torch pipelining's buffers hold. */
double cost_boundary_bytes(const model *m, const strategy *s, int tp, int stack);

/* What the stack's pipeline keeps of one micro-batch on the last stage of
 * one GPU: memory_pipe_kept_output_bytes of its b s / cp tokens (the
 * logits, / tp); 0 but for torch pipelining at pp > 1. */
double cost_kept_output_bytes(const model *m, const strategy *s, int tp, int stack);

/* p2p time of one micro-batch's activations crossing the boundary after
 * pipeline rank i (to rank i+1; for i = pp-1 the wrap-around to rank 0 of
 * an interleaved schedule): cost_boundary_bytes, over NVLink when the two
 * stages share an NVLink domain of one node group (layer_cost.c
 * boundary_in_domain), else over the link between the two ranks' node
 * groups (cluster_link_between), efficiency applied; a stage spanning
 * groups: the slowest link between any of its groups and the other's. */
double cost_boundary_p2p_s(const model *m, const cluster *c, const cost_params *p,
                           const strategy *s, int i);

/* Times above this are absurd inputs (1e-300 B/s links): capped so they
 * stay finite; non-finite and negative times become the cap and 0. */
#define COST_TIME_CAP_S 1e30
double cost_cap_time(double t);

/* The data-parallel bucket in parameters at ZeRO stage `zero`, of
 * gradients of grad_bytes each: at zero 0 the stack's replicated-DDP bucket
 * where it has one (stack_spec.ddp_bucket_bytes / grad_bytes: torchtitan's
 * bucket_cap_mb), else stack st's (DeepSpeed's reduce_bucket_size), else
 * (st NULL or 0) Megatron's DDP bucket: max(40M, 1M x dp) parameters
 * (distributed.py). */
double cost_dp_bucket_params(const stack_spec *st, int dp, int zero, double grad_bytes);

/* Exposed part of a collective of `t` seconds overlapped with `window`
 * seconds of compute (what does not fit shows in full, what fits slows the
 * compute by k->overlap_exposed of itself). */
double cost_overlapped(double t, double window, const gen_constants *k);

/* cost_overlapped() for a collective over a group that spans nodes when
 * `network` (NIC-bound: k->overlap_exposed_net of what fits shows), else on
 * NVLink (k->overlap_exposed). */
double cost_overlapped_on(double t, double window, const gen_constants *k, bool network);

/* Adds part's times, kept activations and weight tensors to *acc. */
void range_cost_add_work(range_cost *acc, const range_cost *part);

#endif
