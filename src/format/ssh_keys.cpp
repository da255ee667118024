#include "format/ssh_keys.hpp"

#include <libssh/callbacks.h>
#include <libssh/libssh.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>

#include "cipher/kdf.hpp"
#include "paes/error.hpp"
#include "util/base64.hpp"
#include "util/shared_library.hpp"
#include "util/text.hpp"

namespace paes {
namespace {

constexpr std::string_view kEd25519Name = "ssh-ed25519";
constexpr std::string_view kRsaName = "ssh-rsa";
constexpr std::string_view kPemBegin = "-----BEGIN ";
constexpr std::string_view kPrivateKeyMarker = "PRIVATE KEY-----";
constexpr std::string_view kOpensshBegin = "-----BEGIN OPENSSH PRIVATE KEY-----";
constexpr std::string_view kOpensshEnd = "-----END OPENSSH PRIVATE KEY-----";
constexpr std::string_view kOpensshMagic{"openssh-key-v1\0", 15};
constexpr std::string_view kOpensshNoCipher = "none";
constexpr std::string_view kKeyTypes = "ssh-ed25519 and ssh-rsa";

// libssh's functions, from libssh.so.4 opened at the first ssh key: it and
// what it loads (Kerberos' five libraries, zlib) cost every run 0.3 ms of
// start-up when linked. Throws Error where it is missing.
struct LibsshFunctions : LibraryFunctions<LibsshFunctions> {
  static constexpr const char* kSoname = "libssh.so.4";
  static constexpr const char* kNeededFor = "ssh keys are read with libssh";
  PAES_LIBRARY_MEMBER(ssh_init);
  PAES_LIBRARY_MEMBER(ssh_key_free);
  PAES_LIBRARY_MEMBER(ssh_key_is_private);
  PAES_LIBRARY_MEMBER(ssh_key_type);
  PAES_LIBRARY_MEMBER(ssh_key_type_from_name);
  PAES_LIBRARY_MEMBER(ssh_key_type_to_char);
  PAES_LIBRARY_MEMBER(ssh_pki_export_privkey_base64);
  PAES_LIBRARY_MEMBER(ssh_pki_export_privkey_to_pubkey);
  PAES_LIBRARY_MEMBER(ssh_pki_export_pubkey_base64);
  PAES_LIBRARY_MEMBER(ssh_pki_import_privkey_base64);
  PAES_LIBRARY_MEMBER(ssh_pki_import_pubkey_base64);
  PAES_LIBRARY_MEMBER(ssh_set_log_callback);
  PAES_LIBRARY_MEMBER(ssh_set_log_level);
  PAES_LIBRARY_MEMBER(ssh_string_free_char);
};

const LibsshFunctions& libssh() { return LibsshFunctions::get(); }

struct SshKeyFree {
  void operator()(ssh_key key) const { libssh().ssh_key_free(key); }
};
using SshKeyPtr = std::unique_ptr<std::remove_pointer_t<ssh_key>, SshKeyFree>;

// A string libssh allocated (its exports: base64 of keys, private ones
// included), wiped before libssh frees it.
class LibsshText {
 public:
  LibsshText() = default;
  ~LibsshText() {
    if (text_ == nullptr) return;
    wipe({reinterpret_cast<std::uint8_t*>(text_), std::strlen(text_)});
    libssh().ssh_string_free_char(text_);
  }
  LibsshText(const LibsshText&) = delete;
  LibsshText& operator=(const LibsshText&) = delete;
  char** out() { return &text_; }
  std::string_view view() const { return text_ == nullptr ? std::string_view{} : std::string_view{text_}; }

 private:
  char* text_ = nullptr;
};

void discard_libssh_log(int, const char*, const char*, void*) {}

// libssh prints its errors on stderr unless told otherwise, and its log
// level and callback belong to the calling thread: each call into libssh
// comes after this, on its own thread. paes uses libssh for nothing else.
void quiet_libssh() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (libssh().ssh_init() != SSH_OK) throw Error("libssh failed to initialise");
    name_pem_key_ciphers();
  });
  thread_local bool quiet = false;
  if (!quiet) {
    libssh().ssh_set_log_level(SSH_LOG_NOLOG);
    libssh().ssh_set_log_callback(discard_libssh_log);
    quiet = true;
  }
}

// The characters of ssh's key type names (RFC 4251 section 6: printable
// US-ASCII; the names in use are these).
bool is_type_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '@' ||
           c == '.' || c == '_';
  });
}

