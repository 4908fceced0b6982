// HttpUrl parsing: a strict subset of RFC 3986 for http:// URLs.
#include "daemon/config/http_url.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <charconv>

namespace logfold {
namespace {

bool IsIpv4(const std::string& s) {
  in_addr a;
  return ::inet_pton(AF_INET, s.c_str(), &a) == 1;
}

bool IsIpv6(const std::string& s) {
  in6_addr a;
  return ::inet_pton(AF_INET6, s.c_str(), &a) == 1;
}

// Characters allowed in a path or query as written (RFC 3986 pchar plus '/' and '?';
// '%' must start a valid escape).
bool ValidPathOrQuery(std::string_view s, std::string& bad) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       std::string_view("-._~!$&'()*+,;=:@/?").find(c) != std::string_view::npos;
    if (plain) continue;
    auto hex = [](char h) {
      return (h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
    };
    if (c == '%' && i + 2 < s.size() && hex(s[i + 1]) && hex(s[i + 2])) {
      i += 2;
      continue;
    }
    bad = c == '%' ? "an invalid percent-escape" : "character '" + std::string(1, c) + "'";
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) {
      bad = "a space or non-ASCII/control character (percent-encode it)";
    }
    return false;
  }
  return true;
}

}  // namespace

bool IsValidHostName(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  std::size_t label = 0;
  char previous = '.';
  for (char c : s) {
    if (c == '.') {
      if (label == 0 || previous == '-') return false;
      label = 0;
    } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c == '-' && label > 0)) {
      if (++label > 63) return false;
    } else {
      return false;
    }
    previous = c;
  }
  return label > 0 && previous != '-';
}

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

bool HttpUrl::Parse(std::string_view text, HttpUrl& out, std::string& error) {
  const std::size_t colon = text.find("://");
  if (colon == std::string_view::npos) {
    error = "must start with http:// or https://";
    return false;
  }
  std::string scheme(text.substr(0, colon));
  for (char& c : scheme) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c);
  if (scheme != "http" && scheme != "https") {
    error = "scheme must be http or https, not \"" + scheme + "\"";
    return false;
  }
  std::string_view rest = text.substr(colon + 3);
  const std::size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  std::string_view tail =
      authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
  if (tail.find('#') != std::string_view::npos) {
    error = "must not contain a fragment ('#')";
    return false;
  }
  if (authority.find('@') != std::string_view::npos) {
    error =
        "must not contain user info ('user:password@'); send credentials in headers, "
        "e.g. \"Authorization\"";
    return false;
  }
  HttpUrl url;
  url.tls = scheme == "https";
  url.port = url.tls ? 443 : 80;
  std::string_view port_text;
  if (authority.starts_with('[')) {
    const std::size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      error = "unterminated '[' in the host";
      return false;
    }
    url.host = std::string(authority.substr(1, close - 1));
    if (!IsIpv6(url.host)) {
      error = "\"" + url.host + "\" in brackets is not an IPv6 address";
      return false;
    }
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') {
        error = "unexpected text after the IPv6 address";
        return false;
      }
      port_text = after.substr(1);
      if (port_text.empty()) {
        error = "empty port";
        return false;
      }
    }
  } else {
    const std::size_t c = authority.rfind(':');
    url.host = std::string(authority.substr(0, c));
    if (c != std::string_view::npos) {
      port_text = authority.substr(c + 1);
      if (port_text.empty()) {
        error = "empty port";
        return false;
      }
    }
    if (url.host.empty()) {
      error = "host is missing";
      return false;
    }
    if (url.host.find(':') != std::string::npos || IsIpv6(url.host)) {
      error = "an IPv6 address must be written in brackets, e.g. http://[::1]:8123/";
      return false;
    }
    if (!IsIpv4(url.host) && !IsValidHostName(url.host)) {
      error = "\"" + url.host + "\" is not a host name or IPv4 address";
      return false;
    }
  }
  if (!port_text.empty()) {
    unsigned port = 0;
    const auto r = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (r.ec != std::errc() || r.ptr != port_text.data() + port_text.size() || port == 0 ||
        port > 65535) {
      error = "port must be 1 to 65535, got \"" + std::string(port_text) + "\"";
      return false;
    }
    url.port = static_cast<std::uint16_t>(port);
  }
  const std::size_t q = tail.find('?');
  std::string_view path = tail.substr(0, q);
  std::string_view query = q == std::string_view::npos ? std::string_view() : tail.substr(q + 1);
  std::string bad;
  if (!ValidPathOrQuery(path, bad) || !ValidPathOrQuery(query, bad)) {
    error = "path or query contains " + bad;
    return false;
  }
  url.path = path.empty() ? "/" : std::string(path);
  url.query = std::string(query);
  url.host_header = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
  if (url.port != (url.tls ? 443 : 80)) url.host_header += ":" + std::to_string(url.port);
  url.text = std::string(text);
  out = std::move(url);
  return true;
}

std::string HttpUrl::PathWith(std::string_view suffix) const {
  std::string p = path;
  if (!p.ends_with('/')) p += '/';
  p += suffix;
  return p;
}

}  // namespace logfold
