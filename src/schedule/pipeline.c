/* pipeline.c: 1F1B and interleaved pipeline schedules, simulated over the
 * real per-stage times.
 *
 * Megatron's schedules (core/pipeline_parallel/schedules.py): every rank runs
 * the same sequence of forward "virtual micro-batches" k = 0 .. m v - 1, in
 * groups of pp micro-batches: within a group all micro-batches of chunk 0,
 * then of chunk 1, ... (backwards: chunks in reverse).  Rank r first runs
 * its stack's warm-up forwards (inputs/stack.h stack_pipe_warmup, the count
 * memory.c holds activations by: min((pp - r - 1) * 2 + (vpp - 1) * pp,
 * m v), without interleaving min(pp - r - 1, m), all m v on Megatron-LM
 * before core_r0.10.0 at m == pp), then alternates one forward and one
 * backward, then drains the remaining backwards.  An operation starts when
 * its rank is free and its input has arrived:
 *   F(mb, c) on rank r    after F(mb, c) on r - 1 plus the p2p time
 *                         (rank 0, c > 0: F(mb, c - 1) on rank pp - 1, wrap)
 *   B(mb, c) on rank r    after B(mb, c) on r + 1 plus the p2p time
 *                         (last rank: after its own F(mb, vpp - 1), or
 *                          B(mb, c + 1) on rank 0 plus the wrap time)
 * A chunk takes fwd_s[r] / vpp (bwd_s[r] / vpp), or its own time with
 * schedule_simulate_chunks (chunk_dur: from the operation's position, so
 * the periodic steady state below still repeats per group; unequal chunks
 * of a rank stall as Megatron's fixed order does: a group's light chunk
 * waits on the heavy chunk's outputs from rank pp - 1, test_pipeline
 * interleaved_uneven_chunks).  With equal stages and no
 * p2p time this reproduces the closed forms: (m + pp - 1)(t_f + t_b) for
 * 1F1B, bubble (pp - 1)/(vpp m) interleaved.
 *
 * Two engines compute the same times (every end time is the max-plus
 * expression above; only the order of evaluation differs):
 *
 * - With an event list (--trace): simulate_events(), event by event over
 *   arrays of every operation's end time (2 pp m vpp doubles, allocated like
 *   the events).
 *
 * - Without (evaluate(), the search's inner loop): an allocation-free engine
 *   over O(pp) state.  Each rank's operations are a fixed sequence; a message
 *   (a forward's output to rank r + 1, a backward's to r - 1) goes through a
 *   FIFO channel, since a rank consumes its neighbour's outputs in the order
 *   they are produced; the wrap-around crossings of the interleaved schedule
 *   and the last rank's forward -> own backward are FIFOs too.  Operations are
 *   evaluated by position j in each rank's sequence: for j = 0, 1, ...: the
 *   forwards at j in ascending rank order, then the backwards at j in
 *   descending order.  Why that is a topological order: with w_r rank r's
 *   warm-up (non-increasing in r, and n = m vpp), forward k sits at position
 *   max(k, 2k - w_r) and backward k at min(w_r + 2k + 1, n + k), so a
 *   forward's input from r - 1 and a backward's from r + 1 come from a
 *   position <= the consumer's (equal ones are evaluated first by the rank
 *   order), and since w_{r-1} - w_r <= 2, message k + 2 is produced after
 *   message k is consumed: a neighbour channel holds at most 2 messages
 *   (SLOTS = 4).  The wrap-around and last-rank FIFOs (RING_CAP >= 2 pp) are
 *   checked on every push and pop; an underflow (interleaving with a partial
 *   last group, m % pp != 0, which Megatron rejects, can need a message from a
 *   later position) makes the engine start over in a polling order: each rank
 *   runs while its input is there and its output has room, as the event
 *   engine does.  O(pp) work per position, no allocation.
 *
 * Long runs: once every rank is in its steady 1F1B phase (and, interleaved,
 * the groups are full), the schedule is a max-plus linear recurrence with
 * constant structure from one window of P positions to the next: one
 * micro-batch (P = 2) for 1F1B, one group of pp micro-batches (P = 2 pp vpp)
 * interleaved.  Its state at a window boundary is each rank's busy-until time
 * and the messages in flight.  If the state at boundary X equals the state
 * lam windows earlier plus a constant c (checked, Brent's cycle detection:
 * one stored state), every later window repeats it (a max-plus map commutes
 * with adding a constant), so the engine jumps T lam windows ahead, adds T c
 * to every time in the state and simulates the rest (the cool-down).  The
 * check allows rounding noise: a deviation d per lam windows costs at most
 * T d (max-plus maps are non-expansive), and d is held to 16 ulp of the
 * state and 1e-13 of c.  Without a match the run is simulated to the end: exact in
 * any case, only slower.  The transient before the period sets in can be
 * long when two cycles of the schedule have almost the same mean time, which
 * is why the period is detected rather than assumed.
 *
 * Invariants: the no-event engine allocates nothing for every pp <=
 * STRATEGY_MAX_STAGES (its state and one snapshot, about 72 KiB, live on the
 * stack); every rank's operations complete in its own order; both engines
 * give the same times (test_pipeline: against each other and a reference).
 */
