# scene/ (layers, the scene, the loader, runs): GLib and render/, no GTK. These tests run
# without a display (DISPLAY is unset for them) and without a GPU (label nodisplay).
if(NW_HAVE_SCENE)
  nw_add_test(test_scene_layer SOURCES test_scene_layer.c LIBS nw_scene LABELS scene nodisplay)
  set_property(TEST test_scene_layer PROPERTY ENVIRONMENT_MODIFICATION
               DISPLAY=unset: WAYLAND_DISPLAY=unset:)
endif()
