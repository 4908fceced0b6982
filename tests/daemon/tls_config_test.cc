// The TLS building blocks without a network: permitted-peer matching, SHA-256 fingerprints,
// CIDR sender allow-lists, and the config keys of tls inputs and TLS outputs.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <string>
#include <vector>

#include "daemon/config/config.h"
#include "daemon/runtime/peer_match.h"
#include "daemon/runtime/sender_allow_list.h"

namespace logfold {
namespace {

TEST(PeerMatchTest, WildcardsStayWithinOneLabelAndIgnoreCase) {
  EXPECT_TRUE(PeerNameMatches("*.example.net", "web-01.example.net"));
  EXPECT_TRUE(PeerNameMatches("*.EXAMPLE.net", "Web-01.example.NET"));
  EXPECT_TRUE(PeerNameMatches("web*.example.net", "web-01.example.net"));
  EXPECT_TRUE(PeerNameMatches("*-01.example.net", "web-01.example.net"));
  EXPECT_TRUE(PeerNameMatches("host.example.net", "host.example.net"));
  EXPECT_FALSE(PeerNameMatches("*.example.net", "a.b.example.net"));
  EXPECT_FALSE(PeerNameMatches("*.example.net", "example.net"));
  EXPECT_FALSE(PeerNameMatches("web*.example.net", "db-01.example.net"));
  EXPECT_FALSE(PeerNameMatches("host.example.net", "host.example.net.evil.org"));
  EXPECT_FALSE(PeerNameMatches("host.example.net.", "host.example.net"));
  EXPECT_FALSE(PeerNameMatches("", "x"));
  EXPECT_FALSE(PeerNameMatches("x", ""));
}

TEST(PeerMatchTest, FingerprintsParseWithOrWithoutColons) {
  const std::string hex = "00112233445566778899AABBCCDDEEFF00112233445566778899aabbccddeeff";
  std::string colons;
  for (std::size_t i = 0; i < hex.size(); i += 2) colons += (i ? ":" : "") + hex.substr(i, 2);
  const auto a = ParseSha256Fingerprint("sha256:" + hex);
  const auto b = ParseSha256Fingerprint("SHA256:" + colons);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ((*a)[0], 0x00);
  EXPECT_EQ((*a)[31], 0xff);
  EXPECT_FALSE(ParseSha256Fingerprint("sha256:" + hex.substr(2)));
  EXPECT_FALSE(ParseSha256Fingerprint("sha256:" + hex + "00"));
  EXPECT_FALSE(ParseSha256Fingerprint("sha1:" + hex));
  EXPECT_FALSE(ParseSha256Fingerprint("sha256::" + hex));
  EXPECT_EQ(PeerPatternError("sha256:zz"),
            "not a SHA-256 fingerprint (\"sha256:\" and 64 hex digits, colons allowed)");
  EXPECT_EQ(PeerPatternError("a b"),
            "a peer name may hold letters, digits, '-', '_', '.' and '*' only");
  EXPECT_EQ(PeerPatternError("*.example.net"), "");
}

TEST(PeerMatchTest, PermittedPeersByNameOrFingerprint) {
  Sha256 pinned{};
  pinned[0] = 1;
  std::string hex = "01";
  hex.append(62, '0');
  const PermittedPeers peers({"*.example.net", "sha256:" + hex});
  EXPECT_TRUE(peers.Permits({"other", "web.example.net"}, Sha256{}));
  EXPECT_TRUE(peers.Permits({"intruder.evil.org"}, pinned));
  EXPECT_FALSE(peers.Permits({"intruder.evil.org"}, Sha256{}));
  EXPECT_TRUE(PermittedPeers().Permits({"anyone"}, Sha256{}));
}

sockaddr_in6 V6(const char* text) {
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  inet_pton(AF_INET6, text, &a.sin6_addr);
  return a;
}

sockaddr_in V4(const char* text) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, text, &a.sin_addr);
  return a;
}

