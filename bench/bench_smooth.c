/* bench_smooth.c — benchmark of the "smooth" method, CPU reference against CUDA twin, through
 * the method interface (so the figures' reduction and its few host bytes are included, as in
 * a real job). Not a test: it prints one JSON object on stdout. Main thread only; the CUDA
 * state is created, stepped and destroyed on this one thread.
 *
 *   bench_smooth [--size N] [--sigma MM] [--iterations K] [--device cpu|cuda|both]
 *
 * Volume: N^3 voxels of 1 mm, one component (nw_test_volume-like values ~100). Per step the
 * ideal traffic is 32 bytes per voxel: three passes each read and write the image (3 * 8 B)
 * plus the figures' reduction reading the new and the old image (8 B); GB/s below is that
 * ideal divided by the measured time (halo re-reads are not counted). The first step is a
 * warm-up and not timed. When both run, the CUDA result is checked against the CPU one and
 * the benchmark fails (exit 1) when they differ by more than 1e-5 max |cpu| (the tolerance of
 * tests/test_cuda_smooth.c; the two are meant to agree bit for bit, smooth_kernels.cuh). */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "json_out.h"
#include "method.h"
#include "method_table.h"
#include "smooth_method.h"

static NwVolume *bench_volume(int n)
{
  NwVolume *v = nw_volume_new(n, n, n, 1, NULL);
  if (v == NULL)
    return NULL;
  for (int k = 0; k < n; k++)
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        v->data[nw_volume_index(v, i, j, k)] =
            (float)(100.0 + 40.0 * sin(0.3 * i) * cos(0.2 * j) + 20.0 * sin(0.15 * k) +
                    (i > n / 2 ? 30.0 : 0.0));
  return v;
}

/* Runs warm-up + iterations steps; returns ms per timed step (<0 on error) and the image. */
static double run(const NwMethodOps *ops, const NwVolume *v, const NwParams *p, int iterations,
                  NwVolume **image, GError **error)
{
  NwMethodInputs in = {.fixed = v};
  void *s = ops->create(&in, p, error);
  if (s == NULL)
    return -1.0;
  double ms = -1.0;
  NwIterationReport rep;
  memset(&rep, 0, sizeof rep);
  if (ops->step(s, &rep, error)) {
    gint64 t0 = g_get_monotonic_time();
    gboolean ok = TRUE;
    for (int it = 0; it < iterations && ok; it++) {
      memset(&rep, 0, sizeof rep);
      ok = ops->step(s, &rep, error);
    }
    if (ok)
      ms = (double)(g_get_monotonic_time() - t0) / 1000.0 / iterations;
  }
  NwFrame f = {0};
  if (ms >= 0.0 && ops->publish_frame(s, &f, error))
    *image = g_steal_pointer(&f.image);
  else
    ms = -1.0;
  nw_frame_clear(&f);
  ops->destroy(s);
  return ms;
}

static double max_abs_diff(const NwVolume *a, const NwVolume *b)
{
  double m = 0.0;
  for (size_t e = 0; e < nw_volume_n_floats(a); e++)
    m = fmax(m, fabs((double)a->data[e] - (double)b->data[e]));
  return m;
}

static double max_abs(const NwVolume *a)
{
  double m = 0.0;
  for (size_t e = 0; e < nw_volume_n_floats(a); e++)
    m = fmax(m, fabs((double)a->data[e]));
  return m;
}

int main(int argc, char **argv)
{
  int size = 192, iterations = 10;
  double sigma = 2.0;
  g_autofree char *device = g_strdup("both");
  GOptionEntry entries[] = {
      {"size", 0, 0, G_OPTION_ARG_INT, &size, "Voxels per axis (default 192)", "N"},
      {"sigma", 0, 0, G_OPTION_ARG_DOUBLE, &sigma, "Gaussian sigma in mm (default 2)", "MM"},
      {"iterations", 0, 0, G_OPTION_ARG_INT, &iterations, "Timed steps (default 10)", "K"},
      {"device", 0, 0, G_OPTION_ARG_STRING, &device, "cpu, cuda or both", "D"},
      {NULL, 0, 0, 0, NULL, NULL, NULL}};
  g_autoptr(GOptionContext) ctx = g_option_context_new("- benchmark the smooth method");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || size < 1 || iterations < 1) {
    fprintf(stderr, "bench_smooth: %s\n", error ? error->message : "bad --size/--iterations");
    return 2;
  }
  nw_methods_register_builtin();
  g_autoptr(NwVolume) v = bench_volume(size);
  g_autoptr(NwParams) p = nw_params_new(nw_smooth_param_specs, nw_smooth_n_params);
  if (v == NULL || !nw_params_set(p, "sigma", sigma, &error) ||
      !nw_params_set(p, "iterations", iterations + 1, &error)) {
    fprintf(stderr, "bench_smooth: %s\n", error ? error->message : "out of memory");
    return 2;
  }
  const double bytes = 32.0 * (double)nw_volume_n_voxels(v);
  const NwDevice order[2] = {NW_DEVICE_CPU, NW_DEVICE_CUDA};
  NwVolume *img[2] = {NULL, NULL};
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "bench", "smooth");
  nw_json_member_number(b, "size", size);
  nw_json_member_number(b, "sigma_mm", sigma);
  nw_json_member_number(b, "iterations", iterations);
  nw_json_member_number(b, "bytes_per_step", bytes);
  int status = 0;
  for (int d = 0; d < 2; d++) {
    const char *name = nw_device_name(order[d]);
    if (strcmp(device, "both") != 0 && strcmp(device, name) != 0)
      continue;
    g_clear_error(&error);
    const NwMethodOps *ops = nw_method_lookup("smooth", order[d], &error);
    double ms = ops ? run(ops, v, p, iterations, &img[d], &error) : -1.0;
    json_builder_set_member_name(b, name);
    json_builder_begin_object(b);
    if (ms < 0.0) {
      nw_json_member_string(b, "error", error ? error->message : "failed");
      status = strcmp(device, "both") == 0 ? status : 1; /* "both": report, carry on */
    } else {
      nw_json_member_number(b, "ms_per_step", ms);
      nw_json_member_number(b, "gb_per_s", bytes / (ms * 1e-3) / 1e9);
    }
    json_builder_end_object(b);
  }
  if (img[0] != NULL && img[1] != NULL) {
    const double diff = max_abs_diff(img[0], img[1]), tol = 1e-5 * fmax(1.0, max_abs(img[0]));
    nw_json_member_number(b, "max_abs_diff_cpu_cuda", diff);
    nw_json_member_number(b, "tolerance", tol);
    if (diff > tol) {
      fprintf(stderr, "bench_smooth: CUDA and CPU results differ by %g (tolerance %g)\n", diff,
              tol);
      status = 1;
    }
  }
  json_builder_end_object(b);
  g_autofree char *text = nw_json_to_string(b, FALSE);
  printf("%s\n", text);
  nw_volume_free(img[0]);
  nw_volume_free(img[1]);
  return status;
}
