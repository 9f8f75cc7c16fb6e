#!/usr/bin/env python3
"""demons_mask_drift.py — how far the demons field drifts outside the head, without and with
a fixed mask (issue 12).

On a case of `neurowarp-cli demo-data` (fixed_RES, moving_RES, labels and true field), the
script makes a head mask from the fixed image (intensity > THRESHOLD x its 99th percentile
inside the head, holes filled), writes it dilated by DILATE voxels as the registration mask,
runs `neurowarp-cli demons` once without a mask and once with --fixed-mask (same
parameters), and reports for each: max and mean |u| (mm) and mean det J (the CLI's
_jacobian) over the voxels outside the brain, in two definitions: the AAL labels = 0 (the
issue's) and outside the undilated head mask; and over the brain: mean Dice and mean
|u - u_true| (bench/case_metrics.py). The true field's own |u| outside is given beside them:
the generator deforms the whole volume, so zero is not the target there.

    python3 bench/demons_mask_drift.py --cli build/app/neurowarp-cli --case demo \\
        --work /tmp/drift --params resources/presets/demons-brain-mri.ini --device cpu

Needs numpy, scipy and nibabel. Not a test; a human summary on stderr, JSON with --json.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from case_metrics import Case
from peer_common import emit_json

OUTPUTS = ["--outputs", "forward,jacobian,labels"]


def make_mask(np, nib, ndi, fixed_path, threshold, dilate, out_path):
    """The head mask (undilated, for measuring) and the registration mask written to
    out_path (uint8, the fixed image's grid and header)."""
    img = nib.load(fixed_path)
    f = np.asarray(img.dataobj, dtype=np.float64)
    head = ndi.binary_fill_holes(f > threshold * np.percentile(f[f > 0], 99))
    reg = ndi.binary_dilation(head, iterations=dilate) if dilate > 0 else head
    hdr = img.header.copy()
    hdr.set_data_dtype(np.uint8)
    hdr["scl_slope"], hdr["scl_inter"] = 1.0, 0.0
    nib.save(nib.Nifti1Image(reg.astype(np.uint8), img.affine, hdr), out_path)
    return head, reg


def run_demons(cli, case, res, prefix, device, extra):
    p = lambda stem: os.path.join(case, "%s_%dmm.nii.gz" % (stem, res))
    cmd = [cli, "demons", p("fixed"), p("moving"), "-o", prefix, "--overwrite",
           "--device", device, "--fixed-labels", p("fixed_labels"),
           "--moving-labels", p("moving_labels")] + OUTPUTS + extra
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    with open(prefix + "_summary.json") as f:
        return cmd, json.load(f), time.monotonic() - t0


def outside_figures(np, length, jac, err, region):
    out = {"voxels": int(region.sum()), "max_u_mm": float(length[region].max()),
           "mean_u_mm": float(length[region].mean())}
    if jac is not None:
        out["mean_det_j"] = float(jac[region].mean())
        out["mean_error_mm"] = float(err[region].mean())
    return out


def measure(np, nib, c, prefix, regions):
    u = c.read_field(prefix + "_forward.nii.gz")
    length = np.linalg.norm(u, axis=-1)
    err = np.linalg.norm(u - c.truth, axis=-1)
    jac = np.asarray(nib.load(prefix + "_jacobian.nii.gz").dataobj, dtype=np.float64)
    out = {name: outside_figures(np, length, jac, err, r) for name, r in regions.items()}
    out["brain"] = {"dice": c.dice_of_file(prefix + "_labels.nii.gz"),
                    "error_mm": c.error_mm(prefix + "_forward.nii.gz"),
                    "folds": c.folds(prefix + "_forward.nii.gz")}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--case", required=True, help="a demo-data folder")
    ap.add_argument("--resolution", type=int, default=2)
    ap.add_argument("--work", required=True)
    ap.add_argument("--params", help="a parameter key file (--params of the CLI)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threshold", type=float, default=0.05,
                    help="head mask: fixed > THRESHOLD x its 99th percentile [0.05]")
    ap.add_argument("--dilate", type=int, default=2,
                    help="voxels the registration mask reaches beyond the head mask [2]")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--reuse", action="store_true",
                    help="measure the outputs of an earlier run in --work instead of running")
    a = ap.parse_args()
    import nibabel as nib
    import numpy as np
    from scipy import ndimage as ndi

    os.makedirs(a.work, exist_ok=True)
    mask_path = os.path.join(a.work, "head_mask_%dmm.nii.gz" % a.resolution)
    head, reg = make_mask(np, nib, ndi, os.path.join(a.case, "fixed_%dmm.nii.gz" % a.resolution),
                          a.threshold, a.dilate, mask_path)
    c = Case(np, nib, a.case, a.resolution)
    regions = {"labels0": c.labels == 0, "outside_head": ~head}
    true_len = np.linalg.norm(c.truth, axis=-1)
    out = {"case": a.case, "resolution_mm": a.resolution, "device": a.device,
           "params": a.params, "mask": {"path": mask_path, "threshold": a.threshold,
                                        "dilate_vox": a.dilate, "voxels": int(reg.sum()),
                                        "head_voxels": int(head.sum())},
           "truth": {n: outside_figures(np, true_len, None, None, r)
                     for n, r in regions.items()},
           "runs": {}}
    extra = ["--params", a.params] if a.params else []
    for name, args in [("no_mask", []), ("fixed_mask", ["--fixed-mask", mask_path])]:
        prefix = os.path.join(a.work, name)
        if a.reuse:
            with open(prefix + "_summary.json") as f:
                cmd, summary, wall = ["(reused)"], json.load(f), None
        else:
            cmd, summary, wall = run_demons(a.cli, a.case, a.resolution, prefix, a.device,
                                            extra + args)
        row = measure(np, nib, c, prefix, regions)
        row.update({"command": " ".join(cmd), "level_iterations": summary["level_iterations"],
                    "register_s": summary["time_s"]["register"], "wall_s": wall})
        out["runs"][name] = row
        o, h, b = row["labels0"], row["outside_head"], row["brain"]
        print("%-10s outside (labels 0): max |u| %.2f mm, mean |u| %.2f mm, mean |u - u_true| "
              "%.2f mm, mean det J %.3f; outside head: max %.2f, mean %.2f, error %.2f, det J "
              "%.3f; brain: Dice %.4f, error %.3f mm, folds %d; iterations %s, register %.1f s" % (
                  name, o["max_u_mm"], o["mean_u_mm"], o["mean_error_mm"], o["mean_det_j"],
                  h["max_u_mm"], h["mean_u_mm"], h["mean_error_mm"], h["mean_det_j"], b["dice"],
                  b["error_mm"], b["folds"], row["level_iterations"], row["register_s"]),
              file=sys.stderr)
    t = out["truth"]
    print("true field outside (labels 0): max %.2f mm, mean %.2f mm; outside head: max %.2f, "
          "mean %.2f" % (t["labels0"]["max_u_mm"], t["labels0"]["mean_u_mm"],
                         t["outside_head"]["max_u_mm"], t["outside_head"]["mean_u_mm"]),
          file=sys.stderr)
    if a.json:
        emit_json(out, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
