/* params.c — not yet implemented. */
#include "params.h"
