/* sweep.h: `planner sweep`'s command line (tool/sweep.c).  The grid, its
 * axes and points are search/sweep_grid.h, a point's plan
 * search/sweep_point.h, the output lines out/sweep_rows.h, the merge of
 * shard outputs out/sweep_merge.h. */
#ifndef PLANNER_TOOL_SWEEP_H
#define PLANNER_TOOL_SWEEP_H

#include "search/sweep_grid.h"

/* Parses "i/n" (0 <= i < n <= SWEEP_MAX_POINTS).  0 or -1. */
int sweep_shard_parse(const char *text, long *i, long *n);

#endif
