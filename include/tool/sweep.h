/* sweep.h: `planner sweep`'s command line (tool/sweep.c).  The grid, its
 * axes and points are search/sweep_grid.h, a point's plan
 * search/sweep_point.h, the output lines out/sweep_rows.h, the merge of
 * shard outputs out/sweep_merge.h. */
#ifndef PLANNER_TOOL_SWEEP_H
#define PLANNER_TOOL_SWEEP_H

#include "search/sweep_grid.h"

/* Parses "i/n" (0 <= i < n <= SWEEP_MAX_POINTS) into *i and *n.  PLANNER_OK,
 * or PLANNER_E_USAGE with the message in *err (no option name: the caller
 * adds it). */
planner_status sweep_shard_parse(long *i, long *n, const char *text, planner_error *err);

#endif
