/* transformer.c: per-layer work of a decoder-only transformer, from the model
 * description alone (no hardware).
 *
 * Notation (../shared/reference/cost-model.md): b micro-batch, s sequence,
 * h hidden, a heads, g KV heads, hd head dim, f ffn width, V vocabulary,
 * t TP degree.  A multiply-add is 2 FLOPs.  Per layer, forward:
 *   QKV   2 b s h (a + 2 g) hd        column-parallel, output / t
 *   proj  2 b s (a hd) h              row-parallel, input / t
 *   MLP   4 b s h f (GeLU), 6 b s h f (SwiGLU: gate and up fused in one GEMM)
 *   core attention 4 b s^2 a hd (counted in full, as Narayanan eq. 3 does);
 *                  a sliding window of w (Mistral v0.1, Gemma 2/3, gpt-oss,
 *                  StarCoder2) scores each query against 2 w - w^2/s keys in
 *                  those units, chunks of c (Llama 4) against c: the same
 *                  causal fraction as the dense count (attention_keys)
 *   logits 2 b s h V (last stage)
 * GPT-3 175B per token: 24 h^2 + 4 s h per layer -> Narayanan eq. 3 with f=4h.
 * MoE layers (Megatron-Core, experts not tensor-parallel): router 2 b s h E,
 * shared experts a dense MLP of S x f_s, routed experts k copies of every
 * token through an expert MLP of f_e, run as E/ep grouped GEMMs of
 * b s k / (t E/ep) tokens each on one GPU (tf_layer_gemms_ep); the
 * permutation around the all-to-all and the router's softmax are HBM
 * traffic; the dispatched copies (k b s h) are kept for the backward.
 * Memory-bound traffic and activation bytes: see transformer.h.  MLA layers
 * (multi-latent attention, DeepSeek-V2/V3; Megatron-Core
 * transformer/multi_latent_attention.py MLASelfAttention) run their own
 * projections (mla_gemms): the down-projections h -> q_lora and h -> kv_lora
 * + rope are "duplicated" (every TP rank computes them whole), the
 * up-projections q_lora -> heads (nope + rope) and kv_lora -> heads (nope +
 * v) column-parallel, the output heads v -> h row-parallel; without
 * q_lora_rank the query is one column-parallel h -> heads (nope + rope).
 * Core attention: QK^T over nope + rope (the model's head_dim), PV over v
 * (tf_attention_flops).
 * Invariant: every function is pure and allocation-free.
 */
#include "model/transformer.h"

/* Effective dense-equivalent MLP widths of a layer: routed experts (top-k
 * of them per token) and shared experts. */
static double mlp_width_active(const model *m, const layer_spec *l)
{
    if (l->moe && m->moe.experts > 0)
        return (double)m->moe.top_k * m->moe.expert_ffn + tf_shared_ffn(m);
    return l->ffn_hidden;
}

double tf_shared_ffn(const model *m)
{
    double sffn = m->moe.shared_expert_ffn > 0 ? m->moe.shared_expert_ffn : m->moe.expert_ffn;
    return m->moe.experts > 0 ? m->moe.shared_experts * sffn : 0;
}

int tf_layer_gemms(const model *m, const layer_spec *l, double tokens, int tp,
                   tf_gemm *out)
{
    return tf_layer_gemms_ep(m, l, tokens, tp, 1, 1, out);
}

/* MLA's projections (the file's header) into out; returns how many. */
static int mla_gemms(const model *m, const layer_spec *l, double tokens, double t,
                     tf_gemm *out)
{
    const model_mla *a = &m->mla;
    double h = l->hidden, heads = l->heads;
    double qk = (double)a->qk_nope_head_dim + a->qk_rope_head_dim;
    int n = 0;
    if (a->q_lora_rank > 0) {
        out[n++] = (tf_gemm){tokens, a->q_lora_rank, h, 1};               /* q down */
        out[n++] = (tf_gemm){tokens, heads * qk / t, a->q_lora_rank, 1};  /* q up */
    } else {
        out[n++] = (tf_gemm){tokens, heads * qk / t, h, 1};               /* q */
    }
    out[n++] = (tf_gemm){tokens, (double)a->kv_lora_rank + a->qk_rope_head_dim, h, 1};
    out[n++] = (tf_gemm){tokens, heads * ((double)a->qk_nope_head_dim + a->v_head_dim) / t,
                         a->kv_lora_rank, 1};                              /* kv up */
    out[n++] = (tf_gemm){tokens, h, heads * a->v_head_dim / t, 1};        /* output proj */
    return n;
}

int tf_attention_gemm_count(const model *m)
{
    if (m->mla.kv_lora_rank > 0)
        return m->mla.q_lora_rank > 0 ? 5 : 4;
    return 2;
}

