# GUI area (issue 4): render/ pixel tests in an offscreen EGL context, and the application
# driven under Xvfb.
if(NW_HAVE_RENDER)
  nw_add_test(test_render SOURCES test_render.c test_render_egl.c
              LIBS nw_render nw_egl LABELS gui)
  nw_add_test(test_render_field SOURCES test_render_field.c test_render_egl.c
              LIBS nw_render nw_egl LABELS gui)
  nw_add_test(test_render_live SOURCES test_render_live.c test_render_egl.c
              LIBS nw_render nw_egl LABELS gui live)
  set_property(TEST test_render test_render_field test_render_live APPEND PROPERTY ENVIRONMENT
               "LIBGL_ALWAYS_SOFTWARE=1")
  if(NW_SANITIZE)
    # GTK/Mesa one-time allocations are not ours.
    set_property(TEST test_render test_render_field test_render_live APPEND PROPERTY ENVIRONMENT
                 "ASAN_OPTIONS=detect_leaks=0")
  endif()
endif()

# The application under X: needs DISPLAY (scripts/test.sh runs ctest inside xvfb-run). One
# ctest entry per test case, so that they run in parallel and each stays short.
# nw_add_gui_test(EXE SOURCE CASE...): the program EXE from SOURCE and one ctest entry
# EXE_CASE per case (its g_test path /gui/CASE).
function(nw_add_gui_test exe source)
  add_executable(${exe} ${source})
  target_link_libraries(${exe} PRIVATE nw_gui_testutil)
  add_dependencies(${exe} neurowarp neurowarp-cli)
  foreach(case ${ARGN})
    add_test(NAME ${exe}_${case} COMMAND ${exe} -p /gui/${case})
    set_tests_properties(${exe}_${case} PROPERTIES SKIP_RETURN_CODE 77 LABELS gui TIMEOUT 300
      ENVIRONMENT "LIBGL_ALWAYS_SOFTWARE=1;G_DEBUG=fatal-criticals")
    if(NW_SANITIZE)
      set_property(TEST ${exe}_${case} APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
    endif()
  endforeach()
endfunction()

if(NW_HAVE_GUI AND TARGET neurowarp)
  add_library(nw_gui_testutil STATIC gui_testutil.c)
  target_include_directories(nw_gui_testutil PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(nw_gui_testutil PUBLIC nw_testutil nw_demo PkgConfig::GTK3)
  target_compile_definitions(nw_gui_testutil PRIVATE NW_GUI_BINARY="$<TARGET_FILE:neurowarp>"
                             NW_CLI_BINARY="$<TARGET_FILE:neurowarp-cli>")
  nw_add_gui_test(test_gui test_gui.c demo-figure compare-and-actions open-field corrupt-file
                  orientation bad-script run-demons run-two-jobs)
endif()

# Issue 15: the desktop application as ITK-SNAP and Slicer users expect it.
if(NW_HAVE_GUI AND TARGET neurowarp)
  nw_add_gui_test(test_gui_frictions test_gui_frictions.c start-page menus
                  preset-message version-and-usage layer-order
                  save-layer drop)
  nw_add_gui_test(test_gui_help test_gui_help.c help-keys about)
  nw_add_gui_test(test_gui_bars test_gui_bars.c difference-bar log-jacobian-bar scale-bar)
  nw_add_gui_test(test_gui_results test_gui_results.c open-summary jacobian-overlay
                  run-summary)
  nw_add_gui_test(test_gui_orientation test_gui_orientation.c radiological orientation-marker)
  nw_add_gui_test(test_gui_labels test_gui_labels.c mricron-table freesurfer-itksnap aal)
  nw_add_gui_test(test_gui_timeline test_gui_timeline.c scrub-and-export)
  target_link_libraries(test_gui_timeline PRIVATE GIF::GIF)
endif()

# Issue 11: a pair on different grids in the application, "affine-demons" in the Run page.
if(NW_HAVE_GUI AND TARGET neurowarp)
  nw_add_gui_test(test_gui_grids test_gui_grids.c run-grids)
endif()

# 2D images (single slices) in the application: the axial view alone, no surface in results.
if(NW_HAVE_GUI AND TARGET neurowarp)
  nw_add_gui_test(test_gui_2d test_gui_2d.c pair-2d layout-2d)
endif()

# Issue 13: nlm-surface in the window, the denoised level set's mesh live in the 3D view.
if(NW_HAVE_GUI AND TARGET neurowarp)
  nw_add_gui_test(test_gui_surface test_gui_surface.c denoise labels grey-refused)
  target_link_libraries(test_gui_surface PRIVATE nw_mesh)
endif()
