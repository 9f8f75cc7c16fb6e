/* affine_testutil.h — running the "affine" CPU method to the end in tests, and the ITK
 * Software Guide's frame for 2D image files. */
#ifndef NW_AFFINE_TESTUTIL_H
#define NW_AFFINE_TESTUTIL_H

#include "affine_method.h"

G_BEGIN_DECLS

/* Parameters of "affine" from "name=value" settings (NULL-terminated). */
NwParams *nw_test_affine_params(const char *const *settings);

typedef struct {
  double matrix[16];   /* fixed world -> moving world */
  NwTransform t;       /* the job's transform */
  NwAffineCostValue v; /* at the finest level */
  int iterations;
  double evaluations, seconds;
} NwTestAffineRun;

/* Create, step to the end through the method interface, read the result: the CPU method, or
 * the given twin (ops: "affine" on any device). */
void nw_test_affine_run(const NwMethodInputs *in, const NwParams *p, NwTestAffineRun *out);
void nw_test_affine_run_ops(const NwMethodOps *ops, const NwMethodInputs *in, const NwParams *p,
                            NwTestAffineRun *out);

/* A 2D result in the frame ITK's Software Guide uses for its PNG examples (x = column,
 * y = row from the TOP, origin 0, spacing 1 pixel, whatever the file's pHYs chunk says)
 * about the centre ImageRegistration5 sets, (width / 2, height / 2) of the fixed image:
 * rotation in degrees and translation in pixels. */
void nw_test_itk_2d(const double matrix[16], const NwVolume *fixed, const NwVolume *moving,
                    double *angle_deg, double t[2]);

G_END_DECLS

#endif
