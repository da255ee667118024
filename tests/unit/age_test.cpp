// age's building blocks against data made elsewhere: BIP-173's Bech32
// vectors, C2SP age.md's example key, files written by age 1.1.1 itself
// (tests/data/age/real) and C2SP CCTV's age header vectors
// (tests/data/age/cctv). Also strict base64, the refusals of recipients and
// identities (never quoting a secret), and recipients/identity files. Files
// sealed with paes itself are recipients_test.cpp's.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cipher/x25519.hpp"
#include "format/scrypt_stanza.hpp"
#include "format/stanza_header.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/age_keys.hpp"
#include "paes/error.hpp"
#include "paes/secret.hpp"
#include "test_support.hpp"
#include "util/base64.hpp"
#include "util/bech32.hpp"
#include "util/hex.hpp"

namespace paes {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kVersionLine = "age-encryption.org/v1\n";
constexpr std::size_t kPayloadNonceLen = 16;

std::string data_path(const std::string& relative) { return std::string(PAES_TEST_DATA_DIR) + "/" + relative; }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::span<const std::uint8_t> bytes_of(std::string_view text) {
  return {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()};
}

SecretBytes secret_of(std::string_view text) { return SecretBytes(bytes_of(text).data(), text.size()); }

std::string string_of(const SecretBytes& bytes) { return {reinterpret_cast<const char*>(bytes.data()), bytes.size()}; }

std::vector<std::uint8_t> from_hex(std::string_view hex) {
  const auto bytes = decode_hex(hex);
  if (!bytes) throw std::runtime_error("bad hex in test data: " + std::string(hex));
  return {bytes->data(), bytes->data() + bytes->size()};
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}
std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(separator, start);
    parts.emplace_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return parts;
    start = at + 1;
  }
}

// The tab-separated columns of tests/data/bech32's vector lines, with \xHH
// read as the one raw byte it stands for (see the files' headers).
std::vector<std::vector<std::string>> bech32_vectors(const std::string& file) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : split(read_text(data_path("bech32/" + file)), '\n')) {
    if (line.empty() || line.front() == '#') continue;
    std::vector<std::string> columns = split(line, '\t');
    std::string raw;
    for (std::size_t i = 0; i < columns[0].size(); ++i) {
      if (columns[0].compare(i, 2, "\\x") == 0) {
        raw.push_back(static_cast<char>(from_hex(columns[0].substr(i + 2, 2))[0]));
        i += 3;
      } else {
        raw.push_back(columns[0][i]);
      }
    }
    columns[0] = raw;
    rows.push_back(std::move(columns));
  }
  return rows;
}

// "key = value" lines under "[section]" headings (the part before any
// heading is section ""), values cut at a " #" comment.
std::map<std::string, std::map<std::string, std::string>> read_sections(const std::string& path) {
  std::map<std::string, std::map<std::string, std::string>> sections;
  std::string section;
  for (std::string line : split(read_text(path), '\n')) {
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    const std::size_t eq = line.find(" = ");
    std::string value = line.substr(eq + 3);
    value = value.substr(0, value.find(" #"));
    while (!value.empty() && value.back() == ' ') value.pop_back();
    sections[section][line.substr(0, eq)] = value;
  }
  return sections;
}

// age's ASCII armor (C2SP age.md, "ASCII armor"): standard padded base64 in
// lines of at most 64 columns between the BEGIN and END lines. Only what the
// vectors here need; nothing when the text is not armor.
std::optional<std::vector<std::uint8_t>> dearmor(std::string_view text) {
  const std::vector<std::string> lines = split(text, '\n');
  if (lines.empty() || lines.front() != "-----BEGIN AGE ENCRYPTED FILE-----") return std::nullopt;
  std::string joined;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i] == "-----END AGE ENCRYPTED FILE-----") {
      while (!joined.empty() && joined.back() == '=') joined.pop_back();
      return decode_base64(joined);
    }
    if (lines[i].size() > 64) return std::nullopt;
    joined += lines[i];
  }
  return std::nullopt;
}

std::optional<std::vector<std::uint8_t>> inflate_zlib(std::span<const std::uint8_t> in) {
  z_stream stream{};
  if (inflateInit(&stream) != Z_OK) return std::nullopt;
  stream.next_in = const_cast<Bytef*>(in.data());
  stream.avail_in = static_cast<uInt>(in.size());
  std::vector<std::uint8_t> out;
  constexpr std::size_t kStep = std::size_t{1} << 20;
  int rc = Z_OK;
  while (rc == Z_OK) {
    const std::size_t at = out.size();
    out.resize(at + kStep);
    stream.next_out = out.data() + at;
    stream.avail_out = static_cast<uInt>(kStep);
    rc = inflate(&stream, Z_NO_FLUSH);
    out.resize(at + kStep - stream.avail_out);
  }
  inflateEnd(&stream);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

// ---------------------------------------------------------------- Bech32

TEST(Bech32, Bip173ValidVectorsDecodeAndEncodeBack) {
  const auto rows = bech32_vectors("valid.txt");
  ASSERT_EQ(rows.size(), 7u);
  for (const auto& row : rows) {
    SCOPED_TRACE(row[0]);
    const auto decoded = bech32_decode(row[0]);
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->hrp, row[1]);
    EXPECT_EQ(encode_hex(decoded->data.view()), row[2] == "-" ? "" : row[2]);
    EXPECT_EQ(string_of(bech32_encode(decoded->hrp, decoded->data.view(), false)), lower(row[0]));
    EXPECT_EQ(string_of(bech32_encode(decoded->hrp, decoded->data.view(), true)), upper(row[0]));
  }
}

