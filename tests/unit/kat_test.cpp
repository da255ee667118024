// Known-answer tests: the FIPS 197 and SP 800-38A example vectors in
// tests/data/kat, run through the public API (transform_memory on each engine,
// and ChunkCipher on its own) in the direction each record names. The files
// list every vector both ways, so encryption and decryption are both covered.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "paes/cipher.hpp"
#include "paes/engine.hpp"
#include "paes/mode.hpp"
#include "paes/plan.hpp"
#include "paes/secret.hpp"
#include "paes/transform.hpp"
#include "test_support.hpp"
#include "util/hex.hpp"

namespace {

using Bytes = std::vector<std::uint8_t>;
using Fields = std::map<std::string, std::string, std::less<>>;

// What the files hold, so a truncated or emptied file fails instead of
// passing on fewer vectors: FIPS 197 C.1-C.3 as cipher and inverse cipher;
// SP 800-38A F.1, F.2, F.4, F.5 (6 each) and F.3 (18: CFB1, CFB8, CFB128).
constexpr std::size_t kFips197Records = 6;
constexpr std::size_t kSp80038aRecords = 42;

struct KatRecord {
  std::string name;
  paes::Mode mode = paes::Mode::ecb;
  paes::Direction direction = paes::Direction::encrypt;
  paes::SecretBytes key;
  paes::Block iv{};
  Bytes plaintext;
  Bytes ciphertext;
};

// A record the loader can't use; caught in load_kat, which adds file and line.
struct Malformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string_view trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

std::string_view field(const Fields& fields, std::string_view name) {
  const auto it = fields.find(name);
  if (it == fields.end()) throw Malformed("missing field '" + std::string(name) + "'");
  return it->second;
}

paes::SecretBytes hex_field(const Fields& fields, std::string_view name) {
  auto bytes = paes::decode_hex(field(fields, name));
  if (!bytes || bytes->empty()) {
    throw Malformed("field '" + std::string(name) + "' is empty or not hex");
  }
  return std::move(*bytes);
}

Bytes to_bytes(const paes::SecretBytes& bytes) {
  return Bytes(bytes.data(), bytes.data() + bytes.size());
}

KatRecord parse_record(const Fields& fields) {
  // An unknown field is most likely a misspelt known one, which would
  // otherwise go unnoticed (e.g. a misspelt "iv" on an ECB-looking record).
  static constexpr std::string_view kKnownFields[] = {
      "name", "mode", "direction", "key", "iv", "plaintext", "ciphertext"};
  for (const auto& entry : fields) {
    if (std::ranges::find(kKnownFields, entry.first) == std::end(kKnownFields)) {
      throw Malformed("unknown field '" + entry.first + "'");
    }
  }

  KatRecord record;
  record.name = field(fields, "name");
  const auto mode = paes::parse_mode(field(fields, "mode"));
  if (!mode) throw Malformed("unknown mode '" + std::string(field(fields, "mode")) + "'");
  record.mode = *mode;

  const std::string_view direction = field(fields, "direction");
  if (direction == "encrypt") {
    record.direction = paes::Direction::encrypt;
  } else if (direction == "decrypt") {
    record.direction = paes::Direction::decrypt;
  } else {
    throw Malformed("direction must be encrypt or decrypt");
  }

  record.key = hex_field(fields, "key");
  if (record.key.size() != 16 && record.key.size() != 24 && record.key.size() != 32) {
    throw Malformed("key is not 16, 24 or 32 bytes");
  }

  if (record.mode == paes::Mode::ecb) {
    if (fields.contains("iv")) throw Malformed("an ecb record has no iv");
  } else {
    const paes::SecretBytes iv = hex_field(fields, "iv");
    if (iv.size() != paes::kBlockLen) throw Malformed("iv is not 16 bytes");
    std::copy_n(iv.data(), paes::kBlockLen, record.iv.begin());
  }

  record.plaintext = to_bytes(hex_field(fields, "plaintext"));
  record.ciphertext = to_bytes(hex_field(fields, "ciphertext"));
  if (record.plaintext.size() != record.ciphertext.size()) {
    throw Malformed("plaintext and ciphertext differ in length");
  }
  return record;
}

// Reads every record of tests/data/kat/<file_name> (format in the files'
// headers). Any problem is a test failure naming the file and line, and the
// load then returns no records, so the caller's count check stops the test
// rather than letting it pass on the vectors that did parse.
std::vector<KatRecord> load_kat(const std::string& file_name) {
  const std::string path = std::string(PAES_TEST_DATA_DIR) + "/kat/" + file_name;
  std::ifstream file(path);
  if (!file) {
    ADD_FAILURE() << "cannot open " << path;
    return {};
  }

  std::vector<KatRecord> records;
  bool malformed = false;
  Fields fields;
  std::size_t record_line = 0;
  const auto fail = [&](std::size_t line_number, const std::string& why) {
    ADD_FAILURE() << path << ":" << line_number << ": " << why;
    malformed = true;
  };
  const auto finish_record = [&] {
    try {
      records.push_back(parse_record(fields));
    } catch (const Malformed& error) {
      fail(record_line, error.what());
    }
    fields.clear();
  };

  std::string line;
  for (std::size_t line_number = 1; std::getline(file, line); ++line_number) {
    if (line.starts_with('#')) continue;
    const std::string_view text = trim(line);
    if (text.empty()) {
      if (!fields.empty()) finish_record();
      continue;
    }
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) {
      fail(line_number, "expected 'field = value'");
      continue;
    }
    if (fields.empty()) record_line = line_number;
    const std::string name(trim(text.substr(0, equals)));
    if (!fields.emplace(name, trim(text.substr(equals + 1))).second) {
      fail(line_number, "field '" + name + "' given twice");
    }
  }
  if (!fields.empty()) finish_record();

