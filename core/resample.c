/* resample.c — not yet implemented. */
#include "resample.h"
