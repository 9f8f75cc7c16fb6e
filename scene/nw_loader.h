/* nw_loader.h — files and the demo case turned into layers, on a worker thread (GTask) so
 * the window never waits; the callback runs on the main thread.
 *
 * What a file becomes: a run's summary (PREFIX_summary.json of neurowarp-cli) the run's
 * files: its fixed image and warped result shown and compared, the moving image and the
 * other outputs hidden; meshes (by name: .gii, .vtk, .ply, .obj, FreeSurfer lh.pial...) a
 * surface layer; NIfTI displacement fields (5D with dim[5] = 3, or 4D with 3 volumes and a
 * vector/displacement intent) a field layer drawn as a warped grid plus a hidden
 * log-Jacobian layer; label-like images (whole numbers, a name with "label", "aal", "seg",
 * "aseg", "parc" or "atlas") a label layer; Jacobian maps by name ("jac"; "logjac",
 * "log_jac", "log-jac" for log det J) a diverging overlay (nw_layer_show_as_jacobian);
 * anything else nw_volume_read_any reads an image layer. Errors name the file and the problem. */
#ifndef NW_LOADER_H
#define NW_LOADER_H

#include <gio/gio.h>

G_BEGIN_DECLS

/* Synchronous (any thread): a GPtrArray of NwLayer* (freeing the array unrefs them). */
GPtrArray *nw_load_file(const char *path, GError **error);
/* The demo case at spacing_mm (nw_demo_make): fixed and moving images, the moving image
 * warped by the true field (hidden), the fixed and moving labels (hidden), the true field and its
 * log-Jacobian (hidden), and a brain surface by marching cubes of the smoothed fixed
 * image. */
GPtrArray *nw_load_demo(double spacing_mm, GError **error);

void nw_load_file_async(const char *path, GCancellable *cancellable, GAsyncReadyCallback callback,
                        gpointer user_data);
void nw_load_demo_async(double spacing_mm, GCancellable *cancellable, GAsyncReadyCallback callback,
                        gpointer user_data);
/* For either of the above. */
GPtrArray *nw_load_finish(GAsyncResult *result, GError **error);

G_END_DECLS

#endif
