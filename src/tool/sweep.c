/* sweep.c: `planner sweep`, a grid of what-ifs, the best plan at each point.
 *
 * What it does: for every point of the grid (sweep.h: axes, order, value
 * syntax) it loads the model with the point's global batch and sequence
 * length as overrides (exactly as `planner --gbs --seq` does), copies the
 * cluster and applies the point's GPU type, node count and scales, runs the
 * search for the best plan, and prints one line: CSV with a header, or JSON
 * Lines.  What-ifs on the cluster copy:
 *   gpu       every node group gets the catalog GPU (peaks, memory, HBM) and
 *             its NVLink rate as intra-node bandwidth; nodes, GPUs per node
 *             and the network stay the cluster file's;
 *   nodes     the node count of a one-group cluster (refused for several);
 *   *-scale   intra-node bandwidth, inter-node bandwidth (groups and links),
 *             every peak FLOP/s, multiplied.
 *
 * Invariants: the line of point k depends on point k only (no state carried
 * between points), so a shard's lines are byte-identical to the same lines
 * of the unsharded run and merging is sorting by point; every line carries
 * "point" and "points" (grid size) so a merge can prove it is complete.
 * Inputs are validated before the first point runs (every model and
 * cluster file loads; the grid is within SWEEP_MAX_POINTS), so a bad file
 * fails fast with exit 1 instead of a sweep of "invalid" lines.  Output goes
 * through an output set (fileio.h): -o FILE appears only complete, and never
 * over one of the sweep's inputs (model, cluster, grid, calibration, or a
 * shard being merged: same device and inode).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "fit/calibration.h"
#include "inputs/catalog.h"
#include "tool/cli.h"
#include "tool/cli_goodput.h"
#include "tool/progress.h"
#include "inputs/cluster.h"
#include "tool/commands.h"
#include "base/fileio.h"
#include "inputs/model.h"
#include "search/search.h"
#include "base/suggest.h"
#include "model/knobs.h"
#include "tool/sweep.h"

#define GRID_FILE_MAX_BYTES (1L << 20)

const char *sweep_csv_header(char *buf, size_t size)
{
    char knobs[SWEEP_CSV_HEADER_MAX / 2];
    knobs_keys_join(knobs, sizeof knobs, ",");
    snprintf(buf, size, "point,points,model,cluster,gpu,nodes,gpus,gbs,seq,intra_bw_scale,"
             "inter_bw_scale,peak_scale,status,%s,step_time_s,tokens_per_s,"
             "tokens_per_s_per_gpu,mfu,peak_memory_bytes,ettr,goodput_tokens_per_s,"
             "time_to_train_s,gpu_hours,cost,energy_kwh,reason",
             knobs);
    return buf;
}

static const char *const dim_keys[SWEEP_DIM_COUNT] = {
    "model", "cluster", "gpu", "nodes", "gbs", "seq", "intra-bw-scale", "inter-bw-scale",
    "peak-scale"};

const char *sweep_dim_key(sweep_dim d)
{
    return (d >= 0 && d < SWEEP_DIM_COUNT) ? dim_keys[d] : "?";
}

/* ---- axes ------------------------------------------------------------------ */

typedef enum axis_type { AXIS_TEXT, AXIS_GPU, AXIS_INT, AXIS_REAL } axis_type;

static axis_type dim_type(sweep_dim d)
{
    switch (d) {
    case SWEEP_MODEL: case SWEEP_CLUSTER: return AXIS_TEXT;
    case SWEEP_GPU: return AXIS_GPU;
    case SWEEP_NODES: case SWEEP_GBS: case SWEEP_SEQ: return AXIS_INT;
    default: return AXIS_REAL;
    }
}

/* Limits of numeric axes. */
static void dim_limits(sweep_dim d, double *lo, double *hi)
{
    switch (d) {
    case SWEEP_NODES: *lo = 1; *hi = 1048576; break;
    case SWEEP_GBS: *lo = 1; *hi = 100000000; break;
    case SWEEP_SEQ: *lo = 1; *hi = 16777216; break;
    default: *lo = 1e-6; *hi = 1e6; break;
    }
}

void sweep_axis_free(sweep_axis *a)
{
    if (a == NULL)
        return;
    for (int i = 0; i < a->n; i++)
        pl_free(a->str[i]);
    pl_free(a->str);
    pl_free(a->num);
    memset(a, 0, sizeof *a);
}

/* Appends one value; -1 on OOM or too many values (msg set). */
static int axis_push(sweep_axis *a, const char *s, double v, char *msg, int msg_size)
{
    char **ns;
    double *nn;
    if (a->n >= SWEEP_MAX_VALUES) {
        snprintf(msg, (size_t)msg_size, "more than %d values", SWEEP_MAX_VALUES);
        return -1;
    }
    if (a->n == a->cap) {   /* doubling: a 10,000-value range is not 10,000 reallocations */
        int cap = a->cap > 0 ? 2 * a->cap : 8;
        ns = pl_realloc(a->str, (size_t)cap * sizeof *ns);
        if (ns == NULL)
            goto oom;
        a->str = ns;
        nn = pl_realloc(a->num, (size_t)cap * sizeof *nn);
        if (nn == NULL)
            goto oom;
        a->num = nn;
        a->cap = cap;
    }
    a->str[a->n] = pl_strdup(s);
    if (a->str[a->n] == NULL)
        goto oom;
    a->num[a->n++] = v;
    return 0;
oom:
    snprintf(msg, (size_t)msg_size, "out of memory");
    return -1;
}