bool Allows(const SenderAllowList& list, const char* address) {
  if (std::string(address).find(':') != std::string::npos) {
    const sockaddr_in6 a = V6(address);
    return list.Allows(reinterpret_cast<const sockaddr*>(&a));
  }
  const sockaddr_in a = V4(address);
  return list.Allows(reinterpret_cast<const sockaddr*>(&a));
}

TEST(SenderAllowListTest, CidrBlocksMatchByPrefixAcrossFamilies) {
  const SenderAllowList list({"10.0.0.0/8", "192.168.1.7", "2001:db8::/32"});
  EXPECT_TRUE(Allows(list, "10.200.3.4"));
  EXPECT_TRUE(Allows(list, "::ffff:10.1.2.3")) << "IPv4 on a dual-stack socket";
  EXPECT_TRUE(Allows(list, "192.168.1.7"));
  EXPECT_FALSE(Allows(list, "192.168.1.8"));
  EXPECT_FALSE(Allows(list, "11.0.0.1"));
  EXPECT_TRUE(Allows(list, "2001:db8:1::5"));
  EXPECT_FALSE(Allows(list, "2001:db9::1"));
  EXPECT_TRUE(Allows(SenderAllowList(), "203.0.113.9")) << "empty: anyone";
  EXPECT_TRUE(Allows(SenderAllowList({"172.16.0.0/12"}), "172.31.255.255"));
  EXPECT_FALSE(Allows(SenderAllowList({"172.16.0.0/12"}), "172.32.0.0"));
  EXPECT_EQ(SenderAllowList::CidrError("10.0.0.0/33"), "prefix length must be 0..32");
  EXPECT_EQ(SenderAllowList::CidrError("::/129"), "prefix length must be 0..128");
  EXPECT_NE(SenderAllowList::CidrError("host.example"), "");
  EXPECT_EQ(SenderAllowList::CidrError("::1"), "");
}

std::vector<ConfigError> Errors(const std::string& text) {
  Config config;
  std::vector<ConfigError> errors;
  EXPECT_FALSE(ParseConfig(text, config, errors));
  return errors;
}

const char* const kOut = R"("outputs": [{"name": "o", "type": "stdout"}])";

TEST(TlsConfigTest, TlsInputAndTlsOutputsMapAndRoundTrip) {
  const std::string text = std::string(R"({"inputs": [
      {"name": "t", "type": "tls", "port": 6514, "allowed_senders": ["10.0.0.0/8", "::1"],
       "handshake_timeout": "3s", "max_connections": 5,
       "tls": {"cert_file": "/c.pem", "key_file": "/k.pem", "password_file": "/p",
               "ca_file": "/ca.pem", "min_version": "1.3", "client_auth": "required",
               "permitted_peers": ["*.example.net", "sha256:)") +
                           std::string(64, 'a') + R"("]}},
      {"name": "u", "type": "udp", "port": 514, "allowed_senders": ["192.168.0.0/16"]}],
    "outputs": [
      {"name": "s", "type": "syslog", "address": "relay", "port": 6514,
       "tls": {"ca_file": "/ca.pem", "cert_file": "/c.pem", "key_file": "/k.pem"}},
      {"name": "h", "type": "http", "url": "https://ch.example.net/", "format": "loki",
       "tls": {"verify": false}},
      {"name": "h2", "type": "http", "url": "https://ch2.example.net/", "format": "loki"}]})";
  Config c;
  std::vector<ConfigError> errors;
  ASSERT_TRUE(ParseConfig(text, c, errors)) << FormatConfigErrors(errors);
  EXPECT_EQ(c.inputs[0].type, InputType::kTls);
  EXPECT_THAT(c.inputs[0].tls.allowed_senders, ::testing::ElementsAre("10.0.0.0/8", "::1"));
  EXPECT_EQ(c.inputs[0].tls.handshake_timeout_us, 3 * kSecond);
  EXPECT_EQ(c.inputs[0].tls.tls.client_auth, TlsClientAuth::kRequired);
  EXPECT_EQ(c.inputs[0].tls.tls.min_version, TlsMinVersion::kTls13);
  EXPECT_EQ(c.inputs[0].tls.tls.password_file, "/p");
  EXPECT_EQ(c.inputs[0].tls.tls.permitted_peers.size(), 2u);
  EXPECT_THAT(c.inputs[1].udp.allowed_senders, ::testing::ElementsAre("192.168.0.0/16"));
  EXPECT_TRUE(c.outputs[0].syslog.target.tls);
  EXPECT_EQ(c.outputs[0].syslog.target.tls_options.cert_file, "/c.pem");
  EXPECT_TRUE(c.outputs[1].http.url.tls);
  EXPECT_FALSE(c.outputs[1].http.tls.verify);
  EXPECT_TRUE(c.outputs[2].http.url.tls) << "https:// alone turns TLS on";
  EXPECT_TRUE(c.outputs[2].http.tls.verify);
  Config again;
  ASSERT_TRUE(ParseConfig(ConfigToJson(c), again, errors)) << FormatConfigErrors(errors);
  EXPECT_EQ(again, c);
}

