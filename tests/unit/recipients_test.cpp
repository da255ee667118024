// Version 2 of the sealed format: X25519 recipients. Round trips to one and
// three recipients; wrong identities; a changed, swapped or removed stanza
// and a changed count (all refused, with nothing released under the output's
// name); SealedReader on a recipients file; the committed test vector.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "format/recipients.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"
#include "paes/secret.hpp"
#include "test_support.hpp"
#include "util/hex.hpp"

namespace paes {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlockAt = 32;  // the recipients block follows the preamble

class RecipientsTest : public test::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    plain_.resize(3 * 4096 + 777);
    random_bytes(plain_);
    write_bytes(path("plain.bin"), plain_);
    for (int i = 0; i < 3; ++i) identities_.push_back(x25519_generate_identity());
  }
  // Seals plain_ to the first `count` identities' recipients; returns the file.
  std::string seal(std::size_t count) {
    SealedSpec spec;
    spec.direction = Direction::encrypt;
    spec.segment_len = 4096;
    spec.aad = {'v', '2'};
    for (std::size_t i = 0; i < count; ++i) spec.recipients.push_back(x25519_public_key(identities_[i]));
    run_sealed(spec, path("plain.bin"), path("sealed.paes"), {});
    return path("sealed.paes");
  }
  SealedSpec opener(const SecretBytes& identity) const {
    SealedSpec spec;
    spec.direction = Direction::decrypt;
    spec.aad = {'v', '2'};
    spec.identities.push_back(identity.clone());
    return spec;
  }
  // Opens `sealed` to out.bin; returns the plaintext, or throws Error and
  // checks that nothing appeared under out.bin.
  std::vector<std::uint8_t> open(const std::string& sealed, const SealedSpec& spec) {
    const std::string out = path("out.bin");
    fs::remove(out);
    try {
      run_sealed(spec, sealed, out, {});
    } catch (const Error&) {
      EXPECT_FALSE(fs::exists(out)) << "a failed opening released " << out;
      throw;
    }
    return read_bytes(out);
  }
  // Expects opening `bytes` (written to a file) with identity 0 to fail.
  void expect_refused(const std::vector<std::uint8_t>& bytes, const std::string& what) {
    write_bytes(path("bad.paes"), bytes);
    EXPECT_THROW(open(path("bad.paes"), opener(identities_[0])), Error) << what;
  }

  std::vector<std::uint8_t> plain_;
  std::vector<SecretBytes> identities_;
};

TEST_F(RecipientsTest, OneRecipientRoundTripAndLayout) {
  const std::vector<std::uint8_t> sealed = read_bytes(seal(1));
  ASSERT_GE(sealed.size(), kBlockAt + 1 + kStanzaLen);
  EXPECT_EQ(sealed[4], 2);   // version
  EXPECT_EQ(sealed[5], 3);   // key source: x25519 recipients
  EXPECT_EQ(sealed[6], 32);  // AES-256
  EXPECT_TRUE(std::all_of(sealed.begin() + 7, sealed.begin() + 10, [](auto b) { return b == 0; }));
  EXPECT_TRUE(std::all_of(sealed.begin() + 16, sealed.begin() + 32, [](auto b) { return b == 0; }));
  EXPECT_EQ(sealed[kBlockAt], 1);
  EXPECT_EQ(sealed[kBlockAt + 1 + kStanzaLen], 1 + 32 + 7);  // Tink's header follows the block
  EXPECT_EQ(open(path("sealed.paes"), opener(identities_[0])), plain_);
}

TEST_F(RecipientsTest, EachOfThreeRecipientsOpensIt) {
  const std::string sealed = seal(3);
  EXPECT_EQ(read_bytes(sealed)[kBlockAt], 3);
  for (const SecretBytes& identity : identities_) EXPECT_EQ(open(sealed, opener(identity)), plain_);
  // Several identities: the one that matches is found whatever its place.
  SealedSpec spec = opener(x25519_generate_identity());
  spec.identities.push_back(identities_[2].clone());
  EXPECT_EQ(open(sealed, spec), plain_);
}

