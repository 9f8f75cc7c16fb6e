/* gl_volume.h — a volume as a 3D texture plus the mapping from world RAS mm to its texture
 * coordinates: the input of the slice, compare and field renderers.
 *
 * Scalar volumes become GL_R32F textures, vector fields (nc = 3, voxel units) GL_RGBA32F
 * with w = 0, as the fields filled by CUDA interop (nc = 4, w unused: CUDA arrays have no
 * three-channel formats). The field renderer reads xyz.
 * Texture coordinate of voxel index i along an axis of n voxels: (i + 0.5) / n, so
 * ras_to_tex = S * T * ras_to_vox. A texture can be filled from host memory (upload) or
 * wrap a texture someone else fills (the CUDA-GL interop path of the live view), with the
 * same geometry. Thread: the one with the GL context current. */
#ifndef NW_GL_VOLUME_H
#define NW_GL_VOLUME_H

#include <GL/glew.h>
#include <glib.h>

#include "volume.h"

G_BEGIN_DECLS

/* Uploads in flight a volume allows before an update waits for the GPU. */
#define NW_GL_UPLOAD_SLOTS 3

typedef struct {
  GLuint tex;        /* GL_TEXTURE_3D */
  gboolean owns_tex; /* FALSE when wrapped */
  GLuint pbo;        /* pixel-unpack buffer of nw_gl_volume_update, made at its first call */
  /* With GL 4.4 buffer storage, pbo is NW_GL_UPLOAD_SLOTS slots of one upload each, mapped
   * once for the volume's life (persistent, in host memory); an update fills the next slot whose
   * fence says the GPU has read it. Without it (ring == NULL), the buffer is orphaned and
   * mapped anew at every update. */
  char *ring;
  size_t slot_bytes;
  int next_slot;
  GLsync slot_read[NW_GL_UPLOAD_SLOTS]; /* signalled once the transfer from a slot ran */
  double copy_ms; /* the last update's copy into the unpack buffer (what benchmarks see of
                     an update's time on the calling thread besides GL's own calls) */
  /* The ring registered with CUDA (nw_texel_dma.h), made by nw_gl_volume_prepare_updates for
   * volumes in pinned memory: their updates are then copied by the GPU's copy engines, not by
   * this thread. NULL where that cannot be (no CUDA, memory it refuses, NW_GL_TEXEL_DMA=0). */
  struct NwTexelDma *dma;
  gboolean dma_tried;
  guint64 dma_updates, cpu_updates; /* updates through the ring, by whom copied */
  GLuint spare;      /* nw_gl_volume_update's other texture: it fills one while the other is
                        drawn, then swaps them (tex is always the one to draw); 0 until then */
  gboolean nearest;  /* GL_NEAREST sampling */
  int nx, ny, nz, nc;
  double vox_to_ras[16]; /* row-major, as NwVolume */
  double ras_to_vox[16];
  double ras_to_tex[16]; /* world RAS mm -> texture coordinates in [0, 1] */
} NwGlVolume;

/* Upload v (nc 1 or 3). nearest: GL_NEAREST sampling (label maps) instead of trilinear.
 * NULL with an error when the texture cannot be made (size over GL_MAX_3D_TEXTURE_SIZE,
 * out of memory). */
NwGlVolume *nw_gl_volume_new(const NwVolume *v, gboolean nearest, GError **error);
/* Replace the voxels (same dims and nc as at creation). Returns once v has been copied; the
 * GPU fills the texture afterwards, in order with later GL commands. A texture of its own
 * gets a second one at the first update, and tex alternates between them: read tex anew at
 * every draw. */
void nw_gl_volume_update(NwGlVolume *g, const NwVolume *v);
/* Make now what the first nw_gl_volume_update would make (the second texture, the upload
 * ring, its pages touched), for a texture that a live view will refill every frame from
 * volumes like `like`: that first update is then a copy like the others, not 25-33 ms of
 * set-up inside the frame it shows (host frames on an H100: the first frame of a run came two
 * iterations late). When like's memory is pinned (its allocator says so: a CUDA job's host
 * frames), the ring is also registered with CUDA, and the updates from such volumes are
 * copied by the GPU's copy engines rather than by this thread (nw_texel_dma.h). */
void nw_gl_volume_prepare_updates(NwGlVolume *g, const NwVolume *like);
/* A texture of nx x ny x nz voxels with nc components (1: GL_R32F, 4: GL_RGBA32F, a field
 * whose xyz is u in voxels), contents undefined, on the grid vox_to_ras: what CUDA interop
 * fills (gl_live.h). Trilinear sampling. NULL with an error as nw_gl_volume_new. */
NwGlVolume *nw_gl_volume_new_empty(int nx, int ny, int nz, int nc, const double vox_to_ras[16],
                                   GError **error);
/* Wrap an existing GL_TEXTURE_3D (not deleted by nw_gl_volume_free) that holds voxels with
 * the dims and affine of like. */
NwGlVolume *nw_gl_volume_wrap(GLuint tex, const NwVolume *like);
void nw_gl_volume_free(NwGlVolume *g);

G_END_DECLS

#endif