static int parse_number(const char *s, axis_type t, double *out)
{
    char *end = NULL;
    double v;
    if (*s == '\0' || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    if (t == AXIS_INT) {
        long l = strtol(s, &end, 10);
        v = (double)l;
    } else {
        v = strtod(s, &end);
    }
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static void fmt_num(double v, axis_type t, char *buf, size_t size)
{
    if (t == AXIS_INT)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.6g", v);
}

/* One comma-separated token (already trimmed, NUL-terminated). */
static int parse_token(sweep_dim d, const char *tok, sweep_axis *out, char *msg, int msg_size)
{
    axis_type t = dim_type(d);
    const char *key = dim_keys[d];
    double lo, hi;
    char buf[64];

    if (*tok == '\0') {
        snprintf(msg, (size_t)msg_size, "%s: empty value", key);
        return -1;
    }
    if (t == AXIS_TEXT)
        return axis_push(out, tok, 0, msg, msg_size);
    if (t == AXIS_GPU) {
        const gpu_spec *g = catalog_find(tok);
        if (g == NULL) {
            const char *names[64];
            size_t n = catalog_count() < 64 ? catalog_count() : 64;
            char hint[128];
            for (size_t i = 0; i < n; i++)
                names[i] = catalog_at(i)->name;
            suggest_format(tok, names, n, hint, sizeof hint);
            snprintf(msg, (size_t)msg_size, "gpu: unknown GPU '%s'%s", tok, hint);
            return -1;
        }
        return axis_push(out, g->name, 0, msg, msg_size);
    }
    dim_limits(d, &lo, &hi);
    const char *dots = strstr(tok, "..");
    if (dots == NULL) {
        double v;
        if (parse_number(tok, t, &v) != 0 || v < lo || v > hi) {
            snprintf(msg, (size_t)msg_size, "%s: expected %s in %g..%g, got '%s'", key,
                     t == AXIS_INT ? "an integer" : "a number", lo, hi, tok);
            return -1;
        }
        fmt_num(v, t, buf, sizeof buf);
        return axis_push(out, buf, v, msg, msg_size);
    }
    /* range A..B, A..B:S or A..BxF */
    {
        char a[64], b[64], s[64] = "";
        char kind = 0;
        size_t la = (size_t)(dots - tok);
        const char *rest = dots + 2, *sep = strpbrk(rest, ":x");
        double va, vb, vs = 1;
        if (la == 0 || la >= sizeof a || strlen(rest) >= sizeof b)
            goto bad_range;
        memcpy(a, tok, la);
        a[la] = '\0';
        if (sep != NULL) {
            kind = *sep;
            memcpy(b, rest, (size_t)(sep - rest));
            b[sep - rest] = '\0';
            snprintf(s, sizeof s, "%s", sep + 1);
        } else {
            snprintf(b, sizeof b, "%s", rest);
        }
        if (parse_number(a, t, &va) != 0 || parse_number(b, t, &vb) != 0)
            goto bad_range;
        if (kind != 0 && parse_number(s, kind == 'x' ? AXIS_REAL : t, &vs) != 0)
            goto bad_range;
        if (va < lo || vb > hi || vb < va) {
            snprintf(msg, (size_t)msg_size, "%s: range '%s' must run upwards within %g..%g",
                     key, tok, lo, hi);
            return -1;
        }
        if ((kind == 'x' && !(vs > 1)) || (kind != 'x' && !(vs > 0))) {
            snprintf(msg, (size_t)msg_size, "%s: range '%s' needs a %s", key, tok,
                     kind == 'x' ? "factor > 1" : "step > 0");
            return -1;
        }
        if (kind != 'x' && t == AXIS_REAL && kind == 0) {
            snprintf(msg, (size_t)msg_size, "%s: range '%s' of real values needs ':STEP' or "
                     "'xFACTOR'", key, tok);
            return -1;
        }
        for (long i = 0;; i++) {
            double v = kind == 'x' ? va * pow(vs, (double)i) : va + vs * (double)i;
            if (t == AXIS_INT)
                v = round(v);
            if (v > vb * (1 + 1e-9))
                break;
            if (i >= SWEEP_MAX_VALUES) {
                snprintf(msg, (size_t)msg_size, "%s: range '%s' has more than %d values", key,
                         tok, SWEEP_MAX_VALUES);
                return -1;
            }
            fmt_num(v, t, buf, sizeof buf);
            if (axis_push(out, buf, v, msg, msg_size) != 0)
                return -1;
        }
        return 0;
    bad_range:
        snprintf(msg, (size_t)msg_size,
                 "%s: bad range '%s' (expected A..B, A..B:STEP or A..BxFACTOR)", key, tok);
        return -1;
    }
}

/* A value's text and its index, sorted by text, then by index. */
typedef struct value_ref {
    const char *text;
    int index;
} value_ref;

static int cmp_value_ref(const void *pa, const void *pb)
{
    const value_ref *a = pa, *b = pb;
    int c = strcmp(a->text, b->text);
    return c != 0 ? c : (a->index > b->index) - (a->index < b->index);
}

/* The first value (in order) equal to an earlier one, or -1; -2 if out of
 * memory.  Sorting keeps this O(n log n) on a 10,000-value axis. */
static int first_repeat(const sweep_axis *a)
{
    value_ref *v;
    int first = -1;
    if (a->n < 2)
        return -1;
    v = pl_malloc((size_t)a->n * sizeof *v);
    if (v == NULL)
        return -2;
    for (int i = 0; i < a->n; i++)
        v[i] = (value_ref){a->str[i], i};
    qsort(v, (size_t)a->n, sizeof *v, cmp_value_ref);
    for (int i = 1; i < a->n; i++)   /* in a run of equal texts the 2nd is its first repeat */
        if (strcmp(v[i].text, v[i - 1].text) == 0 &&
            (i < 2 || strcmp(v[i - 1].text, v[i - 2].text) != 0) &&
            (first < 0 || v[i].index < first))
            first = v[i].index;
    pl_free(v);
    return first;
}

int sweep_axis_parse(sweep_dim d, const char *text, sweep_axis *out, char *msg, int msg_size,
                     int *bad_offset)
{
    size_t len = strlen(text);
    char *copy;
    int *token_at = NULL;   /* offset in text of the token each value came from */
    int rep, rc = -1;
    *bad_offset = 0;
    if (d < 0 || d >= SWEEP_DIM_COUNT) {
        snprintf(msg, (size_t)msg_size, "no such axis");
        return -1;
    }
    copy = pl_malloc(len + 1);
    token_at = pl_malloc(SWEEP_MAX_VALUES * sizeof *token_at);
    if (copy == NULL || token_at == NULL) {
        snprintf(msg, (size_t)msg_size, "out of memory");
        goto done;
    }
    for (int i = 0; i < out->n; i++)   /* values from an earlier call */
        token_at[i] = 0;
    for (size_t start = 0; start <= len;) {
        size_t end = start;
        while (end < len && text[end] != ',')
            end++;
        size_t a = start, b = end;
        while (a < b && isspace((unsigned char)text[a]))
            a++;
        while (b > a && isspace((unsigned char)text[b - 1]))
            b--;
        memcpy(copy, text + a, b - a);
        copy[b - a] = '\0';
        int before = out->n;
        if (parse_token(d, copy, out, msg, msg_size) != 0) {
            *bad_offset = (int)a;
            goto done;
        }
        for (int i = before; i < out->n; i++)
            token_at[i] = (int)a;
        start = end + 1;
    }
    /* no value twice: it would only repeat points */
    rep = first_repeat(out);
    if (rep == -2) {
        snprintf(msg, (size_t)msg_size, "out of memory");
        goto done;
    }
    if (rep >= 0) {
        snprintf(msg, (size_t)msg_size, "%s: value '%s' given twice", dim_keys[d], out->str[rep]);
        *bad_offset = token_at[rep];
        goto done;
    }
    rc = 0;
done:
    pl_free(copy);
    pl_free(token_at);
    return rc;
}

void sweep_grid_free(sweep_grid *g)
{
    if (g == NULL)
        return;
    for (int d = 0; d < SWEEP_DIM_COUNT; d++)
        sweep_axis_free(&g->axis[d]);
    pl_free(g->fix);
    g->fix = NULL;
}

double sweep_grid_points(const sweep_grid *g)
{
    double n = 1;
    for (int d = 0; d < SWEEP_DIM_COUNT; d++)
        n *= g->axis[d].n > 0 ? g->axis[d].n : 1;
    return n;
}

void sweep_point_decode(const sweep_grid *g, long k, int idx[SWEEP_DIM_COUNT])
{
    for (int d = SWEEP_DIM_COUNT - 1; d >= 0; d--) {
        long n = g->axis[d].n > 0 ? g->axis[d].n : 1;
        idx[d] = (int)(k % n);
        k /= n;
    }
}

int sweep_shard_parse(const char *text, long *i, long *n)
{
    const char *slash = strchr(text, '/');
    char a[32];
    int vi, vn;
    if (slash == NULL || (size_t)(slash - text) >= sizeof a)
        return -1;
    memcpy(a, text, (size_t)(slash - text));
    a[slash - text] = '\0';
    if (cli_parse_int(a, 0, SWEEP_MAX_POINTS, &vi) != 0 ||
        cli_parse_int(slash + 1, 1, SWEEP_MAX_POINTS, &vn) != 0 || vi >= vn)
        return -1;
    *i = vi;
    *n = vn;
    return 0;
}

/* ---- grid files -------------------------------------------------------------- */

planner_status sweep_grid_parse_buffer(const char *text, size_t len, const char *name,
                                       sweep_grid *g, planner_error *err)
{
    int seen_line[SWEEP_DIM_COUNT + 1] = {0};
    int line_no = 0;
    char *line = NULL;
    planner_status rc = PLANNER_OK;

    line = pl_malloc(len + 1);
    if (line == NULL)
        return error_oom(err);
    for (size_t pos = 0; pos < len;) {
        size_t eol = pos, n;
        char msg[512], *eq, *key, *val;
        int d, off;
        while (eol < len && text[eol] != '\n')
            eol++;
        n = eol - pos;
        if (n > 0 && text[pos + n - 1] == '\r')
            n--;
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos = eol + 1;
        line_no++;
        if (memchr(line, '\0', n) != NULL) {
            rc = error_set(err, PLANNER_E_INPUT, name, line_no, 1, NULL,
                           "NUL byte in a grid file");
            goto cleanup;
        }
        key = line;
        while (isspace((unsigned char)*key))
            key++;
        if (*key == '\0' || *key == '#')
            continue;
        eq = strchr(key, '=');
        if (eq == NULL) {
            rc = error_set(err, PLANNER_E_INPUT, name, line_no, (int)(key - line) + 1, NULL,
                           "expected 'key = values'");
            goto cleanup;
        }
        val = eq + 1;
        *eq = '\0';
        for (char *e = eq; e > key && isspace((unsigned char)e[-1]); e--)
            e[-1] = '\0';
        while (isspace((unsigned char)*val))
            val++;
        for (d = 0; d <= SWEEP_DIM_COUNT; d++)
            if (strcmp(key, d < SWEEP_DIM_COUNT ? dim_keys[d] : "fix") == 0)
                break;
        if (d > SWEEP_DIM_COUNT) {
            const char *keys[SWEEP_DIM_COUNT + 1];
            char hint[128];
            for (int k = 0; k < SWEEP_DIM_COUNT; k++)
                keys[k] = dim_keys[k];
            keys[SWEEP_DIM_COUNT] = "fix";
            suggest_format(key, keys, SWEEP_DIM_COUNT + 1, hint, sizeof hint);
            rc = error_set(err, PLANNER_E_INPUT, name, line_no, (int)(key - line) + 1, NULL,
                           "unknown key '%s'%s (known: model, cluster, gpu, nodes, gbs, seq, "
                           "intra-bw-scale, inter-bw-scale, peak-scale, fix)", key, hint);
            goto cleanup;
        }
        if (seen_line[d] != 0) {
            rc = error_set(err, PLANNER_E_INPUT, name, line_no, (int)(key - line) + 1, NULL,
                           "'%s' given twice (first on line %d); list the values on one line",
                           key, seen_line[d]);
            goto cleanup;
        }
        seen_line[d] = line_no;
        if (*val == '\0') {
            rc = error_set(err, PLANNER_E_INPUT, name, line_no, (int)(val - line) + 1, NULL,
                           "%s: no value", key);
            goto cleanup;
        }
        if (d == SWEEP_DIM_COUNT) {
            strategy_constraints probe = STRATEGY_CONSTRAINTS_INIT;
            size_t vl = strlen(val);
            while (vl > 0 && isspace((unsigned char)val[vl - 1]))
                val[--vl] = '\0';
            if (constraints_parse(val, &probe, msg, sizeof msg) != 0) {
                rc = error_set(err, PLANNER_E_INPUT, name, line_no, (int)(val - line) + 1, NULL,
                               "fix: %s", msg);
                goto cleanup;
            }
            g->fix = pl_strdup(val);
            if (g->fix == NULL) {
                rc = error_oom(err);
                goto cleanup;
            }
            continue;
        }
        if (sweep_axis_parse((sweep_dim)d, val, &g->axis[d], msg, sizeof msg, &off) != 0) {
            rc = error_set(err, strcmp(msg, "out of memory") == 0 ? PLANNER_E_INTERNAL
                                                                  : PLANNER_E_INPUT,
                           name, line_no, (int)(val - line) + off + 1, NULL, "%s", msg);
            goto cleanup;
        }
    }
cleanup:
    pl_free(line);
    return rc;
}

planner_status sweep_grid_parse_file(const char *path, sweep_grid *g, planner_error *err)
{
    char *text = NULL;
    size_t len = 0;
    planner_status rc = file_read_all(path, GRID_FILE_MAX_BYTES, &text, &len, err);
    if (rc != PLANNER_OK)
        return rc;
    rc = sweep_grid_parse_buffer(text, len, path, g, err);
    pl_free(text);
    return rc;
}

/* ---- merge ------------------------------------------------------------------- */

typedef struct merge_line {
    long point;
    char *text;          /* owned, without the newline */
    int file, line;
} merge_line;

/* Verifying a shard line.  The line's shape is the header's (one fact: the
 * columns are sweep_csv_header's, in CSV and as JSON Lines keys): every
 * column, or for a point without a plan (status infeasible or invalid) every
 * column but the plan's (the knobs and figures between status and reason,
 * empty in CSV, absent in JSON); point and points are plain decimal integers; status is a known one. */

#define LINE_MAX_COLS 64

/* The index of `key` (length n) among the header's columns, or -1. */
static int header_column(const char *header, const char *key, size_t n)
{
    const char *h = header;
    for (int col = 0;; col++) {
        size_t len = strcspn(h, ",");
        if (len == n && strncmp(h, key, n) == 0)
            return col;
        if (h[len] == '\0')
            return -1;
        h += len + 1;
    }
}

/* The header's layout: its columns, status, and the plan's columns
 * [plan_first, plan_end) (the knobs and figures, after status, before reason),
 * the last of them [train_first, plan_end) the time-to-train figures, set on
 * an ok line only when the sweep was given --tokens (all or none). */
typedef struct line_shape {
    const char *header;
    int cols, status, plan_first, train_first, plan_end;
} line_shape;

static line_shape header_shape(const char *header)
{
    line_shape sh;
    sh.header = header;
    sh.status = header_column(header, "status", 6);
    sh.plan_first = sh.status + 1;
    sh.plan_end = header_column(header, "reason", 6);
    sh.train_first = header_column(header, "time_to_train_s", 15);
    if (sh.train_first < 0)
        sh.train_first = sh.plan_end;
    sh.cols = sh.plan_end + 1;
    return sh;
}

static bool known_status(const char *s, size_t n)
{
    return (n == 2 && strncmp(s, "ok", 2) == 0) || (n == 10 && strncmp(s, "infeasible", 10) == 0) ||
           (n == 7 && strncmp(s, "invalid", 7) == 0);
}

/* A point index: decimal digits only (no sign, point, exponent or space). */
static int parse_index(const char *s, size_t n, long *out)
{
    long v = 0;
    if (n == 0 || n > 9)
        return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

/* Checks a CSV line (sweep's quoting: a field with , " or a line break is
 * "..." with "" for a quote).  0, or -1 with the 1-based column and why. */
static int csv_check(const line_shape *shape, const char *s, long *point, long *points,
                     int *col, char *why, size_t size)
{
    const line_shape sh = *shape;
    const char *f[LINE_MAX_COLS];
    size_t len[LINE_MAX_COLS];
    int nf = 0;
    const char *p = s;
    for (;;) {
        const char *start = p;
        if (*p == '"') {
            for (p++; *p != '\0' && !(p[0] == '"' && p[1] != '"'); p += p[0] == '"' ? 2 : 1)
                ;
            if (*p == '\0') {
                *col = (int)(start - s) + 1;
                snprintf(why, size, "a quoted field without its closing quote (cut short?)");
                return -1;
            }
            p++;
        } else {
            p += strcspn(p, ",\"");
            if (*p == '"') {
                *col = (int)(p - s) + 1;
                snprintf(why, size, "a quote inside an unquoted field");
                return -1;
            }
        }
        if (*p != ',' && *p != '\0') {
            *col = (int)(p - s) + 1;
            snprintf(why, size, "text after a quoted field");
            return -1;
        }
        if (nf < LINE_MAX_COLS) {
            f[nf] = start;
            len[nf] = (size_t)(p - start);
        }
        nf++;
        if (*p == '\0')
            break;
        p++;
    }
    *col = 1;
    if (nf != sh.cols) {
        snprintf(why, size, "%d fields, the header has %d", nf, sh.cols);
        return -1;
    }
    if (parse_index(f[0], len[0], point) != 0 || parse_index(f[1], len[1], points) != 0) {
        int bad = parse_index(f[0], len[0], point) != 0 ? 0 : 1;
        *col = (int)(f[bad] - s) + 1;
        snprintf(why, size, "%s: expected an integer, got '%.*s'", bad ? "points" : "point",
                 (int)(len[bad] < 40 ? len[bad] : 40), f[bad]);
        return -1;
    }
    if (!known_status(f[sh.status], len[sh.status])) {
        *col = (int)(f[sh.status] - s) + 1;
        snprintf(why, size, "status: expected ok, infeasible or invalid");
        return -1;
    }
    bool ok = len[sh.status] == 2;
    bool train = ok && sh.train_first < sh.plan_end && len[sh.train_first] > 0;
    for (int c = sh.plan_first; c < sh.plan_end; c++)
        if ((len[c] > 0) != (c < sh.train_first ? ok : train)) {
            *col = (int)(f[c] - s) + 1;
            snprintf(why, size, "%s: %s", ok ? "a plan column empty on an ok line"
                                              : "a plan column set on a line without a plan",
                     "not a line of this planner version");
            return -1;
        }
    return 0;
}

/* Checks a JSON Lines line: one object whose keys are header columns, all of
 * them (ok) or all but the plan's.  0, or -1 with why. */
static int jsonl_check(const line_shape *shape, const char *s, long *point, long *points,
                       char *why, size_t size)
{
    json_error_t jerr;
    json_t *o = json_loads(s, JSON_REJECT_DUPLICATES, &jerr);
    const line_shape sh = *shape;
    json_t *a, *b, *st;
    const char *key;
    json_t *val;
    int rc = -1, n = 0, want;
    if (!json_is_object(o)) {
        snprintf(why, size, "not a JSON object: %.100s", o == NULL ? jerr.text : "another value");
        goto cleanup;
    }
    a = json_object_get(o, "point");
    b = json_object_get(o, "points");
    st = json_object_get(o, "status");
    if (!json_is_integer(a) || !json_is_integer(b)) {
        snprintf(why, size, "%s: expected an integer", json_is_integer(a) ? "points" : "point");
        goto cleanup;
    }
    if (!json_is_string(st) || !known_status(json_string_value(st), json_string_length(st))) {
        snprintf(why, size, "status: expected ok, infeasible or invalid");
        goto cleanup;
    }
    json_object_foreach(o, key, val) {
        if (header_column(sh.header, key, strlen(key)) < 0) {
            snprintf(why, size, "unknown field '%.40s'", key);
            goto cleanup;
        }
        n++;
    }
    want = strcmp(json_string_value(st), "ok") == 0 ? sh.cols
                                                    : sh.cols - (sh.plan_end - sh.plan_first);
    if (want == sh.cols && n == sh.cols - (sh.plan_end - sh.train_first) &&
        json_object_get(o, "time_to_train_s") == NULL)
        want = n;   /* an ok line of a sweep without --tokens */
    if (n != want) {
        snprintf(why, size, "%d fields, a line with status %s has %d", n,
                 json_string_value(st), want);
        goto cleanup;
    }
    *point = (long)json_integer_value(a);
    *points = (long)json_integer_value(b);
    rc = 0;
cleanup:
    json_decref(o);
    return rc;
}

/* A shard is whole lines of text: no NUL byte, and a newline at the end (a
 * shard cut short ends inside its last line). */
static planner_status shard_check_bytes(const char *path, const char *text, size_t len,
                                        planner_error *err)
{
    const char *nul = memchr(text, '\0', len);
    const char *end = nul != NULL ? nul : text + len;
    int line = 1, col = 1;
    if (nul == NULL && (len == 0 || text[len - 1] == '\n'))
        return PLANNER_OK;
    for (const char *p = text; p < end; p++) {
        line += *p == '\n';
        col = *p == '\n' ? 1 : col + 1;
    }
    return error_set(err, PLANNER_E_INPUT, path, line, col, NULL, "%s",
                     nul != NULL ? "a NUL byte in a sweep output"
                                 : "the last line has no newline: the shard is cut short");
}

static int cmp_line(const void *a, const void *b)
{
    const merge_line *x = a, *y = b;
    return (x->point > y->point) - (x->point < y->point);
}

planner_status sweep_merge(FILE *out, int n_files, char *const *paths, planner_error *err)
{
    merge_line *lines = NULL;
    long n = 0, cap = 0, points = -1;
    int format = 0;   /* 1 CSV, 2 JSONL */
    const char *points_file = NULL;
    int points_line = 0;
    char *text = NULL, header[SWEEP_CSV_HEADER_MAX];
    planner_status rc = PLANNER_OK;

    sweep_csv_header(header, sizeof header);
    const line_shape shape = header_shape(header);
    for (int f = 0; f < n_files; f++) {
        size_t len = 0, pos = 0;
        int line_no = 0, file_fmt = 0;   /* 1 CSV, 2 JSONL */
        rc = file_read_all(paths[f], INPUT_MAX_BYTES * 4L, &text, &len, err);
        if (rc != PLANNER_OK)
            goto cleanup;
        if ((rc = shard_check_bytes(paths[f], text, len, err)) != PLANNER_OK)
            goto cleanup;
        while (pos < len) {
            size_t eol = pos;
            long pt, pts;
            int fmt;
            while (eol < len && text[eol] != '\n')
                eol++;
            text[eol] = '\0';
            line_no++;
            const char *s = text + pos;
            pos = eol + 1;
            if (*s == '\0') {
                rc = error_set(err, PLANNER_E_INPUT, paths[f], line_no, 1, NULL,
                               "empty line in a sweep output");
                goto cleanup;
            }
            if (strcmp(s, header) == 0) {
                if (line_no != 1) {
                    rc = error_set(err, PLANNER_E_INPUT, paths[f], line_no, 1, NULL,
                                   "CSV header in the middle of the file");
                    goto cleanup;
                }
                fmt = file_fmt = 1;
                if (format != 0 && format != fmt) {
                    rc = error_set(err, PLANNER_E_INPUT, paths[f], line_no, 1, NULL,
                                   "CSV mixed with JSON Lines shards");
                    goto cleanup;
                }
                format = fmt;
                continue;
            }
            /* a file's first line sets its format; later lines are checked in it */
            fmt = file_fmt != 0 ? file_fmt : *s == '{' ? 2 : 1;
            file_fmt = fmt;
            if (fmt == 1 && line_no == 1) {
                rc = error_set(err, PLANNER_E_INPUT, paths[f], 1, 1, NULL,
                               "not a sweep output: expected the CSV header of this planner "
                               "version or JSON Lines");
                goto cleanup;
            }
            if (format != 0 && format != fmt) {
                rc = error_set(err, PLANNER_E_INPUT, paths[f], line_no, 1, NULL,
                               "CSV mixed with JSON Lines shards");
                goto cleanup;
            }
            format = fmt;
            int col = 1;
            char why[160];
            if ((fmt == 1 ? csv_check(&shape, s, &pt, &pts, &col, why, sizeof why)
                          : jsonl_check(&shape, s, &pt, &pts, why, sizeof why)) != 0) {
                rc = error_set(err, PLANNER_E_INPUT, paths[f], line_no, col, NULL,
                               "not a sweep line: %s", why);
                goto cleanup;
            }
            if (pts < 1 || pts > SWEEP_MAX_POINTS || pt >= pts) {
                rc = error_set(err, PLANNER_E_INPUT, paths[f], line_no, 1, NULL,
                               "not a sweep line: point %ld of %ld points", pt, pts);
                goto cleanup;
            }
            if (points < 0) {
                points = pts;
                points_file = paths[f];
                points_line = line_no;
            } else if (pts != points) {
                rc = error_set(err, PLANNER_E_INPUT, paths[f], line_no, 1, NULL,
                               "line of a grid of %ld points, but %s:%d is of a grid of %ld: "
                               "shards of different sweeps", pts, points_file, points_line,
                               points);
                goto cleanup;
            }
            if (n == cap) {
                long ncap = cap > 0 ? cap * 2 : 256;
                merge_line *nl = pl_realloc(lines, (size_t)ncap * sizeof *nl);
                if (nl == NULL) {
                    rc = error_oom(err);
                    goto cleanup;
                }
                lines = nl;
                cap = ncap;
            }
            lines[n].point = pt;
            lines[n].file = f;
            lines[n].line = line_no;
            lines[n].text = pl_strdup(s);
            if (lines[n].text == NULL) {
                rc = error_oom(err);
                goto cleanup;
            }
            n++;
        }
        pl_free(text);
        text = NULL;
    }
    if (n == 0) {
        rc = error_set(err, PLANNER_E_INPUT, n_files > 0 ? paths[0] : NULL, 0, 0, NULL,
                       "no grid points in the shard outputs");
        goto cleanup;
    }
    qsort(lines, (size_t)n, sizeof *lines, cmp_line);
    for (long i = 0; i < n; i++) {
        if (i > 0 && lines[i].point == lines[i - 1].point) {
            const merge_line *a = &lines[i - 1], *b = &lines[i];
            if (a->file > b->file || (a->file == b->file && a->line > b->line)) {
                const merge_line *t = a;
                a = b;
                b = t;
            }
            rc = error_set(err, PLANNER_E_INPUT, paths[b->file], b->line, 1, NULL,
                           "point %ld given twice (also %s:%d%s)", b->point, paths[a->file],
                           a->line, strcmp(paths[a->file], paths[b->file]) == 0
                                        ? ", the same file named twice" : "");
            goto cleanup;
        }
    }
    if (n != points) {
        long missing = 0, first = -1;
        for (long i = 0, k = 0; k < points; k++) {
            if (i < n && lines[i].point == k) {
                i++;
            } else {
                missing++;
                if (first < 0)
                    first = k;
            }
        }
        rc = error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                       "the shards hold %ld of %ld points: %ld missing, the first is point %ld "
                       "(a shard output is absent or incomplete)", n, points, missing, first);
        goto cleanup;
    }
    if (format == 1)
        fprintf(out, "%s\n", header);
    for (long i = 0; i < n; i++)
        fprintf(out, "%s\n", lines[i].text);
cleanup:
    pl_free(text);
    for (long i = 0; i < n; i++)
        pl_free(lines[i].text);
    pl_free(lines);
    return rc;
}

/* ---- running points ---------------------------------------------------------- */

typedef enum sweep_format { SWEEP_CSV, SWEEP_JSONL } sweep_format;

typedef struct sweep_run {
    sweep_grid grid;
    model **models;              /* validation loads, one per model value */
    cluster **clusters;          /* one per cluster value */
    cost_params params;
    strategy_constraints fix;
    sweep_format format;
    long shard_i, shard_n;
    long points;
    objective obj;               /* --objective */
    goodput_options goodput;     /* the time-to-train options (docs/goodput.md) */
} sweep_run;

/* One output line's figures. */
typedef struct point_row {
    const char *model, *cluster;
    char gpu[160];
    int nodes, gpus, gbs, seq;
    double intra, inter, peak;
    const char *status;          /* ok, infeasible, invalid */
    const plan *best;            /* NULL unless ok */
    goodput g;                   /* best under failures (schedule/goodput.h) */
    char reason[ERROR_MSG_MAX + 64];
} point_row;

static void csv_field(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, out);
    }
    fputc('"', out);
}

