#pragma once
// Where the tests find what they read: the checkout, the generated fixtures, the zoo and the
// zygote probe. Defined in the build's generated test_paths.cpp rather than as -D definitions, so
// one checkout's absolute paths reach one small file, and every other test file compiles the same
// in any clone (a compiler cache shared by two clones hits on them).
namespace tdfx::testing {
extern const char* const kSourceDir;
extern const char* const kFixturesDir;
extern const char* const kZooDir;
extern const char* const kZygoteProbe;
}  // namespace tdfx::testing
