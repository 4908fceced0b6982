// Test fixture: a private single-node Apache Kafka broker (KRaft mode, broker and controller in
// one JVM) on free loopback ports, with its own config and data dir, started from the jars
// scripts/kafka-fixture caches; and small librdkafka helpers to create topics, produce, and
// read what was committed.
#ifndef LOGFOLD_TESTS_SUPPORT_KAFKA_BROKER_H_
#define LOGFOLD_TESTS_SUPPORT_KAFKA_BROKER_H_

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace kafka_test {

using daemon_test::TempDir;
using std::chrono::milliseconds;

// Where scripts/kafka-fixture put the broker's jars: $LOGFOLD_KAFKA_JARS, else
// ~/.cache/logfold/kafka-broker. Empty when they are not there (the tests then skip).
inline std::string JarsDir() {
  std::string dir;
  if (const char* env = std::getenv("LOGFOLD_KAFKA_JARS"); env != nullptr && *env != '\0') {
    dir = env;
  } else if (const char* home = std::getenv("HOME"); home != nullptr) {
    dir = std::string(home) + "/.cache/logfold/kafka-broker";
  }
  if (dir.empty() || !std::filesystem::exists(std::filesystem::path(dir) / "VERSION")) return "";
  return dir;
}

// Why a test that needs the broker cannot run here, or "" when it can: Debian's uninstrumented
// librdkafka crashes inside the TSan runtime, and the jars may not be fetched. Defined in the
// header so that the sanitizer macros are the including test's.
inline std::string WhyBrokerTestsCannotRun() {
#if defined(__SANITIZE_THREAD__)
  return "librdkafka crashes under ThreadSanitizer (uninstrumented)";
#else
  return JarsDir().empty() ? "Kafka broker jars missing (run scripts/kafka-fixture)" : "";
#endif
}

// How many times longer the tests' waits may take: under a sanitizer the daemon runs
// several times slower. In the header, so that the sanitizer macros are the including test's.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr int kSlowdown = 3;
#else
inline constexpr int kSlowdown = 1;
#endif

inline std::uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in a = daemon_test::Loopback(0);
  socklen_t len = sizeof a;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  ::close(fd);
  return port;
}

// A librdkafka handle with its configuration, destroyed with it.
struct KafkaHandle {
  rd_kafka_t* rk = nullptr;
  KafkaHandle() = default;
  KafkaHandle(const KafkaHandle&) = delete;
  KafkaHandle& operator=(const KafkaHandle&) = delete;
  ~KafkaHandle() {
    if (rk != nullptr) rd_kafka_destroy(rk);
  }
};

// A producer (or admin client) for `brokers`; `extra` are more properties. Null on failure.
inline std::unique_ptr<KafkaHandle> MakeProducer(
    const std::string& brokers,
    const std::vector<std::pair<std::string, std::string>>& extra = {}) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  auto set = [&](const std::string& k, const std::string& v) {
    return rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) == RD_KAFKA_CONF_OK;
  };
  bool ok = set("bootstrap.servers", brokers) && set("linger.ms", "5") && set("acks", "all") &&
            set("log_level", "2");
  for (const auto& [k, v] : extra) ok = ok && set(k, v);
  if (!ok) {
    rd_kafka_conf_destroy(conf);
    return nullptr;
  }
  auto h = std::make_unique<KafkaHandle>();
  h->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (h->rk == nullptr) return nullptr;
  return h;
}

