/* error.h: the one error type of planner, and its exit codes.
 *
 * An error is filled where the problem is found (a loader, the option parser,
 * the search) and printed once, by main, as
 *     planner: FILE:LINE:COL: message
 * LINE and COL are 1-based; 0 means "not known" and is left out of the print.
 * `path` is the key path in the input (model.layers[3].hidden), may be empty.
 */
#ifndef PLANNER_ERROR_H
#define PLANNER_ERROR_H

#include <stdarg.h>
#include <stdio.h>

/* Exit codes: the one table, shown in --help and the README. */
typedef enum planner_status {
    PLANNER_OK = 0,          /* success */
    PLANNER_E_INPUT = 1,     /* invalid input file or value */
    PLANNER_E_USAGE = 2,     /* bad command line */
    PLANNER_E_INFEASIBLE = 3,/* no feasible plan */
    PLANNER_E_IO = 4,        /* cannot read or write a file or stdout */
    PLANNER_E_INTERNAL = 70  /* a bug, or out of memory */
} planner_status;

#define ERROR_FILE_MAX 512
#define ERROR_PATH_MAX 256
#define ERROR_MSG_MAX 768

typedef struct planner_error {
    planner_status status;      /* PLANNER_OK while no error is set */
    char file[ERROR_FILE_MAX];  /* input file, "" for the command line */
    int line, col;              /* 1-based; 0 = unknown */
    char path[ERROR_PATH_MAX];  /* key path, "" if none */
    char msg[ERROR_MSG_MAX];
} planner_error;

#define PLANNER_ERROR_INIT {PLANNER_OK, "", 0, 0, "", ""}

/* Sets *err (if err is non-NULL and holds no error yet: the first error wins)
 * and returns `status`, so callers can write `return error_set(err, ...)`.
 * `file` and `path` may be NULL. */
planner_status error_set(planner_error *err, planner_status status, const char *file,
                         int line, int col, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Same, with a va_list. */
planner_status error_vset(planner_error *err, planner_status status, const char *file,
                          int line, int col, const char *path, const char *fmt,
                          va_list ap) __attribute__((format(printf, 7, 0)));

/* Out of memory: status PLANNER_E_INTERNAL, message "out of memory". */
planner_status error_oom(planner_error *err);

/* Clears *err back to PLANNER_ERROR_INIT. */
void error_clear(planner_error *err);

/* Prints "planner: FILE:LINE:COL: message" (parts that are unknown left out)
 * and a newline to `out`. */
void error_print(const planner_error *err, FILE *out);

/* Formats the same text as error_print into buf (no newline). */
void error_format(const planner_error *err, char *buf, size_t size);

#endif
