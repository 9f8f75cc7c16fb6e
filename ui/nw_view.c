/* nw_view.c — the view widget: GL life cycle, view state (zoom, pan, 3D camera) and mouse
 * handling (see nw_view.h). Drawing itself is in nw_view_render.c. Main thread only. */
#include "nw_view.h"

#include <math.h>

#include "gl_live.h"
#include "nw_error.h"
#include "nw_gl.h"
#include "nw_view_render.h"

/* Longest a display frame waits for a live job's frame that usually arrives this fast (a
 * GPU job): then the frame drawn is at most an iteration old. Slower jobs' frames ask for
 * a redraw when they arrive instead. Half a 60 Hz frame: the frame still draws in time. */
#define LIVE_WAIT_US 8000

struct _NwView {
  GtkGLArea parent;
  NwViewKind kind;
  NwScene *scene; /* a reference */
  gulong changed_id;
  NwViewGpu *gpu;
  GError *gl_error;
  double zoom;                      /* 1 = the scene box fits */
  double pan_mm[2];                 /* view centre minus box centre along screen right/up (2D) */
  double yaw_deg, pitch_deg, dolly; /* 3D: dolly multiplies the fitted distance */
  double target_offset[3];          /* 3D pan, RAS mm */
  int drag_button;
  gboolean drag_pan;
  double drag_x, drag_y;
};

G_DEFINE_TYPE(NwView, nw_view, GTK_TYPE_GL_AREA)

enum { SIG_POINTER_MOVED, SIG_POINTER_LEFT, SIG_ACTIVATED, N_SIGNALS };
static guint signals[N_SIGNALS];

static const char *const kind_names[4] = {"axial", "coronal", "sagittal", "3d"};

const char *nw_view_kind_name(NwViewKind k)
{
  return k <= NW_VIEW_3D ? kind_names[k] : "?";
}

gboolean nw_view_kind_from_name(const char *name, NwViewKind *k)
{
  for (int i = 0; i < 4; i++)
    if (g_ascii_strcasecmp(name, kind_names[i]) == 0) {
      *k = (NwViewKind)i;
      return TRUE;
    }
  return FALSE;
}

/* The slice geometry for a w x h viewport: fit the scene box, then apply zoom and pan (pan_mm
 * along the screen's right and up); the slice depth is the crosshair's; the axial and
 * coronal views mirrored in the radiological convention. */
static NwSliceGeometry slice_geometry(NwView *v, int w, int h)
{
  NwSliceGeometry g = {.plane = (NwPlane)v->kind,
                       .width = w,
                       .height = h,
                       .mirror_u =
                           v->kind != NW_VIEW_SAGITTAL && nw_scene_get_radiological(v->scene)};
  double lo[3], hi[3], c[3];
  nw_scene_get_bounds(v->scene, lo, hi);
  nw_slice_geometry_fit(&g, lo, hi);
  g.mm_per_pixel /= v->zoom;
  int u, vv, n;
  nw_plane_axes(g.plane, &u, &vv, &n);
  g.center_ras[u] += nw_slice_geometry_u_sign(&g) * v->pan_mm[0];
  g.center_ras[vv] += v->pan_mm[1];
  nw_scene_get_crosshair(v->scene, c);
  g.center_ras[n] = c[n];
  return g;
}

static NwOrbitCamera orbit_camera(NwView *v, int w, int h)
{
  NwOrbitCamera cam = {.yaw_deg = v->yaw_deg, .pitch_deg = v->pitch_deg, .width = w, .height = h};
  double lo[3], hi[3];
  nw_scene_get_bounds(v->scene, lo, hi);
  nw_orbit_camera_fit(&cam, lo, hi);
  cam.distance_mm *= v->dolly;
  for (int a = 0; a < 3; a++)
    cam.target[a] += v->target_offset[a];
  return cam;
}

static void draw(NwView *v, int w, int h)
{
  if (v->kind == NW_VIEW_3D) {
    NwOrbitCamera cam = orbit_camera(v, w, h);
    nw_view_render_3d(v->gpu, v->scene, &cam);
  } else {
    NwSliceGeometry g = slice_geometry(v, w, h);
    nw_view_render_slice(v->gpu, v->scene, &g);
  }
}

