// The cipher-backend seam (src/cipher/backend.hpp): every backend in the
// dispatch table gives OpenSSL's one-shot bytes, and jobs run the backend the
// table chooses (BoringSSL's "which implementation ran" test: each backend
// counts the objects it makes, so a worker that bypassed the choice, or a
// choice that went to the wrong row, shows in the counts).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "cipher/backend.hpp"
#include "cipher/oneshot.hpp"
#include "paes/backend.hpp"
#include "paes/error.hpp"
#ifdef PAES_HAVE_IPSEC_MB
#include <intel-ipsec-mb.h>

#include "cipher/ipsec_mb/ipsec_mb_backend.hpp"
#endif
#include "cipher/padding.hpp"
#include "cipher/segment_codec.hpp"
#include "format/sealed_format.hpp"
#include "paes/engine.hpp"
#include "paes/io.hpp"
#include "paes/plan.hpp"
#include "paes/transform.hpp"
#include "test_support.hpp"

namespace paes {
namespace {

std::vector<std::uint64_t> objects_made() {
  std::vector<std::uint64_t> made;
  for (const CipherBackend* backend : cipher_backends()) made.push_back(backend->objects_made());
  return made;
}

// Asserts that since `before` only `chosen` made objects, and at least one.
void expect_only(const CipherBackend& chosen, const std::vector<std::uint64_t>& before,
                 const std::string& what) {
  const auto after = objects_made();
  for (std::size_t i = 0; i < after.size(); ++i) {
    const CipherBackend* backend = cipher_backends()[i];
    if (backend == &chosen) {
      EXPECT_GT(after[i], before[i]) << what << ": the chosen backend " << backend->name() << " did not run";
    } else {
      EXPECT_EQ(after[i], before[i]) << what << ": backend " << backend->name() << " ran, not the chosen "
                                     << chosen.name();
    }
  }
}

// auto, and each backend this machine runs.
std::vector<std::string> selections() {
  std::vector<std::string> names{std::string(kAutoBackend)};
  for (const std::string& name : test::available_backends()) names.push_back(name);
  return names;
}

SecretBytes key_of(std::size_t len, std::uint32_t seed) {
  const auto bytes = test::random_bytes(len, seed);
  return SecretBytes(bytes.data(), bytes.size());
}

TEST(CipherBackends, OpenSslIsInTheTableAndRunsEverything) {
  const auto backends = cipher_backends();
  ASSERT_FALSE(backends.empty());
  const auto openssl = std::find_if(backends.begin(), backends.end(),
                                    [](const CipherBackend* b) { return b->name() == "openssl"; });
  ASSERT_NE(openssl, backends.end());
  EXPECT_TRUE((*openssl)->available());
  for (Mode mode : kAllModes) {
    for (Direction direction : {Direction::encrypt, Direction::decrypt}) {
      EXPECT_TRUE((*openssl)->runs(mode, direction));
      EXPECT_NO_THROW(raw_backend(BackendChoice{}, mode, direction));
    }
  }
  EXPECT_NO_THROW(segment_backend(BackendChoice{}));
}

// Each available backend, each mode it runs, each key size and direction: a
// message in two chunks (the second started from the state a plan gives it
// where the direction is parallel) must be OpenSSL's one-shot bytes.
TEST(CipherBackends, EveryBackendMatchesOpensslInEveryModeItRuns) {
  for (const CipherBackend* backend : cipher_backends()) {
    if (!backend->available()) continue;
    for (Mode mode : kAllModes) {
      for (Direction direction : {Direction::encrypt, Direction::decrypt}) {
        if (!backend->runs(mode, direction)) continue;
        for (unsigned key_bits : {128u, 192u, 256u}) {
          const CipherSpec spec = test::make_spec(mode, direction, key_bits, 7, false);
          const std::size_t len = mode_is_padded(mode) ? 100 * kBlockLen : 100 * kBlockLen + 9;
          const auto input = test::random_bytes(len, key_bits);
          const auto expected = openssl_oneshot(spec, input);
          const std::string what = std::string(backend->name()) + " " + std::string(mode_name(mode)) + " " +
                                   std::string(direction_name(direction)) + " " + std::to_string(key_bits);

          auto cipher = backend->make_raw(spec);
          std::vector<std::uint8_t> out(len);
          const std::size_t split = 37 * kBlockLen;
          cipher->begin(spec.iv);
          cipher->update(out.data(), input.data(), split);
          if (is_parallel(mode, direction)) {
            // A fresh chunk: CTR's counter moves on; CBC and CFB decryption
            // chain from the ciphertext block before it.
            Block state{};
            if (mode == Mode::ctr) {
              state = add_to_counter(spec.iv, split / kBlockLen);
            } else {
              std::copy_n(input.begin() + static_cast<std::ptrdiff_t>(split - kBlockLen), kBlockLen, state.begin());
            }
            cipher->begin(state);
          }
          cipher->update(out.data() + split, input.data() + split, len - split);
          EXPECT_EQ(out, expected) << what;
        }
      }
    }
  }
}

TEST(CipherBackends, EveryBackendSealsAsOpensslGcm) {
  for (const CipherBackend* backend : cipher_backends()) {
    // A GPU has no AES-GCM (tests/gpu/gpu_backend_test.cpp checks it refuses).
    if (!backend->available() || backend->runs_on_device()) continue;
    for (std::size_t key_len : {std::size_t{16}, std::size_t{32}}) {
      for (std::size_t len : {std::size_t{0}, std::size_t{1}, std::size_t{16}, std::size_t{1000}, std::size_t{1} << 20}) {
        const SecretBytes key = key_of(key_len, 11);
        const auto plain = test::random_bytes(len, 12);
        std::vector<std::uint8_t> expected(plain.size() + kTagLen);
        expected.resize(openssl_gcm_oneshot_into(key, Direction::encrypt, expected.data(), plain));

        const GcmNonce zero{};  // openssl_gcm_oneshot_into's nonce
        std::vector<std::uint8_t> sealed(plain.size() + kTagLen);
        backend->make_segment(key, Direction::encrypt)->seal(zero, sealed.data(), plain.data(), plain.size());
        EXPECT_EQ(sealed, expected) << backend->name() << " AES-" << key_len * 8 << "-GCM";

        auto opener = backend->make_segment(key, Direction::decrypt);
        std::vector<std::uint8_t> opened(plain.size());
        ASSERT_TRUE(opener->open(zero, opened.data(), sealed.data(), sealed.size())) << backend->name();
        EXPECT_EQ(opened, plain) << backend->name();
        sealed.back() ^= 1;
        EXPECT_FALSE(opener->open(zero, opened.data(), sealed.data(), sealed.size())) << backend->name();
        if (len == 0) continue;
        sealed.back() ^= 1;
        sealed.front() ^= 1;  // the ciphertext, not the tag
        EXPECT_FALSE(opener->open(zero, opened.data(), sealed.data(), sealed.size())) << backend->name();
      }
    }
  }
}

// The raw modes through the front door and the threads engine: the workers
// run the backend raw_backend gives for the job's choice, and only that one.
TEST(CipherBackends, RawJobsRunTheChosenBackend) {
  for (const std::string& selection : selections()) {
    for (Mode mode : kAllModes) {
      for (Direction direction : {Direction::encrypt, Direction::decrypt}) {
        const CipherSpec spec = test::make_spec(mode, direction, 256, 21, false);
        const auto input = test::random_bytes(64 * 1024, 22);
        const auto expected = openssl_oneshot(spec, input);
        // The job's length is part of auto's choice (auto_min_job_len).
        const CipherBackend& chosen = raw_backend(BackendChoice{selection}.for_job_of(input.size()), mode, direction);
        const auto before = objects_made();

        TransformOptions options = test::on_backend(selection);
        options.engine = EngineKind::threads;
        options.threads = 3;
        options.chunk_len = 4096;
        std::vector<std::uint8_t> out(input.size() + kBlockLen);
        out.resize(transform_memory(spec, out, input, options));
        EXPECT_EQ(out, expected);
        expect_only(chosen, before,
                    selection + ": " + std::string(mode_name(mode)) + " " + std::string(direction_name(direction)));
      }
    }
  }
}

// Auto leaves a backend a job too short to pay for its start-up (ipsec-mb's
// library and self-test), and takes it for a long job or one of unknown length;
// a backend named runs whatever the length.
TEST(CipherBackends, AutoPassesOverABackendForJobsShorterThanItsStartUpPays) {
  for (const CipherBackend* backend : cipher_backends()) {
    const std::uint64_t least = backend->auto_min_job_len();
    if (least == 0 || !backend->available() || !backend->chosen_by_auto()) continue;
    SCOPED_TRACE(std::string(backend->name()));
    EXPECT_EQ(&segment_backend(BackendChoice{}), backend);
    EXPECT_EQ(&segment_backend(BackendChoice{}.for_job_of(least)), backend);
    EXPECT_NE(&segment_backend(BackendChoice{}.for_job_of(least - 1)), backend);
    EXPECT_NE(&segment_backend(BackendChoice{}.for_job_of(0)), backend);
    EXPECT_EQ(&raw_backend(BackendChoice{}.for_job_of(least), Mode::ctr, Direction::encrypt), backend);
    EXPECT_NE(&raw_backend(BackendChoice{}.for_job_of(2048), Mode::ctr, Direction::encrypt), backend);
    const BackendChoice named(std::string(backend->name()));
    EXPECT_EQ(&segment_backend(named.for_job_of(2048)), backend);
    EXPECT_EQ(&raw_backend(named.for_job_of(2048), Mode::ctr, Direction::encrypt), backend);
  }
}

// The sealed body's segments: SegmentJob's workers run segment_backend's.
TEST(CipherBackends, SegmentJobsRunTheChosenBackend) {
  for (const std::string& selection : selections()) {
    const SecretBytes key = key_of(32, 31);
    const NoncePrefix prefix{1, 2, 3, 4, 5, 6, 7};
    const auto plain = test::random_bytes(10000, 32);
    const CipherBackend& chosen = segment_backend({selection});
    const auto before = objects_made();

    SegmentJob sealing(Direction::encrypt, 32, 4096, key, prefix, BackendChoice{selection});
    std::vector<std::uint8_t> body(output_capacity(sealing, plain.size()));
    {
      MemorySource source(plain);
      MemorySink sink(body);
      body.resize(make_engine(EngineKind::threads, 2)->run(sealing, source, sink));
    }
    expect_only(chosen, before, selection + ": sealing");

    // Segment 0 by hand: the engine's bytes are AES-GCM under the Tink nonce.
    TinkSegmentCodec codec(chosen, key, prefix, Direction::decrypt);
    const std::size_t first = 4096 - StreamHeader::length(32);
    std::vector<std::uint8_t> segment0(first - kTagLen);
    ASSERT_EQ(codec.open(0, false, segment0.data(), body.data(), first), first - kTagLen);
    EXPECT_TRUE(std::equal(segment0.begin(), segment0.end(), plain.begin())) << selection;
  }
}

// A job's choice: a named backend runs what it runs, the CPU backend auto
// takes for that work the rest (cpu_raw_backend: OpenSSL, or ipsec-mb where
// auto takes it); OpenSSL never hands work to another backend.
TEST(CipherBackends, ChoiceDecidesWhatEachJobRuns) {
  for (const std::string& name : test::available_backends()) {
    EXPECT_EQ(segment_backend_name({name}), name);
    for (Mode mode : kAllModes) {
      for (Direction direction : {Direction::encrypt, Direction::decrypt}) {
        const CipherBackend& chosen = raw_backend({name}, mode, direction);
        const bool runs_itself = std::find_if(cipher_backends().begin(), cipher_backends().end(), [&](auto* b) {
                                   return b->name() == name && b->runs(mode, direction);
                                 }) != cipher_backends().end();
        EXPECT_EQ(chosen.name(), runs_itself ? name : cpu_raw_backend(mode, direction).name())
            << name << " " << mode_name(mode);
      }
    }
  }
}

// `paes info` names one backend as auto's: the one auto's jobs run.
TEST(CipherBackends, InfoNamesTheBackendAutoRuns) {
  std::vector<std::string> auto_runs;
  for (const CipherBackendInfo& info : cipher_backends_info()) {
    if (info.chosen_by_auto) auto_runs.push_back(info.name);
    EXPECT_EQ(info.available, info.why_not.empty()) << info.name << ": " << info.why_not;
  }
  ASSERT_EQ(auto_runs.size(), 1u);
  EXPECT_EQ(auto_runs[0], segment_backend_name(BackendChoice{}));
  EXPECT_EQ(auto_runs[0], raw_backend_name(BackendChoice{}, Mode::ctr, Direction::encrypt));
}

TEST(CipherBackends, RefusesUnknownAndMissingBackendsAsUsageErrors) {
  try {
    check_backend_choice({"boringssl"});
    ADD_FAILURE() << "an unknown backend was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::usage);
    std::string choices = "choose auto";
    for (const CipherBackendName& row : cipher_backend_names()) choices += ", " + row.name;
    EXPECT_NE(std::string(e.what()).find(choices), std::string::npos) << e.what();
  }
  for (const CipherBackendInfo& info : cipher_backends_info()) {
    if (info.available) continue;
    try {
      check_backend_choice({info.name});
      ADD_FAILURE() << info.name << " is not available here but was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage);
      EXPECT_NE(std::string(e.what()).find(info.why_not), std::string::npos) << e.what();
    }
  }
  // A device for a backend that has none, and for auto that may take no GPU.
  for (const BackendChoice& choice : {BackendChoice{"openssl", 0u}, BackendChoice{std::string(kAutoBackend), 0u}}) {
    try {
      check_backend_choice(choice);
      ADD_FAILURE() << choice.name << " took a device";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
    }
  }
  EXPECT_NO_THROW(check_backend_choice({std::string(kAutoBackend), 0u, /*gpu_where_faster=*/true}));
}

#ifdef PAES_HAVE_IPSEC_MB
// auto takes ipsec-mb only on its AVX-512 path with VAES and VPCLMULQDQ,
// where it was measured faster; on every other CPU OpenSSL runs.
TEST(IpsecMb, AutoTakesItOnlyWithVaesAndVpclmulqdq) {
  const std::uint64_t vaes = IMB_FEATURE_VAES, vpclmul = IMB_FEATURE_VPCLMULQDQ;
  EXPECT_TRUE(ipsec_mb_chosen_by_auto(IMB_ARCH_AVX512, vaes | vpclmul | IMB_FEATURE_AESNI));
  EXPECT_FALSE(ipsec_mb_chosen_by_auto(IMB_ARCH_AVX512, vpclmul));
  EXPECT_FALSE(ipsec_mb_chosen_by_auto(IMB_ARCH_AVX512, vaes));
  EXPECT_FALSE(ipsec_mb_chosen_by_auto(IMB_ARCH_AVX2, vaes | vpclmul));
  EXPECT_FALSE(ipsec_mb_chosen_by_auto(IMB_ARCH_SSE, 0));
  EXPECT_FALSE(ipsec_mb_chosen_by_auto(IMB_ARCH_NOAESNI, 0));
}

// Random modes, key sizes, lengths, chunk offsets and IVs, many near a wrap
// of the counter's low 32 or 64 bits or of all 128: ipsec-mb's bytes must be
// OpenSSL's, chunk by chunk as the engines run them.
TEST(IpsecMb, GivesOpensslsBytesForRandomWorkNearEveryCounterWrap) {
  const CipherBackend& imb = ipsec_mb_backend();
  if (!imb.available()) GTEST_SKIP() << "ipsec-mb can't run on this machine: " << imb.why_unavailable();
  const Mode modes[] = {Mode::ctr, Mode::ecb, Mode::cbc, Mode::cfb128};
  std::mt19937 rng(2024);
  for (int round = 0; round < 400; ++round) {
    const Mode mode = modes[rng() % 4];
    const Direction direction =
        mode == Mode::ctr || mode == Mode::ecb ? (rng() % 2 ? Direction::encrypt : Direction::decrypt) : Direction::decrypt;
    const unsigned key_bits = 128u + 64u * static_cast<unsigned>(rng() % 3);
    CipherSpec spec = test::make_spec(mode, direction, key_bits, static_cast<std::uint32_t>(rng()), false);
    const int ff_bytes = static_cast<int>(rng() % 5) * 4;  // 0 (random IV), 4, 8, 12 or 16 bytes of 0xff
    for (int i = 0; i < ff_bytes; ++i) spec.iv[kBlockLen - 1 - static_cast<std::size_t>(i)] = 0xff;
    if (ff_bytes != 0) spec.iv[kBlockLen - 1] = static_cast<std::uint8_t>(0xff - rng() % 40);
    const std::size_t blocks = 1 + rng() % 3000;
    const std::size_t len = mode == Mode::ctr ? blocks * kBlockLen - rng() % kBlockLen : blocks * kBlockLen;
    const auto input = test::random_bytes(len, static_cast<std::uint32_t>(rng()));
    const auto expected = openssl_oneshot(spec, input);
    const std::string what = std::string(mode_name(mode)) + " " + std::string(direction_name(direction)) + " " +
                             std::to_string(key_bits) + " len " + std::to_string(len) + " ff " + std::to_string(ff_bytes);

    // Two chunks, the second started from the state a plan gives it.
    const std::size_t split = (rng() % blocks) * kBlockLen;
    auto cipher = imb.make_raw(spec);
    std::vector<std::uint8_t> out(len);
    cipher->begin(spec.iv);
    if (split != 0) cipher->update(out.data(), input.data(), split);
    Block state = spec.iv;
    if (mode == Mode::ctr) {
      state = add_to_counter(spec.iv, split / kBlockLen);
    } else if (mode != Mode::ecb && split != 0) {
      std::copy_n(input.begin() + static_cast<std::ptrdiff_t>(split - kBlockLen), kBlockLen, state.begin());
    }
    cipher->begin(state);
    cipher->update(out.data() + split, input.data() + split, len - split);
    ASSERT_EQ(out, expected) << what << " split " << split;
  }
}
#else
TEST(IpsecMb, IsBuiltIn) {
  GTEST_SKIP() << "ipsec-mb is not built into this paes (no libipsec-mb-dev found): its tests don't run";
}
#endif

}  // namespace
}  // namespace paes
