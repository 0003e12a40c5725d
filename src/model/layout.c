/* layout.c: Megatron's --pipeline-model-parallel-layout (Megatron-Core
 * megatron/core/transformer/pipeline_parallel_layer_layout.py; the flag is
 * in ../shared/reference/megatron-flags-core_v0.15.0.txt).
 *
 * A layout lists the virtual pipeline stages in layer order, chunk-major
 * (all pp ranks of chunk 0, then chunk 1 ...), each as a run of layer
 * letters: "E" embedding, "t" decoder ("transformer") layer, "m" MTP layer,
 * "L" loss (with the output layer); "|" separates stages.  parse_str_to_list
 * drops "," (cosmetic), unrolls "(...)*n" (no nesting: the group ends at the
 * first ")"), then "x*n" for one character, then splits at "|".  So
 * "Et|(tt|)*30mL" is 32 stages: "Et", thirty "tt", "mL".  The stage count
 * over pp gives vpp.  validate_layer_layout's rules: the first layer is the
 * embedding and the last the loss, each exactly once; as many "t" as
 * decoder layers and "m" as MTP layers; no decoder layer after an MTP one.
 * Stages may be empty (Megatron builds no layer there).
 *
 * The planner keeps a layout as decoder counts per virtual stage
 * (strategy.layout_layers) and costs the embedding on virtual stage 0 and
 * the output layer and loss on the last (evaluate.c's rank_layers); so it
 * needs "E" in the first stage and "m"/"L" in the last (Megatron also
 * allows a standalone MTP stage elsewhere: refused here with the reason).
 *
 * The layouts the search builds (strategy_split_layout) generalize
 * Megatron's --account-for-embedding/loss-in-pipeline-split: the embedding,
 * the loss and each MTP layer weigh one decoder layer, and the units are
 * dealt evenly over the virtual stages, the earlier chunks taking the
 * remainder on every rank, and a last partial round going to rank 0, rank
 * pp - 1, then ranks 1, 2, ... (each rank's total within one unit of the
 * others', the end ranks' extra unit being the light embedding or loss).
 * On DeepSeek-V3 (61 layers, 1 MTP layer) it gives the layouts
 * Megatron-Bridge's recipes use at pp 8 vpp 4 ("Et|(tt|)*30mL") and close
 * to its pp 4 vpp 4 one ("Et*4|(t*4|)*14tmL", Bridge's
 * set_deepseek_v3_pipeline_model_parallel_layout; here "Et*3|(t*4|)*14t*2mL").
 */
#include <stdio.h>
#include <string.h>
#include "base/alloc.h"
#include "model/layout.h"

#define LAYOUT_MAX_EXPANDED 65536   /* letters after unrolling */

/* Whether rank r of pp takes one of the last round's `extra` units (the
 * remainder of the units over the virtual stages beyond whole rounds of pp):
 * rank 0, then rank pp - 1, then ranks 1, 2, ...  The end ranks' units
 * include the embedding and the loss, which take less time than a decoder
 * layer; dealt to ranks 0, 1, ... instead, 105 layers at pp 35 vpp 2 gave
 * rank 1 four decoder layers and every other rank three (the step paced by
 * rank 1: a third slower). */
static bool takes_extra_unit(int r, int pp, long extra)
{
    if (extra <= 0)
        return false;
    if (r == 0)
        return true;
    if (r == pp - 1)
        return extra >= 2;
    return r <= extra - 2;
}

int strategy_split_layout(strategy *s, int layers, int mtp, int group)
{
    int pp = s->pp, vpp = s->vpp > 0 ? s->vpp : 1;
    long C = (long)pp * vpp, U = (long)layers + 2 + (mtp > 0 ? mtp : 0);
    long rounds, extra;
    if (pp < 1 || pp > STRATEGY_MAX_STAGES || C > STRATEGY_MAX_CHUNKS || U < C || layers < 1)
        return -1;
    rounds = (U % C) / pp;      /* chunks 0 .. rounds-1 hold one more on every rank */
    extra = (U % C) % pp;       /* and chunk `rounds` on `extra` ranks */
    for (long k = 0; k < C; k++) {
        long c = k / pp;
        int r = (int)(k % pp);
        long units = U / C +
                     (c < rounds || (c == rounds && takes_extra_unit(r, pp, extra)) ? 1 : 0);
        if (k == 0)
            units -= 1;                               /* the embedding */
        if (k == C - 1)
            units -= 1 + (mtp > 0 ? mtp : 0);         /* MTP layers and loss */
        if (units < 0)
            return -1;
        s->layout_layers[k] = (short)units;
    }
    s->layout = true;
    s->account_embedding = s->account_loss = false;
    strategy_stages_from_chunks(s, layers, group);
    return 0;
}

