# Read by ctest (TEST_INCLUDE_FILES): the FX parity cases that make_cases.py generated, or, in a
# build tree where the corpus was not made yet (`run-example.sh` builds the programs only), one
# case that fails saying so, so that `ctest -N` and `ctest` work in any configured tree.
if(EXISTS "@_fx_parity_tests@")
  include("@_fx_parity_tests@")
else()
  add_test(fx_parity.not_generated "@CMAKE_COMMAND@" -E echo
           "the FX parity corpus is not generated in this build tree: cmake --build . --target tdfx_fx_parity")
  set_tests_properties(fx_parity.not_generated PROPERTIES LABELS fx_parity WILL_FAIL ON)
endif()
