/* sweep_grid.h: the grid of a sweep (`planner sweep`): its axes, their value
 * syntax, the grid file format and the numbering of points.
 *
 * A grid has up to nine axes, enumerated in this fixed order (the first
 * varies slowest): model file, cluster file, GPU type, node count, global
 * batch, sequence length, intra-node bandwidth scale, inter-node bandwidth
 * scale, peak FLOP/s scale.  An axis not given has one point: the value of
 * the input files.  Point k (0-based) is the mixed-radix number of its axis
 * indices, so the order is deterministic and independent of sharding:
 * `--shard i/n` runs the points k with k % n == i, and `sweep --merge`
 * puts shard outputs back into exactly the unsharded output.
 *
 * Values: "a,b,c" lists, or ranges "A..B" (step 1), "A..B:S" (step S),
 * "A..BxF" (times F, F > 1), which may be mixed: "8,16..64x2".  A grid file
 * (--grid FILE) holds "key = values" lines (keys as the options without
 * "--": model, cluster, gpu, nodes, gbs, seq, intra-bw-scale,
 * inter-bw-scale, peak-scale, fix), "#" comment lines and blank lines;
 * options on the command line replace the file's axis.
 *
 * It lives in the search layer because a grid's "fix" is a --fix spec
 * (model/knobs.h), checked where it is read.
 */
#ifndef PLANNER_SWEEP_GRID_H
#define PLANNER_SWEEP_GRID_H

#include <stddef.h>
#include "base/error.h"

#define SWEEP_MAX_POINTS 100000L     /* points in one grid */
#define SWEEP_MAX_VALUES 10000       /* values on one axis */

typedef enum sweep_dim {
    SWEEP_MODEL, SWEEP_CLUSTER, SWEEP_GPU, SWEEP_NODES, SWEEP_GBS, SWEEP_SEQ,
    SWEEP_INTRA_BW, SWEEP_INTER_BW, SWEEP_PEAK, SWEEP_DIM_COUNT
} sweep_dim;

/* One axis: n values, as text (files, GPU catalog names, the number as
 * printed) and as numbers (0 for text axes). */
typedef struct sweep_axis {
    int n;
    size_t cap;     /* entries allocated in str and num */
    char **str;     /* owned, n entries */
    double *num;    /* owned, n entries */
} sweep_axis;

typedef struct sweep_grid {
    sweep_axis axis[SWEEP_DIM_COUNT];
    char *fix;      /* --fix constraints for every point, owned, may be NULL */
} sweep_grid;

/* The key of an axis in grid files ("nodes") and its option ("--nodes"). */
const char *sweep_dim_key(sweep_dim d);

/* Parses the values of axis d from `text`, appending them to *out (which
 * the caller frees with sweep_axis_free, also on failure).  Returns
 * PLANNER_OK, or PLANNER_E_INPUT (PLANNER_E_INTERNAL when out of memory) with
 * the message in *err and the 0-based offset in text of the bad value in
 * *bad_offset; the message has no position: the caller adds the file's line
 * or the option. */
planner_status sweep_axis_parse(sweep_axis *out, int *bad_offset, sweep_dim d,
                                const char *text, planner_error *err);
void sweep_axis_free(sweep_axis *a);   /* NULL-safe, frees contents */

/* Parses a grid file (text of length len, named `name` in errors) into *g
 * (which should start zeroed).  Errors: FILE:LINE:COL with PLANNER_E_INPUT. */
planner_status sweep_grid_parse_buffer(const char *text, size_t len, const char *name,
                                       sweep_grid *g, planner_error *err);
planner_status sweep_grid_parse_file(const char *path, sweep_grid *g, planner_error *err);
void sweep_grid_free(sweep_grid *g);   /* NULL-safe, frees contents */

/* Points in the grid (product over axes of max(1, n)); may exceed the limit. */
double sweep_grid_points(const sweep_grid *g);

/* Axis indices of point k (an axis with n = 0 gets index 0). */
void sweep_point_decode(const sweep_grid *g, long k, int idx[SWEEP_DIM_COUNT]);

#endif
