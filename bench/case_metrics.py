"""case_metrics.py — what bench/demons_generalize.py and its peers measure on a drawn case
(`neurowarp-cli demo-data --draw`), computed one way for every tool: mean Dice over the
fixed image's labels, and the mean displacement error over the brain against the true
field. Files in the case folder: fixed_labels_RES.nii.gz, true_field_RES.nii.gz (RES: 1mm,
2mm). Needs numpy and nibabel.
"""
import math
import os


def stats(values):
    """mean, sd (n - 1), min, max and n of a list of numbers."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "sd": sd, "min": min(values), "max": max(values), "n": n}


class Case:
    """The labels and the true field of one case at one resolution, read once."""

    def __init__(self, np, nib, folder, res):
        self.np = np
        self.nib = nib
        self.folder = folder
        self.res = res
        img = nib.load(self.path("fixed_labels"))
        self.affine = img.affine
        self.labels = np.asarray(img.dataobj).astype(np.int32)
        self.brain = self.labels > 0
        self.truth = self.read_field(self.path("true_field"))
        self.error_before_mm = self.mean_length(self.truth)

    def path(self, stem):
        return os.path.join(self.folder, "%s_%dmm.nii.gz" % (stem, self.res))

    def read_field(self, path):
        """A displacement field of ITK's convention (LPS mm, fixed -> moving), as x, y, z, 3.
        neurowarp and FireANTs (through SimpleITK) both write it 5D: x, y, z, 1, 3."""
        u = self.np.asarray(self.nib.load(path).dataobj, dtype=self.np.float64)
        return u.reshape(self.brain.shape + (3,))

    def mean_length(self, d):
        return float(self.np.linalg.norm(d, axis=-1)[self.brain].mean())

    def error_mm(self, field_path):
        """Mean |u - u_true| over the brain (fixed labels > 0), mm: the same convention on
        both sides, so the difference's length is that in RAS too."""
        return self.mean_length(self.read_field(field_path) - self.truth)

    def folds(self, field_path):
        """Voxels where det(I + grad u) <= 0, grad by central differences in voxels of the
        fixed grid (one-sided at the border), as neurowarp counts them."""
        return self.det_stats(field_path)[0]

    def det_stats(self, field_path):
        """(folds, smallest det J) of the field: det(I + grad u) as folds() takes it."""
        np = self.np
        to_vox = np.linalg.inv(self.affine[:3, :3]) @ np.diag([-1.0, -1.0, 1.0])  # LPS mm ->
        u = (self.read_field(field_path) @ to_vox.T).astype(np.float32)          # voxels
        # j[c][a] = d u_c / d axis a, plus the identity; the 3x3 determinant written out
        # (float32 arrays: a 1 mm grid's in well under a second)
        j = [list(np.gradient(u[..., c])) for c in range(3)]  # a tuple in numpy 2
        for c in range(3):
            j[c][c] += 1.0
        det = (j[0][0] * (j[1][1] * j[2][2] - j[1][2] * j[2][1]) -
               j[0][1] * (j[1][0] * j[2][2] - j[1][2] * j[2][0]) +
               j[0][2] * (j[1][0] * j[2][1] - j[1][1] * j[2][0]))
        return int((det <= 0).sum()), float(det.min())

    def dice(self, warped_labels):
        """Mean Dice over the labels of the fixed image (0 is background); warped_labels in
        the fixed image's voxel order (x, y, z)."""
        np = self.np
        a, b = self.labels, np.asarray(warped_labels).astype(np.int32)
        n = int(max(a.max(), b.max())) + 1
        both = np.bincount(a[a == b], minlength=n)  # voxels where both carry label k
        na = np.bincount(a.ravel(), minlength=n)
        nb = np.bincount(b.ravel(), minlength=n)
        present = [k for k in range(1, n) if na[k] > 0]
        return float(np.mean([2.0 * both[k] / (na[k] + nb[k]) for k in present]))

    def dice_of_file(self, path):
        return self.dice(self.np.asarray(self.nib.load(path).dataobj))
