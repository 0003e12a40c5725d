/* model_load.c: reads a model description, our JSON or a HuggingFace
 * config.json, into a validated `model` (model.h).
 *
 * Parsing goes through jsonin.c (duplicate keys, a depth limit, NUL bytes
 * and out of memory handled there); every schema error is set with
 * jsonin_fail(), which points at the key's line and column in the text and
 * names the key path: `model.hidden: ...`.
 *
 * Recognition: a file with model_type, architectures, hidden_size,
 * num_hidden_layers or n_embd is a HF config (its family from model_type,
 * else from its keys); anything else is ours and must use only our keys (an
 * unknown key is an error with a did-you-mean).  HF configs carry many keys
 * we do not need; those are ignored, the ones we read are type-checked.
 *
 * Invariants on success: every count > 0 and within the limits below,
 * hidden % heads == 0 unless head_dim is given, heads % kv_heads == 0,
 * the run's seq_len <= max_position for learned positions (a RoPE model's
 * longer run is a context extension, noted), and `layer` holds exactly
 * `layers` entries.  The file's seq_len and global_batch are its run
 * (run_spec), returned next to the model, not part of it.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/fileio.h"
#include "base/jsonin.h"
#include "inputs/hf_families.h"
#include "inputs/model.h"
#include "inputs/model_rope.h"
#include "inputs/model_json.h"
#include "base/suggest.h"
#include "base/text.h"

/* ---- Typed getters.  A missing key leaves *out untouched. ---- */

const char *mj_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number with a fraction or exponent";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "a value";
}

/* HF configs write null for "not set"; ours must not. */
json_t *mj_member(json_t *obj, const char *key, int null_is_absent)
{
    json_t *v = json_object_get(obj, key);
    if (v != NULL && null_is_absent && json_is_null(v))
        return NULL;
    return v;
}

planner_status mj_int(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                              const char *key, int null_absent, long min, long max,
                              int *out, int *present)
{
    json_t *v = mj_member(obj, key, null_absent);
    jsonin_path q = jsonin_key(p, key);
    json_int_t x;
    if (present != NULL)
        *present = 0;
    if (v == NULL)
        return PLANNER_OK;
    if (!json_is_integer(v))
        return jsonin_fail(ld, &q, "must be an integer, got %s", mj_kind(v));
    x = json_integer_value(v);
    if (x < min) {
        if (min == 1)
            return jsonin_fail(ld, &q, "must be > 0, got %lld", (long long)x);
        return jsonin_fail(ld, &q, "must be >= %ld, got %lld", min, (long long)x);
    }
    if (x > max)
        return jsonin_fail(ld, &q, "must be at most %ld, got %lld", max, (long long)x);
    *out = (int)x;
    if (present != NULL)
        *present = 1;
    return PLANNER_OK;
}

planner_status mj_probability(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                              const char *key, int null_absent, double *out, bool *present)
{
    json_t *v = mj_member(obj, key, null_absent);
    jsonin_path q = jsonin_key(p, key);
    double x;
    if (v == NULL)
        return PLANNER_OK;
    if (!json_is_number(v))
        return jsonin_fail(ld, &q, "must be a number, got %s", mj_kind(v));
    x = json_number_value(v);
    if (!(x >= 0 && x < 1))
        return jsonin_fail(ld, &q, "must be a probability in [0, 1), got %g", x);
    *out = x;
    if (present != NULL)
        *present = true;
    return PLANNER_OK;
}

planner_status mj_need(const jsonin_doc *ld, const jsonin_path *p, const char *key, int present)
{
    if (present)
        return PLANNER_OK;
    return jsonin_fail(ld, p, "missing required key '%s'", key);
}

planner_status mj_bool(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                               const char *key, int null_absent, bool *out)
{
    json_t *v = mj_member(obj, key, null_absent);
    jsonin_path q = jsonin_key(p, key);
    if (v == NULL)
        return PLANNER_OK;
    if (!json_is_boolean(v))
        return jsonin_fail(ld, &q, "must be true or false, got %s", mj_kind(v));
    *out = json_is_true(v);
    return PLANNER_OK;
}

