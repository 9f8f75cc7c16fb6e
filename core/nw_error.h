/* nw_error.h — the project's GError domain and codes.
 *
 * Library code (core, cuda, render) never exits: a function that can fail returns FALSE or
 * NULL and sets a GError whose message names the file, the value and the reason, e.g.
 * "moving.nii.gz: truncated: 1048576 of 2097152 voxel bytes". Any thread. */
#ifndef NW_ERROR_H
#define NW_ERROR_H

#include <glib.h>

G_BEGIN_DECLS

#define NW_ERROR (nw_error_quark())
GQuark nw_error_quark(void);

typedef enum {
  NW_ERROR_IO,          /* a file could not be opened, read or written */
  NW_ERROR_FORMAT,      /* a file was read but its content is corrupt or unsupported */
  NW_ERROR_INVALID,     /* a value is out of range: parameters, sizes, NaN voxels */
  NW_ERROR_MISMATCH,    /* two inputs that must agree do not (grids, dimensions) */
  NW_ERROR_NOMEM,       /* host or device memory could not be had */
  NW_ERROR_DEVICE,      /* a CUDA call failed, or no CUDA device where one was asked for */
  NW_ERROR_UNSUPPORTED, /* a method/device pair or an option this build does not have */
  NW_ERROR_CANCELLED,   /* the user cancelled */
  NW_ERROR_EXISTS,      /* an output file exists and may not be replaced (atomic_file.h) */
} NwErrorCode;

/* Prefix an existing error's message with "what: ", keeping domain and code. */
void nw_error_prefix(GError **error, const char *what);

G_END_DECLS

#endif
