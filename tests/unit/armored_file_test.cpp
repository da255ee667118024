// Armor at offsets (io/armored_file): the text an ArmoredSink makes of writes
// in any order, of any size, from several threads at once, is ArmorEncoder's
// to the byte; an ArmoredSource reads ArmorEncoder's text (in LF or CRLF
// lines) at any offsets, and of a damaged text it refuses exactly what
// ArmorDecoder refuses (or leaves the text to ArmorDecoder); the endpoints
// take the offsets' path for files.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io/armored_file.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"
#include "util/armor.hpp"

namespace paes {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes encoder_text(Armor armor, std::span<const std::uint8_t> bytes) {
  ArmorEncoder encoder(armor);
  Bytes text;
  encoder.encode(bytes, text);
  encoder.finish(text);
  return text;
}

// `text` with its first `lines` lines (all: every line) ending in "\r\n", as a text channel may make them.
Bytes with_crlf(const Bytes& text, std::size_t lines = SIZE_MAX) {
  Bytes crlf;
  for (const std::uint8_t c : text) {
    if (c == '\n' && lines != 0) {
      crlf.push_back('\r');
      --lines;
    }
    crlf.push_back(c);
  }
  return crlf;
}

// The bytes ArmorDecoder gives for `text`, or nothing where it refuses it.
std::optional<Bytes> decoder_bytes(std::span<const std::uint8_t> text) {
  try {
    ArmorDecoder decoder(Armor::paes, "test");
    Bytes bytes;
    decoder.decode(text, bytes);
    decoder.finish(bytes);
    return bytes;
  } catch (const Error&) {
    return std::nullopt;
  }
}

// Pieces [offset, end) that cover `n` bytes, of 1 to `most` bytes each.
std::vector<std::pair<std::size_t, std::size_t>> pieces_of(std::size_t n, std::size_t most, std::mt19937& rng) {
  std::vector<std::pair<std::size_t, std::size_t>> pieces;
  for (std::size_t at = 0; at < n;) {
    const std::size_t len = std::min<std::size_t>(n - at, 1 + rng() % most);
    pieces.emplace_back(at, at + len);
    at += len;
  }
  return pieces;
}

// What an ArmoredSink writes for `bytes` given as `pieces`, in their order,
// from `threads` threads taking them in turn.
Bytes sink_text(Armor armor, const Bytes& bytes, const std::vector<std::pair<std::size_t, std::size_t>>& pieces,
                std::size_t text_len, unsigned threads) {
  Bytes text(text_len, 0);
  MemorySink memory(text);
  ArmoredSink sink(memory, armor);
  std::vector<std::thread> team;
  for (unsigned t = 0; t < threads; ++t) {
    team.emplace_back([&, t] {
      for (std::size_t i = t; i < pieces.size(); i += threads) {
        const auto [from, to] = pieces[i];
        sink.write_at(from, std::span(bytes).subspan(from, to - from));
      }
    });
  }
  for (auto& thread : team) thread.join();
  sink.finish();
  return text;
}

TEST(ArmoredSink, WritesInAnyOrderGiveTheEncodersText) {
  std::mt19937 rng(21);
  for (const Armor armor : {Armor::paes, Armor::age, Armor::openssl}) {
    for (const std::size_t n : {0u, 1u, 2u, 3u, 4u, 47u, 48u, 49u, 95u, 96u, 97u, 1000u, 100003u}) {
      const Bytes bytes = test::random_bytes(n, rng);
      const Bytes want = encoder_text(armor, bytes);
      ASSERT_EQ(want.size(), armor_begin_line(armor).size() + armor_lines_len(n) + armor_end_line(armor).size());
      for (const std::size_t most : {1u, 2u, 5u, 48u, 1000u, 70000u}) {
        auto pieces = pieces_of(n, most, rng);
        EXPECT_EQ(sink_text(armor, bytes, pieces, want.size(), 1), want) << n << " bytes in pieces up to " << most;
        std::shuffle(pieces.begin(), pieces.end(), rng);
        EXPECT_EQ(sink_text(armor, bytes, pieces, want.size(), 1), want)
            << n << " bytes in pieces up to " << most << ", shuffled";
        EXPECT_EQ(sink_text(armor, bytes, pieces, want.size(), 4), want)
            << n << " bytes in pieces up to " << most << ", shuffled, 4 threads";
      }
    }
  }
}

TEST(ArmoredSink, AByteNeverWrittenIsAnError) {
  for (const std::size_t missing : {0u, 1u, 2u, 3u, 50u}) {
    const Bytes bytes(100, 'x');
    Bytes text(400);
    MemorySink memory(text);
    ArmoredSink sink(memory, Armor::paes);
    sink.write_at(0, std::span(bytes).first(missing));
    sink.write_at(missing + 1, std::span(bytes).subspan(missing + 1));
    EXPECT_THROW(sink.finish(), Error) << "byte " << missing << " missing";
  }
}

std::optional<Bytes> source_bytes(std::span<const std::uint8_t> text, std::size_t most, std::mt19937& rng) {
  MemorySource memory(text);
  const auto source = ArmoredSource::open(memory, "test");
  if (!source) return std::nullopt;
  Bytes bytes(static_cast<std::size_t>(source->size()));
  for (const auto& [from, to] : pieces_of(bytes.size(), most, rng)) {
    source->read_at(from, std::span(bytes).subspan(from, to - from));
  }
  return bytes;
}

TEST(ArmoredSource, ReadsTheEncodersTextAtAnyOffsets) {
  std::mt19937 rng(22);
  for (const Armor armor : {Armor::paes, Armor::age}) {
    for (const std::size_t n : {1u, 2u, 3u, 47u, 48u, 49u, 95u, 96u, 97u, 1000u, 300007u}) {
      const Bytes bytes = test::random_bytes(n, rng);
      const Bytes text = encoder_text(armor, bytes);
      for (const std::size_t most : {1u, 7u, 48u, 49u, 5000u, 400000u}) {
        EXPECT_EQ(source_bytes(text, most, rng), bytes) << n << " bytes in pieces up to " << most;
        EXPECT_EQ(source_bytes(with_crlf(text), most, rng), bytes) << n << " bytes, CRLF, in pieces up to " << most;
      }
      // Text channels' changes that ArmorDecoder takes, and so the source.
      for (const std::string_view after : {"", "\n \t\r\n\n", "\r"}) {
        Bytes changed = text;
        changed.pop_back();  // the END line's '\n'
        changed.insert(changed.end(), after.begin(), after.end());
        EXPECT_EQ(source_bytes(changed, 4096, rng), bytes) << n << " bytes, '" << after << "' after END";
      }
      Bytes leading(1024, ' ');
      leading.insert(leading.end(), text.begin(), text.end());
      EXPECT_EQ(source_bytes(leading, 4096, rng), bytes);
    }
  }
}

TEST(ArmoredSource, ThreadsReadAtOnce) {
  std::mt19937 rng(23);
  const Bytes bytes = test::random_bytes(3 << 20, rng);
  const Bytes text = encoder_text(Armor::paes, bytes);
  MemorySource memory(text);
  const auto source = ArmoredSource::open(memory, "test");
  ASSERT_TRUE(source);
  Bytes got(bytes.size());
  const auto pieces = pieces_of(bytes.size(), 1 << 20, rng);
  std::vector<std::thread> team;
  for (unsigned t = 0; t < 4; ++t) {
    team.emplace_back([&, t] {
      for (std::size_t i = t; i < pieces.size(); i += 4) {
        source->read_at(pieces[i].first, std::span(got).subspan(pieces[i].first, pieces[i].second - pieces[i].first));
      }
    });
  }
  for (auto& thread : team) thread.join();
  EXPECT_EQ(got, bytes);
}

TEST(ArmoredSource, OtherLayoutsAreLeftToTheDecoder) {
  std::mt19937 rng(24);
  const Bytes bytes = test::random_bytes(500, rng);
  const Bytes text = encoder_text(Armor::paes, bytes);
  // Lines that don't all end alike: ArmorDecoder takes them one by one.
  for (const std::size_t crlf_lines : {1u, 3u, 11u}) {
    const Bytes mixed = with_crlf(text, crlf_lines);
    MemorySource memory(mixed);
    EXPECT_FALSE(ArmoredSource::open(memory, "test")) << crlf_lines;
    EXPECT_EQ(decoder_bytes(mixed), bytes) << crlf_lines;
  }
  const Bytes openssl = encoder_text(Armor::openssl, bytes);
  MemorySource openssl_memory(openssl);
  EXPECT_FALSE(ArmoredSource::open(openssl_memory, "test"));
}

// Every change of one character (every byte value at every place), every
// character left out and every one doubled: where the source takes the text
// at all, it gives what ArmorDecoder gives, and refuses what it refuses.
TEST(ArmoredSource, RefusesExactlyWhatTheDecoderRefuses) {
  std::mt19937 rng(25);
  for (const std::size_t n : {1u, 100u, 480u, 481u}) {
    const Bytes bytes = test::random_bytes(n, rng);
    // 481 bytes in CRLF lines, the rest in LF lines.
    const Bytes text = n == 481 ? with_crlf(encoder_text(Armor::paes, bytes)) : encoder_text(Armor::paes, bytes);
    std::vector<Bytes> changed;
    for (std::size_t at = 0; at < text.size(); ++at) {
      for (int value = 0; value < 256; ++value) {
        if (value == text[at]) continue;
        changed.push_back(text);
        changed.back()[at] = static_cast<std::uint8_t>(value);
      }
      changed.push_back(text);
      changed.back().erase(changed.back().begin() + static_cast<std::ptrdiff_t>(at));
      changed.push_back(text);
      changed.back().insert(changed.back().begin() + static_cast<std::ptrdiff_t>(at), text[at]);
    }
    std::size_t taken = 0;
    for (const Bytes& damaged : changed) {
      std::optional<Bytes> read;
      bool refused = false;
      try {
        read = source_bytes(damaged, 1 + rng() % 64, rng);
        if (!read) continue;  // not the layout the source reads: the decoder's
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("bad armor"), std::string::npos) << e.what();
        refused = true;
      }
      ++taken;
      const std::optional<Bytes> want = decoder_bytes(damaged);
      const std::string shown(damaged.begin(), damaged.end());
      ASSERT_EQ(refused, !want.has_value()) << shown;
      if (!refused) {
        ASSERT_EQ(read, want) << shown;
      }
    }
    // Most changes of 10 lines fall in their 9 whole lines, which the source reads.
    if (n >= 480) {
      EXPECT_GT(taken, changed.size() / 2);
    }
  }
}

