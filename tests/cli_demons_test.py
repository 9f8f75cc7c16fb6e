#!/usr/bin/env python3
"""cli_demons_test.py — end-to-end tests of `neurowarp-cli demons` (app/cli_demons.c), run by
ctest under the system Python (nibabel, numpy): the outputs and their NIfTI conventions read
back with nibabel (an independent reader), the summary JSON, label Dice, and bad input with
its exit code and one-line message.

The pair is a textured blob and the same blob shifted by one voxel along i, so the forward
field is known: fixed(x) = moving(x + e_i), i.e. +1 voxel = +2 mm along the first axis, which
the affine below points to world R: RAS (+2, 0, 0) mm, ITK/LPS (-2, 0, 0) mm.

Usage: cli_demons_test.py /path/to/neurowarp-cli
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import nibabel as nib
except ImportError:  # e.g. a GPU host's image; scripts/install-deps.sh installs it
    print("SKIP: nibabel is not installed")
    sys.exit(77)
import numpy as np

CLI = None
N = 24
AFFINE = np.array([[2.0, 0, 0, -24], [0, 2.0, 0, -20], [0, 0, 2.0, -10], [0, 0, 0, 1]])


def run(*args, timeout=120):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def phantom(shift):
    """Textured ellipsoid sampled at i - shift (continuous voxel coordinates)."""
    i, j, k = np.meshgrid(np.arange(N) - shift, np.arange(N), np.arange(N), indexing="ij")
    c = (N - 1) / 2.0
    r = np.sqrt(((i - c) / 8.0) ** 2 + ((j - c) / 7.0) ** 2 + ((k - c) / 6.5) ** 2)
    body = 1.0 / (1.0 + np.exp((r - 1.0) * 8.0))
    tex = 1.0 + 0.5 * np.sin(0.6 * i) * np.cos(0.5 * j) + 0.3 * np.sin(0.55 * k + 0.4 * i)
    labels = np.where(r < 1.0, np.where(i < c, 1, 2), 0).astype(np.int16)
    return (100.0 * body * tex).astype(np.float32), labels, r


def save(path, data):
    nib.save(nib.Nifti1Image(data, AFFINE), path)
    return path


class DemonsCli(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="nw-demons-cli-")
        f, fl, self.r = phantom(0.0)
        m, ml, _ = phantom(1.0)
        self.fixed = save(os.path.join(self.dir, "fixed.nii.gz"), f)
        self.moving = save(os.path.join(self.dir, "moving.nii.gz"), m)
        self.fl = save(os.path.join(self.dir, "fl.nii.gz"), fl)
        self.ml = save(os.path.join(self.dir, "ml.nii.gz"), ml)
        self.prefix = os.path.join(self.dir, "out", "run")
        os.mkdir(os.path.dirname(self.prefix))

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def register(self, *extra):
        code, out, err = run("demons", self.fixed, self.moving, "-o", self.prefix,
                             "--levels", "2", "--iterations", "20", "--device", "cpu", *extra)
        self.assertEqual(code, 0, err)
        return out

    def inside(self):
        return self.r < 0.7

    def test_outputs_conventions_and_summary(self):
        self.register("--fixed-labels", self.fl, "--moving-labels", self.ml)
        names = ["warped", "forward", "inverse", "velocity", "jacobian", "labels"]
        for n in names:
            self.assertTrue(os.path.exists(f"{self.prefix}_{n}.nii.gz"), n)
        # Fields: 5D, dim[5] = 3, intent vector (1007), LPS millimetres.
        fwd = nib.load(f"{self.prefix}_forward.nii.gz")
        self.assertEqual(fwd.header["dim"][0], 5)
        self.assertEqual(tuple(fwd.shape), (N, N, N, 1, 3))
        self.assertEqual(int(fwd.header["intent_code"]), 1007)
        np.testing.assert_allclose(fwd.affine, AFFINE, atol=1e-4)
        u = fwd.get_fdata()[..., 0, :][self.inside()]
        self.assertAlmostEqual(float(np.median(u[:, 0])), -2.0, delta=0.4)  # LPS: -R
        self.assertLess(float(np.abs(np.median(u[:, 1]))), 0.3)
        self.assertLess(float(np.abs(np.median(u[:, 2]))), 0.3)
        inv = nib.load(f"{self.prefix}_inverse.nii.gz").get_fdata()[..., 0, :][self.inside()]
        self.assertAlmostEqual(float(np.median(inv[:, 0])), 2.0, delta=0.4)
        # The warped image is much closer to the fixed one than the moving one was.
        f = nib.load(self.fixed).get_fdata()
        w = nib.load(f"{self.prefix}_warped.nii.gz").get_fdata()
        m = nib.load(self.moving).get_fdata()
        self.assertLess(np.mean((w - f) ** 2), 0.2 * np.mean((m - f) ** 2))
        jac = nib.load(f"{self.prefix}_jacobian.nii.gz").get_fdata()
        self.assertEqual(jac.shape, (N, N, N))
        self.assertGreater(float(jac.min()), 0.0)
        lab = nib.load(f"{self.prefix}_labels.nii.gz").get_fdata()
        self.assertEqual(set(np.unique(lab).astype(int)), {0, 1, 2})
        with open(f"{self.prefix}_summary.json") as fh:
            s = json.load(fh)
        self.assertEqual(s["command"], "demons")
        self.assertEqual(s["device"], "cpu")
        self.assertEqual(s["parameters"]["levels"], 2)
        self.assertEqual(s["parameters"]["similarity"], "ssd")
        self.assertEqual(len(s["level_iterations"]), 2)
        self.assertEqual(sum(s["level_iterations"]), s["iterations"])
        self.assertTrue(s["finished"])
        for key in ["energy", "mse", "ncc", "max_u", "min_jac", "folds"]:
            self.assertIn(key, s["final"])
        self.assertEqual(s["final"]["folds"], 0)
        self.assertEqual([d["label"] for d in s["labels"]], [1, 2])
        self.assertGreater(s["mean_dice"], s["mean_dice_before"])
        self.assertGreater(s["mean_dice"], 0.9)
        self.assertGreater(s["time_s"], 0.0)
        self.assertEqual(len(s["outputs"]), 7)

    def test_ras_convention_and_json(self):
        out = self.register("--field-convention", "ras", "--similarity", "lcc", "--json")
        fwd = nib.load(f"{self.prefix}_forward.nii.gz")
        self.assertEqual(int(fwd.header["intent_code"]), 1006)
        u = fwd.get_fdata()[..., 0, :][self.inside()]
        self.assertAlmostEqual(float(np.median(u[:, 0])), 2.0, delta=0.4)  # RAS: +R
        lines = [json.loads(line) for line in out.splitlines()]
        self.assertTrue(lines[-1]["summary"])
        self.assertEqual(lines[-1]["param_similarity"], "lcc")
        self.assertIn("energy", lines[0])
        self.assertFalse(os.path.exists(f"{self.prefix}_labels.nii.gz"))

    def test_mismatched_grids(self):
        small = save(os.path.join(self.dir, "small.nii.gz"), np.ones((N, N, N - 2), np.float32))
        code, _, err = run("demons", self.fixed, small, "-o", self.prefix)
        self.assertEqual(code, 1)
        self.assertEqual(len(err.strip().splitlines()), 1, err)
        self.assertIn("fixed.nii.gz", err)
        self.assertIn("small.nii.gz", err)
        self.assertEqual(os.listdir(os.path.dirname(self.prefix)), [])

    def outputs(self):
        return sorted(os.listdir(os.path.dirname(self.prefix)))

    def test_failed_run_leaves_nothing(self):
        # The summary cannot be written (a folder has its name): refused before the work,
        # and nothing else is written either (issue 9, point 4).
        os.mkdir(f"{self.prefix}_summary.json")
        code, out, err = run("demons", self.fixed, self.moving, "-o", self.prefix, "--json",
                             "--device", "cpu", "--levels", "1", "--iterations", "2")
        self.assertEqual(code, 1)
        self.assertEqual(out, "")
        self.assertEqual(err, f"neurowarp-cli: {self.prefix}_summary.json: cannot write: "
                              "is a folder\n")
        self.assertEqual(self.outputs(), ["run_summary.json"])

    def test_no_mix_of_two_runs(self):
        # A run with labels, then one without: the first run's labels are stale (point 5).
        self.register("--fixed-labels", self.fl, "--moving-labels", self.ml)
        self.assertIn("run_labels.nii.gz", self.outputs())
        code, _, err = run("demons", self.fixed, self.moving, "-o", self.prefix,
                           "--levels", "1", "--iterations", "2", "--device", "cpu")
        self.assertEqual(code, 1)
        self.assertEqual(err, f"neurowarp-cli: {self.prefix}_warped.nii.gz: exists already "
                              "(--overwrite replaces it)\n")
        self.register("--overwrite")
        self.assertEqual(self.outputs(), sorted(f"run_{n}" for n in (
            "warped.nii.gz", "forward.nii.gz", "inverse.nii.gz", "velocity.nii.gz",
            "jacobian.nii.gz", "summary.json")))

    def test_nan_labels(self):
        lab = nib.load(self.fl).get_fdata().astype(np.float32)
        lab[0, 0, 0] = np.nan
        bad = save(os.path.join(self.dir, "nanlab.nii.gz"), lab)
        code, _, err = run("demons", self.fixed, self.moving, "-o", self.prefix,
                           "--fixed-labels", bad, "--moving-labels", self.ml)
        self.assertEqual(code, 1)
        self.assertEqual(err, f"neurowarp-cli: {bad}: 1 of {N ** 3} voxels are NaN or Inf; "
                              "mask or fill them before registering\n")
        self.assertEqual(self.outputs(), [])

    def test_usage_errors(self):
        code, _, err = run("demons", self.fixed, self.moving)
        self.assertEqual(code, 2)
        self.assertIn("-o PREFIX", err)
        code, _, err = run("demons", self.fixed, self.moving, "-o", self.prefix,
                           "--fixed-labels", self.fl)
        self.assertEqual(code, 2)
        self.assertIn("--moving-labels", err)
        code, _, err = run("demons", self.fixed, self.moving, "-o", self.prefix,
                           "--force", "sideways")
        self.assertEqual(code, 2)
        self.assertIn("force", err)
        code, _, err = run("demons", self.fixed, self.moving, "-o",
                           os.path.join(self.dir, "nowhere", "run"))
        self.assertEqual(code, 1)
        self.assertIn("does not exist", err)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
