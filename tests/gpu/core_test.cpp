// Host unit tests of the portable GPU AES core (src/cipher/gpu/aes_core.h), its
// tables as uploaded and as the kernels replicate them, and the host key
// schedule: FIPS-197 appendix A round keys, and random blocks against OpenSSL
// for every key size and through every lane's table column.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cipher/oneshot.hpp"
#include "cipher/gpu/aes_kernels.h"
#include "cipher/gpu/aes_tables.hpp"
#include "cipher/gpu/key_schedule.hpp"
#include "paes/error.hpp"

extern "C" {
void paes_c_encrypt_block(const std::uint32_t* rk, int nr, const std::uint32_t* te0,
                          std::uint32_t* s);
void paes_c_decrypt_block(const std::uint32_t* rk, int nr, const std::uint32_t* td0,
                          const std::uint32_t* inv_sbox, std::uint32_t* s);
}

namespace paes::gpu {
namespace {

std::vector<std::uint8_t> random_bytes(std::size_t len, std::uint32_t seed) {
  std::vector<std::uint8_t> v(len);
  std::uint32_t x = seed * 2654435761u + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::uint8_t>(x);
  }
  return v;
}

std::vector<std::uint8_t> unhex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

void load_words(const std::uint8_t* p, std::uint32_t* s) {
  for (int i = 0; i < 4; ++i) {
    s[i] = (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) |
           (std::uint32_t{p[4 * i + 2]} << 8) | p[4 * i + 3];
  }
}

void store_words(const std::uint32_t* s, std::uint8_t* p) {
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) p[4 * i + j] = static_cast<std::uint8_t>(s[i] >> (24 - 8 * j));
  }
}

// The kernels' local tables, filled as by a work-group of one work-item, and
// the column of each lane in them.
struct LocalTables {
  std::vector<std::uint32_t> encrypt = std::vector<std::uint32_t>(PAES_ENCRYPT_LOCAL_WORDS);
  std::vector<std::uint32_t> decrypt = std::vector<std::uint32_t>(PAES_DECRYPT_LOCAL_WORDS);

  LocalTables() {
    paes_fill_encrypt_tables(encrypt.data(), aes_tables().image.data(), 0, 1);
    paes_fill_decrypt_tables(decrypt.data(), aes_tables().image.data(), 0, 1);
  }
  const std::uint32_t* te0(std::size_t lane) const { return encrypt.data() + lane; }
  const std::uint32_t* td0(std::size_t lane) const { return decrypt.data() + lane; }
  const std::uint32_t* inv_sbox(std::size_t lane) const {
    return decrypt.data() + PAES_LOCAL_INV_SBOX_OFFSET + lane;
  }
};

CipherSpec ecb_spec(const std::vector<std::uint8_t>& key, Direction direction) {
  CipherSpec spec;
  spec.mode = Mode::ecb;
  spec.direction = direction;
  spec.key = SecretBytes(key.data(), key.size());
  spec.padding = false;
  return spec;
}

TEST(GpuTables, SboxKnownValuesAndInverse) {
  const AesTables& t = aes_tables();
  EXPECT_EQ(t.sbox[0x00], 0x63);
  EXPECT_EQ(t.sbox[0x01], 0x7c);
  EXPECT_EQ(t.sbox[0x53], 0xed);  // FIPS-197 5.1.1's example
  EXPECT_EQ(t.sbox[0xff], 0x16);
  for (unsigned x = 0; x < 256; ++x) EXPECT_EQ(t.inv_sbox[t.sbox[x]], x);
  // Te0 = (2s, s, s, 3s) and Td0 = (e, 9, d, b)*InvS, as in rijndael-alg-fst.
  EXPECT_EQ(t.te0()[0x00], 0xc66363a5u);
  EXPECT_EQ(t.te0()[0x01], 0xf87c7c84u);
  EXPECT_EQ(t.td0()[0x00], 0x51f4a750u);
  EXPECT_EQ(t.td0()[0x01], 0x7e416553u);
  // InvS[0..3] = 52 09 6a d5, low byte first.
  EXPECT_EQ(t.packed_inv_sbox()[0x00], 0xd56a0952u);
  for (unsigned x = 0; x < 256; ++x) {
    EXPECT_EQ((t.packed_inv_sbox()[x / 4] >> (8 * (x % 4))) & 0xff, t.inv_sbox[x]);
  }
}

