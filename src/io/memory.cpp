#include <cstring>

#include "paes/error.hpp"
#include "paes/io.hpp"

namespace paes {
namespace {

void check_range(std::uint64_t offset, std::size_t len, std::size_t size) {
  if (offset > size || len > size - offset) throw Error("internal: memory access out of range");
}

}  // namespace

void MemorySource::read_at(std::uint64_t offset, std::span<std::uint8_t> dst) {
  check_range(offset, dst.size(), bytes_.size());
  if (!dst.empty()) std::memcpy(dst.data(), bytes_.data() + offset, dst.size());
}

const std::uint8_t* MemorySource::view(std::uint64_t offset, std::size_t len) {
  check_range(offset, len, bytes_.size());
  return bytes_.data() + offset;
}

void MemorySink::write_at(std::uint64_t offset, std::span<const std::uint8_t> src) {
  check_range(offset, src.size(), bytes_.size());
  if (!src.empty()) std::memcpy(bytes_.data() + offset, src.data(), src.size());
}

std::uint8_t* MemorySink::view(std::uint64_t offset, std::size_t len) {
  check_range(offset, len, bytes_.size());
  return bytes_.data() + offset;
}

}  // namespace paes
