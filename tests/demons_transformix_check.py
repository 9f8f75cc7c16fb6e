#!/usr/bin/env python3
"""demons_transformix_check.py - issue 3's interoperability check: register a small pair with
`neurowarp-cli demons`, apply the forward field it wrote with elastix's transformix to the
moving image, and require the same warped image as neurowarp's own output (inside the
volume, away from the border where transformix fills outside samples and neurowarp clamps).
Usage: demons_transformix_check.py NEUROWARP_CLI. Exit 0 ok, 1 failure, 77 without
transformix."""
import os
import subprocess
import sys
import tempfile

try:
    import nibabel as nib
except ImportError:  # e.g. a GPU host's image; scripts/install-deps.sh installs it
    print("SKIP: nibabel is not installed")
    sys.exit(77)
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from transformix_util import apply_field, transformix_path  # noqa: E402


def make_pair(folder):
    """A smooth object on an oblique 1.5 x 1.2 x 1.8 mm grid and a smoothly deformed copy."""
    n = (40, 36, 32)
    i, j, k = np.meshgrid(*[np.arange(m, dtype=np.float64) for m in n], indexing="ij")

    def obj(x, y, z):
        r2 = ((x - 20) / 13) ** 2 + ((y - 18) / 11) ** 2 + ((z - 16) / 10) ** 2
        return 100.0 / (1.0 + np.exp((r2 - 1.0) * 8.0)) * (1.0 + 0.3 * np.sin(x / 3.0))

    fixed = obj(i, j, k)
    moving = obj(i + 1.5 * np.sin(j / 7.0), j - 1.0 * np.cos(k / 6.0), k + 0.8 * np.sin(i / 8.0))
    c, s = np.cos(0.2), np.sin(0.2)
    affine = np.array([[1.5 * c, -1.2 * s, 0, -30], [1.5 * s, 1.2 * c, 0, -20],
                       [0, 0, 1.8, -25], [0, 0, 0, 1]])
    paths = []
    for name, data in (("fixed", fixed), ("moving", moving)):
        img = nib.Nifti1Image(data.astype(np.float32), affine)
        img.set_sform(affine, 1)
        img.set_qform(affine, 1)
        p = os.path.join(folder, name + ".nii.gz")
        nib.save(img, p)
        paths.append(p)
    return paths


def main():
    if transformix_path() is None:
        print("SKIP: transformix not installed")
        return 77
    cli = sys.argv[1]
    with tempfile.TemporaryDirectory() as folder:
        fixed, moving = make_pair(folder)
        prefix = os.path.join(folder, "reg")
        run = subprocess.run([cli, "demons", fixed, moving, "-o", prefix, "--device", "cpu",
                              "--levels", "2", "--iterations", "15"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if run.returncode != 0:
            print("FAIL: neurowarp-cli demons exited %d:\n%s" % (run.returncode, run.stdout))
            return 1
        ours = nib.load(prefix + "_warped.nii.gz").get_fdata()
        theirs, problem = apply_field(moving, prefix + "_forward.nii.gz", nib.load(fixed))
        if problem:
            print("FAIL: " + problem)
            return 1
    inner = (slice(3, -3),) * 3
    err = np.abs(ours - theirs)[inner].max()
    scale = np.abs(ours).max()
    print("transformix vs neurowarp warped image: max difference %.3g (values up to %.3g)"
          % (err, scale))
    if not err <= 1e-3 * scale:
        print("FAIL: the warped images differ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
