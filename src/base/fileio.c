/* fileio.c: bounded reads of input files, and output sets: every output of a
 * run written all together or not at all (the contract is in fileio.h).
 *
 * Where bytes go (output_file.kind): a regular file, or one still to be
 * created, is written to a temporary beside it ("TARGET.tmp.XXXXXX", mkstemp,
 * given the mode a plain fopen would) and renamed over it at the commit
 * (rename(2) is atomic within a directory).  Anything else -- standard output,
 * a path that names the file standard output is (/dev/stdout, /proc/self/fd/1),
 * a device, a FIFO, a socket, a dangling symlink -- is written in place: a
 * rename would replace the device node or the link instead of writing to it.
 * Those bytes wait in a memory stream (open_memstream) until the commit, so a
 * run that fails writes nothing there either, and every write (fwrite, fflush,
 * fclose) is checked: /dev/full fails the run with exit 4 (jq's habit).
 * A symlink to a regular file is resolved (realpath) and its target replaced,
 * so the link stays.  Same-file checks compare device and inode (stat), never
 * names; a file still to be created is its directory's identity and its name.
 */
#define _XOPEN_SOURCE 700   /* realpath (glibc declares it for XSI only) */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/fileio.h"

planner_status file_read_all(char **out, size_t *len, const char *path, long limit,
                             planner_error *err)
{
    FILE *fp = NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    planner_status rc = PLANNER_OK;
    struct stat st;

    *out = NULL;
    *len = 0;
    if (path[0] == '\0')   /* fopen's ENOENT would name no file */
        return error_set(err, PLANNER_E_IO, NULL, 0, 0, NULL, "cannot open '': empty file name");
    fp = fopen(path, "rb");
    if (fp == NULL)
        return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "cannot open: %s",
                         strerror(errno));
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "is a directory");
        goto cleanup;
    }
    for (;;) {
        char *nb = pl_grow(buf, &cap, n + 4096 + 1, 1, 8192);
        if (nb == NULL) {
            rc = error_oom(err);
            goto cleanup;
        }
        buf = nb;
        size_t got = fread(buf + n, 1, cap - n - 1, fp);
        n += got;
        if ((long)n > limit) {
            rc = error_set(err, PLANNER_E_INPUT, path, 0, 0, NULL,
                           "file larger than the limit of %ld bytes", limit);
            goto cleanup;
        }
        if (got == 0) {
            if (ferror(fp)) {
                rc = error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "read error: %s",
                               strerror(errno));
                goto cleanup;
            }
            break;
        }
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    buf = NULL;
cleanup:
    pl_free(buf);
    if (fp != NULL)
        fclose(fp);
    return rc;
}

/* ---- output sets ------------------------------------------------------------ */

enum output_kind {
    OUT_NONE,        /* registered, not opened */
    OUT_ATOMIC,      /* temporary beside `target`, renamed at the commit */
    OUT_STDOUT,      /* standard output, buffered or streamed */
    OUT_DIRECT       /* a device, FIFO, socket or dangling link: opened at the commit
                        (buffered) or at the open (streamed) */
};

void output_set_init(output_set *os, FILE *std_out)
{
    memset(os, 0, sizeof *os);
    os->std_out = std_out;
}

/* The descriptor of the set's standard output, or -1 when it has none. */
static int std_out_fd(const output_set *os)
{
    return os->std_out != NULL ? fileno(os->std_out) : -1;
}

/* The directory part of path ("." when none) into buf; the base name's offset. */
static size_t split_dir(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    size_t n;
    if (slash == NULL) {
        snprintf(buf, size, ".");
        return 0;
    }
    n = (size_t)(slash - path);
    if (n == 0)
        n = 1;   /* "/name" */
    snprintf(buf, size, "%.*s", (int)n, path);
    return (size_t)(slash - path) + 1;
}

/* Fills id for path; for an output, a file that cannot be created is an error
 * (found before any work is done). */
