/* model_rope.h: the rotary-embedding keys of a model file (model.h's
 * model_rope), read by model_load for both formats. */
#ifndef PLANNER_MODEL_ROPE_H
#define PLANNER_MODEL_ROPE_H

#include "base/jsonin.h"
#include "inputs/model.h"

/* Reads rope_theta (GPT-NeoX: rotary_emb_base) and rope_scaling from the
 * object `root` at path `at` (the top level, or a text_config) of document
 * `ld` into *out (zeroed first; betas and
 * mscales < 0 when absent).  Returns PLANNER_OK, or an input error positioned
 * at the offending key (a base or factor that is not a finite number > 0, a
 * rope_scaling that is not an object, a type that is not a string). */
planner_status model_rope_read(const jsonin_doc *ld, json_t *root, const jsonin_path *at,
                                model_rope *out);

#endif
