/* nw_error.c — see nw_error.h. */
#include "nw_error.h"

G_DEFINE_QUARK(nw-error-quark, nw_error)

void nw_error_prefix(GError **error, const char *what)
{
  if (error != NULL && *error != NULL && what != NULL)
    g_prefix_error(error, "%s: ", what);
}
