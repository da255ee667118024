#include "paes/notice.hpp"

#include <mutex>
#include <utility>

namespace paes {
namespace {

std::mutex g_notice_mutex;  // guards the handler, and serialises its calls
NoticeHandler g_notice_handler;

}  // namespace

void set_notice_handler(NoticeHandler handler) {
  const std::lock_guard lock(g_notice_mutex);
  g_notice_handler = std::move(handler);
}

void notify(NoticeLevel level, const std::string& text) {
  const std::lock_guard lock(g_notice_mutex);
  if (g_notice_handler) g_notice_handler(level, text);
}

}  // namespace paes
