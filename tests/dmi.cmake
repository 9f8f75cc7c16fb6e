# Distributed mutual information (issue 16, core/dmi_*.c): the loopback transport's simulated
# ranks against the single-process metric, the decomposition and its messages.
nw_add_test(test_dmi SOURCES test_dmi.c LIBS nw_affine_testutil LABELS unit affine distributed)
