#!/usr/bin/env python3
"""peer_nlm_torch.py — the PyTorch peer of bench_nlm (issue 13's table): nlm-surface's
all-pairs patch distance + top-m as one would write it in PyTorch, on the very band patches
bench_nlm times (read from `bench_nlm --dump-patches DIR`), so both sides see the same data.

Per block of C query rows (C x N scratch, never N x N):
    D = ||a||^2 + ||b||^2 - 2 a.b      torch.addmm, FP32 (and again with TF32 tensor cores)
    D[row, row] = +inf                  an element is not its own neighbour
    torch.topk(D, m, largest=False)     the m nearest, ascending
timed with CUDA events around the whole loop (the patch matrix already on the GPU, the
N x m indices left there), after one warm-up run, best of --repeats.

Exactness, honestly counted: bench_nlm also dumps, for a sample of rows, the exact top-m of
the CPU reference (the set our CUDA kernel reproduces bit for bit). For each variant the
JSON says on how many of those rows the peer's top-m index *set* equals it (order ignored);
the GEMM form's cancellation (||a||^2 + ||b||^2 is large beside the distances of near
neighbours) and TF32's 10-bit mantissa change the set where distances nearly tie. For scale,
it also says on how many rows the FP64 top-m set (computed here) equals the exact FP32 one.

    python3 bench/peer_nlm_torch.py --patches DIR [--chunk 4096] [--repeats 3] [--json FILE]
    python3 bench/peer_nlm_torch.py --patches DIR --numpy   # the same steps in NumPy (CPU),
                                                            # for checking the script on small N
JSON on stdout or to --json (atomically); a table on stderr. Exit 77 without PyTorch+CUDA
(unless --numpy), 1 when a dump is unreadable. Not a test.
"""
import argparse
import glob
import json
import os
import sys

from peer_common import emit_json, torch_on_cuda


def read_dump(header_path, np):
    """One size of bench_nlm's dump: the N x P float32 patches, the sample rows and their
    exact top-m (indices, K x m int32) from the CPU reference."""
    with open(header_path) as fh:
        h = json.load(fh)
    d = os.path.dirname(header_path)
    n, p, m = h["n"], h["p"], h["m"]
    x = np.fromfile(os.path.join(d, h["patches"]), dtype="<f4")
    if x.size != n * p:
        raise ValueError(f"{h['patches']}: {x.size} floats, expected N x P = {n} x {p}")
    rows = np.asarray(h["sample_rows"], dtype=np.int64)
    top = np.fromfile(os.path.join(d, h["topm"]), dtype="<i4")
    if top.size != rows.size * m:
        raise ValueError(f"{h['topm']}: {top.size} indices, expected {rows.size} x {m}")
    return h, x.reshape(n, p), rows, top.reshape(rows.size, m)


def same_sets(got, exact):
    """Rows whose index sets agree (order ignored): got, exact K x m integer arrays."""
    return sum(1 for g, e in zip(got, exact) if set(g.tolist()) == set(e.tolist()))


def topm_torch(torch, x, sq, m, chunk, out):
    """out (N x m int64, on the GPU) = the peer's top-m of every row of x (N x P)."""
    n = x.shape[0]
    for c0 in range(0, n, chunk):
        a = x[c0:c0 + chunk]
        c = a.shape[0]
        # ||b||^2 - 2 a.b in one GEMM (input broadcast over rows), then + ||a||^2
        d = torch.addmm(sq[None, :], a, x.T, beta=1.0, alpha=-2.0)
        d += sq[c0:c0 + c, None]
        r = torch.arange(c, device=x.device)
        d[r, c0 + r] = float("inf")
        out[c0:c0 + c] = torch.topk(d, m, dim=1, largest=False, sorted=True).indices


def fp64_sets(torch, x, rows, m):
    """The top-m index sets of the sample rows from FP64 differences (no GEMM cancellation)."""
    xd = x.double()
    res = []
    for r in rows.tolist():
        d = ((xd - xd[r]) ** 2).sum(1)
        d[r] = float("inf")
        res.append(torch.topk(d, m, largest=False).indices.cpu().numpy())
    return res


