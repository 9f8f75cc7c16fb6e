/* test_cuda_affine_cost.c — the CUDA affine cost (cuda/affine_cost_cuda.cu) against its CPU
 * reference (core/cpu/affine_cost_cpu.c) through the cost interface (affine_cost.h): every
 * metric (mse, ncc, mi plain and Parzen, mi with a histogram too large for shared memory),
 * every interpolation, with and without masks, 2D and 3D, for identity, half-voxel, rigid and
 * scaled affine transforms, on images of different grids; the costs must agree to 1e-4
 * relative (issue 11) and the overlaps exactly (the GPU computes the positions as the CPU
 * does), at both precisions (single: float images, double positions; u16: 16-bit codes,
 * float positions, affine_quant.h); the u16 kernel's rows variants (several voxels a thread)
 * count the same voxels as its one-voxel kernel and agree with it to 1e-12; the device's
 * pyramid equals the host's bit for bit. Then whole registrations
 * through the method interface: "affine" on CUDA must end where the CPU method ends. Skips (77)
 * without a CUDA device. Main thread; seconds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "affine_demons_method.h"
#include "affine_init.h"
#include "affine_resample.h"
#include "affine_testutil.h"
#include "field.h"
#include "nw_affine_cost_cuda.h"
#include "nw_error.h"
#include "pyramid.h"
#include "ras_affine.h"
#include "testutil.h"

#define REL_TOL 1e-4
#define ABS_TOL 1e-7 /* for costs near 0 (mse of an image with itself) */

/* A smooth test image of n voxels with spacing_mm, its origin at world 0. */
static NwVolume *image(int nx, int ny, int nz, double spacing_mm, guint32 seed)
{
  NwVolume *v = nw_test_volume(nx, ny, nz, 1, seed);
  nw_volume_set_spacing(v, spacing_mm, spacing_mm, nz > 1 ? spacing_mm : 1.0);
  return v;
}

/* A mask of v's grid: 1 inside an ellipse (ellipsoid) about (cx, cy, cz) in voxels. */
static NwVolume *ellipse_mask(const NwVolume *v, double cx, double cy, double cz, double r)
{
  NwVolume *m = nw_volume_new_like(v, 1, NULL);
  for (int k = 0; k < v->nz; k++)
    for (int j = 0; j < v->ny; j++)
      for (int i = 0; i < v->nx; i++) {
        const double x = i - cx, y = (j - cy) * 1.3, z = v->nz > 1 ? k - cz : 0.0;
        m->data[nw_volume_index(m, i, j, k)] = x * x + y * y + z * z < r * r ? 1.0f : 0.0f;
      }
  return m;
}

/* 4x4 RAS matrices (fixed world -> moving world) for dim 2 or 3. */
typedef struct {
  const char *name;
  double m[16];
} Xform;

static void rotation_z(double deg, double tx, double ty, double tz, double m[16])
{
  const double a = deg * G_PI / 180.0, c = cos(a), s = sin(a);
  const double r[16] = {c, -s, 0, tx, s, c, 0, ty, 0, 0, 1, tz, 0, 0, 0, 1};
  memcpy(m, r, sizeof r);
}

static int transforms(int dim, Xform out[4])
{
  rotation_z(0, 0, 0, 0, out[0].m);
  out[0].name = "identity";
  /* half a voxel of the moving grid (1.1 mm): positions near nearest's ties and near the
   * domain's edge, where only positions computed as the CPU computes them agree */
  rotation_z(0, 0.55, -1.1, 0, out[1].m);
  out[1].name = "half-voxel";
  rotation_z(7.0, 1.3, -2.1, dim == 3 ? 0.7 : 0.0, out[2].m);
  out[2].name = "rigid";
  if (dim == 2)
    return 3;
  /* rotation about x and z, scaling of 10 %, a shear, a translation */
  const double a = 0.12, c = cos(a), s = sin(a);
  const double m[16] = {1.1 * c, -0.05 - s, 0.02, 1.7,  //
                        0.9 * s, 0.93 * c,  -0.1, -0.8, //
                        0.03,    0.1,       1.05, 1.2,  //
                        0,       0,         0,    1};
  memcpy(out[3].m, m, sizeof m);
  out[3].name = "affine-scaled";
  return 4;
}

typedef struct {
  NwAffineMetric metric;
  int bins;
  gboolean parzen;
  const char *name;
} MetricCase;

static const MetricCase metric_cases[] = {
    {NW_METRIC_MSE, 32, FALSE, "mse"},
    {NW_METRIC_NCC, 32, FALSE, "ncc"},
    {NW_METRIC_MI, 32, FALSE, "mi-plain"},
    {NW_METRIC_MI, 32, TRUE, "mi-parzen"},
    /* 100² bins do not fit in shared memory: the global-histogram path */
    {NW_METRIC_MI, 100, TRUE, "mi-parzen-100"},
    {NW_METRIC_MI, 100, FALSE, "mi-plain-100"},
};

static void check_close(double cpu, double cuda, const char *what, const char *where)
{
  const double tol = REL_TOL * MAX(fabs(cpu), fabs(cuda)) + ABS_TOL;
  if (!(fabs(cpu - cuda) <= tol))
    g_error("%s: %s cpu %.12g cuda %.12g (|diff| %.3g > %.3g)", where, what, cpu, cuda,
            fabs(cpu - cuda), tol);
}

/* Every metric, sampler and transform on one fixed/moving pair (and masks, may be NULL),
 * both back ends keeping the level at precision prec. */
static void compare_pair_at(int dim, const NwVolume *f, const NwVolume *m, const NwVolume *fmask,
                            const NwVolume *mmask, NwAffinePrecision prec)
{
  static const NwSampler samplers[] = {NW_SAMPLER_NEAREST, NW_SAMPLER_LINEAR, NW_SAMPLER_CUBIC};
  Xform xf[4];
  const int n_xf = transforms(dim, xf);
  int compared = 0;
  for (gsize mc = 0; mc < G_N_ELEMENTS(metric_cases); mc++)
    for (gsize s = 0; s < G_N_ELEMENTS(samplers); s++) {
      const MetricCase *c = &metric_cases[mc];
      const NwAffineCostSpec spec = {c->metric, samplers[s], c->bins, c->parzen, NULL};
      g_autoptr(GError) err = NULL;
      NwAffineCost *cpu = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &err);
      g_assert_no_error(err);
      NwAffineCost *gpu = nw_affine_cost_new(&nw_affine_cost_cuda, &spec, &err);
      g_assert_no_error(err);
      const NwAffineLevel lv = {.dim = dim,
                                .fixed = f,
                                .moving = m,
                                .fixed_mask = fmask,
                                .moving_mask = mmask,
                                .precision = prec};
      g_assert_true(nw_affine_cost_set_level(cpu, &lv, &err));
      g_assert_true(nw_affine_cost_set_level(gpu, &lv, &err));
      g_assert_no_error(err);
      for (int t = 0; t < n_xf; t++) {
        NwAffineCostValue a, b;
        g_assert_true(nw_affine_cost_eval_matrix(cpu, xf[t].m, &a, &err));
        g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[t].m, &b, &err));
        g_assert_no_error(err);
        char where[160];
        g_snprintf(where, sizeof where, "%dD %s %s %s %s%s%s", dim,
                   nw_affine_precision_name(prec), c->name, nw_sampler_name(samplers[s]),
                   xf[t].name, fmask ? " fixed-mask" : "", mmask ? " moving-mask" : "");
        if (g_test_verbose())
          g_printerr("%s: cost cpu %.10g cuda %.10g overlap %.6f\n", where, a.cost, b.cost,
                     a.overlap);
        /* the same voxels counted: positions, domain and mask tests are the CPU's */
        g_assert_cmpfloat(a.overlap, ==, b.overlap);
        g_assert_cmpfloat(a.overlap, >, NW_AFFINE_MIN_OVERLAP); /* a real comparison */
        check_close(a.cost, b.cost, "cost", where);
        check_close(a.value, b.value, "value", where);
        compared++;
      }
      /* a batch of every transform (the gradient's probes, cuda's evaluate_batch): each as
       * evaluated alone but for the order of the sums; the same voxels counted, the MI
       * histogram exact (fixed point) */
      double batch_m[4][16];
      NwAffineCostValue batch_v[4];
      for (int t = 0; t < n_xf; t++)
        memcpy(batch_m[t], xf[n_xf - 1 - t].m, sizeof batch_m[t]); /* another order too */
      g_assert_true(
          nw_affine_cost_eval_batch(gpu, (const double(*)[16])batch_m, n_xf, batch_v, &err));
      g_assert_no_error(err);
      for (int t = 0; t < n_xf; t++) {
        NwAffineCostValue one;
        g_assert_true(nw_affine_cost_eval_matrix(gpu, batch_m[t], &one, &err));
        g_assert_cmpfloat(batch_v[t].overlap, ==, one.overlap);
        if (!(fabs(batch_v[t].cost - one.cost) <= 1e-10 * fabs(one.cost) + 1e-12))
          g_error("%dD %s %s: batch cost %.15g, alone %.15g", dim, c->name,
                  nw_sampler_name(samplers[s]), batch_v[t].cost, one.cost);
      }
      /* the same back end evaluates the same map to the same bits (deterministic sums) */
      NwAffineCostValue b1, b2;
      g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[n_xf - 1].m, &b1, &err));
      g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[n_xf - 1].m, &b2, &err));
      g_assert_cmpfloat(b1.cost, ==, b2.cost);
      nw_affine_cost_free(cpu);
      nw_affine_cost_free(gpu);
    }
  g_assert_cmpint(compared, ==, (int)(G_N_ELEMENTS(metric_cases) * 3) * n_xf);
}

