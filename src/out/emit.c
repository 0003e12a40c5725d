/* emit.c: launch material for a plan.
 *
 * What it models: the command line of Megatron-LM's pretrain_gpt.py, for one
 * release from core_v0.15.0 to core_v0.19.0 (--megatron-version), that trains
 * model `m` with plan `pl`, and two launchers for it: an sbatch script (one
 * srun task per node, each running torchrun) and a torchrun script run by
 * hand on every node.
 *
 * Sources: the flag names are those of each release's
 * megatron/training/arguments.py (tests/data/megatron-flags/TAG.txt, made by
 * scripts/megatron-flags.py; the tests check every flag we print against the
 * chosen release's list), and the rules of validate_args and
 * TransformerConfig summarized in ../shared/reference/cost-model.md:
 *   - --sequence-parallel only with tp > 1; --tp-comm-overlap needs it;
 *   - --overlap-param-gather needs the distributed optimizer and
 *     --overlap-grad-reduce;
 *   - an even split needs L % pp == 0; virtual stages via
 *     --num-layers-per-virtual-pipeline-stage need (L/pp) % that == 0;
 *   - an uneven split is --decoder-first/last-pipeline-num-layers (the middle
 *     ranks even, each count % vpp == 0, vpp then given by
 *     --num-virtual-stages-per-pipeline-rank) or else
 *     --pipeline-model-parallel-layout ("E" embedding, "t" decoder layer, "L"
 *     loss, "|" between virtual stages, listed virtual-stage-major: all pp
 *     ranks of chunk 0, then chunk 1 ...); the styles never mix;
 *   - the embedding/loss-accounting split (strategy_chunk_layers) is
 *     --account-for-embedding-in-pipeline-split and
 *     --account-for-loss-in-pipeline-split with
 *     --num-virtual-stages-per-pipeline-rank: (L + 2) / (pp vpp) per chunk,
 *     one less in the first and in the last (a chunk may hold only the
 *     embedding or the loss);
 *   - --recompute-granularity full needs --recompute-method and
 *     --recompute-num-layers; selective takes neither;
 *   - CUDA_DEVICE_MAX_CONNECTIONS=1 when tp > 1 or cp > 1 before Blackwell,
 *     except with Megatron FSDP (ZeRO-2/3 here), which asserts it is unset or
 *     > 1: the scripts unset it then (print_max_connections).
 * ZeRO-2/3 map to Megatron FSDP (--use-megatron-fsdp with
 * --data-parallel-sharding-strategy optim_grads / optim_grads_params, which
 * needs --ckpt-format fsdp_dtensor).
 *
 * Heterogeneous plans (stages on several node groups): Megatron orders ranks
 * tp-cp-ep-dp-pp, pp outermost, so pipeline stage i owns global ranks
 * [i tp cp dp, (i+1) tp cp dp); torchrun gives a node the global ranks after
 * those of all lower node ranks (the sum of their processes per node).  So
 * the launch is cut into components, one per run of consecutive stages on one
 * group, in stage order, and node ranks are numbered component by component:
 * the sbatch script is a Slurm heterogeneous job (one `#SBATCH hetjob`
 * component per run, placeholder partition and constraint for its GPU, one
 * srun step over all components where each node's rank is its index in the
 * components' concatenated node lists, MASTER_ADDR the first node of
 * component 0); the torchrun script maps NODE_RANK ranges to groups.
 * Megatron has one TP and one DP degree: plans whose stages differ are
 * refused.
 *
 * The arguments only for a stack launched with them (inputs/stack.h
 * stack_megatron_launch; emit_kind_supported is the rule, and the tool
 * refuses the others as a usage error before the search): a torchtitan or
 * DeepSpeed plan is not printed as a Megatron-Core launch that would run
 * other mechanisms.  On pytorch-fsdp2 the same scripts launch torchtitan's
 * trainer (launch_map's target: title, command, the per-node step that
 * writes the job config of out/emit_torchtitan.c, no Megatron environment
 * rules); torchtitan's mesh is pp-outermost too (parallel_dims.py), so the
 * components and node ranks are the same.  On deepspeed they launch
 * Megatron-DeepSpeed's pretrain_gpt.py (f4157be, megatron/arguments.py:
 * build_ds_args, ds_model_check) with the DeepSpeed config of
 * out/emit_deepspeed.c, written on each node the same way; its ranks are
 * tp fastest, then dp, then pp (DeepSpeed's PipeModelDataParallelTopology).
 *
 * The architecture: every field of the model reaches a flag, or emit refuses
 * the model with the reason (model_check), never printing a different model:
 * RoPE's base (--rotary-base; HF rope_theta), Llama 3.1's scaling
 * (--use-rope-scaling --rope-scaling-factor; its other figures are
 * Megatron's fixed constants and must match), linear scaling
 * (--rotary-seq-len-interpolation-factor, an int), YaRN on MLA (--rope-type
 * yarn --rotary-scaling-factor --mscale --mscale-all-dim; MLA without
 * scaling is --rope-type rope, since MLA takes YaRN by default); decoder
 * layers of different shapes are refused (Megatron's GPT model repeats one
 * layer spec).  A bf16 plan on GPUs without BF16 (V100, T4) is fp16 with
 * dynamic loss scaling; core_v0.15.0 refuses expert parallelism in fp16
 * (release_check).
 *
 * The sbatch script checks that the allocation has the plan's node count
 * (SLURM_NNODES) before torchrun, whose --nnodes is the plan's.
 *
 * Invariants: emit_check (strategy_check, the search's rules, plus one TP
 * and DP degree per stage) passes before anything is printed; the plan's
 * knobs become flags as their rows in the knob registry say (model/knobs.c:
 * flag, section, order; knob_emit_args for the ones with several flags);
 * every flag goes into one list (arg_list below) so the three outputs agree;
 * every value and every name a user wrote (model, cluster, group) is printed
 * by shell_word() as one shell word on one line, so no name can end a
 * comment or a word or expand in a script. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "base/text.h"
#include "cost/layer_cost.h"
#include "cost/memory.h"
#include "inputs/catalog.h"
#include "model/knobs.h"
#include "model/layout.h"
#include "out/emit.h"
#include "out/emit_deepspeed.h"
#include "out/emit_torchtitan.h"

#define EMIT_MAX_ARGS 128

typedef enum arg_section {
    SEC_MODEL, SEC_PARALLEL, SEC_BATCH, SEC_MEMORY, SEC_PRECISION, SEC_DATA, SEC_TRAINING,
    SEC_COUNT
} arg_section;

static const char *const section_title[SEC_COUNT] = {
    "model", "parallelism", "batch", "memory: recompute, optimizer sharding, overlap",
    "precision and kernels", "data, tokenizer, checkpoints (placeholders)",
    "training hyper-parameters (typical values: edit)"};

typedef struct emit_arg {
    const char *flag;
    const char *value;      /* NULL: a switch; points into small or a heap buffer */
    bool shell;             /* value is a shell word already ("$DATA_PATH") */
    arg_section sec;
    char small[48];
} emit_arg;

typedef struct arg_list {
    emit_arg a[EMIT_MAX_ARGS];
    int n;
    char *layout;           /* owned: --pipeline-model-parallel-layout value */
    char moe_freq[1024];    /* --moe-layer-freq value */
    char notes[4][160];     /* comment lines for the header */
    int n_notes;
    const char *flex_backend;   /* the flex dispatcher's backend for the
                                   release and GPUs (knob_flex_backend) */
} arg_list;

/* What the launch material cannot express: PLANNER_E_INPUT with the reason
 * in *err (err may be NULL). */
