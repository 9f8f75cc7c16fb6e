/* gl_volume.c — volumes as 3D textures (see gl_volume.h). Thread with the GL context. */
#include "gl_volume.h"

#include <stdint.h>
#include <string.h>

#include "copy_beside.h"
#include "nw_error.h"
#include "nw_mat4.h"
#include "nw_texel_dma.h"

static void set_geometry(NwGlVolume *g, const NwVolume *v)
{
  g->nx = v->nx;
  g->ny = v->ny;
  g->nz = v->nz;
  g->nc = v->nc;
  for (int i = 0; i < 16; i++)
    g->vox_to_ras[i] = v->vox_to_ras[i];
  if (!nw_mat4_invert(g->ras_to_vox, g->vox_to_ras))
    nw_mat4_identity(g->ras_to_vox);
  /* tex = (vox + 0.5) / n per axis */
  double st[16];
  nw_mat4_identity(st);
  int n[3] = {v->nx, v->ny, v->nz};
  for (int a = 0; a < 3; a++) {
    st[a * 4 + a] = 1.0 / n[a];
    st[a * 4 + 3] = 0.5 / n[a];
  }
  nw_mat4_mul(g->ras_to_tex, st, g->ras_to_vox);
}

/* Fields (nc 3 or 4) are stored as RGBA: drivers keep three-channel float textures padded to
 * four and convert an RGB upload on the CPU, inside the GL call. Padding ourselves while
 * filling the upload buffer makes the transfer a plain copy. */
static GLenum internal_format(int nc)
{
  return nc == 1 ? GL_R32F : GL_RGBA32F;
}

static GLenum pixel_format(int nc)
{
  return nc == 1 ? GL_RED : GL_RGBA;
}

static size_t texel_floats(int nc)
{
  return nc == 1 ? 1 : 4;
}

/* Copy v's voxels into dst in the texture's layout (RGB fields padded with w = 0), with a
 * few helper threads when large (copy_beside.h): a live frame's copy is on its way to the
 * screen, and one thread took 2-2.5 ms for a 10 MB frame on the H100 host, most of an
 * iteration of the job it shows (issue 8). */
static void pack_texels(float *dst, const NwVolume *v)
{
  nw_copy_voxels_beside(dst, (int)texel_floats(v->nc), v->data, v->nc, nw_volume_n_voxels(v));
}

/* Fill the texture from client memory (the driver copies before returning). */
static void upload_client(NwGlVolume *g, const NwVolume *v)
{
  glBindTexture(GL_TEXTURE_3D, g->tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  if (v->nc != 3) {
    glTexSubImage3D(GL_TEXTURE_3D, 0, 0, 0, 0, v->nx, v->ny, v->nz, pixel_format(v->nc), GL_FLOAT,
                    v->data);
    return;
  }
  float *texels = g_try_malloc_n(nw_volume_n_voxels(v), 4 * sizeof(float));
  if (texels == NULL) { /* let GL pad it */
    glTexSubImage3D(GL_TEXTURE_3D, 0, 0, 0, 0, v->nx, v->ny, v->nz, GL_RGB, GL_FLOAT, v->data);
    return;
  }
  pack_texels(texels, v);
  glTexSubImage3D(GL_TEXTURE_3D, 0, 0, 0, 0, v->nx, v->ny, v->nz, GL_RGBA, GL_FLOAT, texels);
  g_free(texels);
}

/* The environment variable `name` is "0": a way of updating textures turned off, so that
 * tests and benchmarks can compare it with the one that takes its place. */
static gboolean turned_off(const char *name)
{
  const char *env = g_getenv(name);
  return env != NULL && strcmp(env, "0") == 0;
}

/* The volume's ring of upload slots (see gl_volume.h), made at its first update; FALSE where
 * GL has no buffer storage or refuses it, or NW_GL_UPLOAD_RING=0 asks for the orphaning path
 * (tests: both paths), and then never tried again for this volume (pbo is the orphaned one).
 * Why a ring: orphaning a buffer of a frame's size at every update makes the driver find
 * new storage each time, and on the job's own GPU it now and then waited 5-18 ms for it
 * (host frames beside a demons job on an H100); a ring mapped once asks GL for nothing. */
static gboolean ring_ready(NwGlVolume *g, size_t bytes)
{
  if (g->ring != NULL)
    return TRUE;
  if (g->pbo != 0 || turned_off("NW_GL_UPLOAD_RING") ||
      !(GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage))
    return FALSE;
  /* Client storage: the slots in host memory, where this thread's copy runs at memory speed
   * and the GPU pulls the transfer later. Without it NVIDIA's driver may put them in video
   * memory behind the PCIe BAR, and the copy then writes across the bus, at the pace of
   * whatever else crosses it (host-frame copies took 2-5 ms there). Not coherent: the slot
   * written is flushed explicitly, so the driver may map it cached. */
  const GLbitfield storage = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_CLIENT_STORAGE_BIT;
  const GLbitfield flags = GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_FLUSH_EXPLICIT_BIT;
  const size_t slot = (bytes + 255) & ~(size_t)255; /* each slot's offset 256-byte aligned */
  const GLsizeiptr total = (GLsizeiptr)(slot * NW_GL_UPLOAD_SLOTS);
  glGetError();
  glGenBuffers(1, &g->pbo);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, g->pbo);
  glBufferStorage(GL_PIXEL_UNPACK_BUFFER, total, NULL, storage);
  if (glGetError() == GL_NO_ERROR)
    g->ring = glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, total, flags);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  glGetError();
  if (g->ring == NULL) /* the orphaning path from now on, in a buffer of its own */
    glDeleteBuffers(1, &g->pbo);
  g->pbo = g->ring != NULL ? g->pbo : 0;
  g->slot_bytes = slot;
  return g->ring != NULL;
}

