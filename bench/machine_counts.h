/* machine_counts.h — what the machine did to the benchmarks' threads, read from the kernel:
 * minor page faults, involuntary context switches, the calling thread's CPU time, and the
 * CPU time the hypervisor stole (bench_live's late frames, bench_stalls' slow rounds); and
 * the comparison the benchmarks sort their timings with. Any thread. */
#ifndef NW_MACHINE_COUNTS_H
#define NW_MACHINE_COUNTS_H

/* Minor page faults so far of `who`: RUSAGE_SELF (every thread) or RUSAGE_THREAD (the
 * caller's). */
long nw_bench_minor_faults(int who);
/* Times the kernel took the CPU from the threads of who while they could run (involuntary
 * context switches): another thread, of this process or not, was given their core. */
long nw_bench_preemptions(int who);
/* CPU time the calling thread has run so far, in ms (CLOCK_THREAD_CPUTIME_ID). */
double nw_bench_thread_cpu_ms(void);
/* CPU time the hypervisor has stolen from the machine so far, summed over its CPUs, in ms:
 * the 8th number of /proc/stat's "cpu" line, in clock ticks (usually 10 ms). -1 where there
 * is none. */
double nw_bench_steal_ms(void);
/* qsort's and g_array_sort's comparison of two doubles, ascending. */
int nw_bench_cmp_double(const void *a, const void *b);

#endif
