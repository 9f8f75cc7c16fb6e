#!/usr/bin/env python3
"""cli_test.py — end-to-end tests of neurowarp-cli (app/cli*.c), run by ctest under the
system Python (nibabel, numpy): help texts, info, smooth, demo-data, JSON output, and every
bad input with its exit code, its one-line message and no file left behind.

Usage: cli_test.py /path/to/neurowarp-cli
"""
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

try:
    import nibabel as nib
except ImportError:  # e.g. a GPU host's image; scripts/install-deps.sh installs it
    print("SKIP: nibabel is not installed")
    sys.exit(77)
import numpy as np

CLI = None
CH2BET = "/usr/share/mricron/templates/ch2bet.nii.gz"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def run(*args, timeout=120):
    p = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_file(path, text, mode="w"):
    with open(path, mode) as f:
        f.write(text)


def save(path, data, affine=None, dtype=None):
    img = nib.Nifti1Image(np.asarray(data), np.diag([2.0, 2.0, 2.0, 1.0]) if affine is None
                          else affine)
    if dtype is not None:
        img.set_data_dtype(dtype)
    nib.save(img, path)
    return path


def test_volume(shape=(20, 22, 18)):
    """A box with a ramp: never constant, so smoothing changes it measurably."""
    a = np.zeros(shape, np.float32)
    a[5:15, 6:16, 4:14] = 100.0
    a += np.arange(shape[0], dtype=np.float32)[:, None, None]
    return a


class CliCase(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="nwcli-")
        self.out = os.path.join(self.dir, "out")
        os.mkdir(self.out)

    def tearDown(self):
        for root, dirs, _ in os.walk(self.dir):
            for d in dirs:
                os.chmod(os.path.join(root, d), 0o755)
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def assert_fails(self, args, code, *fragments):
        """Exit code, a one-line message naming the problem, and nothing left in out/."""
        rc, out, err = run(*args)
        lines = err.strip().splitlines()
        self.assertEqual(rc, code, f"{args}: rc {rc}, stderr {err!r}")
        if code == 1:
            self.assertEqual(len(lines), 1, f"{args}: stderr {err!r}")
            self.assertTrue(lines[0].startswith("neurowarp-cli: "), err)
        else:
            self.assertTrue(lines and lines[0].startswith("neurowarp-cli"), err)
            self.assertIn("--help", err)
        for f in fragments:
            self.assertIn(f, err, f"{args}: stderr {err!r}")
        self.assertEqual(os.listdir(self.out), [], f"{args}: left files behind")
        return err


class HelpTest(CliCase):
    def test_main_help_and_version(self):
        rc, out, _ = run("--help")
        self.assertEqual(rc, 0)
        for sub in ("info", "smooth", "demo-data"):
            self.assertIn(sub, out)
        rc, out, _ = run("--version")
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"^neurowarp-cli \d+\.\d+\.\d+")

    def test_subcommand_help(self):
        for sub, words in (("info", ["FILE...", "orientation", "Examples:"]),
                           ("smooth", ["--sigma=MM", "mm, 0..50, default 1", "--iterations=N",
                                       "--device", "--json", "--params", "Examples:"]),
                           ("demo-data", ["--seed", "--phantom", "true_field", "Examples:"])):
            rc, out, _ = run(sub, "--help")
            self.assertEqual(rc, 0, sub)
            self.assertIn(f"neurowarp-cli {sub}", out)
            for w in words:
                self.assertIn(w, out, sub)

    def test_usage_errors(self):
        self.assert_fails([], 2, "missing subcommand")
        self.assert_fails(["frobnicate"], 2, "unknown subcommand 'frobnicate'")
        self.assert_fails(["info"], 2, "missing FILE")
        src = save(self.path("in.nii.gz"), test_volume())
        out = os.path.join(self.out, "o.nii.gz")
        self.assert_fails(["smooth", src, "-o", out, "--bogus"], 2, "--bogus")
        self.assert_fails(["smooth", src], 2, "missing -o OUT")
        self.assert_fails(["smooth", "-o", out], 2, "missing input file")
        self.assert_fails(["smooth", src, "-o", out, "--sigma", "abc"], 2, "sigma", "abc")
        self.assert_fails(["smooth", src, "-o", out, "--sigma", "100"], 2, "sigma", "100")
        self.assert_fails(["smooth", src, "-o", out, "--iterations"], 2, "iterations")
        self.assert_fails(["smooth", src, "-o", out, "--device", "gpu"], 2, "gpu")


