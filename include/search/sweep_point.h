/* sweep_point.h: one point of a sweep (search/sweep_grid.h), built and
 * searched in memory.
 *
 * The model and cluster files are loaded once (sweep_run_load); point k
 * is the loaded model (shared, not copied) with the model file's run given
 * the point's global batch and sequence (checked by inputs/model.h:
 * model_run_check), and its what-ifs applied to a copy of the cluster; then
 * it searches for the best plan.  A point's result depends
 * on the point alone, so shards of a sweep are lines of the whole.
 */
#ifndef PLANNER_SWEEP_POINT_H
#define PLANNER_SWEEP_POINT_H

#include "base/error.h"
#include "cost/params.h"
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "search/search.h"
#include "search/sweep_grid.h"

/* What every point of a sweep shares.  The caller fills grid, params, fix,
 * obj and goodput; sweep_run_load fills models, runs, clusters and points. */
typedef struct sweep_run {
    sweep_grid grid;
    model **models;              /* one per model value (owned) */
    run_spec *runs;              /* each model file's run (owned array) */
    cluster **clusters;          /* one per cluster value (owned) */
    char **model_files;          /* each model value's file, NULL: the values (owned) */
    char **cluster_files;        /* each cluster value's file, NULL: the values (owned) */
    cost_params params;
    strategy_constraints fix;
    long points;                 /* sweep_grid_points(&grid) */
    objective obj;               /* --objective */
    goodput_options goodput;     /* the time-to-train options (docs/goodput.md) */
} sweep_run;

/* Loads every model and cluster file of the grid once (model_files and
 * cluster_files where set, else the axes' values; a bad file fails the
 * sweep before its first point: its load error) and checks the node axis
 * (one node group; at most CLUSTER_MAX_GPUS GPUs: PLANNER_E_USAGE). */
planner_status sweep_run_load(sweep_run *run, planner_error *err);

/* Frees the loaded files and the grid (NULL-safe, contents only). */
void sweep_run_free(sweep_run *run);

/* One point's result, the figures of its output line (out/sweep_rows.h). */
typedef struct sweep_row {
    long point;
    const char *model, *cluster; /* the point's file names (borrowed from the grid) */
    char gpu[160];               /* its GPU names, "+"-joined */
    int nodes, gpus, gbs, seq;
    double intra, inter, peak;   /* the scales */
    const char *status;          /* ok, infeasible, invalid */
    const plan *best;            /* NULL unless ok; in res */
    goodput g;                   /* best under failures (schedule/goodput.h) */
    char reason[SEARCH_ADVICE_LEN];   /* why not ok, one line (the advice, or a message) */
    const model *m;              /* the point's model (borrowed from the run) */
    /* owned: what the point planned */
    cluster pc;
    search_result res;
} sweep_row;

/* Builds and searches point k of run into *out (free with sweep_row_free,
 * also on failure).  A problem of the point's model or search is the row's
 * status "invalid" with its reason, not an error; only out of memory and
 * internal errors return another status with *err. */
planner_status sweep_point_run(sweep_row *out, const sweep_run *run, long k,
                               planner_error *err);
void sweep_row_free(sweep_row *r);   /* NULL-safe, contents only */

#endif
