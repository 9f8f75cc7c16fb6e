/* test_cuda_gl_interop.c — the live view's interop path on a real GPU: an offscreen EGL
 * context on the GPU's own driver, GL textures (R32F, RGBA32F) and a vertex buffer
 * registered with CUDA, filled from a live front that a worker thread published into, and
 * read back through GL: the voxels exactly, the field exactly, the iso-surface equal to the
 * CPU's marching cubes. Then the same through render/gl_live.h, including a grid change;
 * whether a host frame could reach a texture by DMA alone (test_client_storage_dma); and
 * textures filled from pinned host frames by the copy engines (test_texel_dma).
 * Skips (77) without a CUDA device or when the GL context is not on a CUDA device. */
#include <GL/glew.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gl_live.h"
#include "gl_volume.h"
#include "live_reduce.h"
#include "marching_cubes.h"
#include "nw_cuda_gl.h"
#include "nw_error.h"
#include "nw_gl.h"
#include "testutil.h"

gboolean nw_test_gl_context_on_gpu(int w, int h, NwGlTarget *target);

#define CUDA_OK(call) g_assert_cmpint((call), ==, cudaSuccess)

typedef struct {
  NwLiveFront *front;
  NwVolume *image; /* host copies of what is published */
  float *field;    /* float4 per voxel */
  int iteration;
} Publish;

static NwVolume *ball(int nx, int ny, int nz, double spacing)
{
  NwVolume *v = nw_volume_new(nx, ny, nz, 1, NULL);
  nw_volume_set_spacing(v, spacing, spacing, 1.25 * spacing);
  for (int k = 0; k < nz; k++)
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        double x = i - 0.5 * nx, y = j - 0.5 * ny, z = k - 0.5 * nz;
        v->data[nw_volume_index(v, i, j, k)] =
            (float)(100.0 * exp(-(x * x + y * y + z * z) / (0.08 * nx * nx)) + 0.01 * i);
      }
  return v;
}

/* A worker thread, as a job's: its own stream, device buffers, one publish. */
static gpointer publish_thread(gpointer data)
{
  Publish *p = data;
  const size_t n = nw_volume_n_voxels(p->image);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *d_img, *d_field;
  CUDA_OK(cudaMalloc((void **)&d_img, n * sizeof(float)));
  CUDA_OK(cudaMalloc((void **)&d_field, n * 16));
  CUDA_OK(cudaMemcpyAsync(d_img, p->image->data, n * sizeof(float), cudaMemcpyHostToDevice, s));
  CUDA_OK(cudaMemcpyAsync(d_field, p->field, n * 16, cudaMemcpyHostToDevice, s));
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_live_front_publish(p->front, p->image, d_img, d_field, p->iteration, s, &error));
  g_assert_no_error(error);
  CUDA_OK(cudaStreamSynchronize(s));
  cudaFree(d_img);
  cudaFree(d_field);
  cudaStreamDestroy(s);
  return NULL;
}

static void publish(Publish *p)
{
  g_thread_join(g_thread_new("worker", publish_thread, p));
}

static Publish make_frame(NwLiveFront *front, int n, double spacing, int iteration)
{
  Publish p = {.front = front, .image = ball(n, n + 3, n - 2, spacing), .iteration = iteration};
  const size_t nv = nw_volume_n_voxels(p.image);
  p.field = g_new(float, nv * 4);
  for (size_t i = 0; i < nv; i++) {
    p.field[i * 4] = 0.001f * (float)i;
    p.field[i * 4 + 1] = -0.5f * iteration;
    p.field[i * 4 + 2] = (float)(i % 7);
    p.field[i * 4 + 3] = 0.0f;
  }
  return p;
}

static void check_texture(GLuint tex, GLenum format, int comps, const float *want, size_t n)
{
  float *got = g_new(float, n * comps);
  glBindTexture(GL_TEXTURE_3D, tex);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTexImage(GL_TEXTURE_3D, 0, format, GL_FLOAT, got);
  g_assert_cmpint(glGetError(), ==, GL_NO_ERROR);
  for (size_t i = 0; i < n * comps; i++)
    if (comps == 1 || i % 4 != 3) /* the field's w is unused */
      g_assert_cmpfloat(got[i], ==, want[i]);
  g_free(got);
}

