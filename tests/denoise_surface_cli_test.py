#!/usr/bin/env python3
"""denoise_surface_cli_test.py — `neurowarp-cli denoise-surface` end to end (issue 13): a mask,
a label, a signed distance and a mesh as input; the outputs read back by nibabel (NIfTI,
GIFTI) and by hand (PLY, VTK); the JSON lines and summary; and every bad input with its exit
code, its one-line message naming the file and no file left behind.

Usage: denoise_surface_cli_test.py /path/to/neurowarp-cli
"""
import json
import os
import shutil
import sys
import unittest

try:
    import nibabel as nib
except ImportError:
    print("SKIP: nibabel is not installed")
    sys.exit(77)
import numpy as np

import cli_test  # the frame of the CLI tests: CliCase, assert_fails

N, R = 24, 6.5
CENTRE = np.array([11.3, 11.8, 11.6])
AFFINE = np.array([[1.5, 0, 0, -10.0], [0, 1.5, 0, 4.0], [0, 0, 1.5, 2.0], [0, 0, 0, 1]])


run = cli_test.run  # runs cli_test.CLI, set in main


def sphere_distance():
    """Signed distance (mm) of a sphere of R voxels on the 1.5 mm grid of AFFINE."""
    i, j, k = np.meshgrid(*(np.arange(N),) * 3, indexing="ij")
    d = np.sqrt((i - CENTRE[0]) ** 2 + (j - CENTRE[1]) ** 2 + (k - CENTRE[2]) ** 2)
    return ((d - R) * 1.5).astype(np.float32)


def save(path, data, dtype=None):
    img = nib.Nifti1Image(np.asarray(data), AFFINE)
    if dtype is not None:
        img.set_data_dtype(dtype)
    nib.save(img, path)
    return path


def world(ijk):
    return ijk @ AFFINE[:3, :3].T + AFFINE[:3, 3]


class Case(cli_test.CliCase):
    """cli_test's frame (a temporary folder with out/, assert_fails), with a noisy sphere."""

    def setUp(self):
        super().setUp()
        self.prefix = os.path.join(self.out, "s")
        rng = np.random.default_rng(5)
        self.clean = sphere_distance()
        noisy_mask = (self.clean + rng.normal(0, 0.6, self.clean.shape)) <= 0
        noisy_mask[3, 3, 3] = True  # a one-voxel speck far from the sphere
        self.mask = save(self.path("mask.nii.gz"), noisy_mask.astype(np.uint8), np.uint8)

    def summary(self):
        with open(self.prefix + "_summary.json") as f:
            return json.load(f)


