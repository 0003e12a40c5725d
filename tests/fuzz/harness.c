/* harness.c: the bodies of the fuzz targets (see harness.h).
 *
 * Each harness copies the input into an allocation of exactly its size, runs
 * one parser, and checks the outcome against the contract in the parser's
 * header.  Invariant failures are reported through `msg`; the libFuzzer entry
 * points abort on them and the replay test fails on them.  Nothing here keeps
 * state between calls. */
#include <math.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "fit/calibration.h"
#include "harness.h"
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "partition/partition.h"
#include "search/search.h"
#include "search/sweep_grid.h"
#include "tool/sweep.h"
#include "base/units.h"
#include "fit/validate.h"
#include "cost/layer_cost.h"
#include "out/emit.h"
#include "shell_words.h"

static int fail(char *msg, int msg_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *msg, int msg_size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, (size_t)msg_size, fmt, ap);
    va_end(ap);
    return -1;
}

/* The input as a C string (embedded NULs end it early), in an exact-size
 * allocation; NULL if out of memory. */
static char *dup_cstr(const uint8_t *data, size_t size)
{
    char *s = pl_malloc(size + 1);
    if (s == NULL)
        return NULL;
    if (size > 0)
        memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

void harness_init(void)
{
    alloc_init();
}

int harness_constraints(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    strategy_constraints c = STRATEGY_CONSTRAINTS_INIT;
    char *text = dup_cstr(data, size);
    planner_error perr = PLANNER_ERROR_INIT;
    planner_status rc;
    int ret = 0;

    if (text == NULL) {
        ret = fail(msg, msg_size, "out of memory in the harness");
        goto cleanup;
    }
    rc = constraints_parse(&c, text, &perr);
    if (rc != PLANNER_OK && rc != PLANNER_E_USAGE) {
        ret = fail(msg, msg_size, "constraints_parse returned %d (not ok or usage)", (int)rc);
    } else if (rc == PLANNER_E_USAGE) {
        if (perr.status != rc || perr.msg[0] == '\0')
            ret = fail(msg, msg_size, "constraints_parse failed without a message");
    } else {
        const struct { const char *key; int v, lo; } deg[] = {
            {"tp", c.tp, 1}, {"pp", c.pp, 1}, {"dp", c.dp, 1}, {"cp", c.cp, 1},
            {"ep", c.ep, 1}, {"vpp", c.vpp, 1}, {"mbs", c.mbs, 1}, {"gpus", c.gpus, 1}};
        for (size_t i = 0; i < sizeof deg / sizeof deg[0] && ret == 0; i++)
            if (deg[i].v != -1 && deg[i].v < deg[i].lo)
                ret = fail(msg, msg_size, "accepted %s=%d", deg[i].key, deg[i].v);
        if (ret == 0 && (c.sp < -1 || c.sp > 1))
            ret = fail(msg, msg_size, "accepted sp=%d", c.sp);
        if (ret == 0 && (c.recompute < -1 || c.recompute > RECOMPUTE_FULL))
            ret = fail(msg, msg_size, "accepted recompute=%d", c.recompute);
        if (ret == 0 && (c.zero < -1 || c.zero > 3))
            ret = fail(msg, msg_size, "accepted zero=%d", c.zero);
    }
cleanup:
    pl_free(text);
    return ret;
}

int harness_units(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    unit_kind kind;
    bool allow_zero;
    char *text = NULL, fmt[64];
    double v = -12345.0;
    planner_error perr = PLANNER_ERROR_INIT;
    planner_status rc;
    int ret = 0;

    if (size < 1)
        return 0;
    kind = (unit_kind)(data[0] & 3);
    allow_zero = (data[0] & 4) != 0;
    text = dup_cstr(data + 1, size - 1);
    if (text == NULL)
        return fail(msg, msg_size, "out of memory in the harness");
    rc = units_parse(&v, text, kind, allow_zero, &perr);
    if (rc == PLANNER_OK) {
        if (!isfinite(v) || v < 0 || (v == 0 && !allow_zero))
            ret = fail(msg, msg_size, "units_parse(kind %d, zero %d) accepted '%.40s' as %g",
                       (int)kind, (int)allow_zero, text, v);
        units_format(v, kind, fmt, (int)sizeof fmt);
        if (ret == 0 && memchr(fmt, '\0', sizeof fmt) == NULL)
            ret = fail(msg, msg_size, "units_format left its buffer unterminated");
    } else if (rc != PLANNER_E_INPUT) {
        ret = fail(msg, msg_size, "units_parse returned %d", (int)rc);
    } else if (perr.status != rc || perr.msg[0] == '\0') {
        ret = fail(msg, msg_size, "units_parse failed without a message");
    } else if (v != -12345.0) {
        ret = fail(msg, msg_size, "units_parse wrote its output on failure");
    }
    pl_free(text);
    return ret;
}

/* Input bytes in an exact-size allocation (no NUL after them). */
static char *dup_exact(const uint8_t *data, size_t size)
{
    char *s = pl_malloc(size > 0 ? size : 1);
    if (s != NULL && size > 0)
        memcpy(s, data, size);
    return s;
}

static int finite_pos(double v)
{
    return isfinite(v) && v > 0;
}

/* A failed load: complete error, status E_INPUT, in `name`, at a line and
 * column unless `unplaced_ok`. */
static int check_error(const char *what, planner_status rc, const planner_error *err,
                       const void *out, const char *name, int unplaced_ok, char *msg,
                       int msg_size)
{
    if (out != NULL)
        return fail(msg, msg_size, "%s failed (%d) but returned a result", what, (int)rc);
    if (rc != PLANNER_E_INPUT)
        return fail(msg, msg_size, "%s returned status %d (expected 1): %s", what, (int)rc,
                    err->msg);
    if (err->status != rc)
        return fail(msg, msg_size, "%s returned %d, err.status %d", what, (int)rc,
                    (int)err->status);
    if (err->msg[0] == '\0')
        return fail(msg, msg_size, "%s failed without a message", what);
    if (strcmp(err->file, name) != 0)
        return fail(msg, msg_size, "%s error names file '%s'", what, err->file);
    if (!unplaced_ok && (err->line < 1 || err->col < 1))
        return fail(msg, msg_size, "%s error has no position (%d:%d): %s", what, err->line,
                    err->col, err->msg);
    return 0;
}

static int check_load_error(const char *what, planner_status rc, const planner_error *err,
                            const void *out, const char *name, char *msg, int msg_size)
{
    return check_error(what, rc, err, out, name, 0, msg, msg_size);
}

/* A loaded model and its run: what model.h promises. */
static int check_model(const model *m, const run_spec *run, char *msg, int msg_size)
{
    double total, active;
    if (memchr(m->name, '\0', sizeof m->name) == NULL)
        return fail(msg, msg_size, "model name not terminated");
    if (m->layers < 1 || m->layers > MODEL_MAX_LAYERS || m->layer == NULL)
        return fail(msg, msg_size, "layers = %d", m->layers);
    if (m->hidden < 1 || m->heads < 1 || m->kv_heads < 1 || m->head_dim < 1 || m->vocab < 1 ||
        run->seq_len < 1 || m->ffn_hidden < 0)
        return fail(msg, msg_size, "non-positive size (hidden %d heads %d kv %d hd %d vocab %d"
                    " seq %d ffn %d)", m->hidden, m->heads, m->kv_heads, m->head_dim, m->vocab,
                    run->seq_len, m->ffn_hidden);
    if (m->heads % m->kv_heads != 0)
        return fail(msg, msg_size, "heads %d not a multiple of kv_heads %d", m->heads,
                    m->kv_heads);
    if (m->max_position > 0 && run->seq_len > m->max_position)
        return fail(msg, msg_size, "seq_len %d > max_position %d", run->seq_len,
                    m->max_position);
    if (run->global_batch < 1 || (unsigned)m->prec >= PREC_COUNT ||
        (m->act != ACT_GELU && m->act != ACT_SWIGLU))
        return fail(msg, msg_size, "bad batch, precision or activation");
    if (m->moe.experts < 0 ||
        (m->moe.experts > 0 && (m->moe.top_k < 1 || m->moe.top_k > m->moe.experts ||
                                m->moe.expert_ffn < 1)))
        return fail(msg, msg_size, "MoE: experts %d top_k %d expert_ffn %d", m->moe.experts,
                    m->moe.top_k, m->moe.expert_ffn);
    for (int i = 0; i < m->layers; i++) {
        const layer_spec *l = &m->layer[i];
        if (l->hidden < 1 || l->heads < 1 || l->kv_heads < 1 || l->head_dim < 1 ||
            (!l->moe && l->ffn_hidden < 1) || (l->moe && m->moe.experts < 1))
            return fail(msg, msg_size, "layer %d: hidden %d heads %d kv %d hd %d ffn %d moe %d",
                        i, l->hidden, l->heads, l->kv_heads, l->head_dim, l->ffn_hidden,
                        (int)l->moe);
        if (!isfinite(model_layer_params(m, i)) || model_layer_params(m, i) <= 0)
            return fail(msg, msg_size, "layer %d parameters %g", i, model_layer_params(m, i));
    }
    total = model_param_count(m, run->seq_len);
    active = model_active_param_count(m, run->seq_len);
    if (!finite_pos(total) || !finite_pos(active) || active > total * (1 + 1e-12) ||
        !finite_pos(model_embedding_params(m, run->seq_len)))
        return fail(msg, msg_size, "parameters: total %g active %g embedding %g", total, active,
                    model_embedding_params(m, run->seq_len));
    return 0;
}

int harness_model(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    static const char name[] = "fuzz.json";
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    run_spec run;
    char *text = dup_exact(data, size);
    planner_status rc;
    int ret;

    if (text == NULL)
        return fail(msg, msg_size, "out of memory in the harness");
    rc = model_load_buffer(&m, &run, text, size, name, NULL, &err);
    if (rc == PLANNER_OK)
        ret = m == NULL ? fail(msg, msg_size, "model_load_buffer: OK without a model")
                        : check_model(m, &run, msg, msg_size);
    else
        ret = check_load_error("model_load_buffer", rc, &err, m, name, msg, msg_size);
    model_free(m);
    pl_free(text);
    return ret;
}

/* A loaded cluster: what cluster.h promises. */
static int check_cluster(const cluster *c, char *msg, int msg_size)
{
    long long total = 0;
    if (c->n_groups < 1 || c->n_groups > CLUSTER_MAX_GROUPS || c->group == NULL)
        return fail(msg, msg_size, "n_groups = %d", c->n_groups);
    if (memchr(c->name, '\0', sizeof c->name) == NULL)
        return fail(msg, msg_size, "cluster name not terminated");
    for (int i = 0; i < c->n_groups; i++) {
        const node_group *g = &c->group[i];
        if (memchr(g->name, '\0', sizeof g->name) == NULL ||
            memchr(g->gpu.name, '\0', sizeof g->gpu.name) == NULL)
            return fail(msg, msg_size, "group %d: name not terminated", i);
        if (g->nodes < 1 || g->gpus_per_node < 1)
            return fail(msg, msg_size, "group %d: %d nodes x %d GPUs", i, g->nodes,
                        g->gpus_per_node);
        total += (long long)g->nodes * g->gpus_per_node;
        if (!finite_pos(g->intra_bytes_per_s) || !finite_pos(g->inter_bytes_per_s) ||
            !isfinite(g->intra_latency_s) || g->intra_latency_s < 0 ||
            !isfinite(g->inter_latency_s) || g->inter_latency_s < 0)
            return fail(msg, msg_size, "group %d: links %g/%g B/s, %g/%g s", i,
                        g->intra_bytes_per_s, g->inter_bytes_per_s, g->intra_latency_s,
                        g->inter_latency_s);
        if ((unsigned)g->gpu.gen >= GEN_COUNT || !finite_pos(g->gpu.mem_bytes) ||
            !finite_pos(g->gpu.usable_mem_bytes) ||
            g->gpu.usable_mem_bytes > g->gpu.mem_bytes || !finite_pos(g->gpu.hbm_bytes_per_s))
            return fail(msg, msg_size, "group %d: GPU memory %g usable %g HBM %g", i,
                        g->gpu.mem_bytes, g->gpu.usable_mem_bytes, g->gpu.hbm_bytes_per_s);
        int any_peak = 0;
        for (int f = 0; f < PEAK_COUNT; f++) {
            if (!isfinite(g->gpu.peak_flops[f]) || g->gpu.peak_flops[f] < 0)
                return fail(msg, msg_size, "group %d: peak[%d] = %g", i, f,
                            g->gpu.peak_flops[f]);
            any_peak |= g->gpu.peak_flops[f] > 0;
        }
        if (!any_peak)
            return fail(msg, msg_size, "group %d: GPU without any peak", i);
    }
    if (total > CLUSTER_MAX_GPUS || total != cluster_total_gpus(c))
        return fail(msg, msg_size, "total GPUs %lld (cluster_total_gpus %d)", total,
                    cluster_total_gpus(c));
    if (c->n_links < 0 || (c->n_links > 0 && c->link == NULL))
        return fail(msg, msg_size, "n_links = %d", c->n_links);
    for (int i = 0; i < c->n_links; i++) {
        const group_link *l = &c->link[i];
        if (l->a < 0 || l->b < 0 || l->a >= c->n_groups || l->b >= c->n_groups ||
            !finite_pos(l->bytes_per_s) || !isfinite(l->latency_s) || l->latency_s < 0)
            return fail(msg, msg_size, "link %d: %d-%d %g B/s %g s", i, l->a, l->b,
                        l->bytes_per_s, l->latency_s);
    }
    for (int a = 0; a < c->n_groups; a++)
        for (int b = 0; b < c->n_groups; b++) {
            double bw, lat;
            cluster_link_between(c, a, b, &bw, &lat);
            if (!finite_pos(bw) || !isfinite(lat) || lat < 0)
                return fail(msg, msg_size, "link between %d and %d: %g B/s %g s", a, b, bw,
                            lat);
        }
    return 0;
}

int harness_cluster(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    static const char name[] = "fuzz.yaml";
    planner_error err = PLANNER_ERROR_INIT;
    cluster *c = NULL;
    char *text = dup_exact(data, size);
    planner_status rc;
    int ret;

    if (text == NULL)
        return fail(msg, msg_size, "out of memory in the harness");
    rc = cluster_load_buffer(&c, text, size, name, &err);
    if (rc == PLANNER_OK)
        ret = c == NULL ? fail(msg, msg_size, "cluster_load_buffer: OK without a cluster")
                        : check_cluster(c, msg, msg_size);
    else
        ret = check_load_error("cluster_load_buffer", rc, &err, c, name, msg, msg_size);
    cluster_free(c);
    pl_free(text);
    return ret;
}

/* A parsed axis: counts in range, every value named and finite. */
static int check_axis(const sweep_axis *a, int d, char *msg, int msg_size)
{
    if (a->n < 0 || a->n > SWEEP_MAX_VALUES || (a->n > 0 && (a->str == NULL || a->num == NULL)))
        return fail(msg, msg_size, "axis %d: n = %d", d, a->n);
    for (int i = 0; i < a->n; i++) {
        if (a->str[i] == NULL || a->str[i][0] == '\0' || !isfinite(a->num[i]))
            return fail(msg, msg_size, "axis %d value %d: '%s' %g", d, i,
                        a->str[i] != NULL ? a->str[i] : "(null)", a->num[i]);
        if ((d == SWEEP_NODES || d == SWEEP_GBS || d == SWEEP_SEQ || d == SWEEP_INTRA_BW ||
             d == SWEEP_INTER_BW || d == SWEEP_PEAK) && !(a->num[i] > 0))
            return fail(msg, msg_size, "axis %d value %d: accepted %g", d, i, a->num[i]);
    }
    return 0;
}

int harness_sweep(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    static const char name[] = "fuzz.grid";
    planner_error err = PLANNER_ERROR_INIT;
    sweep_grid g;
    char *text = dup_exact(data, size);
    planner_status rc;
    int ret = 0;

    if (text == NULL)
        return fail(msg, msg_size, "out of memory in the harness");
    memset(&g, 0, sizeof g);
    rc = sweep_grid_parse_buffer(text, size, name, &g, &err);
    if (rc != PLANNER_OK) {
        ret = check_load_error("sweep_grid_parse_buffer", rc, &err, NULL, name, msg, msg_size);
    } else {
        double pts = sweep_grid_points(&g);
        for (int d = 0; d < SWEEP_DIM_COUNT && ret == 0; d++)
            ret = check_axis(&g.axis[d], d, msg, msg_size);
        if (ret == 0 && !(isfinite(pts) && pts >= 1))
            ret = fail(msg, msg_size, "sweep_grid_points = %g", pts);
        if (ret == 0 && pts <= SWEEP_MAX_POINTS) {
            long last = (long)pts - 1, probe[3] = {0, last / 2, last};
            for (int q = 0; q < 3 && ret == 0; q++) {
                int idx[SWEEP_DIM_COUNT];
                sweep_point_decode(&g, probe[q], idx);
                for (int d = 0; d < SWEEP_DIM_COUNT && ret == 0; d++) {
                    int n = g.axis[d].n > 0 ? g.axis[d].n : 1;
                    if (idx[d] < 0 || idx[d] >= n)
                        ret = fail(msg, msg_size, "point %ld: axis %d index %d of %d", probe[q],
                                   d, idx[d], n);
                }
            }
        }
    }
    sweep_grid_free(&g);
    pl_free(text);
    return ret;
}

int harness_sweep_axis(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    sweep_axis a;
    char *text;
    planner_error perr = PLANNER_ERROR_INIT, serr = PLANNER_ERROR_INIT;
    planner_status rc;
    int d, off = -1, ret = 0;
    long si = -1, sn = -1;

    if (size < 1)
        return 0;
    d = data[0] % SWEEP_DIM_COUNT;
    text = dup_cstr(data + 1, size - 1);
    if (text == NULL) {
        ret = fail(msg, msg_size, "out of memory in the harness");
        goto cleanup;
    }
    memset(&a, 0, sizeof a);
    rc = sweep_axis_parse(&a, &off, (sweep_dim)d, text, &perr);
    if (rc == PLANNER_OK)
        ret = a.n < 1 ? fail(msg, msg_size, "axis %d: parsed '%.40s' into no values", d, text)
                      : check_axis(&a, d, msg, msg_size);
    else if (rc != PLANNER_E_INPUT && rc != PLANNER_E_INTERNAL)
        ret = fail(msg, msg_size, "sweep_axis_parse returned %d", (int)rc);
    else if (perr.status != rc || perr.msg[0] == '\0')
        ret = fail(msg, msg_size, "sweep_axis_parse failed without a message");
    else if (off < 0 || (size_t)off > strlen(text))
        ret = fail(msg, msg_size, "bad offset %d in a text of %zu bytes", off, strlen(text));
    sweep_axis_free(&a);
    if (ret == 0) {
        rc = sweep_shard_parse(&si, &sn, text, &serr);
        if (rc == PLANNER_OK && !(si >= 0 && si < sn && sn <= SWEEP_MAX_POINTS))
            ret = fail(msg, msg_size, "sweep_shard_parse('%.40s') = %ld/%ld", text, si, sn);
        else if (rc != PLANNER_OK && (rc != PLANNER_E_USAGE || serr.msg[0] == '\0'))
            ret = fail(msg, msg_size, "sweep_shard_parse returned %d without a message", (int)rc);
    }
cleanup:
    pl_free(text);
    return ret;
}

/* The input in a new temporary file, for readers that take a path; its
 * name in `path`.  0, or -1. */
static int temp_input(const uint8_t *data, size_t size, char *path, size_t path_size)
{
    const char *dir = getenv("TMPDIR");
    int fd;
    size_t done = 0;
    snprintf(path, path_size, "%s/planner-fuzz-XXXXXX", dir != NULL && dir[0] ? dir : "/tmp");
    fd = mkstemp(path);
    if (fd < 0)
        return -1;
    while (done < size) {
        ssize_t w = write(fd, data + done, size - done);
        if (w <= 0) {
            close(fd);
            unlink(path);
            return -1;
        }
        done += (size_t)w;
    }
    close(fd);
    return 0;
}

/* Every constant of a loaded calibration: finite and >= 0; efficiencies
 * (fractions of a peak) in (0, 1]. */
static int check_params(const cost_params *p, char *msg, int msg_size)
{
    for (int g = 0; g < GEN_COUNT; g++) {
        const gen_constants *k = &p->gen[g];
        const double eff[] = {k->gemm_eff, k->attn_eff, k->hbm_eff, k->intra_eff,
                              k->inter_eff, k->fp8_gemm_eff};
        for (size_t i = 0; i < sizeof eff / sizeof eff[0]; i++)
            if (!(eff[i] > 0 && eff[i] <= 1))
                return fail(msg, msg_size, "generation %d: efficiency %zu = %g", g, i, eff[i]);
        if (!(isfinite(k->kernel_s) && k->kernel_s >= 0) ||
            !(k->overlap_exposed >= 0 && k->overlap_exposed <= 1) ||
            !(isfinite(k->step_overhead_s) && k->step_overhead_s >= 0))
            return fail(msg, msg_size, "generation %d: kernel %g s, overlap exposed %g, "
                        "overhead %g s", g, k->kernel_s, k->overlap_exposed, k->step_overhead_s);
    }
    if (!(isfinite(p->reserve_bytes) && p->reserve_bytes >= 0) ||
        !(isfinite(p->frag_fraction) && p->frag_fraction >= 0))
        return fail(msg, msg_size, "reserve %g B, fragmentation %g", p->reserve_bytes,
                    p->frag_fraction);
    return 0;
}

int harness_calibration(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p, defaults;
    char path[256];
    planner_status rc;
    int ret;

    if (temp_input(data, size, path, sizeof path) != 0)
        return fail(msg, msg_size, "cannot write a temporary file");
    cost_params_default(&defaults);
    p = defaults;
    rc = calibration_load(&p, path, &err);
    if (rc == PLANNER_OK) {
        ret = check_params(&p, msg, msg_size);
    } else {
        ret = check_load_error("calibration_load", rc, &err, NULL, path, msg, msg_size);
        if (ret == 0 && memcmp(&p, &defaults, sizeof p) != 0)
            ret = fail(msg, msg_size, "calibration_load failed but changed the constants");
    }
    unlink(path);
    return ret;
}

int harness_runs(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    planner_error err = PLANNER_ERROR_INIT;
    validation_set *v = NULL;
    char path[256];
    planner_status rc;
    int ret = 0;

    if (temp_input(data, size, path, sizeof path) != 0)
        return fail(msg, msg_size, "cannot write a temporary file");
    rc = validation_load(&v, path, &err);
    if (rc != PLANNER_OK) {
        /* its schema errors name the key path, not the line (docs/testing.md) */
        ret = check_error("validation_load", rc, &err, v, path, 1, msg, msg_size);
    } else if (v == NULL || v->n < 0 || v->n > VALIDATION_MAX_RUNS ||
               (v->n > 0 && v->run == NULL)) {
        ret = fail(msg, msg_size, "validation_load: OK with %d runs", v != NULL ? v->n : -1);
    } else {
        for (int i = 0; i < v->n && ret == 0; i++) {
            const validation_run *r = &v->run[i];
            run_spec run = {.seq_len = r->seq_len, .global_batch = r->gbs};
            if (r->m == NULL || r->c == NULL || r->num_gpus < 1 || r->gbs < 1 ||
                !finite_pos(r->measured_tokens_per_s_per_gpu) ||
                memchr(r->id, '\0', sizeof r->id) == NULL ||
                memchr(r->unsupported, '\0', sizeof r->unsupported) == NULL)
                ret = fail(msg, msg_size, "run %d: gpus %d gbs %d measured %g", i, r->num_gpus,
                           r->gbs, r->measured_tokens_per_s_per_gpu);
            else if ((ret = check_model(r->m, &run, msg, msg_size)) == 0)
                ret = check_cluster(r->c, msg, msg_size);
        }
    }
    validation_free(v);
    unlink(path);
    return ret;
}

/* ---- partition: the DP and GLPK's ILP on the same small problem ---- */

#define PART_MAX_L 24
#define PART_MAX_P 8
#define PART_MAX_K 3

/* Bytes -> values; a cursor that yields 0 once the input runs out. */
typedef struct cursor {
    const uint8_t *p;
    size_t n, i;
} cursor;

static unsigned next_byte(cursor *c)
{
    return c->i < c->n ? c->p[c->i++] : 0;
}

/* A coefficient around `scale`, sometimes at an edge (0, tiny, huge, and, to
 * test validation, negative, NaN and infinity). */
static double next_value(cursor *c, double scale)
{
    unsigned a = next_byte(c), b = next_byte(c);
    switch (a) {
    case 250: return 0.0;
    case 251: return 1e-300;
    case 252: return 1e300;
    case 253: return -1.0;
    case 254: return NAN;
    case 255: return HUGE_VAL;
    default: return scale * (double)(a * 256 + b + 1) / 1000.0;
    }
}

/* Checks one solver's split: covers every layer, min_layers each. */
static int check_split(const char *who, const partition_problem *pb,
                       const partition_result *r, char *msg, int msg_size)
{
    int sum = 0, ml = pb->min_layers > 0 ? pb->min_layers : 1;
    for (int s = 0; s < pb->n_stages; s++) {
        if (r->n_layers[s] < ml)
            return fail(msg, msg_size, "%s: stage %d holds %d layers (min %d)", who, s,
                        r->n_layers[s], ml);
        sum += r->n_layers[s];
    }
    if (sum != pb->n_layers)
        return fail(msg, msg_size, "%s: split covers %d of %d layers", who, sum, pb->n_layers);
    return 0;
}

int harness_partition(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    cursor c = {data, size, 0};
    int L = 1 + (int)(next_byte(&c) % PART_MAX_L);
    int P = 1 + (int)(next_byte(&c) % (L < PART_MAX_P ? L : PART_MAX_P));
    int K = 1 + (int)(next_byte(&c) % PART_MAX_K);
    unsigned flags = next_byte(&c);
    int cls[PART_MAX_P], caps[PART_MAX_K];
    double t[PART_MAX_K * PART_MAX_L], st[PART_MAX_K * PART_MAX_L];
    double ac[PART_MAX_K * PART_MAX_L], pk[PART_MAX_K * PART_MAX_L];
    double ft[PART_MAX_P], fb[PART_MAX_P], inflight[PART_MAX_P], cap[PART_MAX_P];
    partition_problem pb;
    partition_result dp, ilp;
    partition_status sd, si;
    bool fits;

    for (int s = 0; s < P; s++) {
        cls[s] = (int)(next_byte(&c) % (unsigned)K);
        ft[s] = next_value(&c, 1e-3);
        fb[s] = next_value(&c, 1e8);
        inflight[s] = (double)(next_byte(&c) % 9);
        cap[s] = (flags & 8) ? HUGE_VAL : next_value(&c, 1e9);
    }
    for (int i = 0; i < K * L; i++) {
        t[i] = next_value(&c, 1e-3);
        st[i] = next_value(&c, 1e8);
        ac[i] = next_value(&c, 1e7);
        pk[i] = next_value(&c, 1e7);
    }
    for (int k = 0; k < K; k++)
        caps[k] = (int)(next_byte(&c) % (unsigned)(L + 2)) - 1;   /* -1 = none */
    memset(&pb, 0, sizeof pb);
    pb.n_layers = L;
    pb.n_stages = P;
    pb.n_classes = K;
    pb.stage_class = cls;
    pb.time_s = t;
    pb.state_bytes = st;
    pb.act_bytes = ac;
    pb.peak_bytes = (flags & 1) ? pk : NULL;
    pb.fixed_time_s = ft;
    pb.fixed_bytes = fb;
    pb.inflight = inflight;
    pb.capacity_bytes = cap;
    pb.min_layers = (int)((flags >> 4) % 3);
    pb.class_layer_cap = (flags & 2) ? caps : NULL;
    pb.fill_weight = (flags & 4) ? 0.1 : 0.0;

    sd = partition_dp(&pb, NULL, &dp);
    si = partition_ilp(&pb, 2.0, &ilp);
    if (partition_validate(&pb, NULL) != PLANNER_OK) {
        if (sd != PARTITION_INVALID || si != PARTITION_INVALID)
            return fail(msg, msg_size, "invalid problem: DP %s, ILP %s",
                        partition_status_name(sd), partition_status_name(si));
        return 0;
    }
    /* SOLVER_ERROR (GLPK gave up, or a scaled coefficient was not finite) is
     * a graceful non-answer: the search falls back to the DP then. */
    if (si == PARTITION_INVALID || si == PARTITION_NOMEM || si == PARTITION_UNSUPPORTED)
        return fail(msg, msg_size, "ILP on a valid problem: %s", partition_status_name(si));
    if (si == PARTITION_OK) {
        if (check_split("ILP", &pb, &ilp, msg, msg_size) != 0)
            return -1;
        (void)partition_measure(&pb, ilp.n_layers, &fits);
        if (!fits)
            return fail(msg, msg_size, "ILP split does not fit the memory");
    }
    if (sd == PARTITION_UNSUPPORTED)
        return 0;   /* caps or fill weight: the ILP alone */
    if (sd != PARTITION_OK && sd != PARTITION_INFEASIBLE)
        return fail(msg, msg_size, "DP on a valid problem: %s", partition_status_name(sd));
    if (sd == PARTITION_OK) {
        if (check_split("DP", &pb, &dp, msg, msg_size) != 0)
            return -1;
        (void)partition_measure(&pb, dp.n_layers, &fits);
        if (!fits)
            return fail(msg, msg_size, "DP split does not fit the memory");
    }
    if (si == PARTITION_TIMEOUT || si == PARTITION_SOLVER_ERROR)
        return 0;
    if ((sd == PARTITION_OK) != (si == PARTITION_OK))
        return fail(msg, msg_size, "DP %s but ILP %s", partition_status_name(sd),
                    partition_status_name(si));
    if (sd == PARTITION_OK && ilp.optimal &&
        fabs(ilp.bottleneck_s - dp.bottleneck_s) > 1e-4 * fabs(dp.bottleneck_s))
        return fail(msg, msg_size, "optimal bottlenecks differ: DP %.12g, ILP %.12g",
                    dp.bottleneck_s, ilp.bottleneck_s);
    return 0;
}

/* ---- emit: hostile names into every emitted format ------------------- */

/* The launch the emitters write for: a small Llama on two node groups of
 * different GPUs (a heterogeneous sbatch job, group names in every part)
 * and on one group. */
static const char emit_model_json[] =
    "{\"model_type\": \"llama\", \"hidden_size\": 1024, \"intermediate_size\": 4096,"
    " \"num_hidden_layers\": 8, \"num_attention_heads\": 16, \"num_key_value_heads\": 4,"
    " \"vocab_size\": 32000, \"max_position_embeddings\": 4096}";
static const char emit_cluster_yaml[] =
    "name: two\ngroups:\n"
    "  - name: ga\n    gpu: H100-SXM\n    nodes: 1\n    gpus_per_node: 8\n"
    "  - name: gb\n    gpu: A100-SXM-80GB\n    nodes: 1\n    gpus_per_node: 8\n"
    "links:\n  - between: [ga, gb]\n    bandwidth: 200Gbps\n";
static const char emit_single_yaml[] =
    "name: one\ngroups:\n  - name: ga\n    gpu: H100-SXM\n    nodes: 2\n    gpus_per_node: 8\n";

/* The names a user writes, in the order the input gives them. */
enum { EMIT_MODEL_NAME, EMIT_CLUSTER_NAME, EMIT_GROUP0, EMIT_GROUP1, EMIT_GPU0, EMIT_NAMES };
static const char *const emit_placeholder[EMIT_NAMES] = {"Qzph0q", "Qzph1q", "Qzph2q",
                                                         "Qzph3q", "Qzph4q"};

/* One launch: the model, a cluster, the best plan, and the three scripts
 * written with the placeholders as names, lexed.  Built once per process:
 * the names do not change the plan. */
typedef struct emit_case {
    model *m;
    cluster *c;
    search_result res;
    sw_script safe[3];
    bool ok[3];
} emit_case;

static const emit_kind emit_kinds[3] = {EMIT_MEGATRON, EMIT_SLURM, EMIT_TORCHRUN};

/* Points the names of the model and cluster at `name` (truncated to fit). */
static void emit_set_names(emit_case *ec, const char *const *name)
{
    snprintf(ec->m->name, sizeof ec->m->name, "%s", name[EMIT_MODEL_NAME]);
    snprintf(ec->c->name, sizeof ec->c->name, "%s", name[EMIT_CLUSTER_NAME]);
    snprintf(ec->c->group[0].name, sizeof ec->c->group[0].name, "%s", name[EMIT_GROUP0]);
    if (ec->c->n_groups > 1)
        snprintf(ec->c->group[1].name, sizeof ec->c->group[1].name, "%s", name[EMIT_GROUP1]);
    snprintf(ec->c->group[0].gpu.name, sizeof ec->c->group[0].gpu.name, "%s", name[EMIT_GPU0]);
}

/* The script of kind k in memory (malloc'd, *len), or NULL when the plan
 * cannot be expressed or out of memory. */
static char *emit_to_memory(const emit_case *ec, emit_kind k, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    planner_status rc;
    if (f == NULL)
        return NULL;
    rc = emit_write(f, k, MEGATRON_VERSION_DEFAULT, ec->m, ec->c, &ec->res.top[0], NULL);
    if (fclose(f) != 0 || rc != PLANNER_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int emit_case_init(emit_case *ec, const char *yaml, const char *fix)
{
    planner_error err = PLANNER_ERROR_INIT;
    cost_params p;
    search_options o;
    run_spec run;
    char msg[128];
    memset(ec, 0, sizeof *ec);
    cost_params_default(&p);
    search_options_default(&o);
    o.top_n = 1;
    if (constraints_parse(&o.fix, fix, &err) != PLANNER_OK ||
        model_load_buffer(&ec->m, &run, emit_model_json, sizeof emit_model_json - 1, "emit.json",
                          NULL, &err) != PLANNER_OK ||
        cluster_load_buffer(&ec->c, yaml, strlen(yaml), "emit.yaml", &err) != PLANNER_OK)
        return -1;
    o.gbs = run.global_batch;
    o.seq_len = run.seq_len;
    if (search_run(&ec->res, ec->m, ec->c, &p, &o, &err) != PLANNER_OK)
        return -1;
    emit_set_names(ec, emit_placeholder);
    for (int k = 0; k < 3; k++) {
        size_t len = 0;
        char *text = emit_to_memory(ec, emit_kinds[k], &len);
        ec->ok[k] = text != NULL && sw_lex(text, len, &ec->safe[k], msg, sizeof msg) == 0;
        free(text);
        if (!ec->ok[k])
            return -1;
    }
    return 0;
}

/* Emits case ec with `name` and checks the shell-word property against the
 * placeholder scripts; restores the placeholders. */
static int emit_check_case(emit_case *ec, const char *const *name, char *msg, int msg_size)
{
    static const char *const kind_name[3] = {"megatron", "slurm", "torchrun"};
    const char *used[EMIT_NAMES];
    char why[200];
    int ret = 0;
    emit_set_names(ec, name);
    /* what the structs hold: the names as truncated */
    used[EMIT_MODEL_NAME] = ec->m->name;
    used[EMIT_CLUSTER_NAME] = ec->c->name;
    used[EMIT_GROUP0] = ec->c->group[0].name;
    used[EMIT_GROUP1] = ec->c->n_groups > 1 ? ec->c->group[1].name : "";
    used[EMIT_GPU0] = ec->c->group[0].gpu.name;
    for (int k = 0; k < 3 && ret == 0; k++) {
        sw_script hostile = {0};
        size_t len = 0;
        char *text = emit_to_memory(ec, emit_kinds[k], &len);
        if (text == NULL)
            ret = fail(msg, msg_size, "%s: not written with hostile names", kind_name[k]);
        else if (sw_lex(text, len, &hostile, why, sizeof why) != 0 ||
                 sw_same_but_names(&ec->safe[k], &hostile, emit_placeholder, used, EMIT_NAMES,
                                   why, sizeof why) != 0)
            ret = fail(msg, msg_size, "%s: %s", kind_name[k], why);
        sw_free(&hostile);
        free(text);
    }
    emit_set_names(ec, emit_placeholder);
    return ret;
}

int harness_emit(const uint8_t *data, size_t size, char *msg, int msg_size)
{
    static emit_case het, single;   /* built on the first call, kept */
    static int ready = 0;           /* 0 not yet, 1 built, -1 failed */
    const char *name[EMIT_NAMES];
    char *text = pl_malloc(size + 1), *p;   /* NUL-terminated: names are strings */
    int ret;

    if (ready == 0)
        ready = emit_case_init(&het, emit_cluster_yaml, "pp=2") == 0 &&
                emit_case_init(&single, emit_single_yaml, "pp=2") == 0 ? 1 : -1;
    if (ready < 0 || text == NULL) {
        pl_free(text);
        return fail(msg, msg_size, ready < 0 ? "emit: the launch could not be planned"
                                             : "out of memory in the harness");
    }
    if (size > 0)
        memcpy(text, data, size);
    text[size] = '\0';
    /* NUL-separated names; a missing or empty one is "x" */
    p = text;
    for (int k = 0; k < EMIT_NAMES; k++) {
        name[k] = p < text + size && *p != '\0' ? p : "x";
        p = p < text + size ? p + strlen(p) + 1 : p;
    }
    ret = emit_check_case(&het, name, msg, msg_size);
    if (ret == 0)
        ret = emit_check_case(&single, name, msg, msg_size);
    pl_free(text);
    return ret;
}

const harness_target harness_targets[] = {
    {"model", harness_model},
    {"cluster", harness_cluster},
    {"constraints", harness_constraints},
    {"units", harness_units},
    {"sweep", harness_sweep},
    {"sweep_axis", harness_sweep_axis},
    {"partition", harness_partition},
    {"calibration", harness_calibration},
    {"runs", harness_runs},
    {"emit", harness_emit},
};
const size_t harness_target_count = sizeof harness_targets / sizeof harness_targets[0];
