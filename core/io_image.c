/* io_image.c — not yet implemented. */
#include "io_image.h"
