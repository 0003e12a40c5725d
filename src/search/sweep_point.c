/* sweep_point.c: one point of a sweep built and searched in memory
 * (search/sweep_point.h).
 *
 * What-ifs on a copy of the cluster:
 *   gpu       every node group gets the catalog GPU (peaks, memory, HBM) and
 *             its NVLink rate as intra-node bandwidth; nodes, GPUs per node
 *             and the network stay the cluster file's;
 *   nodes     the node count of a one-group cluster (refused for several);
 *   *-scale   intra-node bandwidth, inter-node bandwidth (groups and links),
 *             every peak FLOP/s, multiplied.
 * The model file is read once, with its run (model_load's run_spec); a
 * point is that run with the point's global batch and sequence, checked
 * against the model by model_run_check (the rule `planner --gbs --seq`
 * applies), and the loaded model itself, shared by every point: nothing is
 * re-read from disk or copied.
 *
 * Invariant: point k's row depends on point k only (no state carried between
 * points), so a shard's lines are the same lines of the unsharded run.
 */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "inputs/catalog.h"
#include "search/sweep_point.h"

planner_status sweep_run_load(sweep_run *run, planner_error *err)
{
    const sweep_grid *g = &run->grid;
    planner_status rc;
    int nm = g->axis[SWEEP_MODEL].n, nc = g->axis[SWEEP_CLUSTER].n;
    run->points = (long)sweep_grid_points(g);
    run->models = pl_calloc((size_t)nm, sizeof *run->models);
    run->runs = pl_calloc((size_t)nm, sizeof *run->runs);
    run->clusters = pl_calloc((size_t)nc, sizeof *run->clusters);
    if (run->models == NULL || run->runs == NULL || run->clusters == NULL)
        return error_oom(err);
    for (int i = 0; i < nm; i++)
        if ((rc = model_load(&run->models[i], &run->runs[i],
                             run->model_files ? run->model_files[i] : g->axis[SWEEP_MODEL].str[i],
                             NULL, err)) != PLANNER_OK)
            return rc;
    for (int i = 0; i < nc; i++) {
        if ((rc = cluster_load(&run->clusters[i], run->cluster_files
                                                      ? run->cluster_files[i]
                                                      : g->axis[SWEEP_CLUSTER].str[i],
                               err)) != PLANNER_OK)
            return rc;
        if (g->axis[SWEEP_NODES].n > 0 && run->clusters[i]->n_groups != 1)
            return error_set(err, PLANNER_E_USAGE, g->axis[SWEEP_CLUSTER].str[i], 0, 0, NULL,
                             "the nodes axis needs a cluster with one node group; this one "
                             "has %d", run->clusters[i]->n_groups);
        if (g->axis[SWEEP_NODES].n > 0) {
            const node_group *ng = &run->clusters[i]->group[0];
            for (int k = 0; k < g->axis[SWEEP_NODES].n; k++)
                if (g->axis[SWEEP_NODES].num[k] * ng->gpus_per_node > CLUSTER_MAX_GPUS)
                    return error_set(err, PLANNER_E_USAGE, NULL, 0, 0, NULL,
                                     "nodes: %s nodes of %d GPUs exceed %d GPUs",
                                     g->axis[SWEEP_NODES].str[k], ng->gpus_per_node,
                                     CLUSTER_MAX_GPUS);
        }
    }
    return PLANNER_OK;
}

void sweep_run_free(sweep_run *run)
{
    if (run == NULL)
        return;
    for (int i = 0; run->models != NULL && i < run->grid.axis[SWEEP_MODEL].n; i++)
        model_free(run->models[i]);
    for (int i = 0; run->clusters != NULL && i < run->grid.axis[SWEEP_CLUSTER].n; i++)
        cluster_free(run->clusters[i]);
    for (int i = 0; run->model_files != NULL && i < run->grid.axis[SWEEP_MODEL].n; i++)
        pl_free(run->model_files[i]);
    for (int i = 0; run->cluster_files != NULL && i < run->grid.axis[SWEEP_CLUSTER].n; i++)
        pl_free(run->cluster_files[i]);
    pl_free(run->model_files);
    pl_free(run->cluster_files);
    run->model_files = NULL;
    run->cluster_files = NULL;
    pl_free(run->models);
    pl_free(run->runs);
    pl_free(run->clusters);
    run->models = NULL;
    run->runs = NULL;
    run->clusters = NULL;
    sweep_grid_free(&run->grid);
}

