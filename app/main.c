/* main.c — the neurowarp desktop application: fills the method registry with every back end
 * of this build, then runs NwApplication (ui/), whose run panel reads the registry. Main
 * thread. */
#include <locale.h>

#include "method_table.h"
#include "nw_application.h"

int main(int argc, char **argv)
{
  /* Before GApplication parses the options (gtk_init, which would do it, comes later): the
   * usage then reads "[OPTION…]" in a UTF-8 locale instead of "[OPTION?]". */
  setlocale(LC_ALL, "");
  nw_methods_register_builtin();
  g_autoptr(NwApplication) app = nw_application_new();
  int status = g_application_run(G_APPLICATION(app), argc, argv);
  return status != 0 ? status : nw_application_get_exit_status(app);
}
