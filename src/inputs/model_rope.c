/* model_rope.c: the rotary position embedding's base and context scaling, as
 * HuggingFace configs write them (and our JSON, with the same keys):
 *   rope_theta (GPT-NeoX: rotary_emb_base): the base of the inverse
 *     frequencies, theta^(-2i/d) (Su et al. 2021, RoFormer); 10000 when
 *     absent, the default of transformers' configs and of Megatron-LM's
 *     --rotary-base;
 *   rope_scaling: null, or an object whose rope_type (older files: type) is
 *     "linear" (positions / factor), "llama3" (Llama 3.1's per-frequency
 *     blend: factor, low_freq_factor, high_freq_factor,
 *     original_max_position_embeddings), "yarn" (Peng et al. 2023: factor,
 *     beta_fast, beta_slow, mscale, mscale_all_dim,
 *     original_max_position_embeddings) or another kind kept by name.
 * The figures only reach the launch material (emit.c), which carries them to
 * Megatron-LM's flags or refuses the model; the cost model does not use them.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "inputs/model_rope.h"

/* A finite number at key `key` of `obj` (path p), > 0 (or >= 0 when
 * zero_ok), into *out; absent or null leaves *out. */
static planner_status number(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                             const char *key, bool zero_ok, double *out)
{
    json_t *v = json_object_get(obj, key);
    jsonin_path q = jsonin_key(p, key);
    double x;
    if (v == NULL || json_is_null(v))
        return PLANNER_OK;
    x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!isfinite(x) || x < 0 || (x == 0 && !zero_ok))
        return jsonin_fail(ld, &q, "must be a number %s 0", zero_ok ? ">=" : ">");
    *out = x;
    return PLANNER_OK;
}

static const struct {
    const char *name;
    rope_scaling_kind kind;
} k_kinds[] = {
    {"default", ROPE_SCALING_NONE}, {"linear", ROPE_SCALING_LINEAR},
    {"llama3", ROPE_SCALING_LLAMA3}, {"yarn", ROPE_SCALING_YARN},
};

static planner_status read_scaling(const jsonin_doc *ld, json_t *s, const jsonin_path *p,
                                   model_rope *out)
{
    const char *tkey = json_object_get(s, "rope_type") != NULL ? "rope_type" : "type";
    json_t *t = json_object_get(s, tkey);
    jsonin_path tp = jsonin_key(p, tkey);
    planner_status rc;
    if (!json_is_string(t))
        return jsonin_fail(ld, t != NULL ? &tp : p, "needs a string rope_type (or type)");
    snprintf(out->type, sizeof out->type, "%s", json_string_value(t));
    out->scaling = ROPE_SCALING_OTHER;
    for (size_t i = 0; i < sizeof k_kinds / sizeof k_kinds[0]; i++)
        if (strcmp(out->type, k_kinds[i].name) == 0)
            out->scaling = k_kinds[i].kind;
    if ((rc = number(ld, s, p, "factor", false, &out->factor)) ||
        (rc = number(ld, s, p, "low_freq_factor", false, &out->low_freq_factor)) ||
        (rc = number(ld, s, p, "high_freq_factor", false, &out->high_freq_factor)) ||
        (rc = number(ld, s, p, "original_max_position_embeddings", false,
                     &out->original_max_position)) ||
        (rc = number(ld, s, p, "beta_fast", false, &out->beta_fast)) ||
        (rc = number(ld, s, p, "beta_slow", false, &out->beta_slow)) ||
        (rc = number(ld, s, p, "mscale", true, &out->mscale)))
        return rc;
    return number(ld, s, p, "mscale_all_dim", true, &out->mscale_all_dim);
}

planner_status model_rope_read(const jsonin_doc *ld, json_t *root, const jsonin_path *at,
                                model_rope *out)
{
    jsonin_path rp = *at, sp = jsonin_key(&rp, "rope_scaling");
    json_t *s = json_object_get(root, "rope_scaling");
    planner_status rc;
    memset(out, 0, sizeof *out);
    out->beta_fast = out->beta_slow = out->mscale = out->mscale_all_dim = -1;
    if ((rc = number(ld, root, &rp, "rope_theta", false, &out->theta)) ||
        (rc = number(ld, root, &rp, "rotary_emb_base", false, &out->theta)))
        return rc;
    if (s == NULL || json_is_null(s))
        return PLANNER_OK;
    if (!json_is_object(s))
        return jsonin_fail(ld, &sp, "must be an object or null");
    return read_scaling(ld, s, &sp, out);
}
