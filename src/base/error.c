/* error.c: filling and printing planner_error (see error.h).
 * The first error set wins: later calls on a filled error change nothing, so a
 * caller deep in a loader can set the precise message and its callers can
 * still "set" a vaguer one on the way out without losing it. */
#include <stdio.h>
#include <string.h>
#include "base/error.h"

static void copy_str(char *dst, size_t size, const char *src)
{
    if (src == NULL)
        src = "";
    snprintf(dst, size, "%s", src);
}

planner_status error_vset(planner_error *err, planner_status status, const char *file,
                          int line, int col, const char *path, const char *fmt,
                          va_list ap)
{
    if (err == NULL || err->status != PLANNER_OK)
        return status;
    err->status = status;
    copy_str(err->file, sizeof err->file, file);
    err->line = line > 0 ? line : 0;
    err->col = col > 0 ? col : 0;
    copy_str(err->path, sizeof err->path, path);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    return status;
}

planner_status error_set(planner_error *err, planner_status status, const char *file,
                         int line, int col, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, status, file, line, col, path, fmt, ap);
    va_end(ap);
    return status;
}

planner_status error_oom(planner_error *err)
{
    return error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL, "out of memory");
}

void error_clear(planner_error *err)
{
    planner_error blank = PLANNER_ERROR_INIT;
    if (err != NULL)
        *err = blank;
}

void error_format(const planner_error *err, char *buf, size_t size)
{
    char where[ERROR_FILE_MAX + 32] = "";
    if (err->file[0] != '\0') {
        if (err->line > 0 && err->col > 0)
            snprintf(where, sizeof where, "%s:%d:%d: ", err->file, err->line, err->col);
        else if (err->line > 0)
            snprintf(where, sizeof where, "%s:%d: ", err->file, err->line);
        else
            snprintf(where, sizeof where, "%s: ", err->file);
    }
    snprintf(buf, size, "planner: %s%s", where, err->msg);
}

void error_print(const planner_error *err, FILE *out)
{
    char buf[ERROR_FILE_MAX + ERROR_MSG_MAX + 64];
    error_format(err, buf, sizeof buf);
    fprintf(out, "%s\n", buf);
}
