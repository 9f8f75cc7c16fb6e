"""peer_common.py — what the peer benchmarks of bench_affine share: bench_affine.c's test
image, the check that PyTorch has a CUDA device, and the JSON output (written to a temporary
name and renamed, or printed)."""
import json
import os
import sys


def pattern(np, nx, ny, nz, shift_vox=0.0):
    """bench_affine.c's bench_image(nx, ny, nz, shift_vox): a smooth image with structure at
    several scales, float32, indexed [i, j, k] (x, y, z)."""
    cx, cy, cz = nx / 2.0 + shift_vox, ny / 2.0, nz / 2.0
    r = 0.3 * min(nx, ny)
    x = ((np.arange(nx) - cx) / r)[:, None, None]
    y = ((np.arange(ny) - cy) / r)[None, :, None]
    z = ((np.arange(nz) - cz) / r)[None, None, :] if nz > 1 else np.zeros((1, 1, 1))
    d2 = x * x + 1.4 * y * y + 0.8 * z * z
    v = 100.0 * np.exp(-d2) * (1.0 + 0.3 * np.sin(9.0 * x) * np.cos(7.0 * y)) + 20.0 * (d2 < 0.5)
    return v.astype(np.float32)


def torch_on_cuda(name):
    """PyTorch, or None (after saying why on stderr) without it or without a CUDA device."""
    try:
        import torch
    except ImportError as e:
        print(f"{name}: PyTorch is not installed ({e})", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{name}: no CUDA device", file=sys.stderr)
        return None
    return torch


def emit_json(out, path):
    text = json.dumps(out, indent=1)
    if path is None:
        print(text)
        return
    with open(path + ".tmp", "w") as fh:
        fh.write(text)
    os.replace(path + ".tmp", path)
