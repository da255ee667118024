// The sealed format's 2^32-segment limit where a length can't tell it: a
// stream, whose end is found only by reading. Segment 2^32 would be sealed
// with segment 0's nonce under the same key, so it must be refused before any
// worker sees it, in both directions, and the worker itself must refuse an
// index it would otherwise truncate to 32 bits. Reaching index 2^32 for real
// takes ~107 GB of stdin, so a job that starts its indices just below the
// limit stands in for the first 2^32 - 2 segments.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "engine/feed.hpp"
#include "engine/pipeline.hpp"
#include "format/sealed_format.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

constexpr std::uint32_t kSegmentLen = 41;  // AES-128: 1 plaintext byte in segment 0, 25 after

SecretBytes test_key() {
  const auto bytes = test::random_bytes(16, 7);
  return SecretBytes(bytes.data(), bytes.size());
}

// A SegmentJob whose chunk i is the inner job's chunk `first + i`: the
// geometry and the limit of segments far into a stream, without the stream.
// The chunk keeps the index i the engines count in (their order starts at 0).
class LateSegments final : public Job {
 public:
  LateSegments(const Job& inner, std::uint64_t first) : inner_(inner), first_(first) {}
  bool parallel() const override { return inner_.parallel(); }
  std::size_t lookback_len() const override { return inner_.lookback_len(); }
  std::uint64_t in_offset(std::uint64_t i) const override { return inner_.in_offset(first_ + i); }
  std::uint64_t nominal_in_len(std::uint64_t i) const override { return inner_.nominal_in_len(first_ + i); }
  Chunk chunk(std::uint64_t i, std::uint64_t len, bool last) const override {
    Chunk c = inner_.chunk(first_ + i, len, last);
    c.index = i;
    return c;
  }
  std::size_t out_capacity(const Chunk& c) const override { return inner_.out_capacity(c); }
  std::uint64_t chunk_count(std::uint64_t) const override { return 0; }  // not used by a stream
  std::unique_ptr<ChunkWorker> make_worker() const override { return inner_.make_worker(); }
  SecretBytes ticket() const override { return inner_.ticket(); }

 private:
  const Job& inner_;
  std::uint64_t first_;
};

// A file of `len` bytes read as a stream, as paes reads stdin.
class StreamOf {
 public:
  explicit StreamOf(std::size_t len) : file_(std::tmpfile()) {
    const auto bytes = test::random_bytes(len, 11);
    EXPECT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), file_), bytes.size());
    std::fflush(file_);
    std::rewind(file_);
  }
  ~StreamOf() { std::fclose(file_); }
  StreamReader reader() { return StreamReader(fileno(file_), "stdin"); }

 private:
  std::FILE* file_;
};

class Recorder final : public ChunkDrain {
 public:
  void put(Slot& slot) override { indices.push_back(slot.chunk.index); }
  std::vector<std::uint64_t> indices;
};

TEST(SegmentLimit, ChunkIndexTwoToThe32IsRefusedInBothDirections) {
  const SecretBytes key = test_key();
  for (const Direction d : {Direction::encrypt, Direction::decrypt}) {
    const SegmentJob job(d, 16, kSegmentLen, key, NoncePrefix{});
    EXPECT_NO_THROW(job.chunk(kMaxSegments - 1, 10, true));
    EXPECT_THROW(job.chunk(kMaxSegments, 10, false), Error);
    EXPECT_THROW(job.chunk(kMaxSegments + 5, 10, true), Error);
  }
}

TEST(SegmentLimit, WorkerRefusesAnIndexItWouldTruncate) {
  const SecretBytes key = test_key();
  const SegmentJob job(Direction::encrypt, 16, kSegmentLen, key, NoncePrefix{});
  const auto worker = job.make_worker();
  std::vector<std::uint8_t> buffer(64, 0x5a);
  const Chunk past{kMaxSegments, 0, 25, 0, false};
  EXPECT_THROW(worker->transform(past, buffer.data(), buffer.data()), Error);
}

TEST(SegmentLimit, StreamFeedStopsAtTheLimitBeforeReadingOn) {
  const SecretBytes key = test_key();
  for (const Direction d : {Direction::encrypt, Direction::decrypt}) {
    const SegmentJob inner(d, 16, kSegmentLen, key, NoncePrefix{});
    const LateSegments job(inner, kMaxSegments - 2);
    // Three full segments and more: the third has index 2^32.
    StreamOf input(4 * inner.nominal_in_len(1));
    StreamReader reader = input.reader();
    StreamFeed feed(job, reader);
    Slot slot;
    ASSERT_TRUE(feed.next(slot));  // segment 2^32 - 2
    ASSERT_TRUE(feed.next(slot));  // segment 2^32 - 1, not the last
    EXPECT_FALSE(slot.chunk.last);
    EXPECT_THROW(feed.next(slot), Error);
  }
}

TEST(SegmentLimit, SealingAStreamStopsAtTheLimit) {
  const SecretBytes key = test_key();
  const SegmentJob inner(Direction::encrypt, 16, kSegmentLen, key, NoncePrefix{});
  const LateSegments job(inner, kMaxSegments - 2);
  StreamOf input(10 * inner.nominal_in_len(1));
  StreamReader reader = input.reader();
  StreamFeed feed(job, reader);
  Recorder drain;
  try {
    run_pipeline(job, feed, drain, 4, nullptr);
    ADD_FAILURE() << "a stream of more than 2^32 segments was sealed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("2^32 segments"), std::string::npos) << e.what();
  }
  // At most the two segments below the limit were written (the error may
  // stop the writer before it reaches them).
  EXPECT_LE(drain.indices.size(), 2u);
}

}  // namespace
}  // namespace paes
