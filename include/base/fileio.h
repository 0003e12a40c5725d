/* fileio.h: reading input files with a size limit, and writing the output
 * files of a run all together or not at all (an output set).
 *
 * An output set holds every output of one run (and the identities of its
 * input files).  Its outputs are registered first, checked (no two outputs,
 * and no output and input, name the same file: same device and inode, or for
 * a file still to be created, the same directory and name), opened after the
 * work succeeded, written, and committed together:
 *   - a regular file (or one still to be created, or a symlink to a regular
 *     file, resolved) is written to "TARGET.tmp.XXXXXX" beside it and renamed
 *     over it at the commit;
 *   - standard output ("-", or a path naming the file standard output is: the
 *     stream the caller gave output_set_init; the library never names stdout),
 *     devices, FIFOs and sockets are written directly, never replaced: their
 *     bytes are held in memory and written at the commit (or, for an output
 *     added with OUTPUT_STREAM, written as they come), and the write is checked;
 *   - the commit closes every temporary (a write error or a full disk fails the
 *     whole set), then writes the direct outputs, then renames; any failure
 *     removes every temporary, so a failed run leaves none of its files.
 * The one residual window: a rename failing after an earlier one succeeded
 * (both in directories already proven writable) leaves the earlier file.
 */
#ifndef PLANNER_FILEIO_H
#define PLANNER_FILEIO_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>
#include "base/error.h"

#define INPUT_MAX_BYTES (16L * 1024 * 1024)

/* Reads all of `path` (at most `limit` bytes) into a new NUL-terminated
 * buffer *out (pl_free it), length in *len. */
planner_status file_read_all(char **out, size_t *len, const char *path, long limit,
                             planner_error *err);

/* ---- output sets ------------------------------------------------------------ */

#define OUTPUT_SET_MAX 8

/* Flags of output_set_add. */
enum {
    OUTPUT_BUFFERED = 0,   /* a direct output's bytes wait in memory for the commit */
    OUTPUT_STREAM = 1      /* a direct output is written as it comes (long runs: sweep) */
};

/* What a path names, for the same-file checks (fileio.c fills it). */
typedef struct file_ident {
    const char *path, *role;   /* borrowed: the name as given, the option that gave it */
    bool known;                /* false: no identity (a missing input, a character device) */
    bool in_dir;               /* a file still to be created: its directory and `base` */
    dev_t dev;
    ino_t ino;
    const char *base;          /* borrowed, inside path; only when in_dir */
} file_ident;

typedef struct output_file {
    file_ident id;
    int flags;
    int kind;                  /* fileio.c: where the bytes go */
    FILE *fp;                  /* where the writer writes, after output_set_open */
    char *target;              /* the file renamed over or opened (owned) */
    char *tmp_path;            /* the temporary beside it (owned), or NULL */
    char *buf;                 /* a buffered direct output's bytes (owned) */
    size_t buf_len;
    bool committed;
} output_file;

typedef struct output_set {
    output_file out[OUTPUT_SET_MAX];
    int n_out;
    file_ident *in;            /* the run's inputs (owned array) */
    int n_in;
    size_t cap_in;
    FILE *std_out;             /* where "-" writes (borrowed; the tool's stdout), or NULL */
} output_set;

/* An empty set whose standard output is std_out (the tool passes stdout;
 * with NULL, an output "-" is refused at the open: PLANNER_E_USAGE). */
void output_set_init(output_set *os, FILE *std_out);

/* Registers an input file of the run under `role` ("--model"); a path that
 * does not exist has no identity (its loader reports it).  PLANNER_E_USAGE
 * when an output already registered is the same file. */
planner_status output_set_input(output_set *os, const char *path, const char *role,
                                planner_error *err);

/* Registers an output ("-" is standard output) named by option `role`, and
 * its index in *index.  PLANNER_E_USAGE when it is the same file as an
 * output or input already registered; PLANNER_E_IO when it cannot be
 * created (a directory, a missing or unreadable directory).  Nothing is
 * created yet.  `path` and `role` are borrowed and must outlive the set. */
planner_status output_set_add(output_set *os, const char *path, const char *role, int flags,
                              int *index, planner_error *err);

/* Opens output `index` for writing (its temporary, or its memory buffer);
 * its stream is then os->out[index].fp. */
planner_status output_set_open(output_set *os, int index, planner_error *err);

/* After a writer failed on output `index`: PLANNER_E_IO with its path when the
 * failure was the stream's (a write error, a full disk), else PLANNER_OK (the
 * writer's own failure: the caller reports it). */
planner_status output_set_stream_error(const output_set *os, int index, planner_error *err);

/* Commits every opened output (see above): all of them, or none and an error
 * naming the file that failed (PLANNER_E_IO; PLANNER_E_INTERNAL when out of
 * memory).  Outputs registered but never opened are left alone. */
planner_status output_set_commit(output_set *os, planner_error *err);

/* Frees the set; every output not committed is removed (its temporary
 * unlinked, its buffer dropped).  NULL-safe; safe after a commit. */
void output_set_free(output_set *os);

/* ---- one output ----------------------------------------------------------- */

/* An output set of one output (OUTPUT_STREAM), for commands with one output
 * file and no inputs to guard.  "-" means std_out (see output_set_init). */
typedef struct atomic_file {
    FILE *fp;
    output_set set;
} atomic_file;

planner_status atomic_open(atomic_file *af, const char *path, FILE *std_out,
                           planner_error *err);
/* Flushes, checks for write errors, renames into place. */
planner_status atomic_commit(atomic_file *af, planner_error *err);
/* Removes the temporary file; safe after a commit (and needed after it: frees). */
void atomic_abort(atomic_file *af);

#endif
