#pragma once
// torch's default CPU generator state, saved before one pass and restored before the next, so that
// both draw the same random numbers whether or not a seed was given.
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>

namespace tdfx::runtime {

inline at::Tensor saveRandomState() {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  return gen.get_state();
}

inline void restoreRandomState(const at::Tensor& state) {
  at::Generator gen = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.set_state(state);
}

}  // namespace tdfx::runtime
