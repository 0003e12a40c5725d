/* show_inputs.h: `--show-inputs`, the model and cluster as the planner
 * understood them, normalized, with derived figures. */
#ifndef PLANNER_SHOW_INPUTS_H
#define PLANNER_SHOW_INPUTS_H

#include <stdio.h>
#include "inputs/cluster.h"
#include "inputs/model.h"

void show_inputs(FILE *out, const model *m, const cluster *c);
/* The same as one JSON document ({"model": ..., "cluster": ...}) for
 * scripts; 0, or -1 when it could not be built (out of memory). */
int show_inputs_json(FILE *out, const model *m, const cluster *c);

#endif
