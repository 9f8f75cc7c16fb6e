/* main.c — the neurowarp desktop application: runs NwApplication (ui/). Main thread. */
#include "nw_application.h"

int main(int argc, char **argv)
{
  g_autoptr(NwApplication) app = nw_application_new();
  int status = g_application_run(G_APPLICATION(app), argc, argv);
  return status != 0 ? status : nw_application_get_exit_status(app);
}
