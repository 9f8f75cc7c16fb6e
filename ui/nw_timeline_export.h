/* nw_timeline_export.h — a run's timeline as a numbered PNG image sequence of the views, or
 * as an animated GIF of them:
 * every kept frame of run 1 (nw_timeline.h) shown in turn and pictured as the screenshot
 * command pictures the window's views (the 2x2 figure, or the maximised view), written as
 * frame-00000.png, frame-00001.png, ... with iterations.txt (one line "FRAME ITERATION" per
 * frame) into a new folder. The folder is filled under a temporary name and renamed when
 * whole, each file inside written atomically: a failed export leaves nothing behind. Main
 * thread (it draws the views). */
#ifndef NW_TIMELINE_EXPORT_H
#define NW_TIMELINE_EXPORT_H

#include "nw_window.h"

G_BEGIN_DECLS

/* dir must not exist (NW_ERROR_EXISTS otherwise). cell: pixels per view. The views show
 * what they showed before when it returns. n_frames: the frames written (may be NULL). */
gboolean nw_timeline_export_png(NwWindow *w, const char *dir, int cell, guint *n_frames,
                                GError **error);
/* The same frames as one animated GIF that loops (nw_anim_gif.h), NW_TIMELINE_GIF_DELAY_CS
 * hundredths of a second each, replacing path when it exists (the caller asks first). */
#define NW_TIMELINE_GIF_DELAY_CS 8
gboolean nw_timeline_export_gif(NwWindow *w, const char *path, int cell, guint *n_frames,
                                GError **error);

G_END_DECLS

#endif