// A NUL-terminated copy of secret text, for libssh's C strings; nothing
// when the text holds a NUL byte, which a C string would cut it at.
std::optional<SecretBytes> c_string(std::span<const std::uint8_t> text) {
  if (std::find(text.begin(), text.end(), 0) != text.end()) return std::nullopt;
  SecretBytes out(text.size() + 1);
  std::copy(text.begin(), text.end(), out.data());
  return out;
}

const char* c_str(const SecretBytes& text) { return reinterpret_cast<const char*>(text.data()); }

// Base64 as ssh's lines and libssh write it: with '=' padding.
std::string encode_padded_base64(std::span<const std::uint8_t> bytes) {
  std::string text = encode_base64(bytes);
  text.append((4 - text.size() % 4) % 4, '=');
  return text;
}

// ssh's wire encoding (RFC 4251 section 5): uint32 and string, an mpint being
// a string. Each read is nothing when the bytes end first.
class WireReader {
 public:
  explicit WireReader(std::span<const std::uint8_t> bytes) : rest_(bytes) {}
  std::optional<std::uint32_t> u32() {
    if (rest_.size() < 4) return std::nullopt;
    const std::uint32_t value = (std::uint32_t{rest_[0]} << 24) | (std::uint32_t{rest_[1]} << 16) |
                                (std::uint32_t{rest_[2]} << 8) | rest_[3];
    rest_ = rest_.subspan(4);
    return value;
  }
  std::optional<std::span<const std::uint8_t>> string() {
    const auto len = u32();
    if (!len || rest_.size() < *len) return std::nullopt;
    const auto value = rest_.first(*len);
    rest_ = rest_.subspan(*len);
    return value;
  }
  bool skip(std::string_view expected) {
    if (rest_.size() < expected.size() || as_text(rest_.first(expected.size())) != expected) return false;
    rest_ = rest_.subspan(expected.size());
    return true;
  }
  bool at_end() const { return rest_.empty(); }

 private:
  std::span<const std::uint8_t> rest_;
};

// The key type a wire blob names first; nothing when it doesn't start with
// a string.
std::optional<std::string_view> blob_type(std::span<const std::uint8_t> blob) {
  WireReader reader(blob);
  const auto type = reader.string();
  if (!type) return std::nullopt;
  return as_text(*type);
}

// The public key libssh reads from `base64` (a wire blob, padded) as `type`,
// when libssh writes the same text back: trailing bytes, numbers not in
// their shortest form and a blob of another type are refused so. Null when
// libssh refuses it, or doesn't know the type.
SshKeyPtr import_public_key(std::string_view type, const std::string& base64) {
  const enum ssh_keytypes_e libssh_type = libssh().ssh_key_type_from_name(std::string(type).c_str());
  if (libssh_type == SSH_KEYTYPE_UNKNOWN) return nullptr;
  ssh_key raw = nullptr;
  if (libssh().ssh_pki_import_pubkey_base64(base64.c_str(), libssh_type, &raw) != SSH_OK) return nullptr;
  SshKeyPtr key(raw);
  if (std::string_view(libssh().ssh_key_type_to_char(libssh().ssh_key_type(key.get()))) != type) return nullptr;
  LibsshText written;
  if (libssh().ssh_pki_export_pubkey_base64(key.get(), written.out()) != SSH_OK || written.view() != base64) {
    return nullptr;
  }
  return key;
}

std::string type_name_of(ssh_key key) {
  const char* name = libssh().ssh_key_type_to_char(libssh().ssh_key_type(key));
  return name == nullptr ? "unknown" : name;
}

std::optional<SshKeyType> supported_type(ssh_key key) {
  switch (libssh().ssh_key_type(key)) {
    case SSH_KEYTYPE_ED25519: return SshKeyType::ed25519;
    case SSH_KEYTYPE_RSA: return SshKeyType::rsa;
    default: return std::nullopt;
  }
}

[[noreturn]] void refuse_key_type(const std::string& name, const std::string& type) {
  throw usage_error(name + ": an ssh key of type " + type + ": only " + std::string(kKeyTypes) +
                    " keys encrypt and decrypt, as in age");
}

