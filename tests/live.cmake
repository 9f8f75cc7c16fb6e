# Live view (issue 5): the GPU front buffer and marching cubes (CUDA, no GL), and CUDA-GL
# interop in an offscreen EGL context on the GPU's own driver. All skip without a device.
if(NW_HAVE_CUDA)
  nw_add_test(test_cuda_live SOURCES test_cuda_live.c LIBS nw_cuda nw_mesh CUDA::cudart
              CUDA LABELS live)
endif()
if(TARGET nw_cuda_gl)
  nw_add_test(test_cuda_gl_interop SOURCES test_cuda_gl_interop.c test_render_egl.c
              LIBS nw_render nw_cuda_gl PkgConfig::EGLPC CUDA::cudart CUDA LABELS live gui)
endif()
