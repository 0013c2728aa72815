#include "tdfx/util/python_repr.h"

#include <gtest/gtest.h>

namespace tdfx {
namespace {

TEST(PythonRepr, StringsQuoteLikeCPython) {
  EXPECT_EQ(pythonStringRepr("input"), "'input'");
  EXPECT_EQ(pythonStringRepr("it's"), "\"it's\"");
  EXPECT_EQ(pythonStringRepr("say \"hi\""), "'say \"hi\"'");
  EXPECT_EQ(pythonStringRepr("it's \"q\""), "'it\\'s \"q\"'");
  EXPECT_EQ(pythonStringRepr("a\\b"), "'a\\\\b'");
  EXPECT_EQ(pythonStringRepr("tab\there\nnl\r"), "'tab\\there\\nnl\\r'");
  EXPECT_EQ(pythonStringRepr(std::string("\x01\x7f", 2)), "'\\x01\\x7f'");
  EXPECT_EQ(pythonStringRepr("ключ ü"), "'ключ ü'");
  EXPECT_EQ(pythonStringRepr("\xc2\xa0"), "'\\xa0'");          // no-break space is not printable
  EXPECT_EQ(pythonStringRepr("\xe2\x80\xa8"), "'\\u2028'");    // line separator
  EXPECT_EQ(pythonStringRepr("😀"), "'😀'");
  EXPECT_EQ(pythonStringRepr(""), "''");
}

TEST(PythonRepr, FloatsRoundTripShortest) {
  EXPECT_EQ(pythonFloatRepr(1.0), "1.0");
  EXPECT_EQ(pythonFloatRepr(0.5), "0.5");
  EXPECT_EQ(pythonFloatRepr(0.1), "0.1");
  EXPECT_EQ(pythonFloatRepr(-2.5), "-2.5");
  EXPECT_EQ(pythonFloatRepr(1e-05), "1e-05");
  EXPECT_EQ(pythonFloatRepr(0.0001), "0.0001");
  EXPECT_EQ(pythonFloatRepr(1e16), "1e+16");
  EXPECT_EQ(pythonFloatRepr(1234567890123456.0), "1234567890123456.0");
  EXPECT_EQ(pythonFloatRepr(1.5e300), "1.5e+300");
  EXPECT_EQ(pythonFloatRepr(-0.0), "-0.0");
  EXPECT_EQ(pythonFloatRepr(0.0), "0.0");
  EXPECT_EQ(pythonFloatRepr(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(pythonFloatRepr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(pythonFloatRepr(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(pythonFloatRepr(std::nan("")), "nan");
}

TEST(PythonRepr, NamesKeywordsBuiltins) {
  EXPECT_TRUE(isPythonIdentifier("fc1"));
  EXPECT_TRUE(isPythonIdentifier("_0"));
  EXPECT_FALSE(isPythonIdentifier("0"));
  EXPECT_FALSE(isPythonIdentifier("a-b"));
  EXPECT_FALSE(isPythonIdentifier(""));
  EXPECT_TRUE(isPythonKeyword("class"));
  EXPECT_FALSE(isPythonKeyword("input"));
  EXPECT_TRUE(isPythonBuiltin("input"));
  EXPECT_TRUE(isPythonBuiltin("sum"));
  EXPECT_TRUE(isPythonBuiltin("max"));
  EXPECT_FALSE(isPythonBuiltin("relu"));
}

}  // namespace
}  // namespace tdfx