// The public key of `key` (public or private), as libssh writes its blob.
SshPublicKey public_key_of(ssh_key key, const std::string& name) {
  const auto type = supported_type(key);
  if (!type) refuse_key_type(name, type_name_of(key));
  ssh_key raw = nullptr;
  if (libssh().ssh_key_is_private(key) == 1 && libssh().ssh_pki_export_privkey_to_pubkey(key, &raw) != SSH_OK) {
    throw Error(name + ": libssh could not give the key's public half");
  }
  const SshKeyPtr public_only(raw);
  LibsshText base64;
  if (libssh().ssh_pki_export_pubkey_base64(public_only ? public_only.get() : key, base64.out()) != SSH_OK) {
    throw Error(name + ": libssh could not write the public key");
  }
  const auto wire = decode_padded_base64(base64.view());
  if (!wire) throw Error("internal: libssh wrote a public key in base64 paes does not read");
  return SshPublicKey{*type, {wire->data(), wire->data() + wire->size()}};
}

bool is_openssh_container(std::string_view text) { return trimmed(text).starts_with(kOpensshBegin); }

// The bytes of an OpenSSH container's text: the base64 between its BEGIN
// and END lines, in wiped memory. Nothing when the text is not one.
std::optional<SecretBytes> openssh_container_bytes(std::string_view text) {
  text = trimmed(text);
  if (!text.starts_with(kOpensshBegin) || !text.ends_with(kOpensshEnd)) return std::nullopt;
  text.remove_prefix(kOpensshBegin.size());
  const std::string_view body = text.substr(0, text.size() - kOpensshEnd.size());
  SecretBytes base64(body.size());
  std::size_t len = 0;
  for (const char c : body) {
    if (!is_ascii_space(c)) base64.data()[len++] = static_cast<std::uint8_t>(c);
  }
  return decode_padded_base64(as_text(base64.view().first(len)));
}

// OpenSSH's key container (PROTOCOL.key in OpenSSH's source), one key: views
// into the container's bytes.
struct OpensshContainer {
  std::string_view cipher;                        // "none" when unencrypted
  std::span<const std::uint8_t> public_blob;      // the public key's wire blob, in the clear
  std::span<const std::uint8_t> private_section;  // encrypted unless the cipher is "none"
};

std::optional<OpensshContainer> read_openssh_container(std::span<const std::uint8_t> bytes) {
  WireReader reader(bytes);
  if (!reader.skip(kOpensshMagic)) return std::nullopt;
  const auto cipher = reader.string();
  const auto kdf = reader.string();
  const auto kdf_options = reader.string();
  const auto keys = reader.u32();
  if (!cipher || !kdf || !kdf_options || keys != 1u) return std::nullopt;
  const auto public_blob = reader.string();
  const auto private_section = reader.string();
  if (!public_blob || !private_section || !reader.at_end()) return std::nullopt;
  return OpensshContainer{as_text(*cipher), *public_blob, *private_section};
}

// The unencrypted private section of a container, after its two check
// numbers and the key type (`type`), for the caller to read the key's fields.
WireReader private_fields(const OpensshContainer& container, std::string_view type, const std::string& name) {
  const auto malformed = [&] { return Error(name + ": malformed OpenSSH private key (its private part)"); };
  if (container.cipher != kOpensshNoCipher) throw malformed();
  WireReader reader(container.private_section);
  const auto check1 = reader.u32();
  const auto check2 = reader.u32();
  const auto key_type = reader.string();
  if (!check1 || check1 != check2 || !key_type || as_text(*key_type) != type) throw malformed();
  return reader;
}

