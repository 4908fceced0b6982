// Gzip compression: one deflate stream with a gzip wrapper (windowBits 15 + 16).
#include "daemon/outputs/http/gzip.h"

#include <zlib.h>

namespace logfold {

bool GzipCompress(std::string_view in, std::string& out, std::string& error) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    error = "gzip: deflateInit2 failed";
    return false;
  }
  out.resize(deflateBound(&z, static_cast<uLong>(in.size())) + 32);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  const std::size_t produced = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END) {
    error = "gzip: deflate failed (" + std::to_string(rc) + ")";
    return false;
  }
  out.resize(produced);
  return true;
}

}  // namespace logfold
