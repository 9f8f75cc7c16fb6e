#!/usr/bin/env python3
"""fluid_cli_test.py — `neurowarp-cli fluid` end to end (app/cli_fluid.c over
app/cli_deformable.c, issue 14), run by ctest under the system Python (nibabel, numpy): the
outputs and their conventions read back with nibabel, the summary JSON (figures, Dice, time
split), the closing report, --outputs and its errors, a moving image on another grid, and bad
input with its exit code and one-line message. The pair is cli_demons_test.py's: a textured
blob and the same blob shifted by one voxel along i (+2 mm along R, so -2 mm in the ITK/LPS
field), 24^3 at 2 mm.

Usage: fluid_cli_test.py /path/to/neurowarp-cli
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_demons_test as cdt  # noqa: E402 (exits 77 without nibabel)

nib = cdt.nib
np = cdt.np


class FluidCli(unittest.TestCase):
    setUp = cdt.DemonsCli.setUp
    tearDown = cdt.DemonsCli.tearDown
    outputs = cdt.DemonsCli.outputs

    def fluid(self, *extra, moving=None):
        return cdt.run("fluid", self.fixed, moving or self.moving, "-o", self.prefix, "--levels",
                       "2", "--iterations", "30", "--device", "cpu", *extra)

    def ok(self, *extra, moving=None):
        code, out, err = self.fluid(*extra, moving=moving)
        self.assertEqual(code, 0, err)
        return out

    def summary(self):
        with open(f"{self.prefix}_summary.json") as fh:
            return json.load(fh)

    def test_outputs_conventions_summary(self):
        out = self.ok("--outputs", "all", "--fixed-labels", self.fl, "--moving-labels", self.ml)
        self.assertEqual(self.outputs(), sorted(
            [f"run_{n}.nii.gz" for n in ("warped", "forward", "jacobian", "labels")] +
            ["run_summary.json"]))
        fwd = nib.load(f"{self.prefix}_forward.nii.gz")
        self.assertEqual(tuple(fwd.shape), (cdt.N, cdt.N, cdt.N, 1, 3))
        self.assertEqual(int(fwd.header["intent_code"]), 1007)
        np.testing.assert_allclose(fwd.affine, cdt.AFFINE, atol=1e-4)
        u = fwd.get_fdata()[..., 0, :][self.r < 0.7]
        self.assertAlmostEqual(float(np.median(u[:, 0])), -2.0, delta=0.4)  # LPS: -R
        self.assertLess(float(np.abs(np.median(u[:, 1]))), 0.3)
        f = nib.load(self.fixed).get_fdata()
        w = nib.load(f"{self.prefix}_warped.nii.gz").get_fdata()
        m = nib.load(self.moving).get_fdata()
        self.assertLess(np.mean((w - f) ** 2), 0.2 * np.mean((m - f) ** 2))
        jac = nib.load(f"{self.prefix}_jacobian.nii.gz").get_fdata()
        self.assertGreater(float(jac.min()), 0.0)
        s = self.summary()
        self.assertEqual(s["command"], "fluid")
        self.assertEqual(s["parameters"]["lambda"], 0.01)
        for k in ("energy", "l2", "skl", "max_u", "min_jac", "max_jac", "mean_log_jac", "folds",
                  "step", "regrids"):
            self.assertIn(k, s["final"], k)
        self.assertEqual(s["final"]["folds"], 0)
        self.assertGreater(s["final"]["min_jac"], 0)
        self.assertGreater(s["mean_dice"], s["mean_dice_before"])
        self.assertEqual(sorted(s["time_s"]),
                         sorted(["read", "device_init", "register", "write", "total"]))
        self.assertRegex(out, r"(?m)^fluid: \d+ iterations \(levels \d+ \+ \d+\) in .* on the CPU$")
        self.assertRegex(out, r"(?m)^final: L2 \S+ · sKL \S+ · smallest det J \S+ · largest det J "
                              r"\S+ · mean log det J \S+ · no folds$")
        self.assertRegex(out, r"(?m)^Dice \d\.\d+ \(before \d\.\d+\), mean over 2 labels$")

    def test_default_outputs_and_json(self):
        out = self.ok("--json")
        self.assertEqual(self.outputs(), sorted(["run_warped.nii.gz", "run_forward.nii.gz",
                                                 "run_summary.json"]))
        lines = [json.loads(x) for x in out.splitlines()]
        self.assertTrue(all("mean_log_jac" in x for x in lines[:-1]))
        self.assertTrue(lines[-1]["summary"])
        self.assertEqual(lines[-1]["method"], "fluid")

    def test_other_grid(self):
        """The moving image on a grid of other voxel size: resampled once, and the written
        field maps to the ORIGINAL moving image's points (the warped image matches)."""
        m = nib.load(self.moving)
        data = m.get_fdata().astype(np.float32)[::2, ::2, ::2]
        aff = cdt.AFFINE.copy()
        aff[:3, :3] *= 2.0
        coarse = os.path.join(self.dir, "coarse.nii.gz")
        nib.save(nib.Nifti1Image(data, aff), coarse)
        s = json.loads(self.ok("--json", moving=coarse).splitlines()[-1])
        self.assertEqual(s["method"], "fluid")
        self.assertTrue(self.summary()["moving_resampled"])
        w = nib.load(f"{self.prefix}_warped.nii.gz").get_fdata()
        self.assertEqual(w.shape, (cdt.N, cdt.N, cdt.N))
        f = nib.load(self.fixed).get_fdata()
        self.assertLess(np.mean((w - f) ** 2), 0.5 * np.mean((m.get_fdata() - f) ** 2))
        u = nib.load(f"{self.prefix}_forward.nii.gz").get_fdata()[..., 0, :][self.r < 0.7]
        self.assertAlmostEqual(float(np.median(u[:, 0])), -2.0, delta=0.6)  # LPS: -R

    def test_errors(self):
        code, out, err = self.fluid("--outputs", "inverse")
        self.assertEqual(code, 2)
        self.assertEqual(err, "neurowarp-cli fluid: --outputs: unknown output 'inverse': expected "
                              "warped, forward, jacobian, labels or all\n"
                              "Try 'neurowarp-cli fluid --help'.\n")
        code, _, err = self.fluid("--lambda", "-1")
        self.assertEqual(code, 2)
        self.assertIn("lambda", err)
        code, _, err = cdt.run("fluid", self.fixed, "-o", self.prefix)
        self.assertEqual(code, 2)
        self.assertEqual(err.splitlines()[0], "neurowarp-cli fluid: expected FIXED and MOVING images")
        missing = os.path.join(self.dir, "nope.nii.gz")
        code, out, err = self.fluid(moving=missing)
        self.assertEqual(code, 1)
        self.assertTrue(err.startswith("neurowarp-cli: ") and "nope.nii.gz" in err, err)
        self.assertEqual(len(err.splitlines()), 1)
        self.assertEqual(self.outputs(), [])
        empty = cdt.save(os.path.join(self.dir, "empty.nii.gz"),
                         np.zeros((cdt.N, cdt.N, cdt.N), np.float32))
        code, _, err = self.fluid("--fixed-mask", empty)
        self.assertEqual(code, 1)
        self.assertIn("empty", err)


if __name__ == "__main__":
    cdt.CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
