/* test_chunks.c: interleaved pipelines with uneven virtual chunks.
 *   - strategy_chunk_layers' rule: Megatron's --account-for-embedding/loss-
 *     in-pipeline-split (Llama 3.1 405B: (126 + 2) / (8 x 8) = 2 per chunk,
 *     1 in the first and the last), strategy_check accepting it and
 *     rejecting what Megatron rejects;
 *   - schedule_simulate_chunks: a hand-derived 2-rank 2-chunk case per
 *     stack's warm-up, equal chunks = schedule_simulate_ex, the
 *     allocation-free engine = the event engine on random uneven chunks, no
 *     allocation without events;
 *   - memory_inflight_chunks: hand-derived peak, equal chunks =
 *     memory_inflight x their sum;
 *   - time and memory simulate one schedule: each rank's order in the
 *     simulation's events holds what memory_inflight_chunks and
 *     memory_inflight count, on every stack. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "base/alloc.h"
#include "schedule/evaluate.h"
#include "cost/memory.h"
#include "schedule/pipeline.h"
#include "testutil.h"

static void model_405b(model *m)
{
    memset(m, 0, sizeof *m);
    m->layers = 126;
    m->heads = 128;
    m->kv_heads = 8;
}

static void strat(strategy *s, int tp, int pp, int dp, int vpp, int gbs)
{
    memset(s, 0, sizeof *s);
    s->tp = tp;
    s->pp = pp;
    s->dp = dp;
    s->cp = s->ep = s->etp = 1;
    s->vpp = vpp;
    s->mbs = 1;
    s->gbs = gbs;
    s->seq_len = 8192;
    s->sp = true;
}

START_TEST(account_rule_405b)
{
    model m;
    strategy s;
    planner_error rule;
    int first, r, c, total = 0;
    model_405b(&m);
    strat(&s, 8, 8, 8, 8, 512);
    ck_assert_int_eq(strategy_split_account(&s, 126, 0), 0);
    /* chunk-major: chunk 0 of rank 0 holds the embedding + layer 0 */
    ck_assert_int_eq(strategy_chunk_layers(&s, 126, 0, 0, &first), 1);
    ck_assert_int_eq(first, 0);
    ck_assert_int_eq(strategy_chunk_layers(&s, 126, 1, 0, &first), 2);
    ck_assert_int_eq(first, 1);
    /* chunk 1 of rank 0 follows chunk 0 of rank 7: 1 + 7 x 2 = 15 */
    ck_assert_int_eq(strategy_chunk_layers(&s, 126, 0, 1, &first), 2);
    ck_assert_int_eq(first, 15);
    /* the last chunk: layer 125 + the loss */
    ck_assert_int_eq(strategy_chunk_layers(&s, 126, 7, 7, &first), 1);
    ck_assert_int_eq(first, 125);
    for (r = 0; r < 8; r++)
        for (c = 0; c < 8; c++)
            total += strategy_chunk_layers(&s, 126, r, c, NULL);
    ck_assert_int_eq(total, 126);
    ck_assert_int_eq(s.stage[0].n_layers, 15);
    ck_assert_int_eq(s.stage[3].n_layers, 16);
    ck_assert_int_eq(s.stage[7].n_layers, 15);
    ck_assert_msg(strategy_check(&m, &s, tu_err(&rule)) == 0, "%s", rule.msg);
    ck_assert_int_eq(strategy_chunk_layers(&s, 126, 8, 0, NULL), -1);
    ck_assert_int_eq(strategy_chunk_layers(&s, 126, 0, 8, NULL), -1);

    /* pp 16 vpp 8: (126 + 2) / 128 = 1 per chunk; the first chunk holds only
     * the embedding, the last only the loss */
    strat(&s, 4, 16, 4, 8, 1536);
    ck_assert_int_eq(strategy_split_account(&s, 126, 0), 0);
    ck_assert_int_eq(strategy_chunk_layers(&s, 126, 0, 0, NULL), 0);
    ck_assert_int_eq(strategy_chunk_layers(&s, 126, 15, 7, NULL), 0);
    ck_assert_int_eq(s.stage[0].n_layers, 7);
    ck_assert_msg(strategy_check(&m, &s, tu_err(&rule)) == 0, "%s", rule.msg);

    /* 128 units do not cut into 8 x 3 chunks */
    strat(&s, 8, 8, 8, 3, 512);
    ck_assert_int_eq(strategy_split_account(&s, 126, 0), -1);
}
END_TEST

