/* hf_families.c: the HuggingFace model_types the planner reads or refuses,
 * as data.
 *
 * Each entry says what the family's transformers configuration class
 * (configuration_<type>.py: its __init__ defaults) and modeling code
 * (modeling_<type>.py: the modules a decoder layer builds) imply when
 * config.json leaves a key out: the MLP kind (gated SwiGLU/GeGLU 3-matrix or
 * GeLU 2-matrix), the norm and whether it has a bias, which linear layers have
 * biases, one shared norm in a parallel attention+MLP block (GPT-J style) or
 * Gemma's four sandwich norms, tied embeddings, multi-query attention,
 * partial rotary embeddings, QK-norm, and which layers use a sliding window.
 * Sources, per family: Llama (LlamaConfig: 32000 vocab, 4096 hidden, 11008
 * ffn, 32 layers, 32 heads, 2048 positions, untied), Qwen2 (q/k/v biases,
 * Qwen2Attention), Gemma 2 (4 norms per layer, tied, GeGLU, sliding window on
 * even layers), Gemma 3 (Gemma3TextConfig: 262208 vocab, head_dim 256, 8
 * heads, 4 KV heads, 131072 positions, 5 of 6 layers sliding, QK-norm),
 * Cohere (one bias-free LayerNorm before a parallel block, tied), Phi-2
 * (PhiDecoderLayer: one LayerNorm, parallel block, biases, partial rotary
 * 0.5), Falcon (FalconConfig: multi_query, parallel_attn, bias false, 2048
 * positions, ffn 4 h), GPT-BigCode (multi_query), GPT-NeoX (rotary_pct 0.25,
 * use_parallel_residual with two norms), StarCoder2 (use_bias, LayerNorm,
 * 2-matrix MLP, tied, sliding window), ChatGLM (rotary over half of each
 * head, add_qkv_bias), DBRX (bias-free LayerNorm, GLU experts), InternLM2
 * (`bias` on wqkv and wo), gpt-oss (attention and expert biases, alternating
 * 128-token windows).
 * Residual dropout (the dropout on each sub-block's output before the
 * residual add: its masks are saved activations when p > 0): the key and
 * class default of the families whose decoder layer has one -- GPT-2 and
 * GPT-BigCode resid_pdrop 0.1, Phi and Phi-3 resid_pdrop 0.0, Falcon,
 * GPT-NeoX and ChatGLM hidden_dropout 0.0, StarCoder2 residual_dropout 0.0,
 * DBRX resid_pdrop 0.0; the other families' layers (LlamaDecoderLayer and
 * those modelled on it: Mistral, Mixtral, Qwen2/3, Gemma, Cohere, InternLM2,
 * OLMo 2, DeepSeek, gpt-oss) apply none, p = 0.
 * Falcon-7B's checkpoint stores lm_head separately (7.22 B parameters,
 * 14.4 GB in 16 bits), so Falcon counts as untied.
 * Refused: state-space and hybrid models (Mamba, Jamba, Zamba, Bamba,
 * Falcon-H1, Nemotron-H), linear-attention ones (MiniMax, RWKV, Qwen3-Next)
 * and Llama 3.2 Vision's cross-attention layers: the cost model covers
 * softmax-attention decoder layers only.
 */
#include <stdio.h>
#include <string.h>
#include "inputs/hf_families.h"

#define BIAS(x) (MODEL_BIAS_SET | (x))
#define LINEAR_BIAS (MODEL_BIAS_QKV | MODEL_BIAS_OUT | MODEL_BIAS_MLP)
#define ALL_BIAS (LINEAR_BIAS | MODEL_BIAS_NORM)

static const hf_sizes k_llama = {4096, 32, 32, 0, 0, 11008, 32000, 2048, 0, 0, false};
static const hf_sizes k_mistral = {4096, 32, 32, 8, 0, 14336, 32000, 131072, 0, 0, false};
static const hf_sizes k_gemma2 = {2304, 26, 8, 4, 256, 9216, 256000, 8192, 4096, 0, false};
static const hf_sizes k_gemma3 = {2304, 26, 8, 4, 256, 9216, 262208, 131072, 4096, 6, false};
static const hf_sizes k_falcon = {.max_position = 2048, .top_level = true};

static const char k_ssm[] = "state-space models are not supported";
static const char k_hybrid[] =
    "a hybrid of state-space (Mamba) and attention layers: state-space models are not supported";
static const char k_linear[] =
    "linear-attention layers: linear attention is not modelled (softmax attention only)";

/* Field defaults are 0: Llama-style keys, GeLU, LayerNorm, RoPE. */
#define SWIGLU_RMS .act = ACT_SWIGLU, .norm = NORM_RMSNORM
#define NO_BIAS .bias = BIAS(0)
#define QKV_BIAS .bias = BIAS(MODEL_BIAS_QKV)

