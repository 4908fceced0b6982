// WindowMerger: variables learned from the stream. A line that found no group by its template
// is compared, through the SiblingTable, with the lines of its scope that opened groups before
// it and differ from it in one word only: when one word position has shown enough distinct
// values there, that position is a variable, and the line joins the sibling group that has
// become its template (or opens that group, the position already <*>).
#include <algorithm>
#include <array>

#include "pipeline/window_merger_impl.h"

namespace logfold {
namespace {

void AppendDecimal(std::uint32_t v, std::string& out) {
  char buf[12];
  std::size_t n = 0;
  do {
    buf[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) out += buf[--n];
}

// Is `t` quoted alone: a double or single quote, escaped or not, right before it and the same
// quote right after it (`"glx"`, `\"media-top-margin\"`)?
bool QuotedAlone(std::string_view message, const Token& t) {
  const std::size_t end = t.offset + t.length;
  if (t.offset == 0 || end >= message.size()) return false;
  const char q = message[t.offset - 1];
  if (q != '"' && q != '\'') return false;
  return message[end] == q ||
         (message[end] == '\\' && end + 1 < message.size() && message[end + 1] == q);
}

// A name in lower case (alice, www-data, _apt, svc.local): a letter or '_' first, then lower-case
// letters, digits, '-', '_' and '.'.
bool IsValueName(std::string_view w) {
  if (w.size() < 2 || !((w[0] >= 'a' && w[0] <= 'z') || w[0] == '_')) return false;
  for (char c : w) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) {
      return false;
    }
  }
  return true;
}

// Is a field's quoted value a name (`rule manager`, `discovery manager scrape`): at most
// three words of letters, digits, '-', '_', '.' and '/'? A text (an error's: `dial tcp
// 127.0.0.1:9: connect: connection refused`) is not one.
bool IsNameValue(std::string_view v) {
  int words = 1;
  for (std::size_t k = 0; k < v.size(); ++k) {
    const char c = v[k];
    if (c == ' ') {
      if (k == 0 || k + 1 == v.size() || v[k - 1] == ' ' || ++words > 3) return false;
    } else if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9') && c != '-' &&
               c != '_' && c != '.' && c != '/') {
      return false;
    }
  }
  return !v.empty();
}

// Is `t` a field's name, a word with '=' glued after it (`clients=0` / `jobs=3`), or with ':'
// and a blank before a number (`Fetch: 1795885617.70` / `Resp: 1795885617.71`)? A field is
// another part of the record, never a value, however many names a scope has written in one
// place: no learned slot takes it (the matcher rejects a changed field name too).
bool NamesField(std::string_view message, const Token& t) {
  const std::size_t end = t.offset + t.length;
  if (t.cls != TokenClass::kWord || end >= message.size()) return false;
  return message[end] == '=' ||
         (message[end] == ':' && end + 2 < message.size() && message[end + 1] == ' ' &&
          message[end + 2] >= '0' && message[end + 2] <= '9');
}

}  // namespace

// Confirm for a candidate (Fits), learning from a rejection of the line's token count: whether
// every candidate that changes the rejected word is rejected too (rigid_at), and, when the
// candidate differs from the line in that word only, past the first kMaxSiblingPositions
// words, that the position has a sibling and which value it holds there.
bool WindowMerger::Impl::ConfirmCandidate(std::uint32_t slot, std::string_view message) {
  const MatchResult result = matcher.Match(line.View(message), TemplateOf(groups[slot]));
  if (result.accepted) return true;
  decision.reason.assign(MatchReasonText(result.reason));
  const std::uint32_t p = result.position;
  const GroupTokens& t = groups[slot].tokens;
  const std::size_t n = line.tokens.size();
  if (p == MatchResult::kNoPosition || t.size() != n) return false;
  if (rigid_at == kNil && result.reason == MatchReason::kPlainWordOutOfContext &&
      matcher.RejectsAnyChangeAt(line.View(message), p)) {
    rigid_at = p;
  }
  if (opt.variable_after_values == 0 || sibling_hint_count == kMaxSiblingHints ||
      (line.tokens[p].cls != TokenClass::kWord &&
       !(line.learned && IsLearnedName(line.tokens[p].cls, line.hashes[p])))) {
    return false;
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (i != p && t.hash(i) != line.hashes[i]) return false;
  }
  for (std::size_t h = 0; h < sibling_hint_count; ++h) {
    if (sibling_hints[h].position == p) return false;
  }
  std::size_t words_before = 0;
  for (std::size_t i = 0; i < p; ++i) words_before += line.tokens[i].cls == TokenClass::kWord;
  // The first words keep their evidence anyway (SettleBySiblings).
  if (words_before >= kMaxSiblingPositions) sibling_hints[sibling_hint_count++] = {p, t.hash(p)};
  return false;
}

