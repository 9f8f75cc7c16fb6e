/* bench_stalls — how often the machine itself holds a thread up, with no GPU and nothing of
 * neurowarp's running: one thread, paced like a 60 Hz display, does a fixed arithmetic piece
 * (no memory traffic) and copies 10 MB each round, and every round where either took more
 * than three times its median is reported, with the steal time the kernel counted and the
 * thread's involuntary context switches meanwhile.
 *
 * Why: the live view's host-frame path (bench_live) is late by an iteration or two whenever
 * the display or the downloader is held up for ~10 ms. On the lent H100 hosts that happens
 * in episodes that neither steal time nor preemption records; this probe, run beside
 * bench_live's figures, says how calm the machine was (a round's arithmetic piece is the
 * same work every time, so a round 10x slower was a thread that did not run).
 *
 * Not a test: prints a summary, and with --json writes the figures (temporary name, renamed).
 * Main thread only. */
#define _GNU_SOURCE /* RUSAGE_THREAD, sched_setaffinity */
#include <glib.h>
#include <json-glib/json-glib.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include "json_out.h"
#include "machine_counts.h"

#define ROUND_US 16667         /* a 60 Hz display frame */
#define COPY_BYTES (10u << 20) /* about a live host frame at 256³ (1/3 a side, image and field) */
#define SLOW_FACTOR 3.0
#define MAX_LISTED 200

typedef struct {
  double at_s, alu_ms, copy_ms;
  double steal_ms; /* -1: not known */
  long preempted;
} Round;

/* A dependent chain of multiply-adds: the same instructions every call, no memory. */
static double alu_piece(int n)
{
  volatile double seed = 1.0;
  double x = seed;
  for (int i = 0; i < n; i++)
    x = x * 1.0000001 + 1e-9;
  return x;
}

/* A figure's median, 99th percentile and largest over the rounds, from its values sorted once. */
typedef struct {
  double median, p99, max;
} Spread;

static Spread spread(const double *v, int n)
{
  g_autofree double *s = g_memdup2(v, (gsize)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, nw_bench_cmp_double);
  return (Spread){s[n / 2], s[CLAMP((int)(0.99 * (n - 1) + 0.5), 0, n - 1)], s[n - 1]};
}

static void member_spread(JsonBuilder *b, const char *key, Spread s)
{
  json_builder_set_member_name(b, key);
  json_builder_begin_object(b);
  nw_json_member_number(b, "median", s.median);
  nw_json_member_number(b, "p99", s.p99);
  nw_json_member_number(b, "max", s.max);
  json_builder_end_object(b);
}

