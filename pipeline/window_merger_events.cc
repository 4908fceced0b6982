// WindowMerger: group templates, the events it emits (first, annotate, summary) and the
// per-slot value statistics summaries carry.
#include "pipeline/window_merger_impl.h"

namespace logfold {

// The group's template: a view of its first message while no position has a flag, else
// built into scratch unless the previous event's was this group's and nothing changed it
// since (Join and Open forget it). Valid until the next call or the group's close.
std::string_view WindowMerger::Impl::Template(std::uint32_t slot) {
  if (template_slot == slot) return template_text;
  const Group& g = groups[slot];
  // A logger written after the message is header (MessageHeader::tail): no part of it.
  std::string_view m = g.first.message();
  m.remove_suffix(std::min<std::size_t>(g.tail, m.size()));
  // What precedes the first token of the body (the space rsyslog's forwarding template puts
  // before MSG, a BOM) is no part of the template.
  std::size_t pos = g.body;
  while (pos < m.size()) {
    if (m[pos] == ' ' || m[pos] == '\t') {
      ++pos;
    } else if (m.substr(pos, 3) == "\xEF\xBB\xBF") {
      pos += 3;
    } else {
      break;
    }
  }
  if (g.tokens.size() > 0) pos = std::min<std::size_t>(pos, g.tokens.token(0).offset);
  // A template without flags (every group as it opens: a flood of unique lines emits one
  // first event a line) is the message from `pos` on: no copy.
  if (!g.tokens.AnyFlags()) {
    return m.substr(pos);
  }
  template_text.clear();
  for (std::size_t i = 0; i < g.tokens.size(); ++i) {
    const Token t = g.tokens.token(i);
    const std::uint8_t flags = g.tokens.flags(i);
    template_text.append(m.substr(pos, t.offset - pos));
    if (flags & (kWild | kVaried)) {
      template_text += "<*>";
    } else {
      template_text.append(m.substr(t.offset, t.length));
    }
    if (flags & kGapAfter) template_text += " <*>";
    pos = t.offset + t.length;
  }
  template_text.append(m.substr(pos));
  template_slot = slot;
  return template_text;
}

void WindowMerger::Impl::EmitLine(EventKind kind, std::uint32_t slot, const LogRecord& r,
                                  std::uint64_t fp, EventSink& sink) {
  const Group& g = groups[slot];
  Event e;
  e.kind = kind;
  e.group_id = g.id;
  e.fingerprint = kind == EventKind::kAnnotate ? g.fingerprint : fp;
  e.record = &r;
  e.template_text = Template(slot);
  e.count_total = g.count_total;
  e.first_seen_us = g.first_seen;
  e.last_seen_us = g.last_seen;
  e.max_distance = g.max_distance;
  e.level = line.header.level;
  e.logger = line.header.logger;
  e.origin = r.origin;
  if (kind == EventKind::kAnnotate) {
    ++stats.events_annotate;
  } else {
    ++stats.events_first;
  }
  sink.OnEvent(e);
}

void WindowMerger::Impl::EmitSummary(std::uint32_t slot, SummaryReason reason, bool closing,
                                     EventSink& sink) {
  Group& g = groups[slot];
  g.first.CopyTo(first_record);
  g.last.CopyTo(last_record);
  Event e;
  e.kind = EventKind::kSummary;
  e.reason = reason;
  e.closed = closing;
  e.group_id = g.id;
  e.fingerprint = g.fingerprint;
  e.record = &first_record;
  e.last_record = &last_record;
  e.template_text = Template(slot);
  e.count = g.count_since;
  e.count_total = g.count_total;
  e.first_seen_us = g.first_seen;
  e.last_seen_us = g.last_seen;
  e.max_distance = g.max_distance;
  if (g.extras != nullptr) e.origin = g.extras->since_origin;
  // The first line's header again, as its scope decides it now; if the scope's learned shape
  // has changed since the group opened, and the header with it, the level and logger are not
  // known here.
  if (g.body != 0) {
    MessageHeader h = ParseMessageHeader(first_record.message);  // most groups: the grammar's
    if (h.body != g.body && SkipPeerEndpoint(first_record.message, h.body) != g.body) {
      h = headers.Peek(ScopeHash(first_record), first_record.message);
    }
    if (h.body == g.body || SkipPeerEndpoint(first_record.message, h.body) == g.body) {
      e.level = h.level;
      e.logger = h.logger;
    }
  }
  if (g.extras != nullptr) {
    e.hosts = g.extras->hosts;
    e.hosts_truncated = g.hosts_truncated;
    e.slots = SlotSummaries(*g.extras);
    if (g.extras->peer != nullptr) e.peer = &PeerSummary(*g.extras->peer);
  }
  ++stats.events_summary;
  sink.OnEvent(e);
  g.count_since = 0;
}

// The group's slot statistics for an event, in reused scratch.
std::span<const SlotSummary> WindowMerger::Impl::SlotSummaries(const GroupExtras& x) {
  slot_values.resize(x.slots.size() * SlotStats::kTop);
  slot_summaries.clear();
  std::array<SlotStats::Value, SlotStats::kTop> sorted;
  for (std::size_t i = 0; i < x.slots.size(); ++i) {
    const SlotStats& st = x.slots[i];
    const std::size_t n = st.Sorted(sorted);
    SlotValueCount* values = slot_values.data() + i * SlotStats::kTop;
    for (std::size_t k = 0; k < n; ++k) values[k] = {sorted[k].text, sorted[k].count};
    slot_summaries.push_back({st.position(), st.Distinct(), st.total(), {values, n}});
  }
  return slot_summaries;
}

// The group's peer statistics for a summary, in reused scratch.
const SlotSummary& WindowMerger::Impl::PeerSummary(const SlotStats& st) {
  std::array<SlotStats::Value, SlotStats::kTop> sorted;
  const std::size_t n = st.Sorted(sorted);
  for (std::size_t k = 0; k < n; ++k) peer_values[k] = {sorted[k].text, sorted[k].count};
  peer_summary = {0, st.Distinct(), st.total(), {peer_values.data(), n}};
  return peer_summary;
}

// Starts loading the cache lines NoteSlots reads first (each slot's position and hashes).
void WindowMerger::Impl::PrefetchSlots(const Group& g) const {
  if (g.extras == nullptr || opt.annotate) return;
  for (const SlotStats& st : g.extras->slots) {
    __builtin_prefetch(&st);
    __builtin_prefetch(reinterpret_cast<const char*>(&st) + 64);
  }
}

// Counts the line's value at each variable position of group `slot` (same token count only:
// then line token i is group position i). A slot starts when its position first varies,
// with the lines before, which all had the first line's text there. A value new to an
// enumeration-like slot (SlotStats::EnumerationLike: the first 500 after 16 lines of 200 and
// 404) is emitted at once as a new_value event, so folding hides no new kind of outcome.
void WindowMerger::Impl::NoteSlots(std::uint32_t slot, const LogRecord& r, EventSink& sink) {
  Group& g = groups[slot];
  if (opt.annotate || line.tokens.size() != g.tokens.size()) return;
  const std::string_view message = r.message;
  const std::string_view gmsg = g.first.message();
  GroupExtras* x = g.extras.get();
  std::uint8_t news = 0;  // bit k: slot k took a new value of an enumeration-like slot
  std::size_t k = 0;      // x->slots is sorted by position
  // In a register: the stores below made the compiler reload and divide it for every token.
  const std::size_t n = line.tokens.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (!(g.tokens.flags(i) & kVaried)) continue;
    if (x == nullptr) x = &Extras(g);
    while (k < x->slots.size() && x->slots[k].position() < i) ++k;
    if (k == x->slots.size() || x->slots[k].position() != i) {
      if (x->slots.size() >= kMaxSlots) continue;
      x->slots.insert(x->slots.begin() + static_cast<std::ptrdiff_t>(k),
                      SlotStats(static_cast<std::uint32_t>(i)));
      news = static_cast<std::uint8_t>((news & ((1u << k) - 1)) | ((news >> k) << (k + 1)));
      const Token gt = g.tokens.token(i);
      const std::string_view first = gmsg.substr(gt.offset, gt.length);
      x->slots[k].Add(XXH3_64bits(first.data(), first.size()), first, g.count_total - 1);
    }
    const std::string_view v = message.substr(line.tokens[i].offset, line.tokens[i].length);
    SlotStats& st = x->slots[k];
    const std::uint64_t hash = XXH3_64bits(v.data(), v.size());
    if (st.EnumerationLike() && !st.Keeps(hash)) news |= static_cast<std::uint8_t>(1u << k);
    st.Add(hash, v);
  }
  if (news != 0) EmitNewValue(slot, r, news, sink);
}

