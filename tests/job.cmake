# Parameters, the job runner and the CPU "smooth" method (owner: job).
nw_add_test(test_params SOURCES test_params.c LABELS core)
nw_add_test(test_job SOURCES test_job.c LABELS core)
nw_add_test(test_ordered_sums SOURCES test_ordered_sums.c LABELS core)
nw_add_test(test_smooth_method SOURCES test_smooth_method.c LABELS core)