TEST(Bech32, Bip173InvalidVectorsAreRefused) {
  const auto rows = bech32_vectors("invalid.txt");
  ASSERT_EQ(rows.size(), 11u);
  for (const auto& row : rows) EXPECT_FALSE(bech32_decode(row[0]).has_value()) << row[0] << ": " << row[1];
}

// age drops BIP-173's 90-character limit (its post-quantum recipients are
// ~1,950 characters): the 91-character vector BIP-173 refuses decodes here.
TEST(Bech32, NoLengthLimitAsAge) {
  const auto rows = bech32_vectors("length_limit.txt");
  ASSERT_EQ(rows.size(), 3u);
  for (const auto& row : rows) {
    SCOPED_TRACE(row[0]);
    EXPECT_EQ(row[0].size(), std::stoul(row[1]));
    EXPECT_EQ(bech32_decode(row[0]).has_value(), row[3] == "valid");
  }
  const std::vector<std::uint8_t> long_data = test::random_bytes(1216, 7);
  const std::string text = string_of(bech32_encode("age1pq", long_data, false));
  EXPECT_GT(text.size(), 1900u);
  const auto decoded = bech32_decode(text);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->hrp, "age1pq");
  EXPECT_EQ(encode_hex(decoded->data.view()), encode_hex(long_data));
}

// BIP-173's reference encoder over raw 5-bit groups, independent of the
// library's: it can write the padding bits bech32_encode never writes.
std::string bech32_from_groups(const std::string& hrp, std::vector<std::uint8_t> groups) {
  const auto polymod = [](const std::vector<std::uint8_t>& values) {
    constexpr std::uint32_t kGen[5] = {0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3};
    std::uint32_t chk = 1;
    for (const std::uint8_t v : values) {
      const std::uint32_t b = chk >> 25;
      chk = ((chk & 0x1ffffff) << 5) ^ v;
      for (int i = 0; i < 5; ++i) chk ^= ((b >> i) & 1) ? kGen[i] : 0;
    }
    return chk;
  };
  std::vector<std::uint8_t> values;
  for (const char c : hrp) values.push_back(static_cast<std::uint8_t>(static_cast<unsigned char>(c) >> 5));
  values.push_back(0);
  for (const char c : hrp) values.push_back(static_cast<std::uint8_t>(c & 31));
  values.insert(values.end(), groups.begin(), groups.end());
  values.insert(values.end(), 6, 0);
  const std::uint32_t chk = polymod(values) ^ 1;
  for (int i = 0; i < 6; ++i) groups.push_back(static_cast<std::uint8_t>((chk >> (5 * (5 - i))) & 31));
  std::string out = hrp + "1";
  for (const std::uint8_t g : groups) out += "qpzry9x8gf2tvdw0s3jn54khce6mua7l"[g];
  return out;
}

TEST(Bech32, PaddingBitsMustBeFewAndZero) {
  // Two groups are 10 bits: one byte and 2 padding bits.
  const std::string canonical = bech32_from_groups("a", {0b00011, 0b11100});
  EXPECT_EQ(canonical, string_of(bech32_encode("a", std::vector<std::uint8_t>{0x1f}, false)));
  const auto decoded = bech32_decode(canonical);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(encode_hex(decoded->data.view()), "1f");
  EXPECT_FALSE(bech32_decode(bech32_from_groups("a", {0b00011, 0b11101})).has_value());  // padding not zero
  EXPECT_FALSE(bech32_decode(bech32_from_groups("a", {0b00011, 0b11110})).has_value());
  EXPECT_FALSE(bech32_decode(bech32_from_groups("a", {0})).has_value());  // 5 padding bits, no byte
  EXPECT_FALSE(bech32_decode(bech32_from_groups("a", {0, 0, 0})).has_value());  // 1 byte, 7 bits over
  EXPECT_TRUE(bech32_decode(bech32_from_groups("a", {0, 0, 0, 0})).has_value());  // 2 bytes, 4 zero bits
  EXPECT_FALSE(bech32_decode(bech32_from_groups("a", {0, 0, 0, 1})).has_value());
  EXPECT_TRUE(bech32_decode(bech32_from_groups("a", {0, 0, 0, 0, 0, 0, 0, 0})).has_value());  // 5 bytes
}

TEST(Bech32, EverySubstitutionBreaksTheChecksum) {
  const std::string text = format_age_recipient(x25519_public_key(secret_of(std::string(32, 'B'))));
  ASSERT_TRUE(bech32_decode(text).has_value());
  for (std::size_t i = 4; i < text.size(); ++i) {
    for (const char c : std::string_view("qpzry9x8gf2tvdw0s3jn54khce6mua7l")) {
      if (c == text[i]) continue;
      std::string changed = text;
      changed[i] = c;
      EXPECT_FALSE(bech32_decode(changed).has_value()) << changed;
    }
  }
}

