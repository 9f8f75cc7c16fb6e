#version 330 core
// mesh.frag — a head light (at the eye) with ambient, two-sided diffuse and a little
// specular; colour from u_color or the per-vertex scalar through the LUT.
in vec3 v_normal_eye;
in vec3 v_pos_eye;
in float v_scalar;
in vec3 v_world;
uniform int u_cut;          // 1: cut away the octant around the eye (slices show inside)
uniform vec3 u_cut_center;  // RAS mm: where the three slice planes meet
uniform vec3 u_cut_sign;    // +-1 per axis: the octant that faces the eye
uniform sampler1D u_lut;
uniform int u_use_scalars;
uniform float u_lo, u_hi, u_opacity;
uniform vec4 u_color;
out vec4 frag;

void main()
{
  if (u_cut == 1 && all(greaterThan((v_world - u_cut_center) * u_cut_sign, vec3(0.0))))
    discard;
  vec3 n = normalize(v_normal_eye);
  vec3 l = normalize(-v_pos_eye);
  float diff = abs(dot(n, l));
  vec3 r = reflect(-l, n * sign(dot(n, l)));
  float spec = pow(max(dot(r, l), 0.0), 24.0);
  vec3 base = u_color.rgb;
  if (u_use_scalars == 1) {
    float t = clamp((v_scalar - u_lo) / max(u_hi - u_lo, 1e-20), 0.0, 1.0);
    base = texture(u_lut, (t * 255.0 + 0.5) / 256.0).rgb;
  }
  frag = vec4(base * (0.22 + 0.78 * diff) + vec3(0.18 * spec), u_opacity);
}
