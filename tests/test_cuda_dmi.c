/* test_cuda_dmi.c — the distributed MI metric's CUDA twin (cuda/dmi_cuda.cu) against the CPU
 * reference (core/dmi_metric.c): every simulated rank's LOCAL joint histogram (its own samples
 * and those other ranks sent it) equal count for count, for both strategies (replicated: the
 * device slab and the mapped host image; distributed: requests compacted on the GPU and
 * served by the second kernel), the three samplers, several layouts and ranks (2D and 3D,
 * several blocks a rank, several chunks an evaluation), over a rotation sweep 0..180 degrees
 * with a circular mask; the reduced histograms then equal too. Ranks are threads of the
 * loopback transport sharing the one GPU. /cuda-dmi/windows: the replicated strategy's
 * resident windows (core/dmi_window.h) under memory caps that make them partial, that leave
 * room for a margin, and none (the whole level): fetched, shifted toroidally and reused over
 * the sweep and small steps, the counts still the CPU's. Skips (77) without a CUDA device. */
#include <math.h>
#include <string.h>

#include "affine_cost.h"
#include "affine_resample.h"
#include "affine_transform.h"
#include "dmi_metric.h"
#include "dmi_testutil.h"
#include "nw_dmi_cuda.h"
#include "testutil.h"

#define BINS 32
#define N_ANGLES NW_DMI_TEST_ANGLES
#define MAX_RANKS 4

typedef struct {
  const NwVolume *fixed, *moving, *fmask, *mmask;
  NwSampler sampler;
  NwDmiStrategy strategy;
  NwDmiLayout layout;
  double cap_mb; /* the memory cap the CUDA twin sizes its windows by (0: none) */
  const NwDmiMetricOps *ops;
  double ranges[4];
  double maps[N_ANGLES][12];
  gint64 local[MAX_RANKS][N_ANGLES][BINS * BINS];
  gint64 requests[MAX_RANKS];
} Case;

static gboolean rank_main(NwDmiTransport *t, gpointer data)
{
  Case *c = data;
  NwDmiSource f = nw_dmi_source_volume(c->fixed), m = nw_dmi_source_volume(c->moving);
  NwDmiSource fm = nw_dmi_source_volume(c->fmask), mm = {{0, 0, 0}, NULL, NULL};
  if (c->mmask != NULL)
    mm = nw_dmi_source_volume(c->mmask);
  g_autoptr(GError) err = NULL;
  NwDmiLevel *lv =
      nw_dmi_level_new(c->strategy, &c->layout, t->rank, t->size, &f, &fm, &m, &mm, &err);
  g_assert_no_error(err);
  const NwDmiSpec spec = {c->sampler, BINS, 900, c->cap_mb}; /* several chunks */
  void *metric = c->ops->create(&spec, t, &err);
  g_assert_no_error(err);
  g_assert_true(c->ops->set_level(metric, lv, c->ranges, &err));
  g_assert_no_error(err);
  c->requests[t->rank] = 0;
  for (int a = 0; a < N_ANGLES; a++) {
    gint64 sent = 0;
    g_assert_true(c->ops->local(metric, c->maps[a], c->local[t->rank][a], &sent, &err));
    g_assert_no_error(err);
    c->requests[t->rank] += sent;
  }
  c->ops->destroy(metric);
  nw_dmi_level_free(lv);
  return TRUE;
}

static void setup(Case *c, int dim)
{
  nw_dmi_test_sweep_maps(c->fixed, c->moving, dim, c->maps);
  nw_dmi_test_ranges(c->fixed, c->fmask, c->moving, c->mmask, c->ranges);
}

/* CPU and CUDA local histograms of every rank, every angle; and their sums. */
static void compare(Case *c, const char *layout, int ranks)
{
  g_assert_true(nw_dmi_layout_parse(layout, &c->layout, NULL));
  static gint64 cpu[MAX_RANKS][N_ANGLES][BINS * BINS];
  gint64 cpu_requests[MAX_RANKS];
  c->ops = &nw_dmi_metric_cpu_ops;
  g_assert_true(nw_dmi_loopback_run(ranks, rank_main, c, NULL));
  memcpy(cpu, c->local, sizeof cpu);
  memcpy(cpu_requests, c->requests, sizeof cpu_requests);
  c->ops = &nw_dmi_metric_cuda_ops;
  g_assert_true(nw_dmi_loopback_run(ranks, rank_main, c, NULL));
  g_test_message("%s, %d ranks, %s, %s", layout, ranks, nw_dmi_strategy_name(c->strategy),
                 nw_sampler_name(c->sampler));
  for (int r = 0; r < ranks; r++) {
    g_assert_cmpint(c->requests[r], ==, cpu_requests[r]);
    for (int a = 0; a < N_ANGLES; a++)
      g_assert_cmpmem(c->local[r][a], sizeof cpu[r][a], cpu[r][a], sizeof cpu[r][a]);
  }
}