// ---------------------------------------------------------------- Base64

TEST(Base64, CanonicalRoundTripsAgainstOpenSsl) {
  const std::vector<std::pair<std::string, std::string>> rfc4648 = {
      {"", ""},         {"f", "Zg"},         {"fo", "Zm8"},         {"foo", "Zm9v"},
      {"foob", "Zm9vYg"}, {"fooba", "Zm9vYmE"}, {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : rfc4648) {
    EXPECT_EQ(encode_base64(bytes_of(plain)), encoded);
    const auto decoded = decode_base64(encoded);
    ASSERT_TRUE(decoded.has_value()) << encoded;
    EXPECT_EQ(std::string(decoded->begin(), decoded->end()), plain);
  }
  for (std::size_t len = 0; len <= 100; ++len) {
    SCOPED_TRACE(len);
    const std::vector<std::uint8_t> bytes = test::random_bytes(len, static_cast<std::uint32_t>(len));
    std::string padded(4 * ((len + 2) / 3) + 1, '\0');
    const int written =
        EVP_EncodeBlock(reinterpret_cast<unsigned char*>(padded.data()), bytes.data(), static_cast<int>(len));
    padded.resize(static_cast<std::size_t>(written));
    while (!padded.empty() && padded.back() == '=') padded.pop_back();
    const std::string encoded = encode_base64(bytes);
    EXPECT_EQ(encoded, padded);
    EXPECT_EQ(encoded.size(), (4 * len + 2) / 3);
    EXPECT_EQ(decode_base64(encoded), bytes);
  }
}

// Every 2- and 3-character text: it decodes exactly when the bits past the
// last byte (4 and 2 of them) are zero, and then it is what encoding writes.
TEST(Base64, OnlyTheCanonicalLastCharacterDecodes) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::size_t accepted2 = 0;
  std::size_t accepted3 = 0;
  for (std::size_t a = 0; a < 64; ++a) {
    for (std::size_t b = 0; b < 64; ++b) {
      const std::string two = {alphabet[a], alphabet[b]};
      const auto decoded2 = decode_base64(two);
      EXPECT_EQ(decoded2.has_value(), (b & 0xf) == 0) << two;
      if (decoded2) {
        ++accepted2;
        EXPECT_EQ(encode_base64(*decoded2), two);
      }
      for (std::size_t c = 0; c < 64; ++c) {
        const std::string three = two + alphabet[c];
        const auto decoded3 = decode_base64(three);
        if (decoded3.has_value() != ((c & 3) == 0)) ADD_FAILURE() << three;
        if (decoded3) {
          ++accepted3;
          if (encode_base64(*decoded3) != three) ADD_FAILURE() << three;
        }
      }
    }
  }
  EXPECT_EQ(accepted2, 256u);     // one text per byte value
  EXPECT_EQ(accepted3, 65536u);   // one per pair of bytes
}

TEST(Base64, RefusesPaddingStrayCharactersAndBadLengths) {
  using namespace std::string_literals;
  for (const std::string& text :
       {"Zg=="s, "Zg="s, "Zm8="s, "Zm9v===="s, "="s, "Z"s, "Zm9vY"s, "Zm9vYmFyZ"s, "Zh"s, "Zm9"s, "Zm9vYh"s, "Zm9vYmF"s,
        "Zm9v\n"s, "Zm9v\r\n"s, "Zm9v\r"s, "Zm 9v"s, " Zm9v"s, "Zm9v "s, "Zm9v\t"s, "Zm-v"s, "Zm_v"s, "Zm.v"s,
        "Zm\0v"s, "Zm\x80v"s, "Zm\xffv"s}) {
    EXPECT_FALSE(decode_base64(text).has_value()) << "\"" << text << "\"";
  }
}

// ---------------------------------------------------------------- age keys

TEST(AgeKeys, SpecExamplesAndCctvIdentity) {
  auto examples = read_sections(data_path("age/spec_examples.txt"))[""];
  const SecretBytes identity = secret_of(string_of(decode_hex(examples["identity_hex"]).value()));
  EXPECT_EQ(string_of(format_age_identity(identity)), examples["identity"]);
  const X25519PublicKey recipient = x25519_public_key(identity);
  EXPECT_EQ(encode_hex(recipient), examples["recipient_hex"]);
  EXPECT_EQ(format_age_recipient(recipient), examples["recipient"]);
  EXPECT_EQ(parse_age_recipient(examples["recipient"], "recipient"), recipient);
  const auto parsed = parse_identity_file(secret_of(examples["identity"] + "\n"), "identity");
  ASSERT_EQ(parsed.size(), 1u);
  EXPECT_EQ(encode_hex(parsed[0].secret().view()), examples["identity_hex"]);

  const auto cctv = parse_identity_file(secret_of(examples["cctv_identity"]), "identity");
  ASSERT_EQ(cctv.size(), 1u);
  EXPECT_EQ(encode_hex(cctv[0].secret().view()), examples["cctv_identity_hex"]);
  EXPECT_EQ(format_age_recipient(x25519_public_key(cctv[0].secret())), examples["cctv_recipient"]);
}