/* Rounded figures, the same text in CSV and JSON Lines. */
static double r6(double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.6g", v);
    return strtod(buf, NULL);
}

static void write_row_csv(FILE *out, long k, long points, const point_row *r)
{
    fprintf(out, "%ld,%ld,", k, points);
    csv_field(out, r->model);
    fputc(',', out);
    csv_field(out, r->cluster);
    fputc(',', out);
    csv_field(out, r->gpu);
    fprintf(out, ",%d,%d,%d,%d,%.6g,%.6g,%.6g,%s,", r->nodes, r->gpus, r->gbs, r->seq,
            r->intra, r->inter, r->peak, r->status);
    if (r->best != NULL) {
        const strategy *s = &r->best->s;
        const evaluation *e = &r->best->e;
        char v[32];
        for (int kn = 0; kn < KNOB_COUNT; kn++)   /* the knobs (model/knobs.c) */
            fprintf(out, "%s,", knob_text(s, (knob_id)kn, false, v, sizeof v));
        fprintf(out, "%.6g,%.6g,%.6g,%.6g,%.0f,", e->step_time_s, e->tokens_per_s,
                e->tokens_per_s_per_gpu, e->mfu, e->peak_memory_bytes);
        fprintf(out, "%.6g,%.6g,", r->g.ettr, r->g.goodput_tokens_per_s);
        if (r->g.have_time)
            fprintf(out, "%.6g,%.6g,%.6g,%.6g,", r->g.time_to_train_s, r->g.gpu_hours,
                    r->g.cost, r->g.energy_kwh);
        else
            fputs(",,,,", out);   /* no --tokens */
    } else {
        for (int kn = 0; kn < KNOB_COUNT + 11; kn++)   /* the knobs and 11 figures */
            fputc(',', out);
    }
    csv_field(out, r->reason);
    fputc('\n', out);
}

