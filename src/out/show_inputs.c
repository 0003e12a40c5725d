/* show_inputs.c: `--show-inputs`, the model and the cluster as the planner
 * understood them, after defaults and overrides, with derived figures
 * (parameter counts, GPUs in total, per-group peaks and memory).
 *
 * The text is for people: one block per model and per node group, figures
 * with their units (units_format), defaults marked "(default)".  Layers are
 * printed as runs of identical layers, only when they are not all alike. */
#include <stdio.h>
#include <string.h>
#include "out/show_inputs.h"
#include "base/alloc.h"
#include "base/jsonout.h"
#include "base/units.h"
#include "inputs/stack.h"

/* "583.5 M" or "11.51 B". */
static void fmt_params(double p, char *buf, size_t size)
{
    if (p >= 1e9)
        snprintf(buf, size, "%.4g B", p / 1e9);
    else
        snprintf(buf, size, "%.4g M", p / 1e6);
}


static void show_layer_runs(FILE *out, const model *m)
{
    int i = 0;
    while (i < m->layers) {
        int j = i;
        const layer_spec *l = &m->layer[i];
        char range[32], pbuf[32];
        while (j + 1 < m->layers && layer_spec_same(&m->layer[j + 1], l))
            j++;
        if (i == j)
            snprintf(range, sizeof range, "%d", i);
        else
            snprintf(range, sizeof range, "%d-%d", i, j);
        fprintf(out, "    %-9s hidden %d, heads %d (kv %d) x %d, ", range, l->hidden, l->heads,
                l->kv_heads, l->head_dim);
        if (l->moe)
            fprintf(out, "MoE MLP");
        else
            fprintf(out, "ffn %d", l->ffn_hidden);
        if (l->window > 0)
            fprintf(out, ", sliding window %d", l->window);
        if (l->chunk > 0)
            fprintf(out, ", attention chunks of %d", l->chunk);
        fmt_params(model_layer_params(m, i), pbuf, sizeof pbuf);
        fprintf(out, ", %s params each\n", pbuf);
        i = j + 1;
    }
}

/* What differs from a plain pre-norm block: biases, block layout, QK-norm,
 * partial rotary, a clamped GLU. */
static void show_architecture(FILE *out, const model *m)
{
    unsigned b = model_biases(m);
    if (b != model_norm_biases(m->norm))   /* not what the norm implies */
        fprintf(out, "  biases:%s%s%s%s%s\n", b & MODEL_BIAS_QKV ? " q/k/v" : "",
                b & MODEL_BIAS_OUT ? " attention-output" : "", b & MODEL_BIAS_MLP ? " MLP" : "",
                b & MODEL_BIAS_NORM ? " norm" : "", b == 0 ? " none" : "");
    if (m->parallel_block || model_norms_per_layer(m) != 2 || m->qk_norm || m->rotary_dim > 0) {
        fprintf(out, "  %s block, %d norm%s per layer%s",
                m->parallel_block ? "parallel" : "sequential",
                model_norms_per_layer(m), model_norms_per_layer(m) == 1 ? "" : "s",
                m->qk_norm == QK_NORM_HEAD ? ", QK-norm per head"
                : m->qk_norm == QK_NORM_ALL_HEADS ? ", QK-norm over all heads" : "");
        if (m->rotary_dim > 0)
            fprintf(out, ", rotary on %d of %d head dims", m->rotary_dim, m->head_dim);
        fprintf(out, "\n");
    }
    if (m->glu_limit > 0)
        fprintf(out, "  GLU inputs clamped at %g (swiglu_limit)\n", m->glu_limit);
}

