// StateStore implementation: atomic file replacement (write, fdatasync, rename, directory
// fsync), the checkpoint writer thread, journal segments with group commit, and recovery reads.
#include "daemon/state/state_store.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "daemon/runtime/thread_name.h"

namespace logfold {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCheckpointPrefix = "worker-";
constexpr std::string_view kCheckpointSuffix = ".state";
constexpr std::string_view kJournalPrefix = "journal-";
constexpr std::string_view kJournalSuffix = ".log";
constexpr std::string_view kSummaryLogInfix = ".summaries-";

std::string SummaryLogName(std::uint32_t worker, std::uint64_t epoch) {
  return std::string(kCheckpointPrefix) + std::to_string(worker) + std::string(kSummaryLogInfix) +
         std::to_string(epoch);
}

// worker-N.summaries-E: N and E, or false.
bool ParseSummaryLogName(std::string_view name, std::uint32_t& worker, std::uint64_t& epoch) {
  const std::size_t infix = name.find(kSummaryLogInfix);
  if (name.substr(0, kCheckpointPrefix.size()) != kCheckpointPrefix ||
      infix == std::string_view::npos) {
    return false;
  }
  const std::string n(name.substr(kCheckpointPrefix.size(), infix - kCheckpointPrefix.size()));
  const std::string e(name.substr(infix + kSummaryLogInfix.size()));
  if (n.empty() || e.empty() || n.size() > 9 || e.size() > 18 ||
      n.find_first_not_of("0123456789") != std::string::npos ||
      e.find_first_not_of("0123456789") != std::string::npos) {
    return false;
  }
  worker = static_cast<std::uint32_t>(std::stoul(n));
  epoch = std::stoull(e);
  return true;
}

bool ReadWholeFile(const std::string& path, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream ss;
  ss << in.rdbuf();
  out = std::move(ss).str();
  return !in.bad();
}

bool WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

void SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

std::string JournalName(std::uint64_t generation, std::uint32_t index) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "journal-%016llx-%08x.log",
                static_cast<unsigned long long>(generation), index);
  return buf;
}