int tf_layer_gemms_ep(const model *m, const layer_spec *l, double tokens, int tp, int ep,
                      int etp, tf_gemm *out)
{
    double h = l->hidden, t = tp > 0 ? tp : 1;
    double qw = (double)l->heads * l->head_dim, kvw = (double)l->kv_heads * l->head_dim;
    double glu = activation_gated(m->act) ? 2.0 : 1.0;
    int n = 0;

    if (m->mla.kv_lora_rank > 0) {
        n = mla_gemms(m, l, tokens, t, out);
    } else {
        out[n++] = (tf_gemm){tokens, (qw + 2.0 * kvw) / t, h, 1};   /* QKV */
        out[n++] = (tf_gemm){tokens, h, qw / t, 1};                  /* output proj */
    }
    if (l->moe && m->moe.experts > 0) {
        double e = m->moe.experts, k = m->moe.top_k, fe = m->moe.expert_ffn;
        double local = e / (ep > 0 ? ep : 1), et = etp > 1 ? etp : 1;
        /* routed copies per local expert: the tp x ep ranks' tokens x top-k
         * spread evenly over the experts, gathered over the etp ranks that
         * split each expert's ffn */
        double per_expert = tokens * k / t * et / local;
        double fs = tf_shared_ffn(m);
        out[n++] = (tf_gemm){tokens, e, h, 1};                   /* router */
        if (fs > 0) {
            out[n++] = (tf_gemm){tokens, glu * fs / t, h, 1};    /* shared fc1 */
            out[n++] = (tf_gemm){tokens, h, fs / t, 1};          /* shared fc2 */
        }
        out[n++] = (tf_gemm){per_expert, glu * fe / et, h, local};   /* grouped fc1 */
        out[n++] = (tf_gemm){per_expert, h, fe / et, local};         /* grouped fc2 */
        return n;
    }
    out[n++] = (tf_gemm){tokens, glu * l->ffn_hidden / t, h, 1};  /* fc1 (gate+up) */
    out[n++] = (tf_gemm){tokens, h, l->ffn_hidden / t, 1};        /* fc2 */
    return n;
}

double tf_moe_dispatch_bytes(const model *m, const layer_spec *l, double tokens, int tp)
{
    if (!l->moe || m->moe.experts <= 0)
        return 0;
    return tokens / (tp > 0 ? tp : 1) * m->moe.top_k * l->hidden * 2.0;
}

double tf_layer_expert_params(const model *m, int i)
{
    const layer_spec *l;
    double h, fe, p;
    if (m == NULL || m->layer == NULL || i < 0 || i >= m->layers)
        return 0;
    l = &m->layer[i];
    if (!l->moe || m->moe.experts <= 0)
        return 0;
    h = l->hidden;
    fe = m->moe.expert_ffn;
    p = model_mlp_params(m, h, fe);
    return (double)m->moe.experts * p;
}

double tf_gemm_flops(const tf_gemm *g, int n)
{
    double sum = 0;
    int i;
    for (i = 0; i < n; i++)
        sum += 2.0 * g[i].m * g[i].n * g[i].k * g[i].count;
    return sum;
}

/* Keys each query is scored against, in the full (non-causal) count's units:
 * s for full attention.  A causal window of w keys does s w - w^2 / 2 of the
 * full causal s^2 / 2, so 2 w - w^2 / s; causal chunks of c do s c / 2, so c. */
static double attention_keys(const layer_spec *l, double s)
{
    if (l->chunk > 0 && l->chunk < s)
        return l->chunk;
    if (l->window > 0 && l->window < s)
        return 2.0 * l->window - (double)l->window * l->window / s;
    return s;
}

/* The weighted sum's share of core attention over the scores': 1 where
 * V's head dim is Q's and K's; multi-latent attention's PV product runs at
 * v_head_dim (DeepSeek-V3: QK^T over 128 + 64, PV over 128), so its two
 * products count (qk + v) / (2 qk) of the equal-width pair -- Megatron-LM's
 * num_floating_point_operations (training.py, MLA's core-attention term:
 * heads x (qk_head_dim + qk_pos_emb_head_dim + v_head_dim)) and cuDNN's
 * SDPA benchmark (cudnn-frontend benchmark/sdpa_benchmark_training,
 * head_dim_qk 192 / head_dim_vo 128) count it so. */
static double attention_pv_share(const model *m, const layer_spec *l)
{
    if (m == NULL || m->mla.kv_lora_rank <= 0 || m->mla.v_head_dim <= 0 || l->head_dim <= 0)
        return 1.0;
    return ((double)l->head_dim + m->mla.v_head_dim) / (2.0 * l->head_dim);
}

double tf_attention_score_flops(const model *m, const layer_spec *l)
{
    return 4.0 * l->head_dim * attention_pv_share(m, l);
}

double tf_attention_flops(const model *m, const layer_spec *l, double seqs, int seq, int cp,
                          int tp)
{
    double qw = (double)l->heads * l->head_dim;
    double s = seq;
    return 4.0 * seqs * (s / (cp > 0 ? cp : 1)) * attention_keys(l, s) * qw /
           (tp > 0 ? tp : 1) * attention_pv_share(m, l);
}

