/* test_emit.c: Megatron-LM arguments, sbatch and torchrun scripts for
 * hand-built plans (no loader, no search).  Checks exact flags and values
 * derived by hand from the model and plan, the validate_args rules, that
 * every flag exists in Megatron core_v0.15.0 (the shared flag list; skipped
 * when ../shared is absent) and that scripts pass bash -n and shellcheck
 * (skipped when shellcheck is not installed). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "inputs/catalog.h"
#include "out/emit.h"
#include "testutil.h"

typedef struct fixture {
    model m;
    layer_spec layer[256];
    cluster c;
    node_group group[2];
    plan pl;
} fixture;

static void make_cluster(fixture *f, const char *gpu, int nodes)
{
    const gpu_spec *g = catalog_find(gpu);
    ck_assert_ptr_nonnull(g);
    memset(&f->c, 0, sizeof f->c);
    memset(f->group, 0, sizeof f->group);
    snprintf(f->c.name, sizeof f->c.name, "test-%s", gpu);
    f->c.n_groups = 1;
    f->c.group = f->group;
    f->group[0].gpu = *g;
    snprintf(f->group[0].name, sizeof f->group[0].name, "main");
    f->group[0].nodes = nodes;
    f->group[0].gpus_per_node = 8;
    f->group[0].intra_bytes_per_s = g->intra_node_bytes_per_s;
    f->group[0].inter_bytes_per_s = 50e9;
}

static void set_layers(fixture *f, int layers)
{
    f->m.layers = layers;
    f->m.layer = f->layer;
    for (int i = 0; i < layers; i++) {
        f->layer[i].hidden = f->m.hidden;
        f->layer[i].heads = f->m.heads;
        f->layer[i].kv_heads = f->m.kv_heads;
        f->layer[i].head_dim = f->m.head_dim;
        f->layer[i].ffn_hidden = f->m.ffn_hidden;
    }
}

static void even_stages(strategy *s, int layers)
{
    s->n_stages = s->pp;
    for (int i = 0; i < s->pp; i++) {
        s->stage[i].group = 0;
        s->stage[i].n_layers = layers / s->pp;
        s->stage[i].first_layer = i * (layers / s->pp);
        s->stage[i].tp = s->tp;
        s->stage[i].dp = s->dp;
    }
}

/* GPT-3 175B (Brown et al. 2020): 96 layers, h 12288, 96 heads, f 4h,
 * seq 2048, vocab 50257, LayerNorm, learned positions, tied embeddings.
 * Plan: TP8 PP8 DP2 (128 GPUs, 16 nodes), SP, selective, ZeRO-1, overlaps. */
static void gpt3(fixture *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->m.name, sizeof f->m.name, "gpt3-175b");
    f->m.hidden = 12288;
    f->m.heads = 96;
    f->m.kv_heads = 96;
    f->m.head_dim = 128;
    f->m.ffn_hidden = 49152;
    f->m.vocab = 50257;
    f->m.max_position = 2048;
    f->m.act = ACT_GELU;
    f->m.norm = NORM_LAYERNORM;
    f->m.position = POS_LEARNED;
    f->m.tied_embeddings = true;
    f->m.prec = PREC_BF16;
    set_layers(f, 96);
    make_cluster(f, "H100-SXM", 16);
    strategy *s = &f->pl.s;
    s->tp = 8; s->pp = 8; s->dp = 2; s->cp = 1; s->ep = 1; s->etp = 1; s->vpp = 1;
    s->mbs = 1; s->gbs = 1536; s->seq_len = 2048;
    s->sp = true; s->recompute = RECOMPUTE_SELECTIVE; s->zero = 1;
    s->overlap_grad_reduce = true; s->overlap_param_gather = true;
    even_stages(s, 96);
    f->pl.e.feasible = true;
    f->pl.e.step_time_s = 10.0;
}

/* Llama 3 70B (Meta 2024): 80 layers, h 8192, 64 heads, 8 KV heads, head
 * dim 128, f 28672, SwiGLU, RMSNorm, RoPE, untied, vocab 128256. */
static void llama70b(fixture *f)
{
    memset(f, 0, sizeof *f);
    snprintf(f->m.name, sizeof f->m.name, "llama3-70b");
    f->m.hidden = 8192;
    f->m.heads = 64;
    f->m.kv_heads = 8;
    f->m.head_dim = 128;
    f->m.ffn_hidden = 28672;
    f->m.vocab = 128256;
    f->m.max_position = 131072;
    f->m.act = ACT_SWIGLU;
    f->m.norm = NORM_RMSNORM;
    f->m.position = POS_ROPE;
    f->m.tied_embeddings = false;
    f->m.prec = PREC_BF16;
    set_layers(f, 80);
    make_cluster(f, "H100-SXM", 8);
    strategy *s = &f->pl.s;
    s->tp = 8; s->pp = 4; s->dp = 2; s->cp = 1; s->ep = 1; s->etp = 1; s->vpp = 2;
    s->mbs = 1; s->gbs = 64; s->seq_len = 8192;
    s->sp = true; s->recompute = RECOMPUTE_NONE; s->zero = 1;
    s->overlap_grad_reduce = true;
    even_stages(s, 80);
}

/* The fixtures give each stage's layer count; its first layer follows
 * strategy.h (with vpp > 1: the first layer of its chunk 0), which
 * strategy_check (in emit_check) holds plans to. */
static void first_layers(const model *m, strategy *s)
{
    for (int i = 0, next = 0; i < s->n_stages && !s->account_embedding && !s->account_loss;
         i++) {
        if (s->vpp > 1)
            strategy_chunk_layers(s, m->layers, i, 0, &s->stage[i].first_layer);
        else
            s->stage[i].first_layer = next;
        next += s->stage[i].n_layers;
    }
}

/* Runs emit_write for release `ver` into a string (caller frees); returns
 * emit's status. */
static planner_status emit_to_string_ver(emit_kind kind, megatron_version ver, const fixture *f,
                                         char **text)
{
    planner_error why = PLANNER_ERROR_INIT;
    size_t len = 0;
    FILE *fp = open_memstream(text, &len);
    ck_assert_ptr_nonnull(fp);
    plan pl = f->pl;
    first_layers(&f->m, &pl.s);
    planner_status rc = emit_write(fp, kind, ver, &f->m, &f->c, &pl, &why);
    fclose(fp);
    if (rc != PLANNER_OK)
        fprintf(stderr, "emit: %s\n", why.msg);
    return rc;
}

static planner_status emit_to_string(emit_kind kind, const fixture *f, char **text)
{
    return emit_to_string_ver(kind, MEGATRON_VERSION_DEFAULT, f, text);
}

/* The value following `flag` on its line ("--flag VALUE \"), or NULL if the
 * flag is absent.  Writes at most size-1 chars. */
static const char *flag_value(const char *text, const char *flag, char *buf, size_t size)
{
    size_t fl = strlen(flag);
    for (const char *p = text; (p = strstr(p, flag)) != NULL; p += fl) {
        bool start = p == text || p[-1] == '\n' || p[-1] == ' ';
        char after = p[fl];
        if (!start || (after != ' ' && after != '\n' && after != '\0'))
            continue;
        const char *v = p + fl;
        size_t n = 0;
        while (*v == ' ')
            v++;
        while (v[n] != '\0' && v[n] != '\n' && v[n] != ' ' && n + 1 < size)
            n++;
        memcpy(buf, v, n);
        buf[n] = '\0';
        if (strcmp(buf, "\\") == 0 || (n > 0 && buf[0] == '-' && buf[1] == '-'))
            buf[0] = '\0';
        return buf;
    }
    return NULL;
}

#define ck_flag(text, flag, expect)                                            \
    do {                                                                       \
        char vb_[512];                                                         \
        const char *v_ = flag_value((text), (flag), vb_, sizeof vb_);          \
        ck_assert_msg(v_ != NULL, "missing %s", (flag));                       \
        ck_assert_str_eq(v_, (expect));                                        \
    } while (0)

#define ck_no_flag(text, flag)                                                 \
    do {                                                                       \
        char vb_[512];                                                         \
        ck_assert_msg(flag_value((text), (flag), vb_, sizeof vb_) == NULL,     \
                      "unexpected %s", (flag));                                \
    } while (0)

/* Every "--flag" that starts a line (after indentation) is in release ver's
 * flag list (tests/data/megatron-flags/TAG.txt, from that release's
 * megatron/training/arguments.py); in scripts, the lines of the
 * MEGATRON_ARGS array (the rest are torchrun's own options).  Returns the
 * number checked. */
static int check_flags_in(const char *text, megatron_version ver)
{
    char path[1024], *list = NULL;
    size_t len = 0;
    int checked = 0;
    snprintf(path, sizeof path, "tests/data/megatron-flags/%s.txt", megatron_version_tag(ver));
    FILE *fp = fopen(path, "r");
    ck_assert_msg(fp != NULL, "cannot read %s", path);
    list = calloc(1, 1 << 20);
    len = fread(list + 1, 1, (1 << 20) - 2, fp);
    fclose(fp);
    list[0] = '\n';
    list[len + 1] = '\0';
    const char *arr = strstr(text, "MEGATRON_ARGS=(\n");
    const char *end = arr != NULL ? strstr(arr, "\n)\n") : NULL;
    char *region = strdup(arr != NULL ? arr : text);
    if (arr != NULL && end != NULL)
        region[end - arr] = '\0';
    text = region;
    for (const char *p = text; *p; ) {
        const char *eol = strchr(p, '\n');
        const char *q = p;
        if (eol == NULL)
            eol = p + strlen(p);
        while (q < eol && *q == ' ')
            q++;
        if (q + 2 < eol && q[0] == '-' && q[1] == '-') {
            char needle[128];
            size_t n = 0;
            needle[n++] = '\n';
            while (q + n - 1 < eol && q[n - 1] != ' ' && n < sizeof needle - 2) {
                needle[n] = q[n - 1];
                n++;
            }
            needle[n++] = '\n';
            needle[n] = '\0';
            ck_assert_msg(strstr(list, needle) != NULL, "flag not in Megatron %s:%s",
                          megatron_version_tag(ver), needle);
            checked++;
        }
        p = *eol ? eol + 1 : eol;
    }
    free(list);
    free(region);
    return checked;
}

