/* affine_demons_cpu.c — "affine-demons" (affine_demons_method.h) over the CPU stages. The
 * job's worker thread. */
#include "affine_demons_method.h"
#include "affine_method.h"
#include "demons_method.h"

static void *ad_create_cpu(const NwMethodInputs *in, const NwParams *p, GError **error)
{
  return nw_affine_demons_new(&nw_affine_cpu_ops, &nw_demons_cpu_ops, in, p, error);
}

const NwMethodOps nw_affine_demons_cpu_ops = {
    .name = "affine-demons",
    .device = NW_DEVICE_CPU,
    .description = "Affine, then demons: an affine stage brings the moving image into place "
                   "(any grid), then diffeomorphic log-demons from there",
    NW_AFFINE_DEMONS_OPS_INPUTS,
    .create = ad_create_cpu,
    NW_AFFINE_DEMONS_OPS_JOB,
};