// Does the field whose name hashes to `field_hash` hold names in the current line's scope?
// Asked only where Match would reject a protected word as a field's value (rare), so the
// evidence is read then from the open groups, not kept: the first lines of the scope's
// kNameFieldScan most recently active groups that hold the field (a word, `=` and a value)
// must show K (variable_after_values) different names (plain words, or quoted texts of at
// most three such words) and no text (an error's). The message field is never one.
bool WindowMerger::Impl::LearnedNameFields::HoldsNames(std::uint64_t field_hash) {
  if (field_hash != asked || asked == 0) {
    answer = ReadGroups(field_hash);
    asked = field_hash;
  }
  return answer;
}

bool WindowMerger::Impl::LearnedNameFields::ReadGroups(std::uint64_t field_hash) {
  std::uint64_t names[SiblingTable::kMaxValues];
  std::size_t distinct = 0, read = 0;
  // The scope's groups at every level (the evidence of what a field holds is the scope's).
  std::array<std::uint64_t, 9> scopes;
  scopes[0] = scope;
  for (int severity = 0; severity < 8; ++severity) {
    scopes[static_cast<std::size_t>(severity) + 1] = merger_detail::LevelScope(scope, severity);
  }
  for (std::uint32_t slot = m->lru.tail; slot != kNil && read < kNameFieldScan;
       slot = m->groups[slot].lru_prev, ++read) {
    const Group& g = m->groups[slot];
    if (std::find(scopes.begin(), scopes.end(), g.scope) == scopes.end()) continue;
    const std::string_view message = g.first.message();
    const GroupTokens& t = g.tokens;
    for (std::size_t j = 1; j < t.size(); ++j) {
      if (t.hash(j - 1) != field_hash || t.cls(j - 1) != TokenClass::kWord) continue;
      const Token key = t.token(j - 1), value = t.token(j);
      const std::string_view gap = FieldValueGap(message, key, value);
      if (gap.empty() || IsMessageKey(message.substr(key.offset, key.length))) continue;
      std::uint64_t name = t.hash(j);
      if (gap == "=\"") {
        const std::size_t close = NextQuote(message, value.offset, /*escaped=*/false);
        if (close == std::string_view::npos) continue;
        const std::string_view text = message.substr(value.offset, close - value.offset);
        if (!IsNameValue(text)) return false;  // the field holds texts
        name = XXH3_64bits(text.data(), text.size());
      } else if (value.cls != TokenClass::kWord) {
        continue;  // a number, an address...: a variable by its class already
      }
      if (std::find(names, names + distinct, name) == names + distinct) {
        names[distinct++] = name;
        if (distinct >= k) return true;
      }
    }
  }
  return false;
}