static void pixel_size(NwView *v, int *w, int *h)
{
  int scale = gtk_widget_get_scale_factor(GTK_WIDGET(v));
  *w = gtk_widget_get_allocated_width(GTK_WIDGET(v)) * scale;
  *h = gtk_widget_get_allocated_height(GTK_WIDGET(v)) * scale;
}

static gboolean on_render(GtkGLArea *area, GdkGLContext *ctx)
{
  NwView *v = NW_VIEW(area);
  if (v->gpu == NULL)
    return TRUE;
  GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(area));
  if (clock != NULL) /* the window's views share the clock: one live frame for the four */
    nw_view_render_begin_frame(v->scene, (guint64)gdk_frame_clock_get_frame_counter(clock),
                               LIVE_WAIT_US);
  int w, h;
  pixel_size(v, &w, &h);
  draw(v, w, h);
  return TRUE;
}

/* With the view's context current: can live CUDA frames reach this context by interop?
 * Told to the scene, whose runs choose their frame path from it (NW_LIVE_INTEROP=0 turns
 * interop off). */
static void probe_interop(NwView *v)
{
  char why[256] = "";
  gboolean ok = g_strcmp0(g_getenv("NW_LIVE_INTEROP"), "0") != 0;
  if (!ok)
    g_strlcpy(why, "turned off (NW_LIVE_INTEROP=0)", sizeof why);
  else
    ok = nw_gl_live_available(why, sizeof why);
  nw_scene_set_interop(v->scene, ok, why);
}

static void on_realize(GtkWidget *w)
{
  NwView *v = NW_VIEW(w);
  GTK_WIDGET_CLASS(nw_view_parent_class)->realize(w);
  gtk_gl_area_make_current(GTK_GL_AREA(v));
  GError *err = gtk_gl_area_get_error(GTK_GL_AREA(v));
  g_clear_error(&v->gl_error);
  if (err != NULL) {
    v->gl_error = g_error_copy(err);
    return;
  }
  /* the window's paint context: every view's context shares its objects with it */
  GdkGLContext *ctx = gtk_gl_area_get_context(GTK_GL_AREA(v));
  GdkGLContext *group = ctx != NULL ? gdk_gl_context_get_shared_context(ctx) : NULL;
  if (nw_gl_init(&v->gl_error))
    v->gpu = nw_view_gpu_new(group != NULL ? G_OBJECT(group) : NULL, &v->gl_error);
  if (v->gl_error != NULL)
    g_warning("%s view: %s", nw_view_kind_name(v->kind), v->gl_error->message);
  else if (v->kind == NW_VIEW_AXIAL)
    probe_interop(v);
}

static void on_unrealize(GtkWidget *w)
{
  NwView *v = NW_VIEW(w);
  gtk_gl_area_make_current(GTK_GL_AREA(v));
  if (gtk_gl_area_get_error(GTK_GL_AREA(v)) == NULL)
    g_clear_pointer(&v->gpu, nw_view_gpu_free);
  GTK_WIDGET_CLASS(nw_view_parent_class)->unrealize(w);
}

static void set_crosshair_at(NwView *v, double x, double y)
{
  int w, h, scale = gtk_widget_get_scale_factor(GTK_WIDGET(v));
  pixel_size(v, &w, &h);
  NwSliceGeometry g = slice_geometry(v, w, h);
  double ras[3];
  nw_slice_geometry_pixel_to_world(&g, x * scale, y * scale, ras);
  nw_scene_set_crosshair(v->scene, ras);
}

static gboolean on_button_press(GtkWidget *w, GdkEventButton *ev)
{
  NwView *v = NW_VIEW(w);
  if (ev->type != GDK_BUTTON_PRESS)
    return FALSE;
  gtk_widget_grab_focus(w);
  g_signal_emit(v, signals[SIG_ACTIVATED], 0);
  v->drag_button = (int)ev->button;
  v->drag_pan = ev->button == 2 || (ev->button == 1 && (ev->state & GDK_SHIFT_MASK));
  v->drag_x = ev->x;
  v->drag_y = ev->y;
  if (ev->button == 1 && !v->drag_pan && v->kind != NW_VIEW_3D)
    set_crosshair_at(v, ev->x, ev->y);
  return TRUE;
}

static gboolean on_button_release(GtkWidget *w, GdkEventButton *ev)
{
  NW_VIEW(w)->drag_button = 0;
  return TRUE;
}

/* Right drag: horizontal changes the window width by a factor, vertical moves the level by
 * a fraction of the window, as in most viewers. */