static void show_model(FILE *out, const model *m, const run_spec *run)
{
    int i, alike = 1;
    double total = model_param_count(m, run->seq_len);

    char src[64];
    model_source_name(m, src, sizeof src);
    fprintf(out, "Model %s (%s)\n", m->name, src);
    fprintf(out, "  layers %d, hidden %d, heads %d, kv_heads %d, head_dim %d, ffn_hidden %d\n",
            m->layers, m->hidden, m->heads, m->kv_heads, m->head_dim, m->ffn_hidden);
    fprintf(out, "  vocab %d, seq_len %d%s, max_position %d\n", m->vocab, run->seq_len,
            run->seq_len_default ? " (default)" : "", model_positions(m, run->seq_len));
    fprintf(out, "  activation %s, normalization %s, position %s, tied embeddings %s, "
                 "residual dropout %g%s\n",
            activation_name(m->act), m->norm == NORM_RMSNORM ? "rmsnorm" : "layernorm",
            m->position == POS_ROPE ? "rope" : "learned", m->tied_embeddings ? "yes" : "no",
            model_hidden_dropout(m), m->has_hidden_dropout ? "" : " (default)");
    show_architecture(out, m);
    fprintf(out,
            "  global batch %d sequences%s (%.4g M tokens), precision %s (runs at the %s peak)\n",
            run->global_batch, run->global_batch_default ? " (default)" : "",
            (double)run->global_batch * run->seq_len / 1e6, precision_name(m->prec),
            peak_format_name(precision_peak(m->prec)));
    if (m->moe.experts > 0) {
        int n_moe = 0;
        for (i = 0; i < m->layers; i++)
            n_moe += m->layer[i].moe;
        fprintf(out, "  MoE: %d experts, top-%d, expert ffn %d", m->moe.experts, m->moe.top_k,
                m->moe.expert_ffn);
        if (m->moe.shared_experts > 0)
            fprintf(out, ", %d shared (ffn %d)", m->moe.shared_experts,
                    m->moe.shared_expert_ffn > 0 ? m->moe.shared_expert_ffn
                                                 : m->moe.expert_ffn);
        fprintf(out, "; %d MoE layers, %d dense\n", n_moe, m->layers - n_moe);
    }
    if (m->mla.kv_lora_rank > 0)
        fprintf(out, "  MLA: q_lora_rank %d, kv_lora_rank %d, qk head dim %d nope + %d rope, "
                     "v head dim %d\n",
                m->mla.q_lora_rank, m->mla.kv_lora_rank, m->mla.qk_nope_head_dim,
                m->mla.qk_rope_head_dim, m->mla.v_head_dim);
    if (m->mtp_layers > 0)
        fprintf(out, "  multi-token prediction layers: %d (last stage)\n", m->mtp_layers);
    fprintf(out, "  parameters %.4g B (embedding %.4g B%s)", total / 1e9,
            model_embedding_params(m, run->seq_len) / 1e9,
            m->tied_embeddings ? ", tied output" : "");
    if (m->moe.experts > 0)
        fprintf(out, ", active per token %.4g B",
                model_active_param_count(m, run->seq_len) / 1e9);
    fprintf(out, "\n");
    for (i = 1; i < m->layers; i++)
        if (!layer_spec_same(&m->layer[i], &m->layer[0]))
            alike = 0;
    if (alike) {
        char pbuf[32];
        fmt_params(model_layer_params(m, 0), pbuf, sizeof pbuf);
        fprintf(out, "  decoder layers: all %d alike, %s params each\n", m->layers, pbuf);
    } else {
        fprintf(out, "  decoder layers%s:\n", m->uneven ? " (uneven, from layer_list)" : "");
        show_layer_runs(out, m);
    }
}

static void show_group(FILE *out, const node_group *g)
{
    char a[32], b[32];
    int f, first = 1;
    fprintf(out, "  group %s: %s (%s), %d node%s x %d GPUs = %d GPUs\n", g->name, g->gpu.name,
            gpu_generation_name(g->gpu.gen), g->nodes, g->nodes == 1 ? "" : "s",
            g->gpus_per_node, group_total_gpus(g));
    fprintf(out, "    dense peak per GPU:");
    for (f = 0; f < PEAK_COUNT; f++) {
        if (g->gpu.peak_flops[f] <= 0)
            continue;
        units_format(g->gpu.peak_flops[f], UNIT_FLOPS, a, sizeof a);
        fprintf(out, "%s %s %s", first ? "" : ",", peak_format_name((peak_format)f), a);
        first = 0;
    }
    fprintf(out, "\n");
    units_format(g->gpu.mem_bytes, UNIT_SIZE, a, sizeof a);
    units_format(g->gpu.usable_mem_bytes, UNIT_SIZE, b, sizeof b);
    fprintf(out, "    memory %s (usable %s), ", a, b);
    units_format(g->gpu.hbm_bytes_per_s, UNIT_BANDWIDTH, a, sizeof a);
    fprintf(out, "HBM %s\n", a);
    units_format(g->intra_bytes_per_s, UNIT_BANDWIDTH, a, sizeof a);
    units_format(g->intra_latency_s, UNIT_TIME, b, sizeof b);
    fprintf(out, "    intra-node %s per GPU one-way, latency %s; NVLink domain %d GPUs\n", a, b,
            g->gpu.nvlink_domain);
    units_format(g->inter_bytes_per_s, UNIT_BANDWIDTH, a, sizeof a);
    units_format(g->inter_latency_s, UNIT_TIME, b, sizeof b);
    fprintf(out, "    inter-node %s per GPU one-way (%.4g Gb/s), latency %s\n", a,
            g->inter_bytes_per_s * 8 / 1e9, b);
}

/* `fmt`: the model's peak column, for the cluster's total; `torch_compile`:
 * the model's blocks are compiled (--torch-compile), shown with the stack. */
