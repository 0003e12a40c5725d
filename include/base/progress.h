/* progress.h: how the library reports progress of long work (a search, a
 * sweep): a callback the caller supplies, called with the units done and
 * the total (<= 0: unknown).  The library never draws anything itself; the
 * tool's display is tool/progress.h.  A hook with a NULL `update` is off.
 * The library calls it only from the thread that called the library (never
 * from a worker thread of base/workers.h), so a hook needs no locking. */
#ifndef PLANNER_PROGRESS_HOOK_H
#define PLANNER_PROGRESS_HOOK_H

typedef struct progress_hook {
    void (*update)(void *ctx, long done, long total);
    void *ctx;
} progress_hook;

#define PROGRESS_HOOK_NONE {NULL, NULL}

/* Calls h->update(h->ctx, done, total) when h and its update are set. */
void progress_report(const progress_hook *h, long done, long total);

#endif
