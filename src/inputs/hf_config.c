/* hf_config.c: reads a HuggingFace config.json into a model, with the family
 * table of hf_families.c.
 *
 * The family comes from model_type, never from the keys alone: an unknown
 * model_type is an error that names it, unless the user opts in to a guess
 * by keys (run_spec.guess_family), which leaves a note naming the
 * guess.  A config without model_type is read by its keys, with the same
 * note.  Refused families (state-space, hybrid, linear attention) fail with
 * the reason; so does a guess whose keys are a state-space model's.
 * Vision-language wrappers plan their language model: text_config when there
 * is one (its model_type, else the wrapper's text_type), else the top-level
 * keys; a note says the vision tower is not modelled.
 * Then, in order: the sizes (from the family's key set, defaults from its
 * config class for sparse configs), the architecture (family defaults, then
 * the config's own switches: tie_word_embeddings, attention_bias, mlp_bias,
 * the family's bias / parallel / QK-norm keys, partial rotary), the experts,
 * MLA.  Once the layers exist, hf_config_layers marks Qwen-MoE's dense layers
 * and the sliding-window ones (layer_types, else the family's rule).
 * The model is named by _name_or_path when it is a hub id ("org/name");
 * else model_load.c names it after the file (a config.json after its
 * directory).
 */
#include <stdio.h>
#include <string.h>
#include "base/text.h"
#include "inputs/model_json.h"

/* Where the language model's keys are: an object, its path, its family. */
typedef struct hf_src {
    const jsonin_doc *ld;
    json_t *obj;
    jsonin_path path;
    const hf_family *fam;
    bool guessed;   /* the family is a guess by keys: no config-class defaults */
    bool nested;    /* obj is a wrapper's text_config */
    char defaulted[160];   /* size keys the config class's defaults filled */
} hf_src;

static int has(json_t *obj, const char *key)
{
    return mj_member(obj, key, 1) != NULL;
}

