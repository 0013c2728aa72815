# Runs the loader fuzzer with a fault planted in the worker's loader path (TDFX_TEST_PLANT_FAULT)
# and requires that it fails (exit 1) reporting that fault as a bug: the fuzzer can see crashes.
#   cmake -DFUZZER=... -DSEED=... -DOUT=... -DFAULT=signal|exception -DEXPECT=regex -P expect_bug.cmake
set(ENV{TDFX_TEST_PLANT_FAULT} "${FAULT}")
set(ENV{OMP_NUM_THREADS} 1)
execute_process(COMMAND "${FUZZER}" --seconds 2 --seed 7 --out "${OUT}" "${SEED}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "the fuzzer with a planted ${FAULT} exited ${rc}, expected 1 (bugs found):\n${out}${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "the fuzzer's report does not name the planted ${FAULT} (/${EXPECT}/):\n${out}${err}")
endif()
message(STATUS "the planted ${FAULT} was reported as a bug")