static planner_status ident_of(file_ident *id, const char *path, const char *role,
                               bool output, int std_fd, planner_error *err)
{
    struct stat st;
    memset(id, 0, sizeof *id);
    id->path = path;
    id->role = role;
    if (output && path[0] == '\0')   /* not the directory "." the rules below would find */
        return error_set(err, PLANNER_E_IO, NULL, 0, 0, NULL,
                         "%s: cannot create '': empty file name", role);
    if (strcmp(path, "-") == 0 ? std_fd >= 0 && fstat(std_fd, &st) == 0
                               : stat(path, &st) == 0) {
        if (output && S_ISDIR(st.st_mode))
            return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "%s: is a directory", role);
        /* two outputs on one terminal or /dev/null are harmless */
        id->known = !S_ISCHR(st.st_mode);
        id->dev = st.st_dev;
        id->ino = st.st_ino;
        return PLANNER_OK;
    }
    if (!output || strcmp(path, "-") == 0)
        return PLANNER_OK;   /* a missing input: its loader says so */
    if (errno != ENOENT)
        return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "%s: cannot create: %s", role,
                         strerror(errno));
    char dir[PATH_MAX];
    size_t base = split_dir(path, dir, sizeof dir);
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "%s: cannot create: %s", role,
                         strerror(stat(dir, &st) != 0 ? errno : ENOTDIR));
    if (path[base] == '\0')
        return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "%s: is a directory", role);
    id->known = id->in_dir = true;
    id->dev = st.st_dev;
    id->ino = st.st_ino;
    id->base = path + base;
    return PLANNER_OK;
}

static bool same_file(const file_ident *a, const file_ident *b)
{
    if (strcmp(a->path, "-") == 0 && strcmp(b->path, "-") == 0)
        return true;
    return a->known && b->known && a->in_dir == b->in_dir && a->dev == b->dev &&
           a->ino == b->ino && (!a->in_dir || strcmp(a->base, b->base) == 0);
}

/* PLANNER_E_USAGE when id is the same file as a registered output (or input). */
static planner_status check_distinct(const output_set *os, const file_ident *id,
                                     planner_error *err)
{
    for (int i = 0; i < os->n_out + os->n_in; i++) {
        const file_ident *o = i < os->n_out ? &os->out[i].id : &os->in[i - os->n_out];
        if (same_file(o, id))
            return error_set(err, PLANNER_E_USAGE, id->path, 0, 0, NULL,
                             "%s names the same file as %s%s%s: refused (%s)", id->role,
                             o->role, strcmp(o->path, id->path) != 0 ? " " : "",
                             strcmp(o->path, id->path) != 0 ? o->path : "",
                             i < os->n_out ? "one output would replace the other"
                                           : "the output would replace an input of the run");
    }
    return PLANNER_OK;
}

planner_status output_set_input(output_set *os, const char *path, const char *role,
                                planner_error *err)
{
    file_ident id;
    planner_status rc;
    if (path == NULL)
        return PLANNER_OK;
    if ((rc = ident_of(&id, path, role, false, std_out_fd(os), err)) != PLANNER_OK)
        return rc;
    if (!id.known)
        return PLANNER_OK;
    for (int i = 0; i < os->n_out; i++)
        if (same_file(&os->out[i].id, &id))
            return error_set(err, PLANNER_E_USAGE, os->out[i].id.path, 0, 0, NULL,
                             "%s names the same file as %s %s: refused (the output would "
                             "replace an input of the run)", os->out[i].id.role, role, path);
    file_ident *grown = pl_grow(os->in, &os->cap_in, (size_t)os->n_in + 1, sizeof *grown, 8);
    if (grown == NULL)
        return error_oom(err);
    os->in = grown;
    os->in[os->n_in++] = id;
    return PLANNER_OK;
}

planner_status output_set_add(output_set *os, const char *path, const char *role, int flags,
                              int *index, planner_error *err)
{
    file_ident id;
    planner_status rc;
    if (os->n_out >= OUTPUT_SET_MAX)
        return error_set(err, PLANNER_E_INTERNAL, path, 0, 0, NULL, "too many outputs");
    if ((rc = ident_of(&id, path, role, true, std_out_fd(os), err)) != PLANNER_OK ||
        (rc = check_distinct(os, &id, err)) != PLANNER_OK)
        return rc;
    output_file *o = &os->out[os->n_out];
    memset(o, 0, sizeof *o);
    o->id = id;
    o->flags = flags;
    *index = os->n_out++;
    return PLANNER_OK;
}

