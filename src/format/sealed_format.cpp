#include "format/sealed_format.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "job/ticket.hpp"
#include "paes/error.hpp"
#include "paes/foreign_format.hpp"

namespace paes {
namespace {

constexpr std::uint8_t kMagic[4] = {'P', 'A', 'E', 'S'};

std::uint32_t load_be32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

// OpenPGP packets that open an encrypted message (RFC 9580 section 5.1 and
// 5.3): a public-key (tag 1) or symmetric-key (tag 3) encrypted session key,
// in the old or the new packet format, followed by a version the RFC defines.
bool opens_openpgp_message(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < 3 || (bytes[0] & 0x80) == 0) return false;
  unsigned tag = 0;
  std::size_t length_bytes = 0;
  if (bytes[0] & 0x40) {
    tag = bytes[0] & 0x3f;
    length_bytes = bytes[1] < 192 ? 1 : bytes[1] < 224 ? 2 : bytes[1] == 255 ? 5 : 0;
  } else {
    tag = (bytes[0] >> 2) & 0x0f;
    const unsigned length_type = bytes[0] & 0x03;
    length_bytes = length_type == 3 ? 0 : std::size_t{1} << length_type;
  }
  if (length_bytes == 0 || bytes.size() <= 1 + length_bytes) return false;
  const std::uint8_t version = bytes[1 + length_bytes];
  if (tag == 1) return version == 3 || version == 6;
  if (tag == 3) return version == 4 || version == 5 || version == 6;
  return false;
}

// A file that is no paes file: named when it looks like another tool's
// (ForeignFormatError), else "bad magic".
[[noreturn]] void refuse_foreign_file(std::span<const std::uint8_t> bytes, const std::string& name) {
  const auto look = recognize_foreign_format(bytes);
  if (!look) throw Error(name + ": not a paes file (bad magic)");
  switch (look->format) {
    case ForeignFormat::age:
      // paes reads age v1 files: this one starts as age's do, but not as v1's.
      throw ForeignFormatError(
          name + (look->armored
                      ? ": armor that starts as age's, but not with its line -----BEGIN AGE ENCRYPTED FILE-----"
                      : ": an age file whose first line is not age-encryption.org/v1 (another version, or a line end "
                        "other than LF), which paes doesn't read"),
          ForeignFormat::age);
    case ForeignFormat::openssl_salted:
      throw ForeignFormatError(name + ": an openssl enc file (Salted__), not a paes file (the cipher mode it was "
                                       "written with is not in the file)",
                                ForeignFormat::openssl_salted);
    case ForeignFormat::openpgp:
      throw ForeignFormatError(name + ": an OpenPGP (gpg) file, not a paes file: open it with gpg",
                                ForeignFormat::openpgp);
    case ForeignFormat::likely_tink_stream: break;
  }
  throw ForeignFormatError(name + ": not a paes file (bad magic); if it is a bare Tink stream (the tink "
                                   "format), it opens only with the segment size it was written with",
                            ForeignFormat::likely_tink_stream);
}

}  // namespace

std::optional<ForeignLook> recognize_foreign_format(std::span<const std::uint8_t> start) {
  const std::string_view text(reinterpret_cast<const char*>(start.data()), start.size());
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  const std::string_view armor = first == std::string_view::npos ? std::string_view{} : text.substr(first);
  if (text.starts_with("age-encryption.org/")) return ForeignLook{ForeignFormat::age};
  // Armor lines by their start: a preamble's 32 bytes don't hold a whole one.
  if (armor.starts_with("-----BEGIN AGE")) return ForeignLook{ForeignFormat::age, true};
  if (text.starts_with("Salted__")) return ForeignLook{ForeignFormat::openssl_salted};
  if (armor.starts_with("-----BEGIN PGP MESSAGE")) return ForeignLook{ForeignFormat::openpgp, true};
  if (opens_openpgp_message(start)) return ForeignLook{ForeignFormat::openpgp};
  // A bare Tink stream starts with its header's length: 24 (AES-128) or 40 (AES-256).
  if (!start.empty() && (start[0] == StreamHeader::length(16) || start[0] == StreamHeader::length(32))) {
    return ForeignLook{ForeignFormat::likely_tink_stream};
  }
  return std::nullopt;
}

