/* sweep_grid.c: the grid of `planner sweep` (search/sweep_grid.h): axis
 * values (lists and ranges, checked against each axis's limits and the GPU
 * catalog, no value twice), grid files of "key = values" lines, and the
 * numbering of points (mixed radix, the first axis slowest).
 *
 * Invariants: every value of an axis is distinct (a repeat would only repeat
 * points); numbers are kept as printed ("%.0f" integers, "%.6g" reals), so a
 * point's line shows the value it ran with; an error names the bad value's
 * FILE:LINE:COL in a grid file, its offset in a command-line list.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/fileio.h"
#include "base/suggest.h"
#include "inputs/catalog.h"
#include "model/knobs.h"
#include "search/sweep_grid.h"

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

/* A bad value: PLANNER_E_INPUT with its message in *err. */
#define BAD(...) return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, __VA_ARGS__)

/* Appends one value: PLANNER_OK, or an error (too many values, out of
 * memory). */
static planner_status axis_push(sweep_axis *a, const char *s, double v, planner_error *err)
{
    size_t cap_str = a->cap, cap_num = a->cap;   /* one capacity for both arrays */
    char **ns;
    double *nn;
    if (a->n >= SWEEP_MAX_VALUES)
        BAD("more than %d values", SWEEP_MAX_VALUES);
    /* doubling: a 10,000-value range is not 10,000 reallocations */
    if ((ns = pl_grow(a->str, &cap_str, (size_t)a->n + 1, sizeof *ns, 8)) == NULL)
        return error_oom(err);
    a->str = ns;
    if ((nn = pl_grow(a->num, &cap_num, (size_t)a->n + 1, sizeof *nn, 8)) == NULL)
        return error_oom(err);
    a->num = nn;
    a->cap = cap_num;
    a->str[a->n] = pl_strdup(s);
    if (a->str[a->n] == NULL)
        return error_oom(err);
    a->num[a->n++] = v;
    return PLANNER_OK;
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

/* Dimension d's limits as a message shows them, "LO..HI", in its values'
 * format (an integer axis in whole digits: 1..1048576, not 1..1.04858e+06). */
static void fmt_limits(sweep_dim d, char *buf, size_t size)
{
    double lo, hi;
    char a[32], b[32];
    dim_limits(d, &lo, &hi);
    fmt_num(lo, dim_type(d), a, sizeof a);
    fmt_num(hi, dim_type(d), b, sizeof b);
    snprintf(buf, size, "%s..%s", a, b);
}

/* A range token "A..B", "A..B:S" or "A..BxF" (dots: its ".."), values pushed
 * onto out. */
static planner_status parse_range(sweep_axis *out, sweep_dim d, const char *tok,
                                  const char *dots, planner_error *err)
{
    axis_type t = dim_type(d);
    const char *key = dim_keys[d];
    double lo, hi;
    char buf[64], a[64], b[64], s[64] = "", lim[72];
    char kind = 0;
    size_t la = (size_t)(dots - tok);
    const char *rest = dots + 2, *sep = strpbrk(rest, ":x");
    double va, vb, vs = 1;
    planner_status rc;
    dim_limits(d, &lo, &hi);
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
        fmt_limits(d, lim, sizeof lim);
        BAD("%s: range '%s' must run upwards within %s", key, tok, lim);
    }
    if ((kind == 'x' && !(vs > 1)) || (kind != 'x' && !(vs > 0)))
        BAD("%s: range '%s' needs a %s", key, tok, kind == 'x' ? "factor > 1" : "step > 0");
    if (kind != 'x' && t == AXIS_REAL && kind == 0)
        BAD("%s: range '%s' of real values needs ':STEP' or 'xFACTOR'", key, tok);
    for (long i = 0;; i++) {
        double v = kind == 'x' ? va * pow(vs, (double)i) : va + vs * (double)i;
        if (t == AXIS_INT)
            v = round(v);
        if (v > vb * (1 + 1e-9))
            break;
        if (i >= SWEEP_MAX_VALUES)
            BAD("%s: range '%s' has more than %d values", key, tok, SWEEP_MAX_VALUES);
        fmt_num(v, t, buf, sizeof buf);
        if ((rc = axis_push(out, buf, v, err)) != PLANNER_OK)
            return rc;
    }
    return PLANNER_OK;
bad_range:
    BAD("%s: bad range '%s' (expected A..B, A..B:STEP or A..BxFACTOR)", key, tok);
}