/* ---- parsing -------------------------------------------------------------- */

/* The text being unrolled: letters with the 1-based column each came from. */
typedef struct lay_text {
    char *ch;
    int *col;
    int n;
    size_t cap;     /* entries allocated in ch and col */
} lay_text;

static int lt_push(lay_text *t, char c, int col)
{
    size_t cap_ch = t->cap, cap_col = t->cap;   /* one capacity for both arrays */
    char *nc;
    int *ncol;
    if ((nc = pl_grow(t->ch, &cap_ch, (size_t)t->n + 1, 1, 64)) == NULL)
        return -1;
    t->ch = nc;
    if ((ncol = pl_grow(t->col, &cap_col, (size_t)t->n + 1, sizeof *ncol, 64)) == NULL)
        return -1;
    t->col = ncol;
    t->cap = cap_col;
    t->ch[t->n] = c;
    t->col[t->n++] = col;
    return 0;
}

static void lt_free(lay_text *t)
{
    pl_free(t->ch);
    pl_free(t->col);
    memset(t, 0, sizeof *t);
}

/* The repeat count of "*digits" at in->ch[i] (i at the '*'): its value in
 * *n and its length in *len; false when there is no "*digit" there. */
static bool repeat_at(const lay_text *in, int i, long *n, int *len)
{
    int j = i + 1;
    long v = 0;
    if (i >= in->n || in->ch[i] != '*' || j >= in->n || in->ch[j] < '0' || in->ch[j] > '9')
        return false;
    for (; j < in->n && in->ch[j] >= '0' && in->ch[j] <= '9'; j++)
        v = v > LAYOUT_MAX_EXPANDED ? v : v * 10 + (in->ch[j] - '0');
    *n = v;
    *len = j - i;
    return true;
}

/* A layout error at column col of the text (1 when it concerns no
 * character): the column goes in err->col, no line or file (the caller's). */
#define LFAIL(col, ...) return error_set(err, PLANNER_E_INPUT, NULL, 0, (col), NULL, __VA_ARGS__)

/* Out of memory, reported like a layout error at column 1 (the callers print
 * every failure as "character COL: MESSAGE"), with the internal status. */
static planner_status layout_oom(planner_error *err)
{
    return error_set(err, PLANNER_E_INTERNAL, NULL, 0, 1, NULL, "out of memory");
}

/* One of parse_str_to_list's passes over in into out: groups (the regex
 * \(([^)]+)\)\*(\d+)) or single letters ((.)\*(\d+)) times their count.
 * PLANNER_E_INPUT when the text grows past LAYOUT_MAX_EXPANDED (at the
 * column of the repeat), PLANNER_E_INTERNAL out of memory. */
static planner_status unroll(const lay_text *in, bool groups, lay_text *out, planner_error *err)
{
    int i = 0;
    while (i < in->n) {
        int a = i, b = i + 1, len = 0;   /* repeat [a, b) */
        long n = 0;
        bool hit = false;
        if (groups && in->ch[i] == '(') {
            int close = i + 1;
            while (close < in->n && in->ch[close] != ')')
                close++;
            if (close < in->n && close > i + 1 && repeat_at(in, close + 1, &n, &len)) {
                a = i + 1;
                b = close;
                hit = true;
                len += close + 1 - i;
            }
        } else if (!groups && repeat_at(in, i + 1, &n, &len)) {
            hit = true;
            len += 1;
        }
        if (!hit) {
            if (lt_push(out, in->ch[i], in->col[i]) != 0)
                return layout_oom(err);
            i++;
            continue;
        }
        if ((long)out->n + n * (b - a) > LAYOUT_MAX_EXPANDED)
            LFAIL(in->col[i], "the layout unrolls to more than %d letters", LAYOUT_MAX_EXPANDED);
        for (long r = 0; r < n; r++)
            for (int k = a; k < b; k++)
                if (lt_push(out, in->ch[k], in->col[k]) != 0)
                    return layout_oom(err);
        i += len;
    }
    return PLANNER_OK;
}

/* validate_layer_layout's rules (and the planner's placement of E, m, L)
 * over the unrolled letters t, into s->layout_layers. */
