#!/usr/bin/env python3
"""nifti_transformix_check.py - applies a neurowarp ITK-convention field (written by
nifti_fixture_writer) with elastix's transformix, and checks warped(x) = moving(x + u) on an
oblique grid: proof that the LPS convention in docs/FIELDS.md is what elastix reads.
Usage: nifti_transformix_check.py FOLDER. Exit 0 ok, 1 failure, 77 when transformix is absent."""
import os
import sys

try:
    import nibabel as nib
except ImportError:  # e.g. a GPU host's image; scripts/install-deps.sh installs it
    print("SKIP: nibabel is not installed")
    sys.exit(77)
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transformix_util import apply_field, transformix_path  # noqa: E402


def main():
    if transformix_path() is None:
        print("SKIP: transformix not installed")
        return 77
    folder = sys.argv[1]
    moving = os.path.join(folder, "tx_moving.nii.gz")
    field = os.path.join(folder, "tx_field.nii.gz")
    img = nib.load(moving)
    size = img.shape
    warped, problem = apply_field(moving, field, img)
    if problem:
        print("FAIL: " + problem)
        return 1
    i, j, k = np.meshgrid(np.arange(size[0]), np.arange(size[1]), np.arange(size[2]),
                          indexing="ij")
    want = (i + 0.5) + 10 * (j - 1.0) + 100 * (k + 2.0)  # u = (0.5, -1, 2) voxels
    inside = (i <= size[0] - 2) & (j >= 1) & (k <= size[2] - 3)
    err = np.abs(warped - want)[inside].max()
    if err > 1e-3:
        print("FAIL: transformix result differs from moving(x + u) by up to %g" % err)
        return 1
    print("transformix applied the field as expected (max error %.2g)" % err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
