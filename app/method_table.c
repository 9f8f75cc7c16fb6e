/* method_table.c — see method_table.h. The only place that knows every back end. */
#include "method_table.h"

#include "affine_demons_method.h"
#include "affine_method.h"
#include "demons_method.h"
#include "fluid_method.h"
#include "method.h"
#include "nlm_surface_method.h"
#include "smooth_method.h"
#ifdef NW_HAVE_CUDA
#include "nw_cuda.h"
#endif

void nw_methods_register_builtin(void)
{
  nw_method_register(&nw_smooth_cpu_ops);
  nw_method_register(&nw_demons_cpu_ops);
  nw_method_register(&nw_fluid_cpu_ops);
  nw_method_register(&nw_affine_cpu_ops);
  nw_method_register(&nw_affine_demons_cpu_ops);
  nw_method_register(&nw_nlm_surface_cpu_ops);
#ifdef NW_HAVE_CUDA
  nw_cuda_register_methods();
#endif
}