/* ... at both precisions: u16's positions in float are the CPU twin's bit for bit
 * (affine_quant.h), so the same voxels count there too. */
static void compare_pair(int dim, const NwVolume *f, const NwVolume *m, const NwVolume *fmask,
                         const NwVolume *mmask)
{
  compare_pair_at(dim, f, m, fmask, mmask, NW_AFFINE_PRECISION_SINGLE);
  compare_pair_at(dim, f, m, fmask, mmask, NW_AFFINE_PRECISION_U16);
}

static void test_parity_2d(void)
{
  g_autoptr(NwVolume) f = image(61, 47, 1, 1.0, 5);
  g_autoptr(NwVolume) m = image(55, 52, 1, 1.1, 9);
  compare_pair(2, f, m, NULL, NULL);
  g_autoptr(NwVolume) fmask = ellipse_mask(f, 30, 23, 0, 20);
  g_autoptr(NwVolume) mmask = ellipse_mask(m, 26, 27, 0, 22);
  compare_pair(2, f, m, fmask, NULL);
  compare_pair(2, f, m, fmask, mmask);
}

static void test_parity_3d(void)
{
  g_autoptr(NwVolume) f = image(23, 19, 17, 1.0, 3);
  g_autoptr(NwVolume) m = image(21, 22, 15, 1.1, 8);
  compare_pair(3, f, m, NULL, NULL);
  g_autoptr(NwVolume) fmask = ellipse_mask(f, 11, 9, 8, 9);
  g_autoptr(NwVolume) mmask = ellipse_mask(m, 10, 11, 7, 9);
  compare_pair(3, f, m, fmask, NULL);
  compare_pair(3, f, m, NULL, mmask);
  compare_pair(3, f, m, fmask, mmask);
}

/* Rows wider than a block (the small pairs above have none), where most voxels map deep
 * into the moving image: every metric, sampler and transform at u16, with and without masks,
 * 2D and 3D. */
static void test_parity_runs(void)
{
  g_autoptr(NwVolume) f2 = image(530, 120, 1, 1.0, 31);
  g_autoptr(NwVolume) m2 = image(520, 125, 1, 1.05, 32);
  compare_pair_at(2, f2, m2, NULL, NULL, NW_AFFINE_PRECISION_U16);
  g_autoptr(NwVolume) fmask2 = ellipse_mask(f2, 265, 60, 0, 200);
  g_autoptr(NwVolume) mmask2 = ellipse_mask(m2, 255, 62, 0, 210);
  compare_pair_at(2, f2, m2, fmask2, mmask2, NW_AFFINE_PRECISION_U16);
  g_autoptr(NwVolume) f3 = image(300, 40, 12, 1.0, 33);
  g_autoptr(NwVolume) m3 = image(290, 42, 13, 1.05, 34);
  compare_pair_at(3, f3, m3, NULL, NULL, NW_AFFINE_PRECISION_U16);
}

/* A level larger than one wave of blocks (grid-stride loop, many partials, shared
 * histograms flushed by many blocks): 2D 700 x 650, linear and cubic. */
static void test_parity_large(void)
{
  g_autoptr(NwVolume) f = image(700, 650, 1, 1.0, 21);
  g_autoptr(NwVolume) m = image(690, 660, 1, 1.0, 22);
  Xform xf[4];
  transforms(2, xf);
  const NwSampler samplers[] = {NW_SAMPLER_LINEAR, NW_SAMPLER_CUBIC};
  for (int prec = NW_AFFINE_PRECISION_SINGLE; prec <= NW_AFFINE_PRECISION_U16; prec++)
  for (gsize mc = 0; mc < G_N_ELEMENTS(metric_cases); mc++)
    for (gsize s = 0; s < G_N_ELEMENTS(samplers); s++) {
      const MetricCase *c = &metric_cases[mc];
      const NwAffineCostSpec spec = {c->metric, samplers[s], c->bins, c->parzen, NULL};
      g_autoptr(GError) err = NULL;
      NwAffineCost *cpu = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &err);
      NwAffineCost *gpu = nw_affine_cost_new(&nw_affine_cost_cuda, &spec, &err);
      g_assert_no_error(err);
      const NwAffineLevel lv = {
          .dim = 2, .fixed = f, .moving = m, .precision = (NwAffinePrecision)prec};
      g_assert_true(nw_affine_cost_set_level(cpu, &lv, &err));
      g_assert_true(nw_affine_cost_set_level(gpu, &lv, &err));
      NwAffineCostValue a, b;
      g_assert_true(nw_affine_cost_eval_matrix(cpu, xf[2].m, &a, &err));
      g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[2].m, &b, &err));
      g_assert_no_error(err);
      char where[96];
      g_snprintf(where, sizeof where, "2D 700x650 %s %s %s rigid",
                 nw_affine_precision_name((NwAffinePrecision)prec), c->name,
                 nw_sampler_name(samplers[s]));
      g_assert_cmpfloat(a.overlap, ==, b.overlap);
      check_close(a.cost, b.cost, "cost", where);
      nw_affine_cost_free(cpu);
      nw_affine_cost_free(gpu);
    }
}

/* One u16 evaluation of map m on a new CUDA cost, the moving taps through the codes' texture
 * or through plain loads (NW_AFFINE_TEXTURE=0); *gathered: whether the level took the
 * texture (its count in nw_affine_cost_cuda_texture_levels grew). */
static NwAffineCostValue eval_u16(const NwAffineCostSpec *spec, const NwAffineLevel *lv,
                                  const double m[16], gboolean texture, gboolean *gathered)
{
  if (texture)
    g_unsetenv("NW_AFFINE_TEXTURE");
  else
    g_setenv("NW_AFFINE_TEXTURE", "0", TRUE);
  g_autoptr(GError) err = NULL;
  NwAffineCost *gpu = nw_affine_cost_new(&nw_affine_cost_cuda, spec, &err);
  g_assert_no_error(err);
  const guint before = nw_affine_cost_cuda_texture_levels();
  g_assert_true(nw_affine_cost_set_level(gpu, lv, &err));
  *gathered = nw_affine_cost_cuda_texture_levels() > before;
  NwAffineCostValue v;
  g_assert_true(nw_affine_cost_eval_matrix(gpu, m, &v, &err));
  g_assert_no_error(err);
  nw_affine_cost_free(gpu);
  g_unsetenv("NW_AFFINE_TEXTURE");
  return v;
}

/* The u16 linear and cubic samples gathered from the codes' texture (affine_texture_cuda.cuh)
 * are the plain loads' bit for bit: the same voxels counted, the MI of plain bins (exact
 * counts) the same to the last bit, MSE and NCC the same but for the order of the sums. Every
 * transform of transforms() and a shift that leaves a third of the fixed image outside (taps
 * clamped at every edge), in 2D and 3D, with a moving mask; whole-voxel positions (identity)
 * read one layer. */
static void check_texture_pair(int dim, const NwVolume *f, const NwVolume *m, const NwVolume *mmask)
{
  static const NwSampler samplers[] = {NW_SAMPLER_LINEAR, NW_SAMPLER_CUBIC};
  static const MetricCase metrics[] = {{NW_METRIC_MI, 32, FALSE, "mi-plain"},
                                       {NW_METRIC_MSE, 32, FALSE, "mse"},
                                       {NW_METRIC_NCC, 32, FALSE, "ncc"}};
  Xform xf[5];
  int n_xf = transforms(dim, xf);
  rotation_z(3.0, 0.35 * m->nx, -0.2 * m->ny, dim == 3 ? 0.3 * m->nz : 0.0, xf[n_xf].m);
  xf[n_xf++].name = "edges";
  for (gsize s = 0; s < G_N_ELEMENTS(samplers); s++)
    for (gsize mc = 0; mc < G_N_ELEMENTS(metrics); mc++)
      for (int t = 0; t < n_xf; t++) {
        const NwAffineCostSpec spec = {metrics[mc].metric, samplers[s], metrics[mc].bins,
                                       metrics[mc].parzen, NULL};
        const NwAffineLevel lv = {.dim = dim,
                                  .fixed = f,
                                  .moving = m,
                                  .moving_mask = mmask,
                                  .precision = NW_AFFINE_PRECISION_U16};
        gboolean tex_a, tex_b;
        const NwAffineCostValue a = eval_u16(&spec, &lv, xf[t].m, TRUE, &tex_a);
        const NwAffineCostValue b = eval_u16(&spec, &lv, xf[t].m, FALSE, &tex_b);
        if (g_test_verbose())
          g_printerr("%dD %s %s %s: texture %.17g, loads %.17g, overlap %.6f\n", dim,
                     metrics[mc].name, nw_sampler_name(samplers[s]), xf[t].name, a.cost, b.cost,
                     a.overlap);
        g_assert_true(tex_a);  /* the path compared is the texture's ... */
        g_assert_false(tex_b); /* ... against the plain loads */
        g_assert_cmpfloat(a.overlap, ==, b.overlap);
        g_assert_cmpfloat(a.overlap, >, NW_AFFINE_MIN_OVERLAP);
        if (metrics[mc].metric == NW_METRIC_MI)
          g_assert_cmpfloat(a.cost, ==, b.cost);
        else if (!(fabs(a.cost - b.cost) <= 1e-12 * fabs(b.cost) + 1e-15))
          g_error("%dD %s %s %s: texture %.17g, loads %.17g", dim, metrics[mc].name,
                  nw_sampler_name(samplers[s]), xf[t].name, a.cost, b.cost);
      }
}

