#version 330 core
// mesh.vert — triangle meshes in world RAS mm with per-vertex normals and scalars.
layout(location = 0) in vec3 a_pos;
layout(location = 1) in vec3 a_normal;
layout(location = 2) in float a_scalar;
uniform mat4 u_mvp;   // world -> clip
uniform mat4 u_view;  // world -> eye (rigid: its 3x3 part turns normals too)
out vec3 v_normal_eye;
out vec3 v_pos_eye;
out float v_scalar;
out vec3 v_world;

void main()
{
  v_normal_eye = mat3(u_view) * a_normal;
  v_pos_eye = (u_view * vec4(a_pos, 1.0)).xyz;
  v_scalar = a_scalar;
  v_world = a_pos;
  gl_Position = u_mvp * vec4(a_pos, 1.0);
}
