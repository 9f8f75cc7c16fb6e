/* non_finite.c — see non_finite.h. */
#include "non_finite.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nw_error.h"

/* NaN and Inf have every exponent bit set. Blocks of 16 with a fixed trip count, which the
 * compiler turns into vector compares at -O2 (a float at a time took 2.2 ms for two 3072²
 * inputs on 8 of the H100 host's cores). */
size_t nw_count_non_finite(const float *v, size_t n)
{
  size_t bad = 0, e = 0;
  for (; e + 16 <= n; e += 16) {
    uint32_t b[16];
    memcpy(b, v + e, sizeof b);
    unsigned int k = 0;
    for (int l = 0; l < 16; l++)
      k += (b[l] & 0x7f800000u) == 0x7f800000u;
    bad += k;
  }
  for (; e < n; e++)
    bad += !isfinite(v[e]);
  return bad;
}

void nw_set_non_finite_error(GError **error, const char *name, size_t bad, size_t n)
{
  g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
              "%s: %zu of %zu voxels are NaN or Inf; mask or fill them before registering",
              name, bad, n);
}
