/* test_dmi.c — the distributed mutual-information metric (core/dmi_*.c) with the loopback
 * transport: R simulated ranks (threads) each holding its blocks, and the histogram they
 * reduce must be the single-process one exactly: the same integer counts as a single block,
 * and the same MI, bit for bit, as the CPU affine cost without Parzen (nw_affine_cost_cpu),
 * over a rotation sweep 0..180 degrees in 15 degree steps with a circular fixed mask, for both
 * strategies and the layouts 1x2, 2x1, 2x2, 1x4, a 3D 2x1x2, and ranks with several blocks.
 * Then the decomposition's arithmetic and its messages. CPU, main thread plus one thread a
 * simulated rank; a few seconds. */
#include <math.h>
#include <string.h>

#include "affine_cost.h"
#include "affine_resample.h"
#include "affine_testutil.h"
#include "dmi_testutil.h"
#include "dmi_cost.h"
#include "pyramid.h"
#include "ras_affine.h"
#include "nw_error.h"
#include "testutil.h"

#define BINS 32
#define N_ANGLES NW_DMI_TEST_ANGLES /* 0, 15, ..., 180 degrees */

typedef struct {
  int dim;
  const NwVolume *fixed, *moving, *fmask, *mmask;
  NwSampler sampler;
  double ranges[4];        /* fixed lo, hi, moving lo, hi */
  double maps[N_ANGLES][12];
  /* what the ranks found */
  NwDmiStrategy strategy;
  NwDmiLayout layout;
  gint64 chunk_voxels;
  gint64 hist[8][N_ANGLES][BINS * BINS]; /* per rank: the reduced histogram */
  gint64 requests[8];
} Case;

/* One simulated rank: its blocks, then the sweep. */
static gboolean rank_main(NwDmiTransport *t, gpointer data)
{
  Case *c = data;
  NwDmiSource f = nw_dmi_source_volume(c->fixed), m = nw_dmi_source_volume(c->moving);
  NwDmiSource fm = nw_dmi_source_volume(c->fmask), mm = {{0, 0, 0}, NULL, NULL};
  if (c->mmask != NULL)
    mm = nw_dmi_source_volume(c->mmask);
  g_autoptr(GError) err = NULL;
  NwDmiLevel *lv = nw_dmi_level_new(c->strategy, &c->layout, t->rank, t->size, &f, &fm, &m, &mm,
                                    &err);
  g_assert_no_error(err);
  const NwDmiSpec spec = {c->sampler, BINS, c->chunk_voxels, 0.0};
  NwDmiMetric *metric = nw_dmi_metric_new(&spec, t);
  g_assert_true(nw_dmi_metric_set_level(metric, lv, c->ranges[0], c->ranges[1], c->ranges[2],
                                        c->ranges[3], &err));
  c->requests[t->rank] = 0;
  for (int a = 0; a < N_ANGLES; a++) {
    g_assert_true(nw_dmi_metric_histogram(metric, c->maps[a], c->hist[t->rank][a], &err));
    c->requests[t->rank] += nw_dmi_metric_last_requests(metric);
  }
  nw_dmi_metric_free(metric);
  nw_dmi_level_free(lv);
  return TRUE;
}

/* The CPU affine cost's MI at every angle (plain bins), and the ranges it used. */
static void reference(Case *c, double mi[N_ANGLES])
{
  const NwAffineCostSpec spec = {NW_METRIC_MI, c->sampler, BINS, FALSE, NULL};
  g_autoptr(GError) err = NULL;
  NwAffineCost *cost = nw_affine_cost_new(&nw_affine_cost_cpu, &spec, &err);
  NwAffineLevel lv = {.dim = c->dim, .fixed = c->fixed, .moving = c->moving,
                      .fixed_mask = c->fmask, .moving_mask = c->mmask};
  g_assert_true(nw_affine_cost_set_level(cost, &lv, &err));
  for (int a = 0; a < N_ANGLES; a++) {
    double t[16];
    nw_dmi_test_sweep_matrix(c->fixed, c->dim, a, t);
    NwAffineCostValue v;
    g_assert_true(nw_affine_cost_eval_matrix(cost, t, &v, &err));
    mi[a] = v.value;
  }
  nw_affine_cost_free(cost);
  /* the ranges nw_affine_cost_set_level takes (these images are not flat) */
  nw_dmi_test_ranges(c->fixed, c->fmask, c->moving, c->mmask, c->ranges);
}