const char *hf_config_marker(json_t *root)
{
    static const char *const keys[] = {"model_type", "architectures", "hidden_size",
                                       "num_hidden_layers", "n_embd"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (has(root, keys[i]))
            return keys[i];
    return NULL;
}

/* The family a config's keys resemble, or NULL. */
static const char *hf_guess(json_t *obj)
{
    if (has(obj, "state_size") || has(obj, "mamba_d_state") || has(obj, "ssm_cfg"))
        return "mamba";
    if (has(obj, "kv_lora_rank"))
        return "deepseek_v3";
    if (has(obj, "n_routed_experts"))
        return "deepseek";
    if (has(obj, "num_local_experts"))
        return "mixtral";
    if (has(obj, "num_experts") && has(obj, "moe_intermediate_size"))
        return "qwen2_moe";
    if (has(obj, "n_embd") || has(obj, "n_layer"))
        return "gpt2";
    if (has(obj, "use_parallel_residual") || has(obj, "rotary_pct"))
        return "gpt_neox";
    if (has(obj, "hidden_size") && has(obj, "num_hidden_layers") && has(obj, "intermediate_size"))
        return "llama";
    return NULL;
}

/* The family of `obj` (model_type, else `dflt`, else a guess by keys). */
static planner_status hf_resolve(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                                 const char *dflt, const run_spec *run, model *m,
                                 const hf_family **out, bool *guessed)
{
    json_t *t = mj_member(obj, "model_type", 1);
    jsonin_path tp = jsonin_key(p, "model_type");
    const char *type = dflt, *guess = hf_guess(obj);
    const hf_family *fam;
    char known[640];

    if (t != NULL && !json_is_string(t))
        return jsonin_fail(ld, &tp, "must be a string, got %s", mj_kind(t));
    if (t != NULL && json_string_length(t) > 0)
        type = json_string_value(t);
    fam = hf_family_find(type);
    if (fam == NULL && type != NULL) {
        const hf_family *g = hf_family_find(guess);
        hf_family_list(known, sizeof known);
        if (g != NULL && g->refuse != NULL)
            return jsonin_fail(ld, &tp, "model_type '%.64s': its keys are a %s model's: %s",
                               type, g->name, g->refuse);
        if (run == NULL || !run->guess_family || g == NULL)
            return jsonin_fail(ld, &tp,
                               "unknown model_type '%.64s' (known: %s)%s", type, known,
                               g != NULL ? "; --guess-model-type reads it by its keys" : "");
        model_note(m, "model_type '%.64s' is not a known family: read as %s by its keys "
                      "(--guess-model-type); check the plan's parameter count",
                   type, g->model_type);
        fam = g;
        *guessed = true;
    } else if (fam == NULL) {
        fam = hf_family_find(guess);
        if (fam == NULL)
            return jsonin_fail(ld, p, "not a recognized HuggingFace config: no model_type, and "
                                      "its keys match no known family");
        if (fam->refuse == NULL)
            model_note(m, "no model_type: read as %s by its keys", fam->model_type);
        *guessed = true;
    }
    if (fam->refuse != NULL)
        return jsonin_fail(ld, t != NULL ? &tp : p, "%s (model_type '%s'): %s", fam->name,
                           fam->model_type, fam->refuse);
    *out = fam;
    return PLANNER_OK;
}

/* The language model's object and family: the root's, or a vision-language
 * wrapper's text_config (or its top-level keys). */
static planner_status hf_source(const jsonin_doc *ld, json_t *root, const run_spec *run,
                                model *m, hf_src *s)
{
    jsonin_path rp = JSONIN_PATH_ROOT;
    const hf_family *wrap;
    json_t *tc;
    planner_status rc;

    s->ld = ld;
    s->obj = root;
    s->path = rp;
    s->guessed = s->nested = false;
    s->defaulted[0] = '\0';
    if ((rc = hf_resolve(ld, root, &rp, NULL, run, m, &wrap, &s->guessed)) != PLANNER_OK)
        return rc;
    snprintf(m->family, sizeof m->family, "%s", wrap->model_type);
    s->fam = wrap;
    if (wrap->text_type == NULL)
        return PLANNER_OK;
    model_note(m, "%s is a vision-language model: its language model is planned; the vision "
                  "tower (vision_config) is not modelled", wrap->name);
    if ((rc = mj_object(ld, root, &rp, "text_config", &tc)) != PLANNER_OK)
        return rc;
    if (tc == NULL) {   /* the language model's keys at the top level (Qwen2-VL) */
        s->fam = hf_family_find(wrap->text_type);
        return PLANNER_OK;
    }
    s->obj = tc;
    s->nested = true;
    s->path = jsonin_key(&rp, "text_config");
    if ((rc = hf_resolve(ld, tc, &s->path, wrap->text_type, run, m, &s->fam, &s->guessed)) !=
        PLANNER_OK)
        return rc;
    if (s->fam->text_type != NULL) {
        jsonin_path q = jsonin_key(&s->path, "model_type");
        return jsonin_fail(ld, &q, "a vision-language model inside another is not supported");
    }
    return PLANNER_OK;
}

/* The config class's size defaults that apply to s, or NULL. */
static const hf_sizes *class_sizes(const hf_src *s)
{
    const hf_sizes *d = s->fam->sizes;
    if (d == NULL || s->guessed || !(s->nested || d->top_level))
        return NULL;
    return d;
}

/* Records that `key` took the config class's default. */
static void note_default(hf_src *s, const char *key, int value)
{
    size_t used = strlen(s->defaulted);
    snprintf(s->defaulted + used, sizeof s->defaulted - used, "%s%s %d", used ? ", " : "", key,
             value);
}

/* A size key: the config's, else the config class's default (def > 0),
 * else missing. */
static planner_status hf_size(hf_src *s, const char *key, long min, long max, int def, int *out)
{
    int present = 0;
    planner_status rc = mj_int(s->ld, s->obj, &s->path, key, 1, min, max, out, &present);
    if (rc != PLANNER_OK || present)
        return rc;
    if (def > 0) {
        *out = def;
        note_default(s, key, def);
        return PLANNER_OK;
    }
    return mj_need(s->ld, &s->path, key, 0);
}

static planner_status hf_opt(const hf_src *s, const char *key, long min, long max, int *out,
                             int *present)
{
    return mj_int(s->ld, s->obj, &s->path, key, 1, min, max, out, present);
}

static planner_status hf_bool(const hf_src *s, const char *key, bool *out)
{
    return mj_bool(s->ld, s->obj, &s->path, key, 1, out);
}

/* Sizes from Llama-style keys (most families). */
static planner_status sizes_llama(hf_src *s, model *m, model_fields *f)
{
    static const hf_sizes none = {0};
    const hf_sizes *d = class_sizes(s) != NULL ? class_sizes(s) : &none;
    planner_status rc;
    if ((rc = hf_size(s, "hidden_size", 1, MAX_HIDDEN, d->hidden, &m->hidden)) ||
        (rc = hf_size(s, "num_hidden_layers", 1, MODEL_MAX_LAYERS, d->layers, &m->layers)) ||
        (rc = hf_size(s, "num_attention_heads", 1, MAX_HEADS, d->heads, &m->heads)) ||
        (rc = hf_size(s, "vocab_size", 1, MAX_VOCAB, d->vocab, &m->vocab)) ||
        (rc = hf_size(s, "max_position_embeddings", 1, MAX_POSITION, d->max_position,
                      &m->max_position)) ||
        (rc = hf_opt(s, "num_key_value_heads", 1, MAX_HEADS, &m->kv_heads, &f->has_kv)) ||
        (rc = hf_opt(s, "head_dim", 1, MAX_HEAD_DIM, &m->head_dim, &f->has_heads_dim)))
        return rc;
    if (!f->has_kv && d->kv_heads > 0) {
        m->kv_heads = d->kv_heads;
        f->has_kv = 1;
        note_default(s, "num_key_value_heads", d->kv_heads);
    }
    if (!f->has_heads_dim && d->head_dim > 0) {
        m->head_dim = d->head_dim;
        f->has_heads_dim = 1;
        note_default(s, "head_dim", d->head_dim);
    }
    f->has_maxpos = 1;
    /* Falcon: ffn_hidden_size, 4 h when absent; MoE families without dense
     * layers may leave intermediate_size out */
    if (strcmp(s->fam->model_type, "falcon") == 0) {
        m->ffn_hidden = 4 * m->hidden;
        f->has_ffn = 1;
        return hf_opt(s, "ffn_hidden_size", 1, MAX_FFN, &m->ffn_hidden, NULL);
    }
    if ((rc = hf_opt(s, "intermediate_size", 1, MAX_FFN, &m->ffn_hidden, &f->has_ffn)))
        return rc;
    if (!f->has_ffn && d->ffn > 0) {
        m->ffn_hidden = d->ffn;
        f->has_ffn = 1;
        note_default(s, "intermediate_size", d->ffn);
    }
    if (!f->has_ffn && s->fam->moe != HF_MOE_QWEN && s->fam->moe != HF_MOE_DEEPSEEK)
        return mj_need(s->ld, &s->path, "intermediate_size", 0);
    return PLANNER_OK;
}

static planner_status sizes_gpt2(hf_src *s, model *m, model_fields *f)
{
    int present = 0;
    planner_status rc;
    if ((rc = hf_size(s, "n_embd", 1, MAX_HIDDEN, 0, &m->hidden)) ||
        (rc = hf_size(s, "n_layer", 1, MODEL_MAX_LAYERS, 0, &m->layers)) ||
        (rc = hf_size(s, "n_head", 1, MAX_HEADS, 0, &m->heads)) ||
        (rc = hf_size(s, "vocab_size", 1, MAX_VOCAB, 0, &m->vocab)) ||
        (rc = hf_opt(s, "n_ctx", 1, MAX_POSITION, &m->max_position, &f->has_maxpos)) ||
        (rc = hf_opt(s, "n_positions", 1, MAX_POSITION, &m->max_position, &present)) ||
        (rc = hf_opt(s, "n_inner", 1, MAX_FFN, &m->ffn_hidden, &f->has_ffn)))
        return rc;
    f->has_maxpos |= present;
    if (!f->has_maxpos)
        return mj_need(s->ld, &s->path, "n_positions", 0);
    if (!f->has_ffn)
        m->ffn_hidden = 4 * m->hidden;
    f->has_ffn = 1;
    f->k_hidden = "n_embd";
    f->k_heads = "n_head";
    f->k_maxpos = "n_positions";
    return PLANNER_OK;
}

/* ChatGLM's own names (ChatGLMConfig). */
static planner_status sizes_chatglm(hf_src *s, model *m, model_fields *f)
{
    bool mqa = false, rms = true, qkv_bias = false, linear_bias = false;
    planner_status rc;
    if ((rc = hf_size(s, "hidden_size", 1, MAX_HIDDEN, 0, &m->hidden)) ||
        (rc = hf_size(s, "num_layers", 1, MODEL_MAX_LAYERS, 0, &m->layers)) ||
        (rc = hf_size(s, "num_attention_heads", 1, MAX_HEADS, 0, &m->heads)) ||
        (rc = hf_size(s, "padded_vocab_size", 1, MAX_VOCAB, 0, &m->vocab)) ||
        (rc = hf_size(s, "seq_length", 1, MAX_POSITION, 0, &m->max_position)) ||
        (rc = hf_size(s, "ffn_hidden_size", 1, MAX_FFN, 0, &m->ffn_hidden)) ||
        (rc = hf_opt(s, "kv_channels", 1, MAX_HEAD_DIM, &m->head_dim, &f->has_heads_dim)) ||
        (rc = hf_bool(s, "multi_query_attention", &mqa)) ||
        (rc = hf_bool(s, "rmsnorm", &rms)) || (rc = hf_bool(s, "add_qkv_bias", &qkv_bias)) ||
        (rc = hf_bool(s, "add_bias_linear", &linear_bias)))
        return rc;
    if (mqa) {
        m->kv_heads = 1;
        if ((rc = hf_opt(s, "multi_query_group_num", 1, MAX_HEADS, &m->kv_heads, NULL)))
            return rc;
        f->has_kv = 1;
        f->k_kv = "multi_query_group_num";
    }
    m->norm = rms ? NORM_RMSNORM : NORM_LAYERNORM;
    m->bias = MODEL_BIAS_SET | (qkv_bias ? MODEL_BIAS_QKV : 0) |
              (linear_bias ? MODEL_BIAS_OUT | MODEL_BIAS_MLP : 0) |
              (rms ? 0 : MODEL_BIAS_NORM);
    f->has_ffn = f->has_maxpos = 1;
    f->k_hidden = "hidden_size";
    f->k_heads = "num_attention_heads";
    f->k_maxpos = "seq_length";
    return PLANNER_OK;
}

/* DBRX's own names (DbrxConfig, DbrxAttentionConfig, DbrxFFNConfig). */
static planner_status sizes_dbrx(hf_src *s, model *m, model_fields *f)
{
    hf_src attn = *s, ffn = *s;   /* DbrxConfig's sub-configs: no defaults taken */
    planner_status rc;
    attn.path = jsonin_key(&s->path, "attn_config");
    ffn.path = jsonin_key(&s->path, "ffn_config");
    if ((rc = hf_size(s, "d_model", 1, MAX_HIDDEN, 0, &m->hidden)) ||
        (rc = hf_size(s, "n_layers", 1, MODEL_MAX_LAYERS, 0, &m->layers)) ||
        (rc = hf_size(s, "n_heads", 1, MAX_HEADS, 0, &m->heads)) ||
        (rc = hf_size(s, "vocab_size", 1, MAX_VOCAB, 0, &m->vocab)) ||
        (rc = hf_size(s, "max_seq_len", 1, MAX_POSITION, 0, &m->max_position)) ||
        (rc = mj_object(s->ld, s->obj, &s->path, "attn_config", &attn.obj)) ||
        (rc = mj_object(s->ld, s->obj, &s->path, "ffn_config", &ffn.obj)))
        return rc;
    if (attn.obj == NULL)
        return mj_need(s->ld, &s->path, "attn_config", 0);
    if (ffn.obj == NULL)
        return mj_need(s->ld, &s->path, "ffn_config", 0);
    m->moe.layer_freq = 1;
    m->moe.top_k = 1;   /* DbrxFFNConfig's default */
    if ((rc = hf_size(&attn, "kv_n_heads", 1, MAX_HEADS, 0, &m->kv_heads)) ||
        (rc = hf_size(&ffn, "ffn_hidden_size", 1, MAX_FFN, 0, &m->moe.expert_ffn)) ||
        (rc = hf_size(&ffn, "moe_num_experts", 1, MAX_EXPERTS, 0, &m->moe.experts)) ||
        (rc = hf_opt(&ffn, "moe_top_k", 1, MAX_EXPERTS, &m->moe.top_k, NULL)))
        return rc;
    m->ffn_hidden = m->moe.expert_ffn;
    f->has_kv = f->has_ffn = f->has_maxpos = 1;
    f->k_hidden = "d_model";
    f->k_heads = "n_heads";
    f->k_kv = "attn_config.kv_n_heads";
    f->k_maxpos = "max_seq_len";
    f->k_top_k = "ffn_config.moe_top_k";
    return PLANNER_OK;
}

/* Family defaults, then the config's own switches. */
static planner_status hf_arch(const hf_src *s, model *m, model_fields *f)
{
    const hf_family *fam = s->fam;
    bool on, mqa = fam->multi_query, new_arch = false;
    double rotary = fam->rotary_fraction > 0 ? fam->rotary_fraction : 1.0;
    json_t *v;
    planner_status rc;

    m->act = fam->act;
    m->position = fam->position;
    m->tied_embeddings = fam->tied;
    m->layer_norms = fam->layer_norms;
    m->parallel_block = fam->parallel_block;
    m->qk_norm = fam->qk_norm;
    if (fam->keys != HF_KEYS_CHATGLM) {   /* ChatGLM's keys set these */
        m->norm = fam->norm;
        m->bias = fam->bias;
    }
    if ((rc = hf_bool(s, "tie_word_embeddings", &m->tied_embeddings)))
        return rc;
    on = false;
    if (has(s->obj, "attention_bias") && !(rc = hf_bool(s, "attention_bias", &on)))
        m->bias = (m->bias & ~(unsigned)(MODEL_BIAS_QKV | MODEL_BIAS_OUT)) |
                  (on ? MODEL_BIAS_QKV | MODEL_BIAS_OUT : 0);
    if (!rc && has(s->obj, "mlp_bias") && !(rc = hf_bool(s, "mlp_bias", &on)))
        m->bias = (m->bias & ~(unsigned)MODEL_BIAS_MLP) | (on ? MODEL_BIAS_MLP : 0);
    if (!rc && fam->bias_key != NULL && has(s->obj, fam->bias_key) &&
        !(rc = hf_bool(s, fam->bias_key, &on)))
        m->bias = (m->bias & ~fam->bias_key_bits) | (on ? fam->bias_key_bits : 0);
    if (!rc && fam->parallel_key != NULL)
        rc = hf_bool(s, fam->parallel_key, &m->parallel_block);
    on = false;
    if (!rc && fam->qk_norm_key != NULL && !(rc = hf_bool(s, fam->qk_norm_key, &on)))
        m->qk_norm = on ? QK_NORM_HEAD : QK_NORM_NONE;
    /* residual dropout (hf_families.c): the family's key, else its class
     * default; a family without one applies none */
    m->has_hidden_dropout = true;
    m->hidden_dropout = fam->dropout_default;
    if (!rc && fam->dropout_key != NULL)
        rc = mj_probability(s->ld, s->obj, &s->path, fam->dropout_key, 1, &m->hidden_dropout,
                            NULL);
    if (!rc && fam->multi_query)
        rc = hf_bool(s, "multi_query", &mqa);
    if (!rc && fam->multi_query)
        rc = hf_bool(s, "new_decoder_architecture", &new_arch);
    if (rc != PLANNER_OK)
        return rc;
    if (m->layer_norms == 1 && !m->parallel_block)
        m->layer_norms = 2;   /* a sequential block has a norm before each half */
    if (new_arch) {           /* Falcon 40B/180B: GQA, a norm for each branch */
        m->layer_norms = 2;
        if ((rc = hf_opt(s, "num_kv_heads", 1, MAX_HEADS, &m->kv_heads, &f->has_kv)))
            return rc;
        f->k_kv = "num_kv_heads";
    } else if (mqa) {
        m->kv_heads = 1;
        f->has_kv = 1;
        f->k_kv = "multi_query";
    }
    /* partial rotary: GPT-NeoX's rotary_pct, Phi's partial_rotary_factor */
    v = mj_member(s->obj, has(s->obj, "rotary_pct") ? "rotary_pct" : "partial_rotary_factor", 1);
    if (v != NULL) {
        jsonin_path q = jsonin_key(&s->path, has(s->obj, "rotary_pct") ? "rotary_pct"
                                                                       : "partial_rotary_factor");
        if (!json_is_number(v) || json_number_value(v) <= 0 || json_number_value(v) > 1)
            return jsonin_fail(s->ld, &q, "must be a number in (0, 1]");
        rotary = json_number_value(v);
    }
    f->rotary_fraction = rotary;
    /* gpt-oss's clamped GLU: GptOssExperts clamps the gate at swiglu_limit
     * and the linear half to +-swiglu_limit (transformers
     * models/gpt_oss/modeling_gpt_oss.py) */
    v = mj_member(s->obj, "swiglu_limit", 1);
    if (v != NULL) {
        jsonin_path q = jsonin_key(&s->path, "swiglu_limit");
        if (!json_is_number(v) || !(json_number_value(v) > 0) || json_number_value(v) > 1e6)
            return jsonin_fail(s->ld, &q, "must be a positive number");
        m->glu_limit = json_number_value(v);
    }
    return PLANNER_OK;
}

/* Qwen-MoE's mlp_only_layers: indices of layers that keep a dense MLP. */
static planner_status qwen_dense_layers(const hf_src *s, model *m)
{
    jsonin_path p = jsonin_key(&s->path, "mlp_only_layers");
    json_t *list = mj_member(s->obj, "mlp_only_layers", 1), *e;
    size_t idx;
    int i;
    for (i = 0; i < m->layers; i++)
        m->layer[i].moe = (i + 1) % m->moe.layer_freq == 0;
    if (list == NULL)
        return PLANNER_OK;
    if (!json_is_array(list))
        return jsonin_fail(s->ld, &p, "must be an array of layer indices, got %s",
                           mj_kind(list));
    json_array_foreach(list, idx, e) {
        jsonin_path ep = jsonin_index(&p, idx);
        json_int_t k;
        if (!json_is_integer(e))
            return jsonin_fail(s->ld, &ep, "must be an integer, got %s", mj_kind(e));
        k = json_integer_value(e);
        if (k < 0 || k >= m->layers)
            return jsonin_fail(s->ld, &ep, "layer index %lld is outside 0..%d", (long long)k,
                               m->layers - 1);
        m->layer[k].moe = false;
    }
    return PLANNER_OK;
}

static planner_status moe_deepseek(hf_src *s, model *m, model_fields *f)
{
    planner_status rc;
    m->moe.layer_freq = 1;
    if ((rc = hf_size(s, "n_routed_experts", 1, MAX_EXPERTS, 0, &m->moe.experts)) ||
        (rc = hf_size(s, "num_experts_per_tok", 1, MAX_EXPERTS, 0, &m->moe.top_k)) ||
        (rc = hf_size(s, "moe_intermediate_size", 1, MAX_FFN, 0, &m->moe.expert_ffn)) ||
        (rc = hf_opt(s, "n_shared_experts", 0, 1024, &m->moe.shared_experts, NULL)) ||
        (rc = hf_opt(s, "first_k_dense_replace", 0, MODEL_MAX_LAYERS, &m->moe.dense_layers,
                     NULL)) ||
        (rc = hf_opt(s, "moe_layer_freq", 1, MODEL_MAX_LAYERS, &m->moe.layer_freq, NULL)) ||
        (rc = hf_opt(s, "num_nextn_predict_layers", 0, 64, &m->mtp_layers, NULL)))
        return rc;
    if (!f->has_ffn) {
        if (m->moe.dense_layers > 0 || m->moe.layer_freq > 1)
            return mj_need(s->ld, &s->path, "intermediate_size", 0);
        m->ffn_hidden = m->moe.expert_ffn;
    }
    f->k_dense_layers = "first_k_dense_replace";
    if (!s->fam->mla)
        return PLANNER_OK;
    if ((rc = hf_opt(s, "q_lora_rank", 0, MAX_HIDDEN, &m->mla.q_lora_rank, NULL)) ||
        (rc = hf_size(s, "kv_lora_rank", 1, MAX_HIDDEN, 0, &m->mla.kv_lora_rank)) ||
        (rc = hf_size(s, "qk_nope_head_dim", 1, MAX_HEAD_DIM, 0, &m->mla.qk_nope_head_dim)) ||
        (rc = hf_size(s, "qk_rope_head_dim", 1, MAX_HEAD_DIM, 0, &m->mla.qk_rope_head_dim)) ||
        (rc = hf_size(s, "v_head_dim", 1, MAX_HEAD_DIM, 0, &m->mla.v_head_dim)))
        return rc;
    if (!f->has_heads_dim) {
        m->head_dim = m->mla.qk_nope_head_dim + m->mla.qk_rope_head_dim;
        f->has_heads_dim = 1;
    }
    return PLANNER_OK;
}

static planner_status read_moe_keys(hf_src *s, model *m, model_fields *f)
{
    planner_status rc = PLANNER_OK;
    switch (s->fam->moe) {
    case HF_MOE_NONE:
    case HF_MOE_DBRX:   /* read with the sizes */
        break;
    case HF_MOE_MIXTRAL:
        m->moe.expert_ffn = m->ffn_hidden;
        m->moe.layer_freq = 1;
        if ((rc = hf_size(s, "num_local_experts", 1, MAX_EXPERTS, 0, &m->moe.experts)) ||
            (rc = hf_opt(s, "experts_per_token", 1, MAX_EXPERTS, &m->moe.top_k, NULL)) ||
            (rc = hf_size(s, "num_experts_per_tok", 1, MAX_EXPERTS, m->moe.top_k,
                          &m->moe.top_k)))
            return rc;
        break;
    case HF_MOE_QWEN:
        m->moe.layer_freq = 1;
        if ((rc = hf_size(s, "num_experts", 1, MAX_EXPERTS, 0, &m->moe.experts)) ||
            (rc = hf_size(s, "num_experts_per_tok", 1, MAX_EXPERTS, 0, &m->moe.top_k)) ||
            (rc = hf_size(s, "moe_intermediate_size", 1, MAX_FFN, 0, &m->moe.expert_ffn)) ||
            (rc = hf_opt(s, "shared_expert_intermediate_size", 0, MAX_FFN,
                         &m->moe.shared_expert_ffn, NULL)) ||
            (rc = hf_opt(s, "decoder_sparse_step", 1, MODEL_MAX_LAYERS, &m->moe.layer_freq,
                         NULL)))
            return rc;
        m->moe.shared_experts = m->moe.shared_expert_ffn > 0 ? 1 : 0;
        if (!f->has_ffn)
            m->ffn_hidden = m->moe.expert_ffn;
        break;
    case HF_MOE_DEEPSEEK:
        rc = moe_deepseek(s, m, f);
        break;
    }
    return rc;
}

/* True for a hub id such as "meta-llama/Llama-2-7b-hf" or "Phi-3-mini":
 * not empty, not a local path. */
static int hub_id(const char *s)
{
    const char *slash = strchr(s, '/');
    return s[0] != '\0' && s[0] != '/' && s[0] != '.' && s[0] != '~' &&
           (slash == NULL || strchr(slash + 1, '/') == NULL);
}

/* _name_or_path when it is a hub id and a valid name (else the file's name,
 * model_load.c's name_from_path, stays). */
static void hf_name(json_t *root, model *m)
{
    json_t *v = mj_member(root, "_name_or_path", 1);
    if (json_is_string(v) && hub_id(json_string_value(v)) &&
        json_string_length(v) < sizeof m->name &&
        text_check_name(json_string_value(v), NULL) == PLANNER_OK)
        snprintf(m->name, sizeof m->name, "%s", json_string_value(v));
}

planner_status hf_config_read(const jsonin_doc *ld, json_t *root, const run_spec *run,
                              model *m, model_fields *f)
{
    hf_src s;
    planner_status rc;

    if ((rc = hf_source(ld, root, run, m, &s)) != PLANNER_OK)
        return rc;
    m->format = MODEL_FORMAT_HF;
    m->prec = PREC_BF16;
    f->has_layers = 1;
    f->base = s.path;
    f->hf_obj = s.obj;
    f->hf_fam = s.fam;
    f->hf_guessed = s.guessed;
    f->hf_nested = s.nested;
    f->k_hidden = "hidden_size";
    f->k_heads = "num_attention_heads";
    f->k_kv = "num_key_value_heads";
    f->k_maxpos = "max_position_embeddings";
    f->k_top_k = "num_experts_per_tok";
    hf_name(root, m);
    switch (s.fam->keys) {
    case HF_KEYS_LLAMA: rc = sizes_llama(&s, m, f); break;
    case HF_KEYS_GPT2: rc = sizes_gpt2(&s, m, f); break;
    case HF_KEYS_CHATGLM: rc = sizes_chatglm(&s, m, f); break;
    case HF_KEYS_DBRX: rc = sizes_dbrx(&s, m, f); break;
    }
    if (rc != PLANNER_OK)
        return rc;
    if (s.defaulted[0] != '\0')
        model_note(m, "%s leaves out %s: the %s config class's defaults", s.nested ? "text_config"
                   : "the config", s.defaulted, s.fam->model_type);
    if ((rc = hf_arch(&s, m, f)) != PLANNER_OK)
        return rc;
    /* a wrapper may keep tie_word_embeddings at the top level (LLaVA) */
    if (s.obj != root && !has(s.obj, "tie_word_embeddings")) {
        jsonin_path rp = JSONIN_PATH_ROOT;
        if ((rc = mj_bool(ld, root, &rp, "tie_word_embeddings", 1, &m->tied_embeddings)))
            return rc;
    }
    return read_moe_keys(&s, m, f);
}

/* The window of `type` ("sliding_attention", ...) for layer i. */
static planner_status layer_type(const hf_src *s, json_t *e, const jsonin_path *ep, int window,
                                 int chunk, layer_spec *l)
{
    const char *t = json_string_value(e);
    if (t == NULL)
        return jsonin_fail(s->ld, ep, "must be a string, got %s", mj_kind(e));
    if (strcmp(t, "full_attention") == 0)
        return PLANNER_OK;
    if (strcmp(t, "sliding_attention") == 0 && window > 0) {
        l->window = window;
        return PLANNER_OK;
    }
    if (strcmp(t, "chunked_attention") == 0 && chunk > 0) {
        l->chunk = chunk;
        return PLANNER_OK;
    }
    return jsonin_fail(s->ld, ep, "layers of type '%.64s' are not modelled%s", t,
                       strcmp(t, "sliding_attention") == 0 ? " (no sliding_window given)"
                       : strcmp(t, "chunked_attention") == 0 ? " (no attention_chunk_size given)"
                                                             : "");
}

/* Which layers attend over a sliding window or in chunks. */
static planner_status hf_windows(const hf_src *s, model *m)
{
    const hf_sizes *d = class_sizes(s);
    int window = d != NULL ? d->window : 0, chunk = 0, pattern = d != NULL ? d->window_pattern : 0;
    int from = 0, i;
    bool use = false;   /* Qwen2Config's use_sliding_window */
    json_t *types = mj_member(s->obj, "layer_types", 1), *e;
    jsonin_path tp = jsonin_key(&s->path, "layer_types");
    planner_status rc;
    size_t idx;

    if ((rc = hf_opt(s, "sliding_window", 1, MAX_POSITION, &window, NULL)) ||
        (rc = hf_opt(s, "attention_chunk_size", 1, MAX_POSITION, &chunk, NULL)) ||
        (rc = hf_opt(s, "sliding_window_pattern", 1, MODEL_MAX_LAYERS, &pattern, NULL)) ||
        (rc = hf_opt(s, "max_window_layers", 0, MODEL_MAX_LAYERS, &from, NULL)) ||
        (rc = hf_bool(s, "use_sliding_window", &use)))
        return rc;
    if (types != NULL) {
        if (!json_is_array(types) || json_array_size(types) != (size_t)m->layers)
            return jsonin_fail(s->ld, &tp, "must be an array of %d layer types", m->layers);
        json_array_foreach(types, idx, e) {
            jsonin_path ep = jsonin_index(&tp, idx);
            if ((rc = layer_type(s, e, &ep, window, chunk, &m->layer[idx])) != PLANNER_OK)
                return rc;
        }
        return PLANNER_OK;
    }
    if (window <= 0)
        return PLANNER_OK;
    for (i = 0; i < m->layers; i++) {
        bool sliding = false;
        switch (s->fam->window) {
        case HF_WINDOW_NONE: break;
        case HF_WINDOW_ALL: sliding = true; break;
        case HF_WINDOW_QWEN: sliding = use && i >= from; break;
        case HF_WINDOW_ALTERNATE: sliding = i % 2 == 0; break;
        case HF_WINDOW_PATTERN: sliding = pattern > 0 && (i + 1) % pattern != 0; break;
        }
        if (sliding)
            m->layer[i].window = window;
    }
    return PLANNER_OK;
}

planner_status hf_config_layers(const jsonin_doc *ld, const model_fields *f, model *m)
{
    hf_src s = {0};
    planner_status rc;
    s.ld = ld;
    s.obj = f->hf_obj;
    s.path = f->base;
    s.fam = f->hf_fam;
    s.guessed = f->hf_guessed;
    s.nested = f->hf_nested;
    if (s.fam->moe == HF_MOE_QWEN && (rc = qwen_dense_layers(&s, m)) != PLANNER_OK)
        return rc;
    return hf_windows(&s, m);
}