std::array<std::uint8_t, kPreambleLen> Preamble::encode() const {
  std::array<std::uint8_t, kPreambleLen> out{};
  std::memcpy(out.data(), kMagic, 4);
  out[4] = version;
  out[5] = static_cast<std::uint8_t>(key_source);
  out[6] = key_len;
  out[7] = scrypt.log2_n;
  out[8] = scrypt.r;
  out[9] = scrypt.p;
  out[12] = static_cast<std::uint8_t>(segment_len >> 24);
  out[13] = static_cast<std::uint8_t>(segment_len >> 16);
  out[14] = static_cast<std::uint8_t>(segment_len >> 8);
  out[15] = static_cast<std::uint8_t>(segment_len);
  std::memcpy(out.data() + 16, salt.data(), kScryptSaltLen);
  return out;
}

Preamble Preamble::decode(std::span<const std::uint8_t> bytes, const std::string& name) {
  const std::size_t magic_len = std::min<std::size_t>(bytes.size(), 4);
  if (std::memcmp(bytes.data(), kMagic, magic_len) != 0) refuse_foreign_file(bytes, name);
  if (bytes.size() < 4) throw Error(name + (bytes.empty() ? ": empty, not a paes file" : ": truncated preamble"));
  if (bytes.size() < 5) throw Error(name + ": truncated preamble");
  if (bytes[4] == kWithdrawnFormatVersion) {
    throw Error(name + ": paes format version 2, a recipients format that was never released and is no longer "
                "read: its stanzas could give different readers different plaintexts. Decrypt it with the paes "
                "that wrote it and seal it again");
  }
  if (bytes[4] != kFormatVersion && bytes[4] != kUncommittedFormatVersion) {
    throw Error(name + ": unsupported paes format version " + std::to_string(bytes[4]) +
                " (this paes reads versions " + std::to_string(kUncommittedFormatVersion) + " and " +
                std::to_string(kFormatVersion) + ")");
  }
  if (bytes.size() < kPreambleLen) throw Error(name + ": truncated preamble");
  Preamble p;
  const auto corrupt = [&](const std::string& what) { return Error(name + ": corrupt preamble (" + what + ")"); };
  if (bytes[5] != static_cast<std::uint8_t>(KeySource::raw_key) &&
      bytes[5] != static_cast<std::uint8_t>(KeySource::scrypt_passphrase) &&
      bytes[5] != static_cast<std::uint8_t>(KeySource::recipient_stanzas)) {
    throw corrupt("unknown key source " + std::to_string(bytes[5]));
  }
  p.version = bytes[4];
  p.key_source = static_cast<KeySource>(bytes[5]);
  // A key source that doesn't go with the version is refused, not silently taken.
  const bool source_in_version = p.version == kFormatVersion ? p.key_source != KeySource::scrypt_passphrase
                                                             : p.key_source != KeySource::recipient_stanzas;
  if (!source_in_version) {
    throw corrupt("key source " + std::to_string(bytes[5]) + " in a version " + std::to_string(bytes[4]) + " file");
  }
  p.key_len = bytes[6];
  if (p.key_len != 16 && p.key_len != 32) throw corrupt("key length " + std::to_string(p.key_len));
  if (p.key_source == KeySource::recipient_stanzas && p.key_len != 32) {
    throw corrupt("key length " + std::to_string(p.key_len) + " with the key in stanzas (AES-256 only)");
  }
  p.scrypt = {bytes[7], bytes[8], bytes[9]};
  if (bytes[10] != 0 || bytes[11] != 0) throw corrupt("reserved bytes are not zero");
  p.segment_len = load_be32(bytes.data() + 12);
  if (p.segment_len < min_segment_len(p.key_len) || p.segment_len > kMaxSegmentLen) {
    throw corrupt("segment size " + std::to_string(p.segment_len) + " out of range");
  }
  std::memcpy(p.salt.data(), bytes.data() + 16, kScryptSaltLen);
  // scrypt's parameters are in the preamble only in a version-1 passphrase
  // file (version 3 has a scrypt stanza); the salt field is scrypt's salt
  // there, random in a version-3 raw-key file (so that its MAC line, keyed
  // by the key alone, differs from file to file), and zero otherwise.
  const bool raw = p.key_source != KeySource::scrypt_passphrase;
  const bool scrypt_zero = p.scrypt.log2_n == 0 && p.scrypt.r == 0 && p.scrypt.p == 0;
  const bool salt_zero = std::all_of(p.salt.begin(), p.salt.end(), [](auto b) { return b == 0; });
  const bool salted_raw_key = p.version == kFormatVersion && p.key_source == KeySource::raw_key;
  const std::string what = p.key_source == KeySource::raw_key ? "a raw-key file" : "a file whose key is in stanzas";
  if (raw && !scrypt_zero) throw corrupt("scrypt parameters on " + what);
  if (raw && !salted_raw_key && !salt_zero) {
    throw corrupt("a salt on " + what + (p.version == kFormatVersion ? "" : " of version 1"));
  }
  if (!raw && (p.scrypt.log2_n == 0 || p.scrypt.r == 0 || p.scrypt.p == 0)) {
    throw corrupt("missing scrypt parameters");
  }
  // FORMAT.md fixes r = 8 and p = 1; only N varies, and scrypt_key caps its
  // memory. A hostile file with p = 255 would otherwise cost 255 scrypt runs.
  if (!raw && (p.scrypt.r != kScryptR || p.scrypt.p != kScryptP)) {
    throw corrupt("scrypt r " + std::to_string(p.scrypt.r) + " and p " + std::to_string(p.scrypt.p) +
                  " (this format uses r 8, p 1)");
  }
  return p;
}

