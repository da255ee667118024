// Text armor's kinds: how a job's bytes are written, or read, as text. The
// endpoints take one (paes/io.hpp, paes/endpoint.hpp); src/util/armor.hpp
// encodes and decodes it.
#pragma once

namespace paes {

// Text armor: a job's bytes written, or read, as base64 lines, so that they
// pass through channels that carry only text.
enum class Armor {
  none,
  // openssl enc -a's text: 64 columns, each line ending in '\n', no markers.
  openssl,
  // Strict PEM (RFC 7468) as age armors its files: the BEGIN PAES ENCRYPTED
  // FILE line, canonical padded base64 in 64-column lines (the last may be
  // shorter), the END line (docs/FORMAT.md). Reading, age's armor is taken
  // too (its own BEGIN and END lines), so that one input may be either.
  paes,
  // age's armor (C2SP age.md, "ASCII armor"): the same rules under the
  // BEGIN AGE ENCRYPTED FILE line. Writing only; reading is Armor::paes'.
  age,
};

}  // namespace paes
