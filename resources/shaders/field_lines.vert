#version 330 core
// field_lines.vert — the deformation drawn on the GPU from the field texture u (voxel
// units of its grid). a_world.xyz is a point of a regular grid in the view plane (RAS mm),
// a_world.w its role:
//  -1 warped grid: the point moves to vox_to_ras (x + s u(x))
//   0 arrow tail (stays), 1 tip, 2 and 3 the two barbs of the head; the arrow is the
//     in-plane part of the displacement, scaled by u_scale.
layout(location = 0) in vec4 a_world;
uniform sampler3D u_field;
uniform mat4 u_ras_to_tex;
uniform mat4 u_ras_to_vox;
uniform mat4 u_vox_to_ras;
uniform mat4 u_mvp;
uniform float u_scale;
uniform vec3 u_normal;   // world normal of the view plane
out float v_length_mm;

void main()
{
  vec3 p = a_world.xyz;
  vec3 u = texture(u_field, (u_ras_to_tex * vec4(p, 1.0)).xyz).xyz;
  vec3 d = mat3(u_vox_to_ras) * u * u_scale;   // displacement in world mm
  v_length_mm = length(d);
  vec3 q;
  if (a_world.w < -0.5) {
    vec3 x = (u_ras_to_vox * vec4(p, 1.0)).xyz;
    q = (u_vox_to_ras * vec4(x + u * u_scale, 1.0)).xyz;
  } else {
    vec3 dp = d - dot(d, u_normal) * u_normal;  // in-plane part
    vec3 side = cross(u_normal, dp);
    vec3 tip = p + dp;
    if (a_world.w < 0.5)
      q = p;
    else if (a_world.w < 1.5)
      q = tip;
    else if (a_world.w < 2.5)
      q = tip - 0.35 * dp + 0.2 * side;
    else
      q = tip - 0.35 * dp - 0.2 * side;
  }
  gl_Position = u_mvp * vec4(q, 1.0);
}