std::uint64_t min_segment_len(std::size_t key_len) {
  return StreamHeader::length(key_len) + kTagLen + 1;
}

void check_sealed_params(std::size_t key_len, std::uint64_t segment_len) {
  if (key_len != 16 && key_len != 32) {
    throw usage_error("the sealed format takes a 16- or 32-byte key (AES-128 or AES-256), got " +
                      std::to_string(key_len) + " bytes");
  }
  if (segment_len < min_segment_len(key_len) || segment_len > kMaxSegmentLen) {
    throw usage_error("segment size must be between " + std::to_string(min_segment_len(key_len)) +
                      " bytes and 64M with a " + std::to_string(key_len * 8) + "-bit key, got " +
                      std::to_string(segment_len));
  }
}

StreamHeader StreamHeader::random(std::size_t key_len) {
  StreamHeader h;
  h.salt.resize(key_len);
  random_bytes(h.salt);
  random_bytes(h.nonce_prefix);
  return h;
}

std::vector<std::uint8_t> StreamHeader::encode() const {
  std::vector<std::uint8_t> out(length(salt.size()));
  out[0] = static_cast<std::uint8_t>(out.size());
  std::memcpy(out.data() + 1, salt.data(), salt.size());
  std::memcpy(out.data() + 1 + salt.size(), nonce_prefix.data(), kNoncePrefixLen);
  return out;
}

StreamHeader StreamHeader::decode(std::span<const std::uint8_t> bytes, std::size_t key_len) {
  if (bytes.size() < length(key_len)) throw Error("truncated header");
  if (bytes[0] != length(key_len)) {
    throw Error("corrupt header: its length byte is " + std::to_string(bytes[0]) + ", a " +
                std::to_string(key_len * 8) + "-bit key's header is " + std::to_string(length(key_len)) +
                " bytes (a key of another size, or not a Tink stream)");
  }
  StreamHeader h;
  h.salt.assign(bytes.begin() + 1, bytes.begin() + 1 + static_cast<std::ptrdiff_t>(key_len));
  std::memcpy(h.nonce_prefix.data(), bytes.data() + 1 + key_len, kNoncePrefixLen);
  return h;
}

}  // namespace paes
