#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>
#include <vector>

#include "paes/endpoint.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public test::ScratchDirTest {
 protected:
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
};

const std::uint8_t kHello[] = {'h', 'e', 'l', 'l', 'o'};

TEST_F(OutputFileTest, NothingUnderTheFinalNameBeforeCommit) {
  const fs::path target = dir_ / "out.bin";
  {
    OutputFile out(target, {});
    out.write_at(0, kHello);
    EXPECT_FALSE(fs::exists(target));
    EXPECT_EQ(entries(), 1u);  // the temporary, beside the target
    out.commit();
  }
  EXPECT_EQ(read(target), "hello");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, AbandonedOutputLeavesNothing) {
  {
    OutputFile out(dir_ / "out.bin", {});
    out.write_at(0, kHello);
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(OutputFileTest, EveryPendingOutputIsRemovedOnASignalWhateverFinishedFirst) {
  // remove_pending_output() is what a signal handler calls. One slot held the
  // newest output only, and an older one committed or dropped first disarmed it.
  auto older = std::make_unique<OutputFile>(dir_ / "older.bin", OutputOptions{});
  auto newer = std::make_unique<OutputFile>(dir_ / "newer.bin", OutputOptions{});
  auto third = std::make_unique<OutputFile>(dir_ / "third.bin", OutputOptions{});
  older->write_at(0, kHello);
  older->commit();
  third.reset();
  EXPECT_EQ(entries(), 2u);  // older.bin, and newer's temporary
  EXPECT_TRUE(remove_pending_output());
  EXPECT_EQ(entries(), 1u);
  EXPECT_TRUE(fs::exists(dir_ / "older.bin"));
  newer.reset();
  EXPECT_FALSE(remove_pending_output());
}

TEST_F(OutputFileTest, NoNameAndASecondCommitAreRefused) {
  EXPECT_THROW(OutputFile("", {}), Error);  // made ".paes-XXXXXX" here, then failed at commit
  EXPECT_EQ(entries(), 0u);
  OutputFile out(dir_ / "once.bin", {});
  out.commit();
  try {
    out.commit();
    ADD_FAILURE() << "a second commit was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("committed already"), std::string::npos) << e.what();
  }
}

TEST_F(OutputFileTest, ExistingOutputNeedsForce) {
  const fs::path target = dir_ / "out.bin";
  std::ofstream(target) << "old";
  try {
    OutputFile out(target, {});
    ADD_FAILURE() << "overwrote without force";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos);
  }
  EXPECT_EQ(read(target), "old");
  OutputFile out(target, {.force = true});
  out.write_at(0, kHello);
  EXPECT_EQ(read(target), "old");  // still the old content until commit
  out.commit();
  EXPECT_EQ(read(target), "hello");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFileTest, OutputCreatedMeanwhileIsNotClobbered) {
  const fs::path target = dir_ / "out.bin";
  OutputFile out(target, {});
  out.write_at(0, kHello);
  std::ofstream(target) << "raced";
  EXPECT_THROW(out.commit(), Error);
  EXPECT_EQ(read(target), "raced");
  EXPECT_EQ(entries(), 1u);
  try {  // once more: it was discarded, which is said, not "Bad file descriptor"
    out.commit();
    ADD_FAILURE() << "a commit after a failed one was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("discarded after a failed commit"), std::string::npos) << e.what();
  }
}

TEST_F(OutputFileTest, DirectoryTargetIsRefused) {
  EXPECT_THROW(OutputFile(dir_, {.force = true}), Error);
}

TEST_F(OutputFileTest, DevNullIsWrittenInPlace) {
  OutputFile out("/dev/null", {});
  out.write_at(0, kHello);
  out.commit();
  EXPECT_EQ(entries(), 0u);
}

TEST_F(OutputFileTest, NewFileGetsTheGivenModeLessTheUmask) {
  const mode_t saved = ::umask(022);
  for (const auto& [mode, want] : {std::pair{0666u, 0644u}, {0600u, 0600u}, {0640u, 0640u}}) {
    const fs::path target = dir_ / ("out-" + std::to_string(mode));
    OutputFile out(target, {.mode = mode});
    out.write_at(0, kHello);
    EXPECT_EQ(fs::status(target).type(), fs::file_type::not_found);
    out.commit();
    EXPECT_EQ(static_cast<unsigned>(fs::status(target).permissions()), want) << std::oct << mode;
  }
  ::umask(saved);
}

TEST_F(OutputFileTest, SymbolicLinkIsReplacedNeverFollowed) {
  const fs::path link = dir_ / "link";
  fs::create_symlink("/dev/null", link);
  try {
    OutputFile out(link, {});
    ADD_FAILURE() << "wrote through a symbolic link without force";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already exists"), std::string::npos) << e.what();
  }
  OutputFile out(link, {.force = true});
  out.write_at(0, kHello);
  out.commit();
  EXPECT_EQ(fs::symlink_status(link).type(), fs::file_type::regular);
  EXPECT_EQ(read(link), "hello");
}

TEST_F(OutputFileTest, InputErrorsNameThePath) {
  try {
    InputFile in((dir_ / "missing").string());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing: No such file or directory"), std::string::npos);
  }
  try {
    InputFile in(dir_.string());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory"), std::string::npos);
  }
}

TEST_F(OutputFileTest, InputThatShrinksIsAnError) {
  const fs::path path = dir_ / "in.bin";
  std::ofstream(path) << "0123456789";
  InputFile in(path.string());
  ASSERT_EQ(in.size(), 10u);
  fs::resize_file(path, 4);
  std::uint8_t buffer[10];
  EXPECT_THROW(in.read_at(0, buffer), Error);
}

// copy_file_bytes (the body of a re-key): within one file system through
// copy_file_range, and across two (tmpfs here, the scratch directory's file
// system there), where copy_file_range refuses, through pread and pwrite.
TEST_F(OutputFileTest, CopyFileBytesCopiesARangeWithinAndAcrossFileSystems) {
  const std::vector<std::uint8_t> data = test::random_bytes((3u << 20) + 5, 29);
  write_bytes(path("in.bin"), data);
  InputFile in(path("in.bin"));
  const std::string shm_dir = "/dev/shm";
  for (const std::string& target : {path("out.bin"), shm_dir + "/paes-copy-test-" + std::to_string(::getpid())}) {
    SCOPED_TRACE(target);
    {
      OutputFile out(target, {});
      out.write_at(0, kHello);
      copy_file_bytes(in, 3, out.fd(), sizeof kHello, data.size() - 3);
      out.commit();
    }
    const std::string got = read(target);
    ASSERT_EQ(got.size(), sizeof kHello + data.size() - 3);
    EXPECT_EQ(got.substr(0, sizeof kHello), "hello");
    EXPECT_TRUE(got.substr(sizeof kHello) == std::string(data.begin() + 3, data.end()));
    // More than the input holds: the input shrank under the copy.
    OutputFile short_out(target + ".short", {});
    EXPECT_THROW(copy_file_bytes(in, 3, short_out.fd(), 0, data.size()), Error);
    fs::remove(target);
  }
}

// The pipe limit for users other than root (root may exceed it).
int pipe_max_size() {
  std::ifstream in("/proc/sys/fs/pipe-max-size");
  int bytes = 0;
  in >> bytes;
  return bytes;
}

TEST(StreamPipes, ReaderAndWriterGrowTheirPipeToAChunk) {
  if (::geteuid() != 0 && pipe_max_size() < (1 << 20)) {
    GTEST_SKIP() << "/proc/sys/fs/pipe-max-size is below 1 MiB for this user";
  }
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  ASSERT_LT(::fcntl(ends[0], F_GETPIPE_SZ), 1 << 20);
  {
    StreamReader reader(ends[0], "pipe");
    EXPECT_GE(::fcntl(ends[0], F_GETPIPE_SZ), 1 << 20);
  }
  ::close(ends[0]);
  ::close(ends[1]);
  ASSERT_EQ(::pipe(ends), 0);
  {
    StreamWriter writer(ends[1], "pipe");
    EXPECT_GE(::fcntl(ends[1], F_GETPIPE_SZ), 1 << 20);
  }
  ::close(ends[0]);
  ::close(ends[1]);
}

TEST_F(OutputFileTest, NamedPipeIsReadAsAStream) {
  const fs::path fifo = dir_ / "in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(names_stream(fifo.string()));
  EXPECT_FALSE(names_stream(dir_.string()));
  EXPECT_FALSE(names_stream((dir_ / "missing").string()));
  // Opening a FIFO's read end waits for a writer: one is there first (its own
  // open needs a reader, so a non-blocking one is opened before it).
  const int reader_side = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  const int writer = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(writer, 0);
  ASSERT_EQ(::write(writer, kHello, sizeof kHello), static_cast<ssize_t>(sizeof kHello));
  InputEndpoint in(fifo.string(), false);
  ::close(writer);  // so that the stream ends after "hello"
  EXPECT_FALSE(in.random_access());
  EXPECT_FALSE(in.size().has_value());
  EXPECT_EQ(in.name(), fifo.string());
  std::uint8_t buffer[16];
  EXPECT_EQ(in.read_prefix(buffer), sizeof kHello);
  EXPECT_EQ(std::string(buffer, buffer + sizeof kHello), "hello");
  ::close(reader_side);
}

}  // namespace
}  // namespace paes
