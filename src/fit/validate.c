/* validate.c: the validation corpus and the prediction of each run (the
 * library half of `planner validate`; the command is tool/cmd_validate.c,
 * its table and JSON out/validate_report.c).
 *
 * Reads measured runs (schema: ../shared/validation/README.md), builds for
 * each a model and a one-group cluster of its GPUs (catalog row, the run's
 * GPUs per node, the catalog's default NIC, NCCL's latency constants), fixes
 * every published knob (tp, pp, dp, cp, ep, vpp, mbs, sp, recompute, the GPU
 * count and global batch) and lets search_run() choose the unpublished ones
 * (mbs, vpp, whatever "unpublished" lists, and the knobs the schema has no
 * field for: ZeRO stage, overlap flags), as the engineers who ran it tuned
 * them.  validation_predict_all() gives predicted vs measured tokens/s per
 * GPU and the error per run, and MAPE and max error per subset (dense
 * 16-bit, FP8 family, MoE).
 *
 * Model conventions the schema leaves open: head_dim = hidden / heads;
 * GeLU models are GPT-style (LayerNorm, learned positions, tied embeddings),
 * SwiGLU models Llama-style (RMSNorm, RoPE, untied).  MoE rows ("moe":
 * moe_experts, moe_topk, moe_ffn_hidden, optional shared_experts,
 * shared_expert_ffn, dense_layers) -> model.moe, layers from dense_layers on
 * MoE, the leading ones dense MLPs of ffn_hidden; attention is the row's
 * (standard GQA: the schema carries no MLA fields), the activation the
 * row's; the published ep is fixed like any knob.  An optional
 * "parallel.pipeline_layout" (Megatron's --pipeline-model-parallel-layout
 * string, model/layout.c) pins the layer split; it needs the published pp
 * and fixes vpp to its stage count / pp.
 * Limits: the file is at most INPUT_MAX_BYTES, at most VALIDATION_MAX_RUNS
 * runs, every count within the model/cluster limits.  Parsed by jsonin.c;
 * every error names the key path (runs[3].model.heads) and points at that
 * key's line and column (at the enclosing object when the key is missing).
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "base/workers.h"
#include "base/fileio.h"
#include "base/jsonin.h"
#include "base/text.h"
#include "fit/run_stacks.h"
#include "fit/validate.h"
#include "inputs/model_library.h"
#include "model/layout.h"

#define INTRA_LATENCY_S 3.4e-6    /* NCCL: per NVLink hop (cost-model.md) */
#define INTER_LATENCY_S 14e-6     /* NCCL: network */

const char *validation_subset_name(validation_subset s)
{
    switch (s) {
    case SUBSET_DENSE16: return "dense 16-bit";
    case SUBSET_FP8: return "FP8 family";
    case SUBSET_MOE: return "MoE";
    case SUBSET_COUNT: break;
    }
    return "unknown";
}

void validation_free(validation_set *v)
{
    int i;
    if (v == NULL)
        return;
    for (i = 0; i < v->n; i++) {
        model_free(v->run[i].m);
        cluster_free(v->run[i].c);
        pl_free(v->run[i].layout);
    }
    pl_free(v->run);
    pl_free(v);
}

/* Where load_run() is: the document (for positions and errors) and the key
 * path of the object being read. */
typedef struct jctx {
    const jsonin_doc *doc;
    jsonin_path path;
    const char *models_dir;   /* the model library's folder, or NULL */
} jctx;

/* "PATH.key: msg what" at key's position (PATH alone when key is ""). */
static int jfail(jctx *j, const char *key, const char *msg, const char *what)
{
    jsonin_path p = key[0] ? jsonin_key(&j->path, key) : j->path;
    jsonin_fail(j->doc, &p, "%s%s", msg, what);
    return -1;
}

/* An integer member in [lo, hi]; null or missing gives *out = -1 when
 * `optional`.  Returns 0 or -1 with the error set. */
static int jint(jctx *j, json_t *obj, const char *key, long lo, long hi, int optional,
                int *out)
{
    json_t *v = json_object_get(obj, key);
    json_int_t x;
    *out = -1;
    if (v == NULL || json_is_null(v)) {
        if (optional)
            return 0;
        return jfail(j, key, "missing ", "(a whole number is required)");
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (d != floor(d) || !isfinite(d))
            return jfail(j, key, "expected a whole number", "");
        /* out of range: the check below reports it (a cast of 1e25 is UB) */
        x = d < (double)lo ? (json_int_t)lo - 1 : d > (double)hi ? (json_int_t)hi + 1
                                                                  : (json_int_t)d;
    } else if (json_is_integer(v)) {
        x = json_integer_value(v);
    } else {
        return jfail(j, key, "expected a whole number", "");
    }
    if (x < lo || x > hi) {
        char range[96];
        snprintf(range, sizeof range, " in %ld..%ld", lo, hi);
        return jfail(j, key, "expected a whole number", range);
    }
    *out = (int)x;
    return 0;
}

static int jstr(jctx *j, json_t *obj, const char *key, int optional, const char **out)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (v == NULL || json_is_null(v)) {
        if (optional)
            return 0;
        return jfail(j, key, "missing ", "(a string is required)");
    }
    if (!json_is_string(v))
        return jfail(j, key, "expected a string", "");
    *out = json_string_value(v);
    return 0;
}

static int in_list(json_t *unpublished, const char *knob)
{
    size_t i;
    json_t *v;
    if (!json_is_array(unpublished))
        return 0;
    json_array_foreach(unpublished, i, v)
        if (json_is_string(v) && strcmp(json_string_value(v), knob) == 0)
            return 1;
    return 0;
}

