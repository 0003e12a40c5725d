/* model.h: the model description, as the planner understands it.
 *
 * Loaded from our JSON format or a HuggingFace config.json (model_load.c).
 * After loading, `layer` always holds `layers` entries, one per decoder layer,
 * so the cost model never needs to know whether the model was uniform.
 * Every count is validated > 0 and within the limits below before use.
 */
#ifndef PLANNER_MODEL_H
#define PLANNER_MODEL_H

#include <stdbool.h>
#include "inputs/catalog.h"
#include "base/error.h"

#define MODEL_NAME_MAX 128
#define MODEL_MAX_LAYERS 4096

typedef enum activation { ACT_GELU, ACT_SWIGLU } activation;
typedef enum norm_kind { NORM_LAYERNORM, NORM_RMSNORM } norm_kind;
typedef enum position_kind { POS_ROPE, POS_LEARNED } position_kind;

/* Training number format. */
typedef enum precision {
    PREC_BF16, PREC_FP16, PREC_FP32, PREC_FP8, PREC_MXFP8, PREC_NVFP4, PREC_COUNT
} precision;

/* Where the description came from. */
typedef enum model_format {
    MODEL_FORMAT_PLANNER,   /* our JSON */
    MODEL_FORMAT_HF_LLAMA,  /* Llama, Mistral, Qwen2 */
    MODEL_FORMAT_HF_MIXTRAL,
    MODEL_FORMAT_HF_QWEN_MOE,
    MODEL_FORMAT_HF_DEEPSEEK,
    MODEL_FORMAT_HF_GPT2,
    MODEL_FORMAT_HF_GPTNEOX
} model_format;

/* One decoder layer.  Uniform models repeat the model's own figures. */
typedef struct layer_spec {
    int hidden;        /* residual width entering and leaving the layer */
    int heads, kv_heads, head_dim;
    int ffn_hidden;    /* dense MLP width; unused when moe */
    bool moe;          /* routed experts replace the dense MLP */
} layer_spec;

/* Mixture of experts.  experts == 0: dense model. */
typedef struct model_moe {
    int experts;             /* routed experts per MoE layer */
    int top_k;               /* experts per token */
    int expert_ffn;          /* ffn width of one routed expert */
    int shared_experts;      /* always-on experts */
    int shared_expert_ffn;   /* ffn width of one shared expert (0 = expert_ffn) */
    int dense_layers;        /* leading layers with a dense MLP (DeepSeek first_k_dense) */
    int layer_freq;          /* every layer_freq-th layer is MoE (1 = all) */
} model_moe;

/* How RoPE stretches to longer contexts (HF rope_scaling's rope_type). */
typedef enum rope_scaling_kind {
    ROPE_SCALING_NONE,     /* absent, null, or "default" */
    ROPE_SCALING_LINEAR,   /* positions divided by factor */
    ROPE_SCALING_LLAMA3,   /* Llama 3.1: per-frequency blend (low/high_freq_factor) */
    ROPE_SCALING_YARN,     /* YaRN (DeepSeek-V2/V3): factor, beta_fast/slow, mscale */
    ROPE_SCALING_OTHER     /* any other type: `type` names it */
} rope_scaling_kind;

/* Rotary position embedding details (position == POS_ROPE).  Parsed for the
 * launch material (emit.c); the cost model does not depend on them. */
typedef struct model_rope {
    double theta;                 /* base; 0: not given (HF and Megatron: 10000) */
    rope_scaling_kind scaling;
    char type[24];                /* rope_scaling's type as the file names it */
    double factor;                /* 0: not given */
    double low_freq_factor, high_freq_factor;    /* llama3; 0: not given */
    double original_max_position;                /* llama3, yarn; 0: not given */
    double beta_fast, beta_slow, mscale, mscale_all_dim;   /* yarn; < 0: not given */
} model_rope;

/* Multi-head latent attention (DeepSeek-V2/V3).  kv_lora_rank == 0: none. */
typedef struct model_mla {
    int q_lora_rank, kv_lora_rank;
    int qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
} model_mla;

