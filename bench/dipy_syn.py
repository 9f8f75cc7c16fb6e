#!/usr/bin/python3
"""Register the neurowarp demo pair with dipy's SyN, as the reference to beat (issue 3).

Reads fixed_RES / moving_RES / fixed_labels_RES / moving_labels_RES from a folder written by
`neurowarp-cli demo-data DIR`, runs dipy's SymmetricDiffeomorphicRegistration with
cross-correlation (CC, radius 4) or SSD, warps the moving labels nearest-neighbour and
prints one JSON object: mean Dice over the AAL labels present, time, parameters.

    /usr/bin/python3 bench/dipy_syn.py DIR [--res 2mm] [--metric cc|ssd] [--json OUT]

Needs Debian's python3-dipy and python3-nibabel (scripts/install-deps.sh installs them).
"""
import argparse
import json
import os
import sys
import tempfile
import time

import nibabel as nib
import numpy as np


def mean_dice(a, b):
    """Unweighted mean Dice over every label > 0 present in a or b (as nw_labels_dice)."""
    a = np.rint(a).astype(np.int64)
    b = np.rint(b).astype(np.int64)
    labels = np.union1d(np.unique(a), np.unique(b))
    labels = labels[labels > 0]
    scores = []
    for lab in labels:
        in_a, in_b = a == lab, b == lab
        denom = in_a.sum() + in_b.sum()
        scores.append(2.0 * np.logical_and(in_a, in_b).sum() / denom if denom else 1.0)
    return float(np.mean(scores)) if scores else 0.0, len(scores)


def write_json(path, obj):
    """Write through a temporary sibling and rename, as every neurowarp writer does."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".dipy_syn.", suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(obj, f, indent=2)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="folder written by neurowarp-cli demo-data")
    ap.add_argument("--res", default="2mm", choices=["1mm", "2mm"])
    ap.add_argument("--metric", default="cc", choices=["cc", "ssd"])
    ap.add_argument("--iters", default="100,100,25", help="SyN iterations per level, coarse first")
    ap.add_argument("--json", help="also write the result here")
    args = ap.parse_args()

    from dipy.align.imwarp import SymmetricDiffeomorphicRegistration
    from dipy.align.metrics import CCMetric, SSDMetric

    def load(name):
        img = nib.load(os.path.join(args.dir, f"{name}_{args.res}.nii.gz"))
        return np.asarray(img.dataobj, dtype=np.float64), img.affine

    fixed, affine = load("fixed")
    moving, moving_affine = load("moving")
    fixed_labels, _ = load("fixed_labels")
    moving_labels, _ = load("moving_labels")
    metric = CCMetric(3, radius=4) if args.metric == "cc" else SSDMetric(3)
    iters = [int(x) for x in args.iters.split(",")]
    sdr = SymmetricDiffeomorphicRegistration(metric, iters)
    t0 = time.monotonic()
    mapping = sdr.optimize(fixed, moving, affine, moving_affine)
    seconds = time.monotonic() - t0
    warped_labels = mapping.transform(moving_labels, interpolation="nearest")
    dice, n_labels = mean_dice(fixed_labels, warped_labels)
    before, _ = mean_dice(fixed_labels, moving_labels)
    result = {
        "tool": "dipy SyN",
        "dipy_version": __import__("dipy").__version__,
        "res": args.res,
        "metric": args.metric,
        "level_iters": iters,
        "seconds": round(seconds, 2),
        "mean_dice_before": round(before, 4),
        "mean_dice": round(dice, 4),
        "n_labels": n_labels,
        "threads": os.cpu_count(),
    }
    print(json.dumps(result))
    if args.json:
        write_json(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
