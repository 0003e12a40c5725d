/* model.c: figures derived from a loaded model, and the names of its enums.
 *
 * Parameter counts follow the weight shapes of the architectures we read:
 *   attention (GQA)  q: h x (heads hd), k and v: h x (kv_heads hd) each,
 *                    o: (heads hd) x h
 *   attention (MLA, DeepSeek-V2/V3)  q: h x q_lora + q_lora x heads (nope + rope)
 *                    (or h x heads (nope + rope) without q_lora), kv: h x (kv_lora
 *                    + rope) + kv_lora x heads (nope + v), o: heads v x h, plus the
 *                    two low-rank norms
 *   MLP              gated (SwiGLU, GeGLU) 3 h f (gate, up, down), GeLU 2 h f
 *   MoE layer        router h x experts + experts x MLP(expert_ffn) + shared
 *                    experts x MLP(shared_expert_ffn)
 *   norms            two per layer (one in Falcon's and Phi-2's parallel block,
 *                    four in Gemma 2/3) and one final: LayerNorm 2 h (weight,
 *                    bias), RMSNorm or bias-free LayerNorm h; QK-norm weights
 *                    (2 hd per layer in Qwen3: 12,288 of Qwen3-30B-A3B's 30.5 B)
 *                    are not counted
 *   biases           by default LayerNorm models (GPT-2/3, GPT-NeoX) carry biases
 *                    on every linear layer and RMSNorm models (Llama family) none;
 *                    HF families say which (model_biases: Qwen2 q/k/v only)
 *   embedding        vocab x h, plus max_position x h when positions are learned
 *                    (the run's sequence when the file gives no max_position)
 *   output layer     vocab x h unless tied to the input embedding
 * DeepSeek-V3's multi-token-prediction layers are not counted (671B, not 685B).
 * Checks: GPT-3 175B -> 174.6e9, Llama 3 8B -> 8.03e9, Mixtral 8x7B 46.7e9 total
 * and 12.9e9 active (tests/test_model_load.c).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "inputs/model.h"

unsigned model_norm_biases(norm_kind n)
{
    return n == NORM_LAYERNORM ? MODEL_BIAS_QKV | MODEL_BIAS_OUT | MODEL_BIAS_MLP | MODEL_BIAS_NORM
                               : 0;
}

double model_hidden_dropout(const model *m)
{
    return m->has_hidden_dropout ? m->hidden_dropout : MODEL_DEFAULT_HIDDEN_DROPOUT;
}

unsigned model_biases(const model *m)
{
    if (m->bias & MODEL_BIAS_SET)
        return m->bias & ~(unsigned)MODEL_BIAS_SET;
    return model_norm_biases(m->norm);
}

int model_norms_per_layer(const model *m)
{
    return m->layer_norms > 0 ? m->layer_norms : 2;
}

bool layer_spec_same(const layer_spec *a, const layer_spec *b)
{
    return a->hidden == b->hidden && a->heads == b->heads && a->kv_heads == b->kv_heads &&
           a->head_dim == b->head_dim && a->ffn_hidden == b->ffn_hidden && a->moe == b->moe &&
           a->window == b->window && a->chunk == b->chunk;
}

bool model_layers_same(const model *m, int a, int b, int n)
{
    if (a < 0 || b < 0 || a + n > m->layers || b + n > m->layers)
        return false;
    for (int k = 0; k < n && a != b; k++)
        if (!layer_spec_same(&m->layer[a + k], &m->layer[b + k]))
            return false;
    return true;
}

bool activation_gated(activation a)
{
    return a == ACT_SWIGLU || a == ACT_GEGLU;
}

double model_mlp_params(const model *m, double h, double f)
{
    int gated = activation_gated(m->act);
    double p = (gated ? 3.0 : 2.0) * h * f;
    if (model_biases(m) & MODEL_BIAS_MLP)   /* up (and gate) f each, down h */
        p += (gated ? 2.0 : 1.0) * f + h;
    return p;
}

static double norm_params(const model *m, double h)
{
    return m->norm == NORM_LAYERNORM && (model_biases(m) & MODEL_BIAS_NORM) ? 2.0 * h : h;
}

static double attention_params(const model *m, const layer_spec *l)
{
    double h = l->hidden;
    unsigned bias = model_biases(m);
    if (m->mla.kv_lora_rank > 0) {
        const model_mla *a = &m->mla;
        double qk = (double)a->qk_nope_head_dim + a->qk_rope_head_dim;
        double q = a->q_lora_rank > 0 ? h * a->q_lora_rank + a->q_lora_rank +
                                            (double)a->q_lora_rank * l->heads * qk
                                      : h * l->heads * qk;
        double kv = h * ((double)a->kv_lora_rank + a->qk_rope_head_dim) + a->kv_lora_rank +
                    (double)a->kv_lora_rank * l->heads *
                        ((double)a->qk_nope_head_dim + a->v_head_dim);
        double o = (double)l->heads * a->v_head_dim * h;
        return q + kv + o;
    }
    double q_width = (double)l->heads * l->head_dim;
    double kv_width = (double)l->kv_heads * l->head_dim;
    double p = h * q_width + 2.0 * h * kv_width + q_width * h;
    if (bias & MODEL_BIAS_QKV)
        p += q_width + 2.0 * kv_width;
    if (bias & MODEL_BIAS_OUT)
        p += h;
    return p;
}

