/* machine_counts.c — see machine_counts.h. */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include "machine_counts.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

long nw_bench_minor_faults(int who)
{
  struct rusage ru;
  return getrusage(who, &ru) == 0 ? ru.ru_minflt : 0;
}

long nw_bench_preemptions(int who)
{
  struct rusage ru;
  return getrusage(who, &ru) == 0 ? ru.ru_nivcsw : 0;
}

double nw_bench_thread_cpu_ms(void)
{
  struct timespec t;
  return clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0 ? t.tv_sec * 1e3 + t.tv_nsec / 1e6 : 0.0;
}

double nw_bench_steal_ms(void)
{
  char text[512];
  const int fd = open("/proc/stat", O_RDONLY);
  if (fd < 0)
    return -1;
  const ssize_t got = read(fd, text, sizeof text - 1);
  close(fd);
  if (got <= 0)
    return -1;
  text[got] = '\0';
  unsigned long long t[8];
  if (sscanf(text, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &t[0], &t[1], &t[2], &t[3], &t[4],
             &t[5], &t[6], &t[7]) != 8)
    return -1;
  return 1000.0 * (double)t[7] / (double)sysconf(_SC_CLK_TCK);
}

int nw_bench_cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
