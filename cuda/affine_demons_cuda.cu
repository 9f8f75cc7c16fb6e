/* affine_demons_cuda.cu — "affine-demons" (affine_demons_method.h) over the CUDA stages:
 * the affine costs and the demons iterations on the GPU, the composite's logic shared with
 * the CPU table. Its frames are host frames (publish_frame) in both stages: the affine
 * stage has no device frame to hand to the interop path. The job's worker thread. */
#include "affine_demons_method.h"
#include "affine_method.h"
#include "demons_method.h"

namespace {

void *affine_demons_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  return nw_affine_demons_new(&nw_affine_cuda_ops, &nw_demons_cuda_ops, in, p, error);
}

} // namespace

/* C++20 designated initialisers: the slots of NwMethodOps by name, in their order. */
extern "C" const NwMethodOps nw_affine_demons_cuda_ops = {
    .name = "affine-demons",
    .device = NW_DEVICE_CUDA,
    .description = "Affine, then demons: an affine stage brings the moving image into place "
                   "(any grid), then diffeomorphic log-demons from there, on the GPU",
    NW_AFFINE_DEMONS_OPS_INPUTS,
    .create = affine_demons_create,
    NW_AFFINE_DEMONS_OPS_JOB,
};