// Creates `topic` with `partitions` partitions (replication 1) and the topic `configs` (e.g.
// {"cleanup.policy", "compact"}). True when created or it already exists; `error` says why
// not otherwise.
inline bool CreateTopic(const std::string& brokers, const std::string& topic, int partitions,
                        std::string& error,
                        const std::vector<std::pair<std::string, std::string>>& configs = {}) {
  auto admin = MakeProducer(brokers);
  if (!admin) {
    error = "cannot create an admin client";
    return false;
  }
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  if (nt == nullptr) {
    error = err;
    return false;
  }
  for (const auto& [key, value] : configs) {
    rd_kafka_NewTopic_set_config(nt, key.c_str(), value.c_str());
  }
  rd_kafka_queue_t* q = rd_kafka_queue_new(admin->rk);
  rd_kafka_CreateTopics(admin->rk, &nt, 1, nullptr, q);
  bool ok = false;
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  if (ev == nullptr) {
    error = "CreateTopics timed out";
  } else if (rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    error = rd_kafka_event_error_string(ev);
  } else {
    size_t n = 0;
    const rd_kafka_topic_result_t** results =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &n);
    ok = n == 1 &&
         (rd_kafka_topic_result_error(results[0]) == RD_KAFKA_RESP_ERR_NO_ERROR ||
          rd_kafka_topic_result_error(results[0]) == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS);
    if (!ok && n == 1) error = rd_kafka_topic_result_error_string(results[0]);
  }
  if (ev != nullptr) rd_kafka_event_destroy(ev);
  rd_kafka_queue_destroy(q);
  rd_kafka_NewTopic_destroy(nt);
  return ok;
}

// The exactly-once changelog: a compacted topic.
inline bool CreateCompactedTopic(const std::string& brokers, const std::string& topic,
                                 int partitions, std::string& error) {
  return CreateTopic(brokers, topic, partitions, error, {{"cleanup.policy", "compact"}});
}

// The topics of the exactly-once tests: "logs" (the input, `partitions`), "events" (the
// output, `output_partitions`) and the compacted "changelog" (as many partitions as the
// input). False with the reason in `error`.
inline bool CreateExactlyOnceTopics(const std::string& brokers, int partitions,
                                    int output_partitions, std::string& error) {
  return CreateTopic(brokers, "logs", partitions, error) &&
         CreateTopic(brokers, "events", output_partitions, error) &&
         CreateCompactedTopic(brokers, "changelog", partitions, error);
}

// Produces each value (keyed by `keys[i % keys.size()]` when keys are given) to `topic`,
// letting the partitioner pick by key unless `partition` is given, and waits until every one
// was acknowledged. Returns how many failed (0 on success). `extra`: more producer properties
// (e.g. batch sizes).
inline std::size_t Produce(const std::string& brokers, const std::string& topic,
                           const std::vector<std::string>& values,
                           const std::vector<std::string>& keys = {},
                           std::vector<std::pair<std::string, std::string>> extra = {},
                           std::int32_t partition = RD_KAFKA_PARTITION_UA) {
  extra.emplace_back("enable.idempotence", "true");
  auto p = MakeProducer(brokers, extra);
  if (!p) return values.size();
  std::size_t failed = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string* key = keys.empty() ? nullptr : &keys[i % keys.size()];
    const char* key_data = key != nullptr ? key->data() : nullptr;
    const std::size_t key_size = key != nullptr ? key->size() : 0;
    while (true) {
      const rd_kafka_resp_err_t err =
          rd_kafka_producev(p->rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                            RD_KAFKA_V_VALUE(const_cast<char*>(values[i].data()), values[i].size()),
                            RD_KAFKA_V_KEY(key_data, key_size), RD_KAFKA_V_PARTITION(partition),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(p->rk, 50);
        continue;
      }
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) ++failed;
      break;
    }
    rd_kafka_poll(p->rk, 0);
  }
  if (rd_kafka_flush(p->rk, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR) return values.size();
  return failed;
}

// Sum over the topic's partitions of the committed offsets of `group` (-1 when none is
// committed counts 0).
inline std::int64_t CommittedTotal(const std::string& brokers, const std::string& group,
                                   const std::string& topic, int partitions) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", group.c_str(), err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  if (rk == nullptr) return -1;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int i = 0; i < partitions; ++i) rd_kafka_topic_partition_list_add(list, topic.c_str(), i);
  std::int64_t total = -1;
  if (rd_kafka_committed(rk, list, 10000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    total = 0;
    for (int i = 0; i < list->cnt; ++i) total += std::max<std::int64_t>(0, list->elems[i].offset);
  }
  rd_kafka_topic_partition_list_destroy(list);
  rd_kafka_destroy(rk);
  return total;
}