/* A measured throughput's plausible range, tokens/s per GPU: the corpus
 * spans 11 (a 530B model on A100s) to 44,544 (a 1B model on one V100); a
 * value outside is a unit slip or a typo, and would print as an error of
 * +inf% or a fit of inf seconds. */
#define MEASURED_TOKENS_MIN 0.01
#define MEASURED_TOKENS_MAX 1e7

/* A measured peak memory per GPU, GiB: above this is a unit slip. */
#define MEASURED_MEMORY_GIB_MAX 100000.0

/* The published model dimensions of a run (its "model" object). */
typedef struct run_dims {
    int layers, hidden, heads, kv, ffn, vocab, seq;
    int tied;               /* "tied_embeddings": 1, 0; -1 not given */
    const char *act;
} run_dims;

/* "model": the dimensions into *d (kv_heads defaults to heads, vocab to
 * Megatron's padded GPT-2 BPE; "tied_embeddings", optional, says whether
 * the output layer shares the embedding's weights, otherwise the schema's
 * convention by activation).  Returns 0 or -1 with the error set. */
static int load_dims(jctx *j, json_t *jm, run_dims *d)
{
    json_t *tied = json_object_get(jm, "tied_embeddings");
    d->tied = -1;
    if (tied != NULL && !json_is_null(tied)) {
        if (!json_is_boolean(tied))
            return jfail(j, "tied_embeddings", "expected true, false or null", "");
        d->tied = json_is_true(tied) ? 1 : 0;
    }
    if (jint(j, jm, "layers", 1, MODEL_MAX_LAYERS, 0, &d->layers) != 0 ||
        jint(j, jm, "hidden", 1, 1 << 20, 0, &d->hidden) != 0 ||
        jint(j, jm, "heads", 1, 1 << 16, 0, &d->heads) != 0 ||
        jint(j, jm, "kv_heads", 1, 1 << 16, 1, &d->kv) != 0 ||
        jint(j, jm, "ffn_hidden", 1, 1 << 24, 0, &d->ffn) != 0 ||
        jint(j, jm, "vocab", 1, 1 << 24, 1, &d->vocab) != 0 ||
        jint(j, jm, "seq_len", 1, 1 << 24, 0, &d->seq) != 0 ||
        jstr(j, jm, "activation", 0, &d->act) != 0)
        return -1;
    if (d->kv < 0)
        d->kv = d->heads;
    if (d->vocab < 0)
        d->vocab = 51200;     /* not published: GPT-2 BPE padded, Megatron's default */
    if (d->hidden % d->heads != 0)
        return jfail(j, "heads", "hidden is not a multiple of heads", "");
    if (d->heads % d->kv != 0)
        return jfail(j, "kv_heads", "heads is not a multiple of kv_heads", "");
    if (strcmp(d->act, "gelu") != 0 && strcmp(d->act, "swiglu") != 0)
        return jfail(j, "activation", "expected gelu or swiglu, got ", d->act);
    return 0;
}

/* "parallel.grad_reduce_bf16" (optional): true when the run reduced bf16
 * gradients (--grad-reduce-in-bf16, grad_reduce_in_fp32 off), false for
 * fp32 ones.  0 or -1 with the error set. */
static int load_grad_reduce(jctx *j, json_t *jp, validation_run *r)
{
    json_t *v = json_object_get(jp, "grad_reduce_bf16");
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_boolean(v))
        return jfail(j, "grad_reduce_bf16", "expected true, false or null", "");
    r->fix.grad_reduce_bf16 = json_is_true(v) ? 1 : 0;
    return 0;
}

/* "parallel": every published knob fixed in r->fix (those "unpublished"
 * lists left free), the GPU count, and r->gbs.  Returns 0 or -1. */
static int load_parallel(jctx *j, json_t *jp, json_t *unpub, validation_run *r)
{
    int tp, pp, dp, cp, ep, vpp, mbs, gbs, zero;
    if (jint(j, jp, "tp", 1, 1 << 20, 1, &tp) != 0 || jint(j, jp, "pp", 1, 1 << 20, 1, &pp) != 0 ||
        jint(j, jp, "zero", 0, 3, 1, &zero) != 0 ||
        jint(j, jp, "dp", 1, 1 << 20, 1, &dp) != 0 || jint(j, jp, "cp", 1, 1 << 20, 1, &cp) != 0 ||
        jint(j, jp, "ep", 1, 1 << 20, 1, &ep) != 0 ||
        jint(j, jp, "vpp", 1, 1 << 10, 1, &vpp) != 0 ||
        jint(j, jp, "mbs", 1, 1 << 20, 1, &mbs) != 0 ||
        jint(j, jp, "gbs", 1, 100000000, 0, &gbs) != 0)
        return -1;
    {
        strategy_constraints none = STRATEGY_CONSTRAINTS_INIT;
        const char *rc = NULL;
        json_t *spv = json_object_get(jp, "sequence_parallel");
        r->fix = none;
        r->fix.tp = in_list(unpub, "tp") ? -1 : tp;
        r->fix.pp = in_list(unpub, "pp") ? -1 : pp;
        r->fix.dp = in_list(unpub, "dp") ? -1 : dp;
        r->fix.cp = in_list(unpub, "cp") ? -1 : cp;
        r->fix.ep = in_list(unpub, "ep") ? -1 : ep;
        r->fix.vpp = in_list(unpub, "vpp") ? -1 : vpp;
        r->fix.mbs = in_list(unpub, "mbs") ? -1 : mbs;
        r->fix.gpus = r->num_gpus;
        /* optional: the ZeRO stage (FSDP's full sharding is 3), for runs whose
         * source says it (the memory corpus) */
        r->fix.zero = in_list(unpub, "zero") ? -1 : zero;
        if (load_grad_reduce(j, jp, r) != 0)
            return -1;
        if (json_is_boolean(spv) && !in_list(unpub, "sequence_parallel"))
            r->fix.sp = json_is_true(spv) ? 1 : 0;
        else if (spv != NULL && !json_is_null(spv) && !json_is_boolean(spv))
            return jfail(j, "sequence_parallel", "expected true, false or null", "");
        if (jstr(j, jp, "recompute", 1, &rc) != 0)
            return -1;
        if (rc != NULL && !in_list(unpub, "recompute")) {
            if (strcmp(rc, "none") == 0)
                r->fix.recompute = RECOMPUTE_NONE;
            else if (strcmp(rc, "selective") == 0)
                r->fix.recompute = RECOMPUTE_SELECTIVE;
            else if (strcmp(rc, "full") == 0)
                r->fix.recompute = RECOMPUTE_FULL;
            else
                return jfail(j, "recompute", "expected none, selective, full or null, got ", rc);
        }
    }
    r->gbs = gbs;
    return 0;
}