/* Creates the temporary beside o->target. */
static planner_status open_temporary(output_file *o, planner_error *err)
{
    size_t n = strlen(o->target) + sizeof ".tmp.XXXXXX";
    o->tmp_path = pl_malloc(n);
    if (o->tmp_path == NULL)
        return error_oom(err);
    snprintf(o->tmp_path, n, "%s.tmp.XXXXXX", o->target);
    int fd = mkstemp(o->tmp_path);
    if (fd < 0) {
        int e = errno;
        pl_free(o->tmp_path);
        o->tmp_path = NULL;
        return error_set(err, PLANNER_E_IO, o->id.path, 0, 0, NULL, "%s: cannot create: %s",
                         o->id.role, strerror(e));
    }
    /* mkstemp creates 0600; give the file the mode a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0 || (o->fp = fdopen(fd, "w")) == NULL) {
        int e = errno;
        close(fd);
        return error_set(err, PLANNER_E_IO, o->id.path, 0, 0, NULL, "%s: cannot create: %s",
                         o->id.role, strerror(e));
    }
    return PLANNER_OK;
}

/* Where o's bytes go: sets kind and target. */
static planner_status classify(output_file *o, int std_fd, planner_error *err)
{
    struct stat st, out_st;
    const char *path = o->id.path;
    bool is_stdout = strcmp(path, "-") == 0;

    if (!is_stdout && stat(path, &st) == 0 && std_fd >= 0 && fstat(std_fd, &out_st) == 0 &&
        st.st_dev == out_st.st_dev && st.st_ino == out_st.st_ino)
        is_stdout = true;   /* /dev/stdout, /proc/self/fd/1, or stdout's own file */
    if (is_stdout) {
        if (std_fd < 0)
            return error_set(err, PLANNER_E_USAGE, path, 0, 0, NULL,
                             "%s: no standard output to write to", o->id.role);
        o->kind = OUT_STDOUT;
        return PLANNER_OK;
    }
    o->kind = OUT_DIRECT;
    if (lstat(path, &st) != 0 || S_ISREG(st.st_mode)) {
        o->kind = OUT_ATOMIC;   /* to be created, or a regular file */
        o->target = pl_strdup(path);
    } else if (S_ISLNK(st.st_mode) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
        char *real = realpath(path, NULL);   /* malloc'd by libc */
        if (real != NULL) {
            o->kind = OUT_ATOMIC;
            o->target = pl_strdup(real);
            free(real);
        }
    }
    if (o->kind == OUT_DIRECT)
        o->target = pl_strdup(path);
    return o->target != NULL ? PLANNER_OK : error_oom(err);
}

planner_status output_set_open(output_set *os, int index, planner_error *err)
{
    output_file *o = &os->out[index];
    planner_status rc;
    if ((rc = classify(o, std_out_fd(os), err)) != PLANNER_OK)
        return rc;
    if (o->kind == OUT_ATOMIC)
        return open_temporary(o, err);
    if (o->flags & OUTPUT_STREAM) {
        o->fp = o->kind == OUT_STDOUT ? os->std_out : fopen(o->target, "w");
        if (o->fp == NULL)
            return error_set(err, PLANNER_E_IO, o->id.path, 0, 0, NULL, "cannot open: %s",
                             strerror(errno));
        return PLANNER_OK;
    }
    o->fp = open_memstream(&o->buf, &o->buf_len);
    return o->fp != NULL ? PLANNER_OK : error_oom(err);
}

/* True while o's bytes wait in a memory stream. */
static bool in_memory(const output_file *o)
{
    return o->kind != OUT_ATOMIC && !(o->flags & OUTPUT_STREAM);
}

static const char *display_name(const output_file *o)
{
    return o->kind == OUT_STDOUT ? "standard output" : o->id.path;
}

planner_status output_set_stream_error(const output_set *os, int index, planner_error *err)
{
    const output_file *o = &os->out[index];
    int e = errno;
    if (o->fp == NULL || !ferror(o->fp))
        return PLANNER_OK;
    if (in_memory(o))
        return error_oom(err);   /* a memory stream fails only for memory */
    return error_set(err, PLANNER_E_IO, display_name(o), 0, 0, NULL, "write error: %s",
                     e != 0 ? strerror(e) : "unknown");
}

/* Flushes and closes o's stream (never the standard output); PLANNER_E_IO, or out
 * of memory for a memory stream (`mem`), on a write error. */
static planner_status close_stream(output_file *o, bool mem, planner_error *err)
{
    FILE *fp = o->fp;
    int bad, e;
    if (fp == NULL)
        return PLANNER_OK;
    o->fp = NULL;
    e = errno;   /* a failed write before this flush left its errno */
    bad = fflush(fp) != 0;
    if (bad)
        e = errno;
    bad |= ferror(fp) != 0;
    if (o->kind == OUT_STDOUT && !mem)   /* the standard output itself, not its buffer */
        clearerr(fp);   /* reported here; main's final check must not repeat it */
    else if (fclose(fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad)
        return PLANNER_OK;
    if (mem)
        return error_oom(err);
    return error_set(err, PLANNER_E_IO, display_name(o), 0, 0, NULL, "write error: %s",
                     e != 0 ? strerror(e) : "unknown");
}

/* Writes a buffered direct output's bytes to its file or the standard output
 * (std_out), checked. */
static planner_status write_direct(output_file *o, FILE *std_out, planner_error *err)
{
    if (o->kind == OUT_STDOUT) {
        o->fp = std_out;
    } else if ((o->fp = fopen(o->target, "w")) == NULL) {
        return error_set(err, PLANNER_E_IO, o->id.path, 0, 0, NULL, "cannot open: %s",
                         strerror(errno));
    }
    errno = 0;
    (void)fwrite(o->buf, 1, o->buf_len, o->fp);   /* checked by close_stream */
    return close_stream(o, false, err);
}

planner_status output_set_commit(output_set *os, planner_error *err)
{
    planner_status rc = PLANNER_OK;
    /* 1. every temporary and memory stream complete */
    errno = 0;
    for (int i = 0; i < os->n_out && rc == PLANNER_OK; i++)
        rc = close_stream(&os->out[i], in_memory(&os->out[i]), err);
    /* 2. the direct outputs, written and checked: files first, stdout last (a
     * failure on /dev/full leaves nothing printed) */
    for (int k = 0; k < 2 * os->n_out && rc == PLANNER_OK; k++) {
        output_file *o = &os->out[k % os->n_out];
        if (o->kind == (k < os->n_out ? OUT_DIRECT : OUT_STDOUT)) {
            if (!(o->flags & OUTPUT_STREAM))
                rc = write_direct(o, os->std_out, err);
            o->committed = rc == PLANNER_OK;
        }
    }
    /* 3. the renames */
    for (int i = 0; i < os->n_out && rc == PLANNER_OK; i++) {
        output_file *o = &os->out[i];
        if (o->kind != OUT_ATOMIC || o->tmp_path == NULL)
            continue;
        if (rename(o->tmp_path, o->target) != 0) {
            rc = error_set(err, PLANNER_E_IO, o->id.path, 0, 0, NULL, "cannot rename: %s",
                           strerror(errno));
            break;
        }
        pl_free(o->tmp_path);
        o->tmp_path = NULL;
        o->committed = true;
    }
    return rc;
}

void output_set_free(output_set *os)
{
    if (os == NULL)
        return;
    for (int i = 0; i < os->n_out; i++) {
        output_file *o = &os->out[i];
        if (o->fp != NULL && o->fp != os->std_out)   /* a file, or stdout's buffer */
            fclose(o->fp);
        if (o->tmp_path != NULL)
            unlink(o->tmp_path);
        pl_free(o->tmp_path);
        pl_free(o->target);
        free(o->buf);   /* open_memstream's, malloc'd by libc */
    }
    pl_free(os->in);
    output_set_init(os, os->std_out);
}

/* ---- one output ----------------------------------------------------------- */

planner_status atomic_open(atomic_file *af, const char *path, FILE *std_out,
                           planner_error *err)
{
    int index;
    planner_status rc;
    af->fp = NULL;
    output_set_init(&af->set, std_out);
    if ((rc = output_set_add(&af->set, path, "output", OUTPUT_STREAM, &index, err)) ==
            PLANNER_OK &&
        (rc = output_set_open(&af->set, index, err)) == PLANNER_OK)
        af->fp = af->set.out[index].fp;
    if (rc != PLANNER_OK)
        output_set_free(&af->set);
    return rc;
}

planner_status atomic_commit(atomic_file *af, planner_error *err)
{
    planner_status rc = output_set_commit(&af->set, err);
    output_set_free(&af->set);
    af->fp = NULL;
    return rc;
}

void atomic_abort(atomic_file *af)
{
    output_set_free(&af->set);
    af->fp = NULL;
}
