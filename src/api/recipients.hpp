// Version 3 of the sealed format on the opening side, shared by opening
// (sealed.cpp) and re-keying (rekey.cpp): reading the header of stanzas that
// follows the preamble, finding the file key with an identity, and checking
// the header's MAC under it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/stanza_header.hpp"
#include "paes/endpoint.hpp"
#include "paes/secret.hpp"

namespace paes {

struct OpenedStanzas {
  StanzaHeader header;
  SecretBytes file_key;
};

// Reads the header of stanzas from `in`, just after `preamble`, and opens it
// with the first of `identities` that unwraps an X25519 stanza. Every reader
// who gets past this holds the one file key the header's MAC commits to
// (HMAC-SHA-256 is committing: two keys that verify one MAC would be a
// collision), so no two recipients read different bytes, whatever the
// stanzas wrap. Throws Error: a malformed header, no identity that matches,
// a MAC that doesn't verify.
OpenedStanzas open_stanzas(const std::vector<SecretBytes>& identities, std::span<const std::uint8_t> preamble,
                           InputEndpoint& in);

// The body's input key: the file key under a label of paes' own, so that it
// is neither age's payload key nor its header MAC key.
SecretBytes body_key(const SecretBytes& file_key);

}  // namespace paes
