// The serial engine: every chunk in order on the calling thread, with no
// overlap of I/O and cipher. It is the baseline speed-ups are measured against.
#include "engine/engines.hpp"
#include "engine/feed.hpp"

namespace paes {

std::size_t transform_in_memory(const Job& job, ChunkWorker& worker, const Chunk& c, Source& in,
                                Sink& out) {
  const std::size_t lookback = c.index == 0 ? 0 : job.lookback_len();
  const std::uint8_t* src = in.view(c.in_offset - lookback, c.in_len + lookback) + lookback;
  std::uint8_t* dst = out.view(c.out_offset, job.out_capacity(c));
  return worker.transform(c, dst, src);
}

std::uint64_t run_in_order(const Job& job, Source& in, Sink& out, const ProgressCallback& progress) {
  const auto worker = job.make_worker();
  std::uint64_t written = 0;
  // Into memory, chunk by chunk in its place in the output: from memory
  // straight; from a file (with no lookback), read there and transformed in
  // place, so that no chunk buffer is touched (fresh pages cost a fault each)
  // and nothing is copied twice. A chunk's read may cover the start of the
  // next one's output (a sealed segment's tag), which is why this runs in
  // order: that next chunk overwrites it.
  if (out.in_memory() && (in.in_memory() || job.lookback_len() == 0)) {
    const std::uint64_t count = job.chunk_count(in.size());
    for (std::uint64_t i = 0; i < count; ++i) {
      const Chunk c = chunk_of(job, in.size(), count, i);
      if (in.in_memory()) {
        written += transform_in_memory(job, *worker, c, in, out);
      } else {
        std::uint8_t* place = out.view(c.out_offset, job.out_capacity(c));  // >= in_len (Job)
        in.read_at(c.in_offset, {place, static_cast<std::size_t>(c.in_len)});
        written += worker->transform(c, place, place);
      }
      if (progress) progress(c.in_len);
    }
    return written;
  }
  SourceFeed feed(job, in);
  SinkDrain drain(out);
  Slot slot;
  while (feed.next(slot)) {
    slot.produced = worker->transform(slot.chunk, slot.data(), slot.data());
    drain.put(slot);
    written += slot.produced;
    if (progress) progress(slot.chunk.in_len);
  }
  return written;
}

std::uint64_t SerialEngine::run(const Job& job, Source& in, Sink& out) {
  return run_in_order(job, in, out, [this](std::uint64_t bytes) { report(bytes); });
}

std::uint64_t SerialEngine::run_stream(const Job& job, StreamReader& in, StreamWriter& out) {
  const auto worker = job.make_worker();
  StreamFeed feed(job, in);
  StreamDrain drain(out);
  Slot slot;
  std::uint64_t written = 0;
  while (feed.next(slot)) {
    slot.produced = worker->transform(slot.chunk, slot.data(), slot.data());
    drain.put(slot);
    written += slot.produced;
    report(slot.chunk.in_len);
  }
  return written;
}

}  // namespace paes