static int check_flags_known(const char *text)
{
    return check_flags_in(text, MEGATRON_VERSION_DEFAULT);
}

/* Writes text to a temporary file and runs `cmd FILE`; returns its status. */
static int run_on_text(const char *cmd, const char *text)
{
    char path[] = "/tmp/planner-emit-XXXXXX";
    char line[1200];
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *fp = fdopen(fd, "w");
    fputs(text, fp);
    fclose(fp);
    snprintf(line, sizeof line, "%s %s >&2", cmd, path);
    int rc = system(line);
    unlink(path);
    return rc;
}

static bool have_shellcheck(void)
{
    if (system("command -v shellcheck >/dev/null 2>&1") == 0)
        return true;
    tu_skip("test_emit shellcheck on the scripts", "shellcheck not installed");
    return false;
}

START_TEST(gpt3_megatron_flags)
{
    fixture f;
    char *t = NULL;
    gpt3(&f);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--num-layers", "96");
    ck_flag(t, "--hidden-size", "12288");
    ck_flag(t, "--ffn-hidden-size", "49152");
    ck_flag(t, "--num-attention-heads", "96");
    ck_no_flag(t, "--group-query-attention");
    ck_no_flag(t, "--num-query-groups");
    ck_no_flag(t, "--kv-channels");           /* 12288 / 96 = 128 = head_dim */
    ck_flag(t, "--seq-length", "2048");
    ck_flag(t, "--max-position-embeddings", "2048");
    ck_no_flag(t, "--swiglu");
    ck_flag(t, "--normalization", "LayerNorm");
    ck_flag(t, "--position-embedding-type", "learned_absolute");
    ck_no_flag(t, "--untie-embeddings-and-output-weights");
    ck_no_flag(t, "--disable-bias-linear");
    ck_no_flag(t, "--hidden-dropout");        /* Megatron's 0.1, the model's */
    ck_flag(t, "--tensor-model-parallel-size", "8");
    ck_flag(t, "--pipeline-model-parallel-size", "8");
    ck_no_flag(t, "--num-layers-per-virtual-pipeline-stage");
    ck_no_flag(t, "--decoder-first-pipeline-num-layers");
    ck_no_flag(t, "--pipeline-model-parallel-layout");
    ck_flag(t, "--sequence-parallel", "");
    ck_no_flag(t, "--context-parallel-size");
    ck_flag(t, "--micro-batch-size", "1");
    ck_flag(t, "--global-batch-size", "1536");
    ck_flag(t, "--recompute-granularity", "selective");
    ck_no_flag(t, "--recompute-method");
    ck_no_flag(t, "--recompute-num-layers");
    ck_flag(t, "--use-distributed-optimizer", "");
    ck_flag(t, "--overlap-grad-reduce", "");
    ck_flag(t, "--overlap-param-gather", "");
    ck_no_flag(t, "--tp-comm-overlap");
    ck_flag(t, "--bf16", "");
    ck_no_flag(t, "--fp16");
    ck_flag(t, "--attention-backend", "flash");
    ck_flag(t, "--data-path", "\"$DATA_PATH\"");
    ck_flag(t, "--tokenizer-model", "\"$TOKENIZER_MODEL\"");
    ck_assert_int_ne(check_flags_known(t), 0);
    ck_assert_int_eq(run_on_text("bash -n", t), 0);
    free(t);
}
END_TEST

/* emit writes nothing for a kind that does not launch the stack
 * (emit_kind_supported): each stack has its own config kind (megatron,
 * torchtitan, deepspeed) and no other; Megatron-LM 2022
 * and megatron-core emit the same flags for this plan (no knob of the plan
 * is one the 2022 stack lacks). */
START_TEST(stack_not_megatron_refused)
{
    static const struct { int stack; emit_kind kind; } refused[] = {
        {STACK_DEEPSPEED, EMIT_MEGATRON}, {STACK_DEEPSPEED, EMIT_TORCHTITAN},
        {STACK_PYTORCH_FSDP2, EMIT_MEGATRON}, {STACK_PYTORCH_FSDP2, EMIT_DEEPSPEED},
        {STACK_MEGATRON_CORE, EMIT_TORCHTITAN}, {STACK_MEGATRON_CORE, EMIT_DEEPSPEED},
        {STACK_MEGATRON_LM_2022, EMIT_TORCHTITAN}};
    fixture f;
    char *t = NULL, *core = NULL;
    planner_error why;
    plan pl;
    llama70b(&f);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &core), 0);
    f.c.stack = STACK_MEGATRON_LM_2022;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_assert_str_eq(t, core);
    free(t);
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        size_t len = 0;
        FILE *fp;
        t = NULL;
        f.c.stack = refused[i].stack;
        pl = f.pl;
        first_layers(&f.m, &pl.s);
        ck_assert(!emit_kind_supported(refused[i].kind, stack_get(refused[i].stack)));
        fp = open_memstream(&t, &len);
        ck_assert_ptr_nonnull(fp);
        ck_assert_int_eq(emit_write(fp, refused[i].kind, MEGATRON_VERSION_DEFAULT, &f.m, &f.c,
                                    &pl, tu_err(&why)), PLANNER_E_INPUT);
        fclose(fp);
        ck_assert_uint_eq(len, 0);
        ck_assert_ptr_nonnull(strstr(why.msg, stack_get(refused[i].stack)->name));
        ck_assert_ptr_nonnull(strstr(why.msg, emit_kind_name(refused[i].kind)));
        free(t);
    }
    free(core);
}
END_TEST

/* The llama70b fixture on pytorch-fsdp2 (tp 8, pp 4, vpp 2, dp 2, mbs 1,
 * gbs 64, seq 8192, SP, no recompute), ZeRO-3 with its overlaps: the
 * torchtitan job config's values, derived by hand from torchtitan v0.2.2's
 * options (emit_torchtitan.c): the DP rank's batch 64 / 2 = 32 split into
 * micro-batches of 1 by Interleaved1F1B over 4 x 2 = 8 virtual stages of
 * 10 layers, stage k = chunk x 4 + rank; the llama3 70B flavor. */
/* The llama70b fixture as torchtitan's llama3 70B flavor on pytorch-fsdp2,
 * ZeRO-3 with its overlaps. */
static void llama70b_fsdp2(fixture *f)
{
    llama70b(f);
    f->m.rope.theta = 500000;
    f->c.stack = STACK_PYTORCH_FSDP2;
    f->pl.s.zero = 3;
    f->pl.s.overlap_param_gather = true;
}

START_TEST(torchtitan_config)
{
    fixture f;
    char *t = NULL;
    llama70b_fsdp2(&f);
    ck_assert_int_eq(emit_to_string(EMIT_TORCHTITAN, &f, &t), 0);
    ck_assert_ptr_nonnull(strstr(t, "\n[model]\nname = \"llama3\"\nflavor = \"70B\"\n"));
    ck_assert_ptr_nonnull(strstr(t, "\n[training]\nlocal_batch_size = 32\n"
                                    "global_batch_size = 64\nseq_len = 8192\n"
                                    "mixed_precision_param = \"bfloat16\"\n"));
    ck_assert_ptr_nonnull(strstr(t, "\n[parallelism]\ndata_parallel_replicate_degree = 1\n"
                                    "data_parallel_shard_degree = 2\n"
                                    "fsdp_reshard_after_forward = \"always\"\n"
                                    "tensor_parallel_degree = 8\n"
                                    "pipeline_parallel_degree = 4\n"
                                    "pipeline_parallel_schedule = \"Interleaved1F1B\"\n"
                                    "pipeline_parallel_microbatch_size = 1\n"
                                    "module_fqns_per_model_part = [\n"
                                    "    [\"tok_embeddings\", \"layers.0\", "));
    /* virtual stage 1 is rank 1's chunk 0: layers 10-19; the last, 7,
     * rank 3's chunk 1: layers 70-79 and the head */
    ck_assert_ptr_nonnull(strstr(t, "\n    [\"layers.10\", \"layers.11\", "));
    ck_assert_ptr_nonnull(strstr(t, "\"layers.79\", \"norm\", \"output\"],\n]\n"
                                    "context_parallel_degree = 1\n\n"
                                    "[activation_checkpoint]\nmode = \"none\"\n"));
    ck_assert_ptr_null(strstr(t, "enable_async_tensor_parallel"));
    ck_assert_ptr_null(strstr(t, "[compile]"));
    free(t);
}
END_TEST

/* What torchtitan has no option for is refused with the reason, nothing
 * written: each case one knob away from the accepted plan above. */
START_TEST(torchtitan_refusals)
{
    static const char *const why_has[] = {
        "always shards the sequence", "only with compiled blocks", "DDP (zero=0) only",
        "fp32 only", "not recompute_layers=4: plan with --fix recompute_layers=0", "not in fp16",
        "has no zero=1",
        "wraps a model with expert parallelism in FSDP (ep=2)"};
    for (int c = 0; c < 8; c++) {
        fixture f;
        char *t = NULL;
        size_t len = 0;
        planner_error why;
        FILE *fp;
        llama70b(&f);
        f.c.stack = STACK_PYTORCH_FSDP2;
        f.pl.s.zero = 3;
        f.pl.s.overlap_param_gather = true;
        switch (c) {
        case 0: f.pl.s.sp = false; break;
        case 1: f.pl.s.tp_comm_overlap = true; break;
        case 2: f.pl.s.zero = 0; f.pl.s.overlap_param_gather = false; break;
        case 3: f.pl.s.grad_reduce_bf16 = true; break;
        case 4:   /* 4 of each 10-block chunk: no N (torchtitan_every_nth_block) */
            f.pl.s.recompute = RECOMPUTE_FULL;
            f.pl.s.recompute_layers = 4;
            break;
        case 5: f.m.prec = PREC_FP16; break;
        case 6: f.pl.s.zero = 1; break;
        default:   /* MoE with ep 2 under ZeRO-0 */
            f.m.moe.experts = 8;
            f.m.moe.top_k = 2;
            f.m.moe.expert_ffn = 14336;
            for (int i = 0; i < f.m.layers; i++)
                f.layer[i].moe = true;
            f.pl.s.ep = 2;
            f.pl.s.zero = 0;
            f.pl.s.overlap_param_gather = false;
            break;
        }
        first_layers(&f.m, &f.pl.s);
        fp = open_memstream(&t, &len);
        ck_assert_ptr_nonnull(fp);
        ck_assert_int_eq(emit_write(fp, EMIT_TORCHTITAN, MEGATRON_VERSION_DEFAULT, &f.m, &f.c,
                                    &f.pl, tu_err(&why)), PLANNER_E_INPUT);
        fclose(fp);
        ck_assert_uint_eq(len, 0);
        ck_assert_msg(strstr(why.msg, why_has[c]) != NULL, "case %d: %s", c, why.msg);
        free(t);
    }
}
END_TEST

