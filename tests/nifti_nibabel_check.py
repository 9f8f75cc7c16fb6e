#!/usr/bin/env python3
"""nifti_nibabel_check.py - reads the files nifti_fixture_writer wrote with nibabel, an
independent NIfTI reader, and checks dims, dtype, affine, values, and the displacement-field
conventions (ITK: shape (X,Y,Z,1,3), intent 'vector', LPS mm = diag(-1,-1,1) R u).
Usage: nifti_nibabel_check.py FOLDER. Exit 0 on success, 1 with a message on failure."""
import math
import os
import sys

try:
    import nibabel as nib
except ImportError:  # e.g. a GPU host's image; scripts/install-deps.sh installs it
    print("SKIP: nibabel is not installed")
    sys.exit(77)
import numpy as np

DTYPES = {"uint8": np.uint8, "int16": np.int16, "uint16": np.uint16,
          "int32": np.int32, "float32": np.float32, "float64": np.float64}


def oblique_affine():
    c, s = math.cos(math.pi / 6), math.sin(math.pi / 6)
    return np.array([[2 * c, -1.5 * s, 0, -10], [2 * s, 1.5 * c, 0, 20],
                     [0, 0, 3, 5], [0, 0, 0, 1]])


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_images(folder, aff):
    i, j, k = np.meshgrid(np.arange(7), np.arange(6), np.arange(5), indexing="ij")
    base = ((i + 2 * j + 3 * k) % 50).astype(np.float64)
    for name, dt in DTYPES.items():
        for ver in (1, 2):
            fn = os.path.join(folder, "img_%s_n%d.nii%s" % (name, ver, ".gz" if ver == 1 else ""))
            img = nib.load(fn)
            want_cls = nib.Nifti1Image if ver == 1 else nib.Nifti2Image
            if not isinstance(img, want_cls):
                fail("%s: loaded as %s, expected %s" % (fn, type(img).__name__, want_cls.__name__))
            if img.shape != (7, 6, 5):
                fail("%s: shape %s" % (fn, img.shape))
            if img.get_data_dtype() != np.dtype(dt):
                fail("%s: dtype %s, expected %s" % (fn, img.get_data_dtype(), name))
            if not np.allclose(img.affine, aff, atol=1e-5):
                fail("%s: affine\n%s" % (fn, img.affine))
            hdr = img.header
            if int(hdr["sform_code"]) != 1 or int(hdr["qform_code"]) != 1:
                fail("%s: sform/qform codes %s/%s" % (fn, hdr["sform_code"], hdr["qform_code"]))
            # The qform holds the same rotation (this affine has no shear).
            if not np.allclose(hdr.get_qform(), aff, atol=1e-4):
                fail("%s: qform\n%s" % (fn, hdr.get_qform()))
            want = base + 0.25 if name.startswith("float") else base
            got = np.asanyarray(img.dataobj).astype(np.float64)
            if not np.array_equal(got, want):
                fail("%s: values differ, max |d| = %g" % (fn, np.abs(got - want).max()))


def check_fields(folder, aff):
    i, j, k = np.meshgrid(np.arange(4), np.arange(3), np.arange(2), indexing="ij")
    u = np.stack([0.1 * i, -0.2 * j, 0.3 * k + 0.05], axis=-1)  # voxel units, (4,3,2,3)
    ras = u @ aff[:3, :3].T
    lps = ras * np.array([-1.0, -1.0, 1.0])
    for fn, intent, want in (("field_itk.nii.gz", "vector", lps),
                             ("field_ras.nii", "displacement vector", ras)):
        path = os.path.join(folder, fn)
        img = nib.load(path)
        if img.shape != (4, 3, 2, 1, 3):
            fail("%s: shape %s, expected (4, 3, 2, 1, 3)" % (path, img.shape))
        if img.header.get_intent()[0] != intent:
            fail("%s: intent %s, expected %s" % (path, img.header.get_intent(), intent))
        if img.get_data_dtype() != np.float32:
            fail("%s: dtype %s" % (path, img.get_data_dtype()))
        if not np.allclose(img.affine, aff, atol=1e-5):
            fail("%s: affine\n%s" % (path, img.affine))
        got = np.asanyarray(img.dataobj)[:, :, :, 0, :]
        if not np.allclose(got, want, atol=1e-5):
            fail("%s: components differ, max |d| = %g" % (path, np.abs(got - want).max()))
    # One number by hand: voxel (1,0,0) has u = (0.1, 0, 0.05): RAS = (0.2 cos30, 0.2 sin30,
    # 0.15), LPS = (-0.17320508, -0.1, 0.15).
    got = np.asanyarray(nib.load(os.path.join(folder, "field_itk.nii.gz")).dataobj)[1, 0, 0, 0]
    if not np.allclose(got, [-0.17320508, -0.1, 0.15], atol=1e-6):
        fail("field_itk.nii.gz: voxel (1,0,0) holds %s" % got)


def check_members(folder):
    """A file larger than one gzip member: several members (the writer deflates 4 MiB of the
    file per member, in parallel), read as one stream by nibabel and by Python's gzip."""
    import gzip
    import zlib
    fn = os.path.join(folder, "big_members.nii.gz")
    raw = open(fn, "rb").read()
    members, rest = 0, raw
    while rest:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        d.decompress(rest)
        if not d.eof:
            fail("big_members.nii.gz: a gzip member does not end")
        members += 1
        rest = d.unused_data
    if members < 2:
        fail("big_members.nii.gz: %d gzip member(s), want several" % members)
    if len(gzip.decompress(raw)) != 352 + 160 * 128 * 120 * 4:
        fail("big_members.nii.gz: gzip reads %d bytes" % len(gzip.decompress(raw)))
    data = np.asanyarray(nib.load(fn).dataobj)
    i, j, k = np.meshgrid(np.arange(160), np.arange(128), np.arange(120), indexing="ij")
    want = ((i + 7 * j + 13 * k) % 1000).astype(np.float32) + (k / 8.0).astype(np.float32)
    if data.shape != (160, 128, 120) or not np.array_equal(data, want):
        fail("big_members.nii.gz: nibabel reads other values")


def main():
    if len(sys.argv) != 2:
        fail("usage: nifti_nibabel_check.py FOLDER")
    aff = oblique_affine()
    check_images(sys.argv[1], aff)
    check_fields(sys.argv[1], aff)
    check_members(sys.argv[1])
    print("nibabel %s read every file as expected" % nib.__version__)


if __name__ == "__main__":
    main()
