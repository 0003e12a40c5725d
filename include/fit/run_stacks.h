/* run_stacks.h: the software stack of a measured run that does not name one
 * (a rule table over its "source" and id; src/fit/run_stacks.c says why
 * each source ran which stack). */
#ifndef PLANNER_RUN_STACKS_H
#define PLANNER_RUN_STACKS_H

#include <stdbool.h>
#include "inputs/stack.h"

/* The stack a run of `source` with id `id` ran, by the first rule that
 * matches (its source contains the rule's text and its id starts with the
 * rule's prefix, where it has one), or NULL when none does (the caller's
 * default, megatron-core).  *why gets the rule's reason (NULL: none);
 * *recipe the knobs the source's recipes set that the runs schema has no
 * field for, as --fix text ("grad_reduce_bf16=on"; NULL: none). */
const stack_spec *run_stack_from_source(const char *source, const char *id, const char **why,
                                        const char **recipe);

/* A run as the recipe facts see it: its source, model name (may be NULL),
 * GPU (a catalog name) and precision ("mxfp8"). */
typedef struct run_system {
    const char *source, *model, *gpu, *precision;
} run_system;

/* What a source's recipes set for some models, systems and precisions
 * only, as --fix text ("cuda_graph=on"): the next fact from *at on that
 * applies to run `r` (*at starts at 0 and moves past it), or NULL when no
 * more do.  *why gets the fact's evidence (NULL: none). */
const char *run_recipe_for_system(const run_system *r, size_t *at, const char **why);

/* What the source says of the model variant run `r` ran, where the runs
 * schema has no field for it: the multi-token-prediction layers where they
 * differ from the model's published config (a source's table naming "w/o
 * MTP"; -1: no fact says), whether its recipe runs core attention in FP8
 * (model.fp8_attention) and the routed experts as Transformer Engine's
 * fused grouped MLP (model.fused_grouped_mlp), whether FSDP2 gathers its
 * Float8Linear weights in FP8 (model.fsdp_fp8_gather) and whether the
 * output layer runs in MXFP8 (model.fp8_output_proj); each with its
 * evidence (NULL: none). */
typedef struct run_model_variant {
    int mtp_layers;
    bool fp8_attention, fused_grouped_mlp, fsdp_fp8_gather, fp8_output_proj;
    const char *mtp_why, *fp8_attention_why, *fused_grouped_mlp_why, *fsdp_fp8_gather_why;
    const char *fp8_output_proj_why;
} run_model_variant;

void run_model_for_system(const run_system *r, run_model_variant *out);

/* The residual (hidden) dropout the source's recipes ran run `r`'s model
 * with (r->model: the row's model name, with or without a definition), or
 * -1 when no fact says (the model's own, else Megatron's 0.1); *why its
 * evidence. */
double run_hidden_dropout_for_system(const run_system *r, const char **why);

/* Whether the source's row ran its transformer blocks under torch.compile
 * (model.torch_compile), where the runs schema has no field for it: a
 * torchtitan row whose source names torch.compile (its table or its row);
 * *loss whether that release compiled the loss function too
 * (model.loss_compiled); *why its evidence (NULL: no fact says). */
bool run_compiled_for_system(const run_system *r, bool *loss, const char **why);

#endif
