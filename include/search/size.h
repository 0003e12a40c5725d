/* size.h: how many GPUs a run needs -- the fewest nodes of the cluster's
 * node group with a plan that fits, and, with tokens to train and a
 * deadline, the node count that meets the deadline at the lowest cost
 * (docs/goodput.md, "Sizing").  Each node count tried is a search_run on
 * the cluster resized to that many nodes. */
#ifndef PLANNER_SEARCH_SIZE_H
#define PLANNER_SEARCH_SIZE_H

#include "schedule/goodput.h"
#include "search/search.h"

typedef struct size_row {
    int nodes, gpus;              /* nodes tried; GPUs its best plan uses */
    bool fits;                    /* a plan fits (best, g are set) */
    plan best;                    /* the best plan by opts->obj */
    goodput g;
    bool finishes;                /* g has a time to train */
    bool meets;                   /* finishes within the deadline */
} size_row;

#define SIZE_ROWS_MAX 96

typedef struct size_result {
    int n_rows;
    size_row *row;                /* ascending node counts; owned */
    int group_nodes;              /* the node group's size, the most tried */
    int min_fit;                  /* row of the fewest nodes that fit, -1 */
    int choice;                   /* row meeting the deadline at the lowest cost, -1 */
    int fastest;                  /* row with the shortest time to train, -1 */
    double deadline_s;            /* 0: none */
    char note[640];               /* why there is no choice, and what would do */
} size_result;

/* Sizes the run: `opts` as for search_run (opts->goodput.tokens > 0 for
 * times), `deadline_s` > 0 with tokens for a choice.  The cluster must have
 * one node group.  Returns 0; PLANNER_E_INFEASIBLE with res->note when
 * nothing fits or no node count meets the deadline (the rows are filled
 * either way); or another status with *err.  Free with size_result_free. */
planner_status size_run(const model *m, const cluster *c, const cost_params *p,
                        const search_options *opts, double deadline_s, size_result *res,
                        planner_error *err);

void size_result_free(size_result *res);   /* NULL-safe; frees contents */

#endif