// Sum over the topic's partitions of the high watermarks (records ever produced, for a
// topic without transactions or compaction), or -1 when they cannot be queried.
inline std::int64_t HighWatermarkTotal(const std::string& brokers, const std::string& topic,
                                       int partitions) {
  auto p = MakeProducer(brokers);
  if (!p) return -1;
  std::int64_t total = 0;
  for (int i = 0; i < partitions; ++i) {
    std::int64_t low = 0, high = 0;
    if (rd_kafka_query_watermark_offsets(p->rk, topic.c_str(), i, &low, &high, 10000) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      return -1;
    }
    total += high;
  }
  return total;
}

// Calls visit(partition, offset, value) for every committed record of `topic` (read with
// isolation.level=read_committed up to each partition's end).
inline void ReadTopic(
    const std::string& brokers, const std::string& topic, int partitions,
    const std::function<void(int partition, std::int64_t offset, std::string_view value)>& visit) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char err[512];
  rd_kafka_conf_set(conf, "bootstrap.servers", brokers.c_str(), err, sizeof err);
  rd_kafka_conf_set(conf, "group.id", "test-reader", err, sizeof err);
  rd_kafka_conf_set(conf, "isolation.level", "read_committed", err, sizeof err);
  rd_kafka_conf_set(conf, "enable.partition.eof", "true", err, sizeof err);
  rd_kafka_conf_set(conf, "enable.auto.commit", "false", err, sizeof err);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof err);
  ASSERT_NE(rk, nullptr) << err;
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int i = 0; i < partitions; ++i) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), i)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  int at_end = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (at_end < partitions && std::chrono::steady_clock::now() < deadline) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 500);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      ++at_end;
    } else if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR && m->payload != nullptr) {
      visit(m->partition, m->offset,
            std::string_view(static_cast<const char*>(m->payload), m->len));
    }
    rd_kafka_message_destroy(m);
  }
  EXPECT_EQ(at_end, partitions) << "did not read " << topic << " to its end within 60 s";
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

// Every committed record value of `topic`, parsed as JSON; a value that is not a JSON object
// fails the test.
inline std::vector<daemon_test::Json> ReadCommitted(const std::string& brokers,
                                                    const std::string& topic, int partitions) {
  std::vector<daemon_test::Json> events;
  ReadTopic(brokers, topic, partitions, [&](int, std::int64_t, std::string_view value) {
    daemon_test::Json e = daemon_test::Json::parse(value, nullptr, false);
    EXPECT_TRUE(e.is_object()) << "not an event in " << topic;
    if (e.is_object()) events.push_back(std::move(e));
  });
  return events;
}

// Open groups an exactly-once run restored from the changelog, from its log ("restored N
// open group(s)").
inline std::uint64_t RestoredGroups(const std::string& log) {
  std::uint64_t n = 0;
  for (std::size_t at = log.find("restored "); at != std::string::npos;
       at = log.find("restored ", at + 1)) {
    n += std::strtoull(log.c_str() + at + 9, nullptr, 10);
  }
  return n;
}

// The broker: Start() formats a fresh data dir (kafka.tools.StorageTool) and starts
// kafka.Kafka on free loopback ports, waiting until it answers metadata requests; Stop()
// or the destructor kills it.
class KafkaBroker {
 public:
  explicit KafkaBroker(const TempDir& dir) : root_(dir / "kafka") {}
  ~KafkaBroker() { daemon_test::KillAndReap(pid_); }
  KafkaBroker(const KafkaBroker&) = delete;
  KafkaBroker& operator=(const KafkaBroker&) = delete;

