/* test_model_load.c: loading our JSON and HF config.json files.
 *
 * Parameter counts are checked against published totals: the HF
 * safetensors totals of Llama 3 8B (8,030,261,248), 70B (70,553,706,496),
 * 3.1 405B (405,853,388,800), Mixtral 8x7B (46,702,792,704), GPT-2 XL
 * (1,557,611,200) and Pythia-12B (11,846,072,320) exactly; DeepSeek-V3's
 * "671B total, 37B activated" (report, without the 14B MTP module); GPT-3
 * 175B by hand: 96 (12 h^2 + 13 h) + (V + s) h + 2 h = 174,615,846,912. */
#include <math.h>
#include <string.h>
#include "inputs/model.h"
#include "testutil.h"

/* Loads path under override ov; the file's run into *run (may be NULL). */
static model *load_run(const char *path, const run_spec *ov, run_spec *run)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    char buf[1400];
    planner_status rc = model_load(&m, run, path, ov, &err);
    error_format(&err, buf, sizeof buf);
    ck_assert_msg(rc == PLANNER_OK, "%s: %s", path, buf);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(m->layer);
    return m;
}

static model *load(const char *path, const run_spec *ov)
{
    return load_run(path, ov, NULL);
}

static model *load_text_run(const char *text, const run_spec *ov, run_spec *run)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    char buf[1400];
    planner_status rc = model_load_buffer(&m, run, text, strlen(text), "t.json", ov, &err);
    error_format(&err, buf, sizeof buf);
    ck_assert_msg(rc == PLANNER_OK, "%s", buf);
    return m;
}

static model *load_text(const char *text, const run_spec *ov)
{
    return load_text_run(text, ov, NULL);
}

/* Loads text expecting an error; returns the formatted message. */
static void load_bad(const char *text, const char *expect)
{
    planner_error err = PLANNER_ERROR_INIT;
    model *m = NULL;
    char buf[1400];
    planner_status rc = model_load_buffer(&m, NULL, text, strlen(text), "t.json", NULL, &err);
    ck_assert_int_eq(rc, PLANNER_E_INPUT);
    ck_assert_ptr_null(m);
    error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, expect);
}

START_TEST(every_config_loads)
{
    static const char *const files[] = {
        "configs/gpt3-175b.json", "configs/llama3-8b.json", "configs/llama3-70b.json",
        "configs/llama3.1-405b.json", "configs/mixtral-8x7b.json", "configs/deepseek-v3.json",
        "configs/amp-gpt2.json", "configs/uneven-gpt-13b.json", "configs/qwen3-30b-a3b.json",
        "configs/gpt2-xl.json", "configs/pythia-12b.json"};
    size_t i;
    for (i = 0; i < sizeof files / sizeof files[0]; i++) {
        run_spec run;
        model *m = load_run(files[i], NULL, &run);
        int k;
        ck_assert_int_gt(m->layers, 0);
        for (k = 0; k < m->layers; k++)
            ck_assert_int_gt(m->layer[k].hidden, 0);
        ck_assert_int_le(run.seq_len, model_positions(m, run.seq_len));
        ck_assert_int_gt(run.global_batch, 0);
        model_free(m);
    }
}
END_TEST

START_TEST(gpt3_175b)
{
    run_spec run;
    model *m = load_run("configs/gpt3-175b.json", NULL, &run);
    ck_assert_int_eq(m->format, MODEL_FORMAT_PLANNER);
    ck_assert_int_eq(m->layers, 96);
    ck_assert_int_eq(m->hidden, 12288);
    ck_assert_int_eq(m->heads, 96);
    ck_assert_int_eq(m->kv_heads, 96);
    ck_assert_int_eq(m->head_dim, 128);
    ck_assert_int_eq(m->ffn_hidden, 4 * 12288);
    ck_assert_int_eq(run.seq_len, 2048);
    ck_assert_int_eq(m->vocab, 51200);
    ck_assert_int_eq(run.global_batch, 1536);
    ck_assert(!run.global_batch_default && !run.seq_len_default);
    ck_assert_int_eq(m->prec, PREC_BF16);
    ck_assert_int_eq(m->act, ACT_GELU);
    ck_assert(m->tied_embeddings && !m->uneven);
    ck_assert_rel(model_layer_params(m, 0), 12.0 * 12288 * 12288 + 13.0 * 12288, 1e-12);
    ck_assert_rel(model_param_count(m, run.seq_len), 174615846912.0, 1e-12);
    ck_assert_rel(model_embedding_params(m, run.seq_len), (51200.0 + 2048.0) * 12288, 1e-12);
    model_free(m);
}
END_TEST

