#!/usr/bin/env python3
"""nifti_mask.py — a binary mask (uint8 0/1) of the voxels of a NIfTI-1 image above a value,
with the standard library only (the GPU host's python3 has no nibabel): what the whole-brain
surface benchmark of nlm-surface (scripts/gpu-host/test.sh, `denoise-surface`) denoises, made
from the demo's brain-extracted Colin27 (fixed_1mm.nii.gz: 0 outside the brain).

    python3 bench/nifti_mask.py IN.nii[.gz] OUT.nii[.gz] [--above 0]

The header is kept (grid, sform, qform) except the data type (uint8), scaling (none) and
display range; the output is written to a temporary name and renamed. Not a test.
"""
import argparse
import array
import gzip
import os
import struct
import sys

# NIfTI-1 datatype code -> array typecode (the ones the project writes)
TYPES = {2: "B", 4: "h", 8: "i", 16: "f", 64: "d", 256: "b", 512: "H", 768: "I"}


def read(path):
    raw = (gzip.open if path.endswith(".gz") else open)(path, "rb").read()
    if len(raw) < 352:
        raise ValueError(f"{path}: {len(raw)} bytes, shorter than a NIfTI-1 header")
    end = "<" if struct.unpack("<i", raw[:4])[0] == 348 else ">"
    if struct.unpack(end + "i", raw[:4])[0] != 348:
        raise ValueError(f"{path}: not a NIfTI-1 file (sizeof_hdr is not 348)")
    dims = struct.unpack(end + "8h", raw[40:56])
    code = struct.unpack(end + "h", raw[70:72])[0]
    slope, inter = struct.unpack(end + "2f", raw[112:120])
    offset = int(struct.unpack(end + "f", raw[108:112])[0])
    if code not in TYPES:
        raise ValueError(f"{path}: NIfTI datatype {code} is not handled here")
    n = 1
    for d in dims[1:dims[0] + 1]:
        n *= d
    data = array.array(TYPES[code])
    data.frombytes(raw[offset:offset + n * data.itemsize])
    if len(data) != n:
        raise ValueError(f"{path}: {len(data)} voxels, the header says {n}")
    if end != ("<" if sys.byteorder == "little" else ">"):
        data.byteswap()
    if slope not in (0.0, 1.0) or inter != 0.0:
        data = array.array("d", (v * (slope or 1.0) + inter for v in data))
    return raw, end, offset, data


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--above", type=float, default=0.0, help="inside: value > this [0]")
    a = ap.parse_args()
    try:
        raw, end, offset, data = read(a.input)
    except (OSError, ValueError) as e:
        print(f"nifti_mask: {e}", file=sys.stderr)
        return 1
    mask = bytes(1 if v > a.above else 0 for v in data)
    hdr = bytearray(raw[:offset])
    struct.pack_into(end + "2h", hdr, 70, 2, 8)             # datatype uint8, bitpix 8
    struct.pack_into(end + "2f", hdr, 112, 1.0, 0.0)        # scl_slope, scl_inter
    struct.pack_into(end + "2f", hdr, 124, 1.0, 0.0)        # cal_max, cal_min
    tmp = a.output + ".tmp"
    with (gzip.open if a.output.endswith(".gz") else open)(tmp, "wb") as fh:
        fh.write(bytes(hdr) + mask)
    os.replace(tmp, a.output)
    print(f"nifti_mask: {sum(mask)} of {len(mask)} voxels above {a.above} -> {a.output}",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
