// FrameDecoder: splits a TCP syslog byte stream into messages (RFC 6587 octet counting, or
// newline / NUL terminated frames), detecting the framing per frame. Pure: no I/O, no clock.
#ifndef LOGFOLD_PIPELINE_FRAME_DECODER_H_
#define LOGFOLD_PIPELINE_FRAME_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace logfold {

// Auto detection suits syslog senders, whose newline-framed messages start with '<'. For
// senders of raw lines that may start with digits ("5 apples"), configure kNewline.
enum class Framing : std::uint8_t {
  // Per connection: the first frame decides. "LEN SP" followed by content that starts with
  // Options::octet_content_start means octet counting; anything else, or an octet frame that
  // fails that check later, means newline framing for the rest of the connection.
  kAuto,
  kOctetCounted,  // "LEN SP MSG"; a frame that does not fit falls back to newline framing
  kNewline,       // LF terminated (a trailing CR is stripped)
};

// "auto", "octet-counted", "newline".
std::string_view FramingName(Framing framing);
std::optional<Framing> ParseFraming(std::string_view name);

class FrameDecoder {
 public:
  struct Options {
    Framing framing = Framing::kAuto;
    // NUL ends a newline frame too: Python's SysLogHandler ends every record with one.
    bool nul_terminator = true;
    // Auto mode: the byte an octet-counted frame's content must start with to be believed
    // ('<' for syslog, so "42 items processed" stays a line); 0 accepts any.
    char octet_content_start = '<';
    // Longer messages are cut to this size; the rest of their frame is skipped unbuffered.
    std::size_t max_message_size = 64 * 1024;
  };

  // Cumulative since construction; the caller reads the fields (and diffs them if it
  // exports deltas). Empty frames are skipped and appear in no counter.
  struct Counters {
    std::uint64_t messages = 0;   // messages yielded, including truncated and partial ones
    std::uint64_t truncated = 0;  // messages cut to max_message_size
    // Frames that looked octet-counted (forced, or a leading digit in auto mode) but had no
    // valid "LEN SP" header, or (auto) whose content did not start as octet_content_start
    // requires; they are delivered as newline frames.
    std::uint64_t framing_errors = 0;
    std::uint64_t partial_at_close = 0;  // octet-counted frames still incomplete at Finish()
  };

  FrameDecoder() : FrameDecoder(Options{}) {}
  explicit FrameDecoder(const Options& options);

  // Decodes the next bytes of the stream and returns the messages completed by them, without
  // their terminators. A message lying entirely within `data` is a view into `data` (no copy);
  // only a frame split across calls is assembled in an internal buffer. The views therefore
  // stay valid until the next Feed/Finish/Reset call AND only while `data` is alive.
  std::span<const std::string_view> Feed(std::string_view data);

  // Callback form of Feed: `on_message(std::string_view)` per message, same view lifetime.
  template <typename Fn>
  void Feed(std::string_view data, Fn&& on_message) {
    for (std::string_view m : Feed(data)) on_message(m);
  }

  // End of stream: yields the final unterminated frame, if any. An unterminated newline frame
  // is an ordinary message; an incomplete octet-counted frame is delivered as received so far
  // (even a bare length prefix, since in auto mode it may have been a message of digits) and
  // counted in partial_at_close. Afterwards the decoder is at a frame boundary again.
  std::span<const std::string_view> Finish();

  template <typename Fn>
  void Finish(Fn&& on_message) {
    for (std::string_view m : Finish()) on_message(m);
  }

  // Drops any partial frame and the auto-detected framing (for reuse on a new stream).
  // Counters are kept.
  void Reset();

  const Counters& counters() const { return counters_; }
  const Options& options() const { return options_; }
  // Bytes of an unfinished frame held internally (bounded by max_message_size).
  std::size_t buffered_bytes() const { return partial_.size(); }
  bool at_frame_boundary() const { return state_ == State::kFrameStart; }

 private:
  // kOctetFirst: "LEN SP" read, waiting for the content's first byte to validate it (auto).
  enum class State : std::uint8_t { kFrameStart, kHeader, kOctetFirst, kOctetBody, kLine };
  // What auto mode has decided for this connection.
  enum class AutoMode : std::uint8_t { kUndecided, kOctetCounted, kNewline };

  bool IsTerminator(char c) const { return c == '\n' || (options_.nul_terminator && c == '\0'); }
  void StartLine(std::size_t bytes_so_far, char last, bool framing_error);
  void StartOctetBody(std::size_t pos);
  std::string_view Assembled();
  std::string_view FrameBytes(std::string_view data, std::size_t size);
  void EmitLine(std::string_view data);
  void Emit(std::string_view message, bool truncated);
  void SpillPartial(std::string_view data);

  Options options_;
  std::size_t max_;          // options_.max_message_size, at least 1
  std::size_t octet_limit_;  // lengths above this are not believed (10x max)
  Counters counters_;

  State state_ = State::kFrameStart;
  AutoMode auto_mode_ = AutoMode::kUndecided;
  // True while the current frame began inside the chunk being fed: its bytes are then read
  // straight from that chunk at frame_begin_ instead of from partial_.
  bool in_chunk_ = false;
  std::size_t frame_begin_ = 0;

  // kHeader: the length prefix parsed so far.
  std::size_t octet_len_ = 0;
  std::size_t header_digits_ = 0;
  // kOctetBody: body bytes still to consume, and how many of the body to keep.
  std::size_t body_remaining_ = 0;
  std::size_t body_keep_ = 0;
  // kLine: raw bytes seen before the terminator, the last of them (to strip a CR even when
  // it lies beyond what was kept), and whether the frame is an octet-counting fallback.
  std::size_t line_len_ = 0;
  char line_last_ = 0;
  bool line_error_ = false;

  // Two buffers so that a frame completed from partial_ (moved to assembled_) stays valid
  // while the tail of the same chunk starts a new partial frame.
  std::string partial_;
  std::string assembled_;
  std::vector<std::string_view> out_;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_FRAME_DECODER_H_
