#!/usr/bin/env python3
"""cli_demons_test.py — end-to-end tests of `neurowarp-cli demons` (app/cli_demons.c), run by
ctest under the system Python (nibabel, numpy): the outputs and their NIfTI conventions read
back with nibabel (an independent reader), the summary JSON, label Dice, and bad input with
its exit code and one-line message.

The pair is a textured blob and the same blob shifted by one voxel along i, so the forward
field is known: fixed(x) = moving(x + e_i), i.e. +1 voxel = +2 mm along the first axis, which
the affine below points to world R: RAS (+2, 0, 0) mm, ITK/LPS (-2, 0, 0) mm.

DemonsGrids: the same pair with the moving image on other grids (a same-size LAS copy, another
size, voxel size and orientation) and through a known rigid --initial-transform: the written
forward field must map fixed points to the ORIGINAL moving image's points (docs/FIELDS.md).

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
    return phantom_at(i, j, k)


def phantom_at(i, j, k):
    """The phantom at continuous voxel coordinates of the fixed grid (arrays)."""
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
        self.register("--fixed-labels", self.fl, "--moving-labels", self.ml, "--outputs", "all")
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
        self.assertGreater(s["time_s"]["register"], 0.0)
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
        # Other grids are resampled (DemonsGrids); a one-slice image against a volume cannot be.
        flat = save(os.path.join(self.dir, "flat.nii.gz"), np.ones((N, N, 1), np.float32))
        code, _, err = run("demons", self.fixed, flat, "-o", self.prefix)
        self.assertEqual(code, 1)
        self.assertEqual(err, f"neurowarp-cli: {self.fixed} is {N} x {N} x {N} but {flat} is "
                              f"{N} x {N} x 1: the images must be on one grid\n")
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
            "warped.nii.gz", "forward.nii.gz", "summary.json")))

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


LPS = np.array([-1.0, -1.0, 1.0])


def to_fixed_voxels(world):
    """Continuous fixed-grid voxel coordinates of world (RAS mm) points (..., 3)."""
    return (world - AFFINE[:3, 3]) @ np.linalg.inv(AFFINE[:3, :3]).T


def grid_world(affine, shape):
    """World (RAS mm) positions of every voxel of a grid, shape (*shape, 3)."""
    idx = np.stack(np.meshgrid(*[np.arange(n) for n in shape], indexing="ij"), -1)
    return idx @ affine[:3, :3].T + affine[:3, 3]


def moving_at(world):
    """The moving phantom (the fixed one moved by +2 mm along R) at world points."""
    v = to_fixed_voxels(world)
    return phantom_at(v[..., 0] - 1.0, v[..., 1], v[..., 2])[0]


def rot_z(deg):
    a = np.radians(deg)
    return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1.0]])


def write_itk(path, t):
    """t (4x4, fixed world -> moving world, RAS) as an ITK text transform (LPS, centre 0)."""
    lps = np.diag([-1.0, -1.0, 1.0, 1.0]) @ t @ np.diag([-1.0, -1.0, 1.0, 1.0])
    params = list(lps[:3, :3].ravel()) + list(lps[:3, 3])
    with open(path, "w") as fh:
        fh.write("#Insight Transform File V1.0\n#Transform 0\n"
                 "Transform: AffineTransform_double_3_3\n"
                 f"Parameters: {' '.join(repr(float(p)) for p in params)}\n"
                 "FixedParameters: 0 0 0\n")


class DemonsGrids(unittest.TestCase):
    setUp = DemonsCli.setUp
    tearDown = DemonsCli.tearDown
    outputs = DemonsCli.outputs

    def demons(self, moving, prefix, *extra):
        code, out, err = run("demons", self.fixed, moving, "-o", os.path.join(self.dir, prefix),
                             "--levels", "2", "--iterations", "20", "--device", "cpu", *extra)
        self.assertEqual(code, 0, err)
        return os.path.join(self.dir, prefix)

    def field_ras(self, prefix, name="forward"):
        img = nib.load(f"{prefix}_{name}.nii.gz")
        return img.get_fdata()[..., 0, :] * LPS, img

    def test_las_copy_as_one_grid(self):
        flip = np.array([[-1.0, 0, 0, N - 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
        las_affine = AFFINE @ flip
        m = np.ascontiguousarray(nib.load(self.moving).get_fdata().astype(np.float32)[::-1])
        ml = np.ascontiguousarray(nib.load(self.ml).get_fdata().astype(np.int16)[::-1])
        las = os.path.join(self.dir, "las.nii.gz")
        las_l = os.path.join(self.dir, "las_l.nii.gz")
        nib.save(nib.Nifti1Image(m, las_affine), las)
        nib.save(nib.Nifti1Image(ml, las_affine), las_l)
        ref = self.demons(self.moving, "one")
        got = self.demons(las, "las", "--fixed-labels", self.fl, "--moving-labels", las_l,
                          "--outputs", "all")
        u0, _ = self.field_ras(ref)
        u1, _ = self.field_ras(got)
        diff = float(np.abs(u1 - u0)[self.r < 0.7].max())
        print(f"LAS copy: max |forward - one-grid forward| inside = {diff:.2e} mm",
              file=sys.stderr)
        self.assertLess(diff, 1e-3)
        self.assertAlmostEqual(float(np.median(u1[self.r < 0.7][:, 0])), 2.0, delta=0.4)
        w0 = nib.load(f"{ref}_warped.nii.gz").get_fdata()
        w1 = nib.load(f"{got}_warped.nii.gz").get_fdata()
        # Inside: at the border the job's warp clamps where ours gives background (0).
        self.assertLess(float(np.abs(w1 - w0)[self.r < 1.0].max()), 1e-2)
        # The inverse lies on the moving (LAS) grid and maps it back: RAS -2 mm along R.
        inv, img = self.field_ras(got, "inverse")
        np.testing.assert_allclose(img.affine, las_affine, atol=1e-4)
        self.assertAlmostEqual(float(np.median(inv[::-1][self.r < 0.7][:, 0])), -2.0, delta=0.4)
        with open(f"{got}_summary.json") as fh:
            s = json.load(fh)
        self.assertTrue(s["moving_resampled"])
        self.assertIsNone(s["initial_transform"])
        self.assertGreater(s["mean_dice"], 0.9)

    def test_other_size_spacing_orientation(self):
        shape = (30, 28, 26)
        lin = rot_z(15.0) * 1.6
        centre = AFFINE[:3, :3] @ np.full(3, (N - 1) / 2.0) + AFFINE[:3, 3]
        aff = np.eye(4)
        aff[:3, :3] = lin
        aff[:3, 3] = centre - lin @ ((np.array(shape) - 1) / 2.0)
        other = os.path.join(self.dir, "other.nii.gz")
        m = moving_at(grid_world(aff, shape)).astype(np.float32)
        nib.save(nib.Nifti1Image(m, aff), other)
        got = self.demons(other, "other", "--outputs", "warped,forward,inverse")
        u, _ = self.field_ras(got)
        inside = self.r < 0.7
        med = np.median(u[inside], axis=0)
        print(f"other grid: median forward inside = {np.round(med, 3)} mm (truth 2 0 0)",
              file=sys.stderr)
        np.testing.assert_allclose(med, [2.0, 0.0, 0.0], atol=0.4)
        f = nib.load(self.fixed).get_fdata()
        w = nib.load(f"{got}_warped.nii.gz").get_fdata()
        before = nib.load(self.moving).get_fdata()
        self.assertLess(np.mean((w - f) ** 2), 0.25 * np.mean((before - f) ** 2))
        self.assertEqual(nib.load(f"{got}_inverse.nii.gz").shape, (*shape, 1, 3))

    def test_initial_transform_composed(self):
        centre = AFFINE[:3, :3] @ np.full(3, (N - 1) / 2.0) + AFFINE[:3, 3]
        t = np.eye(4)
        t[:3, :3] = rot_z(10.0)
        t[:3, 3] = centre - rot_z(10.0) @ centre + np.array([4.0, -3.0, 2.0])
        tfile = os.path.join(self.dir, "rigid.txt")
        write_itk(tfile, t)
        # Moving on the fixed grid: M(y) = moving phantom at T^-1 y, so fixed x <-> T(x + d).
        world = grid_world(AFFINE, (N, N, N))
        back = (world - t[:3, 3]) @ np.linalg.inv(t[:3, :3]).T
        moved = os.path.join(self.dir, "moved.nii.gz")
        save(moved, moving_at(back).astype(np.float32))
        got = self.demons(moved, "init", "--initial-transform", tfile)
        u, _ = self.field_ras(got)
        truth = (world + [2.0, 0.0, 0.0]) @ t[:3, :3].T + t[:3, 3]
        err = np.linalg.norm(world + u - truth, axis=-1)[self.r < 0.7]
        print(f"initial transform: |x + d(x) - T(x + d_true)| inside: median "
              f"{np.median(err):.3f} mm, 90th percentile {np.percentile(err, 90):.3f} mm",
              file=sys.stderr)
        self.assertLess(float(np.median(err)), 0.4)
        self.assertLess(float(np.percentile(err, 90)), 1.0)
        with open(f"{got}_summary.json") as fh:
            s = json.load(fh)
        self.assertEqual(s["initial_transform"], tfile)
        np.testing.assert_allclose(np.array(s["initial_matrix_ras"]), t, atol=1e-6)

    def test_unreadable_transform(self):
        missing = os.path.join(self.dir, "nothere.txt")
        code, _, err = run("demons", self.fixed, self.moving, "-o", self.prefix,
                           "--initial-transform", missing)
        self.assertEqual(code, 1)
        self.assertEqual(err, f"neurowarp-cli: {missing}: cannot open: No such file or directory\n")
        bad = os.path.join(self.dir, "bad.txt")
        with open(bad, "w") as fh:
            fh.write("#Insight Transform File V1.0\nTransform: BSplineTransform_double_3_3\n"
                     "Parameters: 1 2 3\nFixedParameters: 0 0 0\n")
        code, _, err = run("demons", self.fixed, self.moving, "-o", self.prefix,
                           "--initial-transform", bad)
        self.assertEqual(code, 1)
        self.assertEqual(err, f"neurowarp-cli: {bad}: transform type BSplineTransform_double_3_3 "
                              "is not supported (affine, matrix-offset, Euler, rigid, "
                              "versor-rigid, similarity and translation transforms are)\n")
        self.assertEqual(self.outputs(), [])


if __name__ == "__main__":
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