// The open group whose first line is the current line with `value` at `position`, if it is
// still open and still takes lines; kNil otherwise. Found through its shape in the exact table
// (what Open put there), then checked: the table may point elsewhere since.
std::uint32_t WindowMerger::Impl::FindSibling(std::uint64_t scope, std::size_t position,
                                              std::uint64_t value, bool evidence) {
  shape_scratch.assign(line.hashes.begin(), line.hashes.end());
  shape_scratch[position] = value;
  const std::uint64_t key = XXH3_64bits_withSeed(
      shape_scratch.data(), shape_scratch.size() * sizeof(std::uint64_t), scope);
  const std::uint32_t slot = exact.Find(key);
  if (slot == kNil) return kNil;
  const Group& g = groups[slot];
  if (!g.live || g.retired || g.scope != scope || g.tokens.size() != line.hashes.size() ||
      g.tokens.hash(position) != value) {
    return kNil;
  }
  // A group of a protected word or a name in capitals keeps it: it neither takes the others'
  // lines nor retires.
  const Token t = g.tokens.token(position);
  const std::string_view word = g.first.message().substr(t.offset, t.length);
  // A name of what happened (`job-completed`) keeps its group too, but its group is still
  // evidence that the position's values recur elsewhere (`half-installed`, a state).
  if (matcher.NeverLearned(word) || NamesField(g.first.message(), t) ||
      (!evidence && TemplateMatcher::NamesWhatHappened(word))) {
    return kNil;
  }
  return slot;
}

// Takes a group out of matching: its lines go to the group the learned variable chose. It
// keeps its counts and closes as any group does (its summary says what it holds).
void WindowMerger::Impl::Retire(std::uint32_t slot) {
  Group& g = groups[slot];
  if (g.indexed) index.Erase(g.scope, g.fingerprint, slot);
  LeaveBucket(slot);
  g.retired = true;
  g.indexed = false;
}

// Is the entry's position an enumeration rather than a variable? Read only when a position
// reaches K values, from the open groups of the entry's values (the line with that value at
// position i):
// - kElsewhere: half or more of them have taken lines that differ from their first elsewhere,
//   in another token's shape (another package, another id): those values came in several
//   contexts, as an enumeration's do (each package passes through the same states); a
//   variable's do not.
// - kRepeated: more than half of the values before the line's own have come back in a line of
//   their own (their group took a second line): an enumeration's few values each recur
//   (`VCL_return fetch`, `hash`, `fetch`, `deliver`...), while a variable's values (ids,
//   names, paths) keep coming new, most of them once. Asked only when `repeats`: a word quoted
//   alone is a name the program was given (`LoadModule: "glx"`, a module loaded at every
//   start), whose values recur as often as the runs that name them.
WindowMerger::Impl::Enumeration WindowMerger::Impl::RecurElsewhere(const SiblingTable::Entry& e,
                                                                   std::uint64_t scope,
                                                                   std::size_t i, bool repeats) {
  std::size_t recurring = 0, repeated = 0;
  for (std::size_t v = 0; v < e.distinct; ++v) {
    const std::uint32_t slot = FindSibling(scope, i, e.values[v], /*evidence=*/true);
    if (slot == kNil) continue;
    repeated += groups[slot].count_total >= 2;
    const GroupTokens& t = groups[slot].tokens;
    for (std::size_t j = 0; j < t.size(); ++j) {
      if (j != i && (t.flags(j) & kWild)) {
        ++recurring;
        break;
      }
    }
  }
  if (2 * recurring >= e.distinct) return Enumeration::kElsewhere;
  if (repeats && 2 * repeated > e.distinct - 1u) return Enumeration::kRepeated;
  return Enumeration::kNo;
}