#include <float.h>
#include <math.h>
#include <string.h>
#include "base/alloc.h"
#include "schedule/pipeline.h"
#include "model/strategy.h"

#define MAX_PP STRATEGY_MAX_STAGES
/* Forwards per rank the allocation-free engine takes (its positions are int). */
#define MAX_OPS (1 << 28)

void sched_events_free(sched_events *e)
{
    if (e == NULL)
        return;
    pl_free(e->ev);
    e->ev = NULL;
    e->n = 0;
    e->cap = 0;
}

/* ------------------------------------------------------------------------
 * The event engine.
 * ------------------------------------------------------------------------ */

static int push_event(sched_events *e, sched_kind kind, int stage, int mb, int chunk,
                      double start, double end)
{
    sched_event *ev = pl_grow(e->ev, &e->cap, (size_t)e->n + 1, sizeof *ev, 256);
    if (ev == NULL)
        return -1;
    e->ev = ev;
    e->ev[e->n++] = (sched_event){kind, stage, mb, chunk, start, end};
    return 0;
}

/* The inputs and end times of one simulation with events (simulate_events):
 * fend/bend hold pp * m * vpp doubles, -1 until that operation ran. */
typedef struct ev_sim {
    int pp, vpp, m, n;              /* n = m vpp operations of each kind per rank */
    const double *fwd_s, *bwd_s;    /* per rank (all chunks), or NULL with fc/bc */
    const double *p2p_s;
    double wrap_s;
    const double *fc, *bc;          /* per chunk, or NULL */
    double *fend, *bend;
} ev_sim;

/* When rank r's k-th forward (backward) may start as far as its input is
 * concerned (the previous rank's output plus the p2p time; the wrap-around
 * between chunks; the last rank's backward of the last chunk waits for its
 * own forward), in *dep, with its duration in *dur.  False when that input
 * has not been computed yet. */
static bool op_ready(const ev_sim *x, int r, bool isf, int k, int mb, int chunk, int gs,
                     double *dep, double *dur)
{
    const int pp = x->pp, vpp = x->vpp, n = x->n;
    *dep = 0;
    if (isf) {
        if (r > 0) {
            if (x->fend[(r - 1) * n + k] < 0)
                return false;
            *dep = x->fend[(r - 1) * n + k] + x->p2p_s[r - 1];
        } else if (chunk > 0) {
            if (x->fend[(pp - 1) * n + k - gs] < 0)
                return false;
            *dep = x->fend[(pp - 1) * n + k - gs] + x->wrap_s;
        }
        *dur = x->fc != NULL ? x->fc[r * vpp + chunk] : x->fwd_s[r] / vpp;
        return true;
    }
    if (r < pp - 1) {
        if (x->bend[(r + 1) * n + k] < 0)
            return false;
        *dep = x->bend[(r + 1) * n + k] + x->p2p_s[r];
    } else if (chunk < vpp - 1) {
        if (x->bend[k - gs] < 0)
            return false;
        *dep = x->bend[k - gs] + x->wrap_s;
    } else {
        /* own forward of (mb, last chunk) */
        int g = k / (pp * vpp);
        int fk = g * pp * vpp + (vpp - 1) * gs + (mb - g * pp);
        if (x->fend[r * n + fk] < 0)
            return false;
        *dep = x->fend[r * n + fk];
    }
    *dur = x->bc != NULL ? x->bc[r * vpp + chunk] : x->bwd_s[r] / vpp;
    return true;
}

/* The events of one operation that ran [start, end): itself, and the send
 * of its output to the next (forward) or previous (backward) rank when
 * there is one and it takes time.  0, or -1 when out of memory. */
static int op_events(const ev_sim *x, sched_events *out, int r, bool isf, int mb, int chunk,
                     double start, double end)
{
    const int pp = x->pp, vpp = x->vpp;
    int last_chunk_rank = r == pp - 1 && chunk == vpp - 1;
    if (push_event(out, isf ? SCHED_FORWARD : SCHED_BACKWARD, r, mb, chunk, start, end) != 0)
        return -1;
    if (isf && !last_chunk_rank) {
        double p = r < pp - 1 ? x->p2p_s[r] : x->wrap_s;
        if (p > 0 && push_event(out, SCHED_SEND, r, mb, chunk, end, end + p) != 0)
            return -1;
    } else if (!isf && !(r == 0 && chunk == 0)) {
        double p = r > 0 ? x->p2p_s[r - 1] : x->wrap_s;
        if (p > 0 && push_event(out, SCHED_SEND, r, mb, chunk, end, end + p) != 0)
            return -1;
    }
    return 0;
}

/* One full simulation with events; fend/bend hold pp * m * vpp doubles.
 * Polls the ranks in turn, each running while its inputs are there.  Returns
 * the makespan, -1 if out of memory, -2 if the schedule cannot proceed. */
