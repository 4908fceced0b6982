// WindowMerger: settling a line and group life. A line is settled, cheapest first, by: an exact
// lookup of its masked token shape; SimHash candidates from the GroupIndex; candidates of the
// same token count in its scope. Candidates are accepted only after template matching.
#include "pipeline/window_merger.h"

#include "pipeline/window_merger_impl.h"

namespace logfold {
namespace {

constexpr std::uint64_t kScopeSeed = 0x73636f7065ULL;
constexpr std::uint64_t kSaltSeed = 0x73616c74ULL;  // "salt"

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
    h = merger_detail::Mix(h, v.empty() ? static_cast<std::uint64_t>(n) + tag
                                        : XXH3_64bits_withSeed(v.data(), v.size(), tag));
  }
  if (r.scope_salt != 0) h = merger_detail::Mix(h, kSaltSeed + r.scope_salt);
  return h;
}

}  // namespace

std::uint64_t ScopeHash(const LogRecord& r, const std::vector<ScopeField>& scope) {
  return ScopeHashOf(r, scope);
}

std::uint64_t ScopeHash(const LogRecordView& r, const std::vector<ScopeField>& scope) {
  return ScopeHashOf(r, scope);
}

void WindowMerger::Impl::Add(const LogRecord& r, TimeUs now_in, EventSink& sink) {
  const TimeUs now = Clamp(now_in);
  FlushDue(now, sink);
  PrefetchEviction();
  ++stats.lines;
  std::uint64_t scope = ScopeHash(r);
  PrepareLine(tokenizer, matcher,
              opt.infer_header ? headers.Parse(scope, r.message) : MessageHeader{}, r.message,
              line);
  // What the scope's lines have shown to be values (a key's value words, the names a field
  // holds) holds at every level: the level separates groups, not the evidence of what varies
  // (`user alice` at INFO makes `(to alice)` at ERROR a value, as it does in the same lines
  // without a header).
  const std::uint64_t value_scope = scope;
  // The level separates events: the same text at INFO and at FATAL is two groups (the level
  // is out of the template, so it keys the line's scope within the merger instead).
  if (const int severity = LevelSeverity(line.header.level); severity >= 0) {
    scope = merger_detail::LevelScope(scope, severity);
  }
  // A message without a token (blank, or punctuation alone: a rule of `=` or `-`) is its own
  // text: an empty line and a rule of `=` are two events, with nothing variable in either.
  if (line.tokens.empty()) {
    std::string_view body = std::string_view(r.message).substr(
        std::min<std::size_t>(line.header.body, r.message.size()));
    body.remove_suffix(std::min<std::size_t>(line.header.tail, body.size()));
    while (!body.empty() && (body.back() == ' ' || body.back() == '\t')) body.remove_suffix(1);
    while (!body.empty() && (body.front() == ' ' || body.front() == '\t')) body.remove_prefix(1);
    scope = merger_detail::Mix(scope, XXH3_64bits(body.data(), body.size()));
  }
  line.values = &value_words;
  line.scope = value_scope;
  line.learned = false;
  const std::uint64_t shape = ShapeKey(scope);
  name_fields.NewLine(value_scope);
  unexplained = kNil;

  ResetDecision();
  crowded = false;
  rigid_at = kNil;
  sibling_hint_count = 0;
  bool shape_in_table = false;
  // A retired group's shapes stay in the table until it closes, but it takes no more lines.
  if (const std::uint32_t slot = exact.Find(shape); slot != kNil && !groups[slot].retired) {
    shape_in_table = true;
    // Most lines join here; their slot statistics are two pointers away, cold in a busy
    // merger: start loading them while Confirm runs.
    if (groups[slot].extras != nullptr) __builtin_prefetch(groups[slot].extras.get());
    groups[slot].first.Prefetch();  // Confirm reads the template's text after its tokens
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
  // Learned names are values from here on, but not in the fingerprint: a name the scope has
  // not learned yet weighs as the word it is, and so does a learned one, so the candidates
  // a line finds by its SimHash do not depend on what the scope has learned.
  if (!value_words.Empty()) MaskValues(value_scope, r.message);
  const bool by_words = opt.confirm && WordsKeyed(line.tokens.size()) != 0;
  const std::uint64_t words_key = by_words ? LineWordsKey(scope) : 0;
  if (by_words) exact.Prefetch(words_key);  // read after the SimHash candidates
  const std::size_t index_reads = index.FindWithin(scope, fp, candidates, kMaxIndexCandidates);
  crowded = candidates.size() >= kMaxIndexCandidates || index_reads >= CrowdedReads();
  tried.clear();
  // Cold groups: load every candidate's group and tokens at once, not one after another.
  for (const GroupIndex::Candidate& c : candidates) __builtin_prefetch(&groups[c.group]);
  for (const GroupIndex::Candidate& c : candidates) groups[c.group].tokens.Prefetch();
  for (const GroupIndex::Candidate& c : candidates) {
    ++stats.candidates_checked;
    ++decision.candidates;
    tried.push_back(c.group);
    if (!opt.confirm || Fits(c.group, r.message)) {
      if (!opt.confirm) matcher.MarkDifferences(line.View(r.message), TemplateOf(groups[c.group]));
      Decide(MergeDecision::kIndex, c.group, fp,
             opt.confirm ? "SimHash candidate within max_distance, structure confirmed"
                         : "nearest SimHash candidate within max_distance (no confirmation)");
      Join(c.group, r, fp, shape, shape_in_table, now, sink);
      return;
    }
  }
  if (opt.confirm) {
    if (const std::uint32_t slot = by_words ? FindByWords(scope, words_key, r.message) : kNil;
        slot != kNil) {
      Decide(MergeDecision::kBucket, slot, fp,
             "group with the line's words in the same places, structure confirmed");
      Join(slot, r, fp, shape, shape_in_table, now, sink);
      return;
    }
    // Same token count first, then lengths a multi-token variable could explain.
    const auto n = static_cast<std::int64_t>(line.tokens.size());
    scan_budget = kMaxScanPerLine;
    line_digest.SetLine(line.View(r.message));
    for (std::int64_t delta = 0;
         delta <= static_cast<std::int64_t>(kMaxTokenCountChange) && scan_budget > 0;
         delta = delta > 0 ? -delta : -delta + 1) {
      if (n + delta <= 0) continue;
      const std::size_t limit =
          std::min(delta == 0 ? kMaxBucketScan : kMaxOtherLengthScan, scan_budget);
      const std::uint64_t bucket_key = BucketKey(scope, static_cast<std::size_t>(n + delta));
      if (const std::uint32_t slot = ScanBucket(bucket_key, limit, r.message); slot != kNil) {
        // The group a scan found moves to the bucket's newest end: an event whose lines keep
        // needing the scan (a new shape each time) stays within it however many groups of
        // its length open after it.
        if (List* b = buckets.Lookup(bucket_key); b != nullptr && b->tail != slot) {
          BucketUnlink(*b, slot);
          BucketAppend(*b, slot);
        }
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
  if (explain_rejections && unexplained != kNil) {
    Confirm(groups[unexplained], r.message);  // sets its reason
  }
  if (opt.confirm && opt.variable_after_values > 0 &&
      SettleBySiblings(r, scope, fp, shape, shape_in_table, now, sink)) {
    return;
  }
  Open(r, scope, fp, shape, now, sink);
}

void WindowMerger::Impl::Decide(MergeDecision::Path path, std::uint32_t slot, std::uint64_t fp,
                                const char* why) {
  decision.path = path;
  decision.reason = why;
  decision.group_id = groups[slot].id;
  decision.group_fingerprint = groups[slot].fingerprint;
  decision.distance = HammingDistance(fp, groups[slot].fingerprint);
}

// Confirms the newest `limit` groups of a bucket not tried yet; the first that fits, or kNil.
// The bucket's list (bucket_links, small and warm) is walked first and the candidates'
// groups and tokens prefetched together: walking and confirming one by one waited for three
// cold loads per candidate in turn (the link in the group, the group, its tokens), which made
// RuledOut the top of a garbage flood's profile. Groups the digest in their link rules out
// are not kept for the second pass (in a flood of unique lines that is nearly all of them):
// each candidate kept carries how many were ruled out just before it, so the counts and
// `unexplained` are what they would be with every group visited in order.
std::uint32_t WindowMerger::Impl::ScanBucket(std::uint64_t key, std::size_t limit,
                                             std::string_view message) {
  const List* b = buckets.Lookup(key);
  if (b == nullptr) return kNil;
  constexpr std::size_t kBatch = std::max(kMaxBucketScan, kMaxOtherLengthScan);
  std::uint32_t batch[kBatch];
  std::uint32_t ruled_out_before[kBatch];  // ruled out by the digest since the previous one
  std::uint32_t last_ruled_out_before[kBatch];
  std::size_t count = 0, scanned = 0;
  std::uint32_t ruled_out = 0, last_ruled_out = kNil;
  for (std::uint32_t slot = b->tail; slot != kNil && scanned < limit;
       slot = bucket_links[slot].prev, ++scanned) {
    if (!tried.empty() && std::find(tried.begin(), tried.end(), slot) != tried.end()) continue;
    if (line_digest.RulesOut(bucket_links[slot].digest)) {
      ++ruled_out;
      last_ruled_out = slot;
      continue;
    }
    __builtin_prefetch(&groups[slot]);
    ruled_out_before[count] = ruled_out;
    last_ruled_out_before[count] = last_ruled_out;
    ruled_out = 0;
    batch[count++] = slot;
  }
  for (std::size_t i = 0; i < count; ++i) groups[batch[i]].tokens.Prefetch();
  const auto count_checked = [this](std::uint32_t n) {
    scan_budget -= n;
    stats.candidates_checked += n;
    decision.candidates += n;
  };
  for (std::size_t i = 0; i < count; ++i) {
    count_checked(ruled_out_before[i] + 1);
    if (ruled_out_before[i] != 0) unexplained = last_ruled_out_before[i];  // as Fits after RuledOut
    if (Fits(batch[i], message)) return batch[i];
  }
  count_checked(ruled_out);
  if (ruled_out != 0) unexplained = last_ruled_out;
  return kNil;
}

// The open group whose template has the line's words in the same places (WordsKey), if it
// takes lines, is of the line's scope and token count, and was not tried yet; kNil otherwise
// or when it does not fit. One candidate beside the bucket scan's, found wherever it lies in
// its bucket.
std::uint32_t WindowMerger::Impl::FindByWords(std::uint64_t scope, std::uint64_t key,
                                              std::string_view message) {
  const std::uint32_t slot = exact.Find(key);
  if (slot == kNil) return kNil;
  const Group& g = groups[slot];
  if (!g.live || g.retired || g.scope != scope || g.tokens.size() != line.tokens.size() ||
      std::find(tried.begin(), tried.end(), slot) != tried.end()) {
    return kNil;
  }
  ++stats.candidates_checked;
  ++decision.candidates;
  tried.push_back(slot);
  return Fits(slot, message) ? slot : kNil;
}

// Puts the group's words key (GroupWordsKey) in `exact` among its aliases, in place of the one
// it had: once it has taken a line (a group of one line, such as each of a flood's, costs no
// entry), and again when a position of its template turned wild. A group that already had
// that key and whose lines this one's template takes (Subsumes) is the same event, split
// while neither had generalised: it takes no more lines (Retire, as a learned variable's
// siblings), so the event's later lines, which the exact table sent there by their shape,
// come here.
void WindowMerger::Impl::KeyWords(std::uint32_t slot) {
  Group& g = groups[slot];
  g.words_keyed = true;
  const std::uint64_t key = GroupWordsKey(g);
  GroupExtras& x = Extras(g);
  if (key == x.words_key) return;
  if (const std::uint32_t other = exact.Find(key);
      other != kNil && other != slot && Subsumes(slot, other)) {
    Retire(other);
  }
  if (x.words_key != 0) {
    exact.EraseIf(x.words_key, slot);
    std::erase(x.aliases, x.words_key);
  } else {
    ++WordsKeyed(g.tokens.size());
  }
  exact.Set(key, slot);
  x.aliases.push_back(key);
  x.words_key = key;
}

// Does group `slot` take every line group `other` takes: open groups of one scope and token
// count, `other`'s wild positions wild in `slot` too, and `other`'s first line fits `slot`'s
// template?
bool WindowMerger::Impl::Subsumes(std::uint32_t slot, std::uint32_t other) {
  const Group& g = groups[slot];
  const Group& o = groups[other];
  const std::size_t n = g.tokens.size();
  if (!o.live || o.retired || o.scope != g.scope || o.tokens.size() != n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if ((o.tokens.flags(i) & kWild) && !(g.tokens.flags(i) & kWild)) return false;
  }
  group_tokens.resize(n);
  for (std::size_t i = 0; i < n; ++i) group_tokens[i] = o.tokens.token(i);
  const MatchLine first{o.first.message(), group_tokens, o.tokens.hashes(), o.body};
  return matcher.Match(first, TemplateOf(g)).accepted;
}

// The line joins group `slot`; `marks` (from Confirm) says what it adds to the template.
void WindowMerger::Impl::Join(std::uint32_t slot, const LogRecord& r,
                              std::optional<std::uint64_t> fp, std::uint64_t shape,
                              bool shape_in_table, TimeUs now, EventSink& sink) {
  Group& g = groups[slot];
  PrefetchSlots(g);
  bool refingerprint = false;
  for (const TemplateMark& mk : matcher.marks()) {
    const std::uint8_t f = g.tokens.flags(mk.position);
    if ((f & mk.flags) == mk.flags) continue;
    if ((mk.flags & kWild) && !(f & kWild)) refingerprint = true;
    g.tokens.AddFlags(mk.position, mk.flags);
    if (template_slot == slot) template_slot = kNil;
  }
  if (refingerprint) Reindex(slot);
  if (!g.words_keyed) KeyWords(slot);
  // A shape already in the table (this group's, or one whose group did not confirm) keeps
  // its entry; Add looked it up, and nothing changed the table since.
  if (!shape_in_table) {
    if (opt.variable_after_values > 0 && g.tokens.size() == line.tokens.size()) {
      LearnValues(slot, r.message);
    }
    GroupExtras& x = Extras(g);
    if (1 + x.aliases.size() < kMaxAliases) {
      exact.Set(shape, slot);
      x.aliases.push_back(shape);
    }
  }
  if (fp) g.max_distance = std::max(g.max_distance, HammingDistance(*fp, g.fingerprint));
  ++g.count_total;
  // A group that keeps taking lines stays within the bucket scan's reach however many groups
  // of its length open after it (a line with a word where its lines have an empty value,
  // `alice` for `-`, finds it only by the scan): every 16th line moves it to the newest end.
  if ((g.count_total & 15) == 0 && bucket_links[slot].next != kNil) [[unlikely]] {
    if (List* b = buckets.Lookup(BucketKey(g.scope, g.tokens.size())); b != nullptr) {
      BucketUnlink(*b, slot);
      BucketAppend(*b, slot);
    }
  }
  if (g.count_since++ == 0 && (r.origin.stream != 0 || g.extras != nullptr)) {
    Extras(g).since_origin = r.origin;
  }
  g.last.Assign(r);
  g.first_seen = std::min(g.first_seen, r.EventTime());
  g.last_seen = std::max(g.last_seen, r.EventTime());
  g.last_activity = now;
  NoteHost(g, r);
  if (line.peer_size != 0 || g.peer) [[unlikely]] {
    NotePeer(g, r.message);
  }
  NoteSlots(slot, r, sink);  // last: PrefetchSlots' loads arrive meanwhile
  TouchLru(slot);
  ++stats.lines_merged;
  if (opt.annotate) EmitLine(EventKind::kAnnotate, slot, r, g.fingerprint, sink);
}

// A wild position left the group's fingerprint: it moves in the index (a retired group is in
// none), and its scan digest is redone.
void WindowMerger::Impl::Reindex(std::uint32_t slot) {
  SetScanDigest(slot);
  Group& g = groups[slot];
  if (g.words_keyed) KeyWords(slot);
  const std::uint64_t updated = GroupFingerprint(g);
  if (updated == g.fingerprint) return;
  if (g.indexed) index.Erase(g.scope, g.fingerprint, slot);
  g.fingerprint = updated;
  if (g.indexed) index.Insert(g.scope, g.fingerprint, slot);
}

// Opens a group for the line; `wild_at`, when set, is a position already known to vary (a
// stream-learned variable), left out of the fingerprint from the start.
void WindowMerger::Impl::Open(const LogRecord& r, std::uint64_t scope, std::uint64_t fp,
                              std::uint64_t shape, TimeUs now, EventSink& sink,
                              std::uint32_t wild_at) {
  // free_slots is a stack: NewSlot hands back the slot just evicted, blocks and all.
  if (live >= opt.max_groups && lru.head != kNil) {
    Close(lru.head, SummaryReason::kEvicted, sink, /*reuse=*/true);
  }
  const std::uint32_t slot = NewSlot();
  Group& g = groups[slot];
  g.live = true;
  g.id = merger_detail::Mix(opt.id_seed, ++next_id);
  g.scope = scope;
  g.fingerprint = fp;
  g.first.Assign(r, /*tight=*/true);
  g.body = static_cast<std::uint16_t>(line.header.body);
  g.tail = line.header.tail;
  g.tokens.Assign(line.tokens, line.hashes);
  g.retired = false;
  g.words_keyed = false;
  g.dns_known = false;  // DnsWords finds it if ever asked
  g.peer = line.peer_size != 0;
  g.hosts_truncated = false;
  if (wild_at != kNil) {
    g.tokens.AddFlags(wild_at, kWild | kVaried);
    fp = GroupFingerprint(g);
    g.fingerprint = fp;
  }
  SetScanDigest(slot);
  if (template_slot == slot) template_slot = kNil;
  g.count_total = 1;
  g.count_since = 0;
  g.first_seen = g.last_seen = r.EventTime();
  g.last_activity = g.hold_start = now;
  g.max_distance = 0;
  NoteHost(g, r);
  // A line in a crowd (kMaxIndexCandidates SimHash neighbours it fits none of, or a lookup
  // that read CrowdedReads() entries) is one the index answers only with the crowd's
  // nearest members anyway; indexing it too would only lengthen the index's runs of one
  // block value, which every later line of the crowd scans, and which inserts and erases
  // shift (a flood of one prefix and unique last words grew them to the whole merger). Its
  // own lines still find it by their shape and the bucket scan.
  g.indexed = !crowded;
  if (g.indexed) index.Insert(scope, fp, slot);
  exact.Set(shape, slot);
  g.shape = shape;
  AppendToBucket(BucketKey(scope, line.tokens.size()), slot);
  Append<&Group::lru_prev, &Group::lru_next>(lru, slot);
  Append<&Group::hold_prev, &Group::hold_next>(hold, slot);
  ++live;
  ++stats.groups_opened;
  EmitLine(opt.annotate ? EventKind::kAnnotate : EventKind::kFirst, slot, r, fp, sink);
}

// Takes a group out of its bucket's list (the bucket goes when its last group does).
void WindowMerger::Impl::LeaveBucket(std::uint32_t slot) {
  const std::uint64_t bucket_key = BucketKey(groups[slot].scope, groups[slot].tokens.size());
  if (List* b = buckets.Lookup(bucket_key)) {
    // Unlinked in a copy: an emptied list equals the table's empty marker, and must leave
    // the table through Erase, not by being written in place.
    List list = *b;
    BucketUnlink(list, slot);
    if (list.head == kNil) {
      buckets.Erase(bucket_key);
    } else {
      *b = list;
    }
  }
}

void WindowMerger::Impl::Close(std::uint32_t slot, SummaryReason reason, EventSink& sink,
                               bool reuse, bool index_cleared) {
  Group& g = groups[slot];
  if (g.count_since > 0 && !opt.annotate) EmitSummary(slot, reason, true, sink);
  exact.EraseIf(g.shape, slot);
  if (g.extras != nullptr) {
    for (std::uint64_t key : g.extras->aliases) exact.EraseIf(key, slot);
    if (g.extras->words_key != 0) --WordsKeyed(g.tokens.size());
  }
  if (g.indexed && !index_cleared) index.Erase(g.scope, g.fingerprint, slot);
  if (!g.retired) LeaveBucket(slot);  // else Retire took it out of its bucket already
  g.retired = false;
  g.indexed = false;
  g.words_keyed = false;
  Unlink<&Group::lru_prev, &Group::lru_next>(lru, slot);
  Unlink<&Group::hold_prev, &Group::hold_next>(hold, slot);
  g.live = false;
  // A closed group's memory goes back at once: a burst of groups must not stay allocated.
  if (!reuse) {
    g.tokens.Reset();
    g.first.Reset();
  }
  g.last.Reset();
  g.extras.reset();
  if (template_slot == slot) template_slot = kNil;
  free_slots.push_back(slot);
  --live;
  ++stats.groups_closed;
  if (reason == SummaryReason::kEvicted) ++stats.groups_evicted;
}

void WindowMerger::Impl::FlushDue(TimeUs now, EventSink& sink) {
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

// The index holds the open groups only: it is emptied at once after they all closed, not entry
// by entry (erasing 100 k entries one by one shrank and rebuilt its tables all the way down,
// ~4 % of a replay that ends with 100 k groups open).
void WindowMerger::Impl::FlushAll(EventSink& sink) {
  if (lru.head == kNil) return;
  while (lru.head != kNil) {
    Close(lru.head, SummaryReason::kShutdown, sink, /*reuse=*/false, /*index_cleared=*/true);
  }
  index.Clear();
  // The names learned as values go with the groups they were learned in: lines after a flush
  // fold as a new merger's would.
  value_words.Clear();
}

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

void WindowMerger::FlushSalt(std::uint32_t salt, EventSink& sink) {
  Impl& m = *impl_;
  for (std::uint32_t slot = m.lru.head; slot != Impl::kNil;) {
    const std::uint32_t next = m.groups[slot].lru_next;
    if (m.groups[slot].first.scope_salt() == salt) m.Close(slot, SummaryReason::kShutdown, sink);
    slot = next;
  }
}

void WindowMerger::Reconfigure(MergerOptions options, EventSink& sink) {
  Impl& m = *impl_;
  const bool keys_change =
      options.scope != m.opt.scope || options.tokenizer.max_tokens != m.opt.tokenizer.max_tokens ||
      options.weights.word != m.opt.weights.word ||
      options.weights.by_class != m.opt.weights.by_class ||
      options.weights.pairs != m.opt.weights.pairs || options.annotate != m.opt.annotate ||
      options.infer_header != m.opt.infer_header;
  if (keys_change) m.FlushAll(sink);
  // Sibling keys hash the scope and the tokens: learned evidence holds only under the same keys
  // and the same threshold.
  if (keys_change || options.variable_after_values != m.opt.variable_after_values) {
    m.siblings.Clear();
    m.value_words.Clear();
  }
  const bool reindex = options.max_distance != m.opt.max_distance;
  options.id_seed = m.opt.id_seed;  // ids stay unique across a reload
  m.opt = std::move(options);
  m.tokenizer = Tokenizer(m.opt.tokenizer);
  m.fingerprinter = Fingerprinter(m.opt.weights);
  m.ApplyDerived();
  if (reindex) {
    m.index = GroupIndex(m.opt.max_distance);
    for (std::uint32_t s = 0; s < m.groups.size(); ++s) {
      if (m.groups[s].live && m.groups[s].indexed) {
        m.index.Insert(m.groups[s].scope, m.groups[s].fingerprint, s);
      }
    }
  }
  while (m.live > m.opt.max_groups && m.lru.head != Impl::kNil) {
    m.Close(m.lru.head, SummaryReason::kEvicted, sink);
  }
  m.FlushDue(m.latest == INT64_MIN ? 0 : m.latest, sink);
}

TimeUs WindowMerger::NextDeadline() const {
  const Impl& m = *impl_;
  TimeUs next = INT64_MAX;
  if (m.lru.head != Impl::kNil) next = m.groups[m.lru.head].last_activity + m.opt.window_us;
  if (m.hold.head != Impl::kNil) {
    next = std::min(next, m.groups[m.hold.head].hold_start + m.opt.max_hold_us);
  }
  return next;
}

std::size_t WindowMerger::open_groups() const { return impl_->live; }
const MergeDecision& WindowMerger::last_decision() const { return impl_->decision; }
void WindowMerger::ExplainRejections(bool on) { impl_->explain_rejections = on; }
const MergerStats& WindowMerger::stats() const { return impl_->stats; }
const MergerOptions& WindowMerger::options() const { return impl_->opt; }
std::size_t WindowMerger::MemoryUsage() const { return impl_->MemoryUsage(); }

std::size_t WindowMerger::CloseOldest(EventSink& sink) {
  Impl& m = *impl_;
  if (m.lru.head == Impl::kNil) return 0;
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
