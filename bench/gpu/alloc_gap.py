#!/usr/bin/env python3
"""alloc_gap.py: measure what PyTorch's CUDA caching allocator reserves beyond
what is allocated (torch.cuda max_memory_reserved - max_memory_allocated), in
training steps shaped like the memory corpus's torchtitan rows
(tests/data/memory-runs.json): Llama 3.1 blocks as torchtitan 9dec370 writes
them, bf16 compute over fp32 FSDP2 shards, foreach AdamW, activation
checkpointing, TP with sequence and loss parallel, one rank of an N-rank job
emulated over torch's fake process group (collectives are no-ops, every
tensor keeps its per-rank size).  The figures are in
tests/data/allocator-runs.json; docs/validation.md ("Memory", "The caching
allocator, measured") says what they show.

Usage (one GPU with >= 90 GB; torch >= 2.6, nothing else):
  python3 bench/gpu/alloc_gap.py OUTDIR [--quick] [--only NAME,...] [--budget S]
Each experiment runs in its own process (PYTORCH_CUDA_ALLOC_CONF is read at
CUDA init), with the default allocator and with expandable_segments:True
unless it names its own; one JSON object per run (per-step memory_stats,
max allocated and reserved, a trace of allocated/reserved after each
micro-batch, the segments by pool and stream) is appended to
OUTDIR/alloc.jsonl as it finishes.  --quick first runs three tiny shapes
(checks the fake process group, FSDP2 and DTensor path in ~30 s).  The full
list takes about 8 minutes on an H200."""
import json, os, subprocess, sys, time

LLAMA = {  # Llama 3.1 (torchtitan models/llama/__init__.py llama3_configs)
    "8b": dict(dim=4096, layers=32, heads=32, kv=8, ffn=14336, vocab=128256),
    "70b": dict(dim=8192, layers=80, heads=64, kv=8, ffn=28672, vocab=128256),
    "405b": dict(dim=16384, layers=126, heads=128, kv=8, ffn=53248, vocab=128256),
}

# name: model, dp (FSDP shards), tp, layers run, micro-batch (batch, seq),
# micro-batches m, ac (full|op_sac), pattern (step: whole model with loss;
# pp_first: a first pipeline stage, all m forwards then m backwards, no loss;
# pp_last: a last stage, forward+loss+backward per micro-batch)
EXPS = [
    dict(name="8b_fsdp8_b2s8k_opsac", model="8b", dp=8, tp=1, layers=32, batch=2, seq=8192, m=1, ac="op_sac", pattern="step"),
    dict(name="405b_tp8_fsdp8_first_b4s8k", model="405b", dp=8, tp=8, layers=4, batch=4, seq=8192, m=8, ac="full", pattern="pp_first"),
    dict(name="405b_tp8_fsdp8_first_b1s32k", model="405b", dp=8, tp=8, layers=4, batch=1, seq=32768, m=8, ac="full", pattern="pp_first"),
    dict(name="8b_fsdp8_b1s32k_full", model="8b", dp=8, tp=1, layers=32, batch=1, seq=32768, m=1, ac="full", pattern="step"),
    dict(name="405b_tp8_fsdp8_last_b4s8k", model="405b", dp=8, tp=8, layers=4, batch=4, seq=8192, m=8, ac="full", pattern="pp_last"),
    dict(name="70b_tp8_fsdp32_b16s8k_full", model="70b", dp=32, tp=8, layers=8, batch=16, seq=8192, m=1, ac="full", pattern="step"),
    dict(name="405b_first16_b4s8k", model="405b", dp=8, tp=8, layers=16, batch=4, seq=8192, m=8, ac="full", pattern="pp_first", steps=2, confs=["expandable_segments:True"]),
    dict(name="405b_first16_b1s32k", model="405b", dp=8, tp=8, layers=16, batch=1, seq=32768, m=8, ac="full", pattern="pp_first", steps=2, confs=["expandable_segments:True"]),
    dict(name="405b_last15_b4s8k", model="405b", dp=8, tp=8, layers=15, batch=4, seq=8192, m=8, ac="full", pattern="pp_last", steps=2, confs=["expandable_segments:True"]),
    dict(name="8b_fsdp128_b2s8k_opsac", model="8b", dp=128, tp=1, layers=32, batch=2, seq=8192, m=1, ac="op_sac", pattern="step"),
]
QUICK = [
    dict(name="q_8b", model="8b", dp=8, tp=1, layers=2, batch=1, seq=2048, m=1, ac="op_sac", pattern="step", steps=2),
    dict(name="q_405b_first", model="405b", dp=8, tp=8, layers=1, batch=1, seq=4096, m=2, ac="full", pattern="pp_first", steps=2),
    dict(name="q_405b_last", model="405b", dp=8, tp=8, layers=1, batch=1, seq=4096, m=2, ac="full", pattern="pp_last", steps=2),
]