static void test_texture_samples(void)
{
  g_autoptr(NwVolume) f2 = image(530, 120, 1, 1.0, 41);
  g_autoptr(NwVolume) m2 = image(520, 125, 1, 1.05, 42);
  check_texture_pair(2, f2, m2, NULL);
  g_autoptr(NwVolume) f3 = image(60, 40, 12, 1.0, 43);
  g_autoptr(NwVolume) m3 = image(58, 42, 13, 1.05, 44);
  check_texture_pair(3, f3, m3, NULL);
  g_autoptr(NwVolume) mmask3 = ellipse_mask(m3, 29, 21, 6, 18);
  check_texture_pair(3, f3, m3, mmask3);
}

/* An image wider than the device's layered textures (32,768 texels a row from compute
 * capability 5.0 on) keeps the plain loads, and agrees with the CPU. */
static void test_texture_too_wide(void)
{
  g_autoptr(NwVolume) f = image(65600, 3, 1, 1.0, 45);
  g_autoptr(NwVolume) m = image(65540, 3, 1, 1.0, 46);
  const NwAffineCostSpec spec = {NW_METRIC_MSE, NW_SAMPLER_LINEAR, 32, FALSE, NULL};
  const NwAffineLevel lv = {.dim = 2, .fixed = f, .moving = m, .precision = NW_AFFINE_PRECISION_U16};
  double shift[16];
  rotation_z(0.0, 0.3, 0.2, 0.0, shift);
  gboolean gathered;
  const NwAffineCostValue g = eval_u16(&spec, &lv, shift, TRUE, &gathered);
  g_assert_false(gathered);
  g_autoptr(GError) err = NULL;
  NwAffineCost *cpu = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &err);
  g_assert_true(nw_affine_cost_set_level(cpu, &lv, &err));
  NwAffineCostValue c;
  g_assert_true(nw_affine_cost_eval_matrix(cpu, shift, &c, &err));
  g_assert_no_error(err);
  nw_affine_cost_free(cpu);
  g_assert_cmpfloat(c.overlap, ==, g.overlap);
  check_close(c.cost, g.cost, "cost", "2D 65600x3 u16 mse linear");
}

/* A rotation by deg about the z axis through world (cx, cy) (a voxel grid's centre in mm). */
static void rotation_about(double deg, double cx, double cy, double m[16])
{
  const double a = deg * G_PI / 180.0, c = cos(a), s = sin(a);
  rotation_z(deg, cx - (c * cx - s * cy), cy - (s * cx + c * cy), 0.0, m);
}

/* A CUDA cost made with NW_AFFINE_VOXELS_PER_THREAD=k (0: unset, the default) at level lv (u16);
 * *took: the voxels a thread its kernel took there (nw_affine_cost_cuda_voxels_per_thread). */
static NwAffineCost *rows_cost(const NwAffineCostSpec *spec, const NwAffineLevel *lv, int k,
                               guint *took)
{
  if (k > 0) {
    char v[8];
    g_snprintf(v, sizeof v, "%d", k);
    g_setenv("NW_AFFINE_VOXELS_PER_THREAD", v, TRUE);
  } else {
    g_unsetenv("NW_AFFINE_VOXELS_PER_THREAD");
  }
  g_autoptr(GError) err = NULL;
  NwAffineCost *gpu = nw_affine_cost_new(&nw_affine_cost_cuda, spec, &err);
  g_assert_no_error(err);
  g_unsetenv("NW_AFFINE_VOXELS_PER_THREAD"); /* read once, at creation */
  g_assert_true(nw_affine_cost_set_level(gpu, lv, &err));
  g_assert_no_error(err);
  *took = nw_affine_cost_cuda_voxels_per_thread();
  return gpu;
}

/* The voxels a thread of one evaluation of map m on a cost made as rows_cost makes it. */
static guint rows_took(const NwAffineCostSpec *spec, const NwAffineLevel *lv, const double m[16],
                       int k)
{
  guint took;
  NwAffineCost *gpu = rows_cost(spec, lv, k, &took);
  g_autoptr(GError) err = NULL;
  NwAffineCostValue v;
  g_assert_true(nw_affine_cost_eval_matrix(gpu, m, &v, &err));
  g_assert_no_error(err);
  nw_affine_cost_free(gpu);
  return took;
}

/* The costs of the same voxels and samples, summed in two orders (NW_AFFINE_NO_OVERLAP_COST
 * for both where the overlap is too small). */
static void check_same_sums(double one, double rows, const char *where)
{
  if (!(fabs(one - rows) <= 1e-12 * fabs(one) + 1e-15))
    g_error("%s: cost one voxel a thread %.17g, rows %.17g", where, one, rows);
}

/* transforms(), and a 10° rotation about the fixed image's centre: the maps both rows checks
 * start from (room for 8 in xf). */
static int rows_maps(int dim, const NwVolume *f, Xform xf[8])
{
  int n = transforms(dim, xf);
  rotation_about(10.0, 0.5 * (f->nx - 1) * f->spacing_mm[0], 0.5 * (f->ny - 1) * f->spacing_mm[1],
                 xf[n].m);
  xf[n++].name = "rotated-10";
  return n;
}

/* The rows variants (K voxels of a row a thread, cuda/affine_cost_rows_cuda.cuh) against the
 * one-voxel kernel (NW_AFFINE_VOXELS_PER_THREAD=1) and the CPU: linear, mse and ncc, u16
 * through the texture, K = 2 and 4, and the default (4 for flat images, else 2). The same
 * voxels counted as both (overlap: the counts exactly equal), the cost the one-voxel kernel's
 * to 1e-12 (the same samples; the rows variants sum the codes and turn the sums into values
 * once a thread) and the CPU's to 1e-4; a batch of every map through each rows variant as
 * the one-voxel kernel's alone, to 1e-10. Every transform of transforms(), a 10 degree
 * rotation about the fixed image's centre, a shift that leaves a third of the fixed image
 * outside the moving one (on the narrow images most of them leave most of it outside: at
 * least identity and half-voxel compare a real overlap), and on flat images two maps that
 * tilt out of the slice. */
static void check_rows_pair(int dim, const NwVolume *f, const NwVolume *m)
{
  static const MetricCase metrics[] = {{NW_METRIC_MSE, 32, FALSE, "mse"},
                                       {NW_METRIC_NCC, 32, FALSE, "ncc"}};
  static const int ks[] = {2, 4, 0};
  Xform xf[8];
  int n_xf = rows_maps(dim, f, xf);
  rotation_z(3.0, 0.35 * m->nx, -0.2 * m->ny, dim == 3 ? 0.3 * m->nz : 0.0, xf[n_xf].m);
  xf[n_xf++].name = "edges";
  if (f->nz == 1) {
    /* maps whose z leaves the one slice along a row (m8 != 0: each voxel's own z test) and
     * from one row to the next (m9 != 0: the row's z test, affine_cost_rows_cuda.cuh's ZROW);
     * a 2D level zeroes the map's z row, a 3D level of flat images keeps it */
    for (int a = 0; a < 2; a++) {
      rotation_z(0, 0.3, -0.2, 0, xf[n_xf].m);
      xf[n_xf].m[8 + a] = 0.8 / (a == 0 ? f->nx : f->ny);
      xf[n_xf++].name = a == 0 ? "tilted-along-rows" : "tilted-across-rows";
    }
  }
  const NwAffineLevel lv = {
      .dim = dim, .fixed = f, .moving = m, .precision = NW_AFFINE_PRECISION_U16};
  for (gsize mc = 0; mc < G_N_ELEMENTS(metrics); mc++) {
    const NwAffineCostSpec spec = {metrics[mc].metric, NW_SAMPLER_LINEAR, 32, FALSE, NULL};
    g_autoptr(GError) err = NULL;
    NwAffineCost *cpu = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &err);
    g_assert_true(nw_affine_cost_set_level(cpu, &lv, &err));
    guint took;
    NwAffineCost *ref = rows_cost(&spec, &lv, 1, &took);
    g_assert_cmpuint(took, ==, 1); /* the one-voxel kernel, the reference here */
    NwAffineCostValue one[8], c[8];
    int real = 0; /* transforms with a real overlap */
    for (int t = 0; t < n_xf; t++) {
      g_assert_true(nw_affine_cost_eval_matrix(ref, xf[t].m, &one[t], &err));
      g_assert_true(nw_affine_cost_eval_matrix(cpu, xf[t].m, &c[t], &err));
      g_assert_no_error(err);
      g_assert_cmpfloat(one[t].overlap, ==, c[t].overlap);
      real += one[t].overlap > NW_AFFINE_MIN_OVERLAP;
    }
    g_assert_cmpint(real, >=, 2);
    nw_affine_cost_free(ref);
    nw_affine_cost_free(cpu);
    for (gsize ki = 0; ki < G_N_ELEMENTS(ks); ki++) {
      NwAffineCost *gpu = rows_cost(&spec, &lv, ks[ki], &took);
      const guint k = ks[ki] > 0 ? (guint)ks[ki] : f->nz == 1 && m->nz == 1 ? 4 : 2;
      g_assert_cmpuint(took, ==, k); /* the path compared is the rows variant's */
      for (int t = 0; t < n_xf; t++) {
        NwAffineCostValue r;
        g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[t].m, &r, &err));
        g_assert_no_error(err);
        char where[160];
        g_snprintf(where, sizeof where, "%dD %dx%dx%d %s %s K=%u", dim, f->nx, f->ny, f->nz,
                   metrics[mc].name, xf[t].name, k);
        if (g_test_verbose())
          g_printerr("%s: one %.17g rows %.17g cpu %.17g overlap %.6f\n", where, one[t].cost,
                     r.cost, c[t].cost, r.overlap);
        g_assert_cmpfloat(r.overlap, ==, one[t].overlap);
        check_same_sums(one[t].cost, r.cost, where);
        check_close(c[t].cost, r.cost, "cost", where);
      }
      /* a batch of every map (evaluate_batch's kernel) */
      double batch_m[8][16];
      NwAffineCostValue batch_v[8];
      for (int t = 0; t < n_xf; t++)
        memcpy(batch_m[t], xf[t].m, sizeof batch_m[t]);
      g_assert_true(
          nw_affine_cost_eval_batch(gpu, (const double(*)[16])batch_m, n_xf, batch_v, &err));
      g_assert_no_error(err);
      for (int t = 0; t < n_xf; t++) {
        g_assert_cmpfloat(batch_v[t].overlap, ==, one[t].overlap);
        if (!(fabs(batch_v[t].cost - one[t].cost) <= 1e-10 * fabs(one[t].cost) + 1e-12))
          g_error("%dD %s %s K=%u: rows batch %.17g, one voxel a thread alone %.17g", dim,
                  metrics[mc].name, xf[t].name, k, batch_v[t].cost, one[t].cost);
      }
      nw_affine_cost_free(gpu);
    }
  }
}

