/* trace.h: the simulated schedule of a plan as Chrome trace-event JSON
 * (Perfetto, chrome://tracing) and as an SVG timeline with per-stage memory. */
#ifndef PLANNER_TRACE_H
#define PLANNER_TRACE_H

#include <stdio.h>
#include "schedule/evaluate.h"

/* Writes plan `pl` of `m` on `c` to `out`, replaying `sched`, the schedule
 * its evaluation simulated (search_result.sched, or evaluate_schedule()):
 * nothing here runs the cost model.  Returns PLANNER_OK, or a status with
 * *err: PLANNER_E_IO when a write failed, PLANNER_E_INTERNAL for a schedule
 * that is not the plan's, a trace over its event limit, or out of memory
 * (output may then be partial: write to a file you can discard). */
planner_status trace_write_chrome(FILE *out, const model *m, const cluster *c, const plan *pl,
                                  const cost_schedule *sched, planner_error *err);
planner_status trace_write_svg(FILE *out, const model *m, const cluster *c, const plan *pl,
                               const cost_schedule *sched, planner_error *err);

#endif
