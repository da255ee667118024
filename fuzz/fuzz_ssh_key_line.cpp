// parse_ssh_public_key_line (format/ssh_keys.hpp) on arbitrary bytes, as a
// recipients file's line: libssh's import of the key, paes' check that libssh
// writes the same blob back, the type and bounds checks, and age's rule for
// the types it skips. What it accepts must hold up: a key's own line, as ssh
// writes it, reads back to the same key, and a skipped type has a name.
// looks_like_ssh_public_key, which words errors, runs on every input too.
//
// fuzz/make_corpus.py writes the seeds from keys ssh-keygen makes.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "format/ssh_keys.hpp"
#include "paes/error.hpp"
#include "util/base64.hpp"

namespace {

void require(bool condition, const char* what) {
  if (!condition) {
    std::fprintf(stderr, "fuzz_ssh_key_line: %s\n", what);
    std::abort();
  }
}

// The line ssh writes for `key`: its type, and its blob in padded base64.
std::string line_of(const paes::SshPublicKey& key) {
  std::string base64 = paes::encode_base64(key.wire);
  base64.append((4 - base64.size() % 4) % 4, '=');
  return paes::ssh_key_type_name(key.type) + " " + base64;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  (void)paes::looks_like_ssh_public_key(line);
  try {
    const paes::SshPublicKeyLine parsed = paes::parse_ssh_public_key_line(line, "fuzz");
    if (!parsed.key) {
      require(!parsed.unsupported_type.empty(), "neither a key nor an unsupported type");
      return 0;
    }
    require(parsed.unsupported_type.empty(), "a key and an unsupported type at once");
    require(paes::ssh_key_tag(*parsed.key).size() == 6, "a tag that is not 4 bytes of base64");
    const paes::SshPublicKeyLine again = paes::parse_ssh_public_key_line(line_of(*parsed.key), "fuzz");
    require(again.key && again.key->type == parsed.key->type && again.key->wire == parsed.key->wire,
            "a key's own line reads back to another key");
  } catch (const paes::Error&) {
  }
  return 0;
}