START_TEST(check_rejects)
{
    model m;
    strategy s;
    planner_error rule;
    model_405b(&m);
    /* the flags with a split that is not theirs */
    strat(&s, 8, 8, 8, 8, 512);
    ck_assert_int_eq(strategy_split_account(&s, 126, 0), 0);
    s.stage[0].n_layers = 16;
    s.stage[7].n_layers = 14;
    ck_assert_int_eq(strategy_check(&m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "embedding/loss"));
    /* the flags where (L + 2) % (pp vpp) != 0 */
    strat(&s, 8, 8, 8, 8, 512);
    ck_assert_int_eq(strategy_split_account(&s, 126, 0), 0);
    s.vpp = 3;
    ck_assert_int_eq(strategy_check(&m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "not a multiple of pp 8 x vpp 3"));
    /* without the flags, interleaving needs each rank's layers % vpp == 0:
     * 126 = 15 + 6 x 16 + 15 at vpp 8 does not */
    strat(&s, 8, 8, 8, 8, 512);
    ck_assert_int_eq(strategy_split_account(&s, 126, 0), 0);
    s.account_embedding = s.account_loss = false;
    ck_assert_int_eq(strategy_check(&m, &s, tu_err(&rule)), PLANNER_E_INPUT);
    ck_assert_ptr_nonnull(strstr(rule.msg, "virtual stages"));
    /* decoder-first/last style: 14 + 7 x 16 = 126, vpp 2, every rank even
     * per chunk: accepted, chunk 1 of rank 0 starts after chunk 0 of every
     * rank (7 + 7 x 8 = 63) */
    strat(&s, 8, 8, 8, 2, 512);
    s.n_stages = 8;
    for (int i = 0; i < 8; i++) {
        s.stage[i].n_layers = i == 0 ? 14 : 16;
        s.stage[i].first_layer = i == 0 ? 0 : 7 + (i - 1) * 8;
        s.stage[i].tp = 8;
        s.stage[i].dp = 8;
    }
    ck_assert_msg(strategy_check(&m, &s, tu_err(&rule)) == 0, "%s", rule.msg);
    {
        int first;
        ck_assert_int_eq(strategy_chunk_layers(&s, 126, 0, 1, &first), 7);
        ck_assert_int_eq(first, 63);
    }
    s.stage[3].first_layer = 0;
    ck_assert_int_eq(strategy_check(&m, &s, tu_err(&rule)), PLANNER_E_INPUT);
}
END_TEST

/* pp 2, vpp 2, m 2 (= pp: Megatron-LM before core_r0.10.0 runs every
 * forward first), no p2p.  Forwards
 * (rank, chunk): (0,0) 1 s, (0,1) 2 s, (1,0) 2 s, (1,1) 3 s; backwards
 * twice.  By hand: rank 0 F(0,c0) 0-1, F(1,c0) 1-2; rank 1 F(0,c0) 1-3,
 * F(1,c0) 3-5; rank 0 F(0,c1) 3-5, F(1,c1) 5-7; rank 1 F(0,c1) 5-8,
 * F(1,c1) 8-11, B(0,c1) 11-17, B(1,c1) 17-23; rank 0 B(0,c1) 17-21,
 * B(1,c1) 23-27; rank 1 B(0,c0) 23-27, B(1,c0) 27-31; rank 0 B(0,c0)
 * 27-29, B(1,c0) 31-33.  Span 33, rank 1 done at 31. */
