// What the library has to tell a person while it works, beside errors: a job
// run elsewhere than asked (a sequential mode under MPI runs on rank 0
// alone), a GPU that failed under the auto engine, a measurement that could not
// be kept. The library prints nothing itself: a program that wants these
// installs a handler (the paes tool prints "paes: note: ..." and "paes:
// warning: ..." on stderr).
#pragma once

#include <functional>
#include <string>

namespace paes {

enum class NoticeLevel { note, warning };
using NoticeHandler = std::function<void(NoticeLevel level, const std::string& text)>;

// Replaces the handler; an empty one (the default) drops notices. The
// handler is called from whichever of the library's threads has something to
// say, possibly from several at once, and may itself call into the library
// (notify, set_notice_handler, a job of its own).
void set_notice_handler(NoticeHandler handler);

// Hands `text` to the handler, if there is one.
void notify(NoticeLevel level, const std::string& text);

}  // namespace paes
