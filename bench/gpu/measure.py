#!/usr/bin/env python3
"""measure.py: kernel figures on one GPU that anchor the planner's cost model
(GEMM, FP8 GEMM, grouped MoE GEMM, attention, HBM).

Run on the GPU machine (PyTorch with CUDA, Triton for torch.compile and
flex_attention; no other package):
    OUT=dir python3 bench/gpu/measure.py [--quick] [--budget-s N]
    OUT=dir python3 bench/gpu/measure.py --sustained
The first writes OUT/h200-kernels-raw.json as it goes (flushed after every
record; about 150 s on an H200), the second OUT/h200-kernels-sustained.json
(about 45 s); each also OUT/smi*.csv (nvidia-smi clocks and power).
bench/gpu/curate.py turns two raw runs and a sustained one into
tests/data/h200-kernels.json (docs/cost-model.md, "Measured kernels (H200)").  Every measurement is in
try/except: a failure is recorded under "errors" and the run goes on.
Timing: CUDA events around each repetition, warm-up first, median of >= 10
repetitions, a 256 MiB buffer zeroed before each one (L2 is 60 MB) so no
operand starts in L2.
"""
import json
import math
import os
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

OUT = os.environ.get("OUT", "/tmp/kernels-out")
QUICK = "--quick" in sys.argv
BUDGET_S = 400.0
for i, a in enumerate(sys.argv):
    if a == "--budget-s":
        BUDGET_S = float(sys.argv[i + 1])
T0 = time.time()
os.makedirs(OUT, exist_ok=True)
RAW = os.path.join(OUT, "h200-kernels-sustained.json" if "--sustained" in sys.argv
                   else "h200-kernels-raw.json")
DEV = "cuda"
BF16 = torch.bfloat16
R = {"meta": {}, "gemm": [], "fp8_gemm": [], "grouped": [], "attention": [],
     "hbm": [], "errors": [], "skipped": []}


def flush():
    R["meta"]["elapsed_s"] = round(time.time() - T0, 1)
    tmp = RAW + ".tmp"
    with open(tmp, "w") as f:
        json.dump(R, f, indent=1)
    os.replace(tmp, RAW)


def err(where, e):
    R["errors"].append({"where": where, "error": repr(e)[:400],
                        "trace": traceback.format_exc()[-600:]})
    print("ERROR", where, repr(e)[:200], flush=True)
    flush()


def left():
    return BUDGET_S - (time.time() - T0)


_L2 = None


def l2_flush():
    global _L2
    if _L2 is None:
        _L2 = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device=DEV)
    _L2.zero_()