TEST(AgeKeys, FormatAndParseRoundTrip) {
  for (int i = 0; i < 16; ++i) {
    const SecretBytes identity = x25519_generate_identity();
    const X25519PublicKey recipient = x25519_public_key(identity);
    const std::string text = format_age_recipient(recipient);
    EXPECT_EQ(text.size(), 62u);
    EXPECT_TRUE(text.starts_with("age1"));
    EXPECT_EQ(parse_age_recipient(text, "recipient"), recipient);

    const std::string file = string_of(age_identity_file(identity, "2024-01-01T00:00:00Z"));
    const std::string public_line = "# public key: " + text + "\n";
    EXPECT_NE(file.find(public_line), std::string::npos);
    EXPECT_TRUE(file.ends_with(string_of(format_age_identity(identity)) + "\n"));
    const auto parsed = parse_identity_file(secret_of(file), "identity");
    ASSERT_EQ(parsed.size(), 1u);
    EXPECT_EQ(encode_hex(parsed[0].secret().view()), encode_hex(identity.view()));
  }
}

// Little-endian u-coordinates as recipients: p = 2^255 - 19 plus `add`.
X25519PublicKey p_plus(int add) {
  X25519PublicKey key{};
  key.fill(0xff);
  key[31] = 0x7f;
  key[0] = static_cast<std::uint8_t>(0xed + add);
  return key;
}

X25519PublicKey key_of_hex(std::string_view hex) {
  X25519PublicKey key{};
  const std::vector<std::uint8_t> bytes = from_hex(hex);
  std::copy(bytes.begin(), bytes.end(), key.begin());
  return key;
}

TEST(AgeKeys, RecipientRefusalsAreUsageErrorsThatNeverQuoteTheText) {
  auto examples = read_sections(data_path("age/spec_examples.txt"))[""];
  const std::string good = examples["recipient"];
  X25519PublicKey top_bit = parse_age_recipient(good, "recipient");
  top_bit[31] |= 0x80;
  const std::vector<std::uint8_t> key31(31, 0x42);
  const std::vector<std::uint8_t> key33(33, 0x42);
  const std::vector<std::uint8_t> key32(32, 0x42);
  std::string wrong_checksum = good;
  wrong_checksum.back() = wrong_checksum.back() == 'q' ? 'p' : 'q';
  std::string mixed_case = good;
  mixed_case[5] = static_cast<char>(std::toupper(static_cast<unsigned char>(mixed_case[5])));
  ASSERT_NE(mixed_case, good);

  // The small-order u-coordinates below p (libsodium's blocklist, RFC 7748
  // section 7): 0 and 1 (orders 4 and 1), two points of order 8, p - 1.
  const std::string order8_a = "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800";
  const std::string order8_b = "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157";

  const std::vector<std::pair<std::string, std::string>> cases = {
      {examples["identity"], "is an identity"},
      {lower(examples["identity"]), "is an identity"},
      {"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHXm2IDXfk/Lq5B0mv8V0dn3N93HA7q9dfsO0k+b2Nwk user@host", "ssh"},
      {"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ", "ssh"},
      {string_of(bech32_encode("age1example", key32, false)), "plugin"},
      {string_of(bech32_encode("agf", key32, false)), "not an age recipient"},
      {wrong_checksum, "not an age recipient"},
      {mixed_case, "not an age recipient"},
      {upper(good), "upper case"},  // valid Bech32, but age takes lower case only
      {good.substr(0, good.size() - 1), "not an age recipient"},
      {good + " ", "not an age recipient"},
      {string_of(bech32_encode("age", key31, false)), "31 bytes"},
      {string_of(bech32_encode("age", key33, false)), "33 bytes"},
      {format_age_recipient(top_bit), "canonical"},
      {format_age_recipient(p_plus(0)), "canonical"},
      {format_age_recipient(p_plus(1)), "canonical"},
      {format_age_recipient(p_plus(18)), "canonical"},  // 2^255 - 1
      {format_age_recipient(p_plus(-1)), "low-order"},
      {format_age_recipient(X25519PublicKey{}), "low-order"},
      {format_age_recipient(key_of_hex("01" + std::string(62, '0'))), "low-order"},
      {format_age_recipient(key_of_hex(order8_a)), "low-order"},
      {format_age_recipient(key_of_hex(order8_b)), "low-order"},
  };
  for (const auto& [text, reason] : cases) {
    SCOPED_TRACE(text);
    try {
      parse_age_recipient(text, "the recipient");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_TRUE(message.starts_with("the recipient ")) << message;
      EXPECT_NE(message.find(reason), std::string::npos) << message;
      EXPECT_EQ(message.find(text), std::string::npos) << message;
      // Nor a part of it long enough to carry a key.
      if (text.size() > 20) {
        EXPECT_EQ(message.find(text.substr(8, 12)), std::string::npos) << message;
      }
    }
  }
  // The edges of those refusals: p - 2 is a canonical key of large order.
  EXPECT_EQ(parse_age_recipient(format_age_recipient(p_plus(-2)), "recipient"), p_plus(-2));

  // The low-order refusal is a comparison with a table (is_low_order_point);
  // OpenSSL's X25519, which the wrap runs, refuses the same points, and
  // takes a point beside each.
  const std::vector<X25519PublicKey> low_order = {p_plus(-1), X25519PublicKey{},
                                                  key_of_hex("01" + std::string(62, '0')), key_of_hex(order8_a),
                                                  key_of_hex(order8_b)};
  const SecretBytes scalar = x25519_generate_identity();
  for (X25519PublicKey point : low_order) {
    SCOPED_TRACE(encode_hex(point));
    EXPECT_TRUE(is_low_order_point(point));
    EXPECT_THROW(x25519_shared_secret(scalar, point), Error);
    point[3] ^= 1;
    EXPECT_FALSE(is_low_order_point(point));
    EXPECT_NO_THROW(x25519_shared_secret(scalar, point));
  }
}