/* The goodput figures of a JSON Lines row (the CSV's columns). */
static int jsonl_goodput(json_t *o, const goodput *g)
{
    if (json_object_set_new(o, "ettr", json_real(r6(g->ettr))) != 0 ||
        json_object_set_new(o, "goodput_tokens_per_s", json_real(r6(g->goodput_tokens_per_s))) != 0)
        return -1;
    if (!g->have_time)   /* no --tokens: no time-to-train keys */
        return 0;
    return json_object_set_new(o, "time_to_train_s", json_real(r6(g->time_to_train_s))) != 0 ||
                   json_object_set_new(o, "gpu_hours", json_real(r6(g->gpu_hours))) != 0 ||
                   json_object_set_new(o, "cost", json_real(r6(g->cost))) != 0 ||
                   json_object_set_new(o, "energy_kwh", json_real(r6(g->energy_kwh))) != 0
               ? -1
               : 0;
}

static int write_row_jsonl(FILE *out, long k, long points, const point_row *r)
{
    json_t *o = json_pack("{s:I, s:I, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:s}",
                          "point", (json_int_t)k, "points", (json_int_t)points, "model",
                          r->model, "cluster", r->cluster, "gpu", r->gpu, "nodes", r->nodes,
                          "gpus", r->gpus, "gbs", r->gbs, "seq", r->seq, "intra_bw_scale",
                          r6(r->intra), "inter_bw_scale", r6(r->inter), "peak_scale",
                          r6(r->peak), "status", r->status);
    int rc = -1;
    if (o == NULL)
        return -1;
    if (r->best != NULL) {
        const strategy *s = &r->best->s;
        const evaluation *e = &r->best->e;
        json_t *p = json_pack("{s:f, s:f, s:f, s:f, s:I}", "step_time_s",
                              r6(e->step_time_s), "tokens_per_s", r6(e->tokens_per_s),
                              "tokens_per_s_per_gpu", r6(e->tokens_per_s_per_gpu), "mfu",
                              r6(e->mfu), "peak_memory_bytes",
                              (json_int_t)llround(e->peak_memory_bytes));
        if (p == NULL || knobs_json_set(o, s, KNOB_TP, KNOB_COUNT) != 0 ||
            json_object_update(o, p) != 0 || jsonl_goodput(o, &r->g) != 0) {
            json_decref(p);
            goto cleanup;
        }
        json_decref(p);
    }
    if (json_object_set_new(o, "reason", r->reason[0] ? json_string(r->reason) : json_null()) != 0)
        goto cleanup;
    if (json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) != 0)
        goto cleanup;
    fputc('\n', out);
    rc = 0;
