// Compiled once with the precompiled header every core layer reuses (see core/CMakeLists.txt).
