/* demo.c — not yet implemented. */
#include "demo.h"