static const hf_family k_families[] = {
    {"llama", "Llama", SWIGLU_RMS, NO_BIAS, .sizes = &k_llama},
    {"mistral", "Mistral", SWIGLU_RMS, NO_BIAS, .window = HF_WINDOW_ALL, .sizes = &k_mistral},
    {"mixtral", "Mixtral", SWIGLU_RMS, NO_BIAS, .moe = HF_MOE_MIXTRAL, .window = HF_WINDOW_ALL,
     .sizes = &k_mistral},
    {"qwen2", "Qwen2", SWIGLU_RMS, QKV_BIAS, .window = HF_WINDOW_QWEN},
    {"qwen2_moe", "Qwen2-MoE", SWIGLU_RMS, QKV_BIAS, .moe = HF_MOE_QWEN,
     .window = HF_WINDOW_QWEN},
    {"qwen3", "Qwen3", SWIGLU_RMS, NO_BIAS, .qk_norm = QK_NORM_HEAD, .window = HF_WINDOW_QWEN,
     .own_head_dim = true},
    {"qwen3_moe", "Qwen3-MoE", SWIGLU_RMS, NO_BIAS, .moe = HF_MOE_QWEN, .qk_norm = QK_NORM_HEAD,
     .window = HF_WINDOW_QWEN, .own_head_dim = true},
    {"qwen2_vl_text", "Qwen2-VL", SWIGLU_RMS, QKV_BIAS, .window = HF_WINDOW_QWEN},
    {"qwen2_5_vl_text", "Qwen2.5-VL", SWIGLU_RMS, QKV_BIAS, .window = HF_WINDOW_QWEN},
    {"gemma", "Gemma", .act = ACT_GEGLU, .norm = NORM_RMSNORM, NO_BIAS, .tied = true,
     .own_head_dim = true},
    {"gemma2", "Gemma 2", .act = ACT_GEGLU, .norm = NORM_RMSNORM, NO_BIAS, .tied = true,
     .layer_norms = 4, .window = HF_WINDOW_ALTERNATE, .sizes = &k_gemma2, .own_head_dim = true},
    {"gemma3_text", "Gemma 3", .act = ACT_GEGLU, .norm = NORM_RMSNORM, NO_BIAS, .tied = true,
     .layer_norms = 4, .qk_norm = QK_NORM_HEAD, .window = HF_WINDOW_PATTERN, .sizes = &k_gemma3,
     .own_head_dim = true},
    {"cohere", "Cohere Command", .act = ACT_SWIGLU, .norm = NORM_LAYERNORM, NO_BIAS,
     .layer_norms = 1, .parallel_block = true, .tied = true, .qk_norm_key = "use_qk_norm"},
    {"phi", "Phi-2", .act = ACT_GELU, .norm = NORM_LAYERNORM, .bias = BIAS(ALL_BIAS),
     .layer_norms = 1, .parallel_block = true, .rotary_fraction = 0.5,
     .qk_norm_key = "qk_layernorm", .dropout_key = "resid_pdrop"},
    {"phi3", "Phi-3", SWIGLU_RMS, NO_BIAS, .window = HF_WINDOW_ALL, .dropout_key = "resid_pdrop"},
    {"falcon", "Falcon", .act = ACT_GELU, .norm = NORM_LAYERNORM, .bias = BIAS(MODEL_BIAS_NORM),
     .bias_key = "bias", .bias_key_bits = LINEAR_BIAS, .layer_norms = 1,
     .parallel_block = true, .parallel_key = "parallel_attn", .multi_query = true,
     .sizes = &k_falcon, .dropout_key = "hidden_dropout"},
    {"gpt2", "GPT-2", .keys = HF_KEYS_GPT2, .act = ACT_GELU, .norm = NORM_LAYERNORM,
     .bias = BIAS(ALL_BIAS), .tied = true, .position = POS_LEARNED,
     .dropout_key = "resid_pdrop", .dropout_default = 0.1},
    {"gpt_bigcode", "GPT-BigCode", .keys = HF_KEYS_GPT2, .act = ACT_GELU, .norm = NORM_LAYERNORM,
     .bias = BIAS(ALL_BIAS), .tied = true, .position = POS_LEARNED, .multi_query = true,
     .dropout_key = "resid_pdrop", .dropout_default = 0.1},
    {"gpt_neox", "GPT-NeoX", .act = ACT_GELU, .norm = NORM_LAYERNORM, .bias = BIAS(ALL_BIAS),
     .parallel_block = true, .parallel_key = "use_parallel_residual", .rotary_fraction = 0.25,
     .dropout_key = "hidden_dropout"},
    {"starcoder2", "StarCoder2", .act = ACT_GELU, .norm = NORM_LAYERNORM,
     .bias = BIAS(ALL_BIAS), .bias_key = "use_bias", .bias_key_bits = LINEAR_BIAS, .tied = true,
     .window = HF_WINDOW_ALL, .dropout_key = "residual_dropout"},
    {"internlm2", "InternLM2", SWIGLU_RMS, .bias = BIAS(MODEL_BIAS_QKV | MODEL_BIAS_OUT),
     .bias_key = "bias", .bias_key_bits = MODEL_BIAS_QKV | MODEL_BIAS_OUT},
    {"olmo2", "OLMo 2", SWIGLU_RMS, NO_BIAS, .qk_norm = QK_NORM_ALL_HEADS},
    {"chatglm", "ChatGLM", SWIGLU_RMS, NO_BIAS, .keys = HF_KEYS_CHATGLM, .rotary_fraction = 0.5,
     .dropout_key = "hidden_dropout"},
    {"dbrx", "DBRX", .act = ACT_SWIGLU, .norm = NORM_LAYERNORM, NO_BIAS, .keys = HF_KEYS_DBRX,
     .moe = HF_MOE_DBRX, .dropout_key = "resid_pdrop"},
    {"deepseek", "DeepSeekMoE", SWIGLU_RMS, NO_BIAS, .moe = HF_MOE_DEEPSEEK},
    {"deepseek_v2", "DeepSeek-V2", SWIGLU_RMS, NO_BIAS, .moe = HF_MOE_DEEPSEEK, .mla = true},
    {"deepseek_v3", "DeepSeek-V3", SWIGLU_RMS, NO_BIAS, .moe = HF_MOE_DEEPSEEK, .mla = true},
    {"kimi_k2", "Kimi K2", SWIGLU_RMS, NO_BIAS, .moe = HF_MOE_DEEPSEEK, .mla = true},
    {"gpt_oss", "gpt-oss", SWIGLU_RMS, .bias = BIAS(LINEAR_BIAS), .moe = HF_MOE_MIXTRAL,
     .window = HF_WINDOW_ALTERNATE, .own_head_dim = true},

    /* vision-language wrappers: the language model is planned */
    {"llava", "LLaVA", .text_type = "llama"},
    {"llava_next", "LLaVA-NeXT", .text_type = "llama"},
    {"mistral3", "Mistral 3", .text_type = "mistral"},
    {"gemma3", "Gemma 3", .text_type = "gemma3_text"},
    {"qwen2_vl", "Qwen2-VL", .text_type = "qwen2_vl_text"},
    {"qwen2_5_vl", "Qwen2.5-VL", .text_type = "qwen2_5_vl_text"},

    /* refused */
    {"mamba", "Mamba", .refuse = k_ssm},
    {"mamba2", "Mamba-2", .refuse = k_ssm},
    {"falcon_mamba", "Falcon Mamba", .refuse = k_ssm},
    {"jamba", "Jamba", .refuse = k_hybrid},
    {"zamba", "Zamba", .refuse = k_hybrid},
    {"zamba2", "Zamba2", .refuse = k_hybrid},
    {"bamba", "Bamba", .refuse = k_hybrid},
    {"falcon_h1", "Falcon-H1", .refuse = k_hybrid},
    {"nemotron_h", "Nemotron-H", .refuse = k_hybrid},
    {"minimax_m1", "MiniMax-M1", .refuse = k_linear},
    {"minimax", "MiniMax", .refuse = k_linear},
    {"qwen3_next", "Qwen3-Next", .refuse = k_linear},
    {"rwkv", "RWKV", .refuse = k_linear},
    {"mllama", "Llama 3.2 Vision",
     .refuse = "cross-attention layers to the image inside the language model are not modelled"},
};

const hf_family *hf_family_find(const char *model_type)
{
    size_t i;
    if (model_type == NULL)
        return NULL;
    for (i = 0; i < sizeof k_families / sizeof k_families[0]; i++)
        if (strcmp(k_families[i].model_type, model_type) == 0)
            return &k_families[i];
    return NULL;
}

bool hf_family_reads_key(const hf_family *f, const char *key)
{
    const char *const own[] = {f->dropout_key, f->bias_key, f->parallel_key, f->qk_norm_key};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++)
        if (own[i] != NULL && strcmp(own[i], key) == 0)
            return true;
    return false;
}

void hf_family_list(char *buf, size_t size)
{
    size_t i, used = 0;
    if (size == 0)
        return;
    buf[0] = '\0';
    for (i = 0; i < sizeof k_families / sizeof k_families[0] && used < size; i++) {
        const hf_family *f = &k_families[i];
        if (f->refuse != NULL)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", f->model_type);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}