double tf_layer_elementwise_bytes(const model *m, const layer_spec *l, double tokens,
                                  int tp, bool sp)
{
    double h = l->hidden, t = tp > 0 ? tp : 1;
    double outside = sp ? 1.0 / t : 1.0;
    double f = mlp_width_active(m, l);
    double bytes = 0;
    /* two norms: read and write b s h each */
    bytes += 2.0 * (2.0 * 2.0 * tokens * h) * outside;
    /* two bias-dropout-add: read 2 b s h, write b s h and the mask */
    bytes += 2.0 * (3.0 * 2.0 + tf_dropout_mask_bytes(m)) * tokens * h * outside;
    /* activation function over the ffn width */
    bytes += tf_mlp_activation_bytes(m, tokens, f, tp);
    /* rotary embedding on q and k: read and write */
    if (m->position == POS_ROPE)
        bytes += 2.0 * 2.0 * tokens * ((double)l->heads + l->kv_heads) * l->head_dim / t;
    /* MoE: the router's softmax / top-k over the expert scores (read and
     * write 4-byte scores), and the permutation of the top-k copies of the
     * hidden states before dispatch and its inverse after combine (each
     * reads and writes k b s h 16-bit elements) */
    if (l->moe && m->moe.experts > 0) {
        bytes += 2.0 * 4.0 * tokens * m->moe.experts * outside;
        bytes += 2.0 * 2.0 * tf_moe_dispatch_bytes(m, l, tokens, tp);
    }
    return bytes;
}

double tf_mlp_activation_bytes(const model *m, double tokens, double width, int tp)
{
    return (activation_gated(m->act) ? 3.0 : 2.0) * 2.0 * tokens * width / (tp > 0 ? tp : 1);
}

double tf_layer_flops_per_token(const model *m, const layer_spec *l, int seq)
{
    tf_gemm g[TF_MAX_GEMMS];
    int n = tf_layer_gemms(m, l, 1.0, 1, g);
    return tf_gemm_flops(g, n) + tf_attention_flops(m, l, 1.0 / seq, seq, 1, 1);
}

double tf_logits_flops_per_token(const model *m)
{
    return 2.0 * m->hidden * (double)m->vocab;
}

double tf_layer_params(const model *m, int i)
{
    return model_layer_params(m, i);
}

int tf_layer_tensors(const model *m, const layer_spec *l)
{
    /* weights: qkv, proj, fc1, fc2 (+ gate kept fused) and the norms; each
     * bias is one more tensor */
    unsigned bias = model_biases(m);
    int norms = model_norms_per_layer(m);
    int n = 4 + norms;
    n += (bias & MODEL_BIAS_QKV ? 1 : 0) + (bias & MODEL_BIAS_OUT ? 1 : 0) +
         (bias & MODEL_BIAS_MLP ? 2 : 0) + (bias & MODEL_BIAS_NORM ? norms : 0);
    if (l->moe && m->moe.experts > 0)
        n += 2 * (m->moe.experts - 1) + 1;
    return n;
}

double tf_moe_glu_clamp_kept_bytes(const model *m, const layer_spec *l, double tokens)
{
    if (!l->moe || m->moe.experts <= 0 || m->glu_limit <= 0 || m->fused_grouped_mlp ||
        !activation_gated(m->act))
        return 0;
    return 4.0 * tokens * m->moe.top_k * m->moe.expert_ffn;
}

double tf_dropout_mask_bytes(const model *m)
{
    return model_hidden_dropout(m) > 0 ? 1.0 : 0.0;
}

double tf_layer_activation_bytes(const model *m, const layer_spec *l, double seqs,
                                 int seq, int cp, int tp, bool sp, recompute_mode rc)
{
    double t = tp > 0 ? tp : 1;
    double sb = seqs * seq / (cp > 0 ? cp : 1);
    double h = l->hidden;
    double qw = (double)l->heads * l->head_dim, kvw = (double)l->kv_heads * l->head_dim;
    double f = mlp_width_active(m, l);
    double outside, inside;
    if (rc == RECOMPUTE_FULL)
        return 2.0 * sb * h / (sp ? t : 1.0);
    outside = (8.0 + 2.0 * tf_dropout_mask_bytes(m)) * sb * h;
    inside = 2.0 * sb * (2.0 * qw + 2.0 * kvw) +
             (activation_gated(m->act) ? 6.0 : 4.0) * sb * f;
    /* MoE: the routed experts' fc1 input is the dispatched (permuted) copy
     * of the hidden states, k per token, kept besides the layer's own MLP
     * input (which the shared experts and the router read) */
    if (l->moe && m->moe.experts > 0)
        inside += 2.0 * sb * m->moe.top_k * h;
    inside += tf_moe_glu_clamp_kept_bytes(m, l, sb);
    return outside / (sp ? t : 1.0) + inside / t;
}
