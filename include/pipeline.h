/* pipeline.h: pipeline schedules (1F1B, interleaved) simulated over the real
 * per-stage times; the events feed the step time, --trace and --svg. */
#ifndef PLANNER_PIPELINE_H
#define PLANNER_PIPELINE_H

typedef enum sched_kind {
    SCHED_FORWARD, SCHED_BACKWARD, SCHED_SEND, SCHED_DP_COMM, SCHED_OPTIMIZER
} sched_kind;

typedef struct sched_event {
    sched_kind kind;
    int stage;          /* pipeline rank */
    int microbatch;     /* -1 for per-step events */
    int chunk;          /* virtual stage, 0 without interleaving */
    double start_s, end_s;
} sched_event;

typedef struct sched_events {
    sched_event *ev;    /* owned */
    int n, cap;
} sched_events;

void sched_events_free(sched_events *e);   /* frees contents; NULL-safe */

#endif
