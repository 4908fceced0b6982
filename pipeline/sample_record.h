// SampleRecord: a compact copy of what events show of one line (a group's first or latest
// line), in one heap block behind one pointer, so a group's two samples cost 16 bytes plus
// their text instead of two full LogRecords (ten std::strings each).
#ifndef LOGFOLD_PIPELINE_SAMPLE_RECORD_H_
#define LOGFOLD_PIPELINE_SAMPLE_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "pipeline/log_record.h"

namespace logfold {

class SampleRecord {
 public:
  // Copies every field of `r` that events show; the raw line is left out (no event writes
  // it). Reuses the block when the new text fits in it, unless `tight` and the block is far
  // larger than the text (a closed group's block, kept for the group that takes its slot).
  void Assign(const LogRecord& r, bool tight = false);
  // Assigns every field of `out` (raw cleared), reusing its buffers.
  void CopyTo(LogRecord& out) const;
  // Frees the block.
  void Reset() { block_.reset(); }
  // Starts loading the block's first line (a hint; freeing the block reads it too).
  void Prefetch() const {
    if (block_ != nullptr) __builtin_prefetch(block_.get());
  }

  bool empty() const { return block_ == nullptr; }
  std::string_view message() const { return Field(kMessage); }
  std::string_view hostname() const { return Field(kHostname); }
  std::string_view app_name() const { return Field(kAppName); }
  std::uint32_t scope_salt() const { return block_ == nullptr ? 0 : block_->scope_salt; }
  TimeUs EventTime() const;
  // Heap bytes held, and the part of them that is the line's own text.
  std::size_t MemoryUsage() const;
  std::size_t TextBytes() const;

 private:
  enum FieldIndex : std::uint8_t {
    kHostname,
    kAppName,
    kTag,
    kProcId,
    kMsgId,
    kStructuredData,
    kMessage,
    kJsonFields,
    kFieldCount,
  };
  // Fixed-size part of the block; the fields' bytes follow it, in FieldIndex order.
  struct Header {
    TimeUs timestamp_us;
    TimeUs arrival_us;
    std::uint32_t capacity;           // bytes available for text after the header
    std::uint32_t end[kFieldCount];   // end offset of each field in the text
    std::int16_t facility, severity;  // -1..23 and -1..7 (from PRI or JSON)
    std::uint32_t scope_salt;         // LogRecord::scope_salt
    SyslogFlavor flavor;
    ParseOutcome outcome;
    bool has_timestamp;
  };
  struct FreeBlock {
    void operator()(Header* h) const;
  };

  std::string_view Field(FieldIndex f) const;
  const char* Text() const { return reinterpret_cast<const char*>(block_.get() + 1); }

  std::unique_ptr<Header, FreeBlock> block_;
};

}  // namespace logfold

#endif  // LOGFOLD_PIPELINE_SAMPLE_RECORD_H_
