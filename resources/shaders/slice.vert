#version 330 core
// slice.vert — a slice quad given in world RAS mm; the fragment shaders sample volumes at
// the interpolated world position, so any voxel grid (oblique, anisotropic) lands right.
layout(location = 0) in vec4 a_world; // xyz: RAS mm, w unused
uniform mat4 u_mvp;                   // world RAS mm -> clip
out vec3 v_world;

void main()
{
  v_world = a_world.xyz;
  gl_Position = u_mvp * vec4(a_world.xyz, 1.0);
}
