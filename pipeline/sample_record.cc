// SampleRecord implementation: one block of header plus the fields' bytes back to back.
#include "pipeline/sample_record.h"

#include <cstring>
#include <new>
#include <string>

namespace logfold {

void SampleRecord::FreeBlock::operator()(Header* h) const { ::operator delete(h); }

void SampleRecord::Assign(const LogRecord& r, bool tight) {
  const std::string* fields[kFieldCount] = {&r.hostname, &r.app_name,   &r.tag,
                                            &r.procid,   &r.msgid,      &r.structured_data,
                                            &r.message,  &r.json_fields};
  std::size_t total = 0;
  for (const std::string* f : fields) total += f->size();
  // Lines are at most max_message_size (16 MiB) long, so offsets fit 32 bits.
  if (block_ == nullptr || block_->capacity < total ||
      (tight && block_->capacity > 4 * total + 256)) {
    void* memory = ::operator new(sizeof(Header) + total);
    block_.reset(new (memory) Header{});
    block_->capacity = static_cast<std::uint32_t>(total);
  }
  Header& h = *block_;
  char* text = reinterpret_cast<char*>(&h + 1);
  std::uint32_t end = 0;
  for (int i = 0; i < kFieldCount; ++i) {
    if (!fields[i]->empty()) std::memcpy(text + end, fields[i]->data(), fields[i]->size());
    end += static_cast<std::uint32_t>(fields[i]->size());
    h.end[i] = end;
  }
  h.timestamp_us = r.timestamp_us;
  h.arrival_us = r.arrival_us;
  h.facility = static_cast<std::int16_t>(r.facility);
  h.severity = static_cast<std::int16_t>(r.severity);
  h.flavor = r.flavor;
  h.outcome = r.outcome;
  h.has_timestamp = r.has_timestamp;
  h.scope_salt = r.scope_salt;
}

void SampleRecord::CopyTo(LogRecord& out) const {
  out.raw.clear();
  if (block_ == nullptr) {
    out.Clear();
    return;
  }
  const Header& h = *block_;
  out.flavor = h.flavor;
  out.outcome = h.outcome;
  out.facility = h.facility;
  out.severity = h.severity;
  out.has_timestamp = h.has_timestamp;
  out.timestamp_us = h.timestamp_us;
  out.arrival_us = h.arrival_us;
  out.hostname = Field(kHostname);
  out.app_name = Field(kAppName);
  out.tag = Field(kTag);
  out.procid = Field(kProcId);
  out.msgid = Field(kMsgId);
  out.structured_data = Field(kStructuredData);
  out.message = Field(kMessage);
  out.json_fields = Field(kJsonFields);
  out.scope_salt = h.scope_salt;
}

std::string_view SampleRecord::Field(FieldIndex f) const {
  if (block_ == nullptr) return {};
  const std::uint32_t begin = f == 0 ? 0 : block_->end[f - 1];
  return {Text() + begin, block_->end[f] - begin};
}

TimeUs SampleRecord::EventTime() const {
  if (block_ == nullptr) return 0;
  return block_->has_timestamp ? block_->timestamp_us : block_->arrival_us;
}

std::size_t SampleRecord::MemoryUsage() const {
  return block_ == nullptr ? 0 : sizeof(Header) + block_->capacity;
}

std::size_t SampleRecord::TextBytes() const {
  return block_ == nullptr ? 0 : block_->end[kFieldCount - 1];
}

}  // namespace logfold
