// A throwaway PKI for TLS tests, made with the `openssl` CLI in a temp dir: one CA and leaf
// certificates (EC P-256) signed by it, valid, expired, or for any name.
#ifndef LOGFOLD_TESTS_SUPPORT_TEST_PKI_H_
#define LOGFOLD_TESTS_SUPPORT_TEST_PKI_H_

#include <string>

#include "tests/support/daemon_process.h"

namespace logfold {
namespace daemon_test {

class TestPki {
 public:
  // Files go to `dir`; `ca` names the CA's files (CA "ca" -> ca.pem, ca.key).
  explicit TestPki(const TempDir& dir, std::string ca = "ca") : dir_(dir), ca_(std::move(ca)) {}

  // Creates the CA. False (with openssl's stderr in error()) when openssl fails.
  bool MakeCa() {
    return Run({"openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                "-nodes", "-keyout", Key(ca_), "-out", Cert(ca_), "-days", "2", "-subj",
                "/CN=logfold test CA " + ca_});
  }

  // A leaf `name`.pem / `name`.key for `cn` (also its DNS SAN), signed by the CA. days < 0
  // makes a certificate that expired yesterday.
  bool MakeLeaf(const std::string& name, const std::string& cn, int days = 2) {
    WriteFile(dir_ / (name + ".ext"), "subjectAltName=DNS:" + cn + "\n");
    return Run({"openssl", "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", Key(name), "-out", dir_ / (name + ".csr"), "-subj", "/CN=" + cn}) &&
           Run({"openssl", "x509", "-req", "-in", dir_ / (name + ".csr"), "-CA", Cert(ca_),
                "-CAkey", Key(ca_), "-CAcreateserial", "-out", Cert(name), "-days",
                std::to_string(days), "-extfile", dir_ / (name + ".ext")});
  }

  // "sha256:AB:CD:..." of a certificate, as permitted_peers takes it; empty on failure.
  std::string Fingerprint(const std::string& name) {
    const CommandResult r = RunCommand(
        {"openssl", "x509", "-in", Cert(name), "-noout", "-fingerprint", "-sha256"}, dir_);
    const std::size_t eq = r.out.find('=');
    if (r.exit_code != 0 || eq == std::string::npos) return "";
    std::string hex = r.out.substr(eq + 1);
    while (!hex.empty() && (hex.back() == '\n' || hex.back() == '\r')) hex.pop_back();
    return "sha256:" + hex;
  }

  std::string Cert(const std::string& name) const { return dir_ / (name + ".pem"); }
  std::string Key(const std::string& name) const { return dir_ / (name + ".key"); }
  std::string CaCert() const { return Cert(ca_); }
  const std::string& error() const { return error_; }

 private:
  bool Run(const std::vector<std::string>& argv) {
    const CommandResult r = RunCommand(argv, dir_, milliseconds(20000));
    if (r.exit_code != 0) error_ = argv[1] + ": " + r.err;
    return r.exit_code == 0;
  }

  const TempDir& dir_;
  std::string ca_;
  std::string error_;
};

}  // namespace daemon_test
}  // namespace logfold

#endif  // LOGFOLD_TESTS_SUPPORT_TEST_PKI_H_
