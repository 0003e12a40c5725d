/* run_stacks.c: which software stack each source of the validation corpus
 * ran, for runs whose record has no "stack" (a run's own "stack" wins:
 * validate.c).  One rule per source (or per part of a source whose rows ran
 * different software), in order, first match wins; the reason is the
 * evidence, from the source itself (docs/validation.md "Stacks").  Text
 * matching is plain substring of the run's "source" and prefix of its "id",
 * so runs files that quote the same sources get the same stacks; unknown
 * sources are megatron-core (the default).
 */
#include <string.h>
#include "fit/run_stacks.h"

typedef struct run_stack_rule {
    const char *source_has;     /* substring of the run's source */
    const char *id_prefix;      /* NULL: any id */
    const char *stack;
    const char *why;
} run_stack_rule;

static const run_stack_rule k_rules[] = {
    {"Megatron-LM README (Sep 2020)", NULL, "megatron-lm-2020",
     "the README's scaling tables as of Sep 2020 (Megatron-LM v1.1: tensor parallelism, "
     "checkpointed activations, local DDP, unfused attention)"},
    {"Narayanan et al.", "sc21_t2_zero3_", "deepspeed",
     "SC21 Table 2 compares PTD-P with DeepSpeed's ZeRO-3 without model parallelism: these "
     "rows ran DeepSpeed"},
    {"Narayanan et al.", NULL, "megatron-lm-2021",
     "the SC21 paper's own PTD-P runs (interleaved 1F1B, scatter/gather, no sequence "
     "parallelism, no distributed optimizer)"},
    {"'GPT-3 Example' section (2021 onward)", NULL, "megatron-lm-2021",
     "the README's GPT-3 175B figure (140 TFLOP/s on 1024 A100) dates from the SC21 release"},
    {"Korthikanti et al.", NULL, "megatron-lm-2022",
     "the paper introduces sequence parallelism and selective recompute (Megatron-LM v3.0); "
     "its runs predate the distributed optimizer and flash attention"},
    {"Megatron-Core r0.8.0", NULL, "megatron-core",
     "Megatron-Core r0.8.0 (TE, distributed optimizer, overlaps)"},
    {"pytorch/torchtitan", NULL, "pytorch-fsdp2",
     "torchtitan's benchmarks ran its own trainer: FSDP2 fully_shard, DTensor TP, torch "
     "pipelining and context parallel, its activation-checkpointing policies"},
    {"NeMo", NULL, "megatron-core",
     "NeMo / Megatron-Bridge containers run Megatron-Core with tuned recipes"},
};

#define N_RULES (sizeof k_rules / sizeof k_rules[0])

const stack_spec *run_stack_from_source(const char *source, const char *id, const char **why)
{
    *why = NULL;
    if (source == NULL)
        return NULL;
    for (size_t i = 0; i < N_RULES; i++) {
        const run_stack_rule *r = &k_rules[i];
        if (strstr(source, r->source_has) == NULL)
            continue;
        if (r->id_prefix != NULL &&
            (id == NULL || strncmp(id, r->id_prefix, strlen(r->id_prefix)) != 0))
            continue;
        *why = r->why;
        return stack_find(r->stack);
    }
    return NULL;
}
