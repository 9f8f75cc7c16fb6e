# Live view (issue 5): the GPU front buffer and marching cubes (CUDA, no GL), and CUDA-GL
# interop in an offscreen EGL context on the GPU's own driver. All skip without a device.
if(NW_HAVE_CUDA)
  nw_add_test(test_cuda_live SOURCES test_cuda_live.c LIBS nw_cuda nw_mesh CUDA::cudart
              CUDA LABELS live)
endif()
if(TARGET nw_cuda_gl)
  nw_add_test(test_cuda_gl_interop SOURCES test_cuda_gl_interop.c test_render_egl.c
              LIBS nw_render nw_cuda_gl nw_egl CUDA::cudart CUDA LABELS live gui)
endif()
# The frame source with a CPU job and a simulated display: no GPU, no GL context.
if(NW_HAVE_RENDER)
  nw_add_test(test_live_source SOURCES test_live_source.c LIBS nw_render LABELS live)
endif()
nw_add_test(test_live_reduce SOURCES test_live_reduce.c LABELS live core)
# The host volumes kept for the next host frames: reuse, and none made per frame (two threads).
nw_add_test(test_live_spares SOURCES test_live_spares.c LABELS live core)
nw_add_test(test_copy_beside SOURCES test_copy_beside.c LABELS live core)
# Host frames of a CUDA job: the GPU download against its CPU twin, and the frame source.
if(NW_HAVE_CUDA AND NW_HAVE_RENDER)
  nw_add_test(test_cuda_live_source SOURCES test_cuda_live_source.c
              LIBS nw_render nw_cuda CUDA::cudart CUDA LABELS live)
endif()
