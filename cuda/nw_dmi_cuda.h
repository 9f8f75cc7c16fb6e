/* nw_dmi_cuda.h — the C face of the distributed MI metric's CUDA twin (dmi_cuda.cu): a rank's
 * local joint histogram on its GPU, the table core/dmi_metric.h's NwDmiMetricOps names, so the
 * distributed job (core/dmi_cost.h) runs over it unchanged. The rank's device, cudaSetDevice'd by
 * the ops' create, is nw_cuda_rank_device's (nw_cuda.h): its local rank modulo the devices.
 * Histograms reduced with NCCL when built with it (NW_HAVE_NCCL) and every rank has a GPU of
 * its own on one host, else by the transport (MPI). The rank's thread. */
#ifndef NW_DMI_CUDA_H
#define NW_DMI_CUDA_H

#include "dmi_metric.h"

#ifdef __cplusplus
extern "C" {
#endif

extern const NwDmiMetricOps nw_dmi_metric_cuda_ops;
/* Voxels the replicated strategy copied into its resident windows (images and masks counted
 * once) in the last evaluation of impl (an nw_dmi_metric_cuda_ops instance): 0 when every
 * window was reused. For benchmarks. */
gint64 nw_dmi_cuda_window_voxels(const void *impl);

#ifdef __cplusplus
}
#endif

#endif
