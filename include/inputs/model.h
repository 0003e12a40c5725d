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

/* MLP kind: GeLU is the 2-matrix MLP (fc1, fc2); SwiGLU and GeGLU are gated
 * 3-matrix MLPs (gate, up, down) with a SiLU or GeLU gate (Gemma). */
typedef enum activation { ACT_GELU, ACT_SWIGLU, ACT_GEGLU } activation;
typedef enum norm_kind { NORM_LAYERNORM, NORM_RMSNORM } norm_kind;
typedef enum position_kind { POS_ROPE, POS_LEARNED } position_kind;
/* QK-norm: none, over each head's head_dim (Qwen3, Gemma 3; Megatron's
 * --qk-layernorm) or over all heads at once (OLMo 2's q_norm and k_norm). */
typedef enum qk_norm_kind { QK_NORM_NONE, QK_NORM_HEAD, QK_NORM_ALL_HEADS } qk_norm_kind;

/* Training number format. */
typedef enum precision {
    PREC_BF16, PREC_FP16, PREC_FP32, PREC_FP8, PREC_MXFP8, PREC_NVFP4, PREC_COUNT
} precision;

/* Biases (model.bias).  0, MODEL_BIAS_BY_NORM: as the norm implies --
 * LayerNorm models (GPT-2/3, GPT-NeoX) carry them on every linear layer and
 * norm, RMSNorm models (Llama) on none.  Otherwise MODEL_BIAS_SET with the
 * parts that have them. */
enum {
    MODEL_BIAS_BY_NORM = 0,
    MODEL_BIAS_QKV = 1,    /* q, k, v projections */
    MODEL_BIAS_OUT = 2,    /* attention output projection */
    MODEL_BIAS_MLP = 4,    /* MLP (and expert) linear layers */
    MODEL_BIAS_NORM = 8,   /* LayerNorm's additive bias */
    MODEL_BIAS_SET = 16
};

#define MODEL_NOTES_MAX 6
#define MODEL_NOTE_LEN 240
#define MODEL_FAMILY_MAX 32

/* Where the description came from. */
typedef enum model_format {
    MODEL_FORMAT_PLANNER,   /* our JSON */
    MODEL_FORMAT_HF         /* a HF config.json; model.family is its model_type */
} model_format;

/* One decoder layer.  Uniform models repeat the model's own figures. */
typedef struct layer_spec {
    int hidden;        /* residual width entering and leaving the layer */
    int heads, kv_heads, head_dim;
    int ffn_hidden;    /* dense MLP width; unused when moe */
    bool moe;          /* routed experts replace the dense MLP */
    int window;        /* sliding-window attention over this many tokens; 0: full */
    int chunk;         /* chunked attention within blocks of this many tokens; 0: none */
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
    int max_position;     /* position embeddings; 0: the file gives none, and
                             learned positions follow the run's sequence
                             (model_positions) */
    char max_position_key[48];   /* its key in the file, for messages
                                    ("text_config.max_position_embeddings") */
    activation act;
    norm_kind norm;
    position_kind position;
    bool tied_embeddings;
    unsigned bias;        /* MODEL_BIAS_* (0: as the norm implies) */
    int layer_norms;      /* norms per layer; 0: the usual 2 (one parallel block
                             may share 1, Gemma 2/3 have 4) */
    bool parallel_block;  /* attention and MLP read the same input (GPT-J,
                             GPT-NeoX, Falcon, Phi-2, Cohere) */
    qk_norm_kind qk_norm; /* a norm on q and k before attention */
    int rotary_dim;       /* RoPE on this many of head_dim; 0: all of it */
    char family[MODEL_FAMILY_MAX];   /* HF model_type as read, "" for ours */
    char notes[MODEL_NOTES_MAX][MODEL_NOTE_LEN];   /* what was assumed or left
                                                      out: warnings for the user */
    int n_notes;
    precision prec;
    bool fp8_attention;   /* in an FP8-family recipe, core attention in FP8 too
                             (Transformer Engine's fp8_dot_product_attention, a
                             TransformerConfig field Megatron-LM has no flag
                             for): set by validate's recipe facts only */
    bool fp8_output_proj; /* in an MXFP8 recipe, the output layer (LM head) in
                             MXFP8 too (Megatron-Core's fp8_output_proj, a
                             TransformerConfig field Megatron-LM has no flag
                             for): set by validate's recipe facts only */
    double glu_limit;     /* a gated MLP clamps its two halves' input at this
                             value (HF swiglu_limit, gpt-oss 7.0; Megatron-Core's
                             activation_func_clamp_value); 0: no clamp */
    bool fused_grouped_mlp;   /* the routed experts run as Transformer Engine's
                             fused grouped MLP (Megatron-Core's
                             use_transformer_engine_op_fuser, a
                             TransformerConfig field Megatron-LM has no flag
                             for): set by validate's recipe facts only */
    bool torch_compile;   /* each transformer block compiled with torch.compile
                             (torchtitan's training.compile): what its
                             partitioner saves (memory_op_sac_bytes); set by
                             --torch-compile (plan, size, sweep) and
                             validate's run facts */
    bool fsdp_fp8_gather;   /* FSDP2 all-gathers the Float8Linear weights in
                             FP8 (torchtitan's enable_fsdp_float8_all_gather):
                             memory_gathered_weight_bytes; set by validate's
                             run facts only */
    bool loss_compiled;   /* the loss function compiled with torch.compile too
                             (torchtitan from bbb1b616e, 2025-04, with
                             training.compile): memory_loss_bytes; set by
                             validate's run facts only */
    model_moe moe;
    model_mla mla;
    model_rope rope;
    int mtp_layers;       /* multi-token-prediction layers (DeepSeek-V3), parsed only */
    double hidden_dropout;     /* the residual dropout probability, when ... */
    bool has_hidden_dropout;   /* ... the file gave it (model_hidden_dropout) */
    layer_spec *layer;    /* `layers` entries, owned */
    bool uneven;          /* the file listed layers that differ */
} model;