STAT_KEYS = ["allocated_bytes.all.peak", "reserved_bytes.all.peak", "active_bytes.all.peak",
             "requested_bytes.all.peak", "inactive_split_bytes.all.peak",
             "reserved_bytes.large_pool.peak", "reserved_bytes.small_pool.peak",
             "allocated_bytes.large_pool.peak", "allocated_bytes.small_pool.peak",
             "segment.all.peak", "num_alloc_retries", "num_ooms", "num_device_alloc",
             "allocated_bytes.all.current", "reserved_bytes.all.current",
             "inactive_split_bytes.all.current"]


def child(cfg):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.distributed as dist
    from collections import defaultdict
    try:
        import torch.testing._internal.distributed.fake_pg  # noqa: F401 registers "fake"
    except Exception:
        pass
    from torch.testing._internal.distributed.fake_pg import FakeStore
    from torch.distributed.device_mesh import init_device_mesh
    try:
        from torch.distributed.fsdp import fully_shard, MixedPrecisionPolicy
    except ImportError:
        from torch.distributed._composable.fsdp import fully_shard, MixedPrecisionPolicy
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    from torch.nn.attention import sdpa_kernel, SDPBackend

    mc = LLAMA[cfg["model"]]
    dp, tp = cfg["dp"], cfg["tp"]
    world = dp * tp
    torch.cuda.set_device(0)
    dist.init_process_group("fake", rank=0, world_size=world, store=FakeStore())
    if tp > 1:
        mesh = init_device_mesh("cuda", (dp, tp), mesh_dim_names=("dp", "tp"))
        dp_mesh, tp_mesh = mesh["dp"], mesh["tp"]
    else:
        dp_mesh = init_device_mesh("cuda", (dp,), mesh_dim_names=("dp",))
        tp_mesh = None
    dim, heads, kv, ffn = mc["dim"], mc["heads"], mc["kv"], mc["ffn"]
    hd = dim // heads

    class RMSNorm(nn.Module):  # torchtitan norms.py RMSNorm (eager)
        def __init__(s, d):
            super().__init__(); s.weight = nn.Parameter(torch.ones(d)); s.eps = 1e-5
        def forward(s, x):
            o = x.float(); o = o * torch.rsqrt(o.pow(2).mean(-1, keepdim=True) + s.eps)
            return o.type_as(x) * s.weight

    def rope(x, fc):  # torchtitan model.py apply_rotary_emb
        xc = torch.view_as_complex(x.float().reshape(*x.shape[:-1], -1, 2))
        fc = fc[: x.shape[1]].view(1, x.shape[1], 1, xc.shape[-1])
        return torch.view_as_real(xc * fc).flatten(3).type_as(x)

    class Attention(nn.Module):
        def __init__(s):
            super().__init__()
            s.wq = nn.Linear(dim, heads * hd, bias=False); s.wk = nn.Linear(dim, kv * hd, bias=False)
            s.wv = nn.Linear(dim, kv * hd, bias=False); s.wo = nn.Linear(heads * hd, dim, bias=False)
        def forward(s, x, fc):
            b, t, _ = x.shape
            q = s.wq(x).view(b, t, -1, hd); k = s.wk(x).view(b, t, -1, hd); v = s.wv(x).view(b, t, -1, hd)
            q, k = rope(q, fc), rope(k, fc)
            rep = q.shape[2] // k.shape[2]
            k = k[:, :, :, None, :].expand(b, t, k.shape[2], rep, hd).reshape(b, t, -1, hd)
            v = v[:, :, :, None, :].expand(b, t, v.shape[2], rep, hd).reshape(b, t, -1, hd)
            with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                o = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
            return s.wo(o.transpose(1, 2).contiguous().view(b, t, -1))

    class FFN(nn.Module):
        def __init__(s):
            super().__init__()
            s.w1 = nn.Linear(dim, ffn, bias=False); s.w2 = nn.Linear(ffn, dim, bias=False); s.w3 = nn.Linear(dim, ffn, bias=False)
        def forward(s, x):
            return s.w2(F.silu(s.w1(x)) * s.w3(x))

    class Block(nn.Module):
        def __init__(s):
            super().__init__()
            s.attention_norm = RMSNorm(dim); s.attention = Attention()
            s.ffn_norm = RMSNorm(dim); s.feed_forward = FFN()
        def forward(s, x, fc):
            h = x + s.attention(s.attention_norm(x), fc)
            return h + s.feed_forward(s.ffn_norm(h))

    class Model(nn.Module):
        def __init__(s, n, embed, head):
            super().__init__()
            s.tok_embeddings = nn.Embedding(mc["vocab"], dim) if embed else None
            s.layers = nn.ModuleDict({str(i): Block() for i in range(n)})
            s.norm = RMSNorm(dim) if head else None
            s.output = nn.Linear(dim, mc["vocab"], bias=False) if head else None
        def forward(s, x, fc):
            h = s.tok_embeddings(x) if s.tok_embeddings is not None else x
            for l in s.layers.values():
                h = l(h, fc)
            if s.norm is not None:
                h = s.output(s.norm(h))
            return h

    pattern = cfg["pattern"]
    embed = pattern in ("step", "pp_first")
    head = pattern in ("step", "pp_last")
    with torch.device("meta"):
        model = Model(cfg["layers"], embed, head)
    if tp_mesh is not None:  # torchtitan 9dec370 parallelize_llama.py apply_tp (loss_parallel off)
        from torch.distributed.tensor import Replicate, Shard
        from torch.distributed.tensor.parallel import (ColwiseParallel, RowwiseParallel, SequenceParallel,
                                                       PrepareModuleInput, parallelize_module)
        top = {}
        if embed:
            top["tok_embeddings"] = RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1))
        if head:
            top["norm"] = SequenceParallel()
            top["output"] = ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1), use_local_output=False)
        if top:
            parallelize_module(model, tp_mesh, top)
        for blk in model.layers.values():
            parallelize_module(blk, tp_mesh, {
                "attention_norm": SequenceParallel(),
                "attention": PrepareModuleInput(input_layouts=(Shard(1), None), desired_input_layouts=(Replicate(), None)),
                "attention.wq": ColwiseParallel(), "attention.wk": ColwiseParallel(), "attention.wv": ColwiseParallel(),
                "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
                "ffn_norm": SequenceParallel(),
                "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
                "feed_forward.w1": ColwiseParallel(), "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
                "feed_forward.w3": ColwiseParallel()})
    # activation checkpointing per block (torchtitan apply_ac)
    save_list = {torch.ops.aten.mm.default, torch.ops.aten._scaled_dot_product_flash_attention.default,
                 torch.ops.aten._scaled_dot_product_efficient_attention.default}
    if cfg["ac"] == "op_sac":
        from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts
        def ctx_fn():
            meta = defaultdict(int)
            def policy(ctx, func, *a, **k):
                mode = "recompute" if ctx.is_recompute else "forward"
                if func == torch.ops.aten.mm.default:
                    meta[f"{mode}_mm_count"] += 1
                save = func in save_list and not (func == torch.ops.aten.mm.default and meta[f"{mode}_mm_count"] % 2 == 0)
                return CheckpointPolicy.MUST_SAVE if save else CheckpointPolicy.PREFER_RECOMPUTE
            return create_selective_checkpoint_contexts(policy)
        wrap = lambda b: checkpoint_wrapper(b, context_fn=ctx_fn, preserve_rng_state=False)
    else:
        wrap = lambda b: checkpoint_wrapper(b, preserve_rng_state=False)
    for k in list(model.layers.keys()):
        model.layers[k] = wrap(model.layers[k])
    pp = pattern != "step"
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    blocks = list(model.layers.values())
    for i, blk in enumerate(blocks):  # torchtitan apply_fsdp
        raf = False if pp else i < len(blocks) - 1
        fully_shard(blk, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=raf)
    fully_shard(model, mesh=dp_mesh, mp_policy=mp, reshard_after_forward=not pp)
    model.to_empty(device="cuda")
    with torch.no_grad():
        for p in model.parameters():
            loc = p.to_local() if hasattr(p, "to_local") else p
            loc.normal_(0, 0.02)
    fc = torch.polar(torch.ones(cfg["seq"], hd // 2, device="cuda"),
                     torch.outer(torch.arange(cfg["seq"], device="cuda").float(),
                                 1.0 / (500000.0 ** (torch.arange(0, hd, 2, device="cuda").float() / hd))))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, foreach=True)
    b, s, m = cfg["batch"], cfg["seq"], cfg["m"]
    local_s = s // tp if tp > 1 else s
    # PipelineStage's per-micro-batch buffers, kept across steps (stage.py)
    if pattern == "pp_first":
        xs = [torch.randint(0, mc["vocab"], (b, s), device="cuda") for _ in range(m)]
        grads = [torch.randn(b, local_s, dim, device="cuda", dtype=torch.bfloat16) for _ in range(m)]
    elif pattern == "pp_last":
        xs = [torch.randn(b, local_s, dim, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(m)]
    else:
        xs = [torch.randint(0, mc["vocab"], (b, s), device="cuda")]
    labels = torch.randint(0, mc["vocab"], (b, s), device="cuda")

    import contextlib
    if tp > 1:  # torchtitan's loss parallel (vocab-sharded logits)
        from torch.distributed.tensor.parallel import loss_parallel
        lctx = loss_parallel
    else:
        lctx = contextlib.nullcontext

    def fwd_bwd_loss(x):  # torchtitan train.py loss_fn: fp32 cross-entropy
        pred = model(x, fc)
        mark("fwd")
        if pattern == "pp_last":  # PipelineStage.output_chunks keeps every output until the next step
            kept_out.append(pred.to_local().detach() if hasattr(pred, "to_local") else pred.detach())
        with lctx():
            loss = F.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))
            del pred
            loss.backward()

    def sync(last):
        model.set_requires_gradient_sync(last)
        model.set_reshard_after_backward(last)
        if hasattr(model, "set_is_last_backward"):
            model.set_is_last_backward(last)

    res = dict(cfg=cfg, torch=torch.__version__, cuda=torch.version.cuda,
               device=torch.cuda.get_device_name(0), alloc_conf=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
               init_allocated=torch.cuda.memory_allocated(), init_reserved=torch.cuda.memory_reserved(),
               param_local_bytes=sum((p.to_local() if hasattr(p, "to_local") else p).numel() * 4 for p in model.parameters()),
               steps=[])
    trace = []

    def mark(tag):
        trace.append([tag, torch.cuda.memory_allocated(), torch.cuda.memory_reserved(), torch.cuda.max_memory_allocated()])

    kept_out = []
    for step in range(cfg.get("steps", 3)):
        trace.clear(); kept_out.clear()
        torch.cuda.synchronize(); torch.cuda.reset_peak_memory_stats()
        t0 = time.time()
        opt.zero_grad(set_to_none=True)
        if pattern == "step":
            fwd_bwd_loss(xs[0])
        elif pattern == "pp_first":
            outs = []
            for i in range(m):
                sync(False)
                outs.append(model(xs[i], fc)); mark("f%d" % i)
            for i in range(m):
                sync(i == m - 1)
                outs[i].backward(grads[i])
                outs[i] = None; mark("b%d" % i)
        else:
            for i in range(m):
                sync(i == m - 1)
                fwd_bwd_loss(xs[i]); mark("fb%d" % i)
        mark("bwd")
        opt.step()
        torch.cuda.synchronize()
        mark("opt")
        st = torch.cuda.memory_stats()
        rec = {k: st.get(k) for k in STAT_KEYS}
        rec["time_s"] = time.time() - t0
        rec["max_allocated"] = torch.cuda.max_memory_allocated()
        rec["max_reserved"] = torch.cuda.max_memory_reserved()
        rec["trace"] = list(trace)
        res["steps"].append(rec)
        print(json.dumps({"step": step, "alloc_gib": rec["max_allocated"] / 2**30,
                          "res_gib": rec["max_reserved"] / 2**30, "t": rec["time_s"]}), file=sys.stderr, flush=True)
    segs = {}
    big = []
    for sg in torch.cuda.memory_snapshot():
        key = f"{sg['segment_type']}@{sg['stream']}"
        a = segs.setdefault(key, dict(n=0, total=0, allocated=0, active=0))
        a["n"] += 1; a["total"] += sg["total_size"]; a["allocated"] += sg["allocated_size"]; a["active"] += sg.get("active_size", 0)
        free = [bl["size"] for bl in sg["blocks"] if bl["state"] == "inactive"]
        big.append([sg["total_size"], sg["allocated_size"], sg["stream"], sorted(free, reverse=True)[:4]])
    res["segments_by_pool_stream"] = segs
    res["largest_segments"] = sorted(big, key=lambda x: -x[0])[:24]
    return res


