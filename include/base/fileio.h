/* fileio.h: reading input files with a size limit, and writing output files
 * atomically (a temporary file in the same directory, renamed on success). */
#ifndef PLANNER_FILEIO_H
#define PLANNER_FILEIO_H

#include <stdio.h>
#include "base/error.h"

#define INPUT_MAX_BYTES (16L * 1024 * 1024)

/* Reads all of `path` (at most `limit` bytes) into a new NUL-terminated
 * buffer *out (pl_free it), length in *len. */
planner_status file_read_all(const char *path, long limit, char **out, size_t *len,
                             planner_error *err);

typedef struct atomic_file {
    FILE *fp;
    char tmp_path[4096];
    char path[4096];
} atomic_file;

/* Opens a temporary file beside `path`; "-" means stdout (no temporary). */
planner_status atomic_open(atomic_file *af, const char *path, planner_error *err);
/* Flushes, checks for write errors, renames into place. */
planner_status atomic_commit(atomic_file *af, planner_error *err);
/* Removes the temporary file; safe after a commit. */
void atomic_abort(atomic_file *af);

#endif
