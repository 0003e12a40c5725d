/* sweep_merge.c: `planner sweep --merge` (out/sweep_merge.h): shard outputs
 * verified line by line and put back in point order.
 *
 * Invariants: a merge writes nothing unless every shard is whole (complete
 * lines, each of the header's shape) and together they hold each point of
 * one grid once; lines are copied byte for byte, so the merge of a sharded
 * sweep is byte-identical to the unsharded sweep (each line depends on its
 * point only: search/sweep_point.h).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/fileio.h"
#include "out/sweep_merge.h"
#include "out/sweep_rows.h"
#include "search/sweep_grid.h"

typedef struct merge_line {
    long point;
    char *text;          /* owned, without the newline */
    int file, line;
} merge_line;

/* Verifying a shard line.  The line's shape is the header's (one fact: the
 * columns are sweep_csv_header's, in CSV and as JSON Lines keys): every
 * column, or for a point without a plan (status infeasible or invalid) every
 * column but the plan's (the knobs and figures between status and reason,
 * empty in CSV, absent in JSON); point and points are plain decimal
 * integers; status is a known one. */

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

/* A line that is not a sweep line: PLANNER_E_INPUT with the reason and the
 * 1-based column it concerns in *err (no file or line: merge_add's). */
static planner_status line_fail(planner_error *err, int col, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static planner_status line_fail(planner_error *err, int col, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, PLANNER_E_INPUT, NULL, 0, col, NULL, fmt, ap);
    va_end(ap);
    return PLANNER_E_INPUT;
}

/* Checks a CSV line (sweep's quoting: a field with , " or a line break is
 * "..." with "" for a quote).  PLANNER_OK, or line_fail's error. */
static planner_status csv_check(const line_shape *shape, const char *s, long *point,
                                long *points, planner_error *err)
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
            if (*p == '\0')
                return line_fail(err, (int)(start - s) + 1,
                                 "a quoted field without its closing quote (cut short?)");
            p++;
        } else {
            p += strcspn(p, ",\"");
            if (*p == '"')
                return line_fail(err, (int)(p - s) + 1, "a quote inside an unquoted field");
        }
        if (*p != ',' && *p != '\0')
            return line_fail(err, (int)(p - s) + 1, "text after a quoted field");
        if (nf < LINE_MAX_COLS) {
            f[nf] = start;
            len[nf] = (size_t)(p - start);
        }
        nf++;
        if (*p == '\0')
            break;
        p++;
    }
    if (nf != sh.cols)
        return line_fail(err, 1, "%d fields, the header has %d", nf, sh.cols);
    if (parse_index(f[0], len[0], point) != 0 || parse_index(f[1], len[1], points) != 0) {
        int bad = parse_index(f[0], len[0], point) != 0 ? 0 : 1;
        return line_fail(err, (int)(f[bad] - s) + 1, "%s: expected an integer, got '%.*s'",
                         bad ? "points" : "point", (int)(len[bad] < 40 ? len[bad] : 40), f[bad]);
    }
    if (!known_status(f[sh.status], len[sh.status]))
        return line_fail(err, (int)(f[sh.status] - s) + 1,
                         "status: expected ok, infeasible or invalid");
    bool ok = len[sh.status] == 2;
    bool train = ok && sh.train_first < sh.plan_end && len[sh.train_first] > 0;
    for (int c = sh.plan_first; c < sh.plan_end; c++)
        if ((len[c] > 0) != (c < sh.train_first ? ok : train))
            return line_fail(err, (int)(f[c] - s) + 1, "%s: %s",
                             ok ? "a plan column empty on an ok line"
                                : "a plan column set on a line without a plan",
                             "not a line of this planner version");
    return PLANNER_OK;
}

/* Checks a JSON Lines line: one object whose keys are header columns, all of
 * them (ok) or all but the plan's.  PLANNER_OK, or line_fail's error (column
 * 1). */