/* Applies the point's cluster what-ifs to a copy of base (groups and links
 * newly allocated into *pc; free with pl_free(pc->group), pl_free(pc->link)). */
static planner_status point_cluster(const sweep_run *run, const cluster *base,
                                    const int idx[SWEEP_DIM_COUNT], cluster *pc,
                                    planner_error *err)
{
    const sweep_grid *g = &run->grid;
    *pc = *base;
    pc->group = pl_calloc((size_t)base->n_groups, sizeof *pc->group);
    pc->link = base->n_links > 0 ? pl_calloc((size_t)base->n_links, sizeof *pc->link) : NULL;
    if (pc->group == NULL || (base->n_links > 0 && pc->link == NULL)) {
        pl_free(pc->group);
        pl_free(pc->link);
        pc->group = NULL;
        pc->link = NULL;
        return error_oom(err);
    }
    memcpy(pc->group, base->group, (size_t)base->n_groups * sizeof *pc->group);
    if (base->n_links > 0)
        memcpy(pc->link, base->link, (size_t)base->n_links * sizeof *pc->link);
    for (int i = 0; i < pc->n_groups; i++) {
        node_group *ng = &pc->group[i];
        if (g->axis[SWEEP_GPU].n > 0) {
            const gpu_spec *spec = catalog_find(g->axis[SWEEP_GPU].str[idx[SWEEP_GPU]]);
            if (spec != NULL) {
                ng->gpu = *spec;
                ng->intra_bytes_per_s = spec->intra_node_bytes_per_s;
            }
        }
        if (g->axis[SWEEP_NODES].n > 0)
            ng->nodes = (int)g->axis[SWEEP_NODES].num[idx[SWEEP_NODES]];
        if (g->axis[SWEEP_INTRA_BW].n > 0) {
            double f = g->axis[SWEEP_INTRA_BW].num[idx[SWEEP_INTRA_BW]];
            ng->intra_bytes_per_s *= f;
            ng->gpu.intra_node_bytes_per_s *= f;
        }
        if (g->axis[SWEEP_INTER_BW].n > 0) {
            double f = g->axis[SWEEP_INTER_BW].num[idx[SWEEP_INTER_BW]];
            ng->inter_bytes_per_s *= f;
            ng->gpu.inter_node_bytes_per_s *= f;
        }
        if (g->axis[SWEEP_PEAK].n > 0) {
            double f = g->axis[SWEEP_PEAK].num[idx[SWEEP_PEAK]];
            for (int k = 0; k < PEAK_COUNT; k++)
                ng->gpu.peak_flops[k] *= f;
        }
    }
    if (g->axis[SWEEP_INTER_BW].n > 0)
        for (int i = 0; i < pc->n_links; i++)
            pc->link[i].bytes_per_s *= g->axis[SWEEP_INTER_BW].num[idx[SWEEP_INTER_BW]];
    return PLANNER_OK;
}

/* The point's own columns: its files, scales, GPU names and counts, its
 * global batch and sequence. */
static void row_columns(sweep_row *row, const sweep_grid *g, const int idx[SWEEP_DIM_COUNT],
                        const run_spec *pr)
{
    const cluster *pc = &row->pc;
    row->model = g->axis[SWEEP_MODEL].str[idx[SWEEP_MODEL]];
    row->cluster = g->axis[SWEEP_CLUSTER].str[idx[SWEEP_CLUSTER]];
    row->intra =
        g->axis[SWEEP_INTRA_BW].n > 0 ? g->axis[SWEEP_INTRA_BW].num[idx[SWEEP_INTRA_BW]] : 1;
    row->inter =
        g->axis[SWEEP_INTER_BW].n > 0 ? g->axis[SWEEP_INTER_BW].num[idx[SWEEP_INTER_BW]] : 1;
    row->peak = g->axis[SWEEP_PEAK].n > 0 ? g->axis[SWEEP_PEAK].num[idx[SWEEP_PEAK]] : 1;
    for (int i = 0; i < pc->n_groups; i++) {
        size_t len = strlen(row->gpu);
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup = dup || strcmp(pc->group[j].gpu.name, pc->group[i].gpu.name) == 0;
        if (!dup && len + strlen(pc->group[i].gpu.name) + 2 < sizeof row->gpu)
            snprintf(row->gpu + len, sizeof row->gpu - len, "%s%s", len > 0 ? "+" : "",
                     pc->group[i].gpu.name);
        row->nodes += pc->group[i].nodes;
    }
    row->gpus = cluster_total_gpus(pc);
    row->gbs = pr->global_batch;
    row->seq = pr->seq_len;
}

