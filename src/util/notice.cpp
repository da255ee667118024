#include "paes/notice.hpp"

#include <memory>
#include <mutex>
#include <utility>

namespace paes {
namespace {

std::mutex g_notice_mutex;  // guards the pointer only: handlers run unlocked
std::shared_ptr<const NoticeHandler> g_notice_handler;

}  // namespace

void set_notice_handler(NoticeHandler handler) {
  auto fresh = handler ? std::make_shared<const NoticeHandler>(std::move(handler)) : nullptr;
  {
    const std::lock_guard lock(g_notice_mutex);
    std::swap(g_notice_handler, fresh);
  }
  // The old handler ends here, unlocked: its captures may call back in.
}

void notify(NoticeLevel level, const std::string& text) {
  std::shared_ptr<const NoticeHandler> handler;
  {
    const std::lock_guard lock(g_notice_mutex);
    handler = g_notice_handler;
  }
  // Called unlocked, so that a handler may notify, replace itself or run a
  // job of its own (whose notices would otherwise wait on this lock forever).
  if (handler) (*handler)(level, text);
}

}  // namespace paes
