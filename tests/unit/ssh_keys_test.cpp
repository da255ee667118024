// ssh keys as age 1.1.1 takes them (format/ssh_keys, format/ssh_stanza):
// keys made by ssh-keygen at test time, passphrase-protected ones included,
// and age itself as the other side: its stanzas open here, and a file made
// here with paes' stanzas opens in age.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cipher/kdf.hpp"
#include "cipher/x25519.hpp"
#include "format/ssh_keys.hpp"
#include "format/ssh_stanza.hpp"
#include "format/stanza_header.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"
#include "util/base64.hpp"
#include "util/text.hpp"

namespace paes::ssh_keys_test {

constexpr std::string_view kAgeVersionLine = "age-encryption.org/v1\n";
constexpr std::string_view kPassphrase = "correct horse battery";

SecretBytes secret_of(std::string_view text) { return SecretBytes(as_bytes(text).data(), text.size()); }

SecretBytes fresh_file_key() {
  SecretBytes key(kFileKeyLen);
  paes::random_bytes({key.data(), key.size()});
  return key;
}

bool same(const SecretBytes& a, const SecretBytes& b) {
  return std::equal(a.data(), a.data() + a.size(), b.data(), b.data() + b.size());
}

bool tool_installed(const std::string& tool) {
  return std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) == 0;
}

// Expects `call` to throw a paes::Error whose message holds `words`.
template <typename Call>
void expect_error(Call&& call, const std::string& words, ErrorKind kind = ErrorKind::failure) {
  try {
    call();
    ADD_FAILURE() << "no error; expected one saying \"" << words << "\"";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
    EXPECT_EQ(error.kind(), kind) << error.what();
  }
}

class SshKeys : public test::ScratchDirTest {
 protected:
  void SetUp() override {
    if (!tool_installed("ssh-keygen")) GTEST_SKIP() << "ssh-keygen is not installed (Debian: openssh-client)";
    test::ScratchDirTest::SetUp();
  }

  // A key made by ssh-keygen: `name` and `name`.pub in the scratch directory.
  std::string keygen(const std::string& name, const std::string& type_and_bits,
                     std::string_view passphrase = "", const std::string& format = "") {
    const std::string file = path(name);
    const std::string command = "ssh-keygen -q -t " + type_and_bits + (format.empty() ? "" : " -m " + format) +
                                " -N '" + std::string(passphrase) + "' -C paes-test -f '" + file + "' </dev/null";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("failed: " + command);
    return file;
  }

  static std::string read_text(const std::string& file) {
    const auto bytes = read_bytes(file);
    return {bytes.begin(), bytes.end()};
  }
  static SecretBytes read_secret(const std::string& file) { return secret_of(read_text(file)); }

  static SshPublicKey public_key(const std::string& key_file) {
    const SshPublicKeyLine line = parse_ssh_public_key_line(read_text(key_file + ".pub"), key_file + ".pub");
    if (!line.key) throw std::runtime_error(key_file + ".pub: unsupported " + line.unsupported_type);
    return *line.key;
  }

  static SshPrivateKey private_key(const std::string& key_file) {
    SshIdentityFile identity = read_ssh_identity(read_secret(key_file), key_file, read_text(key_file + ".pub"));
    if (!identity.key) throw std::runtime_error(key_file + " is passphrase-protected");
    return std::move(*identity.key);
  }

  // age's header of `file` (made by age), after its version line.
  StanzaHeader age_header(const std::string& file) {
    const auto bytes = read_bytes(file);
    const std::string_view text = as_text(bytes);
    EXPECT_TRUE(text.starts_with(kAgeVersionLine));
    return parse_stanza_header(as_bytes(text.substr(kAgeVersionLine.size())), file);
  }