// The rule, for any log: a word position where otherwise-identical lines of one scope have
// shown at least K (variable_after_values) distinct words is a variable, unless most of those
// lines repeated a word already seen (an enumeration whose values recur: ACTION_DOWN,
// ACTION_UP, ACTION_DOWN...) or half of those words also came at that position in lines
// that differ elsewhere (an enumeration's values recur across contexts). Protected words never take
// the slot: their lines keep groups of their own. Returns true when the line was settled here
// (joined, or opened the group of the learned template).
bool WindowMerger::Impl::SettleBySiblings(const LogRecord& r, std::uint64_t scope, std::uint64_t fp,
                                          std::uint64_t shape, bool shape_in_table, TimeUs now,
                                          EventSink& sink) {
  const std::size_t n = line.tokens.size();
  // key(i) = the line's key with position i left out: one term per position, summed. The
  // positions that add evidence: the first kMaxSiblingPositions words, then later ones (a
  // long fixed prefix, then the argument) only where a candidate of the line's token count
  // differed from it there alone, with that sibling's value (bounded by kMaxSiblingHints).
  std::uint64_t sum = SiblingKeys::Base(scope, n);
  std::uint32_t at[kMaxSiblingPositions + kMaxSiblingHints];
  std::size_t words = 0, count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (line.tokens[i].cls == TokenClass::kWord ||
        (line.learned && IsLearnedName(line.tokens[i].cls, line.hashes[i]))) {
      ++words;
      if (count < kMaxSiblingPositions) at[count++] = static_cast<std::uint32_t>(i);
    }
    sum += SiblingKeys::Term(line.hashes[i], i);
  }
  if (words < 2) return false;  // a word alone, or among variables only, is no context
  const std::uint32_t k = static_cast<std::uint32_t>(
      std::min<std::size_t>(opt.variable_after_values, SiblingTable::kMaxValues));
  std::size_t variable_at = n, recurring_at = n;
  std::uint64_t variable_key = 0;
  bool flipped_now = false, repeated = false;
  const std::size_t first_words = count;
  for (std::size_t h = 0; h < sibling_hint_count; ++h) at[count++] = sibling_hints[h].position;
  for (std::size_t c = 0; c < count; ++c) {
    const std::size_t i = at[c];
    const Token& t = line.tokens[i];
    const std::uint64_t key = SiblingKeys::Key(sum, line.hashes[i], i);
    SiblingTable::Entry& e = siblings.Touch(key);
    // A hinted position's sibling opened its group before this position was watched.
    if (c >= first_words) {
      const std::uint64_t sibling = sibling_hints[c - first_words].value;
      if (e.distinct < SiblingTable::kMaxValues && !SiblingTable::Holds(e, sibling)) {
        SiblingTable::Note(e, sibling);
      }
    }
    SiblingTable::Note(e, line.hashes[i]);
    if (e.distinct > decision.sibling_values) {
      decision.sibling_values = e.distinct;
      decision.sibling_position = static_cast<int>(i);
    }
    if (variable_at != n || e.distinct < k) continue;
    // A protected word or a name in capitals (an enumeration's constant: MX, SIGTERM) never
    // takes a learned slot (checked only here: most lines that open a group have no position
    // with enough values, and the lookup costs a hash a word).
    const std::string_view word = std::string_view(r.message).substr(t.offset, t.length);
    if (matcher.NeverLearned(word) || NamesField(r.message, t) ||
        TemplateMatcher::NamesWhatHappened(word)) {
      continue;
    }
    const bool was_variable = e.variable;
    if (!e.variable && e.sightings <= 2u * e.distinct) {
      const Enumeration why = RecurElsewhere(e, scope, i, !QuotedAlone(r.message, t));
      if (why != Enumeration::kNo) {
        recurring_at = i;
        repeated = why == Enumeration::kRepeated;
      } else {
        e.variable = true;
      }
    }
    if (e.variable) {
      variable_at = i;
      variable_key = key;
      flipped_now = !was_variable;
    }
  }
  if (variable_at == n) {
    if (recurring_at != n) {
      decision.sibling_position = static_cast<int>(recurring_at);
      decision.reason =
          repeated ? "not a learned variable: most values at this position came back in lines of "
                     "their own (an enumeration)"
                   : "not a learned variable: the values at this position also came in lines "
                     "that differ elsewhere (an enumeration)";
    }
    return false;
  }
  SiblingTable::Entry* e = siblings.Find(variable_key);
  if (e == nullptr) return false;  // evicted by the line's own later positions
  decision.sibling_position = static_cast<int>(variable_at);
  decision.sibling_values = e->distinct;
  // The group that takes these lines: the latest one opened already varied, else the first
  // sibling still open in the order their values came (the line's own value has no group
  // that takes lines: the exact lookup found none).
  const std::uint64_t own = line.hashes[variable_at];
  std::uint32_t anchor = e->anchor_value != 0 && e->anchor_value != own
                             ? FindSibling(scope, variable_at, e->anchor_value)
                             : kNil;
  for (std::size_t v = 0; v < e->distinct && anchor == kNil; ++v) {
    if (e->values[v] != own) anchor = FindSibling(scope, variable_at, e->values[v]);
  }
  if (flipped_now) {
    // The other siblings still open hand their future lines to the anchor and close normally.
    for (std::size_t v = 0; v < e->distinct; ++v) {
      const std::uint32_t s = FindSibling(scope, variable_at, e->values[v]);
      if (s != kNil && s != anchor) Retire(s);
    }
  }
  decision.reason = "learned variable: otherwise-identical lines of this scope have shown ";
  AppendDecimal(e->distinct, decision.reason);
  decision.reason += " distinct words at this position";
  if (anchor == kNil) {
    e->anchor_value = own;
    Open(r, scope, fp, shape, now, sink, static_cast<std::uint32_t>(variable_at));
    return true;
  }
  Group& g = groups[anchor];
  if (!(g.tokens.flags(variable_at) & kWild)) {
    g.tokens.AddFlags(variable_at, kWild | kVaried);
    if (template_slot == anchor) template_slot = kNil;
    Reindex(anchor);
  }
  ++decision.candidates;
  ++stats.candidates_checked;
  // Confirm keeps the reason when it accepts. A rejection (the anchor's template moved
  // elsewhere since) leaves the line to a group of its own.
  if (!Confirm(g, r.message)) return false;
  decision.path = MergeDecision::kSibling;
  decision.group_id = g.id;
  decision.group_fingerprint = g.fingerprint;
  decision.distance = HammingDistance(fp, g.fingerprint);
  Join(anchor, r, fp, shape, shape_in_table, now, sink);
  return true;
}