/* Parameters of layer i; `active` counts only top-k routed experts. */
static double layer_params(const model *m, int i, int active)
{
    const layer_spec *l;
    double h, p;
    if (m == NULL || m->layer == NULL || i < 0 || i >= m->layers)
        return 0;
    l = &m->layer[i];
    h = l->hidden;
    p = attention_params(m, l) + model_norms_per_layer(m) * norm_params(m, h);
    if (l->moe && m->moe.experts > 0) {
        int routed = active ? m->moe.top_k : m->moe.experts;
        int sffn = m->moe.shared_expert_ffn > 0 ? m->moe.shared_expert_ffn : m->moe.expert_ffn;
        p += h * m->moe.experts;   /* router */
        p += routed * model_mlp_params(m, h, m->moe.expert_ffn);
        p += m->moe.shared_experts * model_mlp_params(m, h, sffn);
    } else {
        p += model_mlp_params(m, h, l->ffn_hidden);
    }
    return p;
}

double model_layer_params(const model *m, int i)
{
    return layer_params(m, i, 0);
}

int model_positions(const model *m, int seq_len)
{
    return m->max_position > 0 ? m->max_position : seq_len;
}

double model_embedding_params(const model *m, int seq_len)
{
    double p;
    if (m == NULL)
        return 0;
    p = (double)m->vocab * m->hidden;
    if (m->position == POS_LEARNED)
        p += (double)model_positions(m, seq_len) * m->hidden;
    return p;
}

static double total_params(const model *m, int seq_len, int active)
{
    double p;
    int i;
    if (m == NULL)
        return 0;
    p = model_embedding_params(m, seq_len) + norm_params(m, m->hidden);
    if (!m->tied_embeddings)
        p += (double)m->vocab * m->hidden;
    for (i = 0; i < m->layers; i++)
        p += layer_params(m, i, active);
    return p;
}

double model_param_count(const model *m, int seq_len)
{
    return total_params(m, seq_len, 0);
}

double model_active_param_count(const model *m, int seq_len)
{
    return total_params(m, seq_len, 1);
}

const char *const precision_names[PREC_COUNT] = {"bf16", "fp16", "fp32",
                                                 "fp8", "mxfp8", "nvfp4"};

const char *precision_name(precision p)
{
    return (unsigned)p < PREC_COUNT ? precision_names[p] : "unknown";
}

int precision_parse(const char *s, precision *out)
{
    int i;
    for (i = 0; i < PREC_COUNT; i++)
        if (strcmp(s, precision_names[i]) == 0) {
            *out = (precision)i;
            return 0;
        }
    return -1;
}

/* fp32 training runs its GEMMs at the FP32 column (no TF32 assumed);
 * FP8 recipes (per-tensor or MX block scaling) at FP8; NVFP4 at FP4. */
peak_format precision_peak(precision p)
{
    switch (p) {
    case PREC_BF16: return PEAK_BF16;
    case PREC_FP16: return PEAK_FP16;
    case PREC_FP32: return PEAK_FP32;
    case PREC_FP8:
    case PREC_MXFP8: return PEAK_FP8;
    case PREC_NVFP4: return PEAK_FP4;
    case PREC_COUNT: break;
    }
    return PEAK_BF16;
}

/* Bytes per element of the GEMM operands, rounded up to whole bytes
 * (NVFP4's 4-bit values plus block scales count as 1). */
double precision_16bit_bytes(precision p)
{
    return p == PREC_FP32 ? 4.0 : 2.0;
}

int precision_bytes(precision p)
{
    switch (p) {
    case PREC_BF16:
    case PREC_FP16: return 2;
    case PREC_FP32: return 4;
    case PREC_FP8:
    case PREC_MXFP8:
    case PREC_NVFP4: return 1;
    case PREC_COUNT: break;
    }
    return 2;
}

const char *activation_name(activation a)
{
    switch (a) {
    case ACT_GELU: return "gelu";
    case ACT_SWIGLU: return "swiglu";
    case ACT_GEGLU: return "geglu";
    }
    return "unknown";
}

planner_status model_run_check(const model *m, int seq_len, planner_error *err)
{
    char path[64];
    if (m->position != POS_LEARNED || m->max_position <= 0 || seq_len <= m->max_position)
        return PLANNER_OK;
    snprintf(path, sizeof path, "model.%s", model_max_position_key(m));
    return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, path,
                     "sequence length %d (from --seq) exceeds max_position %d", seq_len,
                     m->max_position);
}

void model_source_name(const model *m, char *buf, size_t size)
{
    if (m->format == MODEL_FORMAT_HF)
        snprintf(buf, size, "HF config.json (%s)", m->family[0] ? m->family : "no model_type");
    else
        snprintf(buf, size, "planner JSON");
}

void model_note(model *m, const char *fmt, ...)
{
    va_list ap;
    if (m->n_notes >= MODEL_NOTES_MAX)
        return;
    va_start(ap, fmt);
    vsnprintf(m->notes[m->n_notes++], MODEL_NOTE_LEN, fmt, ap);
    va_end(ap);
}
