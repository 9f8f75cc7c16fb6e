/* fuzz_keyfile.c — libFuzzer harness: parameter key files (the CLI's --params and the GUI's
 * presets: GKeyFile + core/params.h, against the demons and smooth tables) and, with
 * NW_FUZZ_SESSION, session files (scene/nw_session.h, library nw_session: GLib only). Every
 * input must be taken or refused with a message: never a crash, a leak or undefined
 * behaviour (a value that becomes an integer must be whole and in range). */
#include <stdint.h>

#include "fuzz_file.h"
#include "method.h"
#include "method_table.h"
#include "params.h"
#ifdef NW_FUZZ_SESSION
#include "nw_session.h"
#endif

#ifndef NW_FUZZ_SESSION
static void params_from(const char *text, size_t size, const char *method)
{
  const NwMethodOps *ops = nw_method_lookup(method, NW_DEVICE_CPU, NULL);
  if (ops == NULL)
    abort();
  g_autoptr(NwParams) p = nw_params_new(ops->params, ops->n_params);
  g_autoptr(GKeyFile) kf = g_key_file_new();
  GError *error = NULL;
  if (g_key_file_load_from_data(kf, text, size, G_KEY_FILE_NONE, NULL) &&
      nw_params_from_key_file(p, kf, method, &error)) {
    for (int i = 0; i < p->n; i++) /* every value read must format (and be an int where one) */
      g_free(nw_params_format(p, i));
    nw_params_get_int(p, "iterations");
  }
  g_clear_error(&error);
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static gboolean registered;
  if (!registered)
    nw_methods_register_builtin(), registered = TRUE;
#ifdef NW_FUZZ_SESSION
  const char *path = nw_fuzz_write("x.ini", data, size);
  NwSession s = {0};
  GError *error = NULL;
  if (!nw_session_load(&s, path, &error))
    nw_fuzz_check_error(error, path);
  g_clear_error(&error);
  nw_session_clear(&s);
#else
  params_from((const char *)data, size, "demons");
  params_from((const char *)data, size, "smooth");
#endif
  return 0;
}
