# Third-party libraries. Everything here is a Debian/Ubuntu package (scripts/install-deps.sh).
find_package(PkgConfig REQUIRED)
pkg_check_modules(GLIB REQUIRED IMPORTED_TARGET glib-2.0>=2.72 gthread-2.0 gio-2.0)
find_package(ZLIB REQUIRED)
find_package(PNG REQUIRED)
find_package(TIFF REQUIRED)
pkg_check_modules(GSL REQUIRED IMPORTED_TARGET gsl)
# JSON output of the CLI and the benchmarks (app/json_out.c).
pkg_check_modules(JSONGLIB REQUIRED IMPORTED_TARGET json-glib-1.0)
find_package(OpenMP COMPONENTS C)
find_library(NW_LIBM m)

# nifti_clib: Debian's NIFTIConfig.cmake points at library paths that do not exist, so find
# the headers and libraries directly. nifti2_io reads and writes NIfTI-1 and NIfTI-2.
find_path(NIFTI_INCLUDE_DIR nifti2_io.h PATH_SUFFIXES nifti REQUIRED)
find_library(NIFTI2_LIBRARY nifti2 REQUIRED)
find_library(ZNZ_LIBRARY znz REQUIRED)
add_library(nw_nifti INTERFACE)
target_include_directories(nw_nifti INTERFACE ${NIFTI_INCLUDE_DIR})
target_link_libraries(nw_nifti INTERFACE ${NIFTI2_LIBRARY} ${ZNZ_LIBRARY} ZLIB::ZLIB ${NW_LIBM})
target_compile_definitions(nw_nifti INTERFACE HAVE_ZLIB)

# giftiio (optional): GIFTI meshes. Its header includes nifti1_io.h, found beside nifti2_io.h.
# Without it, reading or writing GIFTI reports "unsupported: built without giftiio".
find_path(GIFTI_INCLUDE_DIR gifti_io.h PATH_SUFFIXES gifti)
find_library(GIFTI_LIBRARY giftiio)
if(GIFTI_INCLUDE_DIR AND GIFTI_LIBRARY)
  add_library(nw_gifti INTERFACE)
  target_include_directories(nw_gifti INTERFACE ${GIFTI_INCLUDE_DIR} ${NIFTI_INCLUDE_DIR})
  target_link_libraries(nw_gifti INTERFACE ${GIFTI_LIBRARY})
  target_compile_definitions(nw_gifti INTERFACE NW_HAVE_GIFTI=1)
endif()

# GUI: GTK 3, GLEW, OpenGL (and EGL for offscreen render tests), giftiio for GIFTI meshes.
# render/ (GL only, drawn offscreen through EGL in tests and benchmarks) needs GLEW, EGL and
# OpenGL, not GTK: NW_HAVE_RENDER is on whenever those are found and NW_GUI is not OFF, so
# a GPU host without GTK still builds and tests the interop path. scene/ (layers, runs,
# drawing a scene: GLib, no GTK) needs render/ and cairo (the views' letter sprites):
# NW_HAVE_SCENE; the GTK application needs scene/ too.
set(_nw_gui_found OFF)
set(NW_HAVE_RENDER OFF)
set(NW_HAVE_SCENE OFF)
if(NOT NW_GUI STREQUAL "OFF")
  pkg_check_modules(GTK3 IMPORTED_TARGET gtk+-3.0)
  pkg_check_modules(GLEWPC IMPORTED_TARGET glew)
  pkg_check_modules(EGLPC IMPORTED_TARGET egl)
  pkg_check_modules(CAIRO IMPORTED_TARGET cairo)
  find_package(OpenGL COMPONENTS OpenGL)
  if(GLEWPC_FOUND AND EGLPC_FOUND AND OpenGL_OpenGL_FOUND)
    set(NW_HAVE_RENDER ON)
    if(CAIRO_FOUND)
      set(NW_HAVE_SCENE ON)
    endif()
    # giflib: the run's animation export (ui/nw_anim_gif.c)
    find_package(GIF 5)
    if(GTK3_FOUND AND NW_HAVE_SCENE AND GIF_FOUND)
      set(_nw_gui_found ON)
    endif()
  endif()
endif()
nw_resolve(NW_GUI _nw_gui_found "GTK 3, GLEW, EGL, OpenGL, cairo or giflib development files are missing" GUI)

set(_nw_mpi_found OFF)
if(NOT NW_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C QUIET)
  if(MPI_C_FOUND)
    set(_nw_mpi_found ON)
  endif()
endif()
nw_resolve(NW_MPI _nw_mpi_found "no MPI C library was found" MPI)