static void check_mesh(GLuint vbo, size_t n_tri, const NwVolume *image, float iso)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(NwSurface) s = nw_marching_cubes(image, iso, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(n_tri, ==, (size_t)s->n_triangles);
  float *got = g_new(float, n_tri * 18);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  glGetBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)(n_tri * 18 * sizeof(float)), got);
  double max_p = 0;
  for (size_t t = 0; t < n_tri; t++)
    for (int c = 0; c < 3; c++)
      for (int d = 0; d < 3; d++)
        max_p = MAX(max_p, fabs(got[(t * 3 + c) * 6 + d] -
                                s->vertices[s->triangles[t * 3 + c] * 3 + d]));
  g_test_message("%zu triangles, max |position diff| %.3g mm", n_tri, max_p);
  g_assert_cmpfloat(max_p, <, 1e-4);
  g_free(got);
}

static GLuint texture3d(GLint internal, GLenum format, const NwVolume *like)
{
  GLuint t;
  glGenTextures(1, &t);
  glBindTexture(GL_TEXTURE_3D, t);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_3D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexImage3D(GL_TEXTURE_3D, 0, internal, like->nx, like->ny, like->nz, 0, format, GL_FLOAT,
               NULL);
  g_assert_cmpint(glGetError(), ==, GL_NO_ERROR);
  return t;
}

/* Raw interop: register, fill, read back. */
static void test_raw(NwLiveFront *front)
{
  Publish p = make_frame(front, 40, 1.5, 3);
  const size_t n = nw_volume_n_voxels(p.image);
  GLuint img = texture3d(GL_R32F, GL_RED, p.image), fld = texture3d(GL_RGBA32F, GL_RGBA, p.image);
  const size_t max_tri = 100000;
  GLuint vbo;
  glGenBuffers(1, &vbo);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(max_tri * 18 * sizeof(float)), NULL, GL_DYNAMIC_DRAW);
  g_autoptr(GError) error = NULL;
  NwCudaGl *ri = nw_cuda_gl_register_texture3d(img, &error);
  g_assert_no_error(error);
  NwCudaGl *rf = nw_cuda_gl_register_texture3d(fld, &error);
  g_assert_no_error(error);
  NwCudaGl *rb = nw_cuda_gl_register_buffer(vbo, max_tri * 18 * sizeof(float), &error);
  g_assert_no_error(error);

  /* nothing published yet: nothing copied, no error */
  NwCudaGlTargets t = {.image_tex = ri, .field_tex = rf, .mesh_buf = rb, .iso = 50.0f,
                       .max_triangles = max_tri};
  int it = 99;
  g_assert_true(nw_cuda_gl_fill_from_front(front, &t, &it, &error));
  g_assert_cmpint(it, ==, -1);

  publish(&p);
  g_assert_true(nw_cuda_gl_fill_from_front(front, &t, &it, &error));
  g_assert_no_error(error);
  g_assert_cmpint(it, ==, 3);
  check_texture(img, GL_RED, 1, p.image->data, n);
  check_texture(fld, GL_RGBA, 4, p.field, n);
  g_assert_cmpuint(t.n_triangles, ==, t.n_total);
  check_mesh(vbo, t.n_triangles, p.image, 50.0f);

  /* a texture of the wrong size is refused, not overrun */
  Publish q = make_frame(front, 24, 3.0, 4);
  publish(&q);
  g_assert_false(nw_cuda_gl_fill_from_front(front, &t, &it, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_MISMATCH);
  g_assert_nonnull(strstr(error->message, "stale"));
  nw_cuda_gl_unregister(ri);
  nw_cuda_gl_unregister(rf);
  nw_cuda_gl_unregister(rb);
  glDeleteTextures(1, &img);
  glDeleteTextures(1, &fld);
  glDeleteBuffers(1, &vbo);
  nw_volume_free(p.image);
  g_free(p.field);
  nw_volume_free(q.image);
  g_free(q.field);
}

/* The field of a Publish as a volume of nc 3 (xyz of the float4s). */
static NwVolume *field_volume(const Publish *p)
{
  NwVolume *u = nw_volume_new_like(p->image, 3, NULL);
  const size_t n = nw_volume_n_voxels(p->image);
  for (size_t i = 0; i < n; i++)
    memcpy(u->data + 3 * i, p->field + 4 * i, 3 * sizeof(float));
  return u;
}

