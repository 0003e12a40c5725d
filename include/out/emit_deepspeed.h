/* emit_deepspeed.h: the DeepSpeed JSON config of a plan on the deepspeed
 * stack, for Megatron-DeepSpeed's pretrain_gpt.py (MEGATRON_DEEPSPEED_COMMIT,
 * its last master) with DeepSpeed's documented config keys.  out/emit.c
 * prints it (--emit deepspeed) and wraps it, with Megatron-DeepSpeed's
 * arguments, into the sbatch and torchrun scripts. */
#ifndef PLANNER_EMIT_DEEPSPEED_H
#define PLANNER_EMIT_DEEPSPEED_H

#include <stdio.h>
#include "inputs/model.h"
#include "inputs/stack.h"
#include "model/strategy.h"

#define MEGATRON_DEEPSPEED_COMMIT "f4157be"

/* Checks what DeepSpeed's engine cannot run for plan `pl` of model `m`
 * trained in `prec` (emit.c's emitted precision): PLANNER_OK, or
 * PLANNER_E_INPUT with the reason in *err (err may be NULL).  The plan has
 * passed emit_check; the model's flags are emit.c's to check. */
planner_status emit_deepspeed_check(const model *m, const plan *pl, precision prec,
                                    planner_error *err);

/* Writes the DeepSpeed config (one JSON object) of plan `pl` (checked by
 * emit_deepspeed_check) on stack `st` (its data-parallel bucket). */
void emit_deepspeed_json(FILE *out, const plan *pl, precision prec, const stack_spec *st);

#endif
