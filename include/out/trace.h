/* trace.h: the simulated schedule of a plan as Chrome trace-event JSON
 * (Perfetto, chrome://tracing) and as an SVG timeline with per-stage memory. */
#ifndef PLANNER_TRACE_H
#define PLANNER_TRACE_H

#include <stdio.h>
#include "schedule/evaluate.h"

int trace_write_chrome(FILE *out, const model *m, const cluster *c,
                       const cost_params *p, const plan *pl);
int trace_write_svg(FILE *out, const model *m, const cluster *c,
                    const cost_params *p, const plan *pl);

#endif