class Runs(Case):
    def test_mask_gifti_json(self):
        rc, out, err = run("denoise-surface", self.mask, "-o", self.prefix, "--json")
        self.assertEqual(rc, 0, err)
        lines = [json.loads(line) for line in out.splitlines()]
        self.assertEqual([l["iteration"] for l in lines[:-1]], [1, 2, 3, 4])
        for l in lines[:-1]:
            self.assertGreater(l["band"], 1000)
            self.assertGreater(l["rms_change"], 0)
        self.assertTrue(lines[-1]["summary"])
        self.assertEqual(lines[-1]["method"], "nlm-surface")
        self.assertIn("denoise", lines[-1]["time_s"])
        s = self.summary()
        self.assertEqual(s["input_kind"], "mask")
        self.assertEqual(s["grid"]["dims"], [N, N, N])
        self.assertEqual(s["grid"]["spacing_mm"], [1.5, 1.5, 1.5])
        self.assertEqual(s["iterations"], 4)
        self.assertGreaterEqual(s["input_components"]["inside"], 2)  # the speck at least
        self.assertEqual(s["output_components"], {"inside": 1, "outside": 1})
        self.assertEqual(sorted(os.listdir(self.out)),
                         ["s_sdf.nii.gz", "s_summary.json", "s_surface.gii"])
        # The SDF on the input's grid, negative inside, a distance (|grad| ~ 1 in mm).
        sdf = nib.load(self.prefix + "_sdf.nii.gz")
        np.testing.assert_allclose(sdf.affine, AFFINE, atol=1e-5)
        phi = sdf.get_fdata()
        self.assertLess(phi[tuple(np.round(CENTRE).astype(int))], -5)
        grad = np.linalg.norm(np.stack(np.gradient(phi, 1.5)), axis=0)
        shell = (np.abs(phi) > 2) & (np.abs(phi) < 6)
        self.assertAlmostEqual(float(np.median(grad[shell])), 1.0, delta=0.1)
        # The mesh: world mm on the sphere, a scalar per vertex (the displacement).
        g = nib.load(self.prefix + "_surface.gii")
        verts = g.darrays[0].data
        self.assertEqual(g.darrays[1].data.shape[1], 3)
        disp = g.darrays[2].data
        self.assertEqual(disp.shape[0], verts.shape[0])
        self.assertEqual(s["surface"]["vertices"], verts.shape[0])
        self.assertTrue(np.all(np.isfinite(disp)))
        self.assertLess(float(np.mean(np.abs(disp))), 1.5)
        radius = np.linalg.norm(verts - world(CENTRE), axis=1)
        self.assertLess(float(np.mean(np.abs(radius - R * 1.5))), 0.75)

    def test_labels_ply_and_mesh_input(self):
        labels = np.zeros((N, N, N), np.int16)
        labels[self.clean <= 0] = 5
        labels[:4] = 3
        path = save(self.path("labels.nii.gz"), labels, np.int16)
        rc, out, err = run("denoise-surface", path, "--label", "5", "-o", self.prefix,
                           "--mesh-format", "ply", "--iterations", "2", "--neighbours", "16")
        self.assertEqual(rc, 0, err)
        self.assertIn("denoise-surface: 2 iterations", out)
        self.assertIn("wrote 3 files", out)
        s = self.summary()
        self.assertEqual((s["input_kind"], s["label"]), ("labels", 5))
        self.assertEqual(s["parameters"]["neighbours"], 16)
        ply = self.prefix + "_surface.ply"
        with open(ply, "rb") as f:
            head = f.read(400)
        self.assertTrue(head.startswith(b"ply\n"))
        self.assertIn(b"property float scalar", head)
        # The PLY written is closed: it goes back in as a mesh, on --like's grid and on a
        # spacing grid.
        mesh = self.path("sphere.ply")
        shutil.copy(ply, mesh)
        for grid in (["--like", path], ["--spacing", "1.5"]):
            shutil.rmtree(self.out)
            os.mkdir(self.out)
            rc, out, err = run("denoise-surface", mesh, *grid, "-o", self.prefix,
                               "--mesh-format", "vtk", "--iterations", "1")
            self.assertEqual(rc, 0, f"{grid}: {err}")
            s = self.summary()
            self.assertEqual(s["input_kind"], "mesh")
            if grid[0] == "--like":
                self.assertEqual(s["grid"]["dims"], [N, N, N])
            with open(self.prefix + "_surface.vtk", "rb") as f:
                self.assertTrue(f.read(14).startswith(b"# vtk DataFile"))
            self.assertLess(s["surface"]["displacement_mean_abs_mm"], 0.5)

    def test_sdf_input_and_overwrite(self):
        path = save(self.path("sdf.nii.gz"), self.clean)
        args = ["denoise-surface", path, "-o", self.prefix, "--iterations", "1"]
        rc, _, err = run(*args)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.summary()["input_kind"], "sdf")
        # A clean sphere barely moves.
        self.assertLess(self.summary()["surface"]["displacement_mean_abs_mm"], 0.3)
        rc, _, err = run(*args)
        self.assertEqual(rc, 1)
        self.assertIn("s_sdf.nii.gz: exists already (--overwrite replaces it)", err)
        rc, _, err = run(*args, "--overwrite", "--mesh-format", "ply")
        self.assertEqual(rc, 0, err)
        # The other format's surface of the earlier run is stale: removed.
        self.assertEqual(sorted(os.listdir(self.out)),
                         ["s_sdf.nii.gz", "s_summary.json", "s_surface.ply"])


