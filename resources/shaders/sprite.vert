#version 330 core
// sprite.vert — an image placed in viewport pixels (top-left origin): labels, markers.
layout(location = 0) in vec4 a_pos;  // xy: pixel position, zw: texture coordinate
uniform vec2 u_viewport;             // width, height in pixels
out vec2 v_tc;

void main()
{
  v_tc = a_pos.zw;
  gl_Position = vec4(2.0 * a_pos.x / u_viewport.x - 1.0, 1.0 - 2.0 * a_pos.y / u_viewport.y, 0.0, 1.0);
}
