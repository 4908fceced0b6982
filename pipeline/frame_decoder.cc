// RFC 6587 stream decoding: the per-frame state machine behind FrameDecoder.
#include "pipeline/frame_decoder.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <utility>

namespace logfold {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::string_view FramingName(Framing framing) {
  switch (framing) {
    case Framing::kAuto:
      return "auto";
    case Framing::kOctetCounted:
      return "octet-counted";
    case Framing::kNewline:
      return "newline";
  }
  return "auto";
}

std::optional<Framing> ParseFraming(std::string_view name) {
  if (name == "auto") return Framing::kAuto;
  if (name == "octet-counted") return Framing::kOctetCounted;
  if (name == "newline") return Framing::kNewline;
  return std::nullopt;
}

FrameDecoder::FrameDecoder(const Options& options)
    : options_(options), max_(std::max<std::size_t>(options.max_message_size, 1)) {
  // Capped so that octet_len_ * 10 + 9 cannot overflow while the prefix is parsed.
  constexpr std::size_t kCap = std::numeric_limits<std::size_t>::max() / 100;
  octet_limit_ = std::min(max_, kCap) * 10;
  out_.reserve(64);
}

void FrameDecoder::Reset() {
  state_ = State::kFrameStart;
  auto_mode_ = AutoMode::kUndecided;
  in_chunk_ = false;
  partial_.clear();
  assembled_.clear();
  out_.clear();
}

void FrameDecoder::StartLine(std::size_t bytes_so_far, char last, bool framing_error) {
  state_ = State::kLine;
  line_len_ = bytes_so_far;
  line_last_ = last;
  line_error_ = framing_error;
}

void FrameDecoder::StartOctetBody(std::size_t pos) {
  state_ = State::kOctetBody;
  body_remaining_ = octet_len_;
  body_keep_ = std::min(octet_len_, max_);
  // The length prefix is not part of the message, so the body restarts the frame's bytes.
  in_chunk_ = true;
  frame_begin_ = pos;
  partial_.clear();
}

std::string_view FrameDecoder::Assembled() {
  // Only the first frame of a chunk can span chunks, so one assembled buffer per call is
  // enough; swapping keeps both buffers' capacity.
  std::swap(partial_, assembled_);
  partial_.clear();
  return assembled_;
}

std::string_view FrameDecoder::FrameBytes(std::string_view data, std::size_t size) {
  if (in_chunk_) return data.substr(frame_begin_, size);
  return Assembled().substr(0, size);
}

void FrameDecoder::Emit(std::string_view message, bool truncated) {
  state_ = State::kFrameStart;
  if (message.empty()) return;
  ++counters_.messages;
  if (truncated) ++counters_.truncated;
  out_.push_back(message);
}

void FrameDecoder::EmitLine(std::string_view data) {
  std::size_t logical = line_len_;
  if (logical > 0 && line_last_ == '\r') --logical;
  if (line_error_ && logical > 0) ++counters_.framing_errors;
  Emit(FrameBytes(data, std::min(logical, max_)), logical > max_);
}

void FrameDecoder::SpillPartial(std::string_view data) {
  if (state_ == State::kFrameStart || !in_chunk_) return;
  std::size_t keep = data.size() - frame_begin_;
  if (state_ == State::kOctetBody) keep = std::min(keep, body_keep_);
  if (state_ == State::kLine || state_ == State::kHeader || state_ == State::kOctetFirst) {
    keep = std::min(keep, max_);
  }
  partial_.assign(data.data() + frame_begin_, keep);
  in_chunk_ = false;
}

std::span<const std::string_view> FrameDecoder::Feed(std::string_view data) {
  out_.clear();
  assembled_.clear();
  in_chunk_ = false;  // a frame carried over from the last call lives in partial_
  const std::size_t n = data.size();
  std::size_t pos = 0;
  while (pos < n) {
    switch (state_) {
      case State::kFrameStart: {
        const char c = data[pos];
        if (IsTerminator(c)) {  // empty frame, or a stray LF after an octet-counted frame
          ++pos;
          break;
        }
        in_chunk_ = true;
        frame_begin_ = pos;
        const bool octet_allowed =
            options_.framing == Framing::kOctetCounted ||
            (options_.framing == Framing::kAuto && auto_mode_ != AutoMode::kNewline);
        if (octet_allowed && c >= '1' && c <= '9') {
          state_ = State::kHeader;
          octet_len_ = 0;
          header_digits_ = 0;
        } else {
          // A connection that chose octet counting and then sends something else has lost
          // its framing: it is read as lines from here on.
          const bool error =
              options_.framing == Framing::kOctetCounted || auto_mode_ == AutoMode::kOctetCounted;
          if (options_.framing == Framing::kAuto) auto_mode_ = AutoMode::kNewline;
          StartLine(0, 0, error);
        }
        break;
      }
      case State::kHeader: {
        bool bad = false;
        const std::size_t start = pos;
        while (pos < n && IsDigit(data[pos])) {
          octet_len_ = octet_len_ * 10 + static_cast<std::size_t>(data[pos] - '0');
          ++header_digits_;
          ++pos;
          if (octet_len_ > octet_limit_) {
            bad = true;
            break;
          }
        }
        // A prefix may hold more digits than max_message_size allows (at most 1 + log10 of
        // the 10x plausibility bound); only what a fallback line could keep is buffered.
        if (!in_chunk_ && partial_.size() < max_) {
          partial_.append(data.data() + start, std::min(pos - start, max_ - partial_.size()));
        }
        if (!bad && pos == n) break;  // the prefix continues in the next chunk
        if (!bad && data[pos] == ' ') {
          ++pos;
          if (options_.framing == Framing::kOctetCounted || options_.octet_content_start == 0) {
            StartOctetBody(pos);
          } else {
            // The SP stays part of the frame's bytes until the content is validated.
            state_ = State::kOctetFirst;
            if (!in_chunk_ && partial_.size() < max_) partial_ += ' ';
          }
          break;
        }
        // Not "digits SP": resynchronise at the next terminator, keeping the bytes as a line.
        if (options_.framing == Framing::kAuto) auto_mode_ = AutoMode::kNewline;
        StartLine(header_digits_, '0', true);
        break;
      }
      case State::kOctetFirst: {
        if (data[pos] == options_.octet_content_start) {
          auto_mode_ = AutoMode::kOctetCounted;
          StartOctetBody(pos);
        } else {
          // "42 items processed": a line that starts with a number, not a length.
          auto_mode_ = AutoMode::kNewline;
          StartLine(header_digits_ + 1, ' ', true);
        }
        break;
      }
      case State::kOctetBody: {
        const std::size_t take = std::min(n - pos, body_remaining_);
        if (!in_chunk_ && partial_.size() < body_keep_) {
          partial_.append(data.data() + pos, std::min(take, body_keep_ - partial_.size()));
        }
        pos += take;
        body_remaining_ -= take;
        if (body_remaining_ == 0) Emit(FrameBytes(data, body_keep_), octet_len_ > max_);
        break;
      }
      case State::kLine: {
        const char* begin = data.data() + pos;
        std::size_t avail = n - pos;
        const char* end = static_cast<const char*>(std::memchr(begin, '\n', avail));
        if (options_.nul_terminator) {
          const std::size_t scan = end != nullptr ? static_cast<std::size_t>(end - begin) : avail;
          const char* nul = static_cast<const char*>(std::memchr(begin, '\0', scan));
          if (nul != nullptr) end = nul;
        }
        const std::size_t seg = end != nullptr ? static_cast<std::size_t>(end - begin) : avail;
        if (seg > 0) line_last_ = begin[seg - 1];
        if (!in_chunk_ && partial_.size() < max_) {
          partial_.append(begin, std::min(seg, max_ - partial_.size()));
        }
        line_len_ += seg;
        pos += seg;
        if (end == nullptr) break;
        ++pos;  // the terminator
        EmitLine(data);
        break;
      }
    }
  }
  SpillPartial(data);
  return out_;
}

std::span<const std::string_view> FrameDecoder::Finish() {
  out_.clear();
  assembled_.clear();
  in_chunk_ = false;
  switch (state_) {
    case State::kFrameStart:
      break;
    case State::kHeader: {
      ++counters_.partial_at_close;
      Emit(Assembled(), header_digits_ > max_);
      break;
    }
    case State::kOctetFirst:
      // "LEN SP" and no content byte: an octet-counted frame with nothing received.
      ++counters_.partial_at_close;
      Emit({}, false);
      break;
    case State::kOctetBody: {
      ++counters_.partial_at_close;
      const std::size_t received = octet_len_ - body_remaining_;
      Emit(Assembled(), received > max_);
      break;
    }
    case State::kLine:
      EmitLine({});
      break;
  }
  partial_.clear();
  return out_;
}

}  // namespace logfold