cleanup:
    json_decref(o);
    return rc;
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

/* Runs point k and writes its line.  Only I/O-independent failures (out of
 * memory) end the sweep; a model or search problem of one point is an
 * "invalid" line. */
static planner_status run_point(const sweep_run *run, long k, FILE *out, planner_error *err)
{
    const sweep_grid *g = &run->grid;
    int idx[SWEEP_DIM_COUNT];
    int mi, ci;
    run_spec ov = {0};
    model *m = NULL;
    cluster pc;
    search_options opts;
    search_result res;
    point_row row;
    planner_error perr = PLANNER_ERROR_INIT;
    planner_status rc;

    memset(&res, 0, sizeof res);
    memset(&row, 0, sizeof row);
    memset(&pc, 0, sizeof pc);
    sweep_point_decode(g, k, idx);
    mi = idx[SWEEP_MODEL];
    ci = idx[SWEEP_CLUSTER];
    if (g->axis[SWEEP_GBS].n > 0)
        ov.global_batch = (int)g->axis[SWEEP_GBS].num[idx[SWEEP_GBS]];
    if (g->axis[SWEEP_SEQ].n > 0)
        ov.seq_len = (int)g->axis[SWEEP_SEQ].num[idx[SWEEP_SEQ]];
    row.model = g->axis[SWEEP_MODEL].str[mi];
    row.cluster = g->axis[SWEEP_CLUSTER].str[ci];
    row.intra = g->axis[SWEEP_INTRA_BW].n > 0 ? g->axis[SWEEP_INTRA_BW].num[idx[SWEEP_INTRA_BW]] : 1;
    row.inter = g->axis[SWEEP_INTER_BW].n > 0 ? g->axis[SWEEP_INTER_BW].num[idx[SWEEP_INTER_BW]] : 1;
    row.peak = g->axis[SWEEP_PEAK].n > 0 ? g->axis[SWEEP_PEAK].num[idx[SWEEP_PEAK]] : 1;

    rc = point_cluster(run, run->clusters[ci], idx, &pc, err);
    if (rc != PLANNER_OK)
        return rc;
    for (int i = 0; i < pc.n_groups; i++) {
        size_t len = strlen(row.gpu);
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup = dup || strcmp(pc.group[j].gpu.name, pc.group[i].gpu.name) == 0;
        if (!dup && len + strlen(pc.group[i].gpu.name) + 2 < sizeof row.gpu)
            snprintf(row.gpu + len, sizeof row.gpu - len, "%s%s", len > 0 ? "+" : "",
                     pc.group[i].gpu.name);
        row.nodes += pc.group[i].nodes;
    }
    row.gpus = cluster_total_gpus(&pc);
    row.gbs = ov.global_batch;
    row.seq = ov.seq_len;

    rc = model_for_run(&m, run->models[mi], &ov, &perr);   /* in memory: no re-read */
    if (rc == PLANNER_E_INTERNAL) {
        error_set(err, rc, perr.file, perr.line, perr.col, perr.path, "%s", perr.msg);
        goto cleanup;
    }
    if (rc != PLANNER_OK) {
        row.status = "invalid";
        snprintf(row.reason, sizeof row.reason, "%s", perr.msg);
    } else {
        row.gbs = m->global_batch;
        row.seq = m->seq_len;
        search_options_default(&opts);
        opts.top_n = 1;
        opts.fix = run->fix;
        opts.gbs = m->global_batch;
        opts.seq_len = m->seq_len;
        opts.obj = run->obj;
        opts.goodput = run->goodput;
        rc = search_run(m, &pc, &run->params, &opts, &res, &perr);
        if (rc == PLANNER_OK && res.n_top >= 1) {
            char why[320];
            row.status = "ok";
            row.best = &res.top[0];
            goodput_evaluate(m, &pc, &row.best->s, &row.best->e, &run->goodput, &row.g, why,
                             sizeof why);
        } else if (rc == PLANNER_E_INFEASIBLE) {
            row.status = "infeasible";
            snprintf(row.reason, sizeof row.reason, "%s",
                     res.advice[0] ? res.advice : "no plan fits");
        } else if (rc == PLANNER_E_INTERNAL) {
            error_set(err, rc, perr.file, perr.line, perr.col, perr.path, "%s", perr.msg);
            goto cleanup;
        } else {
            row.status = "invalid";
            snprintf(row.reason, sizeof row.reason, "%s", perr.msg);
        }
    }
    for (char *p = row.reason; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    if (run->format == SWEEP_CSV)
        write_row_csv(out, k, run->points, &row);
    else if (write_row_jsonl(out, k, run->points, &row) != 0 && !ferror(out)) {
        rc = error_oom(err);   /* a failed write is the caller's to report, with the path */
        goto cleanup;
    }
    rc = PLANNER_OK;
cleanup:
    search_result_free(&res);
    model_free(m);
    pl_free(pc.group);
    pl_free(pc.link);
    return rc;
}

/* ---- the command -------------------------------------------------------------- */

static void sweep_usage(FILE *out)
{
    fprintf(out,
        "Usage: planner sweep --model FILE --cluster FILE [AXIS VALUES]... [OPTION]...\n"
        "       planner sweep --grid FILE [OPTION]...\n"
        "       planner sweep --merge FILE... [-o FILE]\n"
        "Find the best plan at every point of a grid of what-ifs; print one line per\n"
        "point (CSV with a header, or JSON Lines), in point order.\n"
        "\n"
        "Axes (each a list 'a,b,c' or a range 'A..B', 'A..B:STEP', 'A..BxFACTOR'):\n"
        "  -m, --model FILES       model files (comma list; option may repeat)\n"
        "  -c, --cluster FILES     cluster files (comma list; option may repeat)\n"
        "      --gpu NAMES         catalog GPU replacing the GPU of every node group\n"
        "      --nodes N           node count (clusters with one node group)\n"
        "      --gbs N             global batch size in sequences\n"
        "      --seq N             sequence length\n"
        "      --intra-bw-scale F  multiply intra-node bandwidth\n"
        "      --inter-bw-scale F  multiply inter-node bandwidth (and links between groups)\n"
        "      --peak-scale F      multiply every peak FLOP/s\n"
        "      --grid FILE         axes from a file of 'key = values' lines (keys as the\n"
        "                          options above without '--', and 'fix'); options on the\n"
        "                          command line replace the file's axis\n"
        "Search and output:\n"
        "      --fix SPEC          pin knobs at every point, as for 'planner --fix'\n"
        "      --calibration FILE  cost-model constants fitted by 'planner calibrate'\n"
        "      --format csv|jsonl  output format (default csv)\n"
        "      --shard I/N         run only the points k with k %% N == I (Slurm arrays)\n"
        "      --merge FILE...     combine shard outputs into the unsharded output\n"
        "  -o, --output FILE       write to FILE (atomically) instead of standard output\n"
        "%s"
        "  -h, --help              show this help and exit\n"
        "At most %ld points per grid.\n"
        "\n%s", cli_goodput_help, SWEEP_MAX_POINTS, cli_exit_codes_help);
}

enum { OPT_GPU = 300, OPT_NODES, OPT_GBS, OPT_SEQ, OPT_INTRA, OPT_INTER, OPT_PEAK, OPT_GRID,
       OPT_FIX, OPT_CALIB, OPT_FORMAT, OPT_SHARD, OPT_MERGE };

typedef struct sweep_args {
    char *axis_text[SWEEP_DIM_COUNT];   /* owned; command-line values per axis */
    const char *grid_path, *fix, *calibration, *output;
    sweep_format format;
    bool merge, shard;
    long shard_i, shard_n;
    search_options gp;                  /* the time-to-train options and --objective */
} sweep_args;

static void sweep_args_free(sweep_args *a)
{
    for (int d = 0; d < SWEEP_DIM_COUNT; d++)
        pl_free(a->axis_text[d]);
}

/* Appends ",text" to an axis's command-line values (repeated options). */
static int append_axis(sweep_args *a, sweep_dim d, const char *text)
{
    size_t old = a->axis_text[d] != NULL ? strlen(a->axis_text[d]) : 0;
    char *n = pl_realloc(a->axis_text[d], old + strlen(text) + 2);
    if (n == NULL)
        return -1;
    if (old > 0)
        n[old++] = ',';
    memcpy(n + old, text, strlen(text) + 1);
    a->axis_text[d] = n;
    return 0;
}

static int parse_sweep_args(int argc, char **argv, sweep_args *a)
{
    static const struct option longopts[] = {
        {"model", required_argument, NULL, 'm'},
        {"cluster", required_argument, NULL, 'c'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {"gpu", required_argument, NULL, OPT_GPU},
        {"nodes", required_argument, NULL, OPT_NODES},
        {"gbs", required_argument, NULL, OPT_GBS},
        {"seq", required_argument, NULL, OPT_SEQ},
        {"intra-bw-scale", required_argument, NULL, OPT_INTRA},
        {"inter-bw-scale", required_argument, NULL, OPT_INTER},
        {"peak-scale", required_argument, NULL, OPT_PEAK},
        {"grid", required_argument, NULL, OPT_GRID},
        {"fix", required_argument, NULL, OPT_FIX},
        {"calibration", required_argument, NULL, OPT_CALIB},
        {"format", required_argument, NULL, OPT_FORMAT},
        {"shard", required_argument, NULL, OPT_SHARD},
        {"merge", no_argument, NULL, OPT_MERGE},
        CLI_GOODPUT_LONGOPTS,
        {NULL, 0, NULL, 0}};
    int ch, gp;
    sweep_dim d;

    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":m:c:o:h", longopts, NULL)) != -1) {
        switch (ch) {
        case 'm': d = SWEEP_MODEL; goto axis;
        case 'c': d = SWEEP_CLUSTER; goto axis;
        case OPT_GPU: d = SWEEP_GPU; goto axis;
        case OPT_NODES: d = SWEEP_NODES; goto axis;
        case OPT_GBS: d = SWEEP_GBS; goto axis;
        case OPT_SEQ: d = SWEEP_SEQ; goto axis;
        case OPT_INTRA: d = SWEEP_INTRA_BW; goto axis;
        case OPT_INTER: d = SWEEP_INTER_BW; goto axis;
        case OPT_PEAK: d = SWEEP_PEAK;
        axis:
            if (append_axis(a, d, optarg) != 0) {
                fprintf(stderr, "planner: out of memory\n");
                return PLANNER_E_INTERNAL;
            }
            break;
        case 'o': a->output = optarg; break;
        case 'h': sweep_usage(stdout); return -1;
        case OPT_GRID: a->grid_path = optarg; break;
        case OPT_FIX: a->fix = optarg; break;
        case OPT_CALIB: a->calibration = optarg; break;
        case OPT_FORMAT:
            if (strcmp(optarg, "csv") == 0)
                a->format = SWEEP_CSV;
            else if (strcmp(optarg, "jsonl") == 0)
                a->format = SWEEP_JSONL;
            else
                return cli_usage_error("sweep ", "--format: expected csv or jsonl, got '%s'",
                                       optarg);
            break;
        case OPT_SHARD:
            if (sweep_shard_parse(optarg, &a->shard_i, &a->shard_n) != 0)
                return cli_usage_error("sweep ", "--shard: expected I/N with 0 <= I < N <= %ld, "
                                       "got '%s'", SWEEP_MAX_POINTS, optarg);
            a->shard = true;
            break;
        case OPT_MERGE: a->merge = true; break;
        case ':':
            return cli_usage_error("sweep ", "option '%s' needs an argument", argv[optind - 1]);
        default:        /* the time-to-train options (tool/cli_goodput.h) */
            if ((gp = cli_goodput_option(ch, optarg, &a->gp)) == 0)
                break;
            if (gp != 1)
                return gp;
            return cli_usage_error("sweep ", "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (a->merge) {
        bool other = a->grid_path || a->fix || a->calibration || a->shard;
        for (int k = 0; k < SWEEP_DIM_COUNT; k++)
            other = other || a->axis_text[k] != NULL;
        if (other)
            return cli_usage_error("sweep ", "--merge takes only shard files and -o FILE");
        if (optind >= argc)
            return cli_usage_error("sweep ", "--merge needs at least one shard file");
        return 0;
    }
    if (optind < argc)
        return cli_usage_error("sweep ", "unexpected argument '%s'", argv[optind]);
    return 0;
}

/* The output of a sweep or a merge: an output set of one output, streamed
 * (lines appear as points finish), never one of the run's inputs. */
static planner_status sweep_output_add(output_set *os, const sweep_args *a, int *index,
                                       planner_error *err)
{
    output_set_init(os);
    return output_set_add(os, a->output != NULL ? a->output : "-",
                          a->output != NULL ? "-o" : "standard output", OUTPUT_STREAM, index,
                          err);
}

static int cmd_merge(const sweep_args *a, int n_files, char *const *paths)
{
    planner_error err = PLANNER_ERROR_INIT;
    output_set os;
    int out = 0;
    planner_status rc = sweep_output_add(&os, a, &out, &err);
    for (int i = 0; i < n_files && rc == PLANNER_OK; i++)
        rc = output_set_input(&os, paths[i], "the shard", &err);
    /* sweep_merge writes nothing unless the shards are whole */
    if (rc == PLANNER_OK && (rc = output_set_open(&os, out, &err)) == PLANNER_OK &&
        (rc = sweep_merge(os.out[out].fp, n_files, paths, &err)) == PLANNER_OK)
        rc = output_set_commit(&os, &err);
    output_set_free(&os);
    if (err.status != PLANNER_OK)
        error_print(&err, stderr);
    return rc;
}

/* Registers the sweep's input files (grid, calibration, models, clusters) in os. */
static planner_status sweep_inputs_add(output_set *os, const sweep_args *a,
                                       const sweep_grid *g, planner_error *err)
{
    planner_status rc;
    if ((rc = output_set_input(os, a->grid_path, "--grid", err)) != PLANNER_OK ||
        (rc = output_set_input(os, a->calibration, "--calibration", err)) != PLANNER_OK)
        return rc;
    for (int i = 0; i < g->axis[SWEEP_MODEL].n; i++)
        if ((rc = output_set_input(os, g->axis[SWEEP_MODEL].str[i], "--model", err)) !=
            PLANNER_OK)
            return rc;
    for (int i = 0; i < g->axis[SWEEP_CLUSTER].n; i++)
        if ((rc = output_set_input(os, g->axis[SWEEP_CLUSTER].str[i], "--cluster", err)) !=
            PLANNER_OK)
            return rc;
    return PLANNER_OK;
}

/* Loads every model and cluster once (fail fast) and checks the node axis. */
static planner_status validate_inputs(sweep_run *run, planner_error *err)
{
    const sweep_grid *g = &run->grid;
    planner_status rc;
    int nm = g->axis[SWEEP_MODEL].n, nc = g->axis[SWEEP_CLUSTER].n;
    run->models = pl_calloc((size_t)nm, sizeof *run->models);
    run->clusters = pl_calloc((size_t)nc, sizeof *run->clusters);
    if (run->models == NULL || run->clusters == NULL)
        return error_oom(err);
    for (int i = 0; i < nm; i++)
        if ((rc = model_load(g->axis[SWEEP_MODEL].str[i], NULL, &run->models[i], err)) !=
            PLANNER_OK)
            return rc;
    for (int i = 0; i < nc; i++) {
        if ((rc = cluster_load(g->axis[SWEEP_CLUSTER].str[i], &run->clusters[i], err)) !=
            PLANNER_OK)
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

int cmd_sweep(int argc, char **argv)
{
    sweep_args a;
    sweep_run run;
    planner_error err = PLANNER_ERROR_INIT;
    planner_status rc;
    output_set os;
    int out = 0;
    FILE *fp;
    progress pr;
    char msg[512];

    memset(&a, 0, sizeof a);
    memset(&run, 0, sizeof run);
    output_set_init(&os);
    int parsed = parse_sweep_args(argc, argv, &a);   /* -1: --help done */
    if (parsed != 0) {
        sweep_args_free(&a);
        return parsed > 0 ? parsed : PLANNER_OK;
    }
    if (a.merge) {
        rc = cmd_merge(&a, argc - optind, argv + optind);
        sweep_args_free(&a);
        return rc;
    }

    /* the grid: file first, then the command line replaces whole axes */
    if (a.grid_path != NULL &&
        (rc = sweep_grid_parse_file(a.grid_path, &run.grid, &err)) != PLANNER_OK)
        goto cleanup;
    for (int d = 0; d < SWEEP_DIM_COUNT; d++) {
        int off;
        if (a.axis_text[d] == NULL)
            continue;
        sweep_axis_free(&run.grid.axis[d]);
        if (sweep_axis_parse((sweep_dim)d, a.axis_text[d], &run.grid.axis[d], msg, sizeof msg,
                             &off) != 0) {
            rc = cli_usage_error("sweep ", "--%s", msg);
            goto cleanup_quiet;
        }
    }
    if (a.fix != NULL) {
        pl_free(run.grid.fix);
        run.grid.fix = pl_strdup(a.fix);
        if (run.grid.fix == NULL) {
            rc = error_oom(&err);
            goto cleanup;
        }
    }
    run.fix = (strategy_constraints)STRATEGY_CONSTRAINTS_INIT;
    if (run.grid.fix != NULL && constraints_parse(run.grid.fix, &run.fix, msg, sizeof msg) != 0) {
        rc = cli_usage_error("sweep ", "--fix: %s", msg);
        goto cleanup_quiet;
    }
    if (run.grid.axis[SWEEP_MODEL].n == 0 || run.grid.axis[SWEEP_CLUSTER].n == 0) {
        rc = cli_usage_error("sweep ", "missing %s (give --%s FILE or a grid file with '%s = "
                             "FILE')",
                             run.grid.axis[SWEEP_MODEL].n == 0 ? "the model" : "the cluster",
                             run.grid.axis[SWEEP_MODEL].n == 0 ? "model" : "cluster",
                             run.grid.axis[SWEEP_MODEL].n == 0 ? "model" : "cluster");
        goto cleanup_quiet;
    }
    if (sweep_grid_points(&run.grid) > (double)SWEEP_MAX_POINTS) {
        rc = cli_usage_error("sweep ", "the grid has %.0f points, more than the limit of %ld",
                             sweep_grid_points(&run.grid), SWEEP_MAX_POINTS);
        goto cleanup_quiet;
    }
    run.points = (long)sweep_grid_points(&run.grid);
    run.format = a.format;
    run.obj = a.gp.obj;
    run.goodput = a.gp.goodput;
    run.shard_i = a.shard ? a.shard_i : 0;
    run.shard_n = a.shard ? a.shard_n : 1;

    cost_params_default(&run.params);
    if (a.calibration != NULL &&
        (rc = calibration_load(&run.params, a.calibration, &err)) != PLANNER_OK)
        goto cleanup;
    if ((rc = validate_inputs(&run, &err)) != PLANNER_OK)
        goto cleanup;

    if ((rc = sweep_output_add(&os, &a, &out, &err)) != PLANNER_OK ||
        (rc = sweep_inputs_add(&os, &a, &run.grid, &err)) != PLANNER_OK ||
        (rc = output_set_open(&os, out, &err)) != PLANNER_OK)
        goto cleanup;
    fp = os.out[out].fp;
    if (run.format == SWEEP_CSV) {
        char header[SWEEP_CSV_HEADER_MAX];
        fprintf(fp, "%s\n", sweep_csv_header(header, sizeof header));
    }
    progress_start(&pr, "planner: sweep, points", progress_stderr_is_tty());
    {
        long todo = run.points > run.shard_i ? (run.points - run.shard_i + run.shard_n - 1) /
                                                   run.shard_n : 0;
        long done = 0;
        for (long k = run.shard_i; k < run.points; k += run.shard_n) {
            if ((rc = run_point(&run, k, fp, &err)) != PLANNER_OK ||
                (rc = output_set_stream_error(&os, out, &err)) != PLANNER_OK)
                break;
            progress_update(&pr, ++done, todo);
        }
    }
    progress_finish(&pr);
    if (rc == PLANNER_OK)
        rc = output_set_commit(&os, &err);

cleanup:
    if (err.status != PLANNER_OK)
        error_print(&err, stderr);
cleanup_quiet:
    output_set_free(&os);
    for (int i = 0; run.models != NULL && i < run.grid.axis[SWEEP_MODEL].n; i++)
        model_free(run.models[i]);
    for (int i = 0; run.clusters != NULL && i < run.grid.axis[SWEEP_CLUSTER].n; i++)
        cluster_free(run.clusters[i]);
    pl_free(run.models);
    pl_free(run.clusters);
    sweep_grid_free(&run.grid);
    sweep_args_free(&a);
    return rc;
}