static double mi_of(const gint64 *hist)
{
  double joint[BINS * BINS], n = 0.0;
  nw_dmi_parzen_smooth(hist, BINS, FALSE, joint);
  for (int b = 0; b < BINS * BINS; b++)
    n += joint[b];
  return nw_affine_mutual_information(joint, BINS, n);
}

/* Every layout and strategy against the single block and the CPU cost. */
static void check_layouts(Case *c, const char *const *layouts, const int *ranks, int n)
{
  double mi_ref[N_ANGLES];
  nw_dmi_test_sweep_maps(c->fixed, c->moving, c->dim, c->maps);
  reference(c, mi_ref);
  /* one rank, one block: the plain single-process histogram of this code */
  static gint64 single[N_ANGLES][BINS * BINS];
  c->strategy = NW_DMI_REPLICATED;
  c->layout = (NwDmiLayout){{1, 1, 1}};
  c->chunk_voxels = 0;
  g_assert_true(nw_dmi_loopback_run(1, rank_main, c, NULL));
  memcpy(single, c->hist[0], sizeof single);
  for (int a = 0; a < N_ANGLES; a++) {
    g_assert_cmpfloat(mi_of(single[a]), ==, mi_ref[a]); /* bit for bit */
    g_assert_cmpfloat(mi_ref[a], >, 0.0);
  }
  for (int l = 0; l < n; l++)
    for (int s = 0; s < 2; s++) {
      g_autoptr(GError) err = NULL;
      g_assert_true(nw_dmi_layout_parse(layouts[l], &c->layout, &err));
      c->strategy = s == 0 ? NW_DMI_REPLICATED : NW_DMI_DISTRIBUTED;
      c->chunk_voxels = 700; /* several exchanges per evaluation */
      g_test_message("%dD %s, %d ranks, %s", c->dim, layouts[l], ranks[l],
                     nw_dmi_strategy_name(c->strategy));
      g_assert_true(nw_dmi_loopback_run(ranks[l], rank_main, c, NULL));
      gint64 sent = 0;
      for (int r = 0; r < ranks[l]; r++) {
        sent += c->requests[r];
        for (int a = 0; a < N_ANGLES; a++) {
          g_assert_cmpmem(c->hist[r][a], sizeof single[a], single[a], sizeof single[a]);
          g_assert_cmpfloat(mi_of(c->hist[r][a]), ==, mi_ref[a]);
        }
      }
      /* the distributed strategy had remote samples to send (rotations move samples into
       * other blocks); the replicated one never sends */
      if (c->strategy == NW_DMI_DISTRIBUTED)
        g_assert_cmpint(sent, >, 0);
      else
        g_assert_cmpint(sent, ==, 0);
    }
}

static void test_sweep_2d(gconstpointer data)
{
  const NwSampler sampler = (NwSampler)GPOINTER_TO_INT(data);
  /* fixed and moving on different grids (sizes, spacing, origin): a non-trivial voxel map */
  g_autoptr(NwVolume) fixed = nw_test_volume(72, 60, 1, 1, 3);
  g_autoptr(NwVolume) moving = nw_test_volume(66, 70, 1, 1, 5);
  nw_volume_set_spacing(fixed, 1.0, 1.0, 1.0);
  nw_volume_set_spacing(moving, 1.1, 0.9, 1.0);
  g_autoptr(NwVolume) fmask = nw_dmi_test_disc_mask(fixed, 26.0);
  g_autoptr(NwVolume) mmask = nw_dmi_test_disc_mask(moving, 31.0);
  Case *c = g_new0(Case, 1);
  *c = (Case){.dim = 2, .fixed = fixed, .moving = moving, .fmask = fmask, .mmask = mmask,
              .sampler = sampler};
  static const char *const layouts[] = {"1x2", "2x1", "2x2", "1x4", "2x2", "1x8"};
  static const int ranks[] = {2, 2, 4, 4, 2, 3};
  check_layouts(c, layouts, ranks, G_N_ELEMENTS(ranks));
  g_free(c);
}

