/* emit_torchtitan.h: the torchtitan job config (TOML) of a plan on the
 * pytorch-fsdp2 stack, for torchtitan v0.2.2 (TORCHTITAN_RELEASE), the last
 * release that reads its job config from a TOML file (--job.config_file;
 * later main builds configs from Python registries).  out/emit.c prints it
 * (--emit torchtitan) and wraps it into the sbatch and torchrun scripts. */
#ifndef PLANNER_EMIT_TORCHTITAN_H
#define PLANNER_EMIT_TORCHTITAN_H

#include <stdio.h>
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "model/strategy.h"

#define TORCHTITAN_RELEASE "v0.2.2"

/* Checks what the job config cannot carry for plan `pl` trained in `prec`
 * (the format the GPUs run: emit.c's emitted precision): a knob value
 * torchtitan has no option for, or one its options would run with another
 * mechanism than the plan was costed with.  Returns PLANNER_OK, or
 * PLANNER_E_INPUT with the reason in *err (err may be NULL).  The plan has
 * passed emit_check (strategy_check, one TP and DP degree). */
planner_status emit_torchtitan_check(const model *m, const plan *pl, precision prec,
                                     planner_error *err);

/* Writes the job config's sections for plan `pl` (checked by
 * emit_torchtitan_check) of model `m`; `description` is the [job]
 * description (any bytes: written as a TOML string). */
void emit_torchtitan_toml(FILE *out, const model *m, const plan *pl, precision prec,
                          const char *description);

#endif
