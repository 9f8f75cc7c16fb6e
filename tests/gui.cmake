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
if(NW_HAVE_GUI AND TARGET neurowarp)
  add_executable(test_gui test_gui.c)
  target_link_libraries(test_gui PRIVATE nw_testutil nw_demo PkgConfig::GTK3)
  target_compile_definitions(test_gui PRIVATE NW_GUI_BINARY="$<TARGET_FILE:neurowarp>")
  add_dependencies(test_gui neurowarp)
  foreach(case demo-figure compare-and-actions open-field corrupt-file orientation bad-script
               run-demons run-two-jobs)
    add_test(NAME test_gui_${case} COMMAND test_gui -p /gui/${case})
    set_tests_properties(test_gui_${case} PROPERTIES SKIP_RETURN_CODE 77 LABELS gui TIMEOUT 300
      ENVIRONMENT "LIBGL_ALWAYS_SOFTWARE=1;G_DEBUG=fatal-criticals")
    if(NW_SANITIZE)
      set_property(TEST test_gui_${case} APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
    endif()
  endforeach()
endif()
