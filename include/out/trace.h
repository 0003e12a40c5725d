/* trace.h: the simulated schedule of a plan as Chrome trace-event JSON
 * (Perfetto, chrome://tracing) and as an SVG timeline with per-stage memory. */
#ifndef PLANNER_TRACE_H
#define PLANNER_TRACE_H

#include <stdbool.h>
#include <stdio.h>
#include "schedule/evaluate.h"

/* The bound on the pipeline events a trace or SVG shows: a step with more
 * (forward, backward and sends: 4 x micro-batches x pp x vpp) shows its first
 * and last micro-batches, exact, and marks the middle as elided. */
#define TRACE_MAX_EVENTS 500000L

/* Micro-batches shown at each end of sched's step under max_events; 0 when
 * the step shows them all. */
int trace_shown_microbatches(const cost_schedule *sched, long max_events);

/* When a trace of sched's step is bounded: true, and what it elides in buf
 * (the note the trace and SVG carry, for stderr). */
bool trace_note(const cost_schedule *sched, char *buf, size_t size);

/* The pipeline events a trace shows (for tests and callers that draw their
 * own): into *out (sched_events_free it), micro-batches shown at each end in
 * *shown (0: all). */
planner_status trace_events(const plan *pl, const cost_schedule *sched, long max_events,
                            sched_events *out, int *shown, planner_error *err);

/* Writes plan `pl` of `m` on `c` to `out`, replaying `sched`, the schedule
 * its evaluation simulated (search_result.sched, or evaluate_schedule()):
 * nothing here runs the cost model.  Returns PLANNER_OK, or a status with
 * *err: PLANNER_E_IO when a write failed, PLANNER_E_INTERNAL for a schedule
 * that is not the plan's, or out of memory
 * (output may then be partial: write to a file you can discard). */
planner_status trace_write_chrome(FILE *out, const model *m, const cluster *c, const plan *pl,
                                  const cost_schedule *sched, planner_error *err);
planner_status trace_write_svg(FILE *out, const model *m, const cluster *c, const plan *pl,
                               const cost_schedule *sched, planner_error *err);

#endif