int main(int argc, char **argv)
{
  double seconds = 30.0;
  int cpu = -1;
  char *json = NULL;
  GOptionEntry entries[] = {
      {"seconds", 0, 0, G_OPTION_ARG_DOUBLE, &seconds, "How long to probe (default 30)", "S"},
      {"cpu", 0, 0, G_OPTION_ARG_INT, &cpu,
       "Run on this CPU only (default: where the scheduler puts it); one probe a CPU, run at "
       "once, says whether the machine holds some CPUs more than others", "N"},
      {"json", 0, 0, G_OPTION_ARG_FILENAME, &json, "Write the figures as JSON here", "FILE"},
      {NULL}};
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("— how often the machine holds a thread up (no GPU)");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) error = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &error) || !(seconds > 0 && seconds <= 3600)) {
    fprintf(stderr, "bench_stalls: %s\n",
            error ? error->message : "--seconds must be in (0, 3600]");
    return 2;
  }
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (cpu >= CPU_SETSIZE || sched_setaffinity(0, sizeof set, &set) != 0) {
      fprintf(stderr, "bench_stalls: --cpu %d: cannot run there: %s\n", cpu, g_strerror(errno));
      return 2;
    }
  }
  /* the arithmetic piece sized to ~0.5 ms here, from the fastest of a few tries */
  int alu_n = 100000;
  double best = G_MAXDOUBLE, sink = 0.0;
  for (int t = 0; t < 20; t++) {
    const gint64 s = g_get_monotonic_time();
    sink += alu_piece(alu_n);
    best = MIN(best, (double)(g_get_monotonic_time() - s));
  }
  alu_n = (int)CLAMP(alu_n * 500.0 / MAX(best, 1.0), 1000, 1e8);

  g_autofree char *src = g_malloc(COPY_BYTES), *dst = g_malloc(COPY_BYTES);
  memset(src, 1, COPY_BYTES);
  memset(dst, 2, COPY_BYTES);
  const int max_rounds = (int)(seconds * 1e6 / ROUND_US) + 1;
  g_autofree Round *r = g_new0(Round, max_rounds);
  const gint64 t0 = g_get_monotonic_time();
  double steal = nw_bench_steal_ms();
  long pre = nw_bench_preemptions(RUSAGE_THREAD);
  int n = 0;
  while (n < max_rounds && g_get_monotonic_time() - t0 < (gint64)(seconds * 1e6)) {
    const gint64 a = g_get_monotonic_time();
    sink += alu_piece(alu_n);
    const gint64 m = g_get_monotonic_time();
    memcpy(dst, src, COPY_BYTES);
    const gint64 e = g_get_monotonic_time();
    const double steal_now = nw_bench_steal_ms();
    const long pre_now = nw_bench_preemptions(RUSAGE_THREAD);
    r[n] = (Round){(double)(a - t0) / 1e6, (double)(m - a) / 1e3, (double)(e - m) / 1e3,
                   steal >= 0 && steal_now >= 0 ? steal_now - steal : -1, pre_now - pre};
    steal = steal_now;
    pre = pre_now;
    n++;
    const gint64 next = t0 + (gint64)n * ROUND_US, left = next - g_get_monotonic_time();
    if (left > 0)
      g_usleep((gulong)left);
  }
  if (dst[COPY_BYTES - 1] != 1 || sink == 0.0) /* keeps both pieces from being optimised out */
    return 1;

  g_autofree double *alu = g_new(double, n), *copy = g_new(double, n);
  for (int i = 0; i < n; i++) {
    alu[i] = r[i].alu_ms;
    copy[i] = r[i].copy_ms;
  }
  const Spread alu_s = spread(alu, n), copy_s = spread(copy, n);
  const double alu_med = alu_s.median, copy_med = copy_s.median;
  int slow = 0;
  double lost_ms = 0.0;
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  nw_json_member_string(b, "bench", "stalls");
  nw_json_member_number(b, "seconds", seconds);
  nw_json_member_number(b, "cpu", cpu);
  /* the first round's start on the monotonic clock (µs), to line up probes run at once */
  nw_json_member_number(b, "t0_monotonic_us", (double)t0);
  nw_json_member_number(b, "rounds", n);
  nw_json_member_number(b, "copy_bytes", COPY_BYTES);
  member_spread(b, "alu_ms", alu_s);
  member_spread(b, "copy_ms", copy_s);
  json_builder_set_member_name(b, "slow");
  json_builder_begin_array(b);
  for (int i = 0; i < n; i++) {
    if (r[i].alu_ms <= SLOW_FACTOR * alu_med && r[i].copy_ms <= SLOW_FACTOR * copy_med)
      continue;
    slow++;
    lost_ms += MAX(r[i].alu_ms - alu_med, 0.0) + MAX(r[i].copy_ms - copy_med, 0.0);
    if (slow > MAX_LISTED)
      continue;
    json_builder_begin_object(b);
    nw_json_member_number(b, "at_s", r[i].at_s);
    nw_json_member_number(b, "alu_ms", r[i].alu_ms);
    nw_json_member_number(b, "copy_ms", r[i].copy_ms);
    nw_json_member_number(b, "steal_ms", r[i].steal_ms);
    nw_json_member_number(b, "preemptions", (double)r[i].preempted);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  nw_json_member_number(b, "slow_rounds", slow);
  nw_json_member_number(b, "slow_fraction", n > 0 ? (double)slow / n : 0.0);
  nw_json_member_number(b, "ms_lost", lost_ms);
  json_builder_end_object(b);

  printf("stalls: %d rounds of %.0f s; arithmetic piece median %.3f ms (p99 %.3f, max %.3f), "
         "10 MB copy median %.3f ms (p99 %.3f, max %.3f); %d rounds over %.0fx a median "
         "(%.2f %%), %.0f ms lost\n",
         n, seconds, alu_med, alu_s.p99, alu_s.max, copy_med, copy_s.p99, copy_s.max, slow,
         SLOW_FACTOR,
         n > 0 ? 100.0 * slow / n : 0.0, lost_ms);
  g_autofree char *text = nw_json_to_string(b, TRUE);
  if (json != NULL && !g_file_set_contents(json, text, -1, &error)) {
    fprintf(stderr, "bench_stalls: %s\n", error->message);
    return 1;
  }
  return 0;
}
