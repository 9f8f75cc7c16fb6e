#version 330 core
// sprite.frag — premultiplied RGBA (cairo's layout, uploaded as BGRA).
in vec2 v_tc;
uniform sampler2D u_image;
out vec4 frag;

void main()
{
  frag = texture(u_image, v_tc);
}
