/* hf_families.h: the HuggingFace model_types the planner reads, each with the
 * architecture its transformers config class and modeling code imply when
 * config.json does not say (tied embeddings, MLP kind, norm, biases, parallel
 * block, multi-query attention, head_dim, partial rotary, QK-norm, sliding
 * window), which keys hold its figures, and the model_types it refuses with
 * the reason.  The table is data (hf_families.c); model_load.c reads a
 * config.json with it.
 */
#ifndef PLANNER_HF_FAMILIES_H
#define PLANNER_HF_FAMILIES_H

#include <stddef.h>
#include "inputs/model.h"

/* Which keys hold the sizes. */
typedef enum hf_keys {
    HF_KEYS_LLAMA,     /* hidden_size, num_hidden_layers, num_attention_heads,
                          num_key_value_heads, intermediate_size, vocab_size,
                          max_position_embeddings, head_dim */
    HF_KEYS_GPT2,      /* n_embd, n_layer, n_head, n_inner, n_positions */
    HF_KEYS_CHATGLM,   /* num_layers, ffn_hidden_size, kv_channels,
                          multi_query_group_num, padded_vocab_size, seq_length */
    HF_KEYS_DBRX       /* d_model, n_layers, n_heads, max_seq_len, attn_config,
                          ffn_config */
} hf_keys;

/* Which keys describe the experts. */
typedef enum hf_moe {
    HF_MOE_NONE,
    HF_MOE_MIXTRAL,    /* num_local_experts, num_experts_per_tok; intermediate_size
                          is the expert width (Mixtral, gpt-oss) */
    HF_MOE_QWEN,       /* num_experts, moe_intermediate_size, shared_expert_*,
                          decoder_sparse_step, mlp_only_layers */
    HF_MOE_DEEPSEEK,   /* n_routed_experts, n_shared_experts, first_k_dense_replace,
                          moe_layer_freq, moe_intermediate_size */
    HF_MOE_DBRX        /* ffn_config: moe_num_experts, moe_top_k, ffn_hidden_size */
} hf_moe;

/* Which layers attend over a sliding window (when no layer_types list says). */
typedef enum hf_window {
    HF_WINDOW_NONE,       /* the family has none (a sliding_window key is ignored) */
    HF_WINDOW_ALL,        /* every layer, when sliding_window is set (Mistral v0.1,
                             Phi-3, StarCoder2) */
    HF_WINDOW_QWEN,       /* layers from max_window_layers on, when
                             use_sliding_window is true (Qwen2/3) */
    HF_WINDOW_ALTERNATE,  /* even layers (Gemma 2, gpt-oss) */
    HF_WINDOW_PATTERN     /* all but every sliding_window_pattern-th layer (Gemma 3) */
} hf_window;

/* The config class's defaults for size keys a sparse config leaves out; 0:
 * the key is required.  transformers writes a nested text_config with only
 * the keys that differ from its class's defaults, so they apply there; at
 * the top level only with `top_level` (keys older files of a family lack). */
typedef struct hf_sizes {
    int hidden, layers, heads, kv_heads, head_dim, ffn, vocab, max_position;
    int window, window_pattern;
    bool top_level;
} hf_sizes;

typedef struct hf_family {
    const char *model_type;
    const char *name;          /* for people: "Llama", "Gemma 2" */
    const char *refuse;        /* non-NULL: not a model the cost model covers; why */
    const char *text_type;     /* non-NULL: a vision-language wrapper; its language
                                  model's model_type when text_config has none */
    hf_keys keys;
    hf_moe moe;
    bool mla;                  /* multi-head latent attention (DeepSeek-V2/V3) */
    activation act;            /* MLP kind */
    norm_kind norm;
    unsigned bias;             /* MODEL_BIAS_SET | the parts with biases */
    const char *bias_key;      /* a boolean key that switches ... */
    unsigned bias_key_bits;    /* ... these biases on or off */
    int layer_norms;           /* per layer (0: 2) */
    bool parallel_block;
    const char *parallel_key;  /* a boolean key that switches it */
    bool tied;                 /* tie_word_embeddings when the config omits it */
    qk_norm_kind qk_norm;
    const char *qk_norm_key;   /* a boolean key that switches a per-head one */
    position_kind position;
    double rotary_fraction;    /* of head_dim rotated when the config omits it; 0: 1 */
    bool multi_query;          /* one KV head unless the config says otherwise */
    hf_window window;
    const hf_sizes *sizes;     /* NULL: every size key is required */
    bool own_head_dim;         /* its published models set head_dim apart from
                                  hidden / heads (no warning when they differ) */
    const char *dropout_key;   /* its residual-dropout key; NULL: its decoder
                                  layer has no residual dropout (p = 0) */
    double dropout_default;    /* the config class's value when the key is absent */
} hf_family;

/* The entry for `model_type`, or NULL. */
const hf_family *hf_family_find(const char *model_type);

/* Whether `key` is one of f's own keys that the reader takes a figure from
 * beside the size keys (its residual-dropout, bias, parallel-block or
 * QK-norm key): Falcon's, GPT-NeoX's and ChatGLM's hidden_dropout is
 * theirs, not a key of planner's format. */
bool hf_family_reads_key(const hf_family *f, const char *key);

/* "llama, mistral, ..." : the model_types read (not refused, not wrappers). */
void hf_family_list(char *buf, size_t size);

#endif
