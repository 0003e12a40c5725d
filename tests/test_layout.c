/* test_layout.c: Megatron's --pipeline-model-parallel-layout (model/layout.h).
 *   - parsing Megatron-Bridge's published DeepSeek-V3 layouts (hand-counted:
 *     "Et|(tt|)*30mL" at pp 8 is 32 stages, vpp 4, 1 + 30 x 2 = 61 decoder
 *     layers; "Et*4|(t*4|)*14tmL" at pp 4 is 16 stages, vpp 4) into decoder
 *     counts per virtual stage and per rank, which strategy_check accepts;
 *   - the grammar's corners (commas, "(...)*n", "x*n") and each of
 *     validate_layer_layout's rules refused with its column;
 *   - the search's rule (strategy_split_layout): DeepSeek-V3 with its MTP
 *     layer at pp 8 vpp 4 is exactly Bridge's "Et|(tt|)*30mL"; without MTP
 *     at pp 2 vpp 8 (63 units over 16 stages: fifteen of 4, one of 3)
 *     "Et*3|(t*4|)*14t*2L"; a last partial round of units to rank 0, rank
 *     pp - 1, then 1, 2, ...: GPT 530B's 105 layers at pp 35 vpp 2 three on
 *     every rank; formatting round-trips through the parser. */
#include <string.h>
#include "inputs/model.h"
#include "model/layout.h"
#include "testutil.h"

static void dsv3(model *m)
{
    memset(m, 0, sizeof *m);
    m->layers = 61;
    m->heads = 128;
    m->kv_heads = 128;
}

static void strat(strategy *s, int pp)
{
    memset(s, 0, sizeof *s);
    s->tp = 1;
    s->pp = pp;
    s->dp = 32;
    s->cp = 1;
    s->ep = 1;
    s->etp = 1;
    s->vpp = 1;
    s->mbs = 1;
    s->gbs = 4096;
    s->seq_len = 4096;
}

START_TEST(bridge_layouts)
{
    model m;
    strategy s;
    planner_error why;
    planner_error rule;
    int first = -1;
    static const struct {
        int pp;
        const char *text;
        int vpp, stage_idx[3], stage_n[3], rank_idx[3], rank_n[3];
    } ok[] = {
        /* rank 0: stages 0, 8, 16, 24 = 1 + 2 + 2 + 2; rank 7: 2 + 2 + 2 + 0 */
        {8, "Et|(tt|)*30mL", 4, {0, 1, 31}, {1, 2, 0}, {0, 1, 7}, {7, 8, 6}},
        /* rank 0: 4 x 4; rank 3: 3 x 4 + 1 */
        {4, "Et*4|(t*4|)*14tmL", 4, {0, 14, 15}, {4, 4, 1}, {0, 1, 3}, {16, 16, 13}},
    };
    dsv3(&m);
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        strat(&s, ok[i].pp);
        ck_assert_msg(strategy_layout_parse(&s, ok[i].text, 61, 1, tu_err(&why)) == 0,
                      "%s", why.msg);
        ck_assert_int_eq(s.vpp, ok[i].vpp);
        ck_assert(s.layout);
        strategy_stages_from_chunks(&s, 61, 0);
        for (int j = 0; j < 3; j++) {
            ck_assert_int_eq(s.layout_layers[ok[i].stage_idx[j]], ok[i].stage_n[j]);
            ck_assert_int_eq(s.stage[ok[i].rank_idx[j]].n_layers, ok[i].rank_n[j]);
        }
        ck_assert_msg(strategy_check(&m, &s, tu_err(&rule)) == 0, "%s", rule.msg);
    }
    /* pp 4: chunk 1 of rank 0 is stage 4: after 4 + 3 x 4 = 16 layers */
    ck_assert_int_eq(strategy_chunk_layers(&s, 61, 0, 1, &first), 4);
    ck_assert_int_eq(first, 16);
    /* commas are cosmetic; "x*n" and "(...)*n" unroll (the docstring's
     * example "Ettt|(tt|)*29,m|L" is 32 stages: vpp 2 at pp 16, with the
     * MTP layer in a stage of its own, which Megatron allows and the planner
     * refuses) */
    strat(&s, 16);
    ck_assert_msg(strategy_layout_parse(&s, "Ettt|(tt|)*29,m|L", 61, 1, tu_err(&why)) != 0,
                  "%s", why.msg);
    ck_assert_ptr_nonnull(strstr(why.msg, "last stage"));   /* m and L apart */
    strat(&s, 2);
    ck_assert_msg(strategy_layout_parse(&s, "E,t,t|t,L", 3, 0, tu_err(&why)) == 0, "%s", why.msg);
    ck_assert_int_eq(s.layout_layers[0], 2);
    ck_assert_int_eq(s.layout_layers[1], 1);
}
END_TEST

