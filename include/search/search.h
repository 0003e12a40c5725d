/* search.h: enumerate strategies, evaluate each, rank the feasible ones.
 *
 * The space: tp, pp, dp, cp, ep, vpp, micro-batch, sequence parallelism,
 * recompute mode, ZeRO stage / distributed optimizer, overlap flags, and on
 * heterogeneous clusters the placement of stages on node groups and the layer
 * partition.  Constraints from `--fix` pin any subset.  Ties are broken
 * deterministically (see search.c).
 */
#ifndef PLANNER_SEARCH_H
#define PLANNER_SEARCH_H

#include <stdbool.h>
#include "base/error.h"
#include "base/progress.h"
#include "model/knobs.h"
#include "schedule/evaluate.h"
#include "schedule/goodput.h"

typedef enum objective {
    OBJECTIVE_THROUGHPUT,    /* highest tokens/s */
    OBJECTIVE_GOODPUT,       /* highest tokens/s x ETTR (schedule/goodput.h) */
    OBJECTIVE_TIME,          /* shortest time to train (the goodput order at one
                                GPU count) */
    OBJECTIVE_COST           /* most tokens per unit of money (goodput per
                                GPU-hour price) */
} objective;

/* "throughput", "goodput", "time", "cost" <-> the enum; from_name returns 0,
 * or -1 for an unknown name. */
const char *objective_name(objective obj);
int objective_from_name(const char *name, objective *out);

typedef enum partition_solver {
    PARTITION_DP,            /* exact dynamic program (default) */
    PARTITION_ILP            /* GLPK integer program, with a time limit */
} partition_solver;

typedef struct search_options {
    int top_n;                        /* plans to keep, >= 1 */
    objective obj;
    strategy_constraints fix;
    int gbs;                          /* the run's global batch, sequences;
                                         0: MODEL_DEFAULT_GLOBAL_BATCH */
    int seq_len;                      /* its sequence length; 0:
                                         MODEL_DEFAULT_SEQ_LEN (the model
                                         file's run is model_load's run_out) */
    partition_solver partition;
    double ilp_time_limit_s;
    progress_hook progress;           /* told the candidates evaluated after
                                         each batch of blocks (search.c
                                         PARALLEL; total unknown), from the
                                         calling thread; none by default */
    bool exhaustive;                  /* evaluate every candidate, no pruning
                                         (tests compare it with the pruned search) */
    bool flex_twins_off;              /* no P11 (search.c twin_skips): the flex
                                         pass not bounded by its alltoall twins
                                         (tests compare the two) */
    bool eval_memo_off;               /* the evaluations cost every layer range
                                         anew, no memo across candidates
                                         (evaluate_with; tests compare the two) */
    double work_limit;                /* at most this much work, in DP steps:
                                         the layer partitions' steps and cost
                                         tables (placer_work) and 256 steps per
                                         layer per evaluated candidate; past it
                                         the search stops and says so
                                         (res->limited).  0 = no limit */
    double mem_headroom;              /* fraction of each GPU's usable memory
                                         a plan must leave free, [0, 1):
                                         the search plans against usable x
                                         (1 - headroom) (--mem-headroom) */
    goodput_options goodput;          /* failures, checkpoints, tokens, price
                                         (the goodput objectives and reports) */
    bool report_goodput;              /* outputs show time to train & co */
    bool validated_only;              /* knobs --fix leaves free take only
                                         the values measured runs validate
                                         (model/knobs.h validation table):
                                         validate predicts a run on what
                                         it can have run, not on a knob its
                                         source does not mention */
    megatron_version megatron;        /* the Megatron-LM release planned
                                         for (--megatron-version; default
                                         the newest): the search tries the
                                         flex token dispatcher only where
                                         it has a backend
                                         (knob_flex_backend) */
    int jobs;                         /* threads the search runs its blocks
                                         on (base/workers.h; -j), >= 1: the
                                         result is the same for every value
                                         (search.c, PARALLEL); default 1 */
    const strategy *layout;           /* borrowed: a pinned --pipeline-model-
                                         parallel-layout (its pp, vpp and
                                         layout_layers: strategy_layout_parse);
                                         the caller fixes pp and vpp to it.
                                         NULL: the search's own splits */
} search_options;