/* Block recompute of 2 of each chunk's 10 blocks on the llama70b fixture
 * (pp 4, vpp 2: a rank's chunks hold its blocks 1-10 and 11-20) is
 * torchtitan's selective_ac_option 5, every 5th block counted over the
 * rank's chunks (_apply_layer_sac's _layer_sac_count): 5, 10 | 15, 20; 4
 * would take 4, 8 | 12, 16, 20.  3 of 10 is option 3 (3, 6, 9 | 12, 15,
 * 18); 4 of 10 has no N (N 3 takes 3 a chunk, N 2 five) and is refused
 * (torchtitan_refusals); every block is mode "full".  Before, every
 * partial block recompute was refused. */
START_TEST(torchtitan_every_nth_block)
{
    static const struct { int layers; const char *ac; } cases[] = {
        {2, "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"5\"\n"},
        {3, "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"3\"\n"},
        {10, "[activation_checkpoint]\nmode = \"full\"\n\n"},
        {0, "[activation_checkpoint]\nmode = \"full\"\n\n"}};
    for (int c = 0; c < 4; c++) {
        fixture f;
        char *t = NULL;
        llama70b_fsdp2(&f);
        f.pl.s.recompute = RECOMPUTE_FULL;
        f.pl.s.recompute_layers = cases[c].layers;
        ck_assert_int_eq(emit_to_string(EMIT_TORCHTITAN, &f, &t), 0);
        ck_assert_msg(strstr(t, cases[c].ac) != NULL, "case %d: %s", c, t);
        free(t);
    }
}
END_TEST

START_TEST(llama_gqa_interleaved)
{
    fixture f;
    char *t = NULL;
    llama70b(&f);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--group-query-attention", "");
    ck_flag(t, "--num-query-groups", "8");
    ck_no_flag(t, "--kv-channels");           /* 8192 / 64 = 128 */
    ck_flag(t, "--swiglu", "");
    ck_flag(t, "--normalization", "RMSNorm");
    ck_flag(t, "--position-embedding-type", "rope");
    ck_flag(t, "--untie-embeddings-and-output-weights", "");
    ck_flag(t, "--disable-bias-linear", "");
    ck_flag(t, "--max-position-embeddings", "131072");
    /* 80 layers / pp 4 = 20 per rank, vpp 2 -> 10 per virtual stage */
    ck_flag(t, "--num-layers-per-virtual-pipeline-stage", "10");
    ck_no_flag(t, "--num-virtual-stages-per-pipeline-rank");
    ck_no_flag(t, "--overlap-param-gather");
    check_flags_known(t);
    free(t);

    /* head_dim differing from hidden/heads: Gemma-like 3072 hidden, 16 x 256 */
    f.m.hidden = 3072; f.m.heads = 16; f.m.kv_heads = 16; f.m.head_dim = 256;
    set_layers(&f, 80);
    f.pl.s.tp = 4; f.pl.s.dp = 4;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--kv-channels", "256");
    ck_no_flag(t, "--group-query-attention");
    free(t);

    /* a Llama HF config's residual dropout 0: the plan counts no masks, the
     * launch must not run Megatron's default 0.1 */
    f.m.hidden_dropout = 0;
    f.m.has_hidden_dropout = true;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--hidden-dropout", "0");
    check_flags_known(t);
    free(t);

    /* any other value as written, not in 17 digits (0.050000000000000003) */
    f.m.hidden_dropout = 0.05;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--hidden-dropout", "0.05");
    free(t);
}
END_TEST

START_TEST(uneven_first_last)
{
    fixture f;
    char *t = NULL;
    /* Llama 3.1 405B: 126 layers on PP16 as 7 + 14 x 8 + 7 */
    llama70b(&f);
    f.m.heads = 128; f.m.hidden = 16384; f.m.ffn_hidden = 53248;
    set_layers(&f, 126);
    strategy *s = &f.pl.s;
    s->tp = 8; s->pp = 16; s->dp = 1; s->vpp = 1; s->gbs = 64;
    s->n_stages = 16;
    for (int i = 0; i < 16; i++) {
        s->stage[i].n_layers = (i == 0 || i == 15) ? 7 : 8;
        s->stage[i].group = 0;
        s->stage[i].tp = s->tp;
        s->stage[i].dp = s->dp;
    }
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--decoder-first-pipeline-num-layers", "7");
    ck_flag(t, "--decoder-last-pipeline-num-layers", "7");
    ck_no_flag(t, "--pipeline-model-parallel-layout");
    check_flags_known(t);
    free(t);

    /* the same with 2 virtual stages: 7 layers do not make 2 equal chunks,
     * which the cost model's chunks (strategy_chunk_layers) assume: emit
     * refuses it with the search's rule */
    s->vpp = 2;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), PLANNER_E_INPUT);
    free(t);
    {
        planner_error why, why2;
        plan pl = f.pl;
        ck_assert_int_eq(emit_check(&f.m, &f.c, &pl, tu_err(&why)), PLANNER_E_INPUT);
        ck_assert_int_eq(strategy_check(&f.m, &pl.s, tu_err(&why2)), PLANNER_E_INPUT);
        ck_assert_str_eq(why.msg, why2.msg);
    }

    /* first/last with vpp when the counts divide: 8 + 14 x 8 + 6, vpp 2 */
    for (int i = 0; i < 16; i++)
        s->stage[i].n_layers = i == 15 ? 6 : 8;
    set_layers(&f, 126);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_no_flag(t, "--decoder-first-pipeline-num-layers");
    ck_flag(t, "--decoder-last-pipeline-num-layers", "6");
    ck_flag(t, "--num-virtual-stages-per-pipeline-rank", "2");
    ck_no_flag(t, "--num-layers-per-virtual-pipeline-stage");
    free(t);
}
END_TEST

/* Llama 3.1 405B as Megatron-Bridge runs it on 1,024 H100: tp 8 pp 8 cp 2
 * vpp 8, the embedding and the loss counted as layers ((126 + 2) / 64 = 2
 * per virtual chunk): the two account flags and the virtual stages per
 * rank, no layout, no first/last counts, no layers-per-virtual-stage (which
 * Megatron would divide 126 / 8 by). */
START_TEST(uneven_account_split)
{
    fixture f;
    char *t = NULL;
    llama70b(&f);
    f.m.heads = 128; f.m.hidden = 16384; f.m.ffn_hidden = 53248;
    set_layers(&f, 126);
    make_cluster(&f, "H100-SXM", 128);
    strategy *s = &f.pl.s;
    s->tp = 8; s->pp = 8; s->dp = 8; s->cp = 2; s->vpp = 8; s->gbs = 512;
    ck_assert_int_eq(strategy_split_account(s, 126, 0), 0);
    ck_assert_int_eq(s->stage[0].n_layers, 15);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_assert_ptr_nonnull(strstr(t, "--account-for-embedding-in-pipeline-split"));
    ck_assert_ptr_nonnull(strstr(t, "--account-for-loss-in-pipeline-split"));
    ck_flag(t, "--num-virtual-stages-per-pipeline-rank", "8");
    ck_no_flag(t, "--pipeline-model-parallel-layout");
    ck_no_flag(t, "--decoder-first-pipeline-num-layers");
    ck_no_flag(t, "--decoder-last-pipeline-num-layers");
    ck_no_flag(t, "--num-layers-per-virtual-pipeline-stage");
    ck_assert_int_ne(check_flags_known(t), 0);
    free(t);
    /* pp 16 vpp 8: a chunk of 1 unit, rank 0's first holds only the
     * embedding (7 layers on rank 0 for 8 chunks): still emitted */
    make_cluster(&f, "H100-SXM", 32);
    s->tp = 4; s->pp = 16; s->dp = 4; s->cp = 1; s->vpp = 8; s->gbs = 1536;
    ck_assert_int_eq(strategy_split_account(s, 126, 0), 0);
    ck_assert_int_eq(s->stage[0].n_layers, 7);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--num-virtual-stages-per-pipeline-rank", "8");
    free(t);
}
END_TEST

START_TEST(uneven_layout)
{
    fixture f;
    char *t = NULL, v[512];
    gpt3(&f);
    set_layers(&f, 13);
    strategy *s = &f.pl.s;
    s->pp = 4; s->dp = 4; s->n_stages = 4;
    int n[4] = {3, 4, 3, 3};   /* middle ranks differ: no first/last form */
    for (int i = 0; i < 4; i++)
        s->stage[i].n_layers = n[i];
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--pipeline-model-parallel-layout", "'Et*3|t*4|t*3|t*3L'");
    ck_no_flag(t, "--decoder-first-pipeline-num-layers");
    free(t);

    /* vpp 2, 16 layers as 4,6,4,2: chunks 2+2, 3+3, 2+2, 1+1, listed
     * virtual-stage-major as Megatron's PipelineParallelLayerLayout reads */
    set_layers(&f, 16);
    int n2[4] = {4, 6, 4, 2};
    for (int i = 0; i < 4; i++)
        s->stage[i].n_layers = n2[i];
    s->vpp = 2;
    s->gbs = 64;   /* 64 / (1 x 4) = 16 micro-batches, % pp == 0 */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_assert_ptr_nonnull(flag_value(t, "--pipeline-model-parallel-layout", v, sizeof v));
    ck_assert_str_eq(v, "'Et*2|t*3|t*2|t|t*2|t*3|t*2|tL'");
    free(t);

    /* multi-token prediction: its layers after the decoder layers, in the
     * last stage with the loss; gpt3's learned positions cannot take it */
    f.m.mtp_layers = 2;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), PLANNER_E_INPUT);
    free(t);
    f.m.position = POS_ROPE;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--mtp-num-layers", "2");
    ck_assert_ptr_nonnull(flag_value(t, "--pipeline-model-parallel-layout", v, sizeof v));
    ck_assert_str_eq(v, "'Et*2|t*3|t*2|t|t*2|t*3|t*2|tm*2L'");
    /* the MTP layers are costed (layer_cost.c mtp_cost): no note */
    ck_assert_ptr_null(strstr(t, "multi-token-prediction"));
    free(t);
}
END_TEST

