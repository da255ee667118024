// ChunkCipher, the public face of one chunk's AES: the backend the caller's
// choice resolves to for the spec (cipher/backends.cpp) and PKCS#7 on the final piece.
#include "paes/cipher.hpp"

#include "cipher/backend.hpp"
#include "cipher/padding.hpp"

namespace paes {

struct ChunkCipher::State {
  Mode mode;
  Direction direction;
  bool padded;
  std::unique_ptr<RawCipher> raw;
};

ChunkCipher::ChunkCipher(const CipherSpec& spec, const BackendChoice& backend)
    : state_(std::make_unique<State>(State{spec.mode, spec.direction, spec.padded(),
                                           raw_backend(backend, spec.mode, spec.direction).make_raw(spec)})) {}

ChunkCipher::~ChunkCipher() = default;

const char* ChunkCipher::implementation() const { return state_->raw->implementation(); }

void ChunkCipher::begin(const Block& start_state) { state_->raw->begin(start_state); }

std::size_t ChunkCipher::update(std::uint8_t* out, const std::uint8_t* in, std::size_t in_len,
                                bool final_piece) {
  State& s = *state_;
  return padded_update(*s.raw, s.mode, s.direction, s.padded, out, in, in_len, final_piece);
}

}  // namespace paes