/* The default work limit: a few seconds on one core.  Llama 3 70B on the
 * shipped mixed clusters needs under 60% of it (test_search), the shipped
 * models on the one-type clusters less; a 4,096-layer model over 64 node
 * groups of 10^6 GPUs needs hundreds of times more.  Six shipped pairs stop
 * at it (session 12, prunefix's exhaustive comparison): DeepSeek-V3 and
 * Qwen3-235B-A22B on mixed3x1024 and h100-a100-mixed, GPT-3 175B and
 * Qwen3-30B-A3B on mixed3x1024; --search-limit 1e10 completes them in 2-8 s
 * on one core (DeepSeek-V3 on mixed3x1024: 11.3 s a step at this limit, 4.75
 * s with the whole space). */
#define SEARCH_WORK_LIMIT_DEFAULT 2e9

/* An evaluated candidate's share of the work: 256 DP steps per layer (what
 * evaluating a 4,096-layer model costs next to a DP step, measured on that
 * model: ~1 ms per candidate). */
#define SEARCH_EVAL_WORK_PER_LAYER 256.0

/* The shortest sequence slice a context-parallel rank is searched with:
 * seq / cp >= 2048 tokens (Llama 3's 128K-context run used cp 16 with 8,192
 * tokens per rank, Dubey et al. 2024 sec. 3.3.2; below ~2K tokens per rank the
 * ring's p2p exchange no longer hides behind the attention block it overlaps,
 * Megatron-Core's context_parallel docs).  --fix cp=N goes below it. */
#define SEARCH_CP_MIN_TOKENS 2048

/* The largest vpp searched on placements across node groups (powers of two
 * up to it; --fix vpp=N goes beyond): every value costs another pass over
 * the placements' blocks (Llama 3 70B on mixed3x1024: 786M work on main
 * 1233bd4, 876M with vpp 2, 948M with vpp 4, which gains 1.3% more on
 * h100-a100-mixed and nothing on mixed3x1024). */
#define SEARCH_PLACED_VPP_MAX 2

/* The shortest sequence slice a context-parallel rank is searched with on
 * placements across node groups: every cp doubles the placements' blocks,
 * and at 2,048 tokens per rank Llama 3 70B on mixed3x1024 took 1.6e9 of the
 * 2e9 default work (cp 1 and 2) for 1.6% over cp 1.  --fix cp=N goes below. */
#define SEARCH_PLACED_CP_MIN_TOKENS 4096

/* "Don't recommend what you can't predict": a plan ranks as if its
 * objective were lower by this fraction for each knob value it uses that no
 * measured run validates (model/knobs.h, knobs_unvalidated_count), so a
 * plan with fewer such values within 1% per value of it ranks first: a
 * validated plan within 1% of a plan with one, a plan with one within 1%
 * of a plan with two.  1% is below the corpus's per-run spread (the step
 * times it quotes are rounded to ~0.5%, its conversions from TFLOP/s or MFU
 * carry a few percent: ../shared/validation/README.md), so two plans that
 * close are a tie as far as measurements can tell; an unvalidated plan must
 * be predicted more than 1% faster to be recommended. */
#define SEARCH_VALIDATED_TIE 0.01

/* Objective `score` as the ranking counts it for a plan with `unvalidated`
 * knob values no run validates: divided by (1 + SEARCH_VALIDATED_TIE) once
 * per value; `score` itself for none. */
double search_rank_score(double score, int unvalidated);