  // A file age encrypted to `key_file`.pub, and its one stanza opened by
  // `identity`: the file key must open age's header MAC.
  void expect_age_stanza_opens(const std::string& key_file, const SshPrivateKey& identity) {
    const std::string plain = path("plain"), sealed = path("sealed.age");
    write_bytes(plain, as_bytes("hello"));
    const std::string command = "age -R '" + key_file + ".pub' -o '" + sealed + "' '" + plain + "'";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    const StanzaHeader header = age_header(sealed);
    ASSERT_EQ(header.stanzas.size(), 1u);
    const Stanza& stanza = header.stanzas[0];
    EXPECT_EQ(stanza.type, ssh_key_type_name(identity.public_key.type));
    EXPECT_EQ(stanza.args[0], ssh_key_tag(identity.public_key));
    EXPECT_TRUE(ssh_stanza_is_for(stanza, identity.public_key));
    const auto file_key = unwrap_ssh(stanza, identity, sealed);
    ASSERT_TRUE(file_key.has_value());
    EXPECT_TRUE(header_mac_matches(HeaderMacKey::of_file_key(*file_key), as_bytes(kAgeVersionLine), header));
  }

  // A whole age file made here, its stanza wrap_ssh's, of "hello": age's
  // payload is one last STREAM chunk (C2SP age.md, "Payload"). age -d with
  // `key_file` must print "hello".
  void expect_age_opens_our_stanza(const std::string& key_file) {
    const SecretBytes file_key = fresh_file_key();
    const std::vector<Stanza> stanzas = {wrap_ssh(file_key, public_key(key_file))};
    const std::string header =
        encode_stanza_header(as_bytes(kAgeVersionLine), stanzas, HeaderMacKey::of_file_key(file_key));
    std::vector<std::uint8_t> nonce(16);
    paes::random_bytes(nonce);
    const SecretBytes payload_key = hkdf_sha256(file_key, nonce, as_bytes("payload"), 32);
    std::array<std::uint8_t, 12> last_chunk_nonce{};
    last_chunk_nonce.back() = 1;
    const auto chunk = chacha20_poly1305_seal(payload_key, last_chunk_nonce, as_bytes("hello"));
    std::string file(kAgeVersionLine);
    file += header;
    file += as_text(nonce);
    file += as_text(chunk);
    const std::string sealed = path("ours.age"), opened = path("opened");
    write_bytes(sealed, as_bytes(file));
    const std::string command = "age -d -i '" + key_file + "' -o '" + opened + "' '" + sealed + "' </dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    EXPECT_EQ(read_text(opened), "hello");
  }

  void require_age() {
    if (!tool_installed("age")) GTEST_SKIP() << "age is not installed (Debian: age)";
  }
};

TEST_F(SshKeys, Ed25519WrapsAndUnwraps) {
  const std::string key = keygen("id_ed25519", "ed25519");
  const SshPrivateKey identity = private_key(key);
  const SshPublicKey recipient = public_key(key);
  EXPECT_EQ(recipient.type, SshKeyType::ed25519);
  EXPECT_EQ(identity.public_key.wire, recipient.wire);
  EXPECT_EQ(identity.secret.size(), kEd25519SecretKeyLen);

  const SecretBytes file_key = fresh_file_key();
  const Stanza stanza = wrap_ssh(file_key, recipient);
  EXPECT_EQ(stanza.type, kSshEd25519StanzaType);
  ASSERT_EQ(stanza.args.size(), 2u);
  EXPECT_EQ(stanza.args[0].size(), 6u);  // base64 of 4 bytes
  EXPECT_EQ(stanza.body.size(), 32u);
  EXPECT_TRUE(ssh_stanza_is_for(stanza, recipient));
  const auto opened = unwrap_ssh(stanza, identity, "test");
  ASSERT_TRUE(opened.has_value());
  EXPECT_TRUE(same(*opened, file_key));
}