TEST(AgeKeys, RecipientsFile) {
  auto expected = read_sections(data_path("age/real/expected.txt"));
  const std::string r1 = expected["identity.txt"]["recipient"];
  const std::string r2 = expected["identity2.txt"]["recipient"];
  const std::string r3 = expected["identity3.txt"]["recipient"];
  const std::string text = "# team\n\n" + r1 + "\r\n   \t\n  " + r2 + "  \n#" + r3 + "\n\t" + r3;
  const auto keys = parse_recipients_file(bytes_of(text), "recipients.txt");
  ASSERT_EQ(keys.size(), 3u);
  EXPECT_EQ(encode_hex(keys[0].x25519()), expected["identity.txt"]["recipient_hex"]);
  EXPECT_EQ(encode_hex(keys[1].x25519()), expected["identity2.txt"]["recipient_hex"]);
  EXPECT_EQ(encode_hex(keys[2].x25519()), expected["identity3.txt"]["recipient_hex"]);

  const auto refusal = [](const std::string& file) {
    try {
      parse_recipients_file(bytes_of(file), "recipients.txt");
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
      return std::string(e.what());
    }
    ADD_FAILURE() << "accepted";
    return std::string();
  };
  const std::string long_line(kMaxKeyLineLen + 1, 'a');
  std::string message = refusal(r1 + "\n" + long_line + "\n");
  EXPECT_NE(message.find("recipients.txt, line 2: longer than"), std::string::npos) << message;
  // At the bound the line is read, and refused as what it is.
  message = refusal(r1 + "\n" + long_line.substr(1) + "\n");
  EXPECT_NE(message.find("not an age recipient"), std::string::npos) << message;

  std::string huge = r1 + "\n";
  while (huge.size() <= kMaxRecipientsFileLen) huge += "# " + std::string(97, '-') + "\n";
  huge.resize(kMaxRecipientsFileLen + 1);
  message = refusal(huge);
  EXPECT_NE(message.find("larger than"), std::string::npos) << message;
  huge.pop_back();
  EXPECT_EQ(parse_recipients_file(bytes_of(huge), "recipients.txt").size(), 1u);

  message = refusal("# only comments\n\n   \n");
  EXPECT_NE(message.find("holds no recipient"), std::string::npos) << message;
  message = refusal("");
  EXPECT_NE(message.find("holds no recipient"), std::string::npos) << message;

  const std::string identity = expected["identity.txt"]["identity"];
  message = refusal(r1 + "\n# next\n" + identity + "\n");
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;
  EXPECT_NE(message.find("is an identity"), std::string::npos) << message;
  EXPECT_EQ(message.find(identity), std::string::npos) << message;
}

std::vector<std::string> key_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (std::string line : split(text, '\n')) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (!line.empty() && line.front() != '#') lines.push_back(line);
  }
  return lines;
}

TEST(AgeKeys, AgeKeygenIdentityFiles) {
  auto expected = read_sections(data_path("age/real/expected.txt"));
  std::string all;
  for (const std::string name : {"identity.txt", "identity2.txt", "identity3.txt"}) {
    SCOPED_TRACE(name);
    const std::string text = read_text(data_path("age/real/" + name));
    all += text;
    const auto identities = parse_identity_file(secret_of(text), name);
    ASSERT_EQ(identities.size(), 1u);
    EXPECT_EQ(encode_hex(identities[0].secret().view()), expected[name]["identity_hex"]);
    const std::string marker = "# public key: ";
    const std::size_t at = text.find(marker);
    ASSERT_NE(at, std::string::npos);
    const std::string public_line = text.substr(at + marker.size(), text.find('\n', at) - at - marker.size());
    EXPECT_EQ(format_age_recipient(x25519_public_key(identities[0].secret())), public_line);
    EXPECT_EQ(public_line, expected[name]["recipient"]);
  }
  const auto identities = parse_identity_file(secret_of(all), "all.txt");
  ASSERT_EQ(identities.size(), 3u);
  EXPECT_EQ(encode_hex(identities[1].secret().view()), expected["identity2.txt"]["identity_hex"]);
  EXPECT_EQ(encode_hex(identities[2].secret().view()), expected["identity3.txt"]["identity_hex"]);
  // CRLF line ends (a file edited on Windows) read the same.
  std::string crlf;
  for (const std::string& line : split(all, '\n')) crlf += line + "\r\n";
  EXPECT_EQ(parse_identity_file(secret_of(crlf), "crlf.txt").size(), 3u);
}

