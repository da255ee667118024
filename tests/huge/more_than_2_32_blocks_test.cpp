// More than 2^32 AES blocks (64 GiB) through the threads engine, with neither
// 64 GiB of disk nor of memory: the input is a virtual run of zero bytes, and
// the output sink keeps only a few windows, which are checked against OpenSSL
// started at the counter each window must have. The IV sits just below the
// 2^128 wrap, so the counter wraps at byte 2^35 and block 2^32 comes after it.
// For each cipher backend: ipsec-mb carries in the counter's low 32 bits
// only, and paes splits its work at every such wrap.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "cipher/oneshot.hpp"
#include "paes/engine.hpp"
#include "paes/plan.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

class ZeroSource final : public Source {
 public:
  explicit ZeroSource(std::uint64_t len) : len_(len) {}
  std::uint64_t size() const override { return len_; }
  void read_at(std::uint64_t offset, std::span<std::uint8_t> dst) override {
    ASSERT_LE(offset + dst.size(), len_) << "read past the end of the input";
    std::memset(dst.data(), 0, dst.size());
  }

 private:
  std::uint64_t len_;
};

// Keeps the output bytes that fall in its windows and counts every byte written.
class WindowSink final : public Sink {
 public:
  struct Window {
    std::uint64_t offset;
    std::vector<std::uint8_t> bytes;
  };
  explicit WindowSink(std::vector<Window> windows) : windows_(std::move(windows)) {}

  void write_at(std::uint64_t offset, std::span<const std::uint8_t> src) override {
    written_ += src.size();
    for (Window& w : windows_) {
      const std::uint64_t begin = std::max(offset, w.offset);
      const std::uint64_t end = std::min(offset + src.size(), w.offset + w.bytes.size());
      if (begin < end) std::memcpy(w.bytes.data() + (begin - w.offset), src.data() + (begin - offset), end - begin);
    }
  }
  const std::vector<Window>& windows() const { return windows_; }
  std::uint64_t written() const { return written_; }

 private:
  std::vector<Window> windows_;  // disjoint, and chunks are disjoint: no two threads touch a byte
  std::atomic<std::uint64_t> written_{0};
};

// The counter block `blocks` after `iv`: a 128-bit add as two 64-bit halves,
// independent of paes' own add_to_counter.
Block counter_after(const Block& iv, std::uint64_t blocks) {
  std::uint64_t high = 0, low = 0;
  for (std::size_t i = 0; i < 8; ++i) high = (high << 8) | iv[i];
  for (std::size_t i = 8; i < 16; ++i) low = (low << 8) | iv[i];
  const std::uint64_t sum = low + blocks;
  if (sum < low) ++high;  // carry; the high half wraps modulo 2^64, so the whole wraps at 2^128
  Block out{};
  for (std::size_t i = 0; i < 8; ++i) {
    out[7 - i] = static_cast<std::uint8_t>(high >> (8 * i));
    out[15 - i] = static_cast<std::uint8_t>(sum >> (8 * i));
  }
  return out;
}

class MoreThan2To32Blocks : public ::testing::TestWithParam<std::string> {};

TEST_P(MoreThan2To32Blocks, CtrThroughTheThreadsEngineMatchesOpenSslAcrossTheWrap) {
  constexpr std::uint64_t kBlocks = (std::uint64_t{1} << 32) + (std::uint64_t{1} << 16) + 3;
  constexpr std::uint64_t kLen = kBlocks * kBlockLen + 5;  // a partial last block too
  constexpr std::uint64_t kWindowLen = 4096;  // the last window runs to the end: 4101 bytes
  CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 2032);
  // 2^128 - 2^31: the counter wraps to zero at block 2^31, byte offset 2^35.
  spec.iv.fill(0xff);
  spec.iv[12] = 0x80;
  spec.iv[13] = spec.iv[14] = spec.iv[15] = 0x00;

  const std::uint64_t wrap = std::uint64_t{1} << 35;
  const std::uint64_t block_2_32 = std::uint64_t{1} << 36;
  std::vector<WindowSink::Window> windows;
  const std::uint64_t last = (kLen - kWindowLen) / kBlockLen * kBlockLen;
  for (std::uint64_t at : {std::uint64_t{0}, wrap - kWindowLen / 2, (std::uint64_t{1} << 32) - 48,
                           block_2_32 - kWindowLen / 2, last}) {
    windows.push_back({at, std::vector<std::uint8_t>(std::min(kWindowLen, kLen - at))});
  }
  const ChunkPlan plan(spec, std::uint64_t{4} << 20, BackendChoice{GetParam()});
  ZeroSource source(kLen);
  WindowSink sink(windows);
  const std::uint64_t out_len = make_engine(EngineKind::threads, 0)->run(plan, source, sink);
  ASSERT_EQ(out_len, kLen);
  ASSERT_EQ(sink.written(), kLen);

  for (const auto& w : sink.windows()) {
    SCOPED_TRACE("window at byte " + std::to_string(w.offset));
    ASSERT_EQ(w.offset % kBlockLen, 0u) << "the windows start on block boundaries";
    CipherSpec at_window = test::make_spec(Mode::ctr, Direction::encrypt, 128, 2032);
    at_window.iv = counter_after(spec.iv, w.offset / kBlockLen);
    const std::vector<std::uint8_t> zeros(w.bytes.size());
    EXPECT_EQ(w.bytes, openssl_oneshot(at_window, zeros));
  }
}

std::string backend_param_name(const ::testing::TestParamInfo<std::string>& param) {
  return test::backend_test_name(param.param);
}

INSTANTIATE_TEST_SUITE_P(EachBackend, MoreThan2To32Blocks, ::testing::ValuesIn(test::available_backends()),
                         backend_param_name);

}  // namespace
}  // namespace paes
