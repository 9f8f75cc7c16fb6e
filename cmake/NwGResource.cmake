# nw_add_gresource(OUT_VAR NAME XML SOURCE_DIR DEPENDS files... [HEADER])
# Bundles the files listed in XML (paths relative to SOURCE_DIR) into
# ${CMAKE_CURRENT_BINARY_DIR}/NAME_resources.c (C symbols nw_NAME_..., whose constructor registers
# the bundle) and, with HEADER, NAME_resources.h; OUT_VAR gets the generated source to add to a
# target.
# The bundle is rebuilt when XML or any of DEPENDS changes.
function(nw_add_gresource out_var name xml source_dir)
  find_program(NW_GLIB_COMPILE_RESOURCES glib-compile-resources REQUIRED)
  cmake_parse_arguments(R "HEADER" "" "DEPENDS" ${ARGN})
  set(c_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_resources.c)
  set(outputs ${c_file})
  set(commands COMMAND ${NW_GLIB_COMPILE_RESOURCES} --target=${c_file} --sourcedir=${source_dir}
               --generate-source --c-name nw_${name} ${xml})
  if(R_HEADER)
    set(h_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_resources.h)
    list(APPEND outputs ${h_file})
    list(APPEND commands COMMAND ${NW_GLIB_COMPILE_RESOURCES} --target=${h_file}
         --sourcedir=${source_dir} --generate-header --c-name nw_${name} ${xml})
  endif()
  add_custom_command(OUTPUT ${outputs} ${commands} DEPENDS ${xml} ${R_DEPENDS}
                     COMMENT "Bundling ${name}")
  set(${out_var} ${c_file} PARENT_SCOPE)
endfunction()