/* Fixed widths odd (a short group at every row's end), 2 mod 4 (whole for K = 2 only) and a
 * multiple of 4 (whole, one load of the K codes); rows narrower than a group (3 < 4) and a
 * level smaller than one block's groups; 3D at the MNI 2 mm grid (91 x 109 x 91, odd) and at
 * a width of 4 k. */
static void test_rows(void)
{
  static const int sizes_2d[][2] = {{1023, 517}, {1022, 301}, {1024, 300}, {3, 2000}, {13, 7}};
  for (gsize i = 0; i < G_N_ELEMENTS(sizes_2d); i++) {
    const int nx = sizes_2d[i][0], ny = sizes_2d[i][1];
    g_autoptr(NwVolume) f = image(nx, ny, 1, 1.0, 51 + (guint32)i);
    g_autoptr(NwVolume) m = image(nx + 7, ny + 5, 1, 1.05, 61 + (guint32)i);
    check_rows_pair(2, f, m);
    if (i == 0)
      check_rows_pair(3, f, m); /* flat images, 3D maps: the 2D variants, z tested */
  }
  g_autoptr(NwVolume) f3 = image(91, 109, 91, 2.0, 71);
  g_autoptr(NwVolume) m3 = image(93, 105, 89, 2.1, 72);
  check_rows_pair(3, f3, m3);
  g_autoptr(NwVolume) f4 = image(64, 30, 21, 1.0, 73);
  g_autoptr(NwVolume) m4 = image(60, 33, 22, 1.05, 74);
  check_rows_pair(3, f4, m4);
  g_autoptr(NwVolume) f5 = image(6, 7, 150, 1.0, 75);
  g_autoptr(NwVolume) m5 = image(7, 7, 151, 1.0, 76);
  check_rows_pair(3, f5, m5);
}

/* Precision u16-filter: the rows variants take the texture unit's bilinear blend
 * (affine_texture_cuda.cuh's nw_codes_filtered), whose weights have 8 fractional bits. On
 * each pair and map: the same voxels counted as u16's (overlap equal), the cost within the
 * issue's 1e-4 relative of the CPU's (which computes u16's; an H100 gave up to 2.2e-5 on
 * these textured images), and, for at least two maps, not equal to the GPU's at u16: the
 * filter ran. A batch gives the single
 * evaluations' costs. 2D (K = 4), 3D (K = 2, two filtered layers blended along z). */
static void check_filter_pair(int dim, const NwVolume *f, const NwVolume *m)
{
  static const NwAffineMetric metrics[] = {NW_METRIC_MSE, NW_METRIC_NCC};
  Xform xf[8];
  const int n_xf = rows_maps(dim, f, xf);
  const NwAffineLevel exact = {
      .dim = dim, .fixed = f, .moving = m, .precision = NW_AFFINE_PRECISION_U16};
  NwAffineLevel filter = exact;
  filter.precision = NW_AFFINE_PRECISION_U16_FILTER;
  for (gsize mc = 0; mc < G_N_ELEMENTS(metrics); mc++) {
    const NwAffineCostSpec spec = {metrics[mc], NW_SAMPLER_LINEAR, 32, FALSE, NULL};
    g_autoptr(GError) err = NULL;
    NwAffineCost *cpu = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &err);
    g_assert_true(nw_affine_cost_set_level(cpu, &filter, &err));
    guint took;
    NwAffineCost *u16 = rows_cost(&spec, &exact, 0, &took);
    NwAffineCost *gpu = rows_cost(&spec, &filter, 0, &took);
    g_assert_cmpuint(took, ==, f->nz == 1 && m->nz == 1 ? 4 : 2); /* a rows variant */
    int differ = 0;
    double batch_m[8][16];
    NwAffineCostValue got[8], batch_v[8];
    for (int t = 0; t < n_xf; t++) {
      NwAffineCostValue c, e;
      g_assert_true(nw_affine_cost_eval_matrix(cpu, xf[t].m, &c, &err));
      g_assert_true(nw_affine_cost_eval_matrix(u16, xf[t].m, &e, &err));
      g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[t].m, &got[t], &err));
      g_assert_no_error(err);
      char where[160];
      g_snprintf(where, sizeof where, "u16-filter %dD %dx%dx%d %s %s", dim, f->nx, f->ny, f->nz,
                 nw_affine_metric_name(metrics[mc]), xf[t].name);
      if (g_test_verbose())
        g_printerr("%s: cpu %.17g u16 %.17g filter %.17g\n", where, c.cost, e.cost, got[t].cost);
      g_assert_cmpfloat(got[t].overlap, ==, e.overlap);
      if (!(fabs(got[t].cost - c.cost) <= 1e-4 * fabs(c.cost) + 1e-12))
        g_error("%s: cost %.17g, the CPU's (u16) %.17g", where, got[t].cost, c.cost);
      differ += got[t].cost != e.cost;
      memcpy(batch_m[t], xf[t].m, sizeof batch_m[t]);
    }
    g_assert_cmpint(differ, >=, 2); /* the shifted and rotated maps at least */
    g_assert_true(nw_affine_cost_eval_batch(gpu, (const double(*)[16])batch_m, n_xf, batch_v, &err));
    g_assert_no_error(err);
    for (int t = 0; t < n_xf; t++)
      if (!(fabs(batch_v[t].cost - got[t].cost) <= 1e-10 * fabs(got[t].cost) + 1e-12))
        g_error("u16-filter %dD %s: batch %.17g, alone %.17g", dim, xf[t].name, batch_v[t].cost,
                got[t].cost);
    nw_affine_cost_free(gpu);
    nw_affine_cost_free(u16);
    nw_affine_cost_free(cpu);
  }
}

static void test_rows_filter(void)
{
  g_autoptr(NwVolume) f = image(1023, 517, 1, 1.0, 81);
  g_autoptr(NwVolume) m = image(1030, 522, 1, 1.05, 82);
  check_filter_pair(2, f, m);
  g_autoptr(NwVolume) f3 = image(91, 109, 91, 2.0, 83);
  g_autoptr(NwVolume) m3 = image(93, 105, 89, 2.1, 84);
  check_filter_pair(3, f3, m3);
}

/* Where the rows variants do not apply, the one-voxel kernel takes the level: mi, cubic, a
 * fixed or moving mask, plain loads (NW_AFFINE_TEXTURE=0); and NW_AFFINE_VOXELS_PER_THREAD
 * asks for K = 2 or 4 in 2D and 3D alike. */