def main():
    args = sys.argv[1:]
    if args and args[0] == "child":
        cfg = json.loads(args[1])
        try:
            res = child(cfg)
        except Exception as e:
            import traceback
            res = dict(cfg=cfg, error=repr(e), trace=traceback.format_exc()[-3000:])
        print("RESULT " + json.dumps(res), flush=True)
        return
    out = args[0] if args and not args[0].startswith("--") else os.environ.get("OUT", ".")
    exps = ([dict(e, confs=[""]) for e in QUICK] if "--quick" in args else []) + EXPS
    if "--only" in args:
        names = args[args.index("--only") + 1].split(",")
        exps = [e for e in EXPS + QUICK if e["name"] in names] if "--quick" not in args else exps[:len(QUICK)] + [e for e in EXPS if e["name"] in names]
    budget = float(args[args.index("--budget") + 1]) if "--budget" in args else 420
    t0 = time.time()
    path = os.path.join(out, "alloc.jsonl")
    for cfg in exps:
        for conf in cfg.get("confs", ("", "expandable_segments:True")):
            if time.time() - t0 > budget:
                print("budget spent, skipping", cfg["name"], conf, flush=True); continue
            env = dict(os.environ)
            env.pop("PYTORCH_CUDA_ALLOC_CONF", None)
            if conf:
                env["PYTORCH_CUDA_ALLOC_CONF"] = conf
            ts = time.time()
            try:
                p = subprocess.run([sys.executable, __file__, "child", json.dumps(cfg)], env=env, capture_output=True,
                                   text=True, timeout=max(30, min(180, budget + 60 - (time.time() - t0))))
                lines = [l for l in p.stdout.splitlines() if l.startswith("RESULT ")]
                res = json.loads(lines[-1][7:]) if lines else dict(cfg=cfg, error="no result", stderr=p.stderr[-3000:])
                res["stderr_tail"] = p.stderr[-1500:]
            except subprocess.TimeoutExpired as e:
                res = dict(cfg=cfg, error="timeout", stderr=str(e.stderr)[-2000:] if e.stderr else "")
            res["alloc_conf"] = conf
            res["wall_s"] = time.time() - ts
            with open(path, "a") as f:
                f.write(json.dumps(res) + "\n")
            s = res.get("steps", [])
            print(cfg["name"], conf or "default", "%.0fs" % res["wall_s"], res.get("error", ""),
                  ["%.2f/%.2f" % (x["max_allocated"] / 2**30, x["max_reserved"] / 2**30) for x in s], flush=True)


if __name__ == "__main__":
    main()
