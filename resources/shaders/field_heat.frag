#version 330 core
// field_heat.frag — heat maps of a displacement field u (RGB32F texture, voxel units of its
// own grid) on the slice:
//  0 magnitude |u| in mm (|A u| with A the linear part of vox_to_ras)
//  1 log det(I + grad u), grad by central differences in voxel units (one texel apart,
//    clamped at the borders); folded voxels (det <= 0) are hatched in u_fold_color.
in vec3 v_world;
uniform sampler3D u_field;
uniform sampler1D u_lut;
uniform mat4 u_ras_to_tex;
uniform mat4 u_vox_to_ras;
uniform vec3 u_size;        // nx, ny, nz
uniform int u_mode;
uniform float u_lo, u_hi, u_opacity;
uniform int u_clear_below;
uniform vec4 u_fold_color;
out vec4 frag;

bool inside(vec3 tc) { return all(greaterThanEqual(tc, vec3(0.0))) && all(lessThanEqual(tc, vec3(1.0))); }

void main()
{
  vec3 tc = (u_ras_to_tex * vec4(v_world, 1.0)).xyz;
  if (!inside(tc))
    discard;
  float value;
  if (u_mode == 0) {
    vec3 u = texture(u_field, tc).xyz;
    value = length(mat3(u_vox_to_ras) * u);
  } else {
    mat3 g; // g[i] = du/dx_i (column i of the gradient)
    for (int i = 0; i < 3; i++) {
      vec3 e = vec3(0.0);
      e[i] = 1.0 / u_size[i];
      g[i] = u_size[i] > 1.5 ? 0.5 * (texture(u_field, tc + e).xyz - texture(u_field, tc - e).xyz)
                             : vec3(0.0);
    }
    float det = determinant(mat3(1.0) + g);
    if (det <= 0.0) {
      bool stripe = mod(gl_FragCoord.x + gl_FragCoord.y, 8.0) < 4.0;
      frag = stripe ? u_fold_color : vec4(0.0, 0.0, 0.0, u_fold_color.a);
      return;
    }
    value = log(det);
  }
  float t = (value - u_lo) / max(u_hi - u_lo, 1e-20);
  if (u_clear_below == 1 && t <= 0.05)
    discard;
  vec4 c = texture(u_lut, (clamp(t, 0.0, 1.0) * 255.0 + 0.5) / 256.0);
  frag = vec4(c.rgb, c.a * u_opacity);
}
