#include "cli/say.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace paes::cli {

void say(std::string_view text) noexcept {
  std::fflush(stdout);
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

// The library says what went wrong in its own terms; the options that cure it
// are the CLI's to name.
std::string in_flags(Remedy remedy) {
  switch (remedy) {
    case Remedy::none: return "";
    case Remedy::force: return " (use -f to overwrite)";
    case Remedy::output_file: return ": give -o FILE or redirect stdout";
    case Remedy::files: return " (give INPUT and -o OUTPUT as files)";
    case Remedy::key: return " (give --key-file or --key-env)";
    case Remedy::passphrase: return " (give --passphrase-file or --passphrase-env, or type it at the prompt)";
    case Remedy::identity: return " (give -i IDENTITY-FILE)";
    case Remedy::associated_data: return " (--aad or --aad-file gives the associated data)";
    case Remedy::allow_uncommitted: return " (--allow-uncommitted opens it, with a warning)";
    case Remedy::armored_input: return " (add -a to read base64 text, as openssl enc -a writes it)";
    case Remedy::no_salt: return " (openssl enc -nosalt writes none: add --nosalt)";
    case Remedy::pbkdf2_parameters: return " (paes' --md, --iter and --key-bits give them)";
    case Remedy::write_in_place:
      return "; to write into the existing file itself, give -o - and redirect: > FILE (not atomic: a failure "
             "leaves it partly written)";
  }
  return "";
}

}  // namespace paes::cli
