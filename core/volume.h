/* volume.h — the image/volume and vector-field type of the whole project.
 *
 * An NwVolume is a 3D grid of float voxels with nc components per voxel (1 for images and
 * label maps, 3 for vector fields). 2D images are volumes with nz = 1.
 *
 * Layout: x fastest, components interleaved per voxel (array of structures):
 *   data[((k * ny + j) * nx + i) * nc + c]
 *
 * Geometry follows NIfTI: vox_to_ras maps a voxel index (i, j, k, 1) to world RAS
 * millimetres (row-major 4x4, from the sform, else the qform, else the spacing).
 *
 * Vector fields inside neurowarp (displacement, velocity) are in VOXEL units of the grid they
 * live on: component c is the displacement along index axis c, so the point at voxel x maps to
 * x + u(x). I/O converts to millimetres (RAS or LPS) when saving; see docs/FIELDS.md.
 *
 * Plain data, no threads of its own; any thread may use a volume it owns. */
#ifndef NW_VOLUME_H
#define NW_VOLUME_H

#include <glib.h>
#include <stddef.h>

G_BEGIN_DECLS

/* Largest voxel count we accept (per component): 2^31 - 1, so that int indices stay valid
 * on the GPU and absurd headers are refused before any allocation. */
#define NW_MAX_VOXELS ((size_t)G_MAXINT32)

/* Where a volume's voxels come from when not from GLib: memory a GPU copies into without a
 * CPU copy (pinned host memory, the live view's host frames: cuda/live_front.cu). alloc
 * returns `bytes` bytes or NULL; free takes what alloc returned. Both any thread. pinned:
 * the memory is page-locked and known to CUDA, so a GPU's copy engines can read it too (a
 * texture is then filled from it without a CPU copy: render/gl_volume.c). */
typedef struct {
  void *(*alloc)(size_t bytes);
  void (*free)(void *memory);
  gboolean pinned;
} NwVoxelAllocator;

typedef struct {
  int nx, ny, nz;         /* voxels along i, j, k */
  int nc;                 /* components per voxel: 1 scalar, 3 vector */
  float spacing_mm[3];    /* voxel size along i, j, k (norms of the affine's columns) */
  double vox_to_ras[16];  /* row-major 4x4: voxel index -> world RAS mm */
  float *data;            /* nx*ny*nz*nc floats, layout above; owned */
  /* data's allocator: NULL GLib's (every volume but those of nw_volume_new_from) */
  const NwVoxelAllocator *allocator;
} NwVolume;

/* A zero-filled volume with the identity-times-spacing affine (spacing 1 mm); NULL and an
 * NW_ERROR_INVALID/NOMEM error if sizes are not positive, too large or memory is short. */
NwVolume *nw_volume_new(int nx, int ny, int nz, int nc, GError **error);
/* The same with its voxels from allocator (kept for the volume's life), contents undefined:
 * for memory a caller fills entirely. NULL and an NW_ERROR_INVALID/NOMEM error as above. */
NwVolume *nw_volume_new_from(const NwVoxelAllocator *allocator, int nx, int ny, int nz, int nc,
                             GError **error);
/* A zero-filled volume on the same grid (dims, spacing, affine) as like, with nc components. */
NwVolume *nw_volume_new_like(const NwVolume *like, int nc, GError **error);
/* n floats from src to dst, the caller and a staging chunk's helpers taking 256 KiB pieces
 * from 1 MiB on (copy_beside.h). */
void nw_copy_floats(float *dst, const float *src, size_t n);
/* (A copy beside other work, waited for: copy_beside.h.) */
/* dst takes like's grid: sizes, components, spacing and affine; not its voxels, nor how they
 * are freed (dst's own data and allocator stay). */
void nw_volume_copy_header(NwVolume *dst, const NwVolume *like);
NwVolume *nw_volume_copy(const NwVolume *v); /* aborts when memory is short (GLib) */
/* The same, but NULL with an NW_ERROR_NOMEM error when memory is short. */
NwVolume *nw_volume_try_copy(const NwVolume *v, GError **error);
void nw_volume_free(NwVolume *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(NwVolume, nw_volume_free)

static inline size_t nw_volume_n_voxels(const NwVolume *v)
{
  return (size_t)v->nx * (size_t)v->ny * (size_t)v->nz;
}
static inline size_t nw_volume_n_floats(const NwVolume *v)
{
  return nw_volume_n_voxels(v) * (size_t)v->nc;
}
static inline size_t nw_volume_index(const NwVolume *v, int i, int j, int k)
{
  return ((size_t)k * (size_t)v->ny + (size_t)j) * (size_t)v->nx + (size_t)i;
}
/* The voxels [lo, hi) of a scalar v (lo, hi inside its grid) into out, x fastest, row by
 * row: an image's block (the distributed metric's, dmi_metric.h). */
void nw_volume_copy_region(const NwVolume *v, const int lo[3], const int hi[3], float *out);

/* Set the affine and derive spacing_mm from its column norms. */
void nw_volume_set_affine(NwVolume *v, const double vox_to_ras[16]);
/* Affine = diag(spacing) with the origin at world 0: used for 2D images and phantoms. */
void nw_volume_set_spacing(NwVolume *v, double sx, double sy, double sz);

/* Voxel index (continuous) <-> world RAS mm. */
void nw_volume_voxel_to_world(const NwVolume *v, const double ijk[3], double ras_mm[3]);
void nw_volume_world_to_voxel(const NwVolume *v, const double ras_mm[3], double ijk[3]);

/* The three-letter orientation code of the voxel axes, e.g. "RAS", "LPI", "LAS": for each
 * index axis the world direction it points to most (as nibabel's aff2axcodes). */
void nw_volume_orientation_code(const NwVolume *v, char code[4]);

/* Same dims and affine (within 1e-4 mm) — fixed and moving must be on one grid. */
gboolean nw_volume_same_grid(const NwVolume *a, const NwVolume *b);
/* Error NW_ERROR_MISMATCH naming both files when grids differ. */
gboolean nw_volume_check_same_grid(const NwVolume *a, const char *name_a, const NwVolume *b,
                                   const char *name_b, GError **error);

typedef struct {
  float min, max;         /* over finite voxels; 0 when there are none */
  double mean;            /* over finite voxels */
  size_t n_nonfinite;     /* NaN or Inf floats */
} NwVolumeStats;
void nw_volume_stats(const NwVolume *v, NwVolumeStats *stats);
/* Error NW_ERROR_INVALID naming the file and the count when any voxel is NaN or Inf. */
gboolean nw_volume_check_finite(const NwVolume *v, const char *name, GError **error);

G_END_DECLS

#endif
