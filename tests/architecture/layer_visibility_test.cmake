# Checks that the build enforces the architecture of docs/architecture.md: each core layer sees
# the public headers of exactly the layers below it (and its own), so an include that points
# upwards does not compile. For each layer, the compiler is asked (__has_include, preprocessing
# only) with the include directories the layer's sources are compiled with.
# The compiler's own search path is left out (-nostdinc, and the implicit directories CMake drops
# from compile lines too): a tdfx installed into /usr (libtdfx-dev) is visible to every compile
# from there, and is not what the build enforces. Without this, an installed tdfx made every layer
# "see" every other one.
# Usage: cmake -DCXX=<compiler> -DINCLUDES_DIR=<dir with <layer>.includes> -DWORK=<dir>
#              -DIMPLICIT=<the compiler's implicit include directories> -P layer_visibility_test.cmake

cmake_minimum_required(VERSION 3.22)

# The architecture: each layer and the layers below it.
set(below_util "")
set(below_tensordict util)
set(below_nn tensordict util)
set(below_model nn tensordict util)
set(below_ir tensordict util)
set(below_trace ir nn tensordict util)
set(below_codegen ir tensordict util)
set(below_runtime codegen trace model ir nn tensordict util)
set(below_worker runtime codegen trace model ir nn tensordict util)
set(below_layout worker runtime codegen trace model ir nn tensordict util)
set(layers util tensordict nn model ir trace codegen runtime worker layout)
# One public header of each layer.
set(header_util tdfx/util/dtype.h)
set(header_tensordict tdfx/tensordict/tensordict.h)
set(header_nn tdfx/nn/td_module.h)
set(header_model tdfx/model/model_file.h)
set(header_ir tdfx/ir/graph.h)
set(header_trace tdfx/trace/symbolic_trace.h)
set(header_codegen tdfx/codegen/python_code.h)
set(header_runtime tdfx/runtime/graph_module.h)
set(header_worker tdfx/worker/model_worker.h)
set(header_layout tdfx/layout/view_graph.h)

file(MAKE_DIRECTORY "${WORK}")
set(implicit "")
foreach(dir IN LISTS IMPLICIT)
  get_filename_component(dir "${dir}" REALPATH)  # /usr/lib/../include is /usr/include
  list(APPEND implicit "${dir}")
endforeach()
set(failures "")
foreach(layer IN LISTS layers)
  file(READ "${INCLUDES_DIR}/${layer}.includes" dirs)
  string(STRIP "${dirs}" dirs)
  set(flags "")
  foreach(dir IN LISTS dirs)
    get_filename_component(dir "${dir}" REALPATH)
    if(NOT dir IN_LIST implicit)
      list(APPEND flags "-I${dir}")
    endif()
  endforeach()
  set(probe "")
  foreach(other IN LISTS layers)
    if(other STREQUAL layer OR other IN_LIST below_${layer})
      string(APPEND probe "#if !__has_include(\"${header_${other}}\")\nLAYER_HIDDEN ${other}\n#endif\n")
    else()
      string(APPEND probe "#if __has_include(\"${header_${other}}\")\nLAYER_VISIBLE ${other}\n#endif\n")
    endif()
  endforeach()
  file(WRITE "${WORK}/${layer}.cpp" "${probe}")
  execute_process(COMMAND "${CXX}" -std=c++17 -nostdinc -nostdinc++ -E -P ${flags} "${WORK}/${layer}.cpp"
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "preprocessing the probe of ${layer} failed: ${err}")
  endif()
  string(REGEX MATCHALL "LAYER_(HIDDEN|VISIBLE) [a-z]+" found "${out}")
  foreach(f IN LISTS found)
    string(REPLACE "LAYER_HIDDEN " "does not see the layer below it: " f "${f}")
    string(REPLACE "LAYER_VISIBLE " "sees a layer that is not below it: " f "${f}")
    list(APPEND failures "${layer} ${f}")
  endforeach()
  list(LENGTH below_${layer} n)
  message(STATUS "${layer}: sees itself and ${n} layer(s) below, nothing else")
endforeach()
if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "the build does not enforce the layers:\n  ${text}")
endif()
