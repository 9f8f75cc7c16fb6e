#!/usr/bin/env python3
"""noisy_surface.py — the noisy mask of the user guide's surface-denoising pictures.

An ellipsoid (22 x 18 x 16 mm semi-axes) on a 34^3 grid of 2 mm voxels, its boundary made
rough by normal noise (sd 1.2 mm) on the distance before thresholding, plus a spurious blob
outside and a hole inside (3 mm radius each): the kind of mask a threshold or a classifier
gives. Deterministic (seed 7). Needs numpy and nibabel.

    python3 docs/images/noisy_surface.py /tmp/noisy_mask.nii.gz
"""
import os
import sys

import nibabel as nib
import numpy as np


def main(path):
    rng = np.random.default_rng(7)
    n, mm = 34, 2.0
    x, y, z = np.indices((n, n, n)).astype(float) * mm
    c = 33.0
    r = np.sqrt(((x - c) / 22) ** 2 + ((y - c) / 18) ** 2 + ((z - c) / 16) ** 2)
    # (r - 1) * 18: about the distance from the surface in mm (exact on the 18 mm axis)
    inside = (r - 1.0) * 18.0 + rng.normal(0.0, 1.2, r.shape) <= 0
    inside |= np.sqrt((x - 60) ** 2 + (y - c) ** 2 + (z - c) ** 2) < 3.0
    inside &= ~(np.sqrt((x - c) ** 2 + (y - c) ** 2 + (z - 24) ** 2) < 3.0)
    img = nib.Nifti1Image(inside.astype(np.uint8), np.diag([mm, mm, mm, 1.0]))
    tmp = path + ".part.nii.gz"
    nib.save(img, tmp)
    os.replace(tmp, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: noisy_surface.py OUT.nii.gz")
    main(sys.argv[1])
