// HttpUrl: the http:// or https:// URL of an HTTP output, parsed and checked once at configuration
// time (host name or IPv4/[IPv6] literal, port, path, query), so a bad URL is a config error.
#ifndef LOGFOLD_DAEMON_HTTP_URL_H_
#define LOGFOLD_DAEMON_HTTP_URL_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace logfold {

struct HttpUrl {
  std::string host;         // name or IP literal, without brackets
  bool tls = false;         // https
  std::uint16_t port = 80;  // 443 for https
  std::string path = "/";   // starts with '/'; percent-escapes kept as written
  std::string query;        // without the '?'; empty when absent
  std::string host_header;  // the Host header value: host (IPv6 bracketed), ":port" if not default
  std::string text;         // the URL as written, for printing the configuration back

  // Parses `text`. User info (put credentials in `headers`) and fragments are refused with a
  // reason in `error`.
  static bool Parse(std::string_view text, HttpUrl& out, std::string& error);

  // path with `suffix` appended (one '/' between them), e.g. "/es" + "_bulk" -> "/es/_bulk".
  std::string PathWith(std::string_view suffix) const;

  bool operator==(const HttpUrl&) const = default;
};

// RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens.
bool IsValidHostName(std::string_view s);

// Percent-encodes everything but RFC 3986 unreserved characters (for query values).
std::string UrlEncode(std::string_view s);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_HTTP_URL_H_
