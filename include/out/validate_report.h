/* validate_report.h: the output of `planner validate`: a table for people,
 * JSON for programs (keys in docs/validation.md).  Both write
 * to a FILE* the caller gives. */
#ifndef PLANNER_VALIDATE_REPORT_H
#define PLANNER_VALIDATE_REPORT_H

#include <stdio.h>
#include "fit/validate.h"

/* Per run: id, GPU, GPUs, predicted and measured tokens/s per GPU, error,
 * the plan (or why none); then MAPE and max error per subset. */
void validate_report_table(FILE *out, const validation_set *set,
                           const validation_outcome *res, const validation_summary *sum);

/* The JSON document of the same figures; `path` is the runs file.  Returns
 * 0, or -1 when the document could not be built (out of memory: nothing is
 * written then). */
int validate_report_json(FILE *out, const char *path, const validation_set *set,
                         const validation_outcome *res, const validation_summary *sum);

/* The runs with a measured peak memory (measured.peak_memory_gib): predicted
 * vs measured GiB per GPU and the error, then MAPE, max, the most
 * under-predicted and the refused count.  Prints nothing when no run has
 * one (the table of the shared corpus is unchanged). */
void validate_report_memory(FILE *out, const validation_set *set, const validation_outcome *res,
                            const validation_summary *sum);

#endif
