#!/usr/bin/env python3
"""affine_dist_cli_test.py — `neurowarp-cli affine --distributed` (app/cli_affine_dist.c,
issue 16), under the system Python (nibabel, numpy). The distributed metric's histograms are
the single-process ones exactly (integer counts), so with --parzen false the distributed
registration must find the single-process MI run's transform: every layout, both strategies,
2 and 4 ranks of mpirun (with a second argument), one rank cut into blocks by --memory-cap,
NIfTI (.nii, .nii.gz, 3D) and TIFF inputs. The messages of bad --blocks, a cap too small, a
metric other than mi and a missing file are checked word for word, with nothing written.

The images: a smooth 2D phantom (discs, a bar, a texture) and the same turned by 9 degrees and
moved, 120 x 104 pixels; a 3D one of 40 x 36 x 28 voxels. Each run takes under a second.

With a third argument "cuda": 2 ranks on the one GPU (skipped without a GPU).

Usage: affine_dist_cli_test.py /path/to/neurowarp-cli [/path/to/mpirun [cuda]]
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import nibabel as nib
    import numpy as np
except ImportError:
    print("SKIP: nibabel and numpy are needed")
    sys.exit(77)

CLI = None
MPIRUN = None
ENV = dict(os.environ, OMP_NUM_THREADS="1")  # beside other tests (ctest -j)
TOL = 1e-9  # the same costs give the same simplex path: equal to rounding of the text


def phantom(shape, angle_deg=0.0, shift=(0.0, 0.0, 0.0)):
    """Smooth shapes at world points p = R^-1 (x - c - t) + c (the moving image: the fixed one
    turned by angle about z through the centre c and moved by t), x, y, z voxel = mm."""
    nz = shape[2]
    z, y, x = np.meshgrid(np.arange(nz), np.arange(shape[1]), np.arange(shape[0]), indexing="ij")
    c = [(s - 1) / 2.0 for s in shape]
    a = math.radians(angle_deg)
    dx, dy = x - c[0] - shift[0], y - c[1] - shift[1]
    px = math.cos(a) * dx + math.sin(a) * dy + c[0]
    py = -math.sin(a) * dx + math.cos(a) * dy + c[1]
    pz = z - shift[2]

    def blob(cx, cy, cz, r, v):
        d2 = (px - cx) ** 2 + (py - cy) ** 2 + ((pz - cz) ** 2 if nz > 1 else 0.0)
        return v / (1.0 + np.exp((np.sqrt(d2) - r) / 1.2))

    img = blob(c[0], c[1], c[2], 0.36 * shape[0], 100.0)
    img += blob(0.35 * shape[0], 0.4 * shape[1], c[2], 0.1 * shape[0], 60.0)
    img += blob(0.65 * shape[0], 0.62 * shape[1], c[2], 0.07 * shape[0], -50.0)
    img += 15.0 * np.sin(px / 5.0) * np.cos(py / 7.0) * (img > 20)
    return np.ascontiguousarray(img.transpose(2, 1, 0)).astype(np.float32)  # x fastest


def save_nifti(path, a):
    nib.save(nib.Nifti1Image(a, np.eye(4)), path)


# NW_RANK_WRAPPER: a command each mpirun rank runs the CLI under, e.g. "compute-sanitizer
# --tool racecheck --error-exitcode 9" (scripts/gpu-host/test.sh checks the CUDA ranks so: two
# processes, each its own CUDA context, where test_cuda_dmi's thread ranks share one).
WRAPPER = os.environ.get("NW_RANK_WRAPPER", "").split()


def run(args, ranks=None, cli=None):
    cmd = (([MPIRUN, "-n", str(ranks), "--oversubscribe"] + WRAPPER) if ranks else []) + \
        [cli or CLI, "affine"] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=ENV)
    if WRAPPER and ranks:  # the tool's findings (the first 80 lines) and verdicts, for the log
        lines = [l for l in (p.stdout + p.stderr).splitlines() if l.startswith("=========")]
        for line in [l for l in lines if "SUMMARY" not in l][:80] + \
                [l for l in lines if "SUMMARY" in l]:
            print(line, flush=True)
    return p.returncode, p.stdout, p.stderr


def parameters(prefix):
    with open(prefix + "_affine.txt") as f:
        for line in f:
            if line.startswith("Parameters:"):
                return [float(v) for v in line.split()[1:]]
    raise AssertionError(prefix + "_affine.txt has no Parameters line")


class DistBase(unittest.TestCase):
    MI = ["--metric", "mi", "--parzen", "false", "--device", "cpu"]

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="nw-dmi-")
        shape2, shape3 = (120, 104, 1), (40, 36, 28)
        save_nifti(cls.p("fixed.nii"), phantom(shape2))
        save_nifti(cls.p("moving.nii.gz"), phantom(shape2, 9.0, (3.0, -2.0, 0.0)))
        save_nifti(cls.p("fixed3.nii.gz"), phantom(shape3))
        save_nifti(cls.p("moving3.nii"), phantom(shape3, 6.0, (1.5, -1.0, 1.0)))
        cls.refs = {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def p(cls, name):
        return os.path.join(cls.dir, name)

    def reference(self, fixed, moving, extra=()):
        """The single-process MI run (plain bins), once per pair, at the distributed metric's
        precision (single: it keeps float blocks; the default u16 storage is the CPU and CUDA
        costs')."""
        key = (fixed, moving, tuple(extra))
        if key not in self.refs:
            prefix = self.p("ref%d" % len(self.refs))
            code, _, err = run([self.p(fixed), self.p(moving), "-o", prefix, "--precision", "single"]
                               + self.MI + list(extra))
            self.assertEqual(code, 0, err)
            self.refs[key] = parameters(prefix)
        return self.refs[key]

    def distributed(self, fixed, moving, name, args, ranks=None, extra=()):
        prefix = self.p(name)
        code, out, err = run([self.p(fixed), self.p(moving), "-o", prefix, "--distributed"] +
                             self.MI + list(extra) + args, ranks)
        self.assertEqual(code, 0, err)
        self.assertFalse(os.path.exists(prefix + "_warped.nii.gz"))
        with open(prefix + "_summary.json") as f:
            summary = json.load(f)
        return parameters(prefix), summary

    def assertSameTransform(self, got, want):
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertLessEqual(abs(g - w), TOL, (got, want))


class DistSingle(DistBase):
    """One rank (no mpirun): blocks from --blocks or --memory-cap, taken in turn."""

    def test_blocks_one_rank(self):
        want = self.reference("fixed.nii", "moving.nii.gz")
        for strategy in ("replicated", "distributed"):
            for args in (["--blocks", "2x2"], ["--memory-cap", "0.02"], ["--blocks", "1x3"]):
                got, s = self.distributed("fixed.nii", "moving.nii.gz", "one-" + strategy,
                                          ["--strategy", strategy, "--overwrite"] + args)
                self.assertSameTransform(got, want)
                d = s["distributed"]
                self.assertEqual((d["ranks"], d["strategy"]), (1, strategy))
                self.assertEqual(d["remote_requests"], 0)  # one rank holds every block
                if "--memory-cap" in args:
                    self.assertGreater(d["blocks"], 1)
                    self.assertLessEqual(d["block_mb"], 0.02)
        # the true motion, roughly (the registration itself works)
        self.assertAlmostEqual(abs(math.degrees(math.atan2(want[1], want[0]))), 9.0, delta=0.3)

    def test_messages(self):
        base = [self.p("fixed.nii"), self.p("moving.nii.gz"), "-o", self.p("bad"), "--distributed"]
        cases = [
            (["--metric", "mi", "--blocks", "1x40"], 2,
             "--blocks 1x40: 40 blocks along y of an image 104 voxels long leave fewer than 4 "
             "voxels a block"),
            (["--metric", "mi", "--blocks", "2by2"], 2,
             "--blocks '2by2': expected AxB or AxBxC with positive whole numbers, e.g. 2x2"),
            (["--metric", "mi", "--blocks", "2x2x2"], 2,
             "--blocks 2x2x2: the image is 2D (120 x 104): its layout is AxB"),
            (["--metric", "mi", "--memory-cap", "0.001"], 2,
             "--memory-cap 0.001 MB is too small for the fixed image (120 x 104 x 1 voxels): "
             "the smallest blocks tried (360 blocks) take 0.00874 MB each"),
            (["--metric", "mi", "--blocks", "2x2", "--memory-cap", "0.01"], 2,
             "--blocks 2x2: a block takes 0.035 MB, more than --memory-cap 0.01 MB"),
            (["--metric", "ncc"], 2,
             "--distributed evaluates mutual information: add --metric mi (the metric is ncc)"),
            (["--metric", "mi", "--strategy", "scattered"], 2,
             "--strategy 'scattered': expected replicated or distributed"),
        ]
        for strategy in ("replicated", "distributed"):
            for args, code, message in cases:
                if "--strategy" not in args:
                    args = args + ["--strategy", strategy]
                c, _, err = run(base + args)
                self.assertEqual(c, code, err)
                self.assertEqual(err.splitlines()[0], "neurowarp-cli affine: " + message)
                self.assertEqual([f for f in os.listdir(self.dir) if f.startswith("bad")], [])
        c, _, err = run([self.p("fixed.nii"), self.p("nope.nii"), "-o", self.p("bad"),
                         "--distributed", "--metric", "mi"])
        self.assertEqual(c, 1)
        self.assertEqual(err.strip(), "neurowarp-cli: %s: no such file" % self.p("nope.nii"))
        c, _, err = run([self.p("fixed.nii"), self.p("moving.nii.gz"), "-o", self.p("bad"),
                         "--blocks", "2x2"])
        self.assertEqual(c, 2)
        self.assertIn("--strategy, --blocks and --memory-cap go with --distributed", err)


class DistMpi(DistBase):
    """2 and 4 ranks of mpirun: both strategies, several layouts, 3D, TIFF."""

    def setUp(self):
        if MPIRUN is None:
            self.skipTest("no mpirun given (a build without MPI)")

    def test_ranks_and_strategies(self):
        want = self.reference("fixed.nii", "moving.nii.gz")
        for ranks, layouts in ((2, (None, "2x2")), (4, (None, "1x4", "4x2"))):
            found = {}
            for strategy in ("replicated", "distributed"):
                for layout in layouts:
                    args = ["--strategy", strategy, "--overwrite"]
                    args += ["--blocks", layout] if layout else []
                    got, s = self.distributed("fixed.nii", "moving.nii.gz",
                                              "r%d-%s" % (ranks, strategy), args, ranks)
                    self.assertSameTransform(got, want)
                    d = s["distributed"]
                    self.assertEqual(d["ranks"], ranks)
                    # the distributed strategy sends the samples other ranks hold
                    self.assertEqual(d["remote_requests"] > 0, strategy == "distributed")
                    found[strategy] = got
            self.assertSameTransform(found["replicated"], found["distributed"])

    def test_3d_and_cap(self):
        want = self.reference("fixed3.nii.gz", "moving3.nii", ["--levels", "2"])
        for strategy in ("replicated", "distributed"):
            got, s = self.distributed("fixed3.nii.gz", "moving3.nii", "v3-" + strategy,
                                      ["--strategy", strategy, "--memory-cap", "0.05",
                                       "--overwrite"], 2, ["--levels", "2"])
            self.assertSameTransform(got, want)
            self.assertGreater(s["distributed"]["blocks"], 2)

    def test_tiff_input(self):
        try:
            from PIL import Image  # noqa: F401
        except ImportError:
            self.skipTest("PIL is not installed")
        from PIL import Image
        for name, src in (("fixed.tif", "fixed.nii"), ("moving.tif", "moving.nii.gz")):
            a = np.asarray(nib.load(self.p(src)).dataobj)[:, :, 0].T[::-1]  # top row first
            Image.fromarray(np.clip(a * 200 + 5000, 0, 65535).astype(np.uint16)).save(
                self.p(name), compression="tiff_deflate")
        want = self.reference("fixed.tif", "moving.tif")
        for strategy in ("replicated", "distributed"):
            got, s = self.distributed("fixed.tif", "moving.tif", "tif-" + strategy,
                                      ["--strategy", strategy, "--overwrite"], 2)
            self.assertSameTransform(got, want)
            self.assertEqual(s["distributed"]["fixed_read_by"], "tiff strips")


class DistMpiCuda(DistBase):
    """2 ranks of mpirun sharing the one GPU (--device cuda: cuda/dmi_cuda.cu), both
    strategies, and the replicated one under a memory cap (partial resident windows): the
    single-process CPU run's transform (the GPU's counts are the CPU's)."""

    def setUp(self):
        if MPIRUN is None:
            self.skipTest("no mpirun given (a build without MPI)")

    def test_cuda_two_ranks(self):
        want = self.reference("fixed.nii", "moving.nii.gz")
        cuda = [a if a != "cpu" else "cuda" for a in self.MI]
        # the last: a cap that leaves the replicated strategy's resident windows smaller than
        # the rotated blocks need, so they move as the simplex does (dmi_window.h)
        for name, args in (("replicated", ["--strategy", "replicated", "--blocks", "2x2"]),
                           ("distributed", ["--strategy", "distributed", "--blocks", "2x2"]),
                           ("replicated-cap", ["--strategy", "replicated",
                                               "--memory-cap", "0.05"])):
            prefix = self.p("cuda-" + name)
            code, _, err = run([self.p("fixed.nii"), self.p("moving.nii.gz"), "-o", prefix,
                                "--distributed"] + args + ["--overwrite"] + cuda, 2)
            self.assertEqual(code, 0, err)
            with open(prefix + "_summary.json") as f:
                self.assertEqual(json.load(f)["distributed"]["metric_device"], "cuda")
            self.assertSameTransform(parameters(prefix), want)


if __name__ == "__main__":
    CLI = sys.argv[1]
    if len(sys.argv) > 2:
        MPIRUN = sys.argv[2]
        ENV.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")  # CI containers run as root
        ENV.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    which = "DistMpi" if MPIRUN else "DistSingle"
    if len(sys.argv) > 3 and sys.argv[3] == "cuda":
        # without a usable GPU the whole test is skipped (77), as the C CUDA tests are
        d = tempfile.mkdtemp(prefix="nw-dmi-probe-")
        save_nifti(os.path.join(d, "f.nii"), phantom((32, 32, 1)))
        p = subprocess.run([CLI, "affine", os.path.join(d, "f.nii"), os.path.join(d, "f.nii"),
                            "-o", os.path.join(d, "o"), "--metric", "mi", "--distributed",
                            "--device", "cuda", "--levels", "1", "--iterations", "2"],
                           capture_output=True, text=True, env=ENV)
        shutil.rmtree(d, ignore_errors=True)
        if p.returncode != 0:
            print("SKIP: no CUDA device (" + p.stderr.strip()[:200] + ")")
            sys.exit(77)
        which = "DistMpiCuda"
    unittest.main(argv=sys.argv[:1] + [which])
