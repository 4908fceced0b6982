// WindowMerger implementation. A line is settled, cheapest first, by: an exact lookup of its
// masked token shape; SimHash candidates from the GroupIndex; candidates of the same token
// count in its scope. Candidates are accepted only after structural confirmation.
#include "pipeline/window_merger.h"

// Inlined XXH3: per-token hashes of a few bytes are dominated by the call through the shared
// library's PLT otherwise. Same algorithm and results as libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <unordered_map>

#include "pipeline/group_index.h"
#include "pipeline/group_tokens.h"
#include "pipeline/message_header.h"
#include "pipeline/sample_record.h"
#include "pipeline/shape_map.h"
#include "pipeline/slot_stats.h"
#include "pipeline/template_match.h"

namespace logfold {
namespace {

constexpr std::uint32_t kNil = UINT32_MAX;
static_assert(kNil == ShapeMap::kAbsent);
constexpr std::size_t kMaxAliases = 16;     // shapes remembered per group for the fast path
constexpr std::size_t kMaxBucketScan = 64;  // same-length groups confirmed per line, newest first
constexpr std::size_t kMaxOtherLengthScan = 16;  // per nearby length
// Bucket-scan candidates per line over all lengths: bounds the cost of a line that matches
// nothing (a garbage flood opens a group a line and would touch 64 + 12 x 16 groups).
constexpr std::size_t kMaxScanPerLine = 16;
constexpr std::uint64_t kScopeSeed = 0x73636f7065ULL;

// Per-position flags of a group's template (pipeline/template_match.h).
constexpr std::uint8_t kWild = TemplateFlag::kWild;
constexpr std::uint8_t kVaried = TemplateFlag::kVaried;
constexpr std::uint8_t kGapAfter = TemplateFlag::kGapAfter;
constexpr std::size_t kMaxSlots = 8;  // variable slots with statistics per group

std::uint64_t Mix(std::uint64_t a, std::uint64_t b) {
  const std::uint64_t v[2] = {a, b};
  return XXH3_64bits(v, sizeof v);
}

template <typename Record>  // LogRecord or LogRecordView: the same fields, the same hash
std::uint64_t ScopeHashOf(const Record& r, const std::vector<ScopeField>& scope) {
  std::uint64_t h = kScopeSeed;
  for (ScopeField f : scope) {
    std::string_view v;
    std::int64_t n = 0;
    switch (f) {
      case ScopeField::kHost:
        v = r.hostname;
        break;
      case ScopeField::kApp:
        v = r.app_name;
        break;
      case ScopeField::kProcId:
        v = r.procid;
        break;
      case ScopeField::kMsgId:
        v = r.msgid;
        break;
      case ScopeField::kSeverity:
        n = r.severity;
        break;
      case ScopeField::kFacility:
        n = r.facility;
        break;
    }
    const auto tag = static_cast<std::uint64_t>(f);
    h = Mix(h, v.empty() ? static_cast<std::uint64_t>(n) + tag
                         : XXH3_64bits_withSeed(v.data(), v.size(), tag));
  }
  return h;
}

}  // namespace

std::uint64_t ScopeHash(const LogRecord& r, const std::vector<ScopeField>& scope) {
  return ScopeHashOf(r, scope);
}

std::uint64_t ScopeHash(const LogRecordView& r, const std::vector<ScopeField>& scope) {
  return ScopeHashOf(r, scope);
}

std::vector<std::string> MergerOptions::DefaultValueKeys() {
  return {"user",    "for",     "by",        "host",    "hostname", "named",   "name",
          "id",      "uid",     "gid",       "file",    "path",     "service", "unit",
          "session", "client",  "server",    "node",    "domain",   "account", "port",
          "process", "command", "interface", "device",  "table",    "queue",   "job",
          "task",    "key",     "group",     "address", "peer"};
}

std::vector<std::string> MergerOptions::DefaultProtectedWords() {
  return {
      // severities
      "emerg",
      "emergency",
      "alert",
      "crit",
      "critical",
      "err",
      "error",
      "errors",
      "warn",
      "warning",
      "warnings",
      "notice",
      "info",
      "debug",
      "trace",
      "fatal",
      "panic",
      "severe",
      // outcomes and states
      "success",
      "succeeded",
      "successful",
      "successfully",
      "fail",
      "failed",
      "failure",
      "failing",
      "start",
      "started",
      "starting",
      "stop",
      "stopped",
      "stopping",
      "restart",
      "restarted",
      "restarting",
      "active",
      "inactive",
      "enabled",
      "disabled",
      "enable",
      "disable",
      "up",
      "down",
      "open",
      "opened",
      "opening",
      "close",
      "closed",
      "closing",
      "accepted",
      "rejected",
      "denied",
      "allowed",
      "granted",
      "refused",
      "valid",
      "invalid",
      "true",
      "false",
      "yes",
      "no",
      "not",
      "never",
      "none",
      "on",
      "off",
      "online",
      "offline",
      "connected",
      "disconnected",
      "connecting",
      "ok",
      "ready",
      "begin",
      "end",
      "added",
      "removed",
      "created",
      "deleted",
      "login",
      "logout",
      "in",
      "out",
      "read",
      "write",
      "received",
      "sent",
      "paused",
      "resumed",
      "killed",
      "exited",
      "timeout",
      "lost",
      "found",
      "missing",
      "full",
      "empty",
      "high",
      "low",
      "entering",
      "leaving",
      "exiting",
      "completed",
      "aborted",
      "cancelled",
      "canceled",
      "blocked",
      "unblocked",
      "locked",
      "unlocked",
      // HTTP methods: GET and DELETE of one path are different requests
      "get",
      "post",
      "put",
      "delete",
      "patch",
      "head",
      "options",
  };
}

struct WindowMerger::Impl {
  // What a group rarely needs, allocated only when it does: the hosts seen (only when the
  // scope leaves out the host) and shape keys beyond the first.
  struct GroupExtras {
    std::vector<std::string> hosts;
    std::vector<std::uint64_t> aliases;  // more shape keys in `exact` that point here
    // Values of the template's variable slots, by token position (at most kMaxSlots), over
    // lines of the group's own token count (a line aligned across a gap is not counted).
    std::vector<SlotStats> slots;
    bool hosts_truncated = false;
  };

