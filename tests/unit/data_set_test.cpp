// Data sets (paes/data_set.hpp): how a set is listed and its outputs named,
// and how run_data_set runs it: every file once, each failure its own, small
// files side by side, inputs removed only after their outputs are done.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include <gtest/gtest.h>

#include "paes/data_set.hpp"
#include "paes/notice.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

using test::random_bytes;

class DataSetTest : public test::ScratchDirTest {
 protected:
  void make_file(const std::string& name, std::size_t len = 100) {
    std::filesystem::create_directories(std::filesystem::path(path(name)).parent_path());
    write_bytes(path(name), random_bytes(len, static_cast<std::uint32_t>(name.size())));
  }
  // Input -> output (or "error: ...") of each listed file.
  static std::map<std::string, std::string> by_input(const std::vector<DataSetFile>& files) {
    std::map<std::string, std::string> listed;
    for (const DataSetFile& file : files) listed[file.input] = file.error.empty() ? file.output : "error";
    return listed;
  }
  SealedSpec sealing() const {
    SealedSpec spec;
    spec.key = SecretBytes(random_bytes(32, 7).data(), 32);
    return spec;
  }
};

TEST_F(DataSetTest, EncryptingNamesEachOutputBesideItsInputAndSkipsWhatEndsInTheSuffix) {
  make_file("tree/a");
  make_file("tree/sub/b");
  make_file("tree/sub/c.paes");
  make_file("tree/.x.paes-AbC123");  // another run's temporary: not data
  std::filesystem::create_symlink(path("tree/a"), path("tree/link"));
  ASSERT_EQ(::mkfifo(path("tree/fifo").c_str(), 0600), 0);
  std::vector<std::string> notes;
  std::mutex notes_mutex;
  set_notice_handler([&](NoticeLevel, const std::string& text) {
    const std::lock_guard lock(notes_mutex);
    notes.push_back(text);
  });
  const auto files = list_data_set({path("tree")}, {Direction::encrypt, {".paes"}, "", true});
  set_notice_handler({});
  EXPECT_EQ(by_input(files), (std::map<std::string, std::string>{
                                 {path("tree/a"), path("tree/a.paes")},
                                 {path("tree/sub/b"), path("tree/sub/b.paes")},
                             }));
  // The link and the FIFO each get a note; the suffixed file and the temporary none.
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("fifo: a FIFO"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("link: a symbolic link"), std::string::npos) << notes[1];
}

TEST_F(DataSetTest, NamedFilesAreTakenWhateverTheyAreAndFailWhenTheyCantBe) {
  make_file("a");
  std::filesystem::create_symlink(path("a"), path("named-link"));
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  std::filesystem::create_directories(path("dir"));
  const auto files = list_data_set({path("named-link"), path("missing"), path("fifo"), path("dir"), path("a")},
                                   {Direction::encrypt, {".paes"}, "", false});
  // The link is followed, and `a` (the same file) is listed once.
  EXPECT_EQ(by_input(files), (std::map<std::string, std::string>{{path("named-link"), path("named-link.paes")},
                                                                  {path("missing"), "error"},
                                                                  {path("fifo"), "error"},
                                                                  {path("dir"), "error"}}));
}

TEST_F(DataSetTest, DecryptingRemovesTheSuffixAndRefusesANamedFileWithout) {
  make_file("tree/a.paes");
  make_file("tree/b.age");
  make_file("tree/notes.txt");
  make_file("plain");
  make_file("tree/b.paes");
  const DataSetNaming naming{Direction::decrypt, {".paes", ".age"}, "", true};
  // b.paes and b.age would both be b: the second listed fails.
  EXPECT_EQ(by_input(list_data_set({path("tree"), path("plain")}, naming)),
            (std::map<std::string, std::string>{{path("tree/a.paes"), path("tree/a")},
                                                {path("tree/b.age"), path("tree/b")},
                                                {path("tree/b.paes"), "error"},
                                                {path("plain"), "error"}}));
}

TEST_F(DataSetTest, AnOutputDirectoryMirrorsThePathsAsNamed) {
  make_file("tree/sub/b");
  make_file("tree/c");
  const std::string out = path("out");
  // Relative to the current directory, as named: run from the scratch directory.
  const auto here = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  const std::string climbing = "../" + dir_.filename().string() + "/tree/sub/b";
  const auto files = list_data_set({climbing, "tree", "tree/c", path("tree/c")},
                                   {Direction::encrypt, {".paes"}, out, true});
  std::filesystem::current_path(here);
  // A path that climbs can't be mirrored, and fails; the same file under a
  // name that can is taken there, once, as is c under its first name. An
  // absolute path is mirrored without its leading '/'.
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].input, climbing);
  EXPECT_NE(files[0].error.find("'..'"), std::string::npos) << files[0].error;
  EXPECT_EQ(files[1].output, out + "/tree/c.paes");
  EXPECT_EQ(files[2].output, out + "/tree/sub/b.paes");
  // Inside the tree, the output directory holds an earlier run's outputs (and
  // whatever else was put there): not walked.
  make_file("tree/out/tree/c.paes");
  make_file("tree/out/stray");
  const auto again = list_data_set({path("tree")}, {Direction::encrypt, {".paes"}, path("tree/out"), true});
  ASSERT_EQ(again.size(), 2u);
  EXPECT_EQ(again[0].input, path("tree/c"));
  EXPECT_EQ(again[1].input, path("tree/sub/b"));
  const auto absolute = list_data_set({path("tree/c")}, {Direction::encrypt, {".paes"}, out, false});
  ASSERT_EQ(absolute.size(), 1u);
  EXPECT_EQ(absolute[0].output, out + "/" + std::filesystem::path(path("tree/c.paes")).relative_path().string());
}