static void show_cluster(FILE *out, const cluster *c, peak_format fmt, bool torch_compile)
{
    const stack_spec *st = stack_get(c->stack);
    int i;
    double peak = 0;
    char a[32], b[32];
    for (i = 0; i < c->n_groups; i++)
        peak += group_total_gpus(&c->group[i]) * c->group[i].gpu.peak_flops[fmt];
    fprintf(out, "Cluster %s: %d GPUs in %d group%s", c->name, cluster_total_gpus(c),
            c->n_groups, c->n_groups == 1 ? "" : "s");
    if (peak > 0) {
        units_format(peak, UNIT_FLOPS, a, sizeof a);
        fprintf(out, ", %s dense %s in all", a, peak_format_name(fmt));
    }
    fprintf(out, "\n");
    for (i = 0; i < c->n_groups; i++)
        show_group(out, &c->group[i]);
    fprintf(out, "  stack %s (%s)%s\n", st->name, st->version,
            torch_compile ? ", blocks under torch.compile" : "");
    if (c->n_links > 0)
        fprintf(out, "  links between groups (per GPU, one-way):\n");
    for (i = 0; i < c->n_links; i++) {
        const group_link *l = &c->link[i];
        units_format(l->bytes_per_s, UNIT_BANDWIDTH, a, sizeof a);
        units_format(l->latency_s, UNIT_TIME, b, sizeof b);
        fprintf(out, "    %s <-> %s: %s (%.4g Gb/s), latency %s\n", c->group[l->a].name,
                c->group[l->b].name, a, l->bytes_per_s * 8 / 1e9, b);
    }
}

void show_inputs(FILE *out, const model *m, const run_spec *run, const cluster *c)
{
    if (m != NULL)
        show_model(out, m, run);
    if (m != NULL && c != NULL)
        fprintf(out, "\n");
    if (c != NULL)
        show_cluster(out, c, m != NULL ? precision_peak(m->prec) : PEAK_BF16,
                     m != NULL && m->torch_compile);
}

/* The model as JSON: its shape, architecture, parameter counts, the
 * sliding-window layers and the reader's notes. */
static json_t *model_json(const model *m, const run_spec *run)
{
    char src[64];
    int sliding = 0, window = 0;
    json_t *notes = json_array();
    for (int i = 0; i < m->layers; i++)
        if (m->layer[i].window > 0) {
            sliding++;
            window = m->layer[i].window;
        }
    for (int i = 0; i < m->n_notes; i++)
        json_array_append_new(notes, json_string(m->notes[i]));
    model_source_name(m, src, sizeof src);
    return json_pack("{s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:s, s:s, s:s, "
                     "s:b, s:b, s:i, s:s, s:i, s:i, s:i, s:i, s:o, s:o, s:o}",
                     "name", m->name, "format", src, "layers", m->layers, "hidden", m->hidden,
                     "heads", m->heads, "kv_heads", m->kv_heads, "head_dim", m->head_dim,
                     "ffn_hidden", m->ffn_hidden, "vocab", m->vocab, "seq_len", run->seq_len,
                     "max_position", model_positions(m, run->seq_len),
                     "activation", activation_name(m->act),
                     "normalization", m->norm == NORM_RMSNORM ? "rmsnorm" : "layernorm",
                     "position", m->position == POS_ROPE ? "rope" : "learned",
                     "tied_embeddings", m->tied_embeddings, "parallel_block", m->parallel_block,
                     "global_batch", run->global_batch, "precision", precision_name(m->prec),
                     "experts", m->moe.experts, "top_k", m->moe.top_k,
                     "sliding_window_layers", sliding, "sliding_window", window,
                     "parameters", jsonout_real(model_param_count(m, run->seq_len)),
                     "active_parameters", jsonout_real(model_active_param_count(m, run->seq_len)),
                     "notes", notes);
}

/* `torch_compile` is written only when set, as in the plan's document. */
static json_t *cluster_json(const cluster *c, bool torch_compile)
{
    json_t *o;
    json_t *groups = json_array();
    for (int i = 0; i < c->n_groups; i++) {
        const node_group *g = &c->group[i];
        json_array_append_new(
            groups, json_pack("{s:s, s:s, s:i, s:i, s:o, s:o, s:o, s:o}", "name", g->name, "gpu",
                              g->gpu.name, "nodes", g->nodes, "gpus_per_node", g->gpus_per_node,
                              "memory_bytes", jsonout_real(g->gpu.mem_bytes),
                              "usable_memory_bytes", jsonout_real(g->gpu.usable_mem_bytes),
                              "intra_node_bytes_per_s", jsonout_real(g->intra_bytes_per_s),
                              "inter_node_bytes_per_s", jsonout_real(g->inter_bytes_per_s)));
    }
    o = json_pack("{s:s, s:i, s:o, s:s}", "name", c->name, "gpus", cluster_total_gpus(c),
                  "groups", groups, "stack", stack_get(c->stack)->name);
    if (o != NULL && torch_compile)
        json_object_set_new(o, "torch_compile", json_true());
    return o;
}

int show_inputs_json(FILE *out, const model *m, const run_spec *run, const cluster *c)
{
    json_t *root = json_pack("{s:o, s:o}", "model", model_json(m, run), "cluster",
                             cluster_json(c, m->torch_compile));
    char *text = jsonout_text(root, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
    int rc = text != NULL ? 0 : -1;   /* a failed write: ferror(out), the caller's */
    if (text != NULL)
        fputs(text, out);
    pl_free(text);
    json_decref(root);
    return rc;
}