START_TEST(hf_published_totals)
{
    static const struct {
        const char *file;
        const char *family;
        double total, active;
    } cases[] = {
        {"configs/llama3-8b.json", "llama", 8030261248.0, 8030261248.0},
        {"configs/llama3-70b.json", "llama", 70553706496.0, 70553706496.0},
        {"configs/llama3.1-405b.json", "llama", 405853388800.0, 405853388800.0},
        {"configs/mixtral-8x7b.json", "mixtral", 46702792704.0, 12879925248.0},
        {"configs/gpt2-xl.json", "gpt2", 1557611200.0, 1557611200.0},
        {"configs/pythia-12b.json", "gpt_neox", 11846072320.0, 11846072320.0},
    };
    size_t i;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        model *m = load(cases[i].file, NULL);
        ck_assert_int_eq(m->format, MODEL_FORMAT_HF);
        ck_assert_str_eq(m->family, cases[i].family);
        ck_assert_rel(model_param_count(m, 0), cases[i].total, 1e-12);
        ck_assert_rel(model_active_param_count(m, 0), cases[i].active, 1e-12);
        model_free(m);
    }
}
END_TEST

START_TEST(deepseek_v3)
{
    model *m = load("configs/deepseek-v3.json", NULL);
    int i;
    ck_assert_str_eq(m->family, "deepseek_v3");
    ck_assert_int_eq(m->layers, 61);
    ck_assert_int_eq(m->moe.experts, 256);
    ck_assert_int_eq(m->moe.top_k, 8);
    ck_assert_int_eq(m->moe.expert_ffn, 2048);
    ck_assert_int_eq(m->moe.shared_experts, 1);
    ck_assert_int_eq(m->moe.dense_layers, 3);
    ck_assert_int_eq(m->mla.q_lora_rank, 1536);
    ck_assert_int_eq(m->mla.kv_lora_rank, 512);
    ck_assert_int_eq(m->mla.qk_rope_head_dim, 64);
    ck_assert_int_eq(m->mla.v_head_dim, 128);
    ck_assert_int_eq(m->mtp_layers, 1);
    for (i = 0; i < m->layers; i++)
        ck_assert_int_eq(m->layer[i].moe, i >= 3);
    ck_assert_rel(model_param_count(m, 0), 671e9, 0.001);
    ck_assert_rel(model_active_param_count(m, 0), 37e9, 0.02);
    model_free(m);
}
END_TEST

START_TEST(qwen_moe)
{
    run_spec run;
    model *m = load("configs/qwen3-30b-a3b.json", NULL);
    ck_assert_str_eq(m->family, "qwen3_moe");
    ck_assert_int_eq(m->head_dim, 128);   /* given: 2048 / 32 would be 64 */
    ck_assert_int_eq(m->kv_heads, 4);
    ck_assert_int_eq(m->moe.experts, 128);
    ck_assert(m->layer[0].moe && m->layer[47].moe);
    /* HF total 30,532,122,624 includes 48 x 256 q/k-norm weights we omit */
    ck_assert_rel(model_param_count(m, 0), 30532122624.0 - 48 * 256, 1e-12);
    ck_assert_rel(model_active_param_count(m, 0), 3.3e9, 0.02);
    model_free(m);
    /* mlp_only_layers and decoder_sparse_step */
    m = load_text_run("{\"model_type\": \"qwen2_moe\", \"hidden_size\": 64,"
                      " \"num_hidden_layers\": 4,"
                  " \"num_attention_heads\": 4, \"vocab_size\": 100,"
                  " \"max_position_embeddings\": 512, \"intermediate_size\": 256,"
                  " \"num_experts\": 8, \"num_experts_per_tok\": 2,"
                  " \"moe_intermediate_size\": 32, \"shared_expert_intermediate_size\": 128,"
                  " \"decoder_sparse_step\": 2, \"mlp_only_layers\": [3]}", NULL, &run);
    ck_assert(!m->layer[0].moe && m->layer[1].moe && !m->layer[2].moe && !m->layer[3].moe);
    ck_assert_int_eq(m->moe.shared_experts, 1);
    ck_assert_int_eq(m->moe.shared_expert_ffn, 128);
    ck_assert_int_eq(run.seq_len, 512);   /* default 4096 capped at max_position */
    model_free(m);
}
END_TEST

