#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <cstring>
#include <string>
#include <vector>

#include "cipher/oneshot.hpp"
#include "cipher/padding.hpp"
#include "paes/cipher.hpp"
#include "paes/error.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

TEST(ChunkCipher, Cfb128DecryptionRunsOnTheEcbKeystreamPath) {
  for (const std::string& backend : test::available_backends()) {
    EXPECT_EQ(ChunkCipher(test::make_spec(Mode::cfb128, Direction::decrypt, 128, 1), {backend}).implementation(),
              backend + "-ecb-keystream");
  }
  const BackendChoice openssl{"openssl"};
  EXPECT_STREQ(ChunkCipher(test::make_spec(Mode::cfb128, Direction::encrypt, 128, 1), openssl).implementation(),
               "openssl-evp");
  EXPECT_STREQ(ChunkCipher(test::make_spec(Mode::cfb8, Direction::decrypt, 128, 1), openssl).implementation(),
               "openssl-evp");
}

// Feeds `input` to a ChunkCipher in pieces of `piece_len` (the last one
// shorter), in place or not, and returns what came out.
std::vector<std::uint8_t> run_in_pieces(const CipherSpec& spec, const BackendChoice& backend,
                                        const std::vector<std::uint8_t>& input, std::size_t piece_len, bool in_place) {
  ChunkCipher cipher(spec, backend);
  cipher.begin(spec.iv);
  std::vector<std::uint8_t> out(input.size());
  if (in_place) out = input;
  for (std::size_t done = 0; done < input.size();) {
    const std::size_t n = std::min(piece_len, input.size() - done);
    const std::uint8_t* in = in_place ? out.data() + done : input.data() + done;
    EXPECT_EQ(cipher.update(out.data() + done, in, n, done + n == input.size()), n);
    done += n;
  }
  return out;
}

// On each backend, in place and not, every piece length gives OpenSSL's bytes.
void expect_pieces_match_openssl(const CipherSpec& spec, const std::vector<std::uint8_t>& input,
                                 std::initializer_list<std::size_t> piece_lens) {
  const auto expected = openssl_oneshot(spec, input);
  for (const std::string& backend : test::available_backends()) {
    for (std::size_t piece_len : piece_lens) {
      for (bool in_place : {false, true}) {
        EXPECT_EQ(run_in_pieces(spec, {backend}, input, piece_len, in_place), expected)
            << backend << ": piece " << piece_len << (in_place ? " in place" : "");
      }
    }
  }
}

// The keystream path works in tiles; pieces that end mid-tile, in place and
// out of place, must all give OpenSSL's CFB128 plaintext, on each backend.
TEST(ChunkCipher, Cfb128KeystreamPathMatchesOpensslAcrossTilesAndPieces) {
  const CipherSpec spec = test::make_spec(Mode::cfb128, Direction::decrypt, 256, 2);
  const auto ciphertext = test::random_bytes(3 * 16384 + 100 + 7, 3);
  expect_pieces_match_openssl(spec, ciphertext, {16, 4096, 16400, 32768});
}

// CFB128 pieces may end inside a block too (a caller of ChunkCipher cuts
// them as it likes; a GPU's chunk hands its partial tail to the CPU): the
// next piece finishes that block first.
TEST(ChunkCipher, Cfb128PiecesThatEndInsideABlockMatchOpenssl) {
  const CipherSpec spec = test::make_spec(Mode::cfb128, Direction::decrypt, 128, 41, false);
  const std::vector<std::uint8_t> ciphertext = test::random_bytes(40000, 42);
  expect_pieces_match_openssl(spec, ciphertext, {1, 15, 17, 4099, 16390});
}

// CTR pieces may end inside a block (a stream's reads): the next piece
// resumes in that block's keystream, on each backend.
TEST(ChunkCipher, CtrPiecesThatEndInsideABlockMatchOpenssl) {
  CipherSpec spec = test::make_spec(Mode::ctr, Direction::encrypt, 128, 4);
  spec.iv[12] = spec.iv[13] = spec.iv[14] = 0xff;  // the low 32 bits wrap within the message
  spec.iv[15] = 0xf0;
  const auto plaintext = test::random_bytes(4 * 4096 + 9, 5);
  expect_pieces_match_openssl(spec, plaintext, {1, 15, 17, 4099});
}

TEST(Padding, FinalBlockIsPkcs7) {
  const std::uint8_t tail[3] = {1, 2, 3};
  const Block b = pkcs7_final_block(tail, 3);
  EXPECT_EQ(b[0], 1);
  EXPECT_EQ(b[2], 3);
  for (std::size_t i = 3; i < kBlockLen; ++i) EXPECT_EQ(b[i], 13);
  const Block full = pkcs7_final_block(nullptr, 0);
  for (std::uint8_t v : full) EXPECT_EQ(v, 16);
  EXPECT_EQ(pkcs7_pad_len(b.data()), 13u);
  EXPECT_EQ(pkcs7_pad_len(full.data()), 16u);
}

TEST(Padding, RejectsEveryMalformedTail) {
  Block b{};
  EXPECT_THROW(pkcs7_pad_len(b.data()), Error);  // pad value 0
  b.fill(17);
  EXPECT_THROW(pkcs7_pad_len(b.data()), Error);  // pad value > 16
  b.fill(4);
  b[12] = 5;
  EXPECT_THROW(pkcs7_pad_len(b.data()), Error);  // inconsistent pad bytes
  try {
    pkcs7_pad_len(b.data());
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "bad decrypt: wrong key or corrupted data");
  }
}

TEST(ChunkCipher, WrongKeyGivesBadDecryptForPaddedModes) {
  const CipherSpec enc = test::make_spec(Mode::cbc, Direction::encrypt, 128, 4);
  const auto ciphertext = openssl_oneshot(enc, test::random_bytes(1000, 5));
  // Try several wrong keys: a random last block passes the padding check by
  // chance about 1 time in 256.
  int rejected = 0;
  for (std::uint32_t seed = 100; seed < 110; ++seed) {
    const CipherSpec wrong = test::make_spec(Mode::cbc, Direction::decrypt, 128, seed);
    ChunkCipher cipher(wrong);
    cipher.begin(wrong.iv);
    std::vector<std::uint8_t> out(ciphertext.size());
    try {
      cipher.update(out.data(), ciphertext.data(), ciphertext.size(), true);
    } catch (const Error&) {
      ++rejected;
    }
  }
  EXPECT_GE(rejected, 8);
}

}  // namespace
}  // namespace paes