static void test_parity_2d(void)
{
  if (!nw_test_have_cuda())
    exit(NW_TEST_SKIP);
  g_autoptr(NwVolume) fixed = nw_test_volume(90, 76, 1, 1, 3);
  g_autoptr(NwVolume) moving = nw_test_volume(84, 88, 1, 1, 5);
  nw_volume_set_spacing(moving, 1.1, 0.9, 1.0);
  g_autoptr(NwVolume) fmask = nw_dmi_test_disc_mask(fixed, 33.0);
  g_autoptr(NwVolume) mmask = nw_dmi_test_disc_mask(moving, 38.0);
  Case *c = g_new0(Case, 1);
  *c = (Case){.fixed = fixed, .moving = moving, .fmask = fmask, .mmask = mmask};
  setup(c, 2);
  static const char *const layouts[] = {"1x2", "2x1", "2x2", "1x4", "2x2"};
  static const int ranks[] = {2, 2, 4, 4, 2};
  const NwSampler samplers[] = {NW_SAMPLER_LINEAR, NW_SAMPLER_NEAREST, NW_SAMPLER_CUBIC};
  for (int s = 0; s < 3; s++)
    for (int st = 0; st < 2; st++)
      for (gsize l = 0; l < G_N_ELEMENTS(ranks); l++) {
        if (s > 0 && l > 1)
          continue; /* the other samplers on two layouts */
        c->sampler = samplers[s];
        c->strategy = st ? NW_DMI_DISTRIBUTED : NW_DMI_REPLICATED;
        compare(c, layouts[l], ranks[l]);
      }
  g_free(c);
}

static void test_parity_3d(void)
{
  if (!nw_test_have_cuda())
    exit(NW_TEST_SKIP);
  g_autoptr(NwVolume) fixed = nw_test_volume(30, 26, 22, 1, 9);
  g_autoptr(NwVolume) moving = nw_test_volume(28, 28, 24, 1, 11);
  g_autoptr(NwVolume) fmask = nw_dmi_test_disc_mask(fixed, 12.0);
  Case *c = g_new0(Case, 1);
  *c = (Case){.fixed = fixed, .moving = moving, .fmask = fmask, .sampler = NW_SAMPLER_LINEAR};
  setup(c, 3);
  for (int st = 0; st < 2; st++) {
    c->strategy = st ? NW_DMI_DISTRIBUTED : NW_DMI_REPLICATED;
    compare(c, "2x1x2", 4);
    compare(c, "1x1x4", 2);
  }
  /* partial resident windows in 3D: the cap of a 2x1x2 block with its slab */
  const int fn[3] = {30, 26, 22}, mn[3] = {28, 28, 24};
  NwDmiLayout lay = {{2, 1, 2}};
  c->strategy = NW_DMI_REPLICATED;
  c->cap_mb = nw_dmi_block_bytes(&lay, fn, mn, TRUE, FALSE, BINS) / 1e6;
  compare(c, "2x1x2", 2);
  c->cap_mb = 0.0;
  g_free(c);
}

static void test_windows(void)
{
  if (!nw_test_have_cuda())
    exit(NW_TEST_SKIP);
  g_autoptr(NwVolume) fixed = nw_test_volume(90, 76, 1, 1, 3);
  g_autoptr(NwVolume) moving = nw_test_volume(84, 88, 1, 1, 5);
  nw_volume_set_spacing(moving, 1.1, 0.9, 1.0);
  g_autoptr(NwVolume) fmask = nw_dmi_test_disc_mask(fixed, 33.0);
  g_autoptr(NwVolume) mmask = nw_dmi_test_disc_mask(moving, 38.0);
  Case *c = g_new0(Case, 1);
  *c = (Case){.fixed = fixed,
              .moving = moving,
              .fmask = fmask,
              .mmask = mmask,
              .strategy = NW_DMI_REPLICATED};
  setup(c, 2);
  /* the sweep's angles, then small steps about 30 degrees (an optimiser's): reuse */
  for (int a = 7; a < N_ANGLES; a++)
    memcpy(c->maps[a], c->maps[2], sizeof c->maps[a]);
  for (int a = 8; a < N_ANGLES; a++)
    c->maps[a][3] += 0.3 * (a - 7), c->maps[a][7] -= 0.2 * (a - 7);
  static const char *const layouts[] = {"1x2", "2x2", "1x4"};
  static const int ranks[] = {1, 2, 4};
  const int fn[3] = {90, 76, 1}, mn[3] = {84, 88, 1};
  for (gsize l = 0; l < G_N_ELEMENTS(layouts); l++)
    for (int s = 0; s < 2; s++) {
      NwDmiLayout lay;
      g_assert_true(nw_dmi_layout_parse(layouts[l], &lay, NULL));
      const double block = nw_dmi_block_bytes(&lay, fn, mn, TRUE, TRUE, BINS) / 1e6;
      const double caps[3] = {block, 1.6 * block, 0.0};
      for (int k = 0; k < 3; k++) {
        c->sampler = s ? NW_SAMPLER_CUBIC : NW_SAMPLER_LINEAR;
        c->cap_mb = caps[k];
        g_test_message("cap %.4f MB", caps[k]);
        compare(c, layouts[l], ranks[l]);
      }
    }
  g_free(c);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cuda-dmi/parity-2d", test_parity_2d);
  g_test_add_func("/cuda-dmi/parity-3d", test_parity_3d);
  g_test_add_func("/cuda-dmi/windows", test_windows);
  return g_test_run();
}
