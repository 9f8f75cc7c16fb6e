#version 330 core
// field_lines.frag — grid and arrow colour; arrows shorter than u_min_mm vanish.
in float v_length_mm;
uniform vec4 u_color;
uniform float u_min_mm;
out vec4 frag;

void main()
{
  if (v_length_mm < u_min_mm)
    discard;
  frag = u_color;
}
