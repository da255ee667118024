#include "format/plugin_protocol.hpp"

#include <utility>

#include "paes/error.hpp"

namespace paes {

PluginMessageReader::PluginMessageReader(ReadFunction read, std::string peer)
    : read_(std::move(read)), peer_(std::move(peer)) {}

Error PluginMessageReader::malformed(const std::string& why) const {
  return Error(peer_ + ": broke age's plugin protocol (" + why + ")");
}

std::string_view PluginMessageReader::next_line() {
  buffer_.erase(0, taken_);
  taken_ = 0;
  std::size_t searched = 0;
  while (true) {
    const std::size_t end = buffer_.find('\n', searched);
    if (end != std::string::npos) {
      if (end > kMaxPluginLineLen) break;
      taken_ = end + 1;
      return std::string_view(buffer_).substr(0, end);
    }
    if (buffer_.size() > kMaxPluginLineLen) break;
    searched = buffer_.size();
    std::uint8_t chunk[4096];
    const std::size_t got = read_(chunk);
    if (got == 0) {
      throw Error(peer_ + (buffer_.empty() ? ": ended its output before it was done"
                                           : ": ended its output in the middle of a line"));
    }
    buffer_.append(reinterpret_cast<const char*>(chunk), got);
  }
  throw malformed("a line longer than " + std::to_string(kMaxPluginLineLen / 1024) + " KiB");
}

Stanza PluginMessageReader::next() {
  if (++messages_ > kMaxPluginMessages) {
    throw malformed("more than " + std::to_string(kMaxPluginMessages) + " messages");
  }
  const std::string first(next_line());  // a copy: reading the body moves the buffer
  if (!first.starts_with(std::string(kStanzaLinePrefix) + " ")) throw malformed("a line that is not a message");
  body_len_ = 0;
  return read_stanza(
      first,
      [&]() {
        const std::string_view line = next_line();
        body_len_ += line.size();
        if (body_len_ / 4 * 3 > kMaxPluginBodyLen) {
          throw malformed("a body longer than " + std::to_string(kMaxPluginBodyLen >> 20) + " MiB");
        }
        return line;
      },
      [&](const std::string& why) { return malformed(why); });
}

std::string encode_plugin_message(std::string_view command, const std::vector<std::string>& args,
                                  std::span<const std::uint8_t> body) {
  Stanza message;
  message.type = command;
  message.args = args;
  message.body.assign(body.begin(), body.end());
  return encode_stanza(message);
}

}  // namespace paes
