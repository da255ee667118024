#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {
namespace {

namespace fs = std::filesystem;

class OutputFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("paes-io-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {})); }
  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  fs::path dir_;
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

}  // namespace
}  // namespace paes
