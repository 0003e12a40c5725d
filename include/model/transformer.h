/* transformer.h: what one decoder layer (and the embedding / output layer)
 * costs, from the model description alone: FLOPs, GEMM shapes, memory-bound
 * traffic, parameters and activation bytes.  No hardware here (compute.c
 * turns these into seconds, memory.c into bytes per GPU).
 *
 * Shapes are for one micro-batch of `tokens` = micro-batch x seq / cp tokens on
 * one GPU of a tensor-parallel group of `tp` (column-parallel GEMMs split their
 * output width, row-parallel ones their input width).
 */
#ifndef PLANNER_TRANSFORMER_H
#define PLANNER_TRANSFORMER_H

#include <stdbool.h>
#include "inputs/model.h"
#include "model/strategy.h"

/* One GEMM: C[m x n] = A[m x k] B[k x n], `count` times. */
typedef struct tf_gemm {
    double m, n, k;
    double count;
} tf_gemm;

#define TF_MAX_GEMMS 12

/* The GEMMs of one layer's forward pass on one GPU (core attention excluded:
 * see tf_attention_flops).  Returns how many were written (<= TF_MAX_GEMMS).
 * MoE layers: the routed experts' GEMMs at `top_k` tokens per token, evenly
 * spread over the experts (ep = 1: tf_layer_gemms_ep), plus the router
 * and the shared experts. */
int tf_layer_gemms(const model *m, const layer_spec *l, double tokens, int tp,
                   tf_gemm *out);

/* The same with expert parallelism `ep` and expert tensor parallelism
 * `etp` (Megatron-Core MoE layer).  MoE layers give QKV, proj, the router
 * (tokens x experts x h, replicated), the shared experts (a dense MLP of
 * shared_experts x shared_expert_ffn, TP-split) and the routed experts as
 * grouped GEMMs: experts / ep local experts (`count`), each over
 *     m = tokens x top_k / tp x etp / (experts / ep)
 * routed copies (tokens balanced over the experts; with etp > 1 the
 * dispatcher all-gathers the copies of the etp ranks, token_dispatcher.py
 * dispatch_postprocess), n = expert_ffn / etp (x2 fused gate+up with SwiGLU)
 * for fc1, h over k = expert_ffn / etp for fc2 (the experts' weights split
 * column- then row-parallel over etp: the same FLOPs per GPU as etp 1, on
 * etp x the tokens at 1/etp of the width).  Few tokens per expert make m
 * small: compute.c's operand-traffic term then slows them down.  Dense
 * layers: identical to tf_layer_gemms. */
int tf_layer_gemms_ep(const model *m, const layer_spec *l, double tokens, int tp, int ep,
                      int etp, tf_gemm *out);

/* How many of a layer's GEMMs (tf_layer_gemms*) belong to attention, before
 * its MLP's: QKV and the output projection (2), or MLA's (mla_gemms): q
 * down, q up, kv down, kv up, output (5; 4 without a q LoRA rank, the q
 * projection in place of q down + up). */
int tf_attention_gemm_count(const model *m);

/* Width of the shared experts' MLP: shared_experts x shared_expert_ffn
 * (expert_ffn when 0); 0 for dense models. */
double tf_shared_ffn(const model *m);

/* Bytes one GPU sends into one all-to-all (dispatch or combine) of an MoE
 * layer before the remote fraction is taken: its tokens / tp x top_k copies
 * of h 16-bit elements.  0 for dense layers. */
double tf_moe_dispatch_bytes(const model *m, const layer_spec *l, double tokens, int tp);

/* Routed-expert parameters of decoder layer i (all experts; the part of
 * tf_layer_params that expert parallelism shards); 0 for dense layers. */
double tf_layer_expert_params(const model *m, int i);

/* FLOPs of a GEMM list (2 m n k count). */
double tf_gemm_flops(const tf_gemm *g, int n);

/* Forward FLOPs of core attention (scores and weighted sum, 4 B s^2 a hd / tp
 * counted in full, as the published conventions do; with m's multi-latent
 * attention the weighted sum at v_head_dim, 2 B s^2 a (hd + v) / tp; m may
 * be NULL) for `seqs` sequences of `seq` tokens of which this GPU holds
 * seq/cp queries. */