class Errors(Case):
    def test_help(self):
        rc, out, _ = run("denoise-surface", "--help")
        self.assertEqual(rc, 0)
        for text in ("--patch", "[voxel, 3..9, default 5]", "--band", "[mm,", "--c2",
                     "--neighbours", "default 96", "--reinit-every", "--mesh-format",
                     "--like", "Units:"):
            self.assertIn(text, out)
        rc, out, _ = run("--help")
        self.assertIn("denoise-surface", out)

    def test_usage(self):
        m = self.mask
        self.assert_fails(["denoise-surface", m], 2, "missing -o PREFIX")
        self.assert_fails(["denoise-surface", "-o", self.prefix], 2, "missing INPUT")
        self.assert_fails(["denoise-surface", m, "-o", self.prefix, "--patch", "4"], 2,
                          "patch 4 is even")
        self.assert_fails(["denoise-surface", m, "-o", self.prefix, "--mesh-format", "obj"], 2,
                          "--mesh-format: 'obj' is not gii, ply or vtk")
        self.assert_fails(["denoise-surface", m, "-o", self.prefix, "--spacing", "1"], 2,
                          "--like and --spacing are for mesh inputs")
        self.assert_fails(["denoise-surface", self.path("x.ply"), "-o", self.prefix], 2,
                          "a mesh input needs one grid")
        self.assert_fails(["denoise-surface", m, "-o", self.prefix, "--band", "-1"], 2,
                          "band")

    def test_bad_inputs(self):
        p = self.prefix
        missing = self.path("missing.nii.gz")
        self.assert_fails(["denoise-surface", missing, "-o", p], 1, missing)
        text = self.path("text.nii")
        with open(text, "w") as f:
            f.write("not an image\n" * 40)
        self.assert_fails(["denoise-surface", text, "-o", p], 1, text, "not a NIfTI file")
        empty = save(self.path("empty.nii.gz"), np.zeros((N, N, N), np.uint8), np.uint8)
        self.assert_fails(["denoise-surface", empty, "-o", p], 1, empty, "the mask is empty")
        nan = self.clean.copy()
        nan[2, 3, 4] = np.nan
        nan_path = save(self.path("nan.nii.gz"), nan)
        self.assert_fails(["denoise-surface", nan_path, "-o", p], 1, nan_path,
                          "1 of 13824 voxels are NaN or Inf")
        labels = np.zeros((N, N, N), np.int16)
        labels[self.clean <= 0] = 5
        labels[:4] = 3
        lab = save(self.path("labels.nii.gz"), labels, np.int16)
        self.assert_fails(["denoise-surface", lab, "-o", p], 1, lab, "--label N")
        self.assert_fails(["denoise-surface", lab, "-o", p, "--label", "9"], 1,
                          lab + ": label 9 is not in the volume (labels there: 3, 0, 5)")
        obj = self.path("open.obj")
        with open(obj, "w") as f:
            f.write("v 0 0 0\nv 10 0 0\nv 0 10 0\nv 0 0 10\nf 1 3 2\nf 1 2 4\nf 1 4 3\n")
        self.assert_fails(["denoise-surface", obj, "--spacing", "1", "-o", p], 1, obj,
                          "the mesh is not closed (3 boundary edges)")
        self.assert_fails(["denoise-surface", self.mask, "-o",
                           os.path.join(self.dir, "nofolder", "s")], 1, "does not exist")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: denoise_surface_cli_test.py /path/to/neurowarp-cli")
    cli_test.CLI = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