static planner_status jsonl_check(const line_shape *shape, const char *s, long *point,
                                  long *points, planner_error *err)
{
    json_error_t jerr;
    json_t *o = json_loads(s, JSON_REJECT_DUPLICATES, &jerr);
    const line_shape sh = *shape;
    json_t *a, *b, *st;
    const char *key;
    json_t *val;
    planner_status rc;
    int n = 0, want;
    if (!json_is_object(o)) {
        rc = line_fail(err, 1, "not a JSON object: %.100s",
                       o == NULL ? jerr.text : "another value");
        goto cleanup;
    }
    a = json_object_get(o, "point");
    b = json_object_get(o, "points");
    st = json_object_get(o, "status");
    if (!json_is_integer(a) || !json_is_integer(b)) {
        rc = line_fail(err, 1, "%s: expected an integer", json_is_integer(a) ? "points" : "point");
        goto cleanup;
    }
    if (!json_is_string(st) || !known_status(json_string_value(st), json_string_length(st))) {
        rc = line_fail(err, 1, "status: expected ok, infeasible or invalid");
        goto cleanup;
    }
    json_object_foreach(o, key, val) {
        if (header_column(sh.header, key, strlen(key)) < 0) {
            rc = line_fail(err, 1, "unknown field '%.40s'", key);
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
        rc = line_fail(err, 1, "%d fields, a line with status %s has %d", n,
                       json_string_value(st), want);
        goto cleanup;
    }
    *point = (long)json_integer_value(a);
    *points = (long)json_integer_value(b);
    rc = PLANNER_OK;
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

/* What the merge has read so far: the lines, in the order read, the grid
 * size and where it was first seen, the format (0 none yet, 1 CSV, 2 JSONL). */
typedef struct merge_state {
    const line_shape *shape;
    merge_line *lines;
    long n, points;
    size_t cap;                 /* lines allocated */
    int format;
    const char *points_file;
    int points_line;
} merge_state;

/* The format of a line (1 CSV, 2 JSONL): the header or the file's first line
 * sets it (*file_fmt); every shard must be in the same one.  *is_header:
 * the line is the CSV header, nothing more to check. */
static planner_status line_format(merge_state *st, int *file_fmt, const char *s,
                                  const char *path, int line_no, bool *is_header,
                                  planner_error *err)
{
    int fmt;
    *is_header = strcmp(s, st->shape->header) == 0;
    if (*is_header && line_no != 1)
        return error_set(err, PLANNER_E_INPUT, path, line_no, 1, NULL,
                         "CSV header in the middle of the file");
    /* a file's first line sets its format; later lines are checked in it */
    fmt = *is_header ? 1 : *file_fmt != 0 ? *file_fmt : *s == '{' ? 2 : 1;
    *file_fmt = fmt;
    if (!*is_header && fmt == 1 && line_no == 1)
        return error_set(err, PLANNER_E_INPUT, path, 1, 1, NULL,
                         "not a sweep output: expected the CSV header of this planner "
                         "version or JSON Lines");
    if (st->format != 0 && st->format != fmt)
        return error_set(err, PLANNER_E_INPUT, path, line_no, 1, NULL,
                         "CSV mixed with JSON Lines shards");
    st->format = fmt;
    return PLANNER_OK;
}

/* Checks one data line of shard f and keeps it. */
static planner_status merge_add(merge_state *st, int fmt, const char *s, int f,
                                const char *path, int line_no, planner_error *err)
{
    long pt = 0, pts = 0;
    planner_error why = PLANNER_ERROR_INIT;
    if ((fmt == 1 ? csv_check(st->shape, s, &pt, &pts, &why)
                  : jsonl_check(st->shape, s, &pt, &pts, &why)) != PLANNER_OK)
        return error_set(err, PLANNER_E_INPUT, path, line_no, why.col, NULL,
                         "not a sweep line: %.159s", why.msg);
    if (pts < 1 || pts > SWEEP_MAX_POINTS || pt >= pts)
        return error_set(err, PLANNER_E_INPUT, path, line_no, 1, NULL,
                         "not a sweep line: point %ld of %ld points", pt, pts);
    if (st->points < 0) {
        st->points = pts;
        st->points_file = path;
        st->points_line = line_no;
    } else if (pts != st->points) {
        return error_set(err, PLANNER_E_INPUT, path, line_no, 1, NULL,
                         "line of a grid of %ld points, but %s:%d is of a grid of %ld: "
                         "shards of different sweeps", pts, st->points_file, st->points_line,
                         st->points);
    }
    merge_line *nl = pl_grow(st->lines, &st->cap, (size_t)st->n + 1, sizeof *nl, 256);
    if (nl == NULL)
        return error_oom(err);
    st->lines = nl;
    st->lines[st->n] = (merge_line){pt, pl_strdup(s), f, line_no};
    if (st->lines[st->n].text == NULL)
        return error_oom(err);
    st->n++;
    return PLANNER_OK;
}

/* Reads and checks shard f (text: its bytes, modified in place). */
static planner_status merge_shard(merge_state *st, int f, const char *path, char *text,
                                  size_t len, planner_error *err)
{
    size_t pos = 0;
    int line_no = 0, file_fmt = 0;   /* 1 CSV, 2 JSONL */
    bool is_header;
    planner_status rc = shard_check_bytes(path, text, len, err);
    while (rc == PLANNER_OK && pos < len) {
        size_t eol = pos;
        while (eol < len && text[eol] != '\n')
            eol++;
        text[eol] = '\0';
        line_no++;
        const char *s = text + pos;
        pos = eol + 1;
        if (*s == '\0')
            return error_set(err, PLANNER_E_INPUT, path, line_no, 1, NULL,
                             "empty line in a sweep output");
        rc = line_format(st, &file_fmt, s, path, line_no, &is_header, err);
        if (rc == PLANNER_OK && !is_header)
            rc = merge_add(st, file_fmt, s, f, path, line_no, err);
    }
    return rc;
}

/* The sorted lines hold every point of the grid exactly once. */
static planner_status merge_complete(const merge_state *st, char *const *paths,
                                     planner_error *err)
{
    const merge_line *lines = st->lines;
    long n = st->n, missing = 0, first = -1;
    for (long i = 1; i < n; i++) {
        if (lines[i].point == lines[i - 1].point) {
            const merge_line *a = &lines[i - 1], *b = &lines[i];
            if (a->file > b->file || (a->file == b->file && a->line > b->line)) {
                const merge_line *t = a;
                a = b;
                b = t;
            }
            return error_set(err, PLANNER_E_INPUT, paths[b->file], b->line, 1, NULL,
                             "point %ld given twice (also %s:%d%s)", b->point, paths[a->file],
                             a->line, strcmp(paths[a->file], paths[b->file]) == 0
                                          ? ", the same file named twice" : "");
        }
    }
    if (n == st->points)
        return PLANNER_OK;
    for (long i = 0, k = 0; k < st->points; k++) {
        if (i < n && lines[i].point == k) {
            i++;
        } else {
            missing++;
            if (first < 0)
                first = k;
        }
    }
    return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                     "the shards hold %ld of %ld points: %ld missing, the first is point %ld "
                     "(a shard output is absent or incomplete)", n, st->points, missing, first);
}

planner_status sweep_merge(FILE *out, int n_files, char *const *paths, planner_error *err)
{
    char *text = NULL, header[SWEEP_CSV_HEADER_MAX];
    planner_status rc = PLANNER_OK;
    merge_state st;

    sweep_csv_header(header, sizeof header);
    const line_shape shape = header_shape(header);
    memset(&st, 0, sizeof st);
    st.shape = &shape;
    st.points = -1;
    for (int f = 0; f < n_files && rc == PLANNER_OK; f++) {
        size_t len = 0;
        rc = file_read_all(&text, &len, paths[f], INPUT_MAX_BYTES * 4L, err);
        if (rc == PLANNER_OK)
            rc = merge_shard(&st, f, paths[f], text, len, err);
        pl_free(text);
        text = NULL;
    }
    if (rc != PLANNER_OK)
        goto cleanup;
    if (st.n == 0) {
        rc = error_set(err, PLANNER_E_INPUT, n_files > 0 ? paths[0] : NULL, 0, 0, NULL,
                       "no grid points in the shard outputs");
        goto cleanup;
    }
    qsort(st.lines, (size_t)st.n, sizeof *st.lines, cmp_line);
    if ((rc = merge_complete(&st, paths, err)) != PLANNER_OK)
        goto cleanup;
    if (st.format == 1)
        fprintf(out, "%s\n", header);
    for (long i = 0; i < st.n; i++)
        fprintf(out, "%s\n", st.lines[i].text);
cleanup:
    for (long i = 0; i < st.n; i++)
        pl_free(st.lines[i].text);
    pl_free(st.lines);
    return rc;
}