/* Which layers slide, per family rule (HF modeling code) or layer_types. */
START_TEST(sliding_window_layers)
{
    char path[1024];
    const char *dir = tu_shared_dir();
    model *m;
    int i;
    /* Gemma 2: even layers (Gemma2DecoderLayer: not layer_idx % 2) */
    m = load_text("{\"model_type\": \"gemma2\", \"hidden_size\": 64, \"num_hidden_layers\": 4,"
                  " \"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 16,"
                  " \"intermediate_size\": 128, \"vocab_size\": 100,"
                  " \"max_position_embeddings\": 8192, \"sliding_window\": 4096}", NULL);
    for (i = 0; i < 4; i++)
        ck_assert_int_eq(m->layer[i].window, i % 2 == 0 ? 4096 : 0);
    ck_assert(m->tied_embeddings && m->act == ACT_GEGLU);
    model_free(m);
    /* Mistral v0.1: every layer; Qwen2 only with use_sliding_window */
    m = load_text("{\"model_type\": \"mistral\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                  " \"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100,"
                  " \"max_position_embeddings\": 32768, \"sliding_window\": 4096}", NULL);
    ck_assert(m->layer[0].window == 4096 && m->layer[1].window == 4096);
    model_free(m);
    m = load_text("{\"model_type\": \"qwen2\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                  " \"num_attention_heads\": 4, \"intermediate_size\": 128, \"vocab_size\": 100,"
                  " \"max_position_embeddings\": 32768, \"sliding_window\": 4096,"
                  " \"use_sliding_window\": false}", NULL);
    ck_assert(m->layer[0].window == 0 && m->layer[1].window == 0);
    model_free(m);
    if (dir == NULL) {
        printf("SKIP: ../shared absent: gpt-oss and Gemma 3 windows not checked\n");
        return;
    }
    /* gpt-oss: layer_types alternate sliding (128) and full */
    snprintf(path, sizeof path, "%s/hf-configs/gpt-oss-20b/config.json", dir);
    m = load(path, NULL);
    for (i = 0; i < m->layers; i++)
        ck_assert_int_eq(m->layer[i].window, i % 2 == 0 ? 128 : 0);
    model_free(m);
    /* Gemma 3 1B: 5 of 6 layers slide over 512 tokens */
    snprintf(path, sizeof path, "%s/hf-configs/gemma3-1b/config.json", dir);
    m = load(path, NULL);
    for (i = 0; i < m->layers; i++)
        ck_assert_int_eq(m->layer[i].window, (i + 1) % 6 != 0 ? 512 : 0);
    ck_assert_int_eq(m->qk_norm, QK_NORM_HEAD);
    ck_assert_str_eq(m->name, "gemma3-1b");   /* the directory, not "config" */
    model_free(m);
}
END_TEST

/* The MoE configs shipped for the validation corpus's models
 * (configs/gpt-oss-120b.json, configs/qwen3-235b-a22b.json: their published
 * HF config.json), counted by hand:
 *   gpt-oss-120b: h 2880, 36 layers, 64 heads x 64 (8 KV), 128 experts of
 *     ffn 2880, top-4, vocab 201,088, biased linears: attention 2880 x 4096
 *     + 4096 + 2 (2880 x 512 + 512) + 4096 x 2880 + 2880 = 26,550,848, norms
 *     5,760, router 2880 x 128 + 128, experts 128 x (2880 x 5760 + 5760 +
 *     2880 x 2880 + 2880) = 3,186,129,920; x 36 + 2 x 201,088 x 2880 + 2880
 *     = 116,829,154,368 (OpenAI: 116.83 B); active (top-4) 5,711,980,608.
 *     The planner leaves out the router's bias and the attention sinks
 *     (36 x 128, 36 x 64: 1e-7 of it).
 *   Qwen3-235B-A22B: h 4096, 94 layers, 64 heads x 128 (4 KV), 128 experts
 *     of ffn 1536 gated, top-8, vocab 151,936: attention 4096 x 8192 + 2 x
 *     4096 x 512 + 8192 x 4096 = 71,303,168, norms 8,192, router 524,288,
 *     experts 128 x 3 x 4096 x 1536; x 94 + 2 x 151,936 x 4096 + 4096 =
 *     235,093,610,496 (Qwen: 235 B; plus 94 x 256 of QK-norm weights the
 *     planner does not count); active 22,190,739,456 (Qwen: 22 B).
 * Both read with windows and gating as published: every other gpt-oss layer
 * slides over 128 tokens. */