START_TEST(recompute_full)
{
    fixture f;
    char *t = NULL;
    gpt3(&f);
    f.pl.s.recompute = RECOMPUTE_FULL;
    f.pl.s.recompute_layers = 0;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--recompute-granularity", "full");
    ck_flag(t, "--recompute-method", "uniform");
    ck_flag(t, "--recompute-num-layers", "1");
    free(t);

    /* 12 layers per rank as 2 chunks of 6; block of 3 per chunk: Megatron
     * counts --recompute-num-layers per model chunk, as the plan does */
    f.pl.s.vpp = 2;
    f.pl.s.gbs = 1536;   /* 768 micro-batches, % 8 == 0 */
    f.pl.s.recompute_layers = 3;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--recompute-method", "block");
    ck_flag(t, "--recompute-num-layers", "3");
    ck_flag(t, "--num-layers-per-virtual-pipeline-stage", "6");
    ck_assert_ptr_null(strstr(t, "rounded up"));
    free(t);

    /* selective recompute of the dense MLP and the norms: Megatron's list */
    f.pl.s.recompute = RECOMPUTE_SELECTIVE;
    f.pl.s.recompute_layers = 0;
    f.pl.s.recompute_modules = RC_MOD_LAYERNORM | RC_MOD_MLP;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--recompute-granularity", "selective");
    ck_assert_ptr_nonnull(strstr(t, "--recompute-modules layernorm mlp "));
    ck_no_flag(t, "--recompute-num-layers");
    free(t);
    f.pl.s.recompute_modules = RC_MOD_CORE_ATTN;   /* Megatron's default: no list */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_no_flag(t, "--recompute-modules");
    free(t);
    f.pl.s.recompute = RECOMPUTE_FULL;
    f.pl.s.recompute_modules = 0;

    /* uniform groups of 2 of the 6 layers of each chunk */
    f.pl.s.recompute_layers = 2;
    f.pl.s.recompute_method = RECOMPUTE_UNIFORM;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--recompute-method", "uniform");
    ck_flag(t, "--recompute-num-layers", "2");
    free(t);
}
END_TEST

START_TEST(precision_and_sharding)
{
    fixture f;
    char *t = NULL;
    gpt3(&f);
    f.m.prec = PREC_FP16;
    f.pl.s.zero = 3;
    f.pl.s.overlap_param_gather = false;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--fp16", "");
    ck_no_flag(t, "--bf16");
    ck_no_flag(t, "--use-distributed-optimizer");
    ck_flag(t, "--use-megatron-fsdp", "");
    ck_flag(t, "--data-parallel-sharding-strategy", "optim_grads_params");
    ck_flag(t, "--ckpt-format", "fsdp_dtensor");
    check_flags_known(t);
    free(t);

    f.m.prec = PREC_FP8;
    f.pl.s.zero = 0;
    f.pl.s.tp_comm_overlap = true;
    f.pl.s.cp = 2;
    f.pl.s.dp = 1;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--bf16", "");
    ck_flag(t, "--fp8-format", "hybrid");
    ck_flag(t, "--tp-comm-overlap", "");
    ck_flag(t, "--context-parallel-size", "2");
    /* zero 0: Megatron refuses FP8 parameters without the distributed
     * optimizer, and the plan's memory counts bf16 weights */
    ck_no_flag(t, "--fp8-param-gather");
    check_flags_known(t);
    free(t);
    /* with it the plan's memory counts FP8 primary weights (1 B on
     * Blackwell): the launch must keep them so (memory_fp8_primary_weights) */
    f.pl.s.zero = 1;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--use-distributed-optimizer", "");
    ck_flag(t, "--fp8-param-gather", "");
    check_flags_known(t);
    free(t);
    /* opt_state fp32_rem: the main weights' 16-bit remainders need bf16
     * parameters, so no FP8 primary weights; the precision-aware optimizer
     * alone (fp32 moments, Megatron-Core's defaults) */
    f.pl.s.opt_state = OPT_STATE_FP32_REM;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_no_flag(t, "--fp8-param-gather");
    ck_flag(t, "--use-precision-aware-optimizer", "");
    ck_no_flag(t, "--exp-avg-dtype");
    check_flags_known(t);
    free(t);
    f.pl.s.opt_state = OPT_STATE_FP32;
    f.m.prec = PREC_BF16;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_no_flag(t, "--fp8-param-gather");
    free(t);
}
END_TEST

/* Issue 10: the search took tp 16 for Llama 3 70B (8 query groups) while
 * emit refused it.  Now both apply strategy_check(): the same verdict and
 * the same reason (Megatron: num_query_groups % tp == 0). */
START_TEST(gqa_tp_same_verdict)
{
    fixture f;
    planner_error plan_why, emit_why;
    llama70b(&f);
    first_layers(&f.m, &f.pl.s);
    ck_assert_int_eq(strategy_check(&f.m, &f.pl.s, tu_err(&plan_why)), 0);
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&emit_why)), 0);
    f.pl.s.tp = 16;
    f.pl.s.dp = 1;   /* 16 x 4 x 1 = 64 GPUs, 64 heads % 16 == 0 */
    even_stages(&f.pl.s, 80);
    first_layers(&f.m, &f.pl.s);
    ck_assert_int_eq(strategy_check(&f.m, &f.pl.s, tu_err(&plan_why)), PLANNER_E_INPUT);
    ck_assert_str_eq(plan_why.msg, "8 query groups are not divisible by tp=16");
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&emit_why)), PLANNER_E_INPUT);
    ck_assert_str_eq(emit_why.msg, plan_why.msg);
    /* MLA has no query groups: only the heads bind */
    f.m.mla.kv_lora_rank = 512;
    ck_assert_msg(strategy_check(&f.m, &f.pl.s, tu_err(&plan_why)) == 0, "%s", plan_why.msg);
}
END_TEST

START_TEST(rules_refused)
{
    fixture f;
    planner_error why;
    planner_error rule;
    gpt3(&f);
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), 0);

    f.pl.s.sp = false;
    f.pl.s.tp_comm_overlap = true;
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "--tp-comm-overlap"));

    gpt3(&f);
    f.pl.s.zero = 0;   /* --overlap-param-gather without the distributed optimizer */
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "--overlap-param-gather"));

    gpt3(&f);
    f.pl.s.gbs = 1535;
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), PLANNER_E_INPUT);

    gpt3(&f);
    f.m.heads = 100;   /* 100 % 8 != 0 */
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), PLANNER_E_INPUT);

    gpt3(&f);
    f.pl.s.vpp = 2;
    f.pl.s.gbs = 12;   /* 6 micro-batches < pp 8 */
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), PLANNER_E_INPUT);

    gpt3(&f);
    f.pl.s.cp = 3;     /* 2048 % 6 != 0 */
    f.pl.s.dp = 1;
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), PLANNER_E_INPUT);

    gpt3(&f);
    f.pl.s.stage[0].n_layers = 11;   /* stages no longer cover 96 layers */
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), PLANNER_E_INPUT);

    /* emit_write refuses the same and prints nothing */
    char *t = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&t, &len);
    ck_assert_int_eq(emit_write(fp, EMIT_SLURM, MEGATRON_VERSION_DEFAULT, &f.m, &f.c, &f.pl,
                                tu_err(&why)), PLANNER_E_INPUT);
    fclose(fp);
    ck_assert_uint_eq(len, 0);
    free(t);
}
END_TEST

