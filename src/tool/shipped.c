/* shipped.c: shipped model and cluster files by name (shipped.h).
 *
 * The binary finds itself through /proc/self/exe (Linux); the folders tried,
 * in order: EXE_DIR/../share/planner/KIND (an installed planner: `make
 * install` puts the binary in PREFIX/bin and the files in
 * PREFIX/share/planner), EXE_DIR/KIND (./planner in the source tree) and
 * EXE_DIR/../KIND (build/planner).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/suggest.h"
#include "tool/cli.h"
#include "tool/shipped.h"

#define SHIPPED_MAX 128

static int is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The i-th candidate folder of `kind` into buf; -1 past the last. */
static int candidate(int i, const char *kind, char *buf, size_t size)
{
    static const char *const rel[] = {"/../share/planner/", "/", "/../"};
    char exe[1024];
    ssize_t n;
    char *slash;
    if (i < 0 || i >= (int)(sizeof rel / sizeof rel[0]))
        return -1;
    n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    slash = strrchr(exe, '/');
    if (slash == NULL)
        return -1;
    *slash = '\0';
    snprintf(buf, size, "%s%s%s", exe, rel[i], kind);
    return 0;
}

/* The first candidate folder of `kind` that exists, into dir; -1 when none
 * does. */
static int shipped_dir(const char *kind, char *dir, size_t size)
{
    for (int i = 0; candidate(i, kind, dir, size) == 0; i++)
        if (is_dir(dir))
            return 0;
    return -1;
}

/* whether name ends in ext after at least one other character */
static bool has_ext(const char *name, const char *ext)
{
    size_t n = strlen(name), e = strlen(ext);
    return n > e && strcmp(name + n - e, ext) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names (file names less ext, pl_malloc'd, at most SHIPPED_MAX,
 * sorted) of the files in dir ending in ext, into names; their count, 0
 * when dir cannot be read, -1 when an allocation failed (none kept).  The
 * caller frees each name. */
static int shipped_names(const char *dir, const char *ext, char **names)
{
    size_t el = strlen(ext);
    int n = 0;
    DIR *d = opendir(dir);
    if (d == NULL)
        return 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && n < SHIPPED_MAX;) {
        size_t len;
        if (!has_ext(e->d_name, ext))
            continue;
        len = strlen(e->d_name) - el;
        if ((names[n] = pl_malloc(len + 1)) == NULL) {
            while (n > 0)
                pl_free(names[--n]);
            closedir(d);
            return -1;
        }
        memcpy(names[n], e->d_name, len);
        names[n++][len] = '\0';
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);   /* (readdir's order is the disk's) */
    return n;
}

/* The error for `arg`, neither a file nor a shipped name of `kind`: exit 4
 * (I/O, as the open of a missing file), the closest shipped name offered
 * (suggest.c, as for an unknown GPU type). */
static planner_status not_shipped(const char *arg, const char *kind, const char *ext,
                                  planner_error *err)
{
    char dir[1200], hint[160] = "", *names[SHIPPED_MAX];
    int n = shipped_dir(kind, dir, sizeof dir) == 0 ? shipped_names(dir, ext, names) : 0;
    if (n < 0)
        return error_oom(err);
    suggest_format(arg, (const char *const *)names, (size_t)n, hint, sizeof hint);
    for (int i = 0; i < n; i++)
        pl_free(names[i]);
    return error_set(err, PLANNER_E_IO, NULL, 0, 0, NULL,
                     "'%s': no such file, and no shipped %s of that name%s", arg,
                     strcmp(kind, "configs") == 0 ? "model" : "cluster", hint);
}

/* Whether `name` ('llama3-8b' or 'llama3-8b.json') is a shipped file of
 * `kind`: its path then in buf. */
static bool find_shipped(const char *name, const char *kind, const char *ext, char *buf,
                         size_t size)
{
    struct stat st;
    char dir[1200];
    for (int i = 0; candidate(i, kind, dir, sizeof dir) == 0; i++) {
        snprintf(buf, size, "%s/%s%s", dir, name, has_ext(name, ext) ? "" : ext);
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
            return true;
    }
    return false;
}

const char *shipped_resolve(const char *arg, const char *kind, const char *ext, char *buf,
                            size_t size, planner_error *err)
{
    struct stat st;
    const char *slash;
    if (arg == NULL || arg[0] == '\0' || stat(arg, &st) == 0 || errno != ENOENT)
        return arg;   /* (the open says why it fails, if it does) */
    slash = strrchr(arg, '/');
    if (slash == NULL) {
        if (find_shipped(arg, kind, ext, buf, size))
            return buf;
        not_shipped(arg, kind, ext, err);
        return NULL;
    }
    /* a missing path whose last part is shipped: the README's
     * 'configs/gpt3-175b.json' run from outside the clone */
    if (slash[1] == '\0' || !has_ext(slash + 1, ext) ||
        !find_shipped(slash + 1, kind, ext, buf, size))
        return arg;
    error_set(err, PLANNER_E_IO, arg, 0, 0, NULL,
              "cannot open: %s (the shipped %s of that name is '--%s %.*s', from any folder)",
              strerror(ENOENT), strcmp(kind, "configs") == 0 ? "model" : "cluster",
              strcmp(kind, "configs") == 0 ? "model" : "cluster",
              (int)(strlen(slash + 1) - strlen(ext)), slash + 1);
    return NULL;
}

planner_status shipped_resolve_run(const char **model_path, char *model_buf,
                                   const char **cluster_path, char *cluster_buf, size_t size,
                                   planner_error *err)
{
    *model_path = shipped_resolve(*model_path, "configs", ".json", model_buf, size, err);
    if (*model_path == NULL)
        return PLANNER_E_IO;   /* shipped_resolve's one failure */
    *cluster_path = shipped_resolve(*cluster_path, "clusters", ".yaml", cluster_buf, size, err);
    return *cluster_path != NULL ? PLANNER_OK : PLANNER_E_IO;
}

const char *shipped_model_library(const char *arg, char *buf, size_t size)
{
    if (arg != NULL)
        return strcmp(arg, "none") == 0 ? NULL : arg;
    for (int i = 0; candidate(i, "configs", buf, size) == 0; i++)
        if (is_dir(buf))
            return buf;
    return NULL;
}

planner_status shipped_list_in(FILE *out, const char *heading, const char *dir,
                               const char *ext, planner_error *err)
{
    char *names[SHIPPED_MAX], *text;
    int n, i;
    size_t total = 1, used = 0;
    bool ok;
    if ((n = shipped_names(dir, ext, names)) < 0)
        return error_oom(err);
    for (i = 0; i < n; i++)
        total += strlen(names[i]) + 2;
    if ((ok = (text = pl_malloc(total)) != NULL)) {   /* the names wrapped to 80 columns */
        text[0] = '\0';
        for (i = 0; i < n; i++)
            used += (size_t)snprintf(text + used, total - used, "%s%s", i ? ", " : "", names[i]);
        fprintf(out, "%s (in %s):\n", heading, dir);
        cli_print_wrapped(out, n ? text : "(none)", 2, 80);
        pl_free(text);
    }
    for (i = 0; i < n; i++)
        pl_free(names[i]);
    return ok ? PLANNER_OK : error_oom(err);
}

planner_status shipped_list(FILE *out, const char *heading, const char *kind, const char *ext,
                            planner_error *err)
{
    char dir[1200];
    if (shipped_dir(kind, dir, sizeof dir) != 0) {
        fprintf(out, "%s: (none found)\n", heading);
        return PLANNER_OK;
    }
    return shipped_list_in(out, heading, dir, ext, err);
}