/* A string that must be one of `names` (n of them); *out gets its index. */
static planner_status get_choice(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                                 const char *key, const char *const *names, int n,
                                 int *out)
{
    json_t *v = json_object_get(obj, key);
    jsonin_path q = jsonin_key(p, key);
    char known[256] = "", hint[128];
    int i;
    if (v == NULL)
        return PLANNER_OK;
    if (!json_is_string(v))
        return jsonin_fail(ld, &q, "must be a string, got %s", mj_kind(v));
    for (i = 0; i < n; i++)
        if (strcmp(json_string_value(v), names[i]) == 0) {
            *out = i;
            return PLANNER_OK;
        }
    for (i = 0; i < n; i++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", names[i]);
    }
    suggest_format(json_string_value(v), names, (size_t)n, hint, sizeof hint);
    return jsonin_fail(ld, &q, "unknown value '%.64s'%s; expected one of: %s",
                json_string_value(v), hint, known);
}

/* Every key of `obj` must be in `keys` (NULL-terminated). */
static planner_status check_keys(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                                 const char *const *keys)
{
    const char *key;
    json_t *v;
    size_t n = 0;
    while (keys[n] != NULL)
        n++;
    json_object_foreach(obj, key, v) {
        size_t i;
        int ok = 0;
        char hint[128];
        (void)v;
        for (i = 0; i < n && !ok; i++)
            ok = strcmp(key, keys[i]) == 0;
        if (!ok) {
            jsonin_path q = jsonin_key(p, key);
            suggest_format(key, keys, n, hint, sizeof hint);
            return jsonin_fail(ld, &q, "unknown key '%.64s'%s", key, hint);
        }
    }
    return PLANNER_OK;
}

planner_status mj_object(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                                 const char *key, json_t **out)
{
    json_t *v = json_object_get(obj, key);
    jsonin_path q = jsonin_key(p, key);
    *out = NULL;
    if (v == NULL)
        return PLANNER_OK;
    if (!json_is_object(v))
        return jsonin_fail(ld, &q, "must be an object, got %s", mj_kind(v));
    *out = v;
    return PLANNER_OK;
}

/* ---- Our JSON. ---- */

static const char *const k_top_keys[] = {
    "name", "description", "layers", "hidden", "heads", "kv_heads", "head_dim",
    "ffn_hidden", "vocab", "seq_len", "max_position", "activation", "normalization",
    "position", "tied_embeddings", "global_batch", "precision", "moe", "mla",
    "mtp_layers", "layer_list", "rope_theta", "rope_scaling", "hidden_dropout", NULL};
static const char *const k_moe_keys[] = {
    "experts", "top_k", "expert_ffn", "shared_experts", "shared_expert_ffn",
    "dense_layers", "layer_freq", NULL};
static const char *const k_mla_keys[] = {
    "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
    NULL};
