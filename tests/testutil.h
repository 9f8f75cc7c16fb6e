/* testutil.h — small helpers shared by the C tests (GLib's g_test framework). */
#ifndef NW_TESTUTIL_H
#define NW_TESTUTIL_H

#include <glib.h>

#include "method.h"
#include "volume.h"

G_BEGIN_DECLS

/* Exit status that ctest reports as "skipped" (SKIP_RETURN_CODE in tests/CMakeLists.txt). */
#define NW_TEST_SKIP 77

/* A fresh temporary folder for this test process, removed at exit. */
const char *nw_test_tmpdir(void);
/* Path inside nw_test_tmpdir(); free with g_free. */
char *nw_test_path(const char *name);

/* Deterministic volume with values from a smooth function plus an edge: never constant,
 * never all zeros (so unwritten outputs and wrong indexing show). */
NwVolume *nw_test_volume(int nx, int ny, int nz, int nc, guint32 seed);

/* A smooth velocity field on an n^3 grid (nc = 3, voxel units): Gaussian-windowed sines of
 * width n/width_div around the centre, peak about `peak` voxels, vanishing towards the
 * borders: v = peak g (sin(ky y + 0.5), cos(kz z), sin(0.15 x + 0.1 y)). */
NwVolume *nw_test_smooth_velocity(int n, double peak, double width_div, double ky, double kz);

/* The figure `name` of an iteration report; aborts the test when the report has none. */
double nw_test_figure(const NwIterationReport *r, const char *name);
/* A method's parameters (its table of n specs) with "name=value" settings applied
 * (NULL-terminated, may be NULL); aborts the test on a setting it refuses. */
NwParams *nw_test_params(const NwParamSpec *specs, int n, const char *const *settings);

/* max |a - b| over all floats; both must have the same shape. */
double nw_test_max_abs_diff(const NwVolume *a, const NwVolume *b);

/* An allocator of voxels (volume.h) that counts its live blocks: GLib's memory behind a
 * header word that tells them apart, so that freeing through it what it did not allocate
 * aborts the test. Memory of another allocator (the live view's pinned frames) without a
 * GPU. */
extern const NwVoxelAllocator nw_test_counting_allocator;
/* Blocks of nw_test_counting_allocator not yet freed. */
int nw_test_counted_blocks(void);

/* For CUDA tests: registers the builtin methods and returns TRUE when a CUDA device is
 * usable; otherwise prints "SKIP: no CUDA device (...)" and returns FALSE. */
gboolean nw_test_have_cuda(void);
/* NW_TEST_SMALL set and not empty: the environment asks for small cases only (the racecheck
 * runs of scripts/gpu-host/test.sh, under which every kernel is many times slower): every
 * path still runs, on fewer or smaller cases. */
gboolean nw_test_small_cases(void);

G_END_DECLS

#endif
