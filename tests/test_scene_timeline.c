/* test_scene_timeline.c — a run's timeline (scene/nw_timeline.h) without a display: frames
 * are kept as copies with their iterations, the byte budget drops the oldest first, a frame
 * larger than the budget is refused, a repeated iteration replaces what followed it, lookup
 * by iteration k gives the newest frame at or before k, a full ring copies a new frame
 * into the memory of the oldest one it drops, and frames in memory of another allocator (the
 * live view's pinned host frames) are kept in the timeline's own memory, freed as its own. */
#include "nw_timeline.h"
#include "testutil.h"

/* 8^3 scalar volume, every voxel value: 2 KiB of floats. */
static NwVolume *constant(float value)
{
  NwVolume *v = nw_volume_new(8, 8, 8, 1, NULL);
  for (size_t i = 0; i < nw_volume_n_floats(v); i++)
    v->data[i] = value;
  return v;
}

enum { FRAME_BYTES = 8 * 8 * 8 * sizeof(float) };

static void test_kept_and_found(void)
{
  g_autoptr(NwTimeline) t = nw_timeline_new(0);
  g_assert_cmpuint(nw_timeline_budget(t), ==, NW_TIMELINE_DEFAULT_BUDGET);
  g_assert_null(nw_timeline_find(t, 100));
  for (int it = 2; it <= 10; it += 2) {
    g_autoptr(NwVolume) v = constant((float)it);
    g_assert_true(nw_timeline_add(t, it, v, NULL));
    v->data[0] = -1.0f; /* the timeline keeps its own copy */
  }
  g_assert_cmpuint(nw_timeline_n_frames(t), ==, 5);
  g_assert_cmpuint(nw_timeline_bytes(t), ==, 5 * FRAME_BYTES);
  g_assert_null(nw_timeline_find(t, 1));
  g_assert_cmpint(nw_timeline_find(t, 2)->iteration, ==, 2);
  g_assert_cmpint(nw_timeline_find(t, 7)->iteration, ==, 6);
  g_assert_cmpfloat(nw_timeline_find(t, 7)->image->data[0], ==, 6.0f);
  g_assert_cmpint(nw_timeline_find(t, 1000)->iteration, ==, 10);
  g_assert_cmpint(nw_timeline_get(t, 0)->iteration, ==, 2);
  g_assert_null(nw_timeline_get(t, 0)->field);
}

static void test_budget(void)
{
  /* room for four scalar frames, or one frame with a 3-vector field */
  g_autoptr(NwTimeline) t = nw_timeline_new(4 * FRAME_BYTES + 100);
  for (int it = 1; it <= 7; it++) {
    g_autoptr(NwVolume) v = constant((float)it);
    g_assert_true(nw_timeline_add(t, it, v, NULL));
    g_assert_cmpuint(nw_timeline_bytes(t), <=, nw_timeline_budget(t));
  }
  g_assert_cmpuint(nw_timeline_n_frames(t), ==, 4);
  g_assert_cmpint(nw_timeline_get(t, 0)->iteration, ==, 4); /* the oldest went first */
  g_assert_null(nw_timeline_find(t, 3));
  g_autoptr(NwVolume) image = constant(8.0f);
  g_autoptr(NwVolume) field = nw_volume_new(8, 8, 8, 3, NULL);
  g_assert_true(nw_timeline_add(t, 8, image, field));
  g_assert_cmpuint(nw_timeline_n_frames(t), ==, 1);
  g_assert_cmpuint(nw_timeline_bytes(t), ==, 4 * FRAME_BYTES);
  g_assert_nonnull(nw_timeline_find(t, 8)->field);
  /* larger than the whole budget: refused, the kept frames stay */
  g_autoptr(NwVolume) big = nw_volume_new(16, 16, 16, 1, NULL);
  g_assert_false(nw_timeline_add(t, 9, big, NULL));
  g_assert_cmpuint(nw_timeline_n_frames(t), ==, 1);
}

/* A full ring of frames of one shape: the new frame's copy goes into the dropped oldest
 * frame's volumes (no allocation per frame), with the new values and affine. */