/* Defaults when neither the file nor a flag gives a figure. */
#define MODEL_DEFAULT_SEQ_LEN 4096        /* capped at max_position */
#define MODEL_DEFAULT_GLOBAL_BATCH 1024   /* sequences per step */
/* Megatron-Core's TransformerConfig.hidden_dropout (and Megatron-LM's
 * --hidden-dropout) default: the residual dropout of a model that names none */
#define MODEL_DEFAULT_HIDDEN_DROPOUT 0.1

/* One training run: the figures that belong to the run, not to the model.
 * As an override (a command line's --gbs/--seq/--precision), 0 = not given.
 * As a loaded run (model_load's run_out), the figures planned: the
 * override's, else the model file's (its seq_len and global_batch), else the
 * defaults (the *_default flags say so).  The cost model reads the run from
 * the strategy (strategy.gbs, strategy.seq_len), the search from
 * search_options.gbs/seq_len. */
typedef struct run_spec {
    int seq_len;          /* tokens per sequence */
    int global_batch;     /* sequences per step */
    bool seq_len_default;       /* neither the file nor the override gave it */
    bool global_batch_default;
    bool has_prec;        /* prec replaces the file's (HF configs: bf16) */
    precision prec;
    bool guess_family;    /* how to read the file: an unknown HF model_type is
                             read by its keys (a note names the guess) instead
                             of refused */
} run_spec;

/* Reads `path` (our JSON or a HF config.json, recognized by its keys) and
 * validates everything; `override` (may be NULL) gives the run's figures
 * that replace the file's and how to read it.  On success *out owns a new
 * model (free with model_free), *run_out (may be NULL) holds the run the
 * file describes under the override, and 0 is returned; otherwise the status
 * and *err describe the first problem (a sequence past learned position
 * embeddings is one, at the max_position key).  A sequence past a RoPE
 * model's max_position is a context extension: a note on the model. */
planner_status model_load(model **out, run_spec *run_out, const char *path,
                          const run_spec *override, planner_error *err);

/* Same, from a buffer; `name` is used as FILE in errors. */
planner_status model_load_buffer(model **out, run_spec *run_out, const char *text, size_t len,
                                 const char *name, const run_spec *override,
                                 planner_error *err);

/* Whether m can train a run of `seq_len` tokens per sequence: the one rule
 * that checks a run against a model (model_load and a sweep's points use
 * it).  Learned position embeddings the file sizes (max_position) cannot
 * reach past it: PLANNER_E_INPUT, "sequence length N (from --seq) exceeds
 * max_position M", with err->path the key path model.<max_position key> (no
 * file position: model_load adds the file's, a sweep point the path).
 * Otherwise PLANNER_OK (RoPE reaches any position). */
planner_status model_run_check(const model *m, int seq_len, planner_error *err);

/* The positions m embeds for a run of seq_len tokens: max_position, or the
 * sequence when the file gives none (learned positions sized by the run). */
int model_positions(const model *m, int seq_len);

/* The key of m's position-embedding count in its file ("max_position", HF
 * "max_position_embeddings", or its family's: GPT-2's "n_positions", ...). */
const char *model_max_position_key(const model *m);

void model_free(model *m);   /* NULL-safe */

/* Derived figures. */
/* Parameter counts for a run of seq_len tokens per sequence (learned
 * position embeddings the file does not size follow it: model_positions). */
double model_param_count(const model *m, int seq_len);          /* all parameters */
double model_active_param_count(const model *m, int seq_len);   /* per token (MoE: top-k) */
double model_embedding_params(const model *m, int seq_len);     /* input embedding */
double model_layer_params(const model *m, int i);  /* decoder layer i */
/* One MLP of width f on a residual stream of h: weights and biases. */
double model_mlp_params(const model *m, double h, double f);
unsigned model_biases(const model *m);             /* effective MODEL_BIAS_* bits */
/* The residual (hidden) dropout probability: the file's, else
 * MODEL_DEFAULT_HIDDEN_DROPOUT. */
double model_hidden_dropout(const model *m);
unsigned model_norm_biases(norm_kind n);           /* the biases a norm implies */
int model_norms_per_layer(const model *m);
bool activation_gated(activation a);               /* 3-matrix MLP */
/* Whether two layers are alike: every figure of layer_spec, the attention
 * span (window, chunk) included -- what the cost, the placement's cost
 * tables and --show-inputs' grouping of consecutive layers compare. */
bool layer_spec_same(const layer_spec *a, const layer_spec *b);
/* Whether layers [a, a + n) and [b, b + n) of m are alike one by one
 * (layer_spec_same), both inside the model. */
bool model_layers_same(const model *m, int a, int b, int n);
/* Adds a note (printf-style; dropped when MODEL_NOTES_MAX are there). */
void model_note(model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* "HF config.json (llama)", "planner JSON". */
void model_source_name(const model *m, char *buf, size_t size);

extern const char *const precision_names[PREC_COUNT];   /* "bf16", ... */
const char *precision_name(precision p);
int precision_parse(const char *s, precision *out);   /* 0, or -1: not a name */
peak_format precision_peak(precision p);           /* catalog column it runs at */
int precision_bytes(precision p);                  /* bytes per weight in compute copy */
/* Bytes per element of what a model of precision p keeps in 16 bits
 * (parameters' dtype: activations, gathered weights, 16-bit gradients,
 * logits): 2, 4 for fp32 models. */
double precision_16bit_bytes(precision p);
const char *activation_name(activation a);

#endif
