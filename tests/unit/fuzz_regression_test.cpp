// The parsers the fuzz targets in fuzz/ drive, tested on the inputs that
// matter: what they accept, what they refuse, and every input a fuzzer found
// that once crashed or misbehaved (docs/FUZZING.md).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/command_line.hpp"
#include "format/salted_header.hpp"
#include "paes/error.hpp"
#include "util/hex.hpp"

namespace paes {
namespace {

std::vector<std::uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

// ---- openssl's "Salted__" header --------------------------------------------

TEST(SaltedHeader, RoundTrips) {
  const SaltedSalt salt{1, 2, 3, 4, 5, 6, 7, 8};
  const auto header = encode_salted_header(salt);
  EXPECT_EQ(std::string(header.begin(), header.begin() + 8), "Salted__");
  EXPECT_EQ(decode_salted_header(header, "in"), salt);
}

TEST(SaltedHeader, RefusesShortOrForeignInput) {
  const std::string message = "in: not openssl enc -pbkdf2 data (no \"Salted__\" header)";
  for (const std::string& text : {std::string(), std::string("Salted_"), std::string("Salted__1234567"),
                                  std::string("salted__12345678"), std::string(16, '\0')}) {
    try {
      decode_salted_header(bytes_of(text), "in");
      ADD_FAILURE() << "accepted " << text.size() << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(e.what(), message);
    }
  }
}

// openssl enc -P's key and IV for the two cases below.
constexpr const char* kSha512KeyAndIv = "6253233800f282303851d53d3764809a0695c6e25fdb671bcfe88b35eb1814f8";
constexpr const char* kNoSaltKeyAndIv = "6a65192736d636be9f08743ea5a9e37cf93c2701cc689aac593a23a0a9df5677";

TEST(SaltedHeader, DerivesKeyAndIvAsOpensslEncPbkdf2) {
  // openssl enc -aes-128-cbc -pbkdf2 -iter 1 -pass pass:pw -S 0102030405060708 -P
  CipherSpec base;
  base.mode = Mode::cbc;
  base.direction = Direction::decrypt;
  Pbkdf2Key pbkdf2;
  pbkdf2.passphrase = SecretBytes(reinterpret_cast<const std::uint8_t*>("pw"), 2);
  pbkdf2.iterations = 1;
  pbkdf2.key_len = 16;
  const CipherSpec spec = salted_cipher_spec(base, pbkdf2, SaltedSalt{1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(encode_hex({spec.key.data(), spec.key.size()}), "ff0c84306a85c6dcdf35a041c6bcd8de");
  EXPECT_EQ(encode_hex(spec.iv), "ca5e72bebad46864c43879c196df6cd5");
  EXPECT_EQ(spec.mode, Mode::cbc);
  EXPECT_EQ(spec.direction, Direction::decrypt);
  pbkdf2.key_len = 20;
  EXPECT_THROW(salted_cipher_spec(base, pbkdf2, SaltedSalt{}), Error);
  // openssl enc -aes-128-cbc -pbkdf2 -iter 1 -md sha512 -pass pass:pw -S 0102030405060708 -P, and the
  // same with -nosalt (PBKDF2 over an empty salt).
  pbkdf2.key_len = 16;
  pbkdf2.digest = "sha512";
  const CipherSpec sha512 = salted_cipher_spec(base, pbkdf2, SaltedSalt{1, 2, 3, 4, 5, 6, 7, 8});
  EXPECT_EQ(encode_hex({sha512.key.data(), sha512.key.size()}) + encode_hex(sha512.iv), kSha512KeyAndIv);
  pbkdf2.digest = "sha256";
  const CipherSpec no_salt = salted_cipher_spec(base, pbkdf2, {});
  EXPECT_EQ(encode_hex({no_salt.key.data(), no_salt.key.size()}) + encode_hex(no_salt.iv), kNoSaltKeyAndIv);
}

// ---- the command line -------------------------------------------------------

cli::ParseOutcome parse(std::vector<std::string> words) {
  words.insert(words.begin(), "paes");
  std::vector<const char*> argv;
  for (const auto& word : words) argv.push_back(word.c_str());
  cli::CommandLine command_line;
  return command_line.parse(static_cast<int>(argv.size()), argv.data());
}

TEST(CommandLine, ChoosesTheCommand) {
  EXPECT_EQ(parse({"encrypt", "--key-file", "k", "in", "-o", "out"}).command, cli::Command::encrypt);
  EXPECT_EQ(parse({"decrypt", "--mode", "ctr", "--chunk-size", "64K"}).command, cli::Command::decrypt);
  EXPECT_EQ(parse({"bench", "--size", "1M,4K"}).command, cli::Command::bench);
  EXPECT_EQ(parse({"info"}).command, cli::Command::info);
  EXPECT_EQ(parse({"keygen", "-o", "k"}).command, cli::Command::keygen);
}

TEST(CommandLine, HelpAndVersionAreTextNotErrors) {
  const auto help = parse({"encrypt", "--help"});
  EXPECT_EQ(help.command, cli::Command::none);
  EXPECT_EQ(help.exit_status, 0);
  EXPECT_NE(help.out.find("--segment-size"), std::string::npos);
  EXPECT_TRUE(help.error.empty());
  const auto version = parse({"--version"});
  EXPECT_EQ(version.exit_status, 0);
  EXPECT_EQ(version.out, "paes " PAES_VERSION "\n");
}

TEST(CommandLine, UsageErrorsAreOneLineWithExitTwo) {
  for (const std::vector<std::string>& words :
       {std::vector<std::string>{}, {"frobnicate"}, {"encrypt", "--segment-size", "12Q"},
        {"decrypt", "--chunk-size", "2G"}, {"bench", "--size", "1M,,x"}, {"encrypt", "--threads", "0"},
        {"encrypt", "--key-file", "a", "--key-env", "B"}}) {
    const auto outcome = parse(words);
    EXPECT_EQ(outcome.command, cli::Command::none);
    EXPECT_EQ(outcome.exit_status, 2);
    EXPECT_FALSE(outcome.error.empty());
    EXPECT_EQ(outcome.error.find('\n'), std::string::npos) << outcome.error;
  }
}

TEST(CommandLine, EmptyWordsAreValuesNotAHang) {
  // fuzz/corpus/fuzz_cli_options/regression-empty-word-hang: CLI11 took the
  // empty word for the name of the key option group and never returned.
  // Inputs are many now (a data set), and an empty one is refused as any
  // empty value is.
  const auto extra = parse({"encrypt", "x", "", "-o", "y"});
  EXPECT_EQ(extra.exit_status, 2);
  EXPECT_NE(extra.error.find("input is empty"), std::string::npos) << extra.error;
  EXPECT_EQ(parse({"encrypt", "--aad", "", "-o", "y", "x"}).command, cli::Command::encrypt);
  // Empty values elsewhere are refused (an unset variable, not a choice).
  const auto empty_output = parse({"encrypt", "--aad", "", "-o", "", "x"});
  EXPECT_EQ(empty_output.exit_status, 2);
  EXPECT_NE(empty_output.error.find("--output is empty"), std::string::npos) << empty_output.error;
}

}  // namespace
}  // namespace paes
