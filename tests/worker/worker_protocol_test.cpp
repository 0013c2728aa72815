// The worker's frames with bulk bytes after the document (cborWithTail): what a reader is given,
// and what it refuses from a worker it does not trust.
#include <gtest/gtest.h>

#include "tdfx/error.h"
#include "worker/worker_protocol.h"

namespace tdfx::worker {
namespace {

TEST(WorkerProtocol, BulkBytesFollowTheDocumentAsTheyAre) {
  const std::vector<uint8_t> bulk{0, 1, 2, 255, 254};
  const std::vector<uint8_t> frame = cborWithTail({{"ok", true}, {"values", {1, 5}}}, bulk);
  Tail tail;
  const nlohmann::json doc = parseCborWithTail(frame, tail);
  EXPECT_TRUE(doc.at("ok").get<bool>());
  EXPECT_EQ(doc.at("tail_bytes").get<size_t>(), bulk.size());
  ASSERT_EQ(tail.size, bulk.size());
  EXPECT_EQ(std::vector<uint8_t>(tail.data, tail.data + tail.size), bulk);
  EXPECT_EQ(*tail.at(3, 2, "x"), 255);
  // A plain frame reads with an empty tail.
  const nlohmann::json plain = parseCborWithTail(nlohmann::json::to_cbor(nlohmann::json{{"ok", false}}), tail);
  EXPECT_FALSE(plain.at("ok").get<bool>());
  EXPECT_EQ(tail.size, 0u);
}

TEST(WorkerProtocol, ARangePastTheTailOrATailLongerThanTheFrameIsRefused) {
  Tail tail;
  (void)parseCborWithTail(cborWithTail({{"ok", true}}, {7, 7, 7, 7}), tail);
  try {
    (void)tail.at(2, 3, "parameter fc.weight");
    FAIL() << "a range past the tail was read";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "the model worker sent parameter fc.weight at bytes 2+3 of a tail of 4");
  }
  EXPECT_THROW((void)tail.at(UINT64_MAX, 2, "x"), Error);  // no wrap-around
  const std::vector<uint8_t> lying = nlohmann::json::to_cbor(nlohmann::json{{"ok", true}, {"tail_bytes", 1000}});
  try {
    (void)parseCborWithTail(lying, tail);
    FAIL() << "a tail longer than its frame was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("says it ends with 1000"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tdfx::worker