/* The source's recipe settings (run_stacks.c, --fix text) into r->fix, for
 * the knobs the run itself leaves free; a K/V exchange type only where the
 * run publishes cp > 1 (the type exists only with context parallelism:
 * knobs.c rule_cp_comm).  0, or -1 with the error set (a rule the registry
 * cannot parse: an internal error). */
static int load_recipe(jctx *j, const char *recipe, validation_run *r)
{
    strategy_constraints c = STRATEGY_CONSTRAINTS_INIT;
    int cp_comm = r->fix.cp_comm;
    if (recipe == NULL)
        return 0;
    if (constraints_parse(&c, recipe, j->doc->err) != PLANNER_OK) {
        j->doc->err->status = PLANNER_E_INTERNAL;
        return -1;
    }
    constraints_fill(&r->fix, &c);
    if (r->fix.cp <= 1)
        r->fix.cp_comm = cp_comm;
    return 0;
}

/* Appends one fact, printf-style, to r->shape_note (cut at its size),
 * after "; " when the note already says something. */
static void shape_note_add(validation_run *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void shape_note_add(validation_run *r, const char *fmt, ...)
{
    va_list ap;
    if (r->shape_note[0])
        text_appendf(r->shape_note, sizeof r->shape_note, "; ");
    va_start(ap, fmt);
    text_vappendf(r->shape_note, sizeof r->shape_note, fmt, ap);
    va_end(ap);
}

/* What the source's recipes set for this model, system and precision only
 * (run_stacks.c run_recipe_for_system), every fact that applies, for a run
 * that does not name its stack and for the knobs it leaves free; and what
 * the source says of the model variant it ran (MTP layers, FP8 attention,
 * residual dropout), whatever its stack.  A fact
 * about a named model applies only to a run predicted on that model's
 * definition (r->definition): its knobs assume the model's architecture
 * (mla_up_proj needs MLA).  0, or -1 with the error set. */
static int load_system_recipes(jctx *j, json_t *o, const gpu_spec *gpu, const char *prec,
                               validation_run *r)
{
    json_t *st = json_object_get(o, "stack"), *jm = json_object_get(o, "model");
    json_t *name = json_is_object(jm) ? json_object_get(jm, "name") : NULL;
    run_system sys = {r->source,
                      json_is_string(name) && r->definition[0] ? json_string_value(name) : NULL,
                      gpu->name, prec};
    json_t *src = json_object_get(o, "source");
    const char *rec, *why;
    size_t at = 0;
    run_model_variant var;
    double dropout;
    bool loss_too;
    sys.source = json_is_string(src) ? json_string_value(src) : NULL;
    while ((st == NULL || json_is_null(st)) &&
           (rec = run_recipe_for_system(&sys, &at, &why)) != NULL)
        if (load_recipe(j, rec, r) != 0)
            return -1;
    /* the MoE router and preprocessing graphs are a recipe's (run_stacks.c
     * te_moe_graphs=on facts): off where none sets them */
    if (r->fix.te_moe_graphs < 0)
        r->fix.te_moe_graphs = 0;
    /* so is the token dispatcher (the flex_dispatcher=on facts): alltoall
     * where none sets it, as the search would otherwise choose it */
    if (r->fix.flex_dispatcher < 0)
        r->fix.flex_dispatcher = 0;
    run_model_for_system(&sys, &var);
    if (var.mtp_layers >= 0 && var.mtp_layers != r->m->mtp_layers) {
        shape_note_add(r, "mtp_layers %d -> %d (the source's row)", r->m->mtp_layers,
                       var.mtp_layers);
        r->m->mtp_layers = var.mtp_layers;
    }
    if (var.fp8_attention && !r->m->fp8_attention) {
        shape_note_add(r, "attention in FP8 (the source's recipe)");
        r->m->fp8_attention = true;
    }
    if (var.fused_grouped_mlp && !r->m->fused_grouped_mlp) {
        shape_note_add(r, "experts as a fused grouped MLP (the source's recipe)");
        r->m->fused_grouped_mlp = true;
    }
    if (var.fp8_output_proj && !r->m->fp8_output_proj) {
        shape_note_add(r, "output layer in MXFP8 (the source's recipe)");
        r->m->fp8_output_proj = true;
    }
    if (var.fsdp_fp8_gather && !r->m->fsdp_fp8_gather) {
        shape_note_add(r, "FSDP all-gathers Float8Linear weights in FP8 where it shards over dp "
                          "(the source's config)");
        r->m->fsdp_fp8_gather = true;
    }
    if (run_compiled_for_system(&sys, &loss_too, &why) && !r->m->torch_compile) {
        shape_note_add(r, loss_too ? "blocks and loss under torch.compile (the source's row)"
                                   : "blocks under torch.compile (the source's row)");
        r->m->torch_compile = true;
        r->m->loss_compiled = loss_too;
    }
    sys.model = json_is_string(name) ? json_string_value(name) : NULL;
    dropout = run_hidden_dropout_for_system(&sys, &why);
    if (dropout >= 0) {
        if (dropout != model_hidden_dropout(r->m))
            shape_note_add(r, "hidden_dropout %g -> %g (the source's recipe)",
                           model_hidden_dropout(r->m), dropout);
        r->m->hidden_dropout = dropout;
        r->m->has_hidden_dropout = true;
    }
    return 0;
}

/* "parallel.pipeline_layout" (optional; the model is built) into
 * r->layout, pp and vpp fixed to it.  0, or -1 with the error set (the
 * character of the string it concerns in the message). */
static int load_layout(jctx *j, json_t *jp, validation_run *r)
{
    const char *text = NULL;
    char what[260];
    planner_error why = PLANNER_ERROR_INIT;
    if (jstr(j, jp, "pipeline_layout", 1, &text) != 0)
        return -1;
    if (text == NULL)
        return 0;
    if (r->fix.pp < 1)
        return jfail(j, "pipeline_layout", "a layout needs the published pp", "");
    if ((r->layout = pl_calloc(1, sizeof *r->layout)) == NULL)
        return error_oom(j->doc->err), -1;
    r->layout->pp = r->fix.pp;
    if (strategy_layout_parse(r->layout, text, r->m->layers, r->m->mtp_layers, &why) !=
        PLANNER_OK) {
        snprintf(what, sizeof what, "character %d: %.200s", why.col, why.msg);
        return jfail(j, "pipeline_layout", what, "");
    }
    if (r->fix.vpp > 0 && r->fix.vpp != r->layout->vpp) {
        snprintf(what, sizeof what, "%d stages over pp %d give vpp %d, the run says %d",
                 r->layout->pp * r->layout->vpp, r->layout->pp, r->layout->vpp, r->fix.vpp);
        return jfail(j, "pipeline_layout", what, "");
    }
    r->fix.vpp = r->layout->vpp;
    return 0;
}

/* The run's model from its dimensions (the schema's conventions, in the
 * file's header), precision `prec`, named by "model.name" (at path `mp`,
 * the run's "model"; no control characters) or the id.  Returns 0 or -1
 * with the error set. */
static int build_model(jctx *j, json_t *jm, const jsonin_path *mp, const run_dims *d,
                       const char *id, const char *prec, validation_run *r)
{
    int i;
    r->m = pl_calloc(1, sizeof *r->m);
    if (r->m == NULL)
        return error_oom(j->doc->err), -1;
    r->m->layer = pl_calloc((size_t)d->layers, sizeof *r->m->layer);
    if (r->m->layer == NULL)
        return error_oom(j->doc->err), -1;
    model *m = r->m;
    json_t *name = json_object_get(jm, "name");
    planner_error why = PLANNER_ERROR_INIT;
    if (json_is_string(name) && text_check_name(json_string_value(name), &why) != PLANNER_OK) {
        j->path = *mp;
        return jfail(j, "name", "holds ", why.msg);
    }
    snprintf(m->name, sizeof m->name, "%s", json_is_string(name) ? json_string_value(name) : id);
    m->format = MODEL_FORMAT_PLANNER;
    m->layers = d->layers;
    m->hidden = d->hidden;
    m->heads = d->heads;
    m->kv_heads = d->kv;
    m->head_dim = d->hidden / d->heads;
    m->ffn_hidden = d->ffn;
    m->vocab = d->vocab;
    r->seq_len = d->seq;
    m->max_position = d->seq;
    m->act = strcmp(d->act, "swiglu") == 0 ? ACT_SWIGLU : ACT_GELU;
    m->norm = m->act == ACT_SWIGLU ? NORM_RMSNORM : NORM_LAYERNORM;
    m->position = m->act == ACT_SWIGLU ? POS_ROPE : POS_LEARNED;
    m->tied_embeddings = d->tied >= 0 ? d->tied == 1 : m->act == ACT_GELU;
    if (strcmp(prec, "bf16") == 0)
        m->prec = PREC_BF16;
    else if (strcmp(prec, "fp16") == 0)
        m->prec = PREC_FP16;
    else if (strcmp(prec, "fp8") == 0)
        m->prec = PREC_FP8;
    else if (strcmp(prec, "mxfp8") == 0)
        m->prec = PREC_MXFP8;
    else if (strcmp(prec, "nvfp4") == 0)
        m->prec = PREC_NVFP4;
    else if (strcmp(prec, "fp32") == 0)
        m->prec = PREC_FP32;
    else
        return jfail(j, "precision", "unknown precision ", prec);
    for (i = 0; i < d->layers; i++) {
        layer_spec *l = &m->layer[i];
        l->hidden = d->hidden;
        l->heads = d->heads;
        l->kv_heads = d->kv;
        l->head_dim = m->head_dim;
        l->ffn_hidden = d->ffn;
        l->moe = false;
    }
    return 0;
}

/* "model.moe" (at path `mp`, the run's "model") into r->m->moe and the
 * run's subset; a run without MoE is dense 16-bit or FP8 family (then
 * unsupported on a GPU without tensor cores of its format). */
static int load_moe(jctx *j, json_t *jm, const jsonin_path *mp, const gpu_spec *gpu,
                    const char *prec, validation_run *r)
{
    const jsonin_path base = j->path;
    int i;
    if (json_object_get(jm, "moe") != NULL && !json_is_null(json_object_get(jm, "moe"))) {
        json_t *jmoe = json_object_get(jm, "moe");
        model_moe *mo = &r->m->moe;
        int sh, shf, dl;
        r->subset = SUBSET_MOE;
        j->path = *mp;
        if (!json_is_object(jmoe))
            return jfail(j, "moe", "expected an object", "");
        j->path = jsonin_key(&j->path, "moe");
        if (jint(j, jmoe, "moe_experts", 1, 65536, 0, &mo->experts) != 0 ||
            jint(j, jmoe, "moe_topk", 1, 65536, 0, &mo->top_k) != 0 ||
            jint(j, jmoe, "moe_ffn_hidden", 1, 1 << 24, 0, &mo->expert_ffn) != 0 ||
            jint(j, jmoe, "shared_experts", 0, 1024, 1, &sh) != 0 ||
            jint(j, jmoe, "shared_expert_ffn", 1, 1 << 24, 1, &shf) != 0 ||
            jint(j, jmoe, "dense_layers", 0, r->m->layers, 1, &dl) != 0)
            return -1;
        if (mo->top_k > mo->experts)
            return jfail(j, "moe_topk", "more experts per token than experts", "");
        mo->shared_experts = sh > 0 ? sh : 0;
        mo->shared_expert_ffn = shf > 0 ? shf : 0;
        mo->dense_layers = dl > 0 ? dl : 0;
        mo->layer_freq = 1;
        j->path = base;
        /* leading dense layers (DeepSeek first_k_dense) keep ffn_hidden */
        for (i = mo->dense_layers; i < r->m->layers; i++)
            r->m->layer[i].moe = true;
    } else if (r->m->prec == PREC_BF16 || r->m->prec == PREC_FP16 || r->m->prec == PREC_FP32) {
        r->subset = SUBSET_DENSE16;
    } else {
        r->subset = SUBSET_FP8;
        if (gpu->peak_flops[precision_peak(r->m->prec)] <= 0)
            snprintf(r->unsupported, sizeof r->unsupported, "%s has no %s tensor cores",
                     gpu->name, prec);
    }
    return 0;
}

/* One published figure of the run against the definition's: appends
 * "what row -> def" to buf (", " between) when they differ; returns 1 when
 * they do. */
static int shape_diff(char *buf, size_t size, const char *what, int row, int def)
{
    size_t used = strlen(buf);
    if (row == def)
        return 0;
    if (used < size)
        snprintf(buf + used, size - used, "%s%s %d -> %d", used ? ", " : "", what, row, def);
    return 1;
}

/* The figures that name the model: the run's against the definition's.
 * Returns how many differ (listed in buf). */
static int shape_identity(char *buf, size_t size, const model *row, const model *def)
{
    int n = shape_diff(buf, size, "layers", row->layers, def->layers) +
            shape_diff(buf, size, "hidden", row->hidden, def->hidden) +
            shape_diff(buf, size, "heads", row->heads, def->heads) +
            shape_diff(buf, size, "kv_heads", row->kv_heads, def->kv_heads) +
            shape_diff(buf, size, "moe_experts", row->moe.experts, def->moe.experts);
    if (row->moe.experts > 0)
        n += shape_diff(buf, size, "moe_topk", row->moe.top_k, def->moe.top_k) +
             shape_diff(buf, size, "moe_ffn_hidden", row->moe.expert_ffn, def->moe.expert_ffn);
    return n;
}

/* The run's model from the model library (validation_load_library): when
 * "model.name" names a definition whose identity figures agree with the
 * run's, r->m becomes it (named as the run names it; the run's sequence and
 * precision), r->definition its file, r->shape_note what it changed;
 * otherwise r->m stays and the note says why.  The runs schema gives no
 * head size, gating, MLA, sliding windows or MTP; a publication names its
 * model, and the model's published config says the rest.  Returns 0, or
 * -1 with the error set (out of memory). */
static int library_shape(jctx *j, validation_run *r)
{
    char path[1200], diff[200] = "";
    const char *file;
    run_spec over = {0};
    planner_error e = PLANNER_ERROR_INIT;
    model *def = NULL;
    int found = model_library_find(j->models_dir, r->m->name, path, sizeof path);
    if (found == 0)
        return 0;
    file = strrchr(path, '/') != NULL ? strrchr(path, '/') + 1 : path;
    if (found < 0) {
        snprintf(r->shape_note, sizeof r->shape_note,
                 "two model definitions match '%.80s': the row's dimensions", r->m->name);
        return 0;
    }
    over.seq_len = r->seq_len;
    over.global_batch = r->gbs;
    over.has_prec = true;
    over.prec = r->m->prec;
    if (model_load(&def, NULL, path, &over, &e) != PLANNER_OK) {
        if (e.status == PLANNER_E_INTERNAL)
            return error_set(j->doc->err, e.status, NULL, 0, 0, NULL, "%s", e.msg), -1;
        snprintf(r->shape_note, sizeof r->shape_note, "%.60s not read (%.120s): the row's "
                 "dimensions", file, e.msg);
        return 0;
    }
    if (shape_identity(diff, sizeof diff, r->m, def) > 0) {
        snprintf(r->shape_note, sizeof r->shape_note, "%.60s differs (%.150s): the row's "
                 "dimensions", file, diff);
        model_free(def);
        return 0;
    }
    /* what the definition says that the row said otherwise */
    shape_diff(diff, sizeof diff, "ffn_hidden", r->m->ffn_hidden, def->ffn_hidden);
    shape_diff(diff, sizeof diff, "vocab", r->m->vocab, def->vocab);
    shape_diff(diff, sizeof diff, "head_dim", r->m->head_dim, def->head_dim);
    shape_diff(diff, sizeof diff, "dense_layers", r->m->moe.dense_layers, def->moe.dense_layers);
    shape_diff(diff, sizeof diff, "shared_experts", r->m->moe.shared_experts,
               def->moe.shared_experts);
    if (activation_gated(r->m->act) != activation_gated(def->act) && strlen(diff) < sizeof diff)
        snprintf(diff + strlen(diff), sizeof diff - strlen(diff), "%sactivation %s -> %s",
                 diff[0] ? ", " : "", activation_name(r->m->act), activation_name(def->act));
    snprintf(r->definition, sizeof r->definition, "%.63s", file);
    snprintf(r->shape_note, sizeof r->shape_note, "model from %.60s%s%.150s", file,
             diff[0] ? ": " : " (the row's figures agree)", diff);
    snprintf(def->name, sizeof def->name, "%s", r->m->name);
    model_free(r->m);
    r->m = def;
    return 0;
}

/* The run's cluster: one group of its GPUs (gpn per node), the catalog's
 * links and NCCL's latencies.  Returns 0 or -1 (out of memory). */
static int build_cluster(jctx *j, const gpu_spec *gpu, int gpn, validation_run *r)
{
    r->c = pl_calloc(1, sizeof *r->c);
    if (r->c == NULL)
        return error_oom(j->doc->err), -1;
    r->c->group = pl_calloc(1, sizeof *r->c->group);
    if (r->c->group == NULL)
        return error_oom(j->doc->err), -1;
    node_group *g = r->c->group;
    int per_node = gpn < r->num_gpus ? gpn : r->num_gpus;
    snprintf(r->c->name, sizeof r->c->name, "%d x %s", r->num_gpus, gpu->name);
    r->c->n_groups = 1;
    snprintf(g->name, sizeof g->name, "%s", gpu->name);
    g->gpu = *gpu;
    g->gpus_per_node = per_node;
    g->nodes = (r->num_gpus + per_node - 1) / per_node;
    g->intra_bytes_per_s = gpu->intra_node_bytes_per_s;
    g->intra_latency_s = INTRA_LATENCY_S;
    g->inter_bytes_per_s = gpu->inter_node_bytes_per_s;
    g->inter_latency_s = INTER_LATENCY_S;
    return 0;
}

/* The run's software stack into *out: its own "stack" (a name of
 * inputs/stack.c), else the stack of its source (run_stacks.c), else
 * megatron-core; *recipe the source rule's recipe settings (--fix text;
 * NULL: none, or the run names its stack).  Returns 0 or -1 with the
 * error set. */
static int load_stack(jctx *j, json_t *o, const char *source, const char *id, int *out,
                      const char **recipe)
{
    const char *name, *why;
    const stack_spec *st;
    *out = STACK_MEGATRON_CORE;
    *recipe = NULL;
    if (jstr(j, o, "stack", 1, &name) != 0)
        return -1;
    if (name == NULL) {
        st = run_stack_from_source(source, id, &why, recipe);
        if (st != NULL)
            *out = (int)st->id;
        return 0;
    }
    st = stack_find(name);
    if (st == NULL) {
        char hint[128], names[256], what[512];
        stack_unknown_hint(name, hint, sizeof hint, names, sizeof names);
        snprintf(what, sizeof what, "'%.64s'%s; known: %s", name, hint, names);
        return jfail(j, "stack", "unknown software stack ", what);
    }
    *out = (int)st->id;
    return 0;
}

/* One run -> r.  Returns 0 or -1 with the error set. */
static int load_run(jctx *j, json_t *o, validation_run *r)
{
    json_t *jm, *jp, *jmeas, *unpub, *v;
    const char *id, *gpu_name, *prec, *recipe;
    const gpu_spec *gpu;
    run_dims d;
    int gpn, stack;
    double meas;
    planner_error why = PLANNER_ERROR_INIT;
    const jsonin_path base = j->path, mp = jsonin_key(&base, "model");

    if (!json_is_object(o))
        return jfail(j, "", "expected an object", "");
    if (jstr(j, o, "id", 0, &id) != 0 || jstr(j, o, "gpu", 0, &gpu_name) != 0 ||
        jstr(j, o, "precision", 0, &prec) != 0 ||
        jint(j, o, "num_gpus", 1, CLUSTER_MAX_GPUS, 0, &r->num_gpus) != 0 ||
        jint(j, o, "gpus_per_node", 1, 1024, 0, &gpn) != 0)
        return -1;
    if (text_check_name(id, &why) != PLANNER_OK)
        return jfail(j, "id", "holds ", why.msg);
    snprintf(r->id, sizeof r->id, "%s", id);
    v = json_object_get(o, "source");
    snprintf(r->source, sizeof r->source, "%s", json_is_string(v) ? json_string_value(v) : "");
    if (load_stack(j, o, json_is_string(v) ? json_string_value(v) : NULL, id, &stack,
                   &recipe) != 0)
        return -1;
    gpu = catalog_find(gpu_name);
    if (gpu == NULL)
        return jfail(j, "gpu", "unknown GPU (not in the catalog): ", gpu_name);

    jm = json_object_get(o, "model");
    jp = json_object_get(o, "parallel");
    jmeas = json_object_get(o, "measured");
    if (!json_is_object(jm))
        return jfail(j, "model", "expected an object", "");
    if (!json_is_object(jp))
        return jfail(j, "parallel", "expected an object", "");
    if (!json_is_object(jmeas))
        return jfail(j, "measured", "expected an object", "");
    unpub = json_object_get(o, "unpublished");

    j->path = mp;
    if (load_dims(j, jm, &d) != 0)
        return -1;
    j->path = jsonin_key(&base, "parallel");
    if (load_parallel(j, jp, unpub, r) != 0 || load_recipe(j, recipe, r) != 0)
        return -1;
    j->path = jsonin_key(&base, "measured");
    v = json_object_get(jmeas, "tokens_per_s_per_gpu");
    if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
        return jfail(j, "tokens_per_s_per_gpu", "expected a number > 0", "");
    meas = json_number_value(v);
    if (meas < MEASURED_TOKENS_MIN || meas > MEASURED_TOKENS_MAX) {
        char what[96];
        snprintf(what, sizeof what, "%g outside %g..%g", meas, MEASURED_TOKENS_MIN,
                 MEASURED_TOKENS_MAX);
        return jfail(j, "tokens_per_s_per_gpu", what, "");
    }
    r->measured_tokens_per_s_per_gpu = meas;
    v = json_object_get(jmeas, "peak_memory_gib");
    if (v != NULL && !json_is_null(v)) {
        double gib = json_is_number(v) ? json_number_value(v) : -1;
        if (!(gib > 0) || gib > MEASURED_MEMORY_GIB_MAX)
            return jfail(j, "peak_memory_gib", "expected a number in (0, 100000]", "");
        r->measured_peak_memory_bytes = gib * 1073741824.0;
    }
    j->path = base;
    if (build_model(j, jm, &mp, &d, id, prec, r) != 0 || load_moe(j, jm, &mp, gpu, prec, r) != 0 ||
        library_shape(j, r) != 0 || load_system_recipes(j, o, gpu, prec, r) != 0)
        return -1;
    j->path = jsonin_key(&base, "parallel");
    if (load_layout(j, jp, r) != 0)
        return -1;
    j->path = base;
    if (build_cluster(j, gpu, gpn, r) != 0)
        return -1;
    r->c->stack = stack;
    return 0;
}

planner_status validation_load(validation_set **out, const char *path, planner_error *err)
{
    return validation_load_library(out, path, NULL, err);
}

planner_status validation_load_library(validation_set **out, const char *path,
                                       const char *models_dir, planner_error *err)
{
    const jsonin_path rootp = JSONIN_PATH_ROOT, runsp = jsonin_key(&rootp, "runs");
    char *text = NULL;
    size_t len = 0, i;
    json_t *runs;
    jsonin_doc doc = {path, NULL, 0, NULL, "", err};
    validation_set *v = NULL;
    planner_status st;
    jctx j;
    int line, col;

    *out = NULL;
    st = file_read_all(&text, &len, path, INPUT_MAX_BYTES, err);
    if (st != PLANNER_OK)
        return st;
    if ((st = jsonin_parse(&doc, text, len, path, NULL, err)) != PLANNER_OK)
        goto cleanup;
    runs = json_object_get(doc.root, "runs");
    jsonin_locate(&doc, &runsp, &line, &col);
    if (!json_is_array(runs)) {
        st = error_set(err, PLANNER_E_INPUT, path, line, col, "runs",
                       "expected an object with a \"runs\" array");
        goto cleanup;
    }
    if (json_array_size(runs) > VALIDATION_MAX_RUNS) {
        st = error_set(err, PLANNER_E_INPUT, path, line, col, "runs", "more than %d runs",
                       VALIDATION_MAX_RUNS);
        goto cleanup;
    }
    v = pl_calloc(1, sizeof *v);
    if (v == NULL || (json_array_size(runs) > 0 &&
                      (v->run = pl_calloc(json_array_size(runs), sizeof *v->run)) == NULL)) {
        st = error_oom(err);
        goto cleanup;
    }
    j.doc = &doc;
    j.models_dir = models_dir;
    for (i = 0; i < json_array_size(runs); i++) {
        j.path = jsonin_index(&runsp, i);
        v->n++;
        if (load_run(&j, json_array_get(runs, i), &v->run[i]) != 0) {
            st = err->status != PLANNER_OK ? err->status : PLANNER_E_INPUT;
            goto cleanup;
        }
    }
    *out = v;
    v = NULL;
    st = PLANNER_OK;
cleanup:
    validation_free(v);
    jsonin_close(&doc);
    pl_free(text);
    return st;
}

planner_status validation_predict(plan *best, const validation_run *r, const cost_params *p,
                                  planner_error *err)
{
    search_options opts;
    search_result res;
    planner_status st;

    memset(best, 0, sizeof *best);
    search_options_default(&opts);
    opts.top_n = 1;
    opts.fix = r->fix;
    opts.gbs = r->gbs;
    opts.seq_len = r->seq_len;
    opts.layout = r->layout;
    /* Every knob value no measured run validates (model/knobs.c's table) is
     * off unless the run publishes it: a run is predicted on what its source
     * says it ran, not on a knob it does not mention.  Searching them moved
     * the corpus onto unvalidated costs: block recompute of part of the
     * layers moved 17 predictions (FP8 MAPE 8.0% -> 6.5%, MoE 27.6% ->
     * 28.2%) and left volta.gemm_eff undetermined in `planner calibrate`;
     * the MoE all-to-all overlap took 34 of the 39 MoE rows (MoE max 83.5%
     * -> 101.0%); ZeRO-2 took Llama 3 8B and 70B FP8 rows on H100. */
    opts.validated_only = true;
    memset(&res, 0, sizeof res);
    st = search_run(&res, r->m, r->c, p, &opts, err);
    if (st == PLANNER_OK && res.n_top > 0)
        *best = res.top[0];
    else if (st == PLANNER_E_INFEASIBLE && res.have_miss)
        *best = res.miss;
    search_result_free(&res);
    return st;
}

const char *validation_status_name(validation_status s)
{
    return s == VALIDATION_OK ? "ok" : s == VALIDATION_UNSUPPORTED ? "unsupported" : "infeasible";
}

/* The memory error of a run with a measured peak (the chosen plan's, or the
 * closest miss's when the run is refused: a refused measured run counts). */
static void memory_outcome(validation_outcome *o, const validation_run *r)
{
    o->mem_have = true;
    o->mem_predicted_bytes = o->pl.e.peak_memory_bytes;
    o->mem_error = o->mem_predicted_bytes / r->measured_peak_memory_bytes - 1.0;
}

/* Predicts run r into *o.  Fails only on an internal error.  Runs on a
 * worker thread (validation_predict_all): it writes only *o and *err. */
static planner_status predict_one(validation_outcome *o, const validation_run *r,
                                  const cost_params *params, planner_error *err)
{
    planner_error e2 = PLANNER_ERROR_INIT;
    planner_status ps;
    if (r->unsupported[0]) {
        o->status = VALIDATION_UNSUPPORTED;
        snprintf(o->reason, sizeof o->reason, "%s", r->unsupported);
        return PLANNER_OK;
    }
    ps = validation_predict(&o->pl, r, params, &e2);
    if ((ps == PLANNER_OK || ps == PLANNER_E_INFEASIBLE) && r->measured_peak_memory_bytes > 0 &&
        o->pl.e.peak_memory_bytes > 0)
        memory_outcome(o, r);
    if (ps == PLANNER_OK) {
        o->status = VALIDATION_OK;
        o->predicted = o->pl.e.tokens_per_s_per_gpu;
        o->error = (o->predicted - r->measured_tokens_per_s_per_gpu) /
                   r->measured_tokens_per_s_per_gpu;
    } else if (ps == PLANNER_E_INFEASIBLE && !(o->pl.e.step_time_s > 0)) {
        /* no candidate passed Megatron's rules: the published layout is
         * one the planner cannot express (e.g. a custom
         * --pipeline-model-parallel-layout with virtual stages over a
         * layer count no pp x vpp divides) */
        o->status = VALIDATION_UNSUPPORTED;
        snprintf(o->reason, sizeof o->reason, "%s",
                 "the published layout is not expressible: no split of the layers under "
                 "the published knobs passes Megatron's rules as the planner models them "
                 "(virtual stages over uneven layers need a custom "
                 "--pipeline-model-parallel-layout)");
    } else if (ps == PLANNER_E_INFEASIBLE) {
        o->status = VALIDATION_INFEASIBLE;
        snprintf(o->reason, sizeof o->reason, "%s",
                 o->pl.e.reason[0] ? o->pl.e.reason : "no plan fits in memory");
    } else if (ps == PLANNER_E_INTERNAL) {
        return error_set(err, ps, NULL, 0, 0, NULL, "%s", e2.msg);
    } else {
        o->status = VALIDATION_UNSUPPORTED;
        snprintf(o->reason, sizeof o->reason, "%s", e2.msg);
    }
    return PLANNER_OK;
}

/* Counts run r's outcome o into the summary (in run order: the sums are
 * the same for every -j). */
static void count_one(validation_summary *sum, const validation_outcome *o,
                      const validation_run *r)
{
    sum->total[r->subset]++;
    if (o->mem_have) {
        sum->mem_cnt++;
        sum->mem_sum += fabs(o->mem_error);
        if (fabs(o->mem_error) > sum->mem_max)
            sum->mem_max = fabs(o->mem_error);
        if (o->mem_error < sum->mem_min_signed)
            sum->mem_min_signed = o->mem_error;
        sum->mem_refused += o->status != VALIDATION_OK;
    }
    if (o->status == VALIDATION_OK) {
        sum->sum[r->subset] += fabs(o->error);
        if (fabs(o->error) > sum->maxe[r->subset])
            sum->maxe[r->subset] = fabs(o->error);
        sum->cnt[r->subset]++;
    }
}

/* The runs predicted on worker threads: run i into res[i], its status and
 * error into st[i] and errs[i]. */
typedef struct predict_job {
    const validation_set *set;
    const cost_params *p;
    validation_outcome *res;
    planner_status *st;
    planner_error *errs;
} predict_job;

static void predict_item(void *arg, int i, int worker)
{
    predict_job *j = arg;
    (void)worker;
    j->st[i] = predict_one(&j->res[i], &j->set->run[i], j->p, &j->errs[i]);
}

planner_status validation_predict_all(validation_outcome **out, validation_summary *sum,
                                      const validation_set *set, const cost_params *p,
                                      int jobs, planner_error *err)
{
    predict_job j = {set, p, NULL, NULL, NULL};
    planner_status st = PLANNER_OK;
    size_t n = (size_t)set->n;

    *out = NULL;
    memset(sum, 0, sizeof *sum);
    if (set->n <= 0)
        return PLANNER_OK;
    j.res = pl_calloc(n, sizeof *j.res);
    j.st = pl_calloc(n, sizeof *j.st);
    j.errs = pl_calloc(n, sizeof *j.errs);
    if (j.res == NULL || j.st == NULL || j.errs == NULL) {
        st = error_oom(err);
        goto cleanup;
    }
    workers_run(set->n, jobs, predict_item, &j);
    for (int i = 0; i < set->n && st == PLANNER_OK; i++) {   /* the first error, in run order */
        if (j.st[i] != PLANNER_OK)
            st = error_set(err, j.st[i], NULL, 0, 0, NULL, "%s", j.errs[i].msg);
        else
            count_one(sum, &j.res[i], &set->run[i]);
    }
    if (st == PLANNER_OK) {
        *out = j.res;
        j.res = NULL;
    }
cleanup:
    pl_free(j.res);
    pl_free(j.st);
    pl_free(j.errs);
    return st;
}
