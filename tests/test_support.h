#pragma once
// Helpers shared by the tests: fixture paths and exact tensor comparison.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "tdfx/model/model_file.h"
#include "tdfx/runtime/graph_module.h"
#include "tdfx/tensordict/tensordict.h"
#include "support/process_state.h"
#include "support/test_paths.h"

namespace tdfx::testing {

inline std::string fixture(const std::string& name) { return std::string(kFixturesDir) + "/" + name; }

/// A generated fixture, loaded and traced.
inline GraphModule traceFixture(const std::string& name) {
  return symbolicTrace(*loadModelFile(fixture(name)).module);
}

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

/// The message of the exception of type E that `fn` throws, or "(no error)".
template <typename E>
std::string errorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

/// A test fixture with a fresh scratch folder, removed afterwards.
class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("tdfx-" + std::string(info->test_suite_name()) + "-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  /// Writes `bytes` to a file in the folder and returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return path(name);
  }
  std::filesystem::path dir_;
};

/// Bitwise equality: same shape, dtype and bytes.
inline ::testing::AssertionResult bitwiseEqual(const at::Tensor& a, const at::Tensor& b) {
  if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type())
    return ::testing::AssertionFailure() << "shape/dtype differ: " << a.sizes() << " " << a.scalar_type() << " vs "
                                         << b.sizes() << " " << b.scalar_type();
  const at::Tensor ca = a.contiguous(), cb = b.contiguous();
  const size_t bytes = ca.numel() * ca.element_size();
  if (std::memcmp(ca.data_ptr(), cb.data_ptr(), bytes) != 0)
    return ::testing::AssertionFailure() << "values differ, max |a-b| = "
                                         << (ca.to(at::kDouble) - cb.to(at::kDouble)).abs().max().item<double>();
  return ::testing::AssertionSuccess();
}

/// Every leaf key of `expected` is in `actual` with bitwise-equal contents, and no extra keys.
inline ::testing::AssertionResult sameTensorDict(const TensorDict& expected, const TensorDict& actual) {
  const auto ek = expected.keys(true, true), ak = actual.keys(true, true);
  if (ek.size() != ak.size())
    return ::testing::AssertionFailure() << "key sets differ: " << keysToString(ek) << " vs " << keysToString(ak);
  for (const NestedKey& k : ek) {
    if (!actual.contains(k)) return ::testing::AssertionFailure() << "missing key " << keyRepr(k);
    auto r = bitwiseEqual(expected.get(k), actual.get(k));
    if (!r) return r << " at key " << keyRepr(k);
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tdfx::testing