static planner_status emit_fail(planner_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static planner_status emit_fail(planner_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    error_vset(err, PLANNER_E_INPUT, NULL, 0, 0, NULL, fmt, ap);
    va_end(ap);
    return PLANNER_E_INPUT;
}

static emit_arg *arg_add(arg_list *l, arg_section sec, const char *flag)
{
    emit_arg *a;
    if (l->n >= EMIT_MAX_ARGS)
        return NULL;
    a = &l->a[l->n++];
    memset(a, 0, sizeof *a);
    a->flag = flag;
    a->sec = sec;
    return a;
}

static void arg_switch(arg_list *l, arg_section sec, const char *flag)
{
    arg_add(l, sec, flag);
}

/* Adds `flag v`; returns the argument (NULL when out of memory). */
static emit_arg *arg_str(arg_list *l, arg_section sec, const char *flag, const char *v)
{
    emit_arg *a = arg_add(l, sec, flag);
    if (a == NULL)
        return NULL;
    snprintf(a->small, sizeof a->small, "%s", v);
    a->value = a->small;
    return a;
}

static void arg_int(arg_list *l, arg_section sec, const char *flag, long v)
{
    char text[32];
    snprintf(text, sizeof text, "%ld", v);
    arg_str(l, sec, flag, text);
}

/* Adds `flag v` with v in the fewest significant digits that read back as v
 * (0.05, not %.17g's 0.050000000000000003). */
static void arg_real(arg_list *l, arg_section sec, const char *flag, double v)
{
    char text[32];
    for (int digits = 1; digits <= 17; digits++) {
        snprintf(text, sizeof text, "%.*g", digits, v);
        if (strtod(text, NULL) == v)
            break;
    }
    arg_str(l, sec, flag, text);
}

/* A value that is a shell expression ("$DATA_PATH"), quoted for the shell. */
static void arg_shell(arg_list *l, arg_section sec, const char *flag, const char *v)
{
    emit_arg *a = arg_str(l, sec, flag, v);
    if (a != NULL)
        a->shell = true;
}

static void add_note(arg_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add_note(arg_list *l, const char *fmt, ...)
{
    va_list ap;
    if (l->n_notes >= (int)(sizeof l->notes / sizeof l->notes[0]))
        return;
    va_start(ap, fmt);
    vsnprintf(l->notes[l->n_notes++], sizeof l->notes[0], fmt, ap);
    va_end(ap);
}

/* ---- plan facts ---------------------------------------------------------- */

static long plan_microbatches(const strategy *s)
{
    long per = (long)s->mbs * s->dp;
    return per > 0 ? s->gbs / per : 0;
}

static bool split_is_even(const model *m, const strategy *s)
{
    if (m->layers % s->pp != 0)
        return false;
    for (int i = 0; i < s->n_stages; i++)
        if (s->stage[i].n_layers != m->layers / s->pp)
            return false;
    return true;
}

typedef enum split_style { SPLIT_EVEN, SPLIT_FIRST_LAST, SPLIT_LAYOUT, SPLIT_ACCOUNT } split_style;

/* How the plan's layer split is told to Megatron.  For SPLIT_FIRST_LAST,
 * *first / *last are the counts to pass, 0 = leave the flag out. */
static split_style choose_split(const model *m, const strategy *s, int *first, int *last)
{
    int pp = s->pp, vpp = s->vpp > 1 ? s->vpp : 1;
    *first = *last = 0;
    if (s->layout)
        return SPLIT_LAYOUT;
    if (s->account_embedding || s->account_loss)
        return SPLIT_ACCOUNT;
    if (split_is_even(m, s))
        return (vpp == 1 || (m->layers / pp) % vpp == 0) ? SPLIT_EVEN : SPLIT_LAYOUT;
    if (pp >= 2) {
        int n0 = s->stage[0].n_layers, nl = s->stage[pp - 1].n_layers;
        int mid = pp > 2 ? s->stage[1].n_layers : nl;
        bool ok = n0 > 0 && nl > 0 && mid > 0;
        for (int i = 1; i < pp - 1; i++)
            ok = ok && s->stage[i].n_layers == mid;
        if (vpp > 1)
            ok = ok && n0 % vpp == 0 && nl % vpp == 0 && mid % vpp == 0;
        if (ok) {
            *first = n0 != mid ? n0 : 0;
            *last = (pp > 2 && nl != mid) ? nl : 0;
            return SPLIT_FIRST_LAST;
        }
    }
    return SPLIT_LAYOUT;
}

/* Builds the layout string "Et*12|t*12|...|t*11L" (heap, *out) of the
 * plan's chunks (strategy_layout_format). */
static int build_layout(const strategy *s, int layers, int mtp, char **out)
{
    size_t need = strategy_layout_format(s, layers, mtp, NULL, 0);
    char *buf = pl_malloc(need + 1);
    if (buf == NULL)
        return -1;
    strategy_layout_format(s, layers, mtp, buf, need + 1);
    *out = buf;
    return 0;
}

static bool gen_before_blackwell(gpu_generation g)
{
    return g != GEN_BLACKWELL && g != GEN_BLACKWELL_ULTRA;
}

static bool gen_is_nvidia(gpu_generation g)
{
    return g != GEN_CDNA2 && g != GEN_CDNA3;
}

/* The node group of stage i, clamped to a valid index. */
static const node_group *stage_group(const cluster *c, const strategy *s, int i)
{
    int g = (i >= 0 && i < s->n_stages) ? s->stage[i].group : 0;
    if (c == NULL || c->n_groups <= 0 || c->group == NULL)
        return NULL;
    if (g < 0 || g >= c->n_groups)
        g = 0;
    return &c->group[g];
}

/* The node groups of s's GPUs (each stage's, all groups a stage spans), in
 * rank order, repeats kept, at most cap; returns how many. */
static int plan_groups(const cluster *c, const strategy *s, const node_group **out, int cap)
{
    int n = 0;
    if (c == NULL || c->n_groups <= 0 || c->group == NULL)
        return 0;
    for (int i = 0; i < s->n_stages && n < cap; i++) {
        int g[STAGE_MIX_MAX], gpus[STAGE_MIX_MAX];
        int k = strategy_stage_members(s, i, g, gpus, STAGE_MIX_MAX);
        for (int j = 0; j < k && n < cap; j++)
            out[n++] = &c->group[g[j] >= 0 && g[j] < c->n_groups ? g[j] : 0];
    }
    return n;
}

#define PLAN_GROUPS_MAX (STRATEGY_MAX_STAGES + STRATEGY_MAX_MIXES * STAGE_MIX_MAX)

/* True when any stage's GPU needs CUDA_DEVICE_MAX_CONNECTIONS=1. */
static bool needs_max_connections(const cluster *c, const strategy *s)
{
    const node_group *gs[PLAN_GROUPS_MAX];
    int n;
    if ((s->tp <= 1 && s->cp <= 1) || s->zero >= 2)
        return false;
    n = plan_groups(c, s, gs, PLAN_GROUPS_MAX);
    for (int i = 0; i < n; i++)
        if (gen_before_blackwell(gs[i]->gpu.gen))
            return true;
    return c == NULL;
}

/* Stage i's TP and DP degrees (0 in a stage_spec: the strategy's). */
static int stage_tp(const strategy *s, int i)
{
    return s->stage[i].tp > 0 ? s->stage[i].tp : s->tp;
}

static int stage_dp(const strategy *s, int i)
{
    return s->stage[i].dp > 0 ? s->stage[i].dp : s->dp;
}

/* True when every stage's GPU runs FlashAttention (NVIDIA Ampere to Hopper). */
static bool all_flash_capable(const cluster *c, const strategy *s)
{
    const node_group *gs[PLAN_GROUPS_MAX];
    int n = plan_groups(c, s, gs, PLAN_GROUPS_MAX);
    if (n < s->n_stages)
        return false;   /* no cluster */
    for (int i = 0; i < n; i++)
        if (!gen_is_nvidia(gs[i]->gpu.gen) || gs[i]->gpu.gen < GEN_AMPERE ||
            !gen_before_blackwell(gs[i]->gpu.gen))
            return false;
    return true;
}

/* The stage of the plan whose GPU has no dense peak for format `f` (the
 * catalog's 0: V100 and T4 have no BF16 and no FP8), or -1. */
static int stage_without(const cluster *c, const strategy *s, peak_format f,
                         const node_group **which)
{
    for (int i = 0; c != NULL && c->n_groups > 0 && c->group != NULL && i < s->n_stages; i++) {
        int g[STAGE_MIX_MAX], gpus[STAGE_MIX_MAX];
        int k = strategy_stage_members(s, i, g, gpus, STAGE_MIX_MAX);
        for (int j = 0; j < k; j++) {
            const node_group *ng = &c->group[g[j] >= 0 && g[j] < c->n_groups ? g[j] : 0];
            if (ng->gpu.peak_flops[f] <= 0) {
                if (which != NULL)
                    *which = ng;
                return i;
            }
        }
    }
    return -1;
}

/* The format the flags train in: the model's, except that a bf16 plan on
 * GPUs without BF16 (V100, T4) trains in fp16, where Megatron-LM's --fp16
 * scales the loss dynamically (optimizer/grad_scaler.py). */
static precision emitted_precision(const model *m, const cluster *c, const strategy *s)
{
    if (m->prec == PREC_BF16 && stage_without(c, s, PEAK_BF16, NULL) >= 0)
        return PREC_FP16;
    return m->prec;
}

/* ---- rules ---------------------------------------------------------------- */

planner_status emit_check(const model *m, const cluster *c, const plan *pl, planner_error *err)
{
    const strategy *s = &pl->s;
    planner_status rc;
    (void)c;
    /* Megatron's rules: the same function the search and validate apply */
    if ((rc = strategy_check(m, s, err)) != PLANNER_OK)
        return rc;
    /* a valid plan Megatron cannot launch: stages with their own degrees */
    for (int i = 0; i < s->n_stages; i++)
        if (stage_tp(s, i) != stage_tp(s, 0) || stage_dp(s, i) != stage_dp(s, 0))
            return error_set(err, PLANNER_E_INPUT, NULL, 0, 0, NULL,
                             "pipeline stages 0 and %d have tp=%d dp=%d and tp=%d dp=%d: "
                             "Megatron-LM and torchtitan run one TP and one DP degree on "
                             "every stage", i,
                             stage_tp(s, 0), stage_dp(s, 0), stage_tp(s, i), stage_dp(s, i));
    return PLANNER_OK;
}

planner_status emit_launch_shape(const cluster *c, const plan *pl, int *nodes,
                                 int *procs_per_node, planner_error *err)
{
    const strategy *s = &pl->s;
    long gpus = (long)s->tp * (s->cp > 0 ? s->cp : 1) * s->dp * s->pp;
    int gpn = 0;
    for (int i = 0; i < s->n_stages; i++) {
        const node_group *g = stage_group(c, s, i);
        if (g == NULL)
            continue;
        if (gpn == 0)
            gpn = g->gpus_per_node;
        else if (g->gpus_per_node != gpn)
            return emit_fail(err, "the stages sit on node groups with %d and %d GPUs per node; "
                             "launch them as a heterogeneous job by hand", gpn,
                             g->gpus_per_node);
    }
    if (gpn <= 0)
        gpn = 8;
    if (gpus <= gpn) {
        *nodes = 1;
        *procs_per_node = (int)gpus;
        return PLANNER_OK;
    }
    if (gpus % gpn != 0)
        return emit_fail(err, "%ld GPUs do not fill whole nodes of %d GPUs", gpus, gpn);
    *nodes = (int)(gpus / gpn);
    *procs_per_node = gpn;
    return PLANNER_OK;
}

/* Runs of consecutive ranks on one group, in rank order (no node math): the
 * stages' groups (a stage spanning groups: each of its groups' share). */
static int stage_runs(const strategy *s, emit_component *out, int max)
{
    int n = 0;
    long rank = 0;
    for (int i = 0; i < s->n_stages; i++) {
        int g[STAGE_MIX_MAX], gpus[STAGE_MIX_MAX];
        int k = strategy_stage_members(s, i, g, gpus, STAGE_MIX_MAX);
        for (int j = 0; j < k; j++) {
            if (n > 0 && out[n - 1].group == g[j]) {
                out[n - 1].n_stages = i - out[n - 1].first_stage + 1;
                out[n - 1].gpus += gpus[j];
            } else {
                if (n >= max)
                    return -1;
                memset(&out[n], 0, sizeof out[n]);
                out[n].group = g[j];
                out[n].first_stage = i;
                out[n].n_stages = 1;
                out[n].first_rank = rank;
                out[n].gpus = gpus[j];
                n++;
            }
            rank += gpus[j];
        }
    }
    return n;
}

planner_status emit_components(const cluster *c, const plan *pl, emit_component *out, int max,
                               int *n, planner_error *err)
{
    const strategy *s = &pl->s;
    int k, node = 0, used[CLUSTER_MAX_GROUPS] = {0};

    *n = 0;
    for (int i = 0; i < s->n_stages; i++) {
        if (stage_tp(s, i) != stage_tp(s, 0))
            return emit_fail(err, "pipeline stages 0 and %d have tp=%d and tp=%d: Megatron-LM "
                             "and torchtitan run one TP degree on every stage", i, stage_tp(s, 0),
                             stage_tp(s, i));
        if (c != NULL && (s->stage[i].group < 0 || s->stage[i].group >= c->n_groups))
            return emit_fail(err, "pipeline stage %d names node group %d of %d", i,
                             s->stage[i].group, c->n_groups);
    }
    k = stage_runs(s, out, max);
    if (k < 0)
        return emit_fail(err, "more than %d launch components", max);
    if (k <= 1 || c == NULL) {
        int nodes = 1, ppn = 1;
        if (k > 1) {   /* no cluster: one launch group of all stages */
            out[0].n_stages = s->n_stages;
            k = 1;
        }
        if (emit_launch_shape(c, pl, &nodes, &ppn, err) != PLANNER_OK)
            return PLANNER_E_INPUT;
        if (k == 1) {
            out[0].nodes = nodes;
            out[0].gpus_per_node = ppn;
        }
        *n = k;
        return PLANNER_OK;
    }
    for (int j = 0; j < k; j++) {
        const node_group *g = &c->group[out[j].group];
        long gpus = out[j].gpus;
        if (g->gpus_per_node <= 0 || gpus % g->gpus_per_node != 0)
            return emit_fail(err, "stages %d-%d on %s use %ld GPUs, not whole nodes of %d",
                             out[j].first_stage, out[j].first_stage + out[j].n_stages - 1,
                             g->name, gpus, g->gpus_per_node);
        out[j].gpus_per_node = g->gpus_per_node;
        out[j].nodes = (int)(gpus / g->gpus_per_node);
        out[j].first_node = node;
        node += out[j].nodes;
        used[out[j].group] += out[j].nodes;
        if (used[out[j].group] > g->nodes)
            return emit_fail(err, "the plan needs %d nodes of %s, which has %d",
                             used[out[j].group], g->name, g->nodes);
    }
    *n = k;
    return PLANNER_OK;
}

/* ---- the architecture: every field reaches a flag, or emit refuses ------- */

/* Megatron-LM's Llama 3.1 RoPE scaling: only the factor has a flag
 * (--rope-scaling-factor); low/high frequency factors and the original
 * context are _apply_scaling's defaults in
 * megatron/core/models/common/embeddings/rotary_pos_embedding.py
 * (core_v0.15.0 .. core_v0.19.0). */
#define MEG_LLAMA3_LOW_FREQ 1.0
#define MEG_LLAMA3_HIGH_FREQ 4.0
#define MEG_LLAMA3_ORIGINAL 8192.0
/* MLATransformerConfig's YaRN figures that have no flag (same releases);
 * rotary_scaling_factor, mscale and mscale_all_dim do. */
#define MEG_YARN_ORIGINAL 4096.0
#define MEG_YARN_BETA_FAST 32.0
#define MEG_YARN_BETA_SLOW 1.0
#define MEG_ROTARY_BASE_DEFAULT 10000.0   /* --rotary-base's default, HF's too */

/* How layer i differs from the model's one layer shape ("" if it does not):
 * Megatron-LM's GPT model builds every decoder layer alike (num_layers
 * copies of one layer spec; its heterogeneous layers take SwiGLU/RMSNorm
 * Llama models with one query-group count only). */
static void layer_difference(const model *m, int i, char *buf, size_t size)
{
    const layer_spec *y = &m->layer[i];
    buf[0] = '\0';
    if (y->hidden != m->hidden)
        snprintf(buf, size, "a residual width of %d (the model's: %d)", y->hidden, m->hidden);
    else if (y->heads != m->heads || y->head_dim != m->head_dim)
        snprintf(buf, size, "%d heads of %d (the model's: %d of %d)", y->heads, y->head_dim,
                 m->heads, m->head_dim);
    else if (y->kv_heads != m->kv_heads)
        snprintf(buf, size, "%d query groups (the model's: %d)", y->kv_heads, m->kv_heads);
    else if (!y->moe && y->ffn_hidden != m->ffn_hidden)
        snprintf(buf, size, "an MLP width of %d (the model's: %d)", y->ffn_hidden,
                 m->ffn_hidden);
}

/* Refuses a model whose decoder layers differ in shape (MoE and dense MLPs
 * mixing is --moe-layer-freq, not a difference), naming the first two runs
 * of differing layers. */
static planner_status layers_check(const model *m, planner_error *err)
{
    char runs[2][200], d[128], prev[128] = "";
    int n = 0, lo = 0;
    for (int i = 0; m->layer != NULL && i <= m->layers; i++) {
        if (i < m->layers)
            layer_difference(m, i, d, sizeof d);
        else
            d[0] = '\0';
        if (i > 0 && strcmp(d, prev) == 0)
            continue;
        if (prev[0] != '\0' && n < 2)   /* a run of differing layers ends at i - 1 */
            snprintf(runs[n++], sizeof runs[0], "layers %d-%d have %s", lo, i - 1, prev);
        lo = i;
        snprintf(prev, sizeof prev, "%s", d);
    }
    if (n == 0)
        return PLANNER_OK;
    return emit_fail(err, "%s%s%s: Megatron-LM builds every decoder layer alike (its "
                     "heterogeneous layers take SwiGLU/RMSNorm models with one query-group "
                     "count only)", runs[0], n > 1 ? ", " : "", n > 1 ? runs[1] : "");
}

/* Refuses RoPE settings Megatron-LM cannot take: a base that is not an
 * integer (--rotary-base is an int), scaling kinds without flags, and
 * figures its constants fix otherwise. */
static planner_status rope_check(const model *m, planner_error *err)
{
    const model_rope *r = &m->rope;
    double theta = r->theta > 0 ? r->theta : MEG_ROTARY_BASE_DEFAULT;
    bool mla = m->mla.kv_lora_rank > 0;
    if (m->position != POS_ROPE)
        return PLANNER_OK;
    if (theta != floor(theta) || theta > 2147483647.0)
        return emit_fail(err, "RoPE base %.6g is not an integer that Megatron-LM's "
                         "--rotary-base takes", theta);
    switch (r->scaling) {
    case ROPE_SCALING_NONE:
        return PLANNER_OK;
    case ROPE_SCALING_LINEAR:
        if (mla || r->factor < 1 || r->factor != floor(r->factor) || r->factor > 1024)
            return emit_fail(err, "linear RoPE scaling by %g: Megatron-LM's "
                             "--rotary-seq-len-interpolation-factor takes an integer >= 1%s",
                             r->factor, mla ? " and not with multi-latent attention" : "");
        return PLANNER_OK;
    case ROPE_SCALING_LLAMA3:
        if (mla || (r->low_freq_factor > 0 && r->low_freq_factor != MEG_LLAMA3_LOW_FREQ) ||
            (r->high_freq_factor > 0 && r->high_freq_factor != MEG_LLAMA3_HIGH_FREQ) ||
            (r->original_max_position > 0 && r->original_max_position != MEG_LLAMA3_ORIGINAL))
            return emit_fail(err, "Llama 3 RoPE scaling with low/high frequency factors %g/%g "
                             "over %g positions: Megatron-LM fixes them at %g/%g over %g",
                             r->low_freq_factor, r->high_freq_factor, r->original_max_position,
                             MEG_LLAMA3_LOW_FREQ, MEG_LLAMA3_HIGH_FREQ, MEG_LLAMA3_ORIGINAL);
        return PLANNER_OK;
    case ROPE_SCALING_YARN:
        if (!mla)
            return emit_fail(err, "YaRN RoPE scaling outside multi-latent attention is not "
                             "expressed in Megatron-LM's flags here");
        if ((r->original_max_position > 0 && r->original_max_position != MEG_YARN_ORIGINAL) ||
            (r->beta_fast >= 0 && r->beta_fast != MEG_YARN_BETA_FAST) ||
            (r->beta_slow >= 0 && r->beta_slow != MEG_YARN_BETA_SLOW))
            return emit_fail(err, "YaRN over %g positions with beta_fast/slow %g/%g: "
                             "Megatron-LM's MLA fixes them at %g, %g/%g (no flags)",
                             r->original_max_position, r->beta_fast, r->beta_slow,
                             MEG_YARN_ORIGINAL, MEG_YARN_BETA_FAST, MEG_YARN_BETA_SLOW);
        return PLANNER_OK;
    case ROPE_SCALING_OTHER:
    default:
        return emit_fail(err, "RoPE scaling '%s' has no Megatron-LM flags", r->type);
    }
}

/* The linear-layer biases Megatron-LM can build: all of them (its default,
 * add_bias_linear), none (--disable-bias-linear), or the q, k, v
 * projections' only (--disable-bias-linear --add-qkv-bias); its LayerNorm
 * has a bias and its RMSNorm none (TransformerConfig, core_v0.15.0 ..
 * core_v0.19.0). */
#define LINEAR_BIASES (MODEL_BIAS_QKV | MODEL_BIAS_OUT | MODEL_BIAS_MLP)

static bool biases_expressible(const model *m)
{
    unsigned b = model_biases(m), lin = b & LINEAR_BIASES;
    bool norm_bias = (b & MODEL_BIAS_NORM) != 0;
    if (norm_bias != (m->norm == NORM_LAYERNORM))
        return false;
    return lin == LINEAR_BIASES || lin == 0 || lin == MODEL_BIAS_QKV;
}

/* --rotary-percent for a partial rotary embedding, or 0 when the whole
 * head rotates; Megatron rotates int(kv_channels x percent) dimensions. */
static double rotary_percent(const model *m)
{
    if (m->rotary_dim <= 0 || m->head_dim <= 0 || m->rotary_dim >= m->head_dim)
        return 0;
    return (double)m->rotary_dim / m->head_dim;
}

/* An architectural field of the HF families (model.h) that no Megatron-LM
 * flag carries, or NULL, for a run of seq_len tokens.  Megatron's GPT layer
 * is a sequential pre-norm block (no parallel attention+MLP, no sandwich
 * norms), its GLU is SwiGLU (--swiglu) and its --qk-layernorm is per head;
 * --window-size exists, but its window bounds are not matched to the HF
 * configs' here.  A window or chunk of seq_len tokens or more never limits
 * what a token attends to in the run: the causal attention Megatron runs
 * (Phi-3.5-mini's and Phi-4-mini's 262,144-token window). */
static const char *model_not_carried(const model *m, int seq_len)
{
    int i;
    double pct = rotary_percent(m);
    if (m->act == ACT_GEGLU)
        return "its GeGLU MLP";
    if (m->parallel_block)
        return "its parallel attention+MLP block";
    if (m->layer_norms != 0 && m->layer_norms != 2)
        return "its norms per layer";
    if (m->qk_norm == QK_NORM_ALL_HEADS)
        return "its QK-norm over all heads (--qk-layernorm is per head)";
    if (pct > 0 && (int)(m->head_dim * pct) != m->rotary_dim)
        return "its partial rotary embedding (not a whole share of head_dim)";
    if (!biases_expressible(m))
        return "its biases (Megatron-LM: all linear layers, none, or q/k/v only)";
    for (i = 0; i < m->layers; i++)
        if ((m->layer[i].window > 0 && m->layer[i].window < seq_len) ||
            (m->layer[i].chunk > 0 && m->layer[i].chunk < seq_len))
            return "its sliding-window or chunked attention";
    return NULL;
}

/* Every architectural field of the model that the flags cannot carry: the
 * model is refused with the reason, never launched as a different one. */
static planner_status model_check(const model *m, int seq_len, planner_error *err)
{
    const char *missing = model_not_carried(m, seq_len);
    if (missing != NULL)
        return emit_fail(err, "the Megatron flags do not carry %s", missing);
    if (layers_check(m, err) != PLANNER_OK || rope_check(m, err) != PLANNER_OK)
        return PLANNER_E_INPUT;
    if (m->mtp_layers > 0 && m->position != POS_ROPE) {
        /* validate_args, core_v0.15.0 .. core_v0.19.0 */
        return emit_fail(err, "Megatron-LM's multi-token prediction (%d layers) needs RoPE "
                         "positions, not learned ones", m->mtp_layers);
    }
    return PLANNER_OK;
}

/* The RoPE flags (rope_check passed): base, scaling, and for MLA the rope
 * type (MLA takes YaRN unless told --rope-type rope). */
static void rope_args(const model *m, arg_list *l)
{
    const model_rope *r = &m->rope;
    char v[32];
    if (m->position != POS_ROPE)
        return;
    arg_int(l, SEC_MODEL, "--rotary-base",
            (long)(r->theta > 0 ? r->theta : MEG_ROTARY_BASE_DEFAULT));
    if (r->scaling == ROPE_SCALING_LINEAR) {
        arg_int(l, SEC_MODEL, "--rotary-seq-len-interpolation-factor", (long)r->factor);
    } else if (r->scaling == ROPE_SCALING_LLAMA3) {
        arg_switch(l, SEC_MODEL, "--use-rope-scaling");
        snprintf(v, sizeof v, "%g", r->factor > 0 ? r->factor : 8.0);
        arg_str(l, SEC_MODEL, "--rope-scaling-factor", v);
    }
    if (m->mla.kv_lora_rank == 0)
        return;
    arg_str(l, SEC_MODEL, "--rope-type", r->scaling == ROPE_SCALING_YARN ? "yarn" : "rope");
    if (r->scaling == ROPE_SCALING_YARN) {
        snprintf(v, sizeof v, "%g", r->factor > 0 ? r->factor : 1.0);
        arg_str(l, SEC_MODEL, "--rotary-scaling-factor", v);
        snprintf(v, sizeof v, "%g", r->mscale >= 0 ? r->mscale : 1.0);
        arg_str(l, SEC_MODEL, "--mscale", v);
        snprintf(v, sizeof v, "%g", r->mscale_all_dim >= 0 ? r->mscale_all_dim : 0.0);
        arg_str(l, SEC_MODEL, "--mscale-all-dim", v);
    }
}

/* ---- the argument list ---------------------------------------------------- */

/* "([0]*3+[1]*58)" from the layers' moe flags (run-length Python list). */
static void moe_layer_freq(const model *m, char *buf, size_t size)
{
    size_t len = 0;
    bool all = true;
    for (int i = 0; i < m->layers; i++)
        all = all && m->layer[i].moe;
    if (all || m->layer == NULL) {
        snprintf(buf, size, "1");
        return;
    }
    len += (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < m->layers && len < size;) {
        int j = i;
        while (j < m->layers && m->layer[j].moe == m->layer[i].moe)
            j++;
        len += (size_t)snprintf(buf + len, size - len, "%s[%d]*%d", i == 0 ? "" : "+",
                                m->layer[i].moe ? 1 : 0, j - i);
        i = j;
    }
    if (len < size)
        snprintf(buf + len, size - len, ")");
}

/* The routed and shared experts, and the token dispatcher: alltoall, or
 * flex (its backend: the knob's flags). */
static void moe_args(const model *m, bool flex, arg_list *l)
{
    arg_int(l, SEC_MODEL, "--num-experts", m->moe.experts);
    arg_int(l, SEC_MODEL, "--moe-router-topk", m->moe.top_k);
    arg_int(l, SEC_MODEL, "--moe-ffn-hidden-size", m->moe.expert_ffn);
    if (m->moe.shared_experts > 0) {
        int sffn = m->moe.shared_expert_ffn > 0 ? m->moe.shared_expert_ffn : m->moe.expert_ffn;
        arg_int(l, SEC_MODEL, "--moe-shared-expert-intermediate-size",
                (long)m->moe.shared_experts * sffn);
    }
    moe_layer_freq(m, l->moe_freq, sizeof l->moe_freq);
    if (strcmp(l->moe_freq, "1") != 0) {
        emit_arg *a = arg_add(l, SEC_MODEL, "--moe-layer-freq");
        if (a != NULL)
            a->value = l->moe_freq;
    }
    arg_str(l, SEC_MODEL, "--moe-token-dispatcher-type", flex ? "flex" : "alltoall");
    /* the cost model runs the routed experts as grouped GEMMs
     * (transformer.c), in every precision (Transformer Engine's
     * GroupedLinear takes FP8 recipes) */
    arg_switch(l, SEC_MODEL, "--moe-grouped-gemm");
}

/* --kv-channels (with `kv_channels`, when the head dimension is not
 * hidden / heads), the sequence and position-table lengths, --swiglu: the
 * flags Megatron-LM and Megatron-DeepSpeed share, in their order. */
static void kv_seq_args(const model *m, int seq, bool kv_channels, arg_list *l)
{
    if (kv_channels && m->heads > 0 &&
        (m->hidden % m->heads != 0 || m->head_dim != m->hidden / m->heads))
        arg_int(l, SEC_MODEL, "--kv-channels", m->head_dim);
    arg_int(l, SEC_MODEL, "--seq-length", seq);
    arg_int(l, SEC_MODEL, "--max-position-embeddings",
            m->max_position > seq ? m->max_position : seq);
    if (m->act == ACT_SWIGLU)
        arg_switch(l, SEC_MODEL, "--swiglu");
}

/* The model's flags: shape, attention, norms, MoE. */
static void model_args(const model *m, int seq, bool flex, arg_list *l)
{
    arg_int(l, SEC_MODEL, "--num-layers", m->layers);
    arg_int(l, SEC_MODEL, "--hidden-size", m->hidden);
    if (m->moe.experts == 0 || m->ffn_hidden > 0)
        arg_int(l, SEC_MODEL, "--ffn-hidden-size", m->ffn_hidden);
    arg_int(l, SEC_MODEL, "--num-attention-heads", m->heads);
    if (m->mla.kv_lora_rank > 0) {
        arg_switch(l, SEC_MODEL, "--multi-latent-attention");
        if (m->mla.q_lora_rank > 0)
            arg_int(l, SEC_MODEL, "--q-lora-rank", m->mla.q_lora_rank);
        arg_int(l, SEC_MODEL, "--kv-lora-rank", m->mla.kv_lora_rank);
        arg_int(l, SEC_MODEL, "--qk-head-dim", m->mla.qk_nope_head_dim);
        arg_int(l, SEC_MODEL, "--qk-pos-emb-head-dim", m->mla.qk_rope_head_dim);
        arg_int(l, SEC_MODEL, "--v-head-dim", m->mla.v_head_dim);
    } else if (m->kv_heads > 0 && m->kv_heads < m->heads) {
        arg_switch(l, SEC_MODEL, "--group-query-attention");
        arg_int(l, SEC_MODEL, "--num-query-groups", m->kv_heads);
    }
    kv_seq_args(m, seq, m->mla.kv_lora_rank == 0, l);
    arg_str(l, SEC_MODEL, "--normalization", m->norm == NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
    arg_str(l, SEC_MODEL, "--position-embedding-type",
            m->position == POS_ROPE ? "rope" : "learned_absolute");
    rope_args(m, l);
    if (rotary_percent(m) > 0) {
        char v[32];
        snprintf(v, sizeof v, "%.17g", rotary_percent(m));
        arg_str(l, SEC_MODEL, "--rotary-percent", v);
    }
    /* ChatGLM rotates interleaved pairs (x0, x1), (x2, x3) ... of the rotary
     * dimensions (apply_rotary_pos_emb in its modeling_chatglm.py); Llama
     * and the other families rotate halves */
    if (m->position == POS_ROPE && strcmp(m->family, "chatglm") == 0)
        arg_switch(l, SEC_MODEL, "--rotary-interleaved");
    if (m->qk_norm == QK_NORM_HEAD)
        arg_switch(l, SEC_MODEL, "--qk-layernorm");
    if ((model_biases(m) & LINEAR_BIASES) != LINEAR_BIASES)   /* biases_expressible */
        arg_switch(l, SEC_MODEL, "--disable-bias-linear");
    if ((model_biases(m) & LINEAR_BIASES) == MODEL_BIAS_QKV)
        arg_switch(l, SEC_MODEL, "--add-qkv-bias");
    if (!m->tied_embeddings)
        arg_switch(l, SEC_MODEL, "--untie-embeddings-and-output-weights");
    /* the residual dropout the plan's memory counts masks for (none at 0:
     * tf_dropout_mask_bytes); Megatron's own default otherwise */
    if (model_hidden_dropout(m) != MODEL_DEFAULT_HIDDEN_DROPOUT)
        arg_real(l, SEC_MODEL, "--hidden-dropout", model_hidden_dropout(m));
    if (m->moe.experts > 0)
        moe_args(m, flex, l);
    if (m->mtp_layers > 0) {
        arg_int(l, SEC_MODEL, "--mtp-num-layers", m->mtp_layers);
    }
}

/* How the layer split and the virtual stages are told (choose_split); the
 * embedding/loss-accounting switches are knobs of their own. */
static int split_args(const model *m, const strategy *s, arg_list *l)
{
    int first = 0, last = 0, vpp = s->vpp > 1 ? s->vpp : 1;
    emit_arg *a;
    switch (choose_split(m, s, &first, &last)) {
    case SPLIT_EVEN:
        if (vpp > 1)
            arg_int(l, SEC_PARALLEL, "--num-layers-per-virtual-pipeline-stage",
                    m->layers / s->pp / vpp);
        return 0;
    case SPLIT_FIRST_LAST:
        if (first > 0)
            arg_int(l, SEC_PARALLEL, "--decoder-first-pipeline-num-layers", first);
        if (last > 0)
            arg_int(l, SEC_PARALLEL, "--decoder-last-pipeline-num-layers", last);
        break;
    case SPLIT_ACCOUNT:   /* (layers + embedding + loss) / (pp vpp) per virtual chunk */
        break;
    case SPLIT_LAYOUT:
        if (build_layout(s, m->layers, m->mtp_layers, &l->layout) != 0)
            return -1;
        a = arg_add(l, SEC_PARALLEL, "--pipeline-model-parallel-layout");
        if (a != NULL)
            a->value = l->layout;
        return 0;
    }
    if (vpp > 1)
        arg_int(l, SEC_PARALLEL, "--num-virtual-stages-per-pipeline-rank", vpp);
    return 0;
}

/* Full recompute's method and layer count, selective's granularity.  The
 * planner's recompute_layers is Megatron's --recompute-num-layers (per
 * model chunk, TransformerBlock._checkpointed_forward); 0, every layer, is
 * uniform units of one layer. */
static void recompute_args(const strategy *s, arg_list *l)
{
    if (s->recompute == RECOMPUTE_SELECTIVE) {
        arg_str(l, SEC_MEMORY, "--recompute-granularity", "selective");
        if (s->recompute_modules > 0 && s->recompute_modules != RC_MOD_CORE_ATTN) {
            /* Megatron's list (nargs '*'), space-separated words */
            char mods[KNOB_TEXT_MAX];
            size_t n = 0;
            knob_text(s, KNOB_RECOMPUTE_MODULES, false, mods, sizeof mods);
            for (; mods[n] != '\0'; n++)
                if (mods[n] == '+')
                    mods[n] = ' ';
            arg_shell(l, SEC_MEMORY, "--recompute-modules", mods);
        }
    } else if (s->recompute == RECOMPUTE_FULL) {
        bool uniform = s->recompute_layers == 0 || s->recompute_method == RECOMPUTE_UNIFORM;
        arg_str(l, SEC_MEMORY, "--recompute-granularity", "full");
        arg_str(l, SEC_MEMORY, "--recompute-method", uniform ? "uniform" : "block");
        arg_int(l, SEC_MEMORY, "--recompute-num-layers",
                s->recompute_layers > 0 ? s->recompute_layers : 1);
    }
}

/* The flags of knob k whose registry row says MEG_EMIT. */
static int knob_emit_args(const model *m, const strategy *s, knob_id k, arg_list *l)
{
    switch (k) {
    case KNOB_VPP:
        return split_args(m, s, l);
    case KNOB_EP:
        if (s->ep > 1)
            arg_int(l, SEC_PARALLEL, "--expert-model-parallel-size", s->ep);
        return 0;
    case KNOB_ETP:
        /* Megatron's default is etp = tp (arguments.py validate_args:
         * expert_tensor_parallel_size None -> tensor_model_parallel_size):
         * the flag whenever the plan's etp differs, on MoE models */
        if (m->moe.experts > 0 && s->etp != s->tp)
            arg_int(l, SEC_PARALLEL, "--expert-tensor-parallel-size", s->etp > 0 ? s->etp : 1);
        return 0;
    case KNOB_RECOMPUTE:
        recompute_args(s, l);
        return 0;
    case KNOB_ZERO:
        if (s->zero == 1) {
            arg_switch(l, SEC_MEMORY, "--use-distributed-optimizer");
        } else if (s->zero >= 2) {
            arg_switch(l, SEC_MEMORY, "--use-megatron-fsdp");
            arg_str(l, SEC_MEMORY, "--data-parallel-sharding-strategy",
                    s->zero == 2 ? "optim_grads" : "optim_grads_params");
            arg_str(l, SEC_MEMORY, "--ckpt-format", "fsdp_dtensor");
        }
        return 0;
    case KNOB_CUDA_GRAPH:   /* core_v0.15.0 arguments.py: "local" with scope
                             * full_iteration captures the whole iteration */
        if (s->cuda_graph) {
            arg_str(l, SEC_MEMORY, "--cuda-graph-impl", "local");
            arg_str(l, SEC_MEMORY, "--cuda-graph-scope", "full_iteration");
        }
        return 0;
    case KNOB_TE_MOE_GRAPHS:   /* core_v0.15.0 arguments.py: the router and
                                * preprocessing scopes run under TE's
                                * make_graphed_callables (moe_preprocess needs
                                * moe_router); --te-rng-tracker, "Required for
                                * CUDA graphs support" */
        if (s->te_moe_graphs) {
            arg_str(l, SEC_MEMORY, "--cuda-graph-impl", "transformer_engine");
            arg_shell(l, SEC_MEMORY, "--cuda-graph-scope", "moe_router moe_preprocess");
            arg_switch(l, SEC_MEMORY, "--te-rng-tracker");
        }
        return 0;
    case KNOB_OPT_STATE:   /* core_v0.15.0 arguments.py: the moments' dtypes
                            * (the main weights stay fp32: their 16-bit
                            * remainders, store_param_remainders' default) */
        if (s->opt_state == OPT_STATE_FP32_REM)   /* fp32 moments: the defaults */
            arg_switch(l, SEC_MEMORY, "--use-precision-aware-optimizer");
        if (s->opt_state == OPT_STATE_BF16) {
            arg_switch(l, SEC_MEMORY, "--use-precision-aware-optimizer");
            arg_str(l, SEC_MEMORY, "--exp-avg-dtype", "bf16");
            arg_str(l, SEC_MEMORY, "--exp-avg-sq-dtype", "bf16");
        }
        return 0;
    case KNOB_FLEX_DISPATCHER:   /* its backend (the type: moe_args): core_v0.15.0
                                  * --moe-enable-deepep, from core_v0.16.0
                                  * --moe-flex-dispatcher-backend (which deprecates
                                  * it: transformer_config.py); HybridEP with the SMs
                                  * the cost and every validating run give it
                                  * (COST_HYBRIDEP_SMS: Megatron-Core's default is
                                  * 16 on core_v0.16/0.17, DeepEP's after); DeepEP
                                  * keeps its default 20, the cost's COST_DEEPEP_SMS */
        if (s->flex_dispatcher && l->flex_backend != NULL) {
            if (strcmp(l->flex_backend, "deepep") == 0) {
                arg_switch(l, SEC_PARALLEL, "--moe-enable-deepep");
            } else {
                arg_str(l, SEC_PARALLEL, "--moe-flex-dispatcher-backend", l->flex_backend);
                arg_int(l, SEC_PARALLEL, "--moe-hybridep-num-sms", COST_HYBRIDEP_SMS);
            }
        }
        return 0;
    case KNOB_CP_COMM:   /* p2p is Megatron's default */
        if (s->cp > 1 && s->cp_comm != CP_COMM_P2P)
            arg_str(l, SEC_PARALLEL, "--cp-comm-type", cp_comm_name(s->cp_comm));
        return 0;
    case KNOB_CP_A2A:   /* a2a+p2p's two levels (Megatron arguments.py: needed, product cp;
                         * nargs '+', two words) */
        if (s->cp > 1 && s->cp_comm == CP_COMM_A2A_P2P && s->cp_a2a > 1) {
            char sizes[32];
            snprintf(sizes, sizeof sizes, "%d %d", s->cp_a2a, s->cp / s->cp_a2a);
            arg_shell(l, SEC_PARALLEL, "--hierarchical-context-parallel-sizes", sizes);
        }
        return 0;
    default:   /* KNOB_RECOMPUTE_LAYERS, _METHOD, _MODULES: with KNOB_RECOMPUTE */
        return 0;
    }
}

/* The flags of the plan's knobs in launch section `ks`, in the registry's
 * meg_order (model/knobs.c). */
static int knob_args(const model *m, const strategy *s, knob_section ks, arg_list *l)
{
    static const arg_section sec[] = {
        [KNOB_SEC_PARALLEL] = SEC_PARALLEL, [KNOB_SEC_BATCH] = SEC_BATCH,
        [KNOB_SEC_MEMORY] = SEC_MEMORY};
    knob_id order[KNOB_COUNT];
    int n = 0;
    for (int k = 0; k < KNOB_COUNT; k++) {   /* insertion sort by meg_order */
        const knob_info *ki = knob_get_info((knob_id)k);
        int j = n++;
        if (ki->meg == MEG_NONE || ki->meg_section != ks) {
            n--;
            continue;
        }
        for (; j > 0 && knob_get_info(order[j - 1])->meg_order > ki->meg_order; j--)
            order[j] = order[j - 1];
        order[j] = (knob_id)k;
    }
    for (int i = 0; i < n; i++) {
        const knob_info *ki = knob_get_info(order[i]);
        int v = knob_value(s, order[i]);
        if ((ki->meg == MEG_INT) || (ki->meg == MEG_INT_ABOVE_1 && v > 1))
            arg_int(l, sec[ks], ki->megatron, v);
        else if (ki->meg == MEG_SWITCH && v)
            arg_switch(l, sec[ks], ki->megatron);
        else if (ki->meg == MEG_EMIT && knob_emit_args(m, s, order[i], l) != 0)
            return -1;
    }
    return 0;
}

/* Precision flags and the attention backend. */
static void precision_args(const model *m, const cluster *c, const strategy *s, arg_list *l)
{
    precision p = emitted_precision(m, c, s);
    switch (p) {
    case PREC_FP16:
        arg_switch(l, SEC_PRECISION, "--fp16");
        /* dynamic loss scaling from 2^16 (Megatron's default start is 2^32:
         * 16 skipped steps to come down); the window and hysteresis are
         * Megatron's defaults */
        arg_int(l, SEC_PRECISION, "--initial-loss-scale", 65536);
        if (m->prec != PREC_FP16)
            add_note(l, "fp16 with dynamic loss scaling: the plan's GPUs have no bf16");
        break;
    case PREC_FP32:
        break;
    case PREC_FP8:
        arg_switch(l, SEC_PRECISION, "--bf16");
        arg_str(l, SEC_PRECISION, "--fp8-format", "hybrid");
        arg_str(l, SEC_PRECISION, "--fp8-recipe", "delayed");
        break;
    case PREC_MXFP8:
        arg_switch(l, SEC_PRECISION, "--bf16");
        arg_str(l, SEC_PRECISION, "--fp8-format", "e4m3");
        arg_str(l, SEC_PRECISION, "--fp8-recipe", "mxfp8");
        break;
    case PREC_NVFP4:
        arg_switch(l, SEC_PRECISION, "--bf16");
        arg_str(l, SEC_PRECISION, "--fp4-format", "e2m1");
        arg_str(l, SEC_PRECISION, "--fp4-recipe", "nvfp4");
        break;
    case PREC_BF16:
    default:
        arg_switch(l, SEC_PRECISION, "--bf16");
        break;
    }
    /* FP8 primary weights, as the plan's memory counts them */
    if (memory_fp8_primary_weights(p, s->zero, s->opt_state))
        arg_switch(l, SEC_PRECISION, "--fp8-param-gather");
    if (stage_group(c, s, 0) != NULL && all_flash_capable(c, s))
        arg_str(l, SEC_PRECISION, "--attention-backend", "flash");
    else
        arg_str(l, SEC_PRECISION, "--attention-backend", "auto");
}

/* Data, tokenizer and checkpoint placeholders, typical hyper-parameters;
 * `tokenizer` is the Hugging Face tokenizer's --tokenizer-type (Megatron-LM
 * HuggingFaceTokenizer, Megatron-DeepSpeed HFTokenizer), which has
 * --log-throughput or not. */
static void placeholder_args(arg_list *l, const char *tokenizer, bool log_throughput)
{
    arg_shell(l, SEC_DATA, "--data-path", "\"$DATA_PATH\"");
    arg_str(l, SEC_DATA, "--tokenizer-type", tokenizer);
    arg_shell(l, SEC_DATA, "--tokenizer-model", "\"$TOKENIZER_MODEL\"");
    arg_shell(l, SEC_DATA, "--save", "\"$CHECKPOINT_DIR\"");
    arg_shell(l, SEC_DATA, "--load", "\"$CHECKPOINT_DIR\"");
    arg_int(l, SEC_DATA, "--save-interval", 1000);

    arg_int(l, SEC_TRAINING, "--train-iters", 1000);
    arg_str(l, SEC_TRAINING, "--lr", "3.0e-4");
    arg_str(l, SEC_TRAINING, "--min-lr", "3.0e-5");
    arg_str(l, SEC_TRAINING, "--lr-decay-style", "cosine");
    arg_str(l, SEC_TRAINING, "--lr-warmup-fraction", "0.01");
    arg_str(l, SEC_TRAINING, "--weight-decay", "0.1");
    arg_str(l, SEC_TRAINING, "--adam-beta1", "0.9");
    arg_str(l, SEC_TRAINING, "--adam-beta2", "0.95");
    arg_str(l, SEC_TRAINING, "--clip-grad", "1.0");
    arg_int(l, SEC_TRAINING, "--log-interval", 1);
    if (log_throughput)
        arg_switch(l, SEC_TRAINING, "--log-throughput");
    arg_int(l, SEC_TRAINING, "--eval-interval", 1000);
    arg_int(l, SEC_TRAINING, "--eval-iters", 10);
}

/* The whole argument list, section by section (the plan's knobs from the
 * registry); 0, or -1 when out of memory or arguments. */
static int build_args(const model *m, const cluster *c, const plan *pl, arg_list *l)
{
    const strategy *s = &pl->s;
    model_args(m, s->seq_len, s->flex_dispatcher, l);
    if (knob_args(m, s, KNOB_SEC_PARALLEL, l) != 0 || knob_args(m, s, KNOB_SEC_BATCH, l) != 0)
        return -1;
    arg_int(l, SEC_BATCH, "--global-batch-size", s->gbs);
    if (knob_args(m, s, KNOB_SEC_MEMORY, l) != 0)
        return -1;
    precision_args(m, c, s, l);
    placeholder_args(l, "HuggingFaceTokenizer", true);
    if (m->vocab > 0)
        add_note(l, "vocabulary: %d entries, defined by the tokenizer (Megatron pads it to a "
                 "multiple of 128 x tp)", m->vocab);
    return l->n < EMIT_MAX_ARGS ? 0 : -1;
}

/* ---- Megatron-DeepSpeed ------------------------------------------------ */

/* The MoE layers are every k-th (1-based, Megatron-DeepSpeed's
 * get_num_experts_per_layer: layer_num % expert_interval == 0): k, or 0. */
static int ds_expert_interval(const model *m)
{
    int k = 0;
    while (k < m->layers && !m->layer[k].moe)
        k++;
    k++;
    for (int i = 0; k <= m->layers && i < m->layers; i++)
        if (m->layer[i].moe != ((i + 1) % k == 0))
            return 0;
    return k <= m->layers ? k : 0;
}

/* What Megatron-DeepSpeed's flags (megatron/arguments.py, f4157be) cannot
 * carry, on top of what no Megatron flag carries (model_not_carried,
 * layers_check): per-head QK-norm, MLA, q/k/v-only biases, RoPE scaling,
 * ChatGLM's interleaved rotation, shared experts, MoE layers that are not
 * every k-th, a dense MLP wider or narrower than the experts (one
 * --ffn-hidden-size), MTP; and what its pipeline (GPTModelPipe,
 * partition_method type:transformer) cannot split: an uneven split, block
 * recompute ("deepspeed's pipeline doesn't support the block recompute
 * method", megatron/model/gpt_model.py). */
static planner_status ds_model_check(const model *m, const strategy *s, planner_error *err)
{
    const char *missing = model_not_carried(m, s->seq_len);
    double theta = m->rope.theta > 0 ? m->rope.theta : MEG_ROTARY_BASE_DEFAULT;
    bool moe = m->moe.experts > 0;
    if (missing == NULL && m->qk_norm != QK_NORM_NONE)
        missing = "its QK-norm";
    if (missing == NULL && m->mla.kv_lora_rank > 0)
        missing = "its multi-latent attention";
    if (missing == NULL && (model_biases(m) & LINEAR_BIASES) == MODEL_BIAS_QKV)
        missing = "its q/k/v-only biases";
    if (missing == NULL && m->position == POS_ROPE &&
        (m->rope.scaling != ROPE_SCALING_NONE || theta != floor(theta) || theta > 2147483647.0 ||
         strcmp(m->family, "chatglm") == 0))
        missing = "its RoPE scaling, base or interleaved rotation";
    if (missing == NULL && moe && (m->moe.shared_experts > 0 || ds_expert_interval(m) == 0 ||
                                   (ds_expert_interval(m) > 1 &&
                                    m->ffn_hidden != m->moe.expert_ffn)))
        missing = "its MoE layout (shared experts, MoE layers not every k-th, or dense and "
                  "expert MLPs of different widths)";
    if (missing == NULL && m->mtp_layers > 0)
        missing = "its multi-token prediction layers";
    if (missing != NULL)
        return emit_fail(err, "the Megatron-DeepSpeed flags do not carry %s", missing);
    if (layers_check(m, err) != PLANNER_OK)
        return PLANNER_E_INPUT;
    if (s->pp > 1 && !split_is_even(m, s))
        return emit_fail(err, "Megatron-DeepSpeed's pipeline splits the %d layers evenly over "
                         "pp=%d (partition_method type:transformer); the plan's split is not "
                         "even", m->layers, s->pp);
    if (s->pp > 1 && s->recompute == RECOMPUTE_FULL && s->recompute_layers > 0 &&
        s->recompute_method == RECOMPUTE_BLOCK)
        return emit_fail(err, "%s's pipeline takes uniform recompute only, not block "
                         "(recompute_layers=%d): plan with --fix recompute_method=uniform",
                         stack_get(STACK_DEEPSPEED)->rules_by, s->recompute_layers);
    return PLANNER_OK;
}

/* Megatron-DeepSpeed's model flags. */
static void ds_model_args(const model *m, int seq, arg_list *l)
{
    bool moe = m->moe.experts > 0;
    arg_int(l, SEC_MODEL, "--num-layers", m->layers);
    arg_int(l, SEC_MODEL, "--hidden-size", m->hidden);
    arg_int(l, SEC_MODEL, "--ffn-hidden-size",
            moe && ds_expert_interval(m) == 1 ? m->moe.expert_ffn : m->ffn_hidden);
    arg_int(l, SEC_MODEL, "--num-attention-heads", m->heads);
    if (m->kv_heads > 0 && m->kv_heads < m->heads)
        arg_int(l, SEC_MODEL, "--num-key-value-heads", m->kv_heads);
    kv_seq_args(m, seq, true, l);
    if (m->norm == NORM_RMSNORM)
        arg_str(l, SEC_MODEL, "--normalization", "rmsnorm");
    if (m->position == POS_ROPE) {
        arg_switch(l, SEC_MODEL, "--use-rotary-position-embeddings");
        arg_switch(l, SEC_MODEL, "--no-position-embedding");
        if (m->rope.theta > 0 && m->rope.theta != MEG_ROTARY_BASE_DEFAULT)
            arg_int(l, SEC_MODEL, "--rotary-position-embeddings-theta", (long)m->rope.theta);
        if (rotary_percent(m) > 0)
            arg_real(l, SEC_MODEL, "--rotary-percent", rotary_percent(m));
    }
    if (!m->tied_embeddings)
        arg_switch(l, SEC_MODEL, "--untie-embeddings-and-output-weights");
    if ((model_biases(m) & LINEAR_BIASES) == 0)
        arg_switch(l, SEC_MODEL, "--disable-bias-linear");
    if (model_hidden_dropout(m) != MODEL_DEFAULT_HIDDEN_DROPOUT)
        arg_real(l, SEC_MODEL, "--hidden-dropout", model_hidden_dropout(m));
    if (moe) {
        arg_int(l, SEC_MODEL, "--num-experts", m->moe.experts);
        arg_int(l, SEC_MODEL, "--topk", m->moe.top_k);
        arg_int(l, SEC_MODEL, "--expert-interval", ds_expert_interval(m));
    }
}

/* Megatron-DeepSpeed's whole argument list: the model, tp and pp (pp 1:
 * --no-pipeline-parallel, the plain GPTModel), batch, ZeRO stage and full
 * recompute, the 16-bit format, the DeepSpeed config; 0, or -1 when out of
 * arguments.  No CUDA_DEVICE_MAX_CONNECTIONS rule: arguments.py asks for 1
 * with sequence parallelism (the stack has none) or the async TP all-reduce,
 * which it turns off under --deepspeed. */
static int build_ds_args(const model *m, const cluster *c, const plan *pl, arg_list *l)
{
    const strategy *s = &pl->s;
    precision p = emitted_precision(m, c, s);
    ds_model_args(m, s->seq_len, l);
    arg_int(l, SEC_PARALLEL, "--tensor-model-parallel-size", s->tp);
    arg_int(l, SEC_PARALLEL, "--pipeline-model-parallel-size", s->pp);
    if (s->pp == 1)
        arg_switch(l, SEC_PARALLEL, "--no-pipeline-parallel");
    if (m->moe.experts > 0 && s->ep > 1)
        arg_int(l, SEC_PARALLEL, "--moe-expert-parallel-size", s->ep);
    arg_int(l, SEC_BATCH, "--micro-batch-size", s->mbs);
    /* "Create separate groups for MoE params. This is necessary for
     * techniques like ZeRO." (arguments.py) */
    if (m->moe.experts > 0 && s->zero >= 1)
        arg_switch(l, SEC_MEMORY, "--create-moe-param-group");
    arg_int(l, SEC_BATCH, "--global-batch-size", s->gbs);
    arg_int(l, SEC_MEMORY, "--zero-stage", s->zero);
    if (s->recompute == RECOMPUTE_FULL)
        recompute_args(s, l);
    if (p == PREC_BF16)
        arg_switch(l, SEC_PRECISION, "--bf16");
    else if (p == PREC_FP16)
        arg_switch(l, SEC_PRECISION, "--fp16");
    arg_switch(l, SEC_PRECISION, "--deepspeed");
    arg_shell(l, SEC_PRECISION, "--deepspeed_config", "\"$DS_CONFIG\"");
    placeholder_args(l, "HFTokenizer", false);
    return l->n < EMIT_MAX_ARGS ? 0 : -1;
}

/* ---- printing -------------------------------------------------------------- */

/* True when `v` is a non-empty run of [A-Za-z0-9_.,:/+=-]: a shell word as
 * it is, in any context (argument, comment, #SBATCH line). */
static bool plain_word(const char *v)
{
    if (*v == '\0')
        return false;
    for (const char *p = v; *p; p++) {
        char ch = *p;
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || strchr("_.,:/+=-", ch) != NULL;
        if (!ok)
            return false;
    }
    return true;
}

/* Writes `v` as exactly one shell word on one line, so that nothing a user
 * wrote (model, cluster, group names, paths) can end a comment, an #SBATCH
 * line or a word, or expand: as it is when plain_word; in single quotes
 * (each ' as '\'') when it is UTF-8 without control characters (base/text.h,
 * what names from inputs must be); otherwise in
 * bash's $'...' with \xHH for every byte outside printable ASCII and \\, \'
 * escaped (bash(1), QUOTING).  The one place where user text is quoted. */
static void shell_word(FILE *out, const char *v)
{
    const unsigned char *p;
    if (plain_word(v)) {
        fputs(v, out);
        return;
    }
    if (text_check_name(v, NULL) == PLANNER_OK) {   /* UTF-8 without controls */
        fputc('\'', out);
        for (p = (const unsigned char *)v; *p; p++) {
            if (*p == '\'')
                fputs("'\\''", out);
            else
                fputc(*p, out);
        }
        fputc('\'', out);
        return;
    }
    fputs("$'", out);
    for (p = (const unsigned char *)v; *p; p++) {
        if (*p == '\\' || *p == '\'')
            fprintf(out, "\\%c", *p);
        else if (*p >= 0x20 && *p < 0x7f)
            fputc(*p, out);
        else
            fprintf(out, "\\x%02x", *p);
    }
    fputc('\'', out);
}

/* " VALUE" of an argument: a shell expression ("$DATA_PATH") as it is,
 * anything else as one quoted word. */
static void print_value(FILE *out, const emit_arg *a)
{
    if (a->value == NULL)
        return;
    fputc(' ', out);
    if (a->shell)
        fputs(a->value, out);
    else
        shell_word(out, a->value);
}

typedef enum launch_target { LAUNCH_MEGATRON, LAUNCH_TORCHTITAN, LAUNCH_DEEPSPEED } launch_target;

/* The launch components of a plan for its header and scripts. */
typedef struct launch_map {
    emit_component comp[STRATEGY_MAX_STAGES];
    int n;
    int nodes;              /* all components */
    bool have_nodes;        /* node counts known (launch scripts) */
    megatron_version ver;   /* the release the flags are for */
    /* what the scripts launch: Megatron-LM's pretrain_gpt.py with
     * MEGATRON_ARGS, torchtitan's trainer with the job config, or
     * Megatron-DeepSpeed's pretrain_gpt.py with its arguments and the
     * DeepSpeed config */
    launch_target target;
    char title[64];         /* "Megatron-LM core_v0.19.0", "torchtitan v0.2.2" */
    const char *command;    /* the program and arguments torchrun runs */
    const char *node_prep;  /* run on each node before torchrun, inside srun's
                               bash -c '...' (no single quotes) */
    const char *node_prep_line;   /* the same as a script line */
    precision prec;         /* the format the GPUs train in */
    const stack_spec *st;   /* the cluster's stack (NULL: megatron-core) */
    char description[512];  /* torchtitan's [job] description */
} launch_map;

static long stage_ranks(const strategy *s)
{
    return (long)s->tp * (s->cp > 0 ? s->cp : 1) * s->dp;
}

/* "NAME (GPU)" of a node group, both as shell words. */
static void print_group(FILE *out, const node_group *g)
{
    shell_word(out, g->name);
    fputs(" (", out);
    shell_word(out, g->gpu.name);
    fputc(')', out);
}

/* The stages spanning node groups: "#   stage 0 (7 layers) spans T4 x4 +
 * V100-SXM2-16GB x4" (AMP's mixed data-parallel replicas: the slowest GPU
 * paces them). */
static void print_mixed_stages(FILE *out, const cluster *c, const strategy *s)
{
    for (int i = 0; i < s->n_stages; i++) {
        int g[STAGE_MIX_MAX], gpus[STAGE_MIX_MAX], k;
        if (strategy_stage_mix(s, i) == NULL)
            continue;
        k = strategy_stage_members(s, i, g, gpus, STAGE_MIX_MAX);
        fprintf(out, "#   stage %d (%d layers) spans", i, s->stage[i].n_layers);
        for (int j = 0; j < k; j++) {
            fputs(j ? " +" : "", out);
            fputc(' ', out);
            shell_word(out, c->group[g[j] >= 0 && g[j] < c->n_groups ? g[j] : 0].gpu.name);
            fprintf(out, " x%d", gpus[j]);
        }
        fputs(" (its data-parallel replicas run at the slowest GPU's pace", out);
        if (cost_stage_ep_mixed(s, i))
            fputs("; expert-parallel groups span the GPU types, each all-to-all at its slowest "
                  "member's links", out);
        fputs(")\n", out);
    }
}

/* "# model M on C (GPU)"; with stages on several groups, every group's GPU
 * and the stage map: which stages, layers and global ranks each run holds. */
static void print_summary(FILE *out, const model *m, const cluster *c, const plan *pl,
                          const arg_list *l, const launch_map *lm)
{
    const strategy *s = &pl->s;
    const evaluation *e = &pl->e;
    const node_group *g0 = stage_group(c, s, 0);
    fputs("# model ", out);
    shell_word(out, m->name[0] ? m->name : "unnamed");
    fputs(" on ", out);
    shell_word(out, c != NULL && c->name[0] ? c->name : "cluster");
    fputs(" (", out);
    if (lm == NULL || lm->n <= 1 || c == NULL) {
        shell_word(out, g0 != NULL ? g0->gpu.name : "?");
        fputs(")\n", out);
    } else {
        for (int j = 0; j < lm->n; j++) {
            fputs(j ? " + " : "", out);
            shell_word(out, c->group[lm->comp[j].group].gpu.name);
        }
        fputs(")\n", out);
        fprintf(out, "# stage map (%s, pp outermost: stage i "
                     "holds global ranks [i x %ld, (i+1) x %ld)):\n",
                lm->target == LAUNCH_TORCHTITAN ? "torchtitan's mesh order tp-cp-dp-pp"
                : lm->target == LAUNCH_DEEPSPEED ? "Megatron-DeepSpeed's order tp-dp-pp"
                                                 : "Megatron rank order tp-cp-ep-dp-pp",
                stage_ranks(s), stage_ranks(s));
        for (int j = 0; j < lm->n; j++) {
            const emit_component *k = &lm->comp[j];
            const node_group *g = &c->group[k->group];
            int layers = 0, shared = 0, last = k->first_stage + k->n_stages - 1;
            for (int i = k->first_stage; i <= last; i++) {
                if (strategy_stage_mix(s, i) == NULL)
                    layers += s->stage[i].n_layers;
                else
                    shared++;   /* a stage spanning groups: its line below */
            }
            fprintf(out, "#   group %d: ", j);
            print_group(out, g);
            fprintf(out, ": stages %d-%d, %d layers%s, global ranks %ld-%ld", k->first_stage, last,
                    layers, shared ? " besides the shared stage's" : "", k->first_rank,
                    k->first_rank + k->gpus - 1);
            if (lm->have_nodes)
                fprintf(out, ", %d nodes x %d GPUs, node ranks %d-%d", k->nodes,
                        k->gpus_per_node, k->first_node, k->first_node + k->nodes - 1);
            fputc('\n', out);
        }
        print_mixed_stages(out, c, s);
    }
    fprintf(out, "# plan: tp=%d pp=%d dp=%d cp=%d ep=%d vpp=%d mbs=%d gbs=%d seq=%d sp=%s "
                 "recompute=%s zero=%d (%d GPUs, %ld micro-batches per step)\n",
            s->tp, s->pp, s->dp, s->cp > 0 ? s->cp : 1, s->ep > 0 ? s->ep : 1,
            s->vpp > 0 ? s->vpp : 1, s->mbs, s->gbs, s->seq_len, s->sp ? "on" : "off",
            s->recompute == RECOMPUTE_FULL ? "full"
            : s->recompute == RECOMPUTE_SELECTIVE ? "selective" : "none",
            s->zero, s->tp * (s->cp > 0 ? s->cp : 1) * s->dp * s->pp, plan_microbatches(s));
    if (e->step_time_s > 0)
        fprintf(out, "# predicted: %.3f s per step, %.0f tokens/s (%.0f per GPU), MFU %.1f%%, "
                     "peak memory %.1f GiB per GPU (stage %d)\n",
                e->step_time_s, e->tokens_per_s, e->tokens_per_s_per_gpu, 100.0 * e->mfu,
                e->peak_memory_bytes / (1024.0 * 1024.0 * 1024.0), e->peak_stage);
    for (int i = 0; i < l->n_notes; i++)
        fprintf(out, "# note: %s\n", l->notes[i]);
}

static void print_megatron(FILE *out, const model *m, const cluster *c, const plan *pl,
                           const arg_list *l, const launch_map *lm)
{
    fprintf(out, "# Megatron-LM %s arguments for pretrain_gpt.py, from planner\n",
            megatron_version_tag(lm->ver));
    print_summary(out, m, c, pl, l, lm);
    fputs("# placeholders: set $DATA_PATH, $TOKENIZER_MODEL and $CHECKPOINT_DIR; the last\n"
          "# block (training hyper-parameters) holds typical values to edit\n", out);
    for (int i = 0; i < l->n; i++) {
        fputs(l->a[i].flag, out);
        print_value(out, &l->a[i]);
        fputs(i + 1 < l->n ? " \\\n" : "\n", out);
    }
}

static void print_args_array(FILE *out, const arg_list *l)
{
    arg_section sec = SEC_COUNT;
    fputs("MEGATRON_ARGS=(\n", out);
    for (int i = 0; i < l->n; i++) {
        if (l->a[i].sec != sec) {
            sec = l->a[i].sec;
            fprintf(out, "    # %s\n", section_title[sec]);
        }
        fprintf(out, "    %s", l->a[i].flag);
        print_value(out, &l->a[i]);
        fputc('\n', out);
    }
    fputs(")\n", out);
}

/* A config file's text in a shell variable: a quoted here-document (nothing
 * in it expands; its lines start with a key, "[", "{", "}", "#" or spaces,
 * so none ends it) that each node writes to $FILE_VAR before torchrun
 * (launch_map.node_prep). */
static void print_heredoc_open(FILE *out, const char *what, const char *file_var,
                               const char *text_var)
{
    fprintf(out, "# the %s; each node writes it to %s, a\n"
                 "# node-local path (unset: a private file mktemp makes), before torchrun\n"
                 "# reads it\n"
                 "%s=\"${%s:-}\"\n"
                 "IFS= read -r -d '' %s <<'PLANNER_CONFIG' || true\n", what, file_var, file_var,
            file_var, text_var);
}

/* What the launch runs with: Megatron-LM's argument array; torchtitan's job
 * config, refused while the model is a placeholder; Megatron-DeepSpeed's
 * argument array and the DeepSpeed config. */
static void print_launch_body(FILE *out, const model *m, const plan *pl, const arg_list *l,
                              const launch_map *lm)
{
    if (lm->target != LAUNCH_TORCHTITAN)
        print_args_array(out, l);
    if (lm->target == LAUNCH_DEEPSPEED) {
        print_heredoc_open(out, "DeepSpeed config", "DS_CONFIG", "DS_JSON");
        emit_deepspeed_json(out, pl, lm->prec, lm->st);
        fputs("PLANNER_CONFIG\nexport DS_CONFIG DS_JSON\n", out);
    }
    if (lm->target != LAUNCH_TORCHTITAN)
        return;
    print_heredoc_open(out, "torchtitan " TORCHTITAN_RELEASE " job config", "JOB_CONFIG",
                       "JOB_TOML");
    fputs("# torchtitan " TORCHTITAN_RELEASE " job config, from planner\n", out);
    emit_torchtitan_toml(out, m, pl, lm->prec, lm->description);
    fputs("PLANNER_CONFIG\n"
          "case \"$JOB_TOML\" in\n"
          "    *'\"PLACEHOLDER-model\"'*)\n"
          "        echo \"$0: no torchtitan flavor has the plan's model: register one\" \\\n"
          "            \"and name it in [model] (PLACEHOLDER-model) above\" >&2\n"
          "        exit 1 ;;\n"
          "esac\n"
          "export JOB_CONFIG JOB_TOML\n", out);
}

/* The paths the user sets, each refused while it is the placeholder. */
static void print_placeholders(FILE *out, const launch_map *lm)
{
    static const char *const megatron[][2] = {
        {"MEGATRON_DIR", "/path/to/Megatron-LM"}, {"DATA_PATH", "/path/to/dataset_text_document"},
        {"TOKENIZER_MODEL", "/path/to/tokenizer"}, {"CHECKPOINT_DIR", "/path/to/checkpoints"}};
    static const char *const torchtitan[][2] = {
        {"HF_ASSETS_PATH", "/path/to/hf-assets"}, {"DUMP_FOLDER", "/path/to/outputs"}};
    static const char *const deepspeed[][2] = {
        {"MEGATRON_DEEPSPEED_DIR", "/path/to/Megatron-DeepSpeed"},
        {"DATA_PATH", "/path/to/dataset_text_document"},
        {"TOKENIZER_MODEL", "/path/to/tokenizer"}, {"CHECKPOINT_DIR", "/path/to/checkpoints"}};
    const char *const (*v)[2] = lm->target == LAUNCH_TORCHTITAN  ? torchtitan
                                : lm->target == LAUNCH_DEEPSPEED ? deepspeed
                                                                 : megatron;
    int n = lm->target == LAUNCH_TORCHTITAN ? 2 : 4;
    fputs("# ---- PLACEHOLDERS: set these here or export them before launching ----\n", out);
    for (int i = 0; i < n; i++)
        fprintf(out, "%s=\"${%s:-%s}\"\n", v[i][0], v[i][0], v[i][1]);
    fputs("for v in", out);
    for (int i = 0; i < n; i++)
        fprintf(out, " %s", v[i][0]);
    fputs("; do\n"
          "    case \"${!v}\" in\n"
          "        /path/to/*) echo \"$0: set $v (still the placeholder ${!v})\" >&2; exit 1 ;;\n"
          "    esac\n"
          "done\n\n", out);
}

/* CUDA_DEVICE_MAX_CONNECTIONS as the plan needs it (validate_args in
 * megatron/training/arguments.py, core_v0.15.0 to core_v0.19.0): Megatron
 * FSDP asserts it is not 1 (unset: CUDA's default, 8); tp > 1 or cp > 1
 * before Blackwell asserts it is 1 (unless FSDP, where it only warns); TP
 * communication overlap orders its collectives and GEMMs on one connection
 * (1).  Otherwise the site's value stands. */
static void print_max_connections(FILE *out, const cluster *c, const strategy *s)
{
    if (s->zero >= 2)
        fputs("# Megatron FSDP (ZeRO-2/3) asserts CUDA_DEVICE_MAX_CONNECTIONS is unset or > 1\n"
              "unset CUDA_DEVICE_MAX_CONNECTIONS\n", out);
    else if (needs_max_connections(c, s))
        fputs("# tp > 1 or cp > 1 before Blackwell: Megatron requires one CUDA connection\n"
              "export CUDA_DEVICE_MAX_CONNECTIONS=1\n", out);
    else if (s->tp_comm_overlap)
        fputs("# TP communication overlap: one CUDA connection keeps its kernel order\n"
              "export CUDA_DEVICE_MAX_CONNECTIONS=1\n", out);
}

static void print_environment(FILE *out, const cluster *c, const plan *pl,
                              const launch_map *lm)
{
    if (lm->target == LAUNCH_MEGATRON)   /* Megatron-LM's validate_args rules */
        print_max_connections(out, c, &pl->s);
    fputs("export NCCL_DEBUG=\"${NCCL_DEBUG:-WARN}\"\n"
          "export NCCL_IB_TIMEOUT=\"${NCCL_IB_TIMEOUT:-22}\"\n"
          "export NCCL_IB_QPS_PER_CONNECTION=\"${NCCL_IB_QPS_PER_CONNECTION:-4}\"\n"
          "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n"
          "export TORCH_NCCL_AVOID_RECORD_STREAMS=1\n"
          "# site specific, uncomment and set: the bootstrap interface and the IB HCAs\n"
          "# export NCCL_SOCKET_IFNAME=eth0\n"
          "# export NCCL_IB_HCA=mlx5\n\n", out);
}

static void print_slurm(FILE *out, const model *m, const cluster *c, const plan *pl,
                        const arg_list *l, const launch_map *lm)
{
    int nodes = lm->comp[0].nodes, ppn = lm->comp[0].gpus_per_node;
    fputs("#!/bin/bash\n", out);
    fprintf(out, "#SBATCH --job-name=planner-train\n"
                 "#SBATCH --nodes=%d\n"
                 "#SBATCH --ntasks-per-node=1\n"
                 "#SBATCH --gpus-per-node=%d\n"
                 "#SBATCH --exclusive\n"
                 "#SBATCH --output=%%x-%%j.out\n", nodes, ppn);
    fprintf(out, "# sbatch script for %s, from planner: one srun task per\n"
                 "# node, each running torchrun with one process per GPU.\n", lm->title);
    print_summary(out, m, c, pl, l, lm);
    fputs("set -euo pipefail\n\n", out);
    /* torchrun's --nnodes is the plan's: an allocation of another size would
     * leave it waiting for nodes that never come */
    fprintf(out, "if [ \"${SLURM_NNODES:?not inside a Slurm allocation: submit this script "
                 "with sbatch}\" -ne %d ]; then\n"
                 "    echo \"$0: the allocation has $SLURM_NNODES nodes, the plan needs %d\" \\\n"
                 "        \"(#SBATCH --nodes=%d); plan again for another size\" >&2\n"
                 "    exit 1\n"
                 "fi\n\n", nodes, nodes, nodes);
    print_placeholders(out, lm);
    fputs("MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1)\"\n"
          "MASTER_PORT=\"${MASTER_PORT:-6000}\"\n"
          "export MASTER_ADDR MASTER_PORT\n\n", out);
    print_environment(out, c, pl, lm);
    print_launch_body(out, m, pl, l, lm);
    fprintf(out, "\n# $SLURM_NODEID must expand on each node, inside srun, not here.\n"
                 "# shellcheck disable=SC2016\n"
                 "srun --ntasks-per-node=1 --kill-on-bad-exit=1 bash -c '%sexec torchrun \\\n"
                 "    --nproc_per_node=%d --nnodes=%d --node_rank=\"$SLURM_NODEID\" \\\n"
                 "    --master_addr=\"$MASTER_ADDR\" --master_port=\"$MASTER_PORT\" \"$@\"' \\\n"
                 "    torchrun %s\n",
            lm->node_prep, ppn, nodes, lm->command);
}

static void print_torchrun(FILE *out, const model *m, const cluster *c, const plan *pl,
                           const arg_list *l, const launch_map *lm)
{
    int nodes = lm->comp[0].nodes, ppn = lm->comp[0].gpus_per_node;
    fputs("#!/bin/bash\n", out);
    if (nodes > 1)
        fprintf(out, "# torchrun launch for %s, from planner.  Run this\n"
                     "# script on each of the %d nodes with NODE_RANK=0..%d and MASTER_ADDR "
                     "set to\n"
                     "# the address of the node with NODE_RANK=0.\n", lm->title,
                nodes, nodes - 1);
    else
        fprintf(out, "# torchrun launch for %s, from planner (one node).\n", lm->title);
    print_summary(out, m, c, pl, l, lm);
    fputs("set -euo pipefail\n\n", out);
    if (nodes > 1)
        fprintf(out, "NODE_RANK=\"${NODE_RANK:?set NODE_RANK to the index of this node, 0..%d}\"\n"
                     "MASTER_ADDR=\"${MASTER_ADDR:?set MASTER_ADDR to the address of node 0}\"\n",
                nodes - 1);
    else
        fputs("NODE_RANK=\"${NODE_RANK:-0}\"\n"
              "MASTER_ADDR=\"${MASTER_ADDR:-localhost}\"\n", out);
    fputs("MASTER_PORT=\"${MASTER_PORT:-6000}\"\n\n", out);
    print_placeholders(out, lm);
    print_environment(out, c, pl, lm);
    print_launch_body(out, m, pl, l, lm);
    fprintf(out, "\n%sexec torchrun --nproc_per_node=%d --nnodes=%d --node_rank=\"$NODE_RANK\" \\\n"
                 "    --master_addr=\"$MASTER_ADDR\" --master_port=\"$MASTER_PORT\" \\\n"
                 "    %s\n", lm->node_prep_line, ppn, nodes, lm->command);
}

/* The sbatch script of a plan whose stages sit on several node groups: one
 * hetjob component per run of stages, in stage order, each with a placeholder
 * partition and constraint for its GPU; one heterogeneous srun step whose
 * tasks find their node rank as their host's index in the concatenated node
 * lists of the components (component 0 first), so global ranks, and with them
 * pipeline stages, follow the component order. */
static void print_slurm_het(FILE *out, const model *m, const cluster *c, const plan *pl,
                            const arg_list *l, const launch_map *lm)
{
    fputs("#!/bin/bash\n", out);
    for (int j = 0; j < lm->n; j++) {
        const emit_component *k = &lm->comp[j];
        const node_group *g = &c->group[k->group];
        if (j > 0)
            fputs("#SBATCH hetjob\n", out);
        fprintf(out, "# ---- het group %d: ", j);
        print_group(out, g);
        fprintf(out, ", pipeline stages %d-%d, node ranks %d-%d\n",
                k->first_stage, k->first_stage + k->n_stages - 1,
                k->first_node, k->first_node + k->nodes - 1);
        if (j == 0)
            fputs("#SBATCH --job-name=planner-train\n"
                  "#SBATCH --output=%x-%j.out\n", out);
        fprintf(out, "#SBATCH --nodes=%d\n"
                     "#SBATCH --ntasks-per-node=1\n"
                     "#SBATCH --gpus-per-node=%d\n"
                     "#SBATCH --exclusive\n"
                     "# PLACEHOLDER: the partition and node feature that give ",
                k->nodes, k->gpus_per_node);
        shell_word(out, g->gpu.name);
        fputs(" nodes here\n#SBATCH --partition=PLACEHOLDER-partition-", out);
        shell_word(out, g->gpu.name);
        fputs("\n#SBATCH --constraint=PLACEHOLDER-feature-", out);
        shell_word(out, g->gpu.name);
        fputc('\n', out);
    }
    fprintf(out, "# Heterogeneous sbatch script for %s, from planner: one\n"
                 "# hetjob component per node group, in pipeline stage order; one srun task per\n"
                 "# node, each running torchrun with one process per GPU.  Replace the\n"
                 "# PLACEHOLDER partitions and constraints (sbatch rejects them as they are).\n",
            lm->title);
    print_summary(out, m, c, pl, l, lm);
    fputs("set -euo pipefail\n\n", out);
    print_placeholders(out, lm);
    fputs("# Nodes in launch order: het group 0's, then group 1's ...; a node's rank is\n"
          "# its index here, so pipeline stage order follows the group order above.\n"
          "HET_NODES=()\n", out);
    fprintf(out, "for k in $(seq 0 %d); do\n"
                 "    var=\"SLURM_JOB_NODELIST_HET_GROUP_$k\"\n"
                 "    mapfile -t -O \"${#HET_NODES[@]}\" HET_NODES < <(scontrol show hostnames "
                 "\"${!var:?not a heterogeneous job: $var unset}\")\n"
                 "done\n"
                 "if [ \"${#HET_NODES[@]}\" -ne %d ]; then\n"
                 "    echo \"$0: ${#HET_NODES[@]} nodes allocated, the plan needs %d\" >&2\n"
                 "    exit 1\n"
                 "fi\n", lm->n - 1, lm->nodes, lm->nodes);
    fputs("HET_NODE_LIST=\"${HET_NODES[*]}\"\n"
          "MASTER_ADDR=\"${HET_NODES[0]}\"   # the first node of het group 0\n"
          "MASTER_PORT=\"${MASTER_PORT:-6000}\"\n", out);
    fprintf(out, "NNODES=%d\n"
                 "export HET_NODE_LIST MASTER_ADDR MASTER_PORT NNODES\n\n", lm->nodes);
    print_environment(out, c, pl, lm);
    print_launch_body(out, m, pl, l, lm);
    fprintf(out, "\n# Runs on every node inside srun: this node's rank (its index in "
          "HET_NODE_LIST),\n"
          "# checked against its het group's range, then torchrun.  Arguments: first\n"
          "# node rank, last node rank, processes per node, then the training command.\n"
          "# shellcheck disable=SC2016\n"
          "LAUNCH='lo=$1 hi=$2 nproc=$3; shift 3\n"
          "rank=0\n"
          "for h in $HET_NODE_LIST; do\n"
          "    [ \"$h\" = \"$SLURMD_NODENAME\" ] && break\n"
          "    rank=$((rank + 1))\n"
          "done\n"
          "if [ \"$rank\" -lt \"$lo\" ] || [ \"$rank\" -gt \"$hi\" ]; then\n"
          "    echo \"$SLURMD_NODENAME: node rank $rank is outside $lo-$hi\" >&2\n"
          "    exit 1\n"
          "fi\n"
          "%sexec torchrun --nproc_per_node=\"$nproc\" --nnodes=\"$NNODES\" "
          "--node_rank=\"$rank\" \\\n"
          "    --master_addr=\"$MASTER_ADDR\" --master_port=\"$MASTER_PORT\" \"$@\"'\n\n",
            lm->node_prep);
    fputs("srun --kill-on-bad-exit=1", out);
    for (int j = 0; j < lm->n; j++) {
        const emit_component *k = &lm->comp[j];
        fprintf(out, " \\\n    %s--het-group=%d --ntasks-per-node=1 bash -c \"$LAUNCH\" "
                     "launch %d %d %d \\\n"
                     "        %s",
                j ? ": " : "", j, k->first_node, k->first_node + k->nodes - 1, k->gpus_per_node,
                lm->command);
    }
    fputc('\n', out);
}

/* The torchrun script of a plan on several node groups: the node rank picks
 * the group (and with it the processes per node); the header says which
 * nodes of which group take which NODE_RANK values. */
static void print_torchrun_het(FILE *out, const model *m, const cluster *c, const plan *pl,
                               const arg_list *l, const launch_map *lm)
{
    fprintf(out, "#!/bin/bash\n"
                 "# torchrun launch for %s, from planner.  The plan's\n"
                 "# pipeline stages sit on %d node groups: run this script on every node with\n"
                 "# NODE_RANK as listed (stage order follows node rank order) and MASTER_ADDR set\n"
                 "# to the address of the node with NODE_RANK=0:\n", lm->title,
            lm->n);
    for (int j = 0; j < lm->n; j++) {
        const emit_component *k = &lm->comp[j];
        const node_group *g = &c->group[k->group];
        fprintf(out, "#   %d nodes of ", k->nodes);
        print_group(out, g);
        fprintf(out, ": NODE_RANK=%d..%d, %d processes each (stages %d-%d)\n", k->first_node,
                k->first_node + k->nodes - 1, k->gpus_per_node, k->first_stage,
                k->first_stage + k->n_stages - 1);
    }
    print_summary(out, m, c, pl, l, lm);
    fputs("set -euo pipefail\n\n", out);
    fprintf(out, "NODE_RANK=\"${NODE_RANK:?set NODE_RANK to the index of this node, 0..%d}\"\n"
                 "MASTER_ADDR=\"${MASTER_ADDR:?set MASTER_ADDR to the address of node 0}\"\n"
                 "MASTER_PORT=\"${MASTER_PORT:-6000}\"\n", lm->nodes - 1);
    for (int j = 0; j < lm->n; j++) {
        const emit_component *k = &lm->comp[j];
        const node_group *g = &c->group[k->group];
        fprintf(out, "%s [ \"$NODE_RANK\" -ge %d ] && [ \"$NODE_RANK\" -le %d ]; then\n"
                     "    NPROC=%d   # ", j ? "elif" : "if", k->first_node,
                k->first_node + k->nodes - 1, k->gpus_per_node);
        print_group(out, g);
        fprintf(out, ", stages %d-%d\n", k->first_stage, k->first_stage + k->n_stages - 1);
    }
    fprintf(out, "else\n"
                 "    echo \"$0: NODE_RANK=$NODE_RANK is not in 0..%d\" >&2\n"
                 "    exit 1\n"
                 "fi\n\n", lm->nodes - 1);
    print_placeholders(out, lm);
    print_environment(out, c, pl, lm);
    print_launch_body(out, m, pl, l, lm);
    fprintf(out, "\n%sexec torchrun --nproc_per_node=\"$NPROC\" --nnodes=%d "
                 "--node_rank=\"$NODE_RANK\" \\\n"
                 "    --master_addr=\"$MASTER_ADDR\" --master_port=\"$MASTER_PORT\" \\\n"
                 "    %s\n", lm->node_prep_line, lm->nodes, lm->command);
}

/* ---- releases ------------------------------------------------------------ */

/* The training format must exist on every stage's GPU (both launchers). */
static planner_status format_check(const model *m, const cluster *c, const plan *pl,
                                   planner_error *err)
{
    const strategy *s = &pl->s;
    precision p = emitted_precision(m, c, s);
    const node_group *lacking = NULL;
    int i = p == PREC_FP32 ? -1 : stage_without(c, s, precision_peak(p), &lacking);
    if (i >= 0)
        return emit_fail(err, "pipeline stage %d runs on %s, which has no %s", i,
                         lacking->gpu.name, precision_name(p));
    return PLANNER_OK;
}

/* The rules that differ between releases or depend on the GPUs, checked after
 * emit_check: format_check, and core_v0.15.0's validate_args refuses expert
 * parallelism in fp16 ("Expert parallelism is not supported with fp16
 * training"; gone from core_v0.16.0) and has no MoE router graphs
 * (knob_te_moe_graphs_release); the shared-expert overlap runs with the
 * flex dispatcher from core_v0.18.0 (knob_shared_overlap_flex_release); the
 * flex dispatcher needs a backend on every GPU of the plan
 * (knob_flex_backend). */
static planner_status release_check(const model *m, const cluster *c, const plan *pl,
                                    megatron_version ver, planner_error *err)
{
    const strategy *s = &pl->s;
    precision p = emitted_precision(m, c, s);
    if (format_check(m, c, pl, err) != PLANNER_OK)
        return PLANNER_E_INPUT;
    if (ver == MEGATRON_0_15 && p == PREC_FP16 && s->ep > 1)
        return emit_fail(err, "Megatron-LM core_v0.15.0 does not train expert parallelism "
                         "(ep=%d) in fp16; core_v0.16.0 and later do (--megatron-version 0.16)",
                         s->ep);
    if (s->te_moe_graphs && !knob_te_moe_graphs_release(ver))
        return emit_fail(err, "Megatron-LM %s has no MoE router and preprocessing CUDA graphs "
                         "(--cuda-graph-scope moe_router moe_preprocess, from core_v0.16.0; "
                         "--megatron-version 0.16)", megatron_version_tag(ver));
    if (s->flex_dispatcher && s->shared_expert_overlap &&
        !knob_shared_overlap_flex_release(ver))
        return emit_fail(err, "Megatron-LM %s runs --moe-shared-expert-overlap with the alltoall "
                         "token dispatcher only, not flex (from core_v0.18.0; --megatron-version "
                         "0.18)", megatron_version_tag(ver));
    if (s->flex_dispatcher) {   /* a backend on every GPU of the plan */
        const node_group *gs[PLAN_GROUPS_MAX];
        int n = plan_groups(c, s, gs, PLAN_GROUPS_MAX);
        for (int i = 0; i < n; i++)
            if (knob_flex_backend(ver, gs[i]) == NULL)
                return emit_fail(err, "Megatron-LM %s cannot run the flex token dispatcher on "
                                 "%s: %s", megatron_version_tag(ver), gs[i]->gpu.name,
                                 knob_flex_backend_missing(ver, gs[i]));
    }
    return PLANNER_OK;
}

bool emit_kind_supported(emit_kind kind, const stack_spec *st)
{
    if (kind == EMIT_NONE)
        return false;
    if (st != NULL && stack_torchtitan_launch(st))
        return kind == EMIT_TORCHTITAN || kind == EMIT_SLURM || kind == EMIT_TORCHRUN;
    if (st != NULL && st->id == STACK_DEEPSPEED)
        return kind == EMIT_DEEPSPEED || kind == EMIT_SLURM || kind == EMIT_TORCHRUN;
    return (st == NULL || stack_megatron_launch(st)) &&
           (kind == EMIT_MEGATRON || kind == EMIT_SLURM || kind == EMIT_TORCHRUN);
}

const char *emit_kind_name(emit_kind kind)
{
    static const char *const names[] = {
        [EMIT_NONE] = "none", [EMIT_MEGATRON] = "megatron", [EMIT_SLURM] = "slurm",
        [EMIT_TORCHRUN] = "torchrun", [EMIT_TORCHTITAN] = "torchtitan",
        [EMIT_DEEPSPEED] = "deepspeed"};
    return (int)kind >= 0 && kind <= EMIT_DEEPSPEED ? names[kind] : "?";
}

/* The launch target of stack st (NULL: megatron-core). */
static launch_target stack_target(const stack_spec *st)
{
    if (st != NULL && stack_torchtitan_launch(st))
        return LAUNCH_TORCHTITAN;
    return st != NULL && st->id == STACK_DEEPSPEED ? LAUNCH_DEEPSPEED : LAUNCH_MEGATRON;
}

/* A node's config file when the user set none: mktemp's, created mode 0600
 * with O_EXCL under $TMPDIR (a fixed /tmp name could be a symlink another
 * user planted); double quotes only, as it runs inside srun's bash -c '...'. */
#define NODE_CONFIG_FILE(var, name, suffix)                                              \
    ": \"${" var ":=$(mktemp --suffix=" suffix " \"${TMPDIR:-/tmp}/planner-" name         \
    ".XXXXXX\")}\" && "

/* The launch target's facts in lm (launch_map): what the scripts run. */
static void set_target(launch_map *lm, const model *m, const cluster *c, const plan *pl,
                       megatron_version ver)
{
    lm->ver = ver;
    lm->st = c != NULL ? stack_get(c->stack) : NULL;
    lm->target = stack_target(lm->st);
    lm->prec = emitted_precision(m, c, &pl->s);
    lm->node_prep = lm->node_prep_line = "";
    switch (lm->target) {
    case LAUNCH_MEGATRON:
        snprintf(lm->title, sizeof lm->title, "Megatron-LM %s", megatron_version_tag(ver));
        lm->command = "\"$MEGATRON_DIR/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\"";
        return;
    case LAUNCH_DEEPSPEED:
        snprintf(lm->title, sizeof lm->title, "Megatron-DeepSpeed %s",
                 MEGATRON_DEEPSPEED_COMMIT);
        lm->command = "\"$MEGATRON_DEEPSPEED_DIR/pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\"";
        lm->node_prep = NODE_CONFIG_FILE("DS_CONFIG", "deepspeed", ".json")
                        "printf \"%s\" \"$DS_JSON\" > \"$DS_CONFIG\" && ";
        lm->node_prep_line = NODE_CONFIG_FILE("DS_CONFIG", "deepspeed", ".json")
                             "printf '%s' \"$DS_JSON\" > \"$DS_CONFIG\"\n";
        return;
    case LAUNCH_TORCHTITAN:
        break;
    }
    snprintf(lm->title, sizeof lm->title, "torchtitan %s", TORCHTITAN_RELEASE);
    lm->command = "-m torchtitan.train --job.config_file \"$JOB_CONFIG\" \\\n"
                  "        --job.dump_folder \"$DUMP_FOLDER\" "
                  "--model.hf_assets_path \"$HF_ASSETS_PATH\"";
    lm->node_prep = NODE_CONFIG_FILE("JOB_CONFIG", "torchtitan", ".toml")
                    "printf \"%s\" \"$JOB_TOML\" > \"$JOB_CONFIG\" && ";
    lm->node_prep_line = NODE_CONFIG_FILE("JOB_CONFIG", "torchtitan", ".toml")
                         "printf '%s' \"$JOB_TOML\" > \"$JOB_CONFIG\"\n";
    snprintf(lm->description, sizeof lm->description, "planner: %s on %s",
             m->name[0] ? m->name : "unnamed", c != NULL && c->name[0] ? c->name : "cluster");
}

/* --emit torchtitan / deepspeed: the config alone, the plan in comments
 * (JSON has none: the DeepSpeed config is the object alone). */
static void print_config(FILE *out, const model *m, const cluster *c, const plan *pl,
                         const arg_list *l, const launch_map *lm)
{
    if (lm->target == LAUNCH_DEEPSPEED) {
        emit_deepspeed_json(out, pl, lm->prec, lm->st);
        return;
    }
    fprintf(out, "# torchtitan %s job config, from planner: run it with\n"
                 "#   torchrun ... -m torchtitan.train --job.config_file FILE\n"
                 "# (--emit slurm or torchrun write the scripts that do)\n", TORCHTITAN_RELEASE);
    print_summary(out, m, c, pl, l, lm);
    emit_torchtitan_toml(out, m, pl, lm->prec, lm->description);
}

/* The checks of the plan for its launcher, before anything is printed. */
static planner_status launch_checks(const model *m, const cluster *c, const plan *pl,
                                    megatron_version ver, planner_error *err)
{
    planner_status rc;
    launch_target t = stack_target(c != NULL ? stack_get(c->stack) : NULL);
    if ((rc = emit_check(m, c, pl, err)) != PLANNER_OK)
        return rc;
    if (t != LAUNCH_MEGATRON && (rc = format_check(m, c, pl, err)) != PLANNER_OK)
        return rc;
    if (t == LAUNCH_TORCHTITAN)
        return emit_torchtitan_check(m, pl, emitted_precision(m, c, &pl->s), err);
    if (t == LAUNCH_DEEPSPEED) {
        if ((rc = ds_model_check(m, &pl->s, err)) != PLANNER_OK)
            return rc;
        return emit_deepspeed_check(m, pl, emitted_precision(m, c, &pl->s), err);
    }
    if ((rc = model_check(m, pl->s.seq_len, err)) != PLANNER_OK)
        return rc;
    return release_check(m, c, pl, ver, err);
}

planner_status emit_write(FILE *out, emit_kind kind, megatron_version ver, const model *m,
                          const cluster *c, const plan *pl, planner_error *err)
{
    arg_list *l = NULL;
    launch_map *lm = NULL;
    planner_status rc;

    if (out == NULL || m == NULL || pl == NULL)
        return emit_fail(err, "nothing to emit");
    if (kind == EMIT_NONE)
        return emit_fail(err, "no launch material requested");
    if ((int)ver < 0 || ver >= MEGATRON_VERSION_COUNT)
        return emit_fail(err, "unknown Megatron-LM release %d", (int)ver);
    if (!emit_kind_supported(kind, c != NULL ? stack_get(c->stack) : NULL))
        return emit_fail(err, "stack '%s' has no --emit %s launch material",
                         c != NULL ? stack_get(c->stack)->name : "megatron-core",
                         emit_kind_name(kind));
    if ((rc = launch_checks(m, c, pl, ver, err)) != PLANNER_OK)
        return rc;
    lm = pl_calloc(1, sizeof *lm);
    l = pl_calloc(1, sizeof *l);
    if (lm == NULL || l == NULL) {
        rc = error_oom(err);
        goto cleanup;
    }
    set_target(lm, m, c, pl, ver);
    l->flex_backend = knob_flex_backend(ver, stage_group(c, &pl->s, 0));
    if (kind == EMIT_MEGATRON || kind == EMIT_TORCHTITAN || kind == EMIT_DEEPSPEED) {
        lm->n = stage_runs(&pl->s, lm->comp, STRATEGY_MAX_STAGES);
    } else {
        if ((rc = emit_components(c, pl, lm->comp, STRATEGY_MAX_STAGES, &lm->n, err)) !=
            PLANNER_OK)
            goto cleanup;
        lm->have_nodes = true;
        for (int j = 0; j < lm->n; j++)
            lm->nodes += lm->comp[j].nodes;
    }
    if ((lm->target == LAUNCH_MEGATRON && build_args(m, c, pl, l) != 0) ||
        (lm->target == LAUNCH_DEEPSPEED && build_ds_args(m, c, pl, l) != 0)) {
        rc = error_set(err, PLANNER_E_INTERNAL, NULL, 0, 0, NULL,
                       "out of memory or too many arguments");
        goto cleanup;
    }
    switch (kind) {
    case EMIT_MEGATRON: print_megatron(out, m, c, pl, l, lm); break;
    case EMIT_TORCHTITAN:
    case EMIT_DEEPSPEED: print_config(out, m, c, pl, l, lm); break;
    case EMIT_SLURM:
        if (lm->n > 1 && c != NULL)
            print_slurm_het(out, m, c, pl, l, lm);
        else
            print_slurm(out, m, c, pl, l, lm);
        break;
    case EMIT_TORCHRUN:
        if (lm->n > 1 && c != NULL)
            print_torchrun_het(out, m, c, pl, l, lm);
        else
            print_torchrun(out, m, c, pl, l, lm);
        break;
    case EMIT_NONE: break;
    }
cleanup:
    if (l != NULL)
        pl_free(l->layout);
    pl_free(l);
    pl_free(lm);
    return rc;
}
