# NwCheckLayers.cmake — checks that dependencies point one way (DESIGN.md, "Layout"):
#   app -> ui -> scene -> render -> core,  cuda -> core,  render -> cuda only through
#   cuda/interop (nw_live.h, nw_cuda_gl.h).
# Run as a test (tests/layering.cmake): cmake -DSOURCE_DIR=<repo> [-DBINARY_DIR=<build>]
# [-DTARGETS_FILE=<file>] -P NwCheckLayers.cmake. Fails (FATAL_ERROR, listing every violation) when
#   1. a source file includes a project header from a folder its own folder may not use (a
#      quoted include resolves to the includer's folder first, else to the project folders
#      that hold a header of that name), or a system header its layer may not use (GTK/GDK
#      below ui/, the CUDA runtime outside cuda/, GL in core/);
#   2. (with TARGETS_FILE, written at configure time by file(GENERATE)) a library's include
#      folders, its own and those its links pass on, reach a folder its layer may not see:
#      render must pass on only render/, cuda/interop/ and core/; scene/ and ui/ must not
#      see cuda/ (interop aside), core/cpu/ or app/.
cmake_minimum_required(VERSION 3.24)
if(NOT SOURCE_DIR)
  message(FATAL_ERROR "NwCheckLayers: -DSOURCE_DIR=<repository root> is required")
endif()

# The project folders that hold sources, and the folders each may include from.
set(_folders core core/cpu cuda cuda/interop render scene ui app)
set(_allow_core core core/cpu)
set(_allow_core/cpu core core/cpu)
set(_allow_cuda cuda cuda/interop core core/cpu)
set(_allow_cuda/interop cuda/interop core)
set(_allow_render render cuda/interop core)
set(_allow_scene scene render core)
set(_allow_ui ui scene render core)
set(_allow_app app ui scene render core core/cpu cuda cuda/interop)
# System headers a folder may not include (regular expressions on the <...> name).
set(_deny_sys_core "^(gtk|gdk|GL|EGL|cuda|cub)[/_.]")
set(_deny_sys_core/cpu "${_deny_sys_core}")
set(_deny_sys_cuda "^(gtk|gdk)/")
set(_deny_sys_cuda/interop "^(gtk|gdk|cuda|cub)[/_.]")
set(_deny_sys_render "^(gtk|gdk|cuda|cub)[/_.]")
set(_deny_sys_scene "^(gtk|gdk|cuda|cub)[/_.]")
set(_deny_sys_ui "^(cuda|cub)[/_.]")
set(_deny_sys_app "^(cub)[/_.]")

set(_violations "")

foreach(folder IN LISTS _folders)
  file(GLOB _files LIST_DIRECTORIES false "${SOURCE_DIR}/${folder}/*.c" "${SOURCE_DIR}/${folder}/*.h"
       "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh")
  foreach(file IN LISTS _files)
    file(STRINGS "${file}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    file(RELATIVE_PATH _rel "${SOURCE_DIR}" "${file}")
    foreach(line IN LISTS _lines)
      if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
        set(_name "${CMAKE_MATCH_1}")
        if(EXISTS "${SOURCE_DIR}/${folder}/${_name}")
          continue() # the includer's own folder
        endif()
        set(_found "")
        foreach(other IN LISTS _folders)
          if(EXISTS "${SOURCE_DIR}/${other}/${_name}")
            list(APPEND _found "${other}")
          endif()
        endforeach()
        if(NOT _found)
          continue() # a generated or a third-party header
        endif()
        set(_ok FALSE)
        foreach(other IN LISTS _found)
          if(other IN_LIST _allow_${folder})
            set(_ok TRUE)
          endif()
        endforeach()
        if(NOT _ok)
          string(REPLACE ";" ", " _found_text "${_found}")
          string(REPLACE ";" ", " _allow_text "${_allow_${folder}}")
          list(APPEND _violations
               "${_rel} includes \"${_name}\" from ${_found_text}/ (${folder}/ may include from ${_allow_text})")
        endif()
      elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
        set(_name "${CMAKE_MATCH_1}")
        if(_name MATCHES "${_deny_sys_${folder}}")
          list(APPEND _violations "${_rel} includes <${_name}>, which ${folder}/ may not use")
        endif()
      endif()
    endforeach()
  endforeach()
endforeach()

# Include folders of the libraries (TARGETS_FILE sets NW_LAYER_TARGETS and, per target,
# NW_INCLUDES_<target>): the project folders among them must be in allowed.
function(_nw_check_dirs target allowed out)
  set(found "")
  foreach(dir IN LISTS NW_INCLUDES_${target})
    file(TO_CMAKE_PATH "${dir}" dir)
    string(FIND "${dir}/" "${SOURCE_DIR}/" at)
    set(in_build -1)
    if(BINARY_DIR)
      string(FIND "${dir}/" "${BINARY_DIR}/" in_build)
    endif()
    if(NOT at EQUAL 0 OR in_build EQUAL 0)
      continue() # system and third-party folders, the build tree (generated headers)
    endif()
    file(RELATIVE_PATH rel "${SOURCE_DIR}" "${dir}")
    if(NOT rel IN_LIST allowed)
      string(REPLACE ";" ", " allow_text "${allowed}")
      list(APPEND found "${target} reaches the include folder ${rel}/ (allowed: ${allow_text})")
    endif()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

set(_render_dirs render cuda/interop core)
set(_scene_dirs scene render cuda/interop core)
set(_ui_dirs ui scene render cuda/interop core)
if(TARGETS_FILE)
  include("${TARGETS_FILE}")
  foreach(target IN LISTS NW_LAYER_TARGETS)
    if(target MATCHES "^nw_render")
      _nw_check_dirs(${target} "${_render_dirs}" _found)
    elseif(target MATCHES "^nw_(scene|session)")
      _nw_check_dirs(${target} "${_scene_dirs}" _found)
    elseif(target MATCHES "^nw_ui")
      _nw_check_dirs(${target} "${_ui_dirs}" _found)
    else()
      message(FATAL_ERROR "NwCheckLayers: no rule for target ${target}")
    endif()
    list(APPEND _violations ${_found})
  endforeach()
endif()

list(FILTER _violations EXCLUDE REGEX "^$")
list(REMOVE_DUPLICATES _violations)
if(_violations)
  list(LENGTH _violations _n)
  string(REPLACE ";" "\n  " _text "${_violations}")
  message(FATAL_ERROR "layering: ${_n} dependencies point the wrong way:\n  ${_text}")
endif()
message(STATUS "layering: app -> ui -> scene -> render -> core, cuda -> core, "
               "render -> cuda/interop only: no violations")
