#!/usr/bin/env python3
"""affine_cli_test.py — `neurowarp-cli affine` and `neurowarp-cli resample` end to end, with
every transform file checked by readers that are not the project's own: SimpleITK (PyPI, in
the .venv that scripts/install-deps.sh makes) reads PREFIX_affine.txt and PREFIX_affine.mat
and resamples with them; FSL's FLIRT convention is recomputed here from nibabel's headers;
and transforms SimpleITK writes are read back by `resample`. Also: recovery of a known
transform between images on different grids, the 2D path (ITK's example PNGs as one-slice
NIfTI), one-line errors that name the file, and no outputs left by a failed run.

Usage: affine_cli_test.py /path/to/neurowarp-cli
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

try:
    import numpy as np
    import nibabel as nib
    import SimpleITK as sitk
except ImportError as e:
    print(f"SKIP: {e.name} is not installed (scripts/install-deps.sh puts SimpleITK in .venv)")
    sys.exit(77)

CLI = None
ITK_DATA = "/usr/share/doc/insighttoolkit5-examples/examples/Data/"
LPS = np.diag([-1.0, -1.0, 1.0, 1.0])


def run(*args, timeout=240):
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def phantom(n=48):
    """Textured ellipsoid, float32, (i, j, k) order."""
    i, j, k = np.meshgrid(*(np.arange(n, dtype=float),) * 3, indexing="ij")
    c = (n - 1) / 2.0
    r = np.sqrt(((i - c) / 17.0) ** 2 + ((j - c) / 14.0) ** 2 + ((k - c) / 12.0) ** 2)
    body = 1.0 / (1.0 + np.exp((r - 1.0) * 8.0))
    tex = 1.0 + 0.5 * np.sin(0.35 * i) * np.cos(0.3 * j) + 0.3 * np.sin(0.33 * k + 0.2 * i)
    return (100.0 * body * tex).astype(np.float32), r


def sitk_matrix(tx):
    """The 4x4 LPS map of a SimpleITK transform, from where it sends the origin and axes."""
    o = np.array(tx.TransformPoint((0.0,) * tx.GetDimension()))
    m = np.eye(4)
    d = tx.GetDimension()
    for a in range(d):
        e = [0.0] * d
        e[a] = 1.0
        m[:d, a] = np.array(tx.TransformPoint(tuple(e))) - o
    m[:d, 3] = o
    return m


def fsl_voxel_to_scaled(img):
    """FSL's coordinates of voxel (i, j, k): index times pixdim, i reversed when the
    voxel-to-world determinant is positive (FSL's radiological storage convention)."""
    zooms = np.array(img.header.get_zooms()[:3], dtype=float)
    w = np.diag(list(zooms) + [1.0])
    if np.linalg.det(img.affine[:3, :3]) > 0:
        w[0, 0] = -zooms[0]
        w[0, 3] = (img.shape[0] - 1) * zooms[0]
    return w


class AffineCli(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="nw-affine-cli-")
        data, cls.r = phantom()
        # fixed: 2 mm, LAS voxel order, oblique origin; moving: another grid (1.6 mm, RAS)
        af = np.array([[-2.0, 0, 0, 50], [0, 2.0, 0, -40], [0, 0, 2.0, -30], [0, 0, 0, 1]])
        cls.fixed = os.path.join(cls.dir, "fixed.nii.gz")
        nib.save(nib.Nifti1Image(data, af), cls.fixed)
        fixed = sitk.ReadImage(cls.fixed, sitk.sitkFloat32)
        cls.centre = np.array(fixed.TransformContinuousIndexToPhysicalPoint(
            [(s - 1) / 2.0 for s in fixed.GetSize()]))
        # the truth, fixed -> moving (LPS): 12, -9 and 15 degrees and (7, -11, 6) mm
        cls.truth = sitk.Euler3DTransform(tuple(cls.centre), np.radians(12), np.radians(-9),
                                          np.radians(15), (7.0, -11.0, 6.0))
        grid = sitk.Image([60, 60, 60], sitk.sitkFloat32)
        grid.SetSpacing((1.6, 1.6, 1.6))
        grid.SetOrigin(tuple(cls.centre - 1.6 * 29.5 + np.array([3.0, -2.0, 1.0])))
        moving = sitk.Resample(fixed, grid, cls.truth.GetInverse(), sitk.sitkBSpline, 0.0)
        cls.moving = os.path.join(cls.dir, "moving.nii.gz")
        sitk.WriteImage(moving, cls.moving)
        cls.prefix = os.path.join(cls.dir, "reg")
        code, out, err = run("affine", cls.fixed, cls.moving, "-o", cls.prefix, "--levels", 3,
                             "--tolerance", 0.05, "--device", "cpu")
        cls.reg = (code, out, err)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def assert_outputs(self, prefix):
        """The five files a registration writes, and no others."""
        base = os.path.basename(prefix)
        names = sorted(os.path.basename(p) for p in glob.glob(prefix + "_*"))
        self.assertEqual(names, [base + s for s in ("_affine.mat", "_affine.txt", "_fsl.mat",
                                                    "_summary.json", "_warped.nii.gz")])

    def assert_warped_is_resampled(self, prefix):
        """PREFIX_warped equals SimpleITK's resampling of the moving image with PREFIX's
        transform, inside the phantom."""
        tx = sitk.ReadTransform(prefix + "_affine.txt")
        fixed = sitk.ReadImage(self.fixed, sitk.sitkFloat32)
        moving = sitk.ReadImage(self.moving, sitk.sitkFloat32)
        theirs = sitk.GetArrayFromImage(sitk.Resample(moving, fixed, tx, sitk.sitkLinear, 0.0))
        ours = sitk.GetArrayFromImage(sitk.ReadImage(prefix + "_warped.nii.gz"))
        inside = np.transpose(self.r, (2, 1, 0)) < 0.9  # sitk arrays are (k, j, i)
        self.assertLess(np.abs(theirs - ours)[inside].max(), 1e-3)

    def test_outputs_and_summary(self):
        code, out, err = self.reg
        self.assertEqual(code, 0, err)
        self.assert_outputs(self.prefix)
        with open(self.prefix + "_summary.json") as f:
            s = json.load(f)
        self.assertEqual(s["transform"]["kind"], "rigid")
        self.assertEqual(s["transform"]["dim"], 3)
        self.assertEqual(len(s["outputs"]), 5)
        # the summary's RAS matrix is the truth's (LPS -> RAS)
        truth_ras = LPS @ sitk_matrix(self.truth) @ LPS
        self.assertLess(np.abs(np.array(s["transform"]["matrix_ras"]) - truth_ras).max(), 0.3)
        # the reported angles in the documented convention, R = Rz Ry Rx (RAS, degrees),
        # rebuild the truth's rotation (the summary's translation is about the fixed centre)
        rx, ry, rz = np.radians(s["transform"]["rotation_deg"])
        c, sn = np.cos, np.sin
        r = (np.array([[c(rz), -sn(rz), 0], [sn(rz), c(rz), 0], [0, 0, 1]])
             @ np.array([[c(ry), 0, sn(ry)], [0, 1, 0], [-sn(ry), 0, c(ry)]])
             @ np.array([[1, 0, 0], [0, c(rx), -sn(rx)], [0, sn(rx), c(rx)]]))
        self.assertLess(np.degrees(np.abs(r - truth_ras[:3, :3]).max()), 0.2)
        centre_ras = s["transform"]["centre_mm"]
        self.assertLess(np.abs(np.array(centre_ras) - LPS[:3, :3] @ self.centre).max(), 1e-6)
        t_ras = truth_ras[:3, :3] @ centre_ras + truth_ras[:3, 3] - centre_ras
        self.assertLess(np.abs(np.array(s["transform"]["translation_mm"]) - t_ras).max(), 0.2)

    def check_itk_file(self, path):
        """SimpleITK reads our file; it maps points as the truth does (0.2 mm)."""
        tx = sitk.ReadTransform(path)
        rng = np.random.default_rng(1)
        for _ in range(20):
            p = tuple(self.centre + rng.uniform(-30, 30, 3))
            d = np.array(tx.TransformPoint(p)) - np.array(self.truth.TransformPoint(p))
            self.assertLess(np.linalg.norm(d), 0.2, f"{path} at {p}")
        return tx

    def test_itk_text_read_by_simpleitk(self):
        self.check_itk_file(self.prefix + "_affine.txt")

    def test_itk_mat_read_by_simpleitk(self):
        txt = sitk_matrix(sitk.ReadTransform(self.prefix + "_affine.txt"))
        mat = sitk_matrix(self.check_itk_file(self.prefix + "_affine.mat"))
        self.assertLess(np.abs(txt - mat).max(), 1e-9)

    def test_warped_equals_simpleitk_resample(self):
        self.assert_warped_is_resampled(self.prefix)

    def test_fsl_matrix_from_nibabel(self):
        fixed, moving = nib.load(self.fixed), nib.load(self.moving)
        t_ras = LPS @ sitk_matrix(sitk.ReadTransform(self.prefix + "_affine.txt")) @ LPS
        want = (fsl_voxel_to_scaled(fixed) @ np.linalg.inv(fixed.affine) @ np.linalg.inv(t_ras)
                @ moving.affine @ np.linalg.inv(fsl_voxel_to_scaled(moving)))
        ours = np.loadtxt(self.prefix + "_fsl.mat")
        self.assertLess(np.abs(ours - want).max(), 1e-6)
        # and resample reads it back to the same image as the ITK file gives
        a, b = os.path.join(self.dir, "via_fsl.nii.gz"), os.path.join(self.dir, "via_itk.nii.gz")
        for t, out in ((self.prefix + "_fsl.mat", a), (self.prefix + "_affine.txt", b)):
            code, _, err = run("resample", self.moving, "--like", self.fixed, "--transform", t,
                               "-o", out, "--overwrite")
            self.assertEqual(code, 0, err)
        self.assertLess(np.abs(nib.load(a).get_fdata() - nib.load(b).get_fdata()).max(), 1e-3)

    def test_resample_reads_simpleitk_files(self):
        """Transforms SimpleITK writes (Euler3D text about another centre, affine .mat)."""
        fixed = sitk.ReadImage(self.fixed, sitk.sitkFloat32)
        moving = sitk.ReadImage(self.moving, sitk.sitkFloat32)
        euler = sitk.Euler3DTransform((1.0, 2.0, 3.0), 0.1, -0.05, 0.2, (2.0, -3.0, 1.5))
        aff = sitk.AffineTransform(3)
        aff.SetMatrix((1.05, 0.02, 0.0, -0.03, 0.97, 0.01, 0.0, 0.04, 1.02))
        aff.SetCenter((5.0, -4.0, 2.0))
        aff.SetTranslation((1.0, 2.0, -1.0))
        for name, tx in (("euler.txt", euler), ("aff.mat", aff)):
            path = os.path.join(self.dir, name)
            sitk.WriteTransform(tx, path)
            out = os.path.join(self.dir, "res_" + name + ".nii.gz")
            code, _, err = run("resample", self.moving, "--like", self.fixed, "-t", path, "-o",
                               out)
            self.assertEqual(code, 0, err)
            theirs = sitk.GetArrayFromImage(sitk.Resample(moving, fixed, tx, sitk.sitkLinear))
            ours = sitk.GetArrayFromImage(sitk.ReadImage(out))
            inside = np.transpose(self.r, (2, 1, 0)) < 0.8
            self.assertLess(np.abs(theirs - ours)[inside].max(), 1e-3, name)

    def test_cuda_same_registration(self):
        """Where CUDA is, the same registration on the GPU (skipped where --device cuda is a
        runtime failure: no device, or a build without CUDA): the same files, the summary
        naming the device, the transform SimpleITK reads within 0.1 mm of the CPU's at the
        fixed image's corners and within the CPU test's bounds of the truth, and the warped
        image SimpleITK's resampling of the moving image with it."""
        prefix = os.path.join(self.dir, "gpu")
        code, _, err = run("affine", self.fixed, self.moving, "-o", prefix, "--levels", 3,
                           "--tolerance", 0.05, "--device", "cuda")
        if code == 1 and ("no CUDA device" in err or "no CUDA implementation" in err):
            self.skipTest(err.strip())
        self.assertEqual(code, 0, err)
        self.assert_outputs(prefix)
        with open(prefix + "_summary.json") as f:
            self.assertEqual(json.load(f)["device"], "cuda")
        gpu = sitk.ReadTransform(prefix + "_affine.txt")
        cpu = sitk.ReadTransform(self.prefix + "_affine.txt")
        fixed = sitk.ReadImage(self.fixed, sitk.sitkFloat32)
        size = fixed.GetSize()
        for corner in np.ndindex(2, 2, 2):
            p = fixed.TransformContinuousIndexToPhysicalPoint(
                [float(c * (n - 1)) for c, n in zip(corner, size)])
            gap = np.linalg.norm(np.subtract(gpu.TransformPoint(p), cpu.TransformPoint(p)))
            self.assertLess(gap, 0.1, f"corner {corner}")
        truth_ras = LPS @ sitk_matrix(self.truth) @ LPS
        self.assertLess(np.abs(LPS @ sitk_matrix(gpu) @ LPS - truth_ras).max(), 0.3)
        self.assert_warped_is_resampled(prefix)

    def test_errors_name_the_file_and_leave_nothing(self):
        missing = os.path.join(self.dir, "nope.nii.gz")
        prefix = os.path.join(self.dir, "bad")
        code, out, err = run("affine", self.fixed, missing, "-o", prefix)
        self.assertEqual(code, 1)
        self.assertEqual(err.strip(), f"neurowarp-cli: {missing}: cannot open: No such file or "
                         "directory")
        mask = os.path.join(self.dir, "small_mask.nii.gz")
        nib.save(nib.Nifti1Image(np.ones((10, 10, 10), np.float32), np.eye(4)), mask)
        code, _, err = run("affine", self.fixed, self.moving, "-o", prefix, "--fixed-mask", mask)
        self.assertEqual(code, 1)
        self.assertEqual(err.strip(), f"neurowarp-cli: {mask}: the fixed mask (10 x 10 x 10) is "
                         f"not on the grid of the fixed image {self.fixed} (48 x 48 x 48)")
        bspline = os.path.join(self.dir, "bspline.txt")
        with open(bspline, "w") as f:
            f.write("#Insight Transform File V1.0\n#Transform 0\n"
                    "Transform: BSplineTransform_double_3_3\nParameters: 0 0 0\n"
                    "FixedParameters: 0\n")
        code, _, err = run("affine", self.fixed, self.moving, "-o", prefix,
                           "--initial-transform", bspline)
        self.assertEqual(code, 1)
        self.assertEqual(err.strip(), f"neurowarp-cli: {bspline}: transform type "
                         "BSplineTransform_double_3_3 is not supported (affine, matrix-offset, "
                         "Euler, rigid, versor-rigid, similarity and translation transforms are)")
        code, _, err = run("affine", self.fixed, self.moving, "-o", prefix, "--metric", "cc")
        self.assertEqual(code, 2)
        self.assertIn("metric", err)
        self.assertEqual(glob.glob(prefix + "*"), [])
        code, _, err = run("affine", self.fixed, self.moving, "-o", self.prefix)
        self.assertEqual(code, 1)
        self.assertIn("exists already (--overwrite replaces it)", err)

    def test_help(self):
        code, out, _ = run("affine", "--help")
        self.assertEqual(code, 0)
        for opt in ("--transform", "--metric", "--bins", "--interp", "--levels", "--fixed-mask",
                    "--moving-mask", "--initial-transform", "Keys, a = -0.5"):
            self.assertIn(opt, out)
        code, out, _ = run("resample", "--help")
        self.assertEqual(code, 0)
        self.assertIn("--like", out)


    def test_demons_composes_the_initial_transform(self):
        """demons on this pair of grids (LAS 2 mm fixed, 1.6 mm moving) from the affine's
        PREFIX_affine.txt (the project's ITK writer) and from the truth as SimpleITK writes
        it: the forward field maps fixed points to the truth's original-moving points, and
        SimpleITK, applying the field as a DisplacementFieldTransform, gives our warped image."""
        truth_file = os.path.join(self.dir, "truth.tfm")
        sitk.WriteTransform(self.truth, truth_file)
        fixed_nib = nib.load(self.fixed)
        ijk = np.argwhere(self.r < 0.7)
        x_ras = ijk @ fixed_nib.affine[:3, :3].T + fixed_nib.affine[:3, 3]
        x_lps = x_ras * np.array([-1.0, -1.0, 1.0])
        want = np.array([self.truth.TransformPoint(tuple(p)) for p in x_lps])
        fixed = sitk.ReadImage(self.fixed, sitk.sitkFloat32)
        moving = sitk.ReadImage(self.moving, sitk.sitkFloat32)
        inside = np.transpose(self.r, (2, 1, 0)) < 0.7
        for name, t in (("registered", self.prefix + "_affine.txt"), ("truth", truth_file)):
            prefix = os.path.join(self.dir, "demons_" + name)
            code, _, err = run("demons", self.fixed, self.moving, "-o", prefix, "--device", "cpu",
                               "--levels", 2, "--iterations", 10, "--initial-transform", t)
            self.assertEqual(code, 0, err)
            d_lps = nib.load(prefix + "_forward.nii.gz").get_fdata()[..., 0, :]
            got = x_lps + d_lps[tuple(ijk.T)]
            err_mm = np.linalg.norm(got - want, axis=1)
            sys.stderr.write(f"demons from {name}: |x + d(x) - truth(x)| median "
                             f"{np.median(err_mm):.3f} mm, max {err_mm.max():.3f} mm\n")
            self.assertLess(float(np.median(err_mm)), 0.5)
            field = sitk.ReadImage(prefix + "_forward.nii.gz", sitk.sitkVectorFloat64)
            tx = sitk.DisplacementFieldTransform(field)
            theirs = sitk.GetArrayFromImage(sitk.Resample(moving, fixed, tx, sitk.sitkLinear, 0.0))
            ours = sitk.GetArrayFromImage(sitk.ReadImage(prefix + "_warped.nii.gz"))
            diff = float(np.abs(theirs - ours)[inside].max())
            sys.stderr.write(f"demons from {name}: SimpleITK warp vs ours, max {diff:.2e}\n")
            self.assertLess(diff, 1e-2)


class Affine2d(unittest.TestCase):
    """ITK's R10X13Y17 pair as one-slice NIfTI (unit spacing, as ITK's Software Guide reads
    the PNGs): the ITK file SimpleITK reads gives the guide's rotation and translation."""

    def setUp(self):
        if not os.path.exists(ITK_DATA + "BrainProtonDensitySliceBorder20.png"):
            self.skipTest("insighttoolkit5-examples is not installed (scripts/install-deps.sh)")
        self.dir = tempfile.mkdtemp(prefix="nw-affine-2d-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def nifti(self, name):
        img = sitk.ReadImage(ITK_DATA + name, sitk.sitkFloat32)
        img.SetSpacing((1.0, 1.0))
        path = os.path.join(self.dir, name.replace(".png", ".nii.gz"))
        sitk.WriteImage(img, path)
        return path, img

    def test_r10x13y17(self):
        f, fixed = self.nifti("BrainProtonDensitySliceBorder20.png")
        m, _ = self.nifti("BrainProtonDensitySliceR10X13Y17.png")
        prefix = os.path.join(self.dir, "r10")
        code, _, err = run("affine", f, m, "-o", prefix, "--metric", "mse")
        self.assertEqual(code, 0, err)
        for ext in ("_affine.txt", "_affine.mat"):
            tx = sitk.ReadTransform(prefix + ext)
            self.assertEqual(tx.GetDimension(), 2)
            mat = sitk_matrix(tx)
            self.assertAlmostEqual(np.degrees(np.arctan2(mat[1, 0], mat[0, 0])), 10.0, delta=0.1)
            c = np.array(fixed.GetSize()) / 2.0  # ImageRegistration5's centre
            t = np.array(tx.TransformPoint(tuple(c))) - c
            self.assertAlmostEqual(t[0], 13.0002, delta=0.1)
            self.assertAlmostEqual(t[1], 16.0007, delta=0.1)


def main():
    global CLI
    CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)


if __name__ == "__main__":
    main()