/* The field texture's xyz equal the CPU's block means (core/live_reduce.h) to the bit. */
static void check_reduced_field(GLuint tex, const NwVolume *want)
{
  const size_t n = nw_volume_n_voxels(want);
  float *got = g_new(float, n * 4);
  glBindTexture(GL_TEXTURE_3D, tex);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glGetTexImage(GL_TEXTURE_3D, 0, GL_RGBA, GL_FLOAT, got);
  g_assert_cmpint(glGetError(), ==, GL_NO_ERROR);
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < 3; c++)
      g_assert_cmpfloat(got[4 * i + c], ==, want->data[3 * i + c]);
  g_free(got);
}

/* Reduced field and surface (what the views get for large grids): the field texture on the
 * grid reduced by 2 holds the block means, the surface is the CPU's marching cubes of the
 * image reduced by 2, on that grid. */
static void test_raw_reduced(NwLiveFront *front)
{
  Publish p = make_frame(front, 36, 1.25, 5);
  g_autoptr(NwVolume) u = field_volume(&p);
  g_autoptr(NwVolume) want_u = nw_live_reduce(u, 2, TRUE, NULL);
  g_autoptr(NwVolume) want_img = nw_live_reduce(p.image, 2, FALSE, NULL);
  GLuint fld = texture3d(GL_RGBA32F, GL_RGBA, want_u);
  const size_t max_tri = 100000;
  GLuint vbo;
  glGenBuffers(1, &vbo);
  glBindBuffer(GL_ARRAY_BUFFER, vbo);
  glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(max_tri * 18 * sizeof(float)), NULL, GL_DYNAMIC_DRAW);
  g_autoptr(GError) error = NULL;
  NwCudaGl *rf = nw_cuda_gl_register_texture3d(fld, &error);
  g_assert_no_error(error);
  NwCudaGl *rb = nw_cuda_gl_register_buffer(vbo, max_tri * 18 * sizeof(float), &error);
  g_assert_no_error(error);
  publish(&p);
  NwCudaGlTargets t = {.field_tex = rf, .mesh_buf = rb, .field_reduce = 2, .mesh_reduce = 2,
                       .iso = 50.0f, .max_triangles = max_tri};
  int it = -1;
  g_assert_true(nw_cuda_gl_fill_from_front(front, &t, &it, &error));
  g_assert_no_error(error);
  g_assert_cmpint(it, ==, 5);
  check_reduced_field(fld, want_u);
  g_assert_cmpuint(t.n_triangles, ==, t.n_total);
  check_mesh(vbo, t.n_triangles, want_img, 50.0f);
  /* a field texture of the full grid is stale for a reduced fill */
  GLuint full = texture3d(GL_RGBA32F, GL_RGBA, p.image);
  NwCudaGl *rfull = nw_cuda_gl_register_texture3d(full, &error);
  g_assert_no_error(error);
  NwCudaGlTargets t2 = {.field_tex = rfull, .field_reduce = 2};
  g_assert_false(nw_cuda_gl_fill_from_front(front, &t2, &it, &error));
  g_assert_error(error, NW_ERROR, NW_ERROR_MISMATCH);
  nw_cuda_gl_unregister(rf);
  nw_cuda_gl_unregister(rb);
  nw_cuda_gl_unregister(rfull);
  glDeleteTextures(1, &fld);
  glDeleteTextures(1, &full);
  glDeleteBuffers(1, &vbo);
  nw_volume_free(p.image);
  g_free(p.field);
}

