// The messages of C2SP age-plugin.md's IPC protocol, between paes and an
// age-plugin-NAME program: each is a stanza, written as age.md writes a
// header's ("-> command args" then the body in base64 lines of 64 columns,
// the last one shorter, possibly empty).
//
// What a plugin writes is untrusted: the reader bounds a line, a message's
// body and the messages of a session, and refuses anything age.md's stanza
// grammar doesn't allow, so a plugin that writes garbage or floods its
// output ends the session with an Error, never with paes' memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "format/stanza_header.hpp"

namespace paes {

// A message's first line: an age-plugin.md command, a stanza's type and its
// arguments (a post-quantum stanza's share is some 1,600 bytes of base64).
inline constexpr std::size_t kMaxPluginLineLen = 64 * 1024;
// A message's body: a stanza's (which a header bounds at 1 MiB) or a text.
inline constexpr std::size_t kMaxPluginBodyLen = std::size_t{1} << 20;
// Messages in one session: a stanza per recipient and file, and requests.
inline constexpr std::size_t kMaxPluginMessages = 4 * kMaxStanzas;

// Reads messages from bytes that `read` gives (it fills a buffer and
// returns how much, 0 at the end of the stream). `peer` names the plugin in
// errors.
class PluginMessageReader {
 public:
  using ReadFunction = std::function<std::size_t(std::span<std::uint8_t>)>;
  PluginMessageReader(ReadFunction read, std::string peer);

  // The next message. Throws Error ("<peer>: ...") for one that is
  // malformed or over a bound, for more than kMaxPluginMessages, and for
  // the end of the stream (a plugin ends a phase with "done", and its
  // output only after that).
  Stanza next();

 private:
  std::string_view next_line();
  Error malformed(const std::string& why) const;

  ReadFunction read_;
  std::string peer_;
  std::string buffer_;       // bytes read and not yet taken as lines
  std::size_t taken_ = 0;    // how much of buffer_ the lines handed out took
  std::size_t body_len_ = 0;  // base64 characters of the message being read
  std::size_t messages_ = 0;
};

// A message as the protocol writes it (a command with no body has an empty
// body line). Throws Error for a command or argument that is empty or not
// printable ASCII without spaces.
std::string encode_plugin_message(std::string_view command, const std::vector<std::string>& args = {},
                                  std::span<const std::uint8_t> body = {});

}  // namespace paes