// The new_value notice: the line, its group's template, and the slots that took a new value.
void WindowMerger::Impl::EmitNewValue(std::uint32_t slot, const LogRecord& r, std::uint8_t news,
                                      EventSink& sink) {
  const Group& g = groups[slot];
  const std::span<const SlotSummary> all = SlotSummaries(*g.extras);
  // Keep the slots that took a new value, in place (the scratch is rebuilt for each event).
  std::size_t kept = 0;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (news & (1u << k)) slot_summaries[kept++] = all[k];
  }
  slot_summaries.resize(kept);
  Event e;
  e.kind = EventKind::kNewValue;
  e.group_id = g.id;
  e.fingerprint = g.fingerprint;
  e.record = &r;
  e.template_text = Template(slot);
  e.count_total = g.count_total;
  e.first_seen_us = g.first_seen;
  e.last_seen_us = g.last_seen;
  e.max_distance = g.max_distance;
  e.level = line.header.level;
  e.logger = line.header.logger;
  e.slots = slot_summaries;
  e.origin = r.origin;
  ++stats.events_new_value;
  sink.OnEvent(e);
}

// Counts the line's peer endpoint (PreparedLine::peer) in the group's peer statistics, which
// the group's first taken line makes, with the first line's endpoint if it had one.
void WindowMerger::Impl::NotePeer(Group& g, std::string_view message) {
  if (opt.annotate) return;
  GroupExtras& x = Extras(g);
  if (x.peer == nullptr) {
    if (line.peer_size == 0 && !g.peer) return;
    x.peer = std::make_unique<SlotStats>();
    if (const std::string_view first = g.first.message();
        g.peer && g.body > 0 && g.body <= first.size()) {
      // The first line's endpoint is the word before the blank ahead of its message proper.
      std::size_t p = g.body - 1u;
      while (p > 0 && first[p - 1] != ' ' && first[p - 1] != '\t') --p;
      const std::string_view v = first.substr(p, g.body - 1u - p);
      x.peer->Add(XXH3_64bits(v.data(), v.size()), v);
    }
  }
  if (line.peer_size != 0) {
    const std::string_view v = message.substr(line.peer, line.peer_size);
    x.peer->Add(XXH3_64bits(v.data(), v.size()), v);
  }
}

void WindowMerger::Impl::NoteHost(Group& g, const LogRecord& r) {
  if (!track_hosts || r.hostname.empty()) return;
  GroupExtras& x = Extras(g);
  for (const std::string& h : x.hosts) {
    if (h == r.hostname) return;
  }
  if (x.hosts.size() < opt.max_summary_hosts) {
    x.hosts.push_back(r.hostname);
  } else {
    g.hosts_truncated = true;
  }
}

// --- group life -------------------------------------------------------------------------
// Rare (a position turned wild): the token array is expanded into scratch for it.
std::uint64_t WindowMerger::Impl::GroupFingerprint(const Group& g) {
  const std::size_t n = g.tokens.size();
  skip.resize(n);
  group_tokens.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    skip[i] = g.tokens.flags(i) & kWild;
    group_tokens[i] = g.tokens.token(i);
  }
  return fingerprinter.FingerprintFromHashes(group_tokens, g.tokens.hashes(), skip);
}

}  // namespace logfold
