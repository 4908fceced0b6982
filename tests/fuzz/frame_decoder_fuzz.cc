// Fuzz target: the RFC 6587 FrameDecoder fed one stream in chunks the input chooses must yield
// exactly the messages and counters of decoding the whole stream at once; no message exceeds
// max_message_size and the decoder buffers no more than that.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/frame_decoder.h"
#include "tests/fuzz/fuzz_check.h"

namespace {

using logfold::FrameDecoder;

struct Decoded {
  std::vector<std::string> messages;
  FrameDecoder::Counters counters;
};

void Collect(std::span<const std::string_view> messages, const FrameDecoder::Options& options,
             Decoded& out) {
  for (std::string_view m : messages) {
    FUZZ_CHECK(m.size() <= options.max_message_size, "messages are cut to max_message_size");
    out.messages.emplace_back(m);
  }
}

// Feeds `stream` cut after each of `chunk_sizes` bytes (the rest in one last chunk). Each
// chunk lives in its own heap buffer, freed right after Feed returns and its messages are
// copied, so AddressSanitizer catches a view that outlives its chunk.
Decoded Decode(const FrameDecoder::Options& options, std::string_view stream,
               const std::vector<std::size_t>& chunk_sizes) {
  FrameDecoder decoder(options);
  Decoded out;
  auto feed = [&](std::string_view bytes) {
    const std::string chunk(bytes);
    Collect(decoder.Feed(chunk), options, out);
    FUZZ_CHECK(decoder.buffered_bytes() <= options.max_message_size,
               "buffers at most max_message_size");
  };
  for (std::size_t n : chunk_sizes) {
    n = std::min(n, stream.size());
    feed(stream.substr(0, n));
    stream.remove_prefix(n);
  }
  feed(stream);
  Collect(decoder.Finish(), options, out);
  FUZZ_CHECK(decoder.at_frame_boundary() && decoder.buffered_bytes() == 0,
             "Finish ends at a frame boundary");
  out.counters = decoder.counters();
  FUZZ_CHECK(out.counters.messages == out.messages.size(), "every message is counted");
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  // Options and chunk sizes come from the input's tail, the stream from its front.
  FrameDecoder::Options options;
  options.framing = static_cast<logfold::Framing>(in.ConsumeIntegralInRange(0, 2));
  options.nul_terminator = in.ConsumeBool();
  options.octet_content_start = in.ConsumeBool() ? '<' : '\0';
  // Small limits reach truncation and the octet-count plausibility bound (10x) quickly.
  options.max_message_size =
      in.ConsumeBool() ? in.ConsumeIntegralInRange<std::size_t>(1, 300) : 64 * 1024;
  const std::size_t stream_size = in.ConsumeIntegralInRange<std::size_t>(0, in.remaining_bytes());
  const std::string stream = in.ConsumeBytesAsString(stream_size);
  std::vector<std::size_t> chunk_sizes;
  while (in.remaining_bytes() > 0) chunk_sizes.push_back(in.ConsumeIntegral<std::uint8_t>());

  const Decoded whole = Decode(options, stream, {});
  const Decoded chunked = Decode(options, stream, chunk_sizes);
  FUZZ_CHECK(chunked.messages == whole.messages, "chunked decoding yields the same messages");
  FUZZ_CHECK(chunked.counters.messages == whole.counters.messages &&
                 chunked.counters.truncated == whole.counters.truncated &&
                 chunked.counters.framing_errors == whole.counters.framing_errors &&
                 chunked.counters.partial_at_close == whole.counters.partial_at_close,
             "chunked decoding counts the same");
  // Byte by byte is the most hostile chunking; short streams only, to keep runs fast.
  if (stream.size() <= 512) {
    const Decoded bytewise = Decode(options, stream, std::vector<std::size_t>(stream.size(), 1));
    FUZZ_CHECK(bytewise.messages == whole.messages, "byte-by-byte yields the same messages");
  }
  return 0;
}
