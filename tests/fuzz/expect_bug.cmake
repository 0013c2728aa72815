# Runs the loader fuzzer with a fault planted in tdfx's code (TDFX_TEST_PLANT_FAULT=KIND@WHERE) and
# requires that it fails (exit 1) reporting that fault as a bug: the fuzzer can see crashes.
#   cmake -DFUZZER=... -DSEED=... -DOUT=... -DFAULT=KIND@WHERE -DEXPECT=regex [-DARGS=a,b] -P expect_bug.cmake
# (ARGS: more of the fuzzer's arguments, separated by commas)
string(REPLACE "," ";" ARGS "${ARGS}")
set(ENV{TDFX_TEST_PLANT_FAULT} "${FAULT}")
set(ENV{OMP_NUM_THREADS} 1)
execute_process(COMMAND "${FUZZER}" --iterations 8 --seed 7 ${ARGS} --out "${OUT}" "${SEED}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "the fuzzer with a planted ${FAULT} exited ${rc}, expected 1 (bugs found):\n${out}${err}")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "the fuzzer's report does not name the planted ${FAULT} (/${EXPECT}/):\n${out}${err}")
endif()
message(STATUS "the planted ${FAULT} was reported as a bug")
