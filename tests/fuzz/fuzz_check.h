// FUZZ_CHECK for the fuzz targets: an invariant that does not hold prints what and where, then
// aborts, which libFuzzer reports as a crash and saves the input.
#ifndef LOGFOLD_TESTS_FUZZ_FUZZ_CHECK_H_
#define LOGFOLD_TESTS_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                        \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      std::fprintf(stderr, "%s:%d: invariant failed: %s (%s)\n", __FILE__, __LINE__, what, \
                   #condition);                                                            \
      std::abort();                                                                        \
    }                                                                                      \
  } while (false)

#endif  // LOGFOLD_TESTS_FUZZ_FUZZ_CHECK_H_
