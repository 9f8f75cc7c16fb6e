/* cuda_validate_demons.cu — see cuda_validate_demons.cuh. */
#include "cuda_validate_demons.cuh"

#include <math.h>
#include <stdio.h>

#include "cuda_validate.h"
#include "demons_cpu.h"
#include "field.h"

/* max |I - shift| over the voxels. */
static double max_shifted(const NwVolume *I, float shift)
{
  float m = 0.0f;
  for (size_t e = 0; e < nw_volume_n_voxels(I); e++)
    m = fmaxf(m, fabsf(I->data[e] - shift));
  return m;
}

gboolean nw_validate_demons_sums(const char *what, const NwDemonsSums *gpu, const NwVolume *F,
                                 const NwVolume *W, const NwVolume *lcc_f, const NwVolume *lcc_w,
                                 const NwVolume *region, const NwVolume *s,
                                 const NwDemonsLevelConst &lc, size_t *cpu_folds)
{
  NwDemonsSimSums c;
  nw_demons_similarity_sums_cpu(&c, F, W, lcc_f, lcc_w, region, lc.shift, lc.eps);
  const double n = (double)nw_volume_n_voxels(F), u = n * n * ldexp(1.0, -52);
  const double mf = max_shifted(F, lc.shift), mw = max_shifted(W, lc.shift), md = mf + mw;
  const double gpu_v[] = {gpu->sim.sf,  gpu->sim.sw,   gpu->sim.sff,   gpu->sim.sww, gpu->sim.sfw,
                          gpu->sim.sd2, gpu->sim.slcc, gpu->sim.n_lcc, gpu->sim.n};
  const double cpu_v[] = {c.sf, c.sw, c.sff, c.sww, c.sfw, c.sd2, c.slcc, c.n_lcc, c.n};
  const double max_term[] = {mf, mw, mf * mf, mw * mw, mf * mw, md * md, 1.0, 0.0, 0.0};
  const char *names[] = {"sf", "sw", "sff", "sww", "sfw", "sd2", "slcc", "n_lcc", "n"};
  gboolean ok = TRUE;
  for (int q = 0; q < 9; q++) {
    g_autofree char *name = g_strdup_printf("%s: %s", what, names[q]);
    ok &= nw_validate_value(name, gpu_v[q], cpu_v[q], NwTolerance{u * max_term[q], 0.0});
  }
  g_autoptr(NwVolume) det = nw_volume_new_like(F, 1, NULL);
  nw_field_jacobian_det(det, s);
  NwJacobianStats js;
  nw_jacobian_stats(det, &js);
  const NwTolerance tol_jac = {1e-5, 1e-6};
  g_autofree char *jname = g_strdup_printf("%s: min det", what);
  ok &= nw_validate_value(jname, gpu->jac_min, js.min, tol_jac);
  size_t near_zero = 0;
  for (size_t e = 0; e < nw_volume_n_voxels(det); e++)
    near_zero += fabs(det->data[e]) <= tol_jac.abs;
  const double dfolds = fabs((double)gpu->folds - (double)js.n_folds);
  fprintf(stderr, "%s: folds gpu %llu cpu %zu (may differ by %zu voxels with |det| <= %g): %s\n",
          what, gpu->folds, js.n_folds, near_zero, tol_jac.abs,
          dfolds <= near_zero ? "ok" : "FAILED");
  if (cpu_folds != NULL)
    *cpu_folds = js.n_folds;
  return ok && dfolds <= near_zero;
}