static void test_rows_choice(void)
{
  g_autoptr(NwVolume) f = image(101, 60, 1, 1.0, 81);
  g_autoptr(NwVolume) m = image(99, 62, 1, 1.0, 82);
  g_autoptr(NwVolume) fmask = ellipse_mask(f, 50, 30, 0, 25);
  g_autoptr(NwVolume) mmask = ellipse_mask(m, 49, 31, 0, 25);
  double shift[16];
  rotation_z(4.0, 0.3, -0.6, 0.0, shift);
  const NwAffineCostSpec mse = {NW_METRIC_MSE, NW_SAMPLER_LINEAR, 32, FALSE, NULL};
  const NwAffineCostSpec mi = {NW_METRIC_MI, NW_SAMPLER_LINEAR, 32, FALSE, NULL};
  const NwAffineCostSpec cubic = {NW_METRIC_NCC, NW_SAMPLER_CUBIC, 32, FALSE, NULL};
  const NwAffineLevel plain = {.dim = 2, .fixed = f, .moving = m,
                               .precision = NW_AFFINE_PRECISION_U16};
  NwAffineLevel masked = plain;
  masked.fixed_mask = fmask;
  NwAffineLevel mmasked = plain;
  mmasked.moving_mask = mmask;
  g_assert_cmpuint(rows_took(&mse, &plain, shift, 0), ==, 4);
  g_assert_cmpuint(rows_took(&mse, &plain, shift, 2), ==, 2);
  g_assert_cmpuint(rows_took(&mse, &plain, shift, 7), ==, 4); /* not 1, 2 or 4: the default */
  g_assert_cmpuint(rows_took(&mi, &plain, shift, 0), ==, 1);
  g_assert_cmpuint(rows_took(&cubic, &plain, shift, 0), ==, 1);
  g_assert_cmpuint(rows_took(&mse, &masked, shift, 0), ==, 1);
  g_assert_cmpuint(rows_took(&mse, &mmasked, shift, 0), ==, 1);
  g_setenv("NW_AFFINE_TEXTURE", "0", TRUE);
  const guint loads = rows_took(&mse, &plain, shift, 4);
  g_unsetenv("NW_AFFINE_TEXTURE");
  g_assert_cmpuint(loads, ==, 1);
  g_autoptr(NwVolume) f3 = image(30, 20, 10, 1.0, 83);
  g_autoptr(NwVolume) m3 = image(31, 21, 11, 1.0, 84);
  const NwAffineLevel l3 = {.dim = 3, .fixed = f3, .moving = m3,
                            .precision = NW_AFFINE_PRECISION_U16};
  g_assert_cmpuint(rows_took(&mse, &l3, shift, 0), ==, 2);
  g_assert_cmpuint(rows_took(&mse, &l3, shift, 4), ==, 4);
}

/* A level change frees the previous level's images and takes the next's (coarse to fine). */
static void test_levels(void)
{
  g_autoptr(NwVolume) small = image(20, 18, 1, 2.0, 1);
  g_autoptr(NwVolume) big = image(40, 36, 1, 1.0, 1);
  const NwAffineCostSpec spec = {NW_METRIC_NCC, NW_SAMPLER_LINEAR, 32, FALSE, NULL};
  g_autoptr(GError) err = NULL;
  NwAffineCost *cpu = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &err);
  NwAffineCost *gpu = nw_affine_cost_new(&nw_affine_cost_cuda, &spec, &err);
  Xform xf[4];
  transforms(2, xf);
  const NwVolume *levels[2] = {small, big};
  for (int l = 0; l < 2; l++) {
    const NwAffineLevel lv = {.dim = 2, .fixed = levels[l], .moving = levels[l]};
    g_assert_true(nw_affine_cost_set_level(cpu, &lv, &err));
    g_assert_true(nw_affine_cost_set_level(gpu, &lv, &err));
    NwAffineCostValue a, b;
    g_assert_true(nw_affine_cost_eval_matrix(cpu, xf[2].m, &a, &err));
    g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[2].m, &b, &err));
    g_assert_no_error(err);
    g_assert_cmpfloat(a.overlap, ==, b.overlap);
    check_close(a.cost, b.cost, "cost", l == 0 ? "level 0" : "level 1");
  }
  nw_affine_cost_free(cpu);
  nw_affine_cost_free(gpu);
}

/* The pyramid made on the device (pyramid_cuda.cu) equals nw_pyramid_new's bit for bit, odd
 * and even sizes, 2D and 3D (the coarsest level's voxels on the host, the finer levels' read
 * back from the device); its levels stay on the device, where set_level finds them: the
 * cost there equals the cost of an upload of the same level exactly. */
static void test_pyramid(void)
{
  g_autoptr(NwVolume) v2 = image(101, 77, 1, 1.3, 5);
  g_autoptr(NwVolume) v3 = image(45, 38, 33, 2.0, 6);
  const NwVolume *vols[2] = {v2, v3};
  const NwAffineCostSpec spec = {NW_METRIC_NCC, NW_SAMPLER_CUBIC, 32, FALSE, NULL};
  for (int t = 0; t < 2; t++) {
    const NwVolume *v = vols[t];
    g_autoptr(GError) err = NULL;
    const int n = nw_pyramid_levels(v, 4);
    g_assert_cmpint(n, >=, 2);
    NwAffineCost *gpu = nw_affine_cost_new(&nw_affine_cost_cuda, &spec, &err);
    NwAffineCost *upl = nw_affine_cost_new(&nw_affine_cost_cuda, &spec, &err);
    g_assert_no_error(err);
    NwVolume **dev = nw_affine_cost_pyramid(gpu, v, n, &err);
    g_assert_no_error(err);
    g_assert_nonnull(dev[0]->data); /* the starts read the coarsest level on the host */
    int n_ref = 0;
    NwVolume **ref = nw_pyramid_new(v, n, &n_ref, &err);
    g_assert_cmpint(n_ref, ==, n);
    Xform xf[4];
    transforms(v->nz > 1 ? 3 : 2, xf);
    for (int l = 0; l < n; l++) {
      g_assert_cmpint(dev[l]->nx, ==, ref[l]->nx);
      g_assert_cmpint(dev[l]->ny, ==, ref[l]->ny);
      g_assert_cmpint(dev[l]->nz, ==, ref[l]->nz);
      g_assert_cmpmem(dev[l]->vox_to_ras, sizeof dev[l]->vox_to_ras, ref[l]->vox_to_ras,
                      sizeof ref[l]->vox_to_ras);
      const size_t bytes = nw_volume_n_voxels(ref[l]) * sizeof(float);
      g_autoptr(NwVolume) got = nw_affine_cost_level_copy(gpu, dev[l], &err);
      g_assert_no_error(err);
      if (memcmp(got->data, ref[l]->data, bytes) != 0) {
        size_t e = 0;
        while (got->data[e] == ref[l]->data[e])
          e++;
        g_error("pyramid %s, level %d: voxel %zu is %.9g on the GPU, %.9g on the CPU",
                t == 0 ? "2D" : "3D", l, e, got->data[e], ref[l]->data[e]);
      }
      /* the kept level (no upload) and an upload of the CPU's copy: the same cost */
      const NwAffineLevel kept = {.dim = v->nz > 1 ? 3 : 2, .fixed = dev[l], .moving = dev[l]};
      const NwAffineLevel sent = {.dim = kept.dim, .fixed = ref[l], .moving = ref[l]};
      NwAffineCostValue a, b;
      g_assert_true(nw_affine_cost_set_level(gpu, &kept, &err));
      g_assert_true(nw_affine_cost_set_level(upl, &sent, &err));
      g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[2].m, &a, &err));
      g_assert_true(nw_affine_cost_eval_matrix(upl, xf[2].m, &b, &err));
      g_assert_no_error(err);
      g_assert_cmpfloat(a.cost, ==, b.cost);
      g_assert_cmpfloat(a.overlap, ==, b.overlap);
    }
    nw_affine_cost_free(gpu); /* before the host copies it knows the levels by */
    nw_affine_cost_free(upl);
    nw_pyramid_free(dev, n);
    nw_pyramid_free(ref, n);
  }
}

/* The level statistics computed on the device (level_stats, affine_stats_cuda.cuh) against
 * the host's (nw_affine_stats_add, and the u16 quantisation nw_affine_cost_set_level makes):
 * counts, extremes and quantisations equal, sums to rounding (another order); a float and an
 * integer image, without a mask, with one, and with an empty one. */
static void test_level_stats(void)
{
  g_autoptr(NwVolume) f = image(301, 257, 1, 1.0, 11); /* > one wave of the first pass */
  g_autoptr(NwVolume) m = image(290, 260, 1, 1.0, 12);
  for (size_t e = 0; e < nw_volume_n_voxels(m); e++)
    m->data[e] = floorf(m->data[e] * 100.0f); /* integers spanning < 65536: step-1 codes */
  g_autoptr(NwVolume) fmask = ellipse_mask(f, 150, 128, 0, 90);
  g_autoptr(NwVolume) empty = nw_volume_new_like(m, 1, NULL);
  const NwVolume *fm[3] = {NULL, fmask, fmask}, *mm[3] = {NULL, NULL, empty};
  const NwAffineCostSpec spec = {NW_METRIC_MI, NW_SAMPLER_LINEAR, 32, FALSE, NULL};
  g_autoptr(GError) err = NULL;
  void *impl = nw_affine_cost_cuda.create(&spec, &err);
  g_assert_no_error(err);
  for (int c = 0; c < 3; c++) {
    const NwAffineLevel lv = {.dim = 2,
                              .fixed = f,
                              .moving = m,
                              .fixed_mask = fm[c],
                              .moving_mask = mm[c],
                              .precision = NW_AFFINE_PRECISION_U16};
    NwAffineStats dev[2];
    NwQuant q[2];
    g_assert_true(nw_affine_cost_cuda.level_stats(impl, &lv, &dev[0], &dev[1], q, &err));
    g_assert_no_error(err);
    const NwVolume *img[2] = {f, m}, *mask[2] = {fm[c], mm[c]};
    for (int i = 0; i < 2; i++) {
      NwAffineStats ref, all;
      nw_affine_stats_init(&ref);
      nw_affine_stats_add(&ref, img[i]->data, mask[i] ? mask[i]->data : NULL,
                          nw_volume_n_voxels(img[i]));
      nw_affine_stats_init(&all);
      nw_affine_stats_add(&all, img[i]->data, NULL, nw_volume_n_voxels(img[i]));
      double magnitude = 0.0;
      gboolean integers = TRUE;
      for (size_t e = 0; e < nw_volume_n_voxels(img[i]); e++) {
        magnitude += fabs(img[i]->data[e]);
        integers &= img[i]->data[e] == floorf(img[i]->data[e]);
      }
      g_assert_cmpfloat(dev[i].n, ==, ref.n);
      g_assert_cmpfloat(dev[i].lo, ==, ref.lo);
      g_assert_cmpfloat(dev[i].hi, ==, ref.hi);
      g_assert_cmpfloat(fabs(dev[i].sum - ref.sum), <=, 1e-12 * magnitude);
      const NwQuant want = nw_quant_make(all.lo, all.hi, integers);
      g_assert_cmpmem(&q[i], sizeof q[i], &want, sizeof want);
      g_assert_cmpint(integers, ==, i == 1);
      if (i == 1)
        g_assert_cmpfloat(q[i].step, ==, 1.0);
    }
  }
  nw_affine_cost_cuda.destroy(impl);
}