START_TEST(slurm_script)
{
    fixture f;
    char *t = NULL;
    gpt3(&f);
    ck_assert_int_eq(emit_to_string(EMIT_SLURM, &f, &t), 0);
    /* 8 x 8 x 2 = 128 GPUs on 8-GPU nodes: 16 nodes */
    ck_assert_ptr_nonnull(strstr(t, "#!/bin/bash\n"));
    ck_assert_ptr_nonnull(strstr(t, "#SBATCH --nodes=16\n"));
    ck_assert_ptr_nonnull(strstr(t, "#SBATCH --ntasks-per-node=1\n"));
    ck_assert_ptr_nonnull(strstr(t, "#SBATCH --gpus-per-node=8\n"));
    ck_assert_ptr_nonnull(strstr(t, "#SBATCH --exclusive\n"));
    ck_assert_ptr_nonnull(strstr(t, "scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1"));
    ck_assert_ptr_nonnull(strstr(t, "--node_rank=\"$SLURM_NODEID\""));
    ck_assert_ptr_nonnull(strstr(t, "--nproc_per_node=8 --nnodes=16"));
    ck_assert_ptr_nonnull(strstr(t, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n"));  /* H100, tp 8 */
    ck_assert_ptr_nonnull(strstr(t, "NCCL_"));
    ck_assert_ptr_nonnull(strstr(t, "DATA_PATH=\"${DATA_PATH:-/path/to/"));
    ck_assert_ptr_nonnull(strstr(t, "TOKENIZER_MODEL=\"${TOKENIZER_MODEL:-/path/to/"));
    ck_assert_ptr_nonnull(strstr(t, "    --tensor-model-parallel-size 8\n"));
    check_flags_known(t);
    ck_assert_int_eq(run_on_text("bash -n", t), 0);
    if (have_shellcheck())
        ck_assert_int_eq(run_on_text("shellcheck", t), 0);
    free(t);

    /* Blackwell: no CUDA_DEVICE_MAX_CONNECTIONS */
    make_cluster(&f, "B200", 16);
    ck_assert_int_eq(emit_to_string(EMIT_SLURM, &f, &t), 0);
    ck_assert_ptr_null(strstr(t, "CUDA_DEVICE_MAX_CONNECTIONS"));
    free(t);

    /* Hopper without tp or cp: none either */
    gpt3(&f);
    f.pl.s.tp = 1; f.pl.s.sp = false; f.pl.s.dp = 16;
    ck_assert_int_eq(emit_to_string(EMIT_SLURM, &f, &t), 0);
    ck_assert_ptr_null(strstr(t, "CUDA_DEVICE_MAX_CONNECTIONS"));
    free(t);
}
END_TEST

START_TEST(torchrun_script)
{
    fixture f;
    char *t = NULL;
    gpt3(&f);
    ck_assert_int_eq(emit_to_string(EMIT_TORCHRUN, &f, &t), 0);
    ck_assert_ptr_nonnull(strstr(t, "exec torchrun --nproc_per_node=8 --nnodes=16 "
                                    "--node_rank=\"$NODE_RANK\""));
    ck_assert_ptr_nonnull(
        strstr(t, "--master_addr=\"$MASTER_ADDR\" --master_port=\"$MASTER_PORT\""));
    ck_assert_ptr_nonnull(strstr(t, "pretrain_gpt.py\" \"${MEGATRON_ARGS[@]}\""));
    check_flags_known(t);
    ck_assert_int_eq(run_on_text("bash -n", t), 0);
    if (have_shellcheck())
        ck_assert_int_eq(run_on_text("shellcheck", t), 0);
    free(t);

    /* 4 GPUs: one node, 4 processes */
    gpt3(&f);
    f.pl.s.tp = 4; f.pl.s.pp = 1; f.pl.s.dp = 1; f.pl.s.overlap_param_gather = false;
    f.pl.s.gbs = 8;
    even_stages(&f.pl.s, 96);
    ck_assert_int_eq(emit_to_string(EMIT_TORCHRUN, &f, &t), 0);
    ck_assert_ptr_nonnull(strstr(t, "--nproc_per_node=4 --nnodes=1 "));
    if (have_shellcheck())
        ck_assert_int_eq(run_on_text("shellcheck", t), 0);
    free(t);

    /* 12 GPUs do not fill 8-GPU nodes */
    f.pl.s.dp = 3; f.pl.s.gbs = 12;
    planner_error why;
    int nodes, ppn;
    ck_assert_int_eq(emit_launch_shape(&f.c, &f.pl, &nodes, &ppn, tu_err(&why)), PLANNER_E_INPUT);
}
END_TEST

/* Two node groups: group 0 of H100 nodes with 8 GPUs, group 1 of A100
 * nodes with 4 GPUs.  Llama 3 70B, tp 4, dp 4, pp 2: stage 0 (40 layers) on
 * the A100s, stage 1 on the H100s; 16 ranks per stage. */
static void hetero(fixture *f)
{
    llama70b(f);
    const gpu_spec *a100 = catalog_find("A100-SXM-80GB");
    ck_assert_ptr_nonnull(a100);
    snprintf(f->c.name, sizeof f->c.name, "test-mixed");
    f->c.n_groups = 2;
    f->group[0].nodes = 4;
    snprintf(f->group[1].name, sizeof f->group[1].name, "a100-pod");
    f->group[1].gpu = *a100;
    f->group[1].nodes = 6;
    f->group[1].gpus_per_node = 4;
    f->group[1].intra_bytes_per_s = a100->intra_node_bytes_per_s;
    f->group[1].inter_bytes_per_s = 25e9;
    strategy *s = &f->pl.s;
    s->tp = 4; s->pp = 2; s->dp = 4; s->vpp = 1; s->gbs = 64;
    even_stages(s, 80);
    s->stage[0].group = 1;
    s->stage[1].group = 0;
}

START_TEST(hetero_slurm)
{
    fixture f;
    char *t = NULL;
    hetero(&f);
    ck_assert_int_eq(emit_to_string(EMIT_SLURM, &f, &t), 0);
    /* component 0: stage 0 = global ranks 0-15 on 16 / 4 = 4 A100 nodes,
     * node ranks 0-3; component 1: stage 1 = ranks 16-31 on 16 / 8 = 2 H100
     * nodes, node ranks 4-5 (torchrun's global rank of a node's first process
     * is the sum of the processes of the lower node ranks: 16 and 24) */
    const char *c0 = strstr(t, "#SBATCH --nodes=4\n#SBATCH --ntasks-per-node=1\n"
                               "#SBATCH --gpus-per-node=4\n");
    const char *het = strstr(t, "\n#SBATCH hetjob\n");
    const char *c1 = strstr(t, "#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=1\n"
                               "#SBATCH --gpus-per-node=8\n");
    ck_assert_ptr_nonnull(c0);
    ck_assert_ptr_nonnull(het);
    ck_assert_ptr_nonnull(c1);
    ck_assert(c0 < het && het < c1);
    ck_assert_ptr_nonnull(strstr(t, "#SBATCH --constraint=PLACEHOLDER-feature-A100-SXM-80GB\n"));
    ck_assert_ptr_nonnull(strstr(t, "#SBATCH --constraint=PLACEHOLDER-feature-H100-SXM\n"));
    ck_assert_ptr_nonnull(strstr(t, "#SBATCH --partition=PLACEHOLDER-partition-A100-SXM-80GB\n"));
    ck_assert_ptr_nonnull(
        strstr(t, "# model llama3-70b on test-mixed (A100-SXM-80GB + H100-SXM)\n"));
    ck_assert_ptr_nonnull(strstr(t, "stages 0-0, 40 layers, global ranks 0-15, 4 nodes x 4 GPUs, "
                                    "node ranks 0-3\n"));
    ck_assert_ptr_nonnull(strstr(t, "stages 1-1, 40 layers, global ranks 16-31, 2 nodes x 8 GPUs, "
                                    "node ranks 4-5\n"));
    ck_assert_ptr_nonnull(strstr(t, "--het-group=0 --ntasks-per-node=1 bash -c \"$LAUNCH\" "
                                    "launch 0 3 4 "));
    ck_assert_ptr_nonnull(strstr(t, ": --het-group=1 --ntasks-per-node=1 bash -c \"$LAUNCH\" "
                                    "launch 4 5 8 "));
    ck_assert_ptr_nonnull(strstr(t, "SLURM_JOB_NODELIST_HET_GROUP_$k"));
    ck_assert_ptr_nonnull(strstr(t, "MASTER_ADDR=\"${HET_NODES[0]}\""));
    ck_assert_ptr_nonnull(strstr(t, "\nNNODES=6\n"));
    /* every stage's GPU runs FlashAttention: still flash */
    ck_assert_ptr_nonnull(strstr(t, "    --attention-backend flash\n"));
    check_flags_known(t);
    ck_assert_int_eq(run_on_text("bash -n", t), 0);
    if (have_shellcheck())
        ck_assert_int_eq(run_on_text("shellcheck", t), 0);
    free(t);

    /* the torchrun form: node ranks pick the group and its processes */
    ck_assert_int_eq(emit_to_string(EMIT_TORCHRUN, &f, &t), 0);
    ck_assert_ptr_nonnull(strstr(t, "#   4 nodes of a100-pod (A100-SXM-80GB): NODE_RANK=0..3, "
                                    "4 processes each (stages 0-0)\n"));
    ck_assert_ptr_nonnull(strstr(t, "#   2 nodes of main (H100-SXM): NODE_RANK=4..5, "
                                    "8 processes each (stages 1-1)\n"));
    ck_assert_ptr_nonnull(strstr(t, "if [ \"$NODE_RANK\" -ge 0 ] && "
                                    "[ \"$NODE_RANK\" -le 3 ]; then\n    NPROC=4 "));
    ck_assert_ptr_nonnull(strstr(t, "elif [ \"$NODE_RANK\" -ge 4 ] && "
                                    "[ \"$NODE_RANK\" -le 5 ]; then\n    NPROC=8 "));
    ck_assert_ptr_nonnull(strstr(t, "exec torchrun --nproc_per_node=\"$NPROC\" --nnodes=6 "));
    ck_assert_int_eq(run_on_text("bash -n", t), 0);
    if (have_shellcheck())
        ck_assert_int_eq(run_on_text("shellcheck", t), 0);
    free(t);

    /* the Megatron list alone names both GPUs and the stage map */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_assert_ptr_nonnull(strstr(t, "(A100-SXM-80GB + H100-SXM)\n"));
    ck_assert_ptr_nonnull(strstr(t, "stages 0-0, 40 layers, global ranks 0-15\n"));
    free(t);

    /* three runs: A100, H100, A100 again (pp 3, 16 ranks each) */
    hetero(&f);
    f.pl.s.pp = 3;
    even_stages(&f.pl.s, 78);
    set_layers(&f, 78);
    f.pl.s.stage[0].group = 1;
    f.pl.s.stage[2].group = 1;
    f.group[1].nodes = 8;
    emit_component comp[8];
    int n = 0;
    planner_error why;
    ck_assert_int_eq(emit_components(&f.c, &f.pl, comp, 8, &n, tu_err(&why)), PLANNER_OK);
    ck_assert_int_eq(n, 3);
    ck_assert_int_eq(comp[0].nodes, 4);
    ck_assert_int_eq(comp[1].nodes, 2);
    ck_assert_int_eq(comp[1].first_node, 4);
    ck_assert_int_eq(comp[2].first_node, 6);
    ck_assert_int_eq(comp[2].first_rank, 32);
    /* 4 + 4 A100 nodes of the 7 the group has: refused */
    f.group[1].nodes = 7;
    ck_assert_int_eq(emit_components(&f.c, &f.pl, comp, 8, &n, tu_err(&why)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(why.msg, "a100-pod"));
}
END_TEST

START_TEST(hetero_refused)
{
    fixture f;
    planner_error why;
    planner_error rule;
    char *t = NULL;
    size_t len = 0;
    /* a different TP degree on one stage: Megatron has one */
    hetero(&f);
    f.pl.s.stage[1].tp = 8;
    f.pl.s.stage[1].dp = 2;
    ck_assert_int_eq(emit_check(&f.m, &f.c, &f.pl, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "one TP and one DP degree"));
    FILE *fp = open_memstream(&t, &len);
    ck_assert_int_eq(emit_write(fp, EMIT_SLURM, MEGATRON_VERSION_DEFAULT, &f.m, &f.c, &f.pl,
                                tu_err(&why)), PLANNER_E_INPUT);
    fclose(fp);
    ck_assert_uint_eq(len, 0);
    free(t);

    /* tp 2, dp 3: 6 ranks per stage do not fill 8-GPU H100 nodes */
    hetero(&f);
    f.pl.s.tp = 2; f.pl.s.dp = 3; f.pl.s.gbs = 48; f.pl.s.tp_comm_overlap = false;
    even_stages(&f.pl.s, 80);
    f.pl.s.stage[0].group = 1;
    t = NULL;
    fp = open_memstream(&t, &len);
    ck_assert_int_eq(emit_write(fp, EMIT_TORCHRUN, MEGATRON_VERSION_DEFAULT, &f.m, &f.c, &f.pl,
                                tu_err(&why)), PLANNER_E_INPUT);
    fclose(fp);
    ck_assert_uint_eq(len, 0);
    ck_assert_ptr_nonnull(strstr(why.msg, "not whole nodes"));
    free(t);
}
END_TEST


/* ---- running the scripts, every external program stubbed ---------------- */

typedef struct stub_run {
    int status;             /* the script's exit status */
    char *torchrun;         /* torchrun's arguments, one per line (owned) */
    char *notfound;         /* commands run that are neither stubs nor builtins */
    bool pwned;             /* the hostile names' command ran */
    char *err;              /* the script's stderr */
} stub_run;

static char *slurp(const char *path)
{
    FILE *fp = fopen(path, "r");
    char *text = calloc(1, 1 << 16);
    ck_assert_ptr_nonnull(text);
    if (fp != NULL) {
        size_t n = fread(text, 1, (1 << 16) - 1, fp);
        text[n] = '\0';
        fclose(fp);
    }
    return text;
}

/* Runs `text` under tests/stubs/run.sh with the environment assignments
 * `env` (a shell-quoted string, may be ""). */
static stub_run run_stubbed(const char *text, const char *env)
{
    char dir[] = "/tmp/planner-stub-XXXXXX", path[256], cmd[2048];
    stub_run r;
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/script.sh", dir);
    FILE *fp = fopen(path, "w");
    ck_assert_ptr_nonnull(fp);
    fputs(text, fp);
    fclose(fp);
    snprintf(cmd, sizeof cmd, "tests/stubs/run.sh %s/out %s %s 2> %s/err", dir, path, env, dir);
    int rc = system(cmd);
    r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
    snprintf(path, sizeof path, "%s/out/torchrun.log", dir);
    r.torchrun = slurp(path);
    snprintf(path, sizeof path, "%s/out/notfound", dir);
    r.notfound = slurp(path);
    snprintf(path, sizeof path, "%s/out/pwned", dir);
    r.pwned = access(path, F_OK) == 0;
    snprintf(path, sizeof path, "%s/err", dir);
    r.err = slurp(path);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
    return r;
}

static void stub_run_free(stub_run *r)
{
    free(r->torchrun);
    free(r->notfound);
    free(r->err);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (; *text; text++)
        n += *text == '\n';
    return n;
}

/* The Slurm allocation of the fixture's plans: 16 nodes n0..n15 (gpt3), or
 * the hetero() job's two het groups. */
#define SLURM_16 "SLURM_NNODES=16 " \
    "SLURM_JOB_NODELIST=n0,n1,n2,n3,n4,n5,n6,n7,n8,n9,n10,n11,n12,n13,n14,n15"
#define SLURM_HET "SLURM_JOB_NODELIST_HET_GROUP_0=a0,a1,a2,a3 SLURM_JOB_NODELIST_HET_GROUP_1=h0,h1"

/* The sbatch script runs torchrun only in an allocation of the plan's size
 * (torchrun's --nnodes would wait for missing nodes) and says why not. */
START_TEST(slurm_allocation_checked)
{
    fixture f;
    char *t = NULL;
    gpt3(&f);
    ck_assert_int_eq(emit_to_string(EMIT_SLURM, &f, &t), 0);
    stub_run r = run_stubbed(t, SLURM_16);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_ptr_nonnull(strstr(r.torchrun, "\n--nproc_per_node=8\n--nnodes=16\n--node_rank=0\n"
                                             "--master_addr=n0\n"));
    ck_assert_ptr_nonnull(strstr(r.torchrun, "\n/stub/Megatron-LM/pretrain_gpt.py\n"
                                             "--num-layers\n96\n"));
    ck_assert_str_eq(r.notfound, "");
    stub_run_free(&r);

    r = run_stubbed(t, "SLURM_NNODES=15 SLURM_JOB_NODELIST=n0,n1");
    ck_assert_int_eq(r.status, 1);
    ck_assert_str_eq(r.torchrun, "");
    ck_assert_ptr_nonnull(strstr(r.err, "the allocation has 15 nodes, the plan needs 16"));
    stub_run_free(&r);

    r = run_stubbed(t, "");   /* not inside Slurm */
    ck_assert_int_ne(r.status, 0);
    ck_assert_str_eq(r.torchrun, "");
    ck_assert_ptr_nonnull(strstr(r.err, "not inside a Slurm allocation"));
    stub_run_free(&r);
    free(t);
}
END_TEST

/* CUDA_DEVICE_MAX_CONNECTIONS as validate_args needs it: unset with Megatron
 * FSDP (asserted != 1), 1 with tp or cp > 1 before Blackwell (asserted == 1)
 * and with TP communication overlap, otherwise the site's value.  Checked in
 * the environment torchrun starts with, the site having set 4. */
START_TEST(max_connections)
{
    static const struct {
        const char *gpu;
        int tp, zero;
        bool overlap;
        const char *expect;     /* at torchrun */
    } cases[] = {
        {"H100-SXM", 8, 1, false, "1"},         /* TP before Blackwell */
        {"H100-SXM", 8, 3, true, "(unset)"},    /* FSDP: its assertion is hard */
        {"H100-SXM", 8, 2, false, "(unset)"},
        {"B200", 8, 1, true, "1"},              /* TP overlap */
        {"B200", 8, 1, false, "4"},             /* nothing asked: the site's */
        {"H100-SXM", 1, 1, false, "4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fixture f;
        char *t = NULL, expect[64];
        gpt3(&f);
        make_cluster(&f, cases[i].gpu, 16);
        f.pl.s.tp = cases[i].tp;
        f.pl.s.dp = 16 / cases[i].tp;
        f.pl.s.sp = f.pl.s.tp > 1;
        f.pl.s.zero = cases[i].zero;
        f.pl.s.overlap_param_gather = cases[i].zero == 1;
        f.pl.s.tp_comm_overlap = cases[i].overlap;
        even_stages(&f.pl.s, 96);
        for (emit_kind k = EMIT_SLURM; k <= EMIT_TORCHRUN; k++) {
            ck_assert_int_eq(emit_to_string(k, &f, &t), 0);
            stub_run r = run_stubbed(t, SLURM_16 " CUDA_DEVICE_MAX_CONNECTIONS=4");
            ck_assert_msg(r.status == 0, "case %zu: status %d: %s", i, r.status, r.err);
            snprintf(expect, sizeof expect, "CUDA_DEVICE_MAX_CONNECTIONS=%s\n", cases[i].expect);
            ck_assert_msg(strncmp(r.torchrun, expect, strlen(expect)) == 0,
                          "case %zu kind %d: %s, expected %s", i, (int)k, r.torchrun, expect);
            stub_run_free(&r);
            free(t);
        }
    }
}
END_TEST

/* Names a user writes (model, cluster, node groups) reach the scripts only as
 * quoted words: with each hostile name (newline, command substitution,
 * backticks, quotes, ;, #, backslash-newline, carriage return, non-UTF-8)
 * as every name, each kind of output has the same number of lines as with
 * plain names, passes bash -n, and run with every program stubbed runs no
 * command but the launch's own (nothing logged as not found, `pwned` never
 * run) and still reaches torchrun. */
START_TEST(hostile_names)
{
    static const char *const names[] = {
        "gpt\npwned #",
        "$(pwned)",
        "`pwned`",
        "x'; pwned; '",
        "x\"; pwned; \"",
        "a;pwned",
        "#\npwned\n#",
        "\xff\xfe$(pwned)\n",
        "x\\\npwned",
        "c\rpwned",
        "'$(pwned)'\"`pwned`\"",
        "caf\xc3\xa9 $(pwned)",
        "",
    };
    for (int het = 0; het <= 1; het++) {
        for (emit_kind k = EMIT_MEGATRON; k <= EMIT_TORCHRUN; k++) {
            fixture f;
            char *plain = NULL;
            if (het)
                hetero(&f);
            else
                gpt3(&f);
            ck_assert_int_eq(emit_to_string(k, &f, &plain), 0);
            for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
                char *t = NULL;
                snprintf(f.m.name, sizeof f.m.name, "%s", names[i]);
                snprintf(f.c.name, sizeof f.c.name, "%s", names[i]);
                snprintf(f.group[0].name, sizeof f.group[0].name, "%s", names[i]);
                snprintf(f.group[1].name, sizeof f.group[1].name, "%s1", names[i]);
                ck_assert_int_eq(emit_to_string(k, &f, &t), 0);
                ck_assert_msg(count_lines(t) == count_lines(plain), "name %zu kind %d: %d lines, "
                              "%d with plain names", i, (int)k, count_lines(t), count_lines(plain));
                ck_assert_int_eq(run_on_text("bash -n", t), 0);
                stub_run r = run_stubbed(t, het ? SLURM_HET : SLURM_16);
                ck_assert_msg(!r.pwned, "name %zu kind %d: the name's command ran", i, (int)k);
                if (k == EMIT_MEGATRON) {
                    /* the argument list alone: its first flag is the one command */
                    ck_assert_str_eq(r.notfound, "--num-layers\n");
                } else {
                    ck_assert_msg(r.status == 0, "name %zu kind %d: status %d: %s", i, (int)k,
                                  r.status, r.err);
                    ck_assert_str_eq(r.notfound, "");
                    ck_assert_ptr_nonnull(strstr(r.torchrun, "\n--num-layers\n"));
                }
                if (i == 0 && k != EMIT_MEGATRON && have_shellcheck())
                    ck_assert_int_eq(run_on_text("shellcheck", t), 0);
                stub_run_free(&r);
                free(t);
            }
            free(plain);
        }
    }
}
END_TEST

/* --megatron-version: every release's flags, each checked against that
 * release's list, and the release named in the header. */
START_TEST(versions)
{
    static const struct { const char *text; int v; } parse[] = {
        {"0.15", MEGATRON_0_15}, {"0.16", MEGATRON_0_16}, {"0.17.0", MEGATRON_0_17},
        {"core_v0.18.0", MEGATRON_0_18}, {"0.19", MEGATRON_0_19}, {"0.14", -1}, {"0.1", -1},
        {"0.150", -1}, {"", -1}, {"core_v0.20.0", -1}, {"0.19.1", -1},
    };
    for (size_t i = 0; i < sizeof parse / sizeof parse[0]; i++) {
        megatron_version v = MEGATRON_VERSION_COUNT;
        int rc = megatron_version_parse(parse[i].text, &v);
        ck_assert_msg(parse[i].v < 0 ? rc == -1 : rc == 0 && (int)v == parse[i].v, "'%s'",
                      parse[i].text);
    }
    ck_assert_str_eq(megatron_version_tag(MEGATRON_VERSION_DEFAULT), "core_v0.19.0");
    ck_assert_str_eq(megatron_version_tag(MEGATRON_0_15), "core_v0.15.0");
    for (int v = 0; v < MEGATRON_VERSION_COUNT; v++) {
        for (int which = 0; which < 3; which++) {
            fixture f;
            char *t = NULL, head[128];
            if (which == 0)
                gpt3(&f);
            else if (which == 1)
                llama70b(&f);
            else
                hetero(&f);
            for (emit_kind k = EMIT_MEGATRON; k <= EMIT_TORCHRUN; k++) {
                ck_assert_int_eq(emit_to_string_ver(k, (megatron_version)v, &f, &t), 0);
                ck_assert_int_gt(check_flags_in(t, (megatron_version)v), 20);
                snprintf(head, sizeof head, "Megatron-LM %s",
                         megatron_version_tag((megatron_version)v));
                ck_assert_ptr_nonnull(strstr(t, head));
                free(t);
            }
        }
    }
}
END_TEST

/* architecture_flags' RoPE without MLA on f (Llama 3 70B): the base, Llama
 * 3.1's scaling, linear interpolation, and what Megatron's flags refuse. */
static void rope_flags(fixture *f)
{
    char *t = NULL;
    planner_error rule;
    f->m.rope.theta = 500000;
    f->m.rope.beta_fast = f->m.rope.beta_slow = f->m.rope.mscale = f->m.rope.mscale_all_dim = -1;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), 0);
    ck_flag(t, "--rotary-base", "500000");
    ck_no_flag(t, "--use-rope-scaling");
    ck_no_flag(t, "--rope-type");
    free(t);

    f->m.rope.scaling = ROPE_SCALING_LLAMA3;
    f->m.rope.factor = 8; f->m.rope.low_freq_factor = 1; f->m.rope.high_freq_factor = 4;
    f->m.rope.original_max_position = 8192;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), 0);
    ck_flag(t, "--use-rope-scaling", "");
    ck_flag(t, "--rope-scaling-factor", "8");
    free(t);
    f->m.rope.high_freq_factor = 2;   /* Megatron fixes 4 */
    first_layers(&f->m, &f->pl.s);
    ck_assert_int_eq(emit_check(&f->m, &f->c, &f->pl, tu_err(&rule)), 0);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), PLANNER_E_INPUT);
    free(t);

    f->m.rope.scaling = ROPE_SCALING_LINEAR;
    f->m.rope.factor = 4;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), 0);
    ck_flag(t, "--rotary-seq-len-interpolation-factor", "4");
    free(t);
    f->m.rope.factor = 2.5;   /* the flag is an int */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), PLANNER_E_INPUT);
    free(t);
    f->m.rope.scaling = ROPE_SCALING_OTHER;
    snprintf(f->m.rope.type, sizeof f->m.rope.type, "dynamic");
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), PLANNER_E_INPUT);
    free(t);
    f->m.rope.scaling = ROPE_SCALING_NONE;
    f->m.rope.theta = 1000000.5;   /* --rotary-base is an int */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), PLANNER_E_INPUT);
    free(t);
    f->m.rope.theta = 0;           /* absent: HF's and Megatron's 10000, said explicitly */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), 0);
    ck_flag(t, "--rotary-base", "10000");
    free(t);
    f->m.rope.scaling = ROPE_SCALING_YARN;   /* YaRN without MLA */
    f->m.rope.factor = 4;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), PLANNER_E_INPUT);
    free(t);
}