bool same_bytes(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

// The 64-byte Ed25519 private key of `key`, from the unencrypted OpenSSH
// container libssh exports it in (its only export of an Ed25519 key).
SecretBytes ed25519_secret_of(ssh_key key, const SshPublicKey& public_key, const std::string& name) {
  LibsshText exported;
  if (libssh().ssh_pki_export_privkey_base64(key, nullptr, nullptr, nullptr, exported.out()) != SSH_OK) {
    throw Error(name + ": libssh could not export the Ed25519 key");
  }
  const auto bytes = openssh_container_bytes(exported.view());
  const auto container = bytes ? read_openssh_container(bytes->view()) : std::nullopt;
  if (!container) throw Error("internal: libssh exported an Ed25519 key in a container paes does not read");
  WireReader fields = private_fields(*container, kEd25519Name, name);
  const auto public_half = fields.string();
  const auto secret = fields.string();
  if (!public_half || !secret || secret->size() != kEd25519SecretKeyLen ||
      !same_bytes(*public_half, secret->subspan(kEd25519PublicKeyLen)) ||
      !same_bytes(*public_half, ssh_ed25519_public_key(public_key))) {
    throw Error(name + ": the Ed25519 private key does not hold its own public key");
  }
  return SecretBytes(secret->data(), secret->size());
}

// libssh 0.10 decrypts such a key but can't hand it over (see
// rsa_secret_of_container), and paes has no bcrypt_pbkdf of its own.
[[noreturn]] void refuse_protected_openssh_rsa(const std::string& name) {
  throw usage_error(name + ": a passphrase-protected ssh-rsa key in OpenSSH's format, which libssh 0.10 "
                    "decrypts but can't hand over; convert the key file to ssh-keygen's PEM format, keeping its "
                    "passphrase");
}

// The RSA private key in the unencrypted OpenSSH container `text`, whose
// public key is `public_key`: libssh 0.10 reads such a key but can't export
// it (it keeps no CRT exponents).
SecretBytes rsa_secret_of_container(std::string_view text, const SshPublicKey& public_key, const std::string& name) {
  const auto bytes = openssh_container_bytes(text);
  const auto container = bytes ? read_openssh_container(bytes->view()) : std::nullopt;
  if (!container) throw Error(name + ": malformed OpenSSH private key");
  if (container->cipher != kOpensshNoCipher) refuse_protected_openssh_rsa(name);
  WireReader fields = private_fields(*container, kRsaName, name);
  const auto n = fields.string();
  const auto e = fields.string();
  const auto d = fields.string();
  const auto iqmp = fields.string();
  const auto p = fields.string();
  const auto q = fields.string();
  const RsaPublicNumbers expected = ssh_rsa_public_numbers(public_key);
  if (!n || !e || !d || !iqmp || !p || !q || !same_bytes(*n, expected.modulus) ||
      !same_bytes(*e, expected.exponent)) {
    throw Error(name + ": the RSA private key does not hold its own public key");
  }
  return rsa_private_key_from_numbers({*n, *e, *d, *iqmp, *p, *q});
}

// The private key libssh read from `text` (a file named `name`).
SshPrivateKey private_key_of(ssh_key key, std::string_view text, const std::string& name) {
  SshPublicKey public_key = public_key_of(key, name);
  if (public_key.type == SshKeyType::ed25519) {
    SecretBytes secret = ed25519_secret_of(key, public_key, name);
    return SshPrivateKey{std::move(public_key), std::move(secret)};
  }
  if (is_openssh_container(text)) {
    SecretBytes secret = rsa_secret_of_container(text, public_key, name);
    return SshPrivateKey{std::move(public_key), std::move(secret)};
  }
  LibsshText pem;
  if (libssh().ssh_pki_export_privkey_base64(key, nullptr, nullptr, nullptr, pem.out()) != SSH_OK) {
    throw Error(name + ": libssh could not export the RSA key");
  }
  SecretBytes secret = rsa_private_key_from_pem(SecretBytes(as_bytes(pem.view()).data(), pem.view().size()));
  return SshPrivateKey{std::move(public_key), std::move(secret)};
}

// libssh asks this for a passphrase when a key file has one: answering none
// makes the import fail, and the flag says why.
int note_passphrase_asked(const char*, char*, std::size_t, int, int, void* asked) {
  *static_cast<bool*>(asked) = true;
  return SSH_ERROR;
}

// The public key in the clear header of a passphrase-protected OpenSSH
// container, validated by libssh.
SshPublicKey public_key_of_protected_container(std::string_view text, const std::string& name) {
  const auto bytes = openssh_container_bytes(text);
  const auto container = bytes ? read_openssh_container(bytes->view()) : std::nullopt;
  const auto type = container ? blob_type(container->public_blob) : std::nullopt;
  const SshKeyPtr key =
      type ? import_public_key(*type, encode_padded_base64(container->public_blob)) : SshKeyPtr{};
  if (!key) throw Error(name + ": malformed OpenSSH private key (its public key)");
  return public_key_of(key.get(), name);
}

// The public key of a passphrase-protected PEM key: NAME.pub's.
SshPublicKey public_key_of_pub_file(const std::optional<std::string>& public_key_file, const std::string& name) {
  const std::string pub_name = name + ".pub";
  if (!public_key_file) {
    throw usage_error(name + ": a passphrase-protected PEM key holds no public key, and " + pub_name +
                      " was not found beside it; put the public key there (ssh-keygen prints it from the key file)");
  }
  const SshPublicKeyLine line = parse_ssh_public_key_line(trimmed(*public_key_file), pub_name);
  if (!line.key) refuse_key_type(pub_name, line.unsupported_type);
  return *line.key;
}

void check_key_file_len(std::size_t len, const std::string& name) {
  if (len > kMaxSshKeyFileLen) {
    throw usage_error(name + " is larger than " + std::to_string(kMaxSshKeyFileLen / 1024) +
                      " KiB, more than any ssh private key");
  }
}

// The bits of a big-endian number (an mpint's leading zero byte included).
std::size_t bit_length(std::span<const std::uint8_t> number) {
  while (!number.empty() && number.front() == 0) number = number.subspan(1);
  if (number.empty()) return 0;
  std::size_t bits = (number.size() - 1) * 8;
  for (std::uint8_t top = number.front(); top != 0; top >>= 1) ++bits;
  return bits;
}

// age's checks of an RSA recipient (Go's ssh package and age's NewRSARecipient):
// an odd exponent from 3 up to 24 bits, a modulus of 256 bytes or more; and
// paes' upper bound.
void check_rsa_key(const SshPublicKey& key, const std::string& where) {
  const RsaPublicNumbers numbers = ssh_rsa_public_numbers(key);
  const std::size_t exponent_bits = bit_length(numbers.exponent);
  if (exponent_bits > 24 || exponent_bits < 2 || (numbers.exponent.back() & 1) == 0) {
    throw usage_error(where + " is an ssh-rsa key with an exponent age refuses (even, under 3, or over 24 bits)");
  }
  const std::size_t bits = bit_length(numbers.modulus);
  if ((bits + 7) / 8 < kMinSshRsaBits / 8 || bits > kMaxSshRsaBits) {
    throw usage_error(where + " is an ssh-rsa key of " + std::to_string(bits) + " bits: age and paes take " +
                      std::to_string(kMinSshRsaBits) + " to " + std::to_string(kMaxSshRsaBits) + " bits");
  }
}

}  // namespace

