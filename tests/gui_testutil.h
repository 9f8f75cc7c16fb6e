/* gui_testutil.h — what the tests of the application under X share: starting neurowarp as a
 * user would (its options and a script) with the environment the tests need, reading its
 * PNG screenshots pixel by pixel, and the geometry of the synthetic 50^3 volumes they open.
 * Main thread of the test process; the application runs as a child process. */
#ifndef NW_GUI_TESTUTIL_H
#define NW_GUI_TESTUTIL_H

#include <gdk-pixbuf/gdk-pixbuf.h>

G_BEGIN_DECLS

/* g_test_init, then FALSE (after saying "SKIP: no DISPLAY") when there is no X display to
 * run the application on: main returns NW_TEST_SKIP. */
gboolean nw_gui_test_init(int *argc, char ***argv);

/* Pixels per view in the tests' screenshots. */
enum { NW_GUI_CELL = 200 };
#define NW_GUI_SHOT "200" /* the same, as nw_gui_run_script passes it */
/* Synthetic volumes: 50^3 voxels of 2 mm, world = 2 * index, so the box is [-1, 99] mm and
 * a 200-pixel view shows 0.52 mm per pixel around the centre (49, 49, 49). */
#define NW_GUI_MMPP (100.0 / NW_GUI_CELL * 1.04)
#define NW_GUI_CENTRE 49.0

typedef struct {
  GdkPixbuf *pb;
  int w, h, stride, nch;
  const guint8 *px;
} NwImage;

void nw_image_load(NwImage *im, const char *path);
void nw_image_clear(NwImage *im);
const guint8 *nw_image_at(const NwImage *im, int x, int y);
/* Fails the test (naming the pixel and both colours) unless every channel is within tol. */
void nw_image_assert_rgb(const NwImage *im, int x, int y, int r, int g, int b, int tol);

/* Run neurowarp (LIBGL_ALWAYS_SOFTWARE, X11, scale 1, XDG folders in the test's folder) with
 * args; asserts the exit status; returns stderr and, when out_text, stdout. */
char *nw_gui_run_out(const char *const *args, int want_status, char **out_text);
/* The same with more environment: env_extra holds NAME, VALUE pairs, NULL-terminated. */
char *nw_gui_run_env(const char *const *args, const char *const *env_extra, int want_status,
                     char **out_text);
char *nw_gui_run(const char *const *args, int want_status);
/* Run neurowarp-cli with args (NULL-terminated); asserts the exit status; returns stdout
 * (stderr in *err_text when given). */
char *nw_gui_run_cli(const char *const *args, int want_status, char **err_text);
/* The environment nw_gui_run gives the application (g_strfreev). */
char **nw_gui_environ(void);

/* Write text as the script name in the test's folder and run it: neurowarp --no-demo
 * --shot-size SHOT --script; asserts the exit status; returns stdout (stderr in *err_text
 * when given). */
char *nw_gui_run_script(const char *name, const char *text, int want_status, char **err_text);

/* A 50^3 volume of 2 mm voxels, every voxel value, in the test's folder. */
void nw_gui_write_constant(const char *name, float value);
/* text to the test's folder as name; returns the path. */
char *nw_gui_write_script(const char *name, const char *text);

/* Pixel of world point (x, y) in the axial quadrant (top left) of a figure. */
void nw_gui_axial_pixel(double x, double y, double *px, double *py);
/* The yellow of the crosshair. */
gboolean nw_gui_is_crosshair(const guint8 *p);
/* Pixels of the axial quadrant (top left, NW_GUI_CELL square) that differ by more than tol in
 * some channel; pixels for which skip (may be NULL) says TRUE in either image are left out. */
int nw_gui_axial_changed(const NwImage *a, const NwImage *b, int tol,
                         gboolean (*skip)(const NwImage *im, int x, int y));

G_END_DECLS

#endif
