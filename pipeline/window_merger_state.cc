// WindowMerger: checkpoints of open groups and of the stream-learned evidence (daemon/state
// saves them; a restart imports them back). Export walks the groups oldest activity first;
// Import rebuilds one group's entries.
#include <functional>

#include "pipeline/window_merger_impl.h"

namespace logfold {

void WindowMerger::Impl::ExportGroups(const std::function<void(const GroupState&)>& visit) {
  for (std::uint32_t slot = lru.head; slot != kNil; slot = groups[slot].lru_next) {
    const Group& g = groups[slot];
    g.first.CopyTo(first_record);
    if (!g.last.empty()) g.last.CopyTo(last_record);
    export_flags.resize(g.tokens.size());
    for (std::size_t i = 0; i < g.tokens.size(); ++i) export_flags[i] = g.tokens.flags(i);
    GroupState s;
    s.id = g.id;
    s.scope = g.scope;
    s.count_total = g.count_total;
    s.count_since = g.count_since;
    s.first_seen_us = g.first_seen;
    s.last_seen_us = g.last_seen;
    s.last_activity_us = g.last_activity;
    s.hold_start_us = g.hold_start;
    s.max_distance = g.max_distance;
    s.token_flags = export_flags;
    s.first = &first_record;
    s.last = g.last.empty() ? nullptr : &last_record;
    if (g.extras != nullptr) {
      s.since_origin = g.extras->since_origin;
      s.hosts = g.extras->hosts;
      s.hosts_truncated = g.hosts_truncated;
      s.slots = g.extras->slots;
      s.peer = g.extras->peer.get();
    }
    visit(s);
  }
}

// Rebuilds a group's slot and index entries from its state. Activity times are clamped to
// the merger's clock so that the LRU and hold lists stay sorted.
void WindowMerger::Impl::ImportGroup(const GroupState& s, bool resume, EventSink& sink) {
  if (s.first == nullptr) return;
  if (live >= opt.max_groups && lru.head != kNil) Close(lru.head, SummaryReason::kEvicted, sink);
  // As Add prepares a line: after its header, lists and quoted texts collapsed.
  PrepareLine(tokenizer, matcher, opt.infer_header, s.first->message, line);
  const std::vector<Token>& tokens = line.tokens;
  const bool flags_fit = s.token_flags.size() == tokens.size();
  const std::uint32_t slot = NewSlot();
  Group& g = groups[slot];
  g.live = true;
  g.id = s.id;
  g.scope = s.scope;
  g.first.Assign(*s.first);
  g.body = static_cast<std::uint16_t>(line.header.body);
  g.tail = line.header.tail;
  if (s.last != nullptr) {
    g.last.Assign(*s.last);
  } else {
    g.last.Reset();
  }
  g.tokens.Assign(line.tokens, line.hashes);
  g.dns_known = false;
  g.peer = line.peer_size != 0;
  g.hosts_truncated = s.hosts_truncated;
  constexpr std::uint8_t kAllFlags = kWild | kVaried | kGapAfter;
  if (flags_fit) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      g.tokens.AddFlags(i, s.token_flags[i] & kAllFlags);
    }
  }
  SetScanDigest(slot);
  if (template_slot == slot) template_slot = kNil;
  g.fingerprint = GroupFingerprint(g);
  g.count_total = std::max<std::uint64_t>(s.count_total, 1);
  g.count_since = s.count_since;
  g.first_seen = s.first_seen_us;
  g.last_seen = s.last_seen_us;
  const TimeUs newest = lru.tail == kNil ? INT64_MIN : groups[lru.tail].last_activity;
  g.last_activity = std::max(s.last_activity_us, newest);
  const TimeUs newest_hold = hold.tail == kNil ? INT64_MIN : groups[hold.tail].hold_start;
  g.hold_start = std::max(s.hold_start_us, newest_hold);
  g.max_distance = s.max_distance;
  g.extras.reset();
  if (s.since_origin.stream != 0) Extras(g).since_origin = s.since_origin;
  if (!s.hosts.empty() || s.hosts_truncated) {
    GroupExtras& x = Extras(g);
    x.hosts.assign(s.hosts.begin(), s.hosts.end());
  }
  if (!s.slots.empty() && flags_fit) {
    // Slots by ascending position within the template, as NoteSlots keeps them.
    std::vector<SlotStats>& slots = Extras(g).slots;
    for (const SlotStats& st : s.slots) {
      if (slots.size() >= kMaxSlots || st.position() >= tokens.size()) break;
      if (!slots.empty() && slots.back().position() >= st.position()) break;
      slots.push_back(st);
    }
  }
  if (s.peer != nullptr) Extras(g).peer = std::make_unique<SlotStats>(*s.peer);
  g.indexed = true;
  index.Insert(g.scope, g.fingerprint, slot);
  g.shape = ShapeKey(g.scope);
  exact.Set(g.shape, slot);
  AppendToBucket(BucketKey(g.scope, tokens.size()), slot);
  Append<&Group::lru_prev, &Group::lru_next>(lru, slot);
  Append<&Group::hold_prev, &Group::hold_next>(hold, slot);
  ++live;
  if (!resume || !flags_fit) Close(slot, SummaryReason::kRecovered, sink);
}

void WindowMerger::ExportGroups(const std::function<void(const GroupState&)>& visit) {
  impl_->ExportGroups(visit);
}

void WindowMerger::ImportGroup(const GroupState& group, bool resume, EventSink& sink) {
  impl_->ImportGroup(group, resume, sink);
}

void WindowMerger::ExportLearned(LearnedEvidence& out) const {
  out.Clear();
  out.variable_after_values = static_cast<std::uint32_t>(impl_->opt.variable_after_values);
  impl_->siblings.Export(out.siblings);
  impl_->value_words.Export(out.value_words);
}

void WindowMerger::ImportLearned(const LearnedEvidence& evidence) {
  Impl& m = *impl_;
  if (evidence.variable_after_values != m.opt.variable_after_values) return;
  for (const SiblingTable::Entry& e : evidence.siblings) m.siblings.Restore(e);
  for (const std::uint64_t key : evidence.value_words) {
    if (key != 0) m.value_words.Note(key);
  }
}

std::uint64_t WindowMerger::id_counter() const { return impl_->next_id; }
void WindowMerger::RestoreIdCounter(std::uint64_t counter) {
  impl_->next_id = std::max(impl_->next_id, counter);
}

}  // namespace logfold