TEST(AgeKeys, PluginKeysNameTheirPlugin) {
  const std::vector<std::uint8_t> data(33, 7);
  const std::string recipient = string_of(bech32_encode("age1yubikey", data, false));
  const Recipient parsed = parse_recipient(recipient, "recipient");
  EXPECT_EQ(parsed.type(), KeyType::plugin);
  EXPECT_EQ(parsed.plugin_name(), "yubikey");
  EXPECT_EQ(parsed.plugin_recipient(), recipient);
  EXPECT_EQ(format_recipient(parsed), recipient);

  const std::string identity = string_of(bech32_encode("age-plugin-yubikey-", data, true));
  const auto identities = parse_identity_file(secret_of("# a plugin\n" + identity + "\n"), "id.txt");
  ASSERT_EQ(identities.size(), 1u);
  EXPECT_EQ(identities[0].type(), KeyType::plugin);
  EXPECT_EQ(identities[0].plugin_name(), "yubikey");
  EXPECT_EQ(string_of(identities[0].secret()), identity);
  const Recipient to_identity = identities[0].recipient();
  ASSERT_NE(to_identity.plugin_identity(), nullptr);  // sealing to it goes through its plugin (add-identity)

  // Names age-plugin.md doesn't allow: a path separator, nothing at all.
  for (const std::string hrp : {"age1a/b", "age1"}) {
    SCOPED_TRACE(hrp);
    const std::string text = string_of(bech32_encode(hrp, data, false));
    EXPECT_THROW(parse_recipient(text, "recipient"), Error);
  }
  EXPECT_TRUE(valid_plugin_name("se+tpm.2_x-y"));
  EXPECT_FALSE(valid_plugin_name("a b"));
  EXPECT_FALSE(valid_plugin_name("../x"));
  EXPECT_FALSE(valid_plugin_name(""));
}

TEST(AgeKeys, IdentityFileRefusalsNameTheProblemNeverTheLine) {
  auto expected = read_sections(data_path("age/real/expected.txt"));
  const std::string identity = expected["identity.txt"]["identity"];
  std::string bad_checksum = expected["identity2.txt"]["identity"];
  bad_checksum.back() = bad_checksum.back() == 'Q' ? 'P' : 'Q';
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"# created: now\n" + expected["identity.txt"]["recipient"] + "\n", "line 2 is a recipient"},
      // A plugin identity whose checksum is wrong.
      {identity + "\nAGE-PLUGIN-YUBIKEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ7ZSK7V\n", "line 2: not an age identity"},
      {"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
       "-----END OPENSSH PRIVATE KEY-----\n",
       "not an ssh private key"},
      {"age-encryption.org/v1\n-> scrypt c2FsdHNhbHRzYWx0c2FsdA 18\nc2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2U\n"
       "--- c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2U\n",
       "age-encrypted"},
      {"-----BEGIN AGE ENCRYPTED FILE-----\nYWdlLWVuY3J5cHRpb24ub3JnL3YxCi0+IHNjcnlwdA\n"
       "-----END AGE ENCRYPTED FILE-----\n",
       "age-encrypted"},
      {"# a\n" + identity + "\n" + bad_checksum + "\n", "line 3: not an age identity"},
      {identity.substr(0, 40) + "\n", "line 1: not an age identity"},
      {lower(identity.substr(0, 20)) + identity.substr(20) + "\n", "line 1: not an age identity"},  // mixed case
      {lower(identity) + "\n", "line 1: not an age identity"},  // valid Bech32, but age takes upper case only
      {"# nothing\n\n", "holds no identity"},
  };
  for (const auto& [text, reason] : cases) {
    SCOPED_TRACE(reason);
    try {
      parse_identity_file(secret_of(text), "id.txt");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_TRUE(message.starts_with("id.txt")) << message;
      EXPECT_NE(message.find(reason), std::string::npos) << message;
      for (const std::string& line : key_lines(text)) {
        EXPECT_EQ(message.find(line), std::string::npos) << message;
        if (line.size() > 30) {
          EXPECT_EQ(message.find(line.substr(16, 12)), std::string::npos) << message;
        }
      }
    }
  }
}

// ---------------------------------------------------------------- age 1.1.1's files

struct KnownIdentity {
  std::string name;
  SecretBytes key;
  X25519PublicKey public_key{};
};

std::vector<KnownIdentity> real_identities() {
  std::vector<KnownIdentity> out;
  for (const std::string name : {"identity.txt", "identity2.txt", "identity3.txt"}) {
    auto keys = parse_identity_file(secret_of(read_text(data_path("age/real/" + name))), name);
    const X25519PublicKey pub = x25519_public_key(keys.at(0).secret());
    out.push_back({name, keys.at(0).secret().clone(), pub});
  }
  return out;
}

