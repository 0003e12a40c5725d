/* run_stacks.h: the software stack of a measured run that does not name one
 * (a rule table over its "source" and id; src/fit/run_stacks.c says why
 * each source ran which stack). */
#ifndef PLANNER_RUN_STACKS_H
#define PLANNER_RUN_STACKS_H

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

/* The multi-token-prediction layers the source says run `r`'s model had
 * where that differs from the model's published config (a source's table
 * naming "w/o MTP"), or -1 when no fact says; *why its evidence. */
int run_mtp_layers_for_system(const run_system *r, const char **why);

#endif