/* Searches the point's model (row->m) on its cluster for its run (row->gbs,
 * row->seq); the status, the best plan or the reason go into the row. */
static planner_status row_search(sweep_row *row, const sweep_run *run, planner_error *err)
{
    const model *m = row->m;
    search_options opts;
    planner_error perr = PLANNER_ERROR_INIT;
    planner_status rc;
    search_options_default(&opts);
    opts.top_n = 1;
    opts.fix = run->fix;
    opts.gbs = row->gbs;
    opts.seq_len = row->seq;
    opts.obj = run->obj;
    opts.goodput = run->goodput;
    rc = search_run(&row->res, m, &row->pc, &run->params, &opts, &perr);
    if (rc == PLANNER_OK && row->res.n_top >= 1) {
        row->status = "ok";
        row->best = &row->res.top[0];
        goodput_evaluate(&row->g, m, &row->pc, &row->best->s, &row->best->e, &run->goodput,
                         NULL);   /* a time to train that is not finite: row->g.have_time false */
    } else if (rc == PLANNER_E_INFEASIBLE) {
        row->status = "infeasible";
        snprintf(row->reason, sizeof row->reason, "%s",
                 row->res.advice[0] ? row->res.advice : "no plan fits");
    } else if (rc == PLANNER_E_INTERNAL) {
        return error_set(err, rc, perr.file, perr.line, perr.col, perr.path, "%s", perr.msg);
    } else {
        row->status = "invalid";
        snprintf(row->reason, sizeof row->reason, "%s", perr.msg);
    }
    return PLANNER_OK;
}

planner_status sweep_point_run(sweep_row *out, const sweep_run *run, long k,
                               planner_error *err)
{
    const sweep_grid *g = &run->grid;
    int idx[SWEEP_DIM_COUNT];
    run_spec pr;   /* the point's run: the model file's, with the axes' figures */
    planner_error perr = PLANNER_ERROR_INIT;
    planner_status rc;

    memset(out, 0, sizeof *out);
    out->point = k;
    sweep_point_decode(g, k, idx);
    pr = run->runs[idx[SWEEP_MODEL]];
    if (g->axis[SWEEP_GBS].n > 0)
        pr.global_batch = (int)g->axis[SWEEP_GBS].num[idx[SWEEP_GBS]];
    if (g->axis[SWEEP_SEQ].n > 0)
        pr.seq_len = (int)g->axis[SWEEP_SEQ].num[idx[SWEEP_SEQ]];
    rc = point_cluster(run, run->clusters[idx[SWEEP_CLUSTER]], idx, &out->pc, err);
    if (rc != PLANNER_OK)
        return rc;
    row_columns(out, g, idx, &pr);
    out->m = run->models[idx[SWEEP_MODEL]];   /* shared: no copy, no re-read */
    if (model_run_check(out->m, pr.seq_len, &perr) != PLANNER_OK) {
        out->status = "invalid";
        snprintf(out->reason, sizeof out->reason, "%.63s: %.760s", perr.path, perr.msg);
    } else if ((rc = row_search(out, run, err)) != PLANNER_OK) {
        return rc;
    }
    for (char *p = out->reason; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    return PLANNER_OK;
}

void sweep_row_free(sweep_row *r)
{
    if (r == NULL)
        return;
    search_result_free(&r->res);
    pl_free(r->pc.group);
    pl_free(r->pc.link);
    memset(r, 0, sizeof *r);
}