TEST_F(RecipientsTest, WrongIdentityAadKeyOrPassphraseFails) {
  const std::string sealed = seal(2);
  try {
    open(sealed, opener(identities_[2]));
    ADD_FAILURE() << "a non-recipient opened the file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no identity matches any of the 2 recipients"), std::string::npos)
        << e.what();
  }
  SealedSpec wrong_aad = opener(identities_[0]);
  wrong_aad.aad = {'x'};
  EXPECT_THROW(open(sealed, wrong_aad), Error);
  SealedSpec with_key;
  with_key.direction = Direction::decrypt;
  with_key.key = SecretBytes(32);
  try {
    open(sealed, with_key);
    ADD_FAILURE() << "a key opened a recipients file";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
  }
}

TEST_F(RecipientsTest, EveryStanzaIsAuthenticated) {
  const std::vector<std::uint8_t> good = read_bytes(seal(3));
  const std::size_t first = kBlockAt + 1;
  // A flipped bit anywhere in a stanza: the one identity 0 opens, and another.
  for (const std::size_t at : {first, first + 40, first + kStanzaLen - 1, first + kStanzaLen + 3,
                               first + 2 * kStanzaLen + 70}) {
    std::vector<std::uint8_t> bad = good;
    bad[at] ^= 0x01;
    expect_refused(bad, "bit flipped at " + std::to_string(at));
  }
  // Stanzas 1 and 2 swapped: identity 0 still unwraps stanza 0, but the body's
  // associated data changed.
  std::vector<std::uint8_t> swapped = good;
  std::swap_ranges(swapped.begin() + static_cast<std::ptrdiff_t>(first + kStanzaLen),
                   swapped.begin() + static_cast<std::ptrdiff_t>(first + 2 * kStanzaLen),
                   swapped.begin() + static_cast<std::ptrdiff_t>(first + 2 * kStanzaLen));
  expect_refused(swapped, "stanzas swapped");
  // The last stanza removed and the count decremented.
  std::vector<std::uint8_t> removed = good;
  removed.erase(removed.begin() + static_cast<std::ptrdiff_t>(first + 2 * kStanzaLen),
                removed.begin() + static_cast<std::ptrdiff_t>(first + 3 * kStanzaLen));
  removed[kBlockAt] = 2;
  expect_refused(removed, "stanza removed");
  // Every bit of the count: fewer stanzas, more (reading into the body), none.
  for (int bit = 0; bit < 8; ++bit) {
    std::vector<std::uint8_t> bad = good;
    bad[kBlockAt] ^= static_cast<std::uint8_t>(1 << bit);
    expect_refused(bad, "count bit " + std::to_string(bit));
  }
  std::vector<std::uint8_t> none = good;
  none[kBlockAt] = 0;
  write_bytes(path("bad.paes"), none);
  try {
    open(path("bad.paes"), opener(identities_[0]));
    ADD_FAILURE() << "a count of 0 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("corrupt"), std::string::npos) << e.what();
  }
  // Cut inside the block.
  expect_refused(std::vector<std::uint8_t>(good.begin(), good.begin() + kBlockAt + 1 + 100), "cut in the block");
  // Untouched, it still opens.
  write_bytes(path("good.paes"), good);
  EXPECT_EQ(open(path("good.paes"), opener(identities_[0])), plain_);
}

TEST_F(RecipientsTest, SealedReaderReadsARecipientsFile) {
  const std::string sealed = seal(3);
  const SealedReader reader(opener(identities_[1]), sealed, 2);
  ASSERT_EQ(reader.size(), plain_.size());
  std::vector<std::uint8_t> got(5000);
  ASSERT_EQ(reader.read_at(4000, got), got.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), plain_.begin() + 4000));
  EXPECT_THROW(SealedReader(opener(x25519_generate_identity()), sealed, 2), Error);
}

