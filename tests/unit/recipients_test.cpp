// Version 3 of the sealed format: recipients with age's keys, stanzas and
// header MAC. Round trips to one and three recipients; wrong identities;
// a changed, swapped, removed or added stanza (all refused, with nothing
// released under the output's name); unknown stanza types ignored;
// SealedReader on a recipients file; version 2 refused; re-keying with the
// body untouched; the committed test vector.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "api/recipients.hpp"
#include "format/sealed_format.hpp"
#include "format/stanza_header.hpp"
#include "format/x25519_stanza.hpp"
#include "paes/notice.hpp"
#include "paes/age_keys.hpp"
#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "paes/sealed.hpp"
#include "paes/secret.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kStanzasAt = 32;  // the header of stanzas follows the preamble
// The associated data every file here is sealed and opened with.
const std::vector<std::uint8_t> kAad = {'v', '3'};

std::string text_of(const std::vector<std::uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }

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
    spec.aad = kAad;
    for (std::size_t i = 0; i < count; ++i) spec.recipients.push_back(x25519_public_key(identities_[i]));
    run_sealed(spec, path("plain.bin"), path("sealed.paes"), {});
    return path("sealed.paes");
  }
  SealedSpec opener(const SecretBytes& identity) const {
    SealedSpec spec;
    spec.direction = Direction::decrypt;
    spec.aad = kAad;
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
  // Expects opening `bytes` (written to a file) with identity 0 to fail;
  // returns the message.
  std::string expect_refused(const std::vector<std::uint8_t>& bytes, const std::string& what) {
    write_bytes(path("bad.paes"), bytes);
    try {
      open(path("bad.paes"), opener(identities_[0]));
      ADD_FAILURE() << what << ": opened";
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }
  // The stanzas of a sealed file and its file key, as identity 0 opens them.
  OpenedStanzas stanzas_of(const std::string& sealed) {
    InputEndpoint in(sealed, false);
    std::array<std::uint8_t, kPreambleLen> preamble{};
    in.read_prefix(preamble);
    SealedSpec spec;
    spec.identities.push_back(identities_[0].clone());
    spec.aad = kAad;
    return open_stanzas(spec, Preamble::decode(preamble, in.name()), preamble, read_v3_header(in, kPreambleLen),
                        in.name());
  }

  std::vector<std::uint8_t> plain_;
  std::vector<SecretBytes> identities_;
};

TEST_F(RecipientsTest, OneRecipientRoundTripAndLayout) {
  const std::vector<std::uint8_t> sealed = read_bytes(seal(1));
  EXPECT_EQ(sealed[4], 3);   // version
  EXPECT_EQ(sealed[5], 3);   // key source: the file key is in the stanzas
  EXPECT_EQ(sealed[6], 32);  // AES-256
  EXPECT_TRUE(std::all_of(sealed.begin() + 7, sealed.begin() + 10, [](auto b) { return b == 0; }));
  EXPECT_TRUE(std::all_of(sealed.begin() + 16, sealed.begin() + 32, [](auto b) { return b == 0; }));
  const std::string text = text_of(sealed).substr(kStanzasAt);
  EXPECT_TRUE(text.starts_with("-> X25519 ")) << text.substr(0, 20);
  const StanzaHeader header = parse_stanza_header({sealed.data() + kStanzasAt, sealed.size() - kStanzasAt}, "t");
  ASSERT_EQ(header.stanzas.size(), 1u);
  EXPECT_EQ(header.stanzas[0].body.size(), 32u);
  EXPECT_EQ(sealed[kStanzasAt + header.length], 1 + 32 + 7);  // Tink's header follows the MAC line
  EXPECT_EQ(open(path("sealed.paes"), opener(identities_[0])), plain_);
}

TEST_F(RecipientsTest, EachOfThreeRecipientsOpensIt) {
  const std::string sealed = seal(3);
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

TEST_F(RecipientsTest, EveryHeaderByteIsAuthenticated) {
  const std::vector<std::uint8_t> good = read_bytes(seal(3));
  const StanzaHeader header = parse_stanza_header({good.data() + kStanzasAt, good.size() - kStanzasAt}, "t");
  // A flipped bit anywhere from the preamble through the MAC line: a changed
  // preamble, a malformed header, another stanza or MAC: never opened.
  for (std::size_t at = 0; at < kStanzasAt + header.length; ++at) {
    std::vector<std::uint8_t> bad = good;
    bad[at] ^= 0x01;
    expect_refused(bad, "bit flipped at " + std::to_string(at));
  }
  const std::string text = text_of(good);
  const auto rebuilt = [&](const std::vector<Stanza>& stanzas) {
    std::string stanza_text;
    for (const Stanza& s : stanzas) stanza_text += encode_stanza(s);
    // The original MAC line and body after the rewritten stanzas.
    const std::size_t mac_line = text.find("\n---") + 1;
    std::string out = text.substr(0, kStanzasAt) + stanza_text + text.substr(mac_line);
    return std::vector<std::uint8_t>(out.begin(), out.end());
  };
  std::vector<Stanza> swapped = header.stanzas;
  std::swap(swapped[1], swapped[2]);
  EXPECT_NE(expect_refused(rebuilt(swapped), "stanzas swapped").find("header MAC mismatch"), std::string::npos);
  std::vector<Stanza> removed = header.stanzas;
  removed.pop_back();
  EXPECT_NE(expect_refused(rebuilt(removed), "stanza removed").find("header MAC mismatch"), std::string::npos);
  std::vector<Stanza> added = header.stanzas;
  added.push_back(wrap_x25519(SecretBytes(kFileKeyLen), x25519_public_key(identities_[0])));
  EXPECT_NE(expect_refused(rebuilt(added), "stanza added").find("header MAC mismatch"), std::string::npos);
  // Cut inside the header.
  expect_refused(std::vector<std::uint8_t>(good.begin(), good.begin() + kStanzasAt + 50), "cut in the header");
  // Untouched, it still opens.
  write_bytes(path("good.paes"), good);
  EXPECT_EQ(open(path("good.paes"), opener(identities_[0])), plain_);
}

// Stanza types this paes doesn't know are skipped when opening, under a MAC
// that covers them, and kept by a re-key that adds recipients.
TEST_F(RecipientsTest, UnknownStanzaTypesAreIgnoredAndKeptByRekey) {
  const std::vector<std::uint8_t> sealed = read_bytes(seal(1));
  const OpenedStanzas opened = stanzas_of(path("sealed.paes"));
  std::vector<Stanza> stanzas;
  stanzas.push_back({"future-kem", {"arg1", "x"}, std::vector<std::uint8_t>(100, 0x5a)});
  stanzas.push_back(opened.header.stanzas[0]);
  const std::string header =
      encode_stanza_header({sealed.data(), kPreambleLen}, stanzas, HeaderMacKey::of_file_key(opened.file_key), kAad);
  std::vector<std::uint8_t> file(sealed.begin(), sealed.begin() + kPreambleLen);
  file.insert(file.end(), header.begin(), header.end());
  file.insert(file.end(), sealed.begin() + static_cast<std::ptrdiff_t>(kStanzasAt + opened.header.length), sealed.end());
  write_bytes(path("unknown.paes"), file);
  EXPECT_EQ(open(path("unknown.paes"), opener(identities_[0])), plain_);

  RekeySpec rekey;
  rekey.aad = kAad;  // the header MAC covers it
  rekey.identities.push_back(identities_[0].clone());
  rekey.recipients.push_back(x25519_public_key(identities_[1]));
  rekey.keep_recipients = true;
  const RekeyReport report = rekey_sealed(rekey, path("unknown.paes"), path("rekeyed.paes"), {});
  EXPECT_EQ(report.recipients_before, 2u);
  EXPECT_EQ(report.recipients_after, 3u);
  const std::vector<std::uint8_t> rekeyed = read_bytes(path("rekeyed.paes"));
  const StanzaHeader after = parse_stanza_header({rekeyed.data() + kStanzasAt, rekeyed.size() - kStanzasAt}, "t");
  ASSERT_EQ(after.stanzas.size(), 3u);
  EXPECT_EQ(after.stanzas[0].type, "future-kem");
  EXPECT_EQ(after.stanzas[0].body, stanzas[0].body);
  EXPECT_EQ(open(path("rekeyed.paes"), opener(identities_[1])), plain_);
}

TEST_F(RecipientsTest, RekeyLeavesTheBodyByteIdentical) {
  const std::vector<std::uint8_t> before = read_bytes(seal(1));
  const std::size_t body_before = kStanzasAt + stanzas_of(path("sealed.paes")).header.length;
  RekeySpec add;
  add.aad = kAad;  // the header MAC covers it
  add.identities.push_back(identities_[0].clone());
  add.recipients.push_back(x25519_public_key(identities_[1]));
  add.keep_recipients = true;
  const RekeyReport report = rekey_sealed(add, path("sealed.paes"), path("added.paes"), {});
  EXPECT_TRUE(report.copied_in_kernel);
  EXPECT_EQ(report.body_bytes, before.size() - body_before);
  const std::vector<std::uint8_t> added = read_bytes(path("added.paes"));
  const StanzaHeader header = parse_stanza_header({added.data() + kStanzasAt, added.size() - kStanzasAt}, "t");
  EXPECT_TRUE(std::equal(before.begin(), before.begin() + kPreambleLen, added.begin()));
  ASSERT_EQ(added.size() - kStanzasAt - header.length, before.size() - body_before);
  EXPECT_TRUE(std::equal(before.begin() + static_cast<std::ptrdiff_t>(body_before), before.end(),
                         added.begin() + static_cast<std::ptrdiff_t>(kStanzasAt + header.length)));
  EXPECT_EQ(open(path("added.paes"), opener(identities_[0])), plain_);
  EXPECT_EQ(open(path("added.paes"), opener(identities_[1])), plain_);

  // A new list: identity 2 only. Identity 0 no longer matches the new header
  // (it still knows the file key: removal is not revocation).
  RekeySpec replace;
  replace.aad = kAad;  // the header MAC covers it
  replace.identities.push_back(identities_[1].clone());
  replace.recipients.push_back(x25519_public_key(identities_[2]));
  rekey_sealed(replace, path("added.paes"), path("replaced.paes"), {});
  EXPECT_EQ(open(path("replaced.paes"), opener(identities_[2])), plain_);
  EXPECT_THROW(open(path("replaced.paes"), opener(identities_[0])), Error);

  // Over an existing output only with force; the input itself included.
  EXPECT_THROW(rekey_sealed(add, path("sealed.paes"), path("sealed.paes"), {}), Error);
  TransformOptions force;
  force.force = true;
  rekey_sealed(add, path("sealed.paes"), path("sealed.paes"), force);
  EXPECT_EQ(open(path("sealed.paes"), opener(identities_[1])), plain_);
}

TEST_F(RecipientsTest, RekeyRefusesWhatItCantOpen) {
  seal(1);
  RekeySpec spec;
  spec.aad = kAad;  // the header MAC covers it
  spec.identities.push_back(identities_[2].clone());  // not a recipient
  spec.recipients.push_back(x25519_public_key(identities_[1]));
  EXPECT_THROW(rekey_sealed(spec, path("sealed.paes"), path("x.paes"), {}), Error);
  EXPECT_FALSE(fs::exists(path("x.paes")));
  SealedSpec with_key;
  with_key.direction = Direction::encrypt;
  with_key.key = SecretBytes(32);
  run_sealed(with_key, path("plain.bin"), path("key.paes"), {});
  spec.identities[0] = identities_[0].clone();
  try {
    rekey_sealed(spec, path("key.paes"), path("x.paes"), {});
    ADD_FAILURE() << "a key file was re-keyed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
  }
  spec.recipients.clear();
  EXPECT_THROW(rekey_sealed(spec, path("sealed.paes"), path("x.paes"), {}), Error);  // nobody left
  EXPECT_FALSE(fs::exists(path("x.paes")));
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

// Version 2 (unreleased, not committing) is refused with a reason. An age
// file is read as one: cut short in its header or its armor, it says so.
TEST_F(RecipientsTest, VersionTwoIsNamedAndAgeFilesAreReadAsAge) {
  std::vector<std::uint8_t> v2 = read_bytes(seal(1));
  v2[4] = 2;
  EXPECT_NE(expect_refused(v2, "version 2").find("version 2"), std::string::npos);
  const std::pair<std::string, std::string> cut_age[] = {
      {"age-encryption.org/v1\n-> X25519 abc\n", "it ends before its MAC line"},
      {"-----BEGIN AGE ENCRYPTED FILE-----\n", "-----END AGE ENCRYPTED FILE-----"}};
  for (const auto& [start, why] : cut_age) {
    const std::vector<std::uint8_t> age(start.begin(), start.end());
    EXPECT_NE(expect_refused(age, start).find(why), std::string::npos) << start;
  }
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
  spec.recipients.resize(kMaxStanzas + 1, spec.recipients[0]);
  EXPECT_THROW(run_sealed(spec, path("plain.bin"), path("x.paes"), {}), Error);
  EXPECT_FALSE(fs::exists(path("x.paes")));
}

// tests/data/x25519: an age identity, a plaintext and a file sealed to the
// identity's recipient once, committed, so the format can't drift unnoticed.
TEST_F(RecipientsTest, CommittedVectorOpens) {
  const std::string dir = std::string(PAES_TEST_DATA_DIR) + "/x25519/";
  const std::vector<std::uint8_t> id_text = read_bytes(dir + "identity.key");
  std::vector<Identity> ids = parse_identity_file(SecretBytes(id_text.data(), id_text.size()), "identity.key");
  ASSERT_EQ(ids.size(), 1u);
  SealedSpec spec;
  spec.direction = Direction::decrypt;
  spec.identities.push_back(std::move(ids[0]));
  run_sealed(spec, dir + "sealed.paes", path("vector.out"), {});
  const std::vector<std::uint8_t> want = read_bytes(dir + "plain.txt");
  EXPECT_EQ(std::string(want.begin(), want.end()), "paes x25519 test vector\n");
  EXPECT_EQ(read_bytes(path("vector.out")), want);
}

// Issue 39: every key source's header MAC covers the associated data, so
// another (or none) fails at the header, before any segment, whichever way
// the file is opened.
TEST_F(RecipientsTest, EveryKeySourceCommitsToItsAssociatedData) {
  const std::vector<std::uint8_t> other = {'v', '4'};
  struct Source {
    const char* what;
    SealedSpec spec;
  };
  std::vector<Source> sources(4);
  sources[0] = {"a 16-byte key", {}};
  sources[0].spec.key = SecretBytes(16);
  sources[1] = {"a 32-byte key", {}};
  sources[1].spec.key = SecretBytes(32);
  sources[2] = {"a passphrase", {}};
  sources[2].spec.passphrase = SecretBytes(reinterpret_cast<const std::uint8_t*>("pw"), 2);
  sources[2].spec.scrypt_log2_n = 10;
  sources[3] = {"recipients", {}};
  sources[3].spec.recipients.push_back(x25519_public_key(identities_[0]));
  for (Source& source : sources) {
    SCOPED_TRACE(source.what);
    random_bytes({source.spec.key.data(), source.spec.key.size()});
    source.spec.direction = Direction::encrypt;
    source.spec.segment_len = 4096;
    source.spec.aad = kAad;
    fs::remove(path("sealed.paes"));
    run_sealed(source.spec, path("plain.bin"), path("sealed.paes"), {});
    SealedSpec opening;
    opening.direction = Direction::decrypt;
    opening.key = source.spec.key.clone();
    opening.passphrase = source.spec.passphrase.clone();
    if (!source.spec.recipients.empty()) opening.identities.push_back(identities_[0].clone());
    opening.aad = kAad;
    EXPECT_EQ(open(path("sealed.paes"), opening), plain_);
    for (const auto& wrong : {other, std::vector<std::uint8_t>{}}) {
      opening.aad = wrong;
      try {
        open(path("sealed.paes"), opening);
        ADD_FAILURE() << "opened under another associated data";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("header MAC mismatch"), std::string::npos) << e.what();
      }
      EXPECT_THROW(SealedReader(opening, path("sealed.paes"), 1), Error);
    }
  }
}

// A recipients file sealed before the MAC covered the associated data (its
// MAC over the header alone) is told apart: refused unless the caller allows
// files that don't commit, and then opened with a warning each time.
TEST_F(RecipientsTest, AHeaderSealedBeforeItCoveredTheAadIsRefusedUnlessAllowed) {
  const std::vector<std::uint8_t> sealed = read_bytes(seal(1));
  const OpenedStanzas opened = stanzas_of(path("sealed.paes"));
  const std::string old_header = encode_stanza_header({sealed.data(), kPreambleLen}, opened.header.stanzas,
                                                      HeaderMacKey::of_file_key(opened.file_key));
  std::vector<std::uint8_t> file(sealed.begin(), sealed.begin() + kPreambleLen);
  file.insert(file.end(), old_header.begin(), old_header.end());
  file.insert(file.end(), sealed.begin() + static_cast<std::ptrdiff_t>(kStanzasAt + opened.header.length), sealed.end());
  EXPECT_NE(expect_refused(file, "a MAC without the aad").find("does not cover the associated data"),
            std::string::npos);
  std::vector<std::string> warnings;
  set_notice_handler([&](NoticeLevel level, const std::string& text) {
    if (level == NoticeLevel::warning) warnings.push_back(text);
  });
  SealedSpec allowed = opener(identities_[0]);
  allowed.allow_uncommitted = true;
  EXPECT_EQ(open(path("bad.paes"), allowed), plain_);
  EXPECT_EQ(open(path("bad.paes"), allowed), plain_);
  set_notice_handler({});
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("does not commit to the associated data"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace paes
