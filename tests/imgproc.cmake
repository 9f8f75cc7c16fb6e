# imgproc: interpolation and resampling, Gaussian smoothing, 2D image I/O (core/resample.c,
# core/smooth.c, core/io_image.c). CPU only; each test runs in well under a second.
nw_add_test(test_resample SOURCES test_resample.c LABELS imgproc)
nw_add_test(test_smooth SOURCES test_smooth.c LABELS imgproc)
nw_add_test(test_io_image SOURCES test_io_image.c LIBS PNG::PNG TIFF::TIFF LABELS imgproc io)