START_TEST(shipped_moe_configs_by_hand)
{
    model *m = load("configs/gpt-oss-120b.json", NULL);
    ck_assert_int_eq(m->layers, 36);
    ck_assert_int_eq(m->head_dim, 64);
    ck_assert_int_eq(m->act, ACT_SWIGLU);
    ck_assert_int_eq(m->layer[0].window, 128);
    ck_assert_int_eq(m->layer[1].window, 0);
    ck_assert_int_eq(m->layer[35].window, 0);
    ck_assert_rel(model_param_count(m, 4096), 116829154368.0, 1e-6);
    ck_assert_rel(model_active_param_count(m, 4096), 5711980608.0, 1e-6);
    ck_assert_double_eq(m->glu_limit, 7.0);   /* swiglu_limit: the clamped GLU */
    ck_assert(model_biases(m) & MODEL_BIAS_MLP);
    ck_assert(!m->fused_grouped_mlp);
    model_free(m);
    m = load("configs/qwen3-235b-a22b.json", NULL);
    ck_assert_int_eq(m->head_dim, 128);
    ck_assert_int_eq(m->act, ACT_SWIGLU);
    ck_assert_double_eq(m->glu_limit, 0);
    ck_assert_double_eq(model_param_count(m, 4096), 235093610496.0);
    ck_assert_double_eq(model_active_param_count(m, 4096), 22190739456.0);
    model_free(m);
}
END_TEST

/* Issue 15: a head_dim that is not hidden / heads, and our keys inside a HF
 * config, are accepted with a warning that says which value wins. */
START_TEST(which_value_wins)
{
    model *m = load_text("{\"model_type\": \"llama\", \"hidden_size\": 64,"
                         " \"num_hidden_layers\": 2, \"intermediate_size\": 128,"
                         " \"num_attention_heads\": 4, \"head_dim\": 32, \"vocab_size\": 100,"
                         " \"max_position_embeddings\": 256}", NULL);
    ck_assert_int_eq(m->head_dim, 32);
    ck_assert_int_eq(m->n_notes, 1);
    ck_assert_str_eq(m->notes[0], "head_dim 32 is not hidden_size / num_attention_heads (64 / 4): "
                                  "head_dim wins, attention is 4 heads x 32 = 128 wide");
    model_free(m);
    /* consistent: no note */
    m = load_text("{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"head_dim\": 16,"
                  " \"vocab_size\": 100, \"max_position_embeddings\": 256}", NULL);
    ck_assert_int_eq(m->n_notes, 0);
    model_free(m);
    /* our "layers" and "moe" in a HF config: ignored, and said so */
    m = load_text("{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 100,"
                  " \"max_position_embeddings\": 256, \"layers\": 96, \"moe\": {}}", NULL);
    ck_assert_int_eq(m->layers, 2);
    ck_assert_int_eq(m->n_notes, 2);
    ck_assert_str_eq(m->notes[0], "'layers' is a key of planner's model format, but the file is "
                                  "read as a HuggingFace config (it has 'model_type'): 'layers' is "
                                  "ignored; from the config's own keys, layers = 2");
    ck_assert_str_eq(m->notes[1], "'moe' is a key of planner's model format, but the file is read "
                                  "as a HuggingFace config (it has 'model_type'): "
                                  "'moe' is ignored");
    model_free(m);
}
END_TEST

START_TEST(recognized_by_keys)
{
    run_spec run;
    /* no model_type: families from their telltale keys */
    model *m = load_text("{\"hidden_size\": 64, \"num_hidden_layers\": 2,"
                         " \"intermediate_size\": 128, \"num_attention_heads\": 4,"
                         " \"vocab_size\": 100, \"max_position_embeddings\": 256,"
                         " \"num_local_experts\": 4,"
                         " \"num_experts_per_tok\": 2}", NULL);
    ck_assert_str_eq(m->family, "mixtral");
    ck_assert_int_eq(m->n_notes, 1);
    ck_assert_str_eq(m->notes[0], "no model_type: read as mixtral by its keys");
    model_free(m);
    m = load_text_run("{\"n_embd\": 64, \"n_layer\": 2, \"n_head\": 4, \"vocab_size\": 100,"
                      " \"n_positions\": 128, \"n_inner\": null}", NULL, &run);
    ck_assert_str_eq(m->family, "gpt2");
    ck_assert_int_eq(m->ffn_hidden, 256);
    ck_assert_int_eq(run.seq_len, 128);
    ck_assert(m->position == POS_LEARNED && m->tied_embeddings);
    model_free(m);
    m = load_text("{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"intermediate_size\": 256,"
                  " \"num_attention_heads\": 4, \"vocab_size\": 100, \"rotary_pct\": 0.25,"
                  " \"max_position_embeddings\": 2048}", NULL);
    ck_assert_str_eq(m->family, "gpt_neox");
    ck_assert_int_eq(m->act, ACT_GELU);
    model_free(m);
}
END_TEST

