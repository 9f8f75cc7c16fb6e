/* smooth_cuda.cu — not yet implemented. */
#include "nw_cuda.h"
