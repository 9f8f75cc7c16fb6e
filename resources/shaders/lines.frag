#version 330 core
// lines.frag — one colour for the whole draw.
uniform vec4 u_color;
out vec4 frag;

void main()
{
  frag = u_color;
}