static double simulate_events(stack_pipe pipe, int pp, int vpp, int m, const double *fwd_s,
                              const double *bwd_s, const double *p2p_s, double wrap_s,
                              const double *fc, const double *bc, double *fend, double *bend,
                              double *rank_end, sched_events *out)
{
    const ev_sim x = {pp, vpp, m, m * vpp, fwd_s, bwd_s, p2p_s, wrap_s, fc, bc, fend, bend};
    int n = m * vpp, r, progress, done = 0;
    int jpos[MAX_PP];
    double freet[MAX_PP];
    double span = 0;

    for (r = 0; r < pp * n; r++)
        fend[r] = bend[r] = -1;
    for (r = 0; r < pp; r++) {
        jpos[r] = 0;
        freet[r] = 0;
    }
    do {
        progress = 0;
        for (r = 0; r < pp; r++) {
            int warm = stack_pipe_warmup(pipe, pp, vpp, m, r);
            while (jpos[r] < 2 * n) {
                int k, mb, chunk, gs;
                double dep, dur, start;
                bool isf = stack_pipe_op(jpos[r], warm, n, &k);
                chunk = stack_pipe_chunk(k, pp, vpp, m, !isf, &mb, &gs);
                if (!op_ready(&x, r, isf, k, mb, chunk, gs, &dep, &dur))
                    break;
                start = dep > freet[r] ? dep : freet[r];
                freet[r] = start + dur;
                if (isf)
                    fend[r * n + k] = freet[r];
                else
                    bend[r * n + k] = freet[r];
                if (out != NULL && op_events(&x, out, r, isf, mb, chunk, start, freet[r]) != 0)
                    return -1;
                jpos[r]++;
                progress = 1;
                if (jpos[r] == 2 * n)
                    done++;
            }
        }
    } while (done < pp && progress);
    if (done < pp)
        return -2;
    for (r = 0; r < pp; r++) {
        if (rank_end != NULL)
            rank_end[r] = freet[r];
        if (freet[r] > span)
            span = freet[r];
    }
    return span;
}


/* ------------------------------------------------------------------------
 * The allocation-free engine.
 * ------------------------------------------------------------------------ */

/* Message slots per neighbour channel (power of two; the position order needs
 * 2, the polling order is held to this many), and the capacity of the
 * wrap-around and last-rank FIFOs (power of two; the position order needs pp,
 * the polling order blocks a producer on a full one). */
#define SLOTS 4
#define RING_CAP (2 * MAX_PP)

typedef struct sim_ring {
    double v[RING_CAP];
    unsigned head, tail;        /* live entries: head .. tail - 1 */
} sim_ring;

/* Where a rank is in its forward (or backward) sequence: index within the
 * chunk, chunk (backwards: counted from the last chunk), size of the group,
 * group. */
typedef struct sim_pos {
    int i, c, gs, g;
} sim_pos;

/* Everything the engine needs; O(pp). */
/* One rank. */
typedef struct sim_rank {
    double busy;                /* end of the rank's last operation */
    double fdur, bdur;          /* one chunk */
    double p2p;                 /* rank r -> r + 1 */
    /* fin[k & (SLOTS - 1)]: forward k's output arriving here (sent by r - 1);
     * bin likewise from r + 1 */
    double fin[SLOTS], bin[SLOTS];
    int nf, nb;                 /* forwards / backwards done */
    int warm;
    sim_pos fpos, bpos;         /* per-chunk times: positions nf, nb (chunk_dur) */
} sim_rank;

typedef struct sim_state {
    int pp, vpp, m, n;          /* n = m vpp operations of each kind per rank */
    int err;                    /* a FIFO over- or underflowed */
    double wrap_s;
    const double *fc, *bc;      /* per-chunk times [r vpp + c], or NULL: fdur/bdur */
    sim_rank rk[MAX_PP];
    sim_ring wf;                /* rank pp-1 forward (chunk < vpp-1) -> rank 0 */
    sim_ring wb;                /* rank 0 backward (chunk > 0) -> rank pp-1 */
    sim_ring sf;                /* rank pp-1 forward (last chunk) -> own backward */
    sim_pos f0, b0, fl, bl;     /* rank 0's and rank pp-1's sequences */
} sim_state;

static void pos_next(sim_pos *d, int pp, int vpp, int m)
{
    if (++d->i < d->gs)
        return;
    d->i = 0;
    if (++d->c < vpp)
        return;
    d->c = 0;
    d->g++;
    d->gs = m - d->g * pp < pp ? m - d->g * pp : pp;
}

static void ring_push(sim_state *st, sim_ring *q, double x)
{
    if (q->tail - q->head >= RING_CAP) {
        st->err = 1;
        return;
    }
    q->v[q->tail++ % RING_CAP] = x;
}

static double ring_pop(sim_state *st, sim_ring *q)
{
    if (q->tail == q->head) {
        st->err = 1;
        return 0;
    }
    return q->v[q->head++ % RING_CAP];
}

static void state_init(sim_state *st, stack_pipe pipe, int pp, int vpp, int m,
                       const double *fwd_s, const double *bwd_s, const double *p2p_s,
                       double wrap_s, const double *fc, const double *bc)
{
    sim_pos d0;
    int r;

    st->pp = pp;
    st->vpp = vpp;
    st->m = m;
    st->n = m * vpp;
    st->err = 0;
    st->wrap_s = wrap_s;
    st->fc = fc;
    st->bc = bc;
    for (r = 0; r < pp; r++) {
        st->rk[r].warm = stack_pipe_warmup(pipe, pp, vpp, m, r);
        st->rk[r].busy = 0;
        st->rk[r].fdur = fwd_s[r] / vpp;
        st->rk[r].bdur = bwd_s[r] / vpp;
        st->rk[r].p2p = r < pp - 1 ? p2p_s[r] : 0;
        st->rk[r].nf = st->rk[r].nb = 0;
    }
    st->wf.head = st->wf.tail = 0;
    st->wb.head = st->wb.tail = 0;
    st->sf.head = st->sf.tail = 0;
    d0.i = d0.c = d0.g = 0;
    d0.gs = m < pp ? m : pp;
    st->f0 = st->b0 = st->fl = st->bl = d0;
    for (r = 0; r < pp; r++)
        st->rk[r].fpos = st->rk[r].bpos = d0;
}