static void drag_window_level(NwView *v, double dx, double dy)
{
  NwLayer *l = nw_scene_get_active(v->scene);
  if (l == NULL || nw_layer_get_kind(l) == NW_LAYER_SURFACE)
    return;
  const NwLayerStyle *st = nw_layer_get_style(l);
  double window = st->hi - st->lo, level = 0.5 * (st->hi + st->lo);
  window *= exp(dx * 0.005);
  level -= dy * window * 0.004;
  nw_layer_set_window_level(l, window, level); /* the scene redraws, the list follows */
}

static void drag_pan(NwView *v, double dx, double dy)
{
  int w, h, scale = gtk_widget_get_scale_factor(GTK_WIDGET(v));
  pixel_size(v, &w, &h);
  if (v->kind == NW_VIEW_3D) {
    NwOrbitCamera cam = orbit_camera(v, w, h);
    double mm = cam.distance_mm * 0.0015, yaw = v->yaw_deg * G_PI / 180.0;
    /* screen right = (cos yaw, sin yaw, 0) for this orbit; screen up ~ S */
    v->target_offset[0] -= dx * mm * cos(yaw);
    v->target_offset[1] -= dx * mm * sin(yaw);
    v->target_offset[2] += dy * mm;
  } else {
    NwSliceGeometry g = slice_geometry(v, w, h);
    v->pan_mm[0] -= dx * scale * g.mm_per_pixel;
    v->pan_mm[1] += dy * scale * g.mm_per_pixel;
  }
  gtk_gl_area_queue_render(GTK_GL_AREA(v));
}

static void emit_pointer(NwView *v, double x, double y)
{
  if (v->kind == NW_VIEW_3D)
    return;
  int w, h, scale = gtk_widget_get_scale_factor(GTK_WIDGET(v));
  pixel_size(v, &w, &h);
  NwSliceGeometry g = slice_geometry(v, w, h);
  double ras[3];
  nw_slice_geometry_pixel_to_world(&g, x * scale, y * scale, ras);
  g_signal_emit(v, signals[SIG_POINTER_MOVED], 0, ras[0], ras[1], ras[2]);
}

static gboolean on_motion(GtkWidget *w, GdkEventMotion *ev)
{
  NwView *v = NW_VIEW(w);
  double dx = ev->x - v->drag_x, dy = ev->y - v->drag_y;
  v->drag_x = ev->x;
  v->drag_y = ev->y;
  if (v->drag_button == 0) {
    emit_pointer(v, ev->x, ev->y);
  } else if (v->drag_pan) {
    drag_pan(v, dx, dy);
  } else if (v->drag_button == 3) {
    drag_window_level(v, dx, dy);
  } else if (v->drag_button == 1 && v->kind == NW_VIEW_3D) {
    v->yaw_deg -= dx * 0.5;
    v->pitch_deg = CLAMP(v->pitch_deg + dy * 0.5, -89.0, 89.0);
    gtk_gl_area_queue_render(GTK_GL_AREA(v));
  } else if (v->drag_button == 1) {
    set_crosshair_at(v, ev->x, ev->y);
    emit_pointer(v, ev->x, ev->y);
  }
  return TRUE;
}

/* The pointer left the view: not a grab or a state change moving the focus of the pointer
 * elsewhere while it stays put, nor a move into a child window (GTK sends crossings for
 * both; the status bar would fall back to the crosshair under a pointer that did not move). */
static gboolean on_leave(GtkWidget *w, GdkEventCrossing *ev)
{
  if (ev->mode == GDK_CROSSING_NORMAL && ev->detail != GDK_NOTIFY_INFERIOR)
    g_signal_emit(NW_VIEW(w), signals[SIG_POINTER_LEFT], 0);
  return FALSE;
}

/* Zoom by factor keeping the world point under the pointer (x, y) where it is. */
static void zoom_about(NwView *v, double factor, double x, double y)
{
  int w, h, scale = gtk_widget_get_scale_factor(GTK_WIDGET(v));
  pixel_size(v, &w, &h);
  NwSliceGeometry before = slice_geometry(v, w, h);
  double p[3];
  nw_slice_geometry_pixel_to_world(&before, x * scale, y * scale, p);
  v->zoom = CLAMP(v->zoom * factor, 0.2, 50.0);
  NwSliceGeometry after = slice_geometry(v, w, h);
  double q[3];
  nw_slice_geometry_pixel_to_world(&after, x * scale, y * scale, q);
  int u, vv, n;
  nw_plane_axes(after.plane, &u, &vv, &n);
  v->pan_mm[0] += nw_slice_geometry_u_sign(&after) * (p[u] - q[u]);
  v->pan_mm[1] += p[vv] - q[vv];
  gtk_gl_area_queue_render(GTK_GL_AREA(v));
}