/* Through render/gl_live.h: textures made for the front's grid, re-made when it changes. */
static void test_gl_live(NwLiveFront *front)
{
  NwGlLive *li = nw_gl_live_new(NW_GL_LIVE_IMAGE, 0), *lf = nw_gl_live_new(NW_GL_LIVE_FIELD, 0),
           *lm = nw_gl_live_new(NW_GL_LIVE_MESH, 30.0f);
  for (int round = 0; round < 2; round++) {
    Publish p = make_frame(front, round == 0 ? 20 : 33, round == 0 ? 4.0 : 2.0, 10 + round);
    publish(&p);
    g_autoptr(GError) error = NULL;
    g_assert_true(nw_gl_live_update(li, front, FALSE, &error));
    g_assert_true(nw_gl_live_update(lf, front, FALSE, &error));
    g_assert_true(nw_gl_live_update(lm, front, FALSE, &error));
    g_assert_no_error(error);
    g_assert_cmpint(nw_gl_live_iteration(li), ==, 10 + round);
    const NwGlVolume *gi = nw_gl_live_image(li), *gf = nw_gl_live_field(lf);
    g_assert_cmpint(gi->nx, ==, p.image->nx);
    g_assert_cmpint(gf->nc, ==, 4);
    g_assert_cmpfloat(gi->vox_to_ras[0], ==, p.image->vox_to_ras[0]);
    const size_t n = nw_volume_n_voxels(p.image);
    check_texture(gi->tex, GL_RED, 1, p.image->data, n);
    check_texture(gf->tex, GL_RGBA, 4, p.field, n);
    const NwGlMesh *m = nw_gl_live_mesh(lm);
    g_assert_true(m->soup);
    check_mesh(m->vbo_pos, (size_t)m->n_triangles, p.image, 30.0f);
    nw_volume_free(p.image);
    g_free(p.field);
  }
  /* a bound below the grid: field and surface reduced, the image not */
  nw_gl_live_set_max_voxels(lf, 8000);
  nw_gl_live_set_max_voxels(lm, 8000);
  Publish p = make_frame(front, 33, 2.0, 20);
  publish(&p);
  g_autoptr(GError) error = NULL;
  g_assert_true(nw_gl_live_update(li, front, FALSE, &error));
  g_assert_true(nw_gl_live_update(lf, front, FALSE, &error));
  g_assert_true(nw_gl_live_update(lm, front, FALSE, &error));
  g_assert_no_error(error);
  const int r = nw_live_reduce_choose(p.image->nx, p.image->ny, p.image->nz, 8000);
  g_assert_cmpint(r, >, 1);
  g_autoptr(NwVolume) u = field_volume(&p);
  g_autoptr(NwVolume) want_u = nw_live_reduce(u, r, TRUE, NULL);
  g_autoptr(NwVolume) want_img = nw_live_reduce(p.image, r, FALSE, NULL);
  const NwGlVolume *gf = nw_gl_live_field(lf);
  g_assert_cmpint(gf->nx, ==, want_u->nx);
  g_assert_cmpint(gf->nz, ==, want_u->nz);
  for (int k = 0; k < 16; k++)
    g_assert_cmpfloat(gf->vox_to_ras[k], ==, want_u->vox_to_ras[k]);
  check_reduced_field(gf->tex, want_u);
  g_assert_cmpint(nw_gl_live_image(li)->nx, ==, p.image->nx);
  const NwGlMesh *m = nw_gl_live_mesh(lm);
  check_mesh(m->vbo_pos, (size_t)m->n_triangles, want_img, 30.0f);
  nw_volume_free(p.image);
  g_free(p.field);
  nw_gl_live_free(li);
  nw_gl_live_free(lf);
  nw_gl_live_free(lm);
}

/* A running job (fresh_coming): after the objects had to be made, the frame then in the
 * front is not filled (it went stale meanwhile) and the next one is; the previous grid's
 * objects are drawn until then. */
static void test_gl_live_awaits_fresh(NwLiveFront *front)
{
  NwGlLive *l = nw_gl_live_new(NW_GL_LIVE_IMAGE | NW_GL_LIVE_FIELD, 0);
  g_autoptr(GError) error = NULL;
  /* the first frame: objects made, nothing filled, nothing to draw yet */
  Publish a = make_frame(front, 20, 4.0, 40);
  publish(&a);
  g_assert_true(nw_gl_live_update(l, front, TRUE, &error));
  g_assert_true(nw_gl_live_awaits_frame(l));
  g_assert_cmpint(nw_gl_live_iteration(l), ==, -1);
  g_assert_null(nw_gl_live_image(l));
  /* the same frame again: still waiting */
  g_assert_true(nw_gl_live_update(l, front, TRUE, &error));
  g_assert_true(nw_gl_live_awaits_frame(l));
  g_assert_cmpint(nw_gl_live_iteration(l), ==, -1);
  /* the next frame on that grid is filled */
  Publish b = make_frame(front, 20, 4.0, 41);
  publish(&b);
  g_assert_true(nw_gl_live_update(l, front, TRUE, &error));
  g_assert_no_error(error);
  g_assert_false(nw_gl_live_awaits_frame(l));
  g_assert_cmpint(nw_gl_live_iteration(l), ==, 41);
  check_texture(nw_gl_live_image(l)->tex, GL_RED, 1, b.image->data, nw_volume_n_voxels(b.image));
  check_texture(nw_gl_live_field(l)->tex, GL_RGBA, 4, b.field, nw_volume_n_voxels(b.image));
  /* a new grid: the old textures and iteration are drawn until the next frame fills */
  Publish c = make_frame(front, 33, 2.0, 42);
  publish(&c);
  g_assert_true(nw_gl_live_update(l, front, TRUE, &error));
  g_assert_true(nw_gl_live_awaits_frame(l));
  g_assert_cmpint(nw_gl_live_iteration(l), ==, 41);
  g_assert_cmpint(nw_gl_live_image(l)->nx, ==, b.image->nx);
  check_texture(nw_gl_live_image(l)->tex, GL_RED, 1, b.image->data, nw_volume_n_voxels(b.image));
  check_texture(nw_gl_live_field(l)->tex, GL_RGBA, 4, b.field, nw_volume_n_voxels(b.image));
  /* the job paused (nothing fresher will come): the frame there is filled after all */
  g_assert_true(nw_gl_live_update(l, front, FALSE, &error));
  g_assert_no_error(error);
  g_assert_false(nw_gl_live_awaits_frame(l));
  g_assert_cmpint(nw_gl_live_iteration(l), ==, 42);
  g_assert_cmpint(nw_gl_live_image(l)->nx, ==, c.image->nx);
  check_texture(nw_gl_live_image(l)->tex, GL_RED, 1, c.image->data, nw_volume_n_voxels(c.image));
  check_texture(nw_gl_live_field(l)->tex, GL_RGBA, 4, c.field, nw_volume_n_voxels(c.image));
  Publish *all[] = {&a, &b, &c};
  for (int i = 0; i < 3; i++) {
    nw_volume_free(all[i]->image);
    g_free(all[i]->field);
  }
  nw_gl_live_free(l);
}