  if (malformed) return {};
  return records;
}

paes::CipherSpec spec_for(const KatRecord& record) {
  paes::CipherSpec spec;
  spec.mode = record.mode;
  spec.direction = record.direction;
  spec.key = record.key.clone();
  spec.iv = record.iv;
  spec.padding = false;  // the vectors are raw blocks, not PKCS#7 messages
  return spec;
}

using Transform = std::function<std::size_t(const paes::CipherSpec&, Bytes& out, const Bytes& in)>;

// Transforms the record's input one way and compares the output with the
// record's other side. An exception fails only this record, so the remaining
// vectors still run and report under their own names.
void expect_known_answer(const KatRecord& record, const std::string& path,
                         const Transform& transform) {
  SCOPED_TRACE(record.name + " through " + path);
  const bool encrypt = record.direction == paes::Direction::encrypt;
  const Bytes& in = encrypt ? record.plaintext : record.ciphertext;
  const Bytes& expected = encrypt ? record.ciphertext : record.plaintext;

  Bytes out(in.size() + paes::kBlockLen);
  try {
    const std::size_t written = transform(spec_for(record), out, in);
    // Never grow the buffer on a bogus length; the comparison below shows it.
    out.resize(std::min(written, out.size()));
  } catch (const std::exception& error) {
    ADD_FAILURE() << "threw: " << error.what();
    return;
  }
  EXPECT_EQ(paes::encode_hex(out), paes::encode_hex(expected));
}

paes::TransformOptions engine_options(const std::string& backend, paes::EngineKind engine, unsigned threads,
                                      std::uint64_t chunk_len) {
  paes::TransformOptions options;
  options.backend.name = backend;
  options.engine = engine;
  options.threads = threads;
  options.chunk_len = chunk_len;
  return options;
}

void check_transform_memory(const std::string& backend, const std::vector<KatRecord>& records) {
  // Every engine must give the standard's bytes. 16-byte chunks put each block
  // of a vector in its own chunk, so each block of a parallel mode starts from
  // the state its chunk's plan gives it, and the sequential ones stream block
  // by block. (A vector is at most 64 bytes: the threads engine runs it on
  // one worker, the calling thread, as a job runs one worker per MiB of
  // input. Several workers at once are the oracle tests' MiB sizes.)
  struct EngineSetup {
    const char* label;
    paes::TransformOptions options;
  };
  const EngineSetup setups[] = {
      {"transform_memory (serial)",
       engine_options(backend, paes::EngineKind::serial, 1, paes::ChunkPlan::kDefaultChunkLen)},
      {"transform_memory (serial, 16-byte pieces)",
       engine_options(backend, paes::EngineKind::serial, 1, 16)},
      {"transform_memory (threads engine given 2 threads, 16-byte chunks)",
       engine_options(backend, paes::EngineKind::threads, 2, 16)},
  };
  for (const EngineSetup& setup : setups) {
    for (const KatRecord& record : records) {
      expect_known_answer(
          record, setup.label, [&](const paes::CipherSpec& spec, Bytes& out, const Bytes& in) {
            return static_cast<std::size_t>(paes::transform_memory(spec, out, in, setup.options));
          });
    }
  }
}

void check_chunk_cipher(const std::string& backend, const std::vector<KatRecord>& records) {
  for (const KatRecord& record : records) {
    expect_known_answer(record, "ChunkCipher",
                        [&](const paes::CipherSpec& spec, Bytes& out, const Bytes& in) {
                          paes::ChunkCipher cipher(spec, {backend});
                          cipher.begin(spec.iv);
                          return cipher.update(out.data(), in.data(), in.size(),
                                               /*final_piece=*/true);
                        });
  }
}

// Each vector file through both paths, on each backend (the modes a backend
// doesn't run go to OpenSSL, as in a real job).
class KatTest : public ::testing::TestWithParam<std::string> {};

// Every record of vector file `name`, which holds `count`, through `check`
// on the test's backend; a file short of records stops there.
void check_file(const std::string& backend, const std::string& name, std::size_t count,
                void (*check)(const std::string&, const std::vector<KatRecord>&)) {
  const auto records = load_kat(name);
  ASSERT_EQ(records.size(), count);
  check(backend, records);
}

TEST_P(KatTest, Fips197AppendixCThroughTransformMemory) {
  check_file(GetParam(), "fips197_appendix_c.txt", kFips197Records, check_transform_memory);
}

TEST_P(KatTest, Fips197AppendixCThroughChunkCipher) {
  check_file(GetParam(), "fips197_appendix_c.txt", kFips197Records, check_chunk_cipher);
}

TEST_P(KatTest, Sp80038aThroughTransformMemory) {
  check_file(GetParam(), "sp800_38a.txt", kSp80038aRecords, check_transform_memory);
}

TEST_P(KatTest, Sp80038aThroughChunkCipher) {
  check_file(GetParam(), "sp800_38a.txt", kSp80038aRecords, check_chunk_cipher);
}

std::string backend_param_name(const ::testing::TestParamInfo<std::string>& param) {
  return paes::test::backend_test_name(param.param);
}

INSTANTIATE_TEST_SUITE_P(EachBackend, KatTest, ::testing::ValuesIn(paes::test::available_backends()),
                         backend_param_name);

}  // namespace
