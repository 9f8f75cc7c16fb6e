#!/usr/bin/env python3
"""nifti_transformix_check.py - applies a neurowarp ITK-convention field (written by
nifti_fixture_writer) with elastix's transformix, and checks warped(x) = moving(x + u) on an
oblique grid: proof that the LPS convention in docs/FIELDS.md is what elastix reads.
Usage: nifti_transformix_check.py FOLDER. Exit 0 ok, 1 failure, 77 when transformix is absent."""
import os
import shutil
import subprocess
import sys
import tempfile

import nibabel as nib
import numpy as np


def main():
    tx = shutil.which("transformix")
    if tx is None:
        print("SKIP: transformix not installed")
        return 77
    folder = sys.argv[1]
    moving = os.path.join(folder, "tx_moving.nii.gz")
    field = os.path.join(folder, "tx_field.nii.gz")
    img = nib.load(moving)
    a = img.affine
    r = a[:3, :3]
    flip = np.diag([-1.0, -1.0, 1.0])
    spacing = np.linalg.norm(r, axis=0)
    direction = flip @ r / spacing  # ITK direction cosines, LPS
    origin = flip @ a[:3, 3]
    size = img.shape
    params = "\n".join([
        '(Transform "DeformationFieldTransform")',
        '(DeformationFieldFileName "%s")' % field,
        "(DeformationFieldInterpolationOrder 1)",
        "(NumberOfParameters 0)",
        '(InitialTransformParametersFileName "NoInitialTransform")',
        '(HowToCombineTransforms "Compose")',
        "(FixedImageDimension 3)", "(MovingImageDimension 3)",
        '(FixedInternalImagePixelType "float")', '(MovingInternalImagePixelType "float")',
        "(Size %d %d %d)" % size, "(Index 0 0 0)",
        "(Spacing %.10f %.10f %.10f)" % tuple(spacing),
        "(Origin %.10f %.10f %.10f)" % tuple(origin),
        "(Direction %s)" % " ".join("%.10f" % v for v in direction.T.ravel()),
        '(UseDirectionCosines "true")',
        '(ResampleInterpolator "FinalBSplineInterpolator")',
        "(FinalBSplineInterpolationOrder 1)", '(Resampler "DefaultResampler")',
        "(DefaultPixelValue -1)", '(ResultImageFormat "nii.gz")',
        '(ResultImagePixelType "float")', ""])
    with tempfile.TemporaryDirectory() as out:
        tp = os.path.join(out, "field.txt")
        with open(tp, "w") as f:
            f.write(params)
        run = subprocess.run([tx, "-in", moving, "-tp", tp, "-out", out],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if run.returncode != 0:
            print("FAIL: transformix exited %d:\n%s" % (run.returncode, run.stdout[-2000:]))
            return 1
        warped = nib.load(os.path.join(out, "result.nii.gz")).get_fdata()
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
