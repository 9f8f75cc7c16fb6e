#!/usr/bin/env python3
"""peer_affine_fireants.py — FireANTs beside bench_affine's end-to-end 3D case (issue 11's
table): a rigid then affine registration of a 1 mm brain-size pair (182 x 218 x 182) a known
affine apart, timed from the files on disk to the moved image, with how far the result is
from the truth at the corners of the image box.

The pair is bench_affine.c's test pattern (a smooth image with structure at several scales)
and, as moving, the same image through the inverse of the truth (scipy, cubic); the truth has
bench_affine_e2e.c's magnitudes: (5, -3, 4) mm, (0.06, -0.04, 0.08) rad about x, y, z, scales
(1.04, 0.97, 1.02), about the image's centre. FireANTs (PyPI fireants, PyTorch) runs with the
settings named in the output; its matrix (ITK's LPS physical space, fixed -> moving) is
turned into RAS to compare with the truth.

    PYTHONPATH=<fireants, SimpleITK, nibabel> python3 bench/peer_affine_fireants.py [--json F]

Needs CUDA, PyTorch, scipy, nibabel, SimpleITK and fireants (../shared/peers/fireants.md);
exits 77 when one is missing. Not a test.
"""
import argparse
import math
import os
import sys
import tempfile
import time

from peer_common import emit_json, pattern, torch_on_cuda


def truth_matrix(np, n):
    """A RAS matrix (fixed world -> moving world, 1 mm voxels at the origin): rotation about
    x, y, z and scaling about the centre, then the translation."""
    t, r, s = (5.0, -3.0, 4.0), (0.06, -0.04, 0.08), (1.04, 0.97, 1.02)
    cx, sx = math.cos(r[0]), math.sin(r[0])
    cy, sy = math.cos(r[1]), math.sin(r[1])
    cz, sz = math.cos(r[2]), math.sin(r[2])
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    a = rz @ ry @ rx @ np.diag(s)
    c = (np.array(n) - 1) / 2.0
    m = np.eye(4)
    m[:3, :3] = a
    m[:3, 3] = c - a @ c + np.array(t)
    return m


def corner_error(np, n, a, b):
    worst = 0.0
    for corner in range(8):
        x = np.array([(n[d] - 1) if corner >> d & 1 else 0 for d in range(3)] + [1.0])
        worst = max(worst, float(np.linalg.norm((a @ x - b @ x)[:3])))
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    a = ap.parse_args()
    torch = torch_on_cuda("peer_affine_fireants")
    if torch is None:
        return 77
    try:
        import numpy as np
        import nibabel as nib
        import scipy.ndimage as ndi
        from fireants.io.image import BatchedImages, Image
        from fireants.registration.affine import AffineRegistration
        from fireants.registration.rigid import RigidRegistration
        import fireants
    except ImportError as e:
        print(f"peer_affine_fireants: {e}", file=sys.stderr)
        return 77
    n = (182, 218, 182)
    fixed = pattern(np, *n)
    truth = truth_matrix(np, n)
    inv = np.linalg.inv(truth)
    moving = ndi.affine_transform(fixed, inv[:3, :3], offset=inv[:3, 3], order=3,
                                  mode="constant", cval=0.0).astype(np.float32)
    tmp = tempfile.mkdtemp(prefix="nwpeer")
    paths = []
    for name, img in (("fixed", fixed), ("moving", moving)):
        p = os.path.join(tmp, name + ".nii.gz")
        nib.save(nib.Nifti1Image(img, np.eye(4)), p)
        paths.append(p)
    torch.zeros(1, device="cuda")  # CUDA initialised before the clock, as bench_affine's
    # FireANTs' own defaults (Adam, learning rate 3e-2, its tolerance), with the scales and
    # iterations of its LPBA40 scripts' deformable stages and their CC window
    settings = {
        "rigid": dict(scales=[4, 2, 1], iterations=[200, 100, 50], loss_type="cc",
                      cc_kernel_size=5),
        "affine": dict(scales=[4, 2, 1], iterations=[200, 100, 50], loss_type="cc",
                       cc_kernel_size=5),
    }
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    f = BatchedImages([Image.load_file(paths[0], device="cuda")])
    m = BatchedImages([Image.load_file(paths[1], device="cuda")])
    torch.cuda.synchronize()
    t_load = time.perf_counter()
    rigid = RigidRegistration(fixed_images=f, moving_images=m, **settings["rigid"])
    rigid.optimize()
    init = rigid.get_rigid_matrix()
    affine = AffineRegistration(fixed_images=f, moving_images=m, init_rigid=init,
                                **settings["affine"])
    affine.optimize()
    lps = affine.get_affine_matrix()[0].detach().double().cpu().numpy()
    with torch.no_grad():
        moved = affine.evaluate(f, m)
    torch.cuda.synchronize()
    t_end = time.perf_counter()
    flip = np.diag([-1.0, -1.0, 1.0, 1.0])  # ITK's LPS <-> NIfTI's RAS
    found = flip @ lps @ flip
    err = corner_error(np, n, truth, found)

    def ncc(x, y):
        x = x - x.mean()
        y = y - y.mean()
        return float((x * y).sum() / math.sqrt((x * x).sum() * (y * y).sum()))

    # the check of the matrix's reading: FireANTs' own moved image and the moving image
    # resampled here through the matrix as read must agree with the fixed one alike
    # (SimpleITK's arrays, and so FireANTs' tensors, run z, y, x)
    theirs = moved.detach().float().cpu().numpy().reshape(n[2], n[1], n[0]).transpose(2, 1, 0)
    ours = ndi.affine_transform(moving, found[:3, :3], offset=found[:3, 3], order=1)
    ncc_theirs = ncc(theirs.reshape(-1), fixed.reshape(-1))
    ncc_read = ncc(ours.reshape(-1), fixed.reshape(-1))
    ncc_truth = ncc(ndi.affine_transform(moving, truth[:3, :3], offset=truth[:3, 3],
                                         order=1).reshape(-1), fixed.reshape(-1))
    out = {"bench": "affine_peer_fireants", "fireants": getattr(fireants, "__version__", "1.5.0"),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
           "case": "182x218x182", "registration": "rigid, then affine (cc)",
           "settings": settings, "seconds": t_end - t0, "load_seconds": t_load - t0,
           "register_seconds": t_end - t_load, "corner_error_mm": err,
           "ncc_fireants_moved": ncc_theirs, "ncc_matrix_as_read": ncc_read,
           "ncc_truth": ncc_truth, "matrix_ras": found.tolist()}
    print(f"fireants 182x218x182 rigid, then affine (cc): {1e3 * (t_end - t0):.1f} ms "
          f"(load {1e3 * (t_load - t0):.1f}, registration and moved image "
          f"{1e3 * (t_end - t_load):.1f})  corners off {err:.3f} mm; NCC with fixed: moved "
          f"{ncc_theirs:.4f}, matrix as read {ncc_read:.4f}, truth {ncc_truth:.4f}",
          file=sys.stderr)
    emit_json(out, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
