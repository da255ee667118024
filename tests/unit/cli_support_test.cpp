#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/passphrase.hpp"
#include "cli/progress.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"

namespace paes::cli {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::uint64_t kKiB = 1024;
constexpr std::uint64_t kMiB = 1024 * kKiB;
constexpr std::uint64_t kGiB = 1024 * kMiB;
constexpr std::uint64_t kTiB = 1024 * kGiB;

std::string as_string(const SecretBytes& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The message of the Error that `call` throws; fails the test if it throws none.
template <typename Call>
std::string error_message(Call call, ErrorKind expected_kind = ErrorKind::failure) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), expected_kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no Error thrown";
  return {};
}

// ---- format_progress_line ----------------------------------------------------

std::string size_field(std::uint64_t bytes) {
  std::string line = format_progress_line(bytes, 0, 0);
  return line.substr(line.find_first_not_of(' '));
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(FormatSize, TheUnitFollowsTheRoundedValue) {
  // The unit was chosen before rounding: "1024.0 KiB" for a byte short of 1 MiB.
  EXPECT_EQ(format_size(kMiB - 1), "1.0 MiB");
  EXPECT_EQ(format_size(1048560), "1.0 MiB");
  EXPECT_EQ(format_size(kGiB - 1), "1.00 GiB");
  EXPECT_EQ(format_size(1023 * 1024), "1023.0 KiB");
  EXPECT_EQ(format_size(1023), "1023 B");
  EXPECT_EQ(format_size(1024), "1.0 KiB");
}

TEST(FormatProgressLine, MatchesTheDocumentedExample) {
  const std::uint64_t done = 412 * kMiB;
  EXPECT_EQ(format_progress_line(done, kGiB, static_cast<double>(done) / (1.21 * kGiB)),
            "  412.0 MiB / 1.00 GiB   40%  1.21 GiB/s   ETA 0:01");
}

TEST(FormatProgressLine, SizesUseBinaryUnitsWithTwoDecimalsFromGiB) {
  EXPECT_EQ(size_field(0), "0 B");
  EXPECT_EQ(size_field(1023), "1023 B");
  EXPECT_EQ(size_field(kKiB), "1.0 KiB");
  EXPECT_EQ(size_field(1536), "1.5 KiB");
  EXPECT_EQ(size_field(5 * kMiB), "5.0 MiB");
  EXPECT_EQ(size_field(3 * kGiB / 2), "1.50 GiB");
  EXPECT_EQ(size_field(2 * kTiB), "2.00 TiB");
  EXPECT_EQ(size_field(5000 * kTiB), "5000.00 TiB");
}

TEST(FormatProgressLine, RateIsInTheSizesBinaryUnits) {
  EXPECT_TRUE(contains(format_progress_line(500 * kMiB, 0, 1.0), "500.0 MiB/s"));
  EXPECT_TRUE(contains(format_progress_line(5 * kGiB, 0, 2.0), "2.50 GiB/s"));
  EXPECT_TRUE(contains(format_progress_line(0, 0, 1.0), "0.0 MiB/s"));
}

TEST(FormatProgressLine, PercentRoundsDownAndReachesHundredOnlyWhenDone) {
  EXPECT_TRUE(contains(format_progress_line(0, 1000, 0), "  0%"));
  EXPECT_TRUE(contains(format_progress_line(999, 1000, 0), " 99%"));
  EXPECT_TRUE(contains(format_progress_line(kTiB - 1, kTiB, 0), " 99%"));
  EXPECT_TRUE(contains(format_progress_line(1000, 1000, 0), "100%"));
  EXPECT_TRUE(contains(format_progress_line(1200, 1000, 1.0), "100%"));
  EXPECT_TRUE(contains(format_progress_line(1200, 1000, 1.0), "ETA 0:00"));
}

TEST(FormatProgressLine, UnknownTotalShowsNoTotalPercentOrEta) {
  const std::string line = format_progress_line(5 * kMiB, 0, 2.0);
  EXPECT_EQ(line, "    5.0 MiB   2.5 MiB/s");
}

TEST(FormatProgressLine, EtaIsMinutesSecondsThenHoursMinutesSeconds) {
  // One MB/s, so the remaining megabytes are the ETA's seconds.
  const auto eta_after_one_second = [](std::uint64_t remaining_seconds) {
    const std::string line = format_progress_line(1'000'000, 1'000'000 * (1 + remaining_seconds), 1.0);
    return line.substr(line.find("ETA "));
  };
  EXPECT_EQ(eta_after_one_second(0), "ETA 0:00");
  EXPECT_EQ(eta_after_one_second(7), "ETA 0:07");
  EXPECT_EQ(eta_after_one_second(75), "ETA 1:15");
  EXPECT_EQ(eta_after_one_second(3599), "ETA 59:59");
  EXPECT_EQ(eta_after_one_second(3600), "ETA 1:00:00");
  EXPECT_EQ(eta_after_one_second(3725), "ETA 1:02:05");
  EXPECT_EQ(eta_after_one_second(100 * 3600 - 1), "ETA 99:59:59");
  EXPECT_EQ(eta_after_one_second(100 * 3600), "ETA >99h");
}

TEST(FormatProgressLine, NoEtaWithoutARate) {
  EXPECT_FALSE(contains(format_progress_line(0, kGiB, 5.0), "ETA"));  // nothing done yet
  EXPECT_FALSE(contains(format_progress_line(kMiB, kGiB, 0), "ETA"));  // no time elapsed
  EXPECT_FALSE(contains(format_progress_line(kMiB, kGiB, 0), "/s"));
}

TEST(FormatProgressLine, StaysNarrowEnoughForALabelOnAnEightyColumnTerminal) {
  const std::vector<std::uint64_t> sizes = {0, 1, 1023, 1000 * kKiB - 1, 1000 * kMiB - 1, 1000 * kGiB - 1,
                                            1000 * kTiB - 1};
  std::size_t widest = 0;
  for (std::uint64_t total : sizes) {
    for (std::uint64_t done : sizes) {
      if (total != 0 && done > total) continue;
      for (double seconds : {0.0, 1e-3, 1.0, 59.0, 1e6}) {
        if (seconds > 0 && static_cast<double>(done) / seconds >= 1000e9) continue;  // beyond the documented rates
        const std::string line = format_progress_line(done, total, seconds);
        EXPECT_LT(line.size(), 60u) << '"' << line << '"';
        widest = std::max(widest, line.size());
      }
    }
  }
  EXPECT_GT(widest, 50u);  // the grid did reach the longest lines
}

// ---- first_line_length -------------------------------------------------------

std::size_t first_line_of(const std::string& text) {
  return first_line_length({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

TEST(FirstLineLength, StripsOneLfOrCrLfEnding) {
  EXPECT_EQ(first_line_of("pass phrase"), 11u);
  EXPECT_EQ(first_line_of("pass phrase\n"), 11u);
  EXPECT_EQ(first_line_of("pass phrase\r\n"), 11u);
  EXPECT_EQ(first_line_of("pass phrase\n\n"), 11u);
  EXPECT_EQ(first_line_of("pass\r\nsecond line\r\n"), 4u);
}

TEST(FirstLineLength, KeepsEverythingElse) {
  EXPECT_EQ(first_line_of(" spaced out "), 12u);
  EXPECT_EQ(first_line_of("carriage\rreturn\n"), 15u);  // a '\r' inside the line is data
  EXPECT_EQ(first_line_of("no line feed\r"), 13u);      // nor is a lone one at the end an ending
  EXPECT_EQ(first_line_of(""), 0u);
  EXPECT_EQ(first_line_of("\n"), 0u);
  EXPECT_EQ(first_line_of("\r\n"), 0u);
  EXPECT_EQ(first_line_of("\nsecond"), 0u);
}

// ---- openssl_passphrase_length -----------------------------------------------

std::size_t openssl_line_of(const std::string& text) {
  return openssl_passphrase_length({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

// As `openssl enc -pass file:` (OpenSSL 3.0, checked with the command).
TEST(OpensslPassphraseLength, DropsOnlyTheLineFeed) {
  EXPECT_EQ(openssl_line_of("pass phrase\n"), 11u);
  EXPECT_EQ(openssl_line_of("pass phrase\r\n"), 12u);  // the '\r' is part of it
  EXPECT_EQ(openssl_line_of("pass\nsecond line\n"), 4u);
  EXPECT_EQ(openssl_line_of("no line feed"), 12u);
  EXPECT_EQ(openssl_line_of(""), 0u);
  EXPECT_EQ(openssl_line_of("\nsecond"), 0u);
}

TEST(OpensslPassphraseLength, StopsAt1023BytesAndAtANul) {
  EXPECT_EQ(openssl_line_of(std::string(1022, 'x') + "\n"), 1022u);
  EXPECT_EQ(openssl_line_of(std::string(1023, 'x') + "\n"), 1023u);
  EXPECT_EQ(openssl_line_of(std::string(1023, 'x') + "\r\n"), 1023u);
  EXPECT_EQ(openssl_line_of(std::string(2000, 'x')), 1023u);
  EXPECT_EQ(openssl_line_of(std::string("ab\0cd\n", 6)), 2u);
  EXPECT_EQ(openssl_line_of(std::string("\0cd\n", 4)), 0u);
}

// ---- passphrase_from_file ----------------------------------------------------

class PassphraseFileTest : public test::ScratchDirTest {
 protected:
  std::string write_file(const std::string& content) const {
    const fs::path path = dir_ / "passphrase";
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }
};

TEST_F(PassphraseFileTest, TakesTheFirstLineSpacesIncluded) {
  EXPECT_EQ(as_string(passphrase_from_file(write_file("correct horse battery\nstaple\n"))),
            "correct horse battery");
}

TEST_F(PassphraseFileTest, StripsACrLfEnding) {
  EXPECT_EQ(as_string(passphrase_from_file(write_file("windows line\r\n"))), "windows line");
}

TEST_F(PassphraseFileTest, TheOpensslRuleKeepsTheCarriageReturn) {
  EXPECT_EQ(as_string(passphrase_from_file(write_file("windows line\r\n"), PassphraseFileRule::openssl)),
            "windows line\r");
  EXPECT_EQ(as_string(passphrase_from_file(write_file(std::string(1100, 'y')), PassphraseFileRule::openssl)),
            std::string(1023, 'y'));
  const std::string path = write_file(std::string("\0after\n", 7));
  EXPECT_EQ(error_message([&] { passphrase_from_file(path, PassphraseFileRule::openssl); }, ErrorKind::usage),
            "empty passphrase in " + path);
}

TEST_F(PassphraseFileTest, TakesAFileWithoutALineEndingWhole) {
  EXPECT_EQ(as_string(passphrase_from_file(write_file("no ending"))), "no ending");
}

TEST_F(PassphraseFileTest, EmptyFileOrFirstLineIsAnError) {
  const std::string path = write_file("");
  EXPECT_EQ(error_message([&] { passphrase_from_file(path); }, ErrorKind::usage), "empty passphrase in " + path);
  write_file("\nsecond line\n");
  EXPECT_EQ(error_message([&] { passphrase_from_file(path); }, ErrorKind::usage), "empty passphrase in " + path);
}

TEST_F(PassphraseFileTest, MissingFileErrorNamesThePath) {
  const std::string path = (dir_ / "absent").string();
  const std::string message = error_message([&] { passphrase_from_file(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "No such file")) << message;
}

TEST_F(PassphraseFileTest, RefusesAFileOverTheLimitWithoutQuotingIt) {
  std::string content = "hunter2 secret\n";
  content.resize(kMaxPassphraseFileLen + 1, 'x');
  const std::string path = write_file(content);
  const std::string message = error_message([&] { passphrase_from_file(path); }, ErrorKind::usage);
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "larger than 65536 bytes")) << message;
  EXPECT_FALSE(contains(message, "hunter2")) << message;

  content.resize(kMaxPassphraseFileLen);
  EXPECT_EQ(as_string(passphrase_from_file(write_file(content))), "hunter2 secret");
}

// A file whose size says less than it holds (procfs gives 0) is read to its
// end: the buffer sized by fstat grows to the bound.
TEST_F(PassphraseFileTest, ReadsAFileLongerThanItsSizeSays) {
  const std::string path = "/proc/sys/kernel/ostype";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || st.st_size != 0) GTEST_SKIP() << path << " is not a procfs file of size 0";
  EXPECT_EQ(as_string(passphrase_from_file(path)), "Linux");
}

// ---- passphrase_from_env -----------------------------------------------------

constexpr const char* kTestVariable = "PAES_CLI_SUPPORT_TEST_PASSPHRASE";

TEST(PassphraseFromEnv, ReturnsTheValueWhole) {
  ::setenv(kTestVariable, " with spaces = and\tmore ", 1);
  EXPECT_EQ(as_string(passphrase_from_env(kTestVariable)), " with spaces = and\tmore ");
  ::unsetenv(kTestVariable);
}

TEST(PassphraseFromEnv, UnsetVariableIsAnErrorThatNeverQuotesTheName) {
  // A passphrase pasted where its variable's name belongs: never printed.
  constexpr const char* kPasted = "correct horse battery staple";
  const std::string message = error_message([&] { passphrase_from_env(kPasted); });
  EXPECT_EQ(message.find("horse"), std::string::npos) << message;
  EXPECT_NE(message.find("--passphrase-env: no environment variable of that name is set"), std::string::npos)
      << message;
  ::unsetenv(kTestVariable);
  EXPECT_NE(error_message([] { passphrase_from_env(kTestVariable); }).find("no environment variable"),
            std::string::npos);
}

TEST(PassphraseFromEnv, EmptyVariableIsAnError) {
  ::setenv(kTestVariable, "", 1);
  EXPECT_EQ(error_message([] { passphrase_from_env(kTestVariable); }, ErrorKind::usage),
            std::string("environment variable ") + kTestVariable + " holds an empty passphrase");
  ::unsetenv(kTestVariable);
}

// ---- passphrase_from_terminal ------------------------------------------------

// Only the no-terminal case: with a terminal it would wait for a person. A
// child in a new session has no controlling terminal, so /dev/tty can't open.
TEST(PassphraseFromTerminal, WithoutATerminalIsAUsageErrorNamingTheAlternatives) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (::setsid() < 0) ::_exit(3);
    try {
      passphrase_from_terminal(false);
    } catch (const Error& e) {
      const bool expected = e.kind() == ErrorKind::usage &&
                            std::string(e.what()) ==
                                "no passphrase given and no terminal to ask on "
                                "(use --passphrase-file or --passphrase-env)";
      ::_exit(expected ? 0 : 1);
    }
    ::_exit(2);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: wrong error, 2: no error, 3: setsid failed";
}

// ---- Progress ----------------------------------------------------------------

// Points stderr at a temporary file for the object's lifetime.
class StderrCapture {
 public:
  StderrCapture() {
    std::string path = ::testing::TempDir() + "paes-stderr-XXXXXX";
    file_ = ::mkstemp(path.data());
    EXPECT_GE(file_, 0);
    ::unlink(path.c_str());
    std::fflush(stderr);
    saved_stderr_ = ::dup(STDERR_FILENO);
    ::dup2(file_, STDERR_FILENO);
  }
  ~StderrCapture() {
    std::fflush(stderr);
    ::dup2(saved_stderr_, STDERR_FILENO);
    ::close(saved_stderr_);
    ::close(file_);
  }
  StderrCapture(const StderrCapture&) = delete;
  StderrCapture& operator=(const StderrCapture&) = delete;

  std::string text() const {
    std::fflush(stderr);
    std::string text;
    char buffer[4096];
    for (off_t offset = 0;;) {
      const ssize_t n = ::pread(file_, buffer, sizeof buffer, offset);
      if (n <= 0) return text;
      text.append(buffer, static_cast<std::size_t>(n));
      offset += n;
    }
  }

 private:
  int file_ = -1;
  int saved_stderr_ = -1;
};

TEST(Progress, NeverModeDrawsNothingAndFinishIsIdempotent) {
  const StderrCapture capture;
  {
    Progress progress(1000, ProgressMode::never, "encrypting ");
    progress.advance(10);
    progress.finish();
    progress.advance(10);  // after finish: still harmless
    progress.finish();
  }
  EXPECT_EQ(capture.text(), "");
}

TEST(Progress, WorkUnderASecondStaysSilent) {
  const StderrCapture capture;
  Progress progress(1000, ProgressMode::always, "encrypting ");
  progress.advance(1000);
  progress.finish();
  EXPECT_EQ(capture.text(), "");
}

TEST(Progress, AutomaticModeDrawsNothingWhenStderrIsNotATerminal) {
  const StderrCapture capture;
  Progress progress(1000, ProgressMode::automatic, "encrypting ");
  progress.advance(400);
  std::this_thread::sleep_for(1500ms);
  progress.finish();
  EXPECT_EQ(capture.text(), "");
}

// Into a file, not a terminal: plain lines, with no "\r" or escape to clear.
TEST(Progress, AlwaysModeWritesTheSumOfAllWorkersAfterASecondAsPlainLines) {
  const StderrCapture capture;
  Progress progress(1000, ProgressMode::always, "encrypting ");
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&] {
      for (int chunk = 0; chunk < 100; ++chunk) progress.advance(1);
    });
  }
  for (std::thread& worker : workers) worker.join();
  // Polls rather than sleeping a fixed time, so a loaded machine can't fail it.
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  while (!contains(capture.text(), "400 B") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  progress.finish();
  const std::string text = capture.text();
  EXPECT_EQ(text.rfind("encrypting       400 B / 1000 B   40%", 0), 0u) << text;
  EXPECT_EQ(text.find_first_of("\r\x1b"), std::string::npos) << text;
  EXPECT_EQ(text.back(), '\n') << text;
  progress.finish();
  EXPECT_EQ(capture.text(), text);  // a second finish draws nothing more
}

}  // namespace
}  // namespace paes::cli
