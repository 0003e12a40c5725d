/* show_inputs.h: `--show-inputs`, the model and cluster as the planner
 * understood them, normalized, with derived figures. */
#ifndef PLANNER_SHOW_INPUTS_H
#define PLANNER_SHOW_INPUTS_H

#include <stdio.h>
#include "inputs/cluster.h"
#include "inputs/model.h"

/* The model with the run it is planned for (its sequence, global batch and
 * "(default)" marks: model_load's run), and the cluster. */
void show_inputs(FILE *out, const model *m, const run_spec *run, const cluster *c);
/* The same as one JSON document ({"model": ..., "cluster": ...}) for
 * scripts; 0, or -1 when it could not be built (out of memory). */
int show_inputs_json(FILE *out, const model *m, const run_spec *run, const cluster *c);

#endif