/* The next slot of the ring, once the GPU has read what was put there NW_GL_UPLOAD_SLOTS
 * updates ago (long since, unless GL is that far behind: then this waits, as it must). */
static int ring_take_slot(NwGlVolume *g)
{
  const int s = g->next_slot;
  g->next_slot = (s + 1) % NW_GL_UPLOAD_SLOTS;
  if (g->slot_read[s] != NULL) {
    GLenum r;
    do
      r = glClientWaitSync(g->slot_read[s], GL_SYNC_FLUSH_COMMANDS_BIT, 1000000000);
    while (r == GL_TIMEOUT_EXPIRED);
    glDeleteSync(g->slot_read[s]);
    g->slot_read[s] = NULL;
  }
  return s;
}

/* The ring registered for the copy engines (nw_texel_dma.h), once the ring exists (tried
 * once); FALSE where it cannot be, or NW_GL_TEXEL_DMA=0 asks for the CPU's copy (benchmarks:
 * both). */
static gboolean dma_ready(NwGlVolume *g)
{
  if (g->dma != NULL || g->dma_tried || g->ring == NULL)
    return g->dma != NULL;
  g->dma_tried = TRUE;
  if (turned_off("NW_GL_TEXEL_DMA"))
    return FALSE;
  g_autoptr(GError) error = NULL;
  g->dma = nw_texel_dma_new(g->ring, g->slot_bytes * NW_GL_UPLOAD_SLOTS, g->slot_bytes, &error);
  if (g->dma == NULL)
    g_debug("texture updates copied by the CPU: %s", error->message);
  return g->dma != NULL;
}

/* v's voxels into the ring's slot dst in the texture's layout: by the GPU's copy engines when
 * v is in pinned memory and the ring is registered (a CPU copy of a live frame took 4-5 ms
 * instead of 0.8 whenever the H100 host slowed all its CPUs at once, and its frame came late:
 * issue 8), else by this thread. A failed GPU copy is said once, and the CPU copies from then
 * on. */
static void fill_slot(NwGlVolume *g, float *dst, const NwVolume *v)
{
  const gint64 t0 = g_get_monotonic_time();
  if (v->allocator != NULL && v->allocator->pinned && g->dma != NULL) {
    g_autoptr(GError) error = NULL;
    if (nw_texel_dma_copy(g->dma, dst, v->data, nw_volume_n_voxels(v), v->nc,
                          (int)texel_floats(v->nc), &error)) {
      g->dma_updates++;
      g->copy_ms = (double)(g_get_monotonic_time() - t0) / 1000.0;
      return;
    }
    g_warning("texture update: %s; the CPU copies from now on",
              error != NULL ? error->message : "the GPU's copy was refused");
    g_clear_pointer(&g->dma, nw_texel_dma_free);
  }
  pack_texels(dst, v);
  g->cpu_updates++;
  g->copy_ms = (double)(g_get_monotonic_time() - t0) / 1000.0;
}

