"""transformix_util.py - apply a displacement field with elastix's transformix, for the tests
that prove neurowarp's ITK-convention fields are what elastix reads (docs/FIELDS.md)."""
import os
import shutil
import subprocess
import tempfile

import nibabel as nib
import numpy as np


def transformix_path():
    """The transformix executable, or None when elastix is not installed."""
    return shutil.which("transformix")


def parameter_text(grid_img, field_path):
    """A DeformationFieldTransform parameter file whose output grid is grid_img's (ITK's LPS
    geometry: origin and direction cosines flipped in x and y), linear interpolation."""
    a = grid_img.affine
    r = a[:3, :3]
    flip = np.diag([-1.0, -1.0, 1.0])
    spacing = np.linalg.norm(r, axis=0)
    direction = flip @ r / spacing
    origin = flip @ a[:3, 3]
    return "\n".join([
        '(Transform "DeformationFieldTransform")',
        '(DeformationFieldFileName "%s")' % field_path,
        "(DeformationFieldInterpolationOrder 1)",
        "(NumberOfParameters 0)",
        '(InitialTransformParametersFileName "NoInitialTransform")',
        '(HowToCombineTransforms "Compose")',
        "(FixedImageDimension 3)", "(MovingImageDimension 3)",
        '(FixedInternalImagePixelType "float")', '(MovingInternalImagePixelType "float")',
        "(Size %d %d %d)" % tuple(grid_img.shape[:3]), "(Index 0 0 0)",
        "(Spacing %.10f %.10f %.10f)" % tuple(spacing),
        "(Origin %.10f %.10f %.10f)" % tuple(origin),
        "(Direction %s)" % " ".join("%.10f" % v for v in direction.T.ravel()),
        '(UseDirectionCosines "true")',
        '(ResampleInterpolator "FinalBSplineInterpolator")',
        "(FinalBSplineInterpolationOrder 1)", '(Resampler "DefaultResampler")',
        "(DefaultPixelValue -1)", '(ResultImageFormat "nii.gz")',
        '(ResultImagePixelType "float")', ""])


def apply_field(moving_path, field_path, grid_img):
    """transformix -in moving -tp (field on grid_img's grid); returns (result array, None) or
    (None, message)."""
    with tempfile.TemporaryDirectory() as out:
        tp = os.path.join(out, "field.txt")
        with open(tp, "w") as f:
            f.write(parameter_text(grid_img, field_path))
        run = subprocess.run([transformix_path(), "-in", moving_path, "-tp", tp, "-out", out],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if run.returncode != 0:
            return None, "transformix exited %d:\n%s" % (run.returncode, run.stdout[-2000:])
        return nib.load(os.path.join(out, "result.nii.gz")).get_fdata(), None
