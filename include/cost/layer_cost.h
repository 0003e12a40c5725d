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

/* Model FLOPs of one step (no recompute), the figure behind MFU. */
double model_flops_per_step(const model *m, int gbs, int seq_len);

/* Time and memory of the contiguous decoder layers [first, first + n) on one
 * GPU of node group `group` under strategy `s` (its tp, cp, mbs, seq_len, sp,
 * recompute, zero; `tp` overrides s->tp when > 0), for one micro-batch; the
 * embedding when `first_stage`, the output layer, logits and loss when
 * `last_stage`.  For partitioners: a stage's cost is the sum of its ranges.
 * Memory holds weights, grads and optimizer states of the range and ONE
 * micro-batch of activations (act_bytes); the caller multiplies by the
 * micro-batches in flight (memory_inflight). */
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
    double act_bytes;               /* kept activations, one micro-batch */
    double act_peak_extra_bytes;    /* transient working set (logits, recompute) */
    int n_tensors;                  /* weight tensors (ZeRO-3 collectives) */
} range_cost;

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
 * AttnFuncWithCPAndQKVOA2A). */
void cost_cp_exchange(const model *m, const layer_spec *l, const node_group *ng,
                      const gen_constants *k, const comm_link *cpl, const strategy *s, int tp,
                      double attn, double *fwd, double *bwd);

/* Transient bytes of one attention layer's K/V exchange on one GPU (one
 * micro-batch): all_gather holds the whole sequence's K and V and, in the
 * backward, their gradients (2 cp x this rank's K/V, 16-bit; Transformer
 * Engine saves only the local K/V for the backward, so nothing more is
 * kept); the other types exchange blocks of the rank's own size: 0. */
double cost_cp_transient_bytes(const layer_spec *l, const strategy *s, int tp);

/* p2p time of one micro-batch's activations crossing the boundary after
 * pipeline rank i (to rank i+1; for i = pp-1 the wrap-around to rank 0 of
 * an interleaved schedule): b s / cp x h / tp elements at the model's
 * activation width, over NVLink when the whole pipeline sits in one NVLink
 * domain of one node group, else over the link between the two ranks' node
 * groups (cluster_link_between), efficiency applied; a stage spanning
 * groups: the slowest link between any of its groups and the other's. */
double cost_boundary_p2p_s(const model *m, const cluster *c, const cost_params *p,
                           const strategy *s, int i);

/* Times above this are absurd inputs (1e-300 B/s links): capped so they
 * stay finite; non-finite and negative times become the cap and 0. */
#define COST_TIME_CAP_S 1e30
double cost_cap_time(double t);

/* Megatron's DDP bucket: max(40M, 1M x dp) parameters (distributed.py). */
double cost_dp_bucket_params(int dp);

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