/* architecture_flags' YaRN on MLA: DeepSeek-V3's attention on f. */
static void mla_yarn_flags(fixture *f)
{
    char *t = NULL;
    /* MLA (DeepSeek-V3's attention on this fixture): YaRN as in its config */
    f->m.mla.q_lora_rank = 1536; f->m.mla.kv_lora_rank = 512; f->m.mla.qk_nope_head_dim = 128;
    f->m.mla.qk_rope_head_dim = 64; f->m.mla.v_head_dim = 128;
    f->m.rope.theta = 10000; f->m.rope.factor = 40; f->m.rope.mscale = 1;
    f->m.rope.mscale_all_dim = 1; f->m.rope.original_max_position = 4096;
    f->m.rope.beta_fast = 32; f->m.rope.beta_slow = 1;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), 0);
    ck_flag(t, "--rope-type", "yarn");
    ck_flag(t, "--rotary-scaling-factor", "40");
    ck_flag(t, "--mscale", "1");
    ck_flag(t, "--mscale-all-dim", "1");   /* Megatron's default is 0 */
    ck_assert_int_gt(check_flags_in(t, MEGATRON_0_15), 20);
    free(t);
    f->m.rope.beta_fast = 1;   /* Megatron's MLA fixes 32 */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), PLANNER_E_INPUT);
    free(t);
    f->m.rope.scaling = ROPE_SCALING_NONE;   /* MLA takes YaRN unless told */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), 0);
    ck_flag(t, "--rope-type", "rope");
    ck_no_flag(t, "--rotary-scaling-factor");
    free(t);
}

