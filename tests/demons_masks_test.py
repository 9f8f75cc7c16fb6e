#!/usr/bin/env python3
"""demons_masks_test.py — `neurowarp-cli demons --fixed-mask / --moving-mask` (app/cli_demons.c,
core/cpu/demons_method.h; issue 12), run by ctest under the system Python (nibabel, numpy):
one iteration without smoothing leaves the velocity exactly zero where the fixed mask (or the
moving mask, at the identity, also when it comes through --initial-transform onto the fixed
grid) is outside; a full run with a mask still registers inside it;
masks inside everywhere change no voxel of the result; a mask on another grid or an empty
mask is refused with one line naming the file, exit code 1 and no file written. The pair is
cli_demons_test.py's: a textured blob and the same blob shifted by one voxel, 24^3, on the
CPU.

Usage: demons_masks_test.py /path/to/neurowarp-cli
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli_demons_test as cdt  # noqa: E402 (exits 77 without nibabel)

nib = cdt.nib
np = cdt.np
N = cdt.N


class DemonsMasks(unittest.TestCase):
    setUp = cdt.DemonsCli.setUp
    tearDown = cdt.DemonsCli.tearDown
    outputs = cdt.DemonsCli.outputs

    def mask(self, name, data=None):
        """A mask on the pair's grid: the half i < N/2 unless data is given."""
        if data is None:
            data = np.zeros((N, N, N), np.uint8)
            data[: N // 2] = 1
        return cdt.save(os.path.join(self.dir, name), data)

    def demons(self, *extra, prefix=None):
        return cdt.run("demons", self.fixed, self.moving, "-o", prefix or self.prefix,
                       "--device", "cpu", *extra)

    def ok(self, *extra, prefix=None):
        code, out, err = self.demons(*extra, prefix=prefix)
        self.assertEqual(code, 0, err)
        return out

    def field(self, name, prefix=None):
        return nib.load(f"{prefix or self.prefix}_{name}.nii.gz").get_fdata()[..., 0, :]

    def first_update(self, *mask_args):
        """v after one update without smoothing (v = u, LPS mm)."""
        self.ok("--levels", "1", "--iterations", "1", "--sigma-fluid", "0", "--sigma-diff", "0",
                "--outputs", "velocity", "--overwrite", *mask_args)
        return self.field("velocity")

    def test_first_update_zero_outside_the_mask(self):
        for opt in ("--fixed-mask", "--moving-mask"):
            v = self.first_update(opt, self.mask("half.nii.gz"))
            self.assertEqual(float(np.abs(v[N // 2:]).max()), 0.0, opt)
            self.assertGreater(float(np.abs(v[: N // 2]).max()), 0.1, opt)
        v = self.first_update()  # without a mask the other half moves too
        self.assertGreater(float(np.abs(v[N // 2:]).max()), 0.1)

    def test_moving_mask_through_the_initial_transform(self):
        # T: fixed world -> moving world + 4 mm along R (2 voxels along i): the moving mask
        # (i < N/2 on the moving grid) lands on the fixed grid at i < N/2 - 2, as the moving
        # image does, and the first update is zero from there on.
        t = np.eye(4)
        t[0, 3] = 4.0
        tfile = os.path.join(self.dir, "shift.txt")
        cdt.write_itk(tfile, t)
        v = self.first_update("--moving-mask", self.mask("half.nii.gz"),
                              "--initial-transform", tfile)
        self.assertEqual(float(np.abs(v[N // 2 - 2:]).max()), 0.0)
        self.assertGreater(float(np.abs(v[: N // 2 - 2]).max()), 0.1)

    def test_registers_inside_the_mask(self):
        out = self.ok("--levels", "2", "--iterations", "20", "--fixed-mask",
                      self.mask("half.nii.gz"))
        self.assertIn("final: energy", out)
        u = self.field("forward")
        inside = (self.r < 0.7) & (np.arange(N)[:, None, None] < N // 2 - 2)
        self.assertAlmostEqual(float(np.median(u[inside][:, 0])), -2.0, delta=0.4)  # LPS: -R

    def test_masks_everywhere_change_nothing(self):
        ones = self.mask("ones.nii.gz", np.ones((N, N, N), np.uint8))
        args = ("--levels", "2", "--iterations", "5", "--outputs", "forward")
        other = os.path.join(self.dir, "out", "masked")
        self.ok(*args)
        self.ok(*args, "--fixed-mask", ones, "--moving-mask", ones, prefix=other)
        np.testing.assert_array_equal(self.field("forward"), self.field("forward", other))

    def refused(self, opt, mask, message):
        code, out, err = self.demons("--fixed-labels", self.fl, "--moving-labels", self.ml,
                                     opt, mask)
        self.assertEqual(code, 1)
        self.assertEqual(out, "")
        self.assertEqual(err, f"neurowarp-cli: {mask}: {message}\n")
        self.assertEqual(self.outputs(), [])  # no file, not even a partial one

    def test_mask_on_another_grid(self):
        small = self.mask("small.nii.gz", np.ones((N, N, N - 1), np.uint8))
        self.refused("--fixed-mask", small,
                     f"the fixed mask ({N} x {N} x {N - 1}) is not on the grid of the fixed "
                     f"image {self.fixed} ({N} x {N} x {N})")
        self.refused("--moving-mask", small,
                     f"the moving mask ({N} x {N} x {N - 1}) is not on the grid of the moving "
                     f"image {self.moving} ({N} x {N} x {N})")
        shifted = os.path.join(self.dir, "shifted.nii.gz")  # same size, other affine
        aff = cdt.AFFINE.copy()
        aff[0, 3] += 2.0
        nib.save(nib.Nifti1Image(np.ones((N, N, N), np.uint8), aff), shifted)
        self.refused("--fixed-mask", shifted,
                     f"the fixed mask ({N} x {N} x {N}) is not on the grid of the fixed "
                     f"image {self.fixed} ({N} x {N} x {N})")

    def test_empty_mask(self):
        empty = self.mask("empty.nii.gz", np.zeros((N, N, N), np.uint8))
        self.refused("--fixed-mask", empty,
                     "the fixed mask is empty (no voxel >= 0.5): nothing would be compared")


if __name__ == "__main__":
    cdt.CLI = sys.argv.pop(1)
    unittest.main(verbosity=2)
