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

/* Turbo (Anton Mikhailov, Google, 2019: "Turbo, An Improved Rainbow Colormap for
 * Visualization"; Apache License 2.0): the published 256-entry sRGB table, i.e. the published
 * floats (as matplotlib ships them, matplotlib/_cm_listed.py _turbo_data) times 255, rounded.
 * It replaces a 9-key approximation of the same map; the two differ by at most 23/255 in one
 * channel, so views and the screenshots in docs/images look the same. */
static const guint8 turbo_table[NW_LUT_SIZE][3] = {
    {48, 18, 59},    {50, 21, 67},    {51, 24, 74},   {52, 27, 81},   {53, 30, 88},
    {54, 33, 95},    {55, 36, 102},   {56, 39, 109},  {57, 42, 115},  {58, 45, 121},
    {59, 47, 128},   {60, 50, 134},   {61, 53, 139},  {62, 56, 145},  {63, 59, 151},
    {63, 62, 156},   {64, 64, 162},   {65, 67, 167},  {65, 70, 172},  {66, 73, 177},
    {66, 75, 181},   {67, 78, 186},   {68, 81, 191},  {68, 84, 195},  {68, 86, 199},
    {69, 89, 203},   {69, 92, 207},   {69, 94, 211},  {70, 97, 214},  {70, 100, 218},
    {70, 102, 221},  {70, 105, 224},  {70, 107, 227}, {71, 110, 230}, {71, 113, 233},
    {71, 115, 235},  {71, 118, 238},  {71, 120, 240}, {71, 123, 242}, {70, 125, 244},
    {70, 128, 246},  {70, 130, 248},  {70, 133, 250}, {70, 135, 251}, {69, 138, 252},
    {69, 140, 253},  {68, 143, 254},  {67, 145, 254}, {66, 148, 255}, {65, 150, 255},
    {64, 153, 255},  {62, 155, 254},  {61, 158, 254}, {59, 160, 253}, {58, 163, 252},
    {56, 165, 251},  {55, 168, 250},  {53, 171, 248}, {51, 173, 247}, {49, 175, 245},
    {47, 178, 244},  {46, 180, 242},  {44, 183, 240}, {42, 185, 238}, {40, 188, 235},
    {39, 190, 233},  {37, 192, 231},  {35, 195, 228}, {34, 197, 226}, {32, 199, 223},
    {31, 201, 221},  {30, 203, 218},  {28, 205, 216}, {27, 208, 213}, {26, 210, 210},
    {26, 212, 208},  {25, 213, 205},  {24, 215, 202}, {24, 217, 200}, {24, 219, 197},
    {24, 221, 194},  {24, 222, 192},  {24, 224, 189}, {25, 226, 187}, {25, 227, 185},
    {26, 228, 182},  {28, 230, 180},  {29, 231, 178}, {31, 233, 175}, {32, 234, 172},
    {34, 235, 170},  {37, 236, 167},  {39, 238, 164}, {42, 239, 161}, {44, 240, 158},
    {47, 241, 155},  {50, 242, 152},  {53, 243, 148}, {56, 244, 145}, {60, 245, 142},
    {63, 246, 138},  {67, 247, 135},  {70, 248, 132}, {74, 248, 128}, {78, 249, 125},
    {82, 250, 122},  {85, 250, 118},  {89, 251, 115}, {93, 252, 111}, {97, 252, 108},
    {101, 253, 105}, {105, 253, 102}, {109, 254, 98}, {113, 254, 95}, {117, 254, 92},
    {121, 254, 89},  {125, 255, 86},  {128, 255, 83}, {132, 255, 81}, {136, 255, 78},
    {139, 255, 75},  {143, 255, 73},  {146, 255, 71}, {150, 254, 68}, {153, 254, 66},
    {156, 254, 64},  {159, 253, 63},  {161, 253, 61}, {164, 252, 60}, {167, 252, 58},
    {169, 251, 57},  {172, 251, 56},  {175, 250, 55}, {177, 249, 54}, {180, 248, 54},
    {183, 247, 53},  {185, 246, 53},  {188, 245, 52}, {190, 244, 52}, {193, 243, 52},
    {195, 241, 52},  {198, 240, 52},  {200, 239, 52}, {203, 237, 52}, {205, 236, 52},
    {208, 234, 52},  {210, 233, 53},  {212, 231, 53}, {215, 229, 53}, {217, 228, 54},
    {219, 226, 54},  {221, 224, 55},  {223, 223, 55}, {225, 221, 55}, {227, 219, 56},
    {229, 217, 56},  {231, 215, 57},  {233, 213, 57}, {235, 211, 57}, {236, 209, 58},
    {238, 207, 58},  {239, 205, 58},  {241, 203, 58}, {242, 201, 58}, {244, 199, 58},
    {245, 197, 58},  {246, 195, 58},  {247, 193, 58}, {248, 190, 57}, {249, 188, 57},
    {250, 186, 57},  {251, 184, 56},  {251, 182, 55}, {252, 179, 54}, {252, 177, 54},
    {253, 174, 53},  {253, 172, 52},  {254, 169, 51}, {254, 167, 50}, {254, 164, 49},
    {254, 161, 48},  {254, 158, 47},  {254, 155, 45}, {254, 153, 44}, {254, 150, 43},
    {254, 147, 42},  {254, 144, 41},  {253, 141, 39}, {253, 138, 38}, {252, 135, 37},
    {252, 132, 35},  {251, 129, 34},  {251, 126, 33}, {250, 123, 31}, {249, 120, 30},
    {249, 117, 29},  {248, 114, 28},  {247, 111, 26}, {246, 108, 25}, {245, 105, 24},
    {244, 102, 23},  {243, 99, 21},   {242, 96, 20},  {241, 93, 19},  {240, 91, 18},
    {239, 88, 17},   {237, 85, 16},   {236, 83, 15},  {235, 80, 14},  {234, 78, 13},
    {232, 75, 12},   {231, 73, 12},   {229, 71, 11},  {228, 69, 10},  {226, 67, 10},
    {225, 65, 9},    {223, 63, 8},    {221, 61, 8},   {220, 59, 7},   {218, 57, 7},
    {216, 55, 6},    {214, 53, 6},    {212, 51, 5},   {210, 49, 5},   {208, 47, 5},
    {206, 45, 4},    {204, 43, 4},    {202, 42, 4},   {200, 40, 3},   {197, 38, 3},
    {195, 37, 3},    {193, 35, 2},    {190, 33, 2},   {188, 32, 2},   {185, 30, 2},
    {183, 29, 2},    {180, 27, 1},    {178, 26, 1},   {175, 24, 1},   {172, 23, 1},
    {169, 22, 1},    {167, 20, 1},    {164, 19, 1},   {161, 18, 1},   {158, 16, 1},
    {155, 15, 1},    {152, 14, 1},    {149, 13, 1},   {146, 11, 1},   {142, 10, 1},
    {139, 9, 2},     {136, 8, 2},     {133, 7, 2},    {129, 6, 2},    {126, 5, 2},
    {122, 4, 3},
};