double tf_attention_flops(const model *m, const layer_spec *l, double seqs, int seq, int cp,
                          int tp);

/* Forward FLOPs of core attention per score (one query-key pair):
 * 2 qk for QK^T and 2 v for PV, v = qk but with multi-latent attention's
 * v_head_dim (m may be NULL). */
double tf_attention_score_flops(const model *m, const layer_spec *l);

/* Bytes read and written by one layer's memory-bound kernels in the forward
 * pass on one GPU (norms, bias-dropout-add, activation function, RoPE), 16-bit
 * elements.  Parts outside the TP region are divided by tp only with SP. */
double tf_layer_elementwise_bytes(const model *m, const layer_spec *l, double tokens,
                                  int tp, bool sp);

/* Bytes the MLP activation function reads and writes over `width` channels
 * of `tokens` tokens on one GPU (16-bit; GeLU reads 1 writes 1, SwiGLU
 * reads 2 writes 1), inside the TP region. */
double tf_mlp_activation_bytes(const model *m, double tokens, double width, int tp);

/* Model FLOPs of one layer's forward pass per token, no split (GEMMs plus
 * full non-causal core attention at sequence length `seq`). */
double tf_layer_flops_per_token(const model *m, const layer_spec *l, int seq);

/* Output layer (logits) FLOPs per token, forward. */
double tf_logits_flops_per_token(const model *m);

/* Parameters of one decoder layer (= model_layer_params for that layer). */
double tf_layer_params(const model *m, int i);

/* Weight tensors of a layer (each gathered / reduced separately by ZeRO-3). */
int tf_layer_tensors(const model *m, const layer_spec *l);

/* Bytes of one residual-dropout mask per element: 1 (Korthikanti et al.'s
 * byte mask), 0 at p = 0, where none is made -- ATen's dropout returns its
 * input for p == 0 (aten/src/ATen/native/Dropout.cpp), and so does
 * torch._decomp's (a clone), which torch.compile lowers Megatron-Core's
 * fused bias-dropout-add with (megatron/core/jit.py: jit_fuser is
 * torch.compile from PyTorch 2.2; fusions/fused_bias_dropout.py). */
/* The routed experts' activations a clamped GLU keeps beyond an unclamped
 * one's, one micro-batch of `tokens` tokens on tp 1 (divide by tp): outside
 * Transformer Engine's fused grouped MLP (model.fused_grouped_mlp),
 * Megatron-Core's clamp (fusions/fused_bias_geglu.py
 * weighted_bias_quick_geglu_impl: two clamps and a cat before the fused
 * activation, layer_cost.c moe_eager_glu_bytes) keeps fc1's 16-bit output
 * for the clamps' backward besides the clamped copy the activation saves:
 * 4 tokens k f_e bytes (model.glu_limit > 0; else 0). */
double tf_moe_glu_clamp_kept_bytes(const model *m, const layer_spec *l, double tokens);
double tf_dropout_mask_bytes(const model *m);

/* Activation bytes one layer keeps for the backward pass, per micro-batch of
 * `seqs` sequences of `seq` tokens, on one GPU (Korthikanti et al. 2022 with
 * flash attention: no s x s term; GQA and any ffn width):
 *   outside the TP region (LN inputs, QKV and MLP inputs, dropout masks)
 *       10 s b h                       divided by tp only with SP
 *       (8 s b h at residual dropout 0: no masks, tf_dropout_mask_bytes)
 *   inside it (Q, K, V, attention output, MLP fc1 and activation outputs)
 *       2 s b (2 a hd + 2 g hd) + 4 s b f (GeLU) or 6 s b f (SwiGLU),  / tp
 *   selective recompute: flash attention keeps nothing s x s, so the same;
 *   full recompute: the layer input only, 2 s b h (/ tp with SP).
 * GPT (f = 4h, MHA): 34 s b h with SP / t, s b h (10 + 24/t) without. */
double tf_layer_activation_bytes(const model *m, const layer_spec *l, double seqs,
                                 int seq, int cp, int tp, bool sp, recompute_mode rc);

#endif
