# Unbiased viscous-fluid registration (CPU reference; issue 14). Owner: fluid.
nw_add_test(test_fluid SOURCES test_fluid.c LABELS accuracy fluid)
