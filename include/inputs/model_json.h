/* model_json.h: what the two model readers share (inside inputs/ only):
 * model_load.c (our JSON, the common checks and defaults) and hf_config.c
 * (HuggingFace config.json).  Typed getters that point an error at the key
 * (jsonin_fail), and the figures a reader found, for the common checks.
 */
#ifndef PLANNER_MODEL_JSON_H
#define PLANNER_MODEL_JSON_H

#include <jansson.h>
#include "base/jsonin.h"
#include "inputs/hf_families.h"
#include "inputs/model.h"

#define MAX_HIDDEN 1000000
#define MAX_FFN 10000000
#define MAX_VOCAB 10000000
#define MAX_SEQ 16777216
#define MAX_POSITION 1073741824
#define MAX_HEADS 100000
#define MAX_HEAD_DIM 65536
#define MAX_ATTN_WIDTH 16777216   /* heads * head_dim */
#define MAX_EXPERTS 65536
#define MAX_GBS 100000000

/* What a reader found, and the names of the keys it read the shape from
 * (for messages), in the object at `base`. */
typedef struct model_fields {
    int has_layers, has_heads_dim, has_ffn, has_seq, has_maxpos, has_gbs, has_kv;
    int seq_len, global_batch;   /* the file's run (ours: seq_len, global_batch) */
    jsonin_path base;
    const char *k_hidden, *k_heads, *k_kv, *k_maxpos, *k_top_k, *k_dense_layers;
    double rotary_fraction;    /* of head_dim (0: all) */
    json_t *hf_obj;            /* HF: the object the model was read from */
    const hf_family *hf_fam;   /* HF: its family */
    bool hf_guessed;           /* HF: the family is a guess by keys */
    bool hf_nested;            /* HF: the sizes are a wrapper's text_config */
} model_fields;

const char *mj_kind(const json_t *v);                  /* "an integer", ... */
/* obj[key]; with null_is_absent a JSON null counts as absent (HF). */
json_t *mj_member(json_t *obj, const char *key, int null_is_absent);
/* Integer in min..max into *out (a missing key leaves it; *present, may be
 * NULL, says which). */
planner_status mj_int(const jsonin_doc *ld, json_t *obj, const jsonin_path *p, const char *key,
                      int null_absent, long min, long max, int *out, int *present);
/* A number in [0, 1) into *out (a missing key leaves it; *present, may be
 * NULL, is set true when found). */
planner_status mj_probability(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                              const char *key, int null_absent, double *out, bool *present);
/* "missing required key 'key'" unless present. */
planner_status mj_need(const jsonin_doc *ld, const jsonin_path *p, const char *key, int present);
planner_status mj_bool(const jsonin_doc *ld, json_t *obj, const jsonin_path *p, const char *key,
                       int null_absent, bool *out);
/* An object or absent (*out NULL). */
planner_status mj_object(const jsonin_doc *ld, json_t *obj, const jsonin_path *p,
                         const char *key, json_t **out);

/* HF config.json (hf_config.c).  hf_config_marker: the key that makes the
 * root a HF config (model_type, architectures, hidden_size,
 * num_hidden_layers or n_embd, the first present), or NULL: not one.
 * hf_config_read fills m (format, family, name, shape, architecture) and
 * *f; hf_config_layers marks, once the layers exist, the MoE and
 * sliding-window layers. */
const char *hf_config_marker(json_t *root);
planner_status hf_config_read(const jsonin_doc *ld, json_t *root, const run_spec *run,
                              model *m, model_fields *f);
planner_status hf_config_layers(const jsonin_doc *ld, const model_fields *f, model *m);

#endif
