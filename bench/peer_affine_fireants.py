#!/usr/bin/env python3
"""peer_affine_fireants.py — FireANTs beside bench_affine's end-to-end cases (issue 11's
table): a rigid then affine registration of a 1 mm brain-size pair (182 x 218 x 182) a known
affine apart, or with --2d the 3072² pair a similarity apart (4 degrees, 3 %, (6, -4) mm, as
bench_affine_e2e.c's), timed from the files on disk to the moved image, with how far the
result is from the truth at the corners of the image box.

The pair is bench_affine.c's test pattern (a smooth image with structure at several scales),
or with --fixed a brain (e.g. the demo's Colin27 at 1 mm: its voxels, written again with 1 mm
voxels at the origin so that both tools read the same simple grid), and, as moving, the same
image through the inverse of the truth (scipy, cubic); the truth has bench_affine_e2e.c's
magnitudes: (5, -3, 4) mm, (0.06, -0.04, 0.08) rad about x, y, z, scales (1.04, 0.97, 1.02),
about the image's centre. FireANTs (PyPI fireants, PyTorch) runs with each setting named in
the output; its matrix (ITK's LPS physical space, fixed -> moving) is turned into RAS to
compare with the truth. With --cli, neurowarp-cli runs on the same files in the same call:
`affine --transform rigid`, then `affine --transform affine --initial-transform` from it, with
each optimiser, timed from the command to its files (CUDA initialised in each command).

    PYTHONPATH=<fireants, SimpleITK, nibabel> python3 bench/peer_affine_fireants.py \
        [--fixed brain.nii.gz | --2d] [--cli build/app/neurowarp-cli] [--json F]

In 2D FireANTs runs its RigidRegistration with scaling=True (a rotation, a scale per axis and
a translation: the nearest it has to a similarity) on mean squared error, and neurowarp-cli
`affine --transform similarity --metric mse`; the pair is written uncompressed (.nii), as
gzip would take most of both tools' time at this size.

Needs CUDA, PyTorch, scipy, nibabel, SimpleITK and fireants (../shared/peers/fireants.md);
exits 77 when one is missing. Not a test.
"""
import argparse
import json
import math
import os
import subprocess
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
    """The largest distance between where the 4x4 matrices a and b send the corners of the
    box of n voxels (1 mm, at the origin; a 2D box's four corners at z = 0)."""
    n = tuple(n) + (1,) * (3 - len(n))
    worst = 0.0
    for corner in range(8):
        x = np.array([(n[d] - 1) if corner >> d & 1 else 0 for d in range(3)] + [1.0])
        worst = max(worst, float(np.linalg.norm((a @ x - b @ x)[:3])))
    return worst


def similarity_truth_2d(np, n):
    """bench_affine_e2e.c's 2D truth as a 4x4 RAS matrix (fixed -> moving world, 1 mm voxels
    at the origin): 4 degrees and a scale of 1.03 about the centre, then (6, -4) mm."""
    a = math.radians(4.0)
    r = 1.03 * np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    c = (np.array(n) - 1) / 2.0
    m = np.eye(4)
    m[:2, :2] = r
    m[:2, 3] = c - r @ c + np.array([6.0, -4.0])
    return m


def write_pair(np, nib, ndi, fixed, truth, suffix):
    """The moving image that truth registers onto fixed (fixed resampled through truth's
    inverse, cubic), and both written with 1 mm voxels at the origin: their paths."""
    d = fixed.ndim
    inv = np.linalg.inv(truth)
    moving = ndi.affine_transform(fixed, inv[:d, :d], offset=inv[:d, 3], order=3,
                                  mode="constant", cval=0.0).astype(np.float32)
    tmp = tempfile.mkdtemp(prefix="nwpeer")
    paths = []
    for name, img in (("fixed", fixed), ("moving", moving)):
        path = os.path.join(tmp, name + suffix)
        nib.save(nib.Nifti1Image(img, np.eye(4)), path)
        paths.append(path)
    return paths, moving


