/* nw_script.h — scripted use of the window, for tests, figures and batch screenshots.
 * A script is a list of lines run in order once the views are up; before each line the
 * runner waits until every load has finished. Commands:
 *   open PATH            load a file (as File > Open)
 *   demo                 load the demo case
 *   compare MODE         none | blend | checker | difference | flicker | curtain
 *   blend W | tile MM | curtain F      comparison settings
 *   crosshair X Y Z      world RAS mm
 *   window W L [LAYER]   window width and level (default: every image layer)
 *   preset NAME [LAYER]  auto | full | ct-brain | ct-soft | ct-bone
 *   view NAME            grid | axial | coronal | sagittal | 3d (maximise); the layout is
 *                        the script's from then on (a 2D scene's automatic one included)
 *   layout               print "layout: NAME", the layout shown (grid or the maximised view)
 *   show LAYER | hide LAYER | active LAYER
 *   raise LAYER | lower LAYER          one place up / down the drawing order
 *   layers               print "layers: TOP | ... | BOTTOM", the layer list's rows
 *   mesh LAYER           print "mesh: LAYER: V vertices, T triangles, x X0..X1 y Y0..Y1 z
 *                        Z0..Z1 mm" of a surface layer (its bounds in world RAS mm)
 *   key ACCEL            a key press on the window ("F1", "<Primary>question"), handled by GTK
 *   action app.NAME|win.NAME [STRING]  activate an action, as a menu item does
 *   windows              print "window: TYPE "TITLE"" per window on screen
 *   wait-window TYPE     wait until a window of that GTK type is on screen
 *   window-text TYPE     print what a window of that GTK type shows: "text: ..." per shown
 *                        label and text view, "icon: NAME (found|missing)" per named icon
 *   click TYPE LABEL     press the button labelled LABEL in the window of that type
 *   pointer VIEW FX FY   the mouse moved over a view to the fractions FX, FY of its size
 *   drop PATH [| PATH...]              files (or URIs) dropped on the window: their URIs go
 *                        through an X selection as text/uri-list, as a drag's do
 *   label-table PATH LAYER             names and colours of a label layer's labels (MRIcron
 *                        .txt/.lut, FreeSurferColorLUT.txt, ITK-SNAP label description)
 *   overlay VIEW         print the orientation letters, colour bars and scale bar of a slice
 *                        view as screenshot-view draws it: "overlay: letters L R T B", then
 *                        "overlay: bar "TITLE" MAP LO HI strip X Y W H" per bar, "overlay:
 *                        scale MM mm bar X Y W H"
 *   save-layer [--overwrite] PATH LAYER   the layer's data to PATH (nw_layer_save.h); an
 *                        existing file is an error unless --overwrite
 *   field STYLE LAYER    grid | arrows | magnitude | log-jacobian
 *   colormap MAP LAYER | opacity F LAYER | step K LAYER (grid/arrow spacing, voxels)
 *   screenshot PATH      the current layout (see nw_window_save_screenshot)
 *   screenshot-view VIEW PATH          one view
 *   screenshot-window PATH [TYPE]      the whole window as on screen (menus, layer list), or
 *                        the window of that GTK type (GtkAboutDialog, GtkShortcutsWindow)
 *   status               print the status bar's text on stdout ("status: ..."), then the
 *                        comparison bar's ("compare: MODE: A vs B")
 *   zoom VIEW FACTOR     zoom a slice view about its centre (1 = fit)
 *   camera YAW PITCH     the 3D view's camera, degrees (0 0: from posterior, R on the right)
 *   radiological on|off  the patient's right on the screen's left in axial and coronal views
 *   flicker-period MS    time each image stays up in flicker mode (0: switch only by
 *                        flicker-step, for a known phase)
 *   flicker-step         switch the flicker between A and B once
 *   sleep MS             let the window run for a while (e.g. before screenshot-window)
 *   sidebar [layers|run] show that sidebar page; alone: print "sidebar: page P · switch S"
 *                        (the page shown and the switcher's pressed button)
 *   menu primary|compare|view          print the header bar menu as drawn: "menu: LABEL\tKEY"
 *                        per item, submenu items indented by two spaces
 *   quit
 * Registration runs (the Run page, nw_run_panel.h; "run 1" is the first job):
 *   method NAME          the method (as the picker)
 *   device auto|cpu|cuda [2]           the device of job 1 (or of the second job)
 *   param NAME VALUE [2] a parameter of job 1 (or of the second job; "second-job on" copies
 *                        job 1's values to it first); while a job runs, a live value goes to it
 *                        at the next iteration, and a refused change (a non-live parameter)
 *                        is reported in the error bar and on stderr and the script goes on
 *   preset NAME|PATH     a parameter preset (a name that is not a window preset above)
 *   second-job on|off    a second job side by side
 *   surface-label N|auto methods whose input is a level set (nlm-surface): the label of a
 *                        label volume that is the surface, or auto (the Run page's Label)
 *   run | run-paused     start the job(s) (run also resumes paused ones); run-paused waits
 *                        for step / run before the first iteration
 *   pause | step | stop
 *   wait-iteration N     wait until run 1 (and the second job, when there is one) has
 *                        completed N iterations and the views show them
 *   wait-layer NAME      wait until the scene has a layer of that name (e.g. "surface · 1",
 *                        which a run makes on a worker from its first frame)
 *   wait-state STATE     idle | running | paused | finished | cancelled | failed (run 1,
 *                        and the second job too when there is one)
 *   save-results [--overwrite] PREFIX
 *                        PREFIX_warped.nii.gz, PREFIX_forward.nii.gz, ..., PREFIX_surface.gii
 *                        (not for 2D images),
 *                        all or nothing; files of an earlier save are an error unless
 *                        --overwrite (which replaces them and removes the stale ones)
 *   timeline K | live    the views show the kept frame of iteration K of the run(s) (the
 *                        newest kept at or before K), or follow the jobs again
 *   export-frames DIR    the kept frames of run 1 as DIR/frame-00000.png ... (the views as
 *                        screenshot pictures them) and DIR/iterations.txt, into the new
 *                        folder DIR; prints "export-frames: N frames"
 *   export-animation FILE  the same frames as a looping animated GIF FILE (must not exist);
 *                        prints "export-animation: N frames"
 *   session-save PATH | session-open PATH
 *   screenshot-plot PATH the live plot, 640 x 480 PNG
 *   run-summary          print what the Run page says of the ended run, "run-summary: LINE"
 *                        per line ("run-summary: none" before a run has ended)
 *   readouts             print "readouts: iteration I · ms M · path P · shown S" on stdout,
 *                        then " | job 2 iteration ..." the same for a second job
 * Empty lines and lines starting with # are skipped. A bad line or a failed screenshot
 * stops the script with exit status 2; waiting more than 180 s for loads or a wait-* line,
 * with 3.
 * Main thread only. */
#ifndef NW_SCRIPT_H
#define NW_SCRIPT_H

#include "nw_window.h"

G_BEGIN_DECLS

typedef struct NwScript NwScript;

/* lines: one command each (copied). cell: pixels per view in screenshots. */
NwScript *nw_script_new(GtkApplication *app, NwWindow *win, char **lines, int cell);
/* Start running on the main loop; frees itself when done. The exit status goes to *status
 * (which must outlive the script). */
void nw_script_start(NwScript *s, int *status);

/* Run one command now (no waiting); FALSE with a message when it is wrong or fails. Exposed
 * for tests. */
gboolean nw_script_run_line(NwWindow *win, const char *line, int cell, GError **error);

G_END_DECLS

#endif