START_TEST(invalid_layouts)
{
    static const struct {
        int pp, layers, mtp;
        const char *text, *msg;
        int col;
    } bad[] = {
        {2, 3, 0, "Ett|tx|L", "invalid layer character 'x'", 6},
        {2, 3, 0, "tEt|tL", "first layer must be the embedding", 1},
        {2, 3, 0, "Ett|tLt", "last layer must be the loss", 7},
        {2, 3, 0, "Ett|EtL", "embedding (E) is given twice", 5},
        {2, 3, 0, "Ett|tLL", "loss (L) is given twice", 7},
        {2, 3, 0, "Et|t|tL", "3 stages are not a multiple of pp 2", 1},
        {2, 4, 0, "Ett|tL", "3 decoder layers (t) given, the model has 4", 1},
        {2, 3, 1, "Ett|tL", "0 MTP layers (m) given, the model has 1", 6},
        {2, 3, 1, "Ett|mtL", "decoder layers must be placed before MTP layers", 6},
        {4, 3, 1, "Et|t|tm|L", "MTP layers (m) and the loss (L) in the last stage", 7},
        {2, 3, 0, "|EtttL", "embedding (E) in the first stage", 2},
        {2, 3, 0, "Et*99999999|L", "unrolls to more than", 2},
        {2, 3, 0, "", "holds no layer", 1},
    };
    strategy s;
    planner_error why;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        strat(&s, bad[i].pp);
        ck_assert_int_eq(strategy_layout_parse(&s, bad[i].text, bad[i].layers, bad[i].mtp,
                                               tu_err(&why)), PLANNER_E_INPUT);
        ck_assert_msg(strstr(why.msg, bad[i].msg) != NULL, "%s: %s", bad[i].text, why.msg);
        ck_assert_msg(why.col == bad[i].col, "%s: column %d, expected %d", bad[i].text, why.col,
                      bad[i].col);
    }
}
END_TEST

/* strategy_split_layout of `layers` (+ `mtp`) at pp x vpp into *s equals
 * Megatron's layout string `text`. */
static void split_is(strategy *s, int pp, int vpp, int layers, int mtp, const char *text)
{
    strategy back;
    planner_error why;
    strat(s, pp);
    s->vpp = vpp;
    ck_assert_int_eq(strategy_split_layout(s, layers, mtp, 0), 0);
    strat(&back, pp);
    ck_assert_msg(strategy_layout_parse(&back, text, layers, mtp, tu_err(&why)) == 0, "%s",
                  why.msg);
    ck_assert_msg(memcmp(s->layout_layers, back.layout_layers, sizeof s->layout_layers) == 0,
                  "pp %d vpp %d: not %s", pp, vpp, text);
}

