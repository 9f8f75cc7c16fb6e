#!/usr/bin/env python3
"""peer_demons_fireants.py — FireANTs' greedy and SyN registrations on the reporting half of
bench/demons_generalize.py's drawn cases, measured as neurowarp is there (bench/case_metrics.py:
mean Dice over the fixed labels, mean displacement error over the brain against the true
field, folded voxels), so the two tables read side by side.

    PYTHONPATH=<fireants, SimpleITK, nibabel> python3 bench/peer_demons_fireants.py \\
        --work /tmp/nwgen2 --seeds 101,103 --resolution 2 [--methods greedy,syn] [--json F]

The cases are the folders caseNNN that demons_generalize.py made under --work. Settings: those
of FireANTs' LPBA40 scripts (../shared/peers/fireants.md): greedy scales 4,2,1, iterations
200,100,50, CC kernel 7, smooth_grad_sigma 2, smooth_warp_sigma 0.5, Adam lr 0.5; SyN
iterations 100,75,50, CC kernel 5, smooth_grad_sigma 1, its other defaults. The moving labels
follow FireANTs' own warp (its coordinates, nearest neighbour); the field is what FireANTs
writes for ANTs (save_as_ants_transforms: LPS mm, fixed -> moving, as neurowarp writes).
Timed: loading the pair, and the optimisation (CUDA synchronised), not the writing.
Needs CUDA, PyTorch, numpy, nibabel, SimpleITK and fireants; exits 77 when one is missing.
"""
import argparse
import os
import sys
import tempfile
import time

from case_metrics import Case, stats
from peer_common import emit_json, torch_on_cuda

SETTINGS = {
    "greedy": dict(scales=[4, 2, 1], iterations=[200, 100, 50], loss_type="cc",
                   cc_kernel_size=7, smooth_grad_sigma=2.0, smooth_warp_sigma=0.5,
                   optimizer="Adam", optimizer_lr=0.5),
    "syn": dict(scales=[4, 2, 1], iterations=[100, 75, 50], loss_type="cc", cc_kernel_size=5,
                smooth_grad_sigma=1.0),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", required=True)
    ap.add_argument("--seeds", required=True, help="comma-separated")
    ap.add_argument("--resolution", type=int, default=2, choices=(1, 2))
    ap.add_argument("--methods", default="greedy,syn")
    ap.add_argument("--json")
    a = ap.parse_args()
    torch = torch_on_cuda("peer_demons_fireants")
    if torch is None:
        return 77
    try:
        import numpy as np
        import nibabel as nib
        import torch.nn.functional as F
        from fireants.io.image import BatchedImages, Image
        from fireants.registration.greedy import GreedyRegistration
        from fireants.registration.syn import SyNRegistration
        import fireants
    except ImportError as e:
        print("peer_demons_fireants: %s" % e, file=sys.stderr)
        return 77
    classes = {"greedy": GreedyRegistration, "syn": SyNRegistration}
    methods = [m for m in a.methods.split(",") if m]
    seeds = [int(s) for s in a.seeds.split(",") if s]
    torch.zeros(1, device="cuda")  # CUDA initialised before any clock
    tmp = tempfile.mkdtemp(prefix="nwfa")
    out = {"bench": "demons_peer_fireants", "fireants": getattr(fireants, "__version__", "1.5.0"),
           "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0),
           "resolution_mm": a.resolution, "settings": {m: SETTINGS[m] for m in methods},
           "methods": []}
    # each case's labels and true field read once, for every method
    cases = {seed: Case(np, nib, os.path.join(a.work, "case%03d" % seed), a.resolution)
             for seed in seeds}
    for method in methods:
        rows = []
        for seed in seeds:
            case = cases[seed]
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            f = BatchedImages([Image.load_file(case.path("fixed"), device="cuda")])
            m = BatchedImages([Image.load_file(case.path("moving"), device="cuda")])
            torch.cuda.synchronize()
            t1 = time.perf_counter()
            reg = classes[method](fixed_images=f, moving_images=m, **SETTINGS[method])
            reg.optimize()
            torch.cuda.synchronize()
            t2 = time.perf_counter()
            with torch.no_grad():
                coords = reg.get_warped_coordinates(f, m)
                labels = Image.load_file(case.path("moving_labels"), device="cuda").array
                warped = F.grid_sample(labels, coords.to(labels.dtype), mode="nearest",
                                       align_corners=True)
            # SimpleITK's arrays run z, y, x; nibabel's (the fixed labels') x, y, z
            warped = warped[0, 0].cpu().numpy().transpose(2, 1, 0)
            field = os.path.join(tmp, "%s_%03d.nii" % (method, seed))  # unpacked: quick
            reg.save_as_ants_transforms(field)
            row = {"seed": seed, "dice": case.dice(warped), "error_mm": case.error_mm(field),
                   "error_before_mm": case.error_before_mm, "folds": case.folds(field),
                   "load_s": t1 - t0, "optimise_s": t2 - t1}
            os.remove(field)
            rows.append(row)
            print("  fireants %-6s seed %3d  Dice %.4f  error %.3f mm (before %.3f)  folds %d  "
                  "optimise %.2f s" % (method, seed, row["dice"], row["error_mm"],
                                       row["error_before_mm"], row["folds"], row["optimise_s"]),
                  file=sys.stderr, flush=True)
            del reg, f, m
            torch.cuda.empty_cache()
        r = {"name": "fireants-" + method, "cases": rows, "dice": stats([x["dice"] for x in rows]),
             "error_mm": stats([x["error_mm"] for x in rows]),
             "optimise_s": stats([x["optimise_s"] for x in rows])}
        out["methods"].append(r)
        print("reporting half: fireants-%-15s Dice %.4f ± %.4f (worst %.4f)  error %.3f ± %.3f "
              "mm (worst %.3f)  folds max %d  optimise %.2f s" %
              (method, r["dice"]["mean"], r["dice"]["sd"], r["dice"]["min"],
               r["error_mm"]["mean"], r["error_mm"]["sd"], r["error_mm"]["max"],
               max(x["folds"] for x in rows), r["optimise_s"]["mean"]), file=sys.stderr,
              flush=True)
    if a.json:
        emit_json(out, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