/* A 2D view's slice moves by slices (the voxel size along its normal) times dir. */
static void step_slice(NwView *v, double dir)
{
  int u, vv, n;
  nw_plane_axes((NwPlane)v->kind, &u, &vv, &n);
  double c[3];
  nw_scene_get_crosshair(v->scene, c);
  c[n] += dir * nw_scene_slice_step(v->scene, n);
  nw_scene_set_crosshair(v->scene, c);
}

static gboolean on_scroll(GtkWidget *w, GdkEventScroll *ev)
{
  NwView *v = NW_VIEW(w);
  double dir = 0.0;
  if (ev->direction == GDK_SCROLL_UP)
    dir = 1.0;
  else if (ev->direction == GDK_SCROLL_DOWN)
    dir = -1.0;
  else if (ev->direction == GDK_SCROLL_SMOOTH)
    dir = -ev->delta_y;
  if (dir == 0.0)
    return FALSE;
  if (v->kind == NW_VIEW_3D) {
    v->dolly = CLAMP(v->dolly * pow(0.9, dir), 0.1, 10.0);
    gtk_gl_area_queue_render(GTK_GL_AREA(v));
  } else if (ev->state & GDK_CONTROL_MASK) {
    zoom_about(v, pow(1.15, dir), ev->x, ev->y);
  } else {
    step_slice(v, dir);
  }
  return TRUE;
}

/* Arrow keys and Page Up/Down step through slices (2D) or turn the camera (3D). */
static gboolean on_key_press(GtkWidget *w, GdkEventKey *ev)
{
  NwView *v = NW_VIEW(w);
  int dir = 0;
  switch (ev->keyval) {
  case GDK_KEY_Up:
  case GDK_KEY_Page_Up:
  case GDK_KEY_KP_Up:
    dir = 1;
    break;
  case GDK_KEY_Down:
  case GDK_KEY_Page_Down:
  case GDK_KEY_KP_Down:
    dir = -1;
    break;
  case GDK_KEY_Left:
    dir = v->kind == NW_VIEW_3D ? 2 : -1;
    break;
  case GDK_KEY_Right:
    dir = v->kind == NW_VIEW_3D ? -2 : 1;
    break;
  default:
    return FALSE;
  }
  if (v->kind == NW_VIEW_3D) {
    if (abs(dir) == 2)
      v->yaw_deg += 5.0 * dir / 2;
    else
      v->pitch_deg = CLAMP(v->pitch_deg + 5.0 * dir, -89.0, 89.0);
    gtk_gl_area_queue_render(GTK_GL_AREA(v));
    return TRUE;
  }
  step_slice(v, dir);
  return TRUE;
}

static void on_scene_changed(NwScene *s, NwView *v)
{
  gtk_gl_area_queue_render(GTK_GL_AREA(v));
}

static void nw_view_dispose(GObject *obj)
{
  NwView *v = NW_VIEW(obj);
  if (v->scene != NULL) {
    g_signal_handler_disconnect(v->scene, v->changed_id);
    g_clear_object(&v->scene);
  }
  G_OBJECT_CLASS(nw_view_parent_class)->dispose(obj);
}

static void nw_view_finalize(GObject *obj)
{
  g_clear_error(&NW_VIEW(obj)->gl_error);
  G_OBJECT_CLASS(nw_view_parent_class)->finalize(obj);
}

