/* affine_texture_cuda.cu — the codes texture's array and texture object (see
 * affine_texture_cuda.cuh). */
#include "affine_texture_cuda.cuh"

bool nw_codes_texture_limits(int max[3])
{
  int device = 0;
  const bool ok =
      cudaGetDevice(&device) == cudaSuccess &&
      cudaDeviceGetAttribute(&max[0], cudaDevAttrMaxTexture2DLayeredWidth, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&max[1], cudaDevAttrMaxTexture2DLayeredHeight, device) == cudaSuccess &&
      cudaDeviceGetAttribute(&max[2], cudaDevAttrMaxTexture2DLayeredLayers, device) == cudaSuccess;
  if (!ok)
    max[0] = max[1] = max[2] = 0;
  return ok;
}

void nw_codes_texture_free(NwCodesTexture *t)
{
  if (t->tex != 0)
    cudaDestroyTextureObject(t->tex);
  if (t->filtered != 0)
    cudaDestroyTextureObject(t->filtered);
  if (t->array != nullptr)
    cudaFreeArray(t->array);
  *t = NwCodesTexture{};
}

/* t's array and texture object for nx x ny x nz codes. */
static cudaError_t make(NwCodesTexture *t, int nx, int ny, int nz)
{
  const cudaChannelFormatDesc format = cudaCreateChannelDesc<unsigned short>();
  cudaError_t e = cudaMalloc3DArray(&t->array, &format, make_cudaExtent(nx, ny, nz),
                                    cudaArrayLayered);
  if (e != cudaSuccess) {
    t->array = nullptr;
    return e;
  }
  cudaResourceDesc res = {};
  res.resType = cudaResourceTypeArray;
  res.res.array.array = t->array;
  cudaTextureDesc desc = {};
  desc.addressMode[0] = desc.addressMode[1] = desc.addressMode[2] = cudaAddressModeClamp;
  desc.filterMode = cudaFilterModePoint; /* gathers: the codes themselves, no filtering */
  desc.readMode = cudaReadModeElementType;
  desc.normalizedCoords = 0;
  if ((e = cudaCreateTextureObject(&t->tex, &res, &desc, nullptr)) != cudaSuccess) {
    t->tex = 0;
    return e;
  }
  desc.filterMode = cudaFilterModeLinear; /* the unit's blend (nw_codes_filtered) */
  desc.readMode = cudaReadModeNormalizedFloat;
  if ((e = cudaCreateTextureObject(&t->filtered, &res, &desc, nullptr)) != cudaSuccess) {
    t->filtered = 0;
    return e;
  }
  t->nx = nx, t->ny = ny, t->nz = nz;
  return cudaSuccess;
}

cudaError_t nw_codes_texture_fill(NwCodesTexture *t, const uint16_t *codes, int nx, int ny, int nz,
                                  cudaStream_t stream)
{
  if (t->tex == 0 || t->nx != nx || t->ny != ny || t->nz != nz) {
    nw_codes_texture_free(t);
    const cudaError_t e = make(t, nx, ny, nz);
    if (e != cudaSuccess) {
      nw_codes_texture_free(t);
      return e;
    }
  }
  cudaMemcpy3DParms p = {};
  p.srcPtr = make_cudaPitchedPtr((void *)codes, (size_t)nx * sizeof(uint16_t), (size_t)nx,
                                 (size_t)ny);
  p.dstArray = t->array;
  p.extent = make_cudaExtent((size_t)nx, (size_t)ny, (size_t)nz);
  p.kind = cudaMemcpyDeviceToDevice;
  return cudaMemcpy3DAsync(&p, stream);
}