/* Fill the texture from v through the volume's pixel-unpack buffer: the copy into the
 * buffer is the only work on this thread; the transfer into the texture runs on the GPU
 * after the call returns (a glTexSubImage3D from client memory would wait for it). Into a
 * slot of the ring where there is one; else the buffer is orphaned first, so a transfer
 * still reading the last frame never stalls us. */
static void upload_texels(NwGlVolume *g, const NwVolume *v)
{
  const size_t bytes = nw_volume_n_voxels(v) * texel_floats(v->nc) * sizeof(float);
  size_t offset = 0;
  int slot = -1;
  float *dst;
  if (ring_ready(g, bytes)) {
    slot = ring_take_slot(g);
    offset = (size_t)slot * g->slot_bytes;
    dst = (float *)(g->ring + offset);
    fill_slot(g, dst, v);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, g->pbo);
    glFlushMappedBufferRange(GL_PIXEL_UNPACK_BUFFER, (GLintptr)offset, (GLsizeiptr)bytes);
  } else {
    if (g->pbo == 0)
      glGenBuffers(1, &g->pbo);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, g->pbo);
    glBufferData(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_DRAW);
    dst = glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, (GLsizeiptr)bytes,
                           GL_MAP_WRITE_BIT | GL_MAP_INVALIDATE_BUFFER_BIT);
    if (dst != NULL) {
      const gint64 t0 = g_get_monotonic_time();
      pack_texels(dst, v);
      g->copy_ms = (double)(g_get_monotonic_time() - t0) / 1000.0;
      glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
    }
  }
  glBindTexture(GL_TEXTURE_3D, g->tex);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  if (dst != NULL)
    glTexSubImage3D(GL_TEXTURE_3D, 0, 0, 0, 0, v->nx, v->ny, v->nz, pixel_format(v->nc), GL_FLOAT,
                    (const void *)(uintptr_t)offset);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  if (slot >= 0)
    g->slot_read[slot] = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  if (dst == NULL) /* no buffer to be had: the slow way, through client memory */
    upload_client(g, v);
}

/* *tex: a new 3D texture of g's size, format and sampling, contents undefined; the GL error
 * (GL_NO_ERROR when made). */
static GLenum new_texture(const NwGlVolume *g, GLuint *tex)
{
  glGetError();
  glGenTextures(1, tex);
  glBindTexture(GL_TEXTURE_3D, *tex);
  GLint filter = g->nearest ? GL_NEAREST : GL_LINEAR;
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_MIN_FILTER, filter);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_MAG_FILTER, filter);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_WRAP_R, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage3D(GL_TEXTURE_3D, 0, (GLint)internal_format(g->nc), g->nx, g->ny, g->nz, 0,
               pixel_format(g->nc), GL_FLOAT, NULL);
  return glGetError();
}

/* A 3D texture of v's size and format, filled from v->data unless that is NULL (undefined
 * contents). */
static NwGlVolume *make_texture(const NwVolume *v, gboolean nearest, GError **error)
{
  GLint max3d = 0;
  glGetIntegerv(GL_MAX_3D_TEXTURE_SIZE, &max3d);
  if (v->nx > max3d || v->ny > max3d || v->nz > max3d) {
    g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED,
                "volume of %dx%dx%d voxels: larger than this GPU's 3D texture limit %d", v->nx,
                v->ny, v->nz, max3d);
    return NULL;
  }
  NwGlVolume *g = g_new0(NwGlVolume, 1);
  set_geometry(g, v);
  g->owns_tex = TRUE;
  g->nearest = nearest;
  const GLenum err = new_texture(g, &g->tex);
  if (err != GL_NO_ERROR) {
    g_set_error(error, NW_ERROR, NW_ERROR_NOMEM,
                "volume of %dx%dx%d voxels: the GPU refused the texture (GL error 0x%x)", v->nx,
                v->ny, v->nz, err);
    nw_gl_volume_free(g);
    return NULL;
  }
  if (v->data != NULL)
    upload_client(g, v); /* once: no buffer kept for a volume that may never change */
  glFlush();             /* the other views' contexts (one share group) see it once flushed */
  return g;
}

