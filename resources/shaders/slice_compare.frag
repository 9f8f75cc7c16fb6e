#version 330 core
// slice_compare.frag — two images A and B at the same world point, shown together:
//  1 blend      magenta/green (A in red+blue, B in green: grey where they agree, readable
//               with red-green colour blindness) or a mix of the layers' own colour maps
//  2 checker    tiles of u_tile_mm (world mm) alternating A and B
//  3 difference A - B through the diverging map, +-u_diff_range at the ends
//  4 flicker    A or B, the caller alternates u_show_b
//  5 curtain    A left of pixel column u_curtain_px, B right of it, a white edge between
in vec3 v_world;
uniform sampler3D u_vol_a, u_vol_b;
uniform sampler1D u_lut_a, u_lut_b, u_lut_diff;
uniform mat4 u_ras_to_tex_a, u_ras_to_tex_b;
uniform vec2 u_range_a, u_range_b; // (lo, hi)
uniform float u_opacity_a, u_opacity_b;
uniform int u_mode;
uniform int u_magenta_green;
uniform float u_blend;             // weight of B
uniform float u_tile_mm, u_diff_range, u_curtain_px;
uniform int u_show_b;
uniform int u_clear_below;        // 1: where both images are within 5 % of their low end, nothing
out vec4 frag;

bool inside(vec3 tc) { return all(greaterThanEqual(tc, vec3(0.0))) && all(lessThanEqual(tc, vec3(1.0))); }
vec4 lut_a(float t) { return texture(u_lut_a, (clamp(t, 0.0, 1.0) * 255.0 + 0.5) / 256.0); }
vec4 lut_b(float t) { return texture(u_lut_b, (clamp(t, 0.0, 1.0) * 255.0 + 0.5) / 256.0); }

void main()
{
  vec3 ta = (u_ras_to_tex_a * vec4(v_world, 1.0)).xyz;
  vec3 tb = (u_ras_to_tex_b * vec4(v_world, 1.0)).xyz;
  bool ia = inside(ta), ib = inside(tb);
  if (!ia && !ib)
    discard;
  float va = ia ? texture(u_vol_a, ta).r : 0.0;
  float vb = ib ? texture(u_vol_b, tb).r : 0.0;
  if (isnan(va)) va = 0.0;
  if (isnan(vb)) vb = 0.0;
  float a = clamp((va - u_range_a.x) / max(u_range_a.y - u_range_a.x, 1e-20), 0.0, 1.0);
  float b = clamp((vb - u_range_b.x) / max(u_range_b.y - u_range_b.x, 1e-20), 0.0, 1.0);
  if (u_clear_below == 1 && a <= 0.05 && b <= 0.05)
    discard;
  vec4 ca = vec4(lut_a(a).rgb, u_opacity_a), cb = vec4(lut_b(b).rgb, u_opacity_b);
  vec4 c;
  if (u_mode == 1) {
    if (u_magenta_green == 1) {
      float wa = min(1.0, 2.0 * (1.0 - u_blend)), wb = min(1.0, 2.0 * u_blend);
      c = vec4(a * wa, b * wb, a * wa, 1.0);
    } else {
      c = mix(ca, cb, u_blend);
    }
  } else if (u_mode == 2) {
    vec3 cell = floor(v_world / max(u_tile_mm, 1e-3));
    c = (int(cell.x + cell.y + cell.z) & 1) == 0 ? ca : cb;
  } else if (u_mode == 3) {
    float d = (va - vb) / max(u_diff_range, 1e-20);
    c = vec4(texture(u_lut_diff, (clamp(0.5 + 0.5 * d, 0.0, 1.0) * 255.0 + 0.5) / 256.0).rgb, 1.0);
  } else if (u_mode == 4) {
    c = u_show_b == 1 ? cb : ca;
  } else {
    c = gl_FragCoord.x < u_curtain_px ? ca : cb;
    if (abs(gl_FragCoord.x - u_curtain_px) < 1.0)
      c = vec4(1.0); /* the curtain's edge */
  }
  frag = c;
}