typedef struct model {
    char name[MODEL_NAME_MAX];
    model_format format;
    int layers, hidden, heads, kv_heads, head_dim, ffn_hidden, vocab;
    int seq_len;          /* the run's sequence length: the file's (or the
                             default), replaced by a run_spec's */
    int max_position;     /* position embeddings (>= seq_len) */
    activation act;
    norm_kind norm;
    position_kind position;
    bool tied_embeddings;
    int global_batch;     /* the run's sequences per step: the file's (or
                             MODEL_DEFAULT_GLOBAL_BATCH), replaced by a
                             run_spec's */
    precision prec;
    model_moe moe;
    model_mla mla;
    model_rope rope;
    int mtp_layers;       /* multi-token-prediction layers (DeepSeek-V3), parsed only */
    layer_spec *layer;    /* `layers` entries, owned */
    bool uneven;          /* the file listed layers that differ */
    bool seq_len_default;       /* seq_len was not given: the default was used */
    bool global_batch_default;  /* global_batch was not given: the default */
    bool max_position_default;  /* max_position was not given: it follows
                                   seq_len (learned positions sized by the run) */
} model;

/* Defaults when neither the file nor a flag gives a figure. */
#define MODEL_DEFAULT_SEQ_LEN 4096        /* capped at max_position */
#define MODEL_DEFAULT_GLOBAL_BATCH 1024   /* sequences per step */

/* One training run: the figures that belong to the run, not to the model
 * (a command line's --gbs/--seq, a sweep point's).  0 = not given: the
 * model file's figure, else the default.  The model file's own seq_len and
 * global_batch are the run's defaults. */
typedef struct run_spec {
    int seq_len;
    int global_batch;
} run_spec;

/* Reads `path` (our JSON or a HF config.json, recognized by its keys),
 * plans it for `run` (may be NULL: the file's figures) and validates
 * everything.  On success *out owns a new model (free with model_free) and
 * 0 is returned; otherwise the status and *err describe the first problem. */
planner_status model_load(const char *path, const run_spec *run, model **out,
                          planner_error *err);

/* Same, from a buffer; `name` is used as FILE in errors. */
planner_status model_load_buffer(const char *text, size_t len, const char *name,
                                 const run_spec *run, model **out,
                                 planner_error *err);

/* The rule that plans a loaded model for a run, the only place it is
 * written (model_load and model_for_run use it): the run's sequence length
 * and global batch replace the model's (a max_position the file did not
 * give follows the sequence).  0, or -1 with the reason in why when the
 * sequence exceeds max_position (m is then partly changed). */
int model_apply_run(model *m, const run_spec *run, char *why, int why_size);

/* The key of the position-embedding count in a file of format f
 * ("max_position", HF "max_position_embeddings" or GPT-2's "n_positions"). */
const char *model_max_position_key(model_format f);

/* A copy of `m` planned for `run` (model_apply_run), in memory: a sweep
 * builds each grid point from the model it loaded once.  PLANNER_OK with
 * *out owned by the caller (model_free), or PLANNER_E_INPUT (the sequence
 * exceeds max_position; the message names the key as model_load's does,
 * without a file position) / out of memory with *err. */
planner_status model_for_run(model **out, const model *m, const run_spec *run,
                             planner_error *err);

void model_free(model *m);   /* NULL-safe */

/* Derived figures. */
double model_param_count(const model *m);          /* all parameters */
double model_active_param_count(const model *m);   /* per token (MoE: top-k) */
double model_layer_params(const model *m, int i);  /* decoder layer i */
double model_embedding_params(const model *m);     /* input embedding */

const char *precision_name(precision p);
peak_format precision_peak(precision p);           /* catalog column it runs at */
int precision_bytes(precision p);                  /* bytes per weight in compute copy */
const char *activation_name(activation a);
const char *model_format_name(model_format f);

#endif