static void test_full_ring_reuses_oldest(void)
{
  g_autoptr(NwTimeline) t = nw_timeline_new(3 * 4 * FRAME_BYTES); /* three image + field */
  for (int it = 1; it <= 3; it++) {
    g_autoptr(NwVolume) image = constant((float)it);
    g_autoptr(NwVolume) field = nw_volume_new(8, 8, 8, 3, NULL);
    g_assert_true(nw_timeline_add(t, it, image, field));
  }
  /* the volumes themselves, not only their data: a fresh copy made after the oldest frame was
   * freed could get the same data back from malloc, but not both volumes in the same roles */
  const NwTimelineFrame *oldest = nw_timeline_get(t, 0);
  const NwVolume *oldest_image = oldest->image, *oldest_field = oldest->field;
  const float *image_data = oldest->image->data, *field_data = oldest->field->data;
  g_autoptr(NwVolume) image = constant(4.0f);
  g_autoptr(NwVolume) field = nw_volume_new(8, 8, 8, 3, NULL);
  field->data[5] = 7.0f;
  nw_volume_set_spacing(image, 2.0, 2.0, 2.0);
  g_assert_true(nw_timeline_add(t, 4, image, field));
  g_assert_cmpuint(nw_timeline_n_frames(t), ==, 3);
  g_assert_cmpint(nw_timeline_get(t, 0)->iteration, ==, 2);
  const NwTimelineFrame *newest = nw_timeline_find(t, 4);
  g_assert_cmpint(newest->iteration, ==, 4);
  g_assert_true(newest->image == oldest_image);
  g_assert_true(newest->field == oldest_field);
  g_assert_true(newest->image->data == image_data);
  g_assert_true(newest->field->data == field_data);
  g_assert_cmpfloat(nw_test_max_abs_diff(newest->image, image), ==, 0.0);
  g_assert_cmpfloat(newest->field->data[5], ==, 7.0f);
  g_assert_cmpfloat(newest->image->vox_to_ras[0], ==, 2.0);
  g_assert_cmpfloat(newest->image->spacing_mm[2], ==, 2.0f);
  /* a frame of another shape is copied anew */
  g_autoptr(NwVolume) smaller = nw_volume_new(4, 4, 4, 1, NULL);
  g_assert_true(nw_timeline_add(t, 5, smaller, NULL));
  g_assert_cmpint(nw_timeline_find(t, 5)->image->nx, ==, 4);
  g_assert_null(nw_timeline_find(t, 5)->field);
}


static void test_frames_of_other_memory(void)
{
  NwTimeline *t = nw_timeline_new(2 * FRAME_BYTES);
  for (int it = 1; it <= 4; it++) { /* the third and fourth reuse the oldest's memory */
    NwVolume *frame = nw_volume_new_from(&nw_test_counting_allocator, 8, 8, 8, 1, NULL);
    for (size_t i = 0; i < nw_volume_n_floats(frame); i++)
      frame->data[i] = (float)it;
    g_assert_true(nw_timeline_add(t, it, frame, NULL));
    nw_volume_free(frame);
    g_assert_cmpint(nw_test_counted_blocks(), ==, 0);
  }
  for (guint f = 0; f < nw_timeline_n_frames(t); f++) {
    g_assert_null(nw_timeline_get(t, f)->image->allocator);
    g_assert_cmpfloat(nw_timeline_get(t, f)->image->data[100], ==, (float)(3 + f));
  }
  nw_timeline_free(t); /* GLib's memory freed as GLib's: counted_free would abort */
  g_assert_cmpint(nw_test_counted_blocks(), ==, 0);
}

static void test_repeated_iteration(void)
{
  g_autoptr(NwTimeline) t = nw_timeline_new(0);
  for (int it = 1; it <= 4; it++) {
    g_autoptr(NwVolume) v = constant((float)it);
    nw_timeline_add(t, it, v, NULL);
  }
  /* the result shown at the last iteration replaces that iteration's live frame */
  g_autoptr(NwVolume) result = constant(40.0f);
  nw_timeline_add(t, 4, result, NULL);
  g_assert_cmpuint(nw_timeline_n_frames(t), ==, 4);
  g_assert_cmpfloat(nw_timeline_find(t, 4)->image->data[0], ==, 40.0f);
  /* an earlier iteration (a restarted count) supersedes everything from it on */
  nw_timeline_add(t, 2, result, NULL);
  g_assert_cmpuint(nw_timeline_n_frames(t), ==, 2);
  g_assert_cmpuint(nw_timeline_bytes(t), ==, 2 * FRAME_BYTES);
  nw_timeline_clear(t);
  g_assert_cmpuint(nw_timeline_n_frames(t), ==, 0);
  g_assert_cmpuint(nw_timeline_bytes(t), ==, 0);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/scene-timeline/kept-and-found", test_kept_and_found);
  g_test_add_func("/scene-timeline/budget", test_budget);
  g_test_add_func("/scene-timeline/repeated-iteration", test_repeated_iteration);
  g_test_add_func("/scene-timeline/full-ring-reuses-oldest", test_full_ring_reuses_oldest);
  g_test_add_func("/scene-timeline/frames-of-other-memory", test_frames_of_other_memory);
  return g_test_run();
}
