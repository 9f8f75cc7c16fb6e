/* test_dmi_window.c — the replicated strategy's resident window (core/dmi_window.c), on the
 * CPU: the needed box of a mapped block holds every tap of every voxel of the block (the three
 * samplers, rotations, scalings, shears, 2D and 3D); reuse, shift and fetch decisions; the
 * copies, replayed into a toroidal buffer on the host, leave exactly the window's voxels in
 * it over a rotation sweep and an optimiser's small steps; the window never exceeds the
 * budget, and the budget follows the memory cap. What cuda/dmi_cuda.cu does with the plans
 * on the device (test_cuda_dmi checks its counts against the CPU's). */
#include <math.h>
#include <string.h>

#include "dmi_decomp.h"
#include "dmi_window.h"
#include "testutil.h"

static int clampi(int i, int n)
{
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/* The taps sampler s reads at p along an axis of n voxels, as dmi_cuda.cu's axis_inside. */
static void tap_range(NwSampler s, double p, int n, int *a, int *b)
{
  if (s == NW_SAMPLER_NEAREST) {
    *a = *b = clampi((int)floor(p + 0.5), n);
    return;
  }
  const int f = (int)floor(p);
  *a = clampi(s == NW_SAMPLER_LINEAR ? f : f - 1, n);
  *b = clampi(s == NW_SAMPLER_LINEAR ? f + 1 : f + 2, n);
}

static void rotation_map(double deg, double scale, double shear, const double c[3], double tx,
                         double ty, int dim, double map[12])
{
  const double t = deg * G_PI / 180.0, co = cos(t) * scale, si = sin(t) * scale;
  memset(map, 0, 12 * sizeof(double));
  map[0] = co;
  map[1] = -si + shear;
  map[4] = si;
  map[5] = co;
  map[10] = 1.0;
  if (dim == 3) { /* a tilt about x as well */
    map[6] = 0.1 * si;
    map[9] = -0.1 * si;
  }
  map[3] = c[0] - map[0] * c[0] - map[1] * c[1] - map[2] * c[2] + tx;
  map[7] = c[1] - map[4] * c[0] - map[5] * c[1] - map[6] * c[2] + ty;
  map[11] = c[2] - map[8] * c[0] - map[9] * c[1] - map[10] * c[2];
}

static void test_needed_box(void)
{
  const int dims[2][3] = {{97, 83, 1}, {23, 19, 17}};
  for (int d = 0; d < 2; d++) {
    const int *n = dims[d];
    const double c[3] = {0.5 * (n[0] - 1), 0.5 * (n[1] - 1), 0.5 * (n[2] - 1)};
    NwDmiLayout l = {{2, d == 0 ? 3 : 2, d == 0 ? 1 : 2}};
    for (int b = 0; b < nw_dmi_layout_blocks(&l); b++)
      for (int ang = 0; ang <= 180; ang += 15)
        for (int s = 0; s < 3; s++) {
          double map[12];
          rotation_map(ang + 0.3, 1.0 + 0.05 * (b % 3), 0.02 * b, c, 1.5, -0.7, d + 2, map);
          int lo[3], hi[3], nlo[3], nhi[3];
          nw_dmi_block_bounds(&l, n, b, lo, hi);
          g_assert_true(nw_dmi_needed_box(map, lo, hi, n, (NwSampler)s, nlo, nhi));
          for (int k = lo[2]; k < hi[2]; k++)
            for (int j = lo[1]; j < hi[1]; j++)
              for (int i = lo[0]; i < hi[0]; i++) {
                /* the position as the metric computes it */
                const double jj = j, kk = k;
                const double p[3] = {map[0] * i + map[1] * jj + map[2] * kk + map[3],
                                     map[4] * i + map[5] * jj + map[6] * kk + map[7],
                                     map[8] * i + map[9] * jj + map[10] * kk + map[11]};
                gboolean in = TRUE;
                for (int a = 0; a < 3; a++)
                  in = in && p[a] >= -0.5 && p[a] <= n[a] - 0.5;
                if (!in)
                  continue;
                for (int a = 0; a < 3; a++) {
                  int t0, t1;
                  tap_range((NwSampler)s, p[a], n[a], &t0, &t1);
                  g_assert_cmpint(t0, >=, nlo[a]);
                  g_assert_cmpint(t1, <, nhi[a]);
                }
              }
        }
  }
  /* an empty block needs nothing */
  const double id[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  int lo[3] = {3, 3, 0}, hi[3] = {3, 9, 1}, n[3] = {10, 10, 1}, a[3], b[3];
  g_assert_false(nw_dmi_needed_box(id, lo, hi, n, NW_SAMPLER_LINEAR, a, b));
  /* the identity: the block, one tap above (linear) and the rounding voxel each side */
  lo[0] = 2, hi[0] = 6;
  g_assert_true(nw_dmi_needed_box(id, lo, hi, n, NW_SAMPLER_LINEAR, a, b));
  g_assert_cmpint(a[0], ==, 1);
  g_assert_cmpint(b[0], ==, 8);
  g_assert_cmpint(a[2], ==, 0);
  g_assert_cmpint(b[2], ==, 1);
}

static void test_decisions(void)
{
  const int n[3] = {1000, 800, 1};
  NwDmiWindow w = {{100, 100, 0}, {300, 200, 1}, {0, 0, 0}, TRUE, FALSE};
  NwDmiWindowPlan p;
  /* inside: nothing moves */
  int lo[3] = {150, 120, 0}, hi[3] = {350, 280, 1};
  nw_dmi_window_plan(&w, lo, hi, n, 1000000, 16, &p);
  g_assert_cmpint(p.action, ==, NW_DMI_WINDOW_REUSE);
  g_assert_cmpint(p.n_copies, ==, 0);
  /* a little outside, and smaller than the window: the same size moves, only new strips */
  lo[0] = 380, hi[0] = 410;
  nw_dmi_window_plan(&w, lo, hi, n, 1000000, 16, &p);
  g_assert_cmpint(p.action, ==, NW_DMI_WINDOW_SHIFT);
  g_assert_cmpint(p.next.n[0], ==, 300);
  g_assert_cmpint(p.next.n[1], ==, 200);
  g_assert_cmpint(p.voxels, <, (gint64)300 * 200);
  g_assert_cmpint(p.next.lo[0], <=, 380);
  g_assert_cmpint(p.next.lo[0] + 300, >=, 410);
  /* larger than the window: a new one with the margin, fetched whole */
  lo[0] = 0, hi[0] = 500;
  nw_dmi_window_plan(&w, lo, hi, n, 200000, 16, &p);
  g_assert_cmpint(p.action, ==, NW_DMI_WINDOW_FETCH);
  g_assert_cmpint(p.next.n[0], ==, 532);
  g_assert_cmpint(p.next.n[1], ==, 160 + 32);
  g_assert_cmpint(p.next.lo[0], ==, 0); /* centred, then into the domain */
  g_assert_cmpint(p.voxels, ==, (gint64)532 * 192);
  g_assert_false(p.next.partial);
  /* the margin shrinks to fit the budget */
  nw_dmi_window_plan(&w, lo, hi, n, 500 * 170, 16, &p);
  g_assert_false(p.next.partial);
  g_assert_cmpint((gint64)p.next.n[0] * p.next.n[1], <=, 500 * 170);
  g_assert_cmpint(p.next.n[1], >=, 160);
  /* the needed box over the budget: a partial window of its proportions, centred */
  nw_dmi_window_plan(&w, lo, hi, n, 40000, 16, &p);
  g_assert_true(p.next.partial);
  g_assert_cmpint((gint64)p.next.n[0] * p.next.n[1], <=, 40000);
  g_assert_cmpint((gint64)p.next.n[0] * p.next.n[1], >, 39000);
  g_assert_cmpint(p.next.n[2], ==, 1);
  g_assert_cmpfloat(fabs((double)p.next.n[0] / p.next.n[1] - 500.0 / 160.0), <, 0.05);
  /* ... which keeps its size, and moves, while the box stays over the budget */
  NwDmiWindow part = p.next;
  lo[0] += 40, hi[0] += 40;
  nw_dmi_window_plan(&part, lo, hi, n, 40000, 16, &p);
  g_assert_cmpint(p.action, ==, NW_DMI_WINDOW_SHIFT);
  g_assert_cmpmem(p.next.n, sizeof p.next.n, part.n, sizeof part.n);
  /* a box of another shape that the held size mostly covers (a sweep's next angle): shifted,
   * not copied whole in a new shape; one that it covers badly: reshaped */
  NwDmiWindow turned = {{300, 300, 0}, {134, 100, 1}, {5, 7, 0}, TRUE, TRUE};
  int tlo[3] = {320, 330, 0}, thi[3] = {480, 412, 1};
  nw_dmi_window_plan(&turned, tlo, thi, n, 13400, 16, &p);
  g_assert_cmpint(p.action, ==, NW_DMI_WINDOW_SHIFT);
  g_assert_true(p.next.partial);
  g_assert_cmpmem(p.next.n, sizeof p.next.n, turned.n, sizeof turned.n);
  tlo[0] = 360, thi[0] = 442, tlo[1] = 300, thi[1] = 460;
  nw_dmi_window_plan(&turned, tlo, thi, n, 13400, 16, &p);
  g_assert_cmpint(p.action, ==, NW_DMI_WINDOW_FETCH);
  g_assert_false(p.next.partial);
  /* a budget for the whole level: the whole level, once */
  NwDmiWindow none = {0};
  nw_dmi_window_plan(&none, lo, hi, n, 1000 * 800, 16, &p);
  g_assert_cmpint(p.action, ==, NW_DMI_WINDOW_FETCH);
  g_assert_cmpint(p.next.n[0], ==, 1000);
  g_assert_cmpint(p.next.n[1], ==, 800);
  NwDmiWindow whole = p.next;
  lo[0] = 0, lo[1] = 0, hi[0] = 1000, hi[1] = 800;
  nw_dmi_window_plan(&whole, lo, hi, n, 1000 * 800, 16, &p);
  g_assert_cmpint(p.action, ==, NW_DMI_WINDOW_REUSE);
}

/* The copies of each plan replayed from image into a toroidal buffer: afterwards the buffer
 * holds the window's voxels where nw_dmi_window_offset says. */
static void replay(const float *image, const int n[3], const NwDmiWindowPlan *p, float *buf)
{
  for (int q = 0; q < p->n_copies; q++) {
    const NwDmiCopy *c = &p->copies[q];
    for (int a = 0; a < 3; a++) {
      g_assert_cmpint(c->dst_lo[a], >=, 0);
      g_assert_cmpint(c->dst_lo[a] + c->n[a], <=, p->next.n[a]);
      g_assert_cmpint(c->src_lo[a], >=, 0);
      g_assert_cmpint(c->src_lo[a] + c->n[a], <=, n[a]);
    }
    for (int k = 0; k < c->n[2]; k++)
      for (int j = 0; j < c->n[1]; j++)
        for (int i = 0; i < c->n[0]; i++)
          buf[((gsize)(c->dst_lo[2] + k) * p->next.n[1] + (c->dst_lo[1] + j)) * p->next.n[0] +
              (c->dst_lo[0] + i)] =
              image[((gsize)(c->src_lo[2] + k) * n[1] + (c->src_lo[1] + j)) * n[0] +
                    (c->src_lo[0] + i)];
  }
}

static void check_window(const float *image, const int n[3], const NwDmiWindow *w, const float *buf)
{
  for (int k = w->lo[2]; k < w->lo[2] + w->n[2]; k++)
    for (int j = w->lo[1]; j < w->lo[1] + w->n[1]; j++)
      for (int i = w->lo[0]; i < w->lo[0] + w->n[0]; i++)
        g_assert_cmpfloat(buf[nw_dmi_window_offset(w, i, j, k)], ==,
                          image[((gsize)k * n[1] + j) * n[0] + i]);
}

static void sweep(const int n[3], int dim, const int blo[3], const int bhi[3], gint64 budget,
                  int *shifts, int *fetches)
{
  const gsize nv = (gsize)n[0] * n[1] * n[2];
  g_autofree float *image = g_new(float, nv);
  for (gsize v = 0; v < nv; v++)
    image[v] = (float)v;
  g_autofree float *buf = g_new0(float, MIN((gint64)nv, budget));
  const double c[3] = {0.5 * (n[0] - 1), 0.5 * (n[1] - 1), 0.5 * (n[2] - 1)};
  NwDmiWindow w = {0};
  /* a sweep with coarse steps, then an optimiser's small steps about 20 degrees */
  for (int step = 0; step < 13 + 20; step++) {
    const double deg = step < 13 ? step * 15.0 : 20.0 + 0.05 * (step - 13) * ((step & 1) ? 1 : -1);
    double map[12];
    rotation_map(deg, 1.0, 0.0, c, 0.5 * (step % 3), 0.0, dim, map);
    int lo[3], hi[3];
    g_assert_true(nw_dmi_needed_box(map, blo, bhi, n, NW_SAMPLER_CUBIC, lo, hi));
    NwDmiWindowPlan p;
    nw_dmi_window_plan(&w, lo, hi, n, budget, 8, &p);
    g_assert_cmpint((gint64)p.next.n[0] * p.next.n[1] * p.next.n[2], <=, budget);
    if (!p.next.partial)
      for (int a = 0; a < 3; a++) {
        g_assert_cmpint(lo[a], >=, p.next.lo[a]);
        g_assert_cmpint(hi[a], <=, p.next.lo[a] + p.next.n[a]);
      }
    *shifts += p.action == NW_DMI_WINDOW_SHIFT;
    *fetches += p.action == NW_DMI_WINDOW_FETCH;
    if (p.action == NW_DMI_WINDOW_SHIFT) /* only what was not resident travels */
      g_assert_cmpint(p.voxels, <, (gint64)p.next.n[0] * p.next.n[1] * p.next.n[2]);
    replay(image, n, &p, buf);
    w = p.next;
    check_window(image, n, &w, buf);
  }
}

static void test_copies(void)
{
  const int n2[3] = {120, 90, 1}, b2lo[3] = {0, 0, 0}, b2hi[3] = {120, 30, 1};
  int shifts = 0, fetches = 0;
  /* budgets: the block's slab (partial at most angles), twice it, the whole section */
  const gint64 budgets[] = {124 * 34, 2 * 124 * 34, 120 * 90};
  for (gsize b = 0; b < G_N_ELEMENTS(budgets); b++)
    sweep(n2, 2, b2lo, b2hi, budgets[b], &shifts, &fetches);
  const int n3[3] = {30, 26, 22}, b3lo[3] = {0, 13, 0}, b3hi[3] = {15, 26, 11};
  sweep(n3, 3, b3lo, b3hi, 19 * 17 * 15, &shifts, &fetches);
  sweep(n3, 3, b3lo, b3hi, 30 * 26 * 22, &shifts, &fetches);
  g_test_message("%d shifts, %d fetches", shifts, fetches);
  g_assert_cmpint(shifts, >, 10); /* the toroidal path was taken */
}

static void test_budget(void)
{
  /* the cap the plan fits a block with its slab leaves at least the slab for the window */
  const int n[3] = {1000, 1000, 1};
  NwDmiLayout l = {{2, 2, 1}};
  for (int mm = 0; mm < 2; mm++) {
    const double cap = nw_dmi_block_bytes(&l, n, n, TRUE, mm, 32) / 1e6;
    const gint64 w = nw_dmi_window_budget(cap, 500 * 500, TRUE, mm, 32);
    g_assert_cmpint(w, >=, (gint64)502 * 502);
    g_assert_cmpint(w, <=, (gint64)504 * 504);
    /* a cap twice as large: the window takes the rest */
    const gint64 w2 = nw_dmi_window_budget(2 * cap, 500 * 500, TRUE, mm, 32);
    g_assert_cmpint(w2, >, 2 * w);
  }
  g_assert_cmpint(nw_dmi_window_budget(0.0, 100, TRUE, FALSE, 32), ==, G_MAXINT64);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dmi-window/needed-box", test_needed_box);
  g_test_add_func("/dmi-window/decisions", test_decisions);
  g_test_add_func("/dmi-window/copies", test_copies);
  g_test_add_func("/dmi-window/budget", test_budget);
  return g_test_run();
}