// What a file's preamble says of its key, for a decrypt that was given none.
TEST_F(RecipientsTest, SealedKeyKindIsReadFromThePreamble) {
  EXPECT_EQ(sealed_key_kind(seal(1)), SealedKeyKind::identities);
  SealedSpec spec;
  spec.direction = Direction::encrypt;
  spec.key = SecretBytes(32);
  run_sealed(spec, path("plain.bin"), path("key.paes"), {});
  EXPECT_EQ(sealed_key_kind(path("key.paes")), SealedKeyKind::raw_key);
  spec.key = SecretBytes();
  spec.passphrase = SecretBytes(reinterpret_cast<const std::uint8_t*>("pw"), 2);
  spec.scrypt_log2_n = 10;
  run_sealed(spec, path("plain.bin"), path("pw.paes"), {});
  EXPECT_EQ(sealed_key_kind(path("pw.paes")), SealedKeyKind::passphrase);
  EXPECT_THROW(sealed_key_kind(path("plain.bin")), Error);  // no paes file
  EXPECT_THROW(sealed_key_kind(path("missing.paes")), Error);
}

TEST_F(RecipientsTest, SealingRefusesMixedOrTooManyRecipients) {
  SealedSpec spec;
  spec.direction = Direction::encrypt;
  spec.recipients.push_back(x25519_public_key(identities_[0]));
  spec.key = SecretBytes(32);
  EXPECT_THROW(run_sealed(spec, path("plain.bin"), path("x.paes"), {}), Error);
  spec.key = SecretBytes();
  spec.format = SealedFormat::tink;
  EXPECT_THROW(run_sealed(spec, path("plain.bin"), path("x.paes"), {}), Error);
  spec.format = SealedFormat::paes;
  spec.recipients.resize(256, spec.recipients[0]);
  EXPECT_THROW(run_sealed(spec, path("plain.bin"), path("x.paes"), {}), Error);
  EXPECT_FALSE(fs::exists(path("x.paes")));
  spec.recipients.resize(255);
  run_sealed(spec, path("plain.bin"), path("x.paes"), {});
  EXPECT_EQ(read_bytes(path("x.paes"))[kBlockAt], 255);
}

TEST(Recipients, StringsAndLowOrderKeys) {
  const SecretBytes identity = x25519_generate_identity();
  const X25519PublicKey key = x25519_public_key(identity);
  const std::string text = format_recipient(key);
  EXPECT_EQ(text.size(), 12u + 64u);
  EXPECT_EQ(parse_recipient(text), key);
  EXPECT_FALSE(parse_recipient(text.substr(0, text.size() - 1)));
  EXPECT_FALSE(parse_recipient("paes-x25519-secret:" + text.substr(12)));
  EXPECT_FALSE(parse_recipient("age1" + text.substr(12)));
  // The point of order 1 (u = 0): the shared secret is all zero, refused.
  const X25519PublicKey zero{};
  EXPECT_THROW(wrap_file_key(SecretBytes(32), zero), Error);
  Stanza stanza;  // an all-zero ephemeral key
  EXPECT_THROW(unwrap_file_key(stanza, identity, key), Error);
}

// tests/data/x25519: an identity, a plaintext and a file sealed to the
// identity's recipient once, committed, so the format can't drift unnoticed.
TEST_F(RecipientsTest, CommittedVectorOpens) {
  const std::string dir = std::string(PAES_TEST_DATA_DIR) + "/x25519/";
  std::ifstream id_in(dir + "identity.key");
  std::string line;
  SecretBytes identity;
  while (std::getline(id_in, line)) {
    if (line.rfind(kIdentityPrefix, 0) == 0) identity = std::move(*decode_hex(line.substr(kIdentityPrefix.size())));
  }
  ASSERT_EQ(identity.size(), 32u);
  SealedSpec spec;
  spec.direction = Direction::decrypt;
  spec.identities.push_back(std::move(identity));
  run_sealed(spec, dir + "sealed.paes", path("vector.out"), {});
  const std::vector<std::uint8_t> want = read_bytes(dir + "plain.txt");
  EXPECT_EQ(std::string(want.begin(), want.end()), "paes x25519 test vector\n");
  EXPECT_EQ(read_bytes(path("vector.out")), want);
}

}  // namespace
}  // namespace paes
