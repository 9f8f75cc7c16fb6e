/* affine_cpu.c — the CPU method "affine" (affine_method.h): the shared job over the CPU
 * reference cost (affine_cost_cpu.c). The job's worker thread. */
#include "affine_method.h"

static void *affine_create(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  return nw_affine_job_new(&nw_affine_cost_cpu, in, p, error);
}

const NwMethodOps nw_affine_cpu_ops = {
    .name = "affine",
    .device = NW_DEVICE_CPU,
    .description = "Rigid, similarity or affine registration (2D or 3D; MSE, NCC or mutual "
                   "information; Nelder-Mead on an image pyramid)",
    NW_AFFINE_OPS_INPUTS,
    .create = affine_create,
    NW_AFFINE_OPS_JOB,
};
