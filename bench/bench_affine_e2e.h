/* bench_affine_e2e.h — end-to-end registrations for bench_affine (see bench_affine_e2e.c). */
#ifndef NW_BENCH_AFFINE_E2E_H
#define NW_BENCH_AFFINE_E2E_H

#include <json-glib/json-glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* The test pattern of bench_affine: nx x ny x nz, moved by shift_vox along x. */
typedef NwVolume *(*NwBenchImageFn)(int nx, int ny, int nz, double shift_vox);

/* Adds one object per registration to the open array of b, each with the parameter
 * precision ("u16" or "single") and run repeats >= 1 times: each figure the median of the
 * runs ("seconds", "evaluations", ...) with its "_min", "_max" and "_runs", and
 * "deterministic" (whether every run took the same evaluations to the same corners); FALSE
 * when one failed. */
gboolean nw_bench_affine_end_to_end(JsonBuilder *b, NwBenchImageFn image, const char *precision,
                                    int repeats);

G_END_DECLS

#endif
