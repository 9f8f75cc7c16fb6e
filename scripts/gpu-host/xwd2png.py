#!/usr/bin/env python3
"""xwd2png.py IN.xwd OUT.png — an X window dump (xwd, ZPixmap, 24-bit colour in 3- or 4-byte
pixels, as Xvfb's depth-24 screens give) to PNG, with the standard library only (used by gui.sh for its
whole-screen grab, NWGUI_ROOTSHOT)."""
import struct
import sys
import zlib


def main(src, dst):
    d = open(src, "rb").read()
    h = struct.unpack(">25I", d[:100])
    hsize, w, hgt, order, bpp, bpl, ncol = h[0], h[4], h[5], h[7], h[11], h[12], h[19]
    # xwd may say 24 bits per pixel for a depth-24 screen stored in 32-bit pixels: trust the
    # line length
    n = bpl // w if w else 0
    if n not in (3, 4):
        sys.exit("xwd2png: %d bytes per pixel (%d bits said) not handled" % (n, bpp))
    px = d[hsize + 12 * ncol:]
    if order == 0:  # LSBFirst: B G R [X]
        r, g, b = 2, 1, 0
    else:           # MSBFirst: [X] R G B
        r, g, b = n - 3, n - 2, n - 1
    rows = bytearray()
    for y in range(hgt):
        row = px[y * bpl:y * bpl + n * w]
        rgb = bytearray(3 * w)
        rgb[0::3], rgb[1::3], rgb[2::3] = row[r::n], row[g::n], row[b::n]
        rows += b"\0" + rgb

    def chunk(t, c):
        return struct.pack(">I", len(c)) + t + c + struct.pack(">I", zlib.crc32(t + c) & 0xFFFFFFFF)

    with open(dst, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, hgt, 8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(bytes(rows), 6)) + chunk(b"IEND", b""))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