static void test_sweep_3d(void)
{
  g_autoptr(NwVolume) fixed = nw_test_volume(28, 24, 20, 1, 9);
  g_autoptr(NwVolume) moving = nw_test_volume(26, 26, 22, 1, 11);
  g_autoptr(NwVolume) fmask = nw_dmi_test_disc_mask(fixed, 11.0);
  Case *c = g_new0(Case, 1);
  *c = (Case){.dim = 3, .fixed = fixed, .moving = moving, .fmask = fmask, .mmask = NULL,
              .sampler = NW_SAMPLER_LINEAR};
  static const char *const layouts[] = {"2x1x2", "1x1x4", "2x2x2"};
  static const int ranks[] = {4, 2, 4};
  check_layouts(c, layouts, ranks, G_N_ELEMENTS(ranks));
  g_free(c);
}

/* Layout choice, bounds, ownership, the plan under a memory cap and the messages. */
static void test_decomposition(void)
{
  const int n2[3] = {256, 256, 1}, wide[3] = {400, 100, 1}, n3[3] = {64, 64, 64};
  NwDmiLayout l;
  char buf[48];
  g_assert_true(nw_dmi_layout_choose(n2, 2, 4, &l));
  g_assert_cmpstr(nw_dmi_layout_format(&l, 2, buf), ==, "2x2");
  g_assert_true(nw_dmi_layout_choose(n2, 2, 2, &l));
  g_assert_cmpstr(nw_dmi_layout_format(&l, 2, buf), ==, "1x2"); /* ties: slabs of rows */
  g_assert_true(nw_dmi_layout_choose(wide, 2, 4, &l));
  g_assert_cmpstr(nw_dmi_layout_format(&l, 2, buf), ==, "4x1"); /* cut the long axis */
  g_assert_true(nw_dmi_layout_choose(n3, 3, 2, &l));
  g_assert_cmpstr(nw_dmi_layout_format(&l, 3, buf), ==, "1x1x2");
  g_assert_true(nw_dmi_layout_choose(n3, 3, 8, &l));
  g_assert_cmpstr(nw_dmi_layout_format(&l, 3, buf), ==, "2x2x2");
  const int tiny[3] = {6, 6, 1};
  g_assert_false(nw_dmi_layout_choose(tiny, 2, 2, &l)); /* 3 voxels a block is too few */

  /* the blocks tile the image, and the ranks own contiguous runs */
  g_assert_true(nw_dmi_layout_parse("3x2", &l, NULL));
  gint64 total = 0;
  for (int b = 0; b < 6; b++) {
    int lo[3], hi[3];
    nw_dmi_block_bounds(&l, wide, b, lo, hi);
    total += (gint64)(hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  }
  g_assert_cmpint(total, ==, 400 * 100);
  int first, count;
  nw_dmi_rank_blocks(1, 6, 4, &first, &count);
  g_assert_cmpint(first, ==, 2);
  g_assert_cmpint(count, ==, 1);
  for (int b = 0; b < 6; b++) {
    const int r = nw_dmi_block_rank(b, 6, 4);
    nw_dmi_rank_blocks(r, 6, 4, &first, &count);
    g_assert_true(b >= first && b < first + count);
  }

  /* the cap: 256² floats are 0.26 MB an image; 1 MB holds one block for each of 2 ranks
   * (1x2: 0.27 MB), 0.1 MB needs 3 a rank (2x3: 128 x 86 fixed, 132 x 90 moving with the
   * halo, and the histogram: 0.0997 MB) */
  NwDmiPlan plan;
  GError *err = NULL;
  g_assert_true(nw_dmi_plan(n2, n2, 2, FALSE, FALSE, 32, 2, NULL, 1.0, &plan, &err));
  g_assert_cmpint(nw_dmi_layout_blocks(&plan.layout), ==, 2);
  g_assert_true(nw_dmi_plan(n2, n2, 2, FALSE, FALSE, 32, 2, NULL, 0.1, &plan, &err));
  g_assert_cmpstr(nw_dmi_layout_format(&plan.layout, 2, buf), ==, "2x3");
  g_assert_cmpfloat_with_epsilon(plan.block_mb, 0.099744, 1e-9);
  g_assert_no_error(err);

  /* the messages, word for word */
  g_assert_false(nw_dmi_plan(n2, n2, 2, FALSE, FALSE, 32, 2, NULL, 0.005, &plan, &err));
  g_assert_cmpstr(err->message, ==,
                  "--memory-cap 0.005 MB is too small for the fixed image (256 x 256 x 1 voxels): "
                  "the smallest blocks tried (608 blocks) take 0.0095 MB each");
  g_clear_error(&err);
  g_assert_true(nw_dmi_layout_parse("2x2", &l, NULL));
  g_assert_false(nw_dmi_plan(n2, n2, 2, FALSE, FALSE, 32, 2, &l, 0.1, &plan, &err));
  g_assert_cmpstr(err->message, ==, "--blocks 2x2: a block takes 0.143 MB, more than --memory-cap 0.1 MB");
  g_clear_error(&err);
  g_assert_true(nw_dmi_layout_parse("1x2", &l, NULL));
  g_assert_false(nw_dmi_plan(n2, n2, 2, FALSE, FALSE, 32, 4, &l, 0.0, &plan, &err));
  g_assert_cmpstr(err->message, ==, "--blocks 1x2: 2 blocks for 4 ranks: every rank needs a block");
  g_clear_error(&err);
  g_assert_true(nw_dmi_layout_parse("1x100", &l, NULL));
  g_assert_false(nw_dmi_plan(n2, n2, 2, FALSE, FALSE, 32, 2, &l, 0.0, &plan, &err));
  g_assert_cmpstr(err->message, ==,
                  "--blocks 1x100: 100 blocks along y of an image 256 voxels long leave fewer "
                  "than 4 voxels a block");
  g_clear_error(&err);
  g_assert_true(nw_dmi_layout_parse("2x2x2", &l, NULL));
  g_assert_false(nw_dmi_plan(n2, n2, 2, FALSE, FALSE, 32, 2, &l, 0.0, &plan, &err));
  g_assert_cmpstr(err->message, ==, "--blocks 2x2x2: the image is 2D (256 x 256): its layout is AxB");
  g_clear_error(&err);
  const char *bad[] = {"2", "2x", "x2", "0x2", "2x2x2x2", "-1x2", "2.5x2", "axb", ""};
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_false(nw_dmi_layout_parse(bad[i], &l, &err));
    g_autofree char *want = g_strdup_printf(
        "--blocks '%s': expected AxB or AxBxC with positive whole numbers, e.g. 2x2", bad[i]);
    g_assert_cmpstr(err->message, ==, want);
    g_clear_error(&err);
  }
  NwDmiStrategy s;
  g_assert_false(nw_dmi_strategy_parse("mirrored", &s, &err));
  g_assert_cmpstr(err->message, ==, "--strategy 'mirrored': expected replicated or distributed");
  g_clear_error(&err);
}