class InfoTest(CliCase):
    def test_ch2bet(self):
        if not os.path.exists(CH2BET):
            self.skipTest("mricron-data not installed")
        rc, out, _ = run("info", CH2BET)
        self.assertEqual(rc, 0)
        self.assertIn("dims         181 x 217 x 181", out)
        self.assertIn("spacing      1 x 1 x 1 mm", out)
        self.assertIn("orientation  RAS", out)
        self.assertIn("datatype     uint8", out)

    def test_written_file_json(self):
        a = test_volume()
        a[0, 0, 0] = np.nan
        a[1, 0, 0] = np.inf
        aff = np.array([[-2.0, 0, 0, 10], [0, -2.0, 0, 20], [0, 0, -2.0, 30], [0, 0, 0, 1]])
        src = save(self.path("lpi.nii"), a, aff)
        rc, out, _ = run("info", "--json", src)
        self.assertEqual(rc, 0)
        j = json.loads(out)
        self.assertEqual(j["dims"], [20, 22, 18])
        self.assertEqual(j["spacing_mm"], [2, 2, 2])
        self.assertEqual(j["orientation"], "LPI")
        self.assertEqual(j["datatype"], "float32")
        self.assertEqual(j["n_nonfinite"], 2)
        finite = a[np.isfinite(a)]
        self.assertAlmostEqual(j["min"], float(finite.min()), places=4)
        self.assertAlmostEqual(j["max"], float(finite.max()), places=4)
        self.assertAlmostEqual(j["mean"], float(finite.mean()), places=3)
        np.testing.assert_allclose(np.array(j["vox_to_ras"]), aff, atol=1e-5)

    def test_json_escapes_path(self):
        src = save(self.path('we"ird\\name\tx.nii'), test_volume())
        rc, out, err = run("info", "--json", src)
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["path"], src)

    def test_2d_image(self):
        pixels = bytes([10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 250])
        pgm = self.path("slice.pgm")
        write_file(pgm, mode="wb", text=b"P5\n4 3\n255\n" + pixels)
        rc, out, err = run("info", "--json", pgm)
        self.assertEqual(rc, 0, err)
        j = json.loads(out)
        self.assertEqual((j["format"], j["dims"]), ("PNM", [4, 3, 1]))
        self.assertEqual((j["min"], j["max"]), (10, 250))
        self.assertAlmostEqual(j["mean"], sum(pixels) / 12.0, places=4)
        self.assertIsNone(j["datatype"])

    def test_several_files_one_bad(self):
        src = save(self.path("a.nii.gz"), test_volume())
        rc, out, err = run("info", src, self.path("missing.nii"))
        self.assertEqual(rc, 1)
        self.assertIn("dims         20 x 22 x 18", out)
        self.assertEqual(len(err.strip().splitlines()), 1)
        self.assertIn("missing.nii", err)