/* architecture_flags' layers of different shapes (uneven-gpt-13b's) on f:
 * refused with the reason, nothing printed. */
static void uneven_layers_refused(fixture *f)
{
    char *t = NULL;
    planner_error why;
    planner_error rule;
    /* configs/uneven-gpt-13b.json's layers: 4 with a 4x MLP, 4 with 80 heads
     * of 64 and 8 query groups (40 x 128 elsewhere) */
    gpt3(f);
    f->m.hidden = 5120; f->m.heads = 40; f->m.kv_heads = 40; f->m.ffn_hidden = 20480;
    set_layers(f, 40);
    for (int i = 0; i < 4; i++)
        f->layer[i].ffn_hidden = 81920;
    for (int i = 36; i < 40; i++) {
        f->layer[i].heads = 80; f->layer[i].kv_heads = 8; f->layer[i].head_dim = 64;
    }
    f->pl.s.tp = 8; f->pl.s.pp = 4; f->pl.s.dp = 4; f->pl.s.gbs = 512;
    even_stages(&f->pl.s, 40);
    first_layers(&f->m, &f->pl.s);
    ck_assert_int_eq(emit_check(&f->m, &f->c, &f->pl, tu_err(&rule)), 0);
    {
        size_t len = 0;
        FILE *fp = open_memstream(&t, &len);
        ck_assert_int_eq(emit_write(fp, EMIT_SLURM, MEGATRON_VERSION_DEFAULT, &f->m, &f->c,
                                    &f->pl, tu_err(&why)), PLANNER_E_INPUT);
        fclose(fp);
        ck_assert_uint_eq(len, 0);   /* nothing printed */
        free(t);
    }
    ck_assert_ptr_nonnull(strstr(why.msg, "layers 0-3 have an MLP width of 81920 (the model's: "
                                      "20480), layers 36-39 have 80 heads of 64"));
    /* only the query groups differ: refused too */
    set_layers(f, 40);
    f->layer[39].kv_heads = 8;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, f, &t), PLANNER_E_INPUT);
    free(t);
}

/* Every architectural field reaches a flag or emit refuses with the reason
 * (issue 14).  RoPE: Llama 3's base 500000 (its config.json rope_theta),
 * Llama 3.1's scaling (factor 8, low/high frequency factors 1/4 over 8192
 * positions: Megatron's _apply_scaling constants), linear interpolation,
 * DeepSeek-V3's YaRN on MLA (factor 40, mscale 1, mscale_all_dim 1, 4096
 * positions, betas 32/1: MLATransformerConfig's fixed figures); layers of
 * different shapes (configs/uneven-gpt-13b.json's) are refused. */
START_TEST(architecture_flags)
{
    fixture f;
    char *t = NULL;
    llama70b(&f);
    rope_flags(&f);
    mla_yarn_flags(&f);

    /* learned positions: no RoPE flags */
    gpt3(&f);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_no_flag(t, "--rotary-base");
    free(t);

    uneven_layers_refused(&f);
}
END_TEST

/* V100 and T4 have no bf16 (catalog peak 0): a bf16 plan there trains in
 * fp16 with dynamic loss scaling; a format a stage's GPU lacks (FP8 on
 * A100) is refused; core_v0.15.0 refuses expert parallelism in fp16, later
 * releases take it. */