  // One open group (or a free slot). Kept small: everything of a group but its samples' text
  // and token arrays is here (~150 bytes). What Fits/Confirm read per candidate comes first:
  // the fingerprint, then `tokens` (one block: hashes, tokens, flags) and `first`'s message.
  struct Group {
    std::uint64_t fingerprint = 0;  // as indexed: wild positions left out
    std::uint64_t scope = 0;
    GroupTokens tokens;  // of the first line's message, with the template flags
    SampleRecord first;  // the group's first line
    std::uint64_t id = 0;
    std::uint64_t count_total = 0, count_since = 0;
    TimeUs first_seen = 0, last_seen = 0, last_activity = 0, hold_start = 0;
    std::uint64_t shape = 0;  // the first line's shape key in `exact`
    std::uint32_t lru_prev = kNil, lru_next = kNil, hold_prev = kNil, hold_next = kNil;
    std::uint32_t bucket_prev = kNil, bucket_next = kNil;  // in its bucket, oldest first
    std::int32_t max_distance = 0;
    bool live = false;
    std::uint16_t body = 0;  // where the first line's message proper starts (after its header)
    SampleRecord last;       // the latest line that joined; empty until one does
    std::unique_ptr<GroupExtras> extras;
  };
  // Every open group costs this much plus its blocks: keep it from growing unnoticed
  // (bench/RESULTS.md "groupmem" has what a group is made of).
  static_assert(sizeof(Group) <= 144);

  // An intrusive doubly linked list over group slots. Both lists stay sorted by time because
  // time never goes backwards inside the merger: appending at the tail keeps the order.
  struct List {
    std::uint32_t head = kNil, tail = kNil;
  };

  MergerOptions opt;
  Tokenizer tokenizer;
  Fingerprinter fingerprinter;
  GroupIndex index;
  std::vector<Group> groups;
  std::vector<std::uint32_t> free_slots;
  std::size_t live = 0;
  List lru, hold;
  ShapeMap exact;
  // Groups by scope and token count, in opening order: an intrusive list, so closing one of
  // many groups is O(1) (a vector erase shifted everything after it).
  std::unordered_map<std::uint64_t, List> buckets;
  TemplateMatcher matcher;  // protected words and value keys set from opt
  // Event scratch: templates are built when an event needs one (the last one is kept for the
  // next event of the same group, e.g. annotate mode), and summaries' samples are expanded
  // into records here, so groups store neither.
  std::string template_text;
  std::uint32_t template_slot = kNil;
  LogRecord first_record, last_record;
  std::vector<SlotSummary> slot_summaries;
  std::vector<SlotValueCount> slot_values;
  bool track_hosts = false;
  MergerStats stats;
  MergeDecision decision;
  TimeUs latest = INT64_MIN;
  std::uint64_t next_id = 0;

