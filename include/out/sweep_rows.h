/* sweep_rows.h: the lines of `planner sweep`: one per grid point
 * (search/sweep_point.h), CSV with a header or JSON Lines.
 *
 * Columns, in this order (CSV) or as keys (JSON Lines): point, points (the
 * grid's size), model, cluster, gpu, nodes, gpus, gbs, seq, the three
 * scales, status, every plan knob's key (model/knobs.h), step_time_s,
 * tokens_per_s, tokens_per_s_per_gpu, mfu, peak_memory_bytes, ettr,
 * goodput_tokens_per_s, time_to_train_s, gpu_hours, cost, energy_kwh (the
 * last four only with --tokens), reason.  A line without a plan (infeasible
 * or invalid) leaves the plan's columns empty (CSV) or absent (JSON).
 * Figures are rounded to 6 significant digits, the same in both formats.
 */
#ifndef PLANNER_SWEEP_ROWS_H
#define PLANNER_SWEEP_ROWS_H

#include <stdio.h>
#include "base/error.h"
#include "search/sweep_point.h"

typedef enum sweep_format { SWEEP_CSV, SWEEP_JSONL } sweep_format;

/* The CSV header line (no newline) into buf, which it returns: the point's
 * columns, every plan knob's key (model/knobs.h), the figures. */
#define SWEEP_CSV_HEADER_MAX 1024
const char *sweep_csv_header(char *buf, size_t size);

/* Writes row r (of a grid of `points`) as one line in format fmt.  A failed
 * write is left for the caller to find (ferror, with the path); out of
 * memory building a JSON line is PLANNER_E_INTERNAL with *err. */
planner_status sweep_row_write(FILE *out, sweep_format fmt, long points, const sweep_row *r,
                               planner_error *err);

#endif
