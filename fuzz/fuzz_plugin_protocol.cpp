// age-plugin.md's messages as a plugin writes them, on arbitrary bytes: what
// paes reads from an age-plugin-NAME program, which it doesn't trust
// (format/plugin_protocol.hpp). The input is fed to PluginMessageReader in
// pieces of the sizes its first byte picks (a pipe gives a message in any
// cuts); every message read must encode back to exactly the bytes it was
// read from, since the grammar gives each message one encoding. The reader's
// bounds (a line of 64 KiB, a body of 1 MiB) keep memory bounded whatever the
// input: libFuzzer's -rss_limit_mb fails a run that grows past them.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "format/plugin_protocol.hpp"
#include "paes/error.hpp"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_plugin_protocol: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t piece = 1 + data[0] % 64;  // bytes each read gives, at most
  const std::span<const std::uint8_t> input(data + 1, size - 1);
  std::size_t offset = 0;
  paes::PluginMessageReader reader(
      [&](std::span<std::uint8_t> buffer) {
        const std::size_t n = std::min({buffer.size(), piece, input.size() - offset});
        std::memcpy(buffer.data(), input.data() + offset, n);
        offset += n;
        return n;
      },
      "age-plugin-fuzz");
  std::string read_back;
  try {
    while (true) {
      const paes::Stanza message = reader.next();
      read_back += paes::encode_plugin_message(message.type, message.args, message.body);
      const std::string_view consumed(reinterpret_cast<const char*>(input.data()), input.size());
      require(consumed.starts_with(read_back), "a message does not encode back to the bytes it was read from");
    }
  } catch (const paes::Error&) {
  }
  return 0;
}