START_TEST(hand_two_ranks)
{
    const double f[4] = {1, 2, 2, 3}, b[4] = {2, 4, 4, 6}, p2p[2] = {0, 0};
    double end[2];
    sched_events ev = {0};
    double span = schedule_simulate_chunks(STACK_PIPE_MEGATRON, 2, 2, 2, f, b, p2p, 0, end, NULL);
    ck_assert_rel(span, 33.0, 1e-12);
    ck_assert_rel(end[0], 33.0, 1e-12);
    ck_assert_rel(end[1], 31.0, 1e-12);
    span = schedule_simulate_chunks(STACK_PIPE_MEGATRON, 2, 2, 2, f, b, p2p, 0, end, &ev);
    ck_assert_rel(span, 33.0, 1e-12);
    ck_assert_int_eq(ev.n >= 16, 1);
    sched_events_free(&ev);
}
END_TEST

/* The same pipeline with rank 0's chunk 1 slow (forward 5 s, backward 4 s),
 * under each warm-up.  Megatron-LM before core_r0.10.0, every forward
 * first: rank 0 F(0,c0) 0-1, F(1,c0) 1-2; rank 1 F(0,c0) 1-3, F(1,c0) 3-5;
 * rank 0 F(0,c1) 3-8, F(1,c1) 8-13; rank 1 F(0,c1) 8-11, F(1,c1) 13-16,
 * B(0,c1) 16-22, B(1,c1) 22-28; rank 0 B(0,c1) 22-26, B(1,c1) 28-32;
 * rank 1 B(0,c0) 28-32, B(1,c0) 32-36; rank 0 B(0,c0) 32-34, B(1,c0)
 * 36-38: span 38, rank 1 done at 36.  Megatron-Core from core_r0.10.0 and
 * torch's ScheduleInterleaved1F1B: rank 0 warms up 2 (2 - 1) + 2 = 4, all
 * of its forwards, rank 1 2 + 0 = 2, so rank 1 runs B(0,c1) 11-17 while
 * rank 0's F(1,c1) is still under way, then F(1,c1) 17-20, B(1,c1) 20-26;
 * rank 0 B(0,c1) 17-21, B(1,c1) 26-30; rank 1 B(0,c0) 26-30, B(1,c0)
 * 30-34; rank 0 B(0,c0) 30-32, B(1,c0) 34-36: span 36, rank 1 done at 34. */
START_TEST(hand_two_ranks_per_stack)
{
    const double f[4] = {1, 5, 2, 3}, b[4] = {2, 4, 4, 6}, p2p[2] = {0, 0};
    double end[2];
    ck_assert_rel(schedule_simulate_chunks(STACK_PIPE_MEGATRON, 2, 2, 2, f, b, p2p, 0, end, NULL),
                  38.0, 1e-12);
    ck_assert_rel(end[1], 36.0, 1e-12);
    for (int k = STACK_PIPE_MEGATRON_CORE; k <= STACK_PIPE_TORCH; k++) {
        sched_events ev = {0};
        ck_assert_rel(
            schedule_simulate_chunks((stack_pipe)k, 2, 2, 2, f, b, p2p, 0, end, NULL), 36.0,
            1e-12);
        ck_assert_rel(end[0], 36.0, 1e-12);
        ck_assert_rel(end[1], 34.0, 1e-12);
        ck_assert_rel(schedule_simulate_chunks((stack_pipe)k, 2, 2, 2, f, b, p2p, 0, end, &ev),
                      36.0, 1e-12);
        sched_events_free(&ev);
    }
}
END_TEST

static double rnd(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return ((*seed >> 8) & 0xffff) / 65536.0;
}

/* Random per-rank p2p times and per-chunk forward times (0.1-1.1) with
 * backwards about twice them: chunks of every rank all different. */
