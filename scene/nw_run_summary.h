/* nw_run_summary.h — what a run achieved, in words, for the Run page when a job ends: how
 * it ended, its iterations per level and its time, the final figures the method plots (NCC
 * and MSE with their values before the registration), folds, and Dice of the warped moving
 * labels against the fixed labels when both were given (with Dice before). Main thread. */
#ifndef NW_RUN_SUMMARY_H
#define NW_RUN_SUMMARY_H

#include "nw_run.h"

G_BEGIN_DECLS

/* Lines such as
 *   Finished: 30 iterations (levels 10 + 10 + 10) in 4.2 s on the CPU
 *   NCC 0.972 → 0.998 · MSE 95.1 → 7.42 · energy 7.42 · smallest det J 0.37 · no folds
 *   Dice 0.851 (before 0.712), mean over 95 labels
 * or NULL while the run has not ended (g_free). */
char *nw_run_summary_text(NwRun *r);

G_END_DECLS

#endif
