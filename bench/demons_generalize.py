#!/usr/bin/env python3
"""demons_generalize.py — registration settings judged on cases they were not chosen on (issue
12 for demons, issue 14 for fluid beside it).

Cases come from the second generator of `neurowarp-cli demo-data --draw` (Colin27 and its
AAL labels; deformation, bias, noise and contrast all drawn from the seed). The seeds are
split by parity: even seeds are the tuning half, odd seeds the reporting half. Every
configuration of the configs file for the method (--method: demons, or fluid) runs on the
tuning half; the one with the best mean Dice there is chosen; then the chosen one and the
named baselines run on the reporting half, whose figures are the ones to report (mean, sd,
worst case). A configuration named METHOD:NAME runs `neurowarp-cli METHOD` and is never
tuned, only reported when --report-also names it (bench/fluid_generalize.txt holds demons'
brain preset so, beside the fluid configurations). Per run: mean AAL Dice (the CLI's
summary), mean displacement error against the true field over the brain (fixed labels > 0,
mm), folded voxels and the smallest det J of the forward field, registration seconds. Dice,
the error and det J are computed by bench/case_metrics.py, as for the peers
(bench/peer_demons_fireants.py); the CLI's own mean Dice is kept beside it as dice_cli.

    python3 bench/demons_generalize.py --cli build/app/neurowarp-cli --work /tmp/gen \\
        --seeds 100-123 --resolution 2 --configs bench/demons_generalize.txt \\
        --device cuda --report-also brain-preset,defaults --json out.json
    python3 bench/demons_generalize.py --method fluid --cli build/app/neurowarp-cli \\
        --work /tmp/gen --configs bench/fluid_generalize.txt --device cuda \\
        --report-also demons:brain-mri --budget-s 190 --json fluid.json

--budget-s keeps a run inside a time limit: a configuration is not started on the tuning half
when, at the mean time per run so far, it and the reporting half would end past the budget
(the JSON lists it under "skipped"). Needs numpy and nibabel. Not a test; a human summary on
stderr, JSON with --json.
"""
import argparse
import json
import os
import subprocess
import sys
import time

from case_metrics import Case, stats
from peer_common import emit_json

# The files each run writes: the forward field and the labels are measured, the warped
# image is what a user looks at.
OUTPUTS = ["--outputs", "warped,forward,labels"]


def parse_seeds(text):
    seeds = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            seeds.extend(range(int(lo), int(hi) + 1))
        else:
            seeds.append(int(part))
    return seeds


def read_configs(path):
    """name | CLI arguments, one per line; # comments."""
    configs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            name, _, args = line.partition("|")
            configs.append((name.strip(), args.split()))
    return configs


def method_of(name, default):
    """The CLI command of a configuration: METHOD of METHOD:NAME, else the default."""
    return name.split(":", 1)[0] if ":" in name else default


def make_case(cli, work, seed, res):
    d = os.path.join(work, "case%03d" % seed)
    if not os.path.exists(os.path.join(d, "true_field_%dmm.nii.gz" % res)):
        out = subprocess.run([cli, "demo-data", d, "--draw", "--seed", str(seed),
                              "--resolution", str(res)], check=True, capture_output=True,
                             text=True).stdout
        with open(os.path.join(d, "drawn.txt"), "w") as f:
            f.write(out)
    with open(os.path.join(d, "drawn.txt")) as f:
        drawn = f.read().strip().split("(", 1)[-1].rstrip(")")
    return d, drawn


def run_registration(cli, method, d, res, args, device, out_prefix):
    cmd = [cli, method, os.path.join(d, "fixed_%dmm.nii.gz" % res),
           os.path.join(d, "moving_%dmm.nii.gz" % res), "-o", out_prefix, "--overwrite",
           "--device", device,
           "--fixed-labels", os.path.join(d, "fixed_labels_%dmm.nii.gz" % res),
           "--moving-labels", os.path.join(d, "moving_labels_%dmm.nii.gz" % res)]
    cmd += OUTPUTS + args
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), p.stderr.strip()))
    with open(out_prefix + "_summary.json") as f:
        summary = json.load(f)
    return summary, wall


def evaluate(cli, method, cases, truths, res, name, args, device, work, log):
    rows = []
    for seed, d in cases:
        prefix = os.path.join(work, "runs", name.replace(":", "-"), "case%03d" % seed)
        os.makedirs(os.path.dirname(prefix), exist_ok=True)
        summary, wall = run_registration(cli, method, d, res, args, device, prefix)
        c = truths[seed]
        folds, min_det = c.det_stats(prefix + "_forward.nii.gz")
        row = {"seed": seed, "dice": c.dice_of_file(prefix + "_labels.nii.gz"),
               "dice_cli": summary.get("mean_dice"),
               "dice_before": summary.get("mean_dice_before"),
               "error_mm": c.error_mm(prefix + "_forward.nii.gz"),
               "error_before_mm": c.error_before_mm,
               "folds": folds, "min_det_j": min_det,
               "folds_cli": summary["final"]["folds"],
               "seconds": summary["time_s"]["register"], "wall_s": wall}
        rows.append(row)
        log("  %-24s seed %3d  Dice %.4f (before %.4f)  error %.3f mm (before %.3f)  folds %s  "
            "min det J %.3f  %.2f s (%.2f s wall)" %
            (name, seed, row["dice"], row["dice_before"], row["error_mm"],
             row["error_before_mm"], folds, min_det, row["seconds"], wall))
    return {"name": name, "method": method, "args": args, "cases": rows,
            "dice": stats([r["dice"] for r in rows]),
            "error_mm": stats([r["error_mm"] for r in rows]),
            "folds": stats([r["folds"] for r in rows]),
            "min_det_j": stats([r["min_det_j"] for r in rows]),
            "seconds": stats([r["seconds"] for r in rows])}