// A word the scope has written as a key's value is a value wherever its lines write it: such
// words take the class of a name by its kind (a host's), so `(to alice) root on none` and
// `(to bob) alice on none` differ in values only. Not a word that names a field there
// (`alice=1`).
void WindowMerger::Impl::MaskValues(std::uint64_t scope, std::string_view message) {
  for (std::size_t i = 0; i < line.tokens.size(); ++i) {
    Token& t = line.tokens[i];
    if (t.cls != TokenClass::kWord || !value_words.Holds(ValueWords::Key(scope, line.hashes[i]))) {
      continue;
    }
    const std::size_t end = t.offset + t.length;
    if (end < message.size() && message[end] == '=') continue;
    // Its hash stays its text's: lines that came before it was learned keep their shape and
    // groups, and a group whose first line has it as a plain word agrees with it.
    t.cls = TokenClass::kHostPort;
    line.learned = true;
  }
}

// After a line of a new shape joined group `slot` (of its token count): the plain words at
// positions that vary, written as a key's value on the line (`user carol`, `ruser=dave`) with
// the key kept, are values of the scope, and so is the group's first word there. Names in
// lower case only: a protected word, a name in capitals (an enumeration's constant) or a value
// key (`invalid user user`) never is one.
void WindowMerger::Impl::LearnValues(std::uint32_t slot, std::string_view message) {
  const Group& g = groups[slot];
  const GroupTokens& t = g.tokens;
  const MatchLine view = line.View(message);
  const auto learnable = [this](std::string_view w) {
    return IsValueName(w) && !matcher.IsProtectedWord(w) && !TemplateMatcher::IsConstantName(w) &&
           !matcher.IsValueKey(w);
  };
  for (std::size_t i = 1; i < t.size(); ++i) {
    if (!(t.flags(i) & kWild) || (t.flags(i - 1) & kWild) || t.hash(i - 1) != line.hashes[i - 1] ||
        !matcher.KeysValue(view, i)) {
      continue;
    }
    const Token& lt = line.tokens[i];
    if (!learnable(message.substr(lt.offset, lt.length))) continue;
    value_words.Note(ValueWords::Key(line.scope, line.hashes[i]));
    const Token gt = t.token(i);
    if (gt.cls == TokenClass::kWord && learnable(g.first.message().substr(gt.offset, gt.length))) {
      value_words.Note(ValueWords::Key(line.scope, t.hash(i)));
    }
  }
}

}  // namespace logfold