TEST(TlsConfigTest, BadTlsSettingsAreRefusedAtTheirPath) {
  using ::testing::ElementsAre;
  const auto E = [](std::string path, std::string reason) {
    return ConfigError{std::move(path), std::move(reason)};
  };
  EXPECT_THAT(
      Errors(std::string(R"({"inputs": [
      {"name": "t", "type": "tls", "port": 1, "allowed_senders": ["10.0.0.0/33", "h"],
       "tls": {"key_file": "/k", "client_auth": "required",
               "permitted_peers": ["a b", "sha256:12"]}},
      {"name": "p", "type": "tcp", "port": 2, "tls": {}, "handshake_timeout": "1s"}],
    )") + kOut +
             "}"),
      ElementsAre(
          E("inputs[0].allowed_senders[0]",
            "must be an IP address or CIDR block such as \"10.0.0.0/8\" or \"::1\", got "
            "\"10.0.0.0/33\""),
          E("inputs[0].allowed_senders[1]",
            "must be an IP address or CIDR block such as \"10.0.0.0/8\" or \"::1\", got "
            "\"h\""),
          E("inputs[0].tls.permitted_peers[0]",
            "a peer name may hold letters, digits, '-', '_', '.' and '*' only, got \"a b\""),
          E("inputs[0].tls.permitted_peers[1]",
            "not a SHA-256 fingerprint (\"sha256:\" and 64 hex digits), got \"sha256:12\""),
          E("inputs[0].tls.cert_file", "required key missing"),
          E("inputs[0].tls.ca_file",
            "required when client_auth is \"required\" (or pin client certificates by "
            "\"sha256:\" fingerprint in permitted_peers)"),
          E("inputs[1].tls", "not allowed for type tcp"),
          E("inputs[1].handshake_timeout", "not allowed for type tcp")));
  EXPECT_THAT(Errors(R"({"inputs": [{"name": "s", "type": "stdin"}], "outputs": [
      {"name": "h", "type": "http", "url": "http://h/", "format": "loki", "tls": {}},
      {"name": "u", "type": "syslog", "address": "h", "port": 1, "protocol": "udp", "tls": {}},
      {"name": "c", "type": "tcp", "address": "h", "port": 1, "tls": {"cert_file": "/c"}},
      {"name": "p", "type": "tls", "address": "h", "port": 1}]})"),
              ElementsAre(E("outputs[0].tls", "only allowed when url is https://"),
                          E("outputs[1].tls", "only allowed when protocol is \"tcp\""),
                          E("outputs[2].tls.key_file", "required together with cert_file"),
                          E("outputs[3].type",
                            "must be one of: stdout, file, tcp, syslog, http, relp, kafka; for "
                            "TLS give a tcp or syslog output a \"tls\" block (or "
                            "an http output an https:// url)")));
}

}  // namespace
}  // namespace logfold