/* A pyramid made while a u16 level is set (its codes share the pyramids' smoothing buffers,
 * so this one smooths in buffers of its own): the level's cost is unchanged, and the new
 * pyramid is still the host's. */
static void test_pyramid_after_level(void)
{
  g_autoptr(NwVolume) f = image(160, 140, 1, 1.0, 13);
  g_autoptr(NwVolume) v = image(150, 150, 1, 1.0, 14);
  const NwAffineCostSpec spec = {NW_METRIC_NCC, NW_SAMPLER_LINEAR, 32, FALSE, NULL};
  g_autoptr(GError) err = NULL;
  NwAffineCost *gpu = nw_affine_cost_new(&nw_affine_cost_cuda, &spec, &err);
  g_assert_no_error(err);
  const int n = nw_pyramid_levels(f, 3);
  NwVolume **first = nw_affine_cost_pyramid(gpu, f, n, &err);
  g_assert_no_error(err);
  const NwAffineLevel lv = {.dim = 2,
                            .fixed = first[n - 1],
                            .moving = first[n - 1],
                            .precision = NW_AFFINE_PRECISION_U16};
  g_assert_true(nw_affine_cost_set_level(gpu, &lv, &err));
  Xform xf[4];
  transforms(2, xf);
  NwAffineCostValue before, after;
  g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[2].m, &before, &err));
  const int nv = nw_pyramid_levels(v, 3);
  NwVolume **second = nw_affine_cost_pyramid(gpu, v, nv, &err);
  g_assert_no_error(err);
  g_assert_true(nw_affine_cost_eval_matrix(gpu, xf[2].m, &after, &err));
  g_assert_cmpfloat(before.cost, ==, after.cost);
  int n_ref = 0;
  NwVolume **ref = nw_pyramid_new(v, nv, &n_ref, &err);
  for (int l = 0; l < nv; l++) {
    g_autoptr(NwVolume) got = nw_affine_cost_level_copy(gpu, second[l], &err);
    g_assert_no_error(err);
    g_assert_cmpmem(got->data, nw_volume_n_voxels(got) * sizeof(float), ref[l]->data,
                    nw_volume_n_voxels(ref[l]) * sizeof(float));
  }
  nw_affine_cost_free(gpu);
  nw_pyramid_free(first, n);
  nw_pyramid_free(second, nv);
  nw_pyramid_free(ref, nv);
}

/* The warped image made on the device (the job's result and frames at the finest level)
 * against nw_affine_resample: nearest samples equal, linear and cubic within float rounding
 * (a voxel one side takes outside the moving image and the other inside would differ by a
 * sample: positions are the CPU's bit for bit). */
static void test_warp(void)
{
  g_autoptr(NwVolume) f2 = image(83, 61, 1, 1.0, 7);
  g_autoptr(NwVolume) m2 = image(70, 66, 1, 1.2, 8);
  g_autoptr(NwVolume) f3 = image(31, 27, 23, 2.0, 9);
  g_autoptr(NwVolume) m3 = image(29, 30, 25, 1.8, 10);
  const NwVolume *fixed[2] = {f2, f3}, *moving[2] = {m2, m3};
  static const NwSampler samplers[3] = {NW_SAMPLER_NEAREST, NW_SAMPLER_LINEAR, NW_SAMPLER_CUBIC};
  for (int t = 0; t < 2; t++)
    for (int s = 0; s < 3; s++) {
      const NwAffineCostSpec spec = {NW_METRIC_MSE, samplers[s], 32, FALSE, NULL};
      g_autoptr(GError) err = NULL;
      NwAffineCost *gpu = nw_affine_cost_new(&nw_affine_cost_cuda, &spec, &err);
      const int dim = t == 0 ? 2 : 3;
      const NwAffineLevel lv = {.dim = dim, .fixed = fixed[t], .moving = moving[t]};
      g_assert_true(nw_affine_cost_set_level(gpu, &lv, &err));
      Xform xf[4];
      const int nx = transforms(dim, xf);
      for (int x = 0; x < nx; x++) {
        /* every other warp into a volume prepared beside (nw_affine_cost_prepare_warp) */
        if (x % 2 == 1)
          nw_affine_cost_prepare_warp(gpu, fixed[t]);
        g_autoptr(NwVolume) a = nw_affine_cost_warp(gpu, xf[x].m, samplers[s], &err);
        g_assert_no_error(err);
        g_assert_true(nw_volume_same_grid(a, fixed[t]));
        g_autoptr(NwVolume) b =
            nw_affine_resample(moving[t], fixed[t], xf[x].m, dim, samplers[s], 0.0f, &err);
        g_assert_no_error(err);
        double worst = 0.0;
        for (size_t e = 0; e < nw_volume_n_voxels(b); e++) {
          worst = MAX(worst, fabs((double)a->data[e] - b->data[e]));
        }
        if (g_test_verbose())
          g_printerr("warp %dD %s %s: largest difference %.3g\n", dim, nw_sampler_name(samplers[s]),
                     xf[x].name, worst);
        g_assert_cmpfloat(worst, <=, samplers[s] == NW_SAMPLER_NEAREST ? 0.0 : 1e-4);
      }
      /* one prepared for this grid, kept through a warp on another grid and taken back on
       * it; one dropped by free */
      nw_affine_cost_prepare_warp(gpu, fixed[t]);
      const NwAffineLevel other = {.dim = dim, .fixed = moving[t], .moving = fixed[t]};
      g_assert_true(nw_affine_cost_set_level(gpu, &other, &err));
      g_autoptr(NwVolume) o = nw_affine_cost_warp(gpu, xf[0].m, samplers[s], &err);
      g_assert_no_error(err);
      g_assert_true(nw_volume_same_grid(o, moving[t]));
      g_assert_true(nw_affine_cost_set_level(gpu, &lv, &err));
      g_autoptr(NwVolume) back = nw_affine_cost_warp(gpu, xf[0].m, samplers[s], &err);
      g_assert_no_error(err);
      g_assert_true(nw_volume_same_grid(back, fixed[t]));
      g_autoptr(NwVolume) fresh = nw_affine_cost_warp(gpu, xf[0].m, samplers[s], &err);
      g_assert_no_error(err);
      g_assert_cmpmem(back->data, nw_volume_n_voxels(back) * sizeof(float), fresh->data,
                      nw_volume_n_voxels(fresh) * sizeof(float));
      nw_affine_cost_prepare_warp(gpu, fixed[t]);
      nw_affine_cost_free(gpu);
    }
}

/* ---- whole registrations: CPU and CUDA end at the same transform ------------------------- */

/* Runs the CPU and the CUDA method; their parameters must agree within tol_mm (translations)
 * and tol (the rest). truth (the map that made moving: moving = fixed ∘ truth), when given:
 * the CPU run must have found its inverse (truth · found = identity), so the comparison is
 * of converged runs (a run cut off by the iteration limit depends on every bit of every
 * cost). */
static void compare_runs(const NwMethodInputs *in, const char *const *settings, const double *truth,
                         double tol_mm, double tol_rad)
{
  g_autoptr(NwParams) p = nw_test_affine_params(settings);
  NwTestAffineRun cpu, gpu;
  nw_test_affine_run_ops(&nw_affine_cpu_ops, in, p, &cpu);
  nw_test_affine_run_ops(&nw_affine_cuda_ops, in, p, &gpu);
  double pc[NW_XFORM_MAX_PARAMS], pg[NW_XFORM_MAX_PARAMS];
  if (truth != NULL) {
    double prod[16];
    nw_affine_mul(truth, cpu.matrix, prod);
    for (int r = 0; r < 3; r++)
      for (int col = 0; col < 4; col++) {
        const double want = r == col ? 1.0 : 0.0;
        const double tol = col == 3 ? 0.1 : 0.01; /* mm; dimensionless */
        if (!(fabs(prod[r * 4 + col] - want) <= tol))
          g_error("the CPU run did not recover the transform: (truth · found)[%d][%d] = %.5f", r,
                  col, prod[r * 4 + col]);
      }
  }
  nw_transform_get_params(&cpu.t, pc);
  nw_transform_get_params(&gpu.t, pg);
  const int n = nw_transform_n_params(cpu.t.dim, cpu.t.kind);
  for (int i = 0; i < n; i++) {
    const char *name = nw_transform_param_name(cpu.t.dim, cpu.t.kind, i);
    /* translations in mm; rotations (radians), scales and shears are dimensionless */
    const double tol = name[0] == 't' ? tol_mm : tol_rad;
    if (g_test_verbose())
      g_printerr("%s: cpu %.6f cuda %.6f\n", name, pc[i], pg[i]);
    if (!(fabs(pc[i] - pg[i]) <= tol))
      g_error("parameter %s: cpu %.6f cuda %.6f (tolerance %g)", name, pc[i], pg[i], tol);
  }
  /* the simplex may part ways near its end, where vertices' costs differ in the last bits:
   * the final costs agree to the tolerance of the runs, not of one evaluation */
  g_assert_cmpfloat(fabs(cpu.v.cost - gpu.v.cost), <=, 1e-3 * fabs(cpu.v.cost) + 1e-6);
}