// Every lane's column of the replicated tables is the table itself, so a lane
// reads the same values as any other (and only from its own bank).
TEST(GpuTables, ReplicatedTablesHoldTheSameValuesInEveryLane) {
  const AesTables& t = aes_tables();
  const LocalTables local;
  for (std::size_t lane = 0; lane < PAES_TABLE_LANES; ++lane) {
    SCOPED_TRACE(testing::Message() << "lane " << lane);
    for (unsigned x = 0; x < 256; ++x) {
      ASSERT_EQ(paes_entry(local.te0(lane), x), t.te0()[x]) << x;
      ASSERT_EQ(paes_entry(local.td0(lane), x), t.td0()[x]) << x;
      ASSERT_EQ(paes_inv_sbox(local.inv_sbox(lane), x), t.inv_sbox[x]) << x;
      ASSERT_EQ(&local.te0(lane)[x * PAES_TABLE_LANES] - local.encrypt.data(),
                static_cast<std::ptrdiff_t>(x * PAES_TABLE_LANES + lane));
    }
  }
}

// A work-group fills its tables cooperatively, each work-item a stride of the
// words; whatever the work-group size, the result is the one-item fill.
TEST(GpuTables, CooperativeFillEqualsSingleItemFill) {
  const LocalTables expected;
  for (std::uint32_t items : {32u, 96u, 100u, 256u, 1024u}) {
    SCOPED_TRACE(testing::Message() << items << " work-items");
    std::vector<std::uint32_t> encrypt(PAES_ENCRYPT_LOCAL_WORDS, 0xdeadbeef);
    std::vector<std::uint32_t> decrypt(PAES_DECRYPT_LOCAL_WORDS, 0xdeadbeef);
    for (std::uint32_t item = 0; item < items; ++item) {
      paes_fill_encrypt_tables(encrypt.data(), aes_tables().image.data(), item, items);
      paes_fill_decrypt_tables(decrypt.data(), aes_tables().image.data(), item, items);
    }
    EXPECT_EQ(encrypt, expected.encrypt);
    EXPECT_EQ(decrypt, expected.decrypt);
  }
}

TEST(GpuTables, LocalMemorySizes) {
  EXPECT_EQ(PAES_ENCRYPT_LOCAL_BYTES, 32 * 1024);
  EXPECT_EQ(PAES_DECRYPT_LOCAL_BYTES, 40 * 1024);
  EXPECT_EQ(sizeof(aes_tables().image), PAES_TABLE_WORDS * sizeof(std::uint32_t));
}

struct AppendixA {
  std::string name;
  std::vector<std::uint8_t> key;
  std::vector<std::uint32_t> words;
};

// The data file where the build put it, else under the working directory: a
// build carried to a GPU machine runs from a checkout at another path.
std::string data_file(const std::string& name) {
  const std::string built = std::string(PAES_TEST_DATA_DIR) + "/" + name;
  return std::filesystem::exists(built) ? built : "tests/data/" + name;
}

std::vector<AppendixA> read_appendix_a() {
  std::ifstream in(data_file("gpu/fips197_appendix_a.txt"));
  EXPECT_TRUE(in) << "can't open tests/data/gpu/fips197_appendix_a.txt";
  std::vector<AppendixA> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    if (!(ls >> tag) || tag[0] == '#') continue;
    if (tag == "key") {
      AppendixA a;
      std::string hex;
      ls >> a.name >> hex;
      a.key = unhex(hex);
      out.push_back(std::move(a));
    } else if (tag == "round") {
      int r = 0;
      ls >> r;
      EXPECT_EQ(static_cast<std::size_t>(r) * 4, out.back().words.size());
      std::string w;
      while (ls >> w) out.back().words.push_back(static_cast<std::uint32_t>(std::stoul(w, nullptr, 16)));
    }
  }
  return out;
}

