// What every engine computes of any job: the chunk at an index of an input of
// known length, and the output length bound.
#include <algorithm>

#include "paes/job.hpp"

namespace paes {

Chunk chunk_of(const Job& job, std::uint64_t input_len, std::uint64_t count, std::uint64_t index) {
  const std::uint64_t offset = job.in_offset(index);
  const std::uint64_t left = input_len > offset ? input_len - offset : 0;
  return job.chunk(index, std::min(job.nominal_in_len(index), left), index + 1 == count);
}

std::uint64_t output_capacity(const Job& job, std::uint64_t input_len) {
  const std::uint64_t count = job.chunk_count(input_len);
  const Chunk last = chunk_of(job, input_len, count, count - 1);
  return last.out_offset + job.out_capacity(last);
}

}  // namespace paes