std::string ssh_public_key_line(const SshPublicKey& key) {
  return ssh_key_type_name(key.type) + " " + encode_padded_base64(key.wire);
}

std::string ssh_key_type_name(SshKeyType type) {
  return std::string(type == SshKeyType::ed25519 ? kEd25519Name : kRsaName);
}

std::string ssh_key_tag(const SshPublicKey& key) {
  const auto digest = sha256(as_text(key.wire));
  return encode_base64(std::span(digest).first(4));
}

SshPublicKeyLine parse_ssh_public_key_line(std::string_view line, const std::string& where) {
  if (line.size() > kMaxSshKeyLineLen) {
    throw usage_error(where + " is longer than " + std::to_string(kMaxSshKeyLineLen) + " bytes, which no ssh key is");
  }
  line = trimmed(line);
  const std::size_t type_end = std::min(line.find_first_of(" \t"), line.size());
  const std::string_view type = line.substr(0, type_end);
  const std::string_view rest = trimmed(line.substr(type_end));
  const std::string_view base64 = rest.substr(0, std::min(rest.find_first_of(" \t"), rest.size()));
  if (!is_type_name(type) || base64.empty()) {
    throw usage_error(where + " is not an ssh public key: expected a type, its key in base64, and a comment");
  }
  if (type != kEd25519Name && type != kRsaName) {
    const auto blob = decode_padded_base64(base64);
    if (!blob || blob_type(blob->view()) != type) {
      throw usage_error(where + " is not an ssh public key: its base64 is not a key of the type it names");
    }
    return SshPublicKeyLine{std::nullopt, std::string(type)};
  }
  quiet_libssh();
  const SshKeyPtr key = import_public_key(type, std::string(base64));
  if (!key) throw usage_error(where + " is a malformed " + std::string(type) + " public key");
  SshPublicKey public_key = public_key_of(key.get(), where);
  if (public_key.type == SshKeyType::rsa) {
    check_rsa_key(public_key, where);
  } else {
    try {
      ed25519_public_to_x25519(ssh_ed25519_public_key(public_key));
    } catch (const Error& error) {
      throw usage_error(where + " is an ssh-ed25519 key X25519 can't use: " + error.what());
    }
  }
  return SshPublicKeyLine{std::move(public_key), {}};
}

bool looks_like_ssh_public_key(std::string_view line) {
  line = trimmed(line);
  const std::size_t type_end = line.find_first_of(" \t");
  if (type_end == std::string_view::npos || !is_type_name(line.substr(0, type_end))) return false;
  // Every wire blob starts with its type's length, under 2^24: "AAAA" in base64.
  return trimmed(line.substr(type_end)).starts_with("AAAA");
}

