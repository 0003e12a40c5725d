#!/usr/bin/env python3
"""curate.py: tests/data/h200-kernels.json from measure.py's raw files.

Usage: python3 bench/gpu/curate.py RUN_A/h200-kernels-raw.json \
           RUN_B/h200-kernels-raw.json SUSTAINED/h200-kernels-sustained.json \
           > tests/data/h200-kernels.json
Each timing kept is the mean of the two runs' medians (a record missing from
either run is dropped); the schema is the file's "schema" entry and
docs/cost-model.md, "Measured kernels (H200)".
"""
import json
import re
import statistics
import sys

SCHEMA = (
    "planner kernel measurements, version 1. Tables are {columns, rows}: each row lists "
    "the columns' values in order (null: not measured). Times in seconds are the mean of "
    "two runs' medians (each a median of >= 10 repetitions between CUDA events after "
    "warm-up, a 256 MiB buffer zeroed before each GEMM repetition: no operand in the "
    "60 MB L2). gemm: bf16 torch.matmul in nn.Linear's layouts, op fwd = x[m,k] W[n,k]^T, "
    "dgrad = dy[m,n] W[n,k] (reported as m,n,k of the forward), wgrad = dy^T x (likewise), "
    "nn = plain square; fp8_gemm: torch._scaled_mm e4m3 per-tensor scale, bf16 out, TN, "
    "each row an m,n,k product; grouped: torch._grouped_mm bf16, experts_local groups of "
    "tokens_per_expert rows, out[t,n] = x[t,k] W_e[n,k]^T (fwd), dy W_e (dgrad), dy^T x "
    "(wgrad, per expert), fwd_bwd through autograd, fp8_rowwise_fwd torch._scaled_grouped_mm; "
    "attention: torch SDPA (cudnn, flash, efficient) causal, or flex_attention with a "
    "sliding window, pass fwd or fwd_bwd, no L2 flush; hbm: bytes counted as the ideal "
    "single pass (read inputs, write outputs once); sustained: one kernel back to back "
    "for ~3 s after 2 s idle, burst = median of the first 10 calls, sustained = median of "
    "the second half, with nvidia-smi's SM clock and power after the loop.")


def load(p):
    with open(p) as f:
        return json.load(f)


def merge(a, b, sec, keys, times):
    def key(r):
        return tuple(r.get(k) for k in keys)
    bt = {key(r): r for r in b[sec]}
    rows = []
    for r in a[sec]:
        o = bt.get(key(r))
        if o is None:
            continue
        row = [r.get(k) for k in keys]
        for t in times:
            x, y = r.get(t), o.get(t)
            row.append(None if x is None or y is None else float("%.4g" % ((x + y) / 2)))
        rows.append(row)
    return {"columns": list(keys) + list(times), "rows": rows}


def spread(a, b, sec, keys, t):
    bt = {tuple(r.get(k) for k in keys): r for r in b[sec]}
    r = sorted(bt[tuple(x.get(k) for k in keys)][t] / x[t] for x in a[sec]
               if tuple(x.get(k) for k in keys) in bt and x.get(t))
    return "%s %s: median %.3f, 5th-95th percentile %.3f-%.3f over %d" % (
        sec, t, statistics.median(r), r[len(r) // 20], r[-len(r) // 20 - 1], len(r))


def main():
    a, b, s = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
    m = a["meta"]
    smi = m["nvidia_smi_start"].splitlines()[1].split(", ")
    out = {
        "schema": SCHEMA,
        "provenance": {
            "measured_by": "the planner's developers",
            "date": m["date_utc"][:10],
            "runs": [a["meta"]["date_utc"], b["meta"]["date_utc"], s["meta"]["date_utc"]],
            "script": "bench/gpu/measure.py (two full runs, then measure.py --sustained); "
                      "bench/gpu/curate.py wrote this file",
            "machine": "one NVIDIA H200 SXM in a cloud VM (16 CPU cores, 128 GiB), "
                       "driver %s, power limit %s, SM clock max %s" % (smi[1], smi[6], smi[3]),
            "catalog_gpu": "H200-SXM",
            "gpu_name": m["gpu_name"], "sm_count": m["sm_count"], "l2_bytes": m["l2_bytes"],
            "capability": m["capability"], "memory_bytes": m["total_mem_bytes"],
            "torch": m["torch"], "cuda_runtime": m["cuda_runtime"],
            "cublas": m["packages"].get("nvidia-cublas"),
            "cudnn": m["packages"].get("nvidia-cudnn-cu13"),
            "triton": m["packages"].get("triton"),
            "run_to_run": [spread(a, b, "gemm", ("set", "model", "tp", "gemm", "op", "m"), "s"),
                           spread(a, b, "grouped", ("model", "gemm", "experts_local",
                                                    "tokens_per_expert"), "fwd_s"),
                           spread(a, b, "attention", ("case", "backend", "pass", "seq"), "s")],
        },
        "gemm": merge(a, b, "gemm", ("set", "model", "tp", "gemm", "op", "m", "n", "k"),
                      ("s",)),
        "fp8_gemm": merge(a, b, "fp8_gemm", ("set", "model", "tp", "gemm", "op",
                                             "fast_accum", "m", "n", "k"), ("s",)),
        "grouped": merge(a, b, "grouped", ("model", "gemm", "experts_local",
                                           "tokens_per_expert", "n", "k"),
                         ("fwd_s", "dgrad_s", "wgrad_s", "fwd_bwd_s", "fp8_rowwise_fwd_s")),
        "attention": merge(a, b, "attention", ("case", "backend", "pass", "batch", "heads_q",
                                               "heads_kv", "kv_heads_mode", "seq",
                                               "head_dim_qk", "head_dim_v", "window"), ("s",)),
        "hbm": merge(a, b, "hbm", ("kernel", "bytes", "kernels"), ("s",)),
    }
    rows = []
    for d in s["sustained"]:
        if "burst_s" not in d or "launch_floor" in d["case"]:
            continue   # event-timed tiny kernels measure the host, not the GPU
        clk, pw = d["smi_after"].split(", ")[:2]
        rows.append([d["case"], d["flops"] or None, d["bytes"] or None,
                     float("%.4g" % d["burst_s"]), float("%.4g" % d["sustained_s"]),
                     int(clk.split()[0]), float(pw.split()[0])])
    out["sustained"] = {"columns": ["case", "flops", "bytes", "burst_s", "sustained_s",
                                    "sm_clock_after_MHz", "power_after_W"], "rows": rows}
    txt = json.dumps(out, indent=1)
    # one table row per line
    txt = re.sub(r"\[\n\s+([^\[\]{}]*?)\n\s+\]",
                 lambda mm: "[" + re.sub(r",\n\s+", ", ", mm.group(1)) + "]", txt)
    sys.stdout.write(txt + "\n")


if __name__ == "__main__":
    main()
