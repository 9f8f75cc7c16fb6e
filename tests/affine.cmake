# Affine registration (core/affine_*.c, core/sampler.c, core/cpu/affine_*.c). Owner: affine.
nw_add_test(test_affine_transform SOURCES test_affine_transform.c LABELS unit affine)
