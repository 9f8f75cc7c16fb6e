#!/usr/bin/env python3
"""cli_user_test.py — what a user reads from neurowarp-cli (issue 15): the usage in the
user's UTF-8 locale says "[OPTION…]", not "[OPTION?]"; a registration ends by saying what it
achieved (iterations, time, final figures, Dice, the files written).

Usage: cli_user_test.py /path/to/neurowarp-cli
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import nibabel as nib
    import numpy as np
except ImportError:  # a GPU host's image; scripts/install-deps.sh installs them
    nib = None

CLI = None


def run(*args, env=None):
    full = dict(os.environ)
    full.update(env or {})
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120, env=full)
    return p.returncode, p.stdout, p.stderr


class UsageTest(unittest.TestCase):
    def test_usage_in_utf8_locale(self):
        for sub in ("info", "smooth", "demons"):
            rc, out, _ = run(sub, "--help", env={"LC_ALL": "C.UTF-8"})
            self.assertEqual(rc, 0, sub)
            self.assertIn(f"neurowarp-cli {sub} [OPTION…]", out)
            self.assertNotIn("[OPTION?]", out)


@unittest.skipIf(nib is None, "nibabel is not installed")
class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="nwreport-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def save(self, name, data):
        path = os.path.join(self.dir, name)
        nib.save(nib.Nifti1Image(data, np.diag([2.0, 2.0, 2.0, 1.0])), path)
        return path

    def test_demons_report(self):
        # a bright box, and the same box moved by two voxels; labels for both
        n = 24
        f = np.zeros((n, n, n), np.float32)
        f[6:16, 7:17, 5:15] = 100.0
        m = np.roll(f, 2, axis=0)
        fixed, moving = self.save("f.nii.gz", f), self.save("m.nii.gz", m)
        fl = self.save("fl.nii.gz", (f > 0).astype(np.float32))
        ml = self.save("ml.nii.gz", (m > 0).astype(np.float32))
        prefix = os.path.join(self.dir, "run")
        rc, out, err = run("demons", fixed, moving, "-o", prefix, "--levels", "2",
                           "--iterations", "4", "--device", "cpu", "--fixed-labels", fl,
                           "--moving-labels", ml, "--outputs", "all")
        self.assertEqual(rc, 0, err)
        lines = out.splitlines()
        self.assertEqual(len(lines), 5, out)
        self.assertRegex(lines[0], r"^demons: (\d+) iterations \(levels (\d+) \+ (\d+)\) in "
                                   r"\d+\.\d s on the CPU$")
        it, l1, l2 = map(int, re.match(r"demons: (\d+) iterations \(levels (\d+) \+ (\d+)",
                                       lines[0]).groups())
        self.assertEqual(it, l1 + l2)
        self.assertRegex(lines[1], r"^final: energy \S+ · NCC \S+ · smallest det J \S+ · "
                                   r"(no folds|\d+ folded voxels)$")
        dice = re.match(r"^Dice (\S+) \(before (\S+)\), mean over 1 labels$", lines[2])
        self.assertIsNotNone(dice, lines[2])
        self.assertGreater(float(dice.group(1)), float(dice.group(2)))
        names = ["warped", "forward", "inverse", "velocity", "jacobian", "labels"]
        files = [f"{prefix}_{n}.nii.gz" for n in names] + [f"{prefix}_summary.json"]
        self.assertRegex(lines[3], r"^time: read \d+\.\d s · device 0\.0 s · register \d+\.\d s · "
                                   r"write \d+\.\d s · total \d+\.\d s$")
        self.assertEqual(lines[4], "wrote 7 files: " + ", ".join(files))
        for path in files:
            self.assertTrue(os.path.isfile(path), path)
        # with --json, stdout stays JSON lines only
        rc, out, _ = run("demons", fixed, moving, "-o", prefix, "--levels", "1",
                         "--iterations", "2", "--device", "cpu", "--json", "--overwrite")
        self.assertEqual(rc, 0)
        self.assertNotIn("wrote", out)


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
