/* cli_mpi.h — MPI for neurowarp-cli (NW_HAVE_MPI builds; without MPI every call says there
 * is none): starting it when mpirun launched the process (a plain run stays without MPI:
 * no singleton start-up), ending it, and running the distributed metric's ranks over
 * MPI_COMM_WORLD or, without mpirun, the loopback transport (core/dmi_transport.h). Main
 * thread only: MPI is initialised for FUNNELED
 * use, and whatever runs on workers never calls it. */
#ifndef NW_CLI_MPI_H
#define NW_CLI_MPI_H

#include <glib.h>

#include "dmi_transport.h"

G_BEGIN_DECLS

/* TRUE when this build has MPI. */
gboolean nw_cli_mpi_built(void);
/* Under mpirun (Open MPI, MPICH/PMI, PMIx): MPI_Init_thread, and this rank and the size;
 * else rank 0 of 1 and MPI stays off. */
void nw_cli_mpi_init(int *argc, char ***argv, int *rank, int *size);
/* MPI_Finalize when init started MPI. */
void nw_cli_mpi_finish(void);
gboolean nw_cli_mpi_on(void);
/* fn as this process's rank: with MPI on, once over MPI_COMM_WORLD; else on loopback_ranks
 * simulated ranks (threads of the loopback transport). TRUE when fn returned TRUE on every
 * rank this process ran. */
gboolean nw_cli_mpi_run(int loopback_ranks, NwDmiRankFn fn, gpointer data);

G_END_DECLS

#endif