/* The residual dropout: ours "hidden_dropout" (Megatron's 0.1 when absent);
 * a HF family's key (GPT-2 resid_pdrop, class default 0.1; GPT-NeoX
 * hidden_dropout, 0.0), 0 for a family whose layers have none (Llama) */
START_TEST(hidden_dropout)
{
    model *m = load_text("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 100}", NULL);
    ck_assert(!m->has_hidden_dropout);
    ck_assert_double_eq(model_hidden_dropout(m), 0.1);
    model_free(m);
    m = load_text("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 100,"
                  " \"hidden_dropout\": 0}", NULL);
    ck_assert_double_eq(model_hidden_dropout(m), 0.0);
    model_free(m);
    m = load("configs/llama3-8b.json", NULL);
    ck_assert_double_eq(model_hidden_dropout(m), 0.0);
    model_free(m);
    m = load("configs/gpt2-xl.json", NULL);   /* "resid_pdrop": 0.1 */
    ck_assert_double_eq(model_hidden_dropout(m), 0.1);
    model_free(m);
    m = load_text("{\"n_embd\": 64, \"n_layer\": 2, \"n_head\": 4, \"vocab_size\": 100,"
                  " \"n_positions\": 128, \"model_type\": \"gpt2\"}", NULL);
    ck_assert_double_eq(model_hidden_dropout(m), 0.1);   /* GPT2Config's default */
    model_free(m);
    m = load_text("{\"model_type\": \"gpt_neox\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                  " \"intermediate_size\": 256, \"num_attention_heads\": 4, \"vocab_size\": 100,"
                  " \"max_position_embeddings\": 2048, \"hidden_dropout\": 0.05}", NULL);
    ck_assert_double_eq(model_hidden_dropout(m), 0.05);
    /* the family's own key, read: no note that it is ours and ignored (Falcon's
     * and ChatGLM's published configs said "'hidden_dropout' ... is ignored") */
    ck_assert_int_eq(m->n_notes, 0);
    model_free(m);
    /* in a family that has no such key (Llama) it is ours: ignored, and said so */
    m = load_text("{\"model_type\": \"llama\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
                  " \"intermediate_size\": 128, \"num_attention_heads\": 4, \"vocab_size\": 100,"
                  " \"max_position_embeddings\": 256, \"hidden_dropout\": 0.1}", NULL);
    ck_assert_double_eq(model_hidden_dropout(m), 0.0);
    ck_assert_int_eq(m->n_notes, 1);
    ck_assert_str_eq(m->notes[0], "'hidden_dropout' is a key of planner's model format, but the "
                                  "file is read as a HuggingFace config (it has 'model_type'): "
                                  "'hidden_dropout' is ignored");
    model_free(m);
    load_bad("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 100, \"hidden_dropout\": 1}",
             "planner: t.json:1:55: model.hidden_dropout: must be a probability in [0, 1), got 1");
    /* gpt-oss's GLU clamp (swiglu_limit): a positive number */
    load_bad("{\"model_type\": \"gpt_oss\", \"hidden_size\": 64, \"num_hidden_layers\": 2,"
             " \"intermediate_size\": 64, \"num_attention_heads\": 4, \"vocab_size\": 100,"
             " \"num_local_experts\": 4, \"num_experts_per_tok\": 2,"
             " \"max_position_embeddings\": 256, \"swiglu_limit\": -7}",
             "planner: t.json:1:222: model.swiglu_limit: must be a positive number");
}
END_TEST

START_TEST(overrides_and_defaults)
{
    run_spec ov = {.seq_len = 8192, .global_batch = 256}, run;
    model *m = load_run("configs/llama3-8b.json", NULL, &run);
    ck_assert_int_eq(run.seq_len, MODEL_DEFAULT_SEQ_LEN);
    ck_assert_int_eq(run.global_batch, MODEL_DEFAULT_GLOBAL_BATCH);
    ck_assert(run.seq_len_default && run.global_batch_default);
    ck_assert_int_eq(run.global_batch, 1024);
    model_free(m);
    m = load_run("configs/llama3-8b.json", &ov, &run);
    ck_assert_int_eq(run.seq_len, 8192);
    ck_assert_int_eq(run.global_batch, 256);
    ck_assert(!run.seq_len_default && !run.global_batch_default);
    model_free(m);
    ov.seq_len = 0;
    m = load_run("configs/gpt3-175b.json", &ov, &run);   /* flags beat the file */
    ck_assert_int_eq(run.global_batch, 256);
    ck_assert_int_eq(run.seq_len, 2048);
    model_free(m);
}
END_TEST