static void random_chunk_times(unsigned *seed, int pp, int vpp, double *p2p, double *fc,
                               double *bc)
{
    for (int r = 0; r < pp; r++) {
        p2p[r] = rnd(seed) * 0.02;
        for (int c = 0; c < vpp; c++) {
            fc[r * vpp + c] = 0.1 + rnd(seed);
            bc[r * vpp + c] = 2 * fc[r * vpp + c] + rnd(seed) * 0.3;
        }
    }
}

START_TEST(equal_chunks_match_per_rank)
{
    unsigned seed = 7;
    for (int t = 0; t < 60; t++) {
        int pp = 2 + (int)(rnd(&seed) * 7), vpp = 2 + (int)(rnd(&seed) * 4);
        int m = pp * (1 + (int)(rnd(&seed) * 6));
        double fw[16], bw[16], p2p[16], fc[128], bc[128], wrap = rnd(&seed) * 0.01;
        double e1[16], e2[16], a, b;
        for (int r = 0; r < pp; r++) {
            fw[r] = 0.5 + rnd(&seed);
            bw[r] = 2 * fw[r] + rnd(&seed) * 0.1;
            p2p[r] = rnd(&seed) * 0.02;
            for (int c = 0; c < vpp; c++) {
                fc[r * vpp + c] = fw[r] / vpp;
                bc[r * vpp + c] = bw[r] / vpp;
            }
        }
        a = schedule_simulate_ex((stack_pipe)(t % 3), pp, vpp, m, fw, bw, p2p, wrap, e1, NULL);
        b = schedule_simulate_chunks((stack_pipe)(t % 3), pp, vpp, m, fc, bc, p2p, wrap, e2,
                                     NULL);
        ck_assert_rel(b, a, 1e-12);
        for (int r = 0; r < pp; r++)
            ck_assert_rel(e2[r], e1[r], 1e-12);
    }
}
END_TEST

START_TEST(engines_agree_uneven_chunks)
{
    unsigned seed = 11;
    for (int t = 0; t < 80; t++) {
        int pp = 2 + (int)(rnd(&seed) * 7), vpp = 2 + (int)(rnd(&seed) * 4);
        int m = pp * (1 + (int)(rnd(&seed) * 12));
        double p2p[16], fc[128], bc[128], wrap = rnd(&seed) * 0.01;
        double e1[16], e2[16], a, b;
        sched_events ev = {0};
        random_chunk_times(&seed, pp, vpp, p2p, fc, bc);
        /* the first chunk light (the embedding), the last heavy (the loss) */
        fc[0] *= 0.3;
        fc[pp * vpp - 1] *= 1.8;
        alloc_fail_at(0);
        a = schedule_simulate_chunks((stack_pipe)(t % 3), pp, vpp, m, fc, bc, p2p, wrap, e1,
                                     NULL);
        ck_assert_int_eq(alloc_count(), 0);
        b = schedule_simulate_chunks((stack_pipe)(t % 3), pp, vpp, m, fc, bc, p2p, wrap, e2,
                                     &ev);
        ck_assert_rel(a, b, 1e-9);
        for (int r = 0; r < pp; r++)
            ck_assert_rel(e1[r], e2[r], 1e-9);
        sched_events_free(&ev);
    }
}
END_TEST

/* The chunk of each operation, which the fast engine (chunk_dur) and the
 * memory walk (memory_schedule_peak_bytes) follow op by op without
 * stack_pipe_chunk's divisions: the same as stack_pipe_chunk of the
 * operation's number, with a last group short of pp micro-batches (m % pp)
 * and fewer micro-batches than ranks too.  The events engine numbers the
 * operations (stack_pipe_chunk) and agrees with the fast one, per-chunk times
 * all different, over windows the fast engine jumps (m up to 12 pp); the
 * memory walk equals a walk that numbers them, bit for bit. */