TEST(RealAgeFiles, HeadersOpenWithTheirIdentitiesOnly) {
  auto expected = read_sections(data_path("age/real/expected.txt"));
  const std::vector<KnownIdentity> identities = real_identities();
  const SecretBytes stranger = x25519_generate_identity();
  for (const std::string file : {"one.age", "three.age", "armored.age"}) {
    SCOPED_TRACE(file);
    auto& e = expected[file];
    const std::string raw = read_text(data_path("age/real/" + file));
    ASSERT_EQ(raw.size(), std::stoul(e["file_size"]));
    std::vector<std::uint8_t> binary(raw.begin(), raw.end());
    if (e["armored"] == "yes") {
      auto decoded = dearmor(raw);
      ASSERT_TRUE(decoded.has_value());
      binary = std::move(*decoded);
    }
    const std::string version(binary.begin(), binary.begin() + static_cast<std::ptrdiff_t>(kVersionLine.size()));
    ASSERT_EQ(version, kVersionLine);
    const auto rest = std::span<const std::uint8_t>(binary).subspan(kVersionLine.size());
    const StanzaHeader header = parse_stanza_header(rest, file);
    EXPECT_EQ(kVersionLine.size() + header.length, std::stoul(e["header_len"]));
    EXPECT_EQ(encode_base64(header.mac), e["mac"]);
    ASSERT_GE(rest.size(), header.length + kPayloadNonceLen);
    EXPECT_EQ(encode_hex(rest.subspan(header.length, kPayloadNonceLen)), e["payload_nonce"]);
    ASSERT_EQ(header.stanzas.size(), std::stoul(e["stanza_count"]));

    for (std::size_t i = 0; i < header.stanzas.size(); ++i) {
      SCOPED_TRACE("stanza " + std::to_string(i));
      const Stanza& stanza = header.stanzas[i];
      // "X25519 <share>  body_len=32  unwrapped_by=<identity file> <recipient>"
      const std::vector<std::string> fields = split(e["stanza." + std::to_string(i)], ' ');
      ASSERT_GE(fields.size(), 7u);
      EXPECT_EQ(stanza.type, fields[0]);
      EXPECT_EQ(stanza.args, std::vector<std::string>{fields[1]});
      EXPECT_EQ("body_len=" + std::to_string(stanza.body.size()), fields[3]);
      const std::string opener = fields[5].substr(fields[5].find('=') + 1);
      for (const KnownIdentity& identity : identities) {
        const auto file_key = unwrap_x25519(stanza, X25519PrivateKey(identity.key), file);
        if (identity.name != opener) {
          EXPECT_FALSE(file_key.has_value()) << identity.name;
          continue;
        }
        ASSERT_TRUE(file_key.has_value()) << identity.name;
        EXPECT_EQ(encode_hex(file_key->view()), e["file_key"]);
        EXPECT_TRUE(header_mac_matches(HeaderMacKey::of_file_key(*file_key), bytes_of(kVersionLine), header));
        EXPECT_FALSE(header_mac_matches(HeaderMacKey::of_file_key(*file_key), bytes_of("age-encryption.org/v2\n"), header));
        EXPECT_FALSE(header_mac_matches(HeaderMacKey::of_file_key(*file_key), {}, header));
        for (const std::size_t at : {std::size_t{0}, std::size_t{17}, kHeaderMacLen - 1}) {
          StanzaHeader flipped = header;
          flipped.mac[at] ^= 0x01;
          EXPECT_FALSE(header_mac_matches(HeaderMacKey::of_file_key(*file_key), bytes_of(kVersionLine), flipped)) << at;
        }
      }
      EXPECT_FALSE(unwrap_x25519(stanza, X25519PrivateKey(stranger), file).has_value());
    }
  }
}

// ---------------------------------------------------------------- CCTV

struct CctvVector {
  std::string expect;
  std::string file_key;  // hex, empty when not given
  std::vector<std::string> identities;
  std::vector<std::string> passphrases;
  bool armored = false;
  bool compressed = false;
  std::vector<std::uint8_t> age_file;
};

CctvVector read_cctv(const std::string& path) {
  const std::string raw = read_text(path);
  const std::size_t blank = raw.find("\n\n");
  if (blank == std::string::npos) throw std::runtime_error(path + ": no blank line after the vector's header");
  CctvVector vector;
  for (const std::string& line : split(std::string_view(raw).substr(0, blank), '\n')) {
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos) throw std::runtime_error(path + ": not a key: value line: " + line);
    const std::string key = line.substr(0, colon);
    const std::string value = line.substr(colon + 2);
    if (key == "expect") vector.expect = value;
    if (key == "file key") vector.file_key = value;
    if (key == "identity") vector.identities.push_back(value);
    if (key == "passphrase") vector.passphrases.push_back(value);
    if (key == "armored") vector.armored = value == "yes";
    if (key == "compressed") {
      if (value != "zlib") throw std::runtime_error(path + ": unknown compression " + value);
      vector.compressed = true;
    }
  }
  vector.age_file.assign(raw.begin() + static_cast<std::ptrdiff_t>(blank + 2), raw.end());
  return vector;
}

struct Outcome {
  std::string verdict;  // CCTV's words: "success", "no match", "HMAC failure", "header failure"
  std::string detail;
  std::string file_key;  // hex, when one was unwrapped
};

