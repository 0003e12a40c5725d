/* emit_deepspeed.c: the DeepSpeed config of a plan on the deepspeed stack.
 *
 * What it models: the JSON file Megatron-DeepSpeed's pretrain_gpt.py hands
 * to deepspeed.initialize (--deepspeed --deepspeed_config FILE; Megatron-
 * DeepSpeed f4157be, 2024-12-24, its last master; megatron/training.py
 * reads the file), with the keys DeepSpeed documents and defines
 * (deepspeed/runtime/constants.py, zero/config.py): train_batch_size =
 * train_micro_batch_size_per_gpu x gradient_accumulation_steps x the
 * data-parallel world (world / (tp pp)), zero_optimization.stage,
 * overlap_comm (DeepSpeed's default is on for stage 3 only, so it is
 * written) and reduce_bucket_size (elements: the stack's bucket,
 * stack_spec.dp_bucket_params), bf16 / fp16 (dynamic loss scaling from
 * 2^16: loss_scale 0, initial_scale_power 16, as the Megatron launch).
 * The mechanisms it refuses to misrepresent:
 *   - the deepspeed stack's rules (inputs/stack.c, knobs_stack_check, which
 *     the search plans by): deepspeed/runtime/pipe/engine.py's "ZeRO-2 and
 *     ZeRO-3 are incompatible with pipeline parallelism"; DeepSpeed-MoE's
 *     experts whole on each TP rank (etp 1), ep dividing dp, top-1 or
 *     top-2 routing;
 *   (stage 0's all-reduce after the backward and stages 1/2 gathering the
 *     updated weights inside the optimizer step are the stack's: its plans
 *     overlap neither, inputs/stack.c);
 *   - no FP8 recipe (the stack has none).
 * Invariants: nothing is written for a plan emit_deepspeed_check refuses;
 * the JSON holds numbers and names of our own only. */
#include <stdbool.h>
#include <stdio.h>
#include "model/knobs.h"
#include "out/emit_deepspeed.h"

/* What the config cannot carry: PLANNER_E_INPUT with the reason in *err. */
#define DS_FAIL(...) error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, __VA_ARGS__)

planner_status emit_deepspeed_check(const model *m, const plan *pl, precision prec,
                                    planner_error *err)
{
    const strategy *s = &pl->s;
    const stack_spec *ds = stack_get(STACK_DEEPSPEED);
    if (prec != PREC_BF16 && prec != PREC_FP16 && prec != PREC_FP32)
        return DS_FAIL("%s's engine trains in bf16, fp16 or fp32, not %s", ds->rules_by,
                       precision_name(prec));
    if (knobs_stack_check(m, s, ds, err) != PLANNER_OK)
        return PLANNER_E_INPUT;
    return PLANNER_OK;
}

void emit_deepspeed_json(FILE *out, const plan *pl, precision prec, const stack_spec *st)
{
    const strategy *s = &pl->s;
    long per_step = (long)s->mbs * s->dp;
    fprintf(out, "{\n  \"train_batch_size\": %d,\n  \"train_micro_batch_size_per_gpu\": %d,\n"
                 "  \"gradient_accumulation_steps\": %ld,\n"
                 "  \"zero_optimization\": {\n    \"stage\": %d", s->gbs, s->mbs,
            per_step > 0 ? s->gbs / per_step : 0, s->zero);
    if (s->zero >= 1)
        fprintf(out, ",\n    \"overlap_comm\": %s,\n    \"reduce_bucket_size\": %.0f",
                s->overlap_grad_reduce ? "true" : "false",
                st != NULL && st->dp_bucket_params > 0 ? st->dp_bucket_params : 5e8);
    fputs("\n  },\n", out);
    if (prec == PREC_BF16)
        fputs("  \"bf16\": {\n    \"enabled\": true\n  },\n", out);
    else if (prec == PREC_FP16)
        fputs("  \"fp16\": {\n    \"enabled\": true,\n    \"loss_scale\": 0,\n"
              "    \"initial_scale_power\": 16\n  },\n", out);
    fputs("  \"gradient_clipping\": 1.0,\n  \"steps_per_print\": 1\n}\n", out);
}