/* One comma-separated token (already trimmed, NUL-terminated). */
static planner_status parse_token(sweep_axis *out, sweep_dim d, const char *tok,
                                  planner_error *err)
{
    axis_type t = dim_type(d);
    const char *key = dim_keys[d];
    double lo, hi;
    char buf[64], lim[72];

    if (*tok == '\0')
        BAD("%s: empty value", key);
    if (t == AXIS_TEXT)
        return axis_push(out, tok, 0, err);
    if (t == AXIS_GPU) {
        const gpu_spec *g = catalog_find(tok);
        if (g == NULL) {
            const char *names[64];
            size_t n = catalog_count() < 64 ? catalog_count() : 64;
            char hint[128];
            for (size_t i = 0; i < n; i++)
                names[i] = catalog_at(i)->name;
            suggest_format(tok, names, n, hint, sizeof hint);
            BAD("gpu: unknown GPU '%s'%s", tok, hint);
        }
        return axis_push(out, g->name, 0, err);
    }
    dim_limits(d, &lo, &hi);
    const char *dots = strstr(tok, "..");
    if (dots == NULL) {
        double v;
        if (parse_number(tok, t, &v) != 0 || v < lo || v > hi) {
            fmt_limits(d, lim, sizeof lim);
            BAD("%s: expected %s in %s, got '%s'", key, t == AXIS_INT ? "an integer" : "a number",
                lim, tok);
        }
        fmt_num(v, t, buf, sizeof buf);
        return axis_push(out, buf, v, err);
    }
    return parse_range(out, d, tok, dots, err);
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

planner_status sweep_axis_parse(sweep_axis *out, int *bad_offset, sweep_dim d,
                                const char *text, planner_error *err)
{
    size_t len = strlen(text);
    char *copy;
    int *token_at = NULL;   /* offset in text of the token each value came from */
    int rep;
    planner_status rc = PLANNER_OK;
    *bad_offset = 0;
    if (d < 0 || d >= SWEEP_DIM_COUNT)
        BAD("no such axis");
    copy = pl_malloc(len + 1);
    token_at = pl_malloc(SWEEP_MAX_VALUES * sizeof *token_at);
    if (copy == NULL || token_at == NULL) {
        rc = error_oom(err);
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
        if ((rc = parse_token(out, d, copy, err)) != PLANNER_OK) {
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
        rc = error_oom(err);
    } else if (rep >= 0) {
        rc = error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, "%s: value '%s' given twice",
                       dim_keys[d], out->str[rep]);
        *bad_offset = token_at[rep];
    }
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

/* ---- grid files -------------------------------------------------------------- */

#define GRID_FILE_MAX_BYTES (1L << 20)

/* The index of a grid file key into *out: an axis, or SWEEP_DIM_COUNT for
 * "fix"; an unknown key is an error at `col`. */
static planner_status grid_key(int *out, const char *key, const char *name, int line_no,
                               int col, planner_error *err)
{
    const char *keys[SWEEP_DIM_COUNT + 1];
    char hint[128];
    for (int d = 0; d <= SWEEP_DIM_COUNT; d++)
        if (strcmp(key, d < SWEEP_DIM_COUNT ? dim_keys[d] : "fix") == 0) {
            *out = d;
            return PLANNER_OK;
        }
    for (int k = 0; k < SWEEP_DIM_COUNT; k++)
        keys[k] = dim_keys[k];
    keys[SWEEP_DIM_COUNT] = "fix";
    suggest_format(key, keys, SWEEP_DIM_COUNT + 1, hint, sizeof hint);
    return error_set(err, PLANNER_E_INPUT, name, line_no, col, NULL,
                     "unknown key '%s'%s (known: model, cluster, gpu, nodes, gbs, seq, "
                     "intra-bw-scale, inter-bw-scale, peak-scale, fix)", key, hint);
}

/* The value of "fix = SPEC": checked as --fix checks it, kept as text. */
static planner_status grid_fix(char *val, const char *name, int line_no, int col,
                               sweep_grid *g, planner_error *err)
{
    strategy_constraints probe = STRATEGY_CONSTRAINTS_INIT;
    planner_error perr = PLANNER_ERROR_INIT;
    size_t vl = strlen(val);
    while (vl > 0 && isspace((unsigned char)val[vl - 1]))
        val[--vl] = '\0';
    if (constraints_parse(&probe, val, &perr) != PLANNER_OK)
        return error_set(err, PLANNER_E_INPUT, name, line_no, col, NULL, "fix: %.511s", perr.msg);
    g->fix = pl_strdup(val);
    return g->fix == NULL ? error_oom(err) : PLANNER_OK;
}

/* One line of a grid file (NUL-terminated copy, n bytes, without its line
 * break); seen_line[d] is the line that gave key d, 0 if none yet. */
static planner_status grid_line(char *line, size_t n, const char *name, int line_no,
                                int seen_line[SWEEP_DIM_COUNT + 1], sweep_grid *g,
                                planner_error *err)
{
    planner_error perr = PLANNER_ERROR_INIT;
    char *eq, *key, *val;
    int d = 0, off;
    planner_status rc;
    if (memchr(line, '\0', n) != NULL)
        return error_set(err, PLANNER_E_INPUT, name, line_no, 1, NULL,
                         "NUL byte in a grid file");
    key = line;
    while (isspace((unsigned char)*key))
        key++;
    if (*key == '\0' || *key == '#')
        return PLANNER_OK;
    eq = strchr(key, '=');
    if (eq == NULL)
        return error_set(err, PLANNER_E_INPUT, name, line_no, (int)(key - line) + 1, NULL,
                         "expected 'key = values'");
    val = eq + 1;
    *eq = '\0';
    for (char *e = eq; e > key && isspace((unsigned char)e[-1]); e--)
        e[-1] = '\0';
    while (isspace((unsigned char)*val))
        val++;
    if ((rc = grid_key(&d, key, name, line_no, (int)(key - line) + 1, err)) != PLANNER_OK)
        return rc;
    if (seen_line[d] != 0)
        return error_set(err, PLANNER_E_INPUT, name, line_no, (int)(key - line) + 1, NULL,
                         "'%s' given twice (first on line %d); list the values on one line",
                         key, seen_line[d]);
    seen_line[d] = line_no;
    if (*val == '\0')
        return error_set(err, PLANNER_E_INPUT, name, line_no, (int)(val - line) + 1, NULL,
                         "%s: no value", key);
    if (d == SWEEP_DIM_COUNT)
        return grid_fix(val, name, line_no, (int)(val - line) + 1, g, err);
    if (sweep_axis_parse(&g->axis[d], &off, (sweep_dim)d, val, &perr) != PLANNER_OK)
        return error_set(err, perr.status, name, line_no, (int)(val - line) + off + 1, NULL,
                         "%.511s", perr.msg);
    return PLANNER_OK;
}

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
    for (size_t pos = 0; pos < len && rc == PLANNER_OK;) {
        size_t eol = pos, n;
        while (eol < len && text[eol] != '\n')
            eol++;
        n = eol - pos;
        if (n > 0 && text[pos + n - 1] == '\r')
            n--;
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos = eol + 1;
        rc = grid_line(line, n, name, ++line_no, seen_line, g, err);
    }
    pl_free(line);
    return rc;
}

planner_status sweep_grid_parse_file(const char *path, sweep_grid *g, planner_error *err)
{
    char *text = NULL;
    size_t len = 0;
    planner_status rc = file_read_all(&text, &len, path, GRID_FILE_MAX_BYTES, err);
    if (rc != PLANNER_OK)
        return rc;
    rc = sweep_grid_parse_buffer(text, len, path, g, err);
    pl_free(text);
    return rc;
}
