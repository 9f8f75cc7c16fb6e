#version 330 core
// lines.vert — plain line segments in world RAS mm (crosshair, contours, outlines).
layout(location = 0) in vec4 a_world;
uniform mat4 u_mvp;

void main()
{
  gl_Position = u_mvp * vec4(a_world.xyz, 1.0);
}