TEST_F(SshKeys, RsaWrapsAndUnwrapsInBothFileFormats) {
  for (const std::string format : {"", "PEM"}) {
    SCOPED_TRACE(format.empty() ? "OpenSSH container" : format);
    const std::string key = keygen("id_rsa" + format, "rsa -b 2048", "", format);
    const SshPrivateKey identity = private_key(key);
    const SshPublicKey recipient = public_key(key);
    EXPECT_EQ(recipient.type, SshKeyType::rsa);
    EXPECT_EQ(identity.public_key.wire, recipient.wire);

    const SecretBytes file_key = fresh_file_key();
    const Stanza stanza = wrap_ssh(file_key, recipient);
    EXPECT_EQ(stanza.type, kSshRsaStanzaType);
    ASSERT_EQ(stanza.args.size(), 1u);
    EXPECT_EQ(stanza.args[0], ssh_key_tag(recipient));
    EXPECT_EQ(stanza.body.size(), 256u);
    const auto opened = unwrap_ssh(stanza, identity, "test");
    ASSERT_TRUE(opened.has_value());
    EXPECT_TRUE(same(*opened, file_key));
  }
}

TEST_F(SshKeys, AgesStanzasOpenWithTheirFileKeysHeaderMac) {
  require_age();
  for (const std::string type : {"ed25519", "rsa -b 2048"}) {
    SCOPED_TRACE(type);
    const std::string key = keygen("id", type);
    expect_age_stanza_opens(key, private_key(key));
    std::filesystem::remove(key);
    std::filesystem::remove(key + ".pub");
  }
}

TEST_F(SshKeys, AgeOpensOurStanzas) {
  require_age();
  for (const std::string type : {"ed25519", "rsa -b 2048"}) {
    SCOPED_TRACE(type);
    const std::string key = keygen("id", type);
    expect_age_opens_our_stanza(key);
    std::filesystem::remove(key);
    std::filesystem::remove(key + ".pub");
  }
}

TEST_F(SshKeys, ProtectedKeysDecryptWithTheirPassphraseOnly) {
  require_age();
  struct Case {
    std::string type, format;
  };
  for (const Case& c : {Case{"ed25519", ""}, Case{"rsa -b 2048", "PEM"}}) {
    SCOPED_TRACE(c.type + " " + c.format);
    const std::string key = keygen("id", c.type, kPassphrase, c.format);
    const SecretBytes text = read_secret(key);
    const SshIdentityFile file = read_ssh_identity(text, key, read_text(key + ".pub"));
    EXPECT_FALSE(file.key.has_value());
    EXPECT_EQ(file.public_key.wire, public_key(key).wire);

    expect_error([&] { decrypt_ssh_identity(text, secret_of("wrong"), file.public_key, key); }, "wrong passphrase");
    const SshPrivateKey identity = decrypt_ssh_identity(text, secret_of(kPassphrase), file.public_key, key);
    EXPECT_EQ(identity.public_key.wire, file.public_key.wire);
    expect_age_stanza_opens(key, identity);
    std::filesystem::remove(key);
    std::filesystem::remove(key + ".pub");
  }
}

TEST_F(SshKeys, ProtectedPemKeyNeedsItsPubFile) {
  const std::string key = keygen("id_rsa", "rsa -b 2048", kPassphrase, "PEM");
  expect_error([&] { read_ssh_identity(read_secret(key), key, std::nullopt); }, "id_rsa.pub", ErrorKind::usage);
}

TEST_F(SshKeys, ProtectedOpensshRsaKeyIsRefusedWithTheWayToConvertIt) {
  // libssh 0.10 decrypts it but can't export it (no CRT exponents).
  const std::string key = keygen("id_rsa", "rsa -b 2048", kPassphrase);
  expect_error([&] { read_ssh_identity(read_secret(key), key, read_text(key + ".pub")); }, "ssh-keygen's PEM format",
               ErrorKind::usage);
}

TEST_F(SshKeys, DecryptingWithAnotherKeysPublicKeyIsRefused) {
  const std::string key = keygen("id", "ed25519", kPassphrase);
  const SshPublicKey other = public_key(keygen("other", "ed25519"));
  expect_error([&] { decrypt_ssh_identity(read_secret(key), secret_of(kPassphrase), other, key); },
               "is not the public key's");
}