/* The host-frame path without a CPU copy, as a capability of the machine (docs/PERFORMANCE.md,
 * issue 8: a host path moved by DMA only): GL's upload buffer in client storage, mapped for
 * good, registered with CUDA, filled by a device-to-host copy and handed to an RGBA32F
 * texture, which then holds every voxel exactly. Where GL has no buffer storage or CUDA
 * refuses to register GL's memory, the case says why and is left out. It also prints the
 * copy's rate into that memory beside the rate into CUDA's own pinned memory. */
static double d2h_gbps(void *dst, const void *src, size_t bytes)
{
  CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost)); /* warm */
  const int rounds = 10;
  const gint64 t0 = g_get_monotonic_time();
  for (int r = 0; r < rounds; r++)
    CUDA_OK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost));
  return (double)bytes * rounds / (double)(g_get_monotonic_time() - t0) / 1e3;
}

static void test_client_storage_dma(void)
{
  if (!(GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage)) {
    printf("client storage: no GL buffer storage here; left out\n");
    return;
  }
  const NwVolume like = {.nx = 85, .ny = 85, .nz = 85, .nc = 4}; /* a 256³ job's host frame */
  const size_t n = nw_volume_n_voxels(&like), bytes = n * 4 * sizeof(float);
  GLuint pbo;
  glGetError();
  glGenBuffers(1, &pbo);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
  glBufferStorage(GL_PIXEL_UNPACK_BUFFER, (GLsizeiptr)bytes, NULL,
                  GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT | GL_CLIENT_STORAGE_BIT);
  float *slot = glMapBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, (GLsizeiptr)bytes,
                                 GL_MAP_WRITE_BIT | GL_MAP_PERSISTENT_BIT |
                                     GL_MAP_FLUSH_EXPLICIT_BIT);
  g_assert_cmpint(glGetError(), ==, GL_NO_ERROR);
  g_assert_nonnull(slot);
  const cudaError_t registered = cudaHostRegister(slot, bytes, cudaHostRegisterDefault);
  printf("client storage: cudaHostRegister of GL's mapped upload buffer (%zu bytes): %s\n",
         bytes, cudaGetErrorString(registered));
  if (registered == cudaSuccess) {
    float *want = g_new(float, 4 * n), *d = NULL, *pinned = NULL;
    for (size_t i = 0; i < 4 * n; i++)
      want[i] = (float)(i % 9973) * 0.25f - 7.0f;
    CUDA_OK(cudaMalloc((void **)&d, bytes));
    CUDA_OK(cudaHostAlloc((void **)&pinned, bytes, cudaHostAllocDefault));
    CUDA_OK(cudaMemcpy(d, want, bytes, cudaMemcpyHostToDevice));
    const double into_gl = d2h_gbps(slot, d, bytes), into_pinned = d2h_gbps(pinned, d, bytes);
    printf("client storage: device-to-host %.1f GB/s into GL's buffer, %.1f GB/s into "
           "cudaHostAlloc memory\n", into_gl, into_pinned);
    glFlushMappedBufferRange(GL_PIXEL_UNPACK_BUFFER, 0, (GLsizeiptr)bytes);
    const GLuint tex = texture3d(GL_RGBA32F, GL_RGBA, &like);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    glTexSubImage3D(GL_TEXTURE_3D, 0, 0, 0, 0, like.nx, like.ny, like.nz, GL_RGBA, GL_FLOAT,
                    NULL);
    g_assert_cmpint(glGetError(), ==, GL_NO_ERROR);
    glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
    check_texture(tex, GL_RGBA, 4, want, n);
    glDeleteTextures(1, &tex);
    CUDA_OK(cudaHostUnregister(slot));
    CUDA_OK(cudaFreeHost(pinned));
    CUDA_OK(cudaFree(d));
    g_free(want);
  } else {
    cudaGetLastError(); /* the refusal is this case's answer, not the next call's error */
  }
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, pbo);
  glUnmapBuffer(GL_PIXEL_UNPACK_BUFFER);
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  glDeleteBuffers(1, &pbo);
}