static void fill_table(guint8 *rgba, const guint8 (*table)[3])
{
  for (int e = 0; e < NW_LUT_SIZE; e++) {
    memcpy(rgba + e * 4, table[e], 3);
    rgba[e * 4 + 3] = 255;
  }
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
  /* hot and diverging are our own key colours, not published tables: the published maps
   * closest to them (matplotlib's hot, MATLAB's; colorcet's CET-D1, diverging_bwr_40_95_c42)
   * differ by up to 60/255 and 40/255 in a channel and would change the look of the views
   * and of the screenshots in docs/images (hot: a later, browner orange; CET-D1: a brighter
   * blue and a purer red at the ends). hot follows MATLAB's black-red-yellow-white;
   * diverging is blue - white - red with white at 0.5. */
  static const guint8 hot[][3] = {{0, 0, 0}, {230, 0, 0}, {255, 210, 0}, {255, 255, 255}};
  static const guint8 diverging[][3] = {
      {40, 60, 190}, {120, 150, 235}, {235, 235, 235}, {235, 130, 100}, {180, 10, 35}};
  switch (map) {
  case NW_COLORMAP_HOT:
    from_keys(rgba, hot, G_N_ELEMENTS(hot));
    break;
  case NW_COLORMAP_TURBO:
    fill_table(rgba, turbo_table);
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
