# The direction of dependencies (DESIGN.md, "Layout"; cmake/NwCheckLayers.cmake): no source
# includes a header of a layer above it or beside it (ui/ and scene/ nothing of cuda/ or app/,
# render/ only cuda/interop/), and the libraries' include folders agree: render passes on
# only render/, cuda/interop/ and core/; scene/ and ui/ reach neither cuda/ nor app/.
# For each library: the include folders it compiles with (INCLUDE_DIRECTORIES, with those
# its links pass on) and, for render, those it passes on to its users.
set(_nw_layer_targets "")
set(_nw_layer_text "")
foreach(t nw_render nw_scene nw_session nw_ui)
  if(TARGET ${t})
    list(APPEND _nw_layer_targets ${t})
    string(APPEND _nw_layer_text
           "set(NW_INCLUDES_${t} \"$<TARGET_PROPERTY:${t},INCLUDE_DIRECTORIES>\")\n")
  endif()
endforeach()
if(TARGET nw_render)
  list(APPEND _nw_layer_targets nw_render.exports)
  string(APPEND _nw_layer_text
         "set(NW_INCLUDES_nw_render.exports \"$<TARGET_PROPERTY:nw_render,INTERFACE_INCLUDE_DIRECTORIES>\")\n")
endif()
file(GENERATE OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/layering_targets.cmake
     CONTENT "set(NW_LAYER_TARGETS \"${_nw_layer_targets}\")\n${_nw_layer_text}")
add_test(NAME layering
         COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${PROJECT_SOURCE_DIR} -DBINARY_DIR=${PROJECT_BINARY_DIR}
                 -DTARGETS_FILE=${CMAKE_CURRENT_BINARY_DIR}/layering_targets.cmake
                 -P ${PROJECT_SOURCE_DIR}/cmake/NwCheckLayers.cmake)
set_tests_properties(layering PROPERTIES LABELS "unit;layering")