bool looks_like_ssh_private_key(std::span<const std::uint8_t> text) {
  const std::string_view start = as_text(text);
  const std::string_view first_line = start.substr(0, start.find('\n'));
  return first_line.starts_with(kPemBegin) && trimmed(first_line).ends_with(kPrivateKeyMarker);
}

SshIdentityFile read_ssh_identity(const SecretBytes& text, const std::string& name,
                                  std::optional<std::string> public_key_file) {
  check_key_file_len(text.size(), name);
  const auto libssh_text = c_string(text.view());
  // What the file holds is the caller's choice of file: a usage error, as
  // for any key file that isn't what its option takes.
  if (!libssh_text) throw usage_error(name + ": not an ssh private key (it holds a NUL byte)");
  quiet_libssh();
  bool asked = false;
  ssh_key raw = nullptr;
  const int status =
      libssh().ssh_pki_import_privkey_base64(c_str(*libssh_text), nullptr, note_passphrase_asked, &asked, &raw);
  const SshKeyPtr key(raw);
  if (status == SSH_OK) {
    SshPrivateKey private_key = private_key_of(key.get(), as_text(text.view()), name);
    SshPublicKey public_key = private_key.public_key;
    return SshIdentityFile{std::move(public_key), std::move(private_key)};
  }
  if (!asked) {
    throw usage_error(name + ": not an ssh private key libssh can read (malformed, or of a type it doesn't know)");
  }
  if (!is_openssh_container(as_text(text.view()))) {
    return SshIdentityFile{public_key_of_pub_file(public_key_file, name), std::nullopt};
  }
  SshPublicKey public_key = public_key_of_protected_container(as_text(text.view()), name);
  // Refused now rather than after a passphrase prompt that could not help.
  if (public_key.type == SshKeyType::rsa) refuse_protected_openssh_rsa(name);
  return SshIdentityFile{std::move(public_key), std::nullopt};
}

SshPrivateKey decrypt_ssh_identity(const SecretBytes& text, const SecretBytes& passphrase,
                                   const SshPublicKey& expected, const std::string& name) {
  check_key_file_len(text.size(), name);
  const auto libssh_text = c_string(text.view());
  const auto libssh_passphrase = c_string(passphrase.view());
  // What the file holds is the caller's choice of file: a usage error, as
  // for any key file that isn't what its option takes.
  if (!libssh_text) throw usage_error(name + ": not an ssh private key (it holds a NUL byte)");
  if (!libssh_passphrase) throw Error(name + ": wrong passphrase (a passphrase holds no NUL byte)");
  quiet_libssh();
  ssh_key raw = nullptr;
  const int status =
      libssh().ssh_pki_import_privkey_base64(c_str(*libssh_text), c_str(*libssh_passphrase), nullptr, nullptr, &raw);
  const SshKeyPtr key(raw);
  if (status != SSH_OK) throw Error(name + ": wrong passphrase (or the key file is damaged)");
  SshPrivateKey private_key = private_key_of(key.get(), as_text(text.view()), name);
  if (private_key.public_key.wire != expected.wire) {
    throw Error(name + ": the private key is not the public key's that was found for it (" + name + ".pub?)");
  }
  return private_key;
}

std::array<std::uint8_t, kEd25519PublicKeyLen> ssh_ed25519_public_key(const SshPublicKey& key) {
  WireReader reader(key.wire);
  const auto type = reader.string();
  const auto point = reader.string();
  if (key.type != SshKeyType::ed25519 || !type || as_text(*type) != kEd25519Name || !point ||
      point->size() != kEd25519PublicKeyLen || !reader.at_end()) {
    throw Error("internal: not an ssh-ed25519 public key");
  }
  std::array<std::uint8_t, kEd25519PublicKeyLen> out{};
  std::copy(point->begin(), point->end(), out.begin());
  return out;
}

RsaPublicNumbers ssh_rsa_public_numbers(const SshPublicKey& key) {
  WireReader reader(key.wire);
  const auto type = reader.string();
  const auto exponent = reader.string();
  const auto modulus = reader.string();
  if (key.type != SshKeyType::rsa || !type || as_text(*type) != kRsaName || !exponent || !modulus ||
      exponent->empty() || modulus->empty() || !reader.at_end()) {
    throw Error("internal: not an ssh-rsa public key");
  }
  return RsaPublicNumbers{*modulus, *exponent};
}

}  // namespace paes