// What age does with a file's header (C2SP age.md, "Header"; age's
// Decrypt): the version line, the stanzas and MAC line, a scrypt stanza
// alone or the header refused, each identity tried on every X25519 stanza
// and each passphrase on every scrypt stanza, in order (a malformed one
// fails the whole header; other types are skipped), the MAC under the file
// key found, then the payload's 16-byte nonce, which age reads with the
// header.
Outcome open_header(std::span<const std::uint8_t> file, const std::vector<KnownIdentity>& identities,
                    const std::vector<std::string>& passphrases) {
  if (file.size() < kVersionLine.size() ||
      std::string_view(reinterpret_cast<const char*>(file.data()), kVersionLine.size()) != kVersionLine) {
    return {"header failure", "no version line", ""};
  }
  const auto rest = file.subspan(kVersionLine.size());
  StanzaHeader header;
  try {
    header = parse_stanza_header(rest, "vector");
  } catch (const Error& e) {
    return {"header failure", e.what(), ""};
  }
  std::optional<SecretBytes> file_key;
  try {
    check_scrypt_stands_alone(header.stanzas, "vector");
    for (const std::string& text : passphrases) {
      const SecretBytes passphrase(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
      for (const Stanza& stanza : header.stanzas) {
        if (stanza.type == kScryptStanzaType && (file_key = unwrap_scrypt(stanza, passphrase, "vector"))) break;
      }
      if (file_key) break;
    }
  } catch (const Error& e) {
    return {"header failure", e.what(), ""};
  }
  for (const KnownIdentity& identity : identities) {
    if (file_key) break;
    for (const Stanza& stanza : header.stanzas) {
      if (stanza.type != kX25519StanzaType) continue;
      try {
        file_key = unwrap_x25519(stanza, X25519PrivateKey(identity.key), "vector");
      } catch (const Error& e) {
        return {"header failure", e.what(), ""};
      }
      if (file_key) break;
    }
    if (file_key) break;
  }
  if (!file_key) return {"no match", "", ""};
  const std::string key_hex = encode_hex(file_key->view());
  if (!header_mac_matches(HeaderMacKey::of_file_key(*file_key), bytes_of(kVersionLine), header)) {
    return {"HMAC failure", "", key_hex};
  }
  if (rest.size() - header.length < kPayloadNonceLen) {
    return {"header failure", "payload nonce: " + std::to_string(rest.size() - header.length) + " bytes", key_hex};
  }
  return {"success", "", key_hex};
}

TEST(CctvVectors, EveryHeaderVectorMeetsItsExpectation) {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(data_path("age/cctv"))) {
    const std::string name = entry.path().filename().string();
    if (name == "LICENSE" || name == "README.md") continue;
    // The header subset (README.md's selection rule): the other armor
    // vectors are about the armor, which tests/tink/age_testkit.py runs
    // through paes decrypt, and hybrid identities are not paes'.
    const bool armor_only = name.starts_with("armor_") && name != "armor_empty" && name != "armor_header_crlf" &&
                            name != "armor_scrypt";
    const bool hybrid = name.starts_with("hybrid") && name != "hybrid_x25519_arg";
    if (!armor_only && !hybrid) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  ASSERT_EQ(paths.size(), 96u);  // the README's table

  std::vector<std::string> failures;
  std::map<std::string, int> seen;
  for (const fs::path& path : paths) {
    const std::string name = path.filename().string();
    const CctvVector vector = read_cctv(path.string());
    std::vector<KnownIdentity> identities;
    for (const std::string& text : vector.identities) {
      // Hybrid (ML-KEM-768 + X25519) identities are not paes'.
      if (text.starts_with("AGE-SECRET-KEY-PQ-1")) continue;
      auto keys = parse_identity_file(secret_of(text), name);
      const X25519PublicKey pub = x25519_public_key(keys.at(0).secret());
      identities.push_back({name, keys.at(0).secret().clone(), pub});
    }
    std::vector<std::uint8_t> file = vector.age_file;
    if (vector.compressed) {
      auto inflated = inflate_zlib(file);
      if (!inflated) {
        failures.push_back(name + ": zlib data does not inflate");
        continue;
      }
      file = std::move(*inflated);
    }
    if (vector.armored) {
      auto decoded = dearmor({reinterpret_cast<const char*>(file.data()), file.size()});
      if (!decoded) {
        failures.push_back(name + ": armor does not decode");
        continue;
      }
      file = std::move(*decoded);
    }
    const Outcome got = open_header(file, identities, vector.passphrases);
    // paes reads age's header, not its payload: a payload failure's header opens.
    const std::string want = vector.expect == "payload failure" ? "success" : vector.expect;
    ++seen[vector.expect];
    if (got.verdict != want) {
      failures.push_back(name + ": expected " + vector.expect + ", got " + got.verdict +
                         (got.detail.empty() ? "" : " (" + got.detail + ")"));
    } else if ((want == "success" || want == "HMAC failure") && !vector.file_key.empty() &&
               got.file_key != vector.file_key) {
      failures.push_back(name + ": file key " + got.file_key + ", expected " + vector.file_key);
    }
  }
  std::ostringstream report;
  for (const std::string& failure : failures) report << "\n  " << failure;
  EXPECT_TRUE(failures.empty()) << failures.size() << " CCTV vectors failed:" << report.str();
  EXPECT_EQ(seen["header failure"], 54);
  EXPECT_EQ(seen["success"] + seen["payload failure"], 34);
  EXPECT_EQ(seen["no match"], 7);
  EXPECT_EQ(seen["HMAC failure"], 1);
}

}  // namespace
}  // namespace paes
