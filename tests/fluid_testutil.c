/* fluid_testutil.c — see fluid_testutil.h. */
#include "fluid_testutil.h"

#include <math.h>

#define N NW_FLUID_TEST_N

double nw_fluid_test_blob_r(double x, double y, double z, double size)
{
  const double c = (N - 1) / 2.0;
  x = (x - c) / (10.0 * size);
  y = (y - c) / (9.0 * size);
  z = (z - c) / (8.0 * size);
  return sqrt(x * x + y * y + z * z);
}

double nw_fluid_test_phantom_at(double x, double y, double z, double size)
{
  const double r = nw_fluid_test_blob_r(x, y, z, size), c = (N - 1) / 2.0;
  const double body = 1.0 / (1.0 + exp((r - 1.0) * 8.0));
  const double core = 0.4 / (1.0 + exp((r - 0.45) * 12.0));
  x = (x - c) / size;
  y = (y - c) / size;
  z = (z - c) / size;
  const double tex = 1.0 + 0.3 * sin(0.5 * x + 0.2 * z) * cos(0.4 * y);
  return 100.0 * body * tex - 40.0 * core + 10.0;
}