def load_timed(torch, BatchedImages, Image, paths):
    """FireANTs' fixed and moving images from their files onto the GPU, with the clock's
    start and the time they were there (the GPU's work synchronised at both)."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    f = BatchedImages([Image.load_file(paths[0], device="cuda")])
    m = BatchedImages([Image.load_file(paths[1], device="cuda")])
    torch.cuda.synchronize()
    return f, m, t0, time.perf_counter()


def main_2d(a, torch, np, nib, ndi, BatchedImages, Image, RigidRegistration):
    """FireANTs' rigid registration with scaling, then neurowarp-cli's similarity, on the
    3072² pair from its files; the same report and JSON as the 3D case."""
    n = (3072, 3072)
    fixed = pattern(np, n[0], n[1], 1)[:, :, 0]
    truth = similarity_truth_2d(np, n)
    paths, _ = write_pair(np, nib, ndi, fixed, truth, ".nii")
    tmp = os.path.dirname(paths[0])
    torch.zeros(1, device="cuda")
    flip = np.diag([-1.0, -1.0, 1.0, 1.0])  # ITK's LPS <-> NIfTI's RAS
    configs = {
        "mse-lr3e-2": dict(scales=[4, 2, 1], iterations=[200, 100, 50], loss_type="mse"),
        "mse-lr3e-3": dict(scales=[4, 2, 1], iterations=[200, 100, 50], loss_type="mse",
                           optimizer_lr=3e-3),
    }
    runs = []
    for name, cfg in configs.items():
        try:
            f, m, t0, t_load = load_timed(torch, BatchedImages, Image, paths)
            reg = RigidRegistration(fixed_images=f, moving_images=m, scaling=True, **cfg)
            reg.optimize()
            mat = reg.get_rigid_matrix()[0].detach().double().cpu().numpy()  # 3x3, LPS
            with torch.no_grad():
                reg.evaluate(f, m)
            torch.cuda.synchronize()
            t_end = time.perf_counter()
        except Exception as e:  # a peer's failure is a result too, not the end of the run
            print(f"fireants 3072x3072 rigid with scaling ({name}): failed: {e!r}",
                  file=sys.stderr)
            runs.append({"tool": "fireants", "settings_name": name, "error": repr(e)})
            continue
        lps = np.eye(4)
        lps[:2, :2] = mat[:2, :2]
        lps[:2, 3] = mat[:2, 2]
        found = flip @ lps @ flip
        err = corner_error(np, n, truth, found)
        runs.append({"tool": "fireants", "settings_name": name, "settings": cfg,
                     "seconds": t_end - t0, "load_seconds": t_load - t0,
                     "register_seconds": t_end - t_load, "corner_error_mm": err,
                     "matrix_ras": found.tolist()})
        print(f"fireants 3072x3072 rigid with scaling (mse, {name}): {1e3 * (t_end - t0):.1f} "
              f"ms (load {1e3 * (t_load - t0):.1f}, registration and moved image "
              f"{1e3 * (t_end - t_load):.1f})  corners off {err:.3f} mm", file=sys.stderr)
    if a.cli:
        for opt in ("simplex", "gradient"):
            out = os.path.join(tmp, "nw_" + opt)
            t0 = time.perf_counter()
            subprocess.run([a.cli, "affine", paths[0], paths[1], "-o", out, "--transform",
                            "similarity", "--metric", "mse", "--device", "cuda", "--optimizer",
                            opt, "--overwrite"], check=True, stdout=subprocess.DEVNULL)
            t1 = time.perf_counter()
            summary = json.load(open(out + "_summary.json"))
            found = np.array(summary["transform"]["matrix_ras"])
            err = corner_error(np, n, truth, found)
            print(f"neurowarp 3072x3072 similarity (mse, {opt}): {1e3 * (t1 - t0):.1f} ms wall "
                  f"(one command, CUDA initialised in it)  {summary['evaluations']:.0f} "
                  f"evaluations  corners off {err:.3f} mm", file=sys.stderr)
            runs.append({"tool": "neurowarp", "optimizer": opt, "seconds": t1 - t0,
                         "evaluations": summary["evaluations"], "corner_error_mm": err,
                         "matrix_ras": found.tolist(), "summary": summary})
    emit_json({"bench": "affine_peer_fireants", "fireants": "1.5.0", "torch": torch.__version__,
               "gpu": torch.cuda.get_device_name(0), "case": "3072x3072",
               "registration": "similarity (neurowarp); rigid with scaling (fireants)",
               "runs": runs}, a.json)
    return 0


def run_neurowarp(np, cli, paths, tmp, opt, n, truth, case):
    """neurowarp-cli affine, rigid then affine from it (NCC, the defaults otherwise), on the
    pair's files: wall time from the first command to the second's files, and the result's
    corner error."""
    rigid, affine = os.path.join(tmp, "nw_rigid_" + opt), os.path.join(tmp, "nw_affine_" + opt)
    common = ["--device", "cuda", "--metric", "ncc", "--optimizer", opt, "--overwrite"]
    t0 = time.perf_counter()
    subprocess.run([cli, "affine", paths[0], paths[1], "-o", rigid, "--transform", "rigid"]
                   + common, check=True, stdout=subprocess.DEVNULL)
    t1 = time.perf_counter()
    subprocess.run([cli, "affine", paths[0], paths[1], "-o", affine, "--transform", "affine",
                    "--initial-transform", rigid + "_affine.txt"] + common, check=True,
                   stdout=subprocess.DEVNULL)
    t2 = time.perf_counter()
    summaries = [json.load(open(p + "_summary.json")) for p in (rigid, affine)]
    found = np.array(summaries[1]["transform"]["matrix_ras"])
    err = corner_error(np, n, truth, found)
    evals = sum(s["evaluations"] for s in summaries)
    print(f"neurowarp {case} rigid, then affine (ncc, {opt}): {1e3 * (t2 - t0):.1f} ms wall "
          f"(rigid {1e3 * (t1 - t0):.1f}, affine {1e3 * (t2 - t1):.1f}; in the commands "
          f"{1e3 * sum(s['time_s'] if not isinstance(s['time_s'], dict) else s['time_s']['total'] for s in summaries):.1f})"
          f"  {evals:.0f} evaluations  corners off {err:.3f} mm", file=sys.stderr)
    return {"tool": "neurowarp", "optimizer": opt, "seconds": t2 - t0,
            "rigid_seconds": t1 - t0, "affine_seconds": t2 - t1,
            "evaluations": evals, "corner_error_mm": err, "matrix_ras": found.tolist(),
            "summaries": summaries}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json")
    ap.add_argument("--fixed", help="a NIfTI brain as the fixed image (else the test pattern)")
    ap.add_argument("--2d", dest="two_d", action="store_true",
                    help="the 3072² similarity case instead of the 3D one")
    ap.add_argument("--cli", help="neurowarp-cli, run on the same pair")
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
    if a.two_d:
        return main_2d(a, torch, np, nib, ndi, BatchedImages, Image, RigidRegistration)
    if a.fixed:
        fixed = np.asarray(nib.load(a.fixed).dataobj, dtype=np.float32)
        n = fixed.shape
        case = "brain " + "x".join(map(str, n))
    else:
        n = (182, 218, 182)
        fixed = pattern(np, *n)
        case = "182x218x182"
    truth = truth_matrix(np, n)
    paths, moving = write_pair(np, nib, ndi, fixed, truth, ".nii.gz")
    tmp = os.path.dirname(paths[0])
    torch.zeros(1, device="cuda")  # CUDA initialised before the clock, as bench_affine's
    # FireANTs' own defaults (Adam, learning rate 3e-2, its tolerance), with the scales and
    # iterations of its LPBA40 scripts' deformable stages and their CC window; and the same
    # with a learning rate of 3e-3
    configs = {
        "cc5-lr3e-2": dict(scales=[4, 2, 1], iterations=[200, 100, 50], loss_type="cc",
                           cc_kernel_size=5),
        "cc5-lr3e-3": dict(scales=[4, 2, 1], iterations=[200, 100, 50], loss_type="cc",
                           cc_kernel_size=5, optimizer_lr=3e-3),
    }
    flip = np.diag([-1.0, -1.0, 1.0, 1.0])  # ITK's LPS <-> NIfTI's RAS

    def ncc(x, y):
        x = x - x.mean()
        y = y - y.mean()
        return float((x * y).sum() / math.sqrt((x * x).sum() * (y * y).sum()))

    ncc_truth = ncc(ndi.affine_transform(moving, truth[:3, :3], offset=truth[:3, 3],
                                         order=1).reshape(-1), fixed.reshape(-1))
    runs = []
    for name, cfg in configs.items():
        f, m, t0, t_load = load_timed(torch, BatchedImages, Image, paths)
        rigid = RigidRegistration(fixed_images=f, moving_images=m, **cfg)
        rigid.optimize()
        init = rigid.get_rigid_matrix()
        affine = AffineRegistration(fixed_images=f, moving_images=m, init_rigid=init, **cfg)
        affine.optimize()
        lps = affine.get_affine_matrix()[0].detach().double().cpu().numpy()
        with torch.no_grad():
            moved = affine.evaluate(f, m)
        torch.cuda.synchronize()
        t_end = time.perf_counter()
        found = flip @ lps @ flip
        err = corner_error(np, n, truth, found)
        # the check of the matrix's reading: FireANTs' own moved image and the moving image
        # resampled here through the matrix as read must agree with the fixed one alike
        # (SimpleITK's arrays, and so FireANTs' tensors, run z, y, x)
        theirs = moved.detach().float().cpu().numpy().reshape(n[2], n[1], n[0]).transpose(2, 1, 0)
        ours = ndi.affine_transform(moving, found[:3, :3], offset=found[:3, 3], order=1)
        ncc_theirs = ncc(theirs.reshape(-1), fixed.reshape(-1))
        ncc_read = ncc(ours.reshape(-1), fixed.reshape(-1))
        runs.append({"tool": "fireants", "settings_name": name,
                     "settings": {k: v for k, v in cfg.items()}, "seconds": t_end - t0,
                     "load_seconds": t_load - t0, "register_seconds": t_end - t_load,
                     "corner_error_mm": err, "ncc_fireants_moved": ncc_theirs,
                     "ncc_matrix_as_read": ncc_read, "matrix_ras": found.tolist()})
        print(f"fireants {case} rigid, then affine (cc, {name}): {1e3 * (t_end - t0):.1f} ms "
              f"(load {1e3 * (t_load - t0):.1f}, registration and moved image "
              f"{1e3 * (t_end - t_load):.1f})  corners off {err:.3f} mm; NCC with fixed: moved "
              f"{ncc_theirs:.4f}, matrix as read {ncc_read:.4f}, truth {ncc_truth:.4f}",
              file=sys.stderr)
    if a.cli:
        for opt in ("simplex", "gradient"):
            runs.append(run_neurowarp(np, a.cli, paths, tmp, opt, n, truth, case))
    out = {"bench": "affine_peer_fireants", "fireants": getattr(fireants, "__version__", "1.5.0"),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
           "case": case, "registration": "rigid, then affine", "ncc_truth": ncc_truth,
           "runs": runs}
    emit_json(out, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