START_TEST(search_rule)
{
    model m;
    strategy s, back;
    char text[400];
    planner_error why;
    planner_error rule;
    dsv3(&m);
    m.mtp_layers = 1;
    strat(&s, 8);
    s.vpp = 4;
    ck_assert_int_eq(strategy_split_layout(&s, 61, 1, 0), 0);
    strategy_layout_format(&s, 61, 1, text, sizeof text);
    strat(&back, 8);
    ck_assert_msg(strategy_layout_parse(&back, "Et|(tt|)*30mL", 61, 1, tu_err(&why)) == 0,
                  "%s", why.msg);
    ck_assert_int_eq(memcmp(s.layout_layers, back.layout_layers, sizeof s.layout_layers), 0);
    ck_assert_msg(strategy_check(&m, &s, tu_err(&rule)) == 0, "%s", rule.msg);
    /* the text parses back to the same layout */
    strat(&back, 8);
    ck_assert_msg(strategy_layout_parse(&back, text, 61, 1, tu_err(&why)) == 0,
                  "%s: %s", text, why.msg);
    ck_assert_int_eq(memcmp(s.layout_layers, back.layout_layers, sizeof s.layout_layers), 0);

    /* no MTP, pp 2 vpp 8: 63 units over 16 stages */
    m.mtp_layers = 0;
    split_is(&s, 2, 8, 61, 0, "Et*3|(t*4|)*14t*2L");
    ck_assert_int_eq(s.stage[0].n_layers, 3 + 7 * 4);
    ck_assert_int_eq(s.stage[1].n_layers, 7 * 4 + 2);
    ck_assert_msg(strategy_check(&m, &s, tu_err(&rule)) == 0, "%s", rule.msg);
    /* too many stages for the units: 8 x 8 > 63 */
    strat(&s, 8);
    s.vpp = 8;
    ck_assert_int_eq(strategy_split_layout(&s, 61, 0, 0), -1);
    /* a stage list that disagrees with the layout is refused */
    strat(&s, 2);
    s.vpp = 8;
    ck_assert_int_eq(strategy_split_layout(&s, 61, 0, 0), 0);
    s.stage[0].n_layers--;
    s.stage[1].n_layers++;
    ck_assert_int_eq(strategy_check(&m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "the layout gives"));
}
END_TEST

/* A last partial round of leftover units: rank 0, rank pp - 1, then 1, 2.
 * GPT 530B (Korthikanti et al.): 105 layers at pp 35 vpp 2, 107 units over
 * 70 stages: one each, 37 left: chunk 0 on all 35 ranks, then chunk 1 of
 * ranks 0 and 34 (whose extra unit is the embedding and the loss): three
 * decoder layers on every rank, 2 | 1 ("Et|(tt|)*35(t|)*33tL"); dealt to
 * ranks 0 and 1 they gave rank 1 four layers.  One unit left (pp 2 vpp 8,
 * search_rule): rank 0 alone.  Three (63 units at pp 4 vpp 4: 3 each, 15
 * left = 3 rounds + 3): ranks 0, 3 and 1 hold 16 units, rank 2 15. */
START_TEST(leftover_units_to_the_end_ranks)
{
    model m;
    strategy s;
    planner_error rule;
    dsv3(&m);
    m.layers = 105;
    split_is(&s, 35, 2, 105, 0, "Et|(tt|)*35(t|)*33tL");
    for (int r = 0; r < 35; r++)
        ck_assert_int_eq(s.stage[r].n_layers, 3);
    s.dp = 1;
    s.gbs = 280;
    ck_assert_msg(strategy_check(&m, &s, tu_err(&rule)) == 0, "%s", rule.msg);
    m.layers = 61;
    split_is(&s, 4, 4, 61, 0, "Et*3|(t*4|)*13t*3|t*3L");
    ck_assert_int_eq(s.stage[0].n_layers, 15);
    ck_assert_int_eq(s.stage[1].n_layers, 16);
    ck_assert_int_eq(s.stage[2].n_layers, 15);
    ck_assert_int_eq(s.stage[3].n_layers, 15);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("layout");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, bridge_layouts);
    tcase_add_test(tc, invalid_layouts);
    tcase_add_test(tc, search_rule);
    tcase_add_test(tc, leftover_units_to_the_end_ranks);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