def run_torch(torch, np, h, xh, rows, exact, chunk, repeats):
    dev = torch.device("cuda")
    n, p, m = h["n"], h["p"], h["m"]
    x = torch.from_numpy(xh).to(dev)
    out = torch.empty((n, m), dtype=torch.int64, device=dev)
    res = {"n": n, "p": p, "m": m, "chunk": chunk, "sample_rows": int(rows.size)}
    flops = 2.0 * n * n * p
    for name, tf32 in (("fp32", False), ("tf32", True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        sq = (x * x).sum(1)  # outside the timed loop in both variants, as our kernel pads first
        topm_torch(torch, x, sq, m, chunk, out)  # warm-up (cuBLAS heuristics, allocator)
        best = float("inf")
        for _ in range(repeats):
            t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0.record()
            topm_torch(torch, x, sq, m, chunk, out)
            t1.record()
            t1.synchronize()
            best = min(best, t0.elapsed_time(t1))
        got = out[torch.from_numpy(rows).to(dev)].cpu().numpy()
        res[name] = {"ms_best": best, "tflops_best": flops / (best * 1e-3) / 1e12,
                     "rows_set_equal_exact": same_sets(got, exact)}
    torch.backends.cuda.matmul.allow_tf32 = False
    res["fp64_rows_set_equal_exact"] = same_sets(fp64_sets(torch, x, rows, m), exact)
    return res


def run_numpy(np, h, xh, rows, exact, chunk):
    """The same chunked GEMM + selection in NumPy: for checking this script without a GPU."""
    n, p, m = h["n"], h["p"], h["m"]
    sq = (xh * xh).sum(1)
    got = np.empty((rows.size, m), dtype=np.int64)
    want = {int(r): k for k, r in enumerate(rows.tolist())}
    for c0 in range(0, n, chunk):
        c = min(chunk, n - c0)
        d = sq[None, :] - 2.0 * (xh[c0:c0 + c] @ xh.T) + sq[c0:c0 + c, None]
        d[np.arange(c), c0 + np.arange(c)] = np.inf
        for i in range(c):
            k = want.get(c0 + i)
            if k is not None:
                part = np.argpartition(d[i], m)[:m]
                got[k] = part[np.argsort(d[i][part], kind="stable")]
    xd = xh.astype(np.float64)
    f64 = []
    for r in rows.tolist():
        d = ((xd - xd[r]) ** 2).sum(1)
        d[r] = np.inf
        f64.append(np.argpartition(d, m)[:m])
    return {"n": n, "p": p, "m": m, "chunk": chunk, "sample_rows": int(rows.size),
            "numpy_fp32": {"rows_set_equal_exact": same_sets(got, exact)},
            "fp64_rows_set_equal_exact": same_sets(f64, exact)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--patches", required=True, help="bench_nlm --dump-patches DIR")
    ap.add_argument("--chunk", type=int, default=4096, help="query rows per GEMM (C x N)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--numpy", action="store_true", help="NumPy on the CPU, no timing")
    ap.add_argument("--json")
    a = ap.parse_args()
    import numpy as np
    torch = None
    if not a.numpy:
        torch = torch_on_cuda("peer_nlm_torch")
        if torch is None:
            return 77
    headers = sorted(glob.glob(os.path.join(a.patches, "nlm_*.json")),
                     key=lambda f: json.load(open(f))["n"])
    if not headers:
        print(f"peer_nlm_torch: no nlm_*.json in {a.patches} (run bench_nlm --dump-patches)",
              file=sys.stderr)
        return 1
    out = {"bench": "nlm_topm_peer_torch", "source": "bench_nlm --dump-patches",
           "method": "chunked addmm (||a||^2+||b||^2-2a.b) + topk(largest=False)", "cases": []}
    if torch is not None:
        out.update(torch=torch.__version__, gpu=torch.cuda.get_device_name(0))
    for hp in headers:
        try:
            h, xh, rows, exact = read_dump(hp, np)
        except (OSError, ValueError, KeyError) as e:
            print(f"peer_nlm_torch: {hp}: {e}", file=sys.stderr)
            return 1
        if torch is None:
            r = run_numpy(np, h, xh, rows, exact, a.chunk)
            print(f"N {r['n']:7d}  numpy fp32 set-equal rows {r['numpy_fp32']['rows_set_equal_exact']}"
                  f"/{r['sample_rows']}  fp64 {r['fp64_rows_set_equal_exact']}/{r['sample_rows']}",
                  file=sys.stderr)
        else:
            r = run_torch(torch, np, h, xh, rows, exact, a.chunk, a.repeats)
            for v in ("fp32", "tf32"):
                print(f"N {r['n']:7d}  torch {v}  {r[v]['ms_best']:9.2f} ms (best of {a.repeats})"
                      f"  {r[v]['tflops_best']:6.2f} TFLOP/s  top-m set equal to the exact: "
                      f"{r[v]['rows_set_equal_exact']}/{r['sample_rows']} rows", file=sys.stderr)
            print(f"N {r['n']:7d}  fp64 top-m set equal to the exact FP32: "
                  f"{r['fp64_rows_set_equal_exact']}/{r['sample_rows']} rows", file=sys.stderr)
            torch.cuda.empty_cache()
        out["cases"].append(r)
    emit_json(out, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
