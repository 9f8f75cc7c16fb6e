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
  NwVolume *fixed, *moving, *fmask, *mmask; /* the case's own; mmask NULL: none */
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

/* The case of a test on the 2D pair (parity-2d, windows: unlike sizes and spacings, a disc
 * mask each) or the 3D one (a fixed mask only), with the sweep's maps and the intensity
 * ranges; the test sets sampler, strategy and cap. Skips (77) without a CUDA device. */
static Case *case_new(int dim)
{
  if (!nw_test_have_cuda())
    exit(NW_TEST_SKIP);
  Case *c = g_new0(Case, 1);
  if (dim == 2) {
    c->fixed = nw_test_volume(90, 76, 1, 1, 3);
    c->moving = nw_test_volume(84, 88, 1, 1, 5);
    nw_volume_set_spacing(c->moving, 1.1, 0.9, 1.0);
    c->fmask = nw_dmi_test_disc_mask(c->fixed, 33.0);
    c->mmask = nw_dmi_test_disc_mask(c->moving, 38.0);
  } else {
    c->fixed = nw_test_volume(30, 26, 22, 1, 9);
    c->moving = nw_test_volume(28, 28, 24, 1, 11);
    c->fmask = nw_dmi_test_disc_mask(c->fixed, 12.0);
  }
  nw_dmi_test_sweep_maps(c->fixed, c->moving, dim, c->maps);
  nw_dmi_test_ranges(c->fixed, c->fmask, c->moving, c->mmask, c->ranges);
  return c;
}

static void case_free(Case *c)
{
  nw_volume_free(c->fixed);
  nw_volume_free(c->moving);
  nw_volume_free(c->fmask);
  nw_volume_free(c->mmask);
  g_free(c);
}

/* One block of the layout with its moving window and the case's masks, in MB: a memory cap
 * that leaves the replicated strategy's resident windows partial. */
static double block_mb(const Case *c, const char *layout)
{
  NwDmiLayout lay;
  g_assert_true(nw_dmi_layout_parse(layout, &lay, NULL));
  const int fn[3] = {c->fixed->nx, c->fixed->ny, c->fixed->nz};
  const int mn[3] = {c->moving->nx, c->moving->ny, c->moving->nz};
  return nw_dmi_block_bytes(&lay, fn, mn, c->fmask != NULL, c->mmask != NULL, BINS) / 1e6;
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
  Case *c = case_new(2);
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
  case_free(c);
}

static void test_parity_3d(void)
{
  Case *c = case_new(3);
  c->sampler = NW_SAMPLER_LINEAR;
  for (int st = 0; st < 2; st++) {
    c->strategy = st ? NW_DMI_DISTRIBUTED : NW_DMI_REPLICATED;
    compare(c, "2x1x2", 4);
    compare(c, "1x1x4", 2);
  }
  /* partial resident windows in 3D: the cap of a 2x1x2 block with its slab */
  c->strategy = NW_DMI_REPLICATED;
  c->cap_mb = block_mb(c, "2x1x2");
  compare(c, "2x1x2", 2);
  case_free(c);
}

static void test_windows(void)
{
  Case *c = case_new(2);
  c->strategy = NW_DMI_REPLICATED;
  /* the sweep's angles, then small steps about 30 degrees (an optimiser's): reuse */
  for (int a = 7; a < N_ANGLES; a++)
    memcpy(c->maps[a], c->maps[2], sizeof c->maps[a]);
  for (int a = 8; a < N_ANGLES; a++)
    c->maps[a][3] += 0.3 * (a - 7), c->maps[a][7] -= 0.2 * (a - 7);
  static const char *const layouts[] = {"1x2", "2x2", "1x4"};
  static const int ranks[] = {1, 2, 4};
  for (gsize l = 0; l < G_N_ELEMENTS(layouts); l++)
    for (int s = 0; s < 2; s++) {
      const double block = block_mb(c, layouts[l]);
      const double caps[3] = {block, 1.6 * block, 0.0};
      for (int k = 0; k < 3; k++) {
        c->sampler = s ? NW_SAMPLER_CUBIC : NW_SAMPLER_LINEAR;
        c->cap_mb = caps[k];
        g_test_message("cap %.4f MB", caps[k]);
        compare(c, layouts[l], ranks[l]);
      }
    }
  case_free(c);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cuda-dmi/parity-2d", test_parity_2d);
  g_test_add_func("/cuda-dmi/parity-3d", test_parity_3d);
  g_test_add_func("/cuda-dmi/windows", test_windows);
  return g_test_run();
}
