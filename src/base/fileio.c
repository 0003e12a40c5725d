/* fileio.c: bounded reads of input files and atomic writes of output files.
 * An output file is written to "PATH.tmp.XXXXXX" beside PATH, flushed, checked
 * with ferror/fclose, then renamed over PATH, so a failure never leaves a
 * partial file.  "-" is stdout, checked the same way (jq's habit). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/fileio.h"

planner_status file_read_all(const char *path, long limit, char **out, size_t *len,
                             planner_error *err)
{
    FILE *fp = NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    planner_status rc = PLANNER_OK;
    struct stat st;

    *out = NULL;
    *len = 0;
    fp = fopen(path, "rb");
    if (fp == NULL)
        return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "cannot open: %s",
                         strerror(errno));
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "is a directory");
        goto cleanup;
    }
    for (;;) {
        if (n + 4096 + 1 > cap) {
            size_t ncap = cap == 0 ? 8192 : cap * 2;
            char *nb = pl_realloc(buf, ncap);
            if (nb == NULL) {
                rc = error_oom(err);
                goto cleanup;
            }
            buf = nb;
            cap = ncap;
        }
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

planner_status atomic_open(atomic_file *af, const char *path, planner_error *err)
{
    memset(af, 0, sizeof *af);
    if (strcmp(path, "-") == 0) {
        af->fp = stdout;
        snprintf(af->path, sizeof af->path, "-");
        return PLANNER_OK;
    }
    if (strlen(path) + 16 > sizeof af->tmp_path)
        return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "path too long");
    snprintf(af->path, sizeof af->path, "%s", path);
    snprintf(af->tmp_path, sizeof af->tmp_path, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(af->tmp_path);
    if (fd < 0) {
        af->tmp_path[0] = '\0';
        return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "cannot create: %s",
                         strerror(errno));
    }
    /* mkstemp creates 0600; give the file the mode a plain fopen would. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        unlink(af->tmp_path);
        af->tmp_path[0] = '\0';
        return error_set(err, PLANNER_E_IO, path, 0, 0, NULL, "cannot set mode: %s",
                         strerror(e));
    }
    af->fp = fdopen(fd, "w");
    if (af->fp == NULL) {
        close(fd);
        unlink(af->tmp_path);
        af->tmp_path[0] = '\0';
        return error_oom(err);
    }
    return PLANNER_OK;
}

planner_status atomic_commit(atomic_file *af, planner_error *err)
{
    if (af->fp == NULL)
        return PLANNER_OK;
    if (af->fp == stdout) {
        af->fp = NULL;
        if (fflush(stdout) != 0 || ferror(stdout))
            return error_set(err, PLANNER_E_IO, NULL, 0, 0, NULL,
                             "write error on standard output");
        return PLANNER_OK;
    }
    int bad = fflush(af->fp) != 0 || ferror(af->fp);
    bad |= fclose(af->fp) != 0;
    af->fp = NULL;
    if (bad) {
        int e = errno;
        unlink(af->tmp_path);
        af->tmp_path[0] = '\0';
        return error_set(err, PLANNER_E_IO, af->path, 0, 0, NULL, "write error: %s",
                         strerror(e));
    }
    if (rename(af->tmp_path, af->path) != 0) {
        int e = errno;
        unlink(af->tmp_path);
        af->tmp_path[0] = '\0';
        return error_set(err, PLANNER_E_IO, af->path, 0, 0, NULL, "cannot rename: %s",
                         strerror(e));
    }
    af->tmp_path[0] = '\0';
    return PLANNER_OK;
}

void atomic_abort(atomic_file *af)
{
    if (af->fp != NULL && af->fp != stdout)
        fclose(af->fp);
    af->fp = NULL;
    if (af->tmp_path[0] != '\0')
        unlink(af->tmp_path);
    af->tmp_path[0] = '\0';
}
