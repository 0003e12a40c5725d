/* goodput.h: a plan's training time under failures -- job MTTF, checkpoint
 * size and blocking time, checkpoint interval (Young/Daly), expected
 * effective-training-time ratio (ETTR), goodput, time to train N tokens,
 * GPU-hours, cost and energy.  Pure functions of a plan's step time, the
 * model and the cluster; nothing here prints.  Formulas and sources:
 * goodput.c and docs/goodput.md.
 */
#ifndef PLANNER_SCHEDULE_GOODPUT_H
#define PLANNER_SCHEDULE_GOODPUT_H

#include <stdbool.h>
#include "inputs/cluster.h"
#include "inputs/model.h"
#include "model/strategy.h"

/* ---- the formulas (each a published one; see goodput.c) -------------------- */

/* Job mean time to failure, seconds: 1 / (nodes x r_f) with r_f in failures
 * per node-day (Kokolis et al. 2025).  0 when an input is not > 0. */
double goodput_mttf_s(double nodes, double failures_per_node_day);

/* Young (1974): the optimal compute time between checkpoints, sqrt(2 w M),
 * for a blocking checkpoint time w and a mean time to failure M (seconds). */
double goodput_young_interval_s(double write_s, double mttf_s);

/* Daly (2006), the higher-order optimum: sqrt(2wM) [1 + sqrt(w/2M)/3 + (w/2M)/9] - w for
 * w < 2M, else M.  0 when w <= 0. */
double goodput_daly_interval_s(double write_s, double mttf_s);

/* Expected ETTR (useful compute time / wall time) of a job that computes
 * `interval_s` between checkpoints, blocks `write_s` per checkpoint and
 * needs `restart_s` after each failure, failures exponential with mean
 * `mttf_s`: Daly's (2006) complete model,
 *     T_wall / T_solve = M e^(R/M) (e^((tau + w)/M) - 1) / tau.
 * In [0, 1]; 0 when the job cannot progress (the exponentials overflow) or
 * an input is out of range (interval <= 0, M <= 0, w or R < 0). */
double goodput_ettr(double interval_s, double write_s, double restart_s, double mttf_s);

/* ---- the inputs ---------------------------------------------------------- */

/* How a checkpoint blocks training. */
typedef enum checkpoint_mode {
    CHECKPOINT_ASYNC,   /* default: only the device-to-host copy blocks; the
                           write to storage runs behind training */
    CHECKPOINT_SYNC,    /* training waits for the write to storage */
    CHECKPOINT_FIXED    /* blocking time given (--checkpoint-write-time) */
} checkpoint_mode;

/* The command line's overrides; 0 = not given (cluster file, then default). */
typedef struct goodput_options {
    double tokens;                    /* tokens to train; 0 = not asked */
    double failures_per_1000_node_days;
    double restart_s;                 /* fixed part: detection, rescheduling,
                                         initialization (load comes on top) */
    checkpoint_mode mode;
    double checkpoint_write_s;        /* CHECKPOINT_FIXED: blocking seconds, >= 0 */
    double checkpoint_interval_s;     /* 0 = auto (Daly) */
    double gpu_hour_price;            /* per GPU-hour; 0 = the generation's reference */
} goodput_options;

#define GOODPUT_OPTIONS_INIT {0, 0, 0, CHECKPOINT_ASYNC, 0, 0, 0}

/* ---- a plan's figures ---------------------------------------------------- */

typedef struct goodput {
    int gpus, nodes;                  /* what the plan occupies */
    double step_s, tokens_per_s;      /* failure-free */
    double failures_per_node_day;     /* r_f used (per node, per day) */
    bool rate_default;                /* r_f from the generation table */
    double mttf_s;
    double checkpoint_bytes;          /* whole job */
    double checkpoint_write_s;        /* blocking, per checkpoint */
    double checkpoint_persist_s;      /* to storage, per checkpoint */
    double checkpoint_load_s;         /* from storage, per restart */
    double restart_s;                 /* fixed part + load */
    double checkpoint_interval_s;     /* compute time between checkpoints */
    bool interval_auto;
    double ettr;                      /* [0, 1] */
    double goodput_tokens_per_s;      /* tokens_per_s x ettr */
    bool progresses;                  /* false: ettr ~ 0, the job never ends */
    /* with tokens (0 otherwise; progresses false: not finite, not set) */
    bool have_time;
    double time_failure_free_s, time_to_train_s;
    double gpu_hours, cost, energy_kwh;
    double gpu_hour_price;
    bool price_default;
    double power_w;                   /* GPUs' board power + node overhead */
} goodput;

/* Fills *out for strategy `s` with prediction `e` (a plan) of `m` on `c`
 * with the options (NULL = all defaults).  Returns PLANNER_OK, or
 * PLANNER_E_INPUT with the reason in *err (the options are out of range, or
 * tokens given and the time to train is not finite: the message says why the
 * job cannot finish); err may be NULL (no message is formatted).  *out is
 * filled as far as it goes either way, and never holds NaN or inf. */
planner_status goodput_evaluate(goodput *out, const model *m, const cluster *c,
                                const strategy *s, const evaluation *e,
                                const goodput_options *o, planner_error *err);

/* Checkpoint bytes of the whole job: bf16 weights + fp32 master weights +
 * Adam's two fp32 moments = 14 bytes per parameter (see goodput.c), for a
 * run of seq_len tokens per sequence (model_param_count). */
double goodput_checkpoint_bytes(const model *m, int seq_len);

/* The generation's documented default r_f (failures per 1000 node-days),
 * with its source in *source (may be NULL). */
double goodput_default_failure_rate(gpu_generation gen, const char **source);

#endif
