/* transformer.c: per-layer work of a decoder-only transformer, from the model
 * description alone (no hardware).
 *
 * Notation (../shared/reference/cost-model.md): b micro-batch, s sequence,
 * h hidden, a heads, g KV heads, hd head dim, f ffn width, V vocabulary,
 * t TP degree.  A multiply-add is 2 FLOPs.  Per layer, forward:
 *   QKV   2 b s h (a + 2 g) hd        column-parallel, output / t
 *   proj  2 b s (a hd) h              row-parallel, input / t
 *   MLP   4 b s h f (GeLU), 6 b s h f (SwiGLU: gate and up fused in one GEMM)
 *   core attention 4 b s^2 a hd (counted in full, as Narayanan eq. 3 does)
 *   logits 2 b s h V (last stage)
 * GPT-3 175B per token: 24 h^2 + 4 s h per layer -> Narayanan eq. 3 with f=4h.
 * Memory-bound traffic and activation bytes: see transformer.h.  MLA layers are
 * costed as plain GQA attention with the model's head_dim (to be refined).
 * Invariant: every function is pure and allocation-free.
 */
#include "transformer.h"

/* Effective dense-equivalent MLP widths of a layer: routed experts (top-k
 * of them per token) and shared experts. */
static double mlp_width_active(const model *m, const layer_spec *l)
{
    if (l->moe && m->moe.experts > 0) {
        double sffn = m->moe.shared_expert_ffn > 0 ? m->moe.shared_expert_ffn
                                                   : m->moe.expert_ffn;
        return (double)m->moe.top_k * m->moe.expert_ffn + m->moe.shared_experts * sffn;
    }
    return l->ffn_hidden;
}

int tf_layer_gemms(const model *m, const layer_spec *l, double tokens, int tp,
                   tf_gemm *out)
{
    double h = l->hidden, t = tp > 0 ? tp : 1;
    double qw = (double)l->heads * l->head_dim, kvw = (double)l->kv_heads * l->head_dim;
    double f = mlp_width_active(m, l);
    double up = (m->act == ACT_SWIGLU ? 2.0 : 1.0) * f;
    int n = 0;

    out[n++] = (tf_gemm){tokens, (qw + 2.0 * kvw) / t, h, 1};   /* QKV */
    out[n++] = (tf_gemm){tokens, h, qw / t, 1};                  /* output proj */
    out[n++] = (tf_gemm){tokens, up / t, h, 1};                  /* fc1 (gate+up) */
    out[n++] = (tf_gemm){tokens, h, f / t, 1};                   /* fc2 */
    return n;
}

double tf_gemm_flops(const tf_gemm *g, int n)
{
    double sum = 0;
    int i;
    for (i = 0; i < n; i++)
        sum += 2.0 * g[i].m * g[i].n * g[i].k * g[i].count;
    return sum;
}

double tf_attention_flops(const layer_spec *l, double seqs, int seq, int cp, int tp)
{
    double qw = (double)l->heads * l->head_dim;
    double s = seq;
    return 4.0 * seqs * (s / (cp > 0 ? cp : 1)) * s * qw / (tp > 0 ? tp : 1);
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
    /* two bias-dropout-add: read 2 b s h, write b s h, 1-byte mask */
    bytes += 2.0 * (3.0 * 2.0 + 1.0) * tokens * h * outside;
    /* activation function over the ffn width: GeLU reads 1 writes 1,
     * SwiGLU reads 2 writes 1 */
    bytes += (m->act == ACT_SWIGLU ? 3.0 : 2.0) * 2.0 * tokens * f / t;
    /* rotary embedding on q and k: read and write */
    if (m->position == POS_ROPE)
        bytes += 2.0 * 2.0 * tokens * ((double)l->heads + l->kv_heads) * l->head_dim / t;
    return bytes;
}

double tf_layer_flops_per_token(const model *m, const layer_spec *l, int seq)
{
    tf_gemm g[TF_MAX_GEMMS];
    int n = tf_layer_gemms(m, l, 1.0, 1, g);
    return tf_gemm_flops(g, n) + tf_attention_flops(l, 1.0 / seq, seq, 1, 1);
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
    /* weights: qkv, proj, fc1, fc2 (+ gate kept fused) and two norms; biases
     * of LayerNorm models add one tensor per linear and per norm */
    int n = 4 + 2;
    if (m->norm == NORM_LAYERNORM)
        n += 4 + 2;
    if (l->moe && m->moe.experts > 0)
        n += 2 * (m->moe.experts - 1) + 1;
    return n;
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
    outside = 10.0 * sb * h;
    inside = 2.0 * sb * (2.0 * qw + 2.0 * kvw) +
             (m->act == ACT_SWIGLU ? 6.0 : 4.0) * sb * f;
    return outside / (sp ? t : 1.0) + inside / t;
}
