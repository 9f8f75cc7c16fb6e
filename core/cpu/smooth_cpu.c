/* smooth_cpu.c — not yet implemented. */
#include "method.h"