START_TEST(precision_per_gpu)
{
    fixture f;
    char *t = NULL;
    gpt3(&f);
    make_cluster(&f, "V100-SXM2-32GB", 16);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--fp16", "");
    ck_flag(t, "--initial-loss-scale", "65536");
    ck_no_flag(t, "--bf16");
    ck_assert_ptr_nonnull(strstr(t, "# note: fp16 with dynamic loss scaling"));
    ck_assert_int_gt(check_flags_in(t, MEGATRON_0_15), 20);
    free(t);
    make_cluster(&f, "T4", 16);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--fp16", "");
    free(t);
    make_cluster(&f, "A100-SXM-80GB", 16);
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--bf16", "");
    ck_no_flag(t, "--fp16");
    ck_no_flag(t, "--initial-loss-scale");
    free(t);
    f.m.prec = PREC_FP8;   /* A100 has no FP8 */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), PLANNER_E_INPUT);
    free(t);

    /* one stage on T4 is enough for fp16 */
    hetero(&f);
    f.group[1].gpu = *catalog_find("T4");
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--fp16", "");
    free(t);

    /* experts on V100 with ep 2: refused by core_v0.15.0 only */
    gpt3(&f);
    make_cluster(&f, "V100-SXM2-32GB", 16);
    f.m.moe.experts = 8; f.m.moe.top_k = 2; f.m.moe.expert_ffn = 49152; f.m.moe.layer_freq = 1;
    for (int i = 0; i < f.m.layers; i++)
        f.layer[i].moe = true;
    f.pl.s.ep = 2;
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_15, &f, &t), PLANNER_E_INPUT);
    free(t);
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_16, &f, &t), 0);
    ck_flag(t, "--expert-model-parallel-size", "2");
    ck_flag(t, "--fp16", "");
    free(t);
    f.pl.s.ep = 1;
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_15, &f, &t), 0);
    free(t);
}
END_TEST

/* The flex token dispatcher's backend flag by release (knob_flex_backend):
 * core_v0.15.0 has DeepEP only, switched on by --moe-enable-deepep;
 * core_v0.16.0 and later name the backend, HybridEP, with
 * --moe-flex-dispatcher-backend (which deprecates --moe-enable-deepep),
 * each flag in its release's arguments.py (check_flags_in).  DeepEP does not
 * span a multi-node NVLink domain: a 0.15 flex plan on GB200 is refused,
 * 0.16's HybridEP runs there.  The alltoall dispatcher names no backend.
 * The shared-expert overlap runs with flex from core_v0.18.0 only. */
START_TEST(flex_backend_flags)
{
    fixture f;
    char *t = NULL;
    llama70b(&f);   /* as an MoE model: 8 experts, top-2, ep 2 */
    f.m.moe.experts = 8; f.m.moe.top_k = 2; f.m.moe.expert_ffn = 14336; f.m.moe.layer_freq = 1;
    for (int i = 0; i < f.m.layers; i++)
        f.layer[i].moe = true;
    f.pl.s.ep = 2;
    f.pl.s.flex_dispatcher = true;
    for (int v = 0; v < MEGATRON_VERSION_COUNT; v++) {
        ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, (megatron_version)v, &f, &t), 0);
        ck_flag(t, "--moe-token-dispatcher-type", "flex");
        if (v == MEGATRON_0_15) {
            ck_flag(t, "--moe-enable-deepep", "");
            ck_no_flag(t, "--moe-flex-dispatcher-backend");
            ck_no_flag(t, "--moe-hybridep-num-sms");
        } else {
            ck_flag(t, "--moe-flex-dispatcher-backend", "hybridep");
            /* the SMs the cost gives HybridEP (layer_cost.h), not the
             * release's default (16 on core_v0.16/0.17) */
            ck_flag(t, "--moe-hybridep-num-sms", "32");
            ck_no_flag(t, "--moe-enable-deepep");
        }
        ck_assert_int_gt(check_flags_in(t, (megatron_version)v), 20);
        free(t);
    }
    /* the shared-expert overlap with flex: from core_v0.18.0 (before, alltoall only) */
    f.m.moe.shared_experts = 1;
    f.pl.s.shared_expert_overlap = true;
    for (int v = 0; v < MEGATRON_VERSION_COUNT; v++) {
        planner_status want = v >= MEGATRON_0_18 ? PLANNER_OK : PLANNER_E_INPUT;
        ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, (megatron_version)v, &f, &t), want);
        if (want == PLANNER_OK) {
            ck_flag(t, "--moe-shared-expert-overlap", "");
            ck_flag(t, "--moe-token-dispatcher-type", "flex");
        }
        free(t);
    }
    f.pl.s.flex_dispatcher = false;   /* with alltoall: every release */
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_15, &f, &t), 0);
    ck_flag(t, "--moe-shared-expert-overlap", "");
    free(t);
    f.pl.s.flex_dispatcher = true;
    f.pl.s.shared_expert_overlap = false;
    f.m.moe.shared_experts = 0;
    make_cluster(&f, "GB200", 8);
    f.group[0].gpu.nvlink_domain = 72;   /* NVL72: one domain over the nodes */
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_15, &f, &t), PLANNER_E_INPUT);
    free(t);
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_16, &f, &t), 0);
    ck_flag(t, "--moe-flex-dispatcher-backend", "hybridep");
    free(t);
    f.pl.s.flex_dispatcher = false;
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_15, &f, &t), 0);
    ck_flag(t, "--moe-token-dispatcher-type", "alltoall");
    ck_no_flag(t, "--moe-enable-deepep");
    ck_no_flag(t, "--moe-flex-dispatcher-backend");
    free(t);
    /* the MoE router graphs: from core_v0.16.0 (emit's own check; a --fix
     * pin is refused before planning, knob_release_fix_conflict) */
    f.pl.s.te_moe_graphs = true;
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_15, &f, &t), PLANNER_E_INPUT);
    free(t);
    ck_assert_int_eq(emit_to_string_ver(EMIT_MEGATRON, MEGATRON_0_16, &f, &t), 0);
    ck_flag(t, "--cuda-graph-impl", "transformer_engine");
    free(t);
}
END_TEST

/* The HF families' fields (model.h): biases as Megatron-LM can build them
 * (all linear layers, none, or q/k/v only: Qwen2), partial rotary
 * (--rotary-percent: ChatGLM rotates 64 of 128), per-head QK-norm (Qwen3);
 * other bias sets and QK-norm over all heads (OLMo 2) are refused. */
START_TEST(hf_fields)
{
    fixture f;
    char *t = NULL;
    llama70b(&f);
    f.m.bias = MODEL_BIAS_SET | MODEL_BIAS_QKV;   /* Qwen2 */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--disable-bias-linear", "");
    ck_flag(t, "--add-qkv-bias", "");
    free(t);
    f.m.bias = MODEL_BIAS_SET | MODEL_BIAS_QKV | MODEL_BIAS_OUT | MODEL_BIAS_MLP;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_no_flag(t, "--disable-bias-linear");   /* Megatron's default: all */
    ck_no_flag(t, "--add-qkv-bias");
    free(t);
    f.m.bias = MODEL_BIAS_SET | MODEL_BIAS_OUT;   /* no such Megatron layer */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), PLANNER_E_INPUT);
    free(t);
    f.m.bias = 0;
    f.m.rotary_dim = 64;   /* of head_dim 128 */
    f.m.qk_norm = QK_NORM_HEAD;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--rotary-percent", "0.5");
    ck_flag(t, "--qk-layernorm", "");
    ck_flag(t, "--disable-bias-linear", "");
    ck_assert_int_gt(check_flags_in(t, MEGATRON_0_15), 20);
    free(t);
    f.m.qk_norm = QK_NORM_ALL_HEADS;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), PLANNER_E_INPUT);
    free(t);

    gpt3(&f);   /* LayerNorm: biases everywhere by default */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_no_flag(t, "--disable-bias-linear");
    free(t);
    f.m.bias = MODEL_BIAS_SET | MODEL_BIAS_NORM;   /* LayerNorm bias, no linear ones */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_flag(t, "--disable-bias-linear", "");
    free(t);
    f.m.bias = MODEL_BIAS_SET;   /* LayerNorm without its bias: Megatron's has one */
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), PLANNER_E_INPUT);
    free(t);

    /* sliding windows (StarCoder2-7B: 4,096 tokens, its default sequence):
     * a window of the run's sequence or more limits nothing, the causal
     * attention Megatron runs; a shorter one has no flags here */
    llama70b(&f);   /* seq_len 8192 */
    for (int i = 0; i < f.m.layers; i++)
        f.layer[i].window = 8192;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), 0);
    ck_no_flag(t, "--window-size");
    free(t);
    f.layer[3].window = 8191;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), PLANNER_E_INPUT);
    free(t);
    f.layer[3].window = 0;
    f.layer[5].chunk = 4096;
    ck_assert_int_eq(emit_to_string(EMIT_MEGATRON, &f, &t), PLANNER_E_INPUT);
    free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("emit");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, gpt3_megatron_flags);
    tcase_add_test(tc, llama_gqa_interleaved);
    tcase_add_test(tc, stack_not_megatron_refused);
    tcase_add_test(tc, torchtitan_config);
    tcase_add_test(tc, torchtitan_refusals);
    tcase_add_test(tc, torchtitan_every_nth_block);
    tcase_add_test(tc, uneven_first_last);
    tcase_add_test(tc, uneven_layout);
    tcase_add_test(tc, uneven_account_split);
    tcase_add_test(tc, recompute_full);
    tcase_add_test(tc, precision_and_sharding);
    tcase_add_test(tc, rules_refused);
    tcase_add_test(tc, gqa_tp_same_verdict);
    tcase_add_test(tc, slurm_script);
    tcase_add_test(tc, torchrun_script);
    tcase_add_test(tc, hetero_slurm);
    tcase_add_test(tc, hetero_refused);
    tcase_add_test(tc, slurm_allocation_checked);
    tcase_add_test(tc, max_connections);
    tcase_add_test(tc, hostile_names);
    tcase_add_test(tc, versions);
    tcase_add_test(tc, flex_backend_flags);
    tcase_add_test(tc, architecture_flags);
    tcase_add_test(tc, precision_per_gpu);
    tcase_add_test(tc, hf_fields);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