  // Scratch reused for every line.
  PreparedLine line;  // the line's tokens, hashes and own header (timestamp, level, ...)
  std::vector<GroupIndex::Candidate> candidates;
  std::vector<std::uint32_t> tried;
  std::size_t scan_budget = 0;  // bucket-scan candidates left for the current line
  std::vector<std::uint8_t> skip;
  std::vector<Token> group_tokens;
  // The latest candidate Fits ruled out without Confirm, kNil once Confirm ran after it: its
  // rejection reason is filled in only if the line opens a group (explain shows the last).
  std::uint32_t unexplained = kNil;

  explicit Impl(MergerOptions o)
      : opt(std::move(o)),
        tokenizer(opt.tokenizer),
        fingerprinter(opt.weights),
        index(opt.max_distance) {
    ApplyDerived();
  }

  void ApplyDerived() {
    // A window or hold of zero would close or summarise a group at every call, and a hold
    // that never advances would loop: both are at least 1 us.
    opt.window_us = std::max<TimeUs>(opt.window_us, 1);
    opt.max_hold_us = std::max<TimeUs>(opt.max_hold_us, 1);
    opt.max_groups = std::max<std::size_t>(opt.max_groups, 1);
    matcher.SetWords(opt.protected_words, opt.value_keys);
    track_hosts =
        std::find(opt.scope.begin(), opt.scope.end(), ScopeField::kHost) == opt.scope.end();
  }

  // --- lists --------------------------------------------------------------------------
  template <std::uint32_t Group::*Prev, std::uint32_t Group::*Next>
  void Unlink(List& list, std::uint32_t slot) {
    Group& g = groups[slot];
    if (g.*Prev != kNil)
      groups[g.*Prev].*Next = g.*Next;
    else
      list.head = g.*Next;
    if (g.*Next != kNil)
      groups[g.*Next].*Prev = g.*Prev;
    else
      list.tail = g.*Prev;
    g.*Prev = g.*Next = kNil;
  }
  template <std::uint32_t Group::*Prev, std::uint32_t Group::*Next>
  void Append(List& list, std::uint32_t slot) {
    Group& g = groups[slot];
    g.*Prev = list.tail;
    g.*Next = kNil;
    if (list.tail != kNil)
      groups[list.tail].*Next = slot;
    else
      list.head = slot;
    list.tail = slot;
  }
  void TouchLru(std::uint32_t slot) {
    Unlink<&Group::lru_prev, &Group::lru_next>(lru, slot);
    Append<&Group::lru_prev, &Group::lru_next>(lru, slot);
  }
  void TouchHold(std::uint32_t slot) {
    Unlink<&Group::hold_prev, &Group::hold_next>(hold, slot);
    Append<&Group::hold_prev, &Group::hold_next>(hold, slot);
  }

  // --- keys -----------------------------------------------------------------------------
  std::uint64_t ScopeHash(const LogRecord& r) const { return logfold::ScopeHash(r, opt.scope); }

  std::uint64_t ShapeKey(std::uint64_t scope) const {
    return XXH3_64bits_withSeed(line.hashes.data(), line.hashes.size() * sizeof(std::uint64_t),
                                scope);
  }

  std::uint64_t BucketKey(std::uint64_t scope, std::size_t n) const {
    return Mix(scope ^ 0x6275636b6574ULL, n);
  }

  // --- confirmation (pipeline/template_match.h) -------------------------------------------
  MatchTemplate TemplateOf(const Group& g) const { return {g.first.message(), g.tokens}; }

  // Does the line fit group g's template? On success matcher.marks() holds the template flags
  // the line adds, by group position; on failure the decision's reason says why.
  bool Confirm(const Group& g, std::string_view message) {
    const MatchResult result = matcher.Match(line.View(message), TemplateOf(g));
    if (!result.accepted) decision.reason.assign(MatchReasonText(result.reason));
    return result.accepted;
  }

