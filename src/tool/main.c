/* main.c: the planner binary.  Dispatches to a subcommand; plan is the
 * default.  Every command returns its exit status (error.h's table).
 *
 * Standard streams (jq's rule): a closed stdin/stdout/stderr is held on
 * /dev/null in a mode that makes its use fail (stdio_guard), so no output
 * file takes its number; at exit a failed write of stdout (a full disk, a
 * closed stdout) is an error, exit 4, even for --help and --version, unless
 * the command already failed with its own code. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "base/alloc.h"
#include "base/error.h"
#include "tool/commands.h"

/* Called first: a standard descriptor (0, 1, 2) that is closed is opened on
 * /dev/null in the mode that makes its use fail (stdout and stderr
 * read-only), so no file of the run takes its number and a write to a closed
 * stdout still fails, as it would have. */
static void stdio_guard(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF)
            continue;
        /* the mode that makes any use fail: stdin write-only, stdout/stderr read-only */
        int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
        if (got >= 0 && got != fd)
            close(got);   /* a lower descriptor was also closed; the loop fills it */
    }
}

/* Called last (jq's rule: a failed write of stdout is an error, checked at
 * exit): flushes and closes stdout; PLANNER_E_IO if any write to it failed. */
static planner_status stdout_close_checked(planner_error *err)
{
    bool bad;
    int e;
    errno = 0;
    bad = fflush(stdout) != 0 || ferror(stdout);
    e = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = true;
        e = errno;
    }
    if (!bad)
        return PLANNER_OK;
    return error_set(err, PLANNER_E_IO, NULL, 0, 0, NULL, "write error on standard output: %s",
                     e != 0 ? strerror(e) : "unknown");
}

static int dispatch(int argc, char **argv)
{
    if (argc >= 2) {
        const char *sub = argv[1];
        if (strcmp(sub, "plan") == 0)
            return cmd_plan(argc - 1, argv + 1);
        if (strcmp(sub, "validate") == 0)
            return cmd_validate(argc - 1, argv + 1);
        if (strcmp(sub, "size") == 0)
            return cmd_size(argc - 1, argv + 1);
        if (strcmp(sub, "sweep") == 0)
            return cmd_sweep(argc - 1, argv + 1);
        if (strcmp(sub, "calibrate") == 0)
            return cmd_calibrate(argc - 1, argv + 1);
        if (strcmp(sub, "crossval") == 0)
            return cmd_crossval(argc - 1, argv + 1);
    }
    return cmd_plan(argc, argv);
}

int main(int argc, char **argv)
{
    planner_error err = PLANNER_ERROR_INIT;
    int rc;

    stdio_guard();
    alloc_init();
    rc = dispatch(argc, argv);
    if (stdout_close_checked(&err) != PLANNER_OK && rc == PLANNER_OK) {
        error_print(&err, stderr);
        rc = PLANNER_E_IO;
    }
    return rc;
}