/* The 2D blob pair of test_affine_cost.c (moved by (2.5, -2) mm), mse and mi. */
static void test_register_2d(void)
{
  g_autoptr(NwVolume) f = nw_volume_new(64, 64, 1, 1, NULL);
  g_autoptr(NwVolume) m = nw_volume_new(64, 64, 1, 1, NULL);
  for (int j = 0; j < 64; j++)
    for (int i = 0; i < 64; i++) {
      const double x = i - 30.0, y = j - 33.0, xs = i - 32.5, ys = j - 31.0;
      const size_t e = nw_volume_index(f, i, j, 0);
      f->data[e] = (float)(exp(-(x * x + 2 * y * y) / 80.0) + 0.5 * exp(-(x * x) / 20.0));
      m->data[e] = (float)(exp(-(xs * xs + 2 * ys * ys) / 80.0) + 0.5 * exp(-(xs * xs) / 20.0));
    }
  const NwMethodInputs in = {.fixed = f, .moving = m};
  static const char *const mse[] = {"metric=mse", "levels=2", NULL};
  compare_runs(&in, mse, NULL, 0.03, 1e-3);
  static const char *const mi[] = {"metric=mi", "interp=cubic", "levels=2", NULL};
  compare_runs(&in, mi, NULL, 0.03, 1e-3);
  /* the gradient search: its probes go to the GPU as batches (in 3D, on the blob of
   * test_register_3d, it stops short of the truth on the CPU as well: not a parity case) */
  static const char *const mse_g[] = {"metric=mse", "levels=2", "optimizer=gradient", NULL};
  compare_runs(&in, mse_g, NULL, 0.03, 1e-3);
  static const char *const mi_g[] = {"metric=mi", "levels=2", "optimizer=gradient", NULL};
  compare_runs(&in, mi_g, NULL, 0.03, 1e-3);
  /* the reference storage, float images and double positions (the default is u16) */
  static const char *const single[] = {"metric=mse", "levels=2", "precision=single", NULL};
  compare_runs(&in, single, NULL, 0.03, 1e-3);
  /* the texture unit's blend on the GPU (the CPU computes u16's): the simplex, and the
   * gradient search, whose probes go as batches. Its costs are u16's to ~1e-5, not to the
   * last bits, and step 1/256 of a voxel apart: the runs end within a tenth of a voxel */
  static const char *const filter[] = {"metric=mse", "levels=2", "precision=u16-filter", NULL};
  compare_runs(&in, filter, NULL, 0.1, 3e-3);
  static const char *const filter_g[] = {"metric=mse", "levels=2", "precision=u16-filter",
                                         "optimizer=gradient", NULL};
  compare_runs(&in, filter_g, NULL, 0.1, 3e-3);
}

/* 3D: a smooth volume and its copies under a known rigid motion (8°, 3 mm; ncc) and a known
 * affine one (scalings of 6 % and 4 %, 1.5 mm; mse). Both runs must converge (a run cut off
 * by the iteration limit would depend on every bit of every cost). */
/* A 32 x 30 x 28 volume of two Gaussian blobs, 1 mm voxels: the 3D registrations' image. */
static NwVolume *blob_3d(void)
{
  NwVolume *f = nw_volume_new(32, 30, 28, 1, NULL);
  for (int k = 0; k < f->nz; k++)
    for (int j = 0; j < f->ny; j++)
      for (int i = 0; i < f->nx; i++) {
        const double x = i - 15.5, y = j - 14.0, z = k - 13.5;
        f->data[nw_volume_index(f, i, j, k)] =
            (float)(exp(-(x * x + 1.5 * y * y + 0.8 * z * z) / 60.0) +
                    0.4 * exp(-((x - 4) * (x - 4) + y * y + (z + 3) * (z + 3)) / 12.0));
      }
  return f;
}

static void test_register_3d(void)
{
  g_autoptr(NwVolume) f = blob_3d();
  double c[3];
  nw_volume_centre_mm(f, c);
  NwTransform rigid, affine;
  nw_transform_init(&rigid, 3, NW_XFORM_RIGID, c);
  rigid.rotation_rad[0] = 8.0 * G_PI / 180.0;
  rigid.translation_mm[1] = 3.0;
  nw_transform_init(&affine, 3, NW_XFORM_AFFINE, c);
  affine.scale[0] = 1.06;
  affine.scale[2] = 0.96;
  affine.translation_mm[0] = 1.5;
  const NwTransform *truth[2] = {&rigid, &affine};
  static const char *const rigid_ncc[] = {"metric=ncc", "levels=2", NULL};
  static const char *const affine_mse[] = {"transform=affine", "metric=mse", "levels=2", NULL};
  const char *const *settings[2] = {rigid_ncc, affine_mse};
  for (int r = 0; r < 2; r++) {
    double tm[16];
    nw_transform_matrix(truth[r], tm);
    g_autoptr(GError) err = NULL;
    g_autoptr(NwVolume) m = nw_affine_resample(f, f, tm, 3, NW_SAMPLER_CUBIC, 0.0f, &err);
    g_assert_no_error(err);
    const NwMethodInputs in = {.fixed = f, .moving = m};
    compare_runs(&in, settings[r], tm, 0.03, 1e-3);
  }
}

/* The back end refuses what it does not handle (a vector image) with an error. */
/* "affine-demons" (affine_demons_method.h) to its end through the method interface: the
 * transform its affine stage found and its warped image. */
static void run_affine_demons(const NwMethodOps *ops, const NwMethodInputs *in, double t[16],
                              NwVolume **warped)
{
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  g_assert_true(nw_params_set_string(p, "affine-transform", "rigid", NULL));
  g_assert_true(nw_params_set(p, "affine-levels", 2, NULL));
  g_assert_true(nw_params_set(p, "levels", 1, NULL));
  g_assert_true(nw_params_set(p, "iterations", 20, NULL));
  g_autoptr(GError) err = NULL;
  void *st = ops->create(in, p, &err);
  g_assert_no_error(err);
  NwIterationReport r = {0};
  for (int it = 1; !r.finished && it < 100000; it++) {
    r = (NwIterationReport){.iteration = it};
    g_assert_true(ops->step(st, &r, &err));
    g_assert_no_error(err);
  }
  NwMethodResult *res = ops->result(st, &err);
  g_assert_no_error(err);
  int n = 0;
  const double *m = nw_method_result_get_values(res, "transform", &n);
  g_assert_cmpint(n, ==, 16);
  memcpy(t, m, 16 * sizeof(double));
  *warped = nw_volume_copy(nw_method_result_get(res, "warped"));
  nw_method_result_free(res);
  ops->destroy(st);
}

/* "affine-demons" on CUDA (cuda/affine_demons_cuda.cu) beside its CPU twin, on a pair on two
 * grids (1 mm and 1.1 mm, shifted origins) a rigid transform apart: both affine stages find
 * the transform (0.5 mm at the fixed box's corners) and agree (0.1 mm), and both warped
 * images, on the fixed grid, match the fixed image. */