  // Resets the decision for a new line, keeping the reason's buffer (no allocation a line).
  void ResetDecision() {
    decision.path = MergeDecision::kNew;
    decision.reason.clear();
    decision.candidates = 0;
    decision.fingerprint = 0;
    decision.group_id = 0;
    decision.group_fingerprint = 0;
    decision.distance = 0;
  }

  // Confirm for a SimHash or bucket candidate: most are ruled out cheaply first (a line that
  // opens a group in a busy scope is confirmed against up to 64 + 12 x 16 groups).
  bool Fits(std::uint32_t slot, std::string_view message) {
    if (matcher.RuledOut(line.View(message), groups[slot].tokens)) {
      unexplained = slot;
      return false;
    }
    unexplained = kNil;
    return Confirm(groups[slot], message);
  }

  // --- group life -------------------------------------------------------------------------
  // Rare (a position turned wild): the token array is expanded into scratch for it.
  std::uint64_t GroupFingerprint(const Group& g) {
    const std::size_t n = g.tokens.size();
    skip.resize(n);
    group_tokens.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      skip[i] = g.tokens.flags(i) & kWild;
      group_tokens[i] = g.tokens.token(i);
    }
    return fingerprinter.FingerprintFromHashes(group_tokens, g.tokens.hashes(), skip);
  }

