/* io_nifti.c — not yet implemented. */
#include "io_nifti.h"