bool StartsEnds(std::string_view s, std::string_view prefix, std::string_view suffix) {
  return s.size() > prefix.size() + suffix.size() && s.substr(0, prefix.size()) == prefix &&
         s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

StateStore::StateStore(StateOptions options, std::uint32_t workers, Metrics& metrics)
    : options_(std::move(options)),
      workers_(std::max<std::uint32_t>(workers, 1)),
      slots_(workers_),
      summary_fds_(workers_, -1),
      checkpoints_(metrics.GetCounter("logfold_checkpoints_total",
                                      "Worker checkpoints written to the state directory")),
      checkpoint_errors_(metrics.GetCounter(
          "logfold_checkpoint_errors_total",
          "Checkpoints or journal writes that failed (the previous checkpoint stays)")),
      checkpoint_bytes_(
          metrics.GetCounter("logfold_checkpoint_bytes_total", "Bytes of checkpoints written")),
      set_aside_(metrics.GetCounter(
          "logfold_state_files_set_aside_total",
          "Corrupt or partial state files moved to corrupt/ in the state directory at start")),
      recovered_groups_(metrics.GetCounter("logfold_recovered_groups_total",
                                           "Open groups restored from checkpoints at start")),
      replayed_lines_(metrics.GetCounter(
          "logfold_journal_replayed_lines_total",
          "Journalled lines the checkpoints did not hold, fed to the engine again at start")),
      journal_syncs_(
          metrics.GetCounter("logfold_journal_syncs_total", "fdatasync calls on the journal")),
      journal_bytes_(
          metrics.GetCounter("logfold_journal_bytes_total", "Bytes appended to the journal")),
      journal_write_errors_(metrics.GetCounter(
          "logfold_journal_write_errors_total",
          "Journal appends that failed (a full disk, EIO); their lines were not accepted")) {}

StateStore::~StateStore() {
  Stop();
  for (int fd : summary_fds_) {
    if (fd >= 0) ::close(fd);
  }
  if (journal_fd_ >= 0) ::close(journal_fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::string StateStore::Path(std::string_view name) const {
  return (fs::path(options_.directory) / name).string();
}

void StateStore::SetAside(const std::string& name, const std::string& why) {
  ++set_aside_;
  std::error_code ec;
  fs::create_directories(Path("corrupt"), ec);
  const std::string to = Path("corrupt/" + name + "." + std::to_string(::time(nullptr)));
  fs::rename(Path(name), to, ec);
  spdlog::error("state: {} is unusable ({}); moved to {}{}", Path(name), why, to,
                ec ? " failed: " + ec.message() : "");
}

bool StateStore::Open(RecoveredState& recovered, std::string& error) {
  std::error_code ec;
  fs::create_directories(options_.directory, ec);
  if (ec) {
    error = "state directory " + options_.directory + ": " + ec.message();
    return false;
  }
  lock_fd_ = ::open(Path("lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    error =
        "state directory " + options_.directory + ": " +
        (lock_fd_ < 0 ? std::string(std::strerror(errno)) : "locked by another logfold process");
    return false;
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(options_.directory, ec)) {
    if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
  }
  if (ec) {
    error = "state directory " + options_.directory + ": " + ec.message();
    return false;
  }
  std::sort(names.begin(), names.end());  // journal files: generation, then index
  std::uint64_t last_generation = 0;
  for (const std::string& name : names) {
    const std::string path = Path(name);
    if (name.size() > 4 && name.substr(name.size() - 4) == ".tmp") {
      fs::remove(path, ec);  // a checkpoint the crash interrupted; the previous one stands
      continue;
    }
    if (RecoveredState::SummaryLog log; ParseSummaryLogName(name, log.worker, log.epoch)) {
      std::string bytes;
      if (!ReadWholeFile(path, bytes)) {
        SetAside(name, "unreadable");
        continue;
      }
      if (std::string why = ParseSummaryLog(bytes, log.records); !why.empty()) {
        spdlog::warn("state: {}: {}; {} records before it are used", path, why, log.records.size());
      }
      recovered.summary_logs.push_back(std::move(log));
      continue;
    }
    const bool checkpoint = StartsEnds(name, kCheckpointPrefix, kCheckpointSuffix);
    const bool journal = StartsEnds(name, kJournalPrefix, kJournalSuffix);
    if (!checkpoint && !journal) continue;
    std::string bytes;
    if (!ReadWholeFile(path, bytes)) {
      SetAside(name, "unreadable");
      continue;
    }
    if (checkpoint) {
      Checkpoint c;
      if (std::string why = ParseCheckpoint(bytes, c); !why.empty()) {
        SetAside(name, why);
        continue;
      }
      last_generation = std::max(last_generation, c.header.journal_generation);
      recovered.checkpoints.push_back(std::move(c));
      continue;
    }
    RecoveredState::Segment seg;
    JournalReader reader(bytes);
    if (std::string why = reader.ReadHeader(seg.header); !why.empty()) {
      SetAside(name, why);
      continue;
    }
    JournalRecord record;
    JournalReader::Status status;
    while ((status = reader.Next(record)) == JournalReader::Status::kRecord) {
    }
    seg.valid_bytes = reader.valid_bytes();
    if (status == JournalReader::Status::kTornTail) {
      spdlog::warn("state: {}: {} (a write the crash cut short); {} bytes of records kept", path,
                   reader.error(), seg.valid_bytes);
    } else if (status == JournalReader::Status::kCorrupt) {
      SetAside(name, reader.error() + "; the records before it are replayed");
    }
    last_generation = std::max(last_generation, seg.header.generation);
    seg.bytes = std::move(bytes);
    recovered.journal.push_back(std::move(seg));
  }
  recovered.last_generation = last_generation;
  generation_ = last_generation + 1;
  return true;
}

bool StateStore::WriteAtomically(const std::string& name, std::string_view bytes,
                                 std::string& error) {
  const std::string path = Path(name), tmp = path + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && WriteAll(fd, bytes) && ::fdatasync(fd) == 0;
  const int saved = errno;
  if (fd >= 0) ::close(fd);
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) ok = false;
  if (!ok) {
    error = path + ": " + std::strerror(ok ? errno : saved);
    ::unlink(tmp.c_str());
    ++checkpoint_errors_;
    return false;
  }
  ++checkpoints_;
  checkpoint_bytes_ += bytes.size();
  return true;
}

bool StateStore::CommitAll(std::span<std::string> checkpoints, bool open_journal,
                           std::string& error) {
  for (std::size_t i = 0; i < checkpoints.size(); ++i) {
    if (!WriteAtomically(
            std::string(kCheckpointPrefix) + std::to_string(i) + std::string(kCheckpointSuffix),
            checkpoints[i], error)) {
      return false;
    }
  }
  SyncDirectory(options_.directory);
  // Only now is every line of the old journal and the old workers' files in the new files.
  if (journal_fd_ >= 0) {
    ::close(journal_fd_);
    journal_fd_ = -1;
    std::lock_guard files(files_mu_);
    journal_files_.clear();
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(options_.directory, ec)) {
    const std::string name = entry.path().filename().string();
    std::uint32_t worker = 0;
    std::uint64_t epoch = 0;
    if (StartsEnds(name, kJournalPrefix, kJournalSuffix) ||
        ParseSummaryLogName(name, worker, epoch)) {
      fs::remove(entry.path(), ec);
    } else if (StartsEnds(name, kCheckpointPrefix, kCheckpointSuffix)) {
      const std::string n =
          name.substr(kCheckpointPrefix.size(),
                      name.size() - kCheckpointPrefix.size() - kCheckpointSuffix.size());
      if (n.find_first_not_of("0123456789") != std::string::npos ||
          std::stoull(n) >= checkpoints.size()) {
        fs::remove(entry.path(), ec);
      }
    }
  }
  SyncDirectory(options_.directory);
  {
    std::lock_guard lock(mu_);
    for (Slot& s : slots_) s.committed_coverage = s.oldest_epoch = 0;
  }
  for (int& fd : summary_fds_) {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  if (options_.journal && open_journal) return OpenJournalSegment(error);
  return true;
}

bool StateStore::OpenJournalSegment(std::string& error) {
  const std::string name = JournalName(generation_, journal_index_);
  const int fd = ::open(Path(name).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    error = Path(name) + ": " + std::strerror(errno);
    return false;
  }
  journal_buf_.clear();
  AppendJournalHeader({generation_, workers_}, journal_buf_);
  if (!WriteAll(fd, journal_buf_) || ::fdatasync(fd) != 0) {
    error = Path(name) + ": " + std::strerror(errno);
    ::close(fd);
    return false;
  }
  SyncDirectory(options_.directory);
  {
    std::unique_lock lock(sync_mu_);
    sync_cv_.wait(lock, [&] { return !syncing_; });
    if (journal_fd_ >= 0) {
      ::fdatasync(journal_fd_);
      ::close(journal_fd_);
      std::lock_guard files(files_mu_);
      journal_files_.push_back({Path(JournalName(generation_, journal_index_ - 1)), journal_seq_});
    }
    journal_fd_ = fd;
    synced_ = appended_;
  }
  journal_file_bytes_ = journal_buf_.size();
  ++journal_index_;
  return true;
}

std::uint64_t StateStore::JournalAppend(std::uint32_t input, TimeUs arrival_us,
                                        std::span<const std::string_view> lines) {
  if (journal_file_bytes_ >= options_.journal_segment_bytes) {
    std::string error;
    if (!OpenJournalSegment(error)) {
      ++checkpoint_errors_;
      spdlog::error("state: cannot start a new journal file ({}); appending to the current one",
                    error);
    }
  }
  if (JournalHeld()) return 0;
  const std::uint64_t seq = journal_seq_ + 1;
  journal_buf_.clear();
  AppendJournalRecord(seq, input, arrival_us, lines, journal_buf_);
  if (!WriteAll(journal_fd_, journal_buf_)) {
    const int err = errno;
    // A record cut short would end the journal for recovery (every record after it would be
    // unreadable), so the file goes back to its last whole record.
    // The descriptor is not O_APPEND: the offset goes back too, or the next record would
    // leave a hole of zeros where the partial one was.
    if (::ftruncate(journal_fd_, static_cast<off_t>(journal_file_bytes_)) != 0 ||
        ::lseek(journal_fd_, static_cast<off_t>(journal_file_bytes_), SEEK_SET) < 0) {
      spdlog::error("state: cannot cut a partial journal record: {}", std::strerror(errno));
    }
    ++journal_write_errors_;
    journal_hold_ = std::min<std::chrono::milliseconds>(
        std::chrono::milliseconds(2000),
        journal_hold_.count() == 0 ? std::chrono::milliseconds(50) : journal_hold_ * 2);
    const auto now = std::chrono::steady_clock::now();
    journal_held_until_ns_.store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     (now + journal_hold_).time_since_epoch())
                                     .count(),
                                 std::memory_order_release);
    ++journal_errors_unlogged_;
    if (now >= journal_error_logged_ + std::chrono::seconds(10)) {
      spdlog::error(
          "state: journal write failed: {}; lines are not accepted until it works "
          "again ({} failed writes)",
          std::strerror(err), journal_errors_unlogged_);
      journal_errors_unlogged_ = 0;
      journal_error_logged_ = now;
    }
    return 0;
  }
  journal_hold_ = std::chrono::milliseconds(0);
  journal_seq_ = seq;
  journal_file_bytes_ += journal_buf_.size();
  journal_bytes_ += journal_buf_.size();
  std::lock_guard lock(sync_mu_);
  appended_ = seq;
  return seq;
}

bool StateStore::JournalHeld() const {
  const std::int64_t until = journal_held_until_ns_.load(std::memory_order_acquire);
  return until != 0 &&
         std::chrono::steady_clock::now().time_since_epoch() < std::chrono::nanoseconds(until);
}

void StateStore::JournalSync() {
  std::unique_lock lock(sync_mu_);
  const std::uint64_t target = appended_;
  while (synced_ < target) {
    if (syncing_) {
      sync_cv_.wait(lock);
      continue;
    }
    syncing_ = true;
    const std::uint64_t upto = appended_;
    const int fd = journal_fd_;
    lock.unlock();
    if (::fdatasync(fd) != 0) {
      ++checkpoint_errors_;
      spdlog::error("state: journal fdatasync failed: {}", std::strerror(errno));
    }
    ++journal_syncs_;
    lock.lock();
    syncing_ = false;
    synced_ = std::max(synced_, upto);
    sync_cv_.notify_all();
  }
}

void StateStore::TrimJournal(std::uint64_t coverage) {
  std::vector<std::string> remove;
  {
    std::lock_guard lock(files_mu_);
    auto it = std::partition(journal_files_.begin(), journal_files_.end(),
                             [&](const JournalFile& f) { return f.max_seq > coverage; });
    for (auto r = it; r != journal_files_.end(); ++r) remove.push_back(r->path);
    journal_files_.erase(it, journal_files_.end());
  }
  for (const std::string& path : remove) ::unlink(path.c_str());
}

void StateStore::Start() {
  thread_ = std::thread([this] { Run(); });
  NameThread(thread_, "lf-state");
}

void StateStore::OpenSummaryLog(std::uint32_t worker, std::uint64_t epoch) {
  int& fd = summary_fds_[worker];
  if (fd >= 0) ::close(fd);
  fd = ::open(Path(SummaryLogName(worker, epoch)).c_str(),
              O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) {
    ++checkpoint_errors_;
    spdlog::error("state: cannot open {}: {}", Path(SummaryLogName(worker, epoch)),
                  std::strerror(errno));
  }
}

void StateStore::AppendSummaryLog(std::uint32_t worker, std::string_view records) {
  const int fd = summary_fds_[worker];
  if (fd < 0 || !WriteAll(fd, records)) ++checkpoint_errors_;
}

void StateStore::Offer(std::uint32_t worker, std::string& checkpoint,
                       std::uint64_t journal_coverage, std::uint64_t summary_epoch) {
  {
    std::lock_guard lock(mu_);
    Slot& s = slots_[worker];
    s.pending.swap(checkpoint);
    s.has_pending = true;
    s.coverage = journal_coverage;
    s.epoch = summary_epoch;
  }
  cv_.notify_one();
}

void StateStore::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void StateStore::Run() {
  std::vector<std::string> writing(workers_);
  std::vector<std::uint64_t> coverage(workers_), epoch(workers_);
  std::vector<std::uint32_t> which;
  while (true) {
    which.clear();
    bool stop;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] {
        return stopping_ || std::any_of(slots_.begin(), slots_.end(),
                                        [](const Slot& s) { return s.has_pending; });
      });
      for (std::uint32_t i = 0; i < workers_; ++i) {
        if (!slots_[i].has_pending) continue;
        slots_[i].has_pending = false;
        writing[i].swap(slots_[i].pending);
        coverage[i] = slots_[i].coverage;
        epoch[i] = slots_[i].epoch;
        which.push_back(i);
      }
      stop = stopping_;
    }
    for (std::uint32_t i : which) {
      std::string error;
      if (!WriteAtomically(
              std::string(kCheckpointPrefix) + std::to_string(i) + std::string(kCheckpointSuffix),
              writing[i], error)) {
        spdlog::error("state: checkpoint not written, the previous one stays: {}", error);
        continue;
      }
      std::uint64_t from = 0;
      {
        std::lock_guard lock(mu_);
        slots_[i].committed_coverage = coverage[i];
        from = std::exchange(slots_[i].oldest_epoch, std::max(slots_[i].oldest_epoch, epoch[i]));
      }
      // Summaries logged before this checkpoint was taken are in it.
      for (std::uint64_t e = from; e < epoch[i]; ++e) ::unlink(Path(SummaryLogName(i, e)).c_str());
    }
    if (!which.empty()) {
      SyncDirectory(options_.directory);
      if (options_.journal) {
        std::uint64_t min_coverage = UINT64_MAX;
        {
          std::lock_guard lock(mu_);
          for (const Slot& s : slots_) min_coverage = std::min(min_coverage, s.committed_coverage);
        }
        TrimJournal(min_coverage);
      }
    }
    if (stop && which.empty()) break;
  }
}

}  // namespace logfold