/* Duration of rank r's next forward (backward) with per-chunk times: its
 * chunk from the position in the sequence, followed op by op (pos_next:
 * stack_pipe_chunk's groups without its divisions; pos_set after a jump),
 * and the position moved on. */
static double chunk_dur(sim_state *st, int r, bool backward)
{
    sim_rank *x = &st->rk[r];
    sim_pos *d = backward ? &x->bpos : &x->fpos;
    int c = backward ? st->vpp - 1 - d->c : d->c;
    pos_next(d, st->pp, st->vpp, st->m);
    return (backward ? st->bc : st->fc)[r * st->vpp + c];
}

#define FDUR(st, r, x) ((st)->fc != NULL ? chunk_dur(st, r, false) : (x)->fdur)
#define BDUR(st, r, x) ((st)->bc != NULL ? chunk_dur(st, r, true) : (x)->bdur)

/* Forward on rank 0 or pp - 1 (both when pp == 1): the chunk decides the
 * wrap-around input and output. */
static void fwd_edge(sim_state *st, int r)
{
    int s = st->rk[r].nf & (SLOTS - 1), last = st->pp - 1;
    double dep = 0, t;
    if (r > 0)
        dep = st->rk[r].fin[s];
    else if (st->f0.c > 0)
        dep = ring_pop(st, &st->wf);
    t = (dep > st->rk[r].busy ? dep : st->rk[r].busy) + FDUR(st, r, &st->rk[r]);
    st->rk[r].busy = t;
    if (r < last)
        st->rk[r + 1].fin[s] = t + st->rk[r].p2p;
    else if (st->fl.c < st->vpp - 1)
        ring_push(st, &st->wf, t + st->wrap_s);
    else
        ring_push(st, &st->sf, t);
    if (st->vpp > 1) {   /* 1F1B: chunk 0 always */
        if (r == 0)
            pos_next(&st->f0, st->pp, st->vpp, st->m);
        if (r == last)
            pos_next(&st->fl, st->pp, st->vpp, st->m);
    }
    st->rk[r].nf++;
}

/* Backward on rank 0 or pp - 1. */
static void bwd_edge(sim_state *st, int r)
{
    int s = st->rk[r].nb & (SLOTS - 1), last = st->pp - 1;
    double dep, t;
    if (r < last)
        dep = st->rk[r].bin[s];
    else
        dep = ring_pop(st, st->bl.c == 0 ? &st->sf : &st->wb);
    t = (dep > st->rk[r].busy ? dep : st->rk[r].busy) + BDUR(st, r, &st->rk[r]);
    st->rk[r].busy = t;
    if (r > 0)
        st->rk[r - 1].bin[s] = t + st->rk[r - 1].p2p;
    else if (st->b0.c < st->vpp - 1)
        ring_push(st, &st->wb, t + st->wrap_s);
    if (st->vpp > 1) {
        if (r == 0)
            pos_next(&st->b0, st->pp, st->vpp, st->m);
        if (r == last)
            pos_next(&st->bl, st->pp, st->vpp, st->m);
    }
    st->rk[r].nb++;
}

/* Forwards on ranks lo, lo + step, ... < hi, in ascending order (a rank's
 * input may come from the rank before it at the same position).  The
 * middle ranks in a tight loop: input from r - 1, output to r + 1. */
static void fwd_range(sim_state *st, int lo, int hi, int step)
{
    sim_rank *rk = st->rk;
    int last = st->pp - 1, r = lo;

    if (r >= hi)
        return;
    if (r == 0) {
        fwd_edge(st, 0);
        r += step;
    }
    for (; r < hi && r < last; r += step) {
        sim_rank *x = &rk[r];
        int s = x->nf & (SLOTS - 1);
        double dep = x->fin[s], t;
        t = (dep > x->busy ? dep : x->busy) + FDUR(st, r, x);
        x->busy = t;
        x[1].fin[s] = t + x->p2p;
        x->nf++;
    }
    if (r == last && r < hi)
        fwd_edge(st, last);
}

/* Backwards on ranks lo, lo + step, ... < hi, in descending order; middle
 * ranks: input from r + 1, output to r - 1. */
static void bwd_range(sim_state *st, int lo, int hi, int step)
{
    sim_rank *rk = st->rk;
    int last = st->pp - 1, r;

    if (lo >= hi)
        return;
    r = lo + (hi - 1 - lo) / step * step;
    if (r == last) {
        bwd_edge(st, last);
        r -= step;
    }
    for (; r >= lo && r > 0; r -= step) {
        sim_rank *x = &rk[r];
        int s = x->nb & (SLOTS - 1);
        double dep = x->bin[s], t;
        t = (dep > x->busy ? dep : x->busy) + BDUR(st, r, x);
        x->busy = t;
        x[-1].bin[s] = t + x[-1].p2p;
        x->nb++;
    }
    if (r == 0 && lo == 0)
        bwd_edge(st, 0);
}

