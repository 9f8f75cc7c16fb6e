/* smooth_cpu.c — not yet implemented. */
#include "smooth_method.h"
