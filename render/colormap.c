/* colormap.c — colour map tables (see colormap.h). Pure data, any thread. */
#include "colormap.h"

#include <math.h>
#include <string.h>

static const char *const names[NW_COLORMAP_COUNT] = {"grey", "hot", "turbo", "diverging", "label"};

const char *nw_colormap_name(NwColormap map)
{
  return map < NW_COLORMAP_COUNT ? names[map] : "?";
}

gboolean nw_colormap_from_name(const char *name, NwColormap *map)
{
  for (int i = 0; i < NW_COLORMAP_COUNT; i++)
    if (g_ascii_strcasecmp(name, names[i]) == 0) {
      *map = (NwColormap)i;
      return TRUE;
    }
  if (g_ascii_strcasecmp(name, "gray") == 0) {
    *map = NW_COLORMAP_GREY;
    return TRUE;
  }
  return FALSE;
}

int nw_colormap_label_index(int label)
{
  return label <= 0 ? 0 : 1 + (label - 1) % (NW_LUT_SIZE - 1);
}

/* Piecewise-linear map through evenly spaced key colours (0..255 per channel). */
static void from_keys(guint8 *rgba, const guint8 (*keys)[3], int n_keys)
{
  for (int e = 0; e < NW_LUT_SIZE; e++) {
    double t = (double)e / (NW_LUT_SIZE - 1) * (n_keys - 1);
    int k = (int)floor(t);
    if (k >= n_keys - 1)
      k = n_keys - 2;
    double f = t - k;
    for (int c = 0; c < 3; c++)
      rgba[e * 4 + c] = (guint8)lround((1.0 - f) * keys[k][c] + f * keys[k + 1][c]);
    rgba[e * 4 + 3] = 255;
  }
}

static void hsv_to_rgb(double h, double s, double v, guint8 out[3])
{
  double r, g, b;
  double hh = fmod(h, 1.0) * 6.0;
  int i = (int)hh;
  double f = hh - i, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  switch (i) {
  case 0:
    r = v, g = t, b = p;
    break;
  case 1:
    r = q, g = v, b = p;
    break;
  case 2:
    r = p, g = v, b = t;
    break;
  case 3:
    r = p, g = q, b = v;
    break;
  case 4:
    r = t, g = p, b = v;
    break;
  default:
    r = v, g = p, b = q;
    break;
  }
  out[0] = (guint8)lround(r * 255);
  out[1] = (guint8)lround(g * 255);
  out[2] = (guint8)lround(b * 255);
}

/* Neighbouring labels get hues a golden-ratio step apart, so adjacent regions (which often
 * have adjacent numbers) differ clearly; saturation and value vary a little too. */
static void fill_label(guint8 *rgba)
{
  memset(rgba, 0, 4); /* background: transparent */
  for (int e = 1; e < NW_LUT_SIZE; e++) {
    double h = fmod(0.13 + e * 0.6180339887, 1.0);
    double s = 0.55 + 0.45 * fmod(e * 0.371, 1.0);
    double v = 0.80 + 0.20 * fmod(e * 0.529, 1.0);
    hsv_to_rgb(h, s, v, rgba + e * 4);
    rgba[e * 4 + 3] = 255;
  }
}

void nw_colormap_fill(NwColormap map, guint8 *rgba)
{
  static const guint8 grey[][3] = {{0, 0, 0}, {255, 255, 255}};
  static const guint8 hot[][3] = {{0, 0, 0}, {230, 0, 0}, {255, 210, 0}, {255, 255, 255}};
  /* Key colours of a rainbow that is perceptually smoother than jet (as "turbo"). */
  static const guint8 turbo[][3] = {{48, 18, 59},   {70, 107, 227}, {40, 187, 236},
                                    {50, 241, 151}, {164, 252, 60}, {232, 209, 54},
                                    {254, 140, 40}, {220, 60, 10},  {122, 4, 3}};
  static const guint8 diverging[][3] = {
      {40, 60, 190}, {120, 150, 235}, {235, 235, 235}, {235, 130, 100}, {180, 10, 35}};
  switch (map) {
  case NW_COLORMAP_HOT:
    from_keys(rgba, hot, G_N_ELEMENTS(hot));
    break;
  case NW_COLORMAP_TURBO:
    from_keys(rgba, turbo, G_N_ELEMENTS(turbo));
    break;
  case NW_COLORMAP_DIVERGING:
    from_keys(rgba, diverging, G_N_ELEMENTS(diverging));
    break;
  case NW_COLORMAP_LABEL:
    fill_label(rgba);
    break;
  default:
    from_keys(rgba, grey, G_N_ELEMENTS(grey));
    break;
  }
}
