# WIDGETS area (issue 5): the parameter panel, the live plot and session files/presets.
# Needs a display (scripts/test.sh runs ctest under xvfb-run); exits 77 without one.
if(NW_HAVE_GUI)
  nw_add_test(test_ui_widgets SOURCES test_ui_widgets.c LIBS nw_ui LABELS gui)
  set_property(TEST test_ui_widgets APPEND PROPERTY ENVIRONMENT "LIBGL_ALWAYS_SOFTWARE=1")
  if(NW_SANITIZE)
    # GTK/fontconfig one-time allocations are not ours.
    set_property(TEST test_ui_widgets APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
  endif()
endif()