START_TEST(seq_beyond_positions)
{
    planner_error err = PLANNER_ERROR_INIT;
    run_spec ov = {.seq_len = 4096}, run;
    model *m = NULL;
    char buf[1400];
    /* learned positions have no embedding past max_position */
    ck_assert_int_eq(model_load(&m, NULL, "configs/gpt3-175b.json", &ov, &err), PLANNER_E_INPUT);
    error_format(&err, buf, sizeof buf);
    ck_assert_str_eq(buf, "planner: configs/gpt3-175b.json:10:3: model.max_position: sequence "
                          "length 4096 (from --seq) exceeds max_position 2048");
    /* RoPE: a context extension, planned with a note; the file's own
     * seq_len past max_position stays an error */
    ov.seq_len = 16384;
    m = load_run("configs/llama3-8b.json", &ov, &run);
    ck_assert_int_eq(run.seq_len, 16384);
    ck_assert_int_eq(m->max_position, 8192);
    ck_assert_int_eq(m->n_notes, 1);
    ck_assert_str_eq(m->notes[0], "sequence length 16384 (from --seq) exceeds max_position 8192: "
                                  "planned as a context extension (RoPE scaling is the training "
                                  "recipe's)");
    model_free(m);
    load_bad("{\"hidden\": 64, \"heads\": 4, \"vocab\": 10, \"layers\": 2,"
             " \"position\": \"rope\", \"seq_len\": 512, \"max_position\": 256}",
             "planner: t.json:1:74: model.seq_len: seq_len (512) exceeds max_position (256)");
}
END_TEST

/* The model does not depend on the run: loaded under any override it is
 * the model loaded under none (what a sweep relies on when it shares one
 * model between grid points), the run holds the figures, and
 * model_run_check refuses what model_load refuses (a sequence past learned
 * positions).  Learned positions the file does not size follow the run's
 * sequence in the parameter count. */
START_TEST(run_apart_from_model)
{
    static const char *const paths[] = {"configs/gpt3-175b.json", "configs/llama3-8b.json",
                                        "configs/deepseek-v3.json"};
    static const char *const learned = "{\"name\": \"p\", \"layers\": 2, \"hidden\": 64, "
                                       "\"heads\": 4, \"ffn_hidden\": 256, \"vocab\": 1000, "
                                       "\"position\": \"learned\", \"activation\": \"gelu\", "
                                       "\"normalization\": \"layernorm\"}";
    static const run_spec runs[] = {{.seq_len = 0},
                                    {.seq_len = 2048},
                                    {.global_batch = 512},
                                    {.seq_len = 1024, .global_batch = 64}};
    planner_error err = PLANNER_ERROR_INIT;
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        run_spec file;
        model *base = load_run(paths[p], NULL, &file);
        for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
            run_spec run;
            model *a = load_run(paths[p], &runs[r], &run);
            ck_assert_int_eq(run.seq_len, runs[r].seq_len > 0 ? runs[r].seq_len : file.seq_len);
            ck_assert_int_eq(run.global_batch, runs[r].global_batch > 0 ? runs[r].global_batch
                                                                        : file.global_batch);
            ck_assert_int_eq(a->max_position, base->max_position);
            ck_assert(model_param_count(a, run.seq_len) == model_param_count(base, run.seq_len));
            ck_assert_mem_eq(a->layer, base->layer, (size_t)a->layers * sizeof *a->layer);
            ck_assert_int_eq(model_run_check(base, run.seq_len, tu_err(&err)), PLANNER_OK);
            model_free(a);
        }
        model_free(base);
    }
    {
        /* no max_position: learned positions sized by the run's sequence
         * ((8,192 - 4,096) x 64 = 262,144 more weights than at 4,096) */
        run_spec run = {.seq_len = 8192}, r1, r2;
        model *base = load_text_run(learned, NULL, &r1), *a = load_text_run(learned, &run, &r2);
        ck_assert_int_eq(base->max_position, 0);
        ck_assert_int_eq(r1.seq_len, MODEL_DEFAULT_SEQ_LEN);
        ck_assert_int_eq(model_positions(base, r2.seq_len), 8192);
        ck_assert(model_param_count(base, 8192) == model_param_count(a, r2.seq_len));
        ck_assert_rel(model_param_count(base, 8192) - model_param_count(base, 4096),
                      4096.0 * 64, 1e-12);
        model_free(a);
        model_free(base);
    }
    {
        model *base = load("configs/gpt3-175b.json", NULL);
        ck_assert_int_eq(model_run_check(base, 2048, tu_err(&err)), PLANNER_OK);
        ck_assert_int_eq(model_run_check(base, 4096, tu_err(&err)), PLANNER_E_INPUT);
        ck_assert_str_eq(err.path, "model.max_position");
        ck_assert_str_eq(err.msg, "sequence length 4096 (from --seq) exceeds max_position 2048");
        model_free(base);
    }
}
END_TEST

