/* transform_io_private.h — FSL's half of transform_io.c's reader (transform_fsl.c), for
 * transform_itk.c's nw_transform_read. Not for use outside core/transform_*.c. */
#ifndef NW_TRANSFORM_IO_PRIVATE_H
#define NW_TRANSFORM_IO_PRIVATE_H

#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* TRUE when text is four lines of four numbers (blank lines and spaces aside) with a last
 * row 0 0 0 1: FLIRT's matrix, into flirt. */
gboolean nw_fsl_parse_text(const char *text, double flirt[16]);
/* FLIRT's matrix (moving FSL coordinates -> fixed FSL coordinates) as the RAS map fixed
 * world -> moving world. */
gboolean nw_fsl_to_ras(const double flirt[16], const NwVolume *fixed, const NwVolume *moving,
                       double m[16], GError **error);

G_END_DECLS

#endif
