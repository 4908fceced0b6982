// `logfold explain`: shows why two lines merge or not — tokens with classes and weights, both
// fingerprints, their Hamming distance, the template match (pipeline/template_match.h) of the
// second line against the first one's group, and the engine's decision with its reason.
#ifndef LOGFOLD_DAEMON_EXPLAIN_COMMAND_H_
#define LOGFOLD_DAEMON_EXPLAIN_COMMAND_H_

#include <cstdio>
#include <string>
#include <vector>

namespace logfold {

// args excludes "explain". Returns 0 when the second line joins the first line's group,
// 1 when it does not, 2 on bad usage.
int RunExplain(const std::vector<std::string>& args, std::FILE* out, std::FILE* err);

}  // namespace logfold

#endif  // LOGFOLD_DAEMON_EXPLAIN_COMMAND_H_