TEST_F(SshKeys, RsaKeysUnder2048BitsAreRefused) {
  const std::string key = keygen("id_rsa", "rsa -b 1024");
  expect_error([&] { public_key(key); }, "1024 bits: age and paes take 2048 to 16384 bits", ErrorKind::usage);
}

TEST_F(SshKeys, EcdsaKeysAreNamedAsUnsupported) {
  const std::string key = keygen("id_ecdsa", "ecdsa");
  const SshPublicKeyLine line = parse_ssh_public_key_line(read_text(key + ".pub"), "id_ecdsa.pub");
  EXPECT_FALSE(line.key.has_value());
  EXPECT_EQ(line.unsupported_type, "ecdsa-sha2-nistp256");
  expect_error([&] { read_ssh_identity(read_secret(key), key, std::nullopt); }, "ecdsa-sha2-nistp256",
               ErrorKind::usage);
  const std::string protected_key = keygen("id_ecdsa_protected", "ecdsa", kPassphrase);
  expect_error([&] { read_ssh_identity(read_secret(protected_key), protected_key, std::nullopt); },
               "ecdsa-sha2-nistp256", ErrorKind::usage);
}

TEST_F(SshKeys, AStanzaTaggedForUsWithADamagedBodyIsAnError) {
  for (const std::string type : {"ed25519", "rsa -b 2048"}) {
    SCOPED_TRACE(type);
    const std::string key = keygen("id" + std::to_string(type.size()), type);
    const SshPrivateKey identity = private_key(key);
    Stanza stanza = wrap_ssh(fresh_file_key(), identity.public_key);
    stanza.body[5] ^= 1;
    expect_error([&] { unwrap_ssh(stanza, identity, "file.age"); }, "failed to decrypt the file key");
  }
}

TEST_F(SshKeys, AnotherKeysStanzaIsNotOurs) {
  const SshPrivateKey ed25519 = private_key(keygen("a", "ed25519"));
  const SshPrivateKey other_ed25519 = private_key(keygen("b", "ed25519"));
  const SshPrivateKey rsa = private_key(keygen("c", "rsa -b 2048"));
  const SecretBytes file_key = fresh_file_key();
  const Stanza for_other = wrap_ssh(file_key, other_ed25519.public_key);
  EXPECT_FALSE(ssh_stanza_is_for(for_other, ed25519.public_key));
  EXPECT_FALSE(unwrap_ssh(for_other, ed25519, "test").has_value());
  EXPECT_FALSE(unwrap_ssh(for_other, rsa, "test").has_value());
  EXPECT_FALSE(unwrap_ssh(wrap_ssh(file_key, rsa.public_key), ed25519, "test").has_value());
  SecretBytes x25519_identity(kX25519KeyLen);
  paes::random_bytes({x25519_identity.data(), x25519_identity.size()});
  const Stanza x25519 = wrap_x25519(file_key, x25519_public_of(x25519_identity));
  EXPECT_FALSE(unwrap_ssh(x25519, ed25519, "test").has_value());
}

TEST_F(SshKeys, MalformedEd25519StanzasAreErrors) {
  const SshPrivateKey identity = private_key(keygen("id", "ed25519"));
  Stanza stanza = wrap_ssh(fresh_file_key(), identity.public_key);
  Stanza one_argument = stanza;
  one_argument.args.pop_back();
  expect_error([&] { unwrap_ssh(one_argument, identity, "f.age"); }, "f.age: malformed ssh-ed25519 stanza (");
  Stanza short_share = stanza;
  short_share.args[1] = encode_base64(std::vector<std::uint8_t>(31, 9));
  expect_error([&] { unwrap_ssh(short_share, identity, "f.age"); }, "not 32 bytes of canonical base64");
  Stanza low_order = stanza;
  low_order.args[1] = encode_base64(std::vector<std::uint8_t>(32, 0));
  expect_error([&] { unwrap_ssh(low_order, identity, "f.age"); }, "low-order point");
  Stanza rsa_without_tag;
  rsa_without_tag.type = kSshRsaStanzaType;
  const SshPrivateKey rsa = private_key(keygen("rsa", "rsa -b 2048"));
  expect_error([&] { unwrap_ssh(rsa_without_tag, rsa, "f.age"); }, "malformed ssh-rsa stanza (it takes one argument");
}

