// age-plugin.md's messages (format/plugin_protocol.hpp): what paes reads
// from a plugin, in any cuts a pipe makes, and the bounds that keep a hostile
// plugin from taking paes' memory. The state machines run against real
// plugins in tests/tink/plugin_interop.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "format/plugin_protocol.hpp"
#include "paes/error.hpp"

namespace paes {
namespace {

// A reader over `bytes`, handing out at most `piece` bytes a read.
PluginMessageReader reader_of(const std::string& bytes, std::size_t piece, std::size_t& offset) {
  return PluginMessageReader(
      [&bytes, piece, &offset](std::span<std::uint8_t> buffer) {
        const std::size_t n = std::min({buffer.size(), piece, bytes.size() - offset});
        std::memcpy(buffer.data(), bytes.data() + offset, n);
        offset += n;
        return n;
      },
      "age-plugin-unit");
}

std::string error_of(const std::string& bytes) {
  std::size_t offset = 0;
  PluginMessageReader reader = reader_of(bytes, 4096, offset);
  try {
    while (true) reader.next();
  } catch (const Error& e) {
    return e.what();
  }
}

TEST(PluginProtocol, MessagesReadBackInAnyCuts) {
  std::vector<std::uint8_t> body(100);
  for (std::size_t i = 0; i < body.size(); ++i) body[i] = static_cast<std::uint8_t>(i * 7);
  const std::string session = encode_plugin_message("msg", {}, std::vector<std::uint8_t>{'h', 'i'}) +
                              encode_plugin_message("recipient-stanza", {"0", "X25519", "abc"}, body) +
                              encode_plugin_message("done");
  EXPECT_NE(session.find("-> done\n\n"), std::string::npos);  // a command without a body has an empty body line
  for (const std::size_t piece : {1u, 3u, 64u, 4096u}) {
    SCOPED_TRACE(piece);
    std::size_t offset = 0;
    PluginMessageReader reader = reader_of(session, piece, offset);
    const Stanza msg = reader.next();
    EXPECT_EQ(msg.type, "msg");
    EXPECT_EQ(std::string(msg.body.begin(), msg.body.end()), "hi");
    const Stanza stanza = reader.next();
    EXPECT_EQ(stanza.type, "recipient-stanza");
    EXPECT_EQ(stanza.args, (std::vector<std::string>{"0", "X25519", "abc"}));
    EXPECT_EQ(stanza.body, body);
    EXPECT_EQ(reader.next().type, "done");
    EXPECT_EQ(offset, session.size());
  }
}

TEST(PluginProtocol, RefusesWhatTheGrammarDoesNot) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "ended its output before it was done"},
      {"-> msg\nSGk", "ended its output in the middle of a line"},
      {"garbage\n", "a line that is not a message"},
      {"-> msg\nSGk=\n", "not canonical unpadded base64"},
      {"->  msg\n\n", "empty or not printable ASCII"},
      {"-> msg \x1b[31m\n\n", "empty or not printable ASCII"},
      {"-> msg\n" + std::string(65, 'A') + "\n", "longer than 64 columns"},
      {"-> " + std::string(kMaxPluginLineLen, 'a') + "\n", "a line longer than 64 KiB"},
  };
  for (const auto& [bytes, reason] : cases) {
    SCOPED_TRACE(bytes.substr(0, 40));
    const std::string message = error_of(bytes);
    EXPECT_TRUE(message.starts_with("age-plugin-unit")) << message;
    EXPECT_NE(message.find(reason), std::string::npos) << message;
  }
}

TEST(PluginProtocol, BoundsABodyAndASession) {
  // A body past 1 MiB is refused while it is read, not after.
  std::string huge = "-> recipient-stanza 0 t\n";
  const std::string line(64, 'A');
  for (std::size_t chars = 0; chars / 4 * 3 <= kMaxPluginBodyLen + 1024; chars += line.size()) huge += line + "\n";
  const std::string message = error_of(huge);
  EXPECT_NE(message.find("a body longer than 1 MiB"), std::string::npos) << message;

  std::string many;
  for (std::size_t i = 0; i <= kMaxPluginMessages; ++i) many += "-> ok\n\n";
  EXPECT_NE(error_of(many).find("more than " + std::to_string(kMaxPluginMessages) + " messages"), std::string::npos);
}

}  // namespace
}  // namespace paes