static void test_affine_demons(void)
{
  g_autoptr(NwVolume) f = blob_3d();
  double c[3];
  nw_volume_centre_mm(f, c);
  NwTransform truth;
  nw_transform_init(&truth, 3, NW_XFORM_RIGID, c);
  truth.rotation_rad[0] = 6.0 * G_PI / 180.0;
  truth.translation_mm[1] = 2.5;
  double tm[16], inv[16];
  nw_transform_matrix(&truth, tm);
  g_assert_true(nw_affine_inverse(tm, inv));
  g_autoptr(NwVolume) grid = nw_volume_new(30, 31, 27, 1, NULL);
  const double a[16] = {1.1, 0, 0, -1.0, 0, 1.1, 0, 0.5, 0, 0, 1.1, -0.8, 0, 0, 0, 1};
  nw_volume_set_affine(grid, a);
  g_autoptr(GError) err = NULL;
  g_autoptr(NwVolume) m = nw_affine_resample(f, grid, inv, 3, NW_SAMPLER_CUBIC, 0.0f, &err);
  g_assert_no_error(err);
  const NwMethodInputs in = {.fixed = f, .moving = m};
  const NwMethodOps *ops[2] = {&nw_affine_demons_cpu_ops, &nw_affine_demons_cuda_ops};
  double found[2][16];
  for (int d = 0; d < 2; d++) {
    g_autoptr(NwVolume) warped = NULL;
    run_affine_demons(ops[d], &in, found[d], &warped);
    double mse, ncc;
    nw_image_similarity(f, warped, &mse, &ncc);
    if (g_test_verbose())
      g_printerr("%s: NCC %.5f\n", d ? "cuda" : "cpu", ncc);
    g_assert_cmpfloat(ncc, >, 0.99);
  }
  for (int corner = 0; corner < 8; corner++) {
    const double ijk[3] = {corner & 1 ? f->nx - 1 : 0, corner & 2 ? f->ny - 1 : 0,
                           corner & 4 ? f->nz - 1 : 0};
    double x[3], p[3][3];
    nw_volume_voxel_to_world(f, ijk, x);
    const double *mats[3] = {tm, found[0], found[1]};
    for (int w = 0; w < 3; w++)
      for (int r = 0; r < 3; r++)
        p[w][r] = mats[w][r * 4] * x[0] + mats[w][r * 4 + 1] * x[1] + mats[w][r * 4 + 2] * x[2] +
                  mats[w][r * 4 + 3];
    double d_cpu = 0, d_cuda = 0, d_twins = 0;
    for (int r = 0; r < 3; r++) {
      d_cpu += (p[1][r] - p[0][r]) * (p[1][r] - p[0][r]);
      d_cuda += (p[2][r] - p[0][r]) * (p[2][r] - p[0][r]);
      d_twins += (p[2][r] - p[1][r]) * (p[2][r] - p[1][r]);
    }
    g_assert_cmpfloat(sqrt(d_cpu), <, 0.5);
    g_assert_cmpfloat(sqrt(d_cuda), <, 0.5);
    g_assert_cmpfloat(sqrt(d_twins), <, 0.1);
  }
}

static void test_refuses_vectors(void)
{
  g_autoptr(NwVolume) f = image(10, 10, 1, 1.0, 1);
  g_autoptr(NwVolume) v = nw_volume_new(10, 10, 1, 3, NULL);
  const NwAffineCostSpec spec = {NW_METRIC_MSE, NW_SAMPLER_LINEAR, 32, FALSE, NULL};
  g_autoptr(GError) err = NULL;
  void *impl = nw_affine_cost_cuda.create(&spec, &err);
  g_assert_no_error(err);
  const NwAffineLevel lv = {.dim = 2, .fixed = f, .moving = v, .n_fixed = 100};
  g_assert_false(nw_affine_cost_cuda.set_level(impl, &lv, &err));
  g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
  nw_affine_cost_cuda.destroy(impl);
}

/* The two ways of waiting for an evaluation (the ticket its last block writes, and
 * NW_AFFINE_WAIT=sync's stream synchronisation) give the same sums bit for bit, one
 * evaluation and a batch, MI's histogram included, over many evaluations in a row (a ticket
 * left from an earlier launch in a kept pinned block must never be taken for a new one). */
static void test_wait_modes(void)
{
  g_autoptr(NwVolume) f = image(300, 280, 1, 1.0, 41);
  g_autoptr(NwVolume) m = image(290, 290, 1, 1.0, 42);
  Xform xf[4];
  transforms(2, xf);
  const NwAffineCostSpec specs[] = {{NW_METRIC_MSE, NW_SAMPLER_LINEAR, 32, FALSE, NULL},
                                    {NW_METRIC_MI, NW_SAMPLER_LINEAR, 32, TRUE, NULL}};
  for (gsize sp = 0; sp < G_N_ELEMENTS(specs); sp++) {
    NwAffineCost *cost[2];
    for (int mode = 0; mode < 2; mode++) {
      g_autoptr(GError) err = NULL;
      if (mode == 1)
        g_setenv("NW_AFFINE_WAIT", "sync", TRUE);
      cost[mode] = nw_affine_cost_new(&nw_affine_cost_cuda, &specs[sp], &err);
      g_unsetenv("NW_AFFINE_WAIT");
      g_assert_no_error(err);
      const NwAffineLevel lv = {.dim = 2, .fixed = f, .moving = m,
                                .precision = NW_AFFINE_PRECISION_U16};
      g_assert_true(nw_affine_cost_set_level(cost[mode], &lv, &err));
    }
    /* fewer under racecheck (nw_test_small_cases), which was near its time limit already */
    const int rounds = nw_test_small_cases() ? 3 : 50;
    for (int round = 0; round < rounds; round++)
      for (int t = 0; t < 4; t++) {
        NwAffineCostValue v[2];
        for (int mode = 0; mode < 2; mode++) {
          g_autoptr(GError) err = NULL;
          g_assert_true(nw_affine_cost_eval_matrix(cost[mode], xf[t].m, &v[mode], &err));
        }
        g_assert_cmpfloat(v[0].cost, ==, v[1].cost);
        g_assert_cmpfloat(v[0].overlap, ==, v[1].overlap);
      }
    double maps[4][16];
    for (int t = 0; t < 4; t++)
      memcpy(maps[t], xf[t].m, sizeof maps[t]);
    NwAffineCostValue b[2][4];
    for (int mode = 0; mode < 2; mode++) {
      g_autoptr(GError) err = NULL;
      g_assert_true(
          nw_affine_cost_eval_batch(cost[mode], (const double(*)[16])maps, 4, b[mode], &err));
    }
    for (int t = 0; t < 4; t++)
      g_assert_cmpfloat(b[0][t].cost, ==, b[1][t].cost);
    nw_affine_cost_free(cost[0]);
    nw_affine_cost_free(cost[1]);
  }
}

/* Voxels that are not finite: the method refuses the pair with the input check's message
 * (the check runs beside the pyramids' upload to the device, core/cpu/affine_job.c), and the
 * job made so far is freed (memcheck's leak check). Each image, and both (the fixed image's
 * is the message), every bad voxel counted; 48³ goes up in one copy, 2048 x 1100 in two
 * staged chunks (cuda/staging_cuda.cuh), with bad voxels in both. */
static void test_refuses_non_finite(void)
{
  g_autoptr(NwParams) p = nw_test_affine_params(NULL);
  const int sizes[2][3] = {{48, 48, 48}, {2048, 1100, 1}};
  for (int s = 0; s < 2; s++) {
    const int nx = sizes[s][0], ny = sizes[s][1], nz = sizes[s][2];
    const size_t n = (size_t)nx * ny * nz;
    for (int which = 0; which < 3; which++) {
      g_autoptr(NwVolume) f = image(nx, ny, nz, 1.0, 1);
      g_autoptr(NwVolume) m = image(nx, ny, nz, 1.0, 2);
      int bad_f = 0, bad_m = 0;
      if (which != 1) {
        f->data[n - 1] = INFINITY;
        bad_f++;
        if (s == 1) { /* the first chunk's too */
          f->data[5] = NAN;
          bad_f++;
        }
      }
      if (which != 0) {
        m->data[7] = NAN;
        bad_m++;
        if (s == 1) {
          m->data[(size_t)1 << 21] = -INFINITY; /* the second chunk's first float */
          m->data[((size_t)1 << 21) - 1] = NAN; /* the first's last */
          bad_m += 2;
        }
      }
      const NwMethodInputs in = {.fixed = f, .moving = m};
      g_autoptr(GError) err = NULL;
      g_assert_null(nw_affine_cuda_ops.create(&in, p, &err));
      g_assert_error(err, NW_ERROR, NW_ERROR_INVALID);
      g_autofree char *want = g_strdup_printf(
          "%s image: %d of %zu voxels are NaN or Inf; mask or fill them before registering",
          which == 1 ? "moving" : "fixed", which == 1 ? bad_m : bad_f, n);
      g_assert_cmpstr(err->message, ==, want);
    }
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  g_test_add_func("/cuda/affine-cost/parity-2d", test_parity_2d);
  g_test_add_func("/cuda/affine-cost/parity-3d", test_parity_3d);
  g_test_add_func("/cuda/affine-cost/parity-runs", test_parity_runs);
  g_test_add_func("/cuda/affine-cost/parity-large", test_parity_large);
  g_test_add_func("/cuda/affine-cost/texture-samples", test_texture_samples);
  g_test_add_func("/cuda/affine-cost/texture-too-wide", test_texture_too_wide);
  g_test_add_func("/cuda/affine-cost/rows", test_rows);
  g_test_add_func("/cuda/affine-cost/rows-choice", test_rows_choice);
  g_test_add_func("/cuda/affine-cost/rows-filter", test_rows_filter);
  g_test_add_func("/cuda/affine-cost/levels", test_levels);
  g_test_add_func("/cuda/affine-cost/pyramid", test_pyramid);
  g_test_add_func("/cuda/affine-cost/level-stats", test_level_stats);
  g_test_add_func("/cuda/affine-cost/pyramid-after-level", test_pyramid_after_level);
  g_test_add_func("/cuda/affine-cost/warp", test_warp);
  g_test_add_func("/cuda/affine-cost/refuses-vectors", test_refuses_vectors);
  g_test_add_func("/cuda/affine-cost/refuses-non-finite", test_refuses_non_finite);
  g_test_add_func("/cuda/affine-cost/wait-modes", test_wait_modes);
  g_test_add_func("/cuda/affine-cost/register-2d", test_register_2d);
  g_test_add_func("/cuda/affine-cost/register-3d", test_register_3d);
  g_test_add_func("/cuda/affine-cost/affine-demons", test_affine_demons);
  return g_test_run();
}
