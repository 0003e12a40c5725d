/* show_inputs.h: `--show-inputs`, the model and cluster as the planner
 * understood them, normalized, with derived figures. */
#ifndef PLANNER_SHOW_INPUTS_H
#define PLANNER_SHOW_INPUTS_H

#include <stdio.h>
#include "inputs/cluster.h"
#include "inputs/model.h"

void show_inputs(FILE *out, const model *m, const cluster *c);

#endif