START_TEST(chunk_positions_follow_numbering)
{
    unsigned seed = 23;
    int ran = 0;   /* short last groups the engines ran */
    for (int t = 0; t < 120; t++) {
        int pp = 2 + (int)(rnd(&seed) * 7), vpp = 2 + (int)(rnd(&seed) * 4);
        int m = 1 + (int)(rnd(&seed) * 12 * pp);
        const stack_pipe pipe = (stack_pipe)(t % 3);
        double p2p[16], fc[128], bc[128], wrap = rnd(&seed) * 0.01;
        double e1[16], e2[16], a, b;
        sched_events ev = {0};
        random_chunk_times(&seed, pp, vpp, p2p, fc, bc);
        a = schedule_simulate_chunks(pipe, pp, vpp, m, fc, bc, p2p, wrap, e1, NULL);
        b = schedule_simulate_chunks(pipe, pp, vpp, m, fc, bc, p2p, wrap, e2, &ev);
        ck_assert((a > 0) == (b > 0));   /* -1: a schedule that cannot proceed */
        ran += a > 0 && m % pp != 0;
        if (a > 0) {
            ck_assert_rel(a, b, 1e-9);
            for (int r = 0; r < pp; r++)
                ck_assert_rel(e1[r], e2[r], 1e-9);
        }
        sched_events_free(&ev);
        for (int r = 0; r < pp; r++) {
            int n = m * vpp, warm = stack_pipe_warmup(pipe, pp, vpp, m, r), nf = 0, nb = 0;
            int end = warm + 4 * pp * vpp + 2 < 2 * n ? warm + 4 * pp * vpp + 2 : 2 * n;
            double held = 0, peak = 0;
            for (int j = 0; j < end; j++) {   /* the walk's window: warm-up, 2 groups */
                if (stack_pipe_op(j, warm, n, NULL))
                    held += fc[stack_pipe_chunk(nf++, pp, vpp, m, false, NULL, NULL)];
                else
                    held -= fc[stack_pipe_chunk(nb++, pp, vpp, m, true, NULL, NULL)];
                if (held > peak)
                    peak = held;
            }
            ck_assert(memory_inflight_chunks(pipe, pp, vpp, m, r, fc) == peak);
        }
    }
    ck_assert_int_ge(ran, 20);
}
END_TEST

/* pp 2, vpp 2, m 4, rank 0 (warm-up (2 - 0 - 1) 2 + (2 - 1) 2 = 4), chunk
 * activations 1 and 2: forwards c0 c0 c1 c1 -> 1 2 4 6, then F(c0) 7,
 * B(c1) 5, F(c0) 6, B(c1) 4, F(c1) 6, B(c0) 5, F(c1) 7, B(c0) 6, ...:
 * peak 7 (the even formula would say 2.5 x 3 = 7.5). */
START_TEST(inflight_uneven_hand)
{
    const double act[2] = {1, 2};
    const double eq[3] = {2, 2, 2};
    ck_assert_rel(memory_inflight_chunks(STACK_PIPE_MEGATRON, 2, 2, 4, 0, act), 7.0, 1e-15);
    /* equal chunks: memory_inflight x the rank's activations */
    for (int r = 0; r < 4; r++)
        ck_assert_rel(memory_inflight_chunks(STACK_PIPE_MEGATRON, 4, 3, 16, r, eq),
                      memory_inflight(STACK_PIPE_MEGATRON, 4, 3, 16, r) * 6.0, 1e-12);
    ck_assert_rel(memory_inflight_chunks(STACK_PIPE_MEGATRON, 4, 3, 4, 0, eq),
                  memory_inflight(STACK_PIPE_MEGATRON, 4, 3, 4, 0) * 6.0, 1e-12);
}
END_TEST

/* Time and memory follow one schedule: for each stack's warm-up, each rank's
 * forwards and backwards in the order the simulation ran them (its events)
 * hold at most what memory_inflight_chunks' walk holds (1 per chunk), that
 * is memory_inflight() whole stages; and as many forwards precede the
 * rank's first backward as stack_pipe_warmup says, plus the steady state's
 * first.  pp 2-8, vpp 1-3, m = pp (where the stacks differ) and 2 pp. */