class SmoothTest(CliCase):
    def test_end_to_end_json(self):
        a = test_volume()
        src = save(self.path("in.nii.gz"), a)
        dst = os.path.join(self.out, "smooth.nii.gz")
        rc, out, err = run("smooth", src, "-o", dst, "--sigma", "2", "--iterations", "3",
                           "--device", "cpu", "--json")
        self.assertEqual(rc, 0, err)
        lines = [json.loads(line) for line in out.strip().splitlines()]
        self.assertEqual(len(lines), 4)
        for i, it in enumerate(lines[:3]):
            self.assertEqual(it["iteration"], i + 1)
            self.assertEqual(it["level"], 0)
            for key in ("ms", "rms_change", "mean", "min", "max"):
                self.assertIn(key, it)
        self.assertGreater(lines[0]["rms_change"], lines[2]["rms_change"])
        s = lines[3]
        self.assertTrue(s["summary"])
        self.assertEqual((s["method"], s["device"], s["iterations"]), ("smooth", "cpu", 3))
        self.assertEqual(s["param_sigma"], 2)
        self.assertEqual(s["outputs"], [dst])
        img = nib.load(dst)
        b = np.asarray(img.dataobj)
        self.assertEqual(img.get_data_dtype(), np.float32)
        self.assertEqual(b.shape, a.shape)
        np.testing.assert_allclose(img.affine, np.diag([2.0, 2.0, 2.0, 1.0]), atol=1e-6)
        self.assertLess(abs(b.mean() - a.mean()) / a.mean(), 1e-3)
        self.assertLess(b.var(), 0.8 * a.var())
        self.assertAlmostEqual(lines[2]["mean"], float(b.mean()), places=3)
        self.assertEqual(sorted(os.listdir(self.out)), ["smooth.nii.gz"])

    def test_keep_type_and_params_file(self):
        a = np.round(test_volume()).astype(np.int16)
        src = save(self.path("in.nii"), a, dtype=np.int16)
        ini = self.path("p.ini")
        write_file(ini, "[smooth]\nsigma=1.5\niterations=7\n")
        dst = os.path.join(self.out, "o.nii")
        rc, out, err = run("smooth", src, "-o", dst, "--params", ini, "--iterations", "2",
                           "--keep-type", "--json")
        self.assertEqual(rc, 0, err)
        lines = [json.loads(line) for line in out.strip().splitlines()]
        self.assertEqual(lines[-1]["param_sigma"], 1.5)   # from the file
        self.assertEqual(lines[-1]["param_iterations"], 2)  # the command line wins
        self.assertEqual(len(lines), 3)
        self.assertIn("--device auto picked", err)
        self.assertEqual(nib.load(dst).get_data_dtype(), np.int16)

    def test_device_choice(self):
        src = save(self.path("in.nii.gz"), test_volume())
        dst = os.path.join(self.out, "o.nii.gz")
        rc, _, err = run("smooth", src, "-o", dst, "--iterations", "1")
        self.assertEqual(rc, 0, err)
        self.assertRegex(err, r"--device auto picked (cpu|cuda)")
        os.remove(dst)
        if "picked cuda" in err:
            rc, out, err = run("smooth", src, "-o", dst, "--device", "cuda", "--json")
            self.assertEqual(rc, 0, err)
            self.assertEqual(json.loads(out.splitlines()[-1])["device"], "cuda")
        else:  # no device or no CUDA build: asking for it is a runtime failure
            err = self.assert_fails(["smooth", src, "-o", dst, "--device", "cuda"], 1)
            self.assertRegex(err, r"no CUDA device|no CUDA implementation")

    def test_params_file_errors(self):
        src = save(self.path("in.nii.gz"), test_volume())
        ini = self.path("bad.ini")
        write_file(ini, "[smooth]\nsigmaa=1\n")
        dst = os.path.join(self.out, "o.nii.gz")
        self.assert_fails(["smooth", src, "-o", dst, "--params", ini], 1, "bad.ini", "sigmaa")
        self.assert_fails(["smooth", src, "-o", dst, "--params", self.path("none.ini")], 1,
                          "none.ini")

    def test_cancel(self):
        src = save(self.path("big.nii"), np.random.default_rng(1).random((96, 96, 96),
                                                                         dtype=np.float32))
        dst = os.path.join(self.out, "o.nii")
        p = subprocess.Popen([CLI, "smooth", src, "-o", dst, "--sigma", "3",
                              "--iterations", "100000", "--json", "--device", "cpu"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = p.stdout.readline()
        self.assertEqual(json.loads(first)["iteration"], 1)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        self.assertIn("cancelled", err)
        self.assertEqual(os.listdir(self.out), [])


class BadInputTest(CliCase):
    def setUp(self):
        super().setUp()
        self.good = save(self.path("good.nii"), test_volume())
        self.dst = os.path.join(self.out, "o.nii.gz")

    def both(self, src, *fragments):
        """info and smooth refuse src the same way."""
        self.assert_fails(["info", src], 1, os.path.basename(src), *fragments)
        self.assert_fails(["smooth", src, "-o", self.dst], 1, os.path.basename(src), *fragments)

    def test_truncated(self):
        data = read_bytes(self.good)
        bad = self.path("truncated.nii")
        write_file(bad, mode="wb", text=data[: len(data) // 2])
        self.both(bad)
        gz = self.path("truncated.nii.gz")
        write_file(gz, mode="wb", text=gzip.compress(data)[: len(gzip.compress(data)) // 2])
        self.both(gz)

    def test_corrupt_and_wrong_magic(self):
        junk = self.path("junk.nii.gz")
        write_file(junk, mode="wb", text=b"this is not a gzip stream at all" * 20)
        self.both(junk)
        data = bytearray(read_bytes(self.good))
        data[344:348] = b"xyz\0"
        bad = self.path("magic.nii")
        write_file(bad, mode="wb", text=bytes(data))
        self.both(bad)

    def test_absurd_dimensions(self):
        hdr = nib.Nifti1Header()
        hdr.set_data_shape((2048, 1024, 1024))  # 2^31 voxels
        hdr.set_data_dtype(np.uint8)
        bad = self.path("huge.nii")
        with open(bad, "wb") as f:
            f.write(hdr.binaryblock + b"\0" * 4 + b"\1" * 1000)
        self.both(bad)

    def test_nonfinite_refused_by_smooth(self):
        a = test_volume()
        a[0, 0, 0] = np.nan
        a[2, 3, 4] = np.inf
        a[5, 5, 5] = -np.inf
        bad = save(self.path("nan.nii.gz"), a)
        self.assert_fails(["smooth", bad, "-o", self.dst], 1, "nan.nii.gz", "3")

    def test_4d_refused_by_smooth(self):
        bad = save(self.path("four.nii.gz"), np.stack([test_volume()] * 2, axis=-1))
        err = self.assert_fails(["smooth", bad, "-o", self.dst], 1, "four.nii.gz")
        self.assertRegex(err, r"4D|4-D|dim\[4\]")

    def test_missing_and_unreadable(self):
        self.both(self.path("nothere.nii"))
        if IS_ROOT:
            return  # root reads a chmod 000 file anyway
        locked = shutil.copy(self.good, self.path("locked.nii"))
        os.chmod(locked, 0)
        self.both(locked)

    def test_unwritable_output(self):
        self.assert_fails(["smooth", self.good, "-o", self.path("no/such/dir/o.nii")], 1,
                          "no/such/dir")
        self.assert_fails(["smooth", self.good, "-o", self.good], 1, "the output is the input")
        self.assert_fails(["smooth", self.good, "-o", os.path.join(self.out, "o.txt")], 1,
                          "o.txt", "must end in .nii or .nii.gz")
        if IS_ROOT:
            return  # root writes into a 0555 folder anyway
        os.chmod(self.out, 0o555)
        self.assert_fails(["smooth", self.good, "-o", self.dst], 1, "cannot write in folder")

    def test_fifo_input(self):
        fifo = self.path("pipe.nii")
        os.mkfifo(fifo)
        _, _, err = run("info", fifo, timeout=20)  # refused at once, not waited on
        self.assertEqual(err.strip(), f"neurowarp-cli: {fifo}: cannot open: not a regular file "
                                      "(a FIFO, socket or device)")

    def test_unknown_datatype_one_line(self):
        data = bytearray(read_bytes(self.good))
        data[70:72] = (9999).to_bytes(2, "little")
        bad = self.path("dt.nii")
        write_file(bad, mode="wb", text=bytes(data))
        err = self.assert_fails(["info", bad], 1)
        self.assertEqual(err, f"neurowarp-cli: {bad}: unknown datatype code 9999\n")

    def test_nan_sform(self):
        aff = np.diag([2.0, 2.0, 2.0, 1.0])
        aff[0, 3] = np.nan
        bad = save(self.path("nansform.nii.gz"), test_volume(), affine=aff)
        err = self.assert_fails(["info", bad], 1)
        self.assertEqual(err, f"neurowarp-cli: {bad}: the sform holds a non-finite value "
                              "(nan at row 0, column 3)\n")
        self.assert_fails(["smooth", bad, "-o", self.dst], 1, "non-finite")


class OutputTest(CliCase):
    """Outputs: never overwritten without --overwrite, never half written (issue 9, 4-5)."""

    def setUp(self):
        super().setUp()
        self.good = save(self.path("good.nii"), test_volume())
        self.dst = os.path.join(self.out, "o.nii.gz")

    def test_existing_output_needs_overwrite(self):
        write_file(self.dst, "keep me")
        os.chmod(self.dst, 0o444)
        rc, _, err = run("smooth", self.good, "-o", self.dst, "--iterations", "1")
        self.assertEqual(rc, 1)
        self.assertEqual(err, f"neurowarp-cli: {self.dst}: exists already "
                              "(--overwrite replaces it)\n")
        self.assertEqual(read_bytes(self.dst), b"keep me")
        rc, _, err = run("smooth", self.good, "-o", self.dst, "--iterations", "1", "--overwrite")
        self.assertEqual(rc, 0, err)
        self.assertEqual(nib.load(self.dst).shape, (20, 22, 18))
        self.assertEqual(sorted(os.listdir(self.out)), ["o.nii.gz"])

    def test_symlink_output(self):
        target = self.path("target.nii.gz")
        write_file(target, "target")
        os.symlink(target, self.dst)
        rc, _, err = run("smooth", self.good, "-o", self.dst, "--iterations", "1")
        self.assertEqual(rc, 1)
        self.assertIn("exists already", err)
        rc, _, err = run("smooth", self.good, "-o", self.dst, "--iterations", "1", "--overwrite")
        self.assertEqual(rc, 0, err)
        self.assertFalse(os.path.islink(self.dst))  # the link is replaced, its target kept
        self.assertEqual(read_bytes(target), b"target")

    def test_unwritable_outputs_refused_before_work(self):
        os.mkdir(self.dst)
        rc, out, err = run("smooth", self.good, "-o", self.dst, "--json")
        self.assertEqual(rc, 1)
        self.assertEqual(out, "")  # no iteration ran
        self.assertEqual(err, f"neurowarp-cli: {self.dst}: cannot write: is a folder\n")
        os.rmdir(self.dst)
        rc, out, err = run("smooth", self.good, "-o", "/proc/o.nii.gz", "--json")
        self.assertEqual(rc, 1)
        self.assertEqual(out, "")
        self.assertTrue(err.startswith("neurowarp-cli: /proc/o.nii.gz: cannot write in folder "
                                       "/proc: "), err)


class TwoImageTest(CliCase):
    """The frame's checks that come with two-image commands (demons, when built in)."""

    def test_mismatched_grids(self):
        # Other grids are resampled onto the fixed one (cli_demons_test.py); a one-slice image
        # against a volume cannot be registered.
        rc, out, _ = run("--help")
        if "demons" not in out:
            self.skipTest("no two-image command in this build")
        a = save(self.path("a.nii.gz"), test_volume((10, 12, 8)))
        b = save(self.path("b.nii.gz"), test_volume((10, 12, 1)))
        self.assert_fails(["demons", a, b, "-o", os.path.join(self.out, "run")], 1,
                          "a.nii.gz", "b.nii.gz", "10 x 12 x 1", "must be on one grid")


class DemoDataTest(CliCase):
    def test_phantom(self):
        target = os.path.join(self.dir, "demo")
        t0 = time.monotonic()
        rc, out, err = run("demo-data", target, "--phantom", "--seed", "7")
        self.assertEqual(rc, 0, err)
        sys.stderr.write(f"demo-data --phantom: {time.monotonic() - t0:.1f} s\n")
        names = sorted(os.listdir(target))
        expect = sorted([f"{s}_{r}.nii.gz" for r in ("1mm", "2mm")
                         for s in ("fixed", "moving", "fixed_labels", "moving_labels",
                                   "true_field")] + ["README.txt"])
        self.assertEqual(names, expect)
        readme = read_bytes(os.path.join(target, "README.txt")).decode()
        self.assertIn("Seed: 7", readme)
        self.assertIn("phantom", readme)
        for res, shape in (("1mm", (120, 144, 120)), ("2mm", (60, 72, 60))):
            fixed = nib.load(os.path.join(target, f"fixed_{res}.nii.gz"))
            self.assertEqual(fixed.shape, shape)
            for s in ("moving", "fixed_labels", "moving_labels"):
                img = nib.load(os.path.join(target, f"{s}_{res}.nii.gz"))
                self.assertEqual(img.shape, shape)
                np.testing.assert_allclose(img.affine, fixed.affine, atol=1e-4)
            lab = np.asarray(nib.load(os.path.join(target, f"moving_labels_{res}.nii.gz"))
                             .dataobj)
            self.assertEqual(sorted(np.unique(lab).tolist()), list(range(10)))
            field = nib.load(os.path.join(target, f"true_field_{res}.nii.gz"))
            self.assertEqual(field.shape, shape + (1, 3))
            self.assertEqual(int(field.header["intent_code"]), 1007)
            mag = np.sqrt((np.asarray(field.dataobj, np.float64) ** 2).sum(axis=-1))
            self.assertAlmostEqual(float(mag.max()), 4.0, places=3)  # mm
        rc, _, _ = run("demo-data", target + "2", "--phantom", "--seed", "7")
        # determinism: the same seed gives the same voxels (gzip headers may carry names)
        a = np.asarray(nib.load(os.path.join(target, "moving_2mm.nii.gz")).dataobj)
        b = np.asarray(nib.load(os.path.join(target + "2", "moving_2mm.nii.gz")).dataobj)
        self.assertEqual(rc, 0)
        self.assertTrue(np.array_equal(a, b))
        shutil.rmtree(target + "2")

    def test_demo_data_errors(self):
        blocker = self.path("file")
        write_file(blocker, "x")
        self.assert_fails(["demo-data", os.path.join(blocker, "sub")], 1, "file/sub")
        self.assert_fails(["demo-data"], 2, "missing DIR")
        self.assert_fails(["demo-data", self.out, "--seed", "-1"], 2, "--seed")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: cli_test.py /path/to/neurowarp-cli")
    CLI = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