class ArmoredEndpointTest : public test::ScratchDirTest {
 protected:
  std::string write(const std::string& name, const Bytes& bytes) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                 static_cast<std::streamsize>(bytes.size()));
    return path;
  }
};

TEST_F(ArmoredEndpointTest, FilesOfArmorAreReadAndWrittenAtOffsets) {
  std::mt19937 rng(26);
  const Bytes bytes = test::random_bytes(5000, rng);
  const Bytes text = encoder_text(Armor::paes, bytes);
  InputEndpoint in(write("in.txt", text), true, Armor::paes);
  EXPECT_TRUE(in.armored());
  EXPECT_TRUE(in.readable_at_offsets());
  EXPECT_FALSE(in.random_access());
  EXPECT_FALSE(in.size());
  Bytes got(bytes.size() + 1);
  EXPECT_EQ(in.read_prefix(got), bytes.size());
  got.pop_back();
  EXPECT_EQ(got, bytes);

  InputEndpoint crlf(write("crlf.txt", with_crlf(text)), true, Armor::paes);
  EXPECT_TRUE(crlf.armored());
  EXPECT_TRUE(crlf.readable_at_offsets());
  InputEndpoint in_order(write("mixed.txt", with_crlf(text, 2)), true, Armor::paes);
  EXPECT_TRUE(in_order.armored());
  EXPECT_FALSE(in_order.readable_at_offsets());

  const std::string out_path = (dir_ / "out.txt").string();
  {
    OutputEndpoint out(out_path, {}, true, Armor::paes);
    EXPECT_TRUE(out.writable_at_offsets());
    EXPECT_FALSE(out.random_access());
    out.write_prefix(std::span(bytes).first(10));
    out.sink().write_at(1000, std::span(bytes).subspan(1000));
    out.sink().write_at(10, std::span(bytes).subspan(10, 990));
    out.commit();
  }
  std::ifstream written(out_path, std::ios::binary);
  EXPECT_EQ(Bytes(std::istreambuf_iterator<char>(written), {}), text);
  OutputEndpoint device("/dev/null", {}, true, Armor::paes);
  EXPECT_FALSE(device.writable_at_offsets());
}

}  // namespace
}  // namespace paes