TEST(GpuKeySchedule, Fips197AppendixA) {
  const auto vectors = read_appendix_a();
  ASSERT_EQ(vectors.size(), 3u);
  for (const auto& v : vectors) {
    SCOPED_TRACE(v.name);
    const RoundKeys rk = expand_encrypt_key(v.key.data(), v.key.size());
    EXPECT_EQ(rk.rounds, static_cast<int>(v.key.size() / 4 + 6));
    ASSERT_EQ(rk.word_count(), v.words.size());
    for (std::size_t i = 0; i < v.words.size(); ++i) EXPECT_EQ(rk.words[i], v.words[i]) << "w[" << i << "]";
  }
}

TEST(GpuKeySchedule, DecryptionKeysAreReversedWithInvMixColumns) {
  const AesTables& t = aes_tables();
  for (std::size_t len : {16u, 24u, 32u}) {
    const auto key = random_bytes(len, static_cast<std::uint32_t>(len));
    const RoundKeys enc = expand_encrypt_key(key.data(), len);
    const RoundKeys dec = expand_decrypt_key(key.data(), len);
    const auto nr = static_cast<std::size_t>(enc.rounds);
    for (std::size_t c = 0; c < 4; ++c) {
      EXPECT_EQ(dec.words[c], enc.words[4 * nr + c]);
      EXPECT_EQ(dec.words[4 * nr + c], enc.words[c]);
    }
    // The reference computes InvMixColumns(w) as Td0[S[b0]] ^ Td1[S[b1]] ^ ..:
    // a second route, through the tables, to the same middle round keys.
    for (std::size_t r = 1; r < nr; ++r) {
      for (std::size_t c = 0; c < 4; ++c) {
        const std::uint32_t w = enc.words[4 * (nr - r) + c];
        auto td = [&](unsigned b, unsigned rot) {
          const std::uint32_t v = t.td0()[t.sbox[b]];
          return rot == 0 ? v : (v >> rot) | (v << (32 - rot));
        };
        const std::uint32_t expected =
            td(w >> 24, 0) ^ td((w >> 16) & 0xff, 8) ^ td((w >> 8) & 0xff, 16) ^ td(w & 0xff, 24);
        EXPECT_EQ(dec.words[4 * r + c], expected);
      }
    }
  }
}

TEST(GpuKeySchedule, RejectsBadKeyLengths) {
  const std::uint8_t key[33] = {};
  EXPECT_THROW(expand_encrypt_key(key, 15), Error);
  EXPECT_THROW(expand_decrypt_key(key, 33), Error);
}

TEST(GpuCore, Fips197AppendixCVectors) {
  const std::vector<std::uint8_t> pt = unhex("00112233445566778899aabbccddeeff");
  const std::map<std::size_t, std::string> expected = {
      {16, "69c4e0d86a7b0430d8cdb78070b4c55a"},
      {24, "dda97ca4864cdfe06eaf70a0ec0d7191"},
      {32, "8ea2b7ca516745bfeafc49904b496089"}};
  const LocalTables t;
  for (const auto& [len, ct_hex] : expected) {
    std::vector<std::uint8_t> key(len);
    for (std::size_t i = 0; i < len; ++i) key[i] = static_cast<std::uint8_t>(i);
    const RoundKeys enc = expand_encrypt_key(key.data(), len);
    const RoundKeys dec = expand_decrypt_key(key.data(), len);
    std::uint32_t s[4];
    std::uint8_t out[16];
    load_words(pt.data(), s);
    paes_encrypt_block(enc.words.data(), enc.rounds, t.te0(0), s);
    store_words(s, out);
    EXPECT_EQ(std::vector<std::uint8_t>(out, out + 16), unhex(ct_hex)) << len * 8;
    paes_decrypt_block(dec.words.data(), dec.rounds, t.td0(0), t.inv_sbox(0), s);
    store_words(s, out);
    EXPECT_EQ(std::vector<std::uint8_t>(out, out + 16), pt) << len * 8;
  }
}

