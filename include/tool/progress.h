/* progress.h: the tool's one-line progress report on stderr for long
 * searches and sweeps; the library reports through base/progress.h's hook,
 * progress_hook_of() connects the two.
 *
 * Shown only when enabled (the caller passes isatty(2) or an option) and only
 * once the work has run for PROGRESS_DELAY_S; redrawn at most every
 * PROGRESS_INTERVAL_S; erased by progress_finish.  Nothing is ever written to
 * stdout, so piped output is unaffected.  A progress struct lives on the
 * caller's stack: no globals, no allocation. */
#ifndef PLANNER_TOOL_PROGRESS_H
#define PLANNER_TOOL_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>
#include "base/progress.h"

#define PROGRESS_DELAY_S 1.0
#define PROGRESS_INTERVAL_S 0.2

typedef struct progress {
    bool enabled;          /* set by progress_start */
    bool shown;            /* a line is on the terminal */
    double start_s;        /* monotonic clock at start */
    double last_s;         /* last redraw */
    char label[64];        /* "search", "sweep" */
    FILE *out;             /* stderr unless a test redirects it */
} progress;

/* Monotonic seconds (CLOCK_MONOTONIC). */
double progress_now_s(void);

/* True when file descriptor 2 is a terminal. */
bool progress_stderr_is_tty(void);

/* Starts timing; `enabled` false makes every other call a no-op. */
void progress_start(progress *pr, const char *label, bool enabled);

/* Reports `done` of `total` units (total <= 0: unknown).  Cheap when nothing
 * is drawn: one clock read. */
void progress_update(progress *pr, long done, long total);

/* Same, with the current time given (tests). */
void progress_update_at(progress *pr, long done, long total, double now_s);

/* Erases the line if one was drawn. */
void progress_finish(progress *pr);

/* A hook that reports to *pr (progress_update). */
progress_hook progress_hook_of(progress *pr);

#endif