def bench(fn, reps=10, warmup=2, flush_l2=True):
    """Median and min seconds of fn over reps, each between CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    ev = []
    for _ in range(reps):
        if flush_l2:
            l2_flush()
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        ev.append((s, e))
    torch.cuda.synchronize()
    t = sorted(s.elapsed_time(e) * 1e-3 for s, e in ev)
    return t[len(t) // 2], t[0]


def time_once(fn):
    """Seconds of one call of fn after one warm-up call."""
    fn()
    torch.cuda.synchronize()
    s = torch.cuda.Event(enable_timing=True)
    e = torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) * 1e-3


def auto_reps(fn, flush_l2=True):
    """10 reps, 30 where one run is under 50 us (launch-level noise)."""
    one = time_once(fn)
    return bench(fn, reps=30 if one < 50e-6 else 10, warmup=2, flush_l2=flush_l2)


# ---------------------------------------------------------------- meta
def meta():
    m = R["meta"]
    m["date_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    m["quick"] = QUICK
    m["torch"] = torch.__version__
    m["cuda_runtime"] = torch.version.cuda
    try:
        m["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:
        err("meta.cudnn", e)
    p = torch.cuda.get_device_properties(0)
    m["gpu_name"] = p.name
    m["sm_count"] = p.multi_processor_count
    m["total_mem_bytes"] = p.total_memory
    m["capability"] = "%d.%d" % (p.major, p.minor)
    try:
        m["l2_bytes"] = p.L2_cache_size
    except Exception:
        pass
    try:
        import importlib.metadata as md
        pk = {}
        for name in ("nvidia-cublas", "nvidia-cudnn-cu13", "nvidia-cublas-cu13",
                     "triton", "nvidia-cuda-runtime", "nvidia-nccl-cu13"):
            try:
                pk[name] = md.version(name)
            except Exception:
                pass
        m["packages"] = pk
    except Exception as e:
        err("meta.packages", e)
    try:
        m["cublaslt_version"] = torch._C._cuda_getCompiledVersion()
    except Exception:
        pass
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.sm,"
                            "clocks.max.sm,clocks.mem,clocks.max.mem,power.limit,"
                            "temperature.gpu,pstate", "--format=csv"],
                           capture_output=True, text=True, timeout=20)
        m["nvidia_smi_start"] = q.stdout.strip()
        q = subprocess.run(["nvidia-smi", "-q", "-d", "CLOCK"], capture_output=True,
                           text=True, timeout=20)
        m["nvidia_smi_clocks"] = q.stdout.strip()[-3000:]
    except Exception as e:
        err("meta.nvidia-smi", e)
    print(json.dumps({k: v for k, v in m.items() if k != "nvidia_smi_clocks"}), flush=True)
    flush()


def smi_end():
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,power.draw,"
                            "temperature.gpu,clocks_event_reasons.active", "--format=csv"],
                           capture_output=True, text=True, timeout=20)
        R["meta"]["nvidia_smi_end"] = q.stdout.strip()
    except Exception as e:
        err("meta.nvidia-smi-end", e)


# ---------------------------------------------------------------- HBM
def hbm():
    n = (1 << 30) if not QUICK else (1 << 28)        # bf16 elements: 2 GiB
    x = torch.randn(n, dtype=BF16, device=DEV)
    y = torch.empty_like(x)

    def rec(name, t, tmin, nbytes, kernels, note=""):
        R["hbm"].append({"kernel": name, "bytes": nbytes, "kernels": kernels, "s": t,
                         "s_min": tmin, "GBps": nbytes / t / 1e9, "note": note})
        print("hbm %-22s %8.1f GB/s" % (name, nbytes / t / 1e9), flush=True)
        flush()

    try:
        t, tm = bench(lambda: y.copy_(x))
        rec("copy", t, tm, 4 * n, 1)
    except Exception as e:
        err("hbm.copy", e)
    try:
        t, tm = bench(lambda: torch.add(x, 1.0, out=y))
        rec("scale_add", t, tm, 4 * n, 1)
    except Exception as e:
        err("hbm.add", e)
    h = 8192
    xs = x.view(-1, h)
    ys = y.view(-1, h)
    w = torch.ones(h, dtype=BF16, device=DEV)
    try:
        t, tm = bench(lambda: F.rms_norm(xs, (h,), w, 1e-5))
        rec("rms_norm_eager", t, tm, 4 * n, 1, "F.rms_norm, ideal bytes read x + write y")
    except Exception as e:
        err("hbm.rms_norm", e)
    a, b = x[: n // 2].view(-1, 4096), x[n // 2:].view(-1, 4096)
    o = y[: n // 2].view(-1, 4096)
    try:
        t, tm = bench(lambda: torch.mul(F.silu(a), b, out=o))
        rec("swiglu_eager", t, tm, 3 * n, 2,
            "silu(a)*b eager, two kernels; bytes = ideal fused (read a, b, write o)")
    except Exception as e:
        err("hbm.swiglu", e)
    try:
        def rms(v, g):
            vf = v.float()
            return (vf * torch.rsqrt(vf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(v.dtype) * g

        def sw(p, q):
            return F.silu(p) * q
        crms = torch.compile(rms)
        csw = torch.compile(sw)
        t, tm = bench(lambda: crms(xs, w))
        rec("rms_norm_compiled", t, tm, 4 * n, 1, "torch.compile fused")
        t, tm = bench(lambda: csw(a, b))
        rec("swiglu_compiled", t, tm, 3 * n, 1, "torch.compile fused")
    except Exception as e:
        err("hbm.compiled", e)
    del x, y
    torch.cuda.empty_cache()


# ---------------------------------------------------------------- dense GEMMs
# (model, tp, hidden, q heads, kv heads, head_dim, ffn, gated)
DENSE_MODELS = [("llama3-8b", 4096, 32, 8, 128, 14336, True),
                ("llama3-70b", 8192, 64, 8, 128, 28672, True),
                ("llama3-405b", 16384, 128, 8, 128, 53248, True),
                ("gpt3-175b", 12288, 96, 96, 128, 49152, False)]
DENSE = [(mo[0], tp) + mo[1:] for mo in DENSE_MODELS for tp in (1, 2, 4, 8)]


def dense_layer_shapes(model, tp, h, hq, hkv, d, ffn, gated):
    """(name, n, k) of a layer's forward GEMMs on one tp rank (y = x W^T)."""
    qkv = (hq + 2 * hkv) * d // tp
    return [("qkv", qkv, h), ("proj", h, hq * d // tp),
            ("fc1", (2 if gated else 1) * ffn // tp, h), ("fc2", h, ffn // tp)]


def attn_proj_shapes():
    """Qwen3 and DeepSeek-V3 attention projections: (model, tp, name, n, k)."""
    s = []
    for tp in (1, 4):
        s += [("qwen3-235b-a22b", tp, "qkv", (64 + 8) * 128 // tp, 4096),
              ("qwen3-235b-a22b", tp, "proj", 4096, 64 * 128 // tp)]
    s += [("qwen3-30b-a3b", 1, "qkv", (32 + 8) * 128, 2048),
          ("qwen3-30b-a3b", 1, "proj", 2048, 32 * 128)]
    for tp in (1, 2):
        s += [("deepseek-v3", tp, "q_down", 1536, 7168),
              ("deepseek-v3", tp, "q_up", 128 * 192 // tp, 1536),
              ("deepseek-v3", tp, "kv_down", 512 + 64, 7168),
              ("deepseek-v3", tp, "kv_up", 128 * 256 // tp, 512),
              ("deepseek-v3", tp, "proj", 7168, 128 * 128 // tp)]
    return s


def gemm_time(m, n, k, op):
    """nn.Linear's three products: fwd x[m,k] W[n,k]^T; dgrad dy[m,n] W[n,k];
    wgrad dy[m,n]^T x[m,k] (output n x k, reduction over the m tokens)."""
    if op == "fwd":
        a = torch.randn(m, k, dtype=BF16, device=DEV)
        w = torch.randn(n, k, dtype=BF16, device=DEV)
        fn = lambda: torch.matmul(a, w.t())
    elif op == "dgrad":
        a = torch.randn(m, n, dtype=BF16, device=DEV)
        w = torch.randn(n, k, dtype=BF16, device=DEV)
        fn = lambda: torch.matmul(a, w)
    elif op == "wgrad":
        a = torch.randn(m, n, dtype=BF16, device=DEV)
        w = torch.randn(m, k, dtype=BF16, device=DEV)
        fn = lambda: torch.matmul(a.t(), w)
    else:  # square / plain NN
        a = torch.randn(m, k, dtype=BF16, device=DEV)
        w = torch.randn(k, n, dtype=BF16, device=DEV)
        fn = lambda: torch.matmul(a, w)
    t, tm = auto_reps(fn)
    del a, w
    return t, tm


def rec_gemm(lst, d, m, n, k, t, tm, peak=989.4e12):
    fl = 2.0 * m * n * k
    d.update({"m": m, "n": n, "k": k, "s": t, "s_min": tm, "TFLOPs": fl / t / 1e12,
              "frac_peak": fl / t / peak})
    lst.append(d)
    print("%-40s m%6d n%6d k%6d %9.1f us %6.1f TF/s" %
          (d.get("model", "") + " " + d.get("gemm", "") + " " + d.get("op", ""), m, n, k,
           t * 1e6, fl / t / 1e12), flush=True)
    flush()


def square_sweep():
    sizes = [512, 1024, 2048, 4096, 8192, 16384] if not QUICK else [1024, 8192]
    if not QUICK:
        sizes = [512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
    for s in sizes:
        try:
            t, tm = gemm_time(s, s, s, "nn")
            rec_gemm(R["gemm"], {"set": "square", "op": "nn"}, s, s, s, t, tm)
        except Exception as e:
            err("square %d" % s, e)


def dense_gemms(budget_s):
    t_end = time.time() + budget_s
    ms = [1024, 2048, 4096, 8192, 16384, 32768] if not QUICK else [4096]
    confs = DENSE if not QUICK else DENSE[:1]
    for (model, tp, h, hq, hkv, d, ffn, gated) in confs:
        for (g, n, k) in dense_layer_shapes(model, tp, h, hq, hkv, d, ffn, gated):
            for m in ms:
                ops = ("fwd", "dgrad", "wgrad") if m in (4096, 16384) else ("fwd",)
                for op in ops:
                    if time.time() > t_end or left() < 30:
                        R["skipped"].append("dense %s tp%d %s m%d %s" % (model, tp, g, m, op))
                        continue
                    try:
                        t, tm = gemm_time(m, n, k, op)
                        rec_gemm(R["gemm"], {"set": "layer", "model": model, "tp": tp,
                                             "gemm": g, "op": op}, m, n, k, t, tm)
                    except Exception as e:
                        err("dense %s %s %d %s" % (model, g, m, op), e)
    for (model, tp, g, n, k) in (attn_proj_shapes() if not QUICK else attn_proj_shapes()[:2]):
        for m in ([4096, 16384] if not QUICK else [4096]):
            if time.time() > t_end or left() < 30:
                R["skipped"].append("proj %s %s m%d" % (model, g, m))
                continue
            try:
                t, tm = gemm_time(m, n, k, "fwd")
                rec_gemm(R["gemm"], {"set": "attn_proj", "model": model, "tp": tp,
                                     "gemm": g, "op": "fwd"}, m, n, k, t, tm)
            except Exception as e:
                err("proj %s %s" % (model, g), e)


# ---------------------------------------------------------------- FP8 GEMMs
def fp8_time(m, n, k, fast_accum=True):
    a = torch.randn(m, k, dtype=BF16, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, dtype=BF16, device=DEV).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, dtype=torch.float32, device=DEV)
    fn = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=BF16,
                                  use_fast_accum=fast_accum)
    t, tm = auto_reps(fn)
    del a, b
    return t, tm


def fp8_gemms(budget_s):
    t_end = time.time() + budget_s
    sq = [1024, 2048, 4096, 8192, 16384] if not QUICK else [8192]
    for s in sq:
        for fa in (True, False):
            try:
                t, tm = fp8_time(s, s, s, fa)
                rec_gemm(R["fp8_gemm"], {"set": "square", "op": "tn", "fast_accum": fa},
                         s, s, s, t, tm, 1978.9e12)
            except Exception as e:
                err("fp8 square %d" % s, e)
    ms = [2048, 8192, 32768] if not QUICK else [4096]
    confs = DENSE if not QUICK else DENSE[:1]
    for (model, tp, h, hq, hkv, d, ffn, gated) in confs:
        for (g, n, k) in dense_layer_shapes(model, tp, h, hq, hkv, d, ffn, gated):
            for m in ms:
                # the layer's three products as m x n x k triples (TN layout)
                trip = [("fwd", m, n, k)]
                if m == 8192:
                    trip += [("dgrad", m, k, n), ("wgrad", n, k, m)]
                for (op, a, b, c) in trip:
                    if time.time() > t_end or left() < 30:
                        R["skipped"].append("fp8 %s tp%d %s m%d %s" % (model, tp, g, m, op))
                        continue
                    try:
                        t, tm = fp8_time(a, b, c, True)
                        rec_gemm(R["fp8_gemm"], {"set": "layer", "model": model, "tp": tp,
                                                 "gemm": g, "op": op, "fast_accum": True},
                                 a, b, c, t, tm, 1978.9e12)
                    except Exception as e:
                        err("fp8 %s %s %d %s" % (model, g, m, op), e)


# ---------------------------------------------------------------- grouped GEMMs
# (model, hidden, expert ffn, experts, top-k); experts gated (fc1 = 2 x ffn)
MOE = [("qwen3-30b-a3b", 2048, 768, 128, 8), ("qwen3-235b-a22b", 4096, 1536, 128, 8),
       ("gpt-oss-120b", 2880, 2880, 128, 4), ("deepseek-v3", 7168, 2048, 256, 8)]


def grouped_one(G, tpe, n, k, rowwise_fp8):
    """One grouped GEMM of G experts x tpe tokens, out [tpe, n] = x[tpe, k] W_e[n, k]^T.
    Returns dict of seconds: fwd, dgrad, wgrad (explicit products), fwd_bwd (autograd)."""
    T = G * tpe
    x = torch.randn(T, k, dtype=BF16, device=DEV)
    w = torch.randn(G, n, k, dtype=BF16, device=DEV)
    gy = torch.randn(T, n, dtype=BF16, device=DEV)
    offs = torch.arange(1, G + 1, dtype=torch.int32, device=DEV) * tpe
    res = {}
    res["fwd"] = auto_reps(lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs))
    try:
        res["dgrad"] = auto_reps(lambda: torch._grouped_mm(gy, w, offs=offs))
    except Exception as e:
        err("grouped dgrad G%d tpe%d n%d k%d" % (G, tpe, n, k), e)
    try:
        res["wgrad"] = auto_reps(lambda: torch._grouped_mm(gy.t(), x, offs=offs))
    except Exception as e:
        err("grouped wgrad G%d tpe%d n%d k%d" % (G, tpe, n, k), e)
    try:
        xr = x.detach().requires_grad_(True)
        wr = w.detach().requires_grad_(True)

        def fb():
            y = torch._grouped_mm(xr, wr.transpose(-2, -1), offs=offs)
            torch.autograd.grad(y, (xr, wr), gy)
        res["fwd_bwd"] = auto_reps(fb)
        del xr, wr
    except Exception as e:
        err("grouped autograd G%d tpe%d" % (G, tpe), e)
    if rowwise_fp8:
        try:
            xa = x.to(torch.float8_e4m3fn)
            wb = w.to(torch.float8_e4m3fn)
            sa = torch.ones(T, dtype=torch.float32, device=DEV)
            sb = torch.ones(G, n, dtype=torch.float32, device=DEV)
            res["fp8_rowwise_fwd"] = auto_reps(
                lambda: torch._scaled_grouped_mm(xa, wb.transpose(-2, -1), sa, sb, offs=offs,
                                                 out_dtype=BF16, use_fast_accum=True))
            del xa, wb
        except Exception as e:
            err("grouped fp8 G%d tpe%d" % (G, tpe), e)
    del x, w, gy
    return res


def grouped_gemms(budget_s):
    t_end = time.time() + budget_s
    if not hasattr(torch, "_grouped_mm"):
        R["skipped"].append("grouped: torch._grouped_mm absent")
        return
    if QUICK:
        plan = [(MOE[0], 8, 256), (MOE[3], 8, 1024)]
    else:
        plan = []
        for mo in MOE:
            for G in (2, 4, 8, 16, 32):
                tpes = [64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384]
                if G in (4, 16):
                    tpes = [128, 512, 2048, 8192]
                for tpe in tpes:
                    if G * tpe <= 65536:
                        plan.append((mo, G, tpe))
        # small shapes first so a short budget still covers the regime
        plan.sort(key=lambda p: (p[2] * p[1] * p[0][1] * p[0][2], p[0][0]))
    fp8_done = set()
    for (mo, G, tpe) in plan:
        name, h, f, E, topk = mo
        for (g, n, k) in (("fc1", 2 * f, h), ("fc2", h, f)):
            if time.time() > t_end or left() < 30:
                R["skipped"].append("grouped %s G%d tpe%d %s" % (name, G, tpe, g))
                continue
            try:
                key = (name, G, g)
                do_fp8 = tpe in (128, 1024, 8192) or QUICK
                r = grouped_one(G, tpe, n, k, do_fp8)
                fl = 2.0 * G * tpe * n * k
                d = {"model": name, "gemm": g, "experts_local": G, "tokens_per_expert": tpe,
                     "n": n, "k": k, "flops": fl}
                for key2, (t, tm) in r.items():
                    d[key2 + "_s"] = t
                    d[key2 + "_s_min"] = tm
                d["fwd_TFLOPs"] = fl / r["fwd"][0] / 1e12
                R["grouped"].append(d)
                print("grouped %-16s %s G%2d tpe%6d fwd %8.1f us %6.1f TF/s %s" %
                      (name, g, G, tpe, r["fwd"][0] * 1e6, d["fwd_TFLOPs"],
                       " ".join("%s=%.1fus" % (a, b[0] * 1e6) for a, b in r.items()
                                if a != "fwd")), flush=True)
                flush()
            except Exception as e:
                err("grouped %s G%d tpe%d %s" % (name, G, tpe, g), e)


# ---------------------------------------------------------------- attention
def attn_flops_full(b, hq, s, dqk, dv):
    """Forward FLOPs of non-causal attention: S = Q K^T and O = P V."""
    return 2.0 * b * hq * s * s * (dqk + dv)


def sdpa_case(backend, b, hq, hkv, s, dqk, dv, bwd, gqa_mode):
    from torch.nn.attention import sdpa_kernel, SDPBackend
    be = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
          "efficient": SDPBackend.EFFICIENT_ATTENTION}[backend]
    q = torch.randn(b, hq, s, dqk, dtype=BF16, device=DEV, requires_grad=bwd)
    kh = hkv if gqa_mode == "native" else hq
    k = torch.randn(b, kh, s, dqk, dtype=BF16, device=DEV, requires_grad=bwd)
    v = torch.randn(b, kh, s, dv, dtype=BF16, device=DEV, requires_grad=bwd)
    kw = {"is_causal": True}
    if gqa_mode == "native" and hkv != hq:
        kw["enable_gqa"] = True
    with sdpa_kernel([be]):
        if not bwd:
            fn = lambda: F.scaled_dot_product_attention(q, k, v, **kw)
        else:
            go = torch.randn(b, hq, s, dv, dtype=BF16, device=DEV)

            def fn():
                o = F.scaled_dot_product_attention(q, k, v, **kw)
                torch.autograd.grad(o, (q, k, v), go)
        t = bench(fn, reps=10, warmup=2, flush_l2=False)
    del q, k, v
    return t


ATTN = [("llama-d128", 32, 8, 128, 128), ("gpt-oss-d64", 64, 8, 64, 64),
        ("deepseek-v3-mla", 128, 128, 192, 128)]


def attention(budget_s):
    t_end = time.time() + budget_s
    seqs = [2048, 4096, 8192, 16384, 32768] if not QUICK else [4096]
    backends = ["cudnn", "flash", "efficient"] if not QUICK else ["cudnn", "flash"]
    for (name, hq, hkv, dqk, dv) in ATTN:
        for s in seqs:
            b = max(1, 16384 // s)
            for be in backends:
                if be == "efficient" and s not in (4096, 16384):
                    continue
                for bwd in (False, True):
                    if time.time() > t_end or left() < 30:
                        R["skipped"].append("attn %s s%d %s bwd%d" % (name, s, be, bwd))
                        continue
                    ok = False
                    for mode in ("native", "expanded"):
                        if mode == "expanded" and hkv == hq:
                            break
                        try:
                            t, tm = sdpa_case(be, b, hq, hkv, s, dqk, dv, bwd, mode)
                            full = attn_flops_full(b, hq, s, dqk, dv)
                            work = 0.5 * full * (3.5 if bwd else 1.0)
                            R["attention"].append({
                                "case": name, "backend": be, "pass": "fwd_bwd" if bwd else "fwd",
                                "batch": b, "heads_q": hq, "heads_kv": hkv, "seq": s,
                                "head_dim_qk": dqk, "head_dim_v": dv, "causal": True,
                                "kv_heads_mode": mode, "s": t, "s_min": tm,
                                "flops_full_fwd": full,
                                "TFLOPs_causal": work / t / 1e12})
                            print("attn %-16s %-9s s%6d b%2d %-7s %-8s %9.3f ms %6.1f TF/s" %
                                  (name, be, s, b, "fwd_bwd" if bwd else "fwd", mode, t * 1e3,
                                   work / t / 1e12), flush=True)
                            flush()
                            ok = True
                            break
                        except Exception as e:
                            err("attn %s %s s%d bwd%d %s" % (name, be, s, bwd, mode), e)
                    torch.cuda.empty_cache()


def flex(budget_s):
    t_end = time.time() + budget_s
    try:
        from torch.nn.attention.flex_attention import flex_attention, create_block_mask
    except Exception as e:
        err("flex import", e)
        return
    W = 128
    cflex = torch.compile(flex_attention, dynamic=False)

    def sw(b, h, qi, ki):
        return (qi >= ki) & (qi - ki < W)
    hq, hkv, d = 64, 8, 64
    seqs = [4096, 8192, 16384, 32768] if not QUICK else [4096]
    for s in seqs:
        b = max(1, 16384 // s)
        for bwd in (False, True):
            if time.time() > t_end or left() < 30:
                R["skipped"].append("flex s%d bwd%d" % (s, bwd))
                continue
            try:
                bm = create_block_mask(sw, B=None, H=None, Q_LEN=s, KV_LEN=s, device=DEV)
                q = torch.randn(b, hq, s, d, dtype=BF16, device=DEV, requires_grad=bwd)
                k = torch.randn(b, hkv, s, d, dtype=BF16, device=DEV, requires_grad=bwd)
                v = torch.randn(b, hkv, s, d, dtype=BF16, device=DEV, requires_grad=bwd)
                if bwd:
                    go = torch.randn(b, hq, s, d, dtype=BF16, device=DEV)

                    def fn():
                        o = cflex(q, k, v, block_mask=bm, enable_gqa=True)
                        torch.autograd.grad(o, (q, k, v), go)
                else:
                    fn = lambda: cflex(q, k, v, block_mask=bm, enable_gqa=True)
                t, tm = bench(fn, reps=10, warmup=3, flush_l2=False)
                # planner's count: keys per query 2W - W^2/s, causal half
                keys = 2.0 * W - W * W / s
                work = 0.5 * 4.0 * b * s * keys * hq * d * (3.5 if bwd else 1.0)
                R["attention"].append({
                    "case": "gpt-oss-d64-window128", "backend": "flex", "pass":
                    "fwd_bwd" if bwd else "fwd", "batch": b, "heads_q": hq, "heads_kv": hkv,
                    "seq": s, "head_dim_qk": d, "head_dim_v": d, "causal": True, "window": W,
                    "kv_heads_mode": "native", "s": t, "s_min": tm,
                    "flops_full_fwd": 4.0 * b * s * keys * hq * d,
                    "TFLOPs_causal": work / t / 1e12})
                print("flex window128 s%6d b%2d %s %9.3f ms %6.1f TF/s (planner count)" %
                      (s, b, "fwd_bwd" if bwd else "fwd", t * 1e3, work / t / 1e12), flush=True)
                flush()
                del q, k, v
            except Exception as e:
                err("flex s%d bwd%d" % (s, bwd), e)


# ---------------------------------------------------------------- sustained
def loop_times(fn, seconds):
    """Back-to-back calls of fn for about `seconds`, no L2 flush: per-call
    seconds from CUDA events, in order (the clock falls as the board reaches
    its power limit)."""
    one = max(time_once(fn), 1e-6)
    n = int(min(20000, max(20, seconds / one)))
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(n)]
    for a, b in ev:
        a.record()
        fn()
        b.record()
    torch.cuda.synchronize()
    return [a.elapsed_time(b) * 1e-3 for a, b in ev]


def smi_now():
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,power.draw,temperature.gpu,"
                            "clocks_event_reasons.active", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=10)
        return q.stdout.strip()
    except Exception as e:
        return repr(e)


def sustained_rec(name, flops, nbytes, t, extra=None):
    n = len(t)
    first = sorted(t[:10])[5]
    tail = sorted(t[n // 2:])
    last = tail[len(tail) // 2]
    d = {"case": name, "calls": n, "total_s": sum(t), "flops": flops, "bytes": nbytes,
         "burst_s": first, "sustained_s": last, "smi_after": smi_now(),
         "deciles_s": [sorted(t[i * n // 10:(i + 1) * n // 10])[len(t[i * n // 10:(i + 1) * n // 10]) // 2]
                       for i in range(10)]}
    if flops:
        d["burst_TFLOPs"] = flops / first / 1e12
        d["sustained_TFLOPs"] = flops / last / 1e12
    if nbytes:
        d["burst_GBps"] = nbytes / first / 1e9
        d["sustained_GBps"] = nbytes / last / 1e9
    if extra:
        d.update(extra)
    R.setdefault("sustained", []).append(d)
    print("sustained %-28s burst %9.1f us sustained %9.1f us %s" %
          (name, first * 1e6, last * 1e6, d["smi_after"]), flush=True)
    flush()


def idle(seconds):
    torch.cuda.synchronize()
    time.sleep(seconds)


def sustained(seconds=3.0):
    # launch floor: tiny GEMMs back to back (GPU time per kernel incl. gaps)
    try:
        a = torch.randn(128, 128, dtype=BF16, device=DEV)
        t = loop_times(lambda: torch.matmul(a, a), 0.2)
        sustained_rec("gemm_128_launch_floor", 2.0 * 128 ** 3, 0, t)
        x = torch.randn(2 * 64, 2048, dtype=BF16, device=DEV)
        w = torch.randn(2, 1536, 2048, dtype=BF16, device=DEV)
        offs = torch.tensor([64, 128], dtype=torch.int32, device=DEV)
        t = loop_times(lambda: torch._grouped_mm(x, w.transpose(-2, -1), offs=offs), 0.2)
        sustained_rec("grouped_2x64_launch_floor", 2.0 * 128 * 1536 * 2048, 0, t)
        # host-bound launch rate: many tiny kernels timed as one span
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        s.record()
        for _ in range(2000):
            torch.matmul(a, a)
        e.record()
        torch.cuda.synchronize()
        R.setdefault("sustained", []).append({"case": "gemm_128_span_per_call",
                                              "s_per_call": s.elapsed_time(e) * 1e-3 / 2000})
        print("span per tiny gemm %.2f us" % (s.elapsed_time(e) * 1e3 / 2000), flush=True)
        flush()
    except Exception as e:
        err("sustained launch", e)
    cases = []
    for sz in (4096, 8192, 16384):
        cases.append(("gemm_bf16_%d" % sz, sz, "bf16"))
    cases.append(("gemm_fp8_8192", 8192, "fp8"))
    for name, sz, kind in cases:
        try:
            idle(2.0)
            if kind == "bf16":
                a = torch.randn(sz, sz, dtype=BF16, device=DEV)
                b = torch.randn(sz, sz, dtype=BF16, device=DEV)
                fn = lambda: torch.matmul(a, b)
            else:
                a = torch.randn(sz, sz, dtype=BF16, device=DEV).to(torch.float8_e4m3fn)
                b = torch.randn(sz, sz, dtype=BF16, device=DEV).to(torch.float8_e4m3fn)
                one = torch.tensor(1.0, dtype=torch.float32, device=DEV)
                fn = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one,
                                              out_dtype=BF16, use_fast_accum=True)
            t = loop_times(fn, seconds)
            sustained_rec(name, 2.0 * sz ** 3, 0, t)
            del a, b
        except Exception as e:
            err("sustained " + name, e)
    # Llama 3 70B at tp 8, m 8192: the layer's 12 GEMMs (fwd, dgrad, wgrad)
    try:
        idle(2.0)
        m = 8192
        shapes = dense_layer_shapes("llama3-70b", 8, 8192, 64, 8, 128, 28672, True)
        ts = []
        fl = 0.0
        for (g, n, k) in shapes:
            x = torch.randn(m, k, dtype=BF16, device=DEV)
            w = torch.randn(n, k, dtype=BF16, device=DEV)
            dy = torch.randn(m, n, dtype=BF16, device=DEV)
            ts.append((x, w, dy))
            fl += 3 * 2.0 * m * n * k

        def layer():
            for (x, w, dy) in ts:
                torch.matmul(x, w.t())
                torch.matmul(dy, w)
                torch.matmul(dy.t(), x)
        t = loop_times(layer, seconds)
        sustained_rec("llama3-70b_tp8_m8192_layer_gemms", fl, 0, t)
        del ts
    except Exception as e:
        err("sustained layer", e)
    try:
        idle(2.0)
        from torch.nn.attention import sdpa_kernel, SDPBackend
        b, hq, hkv, s_, d = 2, 32, 8, 8192, 128
        q = torch.randn(b, hq, s_, d, dtype=BF16, device=DEV, requires_grad=True)
        k = torch.randn(b, hkv, s_, d, dtype=BF16, device=DEV, requires_grad=True)
        v = torch.randn(b, hkv, s_, d, dtype=BF16, device=DEV, requires_grad=True)
        go = torch.randn(b, hq, s_, d, dtype=BF16, device=DEV)

        def att():
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
                torch.autograd.grad(o, (q, k, v), go)
        full = attn_flops_full(b, hq, s_, d, d)
        t = loop_times(att, seconds)
        sustained_rec("cudnn_attn_d128_s8192_fwd_bwd", 0.5 * full * 3.5, 0, t)
        del q, k, v
    except Exception as e:
        err("sustained attention", e)
    try:
        idle(2.0)
        n = 1 << 30
        x = torch.randn(n, dtype=BF16, device=DEV)
        y = torch.empty_like(x)
        t = loop_times(lambda: y.copy_(x), seconds)
        sustained_rec("copy_2GiB", 0, 4.0 * n, t)
    except Exception as e:
        err("sustained copy", e)


def main():
    smi = None
    try:
        sus = "--sustained" in sys.argv
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,"
                                "power.draw,temperature.gpu", "--format=csv", "-lms",
                                "200" if sus else "2000"],
                               stdout=open(os.path.join(OUT, "smi-sustained.csv" if sus
                                                        else "smi.csv"), "w"),
                               stderr=subprocess.DEVNULL)
    except Exception as e:
        err("smi", e)
    try:
        meta()
    except Exception as e:
        err("meta", e)
    torch.backends.cuda.matmul.allow_tf32 = False
    # sections with their share of the budget, most important first
    f = 1.0 if not QUICK else 0.25
    if "--sustained" in sys.argv:
        steps = [("sustained", lambda: sustained(0.5 if QUICK else 3.0))]
    else:
        steps = [("hbm", lambda: hbm()), ("square", lambda: square_sweep()),
                 ("dense", lambda: dense_gemms(130 * f)),
                 ("grouped", lambda: grouped_gemms(110 * f)),
                 ("attention", lambda: attention(100 * f)), ("fp8", lambda: fp8_gemms(60 * f)),
                 ("flex", lambda: flex(45 * f))]
    for name, fn in steps:
        R["meta"].setdefault("section_start_s", {})[name] = round(time.time() - T0, 1)
        if left() < 30:
            R["skipped"].append("section " + name)
            continue
        try:
            fn()
        except Exception as e:
            err("section " + name, e)
        torch.cuda.empty_cache()
        flush()
    smi_end()
    if smi is not None:
        smi.terminate()
    flush()
    print("done in %.1f s; %d errors" % (time.time() - T0, len(R["errors"])), flush=True)


if __name__ == "__main__":
    main()