/* --- periodic steady state ------------------------------------------------ */

/* The state at a window boundary: every time the future reads (busy times,
 * messages in flight in channel order) and the counts that fix which
 * messages are in flight.  At most 2 messages per neighbour channel (else no
 * snapshot is taken) and RING_CAP per ring. */
#define SNAP_TIMES (MAX_PP + 2 * 2 * MAX_PP + 3 * RING_CAP)
#define SNAP_INTS (2 * MAX_PP + 3)

typedef struct sim_snap {
    double t[SNAP_TIMES];
    int k[SNAP_INTS];
    int nt, nk;
    double mag;                 /* largest |t| */
} sim_snap;

/* Calls f(ctx, &time) on every time of the state, in a fixed order, until f
 * returns nonzero; returns that, 0, or -1 if a neighbour channel holds more
 * than 2 messages. */
typedef int (*time_fn)(void *ctx, double *t);

static int state_times(sim_state *st, time_fn f, void *ctx)
{
    sim_ring *rings[3];
    unsigned i;
    int r, k, rc;

    for (r = 0; r < st->pp; r++)
        if ((rc = f(ctx, &st->rk[r].busy)) != 0)
            return rc;
    for (r = 1; r < st->pp; r++) {
        if (st->rk[r - 1].nf - st->rk[r].nf > 2)
            return -1;
        for (k = st->rk[r].nf; k < st->rk[r - 1].nf; k++)
            if ((rc = f(ctx, &st->rk[r].fin[k & (SLOTS - 1)])) != 0)
                return rc;
    }
    for (r = 0; r + 1 < st->pp; r++) {
        if (st->rk[r + 1].nb - st->rk[r].nb > 2)
            return -1;
        for (k = st->rk[r].nb; k < st->rk[r + 1].nb; k++)
            if ((rc = f(ctx, &st->rk[r].bin[k & (SLOTS - 1)])) != 0)
                return rc;
    }
    rings[0] = &st->wf;
    rings[1] = &st->wb;
    rings[2] = &st->sf;
    for (k = 0; k < 3; k++)
        for (i = rings[k]->head; i != rings[k]->tail; i++)
            if ((rc = f(ctx, &rings[k]->v[i % RING_CAP])) != 0)
                return rc;
    return 0;
}

/* The counts (messages per channel); the chunk positions of ranks 0 and
 * pp - 1 need no check: windows are whole groups, or vpp = 1. */
static int state_ints(const sim_state *st, int *k)
{
    int r, n = 0;
    for (r = 1; r < st->pp; r++)
        k[n++] = st->rk[r - 1].nf - st->rk[r].nf;
    for (r = 0; r + 1 < st->pp; r++)
        k[n++] = st->rk[r + 1].nb - st->rk[r].nb;
    k[n++] = (int)(st->wf.tail - st->wf.head);
    k[n++] = (int)(st->wb.tail - st->wb.head);
    k[n++] = (int)(st->sf.tail - st->sf.head);
    return n;
}

static int snap_put(void *ctx, double *t)
{
    sim_snap *s = ctx;
    s->t[s->nt++] = *t;
    if (fabs(*t) > s->mag)
        s->mag = fabs(*t);
    return 0;
}

static void snap_take(sim_state *st, sim_snap *s)
{
    s->nt = 0;
    s->mag = 0;
    if (state_times(st, snap_put, s) != 0)
        s->nt = -1;   /* never matches */
    s->nk = state_ints(st, s->k);
}

/* Comparing the current state with a snapshot. */
typedef struct snap_cmp {
    const sim_snap *s;
    int i;
    double shift, tol;
} snap_cmp;

static int cmp_one(void *ctx, double *t)
{
    snap_cmp *c = ctx;
    double d;
    if (c->i >= c->s->nt)
        return 1;
    d = fabs(*t - (c->s->t[c->i++] + c->shift));
    return d <= c->tol ? 0 : 1;   /* NaN: no match */
}

/* Whether the current state is the snapshot plus a constant (*shift),
 * within rounding: 16 ulp of the largest time and 1e-13 of the shift, so
 * that T repetitions err by at most 1e-13 T shift. */
static int snap_match(sim_state *st, const sim_snap *s, double *shift)
{
    int k[SNAP_INTS], nk, i;
    snap_cmp c;

    if (s->nt < 1)
        return 0;
    c.s = s;
    c.i = 0;
    c.shift = st->rk[0].busy - s->t[0];
    c.tol = 16 * DBL_EPSILON * (s->mag + c.shift);
    if (c.tol > 1e-13 * c.shift)
        c.tol = 1e-13 * c.shift;
    if (!(c.shift >= 0) || !(c.tol >= 0))
        return 0;
    for (i = 0; i < st->pp; i++)   /* the usual miss, cheaply */
        if (!(fabs(st->rk[i].busy - (s->t[i] + c.shift)) <= c.tol))
            return 0;
    nk = state_ints(st, k);
    if (nk != s->nk)
        return 0;
    for (i = 0; i < nk; i++)
        if (k[i] != s->k[i])
            return 0;
    if (state_times(st, cmp_one, &c) != 0 || c.i != s->nt)
        return 0;
    *shift = c.shift;
    return 1;
}