// Random keys and blocks, every key size: the core (compiled as C++ and as C)
// equals OpenSSL's ECB both ways, block b read through lane b % 32's column.
TEST(GpuCore, RandomBlocksMatchOpenSsl) {
  const LocalTables t;
  constexpr std::size_t kBlocks = 512;
  for (std::size_t len : {16u, 24u, 32u}) {
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE(testing::Message() << "AES-" << len * 8 << " seed " << seed);
      const auto key = random_bytes(len, seed * 100 + static_cast<std::uint32_t>(len));
      const auto pt = random_bytes(kBlocks * 16, seed);
      const auto ct_ref = openssl_oneshot(ecb_spec(key, Direction::encrypt), pt);
      const auto pt_ref = openssl_oneshot(ecb_spec(key, Direction::decrypt), ct_ref);
      ASSERT_EQ(pt_ref, pt);
      const RoundKeys enc = expand_encrypt_key(key.data(), len);
      const RoundKeys dec = expand_decrypt_key(key.data(), len);
      std::vector<std::uint8_t> ct(pt.size()), ct_c(pt.size()), back(pt.size()), back_c(pt.size());
      for (std::size_t b = 0; b < kBlocks; ++b) {
        const std::size_t lane = b % PAES_TABLE_LANES;
        std::uint32_t s[4], sc[4];
        load_words(pt.data() + 16 * b, s);
        load_words(pt.data() + 16 * b, sc);
        paes_encrypt_block(enc.words.data(), enc.rounds, t.te0(lane), s);
        paes_c_encrypt_block(enc.words.data(), enc.rounds, t.te0(lane), sc);
        store_words(s, ct.data() + 16 * b);
        store_words(sc, ct_c.data() + 16 * b);
        load_words(ct_ref.data() + 16 * b, s);
        load_words(ct_ref.data() + 16 * b, sc);
        paes_decrypt_block(dec.words.data(), dec.rounds, t.td0(lane), t.inv_sbox(lane), s);
        paes_c_decrypt_block(dec.words.data(), dec.rounds, t.td0(lane), t.inv_sbox(lane), sc);
        store_words(s, back.data() + 16 * b);
        store_words(sc, back_c.data() + 16 * b);
      }
      EXPECT_EQ(ct, ct_ref);
      EXPECT_EQ(ct_c, ct_ref);
      EXPECT_EQ(back, pt);
      EXPECT_EQ(back_c, pt);
    }
  }
}

TEST(GpuCore, CounterAddCarriesThrough128Bits) {
  auto add = [](std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d,
                std::uint64_t n) {
    const std::uint32_t iv[4] = {a, b, c, d};
    std::uint32_t out[4];
    paes_counter_add(iv, n, out);
    return std::vector<std::uint32_t>(out, out + 4);
  };
  using V = std::vector<std::uint32_t>;
  EXPECT_EQ(add(1, 2, 3, 4, 5), (V{1, 2, 3, 9}));
  EXPECT_EQ(add(1, 2, 3, 0xffffffff, 1), (V{1, 2, 4, 0}));
  EXPECT_EQ(add(1, 2, 0xffffffff, 0xffffffff, 1), (V{1, 3, 0, 0}));
  EXPECT_EQ(add(7, 0xffffffff, 0xffffffff, 0xffffffff, 2), (V{8, 0, 0, 1}));
  EXPECT_EQ(add(0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 1), (V{0, 0, 0, 0}));
  EXPECT_EQ(add(0, 0, 0xffffffff, 0xfffffffe, ~std::uint64_t{0}), (V{0, 1, 0xffffffff, 0xfffffffd}));
}

TEST(GpuCore, ByteSwap) {
  EXPECT_EQ(paes_bswap32(0x01020304u), 0x04030201u);
}

}  // namespace
}  // namespace paes::gpu