static planner_status layout_rules(strategy *s, const lay_text *t, int layers, int mtp,
                                   planner_error *err)
{
    int k = 0, n_t = 0, n_m = 0, n_e = 0, n_l = 0, first_m = -1, stages;
    int last = t->n > 0 ? t->col[t->n - 1] : 1, i, j;
    for (i = 0, j = -1; i < t->n; i++) {
        char c = t->ch[i];
        if (c == '|') {
            k++;
            continue;
        }
        if (k >= STRATEGY_MAX_CHUNKS)
            LFAIL(t->col[i], "more than %d virtual stages", STRATEGY_MAX_CHUNKS);
        if (c != 'E' && c != 'L' && c != 't' && c != 'm')
            LFAIL(t->col[i], "invalid layer character '%c' (known: E embedding, t decoder "
                  "layer, m MTP layer, L loss, | between stages)", c);
        if (j < 0 && c != 'E')
            LFAIL(t->col[i], "the first layer must be the embedding (E)");
        j = i;
        if (c == 'E' && (n_e++ > 0 || k != 0))
            LFAIL(t->col[i], n_e > 1 ? "the embedding (E) is given twice"
                                     : "the planner needs the embedding (E) in the first stage");
        if (c == 'L' && n_l++ > 0)
            LFAIL(t->col[i], "the loss (L) is given twice");
        if (c == 't' && first_m >= 0)
            LFAIL(t->col[i], "decoder layers must be placed before MTP layers");
        if (c == 'm' && first_m < 0)
            first_m = i;
        n_t += c == 't';
        n_m += c == 'm';
    }
    stages = k + 1;
    if (j < 0)
        LFAIL(1, "the layout holds no layer");
    if (t->ch[j] != 'L')
        LFAIL(t->col[j], "the last layer must be the loss (L)");
    if (stages % s->pp != 0)
        LFAIL(1, "%d stages are not a multiple of pp %d", stages, s->pp);
    if (n_t != layers)
        LFAIL(1, "%d decoder layers (t) given, the model has %d", n_t, layers);
    if (n_m != mtp)
        LFAIL(first_m >= 0 ? t->col[first_m] : last,
              "%d MTP layers (m) given, the model has %d", n_m, mtp);
    memset(s->layout_layers, 0, sizeof s->layout_layers);
    for (i = 0, k = 0; i < t->n; i++) {
        if (t->ch[i] == '|')
            k++;
        else if ((t->ch[i] == 'm' || t->ch[i] == 'L') && k != stages - 1)
            LFAIL(t->col[i], "the planner needs the MTP layers (m) and the loss (L) in the "
                  "last stage");
        else if (t->ch[i] == 't')
            s->layout_layers[k]++;
    }
    s->vpp = stages / s->pp;
    s->layout = true;
    s->account_embedding = s->account_loss = false;
    return PLANNER_OK;
}

planner_status strategy_layout_parse(strategy *s, const char *text, int layers, int mtp,
                                     planner_error *err)
{
    lay_text raw = {0}, grouped = {0}, flat = {0};
    planner_status rc = PLANNER_OK;
    int c = 1;
    if (s->pp < 1 || s->pp > STRATEGY_MAX_STAGES)
        LFAIL(1, "pp %d out of range", s->pp);
    for (const char *p = text; *p && rc == PLANNER_OK; p++, c++)
        if (*p != ',' && lt_push(&raw, *p, c) != 0)
            rc = layout_oom(err);
    if (rc == PLANNER_OK && (rc = unroll(&raw, true, &grouped, err)) == PLANNER_OK &&
        (rc = unroll(&grouped, false, &flat, err)) == PLANNER_OK)
        rc = layout_rules(s, &flat, layers, mtp, err);

    lt_free(&raw);
    lt_free(&grouped);
    lt_free(&flat);
    return rc;
}

#undef LFAIL

/* ---- text ------------------------------------------------------------------ */

/* Appends `letter` (n > 1: "letter*n"; n == 0: nothing) at buf[len]. */
static size_t put(char *buf, size_t size, size_t len, char letter, int n)
{
    int w = n <= 0 ? 0 : n == 1
        ? snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%c", letter)
        : snprintf(len < size ? buf + len : NULL, len < size ? size - len : 0, "%c*%d",
                   letter, n);
    return len + (size_t)(w > 0 ? w : 0);
}

size_t strategy_layout_format(const strategy *s, int layers, int mtp, char *buf, size_t size)
{
    int pp = s->pp, vpp = s->vpp > 1 ? s->vpp : 1;
    size_t len = 0;
    if (size > 0)
        buf[0] = '\0';
    for (int v = 0; v < vpp; v++) {
        for (int r = 0; r < pp; r++) {
            int n = strategy_chunk_layers(s, layers, r, v, NULL);
            bool lastseg = v == vpp - 1 && r == pp - 1;
            len = put(buf, size, len, v == 0 && r == 0 ? 'E' : '|', 1);
            len = put(buf, size, len, 't', n);
            /* MTP layers after the decoder layers, in the last stage with
             * the loss (validate_layer_layout) */
            if (lastseg)
                len = put(buf, size, put(buf, size, len, 'm', mtp), 'L', 1);
        }
    }
    return len;
}
