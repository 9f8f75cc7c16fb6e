# scene/ (layers, the scene, the loader, runs, sessions): GLib and render/, no GTK. These
# tests run without a display (DISPLAY is unset for them) and without a GPU (label nodisplay).
# session files and presets (nw_session: GLib only, built without render/ too)
nw_add_test(test_scene_session SOURCES test_scene_session.c LIBS nw_session LABELS scene nodisplay)
set_property(TEST test_scene_session PROPERTY ENVIRONMENT_MODIFICATION
             DISPLAY=unset: WAYLAND_DISPLAY=unset:)
if(NW_HAVE_SCENE)
  # layers, the scene and its signals, the loader
  nw_add_test(test_scene_layer SOURCES test_scene_layer.c LIBS nw_scene LABELS scene nodisplay)
  # a CPU job through NwRun, frames pulled per simulated display frame, the result
  nw_add_test(test_scene_run SOURCES test_scene_run.c LIBS nw_scene LABELS scene nodisplay live)
  # runs on pairs on different grids: "affine-demons" to the end (transform, Dice, NCC, the
  # composed field, saved PREFIX_affine.txt) and plain demons with the worker's regrid
  nw_add_test(test_scene_run_grids SOURCES test_scene_run_grids.c LIBS nw_scene
              LABELS scene nodisplay)
  # a run's timeline: frames kept, the byte budget, lookup by iteration
  nw_add_test(test_scene_timeline SOURCES test_scene_timeline.c LIBS nw_scene LABELS scene nodisplay)
  set_property(TEST test_scene_layer test_scene_run test_scene_run_grids test_scene_timeline PROPERTY ENVIRONMENT_MODIFICATION
               DISPLAY=unset: WAYLAND_DISPLAY=unset:)
endif()
