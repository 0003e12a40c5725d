/* emit.h: launch material for a plan: Megatron-LM arguments, an sbatch
 * script, a torchrun command.  Every flag exists in Megatron core_v0.15.0. */
#ifndef PLANNER_EMIT_H
#define PLANNER_EMIT_H

#include <stdio.h>
#include "cluster.h"
#include "model.h"
#include "strategy.h"

typedef enum emit_kind { EMIT_NONE, EMIT_MEGATRON, EMIT_SLURM, EMIT_TORCHRUN } emit_kind;

/* Writes the launch material of `kind` for plan `pl`.  Returns 0 or -1 if the
 * plan cannot be expressed (message in why). */
int emit_write(FILE *out, emit_kind kind, const model *m, const cluster *c,
               const plan *pl, char *why, int why_size);

#endif
