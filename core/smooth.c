/* smooth.c — not yet implemented. */
#include "smooth.h"
