#!/usr/bin/env python3
"""demons_outputs_test.py — what `neurowarp-cli demons` writes and says about its time
(app/cli_demons.c, issue 12), run by ctest under the system Python (nibabel, numpy):
--outputs gives exactly the files asked for (default warped and forward, and labels with
--moving-labels), an unknown name is a usage error with one exact message and no file, a
narrower run with --overwrite removes the files of an earlier wider run, and the summary JSON
(and the --json summary object, and the closing report) split the time into read, device
init, register and write. The pair is cli_demons_test.py's: a textured blob and the same blob
shifted by one voxel, 24^3, one level of three iterations on the CPU.

Usage: demons_outputs_test.py /path/to/neurowarp-cli
"""
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_demons_test as cdt  # noqa: E402 (exits 77 without nibabel)

nib = cdt.nib


class DemonsOutputs(unittest.TestCase):
    """--outputs: exactly the files asked for (default warped and forward, and labels with
    --moving-labels), a clear usage error for an unknown name, the files of an earlier wider
    run removed by --overwrite; and the summary's time split (issue 12)."""
    setUp = cdt.DemonsCli.setUp
    tearDown = cdt.DemonsCli.tearDown
    outputs = cdt.DemonsCli.outputs

    def demons(self, *extra):
        return cdt.run("demons", self.fixed, self.moving, "-o", self.prefix, "--levels", "1",
                   "--iterations", "3", "--device", "cpu", *extra)

    def ok(self, *extra):
        code, out, err = self.demons(*extra)
        self.assertEqual(code, 0, err)
        return out

    def summary(self):
        with open(f"{self.prefix}_summary.json") as fh:
            return json.load(fh)

    @staticmethod
    def files(*names):
        """The folder of a run that wrote names, in the order they are listed."""
        return sorted([f"run_{n}.nii.gz" for n in names] + ["run_summary.json"])

    def paths(self, *names):
        """The summary's "outputs" of a run that wrote names, in order."""
        return [f"{self.prefix}_{n}.nii.gz" for n in names] + [f"{self.prefix}_summary.json"]

    def test_default_outputs(self):
        self.ok()
        self.assertEqual(self.outputs(), self.files("warped", "forward"))
        self.assertEqual(self.summary()["outputs"], self.paths("warped", "forward"))
        self.assertEqual(nib.load(f"{self.prefix}_forward.nii.gz").shape, (cdt.N, cdt.N, cdt.N, 1, 3))
        self.assertEqual(nib.load(f"{self.prefix}_warped.nii.gz").shape, (cdt.N, cdt.N, cdt.N))

    def test_default_outputs_with_labels(self):
        self.ok("--fixed-labels", self.fl, "--moving-labels", self.ml)
        self.assertEqual(self.outputs(), self.files("warped", "forward", "labels"))
        self.assertIn("mean_dice", self.summary())

    def test_asked_outputs_only(self):
        self.ok("--outputs", "inverse,jacobian")
        self.assertEqual(self.outputs(), self.files("inverse", "jacobian"))
        self.assertEqual(self.summary()["outputs"], self.paths("inverse", "jacobian"))
        self.assertEqual(nib.load(f"{self.prefix}_inverse.nii.gz").shape, (cdt.N, cdt.N, cdt.N, 1, 3))
        jac = nib.load(f"{self.prefix}_jacobian.nii.gz").get_fdata()
        self.assertEqual(jac.shape, (cdt.N, cdt.N, cdt.N))
        self.assertGreater(float(jac.min()), 0.0)

    def test_labels_warped_for_dice_not_written(self):
        self.ok("--outputs", "forward, velocity", "--fixed-labels", self.fl,
                "--moving-labels", self.ml)
        self.assertEqual(self.outputs(), self.files("forward", "velocity"))
        s = self.summary()
        self.assertEqual([d["label"] for d in s["labels"]], [1, 2])
        self.assertGreater(s["mean_dice"], s["mean_dice_before"])

    def test_unknown_output(self):
        code, out, err = self.demons("--outputs", "warped,bogus")
        self.assertEqual(code, 2)
        self.assertEqual(out, "")
        self.assertEqual(err, "neurowarp-cli demons: --outputs: unknown output 'bogus': expected "
                              "warped, forward, inverse, velocity, jacobian, labels or all\n"
                              "Try 'neurowarp-cli demons --help'.\n")
        self.assertEqual(self.outputs(), [])
        code, _, err = self.demons("--outputs", "warped,,forward")
        self.assertEqual(code, 2)
        self.assertEqual(err.splitlines()[0], "neurowarp-cli demons: --outputs: an empty name in "
                         "'warped,,forward': expected warped, forward, inverse, velocity, "
                         "jacobian, labels or all")
        code, _, err = self.demons("--outputs", "labels")
        self.assertEqual(code, 2)
        self.assertEqual(err, "neurowarp-cli demons: --outputs labels needs --moving-labels\n"
                              "Try 'neurowarp-cli demons --help'.\n")
        self.assertEqual(self.outputs(), [])

    def test_overwrite_narrower_removes_stale(self):
        self.ok("--outputs", "all", "--fixed-labels", self.fl, "--moving-labels", self.ml)
        every = self.files("warped", "forward", "inverse", "velocity", "jacobian", "labels")
        self.assertEqual(self.outputs(), every)
        # Without --overwrite the earlier run's files are refused, stale ones too.
        code, _, err = self.demons("--outputs", "forward")
        self.assertEqual(code, 1)
        self.assertEqual(err, f"neurowarp-cli: {self.prefix}_warped.nii.gz: exists already "
                              "(--overwrite replaces it)\n")
        self.assertEqual(self.outputs(), every)
        self.ok("--outputs", "forward", "--overwrite")
        self.assertEqual(self.outputs(), self.files("forward"))
        self.assertEqual(self.summary()["outputs"], self.paths("forward"))

    def test_time_split(self):
        out = self.ok("--json", "--outputs", "all")
        t = self.summary()["time_s"]
        parts = ["read", "device_init", "register", "write"]
        self.assertEqual(sorted(t), sorted(parts + ["total"]))
        for k, v in t.items():
            self.assertIsInstance(v, (int, float), k)
            self.assertGreaterEqual(v, 0.0, k)
        self.assertEqual(t["device_init"], 0)  # on the CPU
        self.assertGreater(t["register"], 0.0)
        self.assertGreater(t["write"], 0.0)
        self.assertGreaterEqual(t["total"], sum(t[k] for k in parts) - 1e-4)
        # The --json summary object carries the same split.
        self.assertEqual(json.loads(out.splitlines()[-1])["time_s"], t)
        # And the closing report says it in one line.
        out = self.ok("--overwrite")
        self.assertRegex(out, r"(?m)^time: read \d+\.\d s · device \d+\.\d s · "
                              r"register \d+\.\d s · write \d+\.\d s · total \d+\.\d s$")


if __name__ == "__main__":
    cdt.CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