class Clock:
    """Seconds since the start, and the mean wall time of a registration so far."""

    def __init__(self):
        self.t0 = time.monotonic()

    def elapsed(self):
        return time.monotonic() - self.t0

    @staticmethod
    def per_run(results):
        walls = [c["wall_s"] for r in results for c in r["cases"]]
        return sum(walls) / len(walls) if walls else None


def summary_line(r):
    return ("%-24s Dice %.4f ± %.4f (worst %.4f)  error %.3f ± %.3f mm (worst %.3f)  folds %d "
            "(max)  min det J %.3f  %.2f s" %
            (r["name"], r["dice"]["mean"], r["dice"]["sd"], r["dice"]["min"],
             r["error_mm"]["mean"], r["error_mm"]["sd"], r["error_mm"]["max"],
             r["folds"]["max"], r["min_det_j"]["min"], r["seconds"]["mean"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--method", default="demons", choices=("demons", "fluid"),
                    help="the command of the configurations without a METHOD: prefix")
    ap.add_argument("--seeds", default="100-123")
    ap.add_argument("--resolution", type=int, default=2, choices=(1, 2))
    ap.add_argument("--configs", required=True)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--report-also", default="",
                    help="configurations (by name) to run on the reporting half beside the "
                         "chosen one")
    ap.add_argument("--choose", default="",
                    help="skip tuning: report this configuration as the chosen one")
    ap.add_argument("--budget-s", type=float, default=0.0,
                    help="start no tuning configuration that would end the run past this")
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        import numpy as np
        import nibabel as nib
    except ImportError as e:
        print("demons_generalize: %s" % e, file=sys.stderr)
        return 77

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    clock = Clock()
    seeds = parse_seeds(a.seeds)
    configs = read_configs(a.configs)
    by_name = dict(configs)
    os.makedirs(a.work, exist_ok=True)
    cases, drawn, truths = {}, {}, {}
    for s in seeds:
        if a.choose and s % 2 == 0:
            continue  # chosen already: the tuning half is not needed
        cases[s], drawn[s] = make_case(a.cli, a.work, s, a.resolution)
        truths[s] = Case(np, nib, cases[s], a.resolution)
    log("%d cases at %d mm made or found in %.1f s" % (len(cases), a.resolution, clock.elapsed()))
    tuning = [(s, cases[s]) for s in seeds if s % 2 == 0 and s in cases]
    reporting = [(s, cases[s]) for s in seeds if s % 2 == 1]
    others = [n for n in a.report_also.split(",") if n]
    if not reporting or not (tuning or a.choose):
        log("demons_generalize: needs odd seeds to report on and even ones to tune on (or "
            "--choose)")
        return 2
    result = {"bench": "%s_generalize" % a.method, "method": a.method,
              "resolution_mm": a.resolution, "device": a.device,
              "tuning_seeds": [s for s, _ in tuning], "reporting_seeds": [s for s, _ in reporting],
              "cases": {str(s): drawn[s] for s in cases}, "skipped": []}
    if a.choose:
        chosen = a.choose
    else:
        tuned = []
        for name, args in configs:
            if method_of(name, a.method) != a.method:
                continue  # a baseline of another method: reported, never tuned
            per_run = Clock.per_run(tuned)
            runs_left = len(tuning) + (1 + len(others)) * len(reporting)
            if (a.budget_s > 0 and per_run is not None and
                    clock.elapsed() + per_run * runs_left > a.budget_s):
                log("tuning: %s skipped (%.0f s of %.0f s spent, %.1f s a run)" %
                    (name, clock.elapsed(), a.budget_s, per_run))
                result["skipped"].append(name)
                continue
            log("tuning: %s %s" % (name, " ".join(args)))
            tuned.append(evaluate(a.cli, a.method, tuning, truths, a.resolution, name, args,
                                  a.device, a.work, log))
        tuned.sort(key=lambda r: -r["dice"]["mean"])
        result["tuning"] = tuned
        chosen = tuned[0]["name"]
        for r in tuned:
            log("tuning half: " + summary_line(r))
    result["chosen"] = chosen
    names = [chosen] + [n for n in others if n != chosen]
    result["reporting"] = []
    for name in names:
        log("reporting: %s" % name)
        result["reporting"].append(evaluate(a.cli, method_of(name, a.method), reporting, truths,
                                            a.resolution, name, by_name[name], a.device, a.work,
                                            log))
    for r in result["reporting"]:
        log("reporting half: " + summary_line(r))
    result["seconds"] = clock.elapsed()
    if a.json:
        emit_json(result, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
