/* cuda_device.cu — not yet implemented. */
#include "nw_cuda.h"
