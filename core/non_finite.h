/* non_finite.h — counting the NaN and Inf floats of an input, and the one message that
 * refuses it. Shared by the scan of a whole volume (nw_volume_check_finite) and the copies
 * that check an input while they move it anyway (nw_copy_floats_counting: an affine job's
 * upload to the GPU). Any thread. */
#ifndef NW_NON_FINITE_H
#define NW_NON_FINITE_H

#include <glib.h>
#include <stddef.h>

G_BEGIN_DECLS

/* The NaN and Inf floats among v[0 .. n-1]; one thread. */
size_t nw_count_non_finite(const float *v, size_t n);
/* NW_ERROR_INVALID "<name>: <bad> of <n> voxels are NaN or Inf; mask or fill them before
 * registering". */
void nw_set_non_finite_error(GError **error, const char *name, size_t bad, size_t n);

G_END_DECLS

#endif
