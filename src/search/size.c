/* size.c: how many GPUs (search/size.h).
 *
 * The method: the cluster's one node group is resized to n nodes and
 * searched (search_run, the objective of the options) for each n tried.
 *   1. Fewest nodes that fit: n = 1, 2, 4, ... up to the group's size (and the
 *      size itself) until a plan fits, then bisection between the last n
 *      that did not fit and the first that did.  This assumes that more
 *      nodes never stop a model from fitting (more GPUs shard more); the
 *      rows of the table show every n tried.
 *   2. With tokens: the times to train of n = the fewest, 2x, 4x ... up to
 *      the group's size (schedule/goodput.h: failures counted).
 *   3. With a deadline: bisection between the largest n tried that misses it
 *      and the smallest that meets it, for the fewest nodes meeting it, to
 *      within 1/8 and on round counts (multiples of a power of two at least
 *      a quarter of the gap: 1,792 rather than 1,793 nodes, whose GPUs the
 *      batch rarely divides); the
 *      choice is the cheapest of the rows that meet it (cost grows with n
 *      when per-GPU efficiency falls, so it is usually the fewest).  When no
 *      n meets the deadline, the note says by how much the fastest misses
 *      it and what would be met: its own time, or the tokens that fit.
 * Invariants: rows sorted by nodes, each n searched once; never more than
 * SIZE_ROWS_MAX searches.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "search/size.h"

typedef struct sizer {
    const model *m;
    const cluster *c;
    const cost_params *p;
    search_options opts;
    size_result *res;
    planner_error *err;
} sizer;

/* The row of n nodes, searching it first when new: its index, or -1 with
 * *rc set on an error other than "nothing fits". */
static int probe(sizer *z, int n, planner_status *rc)
{
    size_result *r = z->res;
    cluster one = *z->c;
    node_group grp = z->c->group[0];
    search_result sr;
    size_row *row;
    int i, at;

    for (i = 0; i < r->n_rows; i++)
        if (r->row[i].nodes == n)
            return i;
    if (r->n_rows >= SIZE_ROWS_MAX) {
        *rc = error_set(z->err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL,
                        "sizing tried more than %d node counts", SIZE_ROWS_MAX);
        return -1;
    }
    for (at = 0; at < r->n_rows && r->row[at].nodes < n; at++)
        ;
    memmove(&r->row[at + 1], &r->row[at], (size_t)(r->n_rows - at) * sizeof *r->row);
    r->n_rows++;
    row = &r->row[at];
    memset(row, 0, sizeof *row);
    row->nodes = n;
    grp.nodes = n;
    one.group = &grp;
    memset(&sr, 0, sizeof sr);
    *rc = search_run(&sr, z->m, &one, z->p, &z->opts, z->err);
    if (*rc == PLANNER_OK) {
        row->fits = true;
        row->best = sr.top[0];
        row->gpus = strategy_gpus(&row->best.s);
        goodput_evaluate(&row->g, z->m, &one, &row->best.s, &row->best.e, &z->opts.goodput,
                         NULL);   /* a time to train that is not finite: row->g.have_time false */
        row->finishes = row->g.have_time;
        row->meets = row->finishes && r->deadline_s > 0 &&
                     row->g.time_to_train_s <= r->deadline_s;
    } else if (*rc == PLANNER_E_INFEASIBLE) {
        *rc = PLANNER_OK;
    }
    search_result_free(&sr);
    return *rc == PLANNER_OK ? at : -1;
}

/* The fewest nodes that fit: a row index, -1 when none up to the group's
 * size (or on error: *rc). */
static int fewest_fitting(sizer *z, planner_status *rc)
{
    int max = z->res->group_nodes, lo = 0, hi = -1, n, i;
    for (n = 1;; n = n * 2 > max ? max : n * 2) {
        if ((i = probe(z, n, rc)) < 0)
            return -1;
        if (z->res->row[i].fits) {
            hi = n;
            break;
        }
        lo = n;
        if (n == max)
            return -1;
    }
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if ((i = probe(z, mid, rc)) < 0)
            return -1;
        if (z->res->row[i].fits)
            hi = mid;
        else
            lo = mid;
    }
    return probe(z, hi, rc);
}

/* Index of the row with n nodes (it exists). */
static int row_of(const size_result *r, int n)
{
    for (int i = 0; i < r->n_rows; i++)
        if (r->row[i].nodes == n)
            return i;
    return -1;
}

