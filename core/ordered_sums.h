/* ordered_sums.h — reductions over an index range whose result is the same, bit for bit, on
 * every run and for any number of threads.
 *
 * An OpenMP reduction(+) adds the threads' partial sums in the order the threads finish, so
 * two runs of one job can part in a sum's last bits (seen on a 16-core host: the demons
 * energy of a full-mask run and of an unmasked run differed). Here the range is cut into
 * fixed chunks of NW_ORDERED_SUMS_CHUNK indices, whatever the thread count; each chunk is
 * accumulated on its own (in parallel) and the chunks' values are combined in chunk order. */
#ifndef NW_ORDERED_SUMS_H
#define NW_ORDERED_SUMS_H

#include <stddef.h>

#include <glib.h>

G_BEGIN_DECLS

#define NW_ORDERED_SUMS_CHUNK ((size_t)1 << 16)

/* How a slot of the values is combined over the chunks. */
typedef enum { NW_COMBINE_SUM, NW_COMBINE_MIN, NW_COMBINE_MAX } NwCombine;

/* Accumulates indices [begin, end) into acc (n values, set to the identity of each slot's
 * combination beforehand: 0, +inf or -inf). */
typedef void (*NwChunkAccumulate)(double *acc, size_t begin, size_t end, const void *user);

/* out[s] = the combination kind[s] (all sums when kind is NULL) over [0, n), in chunks of
 * NW_ORDERED_SUMS_CHUNK indices. */
void nw_ordered_reduce(double *out, int n_values, const NwCombine *kind, size_t n,
                       NwChunkAccumulate accumulate, const void *user);

/* How nw_ordered_reduce_split cuts [0, n): chunks of `chunk` indices (>= 1), a constant of
 * the caller's data (rows of an image, say), never of the thread count, since the bits
 * depend on it; fewer than team_min chunks (and one chunk always) are accumulated on the
 * calling thread alone, where a team costs more than it gives. */
typedef struct {
  size_t chunk;
  size_t team_min;
} NwOrderedSplit;

/* The same with the caller's chunks: for indices that stand for more work than one voxel
 * (rows), or accumulations whose cost wants more chunks than threads on smaller ranges. */
void nw_ordered_reduce_split(double *out, int n_values, const NwCombine *kind, size_t n,
                             NwOrderedSplit split, NwChunkAccumulate accumulate, const void *user);

G_END_DECLS

#endif