NwGlVolume *nw_gl_volume_new(const NwVolume *v, gboolean nearest, GError **error)
{
  if (v->nc != 1 && v->nc != 3 && v->nc != 4) {
    g_set_error(
        error, NW_ERROR, NW_ERROR_UNSUPPORTED,
        "volume with %d components per voxel: only 1 (image) or 3 or 4 (field) can be shown",
        v->nc);
    return NULL;
  }
  return make_texture(v, nearest, error);
}

NwGlVolume *nw_gl_volume_new_empty(int nx, int ny, int nz, int nc, const double vox_to_ras[16],
                                   GError **error)
{
  if ((nc != 1 && nc != 4) || nx < 1 || ny < 1 || nz < 1) {
    g_set_error(error, NW_ERROR, NW_ERROR_INVALID,
                "texture of %dx%dx%d voxels with %d components: expected 1 or 4 components", nx, ny,
                nz, nc);
    return NULL;
  }
  NwVolume shape = {.nx = nx, .ny = ny, .nz = nz, .nc = nc}; /* no data */
  memcpy(shape.vox_to_ras, vox_to_ras, sizeof shape.vox_to_ras);
  return make_texture(&shape, FALSE, error);
}

/* The spare texture of nw_gl_volume_update, made now where missing: FALSE when GL has no room
 * for two (the update then fills the one in place). */
static gboolean spare_ready(NwGlVolume *g)
{
  if (!g->owns_tex || g->spare != 0)
    return g->spare != 0;
  if (new_texture(g, &g->spare) != GL_NO_ERROR) {
    glDeleteTextures(1, &g->spare);
    g->spare = 0;
  }
  return g->spare != 0;
}

void nw_gl_volume_prepare_updates(NwGlVolume *g, const NwVolume *like)
{
  spare_ready(g);
  const size_t bytes = (size_t)g->nx * g->ny * g->nz * texel_floats(g->nc) * sizeof(float);
  if (ring_ready(g, bytes)) /* its pages touched now, not by the first frame's copy */
    memset(g->ring, 0, g->slot_bytes * NW_GL_UPLOAD_SLOTS);
  if (like != NULL && like->allocator != NULL && like->allocator->pinned)
    dma_ready(g); /* CUDA runs in this process already: its frames come from there */
  glFlush();
}

void nw_gl_volume_update(NwGlVolume *g, const NwVolume *v)
{
  g_return_if_fail(v->nx == g->nx && v->ny == g->ny && v->nz == g->nz && v->nc == g->nc);
  /* Fill the texture the last display frame did not draw, then draw from it: replacing the
   * texture a draw still queued reads makes the driver wait for that draw, which on the
   * job's own GPU waits for GL's share of it (host frames' uploads took 5-23 ms instead of
   * 2.4 now and then on an H100 beside a demons job). */
  if (spare_ready(g)) { /* else no room for two: fill the one in place */
    const GLuint drawn = g->tex;
    g->tex = g->spare;
    g->spare = drawn;
  }
  upload_texels(g, v);
  glFlush();
}

NwGlVolume *nw_gl_volume_wrap(GLuint tex, const NwVolume *like)
{
  NwGlVolume *g = g_new0(NwGlVolume, 1);
  set_geometry(g, like);
  g->tex = tex;
  g->owns_tex = FALSE;
  return g;
}

void nw_gl_volume_free(NwGlVolume *g)
{
  if (g == NULL)
    return;
  if (g->owns_tex && g->tex != 0)
    glDeleteTextures(1, &g->tex);
  if (g->spare != 0)
    glDeleteTextures(1, &g->spare);
  for (int s = 0; s < NW_GL_UPLOAD_SLOTS; s++)
    if (g->slot_read[s] != NULL)
      glDeleteSync(g->slot_read[s]);
  nw_texel_dma_free(g->dma); /* unregistered before GL lets go of the memory */
  if (g->pbo != 0) /* unmaps the ring too */
    glDeleteBuffers(1, &g->pbo);
  g_free(g);
}