/* The ranking: < 0 when plan a (objective score_a, higher is better; peak
 * memory peak_a) ranks before plan b, > 0 after, 0 the same plan.  The
 * objective as search_rank_score counts it first, then fewer unvalidated
 * knob values, then the objective, then lower peak memory, then the
 * simpler plan (search.c RANKING).  A strict weak order. */
int search_rank_cmp(double score_a, double peak_a, const strategy *a, double score_b,
                    double peak_b, const strategy *b);

#define SEARCH_NOT_SEARCHED_MAX 14
/* An entry holds a rule's whole message (ERROR_MSG_MAX) and its count. */
#define SEARCH_NOT_SEARCHED_LEN (ERROR_MSG_MAX + 128)
/* The advice holds the first refusal's whole rule message with its plan
 * ("no strategy satisfies ...; e.g. tp 8, ...: MESSAGE"). */
#define SEARCH_ADVICE_LEN (ERROR_MSG_MAX + 256)

typedef struct search_result {
    plan *top;                        /* n_top plans, best first, owned */
    cost_schedule *sched;             /* n_top entries, owned: the pipeline
                                         schedule top[i]'s evaluation
                                         simulated (--trace, --svg replay it;
                                         nothing re-runs the cost model) */
    int n_top;
    long candidates;                  /* strategies evaluated */
    long feasible;                    /* of those, fitting in memory */
    double seconds;                   /* wall time of the search */
    bool have_miss;                   /* no feasible plan: the closest one */
    plan miss;
    char advice[SEARCH_ADVICE_LEN];   /* what would make it fit */
    long pruned;                      /* candidates skipped by a safe prune */
    long invalid;                     /* candidates the rules refused
                                         (strategy_check, the placer, or a
                                         block's degrees: search.c refuse) */
    long invalid_stack;               /* of those, the ones the stack's own
                                         rules refused (stack_spec.rules) */
    const char *rules_by;             /* whose those are (stack_spec.rules_by,
                                         a constant) */
    int gbs, seq_len;                 /* the global batch and sequence planned */
    int gpus;                         /* GPUs each plan uses */
    char placement_note[512];         /* several node groups: the best plan
                                         across groups vs the best on one */
    bool limited;                     /* the work limit stopped the search:
                                         the plans are the best of those
                                         evaluated, not of the whole space */
    double work;                      /* work done, as in work_limit */
    double mem_headroom;              /* search_options.mem_headroom */
    int n_not_searched;               /* what the search did not try, and
                                         why: knobs --fix pinned, knobs and
                                         values outside the space, the
                                         prunes, the work limit (one short
                                         phrase each, search.c) */
    char not_searched[SEARCH_NOT_SEARCHED_MAX][SEARCH_NOT_SEARCHED_LEN];
} search_result;

/* Fills *opts with defaults (top 10, throughput, nothing fixed, DP partition). */
void search_options_default(search_options *opts);

/* Runs the search.  Returns 0 (with res->n_top >= 1 and res->sched), PLANNER_E_INFEASIBLE
 * (res->advice filled; res->have_miss when at least one strategy could be
 * evaluated, false when no strategy satisfies the rules and --fix), or
 * another status with *err.  Free res with search_result_free. */
planner_status search_run(search_result *res, const model *m, const cluster *c,
                          const cost_params *p, const search_options *opts,
                          planner_error *err);

void search_result_free(search_result *res);   /* NULL-safe; frees contents */

/* The placement seam: fills s->stage[] and s->n_stages for a strategy whose
 * tp, cp, pp, dp and vpp are set, with every stage on node group `group` of
 * `c` and the decoder layers split evenly (layers / pp per rank).  Returns
 * PLANNER_OK, or PLANNER_E_INPUT with the reason in *err when it cannot
 * (layers % pp != 0, pp too large); err may be NULL.  The search uses it for
 * even splits on one group; uneven splits and placements across node groups
 * go through placement.h (the placement seam in search.c). */
planner_status search_place_stages(const model *m, const cluster *c, int group, strategy *s,
                                   planner_error *err);

#endif
