/* partition.h: contiguous decoder layers onto pipeline stages.
 *
 * One problem, two solvers: partition_dp() (exact dynamic program, the
 * default) and partition_ilp() (GLPK integer program, `--partition ilp`).
 * Stage s of class k = stage_class[s] (a GPU type and TP degree) holding the
 * layers [a, b) costs, per micro-batch,
 *     time(s, a, b)  = fixed_time_s[s] + sum_{a <= i < b} time_s[k][i]
 * and needs, per GPU,
 *     bytes(s, a, b) = fixed_bytes[s] + sum (state_bytes[k][i]
 *                      + inflight[s] act_bytes[k][i]) + max peak_bytes[k][i]
 * which must not exceed capacity_bytes[s].  Both solvers minimize the
 * bottleneck max_s time(s, ...), every stage holding at least min_layers
 * layers.
 *
 * Valid range (partition_validate(), called by both solvers, which return
 * PARTITION_INVALID outside it): every coefficient (per-layer costs, fixed
 * costs, inflight, fill_weight, bottleneck_lb) is finite and either 0 or
 * within [PARTITION_COEF_MIN, PARTITION_COEF_MAX] = [1e-30, 1e30]; a
 * capacity is HUGE_VAL (none), 0 or within that range; mip_gap is within
 * [0, 1].  So a stage's time and bytes grow with its range (the DP relies on
 * it), no sum of them overflows (4096 layers x 1e30 x 1e30 < 1e64), and no
 * coefficient is denormal or near DBL_MAX, which GLPK's presolver does not
 * survive.  Sums over a stage's range are taken directly (never as
 * differences of running sums, which cancel when 1e30 meets 1e9), in one
 * order in both solvers and partition_stage_time/bytes(): a split a solver
 * returns as fitting fits by partition_measure() exactly.
 *
 * Leading layers (lead_layers N > 0; the DP only): the first N layers of
 * each stage cost from the lead_ arrays, the rest from the plain ones, and
 * the transient term is the leading layers' largest less what the rest
 * free (Megatron's block recompute: the first N layers of a chunk re-run
 * their forward and keep only their input, the rest keep everything and
 * free it in the backward before the re-runs; cost/layer_cost.c):
 *     time(s, a, b)  = fixed_time_s[s] + sum_{a <= i < min(a + N, b)} lead_time_s[k][i]
 *                      + sum_{a + N <= i < b} time_s[k][i]
 *     bytes(s, a, b) = fixed_bytes[s] + sum state_bytes[k][i] + inflight[s] (sum of
 *                      lead_act_bytes over the leading, act_bytes over the rest)
 *                      + max(max lead_peak_bytes - sum freed_bytes over the rest,
 *                            max peak_bytes over the rest)
 * (the last max is 0 over no layers).  A stage's bytes still grow with its
 * range (a leading layer moved to the rest adds inflight x its act_bytes -
 * lead_act_bytes and frees no more than that, when its freed_bytes is that
 * difference); its time grows for like layers, not always for unlike ones
 * (a leading layer's re-forward may outweigh a plain layer before it): the
 * DP's early stops then make its split a good one, not always the least.
 * The ILP refuses such problems (PARTITION_UNSUPPORTED).
 *
 * The ILP also takes constraints and an objective the DP does not:
 *   class_layer_cap[k]  at most that many layers over all stages of class k
 *                       (couples stages that are not neighbours);
 *   fill_weight w > 0   minimizes B + w sum_s time(s) instead of B alone
 *                       (with w = 1 / (m - 1), (m - 1) B + sum_s time(s) is
 *                       the 1F1B step estimate: steady state plus fill and
 *                       drain).
 * partition_dp() refuses problems that set them (PARTITION_UNSUPPORTED).
 *
 * Arrays are borrowed; per-class arrays are [k * n_layers + i].
 */
#ifndef PLANNER_PARTITION_H
#define PLANNER_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include "base/error.h"

typedef enum partition_status {
    PARTITION_OK = 0,           /* a partition, optimal (DP) or see `optimal` */
    PARTITION_INFEASIBLE,       /* no partition fits the memory */
    PARTITION_TIMEOUT,          /* ILP: time limit reached with no solution */
    PARTITION_INVALID,          /* malformed problem (counts, NaN, negative) */
    PARTITION_UNSUPPORTED,      /* DP: an ILP-only constraint is set */
    PARTITION_NOMEM,            /* an allocation failed */
    PARTITION_SOLVER_ERROR,     /* GLPK failed (its error hook fired) */
    PARTITION_LIMIT             /* DP: the workspace's step limit reached */
} partition_status;

#define PARTITION_MAX_LAYERS 4096
#define PARTITION_MAX_STAGES 256
#define PARTITION_COEF_MIN 1e-30    /* least nonzero coefficient */
#define PARTITION_COEF_MAX 1e30     /* largest finite coefficient */

