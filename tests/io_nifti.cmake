# NIfTI-1/2 images and displacement fields: round trips, bad input, and an independent
# reader (nibabel) over files the C side writes. Owner: nifti.
nw_add_test(test_io_nifti SOURCES test_io_nifti.c LIBS nw_nifti LABELS unit io)
nw_add_test(test_io_bad_input SOURCES test_io_bad_input.c LIBS nw_nifti LABELS unit io)

# Independent reader: the C helper writes files, nibabel (system Python) checks them.
set(_nw_nifti_fixture_dir ${CMAKE_CURRENT_BINARY_DIR}/nifti_fixture)
nw_add_test(test_io_nifti_fixture SOURCES nifti_fixture_writer.c LABELS unit io)
set_property(TEST test_io_nifti_fixture APPEND PROPERTY
  ENVIRONMENT "NW_NIFTI_FIXTURE_DIR=${_nw_nifti_fixture_dir}")
set_tests_properties(test_io_nifti_fixture PROPERTIES FIXTURES_SETUP nifti_fixture)
if(NW_PYTHON3)
  add_test(NAME test_io_nifti_nibabel
    COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/nifti_nibabel_check.py
            ${_nw_nifti_fixture_dir})
  set_tests_properties(test_io_nifti_nibabel PROPERTIES FIXTURES_REQUIRED nifti_fixture SKIP_RETURN_CODE 77
    LABELS "unit;io")
  # elastix's transformix reads the ITK-convention field (skips when not installed).
  add_test(NAME test_io_nifti_transformix
    COMMAND ${NW_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/nifti_transformix_check.py
            ${_nw_nifti_fixture_dir})
  set_tests_properties(test_io_nifti_transformix PROPERTIES FIXTURES_REQUIRED nifti_fixture
    SKIP_RETURN_CODE 77 LABELS "unit;io")
endif()