  // The group's template, built into scratch unless the previous event's was this group's
  // and nothing changed it since (Join and Open forget it).
  std::string_view Template(std::uint32_t slot) {
    if (template_slot == slot) return template_text;
    const Group& g = groups[slot];
    template_text.clear();
    const std::string_view m = g.first.message();
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

  GroupExtras& Extras(Group& g) {
    if (g.extras == nullptr) g.extras = std::make_unique<GroupExtras>();
    return *g.extras;
  }

  void NoteHost(Group& g, const LogRecord& r) {
    if (!track_hosts || r.hostname.empty()) return;
    GroupExtras& x = Extras(g);
    for (const std::string& h : x.hosts) {
      if (h == r.hostname) return;
    }
    if (x.hosts.size() < opt.max_summary_hosts) {
      x.hosts.push_back(r.hostname);
    } else {
      x.hosts_truncated = true;
    }
  }

  void EmitLine(EventKind kind, std::uint32_t slot, const LogRecord& r, std::uint64_t fp,
                EventSink& sink) {
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
    if (kind == EventKind::kAnnotate) {
      ++stats.events_annotate;
    } else {
      ++stats.events_first;
    }
    sink.OnEvent(e);
  }

  void EmitSummary(std::uint32_t slot, SummaryReason reason, bool closing, EventSink& sink) {
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
    if (g.body != 0) {
      const MessageHeader h = ParseMessageHeader(first_record.message);
      e.level = h.level;
      e.logger = h.logger;
    }
    if (g.extras != nullptr) {
      e.hosts = g.extras->hosts;
      e.hosts_truncated = g.extras->hosts_truncated;
      e.slots = SlotSummaries(*g.extras);
    }
    ++stats.events_summary;
    sink.OnEvent(e);
    g.count_since = 0;
  }

  // The group's slot statistics for an event, in reused scratch.
  std::span<const SlotSummary> SlotSummaries(const GroupExtras& x) {
    slot_values.resize(x.slots.size() * SlotStats::kTop);
    slot_summaries.clear();
    std::array<const SlotStats::Value*, SlotStats::kTop> sorted;
    for (std::size_t i = 0; i < x.slots.size(); ++i) {
      const SlotStats& st = x.slots[i];
      const std::size_t n = st.Sorted(sorted);
      SlotValueCount* values = slot_values.data() + i * SlotStats::kTop;
      for (std::size_t k = 0; k < n; ++k) values[k] = {sorted[k]->view(), sorted[k]->count};
      slot_summaries.push_back({st.position(), st.Distinct(), st.total(), {values, n}});
    }
    return slot_summaries;
  }

  // Counts the line's value at each variable position of group g (same token count only:
  // then line token i is group position i). A slot starts when its position first varies,
  // with the lines before, which all had the first line's text there.
  void NoteSlots(Group& g, std::string_view message) {
    if (opt.annotate || line.tokens.size() != g.tokens.size()) return;
    const std::string_view gmsg = g.first.message();
    GroupExtras* x = g.extras.get();
    std::size_t k = 0;  // x->slots is sorted by position
    for (std::size_t i = 0; i < line.tokens.size(); ++i) {
      if (!(g.tokens.flags(i) & kVaried)) continue;
      if (x == nullptr) x = &Extras(g);
      while (k < x->slots.size() && x->slots[k].position() < i) ++k;
      if (k == x->slots.size() || x->slots[k].position() != i) {
        if (x->slots.size() >= kMaxSlots) continue;
        x->slots.insert(x->slots.begin() + static_cast<std::ptrdiff_t>(k),
                        SlotStats(static_cast<std::uint32_t>(i)));
        const Token gt = g.tokens.token(i);
        const std::string_view first = gmsg.substr(gt.offset, gt.length);
        x->slots[k].Add(XXH3_64bits(first.data(), first.size()), first, g.count_total - 1);
      }
      const std::string_view v = message.substr(line.tokens[i].offset, line.tokens[i].length);
      x->slots[k].Add(XXH3_64bits(v.data(), v.size()), v);
    }
  }

  void Close(std::uint32_t slot, SummaryReason reason, EventSink& sink) {
    Group& g = groups[slot];
    if (g.count_since > 0 && !opt.annotate) EmitSummary(slot, reason, true, sink);
    index.Erase(g.scope, g.fingerprint, slot);
    exact.EraseIf(g.shape, slot);
    if (g.extras != nullptr) {
      for (std::uint64_t key : g.extras->aliases) exact.EraseIf(key, slot);
    }
    if (auto b = buckets.find(BucketKey(g.scope, g.tokens.size())); b != buckets.end()) {
      Unlink<&Group::bucket_prev, &Group::bucket_next>(b->second, slot);
      if (b->second.head == kNil) buckets.erase(b);
    }
    Unlink<&Group::lru_prev, &Group::lru_next>(lru, slot);
    Unlink<&Group::hold_prev, &Group::hold_next>(hold, slot);
    g.live = false;
    // A closed group's memory goes back at once: a burst of groups must not stay allocated.
    g.tokens.Reset();
    g.first.Reset();
    g.last.Reset();
    g.extras.reset();
    if (template_slot == slot) template_slot = kNil;
    free_slots.push_back(slot);
    --live;
    ++stats.groups_closed;
    if (reason == SummaryReason::kEvicted) ++stats.groups_evicted;
  }

  void Open(const LogRecord& r, std::uint64_t scope, std::uint64_t fp, std::uint64_t shape,
            TimeUs now, EventSink& sink) {
    if (live >= opt.max_groups && lru.head != kNil) Close(lru.head, SummaryReason::kEvicted, sink);
    std::uint32_t slot;
    if (!free_slots.empty()) {
      slot = free_slots.back();
      free_slots.pop_back();
    } else {
      slot = static_cast<std::uint32_t>(groups.size());
      groups.emplace_back();
    }
    Group& g = groups[slot];
    g.live = true;
    g.id = Mix(opt.id_seed, ++next_id);
    g.scope = scope;
    g.fingerprint = fp;
    g.first.Assign(r);
    g.body = static_cast<std::uint16_t>(line.header.body);
    g.tokens.Assign(line.tokens, line.hashes);
    if (template_slot == slot) template_slot = kNil;
    g.count_total = 1;
    g.count_since = 0;
    g.first_seen = g.last_seen = r.EventTime();
    g.last_activity = g.hold_start = now;
    g.max_distance = 0;
    NoteHost(g, r);
    index.Insert(scope, fp, slot);
    exact.Set(shape, slot);
    g.shape = shape;
    Append<&Group::bucket_prev, &Group::bucket_next>(buckets[BucketKey(scope, line.tokens.size())],
                                                     slot);
    Append<&Group::lru_prev, &Group::lru_next>(lru, slot);
    Append<&Group::hold_prev, &Group::hold_next>(hold, slot);
    ++live;
    ++stats.groups_opened;
    EmitLine(opt.annotate ? EventKind::kAnnotate : EventKind::kFirst, slot, r, fp, sink);
  }

  // The line joins group `slot`; `marks` (from Confirm) says what it adds to the template.
  void Join(std::uint32_t slot, const LogRecord& r, std::optional<std::uint64_t> fp,
            std::uint64_t shape, bool shape_in_table, TimeUs now, EventSink& sink) {
    Group& g = groups[slot];
    bool refingerprint = false;
    for (const TemplateMark& mk : matcher.marks()) {
      const std::uint8_t f = g.tokens.flags(mk.position);
      if ((f & mk.flags) == mk.flags) continue;
      if ((mk.flags & kWild) && !(f & kWild)) refingerprint = true;
      g.tokens.AddFlags(mk.position, mk.flags);
      if (template_slot == slot) template_slot = kNil;
    }
    if (refingerprint) {
      const std::uint64_t updated = GroupFingerprint(g);
      if (updated != g.fingerprint) {
        index.Erase(g.scope, g.fingerprint, slot);
        g.fingerprint = updated;
        index.Insert(g.scope, g.fingerprint, slot);
      }
    }
    // A shape already in the table (this group's, or one whose group did not confirm) keeps
    // its entry; Add looked it up, and nothing changed the table since.
    if (!shape_in_table) {
      GroupExtras& x = Extras(g);
      if (1 + x.aliases.size() < kMaxAliases) {
        exact.Set(shape, slot);
        x.aliases.push_back(shape);
      }
    }
    if (fp) g.max_distance = std::max(g.max_distance, HammingDistance(*fp, g.fingerprint));
    ++g.count_total;
    ++g.count_since;
    NoteSlots(g, r.message);
    g.last.Assign(r);
    g.first_seen = std::min(g.first_seen, r.EventTime());
    g.last_seen = std::max(g.last_seen, r.EventTime());
    g.last_activity = now;
    NoteHost(g, r);
    TouchLru(slot);
    ++stats.lines_merged;
    if (opt.annotate) EmitLine(EventKind::kAnnotate, slot, r, g.fingerprint, sink);
  }

  TimeUs Clamp(TimeUs now) {
    if (now < latest) {
      ++stats.clock_backwards;
      return latest;
    }
    latest = now;
    return now;
  }

  void FlushDue(TimeUs now, EventSink& sink) {
    while (lru.head != kNil && now - groups[lru.head].last_activity >= opt.window_us) {
      Close(lru.head, SummaryReason::kIdle, sink);
    }
    while (hold.head != kNil && now - groups[hold.head].hold_start >= opt.max_hold_us) {
      const std::uint32_t slot = hold.head;
      Group& g = groups[slot];
      if (g.count_since > 0 && !opt.annotate) {
        EmitSummary(slot, SummaryReason::kMaxHold, false, sink);
      }
      g.hold_start = now;
      TouchHold(slot);
    }
  }

  void Add(const LogRecord& r, TimeUs now_in, EventSink& sink) {
    const TimeUs now = Clamp(now_in);
    FlushDue(now, sink);
    ++stats.lines;
    const std::uint64_t scope = ScopeHash(r);
    PrepareLine(tokenizer, opt.infer_header, r.message, line);
    const std::uint64_t shape = ShapeKey(scope);
    unexplained = kNil;

    ResetDecision();
    bool shape_in_table = false;
    if (const std::uint32_t slot = exact.Find(shape); slot != kNil) {
      shape_in_table = true;
      // Same masked shape: only texts of masked tokens can differ (or wild positions). Most
      // lines end here, without a SimHash: a line of a shape already in the group has the
      // fingerprint that shape had when it joined, so its distance is already counted.
      ++decision.candidates;
      if (Confirm(groups[slot], r.message)) {
        ++stats.exact_hits;
        decision.path = MergeDecision::kExact;
        decision.reason = "same masked shape as the group";
        decision.group_id = groups[slot].id;
        decision.group_fingerprint = groups[slot].fingerprint;
        Join(slot, r, std::nullopt, shape, true, now, sink);
        return;
      }
    }
    const std::uint64_t fp = fingerprinter.FingerprintFromHashes(line.tokens, line.hashes, {});
    decision.fingerprint = fp;
    index.FindWithin(scope, fp, candidates);
    tried.clear();
    for (const GroupIndex::Candidate& c : candidates) {
      ++stats.candidates_checked;
      ++decision.candidates;
      tried.push_back(c.group);
      if (!opt.confirm || Fits(c.group, r.message)) {
        if (!opt.confirm)
          matcher.MarkDifferences(line.View(r.message), TemplateOf(groups[c.group]));
        Decide(MergeDecision::kIndex, c.group, fp,
               opt.confirm ? "SimHash candidate within max_distance, structure confirmed"
                           : "nearest SimHash candidate within max_distance (no confirmation)");
        Join(c.group, r, fp, shape, shape_in_table, now, sink);
        return;
      }
    }
    if (opt.confirm) {
      // Same token count first, then lengths a multi-token variable could explain.
      const auto n = static_cast<std::int64_t>(line.tokens.size());
      scan_budget = kMaxScanPerLine;
      for (std::int64_t delta = 0;
           delta <= static_cast<std::int64_t>(kMaxTokenCountChange) && scan_budget > 0;
           delta = delta > 0 ? -delta : -delta + 1) {
        if (n + delta <= 0) continue;
        const std::size_t limit =
            std::min(delta == 0 ? kMaxBucketScan : kMaxOtherLengthScan, scan_budget);
        if (const std::uint32_t slot =
                ScanBucket(BucketKey(scope, static_cast<std::size_t>(n + delta)), limit, r.message);
            slot != kNil) {
          Decide(MergeDecision::kBucket, slot, fp,
                 delta == 0 ? "group of the same token count, structure confirmed"
                            : "group of a nearby token count, aligned and confirmed");
          Join(slot, r, fp, shape, shape_in_table, now, sink);
          return;
        }
      }
    }
    decision.path = MergeDecision::kNew;
    if (decision.candidates == 0) decision.reason = "no candidate group in scope";
    if (unexplained != kNil) Confirm(groups[unexplained], r.message);  // sets its reason
    Open(r, scope, fp, shape, now, sink);
  }

  void Decide(MergeDecision::Path path, std::uint32_t slot, std::uint64_t fp, const char* why) {
    decision.path = path;
    decision.reason = why;
    decision.group_id = groups[slot].id;
    decision.group_fingerprint = groups[slot].fingerprint;
    decision.distance = HammingDistance(fp, groups[slot].fingerprint);
  }

  // Confirms the newest `limit` groups of a bucket not tried yet; the first that fits, or kNil.
  std::uint32_t ScanBucket(std::uint64_t key, std::size_t limit, std::string_view message) {
    auto b = buckets.find(key);
    if (b == buckets.end()) return kNil;
    std::size_t scanned = 0;
    for (std::uint32_t slot = b->second.tail; slot != kNil && scanned < limit;
         slot = groups[slot].bucket_prev, ++scanned) {
      if (std::find(tried.begin(), tried.end(), slot) != tried.end()) continue;
      --scan_budget;
      ++stats.candidates_checked;
      ++decision.candidates;
      if (Fits(slot, message)) return slot;
    }
    return kNil;
  }

  void FlushAll(EventSink& sink) {
    while (lru.head != kNil) Close(lru.head, SummaryReason::kShutdown, sink);
  }

  std::size_t MemoryUsage() const {
    // Every heap block with glibc's size word in front of it (as GroupIndex counts them);
    // the bucket map's nodes and slots estimated.
    std::size_t bytes = groups.capacity() * sizeof(Group) + index.MemoryUsage() +
                        exact.MemoryUsage() + buckets.size() * 48 +
                        buckets.bucket_count() * sizeof(void*) + template_text.capacity() +
                        free_slots.capacity() * sizeof(std::uint32_t);
    for (const Group& g : groups) bytes += GroupBlocks(g);
    return bytes;
  }

  // The heap blocks one group holds (0 for a closed slot), as MemoryUsage counts them.
  static std::size_t GroupBlocks(const Group& g) {
    constexpr std::size_t kMallocOverhead = sizeof(std::size_t);
    auto block = [](std::size_t n) { return n == 0 ? 0 : n + kMallocOverhead; };
    std::size_t bytes =
        block(g.tokens.MemoryUsage()) + block(g.first.MemoryUsage()) + block(g.last.MemoryUsage());
    if (g.extras != nullptr) {
      bytes += block(sizeof(GroupExtras)) + block(g.extras->aliases.capacity() * 8) +
               block(g.extras->slots.capacity() * sizeof(SlotStats)) +
               block(g.extras->hosts.capacity() * sizeof(std::string));
      for (const std::string& h : g.extras->hosts) {
        if (h.capacity() > 15) bytes += block(h.capacity() + 1);
      }
    }
    return bytes;
  }
};

WindowMerger::WindowMerger(MergerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
WindowMerger::~WindowMerger() = default;

void WindowMerger::Add(const LogRecord& record, TimeUs now_us, EventSink& sink) {
  impl_->Add(record, now_us, sink);
}

void WindowMerger::Flush(TimeUs now_us, EventSink& sink) {
  impl_->FlushDue(impl_->Clamp(now_us), sink);
}

void WindowMerger::FlushAll(EventSink& sink) { impl_->FlushAll(sink); }

void WindowMerger::Reconfigure(MergerOptions options, EventSink& sink) {
  Impl& m = *impl_;
  const bool keys_change =
      options.scope != m.opt.scope || options.tokenizer.max_tokens != m.opt.tokenizer.max_tokens ||
      options.weights.word != m.opt.weights.word ||
      options.weights.by_class != m.opt.weights.by_class ||
      options.weights.pairs != m.opt.weights.pairs || options.annotate != m.opt.annotate ||
      options.infer_header != m.opt.infer_header;
  if (keys_change) m.FlushAll(sink);
  const bool reindex = options.max_distance != m.opt.max_distance;
  options.id_seed = m.opt.id_seed;  // ids stay unique across a reload
  m.opt = std::move(options);
  m.tokenizer = Tokenizer(m.opt.tokenizer);
  m.fingerprinter = Fingerprinter(m.opt.weights);
  m.ApplyDerived();
  if (reindex) {
    m.index = GroupIndex(m.opt.max_distance);
    for (std::uint32_t s = 0; s < m.groups.size(); ++s) {
      if (m.groups[s].live) m.index.Insert(m.groups[s].scope, m.groups[s].fingerprint, s);
    }
  }
  while (m.live > m.opt.max_groups && m.lru.head != kNil) {
    m.Close(m.lru.head, SummaryReason::kEvicted, sink);
  }
  m.FlushDue(m.latest == INT64_MIN ? 0 : m.latest, sink);
}

TimeUs WindowMerger::NextDeadline() const {
  const Impl& m = *impl_;
  TimeUs next = INT64_MAX;
  if (m.lru.head != kNil) next = m.groups[m.lru.head].last_activity + m.opt.window_us;
  if (m.hold.head != kNil) {
    next = std::min(next, m.groups[m.hold.head].hold_start + m.opt.max_hold_us);
  }
  return next;
}

std::size_t WindowMerger::open_groups() const { return impl_->live; }
const MergeDecision& WindowMerger::last_decision() const { return impl_->decision; }
const MergerStats& WindowMerger::stats() const { return impl_->stats; }
const MergerOptions& WindowMerger::options() const { return impl_->opt; }
std::size_t WindowMerger::MemoryUsage() const { return impl_->MemoryUsage(); }

std::size_t WindowMerger::CloseOldest(EventSink& sink) {
  Impl& m = *impl_;
  if (m.lru.head == kNil) return 0;
  const std::size_t freed = Impl::GroupBlocks(m.groups[m.lru.head]);
  m.Close(m.lru.head, SummaryReason::kMemory, sink);
  ++m.stats.groups_closed_memory;
  return freed;
}

void WindowMerger::VisitOpenGroups(const std::function<void(const OpenGroupInfo&)>& visit) const {
  OpenGroupInfo info;
  const auto& groups = impl_->groups;
  for (std::uint32_t slot = 0; slot < groups.size(); ++slot) {
    const auto& g = groups[slot];
    if (!g.live) continue;
    info.handle = slot;
    info.id = g.id;
    info.count_total = g.count_total;
    info.first_seen_us = g.first_seen;
    info.last_seen_us = g.last_seen;
    info.host = g.first.hostname();
    info.app = g.first.app_name();
    visit(info);
  }
}

std::span<const SlotSummary> WindowMerger::OpenGroupSlots(std::uint32_t handle) {
  if (handle >= impl_->groups.size() || !impl_->groups[handle].live) return {};
  const auto& extras = impl_->groups[handle].extras;
  if (extras == nullptr) return {};
  return impl_->SlotSummaries(*extras);
}

std::string WindowMerger::OpenGroupTemplate(std::uint32_t handle) {
  if (handle >= impl_->groups.size() || !impl_->groups[handle].live) return {};
  return std::string(impl_->Template(handle));
}

}  // namespace logfold