  // False with the reason in error(); "jars missing" when scripts/kafka-fixture has not run.
  // A few tries on fresh ports when another process took a picked port before the broker
  // bound it (tests run in parallel and a picked port is free only until someone binds it).
  bool Start(milliseconds timeout = milliseconds(90000)) {
    jars_ = JarsDir();
    if (jars_.empty()) {
      error_ = "Kafka broker jars missing: run scripts/kafka-fixture";
      return false;
    }
    if (!daemon_test::HaveProgram("java")) {
      error_ = "java is not installed";
      return false;
    }
    for (int attempt = 0; attempt < 4; ++attempt) {
      if (StartOnFreshPorts(timeout)) return true;
      if (error_.find("Address already in use") == std::string::npos) break;
      Stop();
    }
    return false;
  }

  void Stop() {
    daemon_test::KillAndReap(pid_);
    pid_ = -1;
  }

  // SIGSTOP hangs the broker (connections stay open, nothing is answered); SIGCONT resumes it.
  bool Signal(int signo) const { return pid_ > 0 && ::kill(pid_, signo) == 0; }

  std::string brokers() const { return "127.0.0.1:" + std::to_string(port_); }
  const std::string& error() const { return error_; }
  std::string Log() const {
    return daemon_test::ReadFile(root_ / "broker.out") +
           daemon_test::ReadFile(root_ / "broker.err");
  }

 private:
  bool StartOnFreshPorts(milliseconds timeout) {
    std::filesystem::remove_all(root_ / "data");
    std::filesystem::create_directories(root_ / "data");
    if (!PickTwoPorts()) {
      error_ = "no free loopback port";
      return false;
    }
    WriteConfig();
    // A cluster id is 16 random bytes in URL-safe base64 without padding (22 characters).
    static constexpr char kB64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::random_device rd;
    std::string cluster_id;
    for (int i = 0; i < 21; ++i) cluster_id += kB64[rd() % 64];
    cluster_id += kB64[(rd() % 4) * 16];  // the last character carries 2 bits of data
    const std::string config = (root_ / "server.properties").string();
    // "--cluster-id=<id>" as one argument: an id may start with '-', which kafka-storage's
    // parser would take for an option if the id were an argument of its own.
    const pid_t format = daemon_test::Spawn(
        Java({"kafka.tools.StorageTool", "format", "--cluster-id=" + cluster_id, "-c", config}),
        (root_ / "format.out").string(), (root_ / "format.err").string());
    if (daemon_test::WaitExit(format, milliseconds(60000)) != 0) {
      error_ = "storage format failed: " + daemon_test::ReadFile(root_ / "format.out") +
               daemon_test::ReadFile(root_ / "format.err");
      return false;
    }
    pid_ = daemon_test::Spawn(Java({"kafka.Kafka", config}), (root_ / "broker.out").string(),
                              (root_ / "broker.err").string());
    if (pid_ < 0) {
      error_ = "cannot start java";
      return false;
    }
    if (!WaitReady(timeout)) {
      error_ = "broker not ready: " + Log();
      return false;
    }
    return true;
  }

