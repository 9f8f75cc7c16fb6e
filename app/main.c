/* main.c — the neurowarp desktop application: fills the method registry with every back end
 * of this build, then runs NwApplication (ui/), whose run panel reads the registry. Main
 * thread. */
#include "method_table.h"
#include "nw_application.h"

int main(int argc, char **argv)
{
  nw_methods_register_builtin();
  g_autoptr(NwApplication) app = nw_application_new();
  int status = g_application_run(G_APPLICATION(app), argc, argv);
  return status != 0 ? status : nw_application_get_exit_status(app);
}