START_TEST(uneven_layers)
{
    model *m = load("configs/uneven-gpt-13b.json", NULL);
    int i;
    ck_assert(m->uneven);
    ck_assert_int_eq(m->layers, 40);
    for (i = 0; i < 40; i++) {
        const layer_spec *l = &m->layer[i];
        ck_assert_int_eq(l->hidden, 5120);
        ck_assert_int_eq(l->ffn_hidden, i < 4 ? 81920 : 20480);
        ck_assert_int_eq(l->heads, i >= 36 ? 80 : 40);
        ck_assert_int_eq(l->kv_heads, i >= 36 ? 8 : 40);
        ck_assert_int_eq(l->head_dim, i >= 36 ? 64 : 128);
    }
    /* wide-MLP layer: 4 h^2 + 2 h f + biases (3h + f + h) + two layernorms (4h) */
    ck_assert_rel(model_layer_params(m, 0),
                  4.0 * 5120 * 5120 + 2.0 * 5120 * 81920 + 4 * 5120 + 81920 + 5120 + 4 * 5120,
                  1e-12);
    model_free(m);
    /* layer_list without layers: layers is the sum; a uniform list is not uneven */
    m = load_text("{\"hidden\": 64, \"heads\": 4, \"vocab\": 10,"
                  " \"layer_list\": [{\"count\": 3}, {\"count\": 2}]}", NULL);
    ck_assert_int_eq(m->layers, 5);
    ck_assert(!m->uneven);
    model_free(m);
}
END_TEST

START_TEST(our_moe_flags)
{
    model *m = load_text("{\"layers\": 6, \"hidden\": 64, \"heads\": 4, \"vocab\": 10,"
                         " \"activation\": \"swiglu\", \"ffn_hidden\": 128,"
                         " \"normalization\": \"rmsnorm\","
                         " \"moe\": {\"experts\": 8, \"top_k\": 2, \"expert_ffn\": 32,"
                         " \"dense_layers\": 1, \"layer_freq\": 2}}", NULL);
    ck_assert(!m->layer[0].moe && !m->layer[1].moe && m->layer[2].moe && !m->layer[3].moe &&
              m->layer[4].moe && !m->layer[5].moe);
    /* a MoE layer: attention 4 h^2 + router 8 h + 8 experts x 3 h 32 + 2 rmsnorms */
    ck_assert_rel(model_layer_params(m, 2), 4.0 * 64 * 64 + 8 * 64 + 8 * 3.0 * 64 * 32 + 2 * 64,
                  1e-12);
    ck_assert_rel(model_active_param_count(m, 0),
                  model_param_count(m, 0) - 2 * 6 * 3.0 * 64 * 32, 1e-12);
    model_free(m);
}
END_TEST

START_TEST(key_positions)
{
    load_bad("{\n  \"layers\": 96,\n  \"hidden\": 12288,\n  \"heads\": 95,\n"
             "  \"vocab\": 51200\n}\n",
             "planner: t.json:3:3: model.hidden: must be divisible by heads (95), "
             "or give head_dim");
    load_bad("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 10,\n"
             " \"moe\": {\"experts\": 4, \"top_k\": 2,\n   \"expert_fn\": 8}}",
             "planner: t.json:3:4: model.moe.expert_fn: unknown key 'expert_fn' (did you mean "
             "'expert_ffn'?)");
    load_bad("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 10, \"layer_list\": [\n"
             "  {\"count\": 1},\n  {\"count\": 1, \"heads\": 3}]}",
             "planner: t.json:3:3: model.layer_list[1]: hidden (64) must be divisible by heads "
             "(3), or give head_dim");
    load_bad("{\"layers\": 2, \"hidden\": 64, \"heads\": 8, \"kv_heads\": 3, \"vocab\": 10}",
             "planner: t.json:1:41: model.kv_heads: heads (8) must be a multiple of kv_heads (3)");
    load_bad("{\"layers\": 2,\n\"hidden\": 64}",
             "planner: t.json:1:1: model: missing required key 'heads'");
}
END_TEST

START_TEST(free_null)
{
    model_free(NULL);
}
END_TEST

