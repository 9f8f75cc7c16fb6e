/* job.c — not yet implemented. */
#include "job.h"