static int add_shift(void *ctx, double *t)
{
    *t += *(const double *)ctx;
    return 0;
}

/* Position k (0 .. m vpp) of a forward (backward) sequence: groups of pp
 * micro-batches (the last one m % pp), vpp chunks each. */
static void pos_set(sim_pos *d, int k, int pp, int vpp, int m)
{
    d->g = k / (pp * vpp);
    d->gs = m - d->g * pp < pp ? m - d->g * pp : pp;
    if (d->gs < 1) {   /* the sequence is done */
        d->gs = 1;
        d->c = d->i = 0;
        return;
    }
    k -= d->g * pp * vpp;
    d->c = k / d->gs;
    d->i = k % d->gs;
}

/* Moves the state `ops` forwards and backwards ahead on every rank, every
 * time by `shift` (valid once the state repeats, see the top). */
static void state_jump(sim_state *st, int ops, double shift)
{
    double fm[2 * MAX_PP], bm[2 * MAX_PP];
    int nfm = 0, nbm = 0, r, i, last = st->pp - 1;

    state_times(st, add_shift, &shift);
    /* the messages in flight move to the slots of their new numbers */
    for (r = 1; r < st->pp; r++)
        for (i = st->rk[r].nf; i < st->rk[r - 1].nf; i++)
            fm[nfm++] = st->rk[r].fin[i & (SLOTS - 1)];
    for (r = 0; r + 1 < st->pp; r++)
        for (i = st->rk[r].nb; i < st->rk[r + 1].nb; i++)
            bm[nbm++] = st->rk[r].bin[i & (SLOTS - 1)];
    for (r = 0; r < st->pp; r++) {
        st->rk[r].nf += ops;
        st->rk[r].nb += ops;
    }
    nfm = nbm = 0;
    for (r = 1; r < st->pp; r++)
        for (i = st->rk[r].nf; i < st->rk[r - 1].nf; i++)
            st->rk[r].fin[i & (SLOTS - 1)] = fm[nfm++];
    for (r = 0; r + 1 < st->pp; r++)
        for (i = st->rk[r].nb; i < st->rk[r + 1].nb; i++)
            st->rk[r].bin[i & (SLOTS - 1)] = bm[nbm++];
    pos_set(&st->f0, st->rk[0].nf, st->pp, st->vpp, st->m);
    pos_set(&st->b0, st->rk[0].nb, st->pp, st->vpp, st->m);
    pos_set(&st->fl, st->rk[last].nf, st->pp, st->vpp, st->m);
    pos_set(&st->bl, st->rk[last].nb, st->pp, st->vpp, st->m);
    for (r = 0; r < st->pp; r++) {
        pos_set(&st->rk[r].fpos, st->rk[r].nf, st->pp, st->vpp, st->m);
        pos_set(&st->rk[r].bpos, st->rk[r].nb, st->pp, st->vpp, st->m);
    }
}

/* --- the two evaluation orders --------------------------------------------- */


/* Position order (see the top).  Returns 0, or -1 if a FIFO over- or
 * underflowed (the caller then uses the polling order). */
static int run_positions(sim_state *st, sim_snap *snap)
{
    int pp = st->pp, vpp = st->vpp, n = st->n;
    int step = vpp > 1 ? 1 : 2;   /* steady ranks doing the same kind */
    int a = pp, c = 0, j;
    /* periodic steady state: windows of P positions (one micro-batch, or
     * one group when interleaved: the structure repeats) from w0 (every rank
     * steady) while they end by E (the first cool-down) */
    int P = vpp > 1 ? 2 * pp * vpp : 2, w0 = st->rk[0].warm;
    int E = vpp > 1 ? 2 * (st->m / pp) * pp * vpp - w0 : 2 * n - w0;
    int cut, power = 1, lam = 0, have = 0;

    if (E > 2 * n - w0)
        E = 2 * n - w0;
    cut = w0 + 3 * P <= E ? w0 : -1;

    for (j = 0; j < 2 * n; j++) {
        int s0, fr = pp, br = pp;
        if (j == cut) {
            double shift;
            if (have && snap_match(st, snap, &shift)) {
                int t = (E - j) / (lam * P);
                state_jump(st, t * lam * P / 2, shift * t);
                j += t * lam * P;
                cut = -1;
            } else {
                if (!have || lam == power) {
                    snap_take(st, snap);
                    have = 1;
                    if (lam == power)
                        power *= 2;
                    lam = 0;
                }
                lam++;
                cut = j + P + P <= E ? j + P : -1;
            }
            if (j >= 2 * n)
                break;
        }
        if (j >= w0 && j < 2 * n - w0) {
            /* every rank steady (the bulk of a long run): interleaved, all do
             * the same; 1F1B, ranks of one parity a forward (warm[r] =
             * w0 - r), the others a backward */
            int odd = (j - w0) & 1;
            if (vpp > 1 && odd)
                bwd_range(st, 0, pp, 1);
            else if (vpp > 1)
                fwd_range(st, 0, pp, 1);
            else {
                fwd_range(st, odd, pp, 2);
                bwd_range(st, 1 - odd, pp, 2);
            }
            continue;
        }
        /* ranks [0, a) are warming up (warm[r] > j), [0, c) cooling down
         * (j >= 2n - warm[r]), [max(a, c), pp) steady */
        while (a > 0 && st->rk[a - 1].warm <= j)
            a--;
        while (c < pp && st->rk[c].warm >= 2 * n - j)
            c++;
        s0 = a > c ? a : c;
        if (s0 < pp) {
            /* steady ranks: interleaved, all warm[r] have one parity (all do
             * the same); 1F1B, every other rank does a forward */
            int odd = (j - st->rk[s0].warm) % 2;
            fr = s0 + (vpp > 1 ? odd * (pp - s0) : odd);
            br = s0 + (vpp > 1 ? (1 - odd) * (pp - s0) : 1 - odd);
        }
        fwd_range(st, 0, a, 1);
        fwd_range(st, fr, pp, step);
        bwd_range(st, br, pp, step);
        bwd_range(st, 0, c, 1);
        if (st->err)
            return -1;
    }
    return st->err ? -1 : 0;
}

