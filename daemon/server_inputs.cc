// The Server's inputs (one listener or reader per configured input, inherited systemd sockets),
// the TLS contexts of tls inputs and the metrics endpoint, and the metrics endpoint itself.
#include <malloc.h>
#include <sys/socket.h>

#include <boost/asio/post.hpp>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/server_impl.h"

namespace logfold {
namespace {

// Journal mode: TCP bytes read per receive (each delivery waits for one fdatasync).
constexpr std::size_t kJournalReadSize = 1 << 20;

// The runtime form of a tls input's "tls" block (every field; defaults are the config's).
TlsServerOptions TlsOptions(const TlsServerConfig& t) {
  TlsServerOptions o{};
  o.cert_file = t.cert_file;
  o.key_file = t.key_file;
  o.password_file = t.password_file;
  o.ca_file = t.ca_file;
  o.min_version = t.min_version == TlsMinVersion::kTls13 ? TlsVersion::kTls13 : TlsVersion::kTls12;
  o.ciphers = t.ciphers;
  o.client_auth = t.client_auth == TlsClientAuth::kRequired   ? ClientAuth::kRequired
                  : t.client_auth == TlsClientAuth::kOptional ? ClientAuth::kOptional
                                                              : ClientAuth::kNone;
  o.permitted_peers = t.permitted_peers;
  return o;
}

// The first content byte auto framing requires of an octet-counted frame, by input format.
char OctetContentStart(InputFormat format) {
  return format == InputFormat::kSyslog ? '<' : format == InputFormat::kJson ? '{' : '\0';
}

}  // namespace

// Builds the TLS context of every tls input in `c`, reading each certificate, key and CA
// file now. Empty on success; else the first failure, naming the input and the file.
std::string BuildTlsContexts(const Config& c,
                             std::vector<std::shared_ptr<const TlsServerContext>>& out) {
  out.clear();
  for (const InputConfig& in : c.inputs) {
    if (in.type != InputType::kTls) continue;
    std::string error;
    auto context = MakeTlsServerContext(TlsOptions(in.tls.tls), error);
    if (!context) return "input " + in.name + ": " + error;
    out.push_back(std::move(context));
  }
  return "";
}

// The metrics endpoint's TLS context when it has a "tls" block (null otherwise), reading the
// files now. Empty on success; else why it failed, naming the file.
std::string BuildMetricsTls(const MetricsConfig& m, std::shared_ptr<const TlsServerContext>& out) {
  out.reset();
  if (!m.enabled || !m.tls) return "";
  std::string error;
  out = MakeTlsServerContext(TlsOptions(m.tls_options), error);
  return out ? "" : "metrics: " + error;
}

void Server::StartInputs() {
  for (std::size_t i = 0; i < config_.inputs.size(); ++i) {
    try {
      StartInput(i);
    } catch (const std::exception& e) {
      throw std::runtime_error(InputLabel(config_.inputs[i]) + ": " + e.what());
    }
  }
}

// "input \"syslog-tcp\" (tcp 127.0.0.1:514)", "input \"local\" (unix datagram /dev/log)":
// which input failed, and where it listens.
std::string Server::InputLabel(const InputConfig& in) {
  std::string label = "input \"" + in.name + "\"";
  if (in.type == InputType::kUnix) {
    const bool stream = in.unix_socket.socket_type == UnixSocketType::kStream;
    return label + (stream ? " (unix stream " : " (unix datagram ") + in.unix_socket.path + ")";
  }
  if (in.type == InputType::kRelp) {
    const bool v6 = in.relp.address.find(':') != std::string::npos;
    return label + " (relp " + (v6 ? "[" + in.relp.address + "]" : in.relp.address) + ":" +
           std::to_string(in.relp.port) + ")";
  }
  if (in.type != InputType::kUdp && in.type != InputType::kTcp) return label;
  const bool udp = in.type == InputType::kUdp;
  const std::string& socket_name = udp ? in.udp.socket_name : in.tcp.socket_name;
  const std::string& address = udp ? in.udp.address : in.tcp.address;
  const std::uint16_t port = udp ? in.udp.port : in.tcp.port;
  label += udp ? " (udp " : " (tcp ";
  if (!socket_name.empty()) return label + "inherited socket " + socket_name + ")";
  const bool v6 = address.find(':') != std::string::npos;
  return label + (v6 ? "[" + address + "]" : address) + ":" + std::to_string(port) + ")";
}

void Server::StartInput(std::size_t i) {
  const InputConfig& in = config_.inputs[i];
  const auto id = static_cast<std::uint32_t>(i);
  // An inherited systemd socket, by name: the listener adopts its descriptor.
  auto adopt = [&](const std::string& socket_name, int type) {
    if (socket_name.empty()) return -1;
    const int fd = inherited_.Take(socket_name, type);
    if (fd < 0) {
      throw std::runtime_error("input " + in.name + ": no inherited socket named \"" + socket_name +
                               "\"");
    }
    return fd;
  };
  switch (in.type) {
    case InputType::kUdp: {
      UdpListener::Options o = in.udp;
      o.adopted_fd = adopt(o.socket_name, SOCK_DGRAM);
      auto l = std::make_unique<UdpListener>(id, in.name, o, io_, *pool_, metrics_);
      l->Start();
      udp_.push_back(std::move(l));
      break;
    }
    case InputType::kTcp: {
      TcpListener::Options o = in.tcp;
      o.adopted_fd = adopt(o.socket_name, SOCK_STREAM);
      if (config_.state.journal) o.read_size = kJournalReadSize;
      o.octet_content_start = OctetContentStart(in.parser.format);
      auto l = std::make_unique<TcpListener>(id, in.name, o, io_, *pool_, metrics_, budget_.get());
      l->Start();
      tcp_.push_back(std::move(l));
      break;
    }
    case InputType::kTls: {
      TcpListener::Options o = in.tls.Stream();
      o.adopted_fd = adopt(o.socket_name, SOCK_STREAM);
      if (config_.state.journal) o.read_size = kJournalReadSize;
      o.octet_content_start = OctetContentStart(in.parser.format);
      auto l = std::make_unique<TcpListener>(
          id, in.name, o, io_, *pool_, metrics_, budget_.get(),
          TcpListener::Tls{.context = tls_contexts_.at(tls_.size()),
                           .handshake_timeout_us = in.tls.handshake_timeout_us});
      l->Start();
      tls_.push_back(std::move(l));
      break;
    }
    case InputType::kFile: {
      files_.push_back(std::make_unique<FileInput>(id, in.name, in.file, *pool_, metrics_));
      break;
    }
    case InputType::kUnix: {
      unix_.push_back(
          std::make_unique<UnixListener>(id, in.name, in.unix_socket, *pool_, metrics_));
      break;
    }
    case InputType::kRelp: {
      relp_.push_back(std::make_unique<RelpListener>(id, in.name, in.relp, *pool_, metrics_));
      break;
    }
    case InputType::kKafka: {
      if (in.kafka.exactly_once) {
        // The validator made sure the one output is a kafka output.
        KafkaExactlyOnce::Options o;
        o.input = in.kafka;
        o.output = config_.outputs.front().kafka;
        o.merger = config_.engine.merger;
        o.parser = in.parser;
        o.event_time = config_.engine.time == TimeSource::kEvent;
        kafka_eos_.push_back(std::make_unique<KafkaExactlyOnce>(in.name, o, metrics_));
      } else {
        kafkas_.push_back(std::make_unique<KafkaInput>(id, in.name, in.kafka, *pool_, metrics_));
      }
      break;
    }
    case InputType::kJournald: {
      journals_.push_back(
          std::make_unique<JournaldInput>(id, in.name, in.journald, *pool_, metrics_));
      break;
    }
    case InputType::kStdin: {
      streams_.push_back(std::make_unique<StreamInput>(
          id, in.name, in.stream, *pool_, metrics_,
          [this](bool) { asio::post(io_, [this] { OnStreamDone(); }); }));
      break;
    }
  }
}

void Server::StartMetricsServer() {
  if (!config_.metrics.enabled) return;
  // The allocator's view beside the RSS: bytes in live allocations, and what the heaps hold
  // from the system. In use flat while held grows is the allocator keeping freed memory,
  // not a growing container (tests/soak/README.md).
  metrics_.AddGauge("logfold_heap_in_use_bytes", "Bytes in live heap allocations (mallinfo2)", "",
                    [] {
                      const struct mallinfo2 m = mallinfo2();  // hblkhd: mmapped chunks
                      return static_cast<double>(m.uordblks + m.hblkhd);
                    });
  metrics_.AddGauge("logfold_heap_held_bytes",
                    "Bytes the heap holds from the system, freed or not (mallinfo2)", "", [] {
                      const struct mallinfo2 m = mallinfo2();
                      return static_cast<double>(m.arena + m.hblkhd);
                    });
  metrics_server_ = std::make_unique<MetricsServer>(
      io_, config_.metrics.address, config_.metrics.port, metrics_,
      SenderAllowList(config_.metrics.allowed_senders),
      &metrics_.GetCounter("logfold_senders_refused_total",
                           "Connections or datagrams refused by allowed_senders.",
                           "input=\"metrics\",proto=\"http\""));
  if (metrics_tls_) {
    metrics_server_->SetTls(metrics_tls_, [this](const std::string& reason) {
      metrics_
          .GetCounter("logfold_tls_handshake_failures_total",
                      "TLS connections refused during the handshake or the permitted-peer check.",
                      "input=\"metrics\",reason=\"" + reason + "\"")
          .fetch_add(1, std::memory_order_relaxed);
    });
  }
  live_api_ = std::make_unique<LiveApi>(*pool_, metrics_);
  metrics_server_->SetHandler(
      [api = live_api_.get()](std::string_view target, HttpResponse& response) {
        return api->Handle(target, response);
      });
  metrics_server_->Start();
  spdlog::info("metrics on {}://{}:{}/metrics", metrics_tls_ ? "https" : "http",
               config_.metrics.address, metrics_server_->local_port());
}

}  // namespace logfold
