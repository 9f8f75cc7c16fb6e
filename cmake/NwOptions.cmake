# Resolve the tri-state options into NW_HAVE_CUDA / NW_HAVE_GUI / NW_HAVE_MPI.
# ON: required (configure fails with the reason); AUTO: on when found; OFF: off.
include(CheckLanguage)

macro(nw_resolve option found reason)
  if(${option} STREQUAL "ON" AND NOT ${found})
    message(FATAL_ERROR "${option}=ON but ${reason}")
  endif()
  if(${option} STREQUAL "OFF")
    set(NW_HAVE_${ARGN} OFF)
  else()
    set(NW_HAVE_${ARGN} ${${found}})
  endif()
endmacro()

# CUDA: nvcc is enough to build; tests skip themselves when no device is present.
set(_nw_cuda_found OFF)
if(NOT NW_CUDA STREQUAL "OFF")
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(_nw_cuda_found ON)
  endif()
endif()
nw_resolve(NW_CUDA _nw_cuda_found "no CUDA compiler (nvcc) was found" CUDA)
if(NW_HAVE_CUDA)
  # sm_90 machine code for H100/H200, and compute_75 PTX that the driver compiles for any
  # other GPU of CUDA 13's range (the PTX fallback).
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90-real 75-virtual)
  endif()
  # C++20 (designated initialisers fill the method tables by name, cuda/*_cuda.cu), asked of
  # nvcc directly: CMake before 3.26 knows no CUDA20 dialect for nvcc (CMAKE_CUDA_STANDARD 20
  # fails there, e.g. on Debian 12's 3.25).
  add_compile_options($<$<COMPILE_LANGUAGE:CUDA>:-std=c++20>)
  # One CUDA runtime in every executable: the shared one that CUDA::cudart names.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
endif()