/* Polling order: each rank in turn runs while its input is there and its
 * output has room.  Returns 0, or -1 if the schedule cannot proceed. */
static int run_polling(sim_state *st)
{
    int pp = st->pp, vpp = st->vpp, last = pp - 1, r, done = 0, progress;

    do {
        progress = 0;
        for (r = 0; r < pp; r++) {
            for (;;) {
                int j = st->rk[r].nf + st->rk[r].nb;
                if (j == 2 * st->n)
                    break;
                if (stack_pipe_op(j, st->rk[r].warm, st->n, NULL)) {
                    int in = r > 0 ? st->rk[r - 1].nf > st->rk[r].nf
                                   : st->f0.c == 0 || st->wf.tail != st->wf.head;
                    sim_ring *q = st->fl.c < vpp - 1 ? &st->wf : &st->sf;
                    int room = r < last ? st->rk[r].nf - st->rk[r + 1].nf < SLOTS
                                        : q->tail - q->head < RING_CAP;
                    if (!in || !room)
                        break;
                    fwd_range(st, r, r + 1, 1);
                } else {
                    sim_ring *q = st->bl.c == 0 ? &st->sf : &st->wb;
                    int in = r < last ? st->rk[r + 1].nb > st->rk[r].nb : q->tail != q->head;
                    int room = r > 0 ? st->rk[r].nb - st->rk[r - 1].nb < SLOTS
                                     : st->b0.c == vpp - 1 ||
                                           st->wb.tail - st->wb.head < RING_CAP;
                    if (!in || !room)
                        break;
                    bwd_range(st, r, r + 1, 1);
                }
                progress = 1;
                if (st->rk[r].nf + st->rk[r].nb == 2 * st->n)
                    done++;
            }
        }
    } while (done < pp && progress);
    return done < pp || st->err ? -1 : 0;
}

/* The no-event simulation.  Returns the makespan, or -1 if the schedule
 * cannot proceed. */
static double simulate_fast(stack_pipe pipe, int pp, int vpp, int m, const double *fwd_s,
                            const double *bwd_s, const double *p2p_s, double wrap_s,
                            const double *fc, const double *bc, double *rank_end)
{
    sim_state st;
    sim_snap snap;
    double span = 0;
    int r;

    state_init(&st, pipe, pp, vpp, m, fwd_s, bwd_s, p2p_s, wrap_s, fc, bc);
    if (run_positions(&st, &snap) != 0) {
        state_init(&st, pipe, pp, vpp, m, fwd_s, bwd_s, p2p_s, wrap_s, fc, bc);
        if (run_polling(&st) != 0)
            return -1;
    }
    for (r = 0; r < pp; r++) {
        if (rank_end != NULL)
            rank_end[r] = st.rk[r].busy;
        if (st.rk[r].busy > span)
            span = st.rk[r].busy;
    }
    return span;
}

/* Both entry points: per-rank times (fc, bc NULL) or per-chunk times. */
static double simulate(stack_pipe pipe, int pp, int vpp, int m, const double *fwd_s,
                       const double *bwd_s, const double *p2p_s, double p2p_wrap_s,
                       const double *fc, const double *bc, double *rank_end_s,
                       sched_events *out)
{
    double zero_p2p[MAX_PP];
    double *work, span;

    if (pp < 1 || pp > MAX_PP || m < 1)
        return 0;
    if (vpp < 1)
        vpp = 1;
    if (p2p_s == NULL) {
        memset(zero_p2p, 0, sizeof zero_p2p);
        p2p_s = zero_p2p;
    }
    if (out == NULL) {
        if ((double)m * vpp > MAX_OPS)
            return -1;
        return simulate_fast(pipe, pp, vpp, m, fwd_s, bwd_s, p2p_s, p2p_wrap_s, fc, bc,
                             rank_end_s);
    }
    /* events are allocated anyway: so is the workspace */
    work = pl_calloc(2 * (size_t)pp * (size_t)m, (size_t)vpp * sizeof *work);
    if (work == NULL)
        return -1;
    span = simulate_events(pipe, pp, vpp, m, fwd_s, bwd_s, p2p_s, p2p_wrap_s, fc, bc, work,
                           work + (size_t)pp * m * vpp, rank_end_s, out);
    pl_free(work);
    return span < 0 ? -1 : span;
}