/* Parzen after the reduction keeps the mass and spreads a bin over its neighbours. */
static void test_parzen(void)
{
  gint64 h[4 * 4] = {0};
  h[1 * 4 + 0] = 6;
  h[2 * 4 + 2] = 12;
  double out[16], n = 0.0;
  nw_dmi_parzen_smooth(h, 4, TRUE, out);
  for (int b = 0; b < 16; b++)
    n += out[b];
  g_assert_cmpfloat_with_epsilon(n, 18.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(out[1 * 4 + 0], 5.0, 1e-12); /* 4 + the 1 kept at the edge */
  g_assert_cmpfloat_with_epsilon(out[2 * 4 + 1], 2.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(out[2 * 4 + 3], 2.0, 1e-12);
}

/* Every level's blocks through the block pyramid are nw_pyramid_new's level, bit for bit. */
static void test_pyramid_blocks(void)
{
  const int sizes[2][3] = {{101, 67, 1}, {37, 30, 21}};
  static const char *const layouts[] = {"3x2x1", "1x5x1", "2x2x3", "4x1x2"};
  for (int s = 0; s < 2; s++) {
    g_autoptr(NwVolume) v = nw_test_volume(sizes[s][0], sizes[s][1], sizes[s][2], 1, 13);
    int n_levels = 0;
    NwVolume **full = nw_pyramid_new(v, 4, &n_levels, NULL);
    g_assert_cmpint(n_levels, >=, 2);
    NwDmiSource finest = nw_dmi_source_volume(v);
    NwDmiPyramid pyr;
    nw_dmi_pyramid_init(&pyr, &finest, n_levels);
    for (gsize li = 0; li < G_N_ELEMENTS(layouts); li++) {
      NwDmiLayout lay;
      g_assert_true(nw_dmi_layout_parse(layouts[li], &lay, NULL));
      if (s == 0 && lay.m[2] > 1)
        continue;
      for (int l = 0; l < n_levels; l++) {
        const NwDmiSource src = nw_dmi_pyramid_source(&pyr, l);
        const NwVolume *want = full[l];
        g_assert_cmpint(src.n[0], ==, want->nx);
        g_assert_cmpint(src.n[1], ==, want->ny);
        g_assert_cmpint(src.n[2], ==, want->nz);
        for (int b = 0; b < nw_dmi_layout_blocks(&lay); b++) {
          int lo[3], hi[3];
          nw_dmi_block_bounds(&lay, src.n, b, lo, hi);
          const int w = hi[0] - lo[0];
          if (w <= 0 || hi[1] <= lo[1] || hi[2] <= lo[2])
            continue;
          g_autofree float *got = g_new(float, (gsize)w * (hi[1] - lo[1]) * (hi[2] - lo[2]));
          g_assert_true(src.read(src.data, lo, hi, got, NULL));
          const float *g = got;
          for (int k = lo[2]; k < hi[2]; k++)
            for (int j = lo[1]; j < hi[1]; j++, g += w)
              g_assert_cmpmem(g, w * sizeof(float),
                              want->data + nw_volume_index(want, lo[0], j, k), w * sizeof(float));
        }
      }
    }
    nw_pyramid_free(full, n_levels);
  }
}

/* ---- the registration -------------------------------------------------------------------- */

typedef struct {
  const NwVolume *fixed, *moving, *fmask;
  const NwParams *p;
  NwDmiStrategy strategy;
  const char *layout;
  NwTransform t[4];
  double cost[4];
  NwDmiCounters counters[4];
} RegCase;

static gboolean register_rank(NwDmiTransport *t, gpointer data)
{
  RegCase *c = data;
  NwDmiInputs in = {.t = t, .strategy = c->strategy, .chunk_voxels = 2000, .dim = 2,
                    .fixed_grid = c->fixed, .moving_grid = c->moving,
                    .fixed = nw_dmi_source_volume(c->fixed),
                    .fixed_mask = nw_dmi_source_volume(c->fmask),
                    .moving = nw_dmi_source_volume(c->moving),
                    .counters = &c->counters[t->rank]};
  g_assert_true(nw_dmi_layout_parse(c->layout, &in.layout, NULL));
  g_autoptr(GError) err = NULL;
  NwAffineJob *j = nw_dmi_job_new(&in, c->p, NULL, &err);
  g_assert_no_error(err);
  NwIterationReport r = {0};
  for (int it = 1; !r.finished && it < 100000; it++) {
    r = (NwIterationReport){.iteration = it};
    g_assert_true(nw_affine_job_step(j, &r, &err));
  }
  c->t[t->rank] = *nw_affine_job_transform(j);
  c->cost[t->rank] = nw_test_figure(&r, "cost");
  g_autoptr(NwMethodResult) res = nw_affine_job_result(j, &err);
  g_assert_no_error(err);
  g_assert_null(nw_method_result_get(res, "warped"));
  nw_affine_job_free(j);
  return TRUE;
}

/* A disc phantom turned by 12 degrees and moved: the distributed job on 2 and 4 ranks, both
 * strategies, finds the single-process CPU job's transform bit for bit (parzen off: the same
 * costs, so the same simplex path), on every rank. */
static void test_registration(void)
{
  g_autoptr(NwVolume) fixed = nw_test_volume(96, 88, 1, 1, 21);
  g_autoptr(NwVolume) fmask = nw_dmi_test_disc_mask(fixed, 40.0);
  double centre[3];
  const double mid[3] = {47.5, 43.5, 0.0};
  nw_volume_voxel_to_world(fixed, mid, centre);
  NwTransform truth;
  nw_transform_init(&truth, 2, NW_XFORM_RIGID, centre);
  truth.rotation_rad[2] = 12.0 * G_PI / 180.0;
  truth.translation_mm[0] = 3.0;
  truth.translation_mm[1] = -2.0;
  double m[16];
  nw_transform_matrix(&truth, m);
  /* moving(T(x)) = fixed(x): moving = fixed resampled through T^-1 */
  double inv[16];
  g_assert_true(nw_affine_inverse(m, inv));
  g_autoptr(NwVolume) moving = nw_affine_resample(fixed, fixed, inv, 2, NW_SAMPLER_LINEAR, 0.0f,
                                                  NULL);
  /* precision single: the distributed metric keeps float blocks (the job over its levels
   * evaluates at single whatever the parameter says) */
  static const char *const settings[] = {"metric=mi", "parzen=false", "transform=rigid",
                                         "levels=3", "precision=single", NULL};
  g_autoptr(NwParams) p = nw_test_affine_params(settings);
  NwMethodInputs in = {.fixed = fixed, .moving = moving, .fixed_mask = fmask};
  NwTestAffineRun ref;
  nw_test_affine_run(&in, p, &ref);
  g_assert_cmpfloat(fabs(ref.t.rotation_rad[2] - truth.rotation_rad[2]), <, 0.01);
  static const char *const layouts[] = {"1x2", "2x2", "1x4", "2x1"};
  static const int ranks[] = {2, 4, 4, 2};
  for (gsize l = 0; l < G_N_ELEMENTS(layouts); l++)
    for (int s = 0; s < 2; s++) {
      RegCase *c = g_new0(RegCase, 1);
      *c = (RegCase){.fixed = fixed, .moving = moving, .fmask = fmask, .p = p,
                     .strategy = s ? NW_DMI_DISTRIBUTED : NW_DMI_REPLICATED,
                     .layout = layouts[l]};
      g_assert_true(nw_dmi_loopback_run(ranks[l], register_rank, c, NULL));
      for (int r = 0; r < ranks[l]; r++) {
        g_assert_cmpmem(&c->t[r], sizeof c->t[r], &ref.t, sizeof ref.t);
        g_assert_cmpfloat(c->cost[r], ==, ref.v.cost);
        g_assert_cmpuint(c->counters[r].evaluations, ==, (guint64)ref.evaluations);
        g_assert_cmpint(c->counters[r].requests > 0, ==, s == 1);
      }
      g_free(c);
    }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_data_func("/dmi/sweep-2d/linear", GINT_TO_POINTER(NW_SAMPLER_LINEAR), test_sweep_2d);
  g_test_add_data_func("/dmi/sweep-2d/nearest", GINT_TO_POINTER(NW_SAMPLER_NEAREST), test_sweep_2d);
  g_test_add_data_func("/dmi/sweep-2d/cubic", GINT_TO_POINTER(NW_SAMPLER_CUBIC), test_sweep_2d);
  g_test_add_func("/dmi/sweep-3d", test_sweep_3d);
  g_test_add_func("/dmi/decomposition", test_decomposition);
  g_test_add_func("/dmi/parzen", test_parzen);
  g_test_add_func("/dmi/pyramid-blocks", test_pyramid_blocks);
  g_test_add_func("/dmi/registration", test_registration);
  return g_test_run();
}