typedef struct partition_problem {
    int n_layers;                   /* L, 1..PARTITION_MAX_LAYERS */
    int n_stages;                   /* P, 1..min(L, PARTITION_MAX_STAGES) */
    int n_classes;                  /* >= 1 */
    const int *stage_class;         /* [P], each in 0..n_classes-1 */
    const double *time_s;           /* [n_classes * L] */
    const double *state_bytes;      /* [n_classes * L] */
    const double *act_bytes;        /* [n_classes * L] */
    const double *peak_bytes;       /* [n_classes * L], or NULL (none) */
    const double *fixed_time_s;     /* [P] */
    const double *fixed_bytes;      /* [P] */
    const double *inflight;         /* [P] */
    const double *capacity_bytes;   /* [P]; HUGE_VAL = unconstrained */
    int min_layers;                 /* per stage, >= 1 (0 is read as 1) */
    /* ILP only (NULL / 0: off) */
    const int *class_layer_cap;     /* [n_classes], < 0 = no cap */
    double fill_weight;
    double bottleneck_lb;           /* a valid lower bound on the bottleneck
                                       (e.g. the DP's optimum): tightens the
                                       LP relaxation of the fill objective */
    double mip_gap;                 /* relative gap at which to stop, 0 exact */
    /* leading layers (DP only; 0: none) */
    int lead_layers;                /* N, 0..L: each stage's first N */
    const double *lead_time_s;      /* [n_classes * L], with lead_layers */
    const double *lead_act_bytes;   /* [n_classes * L], with lead_layers */
    const double *lead_peak_bytes;  /* [n_classes * L], with lead_layers */
    const double *freed_bytes;      /* [n_classes * L]: what a layer past the
                                       first N frees of the leading peak */
} partition_problem;

typedef struct partition_result {
    partition_status status;
    bool optimal;                   /* proven optimal (DP: always on OK) */
    double bottleneck_s;            /* max_s time(s), recomputed exactly */
    double cut_time_s;              /* DP: the least time of a stage range
                                       memory refused (HUGE_VAL: none); when
                                       >= bottleneck_s, no split is faster
                                       ignoring memory (partition_dp.c) */
    double objective;               /* the solver's objective, recomputed */
    int n_layers[PARTITION_MAX_STAGES];   /* layers of each stage, in order */
} partition_result;

/* Scratch memory of the DP, reused across calls (grows, never shrinks).
 * Zero-initialize; free with partition_ws_free. */
typedef struct partition_ws {
    double *buf;
    size_t cap;                     /* doubles in buf */
    int *arg;
    size_t arg_cap;
    long long steps;                /* DP inner-loop steps done, all calls */
    long long step_limit;           /* > 0: a call that would go past it
                                       stops with PARTITION_LIMIT */
} partition_ws;

void partition_ws_free(partition_ws *ws);   /* frees contents; NULL-safe */

/* Checks the problem's shape and values (the valid range above).
 * PLANNER_OK, or PLANNER_E_INPUT with the reason in *err (err may be NULL:
 * no message is formatted). */
planner_status partition_validate(const partition_problem *pb, planner_error *err);

/* time(s, first, first + n) and bytes(s, first, first + n), summed directly
 * from the last layer of the range to the first, as the DP sums them. */
double partition_stage_time(const partition_problem *pb, int s, int first, int n);
double partition_stage_bytes(const partition_problem *pb, int s, int first, int n);

/* For a given split (n_layers[P]): the bottleneck (return value), and
 * whether every stage fits (*fits, may be NULL).  The split must cover L. */
double partition_measure(const partition_problem *pb, const int *n_layers, bool *fits);

/* The exact minimum bottleneck; ties go to the split whose later stages
 * hold fewer layers.  `ws` may be NULL (allocates and frees its own). */
partition_status partition_dp(const partition_problem *pb, partition_ws *ws,
                              partition_result *out);

/* The same problem (and the ILP-only extras) with GLPK's branch and cut,
 * within time_limit_s (> 0), which covers the whole call: building the
 * program as well as GLPK's search.  Returns OK with out->optimal false when
 * the limit stopped the search after a solution was found, TIMEOUT when none
 * was.  The split read back from GLPK is verified exactly (every stage holds
 * >= min_layers, covers L, fits by partition_measure(), class caps hold);
 * a split that fails is SOLVER_ERROR (never returned as OK), and callers
 * keep another solver's split.  GLPK never aborts the process: indices are
 * checked before each glp_set_* call and its error hook returns here
 * (SOLVER_ERROR). */
partition_status partition_ilp(const partition_problem *pb, double time_limit_s,
                               partition_result *out);

const char *partition_status_name(partition_status st);

#endif