  // Two distinct free ports: the first socket stays bound while the second is picked, so the
  // kernel cannot hand out the same port twice.
  bool PickTwoPorts() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return false;
    sockaddr_in a = daemon_test::Loopback(0);
    socklen_t len = sizeof a;
    const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
                       ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0;
    port_ = bound ? ntohs(a.sin_port) : 0;
    controller_port_ = bound ? FreePort() : 0;
    ::close(fd);
    return port_ != 0 && controller_port_ != 0;
  }

  std::vector<std::string> Java(std::vector<std::string> args) const {
    // Small and quick to start: one core's worth of GC, C1 only, a small heap.
    std::vector<std::string> argv = {
        "java",
        "-Xms128m",
        "-Xmx384m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        "-Djava.awt.headless=true",
        "-Dlog4j.configuration=file:" + (root_ / "log4j.properties").string(),
        "-cp",
        jars_ + "/*"};
    for (std::string& a : args) argv.push_back(std::move(a));
    return argv;
  }

  void WriteConfig() const {
    const std::string p = std::to_string(port_), c = std::to_string(controller_port_);
    daemon_test::WriteFile(
        root_ / "server.properties",
        "process.roles=broker,controller\n"
        "node.id=1\n"
        "controller.quorum.voters=1@127.0.0.1:" +
            c +
            "\n"
            "listeners=PLAINTEXT://127.0.0.1:" +
            p + ",CONTROLLER://127.0.0.1:" + c +
            "\n"
            "advertised.listeners=PLAINTEXT://127.0.0.1:" +
            p +
            "\n"
            "controller.listener.names=CONTROLLER\n"
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT\n"
            "inter.broker.listener.name=PLAINTEXT\n"
            "log.dirs=" +
            (root_ / "data").string() +
            "\n"
            "num.partitions=1\n"
            "offsets.topic.replication.factor=1\n"
            "offsets.topic.num.partitions=3\n"
            "transaction.state.log.replication.factor=1\n"
            "transaction.state.log.min.isr=1\n"
            "transaction.state.log.num.partitions=3\n"
            "group.initial.rebalance.delay.ms=0\n"
            // Lets tests detect a killed consumer group member within a second or two, and
            // abort a transaction that timed out within a second of its timeout.
            "group.min.session.timeout.ms=1000\n"
            "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000\n"
            "auto.create.topics.enable=false\n"
            "message.max.bytes=1048576\n");
    daemon_test::WriteFile(root_ / "log4j.properties",
                           "log4j.rootLogger=WARN, stderr\n"
                           "log4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
                           "log4j.appender.stderr.Target=System.err\n"
                           "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"
                           "log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\n");
  }

  bool WaitReady(milliseconds timeout) {
    auto admin = MakeProducer(brokers());
    if (!admin) return false;
    return daemon_test::WaitUntil(
               [&] {
                 if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
                   pid_ = -1;
                   return true;  // exited: not ready, reported below
                 }
                 const rd_kafka_metadata_t* md = nullptr;
                 if (rd_kafka_metadata(admin->rk, 0, nullptr, &md, 1000) !=
                     RD_KAFKA_RESP_ERR_NO_ERROR) {
                   return false;
                 }
                 const bool up = md->broker_cnt > 0;
                 rd_kafka_metadata_destroy(md);
                 return up;
               },
               timeout, milliseconds(200)) &&
           pid_ > 0;
  }

  std::filesystem::path root_;
  std::string jars_;
  std::string error_;
  std::uint16_t port_ = 0, controller_port_ = 0;
  pid_t pid_ = -1;
};

// SIGTERMs `daemon` while `broker` is paused (SIGSTOP), waits up to `shutdown_timeout` plus slack
// for the exit, then resumes the broker: the exit code if it exited in time, and how long it took.
struct StopAtAHungBroker {
  std::optional<int> code;
  std::chrono::milliseconds took{0};
};
inline StopAtAHungBroker StopWhileTheBrokerHangs(daemon_test::DaemonProcess& daemon,
                                                 const KafkaBroker& broker,
                                                 std::chrono::milliseconds shutdown_timeout) {
  StopAtAHungBroker stop;
  if (!broker.Signal(SIGSTOP)) return stop;
  const auto start = std::chrono::steady_clock::now();
  if (daemon.Signal(SIGTERM)) {
    // The bound plus slack for the process's own exit (a loaded box, sanitizers).
    stop.code = daemon.WaitExit(shutdown_timeout + std::chrono::milliseconds(3000 * kSlowdown));
  }
  stop.took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  broker.Signal(SIGCONT);
  if (stop.code.has_value()) {
    std::printf("stopped in %lld ms with the broker hung (shutdown_timeout %lld ms)\n",
                static_cast<long long>(stop.took.count()),
                static_cast<long long>(shutdown_timeout.count()));
  }
  return stop;
}

}  // namespace kafka_test
}  // namespace logfold

#endif  // LOGFOLD_TESTS_SUPPORT_KAFKA_BROKER_H_
