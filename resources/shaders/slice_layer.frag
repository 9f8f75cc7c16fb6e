#version 330 core
// slice_layer.frag — one scalar layer through its colour map: value -> (v - lo) / (hi - lo)
// -> LUT; label maps take the LUT entry 1 + (label - 1) mod 255 and leave 0 transparent, or
// with a label table their own colour: u_label_colors holds label l at (l % 256, l / 256).
in vec3 v_world;
uniform sampler3D u_vol;
uniform sampler1D u_lut;
uniform mat4 u_ras_to_tex;  // world RAS mm -> texture coordinates
uniform float u_lo, u_hi, u_opacity;
uniform int u_label;        // 1: label map
uniform int u_label_table;  // 1: colours from u_label_colors (alpha 0: a hidden label)
uniform sampler2D u_label_colors;
uniform int u_clear_below;  // 1: values up to lo + 5 % of the range are transparent
uniform int u_clear_centre; // 1: values within 2.5 % of the range of its middle are too
out vec4 frag;

bool inside(vec3 tc) { return all(greaterThanEqual(tc, vec3(0.0))) && all(lessThanEqual(tc, vec3(1.0))); }
vec4 lut(float t) { return texture(u_lut, (clamp(t, 0.0, 1.0) * 255.0 + 0.5) / 256.0); }

void main()
{
  vec3 tc = (u_ras_to_tex * vec4(v_world, 1.0)).xyz;
  if (!inside(tc))
    discard;
  float v = texture(u_vol, tc).r;
  if (isnan(v))
    discard;
  vec4 c;
  if (u_label == 1) {
    int l = int(floor(v + 0.5));
    if (l <= 0)
      discard;
    ivec2 size = textureSize(u_label_colors, 0);
    if (u_label_table == 1 && l < size.x * size.y)
      c = texelFetch(u_label_colors, ivec2(l % 256, l / 256), 0);
    else
      c = texelFetch(u_lut, 1 + (l - 1) % 255, 0);
    if (c.a == 0.0)
      discard;
  } else {
    float t = (v - u_lo) / max(u_hi - u_lo, 1e-20);
    if ((u_clear_below == 1 && t <= 0.05) || (u_clear_centre == 1 && abs(t - 0.5) <= 0.025))
      discard;
    c = lut(t);
  }
  frag = vec4(c.rgb, c.a * u_opacity);
}