START_TEST(time_and_memory_same_warmup)
{
    const double ones[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    double f[8], b[8], p2p[8];
    for (int r = 0; r < 8; r++) {
        f[r] = 1.0 + 0.1 * r;
        b[r] = 2.0 + 0.3 * (r % 3);
        p2p[r] = 0.01;
    }
    for (int k = STACK_PIPE_MEGATRON; k <= STACK_PIPE_TORCH; k++)
        for (int pp = 2; pp <= 8; pp++)
            for (int vpp = 1; vpp <= 3; vpp++)
                for (int m = pp; m <= 2 * pp; m += pp) {
                    const stack_pipe pipe = (stack_pipe)k;
                    sched_events ev = {0};
                    ck_assert(schedule_simulate_ex(pipe, pp, vpp, m, f, b, p2p, 0.01, NULL,
                                                   &ev) > 0);
                    for (int r = 0; r < pp; r++) {
                        int held = 0, peak = 0, before = -1;
                        int warm = stack_pipe_warmup(pipe, pp, vpp, m, r);
                        for (int i = 0; i < ev.n; i++) {
                            const sched_event *x = &ev.ev[i];
                            if (x->stage != r || x->kind == SCHED_SEND)
                                continue;
                            if (x->kind == SCHED_BACKWARD && before < 0)
                                before = held;
                            held += x->kind == SCHED_FORWARD ? 1 : -1;
                            if (held > peak)
                                peak = held;
                        }
                        ck_assert_int_eq(before, warm < m * vpp ? warm + 1 : m * vpp);
                        ck_assert_rel(memory_inflight_chunks(pipe, pp, vpp, m, r, ones), peak,
                                      1e-15);
                        ck_assert_rel(memory_inflight(pipe, pp, vpp, m, r) * vpp, peak, 1e-12);
                    }
                    sched_events_free(&ev);
                }
}
END_TEST

/* The whole-step walk with what PyTorch's stacks accumulate
 * (memory_schedule_peak_bytes), hand-derived:
 *   1F1B rank 0 of pp 4, m 4 (activations 1, FSDP2 gradients 10, working
 *   set 0.5): forwards 1 2 3 4, then its first backward frees one and
 *   allocates the gradients: 3 + 10, with the working set 13.5 (counting
 *   every gradient from the start, 4 + 10 + 0.5 = 14.5);
 *   the last rank (kept outputs 2): F 1, B 0 + 10 + 2, F 13, B 14, F 15,
 *   B 16, F 17, B 18: 18 + 0.5 after its last backward;
 *   interleaved pp 2, vpp 2, m 2, rank 1 (PyTorch's warm-up 2 forwards of
 *   chunk 0), gradients 20 (chunk 1) and 10 (chunk 0): F F F(c1) -> 3,
 *   B(c1) 2 + 20, F(c1) 23, B(c1) 22, B(c0) 21 + 10 = 31: chunk 0's
 *   gradients arrive after chunk 1's backwards (34 counting both from the
 *   start).  Without accumulation it is memory_inflight_chunks().  The
 *   last stage's kept output of Llama 3.1 405B at 4 x 8192 tokens, tp 8:
 *   32768 x 128256 / 8 x 2 B; none under Megatron's schedules. */
START_TEST(schedule_peak_hand)
{
    const double act[2] = {1, 1}, g1[1] = {10}, t1[1] = {0.5}, g2[2] = {10, 20};
    const schedule_held rank0 = {g1, 0, t1, 0}, last = {g1, 2, t1, 0}, inter = {g2, 0, NULL, 0};
    const schedule_held rank0_in = {g1, 0, t1, 0.25}, last_in = {g1, 2, t1, 0.25},
                        inter_in = {g2, 0, NULL, 0.25};
    ck_assert_rel(memory_schedule_peak_bytes(STACK_PIPE_TORCH, 4, 1, 4, 0, act, &rank0), 13.5,
                  1e-15);
    ck_assert_rel(memory_schedule_peak_bytes(STACK_PIPE_TORCH, 4, 1, 4, 3, act, &last), 18.5,
                  1e-15);
    ck_assert_rel(memory_schedule_peak_bytes(STACK_PIPE_TORCH, 2, 2, 2, 1, act, &inter), 31.0,
                  1e-15);
    /* each backward leaving 0.25 on its stage input: rank 0 (the first
     * stage) keeps none, 13.5; the last rank B 12.25, F 13.25, B 14.5,
     * F 15.5, B 16.75, F 17.75, B 19 + 0.5 = 19.5; the interleaved rank
     * B(c1) 22.25, F 23.25, B(c1) 22.5, B(c0) 21.5 + 10 + 0.25 = 31.75 */
    ck_assert_rel(memory_schedule_peak_bytes(STACK_PIPE_TORCH, 4, 1, 4, 0, act, &rank0_in), 13.5,
                  1e-15);
    ck_assert_rel(memory_schedule_peak_bytes(STACK_PIPE_TORCH, 4, 1, 4, 3, act, &last_in), 19.5,
                  1e-15);
    ck_assert_rel(memory_schedule_peak_bytes(STACK_PIPE_TORCH, 2, 2, 2, 1, act, &inter_in),
                  31.75, 1e-15);
    ck_assert_rel(memory_pipe_input_grad_bytes(STACK_PIPE_TORCH, 134217728.0), 134217728.0,
                  1e-15);
    ck_assert(memory_pipe_input_grad_bytes(STACK_PIPE_MEGATRON, 134217728.0) == 0);
    for (int r = 0; r < 4; r++)
        ck_assert_rel(memory_schedule_peak_bytes(STACK_PIPE_TORCH, 4, 2, 8, r, act, NULL),
                      memory_inflight_chunks(STACK_PIPE_TORCH, 4, 2, 8, r, act), 1e-15);
    ck_assert_rel(memory_pipe_kept_output_bytes(STACK_PIPE_TORCH, 2, PREC_FP8, 32768, 128256, 8),
                  32768.0 * 128256 / 8 * 2, 1e-15);
    ck_assert_rel(memory_pipe_kept_output_bytes(STACK_PIPE_TORCH, 2, PREC_FP32, 32768, 128256, 8),
                  32768.0 * 128256 / 8 * 4, 1e-15);
    ck_assert(memory_pipe_kept_output_bytes(STACK_PIPE_MEGATRON, 2, PREC_BF16, 32768, 128256, 8) ==
              0);
    /* no pipeline, no schedule keeping outputs: the partitioner's pp 1
     * stage counted m of them where evaluate() counts none */
    ck_assert(memory_pipe_kept_output_bytes(STACK_PIPE_TORCH, 1, PREC_BF16, 32768, 128256, 8) ==
              0);
    ck_assert_rel(memory_fsdp2_accum_grad_bytes(8, 1e9), 4e9, 1e-15);
    ck_assert(memory_fsdp2_accum_grad_bytes(1, 1e9) == 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("chunks");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, schedule_peak_hand);
    tcase_add_test(tc, account_rule_405b);
    tcase_add_test(tc, check_rejects);
    tcase_add_test(tc, hand_two_ranks);
    tcase_add_test(tc, hand_two_ranks_per_stack);
    tcase_add_test(tc, time_and_memory_same_warmup);
    tcase_add_test(tc, equal_chunks_match_per_rank);
    tcase_add_test(tc, engines_agree_uneven_chunks);
    tcase_add_test(tc, chunk_positions_follow_numbering);
    tcase_add_test(tc, inflight_uneven_hand);
    suite_add_tcase(s, tc);
    return tu_run_suite(s);
}
