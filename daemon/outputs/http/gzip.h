// Gzip (RFC 1952) compression of HTTP request bodies with zlib.
#ifndef LOGFOLD_DAEMON_GZIP_H_
#define LOGFOLD_DAEMON_GZIP_H_

#include <string>
#include <string_view>

namespace logfold {

// Replaces `out` with `in` gzip-compressed at zlib's default level. Returns false (and sets
// `error`) only if zlib fails, which for in-memory deflate means out of memory.
bool GzipCompress(std::string_view in, std::string& out, std::string& error);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_GZIP_H_