double schedule_simulate_ex(stack_pipe pipe, int pp, int vpp, int microbatches,
                            const double *fwd_s, const double *bwd_s, const double *p2p_s,
                            double p2p_wrap_s, double *rank_end_s, sched_events *out)
{
    return simulate(pipe, pp, vpp, microbatches, fwd_s, bwd_s, p2p_s, p2p_wrap_s, NULL, NULL,
                    rank_end_s, out);
}

double schedule_simulate_chunks(stack_pipe pipe, int pp, int vpp, int microbatches,
                                const double *fwd_chunk_s, const double *bwd_chunk_s,
                                const double *p2p_s, double p2p_wrap_s, double *rank_end_s,
                                sched_events *out)
{
    double fwd[MAX_PP], bwd[MAX_PP];
    int r, c;
    if (pp < 1 || pp > MAX_PP || microbatches < 1)
        return 0;
    if (vpp < 1)
        vpp = 1;
    for (r = 0; r < pp; r++) {
        fwd[r] = bwd[r] = 0;
        for (c = 0; c < vpp; c++) {
            fwd[r] += fwd_chunk_s[r * vpp + c];
            bwd[r] += bwd_chunk_s[r * vpp + c];
        }
    }
    return simulate(pipe, pp, vpp, microbatches, fwd, bwd, p2p_s, p2p_wrap_s, fwd_chunk_s,
                    bwd_chunk_s, rank_end_s, out);
}

/* --- the cache ------------------------------------------------------------- */

void sched_cache_init(sched_cache *c)
{
    memset(c, 0, sizeof *c);
}

/* Whether entry e holds these inputs (compared bit for bit). */
static int cache_has(const sched_cache_entry *e, stack_pipe pipe, int pp, int vpp, int m,
                     const double *fwd_s, const double *bwd_s, const double *p2p_s,
                     double wrap_s)
{
    size_t n = (size_t)pp * sizeof(double);
    return e->pp == pp && e->vpp == vpp && e->m == m && e->pipe == pipe &&
           memcmp(&e->wrap_s, &wrap_s, sizeof wrap_s) == 0 &&
           memcmp(e->in_s, fwd_s, n) == 0 && memcmp(e->in_s + pp, bwd_s, n) == 0 &&
           (pp == 1 || memcmp(e->in_s + 2 * pp, p2p_s, n - sizeof(double)) == 0);
}

double schedule_simulate_cached(sched_cache *c, stack_pipe pipe, int pp, int vpp,
                                int microbatches, const double *fwd_s, const double *bwd_s,
                                const double *p2p_s, double p2p_wrap_s, double *rank_end_s)
{
    double zero_p2p[MAX_PP], end[MAX_PP];
    sched_cache_entry *e, *old;
    size_t n;
    int i;

    if (c == NULL || pp < 1 || pp > MAX_PP || microbatches < 1)
        return schedule_simulate_ex(pipe, pp, vpp, microbatches, fwd_s, bwd_s, p2p_s,
                                    p2p_wrap_s, rank_end_s, NULL);
    if (vpp < 1)
        vpp = 1;
    if (p2p_s == NULL) {
        memset(zero_p2p, 0, sizeof zero_p2p);
        p2p_s = zero_p2p;
    }
    n = (size_t)pp * sizeof(double);
    c->clock++;
    old = &c->e[0];
    for (i = 0; i < SCHED_CACHE_ENTRIES; i++) {
        e = &c->e[i];
        if (cache_has(e, pipe, pp, vpp, microbatches, fwd_s, bwd_s, p2p_s, p2p_wrap_s)) {
            e->used = c->clock;
            c->hits++;
            if (rank_end_s != NULL)
                memcpy(rank_end_s, e->rank_end_s, n);
            return e->span_s;
        }
        if (e->used < old->used)
            old = e;
    }
    c->misses++;
    e = old;
    e->span_s = schedule_simulate_ex(pipe, pp, vpp, microbatches, fwd_s, bwd_s, p2p_s,
                                     p2p_wrap_s, end, NULL);
    e->pipe = pipe;
    e->pp = pp;
    e->vpp = vpp;
    e->m = microbatches;
    e->used = c->clock;
    e->wrap_s = p2p_wrap_s;
    memcpy(e->in_s, fwd_s, n);
    memcpy(e->in_s + pp, bwd_s, n);
    memset(e->in_s + 2 * pp, 0, n);
    memcpy(e->in_s + 2 * pp, p2p_s, n - sizeof(double));
    memcpy(e->rank_end_s, end, n);
    if (rank_end_s != NULL)
        memcpy(rank_end_s, end, n);
    return e->span_s;
}

double schedule_simulate(stack_pipe pipe, int pp, int vpp, int microbatches,
                         const double *fwd_s, const double *bwd_s, const double *p2p_s,
                         sched_events *out)
{
    double wrap = p2p_s != NULL && pp > 1 ? p2p_s[0] : 0;
    return schedule_simulate_ex(pipe, pp, vpp, microbatches, fwd_s, bwd_s, p2p_s, wrap, NULL, out);
}

double schedule_bubble_fraction(int pp, int vpp, int microbatches)
{
    if (microbatches < 1 || vpp < 1)
        return 0;
    return (double)(pp - 1) / ((double)vpp * microbatches);
}
