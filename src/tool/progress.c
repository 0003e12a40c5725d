/* progress.c: the delayed, rate-limited progress line of tool/progress.h,
 * drawn on stderr (the library only calls the hook, base/progress.h).
 *
 * Invariants: nothing is drawn before PROGRESS_DELAY_S of work, so quick runs
 * (and every test) stay silent; each redraw starts with '\r' and pads with
 * spaces so a shorter line fully covers a longer one; progress_finish leaves
 * the cursor at the start of an empty line.  ETA is the linear extrapolation
 * elapsed * (total - done) / done. */
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "tool/progress.h"

double progress_now_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool progress_stderr_is_tty(void)
{
    return isatty(STDERR_FILENO) == 1;
}

void progress_start(progress *pr, const char *label, bool enabled)
{
    memset(pr, 0, sizeof *pr);
    pr->enabled = enabled;
    pr->out = stderr;
    snprintf(pr->label, sizeof pr->label, "%s", label != NULL ? label : "");
    if (enabled)
        pr->start_s = progress_now_s();
}

void progress_update_at(progress *pr, long done, long total, double now_s)
{
    double elapsed;
    if (pr == NULL || !pr->enabled)
        return;
    elapsed = now_s - pr->start_s;
    if (elapsed < PROGRESS_DELAY_S)
        return;
    if (pr->shown && now_s - pr->last_s < PROGRESS_INTERVAL_S)
        return;
    pr->last_s = now_s;
    pr->shown = true;
    if (total > 0 && done > 0 && done <= total) {
        double eta = elapsed * (double)(total - done) / (double)done;
        fprintf(pr->out, "\r%s: %ld/%ld (%.0f%%), %.0f s elapsed, about %.0f s left   ",
                pr->label, done, total, 100.0 * (double)done / (double)total, elapsed,
                eta);
    } else if (total > 0) {
        fprintf(pr->out, "\r%s: %ld/%ld, %.0f s elapsed   ", pr->label, done, total,
                elapsed);
    } else {
        fprintf(pr->out, "\r%s: %ld done, %.0f s elapsed   ", pr->label, done, elapsed);
    }
    fflush(pr->out);
}

void progress_update(progress *pr, long done, long total)
{
    if (pr == NULL || !pr->enabled)
        return;
    progress_update_at(pr, done, total, progress_now_s());
}

void progress_finish(progress *pr)
{
    if (pr == NULL || !pr->enabled || !pr->shown)
        return;
    /* Erase: carriage return, clear to end of line (ECMA-48 EL), return. */
    fputs("\r\033[K", pr->out);
    fflush(pr->out);
    pr->shown = false;
}

static void hook_update(void *ctx, long done, long total)
{
    progress_update(ctx, done, total);
}

progress_hook progress_hook_of(progress *pr)
{
    progress_hook h = {hook_update, pr};
    return h;
}
