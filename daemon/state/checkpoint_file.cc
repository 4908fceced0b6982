// Checkpoint file format: writer and checked reader (see checkpoint_file.h for the layout).
#include "daemon/state/checkpoint_file.h"

#include <array>
#include <cstring>

#include "daemon/state/binary_codec.h"

namespace logfold {
namespace {

using namespace state_codec;

constexpr std::string_view kMagic = "LFCK";
constexpr std::size_t kPrefix = 4 + 4 + 8 + 4;  // magic, version, body length, CRC
// No real file comes near this: a length beyond it is corruption, not a reason to allocate.
constexpr std::uint64_t kMaxBody = std::uint64_t{1} << 36;

// Top-level fields.
enum : std::uint16_t {
  kWorker = 1,
  kWorkers = 2,
  kSettingsKey = 3,
  kIdCounter = 4,
  kWrittenUs = 5,
  kJournalGeneration = 6,
  kJournalWatermark = 7,
  kJournalDone = 8,  // repeated
  kSummaryEpoch = 9,
  kGroup = 16,    // repeated, nested
  kLearned = 17,  // nested: the merger's LearnedEvidence
};
// Learned-evidence fields.
enum : std::uint16_t {
  kLearnedThreshold = 1,  // variable_after_values
  // Repeated, least recently used first: key u64, anchor value u64, sightings u16, distinct
  // u8, variable u8, then `distinct` values u64.
  kLearnedSibling = 2,
  kLearnedValueWords = 3,  // keys, u64 each
};
// Group fields.
enum : std::uint16_t {
  kId = 1,
  kScope = 2,
  kCountTotal = 3,
  kCountSince = 4,
  kFirstSeen = 5,
  kLastSeen = 6,
  kLastActivity = 7,
  kHoldStart = 8,
  kMaxDistance = 9,
  kTokenFlags = 10,
  kFirst = 11,  // nested record
  kLast = 12,   // nested record
  kHost = 13,   // repeated
  kHostsTruncated = 14,
  kSlot = 15,         // repeated, nested: one variable slot's statistics (SlotStats)
  kSinceOrigin = 16,  // stream u64, position u64; only when set (lines from Kafka)
  kPeer = 17,         // nested as kSlot: the peer endpoints' statistics; only when held
};
// Slot fields.
enum : std::uint16_t {
  kSlotPosition = 1,
  kSlotTotal = 2,
  kSlotBits = 3,   // 4 x u64
  kSlotValue = 4,  // repeated: hash u64, count u64, then the (truncated) text
};
// Sample record fields.
enum : std::uint16_t {
  kTimestamp = 1,
  kArrival = 2,
  kHasTimestamp = 3,
  kFacility = 4,
  kSeverity = 5,
  kFlavor = 6,
  kOutcome = 7,
  kHostname = 8,
  kAppName = 9,
  kProcId = 10,
  kMsgId = 11,
  kStructuredData = 12,
  kMessage = 13,
  kJsonFields = 14,
  kScopeSalt = 15,
  kTag = 16,
};

void PutRecord(std::string& out, std::uint16_t tag, const LogRecord& r) {
  const std::size_t at = OpenField(out, tag);
  PutIntField(out, kTimestamp, static_cast<std::uint64_t>(r.timestamp_us));
  PutIntField(out, kArrival, static_cast<std::uint64_t>(r.arrival_us));
  PutIntField(out, kHasTimestamp, r.has_timestamp);
  PutIntField(out, kFacility, static_cast<std::uint64_t>(static_cast<std::int64_t>(r.facility)));
  PutIntField(out, kSeverity, static_cast<std::uint64_t>(static_cast<std::int64_t>(r.severity)));
  PutIntField(out, kFlavor, static_cast<std::uint64_t>(r.flavor));
  PutIntField(out, kOutcome, static_cast<std::uint64_t>(r.outcome));
  PutField(out, kHostname, r.hostname);
  PutField(out, kAppName, r.app_name);
  if (!r.tag.empty()) PutField(out, kTag, r.tag);
  PutField(out, kProcId, r.procid);
  PutField(out, kMsgId, r.msgid);
  PutField(out, kStructuredData, r.structured_data);
  PutField(out, kMessage, r.message);
  PutField(out, kJsonFields, r.json_fields);
  if (r.scope_salt != 0) PutIntField(out, kScopeSalt, r.scope_salt);
  CloseField(out, at);
}

std::string ParseRecord(std::string_view bytes, LogRecord& r) {
  r.Clear();
  Reader in(bytes);
  while (!in.empty()) {
    std::uint16_t tag;
    std::string_view v;
    if (!in.GetField(tag, v)) return "truncated field in a sample record";
    std::uint64_t n = 0;
    const bool is_int = tag >= kTimestamp && tag <= kOutcome;
    if (is_int && !IntValue(v, n)) return "sample record integer field of the wrong size";
    const auto i = static_cast<std::int64_t>(n);
    switch (tag) {
      case kTimestamp:
        r.timestamp_us = i;
        break;
      case kArrival:
        r.arrival_us = i;
        break;
      case kHasTimestamp:
        r.has_timestamp = n != 0;
        break;
      case kFacility:
        if (i < -1 || i > 23) return "facility out of range";
        r.facility = static_cast<int>(i);
        break;
      case kSeverity:
        if (i < -1 || i > 7) return "severity out of range";
        r.severity = static_cast<int>(i);
        break;
      case kFlavor:
        if (n > static_cast<std::uint64_t>(SyslogFlavor::kJson)) return "unknown syslog flavor";
        r.flavor = static_cast<SyslogFlavor>(n);
        break;
      case kOutcome:
        if (n >= static_cast<std::uint64_t>(ParseOutcome::kCount_)) return "unknown parse outcome";
        r.outcome = static_cast<ParseOutcome>(n);
        break;
      case kHostname:
        r.hostname.assign(v);
        break;
      case kAppName:
        r.app_name.assign(v);
        break;
      case kTag:
        r.tag.assign(v);
        break;
      case kProcId:
        r.procid.assign(v);
        break;
      case kMsgId:
        r.msgid.assign(v);
        break;
      case kStructuredData:
        r.structured_data.assign(v);
        break;
      case kMessage:
        r.message.assign(v);
        break;
      case kJsonFields:
        r.json_fields.assign(v);
        break;
      case kScopeSalt:
        if (!IntValue(v, n) || n > UINT32_MAX) return "scope salt of the wrong size";
        r.scope_salt = static_cast<std::uint32_t>(n);
        break;
      default:
        break;  // a later version's field
    }
  }
  return "";
}

void PutSlot(std::string& out, const SlotStats& st, std::uint16_t tag = kSlot) {
  const std::size_t at = OpenField(out, tag);
  PutIntField(out, kSlotPosition, st.position());
  PutIntField(out, kSlotTotal, st.total());
  std::string bits;
  for (std::uint64_t w : st.bits()) PutU64(bits, w);
  PutField(out, kSlotBits, bits);
  for (std::size_t i = 0; i < st.kept(); ++i) {
    const SlotStats::KeptValue v = st.kept_value(i);
    const std::size_t value_at = OpenField(out, kSlotValue);
    PutU64(out, v.hash);
    PutU64(out, v.count);
    out.append(v.text);
    CloseField(out, value_at);
  }
  CloseField(out, at);
}

std::string ParseSlot(std::string_view bytes, SlotStats& st) {
  Reader in(bytes);
  std::uint64_t position = 0, total = 0;
  std::array<std::uint64_t, 4> bits{};
  std::array<SlotStats::KeptValue, SlotStats::kTop> values{};
  std::size_t n = 0;
  while (!in.empty()) {
    std::uint16_t tag;
    std::string_view v;
    if (!in.GetField(tag, v)) return "truncated field in a slot";
    switch (tag) {
      case kSlotPosition:
        if (!IntValue(v, position) || position > UINT32_MAX) return "bad slot position";
        break;
      case kSlotTotal:
        if (!IntValue(v, total)) return "bad slot total";
        break;
      case kSlotBits: {
        Reader r(v);
        if (v.size() != 32) return "bad slot bits";
        for (std::uint64_t& w : bits) r.GetU64(w);
        break;
      }
      case kSlotValue: {
        if (n == SlotStats::kTop) return "too many slot values";
        Reader r(v);
        SlotStats::KeptValue& x = values[n++];
        if (!r.GetU64(x.hash) || !r.GetU64(x.count)) return "truncated slot value";
        // A view into `bytes`: Restore copies it before ParseSlot returns.
        if (!r.GetBytes(r.size(), x.text) || x.text.size() > SlotStats::kValueBytes) {
          return "slot value too long";
        }
        break;
      }
      default:
        break;  // a later version's field
    }
  }
  if (!SlotStats::Restore(static_cast<std::uint32_t>(position), total, bits, values.data(), n,
                          st)) {
    return "slot statistics inconsistent";
  }
  return "";
}

std::string ParseGroup(std::string_view bytes, SavedGroup& g) {
  Reader in(bytes);
  bool has_first = false;
  while (!in.empty()) {
    std::uint16_t tag;
    std::string_view v;
    if (!in.GetField(tag, v)) return "truncated field in a group";
    std::uint64_t n = 0;
    const bool is_int = (tag >= kId && tag <= kMaxDistance) || tag == kHostsTruncated;
    if (is_int && !IntValue(v, n)) return "group integer field of the wrong size";
    switch (tag) {
      case kId:
        g.id = n;
        break;
      case kScope:
        g.scope = n;
        break;
      case kCountTotal:
        g.count_total = n;
        break;
      case kCountSince:
        g.count_since = n;
        break;
      case kFirstSeen:
        g.first_seen_us = static_cast<TimeUs>(n);
        break;
      case kLastSeen:
        g.last_seen_us = static_cast<TimeUs>(n);
        break;
      case kLastActivity:
        g.last_activity_us = static_cast<TimeUs>(n);
        break;
      case kHoldStart:
        g.hold_start_us = static_cast<TimeUs>(n);
        break;
      case kMaxDistance:
        if (n > 64) return "max_distance out of range";
        g.max_distance = static_cast<std::int32_t>(n);
        break;
      case kTokenFlags:
        g.token_flags.assign(v.begin(), v.end());
        break;
      case kFirst:
        if (std::string e = ParseRecord(v, g.first); !e.empty()) return e;
        has_first = true;
        break;
      case kLast:
        if (std::string e = ParseRecord(v, g.last); !e.empty()) return e;
        g.has_last = true;
        break;
      case kHost:
        g.hosts.emplace_back(v);
        break;
      case kHostsTruncated:
        g.hosts_truncated = n != 0;
        break;
      case kSinceOrigin: {
        Reader r(v);
        std::uint64_t position = 0;
        if (v.size() != 16 || !r.GetU64(g.since_origin.stream) || !r.GetU64(position) ||
            g.since_origin.stream == 0) {
          return "bad line origin";
        }
        g.since_origin.position = static_cast<std::int64_t>(position);
        break;
      }
      case kSlot: {
        SlotStats st;
        if (std::string e = ParseSlot(v, st); !e.empty()) return e;
        g.slots.push_back(st);
        break;
      }
      case kPeer:
        if (std::string e = ParseSlot(v, g.peer); !e.empty()) return e;
        g.has_peer = true;
        break;
      default:
        break;
    }
  }
  if (!has_first) return "group without its first line";
  if (g.count_since >= g.count_total && g.count_total > 0) return "group counts inconsistent";
  return "";
}

std::string ParseLearned(std::string_view bytes, LearnedEvidence& out) {
  out = LearnedEvidence{};
  Reader in(bytes);
  while (!in.empty()) {
    std::uint16_t tag;
    std::string_view v;
    if (!in.GetField(tag, v)) return "truncated field in the learned evidence";
    switch (tag) {
      case kLearnedThreshold: {
        std::uint64_t n = 0;
        if (!IntValue(v, n) || n > UINT32_MAX) return "bad learned threshold";
        out.variable_after_values = static_cast<std::uint32_t>(n);
        break;
      }
      case kLearnedSibling: {
        if (out.siblings.size() == SiblingTable::kEntries) return "too many learned siblings";
        Reader r(v);
        SiblingTable::Entry e;
        std::uint16_t sightings = 0;
        std::string_view flags;
        if (!r.GetU64(e.key) || !r.GetU64(e.anchor_value) || !r.GetU16(sightings) ||
            !r.GetBytes(2, flags)) {
          return "truncated learned sibling";
        }
        e.sightings = sightings;
        e.distinct = static_cast<std::uint8_t>(flags[0]);
        e.variable = flags[1] != 0;
        if (e.key == 0 || e.distinct > SiblingTable::kMaxValues ||
            static_cast<unsigned char>(flags[1]) > 1 || r.size() != 8u * e.distinct) {
          return "malformed learned sibling";
        }
        for (std::size_t k = 0; k < e.distinct; ++k) r.GetU64(e.values[k]);
        out.siblings.push_back(e);
        break;
      }
      case kLearnedValueWords: {
        if (v.size() % 8 != 0 || v.size() / 8 > ValueWords::kEntries) {
          return "malformed learned value words";
        }
        Reader r(v);
        std::uint64_t key = 0;
        while (r.GetU64(key)) out.value_words.push_back(key);
        break;
      }
      default:
        break;  // a later version's field
    }
  }
  return "";
}

}  // namespace

void SavedGroup::Reset() {
  id = scope = count_total = count_since = 0;
  since_origin = {};
  first_seen_us = last_seen_us = last_activity_us = hold_start_us = 0;
  max_distance = 0;
  token_flags.clear();
  first.Clear();
  last.Clear();
  has_last = false;
  hosts.clear();
  hosts_truncated = false;
  slots.clear();
  has_peer = false;
}

GroupState SavedGroup::View() const {
  GroupState s;
  s.id = id;
  s.scope = scope;
  s.count_total = count_total;
  s.count_since = count_since;
  s.since_origin = since_origin;
  s.first_seen_us = first_seen_us;
  s.last_seen_us = last_seen_us;
  s.last_activity_us = last_activity_us;
  s.hold_start_us = hold_start_us;
  s.max_distance = max_distance;
  s.token_flags = token_flags;
  s.first = &first;
  s.last = has_last ? &last : nullptr;
  s.hosts = hosts;
  s.hosts_truncated = hosts_truncated;
  s.slots = slots;
  s.peer = has_peer ? &peer : nullptr;
  return s;
}

SavedGroup SavedGroup::From(const GroupState& s) {
  SavedGroup g;
  g.id = s.id;
  g.scope = s.scope;
  g.count_total = s.count_total;
  g.count_since = s.count_since;
  g.since_origin = s.since_origin;
  g.first_seen_us = s.first_seen_us;
  g.last_seen_us = s.last_seen_us;
  g.last_activity_us = s.last_activity_us;
  g.hold_start_us = s.hold_start_us;
  g.max_distance = s.max_distance;
  g.token_flags.assign(s.token_flags.begin(), s.token_flags.end());
  if (s.first != nullptr) g.first = *s.first;
  g.has_last = s.last != nullptr;
  if (g.has_last) g.last = *s.last;
  g.hosts.assign(s.hosts.begin(), s.hosts.end());
  g.hosts_truncated = s.hosts_truncated;
  g.slots.assign(s.slots.begin(), s.slots.end());
  g.has_peer = s.peer != nullptr;
  if (g.has_peer) g.peer = *s.peer;
  return g;
}

void CheckpointWriter::Begin(const CheckpointHeader& h, std::string& out) {
  out_ = &out;
  out.clear();
  out.append(kMagic);
  PutU32(out, kCheckpointVersion);
  PutU64(out, 0);  // body length
  PutU32(out, 0);  // CRC
  PutIntField(out, kWorker, h.worker);
  PutIntField(out, kWorkers, h.workers);
  PutIntField(out, kSettingsKey, h.settings_key);
  PutIntField(out, kIdCounter, h.id_counter);
  PutIntField(out, kWrittenUs, static_cast<std::uint64_t>(h.written_us));
  PutIntField(out, kJournalGeneration, h.journal_generation);
  PutIntField(out, kJournalWatermark, h.journal_watermark);
  for (std::uint64_t seq : h.journal_done) PutIntField(out, kJournalDone, seq);
  PutIntField(out, kSummaryEpoch, h.summary_epoch);
}

void CheckpointWriter::AddGroup(const GroupState& g) {
  std::string& out = *out_;
  const std::size_t at = OpenField(out, kGroup);
  PutIntField(out, kId, g.id);
  PutIntField(out, kScope, g.scope);
  PutIntField(out, kCountTotal, g.count_total);
  PutIntField(out, kCountSince, g.count_since);
  PutIntField(out, kFirstSeen, static_cast<std::uint64_t>(g.first_seen_us));
  PutIntField(out, kLastSeen, static_cast<std::uint64_t>(g.last_seen_us));
  PutIntField(out, kLastActivity, static_cast<std::uint64_t>(g.last_activity_us));
  PutIntField(out, kHoldStart, static_cast<std::uint64_t>(g.hold_start_us));
  PutIntField(out, kMaxDistance, static_cast<std::uint64_t>(g.max_distance));
  PutField(out, kTokenFlags,
           {reinterpret_cast<const char*>(g.token_flags.data()), g.token_flags.size()});
  if (g.first != nullptr) PutRecord(out, kFirst, *g.first);
  if (g.last != nullptr) PutRecord(out, kLast, *g.last);
  for (const std::string& h : g.hosts) PutField(out, kHost, h);
  PutIntField(out, kHostsTruncated, g.hosts_truncated);
  for (const SlotStats& st : g.slots) PutSlot(out, st);
  if (g.peer != nullptr) PutSlot(out, *g.peer, kPeer);
  if (g.since_origin.stream != 0) {
    const std::size_t origin_at = OpenField(out, kSinceOrigin);
    PutU64(out, g.since_origin.stream);
    PutU64(out, static_cast<std::uint64_t>(g.since_origin.position));
    CloseField(out, origin_at);
  }
  CloseField(out, at);
}

void CheckpointWriter::AddLearned(const LearnedEvidence& learned) {
  std::string& out = *out_;
  const std::size_t at = OpenField(out, kLearned);
  PutIntField(out, kLearnedThreshold, learned.variable_after_values);
  for (const SiblingTable::Entry& e : learned.siblings) {
    const std::size_t entry_at = OpenField(out, kLearnedSibling);
    PutU64(out, e.key);
    PutU64(out, e.anchor_value);
    PutU16(out, e.sightings);
    out += static_cast<char>(e.distinct);
    out += static_cast<char>(e.variable ? 1 : 0);
    for (std::size_t k = 0; k < e.distinct && k < SiblingTable::kMaxValues; ++k) {
      PutU64(out, e.values[k]);
    }
    CloseField(out, entry_at);
  }
  const std::size_t words_at = OpenField(out, kLearnedValueWords);
  for (const std::uint64_t key : learned.value_words) PutU64(out, key);
  CloseField(out, words_at);
  CloseField(out, at);
}

void CheckpointWriter::Finish() {
  std::string& out = *out_;
  const std::string_view body = std::string_view(out).substr(kPrefix);
  SetU64(out, 8, body.size());
  SetU32(out, 16, Crc32(body));
}

void AppendSummaryRecord(const SummaryRecord& record, std::string& out) {
  const std::size_t at = out.size();
  PutU64(out, record.group_id);
  PutU64(out, record.count_total);
  PutU32(out, record.closed ? 1 : 0);
  PutU32(out, Crc32(std::string_view(out).substr(at, 20)));
}

std::string ParseSummaryLog(std::string_view bytes, std::vector<SummaryRecord>& out) {
  for (std::size_t at = 0; at < bytes.size(); at += kSummaryRecordSize) {
    if (bytes.size() - at < kSummaryRecordSize) return "incomplete last record";
    Reader in(bytes.substr(at, kSummaryRecordSize));
    SummaryRecord r;
    std::uint32_t closed = 0, crc = 0;
    in.GetU64(r.group_id);
    in.GetU64(r.count_total);
    in.GetU32(closed);
    in.GetU32(crc);
    if (crc != Crc32(bytes.substr(at, 20)) || closed > 1) {
      return "record checksum mismatch at byte " + std::to_string(at);
    }
    r.closed = closed != 0;
    out.push_back(r);
  }
  return "";
}

namespace {

// Checks the prefix and checksum, fills `h` from the header fields and `learned` (if not
// null) from the learned evidence, and hands the bytes of each group to on_group, which
// returns "" or why they are not a group.
template <typename OnGroup>
std::string ParseBody(std::string_view bytes, CheckpointHeader& h, LearnedEvidence* learned,
                      OnGroup&& on_group) {
  Reader prefix(bytes);
  std::string_view magic;
  std::uint32_t version = 0, crc = 0;
  std::uint64_t length = 0;
  if (!prefix.GetBytes(4, magic) || magic != kMagic) return "not a checkpoint (bad magic)";
  if (!prefix.GetU32(version) || !prefix.GetU64(length) || !prefix.GetU32(crc)) {
    return "truncated header";
  }
  if (version != kCheckpointVersion) return "unsupported version " + std::to_string(version);
  if (length > kMaxBody || length != prefix.size()) {
    return length > prefix.size() ? "truncated (body shorter than its length)"
                                  : "trailing bytes after the body";
  }
  const std::string_view body = bytes.substr(kPrefix);
  if (Crc32(body) != crc) return "checksum mismatch";
  Reader in(body);
  while (!in.empty()) {
    std::uint16_t tag;
    std::string_view v;
    if (!in.GetField(tag, v)) return "truncated field";
    if (tag == kGroup) {
      if (std::string e = on_group(v); !e.empty()) return e;
      continue;
    }
    if (tag == kLearned) {
      if (learned == nullptr) continue;
      if (std::string e = ParseLearned(v, *learned); !e.empty()) return e;
      continue;
    }
    std::uint64_t n = 0;
    const bool is_int = tag >= kWorker && tag <= kSummaryEpoch;
    if (is_int && !IntValue(v, n)) return "integer field of the wrong size";
    switch (tag) {
      case kWorker:
        if (n > UINT32_MAX) return "worker out of range";
        h.worker = static_cast<std::uint32_t>(n);
        break;
      case kWorkers:
        if (n == 0 || n > UINT32_MAX) return "workers out of range";
        h.workers = static_cast<std::uint32_t>(n);
        break;
      case kSettingsKey:
        h.settings_key = n;
        break;
      case kIdCounter:
        h.id_counter = n;
        break;
      case kWrittenUs:
        h.written_us = static_cast<TimeUs>(n);
        break;
      case kJournalGeneration:
        h.journal_generation = n;
        break;
      case kJournalWatermark:
        h.journal_watermark = n;
        break;
      case kJournalDone:
        h.journal_done.push_back(n);
        break;
      case kSummaryEpoch:
        h.summary_epoch = n;
        break;
      default:
        break;
    }
  }
  if (h.worker >= h.workers) return "worker index beyond the worker count";
  return "";
}

}  // namespace

std::string ParseCheckpoint(std::string_view bytes, Checkpoint& out) {
  out = Checkpoint{};
  return ParseBody(bytes, out.header, &out.learned,
                   [&](std::string_view v) { return ParseGroup(v, out.groups.emplace_back()); });
}

std::string ParseSingleGroupCheckpoint(std::string_view bytes, CheckpointHeader& header,
                                       SavedGroup& group) {
  header = CheckpointHeader{};
  int groups = 0;
  std::string error = ParseBody(bytes, header, nullptr, [&](std::string_view v) {
    if (groups++ > 0) return std::string("more than one group");
    group.Reset();
    return ParseGroup(v, group);
  });
  if (error.empty() && groups == 0) error = "no group";
  return error;
}

}  // namespace logfold