/* Host frames in pinned memory (the live front's allocator, nw_live_pinned_voxels) fill a
 * texture prepared for them (render/gl_volume.h) through the GPU's copy engines
 * (nw_texel_dma.h), voxel for voxel: an image (R32F) and a field (xyz padded to RGBA with w 0), over more updates than the ring has slots, on a grid whose
 * voxel count splits unevenly into the copy's four pieces (85 x 83 x 81). A volume of GLib's
 * memory on the same texture is copied by the CPU, as before. */
static void test_texel_dma(void)
{
  if (!(GLEW_VERSION_4_4 || GLEW_ARB_buffer_storage)) {
    printf("texel copies: no GL buffer storage here; left out\n");
    return;
  }
  for (int nc = 1; nc <= 3; nc += 2) {
    g_autoptr(GError) error = NULL;
    g_autoptr(NwVolume) v = nw_volume_new_from(nw_live_pinned_voxels(), 85, 83, 81, nc, &error);
    g_assert_no_error(error);
    const size_t n = nw_volume_n_voxels(v), comps = nc == 1 ? 1 : 4;
    float *want = g_new(float, n * comps);
    NwGlVolume *g = nw_gl_volume_new(v, FALSE, &error); /* contents: whatever v held */
    g_assert_no_error(error);
    nw_gl_volume_prepare_updates(g, v);
    g_assert_nonnull(g->dma);
    const int rounds = NW_GL_UPLOAD_SLOTS + 2;
    for (int round = 0; round <= rounds; round++) {
      /* the last round from GLib's memory: the CPU's copy */
      NwVolume *from = round < rounds ? v : nw_volume_new(85, 83, 81, nc, NULL);
      for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < comps; c++) {
          const float x = (float)((i * 7 + c * 131 + (size_t)round * 977) % 65521) - 30000.5f;
          want[i * comps + c] = (int)c < nc ? x : 0.0f;
          if ((int)c < nc)
            from->data[i * nc + c] = x;
        }
      nw_gl_volume_update(g, from);
      check_texture(g->tex, nc == 1 ? GL_RED : GL_RGBA, (int)comps, want, n);
      if (from != v)
        nw_volume_free(from);
    }
    g_assert_cmpuint(g->dma_updates, ==, rounds);
    g_assert_cmpuint(g->cpu_updates, ==, 1);
    printf("texel copies, %d component(s): %d by the copy engines (the last %.3f ms), 1 by the "
           "CPU\n", nc, rounds, g->copy_ms);
    nw_gl_volume_free(g);
    g_free(want);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!nw_test_have_cuda())
    return NW_TEST_SKIP;
  NwGlTarget target;
  if (!nw_test_gl_context_on_gpu(64, 64, &target))
    return NW_TEST_SKIP;
  char why[256];
  if (!nw_cuda_gl_available(why, sizeof why)) {
    printf("SKIP: %s (GL renderer: %s)\n", why, (const char *)glGetString(GL_RENDERER));
    return NW_TEST_SKIP;
  }
  printf("GL renderer: %s\n", (const char *)glGetString(GL_RENDERER));
  g_autoptr(GError) error = NULL;
  NwLiveFront *front = nw_live_front_new(&error);
  g_assert_no_error(error);
  test_raw(front);
  test_raw_reduced(front);
  test_gl_live(front);
  test_gl_live_awaits_fresh(front);
  test_client_storage_dma();
  test_texel_dma();
  nw_live_front_free(front);
  nw_gl_target_clear(&target);
  return 0;
}