/* The fewest nodes meeting the deadline, between the rows tried. */
static planner_status meet_deadline(sizer *z)
{
    size_result *r = z->res;
    planner_status rc = PLANNER_OK;
    int lo = 0, hi = -1, i;
    for (i = 0; i < r->n_rows; i++) {
        if (r->row[i].meets) {
            hi = r->row[i].nodes;
            break;
        }
        lo = r->row[i].nodes;
    }
    if (hi < 0)
        return PLANNER_OK;
    while (hi - lo > hi / 8 && hi - lo > 1) {
        int step = 1, mid;
        while (step * 8 <= hi - lo)
            step *= 2;
        mid = (lo + (hi - lo) / 2) / step * step;
        if (mid <= lo || mid >= hi)
            break;
        if ((i = probe(z, mid, &rc)) < 0)
            return rc;
        if (r->row[i].meets)
            hi = mid;
        else
            lo = mid;
    }
    return PLANNER_OK;
}

/* choice, fastest and the note once every row is in. */
static planner_status conclude(sizer *z)
{
    size_result *r = z->res;
    const goodput_options *o = &z->opts.goodput;
    for (int i = 0; i < r->n_rows; i++) {
        const size_row *w = &r->row[i];
        if (w->finishes && (r->fastest < 0 ||
                            w->g.time_to_train_s < r->row[r->fastest].g.time_to_train_s))
            r->fastest = i;
        if (w->meets && (r->choice < 0 || w->g.cost < r->row[r->choice].g.cost))
            r->choice = i;
    }
    if (r->deadline_s <= 0 || r->choice >= 0)
        return PLANNER_OK;
    if (r->fastest < 0) {
        snprintf(r->note, sizeof r->note, "no node count up to %d finishes %.4g tokens: "
                 "failures stop every plan tried (docs/goodput.md)", r->group_nodes, o->tokens);
    } else {
        const size_row *f = &r->row[r->fastest];
        double t = f->g.time_to_train_s, d = r->deadline_s;
        snprintf(r->note, sizeof r->note,
                 "no node count up to %d meets the deadline of %.4g days: the fastest, %d "
                 "nodes (%d GPUs), takes %.4g days, %.4g days (%.0f%%) too long; it would meet a "
                 "deadline of %.4g days, or train %.4g tokens in %.4g days; a larger cluster "
                 "may also",
                 r->group_nodes, d / 86400, f->nodes, f->gpus, t / 86400, (t - d) / 86400,
                 100 * (t - d) / d, ceil(t / 864.0) / 100, o->tokens * d / t, d / 86400);
    }
    return PLANNER_E_INFEASIBLE;
}

planner_status size_run(const model *m, const cluster *c, const cost_params *p,
                        const search_options *opts, double deadline_s, size_result *res,
                        planner_error *err)
{
    sizer z = {m, c, p, *opts, res, err};
    planner_status rc = PLANNER_OK;
    int first, n;

    memset(res, 0, sizeof *res);
    res->min_fit = res->choice = res->fastest = -1;
    res->deadline_s = opts->goodput.tokens > 0 ? deadline_s : 0;
    if (c->n_groups != 1)
        return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                         "sizing resizes one node group; cluster '%s' has %d", c->name,
                         c->n_groups);
    res->group_nodes = c->group[0].nodes;
    res->row = pl_calloc(SIZE_ROWS_MAX, sizeof *res->row);
    if (res->row == NULL)
        return error_oom(err);
    z.opts.top_n = 1;
    z.opts.fix.gpus = -1;
    first = fewest_fitting(&z, &rc);
    if (rc != PLANNER_OK)
        return rc;
    if (first < 0) {
        snprintf(res->note, sizeof res->note, "no plan fits on up to %d nodes (%d GPUs) of "
                 "%s: planner --model ... shows the closest miss and what would fit",
                 res->group_nodes, group_total_gpus(&c->group[0]), c->group[0].gpu.name);
        return PLANNER_E_INFEASIBLE;
    }
    n = res->row[first].nodes;
    if (opts->goodput.tokens > 0) {
        while (n < res->group_nodes) {
            n = n * 2 > res->group_nodes ? res->group_nodes : n * 2;
            if (probe(&z, n, &rc) < 0)
                return rc;
        }
        if (res->deadline_s > 0 && (rc = meet_deadline(&z)) != PLANNER_OK)
            return rc;
    }
    res->min_fit = row_of(res, res->row[first].nodes);
    return conclude(&z);
}

void size_result_free(size_result *res)
{
    if (res == NULL)
        return;
    pl_free(res->row);
    res->row = NULL;
    res->n_rows = 0;
}
