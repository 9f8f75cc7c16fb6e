#!/usr/bin/env python3
"""peer_affine_torch.py — the PyTorch peer of bench_affine (issue 11's table): one affine
cost evaluation as an optimiser loop on PyTorch does it, on the same images and transforms as
bench_affine.c, timed the same way (from the host's matrix to the metric back on the host).

An evaluation: F.affine_grid (the matrix in normalised coordinates) + F.grid_sample
(bilinear, or bicubic in 2D: PyTorch's grid_sample has no tricubic) + the mean squared
difference over the voxels that sample inside the moving image, then .item() (the host
waits for the value, as a simplex does). float32 throughout, images resident on the GPU.

    python3 bench/peer_affine_torch.py [--sizes 512,1024,2048,3072] [--evals 200]
                                       [--json FILE]

JSON (one object per case) on stdout or to --json; a table on stderr. Not a test.
"""
import argparse
import math
import sys

from peer_common import emit_json, pattern, torch_on_cuda
import time


def bench_image(torch, np, nx, ny, nz, shift_vox, device):
    """peer_common.pattern as a tensor indexed [k, j, i], on the device."""
    v = np.ascontiguousarray(pattern(np, nx, ny, nz, shift_vox).transpose(2, 1, 0))
    return torch.from_numpy(v).to(device)


def eval_matrix(e):
    """bench_affine.c's eval_matrix: a small rotation about z and a shift, new each time."""
    a = 0.01 * (e % 7)
    c, s, t = math.cos(a), math.sin(a), 0.5 * (e % 5)
    return [[c, -s, 0.0, t], [s, c, 0.0, -t], [0.0, 0.0, 1.0, 0.0]]


def to_theta(m, n, dim):
    """A voxel-space map (x_moving = A x_fixed + t, voxel = mm here) in the normalised
    coordinates of affine_grid (align_corners=True: -1 and 1 are the first and last voxel
    centres)."""
    # u = 2 x / (n - 1) - 1  <=>  x = (u + 1) (n - 1) / 2
    h = [(n[a] - 1) / 2.0 for a in range(dim)]
    theta = []
    for r in range(dim):
        row = [m[r][c] * h[c] / h[r] for c in range(dim)]
        off = (m[r][3] + sum(m[r][c] * h[c] for c in range(dim)) - h[r]) / h[r]
        theta.append(row + [off])
    return theta


def run_case(torch, F, np, nx, ny, nz, mode, evals, device):
    dim = 3 if nz > 1 else 2
    fixed = bench_image(torch, np, nx, ny, nz, 0.0, device)
    moving = bench_image(torch, np, nx, ny, nz, 1.7, device)
    if dim == 2:
        fixed, moving = fixed[0][None, None], moving[0][None, None]  # [1, 1, ny, nx]
        size = (1, 1, ny, nx)
    else:
        fixed, moving = fixed[None, None], moving[None, None]  # [1, 1, nz, ny, nx]
        size = (1, 1, nz, ny, nx)
    n = [nx, ny, nz][:dim]

    def evaluate(e):
        theta = torch.tensor([to_theta(eval_matrix(e), n, dim)], device=device,
                             dtype=torch.float32)
        grid = F.affine_grid(theta, size, align_corners=True)
        warped = F.grid_sample(moving, grid, mode=mode, padding_mode="zeros",
                               align_corners=True)
        inside = (grid.abs() <= 1.0).all(dim=-1)[:, None]
        d = torch.where(inside, warped - fixed, torch.zeros_like(fixed))
        return (d.square().sum() / inside.sum()).item()

    for e in range(3):
        evaluate(e)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for e in range(evals):
        evaluate(e)
    us = (time.perf_counter() - t0) / evals * 1e6
    voxels = nx * ny * nz
    return {"dim": dim, "nx": nx, "ny": ny, "nz": nz, "interp": mode, "voxels": voxels,
            "torch_us_per_eval": us, "torch_evals_per_s": 1e6 / us,
            "torch_effective_gb_per_s": 8.0 * voxels / (us * 1e-6) / 1e9}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="512,1024,2048,3072")
    ap.add_argument("--evals", type=int, default=200)
    ap.add_argument("--no-brain", action="store_true")
    ap.add_argument("--json")
    a = ap.parse_args()
    torch = torch_on_cuda("peer_affine_torch")
    if torch is None:
        return 77
    import numpy as np
    import torch.nn.functional as F
    device = torch.device("cuda")
    cases = [(s, s, 1, m) for s in map(int, a.sizes.split(",")) for m in ("bilinear", "bicubic")]
    if not a.no_brain:
        cases.append((182, 218, 182, "bilinear"))
    out = {"bench": "affine_peer_torch", "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0), "metric": "mse", "cases": []}
    for nx, ny, nz, mode in cases:
        r = run_case(torch, F, np, nx, ny, nz, mode, a.evals, device)
        out["cases"].append(r)
        print(f"{nx}x{ny}x{nz} {mode:8s} torch {r['torch_us_per_eval']:9.1f} us/eval "
              f"{r['torch_effective_gb_per_s']:8.1f} GB/s", file=sys.stderr)
    emit_json(out, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