// Every file is run once; a failed one is reported and the others complete.
TEST_F(DataSetTest, EachFailureIsItsOwn) {
  for (int i = 0; i < 20; ++i) make_file("in/f" + std::to_string(i), 5000);
  auto files = list_data_set({path("in")}, {Direction::encrypt, {".paes"}, "", true});
  files.push_back({path("in/gone"), path("in/gone.paes"), 0, ""});  // removed after it was listed
  std::set<std::string> reported;
  DataSetOptions options;
  options.transform.threads = 4;
  options.on_file = [&](const DataSetOutcome& outcome) {
    EXPECT_TRUE(reported.insert(outcome.file->input).second) << outcome.file->input;  // one call at a time
    EXPECT_EQ(outcome.report.has_value(), !outcome.error.has_value());
  };
  const DataSetReport report = run_sealed_data_set(sealing(), files, options);
  EXPECT_EQ(reported.size(), 21u);
  EXPECT_EQ(report.done, 20u);
  EXPECT_EQ(report.failed, 1u);
  EXPECT_EQ(report.parallel_files, 4u);
  EXPECT_FALSE(std::filesystem::exists(path("in/gone.paes")));
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(std::filesystem::exists(path("in/f" + std::to_string(i) + ".paes")));
}

// Small files run side by side, one thread each; a large one alone on all.
TEST_F(DataSetTest, SmallFilesRunSideBySideAndALargeOneAlone) {
  for (int i = 0; i < 8; ++i) make_file("f" + std::to_string(i), 1000);
  make_file("large", 3000);
  const auto files = list_data_set({path("")}, {Direction::encrypt, {".out"}, "", true});
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  std::mutex threads_mutex;
  std::map<std::string, unsigned> threads;
  DataSetOptions options;
  options.transform.threads = 3;
  options.whole_machine_from = 2000;
  const auto job = [&](const std::string& in, const std::string&, const TransformOptions& file_options) {
    const int now = ++running;
    for (int seen = most.load(); now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    ::usleep(20000);  // long enough for the other workers to draw theirs
    --running;
    const std::lock_guard lock(threads_mutex);
    threads[std::filesystem::path(in).filename().string()] = file_options.threads;
    return TransformReport{};
  };
  const DataSetReport report = run_data_set(files, job, options);
  EXPECT_EQ(report.done, 9u);
  EXPECT_EQ(report.parallel_files, 3u);
  EXPECT_GE(most.load(), 2);
  EXPECT_LE(most.load(), 3);
  EXPECT_EQ(threads["large"], 3u);
  EXPECT_EQ(threads["f0"], 1u);
}

TEST_F(DataSetTest, InputsAreRemovedOnlyAfterTheirOutputsAndNeverWithOtherLinks) {
  make_file("a", 3000);
  make_file("b", 3000);
  make_file("linked", 3000);
  std::filesystem::create_hard_link(path("linked"), path("other-name"));
  const auto files = list_data_set({path("a"), path("b"), path("linked")}, {Direction::encrypt, {".paes"}, "", false});
  // b's output exists: b fails, and is kept.
  make_file("b.paes");
  DataSetOptions options;
  options.remove_inputs = true;
  std::map<std::string, bool> removed;
  options.on_file = [&](const DataSetOutcome& outcome) {
    removed[std::filesystem::path(outcome.file->input).filename().string()] = outcome.input_removed;
  };
  const DataSetReport report = run_sealed_data_set(sealing(), files, options);
  EXPECT_EQ(report.done, 1u);
  EXPECT_EQ(report.failed, 2u);
  EXPECT_EQ(removed, (std::map<std::string, bool>{{"a", true}, {"b", false}, {"linked", false}}));
  EXPECT_FALSE(std::filesystem::exists(path("a")));
  EXPECT_TRUE(std::filesystem::exists(path("a.paes")));
  EXPECT_TRUE(std::filesystem::exists(path("b")));
  EXPECT_TRUE(std::filesystem::exists(path("linked")));
  EXPECT_FALSE(std::filesystem::exists(path("linked.paes")));  // refused before anything was written
}

}  // namespace
}  // namespace paes
