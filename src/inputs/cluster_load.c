/* cluster_load.c: reads a YAML cluster spec into a validated `cluster`.
 *
 * Two passes.  First libyaml's event API builds a small tree of scalars,
 * mappings and sequences, each node with its 1-based line and column
 * (libyaml marks are 0-based), enforcing what libyaml 0.2.5 does not: a
 * nesting limit (CLUSTER_MAX_DEPTH), a limit on items per collection and on
 * nodes in all, exactly one document, no aliases, anchors or explicit tags,
 * scalar keys only, and no duplicate keys.  Then the schema walk reads the
 * tree: unknown keys are errors with a did-you-mean, integers must be plain
 * decimal scalars, quantities go through units.c, GPU names through the
 * catalog.  Messages name the key path: `cluster.groups[1].nodes: ...`.
 *
 * Schema (README "Cluster: YAML"):
 *   name, description, stack (a name of inputs/stack.c, default megatron-core),
 *   groups: [{name, gpu, nodes, gpus_per_node, nvlink_domain, intra_node_link,
 *             intra_node_bandwidth, intra_node_latency,
 *             inter_node_bandwidth | inter_node_bandwidth_per_node,
 *             inter_node_latency, memory, usable_memory, hbm_bandwidth,
 *             peak_fp32, peak_tf32, peak_bf16, peak_fp16, peak_fp8, peak_fp4}]
 *   links:  [{between: [GROUP, GROUP], bandwidth, latency}]
 * Invariants on success: 1..CLUSTER_MAX_GROUPS groups with unique names,
 * every group >= 1 node of >= 1 GPU, at most CLUSTER_MAX_GPUS GPUs in all,
 * every bandwidth and latency > 0, usable memory <= memory, links name two
 * different groups and no pair twice.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "base/alloc.h"
#include "inputs/cluster.h"
#include "inputs/stack.h"
#include "base/fileio.h"
#include "base/suggest.h"
#include "base/text.h"
#include "base/units.h"

#define CLUSTER_MAX_DEPTH 32
#define YAML_MAX_ITEMS 4096      /* entries in one mapping or sequence */
#define YAML_MAX_NODES 100000
#define MAX_GPUS_PER_NODE 1024
#define MAX_NVLINK_DOMAIN 1048576

/* Defaults when a file gives no latency: NCCL's own constants
 * (cost-model.md: 3.4 us per NVLink hop, 14 us over the network). */
#define DEFAULT_INTRA_LATENCY_S 3.4e-6
#define DEFAULT_INTER_LATENCY_S 14e-6

/* ---- The YAML tree. ---- */

typedef enum ykind { Y_SCALAR, Y_MAP, Y_SEQ } ykind;

typedef struct ynode {
    ykind kind;
    int line, col;           /* 1-based */
    char *value;             /* scalar text */
    int plain;               /* scalar was unquoted */
    size_t n, cap;           /* children; a map alternates key, value */
    struct ynode **child;
} ynode;

static void ynode_free(ynode *y)
{
    size_t i;
    if (y == NULL)
        return;
    for (i = 0; i < y->n; i++)
        ynode_free(y->child[i]);
    pl_free(y->child);
    pl_free(y->value);
    pl_free(y);
}

typedef struct yloader {
    const char *file;
    const char *text;
    size_t len;
    planner_error *err;
} yloader;

