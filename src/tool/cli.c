/* cli.c: number parsing and usage errors for the option parsers. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "inputs/stack.h"
#include "out/emit.h"
#include "tool/cli.h"

const char cli_exit_codes_help[] =
    "Exit status:\n"
    "  0   success\n"
    "  1   invalid input (a model, cluster or runs file, or a value in it)\n"
    "  2   usage error (bad command line)\n"
    "  3   no feasible plan (nothing fits; the closest miss is reported)\n"
    "  4   I/O error (cannot read an input or write an output)\n"
    "  70  internal error (a bug, or out of memory)\n";

int cli_parse_int(const char *text, long min, long max, int *out)
{
    char *end = NULL;
    if (text == NULL || *text == '\0')
        return -1;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

int cli_parse_double(const char *text, double min, double max, double *out)
{
    char *end = NULL;
    if (text == NULL || *text == '\0')
        return -1;
    errno = 0;
    double v = strtod(text, &end);
    if (errno != 0 || *end != '\0' || !isfinite(v) || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

int cli_parse_jobs(const char *cmd, const char *arg, int *out)
{
    if (cli_parse_int(arg, 1, CLI_JOBS_MAX, out) != 0)
        return cli_usage_error(cmd, "--jobs: expected a number of threads in 1..%d, got '%s'",
                               CLI_JOBS_MAX, arg);
    return 0;
}

int cli_parse_stack(const char *cmd, const char *name, int *out)
{
    const stack_spec *st = stack_find(name);
    char hint[128], names[256];
    if (st != NULL) {
        *out = (int)st->id;
        return 0;
    }
    stack_unknown_hint(name, hint, sizeof hint, names, sizeof names);
    return cli_usage_error(cmd, "--stack: unknown software stack '%s'%s; known: %s", name, hint,
                           names);
}

/* The names of the stacks that have property `has`, comma-separated. */
static void stacks_with(bool (*has)(const stack_spec *), char *names, size_t size)
{
    size_t used = 0;
    names[0] = '\0';
    for (size_t i = 0; i < stack_count(); i++)
        if (has(stack_at(i)) && used < size)
            used += (size_t)snprintf(names + used, size - used, "%s%s", used ? ", " : "",
                                     stack_at(i)->name);
}

int cli_apply_torch_compile(const char *cmd, bool on, model *m, const cluster *c)
{
    char names[256];
    if (!on)
        return 0;
    if (stack_eager_blocks(stack_get(c->stack))) {
        m->torch_compile = true;
        return 0;
    }
    stacks_with(stack_eager_blocks, names, sizeof names);
    return cli_usage_error(cmd, "--torch-compile: cluster '%s' runs stack '%s', whose blocks "
                                "are fused kernels: nothing to compile (it applies to %s)",
                           c->name, stack_get(c->stack)->name, names);
}

int cli_check_emit_stack(emit_kind kind, const cluster *c)
{
    char names[256], other[128];
    size_t used = 0, n_other = 0;
    const stack_spec *st = stack_get(c->stack);
    if (kind == EMIT_NONE || emit_kind_supported(kind, st))
        return 0;
    names[0] = other[0] = '\0';
    for (size_t i = 0; i < stack_count(); i++)   /* the stacks this kind launches */
        if (emit_kind_supported(kind, stack_at(i)) && used < sizeof names)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                     used ? ", " : "", stack_at(i)->name);
    for (int k = EMIT_MEGATRON; k <= EMIT_DEEPSPEED; k++)   /* the kinds this stack has */
        if (emit_kind_supported((emit_kind)k, st) && n_other < sizeof other)
            n_other += (size_t)snprintf(other + n_other, sizeof other - n_other, "%s%s",
                                        n_other ? ", " : "", emit_kind_name((emit_kind)k));
    return cli_usage_error("", "--emit %s: cluster '%s' runs stack '%s' (%s), which --emit %s "
                               "does not launch (it launches %s); %s%s", emit_kind_name(kind),
                           c->name, st->name, st->version, emit_kind_name(kind), names,
                           n_other ? "this stack has --emit " : "no --emit launches this stack",
                           other);
}

void cli_model_warnings(const char *path, const model *m)
{
    for (int i = 0; i < m->n_notes; i++)
        fprintf(stderr, "planner: %s: warning: %s\n", path, m->notes[i]);
}

int cli_check_models(const char *arg)
{
    struct stat st;
    if (arg == NULL || strcmp(arg, "none") == 0)
        return PLANNER_OK;
    if (stat(arg, &st) != 0) {
        fprintf(stderr, "planner: %s: cannot read the model library (--models): %s\n", arg,
                strerror(errno));
        return PLANNER_E_IO;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "planner: %s: the model library (--models) is not a folder\n", arg);
        return PLANNER_E_IO;
    }
    return PLANNER_OK;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "planner: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (cmd != NULL && cmd[0] != '\0')
        fprintf(stderr, "\nTry 'planner %s --help' for more information.\n", cmd);
    else
        fprintf(stderr, "\nTry 'planner --help' for more information.\n");
    return PLANNER_E_USAGE;
}

void cli_print_wrapped(FILE *out, const char *text, int indent, int width)
{
    int col = indent;
    fprintf(out, "%*s", indent, "");
    for (const char *w = text; *w != '\0';) {
        size_t n = strcspn(w, " ");
        if (col > indent && col + 1 + (int)n > width) {
            fprintf(out, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)n, w);
        col += (int)n;
        w += n;
        w += strspn(w, " ");
    }
    fputc('\n', out);
}