static void nw_view_class_init(NwViewClass *klass)
{
  GObjectClass *oc = G_OBJECT_CLASS(klass);
  GtkWidgetClass *wc = GTK_WIDGET_CLASS(klass);
  oc->dispose = nw_view_dispose;
  oc->finalize = nw_view_finalize;
  wc->realize = on_realize;
  wc->unrealize = on_unrealize;
  wc->button_press_event = on_button_press;
  wc->button_release_event = on_button_release;
  wc->motion_notify_event = on_motion;
  wc->scroll_event = on_scroll;
  wc->leave_notify_event = on_leave;
  wc->key_press_event = on_key_press;
  GTK_GL_AREA_CLASS(klass)->render = on_render;
  signals[SIG_POINTER_MOVED] =
      g_signal_new("pointer-moved", NW_TYPE_VIEW, G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                   G_TYPE_NONE, 3, G_TYPE_DOUBLE, G_TYPE_DOUBLE, G_TYPE_DOUBLE);
  signals[SIG_POINTER_LEFT] = g_signal_new("pointer-left", NW_TYPE_VIEW, G_SIGNAL_RUN_LAST, 0, NULL,
                                           NULL, NULL, G_TYPE_NONE, 0);
  signals[SIG_ACTIVATED] = g_signal_new("activated", NW_TYPE_VIEW, G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                        NULL, G_TYPE_NONE, 0);
}

static void nw_view_init(NwView *v)
{
  gtk_gl_area_set_required_version(GTK_GL_AREA(v), 3, 3);
  gtk_gl_area_set_has_depth_buffer(GTK_GL_AREA(v), TRUE);
  gtk_widget_add_events(GTK_WIDGET(v), GDK_BUTTON_PRESS_MASK | GDK_BUTTON_RELEASE_MASK |
                                           GDK_POINTER_MOTION_MASK | GDK_SCROLL_MASK |
                                           GDK_LEAVE_NOTIFY_MASK | GDK_KEY_PRESS_MASK);
  gtk_widget_set_can_focus(GTK_WIDGET(v), TRUE);
  gtk_widget_set_size_request(GTK_WIDGET(v), 160, 160);
  gtk_widget_set_hexpand(GTK_WIDGET(v), TRUE);
  gtk_widget_set_vexpand(GTK_WIDGET(v), TRUE);
}

void nw_view_reset(NwView *v)
{
  v->zoom = 1.0;
  v->pan_mm[0] = v->pan_mm[1] = 0.0;
  v->yaw_deg = -120.0;
  v->pitch_deg = 20.0;
  v->dolly = 0.8;
  for (int a = 0; a < 3; a++)
    v->target_offset[a] = 0.0;
  gtk_gl_area_queue_render(GTK_GL_AREA(v));
}

NwView *nw_view_new(NwViewKind kind, NwScene *scene)
{
  NwView *v = g_object_new(NW_TYPE_VIEW, NULL);
  v->kind = kind;
  v->scene = g_object_ref(scene);
  v->changed_id = g_signal_connect(scene, "changed", G_CALLBACK(on_scene_changed), v);
  nw_view_reset(v);
  return v;
}

void nw_view_set_camera(NwView *v, double yaw_deg, double pitch_deg)
{
  v->yaw_deg = yaw_deg;
  v->pitch_deg = CLAMP(pitch_deg, -89.0, 89.0);
  gtk_gl_area_queue_render(GTK_GL_AREA(v));
}

void nw_view_set_zoom(NwView *v, double zoom)
{
  v->zoom = CLAMP(zoom, 0.2, 50.0);
  gtk_gl_area_queue_render(GTK_GL_AREA(v));
}

NwSliceGeometry nw_view_get_slice_geometry(NwView *v, int width, int height)
{
  return slice_geometry(v, width, height);
}

NwViewKind nw_view_get_kind(NwView *v)
{
  return v->kind;
}

gboolean nw_view_is_ready(NwView *v)
{
  return v->gpu != NULL;
}

const GError *nw_view_get_gl_error(NwView *v)
{
  return v->gl_error;
}

guint8 *nw_view_snapshot(NwView *v, int w, int h, GError **error)
{
  if (v->gpu == NULL) {
    if (v->gl_error != NULL)
      g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "%s view: %s", nw_view_kind_name(v->kind),
                  v->gl_error->message);
    else
      g_set_error(error, NW_ERROR, NW_ERROR_UNSUPPORTED, "%s view: not on screen yet",
                  nw_view_kind_name(v->kind));
    return NULL;
  }
  gtk_gl_area_make_current(GTK_GL_AREA(v));
  NwGlTarget t;
  if (!nw_gl_target_init(&t, w, h, error))
    return NULL;
  draw(v, w, h);
  guint8 *px = nw_gl_read_rgba(0, 0, w, h);
  nw_gl_target_clear(&t);
  /* GtkGLArea binds its own framebuffer again before its next render */
  return px;
}