static planner_status yfail_at(const yloader *ld, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static planner_status yfail_at(const yloader *ld, int line, int col, const char *fmt, ...)
{
    char msg[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return error_set(ld->err, PLANNER_E_INPUT, ld->file, line, col, NULL, "%s", msg);
}

/* 1-based line and column of a byte offset (for reader errors). */
static void offset_position(const yloader *ld, size_t off, int *line, int *col)
{
    size_t i;
    *line = 1;
    *col = 1;
    for (i = 0; i < off && i < ld->len; i++) {
        if (ld->text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else if (((unsigned char)ld->text[i] & 0xC0) != 0x80) {
            (*col)++;
        }
    }
}

static planner_status parser_error(const yloader *ld, const yaml_parser_t *p)
{
    int line = (int)p->problem_mark.line + 1, col = (int)p->problem_mark.column + 1;
    if (p->error == YAML_MEMORY_ERROR)
        return error_oom(ld->err);
    if (p->error == YAML_READER_ERROR)
        offset_position(ld, p->problem_offset, &line, &col);
    else if (p->problem_mark.index < ld->len && ld->text[p->problem_mark.index] == '\t')
        /* libyaml: "found character that cannot start any token" */
        return yfail_at(ld, line, col, "YAML: a tab: YAML indents with spaces, never tabs");
    if (p->context != NULL)
        return yfail_at(ld, line, col, "YAML: %s %s", p->problem ? p->problem : "syntax error",
                        p->context);
    return yfail_at(ld, line, col, "YAML: %s", p->problem ? p->problem : "syntax error");
}

static planner_status add_child(const yloader *ld, ynode *parent, ynode *child)
{
    if (parent->n >= 2 * YAML_MAX_ITEMS)
        return yfail_at(ld, child->line, child->col, "more than %d entries in one list or mapping",
                        YAML_MAX_ITEMS);
    ynode **nc = pl_grow(parent->child, &parent->cap, parent->n + 1, sizeof *nc, 8);
    if (nc == NULL)
        return error_oom(ld->err);
    parent->child = nc;
    parent->child[parent->n++] = child;
    return PLANNER_OK;
}

/* Checks a node about to be added to `parent` (keys: scalar, no duplicate). */
static planner_status check_key(const yloader *ld, const ynode *parent, const ynode *y)
{
    size_t i;
    if (parent->kind != Y_MAP || parent->n % 2 != 0)
        return PLANNER_OK;
    if (y->kind != Y_SCALAR)
        return yfail_at(ld, y->line, y->col, "mapping keys must be plain scalars");
    for (i = 0; i < parent->n; i += 2)
        if (strcmp(parent->child[i]->value, y->value) == 0)
            return yfail_at(ld, y->line, y->col, "duplicate key '%.64s' (first at line %d)",
                            y->value, parent->child[i]->line);
    return PLANNER_OK;
}

/* Rejects what we do not support on a node event. */
static planner_status check_props(const yloader *ld, const yaml_event_t *ev, int line, int col)
{
    const yaml_char_t *anchor = NULL, *tag = NULL;
    int implicit = 1;
    if (ev->type == YAML_SCALAR_EVENT) {
        anchor = ev->data.scalar.anchor;
        tag = ev->data.scalar.tag;
        implicit = ev->data.scalar.plain_implicit || ev->data.scalar.quoted_implicit;
    } else if (ev->type == YAML_MAPPING_START_EVENT) {
        anchor = ev->data.mapping_start.anchor;
        tag = ev->data.mapping_start.tag;
        implicit = ev->data.mapping_start.implicit;
    } else if (ev->type == YAML_SEQUENCE_START_EVENT) {
        anchor = ev->data.sequence_start.anchor;
        tag = ev->data.sequence_start.tag;
        implicit = ev->data.sequence_start.implicit;
    }
    if (anchor != NULL)
        return yfail_at(ld, line, col, "YAML anchors (&%.32s) are not supported",
                        (const char *)anchor);
    if (tag != NULL && !implicit)
        return yfail_at(ld, line, col, "YAML tags (%.32s) are not supported", (const char *)tag);
    return PLANNER_OK;
}

/* The node a scalar, mapping-start or sequence-start event opens, at line:col:
 * a scalar keeps a copy of its text (refused when it holds a NUL), a
 * collection starts empty.  On failure *out is NULL. */
static planner_status node_new(ynode **out, const yloader *ld, const yaml_event_t *ev, int line,
                               int col)
{
    ynode *y = pl_calloc(1, sizeof *y);

    *out = NULL;
    if (y == NULL)
        return error_oom(ld->err);
    y->line = line;
    y->col = col;
    if (ev->type != YAML_SCALAR_EVENT) {
        y->kind = ev->type == YAML_MAPPING_START_EVENT ? Y_MAP : Y_SEQ;
        *out = y;
        return PLANNER_OK;
    }
    y->kind = Y_SCALAR;
    y->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    y->value = pl_malloc(ev->data.scalar.length + 1);
    if (y->value == NULL) {
        ynode_free(y);
        return error_oom(ld->err);
    }
    memcpy(y->value, ev->data.scalar.value, ev->data.scalar.length);
    y->value[ev->data.scalar.length] = '\0';
    if (strlen(y->value) != ev->data.scalar.length) {
        ynode_free(y);
        return yfail_at(ld, line, col, "NUL character in a value");
    }
    *out = y;
    return PLANNER_OK;
}

/* Builds the tree of the one document in the text. */
static planner_status yaml_tree(const yloader *ld, ynode **out)
{
    yaml_parser_t parser;
    yaml_event_t ev;
    ynode *stack[CLUSTER_MAX_DEPTH + 1];
    ynode *root = NULL;
    int sp = 0, done = 0, docs = 0, have_event = 0;
    long nodes = 0;
    planner_status rc = PLANNER_OK;

    *out = NULL;
    if (!yaml_parser_initialize(&parser))
        return error_oom(ld->err);
    yaml_parser_set_input_string(&parser, (const unsigned char *)ld->text, ld->len);
    while (!done) {
        int line, col;
        ynode *y = NULL;
        if (!yaml_parser_parse(&parser, &ev)) {
            rc = parser_error(ld, &parser);
            goto cleanup;
        }
        have_event = 1;
        line = (int)ev.start_mark.line + 1;
        col = (int)ev.start_mark.column + 1;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                rc = yfail_at(ld, line, col, "more than one YAML document");
                goto cleanup;
            }
            break;
        case YAML_ALIAS_EVENT:
            rc = yfail_at(ld, line, col, "YAML aliases (*%.32s) are not supported",
                          (const char *)ev.data.alias.anchor);
            goto cleanup;
        case YAML_SCALAR_EVENT:
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            if ((rc = check_props(ld, &ev, line, col)) != PLANNER_OK)
                goto cleanup;
            if (++nodes > YAML_MAX_NODES) {
                rc = yfail_at(ld, line, col, "more than %d YAML nodes", YAML_MAX_NODES);
                goto cleanup;
            }
            if ((rc = node_new(&y, ld, &ev, line, col)) != PLANNER_OK)
                goto cleanup;
            if (sp == 0) {
                root = y;
            } else if ((rc = check_key(ld, stack[sp - 1], y)) != PLANNER_OK ||
                       (rc = add_child(ld, stack[sp - 1], y)) != PLANNER_OK) {
                ynode_free(y);
                goto cleanup;
            }
            if (y->kind != Y_SCALAR) {
                if (sp >= CLUSTER_MAX_DEPTH) {
                    rc = yfail_at(ld, line, col, "nesting deeper than %d levels",
                                  CLUSTER_MAX_DEPTH);
                    goto cleanup;
                }
                stack[sp++] = y;
            }
            break;
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            if (sp > 0)
                sp--;
            break;
        default:
            break;
        }
        yaml_event_delete(&ev);
        have_event = 0;
    }
    if (root == NULL) {
        rc = yfail_at(ld, 1, 1, "empty cluster file (expected name and groups)");
        goto cleanup;
    }
    *out = root;
    root = NULL;
cleanup:
    if (have_event)
        yaml_event_delete(&ev);
    ynode_free(root);
    yaml_parser_delete(&parser);
    return rc;
}

/* ---- The schema walk. ---- */

typedef struct ypath {
    char s[ERROR_PATH_MAX];
} ypath;

static ypath ypath_key(const ypath *p, const char *key)
{
    ypath q = *p;
    size_t used = strlen(q.s);
    if (used + 2 < sizeof q.s) {
        size_t n = strlen(key);
        if (n > sizeof q.s - used - 2)
            n = sizeof q.s - used - 2;
        q.s[used] = '.';
        memcpy(q.s + used + 1, key, n);
        q.s[used + 1 + n] = '\0';
    }
    return q;
}

static ypath ypath_index(const ypath *p, size_t i)
{
    ypath q = *p;
    char idx[32];
    size_t used = strlen(q.s), n;
    snprintf(idx, sizeof idx, "[%zu]", i);
    n = strlen(idx);
    if (used + n < sizeof q.s)
        memcpy(q.s + used, idx, n + 1);
    return q;
}

static planner_status fail(const yloader *ld, const ynode *y, const ypath *p, const char *fmt,
                           ...) __attribute__((format(printf, 4, 5)));

static planner_status fail(const yloader *ld, const ynode *y, const ypath *p, const char *fmt,
                           ...)
{
    char msg[ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return error_set(ld->err, PLANNER_E_INPUT, ld->file, y ? y->line : 0, y ? y->col : 0,
                     p->s, "%s: %s", p->s, msg);
}

static const char *ykind_name(const ynode *y)
{
    return y->kind == Y_MAP ? "a mapping" : y->kind == Y_SEQ ? "a list" : "a scalar";
}

/* The value node for `key` in map y (NULL if absent, or if y is not a map:
 * a list's children have no key text); *key_node its key. */
static ynode *yget(const ynode *y, const char *key, const ynode **key_node)
{
    size_t i;
    if (y->kind != Y_MAP)
        return NULL;
    for (i = 0; i + 1 < y->n; i += 2)
        if (strcmp(y->child[i]->value, key) == 0) {
            if (key_node != NULL)
                *key_node = y->child[i];
            return y->child[i + 1];
        }
    return NULL;
}

static planner_status check_keys(const yloader *ld, const ynode *y, const ypath *p,
                                 const char *const *keys)
{
    size_t i, j, n = 0;
    while (keys[n] != NULL)
        n++;
    for (i = 0; i + 1 < y->n; i += 2) {
        const char *key = y->child[i]->value;
        int ok = 0;
        for (j = 0; j < n && !ok; j++)
            ok = strcmp(key, keys[j]) == 0;
        if (!ok) {
            char hint[128];
            ypath q = ypath_key(p, key);
            suggest_format(key, keys, n, hint, sizeof hint);
            return fail(ld, y->child[i], &q, "unknown key '%.64s'%s", key, hint);
        }
    }
    return PLANNER_OK;
}

static planner_status need_map(const yloader *ld, const ynode *y, const ypath *p)
{
    if (y->kind != Y_MAP)
        return fail(ld, y, p, "must be a mapping (key: value lines), got %s", ykind_name(y));
    return PLANNER_OK;
}

/* A plain decimal integer in [min, max]. */
static planner_status yint(const yloader *ld, const ynode *map, const ypath *p, const char *key,
                           long min, long max, long *out, int *present)
{
    const ynode *y = yget(map, key, NULL);
    ypath q = ypath_key(p, key);
    const char *s;
    long v = 0;
    int digits = 0, neg = 0;
    if (present != NULL)
        *present = 0;
    if (y == NULL)
        return PLANNER_OK;
    if (y->kind != Y_SCALAR)
        return fail(ld, y, &q, "must be an integer, got %s", ykind_name(y));
    s = y->value;
    if (*s == '-') {
        neg = 1;
        s++;
    }
    for (; *s >= '0' && *s <= '9'; s++, digits++) {
        if (v > (1000000000000L - (*s - '0')) / 10)
            return fail(ld, y, &q, "must be at most %ld, got '%.32s'", max, y->value);
        v = v * 10 + (*s - '0');
    }
    if (!y->plain)
        return fail(ld, y, &q, "must be an unquoted integer, got \"%.64s\"", y->value);
    if (digits == 0 || *s != '\0')
        return fail(ld, y, &q, "must be an integer, got '%.64s'", y->value);
    if (neg)
        v = -v;
    if (v < min)
        return min == 1 ? fail(ld, y, &q, "must be > 0, got %ld", v)
                        : fail(ld, y, &q, "must be >= %ld, got %ld", min, v);
    if (v > max)
        return fail(ld, y, &q, "must be at most %ld, got %ld", max, v);
    *out = v;
    if (present != NULL)
        *present = 1;
    return PLANNER_OK;
}

/* Plausible ranges of the physical quantities a cluster file gives (README
 * "Cluster: YAML" lists them).  They bracket every part in the catalog with
 * two to three orders of magnitude to spare on either side -- 1 GbE to
 * NVLink 5 and beyond for links, a T4's 320 GB/s to a B200's 8 TB/s for
 * HBM, 16 to 192 GB of memory, a T4's 8 TFLOP/s fp32 to a B200's 9 PFLOP/s
 * fp4 -- so a value outside is a typo or a unit slip, and the cost model
 * never sees a link of 1e-320 B/s or a latency of 1e300 s.  A key not
 * listed takes its kind's range. */
typedef struct quantity_range {
    const char *key;        /* NULL: the default of its kind */
    unit_kind kind;
    double min, max;        /* SI: B/s, s, bytes, FLOP/s */
} quantity_range;

static const quantity_range k_ranges[] = {
    {"intra_node_bandwidth", UNIT_BANDWIDTH, 1e7, 1e14},
    {"inter_node_bandwidth", UNIT_BANDWIDTH, 1e7, 1e14},
    {"inter_node_bandwidth_per_node", UNIT_BANDWIDTH, 1e7, 1e15},
    {"bandwidth", UNIT_BANDWIDTH, 1e7, 1e14},
    {"hbm_bandwidth", UNIT_BANDWIDTH, 1e10, 1e15},
    {"intra_node_latency", UNIT_TIME, 1e-9, 1e-2},
    {"inter_node_latency", UNIT_TIME, 1e-9, 1e-2},
    {"latency", UNIT_TIME, 1e-9, 1e-2},
    {"restart_time", UNIT_TIME, 1, 1e6},                            /* 1 s .. 11.6 days */
    {"memory", UNIT_SIZE, 1073741824.0, 17592186044416.0},          /* 1 GiB .. 16 TiB */
    {"usable_memory", UNIT_SIZE, 1073741824.0, 17592186044416.0},
    {NULL, UNIT_BANDWIDTH, 1e6, 1e16},
    {NULL, UNIT_TIME, 1e-9, 1e8},
    {NULL, UNIT_SIZE, 1048576.0, 1125899906842624.0},               /* 1 MiB .. 1 PiB */
    {NULL, UNIT_FLOPS, 1e11, 1e17},                                 /* peaks */
};

/* The plausible range of `key` (a quantity of `kind`). */
static const quantity_range *range_of(const char *key, unit_kind kind)
{
    size_t i;
    for (i = 0; i < sizeof k_ranges / sizeof k_ranges[0]; i++)
        if (k_ranges[i].kind == kind &&
            (k_ranges[i].key == NULL || strcmp(k_ranges[i].key, key) == 0))
            return &k_ranges[i];
    return NULL;
}

/* Whether `text` is a bare number (units_parse reads it in SI units, README
 * "Units"), and then the unit to suggest for its kind. */
static const char *bare_number_hint(const char *text, unit_kind kind)
{
    static const char *const hint[] = {
        [UNIT_BANDWIDTH] = "a bare number is in B/s; give its unit, e.g. 400Gbps or 450GB/s",
        [UNIT_TIME] = "a bare number is in seconds; give its unit, e.g. 14us",
        [UNIT_SIZE] = "a bare number is in bytes; give its unit, e.g. 80GiB",
        [UNIT_FLOPS] = "a bare number is in FLOP/s; give its unit, e.g. 989TFLOPS"};
    char *end;
    strtod(text, &end);
    while (end != text && (*end == ' ' || *end == '\t'))
        end++;
    if ((unsigned)kind >= sizeof hint / sizeof hint[0])   /* a kind added later: no hint */
        return NULL;
    return end != text && *end == '\0' ? hint[kind] : NULL;
}

/* A quantity with a unit, through units_parse, inside its plausible range
 * (zero, where allowed, means "absent"). */
static planner_status yunit(const yloader *ld, const ynode *map, const ypath *p, const char *key,
                            unit_kind kind, bool allow_zero, double *out, int *present)
{
    const ynode *y = yget(map, key, NULL);
    ypath q = ypath_key(p, key);
    const quantity_range *r = range_of(key, kind);
    planner_error perr = PLANNER_ERROR_INIT;
    if (present != NULL)
        *present = 0;
    if (y == NULL)
        return PLANNER_OK;
    if (y->kind != Y_SCALAR)
        return fail(ld, y, &q, "must be a quantity such as 400Gbps, got %s", ykind_name(y));
    if (units_parse(out, y->value, kind, allow_zero, &perr) != PLANNER_OK)
        return fail(ld, y, &q, "%.255s", perr.msg);   /* as long as it always was */
    if (r != NULL && !(allow_zero && *out == 0) && (*out < r->min || *out > r->max)) {
        char lo[32], hi[32];
        units_format(r->min, kind, lo, sizeof lo);
        units_format(r->max, kind, hi, sizeof hi);
        if (bare_number_hint(y->value, kind) != NULL)
            return fail(ld, y, &q, "%.64s outside %s..%s (%s)", y->value, lo, hi,
                        bare_number_hint(y->value, kind));
        return fail(ld, y, &q, "%.64s outside %s..%s", y->value, lo, hi);
    }
    if (present != NULL)
        *present = 1;
    return PLANNER_OK;
}

static planner_status ystr(const yloader *ld, const ynode *map, const ypath *p, const char *key,
                           char *buf, size_t size, int *present)
{
    const ynode *y = yget(map, key, NULL);
    ypath q = ypath_key(p, key);
    if (present != NULL)
        *present = 0;
    if (y == NULL)
        return PLANNER_OK;
    if (y->kind != Y_SCALAR)
        return fail(ld, y, &q, "must be a string, got %s", ykind_name(y));
    if (y->value[0] == '\0' || strlen(y->value) >= size)
        return fail(ld, y, &q, "must have 1 to %zu characters", size - 1);
    snprintf(buf, size, "%s", y->value);
    if (present != NULL)
        *present = 1;
    return PLANNER_OK;
}

/* A name (of the cluster or a group): a string without control characters
 * or malformed UTF-8 (base/text.h). */
static planner_status yname(const yloader *ld, const ynode *map, const ypath *p, char *buf,
                            size_t size)
{
    planner_error why = PLANNER_ERROR_INIT;
    int present = 0;
    planner_status rc = ystr(ld, map, p, "name", buf, size, &present);
    if (rc == PLANNER_OK && present && text_check_name(buf, &why) != PLANNER_OK) {
        ypath q = ypath_key(p, "name");
        return fail(ld, yget(map, "name", NULL), &q,
                    "holds %s: names are printed on terminals and in scripts", why.msg);
    }
    return rc;
}

static const char *const k_top_keys[] = {"name", "description", "stack", "groups", "links",
                                         "reliability", "storage", NULL};
static const char *const k_group_keys[] = {
    "name", "gpu", "nodes", "gpus_per_node", "nvlink_domain", "intra_node_link",
    "intra_node_bandwidth",
    "intra_node_latency", "inter_node_bandwidth", "inter_node_bandwidth_per_node",
    "inter_node_latency", "memory", "usable_memory", "hbm_bandwidth", "peak_fp32",
    "peak_tf32", "peak_bf16", "peak_fp16", "peak_fp8", "peak_fp4", NULL};
static const char *const k_link_keys[] = {"between", "bandwidth", "latency", NULL};

/* "stack: NAME" (optional): a software stack of inputs/stack.c; an unknown
 * name is an error with the closest name and the list. */
static planner_status read_stack(const yloader *ld, const ynode *root, const ypath *p, int *out)
{
    const ynode *y = yget(root, "stack", NULL);
    ypath q = ypath_key(p, "stack");
    const stack_spec *st;
    char hint[128], names[256];
    *out = STACK_MEGATRON_CORE;
    if (y == NULL)
        return PLANNER_OK;
    if (y->kind != Y_SCALAR)
        return fail(ld, y, &q, "must be a software stack name, got %s", ykind_name(y));
    st = stack_find(y->value);
    if (st == NULL) {
        stack_unknown_hint(y->value, hint, sizeof hint, names, sizeof names);
        return fail(ld, y, &q, "unknown software stack '%.64s'%s; known: %s", y->value, hint,
                    names);
    }
    *out = (int)st->id;
    return PLANNER_OK;
}

/* "intra_node_link: fabric|pcie-p2p|pcie-host" (optional: the catalog
 * row's): how the GPUs of a node reach each other. */
static planner_status read_intra_link(const yloader *ld, const ynode *g, const ypath *p,
                                      gpu_intra_link *out)
{
    const ynode *y = yget(g, "intra_node_link", NULL);
    ypath q = ypath_key(p, "intra_node_link");
    const char *names[INTRA_LINK_COUNT];
    char hint[128];
    if (y == NULL)
        return PLANNER_OK;
    for (int i = 0; i < INTRA_LINK_COUNT; i++) {
        names[i] = gpu_intra_link_name((gpu_intra_link)i);
        if (y->kind == Y_SCALAR && strcmp(y->value, names[i]) == 0) {
            *out = (gpu_intra_link)i;
            return PLANNER_OK;
        }
    }
    if (y->kind != Y_SCALAR)
        return fail(ld, y, &q, "must be fabric, pcie-p2p or pcie-host, got %s", ykind_name(y));
    suggest_format(y->value, names, INTRA_LINK_COUNT, hint, sizeof hint);
    return fail(ld, y, &q, "unknown link '%.64s'%s; known: fabric (NVLink/xGMI), pcie-p2p, "
                           "pcie-host", y->value, hint);
}

/* Unknown GPU: error with the closest catalog name. */
static planner_status unknown_gpu(const yloader *ld, const ynode *y, const ypath *p)
{
    const char *names[64];
    size_t n = catalog_count(), i;
    char hint[128];
    if (n > 64)
        n = 64;
    for (i = 0; i < n; i++)
        names[i] = catalog_at(i)->name;
    suggest_format(y->value, names, n, hint, sizeof hint);
    return fail(ld, y, p, "unknown GPU '%.64s'%s; known: see the catalog in README "
                          "(e.g. H100-SXM, A100-SXM-80GB, B200, GB200, T4, V100-SXM2-16GB)",
                y->value, hint);
}

/* A group's network: the bandwidth and latency within a node and between
 * nodes (the catalog's, NCCL's latencies, unless the file gives them), the
 * inter-node bandwidth given per GPU or per node (of gpn GPUs), not both. */
static planner_status read_group_network(const yloader *ld, const ynode *g, const ypath *p,
                                         const gpu_spec *spec, long gpn, node_group *out)
{
    int has_per_gpu = 0, has_per_node = 0;
    double per_node = 0;
    planner_status rc;

    out->intra_bytes_per_s = spec->intra_node_bytes_per_s;
    out->inter_bytes_per_s = spec->inter_node_bytes_per_s;
    out->intra_latency_s = DEFAULT_INTRA_LATENCY_S;
    out->inter_latency_s = DEFAULT_INTER_LATENCY_S;
    if ((rc = yunit(ld, g, p, "intra_node_bandwidth", UNIT_BANDWIDTH, false,
                    &out->intra_bytes_per_s, NULL)) ||
        (rc = yunit(ld, g, p, "intra_node_latency", UNIT_TIME, false, &out->intra_latency_s,
                    NULL)) ||
        (rc = yunit(ld, g, p, "inter_node_bandwidth", UNIT_BANDWIDTH, false,
                    &out->inter_bytes_per_s, &has_per_gpu)) ||
        (rc = yunit(ld, g, p, "inter_node_bandwidth_per_node", UNIT_BANDWIDTH, false,
                    &per_node, &has_per_node)) ||
        (rc = yunit(ld, g, p, "inter_node_latency", UNIT_TIME, false, &out->inter_latency_s,
                    NULL)))
        return rc;
    if (has_per_gpu && has_per_node) {
        ypath q = ypath_key(p, "inter_node_bandwidth_per_node");
        return fail(ld, yget(g, "inter_node_bandwidth_per_node", NULL), &q,
                    "give inter_node_bandwidth (per GPU) or inter_node_bandwidth_per_node, "
                    "not both");
    }
    if (has_per_node)
        out->inter_bytes_per_s = per_node / (double)gpn;
    out->gpu.intra_node_bytes_per_s = out->intra_bytes_per_s;
    out->gpu.inter_node_bytes_per_s = out->inter_bytes_per_s;
    return PLANNER_OK;
}

/* A group's GPU memory: its size (the catalog's reserve kept unless the file
 * gives usable_memory, which may not exceed it) and HBM bandwidth. */
static planner_status read_group_memory(const yloader *ld, const ynode *g, const ypath *p,
                                        const gpu_spec *spec, node_group *out)
{
    int has_mem = 0, has_usable = 0;
    double mem = 0, usable = 0;
    planner_status rc;

    if ((rc = yunit(ld, g, p, "memory", UNIT_SIZE, false, &mem, &has_mem)) ||
        (rc = yunit(ld, g, p, "usable_memory", UNIT_SIZE, false, &usable, &has_usable)) ||
        (rc = yunit(ld, g, p, "hbm_bandwidth", UNIT_BANDWIDTH, false,
                    &out->gpu.hbm_bytes_per_s, NULL)))
        return rc;
    if (has_mem) {
        out->gpu.mem_bytes = mem;
        /* keep the catalog's reserve unless the file says otherwise */
        out->gpu.usable_mem_bytes = mem - (spec->mem_bytes - spec->usable_mem_bytes);
        if (out->gpu.usable_mem_bytes <= 0)
            out->gpu.usable_mem_bytes = mem;
    }
    if (has_usable)
        out->gpu.usable_mem_bytes = usable;
    if (out->gpu.usable_mem_bytes > out->gpu.mem_bytes) {
        ypath q = ypath_key(p, has_usable ? "usable_memory" : "memory");
        return fail(ld, yget(g, has_usable ? "usable_memory" : "memory", NULL), &q,
                    "usable memory (%.4g GB) exceeds memory (%.4g GB)",
                    out->gpu.usable_mem_bytes / 1e9, out->gpu.mem_bytes / 1e9);
    }
    return PLANNER_OK;
}

/* Entry idx of groups: its name, the catalog GPU it starts from, the node
 * count and shape, then the file's network, memory and peak overrides. */
static planner_status read_group(const yloader *ld, const ynode *g, const ypath *p, size_t idx,
                                 node_group *out)
{
    static const char *const peak_keys[PEAK_COUNT] = {"peak_fp32", "peak_tf32", "peak_bf16",
                                                      "peak_fp16", "peak_fp8", "peak_fp4"};
    const ynode *gpu_node;
    const gpu_spec *spec;
    ypath gp = ypath_key(p, "gpu");
    long nodes = 0, gpn = 0, domain = 0;
    int present = 0, has_gpn = 0;
    planner_status rc;
    int f;

    if ((rc = need_map(ld, g, p)) || (rc = check_keys(ld, g, p, k_group_keys)))
        return rc;
    snprintf(out->name, sizeof out->name, "group%zu", idx);
    if ((rc = yname(ld, g, p, out->name, sizeof out->name)))
        return rc;
    gpu_node = yget(g, "gpu", NULL);
    if (gpu_node == NULL)
        return fail(ld, g, p, "missing required key 'gpu' (a catalog name such as H100-SXM)");
    if (gpu_node->kind != Y_SCALAR)
        return fail(ld, gpu_node, &gp, "must be a GPU name, got %s", ykind_name(gpu_node));
    spec = catalog_find(gpu_node->value);
    if (spec == NULL)
        return unknown_gpu(ld, gpu_node, &gp);
    out->gpu = *spec;

    if ((rc = yint(ld, g, p, "nodes", 1, CLUSTER_MAX_GPUS, &nodes, &present)))
        return rc;
    if (!present)
        return fail(ld, g, p, "missing required key 'nodes'");
    gpn = spec->gpus_per_node;
    if ((rc = yint(ld, g, p, "gpus_per_node", 1, MAX_GPUS_PER_NODE, &gpn, &has_gpn)))
        return rc;
    out->nodes = (int)nodes;
    out->gpus_per_node = (int)gpn;
    if ((long long)nodes * gpn > CLUSTER_MAX_GPUS) {
        ypath q = ypath_key(p, "nodes");
        return fail(ld, yget(g, "nodes", NULL), &q,
                    "%ld nodes x %ld GPUs is more than the limit of %d GPUs", nodes, gpn,
                    CLUSTER_MAX_GPUS);
    }
    domain = has_gpn && spec->nvlink_domain == spec->gpus_per_node ? gpn : spec->nvlink_domain;
    if ((rc = yint(ld, g, p, "nvlink_domain", 1, MAX_NVLINK_DOMAIN, &domain, NULL)))
        return rc;
    out->gpu.nvlink_domain = (int)domain;
    if ((rc = read_intra_link(ld, g, p, &out->gpu.intra_link)))
        return rc;
    out->gpu.gpus_per_node = (int)gpn;

    if ((rc = read_group_network(ld, g, p, spec, gpn, out)) ||
        (rc = read_group_memory(ld, g, p, spec, out)))
        return rc;
    for (f = 0; f < PEAK_COUNT; f++)
        if ((rc = yunit(ld, g, p, peak_keys[f], UNIT_FLOPS, true, &out->gpu.peak_flops[f],
                        NULL)))
            return rc;
    if (out->gpu.peak_flops[PEAK_BF16] <= 0 && out->gpu.peak_flops[PEAK_FP16] <= 0 &&
        out->gpu.peak_flops[PEAK_FP32] <= 0)
        return fail(ld, g, p, "the GPU has no peak in fp32, fp16 or bf16");
    return PLANNER_OK;
}

/* The `reliability:` and `storage:` blocks (docs/goodput.md): failures per
 * 1000 node-days (Kokolis et al. 2025 measured 2.34 and 6.50), the fixed
 * part of a restart, and the storage's aggregate checkpoint bandwidths.
 * Absent keys stay 0: schedule/goodput.c's defaults. */
static const char *const k_reliability_keys[] = {"failure_rate", "restart_time", NULL};
static const char *const k_storage_keys[] = {"write_bandwidth", "read_bandwidth", NULL};

static planner_status read_reliability(const yloader *ld, const ynode *root, const ypath *p,
                                       cluster_reliability *out)
{
    const ynode *r = yget(root, "reliability", NULL), *s = yget(root, "storage", NULL);
    ypath rp = ypath_key(p, "reliability"), sp = ypath_key(p, "storage");
    planner_status rc;
    if (r != NULL) {
        const ynode *f;
        if ((rc = need_map(ld, r, &rp)) || (rc = check_keys(ld, r, &rp, k_reliability_keys)) ||
            (rc = yunit(ld, r, &rp, "restart_time", UNIT_TIME, false, &out->restart_s, NULL)))
            return rc;
        f = yget(r, "failure_rate", NULL);
        if (f != NULL) {
            ypath q = ypath_key(&rp, "failure_rate");
            char *end = NULL;
            double v = f->kind == Y_SCALAR ? strtod(f->value, &end) : -1;
            if (f->kind != Y_SCALAR || end == f->value || *end != '\0' || !(v >= 1e-3 && v <= 1e4))
                return fail(ld, f, &q, "must be failures per 1000 node-days in 0.001..10000 "
                                       "(Kokolis et al. measured 2.34 and 6.50), got '%.32s'",
                            f->kind == Y_SCALAR ? f->value : ykind_name(f));
            out->failures_per_1000_node_days = v;
        }
    }
    if (s != NULL &&
        ((rc = need_map(ld, s, &sp)) || (rc = check_keys(ld, s, &sp, k_storage_keys)) ||
         (rc = yunit(ld, s, &sp, "write_bandwidth", UNIT_BANDWIDTH, false,
                     &out->storage_write_bytes_per_s, NULL)) ||
         (rc = yunit(ld, s, &sp, "read_bandwidth", UNIT_BANDWIDTH, false,
                     &out->storage_read_bytes_per_s, NULL))))
        return rc;
    return PLANNER_OK;
}

static int group_index(const cluster *c, const char *name)
{
    int i;
    for (i = 0; i < c->n_groups; i++)
        if (strcmp(c->group[i].name, name) == 0)
            return i;
    return -1;
}

static planner_status read_link(const yloader *ld, const ynode *l, const ypath *p, cluster *c,
                                group_link *out)
{
    const ynode *b;
    ypath bp = ypath_key(p, "between");
    int ends[2], k, present = 0;
    planner_status rc;

    if ((rc = need_map(ld, l, p)) || (rc = check_keys(ld, l, p, k_link_keys)))
        return rc;
    b = yget(l, "between", NULL);
    if (b == NULL)
        return fail(ld, l, p, "missing required key 'between' (two group names)");
    if (b->kind != Y_SEQ || b->n != 2)
        return fail(ld, b, &bp, "must be a list of two group names, e.g. [a, b]");
    for (k = 0; k < 2; k++) {
        const ynode *e = b->child[k];
        ypath ep = ypath_index(&bp, (size_t)k);
        if (e->kind != Y_SCALAR)
            return fail(ld, e, &ep, "must be a group name, got %s", ykind_name(e));
        ends[k] = group_index(c, e->value);
        if (ends[k] < 0) {
            const char *names[CLUSTER_MAX_GROUPS];
            char hint[128];
            int i;
            for (i = 0; i < c->n_groups; i++)
                names[i] = c->group[i].name;
            suggest_format(e->value, names, (size_t)c->n_groups, hint, sizeof hint);
            return fail(ld, e, &ep, "no group named '%.64s'%s", e->value, hint);
        }
    }
    if (ends[0] == ends[1])
        return fail(ld, b, &bp, "names the same group twice");
    out->a = ends[0];
    out->b = ends[1];
    out->latency_s = DEFAULT_INTER_LATENCY_S;
    if ((rc = yunit(ld, l, p, "bandwidth", UNIT_BANDWIDTH, false, &out->bytes_per_s,
                    &present)))
        return rc;
    if (!present)
        return fail(ld, l, p, "missing required key 'bandwidth' (per GPU, e.g. 100Gbps)");
    return yunit(ld, l, p, "latency", UNIT_TIME, false, &out->latency_s, NULL);
}

static planner_status read_cluster(const yloader *ld, const ynode *root, cluster *c)
{
    ypath p = {"cluster"}, gp = ypath_key(&p, "groups"), lp = ypath_key(&p, "links");
    const ynode *groups, *links;
    long total = 0;
    size_t i;
    int j;
    planner_status rc;

    if (root->kind != Y_MAP)
        return fail(ld, root, &p, "a cluster file must be a mapping with name and groups, got %s",
                    ykind_name(root));
    if ((rc = check_keys(ld, root, &p, k_top_keys)) ||
        (rc = yname(ld, root, &p, c->name, sizeof c->name)) ||
        (rc = read_stack(ld, root, &p, &c->stack)) ||
        (rc = read_reliability(ld, root, &p, &c->reliability)))
        return rc;
    {
        const ynode *d = yget(root, "description", NULL);
        ypath dp = ypath_key(&p, "description");
        if (d != NULL && d->kind != Y_SCALAR)
            return fail(ld, d, &dp, "must be a string, got %s", ykind_name(d));
    }
    groups = yget(root, "groups", NULL);
    if (groups == NULL)
        return fail(ld, root, &p, "missing required key 'groups' (a list of node groups)");
    if (groups->kind != Y_SEQ || groups->n == 0)
        return fail(ld, groups, &gp, "must be a non-empty list of node groups");
    if (groups->n > CLUSTER_MAX_GROUPS)
        return fail(ld, groups, &gp, "%zu groups; at most %d are supported", groups->n,
                    CLUSTER_MAX_GROUPS);
    c->group = pl_calloc(groups->n, sizeof *c->group);
    if (c->group == NULL)
        return error_oom(ld->err);
    for (i = 0; i < groups->n; i++) {
        ypath ep = ypath_index(&gp, i);
        node_group *g = &c->group[i];
        if ((rc = read_group(ld, groups->child[i], &ep, i, g)))
            return rc;
        if (group_index(c, g->name) >= 0) {
            ypath np = ypath_key(&ep, "name");
            const ynode *nn = yget(groups->child[i], "name", NULL);
            return fail(ld, nn ? nn : groups->child[i], &np, "duplicate group name '%s'",
                        g->name);
        }
        c->n_groups++;
        total += (long)g->nodes * g->gpus_per_node;
        if (total > CLUSTER_MAX_GPUS)
            return fail(ld, groups->child[i], &ep,
                        "the cluster has more than the limit of %d GPUs", CLUSTER_MAX_GPUS);
    }
    links = yget(root, "links", NULL);
    if (links == NULL)
        return PLANNER_OK;
    if (links->kind != Y_SEQ)
        return fail(ld, links, &lp, "must be a list of {between, bandwidth, latency}");
    if (links->n == 0)
        return PLANNER_OK;
    c->link = pl_calloc(links->n, sizeof *c->link);
    if (c->link == NULL)
        return error_oom(ld->err);
    for (i = 0; i < links->n; i++) {
        ypath ep = ypath_index(&lp, i);
        group_link *l = &c->link[i];
        if ((rc = read_link(ld, links->child[i], &ep, c, l)))
            return rc;
        for (j = 0; j < c->n_links; j++)
            if ((c->link[j].a == l->a && c->link[j].b == l->b) ||
                (c->link[j].a == l->b && c->link[j].b == l->a))
                return fail(ld, links->child[i], &ep, "the link between '%s' and '%s' is "
                                                      "listed twice",
                            c->group[l->a].name, c->group[l->b].name);
        c->n_links++;
    }
    return PLANNER_OK;
}

/* "clusters/h100x512.yaml" -> "h100x512". */
static void name_from_path(const char *path, char *buf, size_t size)
{
    const char *base = strrchr(path, '/'), *dot;
    size_t n;
    base = base ? base + 1 : path;
    dot = strrchr(base, '.');
    n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    if (n >= size)
        n = size - 1;
    memcpy(buf, base, n);
    buf[n] = '\0';
    if (n == 0)
        snprintf(buf, size, "cluster");
}

planner_status cluster_load_buffer(cluster **out, const char *text, size_t len,
                                   const char *name, planner_error *err)
{
    yloader ld = {name, text, len, err};
    ynode *root = NULL;
    cluster *c = NULL;
    planner_status rc;

    *out = NULL;
    if ((rc = yaml_tree(&ld, &root)) != PLANNER_OK)
        goto cleanup;
    c = pl_calloc(1, sizeof *c);
    if (c == NULL) {
        rc = error_oom(err);
        goto cleanup;
    }
    name_from_path(name, c->name, sizeof c->name);
    if ((rc = read_cluster(&ld, root, c)) != PLANNER_OK)
        goto cleanup;
    *out = c;
    c = NULL;
cleanup:
    cluster_free(c);
    ynode_free(root);
    return rc;
}

planner_status cluster_load(cluster **out, const char *path, planner_error *err)
{
    char *text = NULL;
    size_t len = 0;
    planner_status rc;
    *out = NULL;
    rc = file_read_all(&text, &len, path, INPUT_MAX_BYTES, err);
    if (rc == PLANNER_OK)
        rc = cluster_load_buffer(out, text, len, path, err);
    pl_free(text);
    return rc;
}

void cluster_free(cluster *c)
{
    if (c == NULL)
        return;
    pl_free(c->group);
    pl_free(c->link);
    pl_free(c);
}

int group_total_gpus(const node_group *g)
{
    return g == NULL ? 0 : g->nodes * g->gpus_per_node;
}

int cluster_total_gpus(const cluster *c)
{
    int i, total = 0;
    if (c == NULL)
        return 0;
    for (i = 0; i < c->n_groups; i++)
        total += group_total_gpus(&c->group[i]);
    return total;
}

void cluster_link_between(const cluster *c, int a, int b, double *bytes_per_s,
                          double *latency_s)
{
    const node_group *ga, *gb;
    int i;
    *bytes_per_s = 0;
    *latency_s = 0;
    if (c == NULL || a < 0 || b < 0 || a >= c->n_groups || b >= c->n_groups)
        return;
    ga = &c->group[a];
    gb = &c->group[b];
    if (a == b) {
        *bytes_per_s = ga->inter_bytes_per_s;
        *latency_s = ga->inter_latency_s;
        return;
    }
    for (i = 0; i < c->n_links; i++)
        if ((c->link[i].a == a && c->link[i].b == b) ||
            (c->link[i].a == b && c->link[i].b == a)) {
            *bytes_per_s = c->link[i].bytes_per_s;
            *latency_s = c->link[i].latency_s;
            return;
        }
    *bytes_per_s = ga->inter_bytes_per_s < gb->inter_bytes_per_s ? ga->inter_bytes_per_s
                                                                 : gb->inter_bytes_per_s;
    *latency_s = ga->inter_latency_s > gb->inter_latency_s ? ga->inter_latency_s
                                                           : gb->inter_latency_s;
}
