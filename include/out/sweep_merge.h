/* sweep_merge.h: `planner sweep --merge`, shard outputs put back into the
 * unsharded output (out/sweep_rows.h is the line format). */
#ifndef PLANNER_SWEEP_MERGE_H
#define PLANNER_SWEEP_MERGE_H

#include <stdio.h>
#include "base/error.h"

/* Reads shard outputs (all CSV with the sweep header, or all JSON Lines),
 * verifies every shard (whole lines ending in a newline, no NUL; every line
 * of the header's shape: its field count, plain integer point and points, a
 * known status, plan columns exactly when ok; JSON Lines keys the header's
 * columns) and that together they hold every point of one grid exactly once,
 * and writes them in point order to out.  Lines are copied byte for byte.
 * Any mismatch: PLANNER_E_INPUT at the shard's FILE:LINE:COL, nothing written. */
planner_status sweep_merge(FILE *out, int n_files, char *const *paths, planner_error *err);

#endif