static const char *const k_layer_keys[] = {
    "count", "hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "moe", NULL};
static const char *const k_act_names[] = {"gelu", "swiglu"};
static const char *const k_norm_names[] = {"layernorm", "rmsnorm"};
static const char *const k_pos_names[] = {"rope", "learned"};

static planner_status read_moe(const jsonin_doc *ld, json_t *root, const jsonin_path *root_path,
                               model *m)
{
    json_t *o;
    jsonin_path p = jsonin_key(root_path, "moe");
    int present = 0;
    planner_status rc = mj_object(ld, root, root_path, "moe", &o);
    if (rc != PLANNER_OK || o == NULL)
        return rc;
    if ((rc = check_keys(ld, o, &p, k_moe_keys)) != PLANNER_OK)
        return rc;
    m->moe.layer_freq = 1;
    if ((rc = mj_int(ld, o, &p, "experts", 0, 1, MAX_EXPERTS, &m->moe.experts, &present)) ||
        (rc = mj_need(ld, &p, "experts", present)) ||
        (rc = mj_int(ld, o, &p, "top_k", 0, 1, MAX_EXPERTS, &m->moe.top_k, &present)) ||
        (rc = mj_need(ld, &p, "top_k", present)) ||
        (rc = mj_int(ld, o, &p, "expert_ffn", 0, 1, MAX_FFN, &m->moe.expert_ffn, &present)) ||
        (rc = mj_need(ld, &p, "expert_ffn", present)) ||
        (rc = mj_int(ld, o, &p, "shared_experts", 0, 0, 1024, &m->moe.shared_experts, NULL)) ||
        (rc = mj_int(ld, o, &p, "shared_expert_ffn", 0, 1, MAX_FFN,
                      &m->moe.shared_expert_ffn, NULL)) ||
        (rc = mj_int(ld, o, &p, "dense_layers", 0, 0, MODEL_MAX_LAYERS,
                      &m->moe.dense_layers, NULL)) ||
        (rc = mj_int(ld, o, &p, "layer_freq", 0, 1, MODEL_MAX_LAYERS, &m->moe.layer_freq,
                      NULL)))
        return rc;
    return PLANNER_OK;
}

static planner_status read_mla(const jsonin_doc *ld, json_t *root, const jsonin_path *root_path,
                               model *m)
{
    json_t *o;
    jsonin_path p = jsonin_key(root_path, "mla");
    int present = 0;
    planner_status rc = mj_object(ld, root, root_path, "mla", &o);
    if (rc != PLANNER_OK || o == NULL)
        return rc;
    if ((rc = check_keys(ld, o, &p, k_mla_keys)) != PLANNER_OK)
        return rc;
    if ((rc = mj_int(ld, o, &p, "q_lora_rank", 0, 0, MAX_HIDDEN, &m->mla.q_lora_rank, NULL)) ||
        (rc = mj_int(ld, o, &p, "kv_lora_rank", 0, 1, MAX_HIDDEN, &m->mla.kv_lora_rank,
                      &present)) ||
        (rc = mj_need(ld, &p, "kv_lora_rank", present)) ||
        (rc = mj_int(ld, o, &p, "qk_nope_head_dim", 0, 1, MAX_HEAD_DIM,
                      &m->mla.qk_nope_head_dim, &present)) ||
        (rc = mj_need(ld, &p, "qk_nope_head_dim", present)) ||
        (rc = mj_int(ld, o, &p, "qk_rope_head_dim", 0, 1, MAX_HEAD_DIM,
                      &m->mla.qk_rope_head_dim, &present)) ||
        (rc = mj_need(ld, &p, "qk_rope_head_dim", present)) ||
        (rc = mj_int(ld, o, &p, "v_head_dim", 0, 1, MAX_HEAD_DIM, &m->mla.v_head_dim,
                      &present)) ||
        (rc = mj_need(ld, &p, "v_head_dim", present)))
        return rc;
    return PLANNER_OK;
}

/* One entry of layer_list, with the model's figures as defaults. */
static planner_status read_layer_entry(const jsonin_doc *ld, json_t *e, const jsonin_path *p,
                                       const model *m, int *count, layer_spec *ls,
                                       int *has_moe)
{
    planner_status rc;
    int present = 0;
    bool moe = false;
    if (!json_is_object(e))
        return jsonin_fail(ld, p,
                           "must be an object such as {\"count\": 2, \"hidden\": 4096}, got %s",
                           mj_kind(e));
    if ((rc = check_keys(ld, e, p, k_layer_keys)) != PLANNER_OK)
        return rc;
    *count = 1;
    ls->hidden = m->hidden;
    ls->heads = m->heads;
    ls->kv_heads = m->kv_heads;
    ls->head_dim = 0;
    ls->ffn_hidden = m->ffn_hidden;
    *has_moe = 0;
    if ((rc = mj_int(ld, e, p, "count", 0, 1, MODEL_MAX_LAYERS, count, NULL)) ||
        (rc = mj_int(ld, e, p, "hidden", 0, 1, MAX_HIDDEN, &ls->hidden, NULL)) ||
        (rc = mj_int(ld, e, p, "heads", 0, 1, MAX_HEADS, &ls->heads, NULL)) ||
        (rc = mj_int(ld, e, p, "kv_heads", 0, 1, MAX_HEADS, &ls->kv_heads, NULL)) ||
        (rc = mj_int(ld, e, p, "head_dim", 0, 1, MAX_HEAD_DIM, &ls->head_dim, &present)) ||
        (rc = mj_int(ld, e, p, "ffn_hidden", 0, 1, MAX_FFN, &ls->ffn_hidden, NULL)) ||
        (rc = mj_bool(ld, e, p, "moe", 0, &moe)))
        return rc;
    if (json_object_get(e, "moe") != NULL)
        *has_moe = 1;
    ls->moe = moe;
    if (!present) {
        /* a layer that keeps the model's width keeps its head_dim too */
        if (ls->hidden == m->hidden && ls->heads == m->heads)
            ls->head_dim = m->head_dim;
        else if (ls->hidden % ls->heads != 0)
            return jsonin_fail(ld, p,
                               "hidden (%d) must be divisible by heads (%d), or give head_dim",
                               ls->hidden, ls->heads);
        else
            ls->head_dim = ls->hidden / ls->heads;
    }
    if (ls->kv_heads > ls->heads || ls->heads % ls->kv_heads != 0)
        return jsonin_fail(ld, p, "heads (%d) must be a multiple of kv_heads (%d)", ls->heads,
                    ls->kv_heads);
    if ((long)ls->heads * ls->head_dim > MAX_ATTN_WIDTH)
        return jsonin_fail(ld, p, "heads x head_dim (%ld) exceeds %d",
                           (long)ls->heads * ls->head_dim, MAX_ATTN_WIDTH);
    if (ls->moe && m->moe.experts == 0)
        return jsonin_fail(ld, p, "moe: true needs a top-level \"moe\" object");
    return PLANNER_OK;
}

/* Marks layer i MoE per the model's moe block (DeepSeek's rule: from
 * dense_layers on, every layer_freq-th layer). */
static void mark_moe_layers(model *m)
{
    int i;
    for (i = 0; i < m->layers; i++)
        m->layer[i].moe = m->moe.experts > 0 && i >= m->moe.dense_layers &&
                          i % (m->moe.layer_freq > 0 ? m->moe.layer_freq : 1) == 0;
}

static planner_status fill_uniform_layers(model *m, planner_error *err)
{
    int i;
    m->layer = pl_calloc((size_t)m->layers, sizeof *m->layer);
    if (m->layer == NULL)
        return error_oom(err);
    for (i = 0; i < m->layers; i++) {
        m->layer[i].hidden = m->hidden;
        m->layer[i].heads = m->heads;
        m->layer[i].kv_heads = m->kv_heads;
        m->layer[i].head_dim = m->head_dim;
        m->layer[i].ffn_hidden = m->ffn_hidden;
    }
    mark_moe_layers(m);
    return PLANNER_OK;
}

static planner_status read_layer_list(const jsonin_doc *ld, json_t *root,
                                      const jsonin_path *root_path, model *m, int layers_given)
{
    json_t *list = json_object_get(root, "layer_list"), *e;
    jsonin_path lp = jsonin_key(root_path, "layer_list");
    size_t idx;
    int total = 0, pos = 0;
    planner_status rc;

    if (!json_is_array(list))
        return jsonin_fail(ld, &lp,
                           "must be an array of {\"count\", \"hidden\", ...} objects, got %s",
                           mj_kind(list));
    if (json_array_size(list) == 0)
        return jsonin_fail(ld, &lp, "must list at least one layer");
    /* first pass: counts, so the array can be sized and checked against layers */
    json_array_foreach(list, idx, e) {
        layer_spec ls;
        int count, has_moe;
        jsonin_path ep = jsonin_index(&lp, (int)idx);
        if ((rc = read_layer_entry(ld, e, &ep, m, &count, &ls, &has_moe)) != PLANNER_OK)
            return rc;
        if (total > MODEL_MAX_LAYERS - count)
            return jsonin_fail(ld, &ep, "more than %d layers in all", MODEL_MAX_LAYERS);
        total += count;
    }
    if (layers_given && total != m->layers) {
        jsonin_path p = jsonin_key(root_path, "layers");
        return jsonin_fail(ld, &p, "is %d but layer_list lists %d layers", m->layers, total);
    }
    m->layers = total;
    m->layer = pl_calloc((size_t)total, sizeof *m->layer);
    if (m->layer == NULL)
        return error_oom(ld->err);
    mark_moe_layers(m);   /* the default; an entry's "moe" overrides it */
    json_array_foreach(list, idx, e) {
        layer_spec ls;
        int count, has_moe, k;
        jsonin_path ep = jsonin_index(&lp, (int)idx);
        if ((rc = read_layer_entry(ld, e, &ep, m, &count, &ls, &has_moe)) != PLANNER_OK)
            return rc;
        for (k = 0; k < count; k++, pos++) {
            bool moe = has_moe ? ls.moe : m->layer[pos].moe;
            m->layer[pos] = ls;
            m->layer[pos].moe = moe;
            if (m->layer[pos].hidden != m->hidden || m->layer[pos].heads != m->heads ||
                m->layer[pos].kv_heads != m->kv_heads ||
                m->layer[pos].head_dim != m->head_dim ||
                m->layer[pos].ffn_hidden != m->ffn_hidden)
                m->uneven = true;
        }
    }
    return PLANNER_OK;
}

static planner_status load_ours(const jsonin_doc *ld, json_t *root, model *m, model_fields *tf)
{
    jsonin_path rp = JSONIN_PATH_ROOT;
    json_t *v;
    int present = 0, act = ACT_GELU, norm = NORM_LAYERNORM, pos = POS_LEARNED,
        prec = PREC_BF16;
    planner_error why = PLANNER_ERROR_INIT;
    planner_status rc;

    if ((rc = check_keys(ld, root, &rp, k_top_keys)) != PLANNER_OK)
        return rc;
    tf->k_hidden = "hidden";
    tf->k_heads = "heads";
    tf->k_kv = "kv_heads";
    tf->k_maxpos = "max_position";
    m->format = MODEL_FORMAT_PLANNER;
    m->tied_embeddings = true;
    v = json_object_get(root, "name");
    if (v != NULL) {
        jsonin_path q = jsonin_key(&rp, "name");
        if (!json_is_string(v))
            return jsonin_fail(ld, &q, "must be a string, got %s", mj_kind(v));
        if (json_string_length(v) == 0 || json_string_length(v) >= MODEL_NAME_MAX)
            return jsonin_fail(ld, &q, "must have 1 to %d characters", MODEL_NAME_MAX - 1);
        if (text_check_name(json_string_value(v), &why) != PLANNER_OK)
            return jsonin_fail(ld, &q, "holds %s: names are printed on terminals and in "
                               "scripts", why.msg);
        snprintf(m->name, sizeof m->name, "%s", json_string_value(v));
    }
    v = json_object_get(root, "description");
    if (v != NULL && !json_is_string(v)) {
        jsonin_path q = jsonin_key(&rp, "description");
        return jsonin_fail(ld, &q, "must be a string, got %s", mj_kind(v));
    }
    if ((rc = mj_int(ld, root, &rp, "layers", 0, 1, MODEL_MAX_LAYERS, &m->layers,
                      &tf->has_layers)) ||
        (rc = mj_int(ld, root, &rp, "hidden", 0, 1, MAX_HIDDEN, &m->hidden, &present)) ||
        (rc = mj_need(ld, &rp, "hidden", present)) ||
        (rc = mj_int(ld, root, &rp, "heads", 0, 1, MAX_HEADS, &m->heads, &present)) ||
        (rc = mj_need(ld, &rp, "heads", present)) ||
        (rc = mj_int(ld, root, &rp, "kv_heads", 0, 1, MAX_HEADS, &m->kv_heads, &tf->has_kv)) ||
        (rc = mj_int(ld, root, &rp, "head_dim", 0, 1, MAX_HEAD_DIM, &m->head_dim,
                      &tf->has_heads_dim)) ||
        (rc = mj_int(ld, root, &rp, "ffn_hidden", 0, 1, MAX_FFN, &m->ffn_hidden,
                      &tf->has_ffn)) ||
        (rc = mj_int(ld, root, &rp, "vocab", 0, 1, MAX_VOCAB, &m->vocab, &present)) ||
        (rc = mj_need(ld, &rp, "vocab", present)) ||
        (rc = mj_int(ld, root, &rp, "seq_len", 0, 1, MAX_SEQ, &tf->seq_len, &tf->has_seq)) ||
        (rc = mj_int(ld, root, &rp, "max_position", 0, 1, MAX_POSITION, &m->max_position,
                      &tf->has_maxpos)) ||
        (rc = get_choice(ld, root, &rp, "activation", k_act_names, 2, &act)) ||
        (rc = get_choice(ld, root, &rp, "normalization", k_norm_names, 2, &norm)) ||
        (rc = get_choice(ld, root, &rp, "position", k_pos_names, 2, &pos)) ||
        (rc = mj_bool(ld, root, &rp, "tied_embeddings", 0, &m->tied_embeddings)) ||
        (rc = mj_int(ld, root, &rp, "global_batch", 0, 1, MAX_GBS, &tf->global_batch,
                      &tf->has_gbs)) ||
        (rc = get_choice(ld, root, &rp, "precision", precision_names, PREC_COUNT, &prec)) ||
        (rc = mj_int(ld, root, &rp, "mtp_layers", 0, 0, 64, &m->mtp_layers, NULL)) ||
        (rc = mj_probability(ld, root, &rp, "hidden_dropout", 0, &m->hidden_dropout,
                             &m->has_hidden_dropout)) ||
        (rc = read_moe(ld, root, &rp, m)) || (rc = read_mla(ld, root, &rp, m)))
        return rc;
    m->act = (activation)act;
    m->norm = (norm_kind)norm;
    m->position = (position_kind)pos;
    m->prec = (precision)prec;
    if (!tf->has_layers && json_object_get(root, "layer_list") == NULL)
        return jsonin_fail(ld, &rp, "missing required key 'layers' (or a 'layer_list')");
    if (!tf->has_ffn) {
        if (m->act == ACT_GELU) {
            m->ffn_hidden = 4 * m->hidden;
        } else if (m->moe.experts > 0 && m->moe.dense_layers == 0 && m->moe.layer_freq == 1) {
            m->ffn_hidden = m->moe.expert_ffn;   /* every layer is MoE */
        } else {
            return jsonin_fail(ld, &rp, "missing required key 'ffn_hidden' (only gelu models "
                                 "default it to 4 x hidden)");
        }
    }
    return PLANNER_OK;
}

/* ---- Shared validation and defaults. ---- */

const char *model_max_position_key(const model *m)
{
    return m->max_position_key[0] != '\0' ? m->max_position_key : "max_position";
}

/* Heads, KV heads and head_dim agree; top_k fits the experts. */
static planner_status check_shape(const jsonin_doc *ld, model *m, const model_fields *tf)
{
    jsonin_path heads_p = jsonin_key(&tf->base, tf->k_heads);
    jsonin_path hidden_p = jsonin_key(&tf->base, tf->k_hidden);
    jsonin_path kv_p = jsonin_key(&tf->base, tf->k_kv);

    if (!tf->has_kv)
        m->kv_heads = m->heads;
    if (!tf->has_heads_dim) {
        if (m->hidden % m->heads != 0)
            return jsonin_fail(ld, &hidden_p, "must be divisible by heads (%d), or give head_dim",
                        m->heads);
        m->head_dim = m->hidden / m->heads;
    }
    else if (m->mla.kv_lora_rank == 0 && (long)m->heads * m->head_dim != m->hidden &&
             !(tf->hf_fam != NULL && tf->hf_fam->own_head_dim))
        model_note(m, "head_dim %d is not %s / %s (%d / %d): head_dim wins, attention is %d "
                      "heads x %d = %ld wide", m->head_dim, tf->k_hidden, tf->k_heads, m->hidden,
                   m->heads, m->heads, m->head_dim, (long)m->heads * m->head_dim);
    if (m->kv_heads > m->heads || m->heads % m->kv_heads != 0)
        return jsonin_fail(ld, tf->has_kv ? &kv_p : &heads_p,
                    "heads (%d) must be a multiple of kv_heads (%d)", m->heads, m->kv_heads);
    if ((long)m->heads * m->head_dim > MAX_ATTN_WIDTH)
        return jsonin_fail(ld, &heads_p, "heads x head_dim (%ld) exceeds %d",
                    (long)m->heads * m->head_dim, MAX_ATTN_WIDTH);
    if (tf->rotary_fraction > 0 && tf->rotary_fraction < 1)
        m->rotary_dim = (int)(tf->rotary_fraction * m->head_dim);
    if (m->moe.experts > 0 && m->moe.top_k > m->moe.experts) {
        jsonin_path mp = jsonin_key(&tf->base, "moe");
        jsonin_path q = m->format == MODEL_FORMAT_HF ? jsonin_key(&tf->base, tf->k_top_k)
                                                     : jsonin_key(&mp, "top_k");
        return jsonin_fail(ld, &q, "top_k (%d) exceeds the number of experts (%d)",
                    m->moe.top_k, m->moe.experts);
    }
    return PLANNER_OK;
}

/* The run the file describes under the override (run_spec, model.h): the
 * file's sequence length and batch, else the defaults (a default sequence
 * capped at max_position), then the override's (checked by model_run_check;
 * past a RoPE model's max_position a note: a context extension) and its
 * precision.  A max_position the file does not give stays 0: learned
 * positions follow the run's sequence (model_positions). */
static planner_status run_figures(const jsonin_doc *ld, model *m, const model_fields *tf,
                                  const run_spec *ov, run_spec *run)
{
    jsonin_path maxpos_p = jsonin_key(&tf->base, tf->k_maxpos);
    planner_error perr = PLANNER_ERROR_INIT;
    jsonin_path_format(&maxpos_p, "", m->max_position_key, sizeof m->max_position_key);
    *run = ov != NULL ? *ov : (run_spec){0};
    run->seq_len = tf->seq_len;
    run->seq_len_default = !tf->has_seq;
    if (!tf->has_seq) {
        run->seq_len = MODEL_DEFAULT_SEQ_LEN;
        if (tf->has_maxpos && m->max_position < run->seq_len)
            run->seq_len = m->max_position;
    }
    if (!tf->has_maxpos)
        m->max_position = 0;
    if ((ov == NULL || ov->seq_len <= 0) && m->max_position > 0 &&
        run->seq_len > m->max_position) {
        jsonin_path q = jsonin_key(&tf->base, "seq_len");
        return jsonin_fail(ld, &q, "seq_len (%d) exceeds max_position (%d)", run->seq_len,
                    m->max_position);
    }
    run->global_batch = tf->has_gbs ? tf->global_batch : MODEL_DEFAULT_GLOBAL_BATCH;
    run->global_batch_default = !tf->has_gbs;
    if (ov == NULL)
        return PLANNER_OK;
    if (ov->seq_len > 0) {
        run->seq_len = ov->seq_len;
        run->seq_len_default = false;
        if (model_run_check(m, run->seq_len, &perr) != PLANNER_OK)
            return jsonin_fail(ld, &maxpos_p, "%s", perr.msg);
        if (m->max_position > 0 && run->seq_len > m->max_position)   /* RoPE: any position */
            model_note(m, "sequence length %d (from --seq) exceeds max_position %d: planned as "
                          "a context extension (RoPE scaling is the training recipe's)",
                       run->seq_len, m->max_position);
    }
    if (ov->global_batch > 0) {
        run->global_batch = ov->global_batch;
        run->global_batch_default = false;
    }
    if (ov->has_prec)
        m->prec = ov->prec;
    return PLANNER_OK;
}

static planner_status finish(const jsonin_doc *ld, json_t *root, model *m, const model_fields *tf,
                             const run_spec *ov, run_spec *run)
{
    jsonin_path rp = JSONIN_PATH_ROOT;
    int hf = m->format != MODEL_FORMAT_PLANNER;
    planner_status rc;

    if ((rc = check_shape(ld, m, tf)) != PLANNER_OK)
        return rc;
    /* layers: ours may list them; everything else is uniform */
    if (!hf && json_object_get(root, "layer_list") != NULL)
        rc = read_layer_list(ld, root, &rp, m, tf->has_layers);
    else
        rc = fill_uniform_layers(m, ld->err);
    if (rc == PLANNER_OK && hf)
        rc = hf_config_layers(ld, tf, m);
    if (rc != PLANNER_OK)
        return rc;
    if (m->moe.experts > 0 && m->moe.dense_layers >= m->layers) {
        jsonin_path q = hf ? jsonin_key(&tf->base, tf->k_dense_layers)
                     : jsonin_key(&rp, "moe");
        if (!hf)
            q = jsonin_key(&q, "dense_layers");
        return jsonin_fail(ld, &q, "leaves no MoE layer (%d dense of %d layers)",
                    m->moe.dense_layers, m->layers);
    }
    return run_figures(ld, m, tf, ov, run);
}

/* The directory a "config.json" path names (a HuggingFace download:
 * ".../Llama-3-8B/config.json", or "config.json" in it) into cwd[], as
 * [*start, *end); 0 when there is none to use. */
static int config_dir(const char *path, const char *base, char *cwd, size_t size,
                      const char **start, const char **end)
{
    const char *e = base, *d;
    while (e > path && e[-1] == '/')
        e--;
    d = e;
    while (d > path && d[-1] != '/')
        d--;
    if (e == d || (e - d == 1 && d[0] == '.')) {   /* "config.json", "./config.json" */
        if (getcwd(cwd, size) == NULL || strrchr(cwd, '/') == NULL)
            return 0;
        *start = strrchr(cwd, '/') + 1;
        *end = cwd + strlen(cwd);
        return *end > *start;
    }
    if (e - d == 2 && d[0] == '.' && d[1] == '.')
        return 0;
    *start = d;
    *end = e;
    return 1;
}

/* "configs/llama3-8b.json" -> "llama3-8b"; ".../Llama-3-8B/config.json" ->
 * "Llama-3-8B". */
static void name_from_path(const char *path, char *buf, size_t size)
{
    char cwd[1024];
    const char *base = strrchr(path, '/'), *end;
    size_t n;
    base = base ? base + 1 : path;
    end = base + strlen(base);
    if (strcmp(base, "config.json") == 0)
        config_dir(path, base, cwd, sizeof cwd, &base, &end);
    n = (size_t)(end - base);
    if (n > 5 && strncmp(end - 5, ".json", 5) == 0)
        n -= 5;
    if (n >= size)
        n = size - 1;
    memcpy(buf, base, n);
    buf[n] = '\0';
    if (n == 0)
        snprintf(buf, size, "model");
    /* a file or directory name is not checked like a name in the file:
     * control characters and bytes that are not UTF-8 become '_' */
    if (text_check_name(buf, NULL) != PLANNER_OK)
        for (char *p = buf; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p >= 0x7f)
                *p = '_';
}

/* A HF config that also carries keys of our format ("layers", "hidden"...):
 * it is read as a HF config and those keys are ignored; says so, with the
 * figure that is used instead where there is one.  Keys both formats share
 * (name, head_dim, rope_theta, rope_scaling) are not ours alone, nor is a
 * key the config's family reads as its own (hf_family_reads_key: Falcon's
 * hidden_dropout). */
static void note_our_keys(json_t *root, const model *m, const run_spec *run)
{
    const struct { const char *key; int value; } sized[] = {
        {"layers", m->layers}, {"hidden", m->hidden}, {"heads", m->heads},
        {"kv_heads", m->kv_heads}, {"ffn_hidden", m->ffn_hidden}, {"vocab", m->vocab},
        {"seq_len", run->seq_len}, {"max_position", m->max_position},
        {"global_batch", run->global_batch}};
    const char *marker = hf_config_marker(root);
    const hf_family *fam = hf_family_find(m->family);
    for (int i = 0; k_top_keys[i] != NULL; i++) {
        const char *k = k_top_keys[i];
        size_t j = 0;
        if (json_object_get(root, k) == NULL || strcmp(k, "name") == 0 ||
            strcmp(k, "head_dim") == 0 || strncmp(k, "rope_", 5) == 0 ||
            (fam != NULL && hf_family_reads_key(fam, k)))
            continue;
        while (j < sizeof sized / sizeof sized[0] && strcmp(sized[j].key, k) != 0)
            j++;
        if (j < sizeof sized / sizeof sized[0])
            model_note((model *)m, "'%s' is a key of planner's model format, but the file is read "
                       "as a HuggingFace config (it has '%s'): '%s' is ignored; from the "
                       "config's own keys, %s = %d", k, marker, k, k, sized[j].value);
        else
            model_note((model *)m, "'%s' is a key of planner's model format, but the file is read "
                       "as a HuggingFace config (it has '%s'): '%s' is ignored", k, marker, k);
    }
}

planner_status model_load_buffer(model **out, run_spec *run_out, const char *text, size_t len,
                                 const char *name, const run_spec *override,
                                 planner_error *err)
{
    run_spec run;
    jsonin_doc ld;
    json_t *root;
    model *m = NULL;
    model_fields tf;
    planner_status rc;

    *out = NULL;
    memset(&tf, 0, sizeof tf);
    if ((rc = jsonin_parse(&ld, text, len, name, "model", err)) != PLANNER_OK)
        goto cleanup;
    root = ld.root;
    if (!json_is_object(root)) {
        rc = error_set(err, PLANNER_E_INPUT, name, 1, 1, NULL,
                       "a model description must be a JSON object, got %s", mj_kind(root));
        goto cleanup;
    }
    m = pl_calloc(1, sizeof *m);
    if (m == NULL) {
        rc = error_oom(err);
        goto cleanup;
    }
    name_from_path(name, m->name, sizeof m->name);
    rc = hf_config_marker(root) != NULL ? hf_config_read(&ld, root, override, m, &tf)
                                        : load_ours(&ld, root, m, &tf);
    if (rc == PLANNER_OK)   /* a vision-language wrapper's: its text_config's */
        rc = model_rope_read(&ld, tf.hf_obj != NULL ? tf.hf_obj : root, &tf.base, &m->rope);
    if (rc != PLANNER_OK)
        goto cleanup;
    if ((rc = finish(&ld, root, m, &tf, override, &run)) != PLANNER_OK)
        goto cleanup;
    if (m->format == MODEL_FORMAT_HF)
        note_our_keys(root, m, &run);
    *out = m;
    if (run_out != NULL)
        *run_out = run;
    m = NULL;
cleanup:
    model_free(m);
    jsonin_close(&ld);
    return rc;
}

planner_status model_load(model **out, run_spec *run_out, const char *path,
                          const run_spec *override, planner_error *err)
{
    char *text = NULL;
    size_t len = 0;
    planner_status rc;
    *out = NULL;
    rc = file_read_all(&text, &len, path, INPUT_MAX_BYTES, err);
    if (rc == PLANNER_OK)
        rc = model_load_buffer(out, run_out, text, len, path, override, err);
    pl_free(text);
    return rc;
}

void model_free(model *m)
{
    if (m == NULL)
        return;
    pl_free(m->layer);
    pl_free(m);
}