TEST_F(SshKeys, PublicKeyLinesAreReadStrictly) {
  const std::string text = read_text(keygen("id", "ed25519") + ".pub");
  const std::string type = text.substr(0, text.find(' '));
  const std::string base64 = text.substr(type.size() + 1, text.find(' ', type.size() + 1) - type.size() - 1);
  ASSERT_EQ(type, "ssh-ed25519");
  const SshPublicKey key = *parse_ssh_public_key_line(text, "line").key;
  // The comment is optional, tabs separate too, and the tag is age's.
  EXPECT_EQ(parse_ssh_public_key_line(type + "\t" + base64, "line").key->wire, key.wire);
  const auto digest = sha256(as_text(key.wire));
  EXPECT_EQ(ssh_key_tag(key), encode_base64(std::span(digest).first(4)));
  EXPECT_TRUE(looks_like_ssh_public_key(text));
  EXPECT_FALSE(looks_like_ssh_public_key("age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq"));

  for (const std::string& bad : {type, type + " " + base64.substr(0, base64.size() - 4), "ssh-rsa " + base64,
                                 type + " " + base64.substr(0, base64.size() - 1) + "=", type + " AAAA" + base64,
                                 "ecdsa-sha2-nistp256 " + base64, "ssh-ed25519\x01 " + base64}) {
    SCOPED_TRACE(bad);
    expect_error([&] { parse_ssh_public_key_line(bad, "line 3,"); }, "line 3, ", ErrorKind::usage);
  }
  expect_error([&] { parse_ssh_public_key_line(type + " " + base64 + std::string(kMaxSshKeyLineLen, 'x'), "l"); },
               "longer than 8192 bytes", ErrorKind::usage);
}

TEST_F(SshKeys, PrivateKeyFilesAreRecognised) {
  EXPECT_TRUE(looks_like_ssh_private_key(as_bytes("-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n")));
  EXPECT_TRUE(looks_like_ssh_private_key(as_bytes("-----BEGIN RSA PRIVATE KEY-----\r\nMIIE\n")));
  EXPECT_FALSE(looks_like_ssh_private_key(as_bytes("-----BEGIN AGE ENCRYPTED FILE-----\n")));
  EXPECT_FALSE(looks_like_ssh_private_key(as_bytes("AGE-SECRET-KEY-1...\n")));
  expect_error([] { read_ssh_identity(SecretBytes(kMaxSshKeyFileLen + 1), "big", std::nullopt); }, "16 KiB",
               ErrorKind::usage);
  expect_error([] { read_ssh_identity(secret_of("-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n"), "k", std::nullopt); },
               "k: not an ssh private key", ErrorKind::usage);
}

TEST(PaddedBase64, DecodesCanonicalPaddedTextOnly) {
  const auto decoded = decode_padded_base64("aGk=");
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(as_text(decoded->view()), "hi");
  EXPECT_EQ(as_text(decode_padded_base64("aGVsbG8h")->view()), "hello!");
  EXPECT_EQ(as_text(decode_padded_base64("aA==")->view()), "h");
  for (const char* bad : {"aGk", "aGl=", "aA=", "a===", "aGk==", "=aGk", "aG=k"}) {
    EXPECT_FALSE(decode_padded_base64(bad).has_value()) << bad;
  }
}

}  // namespace paes::ssh_keys_test