/* RoPE base and scaling as the configs write them (model_rope.c): Llama 3
 * 70B's rope_theta 500000, Llama 3.1 405B's llama3 scaling (8, 1, 4, 8192),
 * DeepSeek-V3's YaRN (40, betas 32/1, mscales 1/1, 4096), Pythia's
 * rotary_emb_base; absent: 0 (emit says 10000); bad values positioned. */
START_TEST(rope_keys)
{
    model *m = load("configs/llama3-70b.json", NULL);
    ck_assert_double_eq(m->rope.theta, 500000);
    ck_assert_int_eq(m->rope.scaling, ROPE_SCALING_NONE);
    model_free(m);
    m = load("configs/llama3.1-405b.json", NULL);
    ck_assert_double_eq(m->rope.theta, 500000);
    ck_assert_int_eq(m->rope.scaling, ROPE_SCALING_LLAMA3);
    ck_assert_double_eq(m->rope.factor, 8);
    ck_assert_double_eq(m->rope.low_freq_factor, 1);
    ck_assert_double_eq(m->rope.high_freq_factor, 4);
    ck_assert_double_eq(m->rope.original_max_position, 8192);
    model_free(m);
    m = load("configs/deepseek-v3.json", NULL);
    ck_assert_double_eq(m->rope.theta, 10000);
    ck_assert_int_eq(m->rope.scaling, ROPE_SCALING_YARN);
    ck_assert_double_eq(m->rope.factor, 40);
    ck_assert_double_eq(m->rope.beta_fast, 32);
    ck_assert_double_eq(m->rope.beta_slow, 1);
    ck_assert_double_eq(m->rope.mscale, 1);
    ck_assert_double_eq(m->rope.mscale_all_dim, 1);
    ck_assert_double_eq(m->rope.original_max_position, 4096);
    model_free(m);
    m = load("configs/gpt3-175b.json", NULL);
    ck_assert_double_eq(m->rope.theta, 0);
    ck_assert_double_eq(m->rope.beta_fast, -1);
    model_free(m);
    m = load_text("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 100, "
                  "\"position\": \"rope\", \"rope_theta\": 20000, "
                  "\"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 2}}", NULL);
    ck_assert_double_eq(m->rope.theta, 20000);
    ck_assert_int_eq(m->rope.scaling, ROPE_SCALING_OTHER);
    ck_assert_str_eq(m->rope.type, "dynamic");
    model_free(m);
    m = load_text("{\"model_type\": \"gpt_neox\", \"rotary_emb_base\": 10000, "
                  "\"rope_scaling\": null, "
                  "\"use_parallel_residual\": true, \"rotary_pct\": 0.25, "
                  "\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
                  "\"intermediate_size\": 256, \"max_position_embeddings\": 128, "
                  "\"vocab_size\": 100}", NULL);
    ck_assert_double_eq(m->rope.theta, 10000);
    model_free(m);
    load_bad("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 100,\n"
             " \"rope_theta\": -5}",
             "planner: t.json:2:2: model.rope_theta: must be a number > 0");
    load_bad("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 100,\n"
             " \"rope_scaling\": [1]}",
             "planner: t.json:2:2: model.rope_scaling: must be an object or null");
    load_bad("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 100,\n"
             " \"rope_scaling\": {\"factor\": 2}}",
             "planner: t.json:2:2: model.rope_scaling: needs a string rope_type (or type)");
    load_bad("{\"layers\": 2, \"hidden\": 64, \"heads\": 4, \"vocab\": 100,\n"
             " \"rope_scaling\": {\"type\": \"yarn\", \"factor\": \"big\"}}",
             "planner: t.json:2:35: model.rope_scaling.factor: must be a number > 0");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("model_load");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, every_config_loads);
    tcase_add_test(tc, gpt3_175b);
    tcase_add_test(tc, hf_published_totals);
    tcase_add_test(tc, deepseek_v3);
    tcase_add_test(tc, qwen_moe);
    tcase_add_test(tc, recognized_by_keys);
    tcase_add_test(tc, which_value_wins);
    tcase_add_test(tc, sliding_window_layers);
    tcase_add_test(tc, overrides_and_defaults);
    tcase_add_test(tc, seq_beyond_positions);
    tcase_add_test(tc, uneven_layers);
    tcase_add_test(tc, our_moe_flags);
    tcase_add_test(tc, key_positions);
    tcase_add_test(tc, rope_keys);
    tcase_add_test(tc, free_null);
    tcase_add_test(tc, hidden_dropout);
    tcase_add_test(tc, run_apart_from_model);
    tcase_add_test(tc, shipped_moe_configs_by_hand);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
